"""The rclpy back end: a thin adapter from the runtime's :class:`~flexrobot_ros.runtime.node.Node` to rclpy.

Everything here is a direct call of the rclpy API (``rclpy.node.Node``, ``create_publisher``,
``create_subscription``, ``create_service``, ``create_client``, ``create_timer``, ``declare_parameter`` with a
``ParameterDescriptor``, ``QoSProfile``); entities returned are rclpy's own. Importing this module imports rclpy.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Sequence

import rclpy
import yaml
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.executors import ExternalShutdownException
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node as RosNode
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from flexrobot_ros.errors import FlexrobotError, RuntimeLayerError
from flexrobot_ros.runtime.messages import rclpy_message_types
from flexrobot_ros.runtime.names import Remapping
from flexrobot_ros.runtime.node import Node
from flexrobot_ros.runtime.params import ParameterSpec, validate_parameter
from flexrobot_ros.runtime.qos import QOS_DEFAULT, QosProfile

#: runtime parameter type -> (rcl_interfaces ParameterType constant, rclpy Parameter.Type)
_TYPES = {
    "bool": (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    "integer": (ParameterType.PARAMETER_INTEGER, Parameter.Type.INTEGER),
    "double": (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    "string": (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    "bool_array": (ParameterType.PARAMETER_BOOL_ARRAY, Parameter.Type.BOOL_ARRAY),
    "integer_array": (ParameterType.PARAMETER_INTEGER_ARRAY, Parameter.Type.INTEGER_ARRAY),
    "double_array": (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
    "string_array": (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
}


def qos_profile(profile: QosProfile) -> QoSProfile:
    """rclpy ``QoSProfile`` of a runtime profile."""
    return QoSProfile(
        reliability=ReliabilityPolicy.RELIABLE if profile.reliability == "reliable" else ReliabilityPolicy.BEST_EFFORT,
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if profile.durability == "transient_local"
                    else DurabilityPolicy.VOLATILE),
        history=HistoryPolicy.KEEP_LAST if profile.history == "keep_last" else HistoryPolicy.KEEP_ALL,
        depth=profile.depth,
    )


def parameter_descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """``rcl_interfaces/ParameterDescriptor`` of a declaration: type, description, range, read-only, choices."""
    descriptor = ParameterDescriptor(name=spec.name, type=_TYPES[spec.type][0], description=spec.description,
                                     read_only=spec.read_only)
    if spec.range is not None and spec.type in ("double", "double_array"):
        descriptor.floating_point_range = [FloatingPointRange(from_value=float(spec.range[0]),
                                                              to_value=float(spec.range[1]), step=float(spec.step))]
    elif spec.range is not None:
        descriptor.integer_range = [IntegerRange(from_value=int(spec.range[0]), to_value=int(spec.range[1]),
                                                 step=int(spec.step))]
    if spec.choices is not None:
        descriptor.additional_constraints = f"one of {list(spec.choices)}"
    return descriptor


def init(argv: Sequence[str] | None = None) -> None:
    """``rclpy.init`` once per process (``argv`` may hold ``--ros-args``)."""
    if not rclpy.ok():
        rclpy.init(args=list(argv) if argv is not None else None)


class RclpyNode(Node):
    """A :class:`~flexrobot_ros.runtime.node.Node` backed by ``rclpy.node.Node`` (available as ``ros_node``)."""

    backend = "rclpy"

    def __init__(self, name: str, *, namespace: str | None = None, parameter_files: Sequence[str] = (),
                 parameter_overrides: dict[str, Any] | None = None, remappings: Sequence[Remapping] = ()) -> None:
        super().__init__()
        init()
        args: list[str] = []
        for path in parameter_files:
            args += ["--params-file", str(path)]
        for key, value in (parameter_overrides or {}).items():
            args += ["-p", f"{key}:={yaml.safe_dump(value, default_flow_style=True).strip()}"]
        for rule in remappings:
            args += ["-r", f"{rule.node + ':' if rule.node else ''}{rule.source}:={rule.target}"]
        self.ros_node = RosNode(name, namespace=namespace, cli_args=["--ros-args", *args] if args else None)
        self.types = rclpy_message_types()

    @property
    def name(self) -> str:
        return self.ros_node.get_name()

    @property
    def namespace(self) -> str:
        return self.ros_node.get_namespace()

    def resolve_name(self, name: str) -> str:
        return self.ros_node.resolve_topic_name(name)

    @property
    def logger(self) -> Any:
        return self.ros_node.get_logger()

    def now(self) -> float:
        return self.ros_node.get_clock().now().nanoseconds * 1e-9

    def stamp(self, seconds: float | None = None) -> Any:
        if seconds is None:
            return self.ros_node.get_clock().now().to_msg()
        return super().stamp(seconds)

    def _declare(self, specs: list[ParameterSpec]) -> dict[str, Any]:
        values = {}
        for spec in specs:
            default = list(spec.default) if spec.type.endswith("_array") else spec.default
            if default == []:  # rclpy cannot infer a type from an empty list: declare the type, fall back below
                default = _TYPES[spec.type][1]
            self.ros_node.declare_parameter(spec.name, default, parameter_descriptor(spec))
            try:
                value = self.ros_node.get_parameter(spec.name).value
            except ParameterUninitializedException:  # declared by type only, and no file or override set it
                value = None
            value = spec.default if value is None else value
            if spec.type.endswith("_array"):
                value = list(value)
            values[spec.name] = validate_parameter(spec, value, "the ROS parameters")
        return values

    def create_publisher(self, msg_type: type, topic: str, qos: QosProfile = QOS_DEFAULT) -> Any:
        return self.ros_node.create_publisher(msg_type, topic, qos_profile(qos))

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            qos: QosProfile = QOS_DEFAULT) -> Any:
        return self.ros_node.create_subscription(msg_type, topic, self.guard(callback, f"subscription {topic}"),
                                                 qos_profile(qos))

    def create_service(self, srv_type: Any, name: str, callback: Callable[[Any, Any], Any]) -> Any:
        guarded = self.guard(callback, f"service {name}")

        def answer(request: Any, response: Any) -> Any:
            result = guarded(request, response)
            return result if result is not None else srv_type.Response()

        return self.ros_node.create_service(srv_type, name, answer)

    def create_client(self, srv_type: Any, name: str) -> Any:
        return self.ros_node.create_client(srv_type, name)

    def call(self, client: Any, request: Any, timeout_sec: float = 5.0) -> Any:
        future = client.call_async(request)
        rclpy.spin_until_future_complete(self.ros_node, future, timeout_sec=timeout_sec)
        if not future.done():
            client.remove_pending_request(future)
            raise RuntimeLayerError(f"service {client.srv_name}: no response within {timeout_sec} s")
        return future.result()

    def create_timer(self, period_sec: float, callback: Callable[[], None]) -> Any:
        return self.ros_node.create_timer(period_sec, self.guard(callback, "timer"))

    def destroy(self) -> None:
        self.ros_node.destroy_node()


def spin(node: RclpyNode, duration_sec: float | None = None) -> None:
    """``rclpy.spin`` (until shutdown), or ``spin_once`` until ``duration_sec`` has passed."""
    if duration_sec is None:
        rclpy.spin(node.ros_node)
        return
    deadline = time.monotonic() + duration_sec
    while rclpy.ok() and time.monotonic() < deadline:
        rclpy.spin_once(node.ros_node, timeout_sec=min(0.1, max(0.0, deadline - time.monotonic())))


def run(factory: Callable[[Node], Any], name: str, argv: Sequence[str]) -> int:
    """``main()`` of a node on rclpy: init, build, spin, and clean shutdown in ``finally``."""
    rclpy.init(args=list(argv))
    node, app = None, None
    try:
        node = RclpyNode(name)
        app = factory(node)
        rclpy.spin(node.ros_node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except FlexrobotError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    finally:
        if app is not None and hasattr(app, "close"):
            app.close()
        if node is not None:
            node.destroy()
        rclpy.try_shutdown()
    return 0
