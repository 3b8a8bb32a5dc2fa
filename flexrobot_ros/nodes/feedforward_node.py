"""feedforward_node: desired link trajectory in, motor reference trajectory and torques out.

Subscribes ``desired_trajectory`` (trajectory_msgs/JointTrajectory of the link joints: positions, optional
velocities and accelerations at each waypoint). The waypoints are joined by the C^4 spline of
:func:`flexrobot_ros.dynamics.trajectory_from_joint_trajectory` and fed to :func:`flexrobot_ros.dynamics.feedforward`
(``method``: ``sdrnea`` compiled code or ``ejnea``) sampled at ``output_rate_hz``.

Publishes ``motor_trajectory`` (JointTrajectory with the input's ``header.stamp`` (now when zero) and
``time_from_start``: positions = motor reference q_m [rad], velocities qd_m, accelerations qdd_m, effort = motor
torque tau_m [N m]; for the simulator node or a ros2_control joint trajectory controller with an effort
feedforward), and, while the trajectory runs, the streams ``motor_torque`` (sensor_msgs/JointState: position q_m,
velocity qd_m, effort tau_m) and ``link_torque`` (JointState: position q, velocity qd, effort = link torque tau
[N m | N]) stamped ``header.stamp + t``; ``diagnostics``.

Parameters are live (method, rate and limit check apply to the next trajectory, the torque streams follow
``output_rate_hz`` and ``stream_torques`` now; :meth:`FeedforwardNode._prepare`) except the model, ``robot`` and
``tool`` (read-only).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from flexrobot_ros.dynamics import compiled_feedforward, feedforward, trajectory_from_joint_trajectory
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import (Counted, diagnostics, joint_state, joint_trajectory, reporting,
                                         trajectory_arrays)
from flexrobot_ros.nodes.live_parameters import LiveParameters, LiveTimer, checked
from flexrobot_ros.runtime import ParameterSpec, run_node
from flexrobot_ros.runtime.messages import time_seconds

PARAMETERS = (
    ParameterSpec("robot", "scompi", "shipped robot name or path of a flexibility YAML", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    ParameterSpec("method", "sdrnea", "inverse dynamics: 'sdrnea' (generated C code), 'ejnea' (numeric) or "
                  "'dae' (robots with extra elasticities: BDF or optimization)",
                  choices=("sdrnea", "ejnea", "dae")),
    ParameterSpec("output_rate_hz", 250.0, "sample rate of motor_trajectory points and the torque streams [Hz]",
                  range=(1.0, 10000.0)),
    ParameterSpec("stream_torques", True, "publish motor_torque and link_torque while a trajectory runs"),
    ParameterSpec("check_limits", True, "refuse trajectories that leave the URDF joint limits"),
)


class FeedforwardNode:
    """The feedforward node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.robot = load_robot(p["robot"], tool=p["tool"])
        self._check(p)
        self.result, self.start, self.streamed = None, 0.0, 0
        self.received, self.compute_s = 0, 0.0
        types = node.types
        self.motor_trajectory = Counted(node.create_publisher(types.trajectory_msgs.msg.JointTrajectory,
                                                              "motor_trajectory"))
        self.motor_torque = Counted(node.create_publisher(types.sensor_msgs.msg.JointState, "motor_torque"))
        self.link_torque = Counted(node.create_publisher(types.sensor_msgs.msg.JointState, "link_torque"))
        self.diagnostics = node.create_publisher(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics")
        node.create_subscription(types.trajectory_msgs.msg.JointTrajectory, "desired_trajectory",
                                 live.locked(self.on_desired))
        self.stream = LiveTimer(node, self._stream_period(p), live.locked(self.on_stream), running=False)
        node.create_timer(1.0, live.locked(self.on_diagnostics))
        live.on_change(self._prepare)
        node.logger.info(f"feedforward for {self.robot.name} ({p['method']}) at {p['output_rate_hz']:g} Hz")

    def on_desired(self, msg: Any) -> None:
        with reporting(self.node, "desired_trajectory"):
            self.received += 1
            started = time.perf_counter()
            trajectory_arrays(msg, self.robot.joint_names)  # names, lengths, finiteness, time order: one cause each
            path = trajectory_from_joint_trajectory(msg, self.robot.joint_names)
            result = feedforward(self.robot, path, self.p["method"], rate_hz=self.p["output_rate_hz"],
                                 check_limits=self.p["check_limits"])
            self.compute_s = time.perf_counter() - started
            stamp = msg.header.stamp if time_seconds(msg.header.stamp) else self.node.stamp()
            self.motor_trajectory.publish(joint_trajectory(self.node.types, stamp, self.robot.joint_names, result.t,
                                                           result.q_m, result.qd_m, result.qdd_m, result.tau_m))
            self.result, self.start, self.streamed = result, time_seconds(stamp), 0
            self.stream.resume()  # the stream timer runs only while a trajectory plays (idle CPU, issue 23)

    def on_stream(self) -> None:
        result = self.result
        if result is None:
            return
        due = int(np.searchsorted(result.t, self.node.now() - self.start, side="right"))
        types, names = self.node.types, self.robot.joint_names
        for k in range(self.streamed, due):
            stamp = self.node.stamp(self.start + result.t[k])
            self.motor_torque.publish(joint_state(types, stamp, names, result.q_m[k], result.qd_m[k], result.tau_m[k]))
            self.link_torque.publish(joint_state(types, stamp, names, result.q[k], result.qd[k], result.tau[k]))
        self.streamed = max(self.streamed, due)
        if self.streamed >= len(result.t):
            self.result = None
            self.stream.pause()

    def _check(self, p: Any) -> None:
        """Make the method usable: SDRNEA's code is generated and compiled now (once per robot, cached on disk), not
        at the first trajectory; at start-up and when ``method`` changes alike.

        Raises:
            RuntimeLayerError: the code cannot be generated or compiled.
        """
        if p["method"] == "sdrnea":
            checked("method", compiled_feedforward, self.robot)

    @staticmethod
    def _stream_period(p: Any) -> float | None:
        return 1.0 / p["output_rate_hz"] if p["stream_torques"] else None

    def _prepare(self, values: Any, changed: frozenset) -> Any:
        """Check a change and return what installs it (see :mod:`.live_parameters`): the next trajectory uses the
        new method, rate and limit check; the torque streams follow the new rate now, or stop."""
        if "method" in changed:
            self._check(values)

        def commit() -> None:
            self.stream.set_period(self._stream_period(values))
            if not values["stream_torques"]:
                self.result = None  # the stream in progress ends
                self.stream.pause()
        return commit

    def on_diagnostics(self) -> None:
        self.diagnostics.publish(diagnostics(self.node, "feedforward", "ok", f"{self.received} trajectories", {
            "method": self.p["method"], "trajectories received": self.received,
            "last computation [s]": self.compute_s, "streaming": self.result is not None,
            "published motor_trajectory": self.motor_trajectory.count,
            "published motor_torque": self.motor_torque.count, "published link_torque": self.link_torque.count,
            "motor_trajectory subscribers": self.motor_trajectory.publisher.get_subscription_count()}))


def main(argv: list[str] | None = None) -> int:
    """Console script ``feedforward_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(FeedforwardNode, "feedforward_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
