"""Reading YAML documents with errors that name the file, in the caller's own error type."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from flexrobot_ros.errors import FlexrobotError, ModelError


def read_yaml(path: str | Path, error: type[FlexrobotError], what: str) -> Any:
    """The YAML document in ``path``; ``error`` (naming the file and ``what`` it should hold) when it cannot be read
    or parsed."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{path}: cannot read {what}: {problem}") from problem
    except yaml.YAMLError as problem:
        raise error(f"{path}: malformed YAML: {problem}") from problem


#: A number in exponent form that PyYAML (YAML 1.1) leaves as text: no '.' in the mantissa or no exponent sign.
_YAML11_TEXT_NUMBER = re.compile(r"([-+]?)(\d+)(?:\.(\d*))?([eE])([-+]?)(\d+)")


def yaml11_hint(value: object) -> str:
    """`` (YAML 1.1 reads 2.0e3 as text: write 2.0e+3)`` when ``value`` is such a number left as text, else ''."""
    match = _YAML11_TEXT_NUMBER.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return ""
    sign, whole, fraction, e, exponent_sign, exponent = match.groups()
    fixed = f"{sign}{whole}.{fraction or 0}{e}{exponent_sign or '+'}{exponent}"
    return f" (YAML 1.1 reads {value.strip()} as text: write {fixed})"


def finite(value: Any, where: str, error: type[FlexrobotError] = ModelError) -> float:
    """``value`` as a float, or an ``error`` (ModelError unless the caller's layer has its own type) naming
    ``where`` when it is not a finite real number (with the fix when YAML 1.1 read it as text: ``2.0e3``).
    The one number reader of every YAML section (joints, tool, flexible_links, DH tables, modal data)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{where}: expected a number, got {value!r}{yaml11_hint(value)}")
    if not math.isfinite(value):
        raise error(f"{where}: expected a finite number, got {value!r}")
    return float(value)
