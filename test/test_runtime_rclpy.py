"""The rclpy path, checked here without ROS 2 and exercised where ROS 2 is installed.

No ROS 2 can be installed on this machine (rclpy is not on PyPI), yet the package must run on real rclpy in ROS 2
Humble (rclpy 3.3, Python 3.10) and Jazzy (rclpy 7.1, Python 3.12). The static checks below prove what can be proven
without rclpy, each against the ROS 2 source it cites:

- every rclpy / rcl_interfaces name, keyword and argument count the rclpy back end uses is one of a list checked
  against rclpy's source, and no other module imports rclpy;
- every field of every message the nodes build has a Python type that rclpy's generated setters accept for that
  field's ROS type (both distributions' definitions), and ``byte`` fields are set from the class constants;
- the launch files compile, start only executables setup.py installs, read only files data_files installs and
  only launch arguments they declare, and use launch / launch_ros names that exist;
- setup.py / setup.cfg follow the ament_python conventions, package.xml is format 3 with rosdep keys only;
- every shipped ROS 2 parameter file names the nodes' declared parameters with the declared types (rcl refuses
  ``1`` for a double).

The tests marked ``needs_rclpy`` run the same node API on rclpy and skip cleanly here.
"""
from __future__ import annotations

import array
import ast
import collections
import configparser
import glob
import importlib.util
import re
import time
import types as pytypes
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import yaml

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import (ParameterSpec, QOS_LATCHED, QOS_STREAM, backend_name, create_node,
                                   message_types)
from flexrobot_ros.runtime.params import infer_type, validate_parameter

ROOT = Path(__file__).resolve().parents[1]
BACKEND = ROOT / "flexrobot_ros" / "runtime" / "rclpy_backend.py"
HAVE_RCLPY = importlib.util.find_spec("rclpy") is not None
needs_rclpy = pytest.mark.skipif(not HAVE_RCLPY, reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")
NODES = ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node", "calibration_node")


def test_backend_choice_follows_flexrobot_runtime(monkeypatch):
    """FLEXROBOT_RUNTIME wins; unset means rclpy when importable, else dds; nonsense is refused clearly."""
    monkeypatch.delenv("FLEXROBOT_RUNTIME", raising=False)
    assert backend_name() == ("rclpy" if HAVE_RCLPY else "dds")
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "dds")
    assert backend_name() == "dds"
    assert message_types().backend == "dds"
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "zenoh")
    with pytest.raises(RuntimeLayerError, match="FLEXROBOT_RUNTIME='zenoh'"):
        backend_name()
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "rclpy")
    if HAVE_RCLPY:
        assert backend_name() == "rclpy"
    else:
        with pytest.raises(RuntimeLayerError, match="not importable"):
            backend_name()


# ------------------------------------------------------------------------------------------------------------------
# The rclpy API the back end uses. Checked against ros2/rclpy: rclpy/rclpy/{__init__,node,parameter,qos,client,task,
# exceptions,executors}.py and rclpy/rclpy/impl/rcutils_logger.py, and ros2/rcl_interfaces msg/*.msg. Each name below
# exists with this meaning in Humble (rclpy 3.3.x) and Jazzy (rclpy 7.1.x); the note says when it appeared.
# ------------------------------------------------------------------------------------------------------------------

#: (module, name) imported by the back end.
RCLPY_IMPORTS = {
    ("rclpy", None),
    ("rcl_interfaces.msg", "FloatingPointRange"),    # msg/FloatingPointRange.msg: from_value, to_value, step
    ("rcl_interfaces.msg", "IntegerRange"),          # msg/IntegerRange.msg: from_value, to_value, step (uint64)
    ("rcl_interfaces.msg", "ParameterDescriptor"),   # msg/ParameterDescriptor.msg (dynamic_typing since Galactic)
    ("rcl_interfaces.msg", "SetParametersResult"),   # msg/SetParametersResult.msg: successful, reason
    ("rclpy.clock", "Clock"),       # rclpy/clock.py Clock(*, clock_type=ClockType.SYSTEM_TIME) (all distros)
    ("rclpy.clock", "ClockType"),   # defined in rclpy/clock.py (Humble), imported there from clock_type.py (Jazzy)
    ("rclpy.exceptions", "InvalidHandle"),  # raised entering a destroyed entity's handle (executors.py imports it)
    ("rclpy.exceptions", "InvalidParameterTypeException"),   # raised by declare_parameter(s), static typing (#683)
    ("rclpy.exceptions", "InvalidParameterValueException"),  # raised by declare_parameter(s) (range, callbacks)
    ("rclpy.exceptions", "ParameterUninitializedException"),  # get_parameter of a typed, unset parameter (#798)
    ("rclpy.executors", "ExternalShutdownException"),  # raised by spin_once when the context was shut down
    ("rclpy.executors", "SingleThreadedExecutor"),     # SingleThreadedExecutor(*, context); registers on_shutdown(wake)
    ("rclpy.signals", "SignalHandlerOptions"),         # re-export of _rclpy.SignalHandlerOptions (#830, Humble)
    ("rclpy.node", "Node"),
    ("rclpy.parameter", "Parameter"),
    ("rclpy.qos", "DurabilityPolicy"),   # the enum names since Foxy (QoS*Policy aliases kept)
    ("rclpy.qos", "HistoryPolicy"),
    ("rclpy.qos", "QoSProfile"),
    ("rclpy.qos", "ReliabilityPolicy"),
}

