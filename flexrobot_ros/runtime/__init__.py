"""Runtime layer: the same node code on rclpy (inside ROS 2) and on a standalone DDS runtime (anywhere).

A flexrobot node is a plain class whose constructor receives a :class:`Node` and sets everything up with it;
``main()`` hands the class to :func:`run_node`. Nothing in the node file imports rclpy or cyclonedds::

    from flexrobot_ros.runtime import ParameterSpec, QOS_LATCHED, run_node
    from flexrobot_ros.runtime.messages import as_array, float_sequence

    class EchoNode:
        def __init__(self, node):
            self.node = node
            p = node.declare_parameters([
                ParameterSpec("gain", 2.0, "output / input [-]", range=(0.0, 10.0)),
                ParameterSpec("frame", "base_link", "frame_id of the output"),
            ])
            self.gain, self.frame = p["gain"], p["frame"]
            self.JointState = node.types.sensor_msgs.msg.JointState
            self.pub = node.create_publisher(self.JointState, "scaled_states")
            node.create_subscription(self.JointState, "joint_states", self.on_states)
            self.info = node.create_publisher(node.types.std_msgs.msg.String, "~/info", QOS_LATCHED)
            self.info.publish(node.types.std_msgs.msg.String(data=f"gain {self.gain}"))  # late joiners get it
            node.create_service(node.types.std_srvs.srv.Trigger, "~/reset", self.on_reset)

        def on_states(self, msg):
            q = as_array(msg.position)            # float64 numpy array on both back ends
            out = self.JointState(name=list(msg.name), position=float_sequence(self.gain * q))
            out.header.stamp, out.header.frame_id = self.node.stamp(), self.frame
            self.pub.publish(out)

        def on_reset(self, request, response):
            response.success, response.message = True, "reset"
            return response

    def main(argv=None):
        return run_node(EchoNode, "echo_node", argv)

Choosing the back end: :func:`backend_name` is ``$FLEXROBOT_RUNTIME`` (``rclpy`` or ``dds``) when set, otherwise
``rclpy`` if it can be imported, else ``dds``.

The :class:`Node` interface (both back ends; entity methods have rclpy's names):

- ``node.types``: message/service classes (``node.types.std_srvs.srv.Trigger``, ``node.types.get("pkg/msg/N")``),
  rclpy's on rclpy and generated from rosbags' ROS 2 definitions on dds (see :mod:`.messages`).
- ``declare_parameters([ParameterSpec, ...]) -> {name: value}``: typed, ranged, described declarations; values
  from ROS 2 parameter files (``--params-file``) and ``-p`` overrides, validated (see :mod:`.params`).
- ``create_publisher(type, topic, qos)`` -> ``.publish(msg)``, ``.get_subscription_count()``;
  ``create_subscription(type, topic, callback, qos)``; ``create_service(type, name, callback(req, resp) -> resp)``;
  ``create_client(type, name)`` -> ``.wait_for_service(timeout_sec)``, ``.call_async(req)``;
  ``call(client, request, timeout_sec)`` blocking, from outside callbacks (a client whose server is on the other DDS
  vendor, rclpy on Fast DDS against the standalone runtime on Cyclone DDS, fails at once: :mod:`.vendors`);
  ``create_timer(period_sec, callback)``
  (ROS time: simulated with ``use_sim_time``), ``create_wall_timer(period_sec, callback)`` (steady clock).
  Names are ROS names: relative (``joint_states``) resolve in the namespace, ``~/reset`` is private, ``-r a:=b``
  remaps. QoS: :data:`QOS_DEFAULT` (reliable, volatile, keep-last 10, rclpy's default), :data:`QOS_LATCHED`
  (transient-local, depth 1), :data:`QOS_SENSOR_DATA`, :data:`QOS_STREAM` (1 kHz state streams: keep-last
  10,000), or any :class:`QosProfile` (``.keeping_all()`` for a subscription that must not lose a sample).
- ``wait_for_message(type, topic, timeout_sec, qos=QOS_LATCHED)``: the first message on a topic within the timeout
  (None without one), for start-up: the node's other callbacks run meanwhile, a stop signal ends it
  (:class:`StopRequested`); ``destroy_subscription(subscription)``; ``spin_once(timeout_sec)`` for code that
  interleaves its work with the node's callbacks; ``request_stop()`` (``spin`` returns, a start-up wait ends) and
  ``stop_requested``.
- ``now()`` [s], ``stamp()`` (``builtin_interfaces/Time``): ROS time, the system clock or, when the node's
  ``use_sim_time`` parameter is true, the newest ``/clock`` (zero before the first); every node declares
  ``use_sim_time`` on both back ends (rclpy itself, the DDS back end in :mod:`.time_source`).
  ``logger`` (``.info/.warning/.error``), ``log_once(cause, message)``.
- Callbacks are guarded: exceptions are logged once per cause and counted in ``node.input_errors``
  ({cause: count}) instead of stopping the node; samples that do not decode are dropped and counted the same way.

:func:`run_node` is ``main()``: it reads ``--ros-args`` (``-p``, ``--params-file``, ``-r``, ``__ns``, ``__node``,
``--log-level``), builds the node and the application object, spins until SIGINT/SIGTERM or the death of the
process that started it (:mod:`.parent_watch`: a killed launcher leaves no node behind), and in ``finally``
calls the application's ``close()`` (if it has one), destroys the node and shuts the back end down. It returns 0,
or 2 after printing a :class:`~flexrobot_ros.errors.FlexrobotError` raised during start-up (bad parameters, ...).
A start-up that waits for a message (:meth:`Node.wait_for_message`: the URDF on ``robot_description``) ends at a
stop signal with :class:`StopRequested`, and ``run_node`` then returns 0.

Other modules: :mod:`.bags` (rosbag2 record/play/info/read with rosbags), :mod:`.processes` (start node processes
with parameter files, stop them cleanly), :mod:`.dds_backend` (wire conventions), :mod:`.rclpy_backend`,
:mod:`.vendors` (which DDS implementation an endpoint is on: topics cross, services do not).

May import: errors and cache only (transport, not physics); the nodes and commands build on it.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any, Callable, Sequence

from flexrobot_ros.errors import FlexrobotError, RuntimeLayerError
from flexrobot_ros.runtime.messages import MessageTypes, dds_message_types, rclpy_message_types
from flexrobot_ros.runtime.names import Remapping, parse_ros_arguments
from flexrobot_ros.runtime.node import Node, StopRequested
from flexrobot_ros.runtime.params import ParameterSpec
from flexrobot_ros.runtime.parent_watch import ParentWatch
from flexrobot_ros.runtime.qos import QOS_DEFAULT, QOS_LATCHED, QOS_SENSOR_DATA, QOS_SERVICES, QOS_STREAM, QosProfile

__all__ = [
    "Node", "ParameterSpec", "QosProfile", "QOS_DEFAULT", "QOS_LATCHED", "QOS_SENSOR_DATA", "QOS_SERVICES", "QOS_STREAM",
    "Remapping", "StopRequested", "backend_name", "create_node", "message_types", "run_node", "shutdown", "spin",
]

BACKENDS = ("rclpy", "dds")


def backend_name() -> str:
    """``$FLEXROBOT_RUNTIME`` if set, else ``rclpy`` when importable, else ``dds``.

    Raises:
        RuntimeLayerError: ``FLEXROBOT_RUNTIME`` names no back end, or asks for rclpy where it is not installed.
    """
    choice = os.environ.get("FLEXROBOT_RUNTIME", "").strip().lower()
    available = importlib.util.find_spec("rclpy") is not None
    if not choice:
        return "rclpy" if available else "dds"
    if choice not in BACKENDS:
        raise RuntimeLayerError(f"FLEXROBOT_RUNTIME={choice!r}: expected one of {BACKENDS}")
    if choice == "rclpy" and not available:
        raise RuntimeLayerError("FLEXROBOT_RUNTIME=rclpy but rclpy is not importable (source a ROS 2 setup.bash)")
    return choice


def message_types(backend: str | None = None) -> MessageTypes:
    """The ``types`` namespace of a back end (default :func:`backend_name`), e.g. for code without a node."""
    return rclpy_message_types() if (backend or backend_name()) == "rclpy" else dds_message_types()


def create_node(name: str, *, namespace: str | None = None, parameter_files: Sequence[str] = (),
                parameters: dict[str, Any] | None = None, remappings: Sequence[Remapping] = (),
                argv: Sequence[str] | None = None, backend: str | None = None) -> Node:
    """A node on the chosen back end.

    Args:
        name: node name (``__node:=`` in ``argv`` overrides it).
        namespace: node namespace (``__ns:=`` in ``argv`` overrides it).
        parameter_files: ROS 2 parameter files, applied in order.
        parameters: parameter overrides applied after the files.
        remappings: topic/service remapping rules.
        argv: a command line whose ``--ros-args`` sections add to the above (dds back end; rclpy reads them
            from ``rclpy.init``).
        backend: ``rclpy`` or ``dds``; default :func:`backend_name`.
    """
    backend = backend or backend_name()
    if backend == "rclpy":
        from flexrobot_ros.runtime import rclpy_backend

        rclpy_backend.init(argv)
        return rclpy_backend.RclpyNode(name, namespace=namespace, parameter_files=parameter_files,
                                       parameter_overrides=parameters, remappings=remappings)
    from flexrobot_ros.runtime import dds_backend

    ros = parse_ros_arguments(argv or [])
    return dds_backend.DdsNode(
        ros.node_name or name, namespace=ros.namespace or namespace,
        parameter_files=[*parameter_files, *ros.parameter_files],
        parameter_overrides={**(parameters or {}), **ros.parameters},
        remappings=[*ros.remappings, *remappings], log_level=ros.log_level)


def spin(node: Node, duration_sec: float | None = None) -> None:
    """Run the node's callbacks until shutdown (or for ``duration_sec`` seconds)."""
    if node.backend == "rclpy":
        from flexrobot_ros.runtime import rclpy_backend

        rclpy_backend.spin(node, duration_sec)  # type: ignore[arg-type]
    else:
        node.spin(duration_sec)  # type: ignore[attr-defined]


