"""The ``flexrobot`` command: one subcommand per job, each defined in ``flexrobot_ros.commands.<name>``.

Every command module provides ``add_parser(subparsers)``, which registers its sub-parser and sets
``func(args) -> int`` as the handler. Errors of the package's own types are printed on one line and give exit
status 2; anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from flexrobot_ros.errors import FlexrobotError

#: Subcommand modules in ``flexrobot_ros.commands``, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = ("info", "dh2urdf", "identify", "bag", "feedforward", "modal", "modal_map", "oma",
                             "simulate", "bringup")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="flexrobot", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"flexrobot_ros.commands.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``flexrobot`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FlexrobotError as error:
        print(f"flexrobot {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
