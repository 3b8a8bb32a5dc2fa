"""Argument conventions shared by every ``flexrobot`` command: numbers, joint vectors, gains and output paths.

* A number is a literal or a small expression with ``+ - * /`` and ``pi`` (``1.5``, ``-pi/6``, ``2*pi/3``).
* A joint vector (``--q``, ``--q0``, ``--set-point``, ``--pose``, ``--start``, ``--end``, ``--base``,
  ``--wrench``) and per-joint gains (``--kp``, ``--kd``) are read the same way by every command: one
  comma-separated value (``--q 0,-0.2,1.1``), space-separated values (``--q 0 -0.2 1.1``) or a mix; a first
  value that is negative (``--q -0.2,0.3``) is a value, not an option (:class:`ArgumentParser`).
* Options renamed so that one name has one meaning keep their old spelling for scripts: the old spelling works and
  prints one deprecation line on stderr (:func:`add_deprecated`).
* An output file's missing parent directories are created (every command that writes files does the same);
  a path that cannot be written is refused before any long computation starts (:func:`output_file`).

Errors are :class:`CommandError` (one line, exit status 2, see :mod:`flexrobot_ros.cli`).
"""
from __future__ import annotations

import argparse
import ast
import difflib
import math
import operator
import os
import re
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from flexrobot_ros.errors import FlexrobotError


class CommandError(FlexrobotError):
    """A command-line argument is malformed or cannot take effect (the message names the option)."""