def shutdown(backend: str | None = None) -> None:
    """Shut the back end down (rclpy context, or the process's DDS participant)."""
    if (backend or backend_name()) == "rclpy":
        import rclpy

        rclpy.try_shutdown()
    else:
        from flexrobot_ros.runtime import dds_backend

        dds_backend.shutdown()


def run_node(factory: Callable[[Node], Any], name: str, argv: Sequence[str] | None = None) -> int:
    """``main()`` of a node: ``factory(node)`` builds the application object, then spin until SIGINT/SIGTERM or
    the death of the parent process (the launcher).

    Returns:
        0 after a clean shutdown (also when SIGINT arrives during start-up), 2 when start-up failed with a
        FlexrobotError (printed on stderr).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        backend = backend_name()
    except FlexrobotError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    if backend == "rclpy":
        from flexrobot_ros.runtime import rclpy_backend

        return rclpy_backend.run(factory, name, argv)
    from flexrobot_ros.runtime import dds_backend

    parent = ParentWatch()
    node, app, restore = None, None, None
    try:
        node = create_node(name, argv=argv, backend="dds")
        restore = dds_backend.install_stop_signals(node)  # type: ignore[arg-type]
        app = factory(node)
        if node.spin(parent=parent) == "parent":  # type: ignore[attr-defined]
            node.logger.warning(f"stopping: {parent.reason}")
    except KeyboardInterrupt:  # SIGINT before the stop handlers were installed: a clean stop during start-up
        pass
    except StopRequested as stopped:  # SIGINT/SIGTERM while start-up waited (for robot_description)
        node.logger.info(f"stopping: {stopped}")  # type: ignore[union-attr]
    except FlexrobotError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    finally:
        if app is not None and hasattr(app, "close"):
            app.close()
        if node is not None:
            node.destroy()
        if restore is not None:
            restore()
        dds_backend.shutdown()
    return 0
