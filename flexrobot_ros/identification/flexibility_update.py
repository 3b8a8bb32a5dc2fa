"""Write identified joint parameters (and flexible links' EI and damping ratio) back into a flexibility YAML, changing
nothing else in the text.

The source file is edited as text: the positions of the values to replace come from PyYAML's node tree
(``yaml.compose`` keeps the character span of every scalar), and only those spans are rewritten, so the user's
comments, key order, flow/block style and number formats survive. A joint field that the file leaves to its
default (e.g. no ``link_damping``) is inserted into that joint's mapping. A comment block at the top states what
was identified, from which data, when, and the previous values. When the output lives in another directory, a
relative ``urdf:`` path is rewritten so that it still points at the same URDF. The written file is loaded back and
checked against the identified robot before this returns.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from flexrobot_ros.errors import IdentificationError, ModelError
from flexrobot_ros.identification.parameters import KIND_FIELDS
from flexrobot_ros.model import FlexibleRobot, load_robot
from flexrobot_ros.model.flexible_robot import JOINT_ARRAYS, LINK_FIELDS

#: Significant digits written for identified values (relative rounding 5e-11, far below any identification error).
DIGITS = 10


def yaml_float(value: float) -> str:
    """A float literal that YAML 1.1 (PyYAML) and 1.2 both read as a float: always a '.' in the mantissa."""
    text = f"{float(value):.{DIGITS}g}"
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (e + exponent if e else "")


def _mapping_get(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return key_node, value_node
    return None


def _insertion(text: str, mapping: yaml.MappingNode, key: str, literal: str) -> tuple[int, int, str]:
    """Edit (start, end, new text) that adds ``key: literal`` to ``mapping`` (flow or block style)."""
    if mapping.flow_style:
        close = mapping.end_mark.index - 1                   # the '}'
        while close > 0 and text[close] != "}":
            close -= 1
        separator = ", " if mapping.value else ""
        return close, close, f"{separator}{key}: {literal}"
    last_key, last_value = mapping.value[-1]
    indent = " " * last_key.start_mark.column
    line_end = text.find("\n", last_value.end_mark.index)
    if line_end < 0:
        return len(text), len(text), f"\n{indent}{key}: {literal}\n"
    return line_end + 1, line_end + 1, f"{indent}{key}: {literal}\n"


def _removal(text: str, source: str, root: yaml.MappingNode, key: str) -> tuple[int, int, str]:
    """Edit (start, end, '') that removes the top-level ``key`` and its value, whole lines (block style only)."""
    found = _mapping_get(root, key)
    if found is None:
        raise IdentificationError(f"{source}: no '{key}' field to remove")
    if root.flow_style:
        raise IdentificationError(f"{source}: cannot remove '{key}' from a flow-style ({{...}}) document")
    key_node, value_node = found
    start = text.rfind("\n", 0, key_node.start_mark.index) + 1
    end = value_node.end_mark.index
    if end == 0 or text[end - 1] != "\n":
        line_end = text.find("\n", end)
        end = len(text) if line_end < 0 else line_end + 1
    return start, end, ""


def _link_edits(text: str, source: str, root: yaml.MappingNode,
                links: dict[str, dict[str, float]]) -> list[tuple[int, int, str]]:
    """Edits that set ``links[link][field]`` in the ``flexible_links`` section: ``EI`` (a planar link's number),
    ``EI.y`` / ``EI.z`` (entries of a two-plane link's ``EI`` mapping), ``damping_ratio`` (inserted when absent)."""
    section = _mapping_get(root, "flexible_links")
    if links and (section is None or not isinstance(section[1], yaml.MappingNode)):
        raise IdentificationError(f"{source}: no 'flexible_links' mapping to update")
    edits = []
    for link, fields in links.items():
        entry = _mapping_get(section[1], link)
        if entry is None or not isinstance(entry[1], yaml.MappingNode):
            raise IdentificationError(f"{source}: flexible_links.{link}: not found as a mapping")
        for field, value in fields.items():
            key, _, plane = field.partition(".")
            found = _mapping_get(entry[1], key)
            if plane:
                if found is None or not isinstance(found[1], yaml.MappingNode):
                    raise IdentificationError(f"{source}: flexible_links.{link}.EI: expected {{y: , z: }} for {field}")
                found = _mapping_get(found[1], plane)
            if found is None and key == "damping_ratio":
                edits.append(_insertion(text, entry[1], key, yaml_float(value)))
            elif found is None or not isinstance(found[1], yaml.ScalarNode):
                raise IdentificationError(f"{source}: flexible_links.{link}.{field}: not found as a number")
            else:
                edits.append((found[1].start_mark.index, found[1].end_mark.index, yaml_float(value)))
    return edits


def updated_yaml_text(text: str, source: str, values: dict[str, dict[str, float]], header: str,
                      urdf: str | None = None, links: dict[str, dict[str, float]] | None = None,
                      drop: tuple[str, ...] = ()) -> str:
    """``text`` of a flexibility YAML with ``values[joint][field]`` and ``links[link][field]`` (flexible links:
    ``EI``, ``EI.y``, ``EI.z``, ``damping_ratio``) replaced or inserted, ``header`` (comment lines without '#')
    prepended, the ``urdf`` value replaced when given, and the top-level keys ``drop`` removed (their lines, in a
    block-style file)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as error:
        raise IdentificationError(f"{source}: malformed YAML: {error}") from error
    if not isinstance(root, yaml.MappingNode):
        raise IdentificationError(f"{source}: expected a mapping at the top level")
    joints = _mapping_get(root, "joints")
    if values and (joints is None or not isinstance(joints[1], yaml.MappingNode)):
        raise IdentificationError(f"{source}: no 'joints' mapping to update")
    edits = _link_edits(text, source, root, links or {})
    for joint, fields in values.items():
        entry = _mapping_get(joints[1], joint)
        if entry is None or not isinstance(entry[1], yaml.MappingNode):
            raise IdentificationError(f"{source}: joints.{joint}: not found as a mapping")
        for field, value in fields.items():
            found = _mapping_get(entry[1], field)
            literal = yaml_float(value)
            if found is None:
                edits.append(_insertion(text, entry[1], field, literal))
            else:
                edits.append((found[1].start_mark.index, found[1].end_mark.index, literal))
    if urdf is not None:
        found = _mapping_get(root, "urdf")
        if found is None:
            raise IdentificationError(f"{source}: no 'urdf' field")
        plain = urdf if yaml.safe_load(urdf) == urdf and ": " not in urdf and "#" not in urdf else json.dumps(urdf)
        edits.append((found[1].start_mark.index, found[1].end_mark.index, plain))
    for key in drop:
        edits.append(_removal(text, source, root, key))
    for start, end, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + replacement + text[end:]
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + text


def _urdf_reference(source_yaml: Path, out: Path) -> str | None:
    """New ``urdf:`` text for a copy of ``source_yaml`` written to ``out``, or None when it can stay as it is:
    ``package://flexrobot_ros/...`` for a shipped URDF, a relative path when the URDF lies below the output's
    directory, an absolute path otherwise."""
    from flexrobot_ros.model.loader import PACKAGE, share_directory

    document = yaml.safe_load(source_yaml.read_text())
    reference = str(document.get("urdf", ""))
    if reference.startswith("package://") or Path(reference).expanduser().is_absolute():
        return None
    if source_yaml.resolve().parent == out.resolve().parent:
        return None
    target = (source_yaml.resolve().parent / reference).resolve()
    try:
        share = share_directory().resolve()
    except ModelError:                                          # no shipped files installed
        share = out.resolve().parent
    for base, prefix in ((share, f"package://{PACKAGE}/"), (out.resolve().parent, "")):
        try:
            return prefix + target.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(target)


def write_identified_yaml(robot: FlexibleRobot, identified: dict[str, dict[str, float]], out: str | Path,
                          description: str, date: datetime.datetime | None = None,
                          by: str = "'flexrobot identify'", links: dict[str, dict[str, float]] | None = None) -> Path:
    """Write a copy of ``robot``'s flexibility YAML to ``out`` with the ``identified[joint][field]`` values and the
    flexible links' ``links[link][field]`` (``EI`` [N m^2], ``EI.y``, ``EI.z``, ``damping_ratio``).

    ``description`` says which data and method gave the values (one or more lines, becomes the header comment
    with the date); ``by`` names the tool that identified them. Raises IdentificationError when the robot has no
    YAML, a value cannot be written (a stiffness must stay > 0), or the written file does not load back to the
    identified parameters.
    """
    if robot.yaml_path is None:
        raise IdentificationError(f"robot {robot.name}: no flexibility YAML to update (built in memory)")
    out = Path(out)
    source = Path(robot.yaml_path)
    date = date or datetime.datetime.now().astimezone()
    links = links or {}
    what = " and ".join(([] if not identified else ["joint parameters"]) + ([] if not links else ["link parameters"]))
    lines = [f"{date.isoformat(timespec='seconds')}: {what or 'nothing'} identified by {by}",
             *description.splitlines()]
    for joint, fields in identified.items():
        j = robot.joint_names.index(joint)
        for field, value in fields.items():
            if field not in JOINT_ARRAYS:
                raise IdentificationError(f"cannot write field {field!r}; expected one of {JOINT_ARRAYS}")
            lines.append(f"  {joint}.{field}: {yaml_float(value)} (was {yaml_float(getattr(robot, field)[j])})")
    try:
        expected_robot = robot.with_link_parameters(links)
    except ModelError as error:
        raise IdentificationError(f"cannot write the link parameters: {error}") from None
    for link, fields in links.items():
        for field, value in fields.items():
            was = link_field_value(robot.flexible_links[link], field)
            lines.append(f"  flexible_links.{link}.{field}: {yaml_float(value)} (was {yaml_float(was)})")
    lines.append(f"Edited copy of {source}; everything else is unchanged.")
    text = updated_yaml_text(source.read_text(), str(source), identified, "\n".join(lines),
                             _urdf_reference(source, out), links)
    try:
        out.write_text(text)
    except OSError as error:
        raise IdentificationError(f"{out}: cannot write the identified flexibility YAML: {error}") from error
    try:
        written = load_robot(out, tool=robot.tool is not None)
    except ModelError as error:
        raise IdentificationError(f"{out}: the identified values do not make a valid robot: {error}") from error
    for name in JOINT_ARRAYS:
        expected = np.array(getattr(robot, name), dtype=float)
        for joint, fields in identified.items():
            if name in fields:
                expected[robot.joint_names.index(joint)] = fields[name]
        got = getattr(written, name)
        same_nan = np.isnan(expected) & np.isnan(got)
        if not np.all(same_nan | np.isclose(got, expected, rtol=10.0 ** (1 - DIGITS), atol=0.0)):
            raise IdentificationError(f"{out}: written {name} {got.tolist()} differs from {expected.tolist()}")
    for link, fields in links.items():
        for field in fields:
            want = link_field_value(expected_robot.flexible_links[link], field)
            got_value = link_field_value(written.flexible_links[link], field)
            if not np.isclose(got_value, want, rtol=10.0 ** (1 - DIGITS), atol=0.0):
                raise IdentificationError(f"{out}: written flexible_links.{link}.{field} {got_value} differs from "
                                          f"{want}")
    return out


def link_field_value(spec: Any, field: str) -> float:
    """The ``flexible_links.<link>`` ``field`` (``EI``, ``EI.y``, ``EI.z``, ``damping_ratio``) of a validated beam
    spec (:class:`~flexrobot_ros.model.flexible_link_specs.BeamSpec`)."""
    return float(getattr(spec, LINK_FIELDS[field]))


def identified_fields(result: Any) -> dict[str, dict[str, float]]:
    """``{joint: {field: value}}`` of an :class:`~flexrobot_ros.identification.IdentificationResult`."""
    fields: dict[str, dict[str, float]] = {}
    for parameter in result.parameters:
        fields.setdefault(parameter.joint, {})[KIND_FIELDS[parameter.kind]] = parameter.value
    return fields


__all__ = ["write_identified_yaml", "updated_yaml_text", "identified_fields", "link_field_value", "yaml_float",
           "DIGITS"]
