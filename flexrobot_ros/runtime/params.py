"""Node parameters: declarations, ROS 2 parameter files, and validation shared by both back ends.

A parameter file is the ROS 2 format both ``ros2 launch`` and the standalone runtime read::

    simulator_node:              # node name, or /namespace/node, or /** for every node
      ros__parameters:
        rate_hz: 1000.0
        robot: scompi
        excitation:              # nested keys become dotted names: excitation.period_s
          period_s: 2.0

Values are typed as ROS 2 types them (statically): ``1`` is an integer and is refused for a double parameter,
exactly as rclpy refuses it, so a file that works standalone works under ROS 2 too. Write ``1.0``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from flexrobot_ros.errors import RuntimeLayerError

#: ROS 2 parameter types (rcl_interfaces/ParameterType names, lower case) and the Python type of their values.
PARAMETER_TYPES: Mapping[str, type] = {
    "bool": bool, "integer": int, "double": float, "string": str,
    "bool_array": bool, "integer_array": int, "double_array": float, "string_array": str,
}


@dataclass(frozen=True)
class ParameterSpec:
    """Declaration of one node parameter.

    Attributes:
        name: parameter name (dots for groups: ``excitation.period_s``).
        default: value when no file or override sets it; its Python type gives the ROS 2 type unless ``type``
            is given (needed for empty list defaults).
        description: what it is, with its unit (shown by ``ros2 param describe``).
        range: inclusive (low, high) for integer/double parameters (and their arrays, element-wise).
        step: for ranges, allowed increment from ``low`` (0: any value).
        choices: allowed values of a string parameter.
        read_only: cannot be changed after start-up (rclpy enforces this for ``ros2 param set``).
        type: one of :data:`PARAMETER_TYPES`; inferred from ``default`` when None.
    """

    name: str
    default: Any
    description: str
    range: tuple[float, float] | None = None
    step: float = 0.0
    choices: tuple[str, ...] | None = None
    read_only: bool = False
    type: str | None = None

    def __post_init__(self) -> None:
        if self.type is None:
            object.__setattr__(self, "type", infer_type(self.default, self.name))
        if self.type not in PARAMETER_TYPES:
            raise RuntimeLayerError(f"parameter {self.name!r}: type {self.type!r} is not one of "
                                    f"{sorted(PARAMETER_TYPES)}")
        if self.range is not None and self.type not in ("integer", "double", "integer_array", "double_array"):
            raise RuntimeLayerError(f"parameter {self.name!r}: a range needs an integer or double type")
        validate_parameter(self, self.default, "its declared default")


def infer_type(value: Any, name: str = "?") -> str:
    """ROS 2 parameter type of a Python value (bool before int: ``True`` is a bool)."""
    for kind, python in (("bool", bool), ("integer", int), ("double", float), ("string", str)):
        if isinstance(value, python):
            return kind
    if isinstance(value, (list, tuple)) and value:
        element = infer_type(value[0], name)
        if element in ("bool", "integer", "double", "string"):
            return f"{element}_array"
    raise RuntimeLayerError(f"parameter {name!r}: cannot infer a ROS 2 type from {value!r}; give type=...")


def validate_parameter(spec: ParameterSpec, value: Any, source: str, node: str | None = None) -> Any:
    """``value`` checked against ``spec`` (type, finiteness, range, step, choices); lists become tuples.

    Args:
        node: fully qualified name of the declaring node, for the message.

    Raises:
        RuntimeLayerError: naming the parameter (and node), the source (file or override), the value and what was
            expected.
    """
    where = f"parameter {spec.name!r}{f' of {node}' if node else ''} from {source}"
    python = PARAMETER_TYPES[spec.type]
    is_array = spec.type.endswith("_array")
    values = value if is_array else [value]
    if is_array and not isinstance(value, (list, tuple)):
        raise RuntimeLayerError(f"{where}: expected a list ({spec.type}), got {value!r}")
    for item in values:
        wrong = not isinstance(item, python) or (python is not bool and isinstance(item, bool))
        if wrong:
            hint = " (ROS 2 types parameters statically: write 1.0, not 1)" if python is float and isinstance(
                item, int) and not isinstance(item, bool) else ""
            raise RuntimeLayerError(f"{where}: expected {spec.type}, got {item!r} ({type(item).__name__}){hint}")
        if python is float and not math.isfinite(item):
            raise RuntimeLayerError(f"{where}: expected a finite number, got {item!r}")
        if spec.range is not None:
            low, high = spec.range
            if not low <= item <= high:
                raise RuntimeLayerError(f"{where}: {item!r} is outside the range [{low}, {high}]")
            if spec.step and abs((item - low) / spec.step - round((item - low) / spec.step)) > 1e-9:
                raise RuntimeLayerError(f"{where}: {item!r} is not {low} plus a multiple of the step {spec.step}")
        if spec.choices is not None and item not in spec.choices:
            raise RuntimeLayerError(f"{where}: {item!r} is not one of {list(spec.choices)}")
    return tuple(value) if is_array else value


#: Where values of a set request come from, in error messages.
SET_REQUEST = "a set request"


def validate_update(specs: Mapping[str, ParameterSpec], values: Mapping[str, Any], node: str) -> dict[str, Any]:
    """New values for declared parameters, checked as at start-up (:func:`validate_parameter`), lists as tuples.

    Args:
        specs: the node's declarations {name: spec}.
        values: {name: new value} of one set request.
        node: the node's fully qualified name, for the messages.

    Raises:
        RuntimeLayerError: a parameter is not declared, is read-only (rclcpp's wording: "parameter 'x' cannot be
            set because it is read-only"), or its value is invalid; nothing is accepted then.
    """
    accepted = {}
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None:
            raise RuntimeLayerError(f"parameter {name!r} is not declared by {node}")
        if spec.read_only:
            raise RuntimeLayerError(f"parameter {name!r} cannot be set because it is read-only")
        accepted[name] = validate_parameter(spec, value, SET_REQUEST)
    return accepted


def load_parameter_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """Sections of a ROS 2 parameter file: {node pattern (absolute, may hold ``*``/``**``): {name: value}}.

    Raises:
        RuntimeLayerError: missing file, invalid YAML, or a section without ``ros__parameters``.
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as error:
        raise RuntimeLayerError(f"parameter file {path}: cannot be read ({error.strerror})") from error
    except yaml.YAMLError as error:
        raise RuntimeLayerError(f"parameter file {path}: invalid YAML: {error}") from error
    if not isinstance(document, dict):
        raise RuntimeLayerError(f"parameter file {path}: expected a mapping of node names to 'ros__parameters'")
    sections: dict[str, dict[str, Any]] = {}
    _collect_sections(document, "", path, sections)
    return sections


def _collect_sections(tree: Mapping[str, Any], prefix: str, path: Path, sections: dict[str, dict[str, Any]]) -> None:
    for key, value in tree.items():
        name = f"{prefix}/{str(key).strip('/')}"
        if not isinstance(value, dict):
            raise RuntimeLayerError(f"parameter file {path}: {name!r} must hold 'ros__parameters', got {value!r}")
        if "ros__parameters" in value:
            parameters = value["ros__parameters"] or {}
            if not isinstance(parameters, dict):
                raise RuntimeLayerError(f"parameter file {path}: {name}/ros__parameters must be a mapping")
            sections.setdefault(name, {}).update(_flatten(parameters))
        else:
            _collect_sections(value, name, path, sections)


def _flatten(parameters: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in parameters.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _pattern(section: str) -> re.Pattern[str]:
    """Regex of a section key: ``*`` is one name token, ``**`` any number of tokens (as in rcl)."""
    parts = []
    for token in section.strip("/").split("/"):
        parts.append("(/[^/]+)*" if token == "**" else "/[^/]+" if token == "*" else "/" + re.escape(token))
    return re.compile("^" + "".join(parts) + "$")


def parameters_for_node(files: Sequence[str | Path], fully_qualified_name: str) -> dict[str, tuple[Any, str]]:
    """{name: (value, source)} from every file section matching the node (wildcard sections first, then the
    node's own; later files win)."""
    values: dict[str, tuple[Any, str]] = {}
    for path in files:
        sections = load_parameter_file(path)
        matching = [key for key in sections if _pattern(key).match(fully_qualified_name)]
        for key in sorted(matching, key=lambda k: "*" not in k):
            for name, value in sections[key].items():
                values[name] = (value, f"{path} [{key}]")
    return values
