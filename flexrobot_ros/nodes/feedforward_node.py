"""feedforward_node: desired trajectory in, motor reference trajectory, torques and predicted deformation out.

Subscribes ``desired_trajectory`` (trajectory_msgs/JointTrajectory: positions, optional velocities and
accelerations at each waypoint). The waypoints are joined by the C^4 spline of
:func:`flexrobot_ros.dynamics.trajectory_from_joint_trajectory` and inverted sampled at ``output_rate_hz``, for
every robot the core inverts (robots with extra elasticities and flexible links or rigid joints, mixed4 and
moberg5_flexlink, by ``prescribed``: their other methods are refused at start-up naming ``method``). ``target_space`` says what the waypoints are:

- ``joint``: the link joints (``joint_names`` the robot's), through :func:`flexrobot_ros.dynamics.feedforward`, the
  entry of ``flexrobot feedforward`` (``method``: ``auto`` = ``sdrnea`` for elastic joints on rigid links and
  ``prescribed`` for robots with flexible links or rigid joints, as the command line; or ``sdrnea``, ``ejnea``,
  ``dae``, ``prescribed``, ``rigid``).
- ``tool``: the tool point (``joint_names`` the tool-point coordinates ``x``, ``y``, ``z`` of the robot's
  ``tool_frame`` origin in the base frame [m]: the plane's two for a planar arm with 2 actuators, all three for 3),
  joined by the same spline into a :class:`~flexrobot_ros.dynamics.dae.reference.ToolTrajectory` and inverted by
  :func:`flexrobot_ros.dynamics.tool_feedforward` (``method`` ``auto`` or ``dae``), the tool-space entry of
  :func:`flexrobot_ros.dynamics.feedforward` that ``flexrobot feedforward --line`` runs: seed 002's inverse DAE on
  elastic joints with rigid links, the general model's tool-space DAE (solver chosen from the zeros of the tool
  output; pre-actuation before a non-minimum-phase motion) on robots with flexible links or rigid joints (flexarm2),
  from rest at the start with the links near ``tool_space.start_joints`` (the elbow). The solver, why it was chosen
  and the unstable zeros [rad/s] are logged per trajectory and reported in the diagnostics. Other methods, robots
  without 2 (planar) or 3 (spatial) actuators (scompi; the Canadarm, a planar arm with 3) are refused when the
  parameters are set, naming the parameter (:func:`flexrobot_ros.dynamics.check_tool_space`).

Publishes ``motor_trajectory`` (JointTrajectory with the input's ``header.stamp`` (now when zero) and
``time_from_start``: positions = motor reference q_m [rad], velocities qd_m, accelerations qdd_m, effort = motor
torque tau_m [N m]; for the simulator node or a ros2_control joint trajectory controller with an effort
feedforward), and, while the trajectory runs, the streams ``motor_torque`` (sensor_msgs/JointState: position q_m,
velocity qd_m, effort tau_m) and ``link_torque`` (JointState: position q, velocity qd, effort = link torque tau
[N m | N]) stamped ``header.stamp + t``, and ``predicted_deflections`` (JointState, same stamps: ``name`` the
deformation coordinates, ``position`` their values; :func:`flexrobot_ros.dynamics.predicted_deformation`):
``joint_deflection.<joint>`` = q_m - W q [rad | m] of each elastic joint, ``eta.<k>`` the flexible links' elastic
coordinates (method ``prescribed``), ``deflection.<link>.y`` / ``.z`` their predicted tip deflections [m],
``q_e.<joint>`` the non-actuated elastic joints [rad | m] (method ``prescribed`` on robots with extra elasticities;
in tool space on robots with flexible links: ``eta.<k>`` and the tip deflections of the general model's solution);
``diagnostics``.

For ros2_control (``ros2_control.output``): ``joint_trajectory`` publishes the same points as a JointTrajectory on
``<ros2_control.controller>/joint_trajectory`` (the topic of a joint_trajectory_controller): positions = motor
reference q_m [rad] or link reference q [rad | m] (``ros2_control.positions``), velocities, accelerations, effort =
the motor torque the drive needs [N m] (``drive_compensates``: tau_m, or tau_m - W^-1 g(q) for a drive that adds
gravity itself; :func:`flexrobot_ros.dynamics.drive_torque`); ``commands`` streams that torque as a
std_msgs/Float64MultiArray [N m] on ``<ros2_control.controller>/commands`` (a forward_command_controller on the
``effort`` interface; layout label ``joint:<names>``) at ``output_rate_hz`` while the trajectory runs. Joint order:
``ros2_control.joints`` (empty: the robot's). The diagnostics report the error of linear interpolation between the
points [% of the peak torque] (:func:`flexrobot_ros.dynamics.interpolation_error`), and a warning names the rate
that keeps it under 1 %.

``shaper`` (and ``shaper_frequency_error``) shapes each joint-space trajectory first (:func:`flexrobot_ros.shaping.
shape_reference`); the diagnostics report the move time it adds.

Parameters are live (method, target space, tool-space start joints, shaper, rate, limit check, the joint and
flexible-link parameters ``model.*`` a calibration sets (:mod:`flexrobot_ros.nodes.live_model`: the next trajectory
is inverted on them, its link deformations on the new EI and damping ratios; with ``sdrnea`` the code is generated
for new joint parameters when they change), ``drive_compensates`` and ``ros2_control.positions`` apply to the next
trajectory, the torque streams follow ``output_rate_hz`` and ``stream_torques`` now;
:meth:`FeedforwardNode._prepare`) except the model, ``robot``, ``tool`` and the ros2_control output, controller and
joints (read-only: they choose the topics).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from flexrobot_ros.dynamics import (DRIVE_COMPENSATION, check_supported, check_tool_space, compiled_feedforward,
                                   default_method, drive_torque, feedforward, interpolation_error,
                                   predicted_deformation, tool_feedforward, trajectory_from_joint_trajectory)
from flexrobot_ros.dynamics.feedforward_names import METHODS, TARGET_SPACES
from flexrobot_ros.dynamics.input_shaping import DEFAULT_FREQUENCY_ERROR, SHAPERS
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.nodes.convert import (Counted, diagnostics, float_array, joint_state, joint_trajectory, reporting,
                                         trajectory_arrays)
from flexrobot_ros.nodes.live_model import MODEL_PARAMETERS, live_robot
from flexrobot_ros.nodes.live_parameters import LiveParameters, LiveTimer, changed_any, checked
from flexrobot_ros.nodes.ros2_control import checked_topic, joint_order
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.nodes.run_parameters import RunParameters
from flexrobot_ros.runtime import QOS_STREAM, ParameterSpec, run_node
from flexrobot_ros.runtime.messages import time_seconds
from flexrobot_ros.runtime.names import PREDICTED_DEFLECTIONS_TOPIC
from flexrobot_ros.shaping import shape_reference

PARAMETERS = (
    ParameterSpec("robot", "scompi", "shipped robot name or path of a flexibility YAML", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("method", "auto", "inverse dynamics: 'auto' ('sdrnea' for elastic joints on rigid links, "
                  "'prescribed' for flexible links or rigid joints; 'dae' in tool space), 'sdrnea' (generated C code), "
                  "'ejnea' (numeric), 'dae' (robots with extra elasticities: BDF or optimization), 'prescribed' (any "
                  "robot: the link deformations integrated along the joint motion) or 'rigid' (the rigid-robot "
                  "baseline)", choices=("auto", *METHODS)),
    ParameterSpec("target_space", "joint", "what desired_trajectory gives: 'joint' (the link joints [rad | m]) or "
                  "'tool' (the tool point's x, y, z [m] in the base frame; method 'dae'; robots with 2 (planar) or 3 "
                  "actuators)", choices=TARGET_SPACES),
    ParameterSpec("tool_space.start_joints", [], "link positions [rad | m] near the start of each tool-space target: "
                  "the configuration (elbow) the inversion follows; needed with target_space 'tool'",
                  type="double_array"),
    ParameterSpec("output_rate_hz", 250.0, "sample rate of motor_trajectory points and the torque streams [Hz]",
                  range=(1.0, 10000.0)),
    ParameterSpec("shaper", "none", "input shaping of each trajectory for the dominant modes the model predicts along "
                  "it (pose-scheduled): 'zv', 'zvd', 'ei', 'auto' or 'none'", choices=SHAPERS),
    ParameterSpec("shaper_frequency_error", DEFAULT_FREQUENCY_ERROR, "relative frequency error the 'auto' shaper "
                  "is robust to (0.1: +-10 %)", range=(0.0, 0.5)),
    ParameterSpec("stream_torques", True, "publish motor_torque, link_torque and predicted_deflections while a "
                  "trajectory runs"),
    ParameterSpec("check_limits", True, "refuse trajectories that leave the URDF joint limits"),
    ParameterSpec("drive_compensates", "none", "what the drive adds to the torque it is sent: 'none', or 'gravity' "
                  "(its own g(q); the ros2_control outputs then carry tau_m - W^-1 g(q) [N m])",
                  choices=DRIVE_COMPENSATION),
    ParameterSpec("ros2_control.output", "none", "'joint_trajectory': JointTrajectory on <controller>/joint_trajectory "
                  "(joint_trajectory_controller); 'commands': effort stream [N m] on <controller>/commands "
                  "(forward_command_controller, interface effort) at output_rate_hz; 'none'",
                  choices=("none", "joint_trajectory", "commands"), read_only=True),
    ParameterSpec("ros2_control.controller", "joint_trajectory_controller", "name of the ros2_control controller "
                  "(the topic's namespace)", read_only=True),
    ParameterSpec("ros2_control.positions", "motor", "positions of the joint_trajectory points: 'motor' reference q_m "
                  "[rad] or 'link' reference q [rad | m]", choices=("motor", "link")),
    ParameterSpec("ros2_control.joints", [], "joint order of the ros2_control outputs (the controller's 'joints'; "
                  "empty: the robot's order)", type="string_array", read_only=True),
    *MODEL_PARAMETERS,
)

#: Largest error of linear interpolation of the effort between joint_trajectory points [fraction of the peak].
INTERPOLATION_LIMIT = 0.01
#: Factor on the point rate the warning names: the second differences of coarse points underestimate max|tau''|
#: (7 % low at 10 Hz on the test move of test_nodes_ros2_control.py), and the error falls as 1/rate^2.
RATE_MARGIN = 1.25


class FeedforwardNode:
    """The feedforward node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.loaded = load_node_robot(node, p)
        self.robot = live_robot(self.loaded, p)  # the YAML's joint parameters, or calibrated ones (model.*)
        self.tool_axes = self._check(p, self.robot)  # the tool-point coordinates of tool-space targets, or None
        self.result, self.start, self.streamed = None, 0.0, 0
        self.received, self.compute_s, self.added_time_s = 0, 0.0, 0.0
        self.tool_report: dict[str, Any] = {}  # tool space: the last solve's solver and zeros (diagnostics)
        self.order = joint_order(p["ros2_control.joints"], self.robot.joint_names)
        self.command_label = "joint:" + ",".join(self.robot.joint_names[j] for j in self.order)
        self.command_torque, self.interpolation = None, np.zeros(len(self.order))
        types = node.types
        self.motor_trajectory = Counted(node.create_publisher(types.trajectory_msgs.msg.JointTrajectory,
                                                              "motor_trajectory"))
        # the streams catch up in bursts when a timer tick comes late (a busy machine): reliable with a history of
        # ten seconds (QOS_STREAM, as the simulator's encoders) so a recorder loses none of a burst
        self.motor_torque = Counted(node.create_publisher(types.sensor_msgs.msg.JointState, "motor_torque",
                                                          QOS_STREAM))
        self.link_torque = Counted(node.create_publisher(types.sensor_msgs.msg.JointState, "link_torque", QOS_STREAM))
        self.deflections = Counted(node.create_publisher(types.sensor_msgs.msg.JointState,
                                                         PREDICTED_DEFLECTIONS_TOPIC, QOS_STREAM))
        self.deformation: dict[str, np.ndarray] = {}
        output, controller = p["ros2_control.output"], p["ros2_control.controller"]
        self.controller_trajectory = self.commands = None
        if output == "joint_trajectory":
            self.controller_trajectory = Counted(node.create_publisher(
                types.trajectory_msgs.msg.JointTrajectory, checked_topic(controller, "joint_trajectory")))
        elif output == "commands":
            self.commands = Counted(node.create_publisher(types.std_msgs.msg.Float64MultiArray,
                                                          checked_topic(controller, "commands"), QOS_STREAM))
        self.diagnostics = node.create_publisher(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics")
        node.create_subscription(types.trajectory_msgs.msg.JointTrajectory, "desired_trajectory",
                                 live.locked(self.on_desired))
        self.stream = LiveTimer(node, self._stream_period(p), live.locked(self.on_stream), running=False)
        node.create_wall_timer(1.0, live.locked(self.on_diagnostics))
        live.on_change(self._prepare)
        self.run_parameters = RunParameters(node, self.robot)  # latched on /flexrobot/bringup_parameters
        node.logger.info(f"feedforward for {self.robot.name} ({self._method(p, self.robot)}, "
                         f"{p['target_space']} space) at {p['output_rate_hz']:g} Hz")

    def on_desired(self, msg: Any) -> None:
        with reporting(self.node, "desired_trajectory"):
            self.received += 1
            started = time.perf_counter()
            p, method = self.p, self._method(self.p, self.robot)
            tool = p["target_space"] == "tool"
            names = self.tool_axes if tool else self.robot.joint_names
            trajectory_arrays(msg, names)  # names, lengths, finiteness, time order: one cause each
            path = trajectory_from_joint_trajectory(msg, names)
            if tool:
                result = tool_feedforward(self.robot, path, method, start_joints=p["tool_space.start_joints"],
                                          rate_hz=p["output_rate_hz"], check_limits=p["check_limits"])
            else:
                if p["shaper"] != "none":
                    shaping = shape_reference(self.robot, path, p["shaper"],
                                              frequency_error=p["shaper_frequency_error"])
                    path, self.added_time_s = shaping.trajectory, shaping.added_time_s
                result = feedforward(self.robot, path, method, rate_hz=p["output_rate_hz"],
                                     check_limits=p["check_limits"])
            self.deformation = predicted_deformation(self.robot, result)
            self.compute_s = time.perf_counter() - started
            if tool:
                self._report_solver(result)
            stamp = msg.header.stamp if time_seconds(msg.header.stamp) else self.node.stamp()
            self.motor_trajectory.publish(joint_trajectory(self.node.types, stamp, self.robot.joint_names, result.t,
                                                           result.q_m, result.qd_m, result.qdd_m, result.tau_m))
            self._controller_output(stamp, result)
            self.result, self.start, self.streamed = result, time_seconds(stamp), 0
            self.stream.resume()  # the stream timer runs only while a trajectory plays (idle CPU, issue 23)

    def _controller_output(self, stamp: Any, result: Any) -> None:
        """The ros2_control outputs of one trajectory (module docstring), in ``ros2_control.joints`` order."""
        if self.controller_trajectory is None and self.commands is None:
            return
        order, p = self.order, self.p
        torque = drive_torque(self.robot, result, p["drive_compensates"])[:, order]
        self.interpolation = interpolation_error(torque)
        worst = float(self.interpolation.max())
        if worst > INTERPOLATION_LIMIT:
            needed = np.ceil(RATE_MARGIN * p["output_rate_hz"] * np.sqrt(worst / INTERPOLATION_LIMIT))
            self.node.logger.warning(f"effort between points at {p['output_rate_hz']:g} Hz: linear interpolation "
                                     f"errs by {100 * worst:.2g} % of the peak torque; output_rate_hz >= "
                                     f"{needed:.0f} Hz keeps it under {100 * INTERPOLATION_LIMIT:g} %")
        self.command_torque = torque
        if self.controller_trajectory is not None:
            link = p["ros2_control.positions"] == "link"
            q, qd, qdd = (result.q, result.qd, result.qdd) if link else (result.q_m, result.qd_m, result.qdd_m)
            names = [self.robot.joint_names[j] for j in order]
            self.controller_trajectory.publish(joint_trajectory(self.node.types, stamp, names, result.t, q[:, order],
                                                                qd[:, order], qdd[:, order], torque))

    def _report_solver(self, result: Any) -> None:
        """Log the tool-space solver of ``result``, why it ran and its unstable zeros (as ``flexrobot feedforward
        --line`` prints them; a warning when the solver did not converge); the diagnostics report them until the
        next trajectory."""
        zeros = result.unstable_zeros
        self.tool_report = {"tool-space solver": result.solver, "tool-space zeros": result.solver_reason,
                            "tool-space converged": result.converged, "unstable zeros": zeros.size}
        log = self.node.logger.info if result.converged else self.node.logger.warning
        log(f"tool-space feedforward: {result.solver}"
            + ("" if result.converged else " (did not converge: the torques are its last iterate)")
            + f"; zeros along the path: {result.solver_reason}")
        if zeros.size:
            slowest = zeros[np.argmin(zeros.real)]
            self.tool_report["slowest unstable zero [rad/s]"] = f"{slowest.real:.4g}{slowest.imag:+.4g}j"
            self.node.logger.info(f"non-minimum-phase zeros [rad/s]: {zeros.size} over the path poses, real parts "
                                  f"{zeros.real.min():.4g} to {zeros.real.max():.4g} (slowest "
                                  f"{slowest.real:.4g}{slowest.imag:+.4g}j)")

    def on_stream(self) -> None:
        result = self.result
        if result is None:
            return
        due = int(np.searchsorted(result.t, self.node.now() - self.start, side="right"))
        types, names = self.node.types, self.robot.joint_names
        streams = self.p["stream_torques"]
        for k in range(self.streamed, due):
            if self.commands is not None and self.command_torque is not None:
                self.commands.publish(float_array(types, self.command_torque[k], self.command_label))
            if not streams:
                continue
            stamp = self.node.stamp(self.start + result.t[k])
            self.motor_torque.publish(joint_state(types, stamp, names, result.q_m[k], result.qd_m[k], result.tau_m[k]))
            self.link_torque.publish(joint_state(types, stamp, names, result.q[k], result.qd[k], result.tau[k]))
            self.deflections.publish(joint_state(types, stamp, list(self.deformation),
                                                 [values[k] for values in self.deformation.values()]))
        self.streamed = max(self.streamed, due)
        if self.streamed >= len(result.t):
            self.result = None
            self.stream.pause()

    @staticmethod
    def _method(p: Any, robot: Any) -> str:
        """The method ``method`` names: 'auto' is 'dae' in tool space, else the command line's default for the
        robot (:func:`flexrobot_ros.dynamics.default_method`)."""
        if p["method"] != "auto":
            return p["method"]
        return "dae" if p["target_space"] == "tool" else default_method(robot)

    def _check(self, p: Any, robot: Any) -> tuple[str, ...] | None:
        """Make the method and target space usable for ``robot``, at start-up and when they change alike: what the
        robot does not support is refused naming the parameter; SDRNEA's code is generated and compiled now (once
        per robot, cached on disk), not at the first trajectory. Returns the tool-point coordinates of tool-space
        targets (None in joint space).

        Raises:
            RuntimeLayerError: the method or the target space does not serve the robot, ``tool_space.start_joints``
                has not one value per joint or a shaper is asked for in tool space, or SDRNEA's code cannot be
                generated or compiled.
        """
        method = self._method(p, robot)
        if p["target_space"] == "tool":
            axes = checked("target_space", check_tool_space, robot, method)
            start = p["tool_space.start_joints"]
            if len(start) != robot.n:
                raise RuntimeLayerError(
                    f"parameter 'tool_space.start_joints': {list(start)}; target_space 'tool' needs {robot.n} link "
                    f"positions [rad | m] of {list(robot.joint_names)} near the start of the tool-space targets")
            if p["shaper"] != "none":
                raise RuntimeLayerError(f"parameter 'shaper': {p['shaper']!r}; input shaping applies to joint-space "
                                        "targets: with target_space 'tool' it must be 'none'")
            return axes
        checked("method", check_supported, robot, method)
        if method == "sdrnea":
            checked("method", compiled_feedforward, robot)
        return None

    @staticmethod
    def _stream_period(p: Any) -> float | None:
        streaming = p["stream_torques"] or p["ros2_control.output"] == "commands"
        return 1.0 / p["output_rate_hz"] if streaming else None

    def _prepare(self, values: Any, changed: frozenset) -> Any:
        """Check a change and return what installs it (see :mod:`.live_parameters`): the next trajectory uses the
        new method, rate and limit check; the torque streams follow the new rate now, or stop."""
        robot = live_robot(self.loaded, values) if changed_any(changed, "model.") else self.robot
        axes = self.tool_axes
        if changed_any(changed, ("method", "target_space", "tool_space.", "shaper")) or robot is not self.robot:
            axes = self._check(values, robot)  # new joint parameters: SDRNEA's code is generated for them (cached)

        def commit() -> None:
            self.robot, self.tool_axes = robot, axes  # the next trajectory uses the new model parameters
            self.stream.set_period(self._stream_period(values))
            if self._stream_period(values) is None:
                self.result = None  # the stream in progress ends
                self.stream.pause()
        return commit

    def on_diagnostics(self) -> None:
        values = {
            "method": self._method(self.p, self.robot), "target_space": self.p["target_space"],
            "trajectories received": self.received,
            "last computation [s]": self.compute_s, "shaper": self.p["shaper"],
            "shaping added time [s]": self.added_time_s, "streaming": self.result is not None,
            "published motor_trajectory": self.motor_trajectory.count,
            "published motor_torque": self.motor_torque.count, "published link_torque": self.link_torque.count,
            "published predicted_deflections": self.deflections.count,
            "motor_trajectory subscribers": self.motor_trajectory.publisher.get_subscription_count(),
            "drive_compensates": self.p["drive_compensates"],
            **self.tool_report,
            **({"published joint_trajectory": self.controller_trajectory.count}
               if self.controller_trajectory is not None else {}),
            **({"published commands": self.commands.count} if self.commands is not None else {}),
            **({"effort interpolation error [% of peak]": 100 * float(self.interpolation.max())}
               if self.controller_trajectory is not None or self.commands is not None else {})}
        converged = self.tool_report.get("tool-space converged", True)
        message = f"{self.received} trajectories" + ("" if converged else
                                                      "; the last tool-space solve did not converge")
        self.diagnostics.publish(diagnostics(self.node, "feedforward", "ok" if converged else "warn", message,
                                             values))


def main(argv: list[str] | None = None) -> int:
    """Console script ``feedforward_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(FeedforwardNode, "feedforward_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
