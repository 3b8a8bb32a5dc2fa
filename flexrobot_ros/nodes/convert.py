"""Message <-> array conversion, input checks and diagnostics shared by the four nodes (both back ends).

Input checks raise :class:`InputError`, whose ``cause`` is a short stable reason ("joint names", "length",
"non-finite", "out-of-order stamp", ...): a node wraps a callback body in :func:`reporting`, which logs each cause
once per topic, counts every occurrence (``node.input_errors``) and lets the node carry on. Builders take the
back end's ``types`` namespace so they produce rclpy messages under ROS 2 and generated ones standalone.
Arrays are float64 numpy arrays in SI units; joint arrays are in the robot's (pinocchio) joint order.
"""
from __future__ import annotations

import array
import contextlib
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import FlexrobotError, RuntimeLayerError
from flexrobot_ros.runtime.messages import as_array, float_sequence, multiarray, time_seconds


class InputError(RuntimeLayerError):
    """A received message cannot be used. ``cause`` names the kind of problem (stable, for log-once and counts)."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


@contextlib.contextmanager
def reporting(node: Any, topic: str) -> Iterator[None]:
    """Run a callback body; a FlexrobotError is logged once per (topic, cause), counted, and swallowed.
    ``topic`` is resolved (namespace, remapping) for the messages and causes."""
    topic = node.resolve_name(topic)
    try:
        yield
    except InputError as error:
        node.report_input_error(f"{topic}: {error.cause}", f"{topic}: {error}")
    except FlexrobotError as error:
        node.report_input_error(f"{topic}: {type(error).__name__}", f"{topic}: {error}")


def answer(response: Any, action: Any) -> Any:
    """Fill a std_srvs Trigger/SetBool ``response`` from ``action()`` (its return value is the message); a
    FlexrobotError becomes ``success = False`` with the error as the message."""
    try:
        response.success, response.message = True, str(action())
    except FlexrobotError as error:
        response.success, response.message = False, str(error)
    return response


class Counted:
    """A publisher that counts the messages it sent (``count``), for the diagnostics and bag checks."""

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher
        self.count = 0

    def publish(self, msg: Any) -> None:
        self.publisher.publish(msg)
        self.count += 1


def optional_publisher(node: Any, typename: str, topic: str, qos: Any, off: dict[str, str]) -> Counted | None:
    """A counted publisher of an optional output, or None where its message package is not installed (a minimal
    ROS 2, e.g. rclpy from PyPI without tf2_msgs or control_msgs): logged in one line naming the package and
    recorded in ``off`` ({resolved topic: why}), which the node's /diagnostics shows; the node runs on without it."""
    try:
        message_type = node.types.get(typename)
    except RuntimeLayerError:
        package = typename.split("/", 1)[0]
        topic = node.resolve_name(topic)
        off[topic] = f"{package} not installed"
        node.logger.warning(f"{topic} off: its type {typename} needs the ROS 2 package {package}, which is not "
                            f"installed (ros-<distro>-{package.replace('_', '-')})")
        return None
    return Counted(node.create_publisher(message_type, topic, qos))


# ----------------------------------------------------------------------------------------------------------------
# Reading messages
# ----------------------------------------------------------------------------------------------------------------

def joint_values(msg: Any, joints: Sequence[str], field: str = "position") -> np.ndarray:
    """Values of ``joints`` (in that order) from a JointState-like message's ``field``; extra joints are ignored.

    Raises:
        InputError: name/value counts differ ("length"), a joint is missing ("joint names"), a value is NaN or
            infinite ("non-finite").
    """
    names = list(msg.name)
    values = as_array(getattr(msg, field))
    if values.size != len(names):
        raise InputError("length", f"{len(names)} joint names but {values.size} {field} values")
    index = {name: i for i, name in enumerate(names)}
    missing = [joint for joint in joints if joint not in index]
    if missing:
        raise InputError("joint names", f"joints {missing} missing: the message names {names}, expected "
                                        f"{list(joints)}")
    selected = values[[index[joint] for joint in joints]]
    if not np.all(np.isfinite(selected)):
        raise InputError("non-finite", f"non-finite {field} {selected.tolist()} for joints {list(joints)}")
    return selected


