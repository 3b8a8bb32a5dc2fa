"""The ``flexrobot`` command: one subcommand per job, each defined in ``flexrobot_ros.commands.<name>``.

Every command module provides ``add_parser(subparsers)``, which registers its sub-parser and sets
``func(args) -> int`` as the handler. Only the module of the command being run is imported (``flexrobot --help``
and ``--version`` load no numerical library). Conventions shared by every command are in
:mod:`flexrobot_ros.commands.arguments` (joint vectors, gains, output paths).

Exit status: 0 on success; 2 with a one-line message for bad input (errors of the package's own types, file
system errors on the files named); 141 when the reader of the output went away (``| head``); 130 on Ctrl-C.
Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from flexrobot_ros import __version__
from flexrobot_ros.commands.arguments import ArgumentParser
from flexrobot_ros.errors import FlexrobotError

#: Subcommands in the order ``--help`` lists them, with the one-line summary it shows; the module of command
#: ``name`` is ``flexrobot_ros.commands.<name with - replaced by _>``.
COMMANDS: dict[str, str] = {
    "info": "summarize a robot (joints, stiffness, inertias, mass, gravity)",
    "init": "write a starter flexibility YAML for a URDF: one chain elastic, the other joints locked, every value a "
            "marked placeholder",
    "dh2urdf": "generate a URDF from a standard DH table with link inertias",
    "identify": "identify joint stiffness and damping from modal data at several poses (the thesis' chapter 3)",
    "excite": "optimal Fourier excitation trajectory for rigid-body identification (Huynh et al. 2020)",
    "identify-rigid": "identify base inertial parameters, rotor inertias and friction from positions and motor torques",
    "bag": "record, play and summarise rosbag2 bags (standalone runtime)",
    "feedforward": "motor references q_m and motor torques tau_m that make an elastic robot follow a link "
                   "trajectory (EJNEA or SDRNEA, the thesis' chapter 4)",
    "modal": "closed-loop modes and stability at one pose (the thesis' chapter 2)",
    "modal-map": "modes over a path, grid or gain sweep, saved as NPZ + PNG",
    "lobes": "milling stability lobes at a pose and the critical depth of cut over poses",
    "shape": "recommend an input shaper (ZV, ZVD, EI) for measured or predicted modes, with residual vibration and delay",
    "oma": "identify modes (frequencies, damping, shapes) from recorded signals",
    "simulate": "simulate PD-held robot with impacts, write CSV/NPZ/rosbag2 (+ plot)",
    "bringup": "start the nodes standalone (simulation or hardware), print a summary of modes and tracking, "
               "write plots",
}
DESCRIPTION = ("Feedforward, simulation, modal analysis, OMA and identification of robots with elastic joints. "
               "'flexrobot COMMAND --help' describes a command. Joint vectors and gains are comma- or "
               "space-separated (--q 0,-0.2,1.1 or --q 0 -0.2 1.1); errors exit with status 2. 'The thesis' is "
               "T. T. Do's PhD thesis on modal analysis of robots with flexible joints (ETS Montreal, 2022).")
#: Exit status when stdout is a pipe whose reader has gone (128 + SIGPIPE, as shell tools report it).
BROKEN_PIPE_STATUS = 141


def module_name(command: str) -> str:
    """The module that defines ``command``."""
    return f"flexrobot_ros.commands.{command.replace('-', '_')}"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand is listed; the full sub-parser is built for ``command`` only (all of
    them when ``command`` is ``"*"``), so that nothing heavy is imported for ``--help`` or another command."""
    parser = ArgumentParser(prog="flexrobot", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"flexrobot (flexrobot_ros) {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, summary in COMMANDS.items():
        if command in (name, "*"):
            importlib.import_module(module_name(name)).add_parser(subparsers)
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv``: the first token that is not an option (the top level has no option
    that takes a value)."""
    return next((token for token in argv if not token.startswith("-")), None)


def _report(args: argparse.Namespace | None, error: BaseException) -> int:
    """Print ``error`` as one line, prefixed with the command, and return exit status 2."""
    prog = "flexrobot" if args is None else f"flexrobot {args.command}"
    print(f"{prog}: error: {' '.join(str(error).split())}", file=sys.stderr)
    return 2


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the interpreter's final flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``flexrobot`` console script (returns the exit status)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    try:
        args = build_parser(_command_in(argv)).parse_args(argv)
        status = int(args.func(args) or 0)
        sys.stdout.flush()
        return status
    except FlexrobotError as error:
        return _report(args, error)
    except BrokenPipeError:
        _quiet_stdout()
        return BROKEN_PIPE_STATUS
    except KeyboardInterrupt:
        print("flexrobot: interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # a file named on the command line cannot be read or written
        return _report(args, error)


if __name__ == "__main__":
    sys.exit(main())
