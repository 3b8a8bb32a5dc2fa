"""ROS 2 name resolution for the standalone runtime: namespaces, private names, remapping, and ``--ros-args``.

Rules (as rcl applies them): an absolute name ``/a/b`` is kept; a relative name ``a/b`` is prefixed with the node's
namespace; a private name ``~/a`` or ``~`` becomes ``<namespace>/<node>/a``. Remapping rules ``from:=to`` are
matched against the *expanded* name (``from`` is expanded with the same rules), first matching rule wins.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import yaml

from flexrobot_ros.errors import RuntimeLayerError

_TOKEN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def validate_node_name(name: str) -> str:
    """A node name: letters, digits and underscores, not starting with a digit."""
    if not _TOKEN.match(name or ""):
        raise RuntimeLayerError(f"node name {name!r} is invalid: expected letters, digits and '_', "
                                "not starting with a digit")
    return name


def normalize_namespace(namespace: str | None) -> str:
    """``None``/``""`` -> ``/``; ``ns`` -> ``/ns``; trailing slashes removed; tokens validated."""
    namespace = (namespace or "/").strip()
    if not namespace.startswith("/"):
        namespace = "/" + namespace
    namespace = namespace.rstrip("/") or "/"
    for token in namespace.strip("/").split("/"):
        if token and not _TOKEN.match(token):
            raise RuntimeLayerError(f"namespace {namespace!r} has the invalid token {token!r}")
    return namespace


def fully_qualified_node_name(name: str, namespace: str) -> str:
    """``/ns/name`` (or ``/name`` in the root namespace)."""
    return f"{namespace.rstrip('/')}/{name}"


def expand_name(name: str, node_name: str, namespace: str) -> str:
    """Expand a topic or service name to its absolute form.

    Raises:
        RuntimeLayerError: empty name, ``//``, trailing ``/``, or a token with characters other than
            letters, digits and ``_``.
    """
    if not name or name.endswith("/") and name != "~" or "//" in name:
        raise RuntimeLayerError(f"topic or service name {name!r} is invalid (empty, '//' or trailing '/')")
    if name == "~" or name.startswith("~/"):
        expanded = fully_qualified_node_name(node_name, namespace) + name[1:]
    elif name.startswith("/"):
        expanded = name
    else:
        expanded = f"{namespace.rstrip('/')}/{name}"
    for token in expanded.strip("/").split("/"):
        if not _TOKEN.match(token):
            raise RuntimeLayerError(f"topic or service name {name!r} has the invalid token {token!r}: expected "
                                    "letters, digits and '_', not starting with a digit")
    return expanded


@dataclass(frozen=True)
class Remapping:
    """One ``from:=to`` rule; ``node`` limits it to one node (``node:from:=to``)."""

    source: str
    target: str
    node: str | None = None


def resolve_name(name: str, node_name: str, namespace: str, remappings: Sequence[Remapping] = ()) -> str:
    """Expanded name after the first matching remapping rule (its target expanded too)."""
    expanded = expand_name(name, node_name, namespace)
    for rule in remappings:
        if rule.node not in (None, node_name) or rule.source.startswith("__"):
            continue
        if expand_name(rule.source, node_name, namespace) == expanded:
            return expand_name(rule.target, node_name, namespace)
    return expanded


@dataclass
class RosArguments:
    """What ``--ros-args`` on a command line asks of a node (the subset the standalone runtime honours).

    Attributes:
        parameter_files: ``--params-file FILE`` in order (later files win).
        parameters: ``-p name:=value`` overrides (YAML-typed values), applied after the files.
        remappings: ``-r from:=to`` rules; ``__node:=`` and ``__ns:=`` are taken out into ``node_name`` and
            ``namespace``.
        log_level: ``--log-level LEVEL`` (``debug``, ``info``, ``warn``, ``error``, ``fatal``).
        remaining: arguments outside ``--ros-args ... --``.
    """

    parameter_files: list[str] = field(default_factory=list)
    parameters: dict[str, object] = field(default_factory=dict)
    remappings: list[Remapping] = field(default_factory=list)
    node_name: str | None = None
    namespace: str | None = None
    log_level: str | None = None
    remaining: list[str] = field(default_factory=list)


def parse_ros_arguments(argv: Sequence[str]) -> RosArguments:
    """Parse ``--ros-args`` sections of a command line as rcl does (``-p``, ``--params-file``, ``-r``,
    ``--log-level``; ``--`` ends a section).

    Raises:
        RuntimeLayerError: a flag without its value, or a rule without ``:=``.
    """
    result = RosArguments()
    args = list(argv)
    i, inside = 0, False
    while i < len(args):
        arg = args[i]
        if arg == "--ros-args":
            inside = True
        elif inside and arg == "--":
            inside = False
        elif not inside:
            result.remaining.append(arg)
        elif arg in ("-p", "--param", "--params-file", "-r", "--remap", "--log-level"):
            if i + 1 >= len(args):
                raise RuntimeLayerError(f"--ros-args: {arg} needs a value")
            value = args[i + 1]
            i += 1
            if arg == "--params-file":
                result.parameter_files.append(value)
            elif arg == "--log-level":
                result.log_level = value.split(":=")[-1].lower()
            else:
                rule_node, source, target = _split_rule(value, arg)
                if arg in ("-p", "--param"):
                    result.parameters[source] = yaml.safe_load(target) if target else ""
                elif source == "__node" or source == "__name":
                    result.node_name = target
                elif source == "__ns":
                    result.namespace = target
                else:
                    result.remappings.append(Remapping(source, target, rule_node))
        else:
            raise RuntimeLayerError(f"--ros-args: unsupported argument {arg!r}")
        i += 1
    return result


def _split_rule(text: str, flag: str) -> tuple[str | None, str, str]:
    if ":=" not in text:
        raise RuntimeLayerError(f"--ros-args {flag} {text!r}: expected 'name:=value'")
    source, target = text.split(":=", 1)
    node = None
    if ":" in source:  # node-specific rule  node:from:=to
        node, source = source.split(":", 1)
    return node, source, target


#: Topic of the feedforward node's predicted deformation (sensor_msgs/JointState, relative: in the node's namespace,
#: beside ``motor_torque`` and ``link_torque``); the node and the tools that read it (tests, bags) use this name.
PREDICTED_DEFLECTIONS_TOPIC = "predicted_deflections"
