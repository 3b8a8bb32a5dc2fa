"""The ROS 2 parameter interface of a standalone node: the six rcl_interfaces services and ``/parameter_events``.

What ``ros2 param list/get/set/dump/describe`` (ros2cli's ``ros2param``) and rqt call on every node, answered as
rclpy's ``ParameterService`` (``rclpy/parameter_service.py``, Jazzy) answers them:

- ``~/list_parameters`` (ListParameters): names filtered by ``prefixes`` and ``depth`` (``.`` separates groups), and
  the groups seen, exactly as ``rclpy.node.Node.list_parameters``;
- ``~/get_parameters``, ``~/get_parameter_types``, ``~/describe_parameters``: one entry per name asked, in order; a
  name that is not declared makes the whole answer empty (as rclpy does);
- ``~/set_parameters`` (each parameter set on its own, one result each) and ``~/set_parameters_atomically`` (all
  or none): through :meth:`~flexrobot_ros.runtime.node.Node.set_parameters`, so the node's validation and
  ``on_parameters_set`` callbacks decide, and the result's ``reason`` says why a value was refused;
- ``/parameter_events`` (ParameterEvent, reliable, volatile, keep-last 1000 as rclpy's
  ``qos_profile_parameter_events``): the declared parameters as ``new_parameters`` when declared, each accepted set
  as ``changed_parameters``.

Descriptors carry what :class:`~flexrobot_ros.runtime.params.ParameterSpec` declares, as the rclpy back end's
``parameter_descriptor`` does: the type, description, read-only flag, ``floating_point_range`` /
``integer_range`` for scalar doubles / integers, and element-wise ranges of arrays and string choices in
``additional_constraints``.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from flexrobot_ros.runtime.params import ParameterSpec
from flexrobot_ros.runtime.qos import QosProfile

#: rclpy's ``qos_profile_parameter_events``: reliable, volatile, keep-last 1000.
QOS_PARAMETER_EVENTS = QosProfile(depth=1000)
#: Separator of parameter groups in names (``excitation.period_s``).
SEPARATOR = "."
#: Service names (private to the node) and their types.
SERVICES = {
    "~/describe_parameters": "rcl_interfaces/srv/DescribeParameters",
    "~/get_parameters": "rcl_interfaces/srv/GetParameters",
    "~/get_parameter_types": "rcl_interfaces/srv/GetParameterTypes",
    "~/list_parameters": "rcl_interfaces/srv/ListParameters",
    "~/set_parameters": "rcl_interfaces/srv/SetParameters",
    "~/set_parameters_atomically": "rcl_interfaces/srv/SetParametersAtomically",
}


def type_code(types: Any, kind: str | None) -> int:
    """rcl_interfaces ``ParameterType`` constant of a parameter type (``double_array`` -> PARAMETER_DOUBLE_ARRAY)."""
    return int(getattr(types.rcl_interfaces.msg.ParameterType, f"PARAMETER_{(kind or 'not_set').upper()}"))


def parameter_value(types: Any, kind: str, value: Any) -> Any:
    """``rcl_interfaces/ParameterValue`` holding ``value`` of parameter type ``kind``."""
    msg = types.rcl_interfaces.msg.ParameterValue(type=type_code(types, kind))
    setattr(msg, f"{kind}_value", list(value) if kind.endswith("_array") else value)
    return msg


def python_value(types: Any, msg: Any) -> Any:
    """The Python value a ``ParameterValue`` holds (lists for arrays, None when NOT_SET or of an unknown type)."""
    codes = {type_code(types, kind): kind for kind in ("bool", "integer", "double", "string", "byte_array",
                                                         "bool_array", "integer_array", "double_array",
                                                         "string_array")}
    kind = codes.get(int(msg.type))
    if kind is None:
        return None
    value = getattr(msg, f"{kind}_value")
    return list(value) if kind.endswith("_array") else value


def parameter_descriptor(types: Any, spec: ParameterSpec) -> Any:
    """``rcl_interfaces/ParameterDescriptor`` of a declaration (what ``ros2 param describe`` prints)."""
    msg = types.rcl_interfaces.msg
    return build_descriptor(spec, type_code(types, spec.type), msg.ParameterDescriptor, msg.FloatingPointRange,
                            msg.IntegerRange)


def build_descriptor(spec: ParameterSpec, code: int, descriptor_type: Any, float_range: Any, int_range: Any) -> Any:
    """A ParameterDescriptor of ``spec`` built with the given message classes (this runtime's or rclpy's), type
    ``code`` (rcl_interfaces ParameterType). rcl_interfaces ranges apply to scalar double / integer parameters only;
    an array's element-wise range goes into ``additional_constraints`` with the choices of string parameters."""
    descriptor = descriptor_type(name=spec.name, type=code, description=spec.description, read_only=spec.read_only)
    constraints = []
    if spec.range is not None:
        low, high = spec.range
        if spec.type == "double":
            descriptor.floating_point_range = [float_range(from_value=float(low), to_value=float(high),
                                                           step=float(spec.step))]
        elif spec.type == "integer":
            descriptor.integer_range = [int_range(from_value=int(low), to_value=int(high), step=int(spec.step))]
        else:
            constraints.append(f"each element in [{low}, {high}]" + (f" in steps of {spec.step}" if spec.step else ""))
    if spec.choices is not None:
        constraints.append(f"one of {list(spec.choices)}")
    descriptor.additional_constraints = "; ".join(constraints)
    return descriptor