#: Attributes allowed on each receiver expression (as written in rclpy_backend.py).
_NODE = {
    # rclpy.node.Node: get_name/get_namespace/get_logger/get_clock/destroy_node (all distros); resolve_topic_name
    # (rclpy 1.3, #636); declare_parameter(name, value, descriptor, ignore_override); get_parameter(name);
    # create_publisher(msg_type, topic, qos_profile), create_subscription(msg_type, topic, callback, qos_profile),
    # create_service(srv_type, srv_name, callback), create_client(srv_type, srv_name), create_timer(period, callback)
    "get_name", "get_namespace", "resolve_topic_name", "get_logger", "get_clock", "declare_parameter",
    "get_parameter", "create_publisher", "create_subscription", "create_service", "create_client", "create_timer",
    "destroy_node",
    # destroy_subscription(subscription) -> bool (all distros)
    "destroy_subscription",
    # add_on_set_parameters_callback(callback(list[Parameter]) -> SetParametersResult) (Foxy),
    # set_parameters_atomically(list[Parameter]) -> SetParametersResult (Dashing)
    "add_on_set_parameters_callback", "set_parameters_atomically",
    # get_publishers_info_by_topic / get_subscriptions_info_by_topic(topic_name, no_mangle=False) ->
    # list[TopicEndpointInfo] (since Foxy; also in Kilted's rclpy 9.1); no_mangle=True takes the DDS name as is
    "get_publishers_info_by_topic", "get_subscriptions_info_by_topic",
}
RCLPY_ATTRIBUTES = {
    # rclpy/__init__.py: init(*, args, context, ...), ok, spin(node), spin_once(node, *, timeout_sec),
    # spin_until_future_complete(node, future, executor=None, timeout_sec=None); try_shutdown forwarded from
    # rclpy.utilities (since Dashing)
    "rclpy": {"init", "ok", "spin", "spin_once", "spin_until_future_complete", "try_shutdown"},
    "self.ros_node.get_clock()": {"now"},                       # rclpy/clock.py Clock.now() -> Time
    "self.ros_node.get_clock().now()": {"nanoseconds", "to_msg"},  # rclpy/time.py Time.nanoseconds, Time.to_msg()
    "self.ros_node.get_parameter()": {"value"},                 # rclpy/parameter.py Parameter.value
    "self._logger": {"debug", "info", "warning", "error"},      # impl/rcutils_logger.py RcutilsLogger methods
    # rclpy/client.py Client: call_async(request) -> Future, remove_pending_request(future), service_is_ready(),
    # srv_name (property, all distros)
    "self.ros_client": {"call_async", "remove_pending_request", "service_is_ready", "srv_name"},
    "ros_client": {"srv_name"},
    # rclpy/topic_endpoint_info.py TopicEndpointInfo: node_name, node_namespace, endpoint_gid (list of int: the GID,
    # 24 bytes in Humble, 16 in Jazzy) (since Foxy; the same in rclpy 9.1)
    "endpoint": {"endpoint_gid", "node_name", "node_namespace"},
    "self.node.ros_node": {"get_publishers_info_by_topic", "get_subscriptions_info_by_topic", "context"},
    "ros_node": {"get_publishers_info_by_topic", "get_subscriptions_info_by_topic"},
    "self.node.ros_node.context": {"ok"},
    "future": {"add_done_callback", "done", "result"},          # rclpy/task.py Future
    "ReliabilityPolicy": {"RELIABLE", "BEST_EFFORT"},           # rclpy/qos.py
    "DurabilityPolicy": {"TRANSIENT_LOCAL", "VOLATILE"},
    "HistoryPolicy": {"KEEP_LAST", "KEEP_ALL"},
    "Parameter": {"Type"},                                      # rclpy/parameter.py Parameter.Type (Enum)
    "Parameter.Type": {"BOOL", "INTEGER", "DOUBLE", "STRING", "BOOL_ARRAY", "INTEGER_ARRAY", "DOUBLE_ARRAY",
                       "STRING_ARRAY"},
    "PARAMETER_TYPES[]": {"value"},                             # Parameter.Type member .value: ParameterType const
    "SignalHandlerOptions": {"NO"},
    "ClockType": {"STEADY_TIME"},                               # IntEnum UNINITIALIZED/ROS/SYSTEM/STEADY_TIME                             # enum NO / SigInt / SigTerm / ALL (signals.py)
    "self.ros_node": _NODE | {"context"},                       # Node.context property (rclpy/node.py)
    "node.ros_node": _NODE | {"context"},
    "context": {"ok"},                                          # rclpy/context.py Context.ok()
    # rclpy/executors.py Executor.add_node(node), remove_node(node), spin_once(timeout_sec), shutdown(timeout_sec)
    "executor": {"add_node", "remove_node", "spin_once", "shutdown"},
    # rclpy/subscription.py Subscription.handle (the _rclpy.Subscription, a context manager), msg_type, raw; its
    # take_message(msg_type, raw) -> (msg, info) | None: what Executor._take_subscription and
    # wait_for_message.wait_for_message call per message in Humble (3.3), Jazzy (7.1) and Kilted (9.1)
    "subscription": {"handle", "msg_type", "raw"},
    "subscription.handle": {"take_message"},
}
#: Keyword arguments (and most positional arguments) allowed in calls to rclpy callables.
RCLPY_CALLS = {
    "QoSProfile": (0, {"reliability", "durability", "history", "depth"}),     # rclpy/qos.py QoSProfile(**kwargs)
    "ParameterDescriptor": (0, {"name", "type", "description", "read_only", "additional_constraints"}),
    "FloatingPointRange": (0, {"from_value", "to_value", "step"}),
    "IntegerRange": (0, {"from_value", "to_value", "step"}),
    "RosNode": (1, {"namespace", "cli_args"}),                  # Node(node_name, *, context, cli_args, namespace, ...)
    "rclpy.init": (0, {"args", "signal_handler_options"}),      # keyword-only; signal_handler_options since Humble
    "SingleThreadedExecutor": (0, {"context"}),
    "context.ok": (0, set()),
    "executor.add_node": (1, set()),
    "executor.remove_node": (1, set()),
    "executor.spin_once": (0, {"timeout_sec"}),
    "executor.shutdown": (0, {"timeout_sec"}),
    "rclpy.ok": (0, set()),
    "rclpy.spin": (1, set()),
    "rclpy.spin_once": (1, {"timeout_sec"}),
    "rclpy.spin_until_future_complete": (2, {"timeout_sec"}),
    "rclpy.try_shutdown": (0, set()),
    "self.ros_node.get_name": (0, set()),
    "self.ros_node.get_namespace": (0, set()),
    "self.ros_node.get_logger": (0, set()),
    "self.ros_node.get_clock": (0, set()),
    "self.ros_node.get_clock().now": (0, set()),
    "self.ros_node.get_clock().now().to_msg": (0, set()),
    "self.ros_node.destroy_node": (0, set()),
    "self.ros_node.declare_parameter": (4, set()),
    "self.ros_node.get_parameter": (1, set()),
    "self.ros_node.resolve_topic_name": (1, set()),
    "self.ros_node.add_on_set_parameters_callback": (1, set()),
    "self.ros_node.set_parameters_atomically": (1, set()),
    "self.ros_node.create_publisher": (3, set()),               # qos_profile is positional (no default) since Dashing
    "self.ros_node.create_subscription": (4, set()),
    "self.ros_node.destroy_subscription": (1, set()),
    "self.ros_node.create_service": (3, set()),                 # qos_profile / callback_group are keyword-only
    "self.ros_node.create_client": (2, set()),
    "self.ros_node.create_timer": (2, {"clock"}),   # create_timer(period, callback, callback_group, clock) (Foxy+)
    "Clock": (0, {"clock_type"}),
    "self.ros_client.call_async": (1, set()),                   # one request; no timeout argument in rclpy
    "self.ros_client.remove_pending_request": (1, set()),
    "self.ros_client.service_is_ready": (0, set()),
    "self.node.ros_node.get_publishers_info_by_topic": (1, {"no_mangle"}),
    "ros_node.get_publishers_info_by_topic": (1, {"no_mangle"}),
    "ros_node.get_subscriptions_info_by_topic": (1, {"no_mangle"}),
    "self.node.ros_node.context.ok": (0, set()),
    "future.add_done_callback": (1, set()),
    "future.done": (0, set()),
    "future.result": (0, set()),
    "subscription.handle.take_message": (2, set()),
    "self._logger.debug": (1, set()),       # RcutilsLogger.<severity>(message, **filter_kwargs)
    "self._logger.info": (1, set()),
    "self._logger.warning": (1, set()),
    "self._logger.error": (1, set()),
}
RCLPY_NAMES = {name for _, name in RCLPY_IMPORTS if name} | {"rclpy", "RosNode"}