#: Tokens that start like a negative number or expression (``-0.2``, ``-.5``, ``-pi/6``, ``-0.2,0.3``, ``-(1)``).
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|pi\b|\()")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` that reads a token starting with a minus sign followed by a digit, ``.digit``,
    ``pi`` or ``(`` as a value (``--q -0.2,0.3``), never as an option, and reports usage errors on one line;
    sub-parsers inherit the class."""

    def _parse_optional(self, arg_string: str) -> Any:  # noqa: D401 - argparse hook
        if _NEGATIVE_VALUE.match(arg_string):
            return None
        return super()._parse_optional(arg_string)

    def error(self, message: str) -> NoReturn:
        """A usage error as one line on stderr (with where to read the usage), exit status 2."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see '{self.prog} --help')\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:
        """As argparse, but unknown options are reported by the subcommand's parser (``flexrobot modal: error:
        ...``, whose --help lists them), with the closest known option."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            parser = next((action.choices[command] for action in self._actions
                           if isinstance(action, argparse._SubParsersAction) and command in action.choices), self)
            options = [option for option in parser._option_string_actions if option.startswith("--")]
            guesses = [close for token in extras if token.startswith("-")
                       for close in difflib.get_close_matches(token.split("=", 1)[0], options, n=1)]
            parser.error(f"unrecognized arguments: {' '.join(extras)}"
                         + (f"; did you mean {' or '.join(dict.fromkeys(guesses))}?" if guesses else ""))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:  # argparse hook
        """An invalid choice (subcommand, ``--link-model``, ...) with the closest valid one."""
        if action.choices is not None and value not in action.choices:
            choices = [str(choice) for choice in action.choices]
            close = difflib.get_close_matches(str(value), choices, n=1)
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}"
                                         + (f"; did you mean {close[0]!r}?" if close else "")
                                         + f" (choose from {', '.join(repr(c) for c in choices)})")


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.USub: operator.neg, ast.UAdd: operator.pos}


def number(text: str, what: str) -> float:
    """A float from ``text``: a literal or a small expression with + - * / and ``pi`` (e.g. ``-pi/6``)."""
    def evaluate(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "pi":
            return math.pi
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](evaluate(node.left), evaluate(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](evaluate(node.operand))
        raise ValueError(text)

    try:
        value = evaluate(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
        raise CommandError(f"{what}: cannot read {text!r} as a number (use e.g. 1.5, -pi/6, 2*pi/3)") from None
    if not math.isfinite(value):
        raise CommandError(f"{what}: {text!r} is not a finite number")
    return value


def split_values(values: str | Sequence[str]) -> list[str]:
    """The single values of a vector argument: tokens split at commas and white space, empty parts dropped."""
    tokens = [values] if isinstance(values, str) else list(values)
    return [part for token in tokens for part in re.split(r"[,\s]+", token) if part]


def vector(values: str | Sequence[str] | None, what: str, n: int | None = None, joints: Sequence[str] = ()
           ) -> Any:
    """A joint vector (numpy array) from comma- and/or space-separated values; None stays None.

    ``n``: the expected length (``joints`` names them in the message); a mismatch is a :class:`CommandError`.
    """
    if values is None:
        return None
    import numpy as np

    parts = split_values(values)
    if not parts:
        raise CommandError(f"{what}: expected numbers separated by commas or spaces, got {values!r}")
    array = np.array([number(part, what) for part in parts])
    if n is not None and array.size != n:
        named = f" for joints {list(joints)}" if joints else ""
        raise CommandError(f"{what}: expected {n} values{named}, got {array.size} ({', '.join(parts)})")
    return array


def gains(values: str | Sequence[str] | None, what: str, n: int | None = None, joints: Sequence[str] = ()
          ) -> Any:
    """``--kp``/``--kd``: one number for every joint (a float) or one per joint (an array of length ``n``)."""
    array = vector(values, what)
    if array is None:
        return None
    if array.size == 1:
        return float(array[0])
    if n is not None and array.size != n:
        named = f" for joints {list(joints)}" if joints else ""
        raise CommandError(f"{what}: expected one value for every joint or {n} values{named}, got {array.size}")
    return array


def add_vector(parser: argparse.ArgumentParser, *flags: str, help: str, metavar: str = "Q",
               **kwargs: Any) -> None:
    """Register a joint-vector option (comma- and/or space-separated values, see the module docstring)."""
    parser.add_argument(*flags, nargs="+", metavar=metavar, help=help, **kwargs)


#: ``--link-model`` choices and the link layer's method names.
LINK_MODELS = {"amm": "assumed_modes", "fem": "finite_elements"}


class DeprecatedOption(argparse.Action):
    """The old spelling of a renamed option: stores into the new option's destination and prints one line on
    stderr naming the new spelling."""

    def __init__(self, option_strings: Sequence[str], dest: str, replacement: str, **kwargs: Any) -> None:
        self.replacement = replacement
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated; use {self.replacement} (same meaning)",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated(parser: Any, old: str, replacement: str, dest: str, **kwargs: Any) -> None:
    """Keep ``old`` working as ``replacement`` (value stored in ``dest``), hidden from ``--help``."""
    parser.add_argument(old, dest=dest, action=DeprecatedOption, replacement=replacement, help=argparse.SUPPRESS,
                        **kwargs)


def add_link_model_arguments(group: Any) -> None:
    """``--link-model amm|fem``, ``--link-modes N``, ``--link-elements N``: override every flexible link's
    discretization (old spellings ``--modes``, ``--elements`` deprecated)."""
    group.add_argument("--link-model", choices=tuple(LINK_MODELS),
                       help="assumed modes or finite elements for every flexible link (default: the YAML's)")
    group.add_argument("--link-modes", dest="modes", type=int, metavar="N",
                       help="assumed modes per bending direction of every flexible link")
    group.add_argument("--link-elements", dest="elements", type=int, metavar="N",
                       help="finite elements per bending direction of every flexible link")
    add_deprecated(group, "--modes", "--link-modes", "modes", type=int)
    add_deprecated(group, "--elements", "--link-elements", "elements", type=int)


def output_file(path: str | Path | None, what: str, suffixes: Sequence[str] | None = None) -> Path | None:
    """Check an output file before the work starts: suffix (when ``suffixes`` is given), not a directory, parent
    directory created when missing and writable. Returns the path (None stays None)."""
    if path is None:
        return None
    path = Path(path)
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise CommandError(f"{what} {path}: expected a {' or '.join(suffixes)} file"
                           + (f", not {path.suffix!r}" if path.suffix else " (no suffix given)"))
    if path.is_dir():
        raise CommandError(f"{what} {path}: is a directory; give a file name")
    output_directory(path.parent, what, path)
    return path


def output_directory(directory: str | Path, what: str, shown: str | Path | None = None) -> Path:
    """Create ``directory`` (and its parents) when missing; refuse one that is a file or not writable."""
    directory = Path(directory) if str(directory) else Path(".")
    shown = directory if shown is None else shown
    blocking = next((p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise CommandError(f"{what} {shown}: {blocking} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(f"{what} {shown}: cannot create directory {directory}: {error.strerror}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CommandError(f"{what} {shown}: directory {directory} is not writable")
    return directory


def within_limits(robot: Any, q: Any, what: str) -> Any:
    """``q`` [rad | m] when it lies within ``robot``'s URDF joint limits, else a CommandError naming ``what``,
    the joint, the value and the range (:meth:`FlexibleRobot.limit_violation`, as the feedforward's check)."""
    violation = robot.limit_violation(q)
    if violation:
        raise CommandError(f"{what}: {violation}")
    return q


__all__ = ["ArgumentParser", "CommandError", "number", "split_values", "vector", "gains", "add_vector",
           "add_deprecated", "add_link_model_arguments", "output_file", "output_directory", "within_limits"]