def list_parameters(names: Sequence[str], prefixes: Sequence[str], depth: int) -> tuple[list[str], list[str]]:
    """(names, group prefixes) that ``ListParameters`` answers, as ``rclpy.node.Node.list_parameters``.

    ``depth`` 0 (DEPTH_RECURSIVE) with no prefixes lists everything; otherwise a name is listed when it has fewer
    than ``depth`` separators (no prefixes), or equals a prefix, or lies under one within ``depth`` more levels.
    """
    def shallow(name: str) -> bool:
        return name.count(SEPARATOR) < depth

    listed, groups = [], []
    for name in names:
        if prefixes or depth:
            matches = not prefixes and shallow(name) or any(
                name == prefix
                or name.startswith(prefix + SEPARATOR) and (depth == 0 or shallow(name[len(prefix) + 1:]))
                for prefix in prefixes)
            if not matches:
                continue
        listed.append(name)
        if SEPARATOR in name:
            group = name[:name.rfind(SEPARATOR)]
            if group not in groups:
                groups.append(group)
    return listed, groups


class ParameterServer:
    """The parameter services and ``/parameter_events`` publisher of one standalone node.

    Args:
        node: a :class:`~flexrobot_ros.runtime.dds_backend.DdsNode` (services run in the thread that spins it).
    """

    def __init__(self, node: Any) -> None:
        self.node = node
        self.types = node.types
        self.events = node.create_publisher(self.types.rcl_interfaces.msg.ParameterEvent, "/parameter_events",
                                            QOS_PARAMETER_EVENTS)
        handlers = {
            "~/describe_parameters": self._describe, "~/get_parameters": self._get,
            "~/get_parameter_types": self._get_types, "~/list_parameters": self._list,
            "~/set_parameters": self._set, "~/set_parameters_atomically": self._set_atomically,
        }
        self.services = [node.create_service(self.types.get(SERVICES[name]), name, handler)
                         for name, handler in handlers.items()]

    # --- events ---------------------------------------------------------------------------------------------
    def announce(self, new: Mapping[str, Any] | None = None, changed: Mapping[str, Any] | None = None) -> None:
        """Publish one ``ParameterEvent`` with these new (declared) and changed parameters."""
        msg = self.types.rcl_interfaces.msg
        specs = self.node.parameter_specs

        def entries(values: Mapping[str, Any] | None) -> list[Any]:
            return [msg.Parameter(name=name, value=parameter_value(self.types, specs[name].type, value))
                    for name, value in (values or {}).items()]

        self.events.publish(msg.ParameterEvent(stamp=self.node.stamp(), node=self.node.fully_qualified_name,
                                               new_parameters=entries(new), changed_parameters=entries(changed)))

    # --- services -------------------------------------------------------------------------------------------
    def _known(self, names: Sequence[str]) -> bool:
        specs = self.node.parameter_specs
        return all(name in specs for name in names)

    def _describe(self, request: Any, response: Any) -> Any:
        specs = self.node.parameter_specs
        if self._known(request.names):
            response.descriptors = [parameter_descriptor(self.types, specs[name]) for name in request.names]
        return response

    def _get(self, request: Any, response: Any) -> Any:
        specs, values = self.node.parameter_specs, self.node.parameters
        if self._known(request.names):
            response.values = [parameter_value(self.types, specs[name].type, values[name]) for name in request.names]
        return response

    def _get_types(self, request: Any, response: Any) -> Any:
        specs = self.node.parameter_specs
        if self._known(request.names):
            response.types = [type_code(self.types, specs[name].type) for name in request.names]
        return response

    def _list(self, request: Any, response: Any) -> Any:
        names, groups = list_parameters(list(self.node.parameter_specs), list(request.prefixes), int(request.depth))
        response.result = self.types.rcl_interfaces.msg.ListParametersResult(names=names, prefixes=groups)
        return response

    def _result(self, values: Mapping[str, Any]) -> Any:
        successful, reason = self.node.set_parameters(values)
        return self.types.rcl_interfaces.msg.SetParametersResult(successful=successful, reason=reason)

    def _set(self, request: Any, response: Any) -> Any:
        response.results = [self._result({p.name: python_value(self.types, p.value)}) for p in request.parameters]
        return response

    def _set_atomically(self, request: Any, response: Any) -> Any:
        response.result = self._result({p.name: python_value(self.types, p.value) for p in request.parameters})
        return response