def interface_values(msg: Any, joints: Sequence[str], interface: str) -> np.ndarray:
    """Values of the state interface ``interface`` (e.g. ``position``, ``motor_position``) of ``joints`` (in that
    order) from a ``control_msgs/DynamicJointState``: joints are mapped by name (any order; extra joints and
    interfaces are ignored).

    Raises:
        InputError: ``joint_names`` and ``interface_values`` counts differ, or a needed joint's ``interface_names``
            and ``values`` counts differ ("length"); a joint is missing ("joint names"); a joint lacks the interface
            ("interface names"); a value is NaN or infinite ("non-finite").
    """
    names, entries = list(msg.joint_names), list(msg.interface_values)
    if len(entries) != len(names):
        raise InputError("length", f"{len(names)} joint_names but {len(entries)} interface_values")
    index = {name: i for i, name in enumerate(names)}
    missing = [joint for joint in joints if joint not in index]
    if missing:
        raise InputError("joint names", f"joints {missing} missing: the message names {names}, expected "
                                        f"{list(joints)}")
    selected, lacking = np.empty(len(joints)), {}
    for k, joint in enumerate(joints):
        entry = entries[index[joint]]
        interfaces, values = list(entry.interface_names), as_array(entry.values)
        if values.size != len(interfaces):
            raise InputError("length", f"joint {joint}: {len(interfaces)} interface_names but {values.size} values")
        if interface in interfaces:
            selected[k] = values[interfaces.index(interface)]
        else:
            lacking[joint] = interfaces
    if lacking:
        raise InputError("interface names", f"state interface {interface!r} missing for joints {list(lacking)} "
                                            f"(they have {next(iter(lacking.values()))}); expected it for every "
                                            f"joint of {list(joints)}")
    if not np.all(np.isfinite(selected)):
        raise InputError("non-finite", f"non-finite {interface} {selected.tolist()} for joints {list(joints)}")
    return selected


#: A stamp more than this [s] before the previous one means the stream started over (its publisher restarted, a bag
#: replay or simulated time began again), as ROS's "jump back in time"; a smaller step back is an out-of-order message.
STREAM_RESTART_S = 1.0


def ordered_stamp(msg: Any, last: float | None, on_restart: Callable[[float, float], None] | None = None) -> float:
    """The header stamp of ``msg`` [s], checked to come strictly after ``last`` [s].

    With ``on_restart``, a stamp more than :data:`STREAM_RESTART_S` before ``last`` is taken as a new stream:
    ``on_restart(stamp, last)`` is called and the stamp is returned.

    Raises:
        InputError: the stamp is not later than the previous one ("out-of-order stamp").
    """
    stamp = time_seconds(msg.header.stamp)
    if last is not None and stamp <= last:
        if on_restart is not None and last - stamp > STREAM_RESTART_S:
            on_restart(stamp, last)
            return stamp
        raise InputError("out-of-order stamp", f"stamp {stamp:.9f} s is not after the previous {last:.9f} s; "
                                               "message dropped")
    return stamp


def vector(msg: Any, size: int) -> np.ndarray:
    """The ``data`` of a Float64MultiArray as ``size`` finite values.

    Raises:
        InputError: wrong number of values ("length") or NaN/inf ("non-finite").
    """
    values = as_array(msg.data)[int(msg.layout.data_offset):]
    if values.size != size:
        raise InputError("length", f"{values.size} values, expected {size} (one per joint)")
    if not np.all(np.isfinite(values)):
        raise InputError("non-finite", f"non-finite values {values.tolist()}")
    return values


def trajectory_arrays(msg: Any, joints: Sequence[str]) -> dict[str, np.ndarray]:
    """A JointTrajectory's points as arrays in ``joints`` order: ``t`` (points,) [s] from ``time_from_start`` and
    ``positions``, ``velocities``, ``accelerations``, ``effort`` (points, n), each None when every point leaves it
    empty.

    Raises:
        InputError: no points ("length"), missing joints ("joint names"), a field whose length is neither 0 nor
            the number of joints or is given for some points only ("length"), NaN/inf ("non-finite"), times not
            strictly increasing ("out-of-order stamp").
    """
    names = list(msg.joint_names)
    missing = [joint for joint in joints if joint not in names]
    if missing:
        raise InputError("joint names", f"joints {missing} missing: the trajectory names {names}, expected "
                                        f"{list(joints)}")
    if not msg.points:
        raise InputError("length", "the trajectory has no points")
    order = [names.index(joint) for joint in joints]
    t = np.array([time_seconds(point.time_from_start) for point in msg.points])
    if np.any(np.diff(t) <= 0):
        raise InputError("out-of-order stamp", f"time_from_start must increase strictly, got {t[:8].tolist()}...")
    arrays: dict[str, Any] = {"t": t}
    for field in ("positions", "velocities", "accelerations", "effort"):
        rows = [as_array(getattr(point, field)) for point in msg.points]
        sizes = {row.size for row in rows}
        if sizes == {0}:
            arrays[field] = None
            continue
        if sizes != {len(names)}:
            raise InputError("length", f"{field}: point lengths {sorted(sizes)}, expected {len(names)} for every "
                                       "point (or empty everywhere)")
        values = np.array(rows)[:, order]
        if not np.all(np.isfinite(values)):
            raise InputError("non-finite", f"{field}: non-finite values")
        arrays[field] = values
    return arrays