def _dotted(expr: ast.AST) -> str | None:
    """``a.b.c`` / ``a.b()`` / ``A[...]`` of an expression, None for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    if isinstance(expr, ast.Call):
        base = _dotted(expr.func)
        return f"{base}()" if base else None
    if isinstance(expr, ast.Subscript):
        base = _dotted(expr.value)
        return f"{base}[]" if base else None
    return None


def test_rclpy_backend_uses_only_checked_rclpy_api():
    """Parse rclpy_backend.py: its imports, the attributes it reads on rclpy objects and the arguments of its calls
    to rclpy are all in the lists above (checked against rclpy's source for Humble and Jazzy)."""
    tree = ast.parse(BACKEND.read_text())
    imports = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports |= {(alias.name, None) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imports |= {(node.module, alias.name) for alias in node.names}
    rclpy_imports = {entry for entry in imports if entry[0].split(".")[0] in ("rclpy", "rcl_interfaces")}
    assert rclpy_imports == RCLPY_IMPORTS, f"unchecked rclpy imports: {rclpy_imports ^ RCLPY_IMPORTS}"

    used: dict[str, set[str]] = collections.defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            receiver = _dotted(node.value)
            if receiver is None:
                continue
            if receiver in RCLPY_ATTRIBUTES:
                used[receiver].add(node.attr)
            else:
                assert receiver.split(".")[0].split("(")[0] not in RCLPY_NAMES, \
                    f"line {node.lineno}: {receiver}.{node.attr} is not in the checked rclpy API"
    for receiver, attributes in used.items():
        assert attributes <= RCLPY_ATTRIBUTES[receiver], \
            f"{receiver}: unchecked rclpy attributes {sorted(attributes - RCLPY_ATTRIBUTES[receiver])}"
    # the lists are exercised: every rclpy entity the back end wraps is reached through a checked receiver
    # (descriptors are built by parameter_services.build_descriptor with rclpy's classes: checked on real rclpy by
    # test_rclpy_descriptors_carry_types_ranges_and_descriptions)
    assert {"self.ros_node", "rclpy", "self.ros_client", "future", "self._logger"} <= set(used), used.keys()

    calls = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func) in RCLPY_CALLS:
            positional, keywords = RCLPY_CALLS[_dotted(node.func)]
            where = f"line {node.lineno}: {_dotted(node.func)}"
            assert len(node.args) <= positional, f"{where}: {len(node.args)} positional arguments"
            assert {kw.arg for kw in node.keywords} <= keywords, f"{where}: keywords {[kw.arg for kw in node.keywords]}"
            calls += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                _dotted(node.func.value) in set(RCLPY_ATTRIBUTES):
            pytest.fail(f"line {node.lineno}: call {_dotted(node.func)} has no argument rule")
    assert calls >= 20


def test_only_the_rclpy_backend_imports_rclpy_and_nodes_use_the_runtime_api():
    """Node files import neither rclpy nor cyclonedds (they run on both back ends through flexrobot_ros.runtime);
    the only other rclpy use is runtime/__init__.py's rclpy.try_shutdown()."""
    for path in sorted((ROOT / "flexrobot_ros").rglob("*.py")):
        tree = ast.parse(path.read_text())
        modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        roots = {module.split(".")[0] for module in modules}
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("flexrobot_ros/nodes/"):
            assert not roots & {"rclpy", "rcl_interfaces", "cyclonedds", "rosbags"}, relative
        if relative not in ("flexrobot_ros/runtime/rclpy_backend.py", "flexrobot_ros/runtime/__init__.py"):
            assert not roots & {"rclpy", "rcl_interfaces"}, f"{relative} imports rclpy"
    init = ast.parse((ROOT / "flexrobot_ros" / "runtime" / "__init__.py").read_text())
    attributes = {node.attr for node in ast.walk(init)
                  if isinstance(node, ast.Attribute) and _dotted(node.value) == "rclpy"}
    assert attributes <= RCLPY_ATTRIBUTES["rclpy"]


def test_log_calls_have_one_severity_per_call_site():
    """rclpy's RcutilsLogger.log raises ValueError('Logger severity cannot be changed between calls.') when one
    call site (function, file, line, instruction; impl/rcutils_logger.py CallerId) logs at two severities.
    Node.log_once logs warnings and errors from one line, so on rclpy it goes through RosLogger, each of whose
    methods calls exactly one severity of the rclpy logger (the call site rclpy sees)."""
    tree = ast.parse(BACKEND.read_text())
    (logger,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "RosLogger"]
    methods = [node for node in logger.body if isinstance(node, ast.FunctionDef) and node.name != "__init__"]
    assert {method.name for method in methods} == {"debug", "info", "warning", "error"}
    for method in methods:
        calls = [node for node in ast.walk(method) if isinstance(node, ast.Call)]
        assert [_dotted(call.func) for call in calls] == [f"self._logger.{method.name}"], method.name
    (logger_property,) = [node for node in ast.walk(tree)
                          if isinstance(node, ast.FunctionDef) and node.name == "logger"]
    assert _dotted(logger_property.body[-1].value) == "self._logger"
    assert "RosLogger(self.ros_node.get_logger())" in BACKEND.read_text()


# ------------------------------------------------------------------------------------------------------------------
# Message field values vs rclpy's generated setters. Rules from ros2/rosidl_python
# rosidl_generator_py/resource/_msg.py.em (Humble and Jazzy): float32/float64 -> isinstance(v, float); integers ->
# isinstance(v, int) within the type's bounds; bool -> bool; string -> str; byte (octet) -> bytes of length 1;
# float64[] / float32[] sequences -> array.array('d' / 'f') or a Sequence of float (numpy arrays are not Sequences
# and are refused); fixed float arrays -> numpy.ndarray of that dtype and size, or a Sequence of that length;
# other sequences / arrays -> list or tuple of valid elements; nested -> an instance of the field's message type.
# ------------------------------------------------------------------------------------------------------------------

_INT_BOUNDS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINT_BOUNDS = {"uint8": 8, "char": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def _rclpy_refusals(value, desc, store, where: str) -> list[str]:
    """Why rclpy's setter for a field of rosbags type description ``desc`` would refuse ``value`` (empty: accepts).
    ``byte`` fields hold ints on the DDS back end; they are checked by test_byte_fields_come_from_class_constants."""
    from rosbags.interfaces import Nodetype

    kind, rest = desc
    if kind == Nodetype.BASE:
        base = rest[0]
        if base in ("float32", "float64"):
            ok = isinstance(value, float)
        elif base in _INT_BOUNDS:
            ok = type(value) is int and -2 ** (_INT_BOUNDS[base] - 1) <= value < 2 ** (_INT_BOUNDS[base] - 1)
        elif base in _UINT_BOUNDS:
            ok = type(value) is int and 0 <= value < 2 ** _UINT_BOUNDS[base]
        elif base == "bool":
            ok = isinstance(value, bool)
        elif base == "string":
            ok = isinstance(value, str) and (not rest[1] or len(value) <= rest[1])
        elif base == "byte":
            ok = True
        else:
            return [f"{where}: unknown base type {base}"]
        return [] if ok else [f"{where}: {type(value).__name__} {value!r} for {base}"]
    if kind == Nodetype.NAME:
        if getattr(value, "__msgtype__", None) != rest:
            return [f"{where}: {type(value).__name__} for {rest}"]
        constants, fields = store.fielddefs[rest]
        return [problem for name, sub in fields
                for problem in _rclpy_refusals(getattr(value, name), sub, store, f"{where}.{name}")]
    sub, size = rest
    floats = sub[0] == Nodetype.BASE and sub[1][0] in ("float32", "float64")
    if floats and kind == Nodetype.SEQUENCE and isinstance(value, array.array):
        code = "d" if sub[1][0] == "float64" else "f"
        return [] if value.typecode == code else [f"{where}: array.array({value.typecode!r}) for {sub[1][0]}[]"]
    if floats and kind == Nodetype.ARRAY and isinstance(value, np.ndarray):
        dtype = np.float64 if sub[1][0] == "float64" else np.float32
        return [] if value.dtype == dtype and value.size == size else [f"{where}: numpy {value.dtype} {value.shape}"]
    if not isinstance(value, (list, tuple)):
        return [f"{where}: {type(value).__name__} is not a list, tuple or array.array"]
    if kind == Nodetype.ARRAY and len(value) != size:
        return [f"{where}: {len(value)} values for {size}"]
    if kind == Nodetype.SEQUENCE and size and len(value) > size:
        return [f"{where}: {len(value)} values for at most {size}"]
    return [problem for i, item in enumerate(value) for problem in _rclpy_refusals(item, sub, store, f"{where}[{i}]")]


def _node_messages(types):
    """Every kind of message the four nodes publish, built by the nodes' own builders (flexrobot_ros.nodes.convert)
    from typical float64 numpy data, as the nodes call them."""
    from flexrobot_ros.kinematics import link_transforms
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.nodes import convert
    from flexrobot_ros.runtime.messages import time_message

    robot = load_robot("planar_2r")
    names = list(robot.joint_names)
    n = len(names)
    stamp = time_message(types, 1234.5)
    q = np.linspace(0.1, 0.2, n)
    t = np.linspace(0.0, 1.0, 5)
    node = pytypes.SimpleNamespace(types=types, fully_qualified_name="/check/node", stamp=lambda: stamp,
                                   input_errors=collections.Counter({"/joint_states: length": 2}))
    shapes = np.exp(1j * np.arange(2 * n, dtype=float)).reshape(2, n)
    deformed = [np.array([[0.0, 0.0, 0.0], [0.5, 0.1, 0.0], [1.0, 0.2, 0.1]])] * 2
    return {
        "sensor_msgs/msg/JointState": convert.joint_state(types, stamp, names, q, 2 * q, 3 * q),
        "trajectory_msgs/msg/JointTrajectory": convert.joint_trajectory(
            types, stamp, names, t, np.outer(t, q), np.outer(t, q), np.outer(t, q), np.outer(t, q)),
        "std_msgs/msg/Float64MultiArray": convert.float_array(types, np.array([12.5, 31.0, 47.25]), "mode"),
        "std_msgs/msg/Float64MultiArray#shapes": convert.mode_shapes_array(types, shapes, names),
        "tf2_msgs/msg/TFMessage": convert.tf_message(types, stamp, link_transforms(robot, q)),
        "visualization_msgs/msg/MarkerArray": convert.mode_markers(types, stamp, "base_link", deformed[0], deformed,
                                                                   ["12.5 Hz", "31 Hz"]),
        "diagnostic_msgs/msg/DiagnosticArray": convert.diagnostics(node, "monitor", "ok", "stable",
                                                                   {"rate [Hz]": 10.0, "modes": [1.0, 2.0]}),
        "std_msgs/msg/String": types.std_msgs.msg.String(data=robot.urdf_path.read_text()),
        "control_msgs/msg/DynamicJointState": convert.dynamic_joint_state(types, stamp, names, {
            "position": q, "velocity": 2 * q, "motor_position": 3 * q}),
    }


@pytest.mark.parametrize("distro", ["humble", "jazzy"])
def test_node_messages_have_field_types_rclpy_accepts(distro):
    """Walk every field of every message the nodes build against the distro's message definitions (rosbags
    typestores) with rosidl_python's setter rules: float64[] as array.array('d'), float fields as float (numpy
    float64 is a float), ints as int, names as lists of str, stamps as builtin_interfaces/Time."""
    from rosbags.interfaces import Nodetype

    from flexrobot_ros.runtime.messages import dds_message_types, typestore

    store = typestore(distro)
    problems = []
    for key, message in _node_messages(dds_message_types(distro)).items():
        problems += _rclpy_refusals(message, (Nodetype.NAME, key.split("#")[0]), store, key)
    assert not problems, "\n".join(problems)


def test_field_rules_refuse_what_rclpy_refuses():
    """The checker above is not vacuous: numpy arrays for float64[], numpy ints, a str for string[] and an int
    for a float field are refused, as rclpy's assertions refuse them."""
    from rosbags.interfaces import Nodetype

    from flexrobot_ros.runtime.messages import dds_message_types, typestore

    types, store = dds_message_types("jazzy"), typestore("jazzy")
    state = types.sensor_msgs.msg.JointState(name="joint1", position=np.zeros(2))
    problems = _rclpy_refusals(state, (Nodetype.NAME, "sensor_msgs/msg/JointState"), store, "state")
    assert any(".name:" in p for p in problems) and any(".position:" in p for p in problems)
    point = types.geometry_msgs.msg.Point(x=1, y=np.float32(2.0), z=np.float64(3.0))
    problems = _rclpy_refusals(point, (Nodetype.NAME, "geometry_msgs/msg/Point"), store, "point")
    assert [p.split(":")[0] for p in problems] == ["point.x", "point.y"]
    dim = types.std_msgs.msg.MultiArrayDimension(label="mode", size=np.int64(3), stride=3)
    (problem,) = _rclpy_refusals(dim, (Nodetype.NAME, "std_msgs/msg/MultiArrayDimension"), store, "dim")
    assert problem.startswith("dim.size: int64")


def _is_constant_expression(expr: ast.AST, constants: set[str]) -> bool:
    """``X.OK``, ``{...: X.OK, ...}[key]`` or ``X.OK if c else X.WARN``: built from class constants only."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in constants
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Dict):
        return all(_is_constant_expression(value, constants) for value in expr.value.values)
    if isinstance(expr, ast.IfExp):
        return _is_constant_expression(expr.body, constants) and _is_constant_expression(expr.orelse, constants)
    return False


def test_byte_fields_come_from_class_constants():
    """diagnostic_msgs/DiagnosticStatus.level is a ``byte``: rclpy's setter asserts bytes of length 1 and its
    constants are bytes (DiagnosticStatus.OK == b'\\x00'), the DDS back end's are ints. Every value the node code
    gives ``level`` (keyword or attribute assignment) must be built from DiagnosticStatus.OK/WARN/ERROR/STALE."""
    from flexrobot_ros.runtime.messages import typestore

    constants = {name for name, base, _ in typestore("jazzy").fielddefs["diagnostic_msgs/msg/DiagnosticStatus"][0]}
    assert constants == {"OK", "WARN", "ERROR", "STALE"}
    found = 0
    for path in sorted((ROOT / "flexrobot_ros" / "nodes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            values = []
            if isinstance(node, ast.Call):
                values = [kw.value for kw in node.keywords if kw.arg == "level"]
            elif isinstance(node, ast.Assign):
                values = [node.value for target in node.targets
                          if isinstance(target, ast.Attribute) and target.attr == "level"]
            for value in values:
                found += 1
                assert _is_constant_expression(value, constants), f"{path.name}:{node.lineno}: level literal"
    assert found >= 1


# ------------------------------------------------------------------------------------------------------------------
# Launch files, setup.py, setup.cfg, package.xml
# ------------------------------------------------------------------------------------------------------------------

def _setup_call() -> ast.Call:
    tree = ast.parse((ROOT / "setup.py").read_text())
    (call,) = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _dotted(node.func) == "setup"]
    return call


def _keyword(call: ast.Call, name: str) -> ast.AST:
    (value,) = [kw.value for kw in call.keywords if kw.arg == name]
    return value


def _console_scripts() -> dict[str, str]:
    entries = ast.literal_eval(_keyword(_setup_call(), "entry_points"))["console_scripts"]
    return dict(entry.replace(" ", "").split("=") for entry in entries)


def _installed_files() -> dict[str, str]:
    """{installed path relative to the install prefix: source path}: setup.py's data_files evaluated with its own
    PACKAGE and glob (relative to the repository root, as colcon runs setup.py there)."""
    expression = ast.Expression(_keyword(_setup_call(), "data_files"))
    data_files = eval(compile(expression, "setup.py", "eval"),  # noqa: S307 - the repository's own setup.py
                      {"PACKAGE": "flexrobot_ros", "glob": lambda pattern: sorted(glob.glob(pattern, root_dir=ROOT))})
    return {f"{destination}/{Path(source).name}": str(ROOT / source)
            for destination, sources in data_files for source in sources}


def test_setup_follows_ament_python_conventions():
    """ament_python: the package marker resource/<pkg> goes to share/ament_index/resource_index/packages, package.xml
    to share/<pkg>; node executables go to lib/<pkg> (setup.cfg script_dir / install_scripts, the underscore keys
    that setuptools accepts in every version used by Humble and Jazzy); names and versions agree with package.xml."""
    installed = _installed_files()
    assert Path(installed["share/ament_index/resource_index/packages/flexrobot_ros"]).is_file()
    assert installed["share/flexrobot_ros/package.xml"] == str(ROOT / "package.xml")
    for folder in ("launch", "config", "urdf"):
        assert any(key.startswith(f"share/flexrobot_ros/{folder}/") for key in installed), folder
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["develop"]["script_dir"] == "$base/lib/flexrobot_ros"
    assert cfg["install"]["install_scripts"] == "$base/lib/flexrobot_ros"
    scripts = _console_scripts()
    for name in NODES:
        assert scripts[name] == f"flexrobot_ros.nodes.{name}:main"
    package = ElementTree.parse(ROOT / "package.xml").getroot()
    assert ast.literal_eval(_keyword(_setup_call(), "version")) == package.findtext("version")
    assert package.findtext("name") == "flexrobot_ros"
    assert re.fullmatch(r"\d+\.\d+\.\d+", package.findtext("version"))  # catkin_pkg refuses other versions


#: rosdep keys of package.xml and where each was found. ROS packages: released in both ros/rosdistro
#: humble/distribution.yaml and jazzy/distribution.yaml (pinocchio: rosdistro PRs #43830 humble, #52496 jazzy;
#: launch_testing is released from ros2/launch and launch_testing_ros from ros2/launch_ros in both distributions;
#: rosgraph_msgs is released from ros2/rcl_interfaces, as builtin_interfaces and rcl_interfaces are; control_msgs
#: from ros-controls/control_msgs, ros2_control's messages, in both).
#: python3-*: rosdistro rosdep/python.yaml. There is no key for casadi, rosbags or threadpoolctl (python.yaml has
#: no python3-casadi[-pip], python3-rosbags[-pip], python3-threadpoolctl), and ament_python is a build type, not a
#: key (rosdep fails with "Cannot locate rosdep definition for [ament_python]", ros2/ros2_documentation#508).
ROSDEP_KEYS = {
    "rclpy", "std_msgs", "sensor_msgs", "trajectory_msgs", "geometry_msgs", "visualization_msgs", "diagnostic_msgs",
    "std_srvs", "tf2_msgs", "rosgraph_msgs", "control_msgs", "builtin_interfaces", "rcl_interfaces",
    "robot_state_publisher", "rviz2",
    "ros2bag", "rosbag2_storage_default_plugins", "launch", "launch_ros", "launch_testing", "launch_testing_ros",
    "ament_index_python", "pinocchio",
    "python3-numpy", "python3-scipy", "python3-yaml", "python3-matplotlib", "python3-pytest",
}


def test_package_xml_is_format_3_with_resolvable_keys():
    package = ElementTree.parse(ROOT / "package.xml").getroot()
    assert package.get("format") == "3"
    assert package.find("export/build_type").text == "ament_python"
    tags = ("depend", "build_depend", "buildtool_depend", "exec_depend", "test_depend", "build_export_depend")
    keys = {element.text.strip() for tag in tags for element in package.iter(tag)}
    assert keys <= ROSDEP_KEYS, f"keys not checked against rosdep: {sorted(keys - ROSDEP_KEYS)}"
    # what the code imports under ROS 2 is declared
    assert {"rclpy", "launch", "launch_ros", "ament_index_python", "robot_state_publisher", "pinocchio"} <= keys


LAUNCH_IMPORTS = {
    # ros2/launch launch/launch/{__init__,actions/__init__,conditions/__init__,substitutions/__init__}.py and
    # ros2/launch_ros launch_ros/launch_ros/actions/__init__.py, ament/ament_index ament_index_python/packages.py
    ("launch", "LaunchDescription"), ("launch.actions", "DeclareLaunchArgument"),
    ("launch.actions", "ExecuteProcess"), ("launch.actions", "OpaqueFunction"), ("launch.conditions", "IfCondition"),
    ("launch.actions", "LogInfo"),  # launch/launch/actions/log_info.py: LogInfo(*, msg)
    ("launch.conditions", "UnlessCondition"), ("launch.substitutions", "LaunchConfiguration"),
    ("launch.substitutions", "PythonExpression"), ("launch_ros.actions", "Node"),
    ("ament_index_python.packages", "get_package_share_directory"),
    ("ament_index_python.packages", "PackageNotFoundError"),  # raised by get_package_share_directory
}
#: Keywords of launch_ros.actions.Node (launch_ros/actions/node.py: executable, package, name, namespace,
#: parameters, remappings, arguments, ros_arguments; output and condition go to ExecuteProcess / Action) and of
#: ExecuteProcess / DeclareLaunchArgument.
LAUNCH_KEYWORDS = {
    "Node": {"package", "executable", "name", "namespace", "parameters", "remappings", "arguments", "output",
             "condition", "ros_arguments"},
    "ExecuteProcess": {"cmd", "output", "condition"},
    "DeclareLaunchArgument": {"default_value", "description"},
    "OpaqueFunction": {"function"},
    "LogInfo": {"msg"},
}
OTHER_EXECUTABLES = {("robot_state_publisher", "robot_state_publisher"), ("rviz2", "rviz2")}


@pytest.mark.parametrize("path", sorted(glob.glob(str(ROOT / "launch" / "*.launch.py"))),
                         ids=lambda p: Path(p).name)
def test_launch_file_references_what_the_package_installs(path):
    """The launch file compiles; it imports launch / launch_ros names that exist; launch_ros Node gets only its
    keywords; executables of this package are console scripts of setup.py, the others are robot_state_publisher
    and rviz2; share-relative files it opens are installed by data_files; every LaunchConfiguration it reads is a
    declared argument; the parameter files it picks (config/<robot>_<kind>.yaml or config/<kind>.yaml) are
    installed."""
    source = Path(path).read_text()
    compile(source, path, "exec")
    tree = ast.parse(source)
    imports = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names if node.module.split(".")[0] in ("launch", "launch_ros", "ament_index_python")}
    assert imports <= LAUNCH_IMPORTS, imports - LAUNCH_IMPORTS
    constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    package = ast.literal_eval(constants["PACKAGE"])
    arguments = {entry[0] for entry in ast.literal_eval(constants["ARGUMENTS"])}
    scripts, installed = _console_scripts(), _installed_files()
    executables = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name in LAUNCH_KEYWORDS:
            assert {kw.arg for kw in node.keywords} <= LAUNCH_KEYWORDS[name], f"line {node.lineno}: {name}"
        if name == "Node":
            kw = {k.arg: k.value for k in node.keywords}
            owner = package if _dotted(kw["package"]) == "PACKAGE" else ast.literal_eval(kw["package"])
            executable = ast.literal_eval(kw["executable"])
            executables.append(executable)
            if owner == package:
                assert executable in scripts, f"{executable} is not a console script of setup.py"
            else:
                assert (owner, executable) in OTHER_EXECUTABLES
        elif name == "LaunchConfiguration":
            assert ast.literal_eval(node.args[0]) in arguments, f"line {node.lineno}: undeclared argument"
        elif name == "os.path.join" and _dotted(node.args[0]) == "share":
            relative = "/".join(ast.literal_eval(arg) for arg in node.args[1:])
            assert f"share/{package}/{relative}" in installed, relative
    assert set(executables) & set(NODES)
    for kind in ("simulation", "hardware"):
        if f'parameter_file("{kind}"' in source:
            assert f"share/{package}/config/{kind}.yaml" in installed


def _parameter_files() -> list[Path]:
    files = []
    for path in sorted((ROOT / "config").glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        if isinstance(document, dict) and any(isinstance(v, dict) and "ros__parameters" in v
                                              for v in document.values()):
            files.append(path)
    return files


def _flatten(parameters: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in parameters.items():
        flat.update(_flatten(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return flat


@pytest.fixture(scope="module")
def declarations() -> dict[str, dict[str, ParameterSpec]]:
    import importlib

    return {name: {spec.name: spec for spec in importlib.import_module(f"flexrobot_ros.nodes.{name}").PARAMETERS}
            for name in NODES}


def test_parameter_files_match_the_declarations(declarations):
    """Every shipped ROS 2 parameter file: top-level keys are '/**' or one of the five node names, each holding
    ros__parameters; every (flattened) parameter is declared by each node the section applies to (rclpy drops
    undeclared ones silently, so a typo would go unnoticed) with exactly the declared ROS 2 type (rcl types YAML
    statically: 1 is an integer and is refused for a double) and a valid value."""
    files = _parameter_files()
    assert {path.name for path in files} >= {"simulation.yaml", "hardware.yaml", "scompi_simulation.yaml"}
    checked = 0
    for path in files:
        for section, body in yaml.safe_load(path.read_text()).items():
            targets = NODES if section == "/**" else (section.strip("/"),)
            assert set(targets) <= set(NODES), f"{path.name}: section {section!r} names no flexrobot node"
            assert set(body) == {"ros__parameters"}, f"{path.name}: {section}"
            for name, value in _flatten(body["ros__parameters"]).items():
                for node in targets:
                    spec = declarations[node].get(name)
                    assert spec is not None, f"{path.name}: {node} declares no parameter {name!r}"
                    assert infer_type(value, name) == spec.type, f"{path.name}: {node}.{name} = {value!r}"
                    validate_parameter(spec, value, f"{path.name} [{section}]")
                    checked += 1
    assert checked > 40


# ------------------------------------------------------------------------------------------------------------------
# On rclpy (ROS 2 installed): the same node API, run
# ------------------------------------------------------------------------------------------------------------------

@pytest.fixture
def rclpy_node(monkeypatch):
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "rclpy")
    nodes = []

    def make(name, **kwargs):
        nodes.append(create_node(name, **kwargs))
        return nodes[-1]

    yield make
    from flexrobot_ros.runtime import rclpy_backend

    for node in nodes:
        node.destroy()
    rclpy_backend.rclpy.try_shutdown()


@needs_rclpy
def test_rclpy_backend_runs_the_same_node_api(rclpy_node):
    from flexrobot_ros.runtime import rclpy_backend

    node = rclpy_node("flexrobot_rclpy_check", namespace="/check", parameters={"rate_hz": 500.0, "gains": []})
    values = node.declare_parameters([
        ParameterSpec("rate_hz", 100.0, "rate [Hz]", range=(1.0, 1000.0)),
        ParameterSpec("method", "sdrnea", "inverse dynamics", choices=("sdrnea", "ejnea")),
        ParameterSpec("gains", [1.0], "gains", type="double_array"),
        ParameterSpec("joints", [], "joints", type="string_array"),
    ])
    assert values == {"rate_hz": 500.0, "method": "sdrnea", "gains": (), "joints": ()}
    assert node.resolve_name("~/reset") == "/check/flexrobot_rclpy_check/reset"
    string = node.types.std_msgs.msg.String
    received = []
    publisher = node.create_publisher(string, "latched", QOS_LATCHED)
    publisher.publish(string(data="hello"))
    node.create_subscription(string, "latched", lambda m: received.append(m.data), QOS_LATCHED)

    def on_trigger(request, response):
        response.success, response.message = True, "done"
        return response

    trigger = node.types.std_srvs.srv.Trigger
    node.create_service(trigger, "~/go", on_trigger)

    def reject(msg):
        raise RuntimeLayerError(f"bad input {msg.data!r}")

    node.create_subscription(string, "bad", reject)
    node.create_publisher(string, "bad").publish(string(data="x"))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not received or not node.input_errors):
        rclpy_backend.spin(node, 0.1)
    assert received == ["hello"] and sum(node.input_errors.values()) == 1
    client = node.create_client(trigger, "~/go")
    assert client.wait_for_service(timeout_sec=5.0)
    assert node.call(client, trigger.Request(), 5.0).message == "done"


@needs_rclpy
def test_rclpy_subscriptions_take_what_waits_in_batches_and_timers_still_run(rclpy_node):
    """Two subscriptions each 600 samples behind (keep-all), a callback of 1 ms per sample, a 50 ms timer: every
    sample arrives once and in order, and the callback rclpy's executor hands one sample to handles those waiting
    behind it (at most TAKE_BATCH) before the executor waits again. rclpy's executor looks at its timers at each
    wait: taking one sample per wait, the due timer would run after at most about 50 samples (one period of 1 ms
    callbacks, whatever the machine's load: a loaded machine only makes the timer due sooner); in batches, runs of
    more than 100 samples pass between ticks, and never more than one batch of each subscription."""
    from flexrobot_ros.runtime import rclpy_backend

    node = rclpy_node("flexrobot_rclpy_backlog")
    events: list[tuple[str, float]] = []
    qos = QOS_STREAM.keeping_all()
    number = node.types.std_msgs.msg.Float64

    def on_sample(topic):
        def callback(msg):
            time.sleep(0.001)
            events.append((topic, msg.data))
        return callback

    publishers = []
    for topic in ("backlog_a", "backlog_b"):
        node.create_subscription(number, topic, on_sample(topic), qos)
        publishers.append(node.create_publisher(number, topic, qos))
    deadline = time.monotonic() + 10
    while any(p.get_subscription_count() < 1 for p in publishers):
        assert time.monotonic() < deadline, "subscriptions not matched within 10 s"
        time.sleep(0.01)
    for publisher in publishers:
        for i in range(600):
            publisher.publish(number(data=float(i)))
    time.sleep(0.5)  # delivered meanwhile: both subscriptions are behind when the spinning starts
    node.create_wall_timer(0.05, lambda: events.append(("tick", 0.0)))
    deadline = time.monotonic() + 60
    while sum(topic != "tick" for topic, _ in events) < 1200 and time.monotonic() < deadline:
        rclpy_backend.spin(node, 0.05)
    for topic in ("backlog_a", "backlog_b"):
        assert [value for name, value in events if name == topic] == [float(i) for i in range(600)], topic
    between_ticks = [len(run) for run in "".join("t" if topic == "tick" else "s" for topic, _ in events).split("t")]
    assert 100 < max(between_ticks) <= 2 * rclpy_backend.TAKE_BATCH, between_ticks


@needs_rclpy
def test_rclpy_logs_warnings_and_errors_from_one_call_site(rclpy_node):
    """log_once warns and errs from one line of node.py; rclpy would raise ValueError without RosLogger."""
    node = rclpy_node("flexrobot_rclpy_logging")
    assert node.log_once("first", "a warning") and node.log_once("second", "an error", level="error")
    node.report_input_error("third", "counted")
    assert node.input_errors["third"] == 1


@needs_rclpy
def test_rclpy_call_inside_a_callback_is_refused_not_deadlocked(rclpy_node):
    """A blocking call from a callback of a single-threaded executor would wait for a response only that executor
    can deliver: node.call refuses it (the guard counts the RuntimeLayerError) and the node keeps spinning."""
    from flexrobot_ros.runtime import rclpy_backend

    node = rclpy_node("flexrobot_rclpy_nested")
    trigger = node.types.std_srvs.srv.Trigger
    node.create_service(trigger, "~/go", lambda request, response: response)
    client = node.create_client(trigger, "~/go")
    node.create_timer(0.05, lambda: node.call(client, trigger.Request(), 1.0))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not node.input_errors:
        rclpy_backend.spin(node, 0.1)
    (cause,) = node.input_errors
    assert "inside a callback" in cause


@needs_rclpy
def test_rclpy_refuses_an_integer_for_a_double_parameter(rclpy_node, tmp_path):
    """A parameter file with rate_hz: 1 (an integer) for a double parameter: rclpy raises
    InvalidParameterTypeException, the runtime a RuntimeLayerError naming the parameter (as on the DDS back end)."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    rate_hz: 1\n")
    node = rclpy_node("flexrobot_rclpy_types", parameter_files=[str(params)])
    with pytest.raises(RuntimeLayerError, match="'rate_hz'.*write 1.0"):
        node.declare_parameters([ParameterSpec("rate_hz", 100.0, "rate [Hz]")])


@needs_rclpy
def test_rclpy_descriptors_carry_types_ranges_and_descriptions():
    from rcl_interfaces.msg import ParameterType
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    from flexrobot_ros.runtime.rclpy_backend import parameter_descriptor, qos_profile

    descriptor = parameter_descriptor(ParameterSpec("rate_hz", 100.0, "rate [Hz]", range=(1.0, 1000.0)))
    assert descriptor.type == ParameterType.PARAMETER_DOUBLE and descriptor.description == "rate [Hz]"
    assert (descriptor.floating_point_range[0].from_value, descriptor.floating_point_range[0].to_value) == \
        (1.0, 1000.0)
    order = parameter_descriptor(ParameterSpec("order", 20, "model order", range=(10, 100), step=10))
    assert (order.integer_range[0].from_value, order.integer_range[0].step) == (10, 10)
    gains = parameter_descriptor(ParameterSpec("kp", [1.0], "gains", range=(0.0, 1e9)))
    assert not gains.floating_point_range and "each element in [0.0, 1000000000.0]" in gains.additional_constraints
    latched = qos_profile(QOS_LATCHED)
    assert latched.durability == DurabilityPolicy.TRANSIENT_LOCAL and latched.depth == 1
    assert latched.reliability == ReliabilityPolicy.RELIABLE