# ----------------------------------------------------------------------------------------------------------------
# Building messages
# ----------------------------------------------------------------------------------------------------------------

def joint_state(types: Any, stamp: Any, names: Sequence[str], position: np.ndarray,
                velocity: np.ndarray | None = None, effort: np.ndarray | None = None) -> Any:
    """``sensor_msgs/JointState`` with the given header stamp (``builtin_interfaces/Time``)."""
    msg = types.sensor_msgs.msg.JointState(name=list(names), position=float_sequence(position),
                                           velocity=float_sequence(() if velocity is None else velocity),
                                           effort=float_sequence(() if effort is None else effort))
    msg.header.stamp = stamp
    return msg


def dynamic_joint_state(types: Any, stamp: Any, names: Sequence[str], interfaces: Mapping[str, np.ndarray]) -> Any:
    """``control_msgs/DynamicJointState`` with the given header stamp: for each joint of ``names``, one
    ``InterfaceValue`` naming every interface of ``interfaces`` ({interface name: (joints,) values}, in that
    order) with that joint's values."""
    control = types.control_msgs.msg
    rows = np.column_stack([np.asarray(values, dtype=float) for values in interfaces.values()]).tolist()  # per joint
    labels = list(interfaces)
    msg = control.DynamicJointState(joint_names=list(names), interface_values=[
        control.InterfaceValue(interface_names=list(labels), values=array.array("d", row)) for row in rows])
    msg.header.stamp = stamp
    return msg


def joint_trajectory(types: Any, stamp: Any, names: Sequence[str], t: np.ndarray, positions: np.ndarray,
                     velocities: np.ndarray | None = None, accelerations: np.ndarray | None = None,
                     effort: np.ndarray | None = None) -> Any:
    """``trajectory_msgs/JointTrajectory``: one point per entry of ``t`` [s from ``stamp``]."""
    msgs = types.trajectory_msgs.msg
    duration = types.builtin_interfaces.msg.Duration
    points = []
    for k, seconds in enumerate(np.asarray(t, dtype=float)):
        nanoseconds = int(round(seconds * 1e9))
        point = msgs.JointTrajectoryPoint(positions=float_sequence(positions[k]))
        for field, values in (("velocities", velocities), ("accelerations", accelerations), ("effort", effort)):
            if values is not None:
                setattr(point, field, float_sequence(values[k]))
        point.time_from_start = duration(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)
        points.append(point)
    msg = msgs.JointTrajectory(joint_names=list(names), points=points)
    msg.header.stamp = stamp
    return msg


def float_array(types: Any, values: np.ndarray, label: str) -> Any:
    """``std_msgs/Float64MultiArray`` of a 1-D array with one labelled dimension."""
    return multiarray(types, np.asarray(values, dtype=float).ravel(), [label])


def mode_shapes_array(types: Any, shapes: np.ndarray, coordinates: Sequence[str]) -> Any:
    """``Float64MultiArray`` of complex mode shapes (modes, coordinates) as (modes, coordinates, 2) [re, im], with
    the dimension labels ``mode``, ``coordinate:<name>,<name>,...`` and ``part:re,im``."""
    shapes = np.asarray(shapes, dtype=complex).reshape(-1, len(coordinates))
    data = np.stack([shapes.real, shapes.imag], axis=-1)
    return multiarray(types, data, ["mode", "coordinate:" + ",".join(coordinates), "part:re,im"])


def tf_message(types: Any, stamp: Any, transforms: Sequence[Any]) -> Any:
    """``tf2_msgs/TFMessage`` of :class:`flexrobot_ros.kinematics.LinkTransform` entries."""
    geometry = types.geometry_msgs.msg
    entries = []
    for link in transforms:
        entry = geometry.TransformStamped(child_frame_id=link.child)
        entry.header.stamp, entry.header.frame_id = stamp, link.parent
        entry.transform.translation = geometry.Vector3(x=float(link.translation[0]), y=float(link.translation[1]),
                                                       z=float(link.translation[2]))
        entry.transform.rotation = geometry.Quaternion(x=float(link.rotation[0]), y=float(link.rotation[1]),
                                                       z=float(link.rotation[2]), w=float(link.rotation[3]))
        entries.append(entry)
    return types.tf2_msgs.msg.TFMessage(transforms=entries)


#: Colors of the mode-shape markers (RGB), cycled over the modes.
MODE_COLORS = ((0.89, 0.10, 0.11), (0.22, 0.49, 0.72), (0.30, 0.69, 0.29), (0.60, 0.31, 0.64), (1.0, 0.5, 0.0))


def mode_markers(types: Any, stamp: Any, frame: str, rest: np.ndarray, deformed: Sequence[np.ndarray],
                 labels: Sequence[str], width: float = 0.01) -> Any:
    """``visualization_msgs/MarkerArray``: the arm's skeleton at rest (grey line strip through ``rest`` (k, 3)
    [m]) and one colored line strip per mode through ``deformed[i]`` (k, 3), each with a text label at its tip;
    namespace ``rest`` and ``mode_<i+1>``, frame ``frame``."""
    viz, geometry, std = types.visualization_msgs.msg, types.geometry_msgs.msg, types.std_msgs.msg
    markers = []

    def marker(ns: str, kind: int, points: np.ndarray, rgb: Sequence[float], text: str = "") -> Any:
        item = viz.Marker(ns=ns, id=0, type=kind, action=viz.Marker.ADD, text=text)
        item.header.stamp, item.header.frame_id = stamp, frame
        item.pose.orientation.w = 1.0
        item.scale.x = item.scale.y = width
        item.scale.z = 4 * width
        item.color = std.ColorRGBA(r=float(rgb[0]), g=float(rgb[1]), b=float(rgb[2]), a=1.0)
        if kind == viz.Marker.TEXT_VIEW_FACING:
            item.pose.position = geometry.Point(x=float(points[0]), y=float(points[1]), z=float(points[2]) + 0.05)
        else:
            item.points = [geometry.Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
        return item

    markers.append(marker("rest", viz.Marker.LINE_STRIP, rest, (0.6, 0.6, 0.6)))
    for i, (points, label) in enumerate(zip(deformed, labels)):
        rgb = MODE_COLORS[i % len(MODE_COLORS)]
        markers.append(marker(f"mode_{i + 1}", viz.Marker.LINE_STRIP, points, rgb))
        text = marker(f"mode_{i + 1}", viz.Marker.TEXT_VIEW_FACING, points[-1], rgb, label)
        text.id = 1
        markers.append(text)
    return viz.MarkerArray(markers=markers)


def diagnostics(node: Any, name: str, level: str, message: str, values: Mapping[str, Any]) -> Any:
    """``diagnostic_msgs/DiagnosticArray`` with one status ``<node>: <name>``: ``level`` 'ok' | 'warn' | 'error',
    ``values`` as key/value strings, followed by ``node.input_errors`` (``input errors: <cause>`` = count).
    Input errors raise an 'ok' level to 'warn'."""
    msgs = node.types.diagnostic_msgs.msg
    status_type = msgs.DiagnosticStatus
    errors = dict(node.input_errors)
    if errors and level == "ok":
        level, message = "warn", f"{message}; {sum(errors.values())} bad input messages dropped"
    status = status_type(level={"ok": status_type.OK, "warn": status_type.WARN, "error": status_type.ERROR}[level],
                         name=f"{node.fully_qualified_name}: {name}", message=message,
                         hardware_id=node.fully_qualified_name)
    entries = {**{key: _text(value) for key, value in values.items()},
               **{f"input errors: {cause}": str(count) for cause, count in sorted(errors.items())}}
    status.values = [msgs.KeyValue(key=key, value=value) for key, value in entries.items()]
    array = msgs.DiagnosticArray(status=[status])
    array.header.stamp = node.stamp()
    return array


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_text(v) for v in np.asarray(value).tolist()) + "]"
    return str(value)


__all__ = ["Counted", "InputError", "MODE_COLORS", "answer", "diagnostics", "dynamic_joint_state", "float_array",
           "interface_values", "joint_state", "joint_trajectory", "joint_values", "mode_markers", "mode_shapes_array",
           "optional_publisher", "ordered_stamp", "reporting", "tf_message", "trajectory_arrays", "vector"]
