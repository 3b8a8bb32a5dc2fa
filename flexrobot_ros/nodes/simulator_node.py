"""simulator_node: a flexible-joint robot simulated in (scaled) real time, seen through its encoders.

Advances a :class:`flexrobot_ros.simulation.Simulation` (PD + gravity compensation, fixed-step exponential Euler)
on a wall-clock timer, ``real_time_factor`` simulated seconds per wall second. Header stamps are *simulated* time:
the wall-clock time when the simulation started plus the simulated seconds, so samples are exactly ``1 /
rate_hz`` apart whatever the real-time factor (and stay increasing across ``~/reset``).

Publishes: ``motor_states`` (sensor_msgs/JointState: motor encoder positions q_m [rad], velocities, effort = motor
torque tau_m [N m], every sample), ``joint_states`` (JointState: link positions q [rad | m], velocities, effort =
elastic joint torque K (W q - q_m), every ``joint_states_decimation``-th sample; after the simulated joints the URDF
joints the YAML's ``locked_joints`` holds, at their positions with velocity and effort 0, so that
robot_state_publisher has every joint of a vendor URDF), ``tf`` (tf2_msgs/TFMessage of the URDF links, the tree
robot_state_publisher publishes, every ``1 / tf_rate_hz`` of simulated time), ``robot_description`` (std_msgs/String,
latched, when ``publish_robot_description``, unless the URDF came from that topic (:mod:`.robot_description`): a
second latched copy beside the first publisher's would hand late subscribers either), for robots with flexible links
``link_deflections`` (std_msgs/Float64MultiArray (links, 2): tip deflections w_y, w_z [m] of the flexible links
in YAML order, beam axes, with the joint_states decimation; tf then also carries ``<link>/deformed_tip``, each
flexible link's deformed end frame, for RViz; and ``link_shapes``, visualization_msgs/MarkerArray: one line strip
per flexible link along its deformed beam, 16 points in the link frame, every ``1 / link_shapes_rate_hz``) and
``dynamic_joint_states`` (control_msgs/DynamicJointState, as ros2_control's joint_state_broadcaster publishes it: for
every joint the state interfaces ``position``, ``velocity``, ``effort`` (the link values of ``joint_states``) and
``motor_position``, ``motor_velocity`` (the motor values of ``motor_states``), every
``dynamic_joint_states_decimation``-th sample, by default every one), ``/clock`` (rosgraph_msgs/Clock, every ``1 /
clock_rate_hz`` of simulated time: the simulated time as the header stamps carry it, published before the sample of
the same stamp, for nodes run with ``use_sim_time``) and
``diagnostics`` (state, simulated time, ``stamp at t = 0 [s]`` to map stamps back to simulated time, achieved
real-time factor over the last period and over all the running time, overruns, counts, matched ``motor_states``
and ``joint_states`` subscribers, ``outputs off``).

Optional outputs: ``tf`` needs the ROS 2 package tf2_msgs and ``dynamic_joint_states`` control_msgs. Where one is
not installed (rclpy from PyPI has neither), that output is off: one log line names the package, ``/diagnostics``
lists it under ``outputs off`` and its count reads ``off``; every other output works as before.

Load: when the machine cannot keep the pace (CPU starvation, a ``real_time_factor`` beyond its speed), the simulation
slows down instead of dropping samples: each timer tick computes and publishes every sample due, at most
``MAX_CATCH_UP_S`` of simulated time; beyond that the real-time schedule restarts from where the simulation is (an
*overrun*, logged once and counted in the diagnostics with the simulated seconds the schedule gave up, ``behind
schedule [s]``), so stamps stay exactly ``1 / rate_hz`` apart and the achieved real-time factor drops below the
requested one.
The state streams (``motor_states``, ``joint_states``, ``dynamic_joint_states``) are reliable with the history of
:data:`~flexrobot_ros.runtime.qos.QOS_STREAM` (ten seconds at 1 kHz), so a subscriber whose process is starved of
CPU that long still gets every sample while the simulator runs (on Fast DDS, rclpy's default, the reader holds five
of those seconds and the simulator's writer the rest); a subscriber whose callbacks stall longer keeps every sample
too when it subscribes with ``keep_all`` history (the bag recorder does) on Cyclone DDS (the standalone runtime),
not on Fast DDS, whose reader holds 5,000 samples with ``keep_all`` too (measured on Jazzy).
Automatic excitations start exactly on their sample, so a run does not depend on timer jitter or CPU load.

Subscribes: ``motor_torque_command`` (std_msgs/Float64MultiArray, n motor torques [N m]: the motor torque itself
with ``torque_command_mode: effort``, added to the PD + compensation law with ``additive``; held until the next
command), ``motor_trajectory`` (trajectory_msgs/JointTrajectory from the feedforward node: positions q_m,
velocities qd_m, effort tau_m; tracked by feedforward + motor PD from ``header.stamp + time_from_start`` in
simulated time, now when the stamp is zero), ``set_point`` (JointState with every joint: move there) and, as a
ros2_control robot with a forward_command_controller on its ``effort`` command interfaces,
``<ros2_control.controller>/commands`` (std_msgs/Float64MultiArray, the motor torques [N m] in the order of
``ros2_control.joints``, empty: the robot's; handled exactly as ``motor_torque_command``).

Services: ``~/apply_impact`` (std_srvs/Trigger: the ``impact.*`` force pulse now; with ``impact.record_s`` > 0 the
simulation pauses exactly that many simulated seconds after the pulse starts, the record length of an impact
test, whatever the load of the machine), ``~/reset`` (Trigger: back to ``set_point`` at rest), ``~/set_point``
(Trigger: move to the next pose of the ``set_points`` parameter, cyclic) and ``~/run`` (std_srvs/SetBool: run or
pause; the simulation also pauses by itself at the ``pause_at_s`` times). Set-point moves are rest-to-rest
9th-order polynomials of ``set_point_move_s`` seconds tracked with the law the ``controller`` parameter names: EJNEA
feedforward + motor PD (flexible joints), seed 004's decoupling control then LQR (flexible links, rigid joints), or
a step of the PD set point (``pd``, and always with ``set_point_move_s: 0``).

Excitation (so that OMA has something to identify): ``excitation.type: impacts`` applies the ``impact.*`` pulse
every ``excitation.period_s`` from ``excitation.first_s``; ``random`` applies a band-limited Gaussian force of RMS
``excitation.rms`` in ``excitation.band_hz``; ``none`` leaves the robot alone.

Parameters are live (``ros2 param set``: gains reach the running law from the next sample, the timer follows
``update_period_s``, the excitation schedule restarts, ...; :meth:`SimulatorNode._prepare`) except those fixed at
start-up, declared read-only: the model, ``rate_hz``, ``substeps``, ``autostart``, ``publish_robot_description`` and
the simulated encoders.
"""
from __future__ import annotations

import bisect
import time
from typing import Any

import numpy as np

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.errors import RuntimeLayerError, SimulationError
from flexrobot_ros.kinematics import link_transforms
from flexrobot_ros.nodes.convert import (Counted, InputError, diagnostics, dynamic_joint_state, joint_state,
                                        optional_publisher,
                                         joint_values, reporting, tf_message, trajectory_arrays, vector)
from flexrobot_ros.nodes.live_parameters import LiveParameters, LiveTimer, changed_any, checked
from flexrobot_ros.nodes.ros2_control import checked_topic, joint_order
from flexrobot_ros.nodes.state_input import SIMULATED_INTERFACES
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.nodes.run_parameters import RunParameters
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, QOS_STREAM, ParameterSpec, run_node
from flexrobot_ros.runtime.messages import multiarray
from flexrobot_ros.simulation import (FeedforwardPD, FixedStepIntegration, LinkEncoder, MotorEncoder,
                                      PDGravityCompensation, RandomForce, RectangularPulse, Simulation, TorqueInput)
from flexrobot_ros.simulation.excitation import as_wrench
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller


PARAMETERS = (
    ParameterSpec("robot", "scompi", "shipped robot name or path of a flexibility YAML", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("set_point", [], "link pose held at start and after ~/reset (a change applies at the next "
                  "~/reset) [rad | m]; empty: zeros clipped to the joint limits", type="double_array"),
    ParameterSpec("set_points", [], "poses the ~/set_point service cycles through, n values per pose "
                  "[rad | m] (a change restarts the cycle at its first pose)", type="double_array"),
    ParameterSpec("controller", "auto", "law of set-point moves: 'auto' (feedforward on flexible-joint robots, pd on "
                  "flexible-link or rigid-joint ones), 'pd' (step the PD + gravity compensation set point), "
                  "'feedforward' (EJNEA feedforward + motor PD along the move), 'decoupling' (seed 004 decoupling "
                  "control along the move, then its LQR vibration loop holds the target; flexible links, rigid joints); "
                  "a change applies from the next move", choices=("auto", "pd", "feedforward", "decoupling")),
    ParameterSpec("set_point_move_s", 2.0, "duration of a set-point move [s]; 0: step the PD set point",
                  range=(0.0, 600.0)),
    ParameterSpec("kp", [], "motor PD stiffness [N m/rad]: empty for the YAML's, one value or n values",
                  type="double_array", range=(0.0, 1e9)),
    ParameterSpec("kd", [], "motor PD damping [N m s/rad]: empty for the YAML's, one value or n values",
                  type="double_array", range=(0.0, 1e9)),
    ParameterSpec("rate_hz", 1000.0, "sample rate of the simulation output and the encoders [Hz]",
                  range=(10.0, 20000.0), read_only=True),
    ParameterSpec("substeps", 1, "integration steps per output sample", range=(1, 100), read_only=True),
    ParameterSpec("real_time_factor", 1.0, "simulated seconds per wall-clock second", range=(0.01, 100.0)),
    ParameterSpec("update_period_s", 0.01, "wall-clock period of the simulation timer [s]", range=(0.001, 1.0)),
    ParameterSpec("pause_at_s", [], "simulated times at which the simulation pauses until ~/run (a scripted "
                  "experiment's checkpoints, exact whatever the machine's load) [s]", range=(0.0, 1e9),
                  type="double_array"),
    ParameterSpec("duration_s", 0.0, "simulated seconds after which the simulation stops (0: never; a finished "
                  "simulation goes on with ~/run once duration_s is raised)", range=(0.0, 1e9)),
    ParameterSpec("autostart", True, "run at start-up (else wait for ~/run)", read_only=True),
    ParameterSpec("joint_states_decimation", 1, "publish joint_states every k-th sample", range=(1, 1000)),
    ParameterSpec("dynamic_joint_states_decimation", 1, "publish dynamic_joint_states every k-th sample (0: not "
                  "at all; each costs about 0.2 ms of CPU)", range=(0, 1000)),
    ParameterSpec("ros2_control.controller", "effort_controller", "forward_command_controller (interface effort) "
                  "whose <controller>/commands [N m] the simulated robot accepts", read_only=True),
    ParameterSpec("ros2_control.joints", [], "joint order of <controller>/commands (the controller's 'joints'; "
                  "empty: the robot's order)", type="string_array", read_only=True),
    ParameterSpec("clock_rate_hz", 100.0, "rate of /clock (rosgraph_msgs/Clock: the simulated time, as the header "
                  "stamps carry it, for nodes with use_sim_time) in simulated time [Hz]; 0: no /clock",
                  range=(0.0, 20000.0)),
    ParameterSpec("tf_rate_hz", 50.0, "rate of the link transforms on tf [Hz]; 0: no tf", range=(0.0, 1000.0)),
    ParameterSpec("link_shapes_rate_hz", 20.0, "rate of the link_shapes line strips (robots with flexible links) "
                  "[Hz]; 0: none", range=(0.0, 1000.0)),
    ParameterSpec("publish_robot_description", True, "publish the URDF on robot_description (latched); turn off "
                  "when robot_state_publisher runs; never when the URDF came from robot_description (urdf)",
                  read_only=True),
    ParameterSpec("torque_command_mode", "effort", "motor_torque_command is the motor torque ('effort') or is "
                  "added to the PD + compensation law ('additive')", choices=("effort", "additive")),
    ParameterSpec("motor_encoder.counts_per_rev", 0.0, "motor encoder counts per rotor revolution (0: ideal)",
                  range=(0.0, 1e12), read_only=True),
    ParameterSpec("motor_encoder.noise_std", 0.0, "motor encoder noise standard deviation [rad]",
                  range=(0.0, 1.0), read_only=True),
    ParameterSpec("link_encoder.counts_per_rev", 0.0, "link encoder counts per joint revolution (0: ideal)",
                  range=(0.0, 1e12), read_only=True),
    ParameterSpec("link_encoder.noise_std", 0.0, "link encoder noise standard deviation [rad | m]",
                  range=(0.0, 1.0), read_only=True),
    ParameterSpec("impact.force", [0.0, 50.0, 0.0], "impact force [N] (3 values) or wrench [N, N m] (6 values), "
                  "world axes (seed 000 section 2.4.3: 50 N along y0)", type="double_array"),
    ParameterSpec("impact.duration_s", 0.006, "impact duration [s]", range=(1e-6, 10.0)),
    ParameterSpec("impact.record_s", 0.0, "pause the simulation this many simulated seconds after an ~/apply_impact "
                  "pulse starts (0: keep running)", range=(0.0, 1e6)),
    ParameterSpec("impact.frame", "", "frame where impacts and random forces act (empty: the tool frame)"),
    ParameterSpec("excitation.type", "impacts", "automatic excitation (a change, or one of first_s / period_s, "
                  "restarts the schedule: first_s if still ahead, else one period after the last excitation; "
                  "a random force in progress stops when the type changes)",
                  choices=("impacts", "random", "none")),
    ParameterSpec("excitation.first_s", 0.2, "simulated time of the first excitation [s]", range=(0.0, 1e9)),
    ParameterSpec("excitation.period_s", 3.0, "time between impacts / length of each random-force segment [s]",
                  range=(0.01, 1e9)),
    ParameterSpec("excitation.rms", [5.0, 5.0, 5.0], "random force RMS per axis [N] (3) or wrench (6), from the "
                  "next segment on",
                  type="double_array", range=(0.0, 1e6)),
    ParameterSpec("excitation.band_hz", [1.0, 200.0], "random force band [f_low, f_high] [Hz]",
                  type="double_array", range=(0.0, 1e4)),
    ParameterSpec("excitation.seed", 0, "random force seed", range=(0, 2**31 - 1)),
)

#: Longest simulated stretch [s] one timer tick may catch up; beyond it the simulation falls behind real time.
MAX_CATCH_UP_S = 0.25


class SimulatorNode:
    """The simulator node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.robot = robot = load_node_robot(node, p)
        self.names, self.rate = robot.joint_names, p["rate_hz"]
        #: the URDF joints locked_joints holds, and their positions [rad | m]: in joint_states too (at rest), so that
        #: robot_state_publisher has every joint of the URDF; every other output has the simulated joints only
        self.held = (tuple(robot.locked_joints), np.array(list(robot.locked_joints.values()), dtype=float))
        # flexible links / rigid joints: the composed model's plant and its hold law
        self.plant = ElasticRobotPlant(robot) if (robot.flexible_links or robot.rigid_joints) else None
        settings = self._settings(p)
        self.controller = settings["controller"]
        self.hold, self.set_points, self.frame = settings["hold"], settings["set_points"], settings["frame"]
        self.home = self.hold.q_d
        sensors = (MotorEncoder(p["motor_encoder.counts_per_rev"] or None, p["motor_encoder.noise_std"]),
                   LinkEncoder(p["link_encoder.counts_per_rev"] or None, p["link_encoder.noise_std"]))
        self.sim = Simulation(self.plant or robot, self.hold, rate=self.rate, fixed=FixedStepIntegration(p["substeps"]),
                              sensors=sensors)
        self.command = np.zeros(robot.n)
        self.mode, self.state, self.move_end, self.next_set_point = "hold", "paused", None, 0
        self.excitations: list[Any] = []
        self.next_excitation, self.excitation_count, self.last_excitation = p["excitation.first_s"], 0, None
        self.stamp_base: float | None = None
        self.anchor = (time.monotonic(), 0)
        self.overruns, self.late_references = 0, 0
        self.behind_s = 0.0  # simulated seconds the real-time schedule gave up in overruns
        #: samples stepped and wall-clock seconds spent running (to within one timer period), since start-up
        self.stepped, self.running_wall_s, self.last_tick = 0, 0.0, time.monotonic()
        self.pauses = self._scheduled_pauses(p)  # sample indices to pause on (pause_at_s, impact records)
        self.diagnosed = (time.monotonic(), 0.0)

        types = node.types
        joint_state_type = types.sensor_msgs.msg.JointState
        self.motor_states = Counted(node.create_publisher(joint_state_type, "motor_states", QOS_STREAM))
        self.joint_states = Counted(node.create_publisher(joint_state_type, "joint_states", QOS_STREAM))
        #: optional outputs whose message package is not installed: {topic: why} (/diagnostics "outputs off")
        self.outputs_off: dict[str, str] = {}
        self.dynamic_joint_states = optional_publisher(node, "control_msgs/msg/DynamicJointState",
                                                       "dynamic_joint_states", QOS_STREAM, self.outputs_off)
        self.tf = optional_publisher(node, "tf2_msgs/msg/TFMessage", "tf", QOS_DEFAULT, self.outputs_off)
        self.clock = Counted(node.create_publisher(types.rosgraph_msgs.msg.Clock, "/clock"))  # absolute, as ROS's
        self.diagnostics = node.create_publisher(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics")
        self.deflections = node.create_publisher(types.std_msgs.msg.Float64MultiArray, "link_deflections") \
            if self.plant is not None and self.plant.deflection_links else None
        self.shapes = node.create_publisher(types.visualization_msgs.msg.MarkerArray, "link_shapes") \
            if self.deflections is not None else None
        if p["publish_robot_description"] and robot.urdf_path is None:  # it came from robot_description itself
            node.logger.info(f"publish_robot_description: not publishing; the URDF came from "
                             f"{node.resolve_name('robot_description')}, whose publisher keeps it latched")
        elif p["publish_robot_description"]:
            description = node.create_publisher(types.std_msgs.msg.String, "robot_description", QOS_LATCHED)
            description.publish(types.std_msgs.msg.String(data=robot.urdf_xml))
        locked = live.locked  # callbacks and parameter changes take turns
        node.create_subscription(types.std_msgs.msg.Float64MultiArray, "motor_torque_command",
                                 locked(self.on_torque))
        self.command_order = checked("ros2_control.joints", joint_order, p["ros2_control.joints"], self.names)
        self.commands_topic = checked("ros2_control.controller", checked_topic, p["ros2_control.controller"],
                                      "commands")
        node.create_subscription(types.std_msgs.msg.Float64MultiArray, self.commands_topic, locked(self.on_commands))
        node.create_subscription(types.trajectory_msgs.msg.JointTrajectory, "motor_trajectory",
                                 locked(self.on_reference))
        node.create_subscription(joint_state_type, "set_point", locked(self.on_set_point))
        trigger = types.std_srvs.srv.Trigger
        node.create_service(trigger, "~/apply_impact", locked(self.on_apply_impact))
        node.create_service(trigger, "~/reset", locked(self.on_reset))
        node.create_service(trigger, "~/set_point", locked(self.on_next_set_point))
        node.create_service(types.std_srvs.srv.SetBool, "~/run", locked(self.on_run))
        self.ticks = LiveTimer(node, p["update_period_s"], locked(self.on_tick), wall=True)  # paces /clock
        node.create_wall_timer(1.0, locked(self.on_diagnostics))
        live.on_change(self._prepare)
        self.run_parameters = RunParameters(node, self.robot)  # latched on /flexrobot/bringup_parameters
        if p["autostart"]:
            self._run(True)
        node.logger.info(f"simulating {robot.name}{' + tool' if p['tool'] else ''} at {self.rate:g} Hz, real-time "
                         f"factor {p['real_time_factor']:g}, holding {np.round(self.home, 4).tolist()}")

    # ------------------------------------------------------------------ callbacks
    def on_tick(self) -> None:
        now, running = time.monotonic(), self.state == "running"
        if running:
            self.running_wall_s += now - self.last_tick
        self.last_tick = now
        end = self.sim.sample_index + self._samples_due()
        if self.pauses:
            end = min(end, self.pauses[0])
        while self.sim.sample_index < end and self.state == "running":
            self._schedule_excitations()  # at the sample they start on, so runs do not depend on timer jitter
            stop = end if not self._excites() else min(end, max(self.sim.sample_index + 1,
                                                                int(np.floor(self.next_excitation * self.rate))))
            try:
                output = self.sim.step(stop - self.sim.sample_index)
            except SimulationError as error:
                self.state = "diverged"
                self.node.log_once("diverged", f"{error} Call ~/reset to start again.", "error")
                return
            self.stepped += len(output.t)
            self._publish(output)
        if running and self.state == "finished":
            self.on_diagnostics()  # the end of the run is news: its figures now
        if self.pauses and self.sim.sample_index >= self.pauses[0] and self.state == "running":
            self.pauses = [k for k in self.pauses if k > self.sim.sample_index]
            self._run(False)
            self.on_diagnostics()  # the pause is news: say it now
        if self.move_end is not None and self.sim.t >= self.move_end:
            self.sim.set_controller(self.hold)
            self.mode, self.move_end = "hold", None

    def on_torque(self, msg: Any) -> None:
        with reporting(self.node, "motor_torque_command"):
            self._command(vector(msg, self.robot.n))

    def on_commands(self, msg: Any) -> None:
        """``<controller>/commands``: the torques in the controller's joint order, then as motor_torque_command."""
        with reporting(self.node, self.commands_topic):
            torques = np.empty(self.robot.n)
            torques[self.command_order] = vector(msg, self.robot.n)
            self._command(torques)

    def _command(self, torques: np.ndarray) -> None:
        """Hold the motor torques ``torques`` [N m] (robot's joint order) until the next command
        (``torque_command_mode``: the torque itself or added to the PD + compensation law)."""
        self.command[:] = torques
        if self.mode != "command":
            self.sim.set_controller(self._command_controller())
            self.mode, self.move_end = "command", None

    def on_reference(self, msg: Any) -> None:
        with reporting(self.node, "motor_trajectory"):
            ref = trajectory_arrays(msg, self.names)
            if ref["positions"] is None or ref["effort"] is None:
                raise InputError("missing fields", "positions (q_m) and effort (tau_m) are required in every point")
            times = self._sim_time(msg.header.stamp) + ref["t"]
            if times[0] < self.sim.t:
                self.late_references += 1
                self.node.log_once("late reference", f"motor_trajectory starts {self.sim.t - times[0]:.3g} s in the "
                                   "past (simulated time); shifted to start now (logged once, counted)")
                times += self.sim.t - times[0]
            velocities = ref["velocities"] if ref["velocities"] is not None else (
                np.gradient(ref["positions"], times, axis=0) if len(times) > 1 else np.zeros((1, self.robot.n)))
            self.sim.set_controller(FeedforwardPD(self.robot, ref["effort"], ref["positions"], velocities, times,
                                                  self.hold.kp, self.hold.kd))
            self.mode, self.move_end = "trajectory", None

    def on_set_point(self, msg: Any) -> None:
        with reporting(self.node, "set_point"):
            self._move_to(joint_values(msg, self.names))

    def on_apply_impact(self, request: Any, response: Any) -> Any:
        t0 = self.sim.t + 1.0 / self.rate
        self._apply(RectangularPulse(self.frame, self.p["impact.force"], t0, t0 + self.p["impact.duration_s"]))
        record = self.p["impact.record_s"]
        if record:
            bisect.insort(self.pauses, self.sim.sample_index + 1 + int(round(record * self.rate)))
        response.success = True
        response.message = (f"impact {list(self.p['impact.force'])} at {self.frame} for "
                            f"{1e3 * self.p['impact.duration_s']:g} ms from t = {t0:.4f} s (simulated)" +
                            (f", pausing at t = {t0 + record:.4f} s" if record else ""))
        return response

    def on_reset(self, request: Any, response: Any) -> Any:
        self.stamp_base = None if self.stamp_base is None else self.stamp_base + self.sim.t + 1.0 / self.rate
        self.hold = self.hold.with_set_point(self.home)
        self.sim.set_controller(self.hold)
        self.sim.clear_excitations()
        self.sim.reset(q0=self.home)
        self.excitations, self.next_excitation, self.last_excitation = [], self.p["excitation.first_s"], None
        self.mode, self.move_end, self.pauses = "hold", None, self._scheduled_pauses(self.p)
        self.diagnosed = (time.monotonic(), 0.0)
        was_paused, self.state = self.state == "paused", "paused"
        self._run(not was_paused)
        response.success, response.message = True, f"reset to {np.round(self.home, 6).tolist()} at rest, t = 0"
        return response

    def on_next_set_point(self, request: Any, response: Any) -> Any:
        if not self.set_points:
            response.success, response.message = False, "parameter set_points is empty: nothing to move to"
            return response
        target = self.set_points[self.next_set_point % len(self.set_points)]
        self._move_to(target)
        self.next_set_point += 1
        response.success = True
        response.message = (f"moving to set point {(self.next_set_point - 1) % len(self.set_points) + 1} of "
                            f"{len(self.set_points)}: {np.round(target, 6).tolist()} by t = "
                            f"{self.move_end if self.move_end is not None else self.sim.t:.4f} s (simulated)")
        return response

    def on_run(self, request: Any, response: Any) -> Any:
        self._run(bool(request.data))
        self.on_diagnostics()  # the new state (and the clock's origin) without waiting for the next period
        response.success, response.message = True, f"{self.state} at t = {self.sim.t:.4f} s (simulated)"
        return response

    def on_diagnostics(self) -> None:
        wall, sim_t = time.monotonic(), self.sim.t
        achieved = (sim_t - self.diagnosed[1]) / max(wall - self.diagnosed[0], 1e-9)
        self.diagnosed = (wall, sim_t)
        level = {"diverged": "error"}.get(self.state, "ok")
        if self.state == "running" and achieved < 0.8 * self.p["real_time_factor"]:
            level = "warn"
        self.diagnostics.publish(diagnostics(self.node, "simulator", level, f"{self.state}, {self.mode}", {
            "state": self.state, "controller": self.mode, "simulated time [s]": f"{sim_t:.6f}",
            "stamp at t = 0 [s]": "" if self.stamp_base is None else f"{self.stamp_base:.9f}",
            "real-time factor (target)": self.p["real_time_factor"], "real-time factor (achieved)": achieved,
            "excitations applied": self.excitation_count, "late references": self.late_references,
            "real-time factor (achieved, running)": self.stepped / self.rate / self.running_wall_s
            if self.running_wall_s else 0.0, "overruns": self.overruns, "behind schedule [s]": f"{self.behind_s:.6f}",
            "running wall time [s]": f"{self.running_wall_s:.6f}", "set point": self.hold.q_d,
            "published motor_states": self.motor_states.count, "published joint_states": self.joint_states.count,
            "published dynamic_joint_states": count_or_off(self.dynamic_joint_states),
            "published tf": count_or_off(self.tf), "published clock": self.clock.count,
            "outputs off": ", ".join(f"{topic} ({why})" for topic, why in self.outputs_off.items()),
            "motor_states subscribers": self.motor_states.publisher.get_subscription_count(),
            "joint_states subscribers": self.joint_states.publisher.get_subscription_count()}))

    # ------------------------------------------------------------------ parameters
    def _settings(self, p: Any) -> dict[str, Any]:
        """What the parameter values ``p`` configure, checked beyond their declarations (lengths against the
        joints, frame names, forces, the random-force band): at start-up and for every change alike.

        Raises:
            RuntimeLayerError: naming the parameter and what is wrong.
        """
        robot, n = self.robot, self.robot.n
        home = checked("set_point", robot.check_q, p["set_point"] or robot.default_pose, "set point")
        if len(p["set_points"]) % n:
            raise RuntimeLayerError(f"parameter 'set_points': {len(p['set_points'])} values are not whole poses of "
                                    f"{n} joints {list(self.names)}")
        set_points = [checked("set_points", robot.check_q, p["set_points"][i:i + n], f"set point {i // n + 1}")
                      for i in range(0, len(p["set_points"]), n)]
        hold = checked("set_point", self._hold_law, home)  # the YAML's gains
        for name in ("kp", "kd"):  # empty: the YAML's, one value: every joint, else one per joint
            values = p[name][0] if len(p[name]) == 1 else p[name] or None
            hold = checked(name, hold.with_gains, **{name: values})
        frame = p["impact.frame"] or robot.tool_frame
        checked("impact.frame", robot.frame_id, frame)
        checked("impact.force", as_wrench, p["impact.force"], "impact force")
        if p["excitation.type"] == "random":  # a short segment checks the RMS values and the band at this rate
            checked("excitation.rms / excitation.band_hz", RandomForce, frame, p["excitation.rms"],
                    tuple(p["excitation.band_hz"]), 0.0, min(p["excitation.period_s"], 1.0),
                    sample_rate=self.rate)
        controller = checked("controller", self._controller_kind, p["controller"])
        return {"hold": hold, "set_points": set_points, "frame": frame, "controller": controller}

    def _controller_kind(self, kind: str) -> str:
        """The set-point move law for ``controller`` (see the parameter), checked against the model."""
        if kind == "auto":
            return "pd" if self.plant is not None else "feedforward"
        if kind == "feedforward" and self.plant is not None:
            raise RuntimeLayerError(f"parameter 'controller': feedforward (EJNEA) needs a flexible-joint robot; "
                                    f"{self.robot.name} has flexible links or rigid joints (use pd or decoupling)")
        if kind == "decoupling":
            elastic = [] if self.plant is None else [n for n in self.names if n not in self.robot.rigid_joints]
            extra = [] if self.plant is None else list(self.plant.elastic_names)
            if self.plant is None or not self.plant.m or elastic or extra:
                found = (f"elastic joints {elastic}" if elastic else f"extra elasticities {extra}" if extra
                         else "no flexible links")
                raise RuntimeLayerError(f"parameter 'controller': decoupling (seed 004) needs flexible links and rigid "
                                        f"joints; {self.robot.name} has {found}")
        return kind

    def _hold_law(self, q_d: np.ndarray) -> PDGravityCompensation:
        """PD + gravity compensation holding ``q_d`` with the YAML's gains (on the link-layer plant if there is one)."""
        return hold_controller(self.plant, q_d) if self.plant else PDGravityCompensation.create(self.robot, q_d)

    def _prepare(self, values: Any, changed: frozenset) -> Any:
        """Check a change (:meth:`_settings`) and return what installs it (see :mod:`.live_parameters`)."""
        settings = self._settings(values)
        steps = []
        if changed_any(changed, ("kp", "kd")):
            hold = self.hold.with_gains(settings["hold"].kp, settings["hold"].kd)  # same set point

            def gains() -> None:  # the law running now (hold, move, trajectory, additive command) and later ones
                self.hold = hold
                if hasattr(self.sim.controller, "with_gains"):
                    self.sim.set_gains(hold.kp, hold.kd)
            steps.append(gains)
        if "torque_command_mode" in changed and self.mode == "command":
            steps.append(lambda: self.sim.set_controller(self._command_controller()))
        if "set_point" in changed:
            steps.append(lambda: setattr(self, "home", settings["hold"].q_d))
        if "controller" in changed:
            steps.append(lambda: setattr(self, "controller", settings["controller"]))
        if "set_points" in changed:
            def set_points() -> None:  # the ~/set_point cycle restarts at the first new pose
                self.set_points, self.next_set_point = settings["set_points"], 0
            steps.append(set_points)
        if "impact.frame" in changed:
            steps.append(lambda: setattr(self, "frame", settings["frame"]))
        if "real_time_factor" in changed and self.state == "running":  # the new pace counts from now
            steps.append(lambda: setattr(self, "anchor", (time.monotonic(), self.sim.sample_index)))
        if "update_period_s" in changed:
            steps.append(lambda: self.ticks.set_period(values["update_period_s"]))
        if "pause_at_s" in changed:
            old, new = set(self._scheduled_pauses(self.p)), set(self._scheduled_pauses(values))
            steps.append(lambda: setattr(self, "pauses", sorted(set(self.pauses) - old | new)))
        if changed_any(changed, ("excitation.type", "excitation.first_s", "excitation.period_s")):
            new_type = values["excitation.type"] != self.p["excitation.type"]
            steps.append(lambda: self._reschedule(new_type))

        def commit() -> None:
            for step in steps:
                step()
        return commit

    def _reschedule(self, new_type: bool) -> None:
        """Next automatic excitation after a change of ``excitation.type/first_s/period_s``: ``first_s`` if still
        ahead, else one period after the last automatic excitation, not before the next sample. A random force in
        progress stops when the type changes."""
        p, t_next = self.p, (self.sim.sample_index + 1) / self.rate
        if p["excitation.first_s"] >= t_next:
            self.next_excitation = p["excitation.first_s"]
        elif self.last_excitation is not None:
            self.next_excitation = max(t_next, self.last_excitation + p["excitation.period_s"])
        else:
            self.next_excitation = t_next
        if new_type:
            self._set_excitations([e for e in self.excitations if not isinstance(e, RandomForce)])

    # ------------------------------------------------------------------ helpers
    def _pose(self, values: Any) -> np.ndarray:
        return self.robot.check_q(values, "set point")

    def _run(self, running: bool) -> None:
        if running and self.state in ("paused", "finished") and not self._finished():
            self.stamp_base = self.node.now() - self.sim.t if self.stamp_base is None else self.stamp_base
            self.anchor = (time.monotonic(), self.sim.sample_index)
            self.last_tick = time.monotonic()
            self.state = "running"
        elif not running and self.state == "running":
            self.state = "paused"

    def _scheduled_pauses(self, p: Any) -> list[int]:
        """Sample indices of the ``pause_at_s`` times (of the parameter values ``p``) still ahead, ascending."""
        samples = {int(round(t * self.rate)) for t in p["pause_at_s"]}
        return sorted(k for k in samples if k > self.sim.sample_index)

    def _finished(self) -> bool:
        end = self.p["duration_s"]
        return bool(end) and self.sim.t >= end - 0.5 / self.rate

    def _samples_due(self) -> int:
        if self.state != "running":
            return 0
        if self._finished():
            self.state = "finished"
            return 0
        wall, sample = self.anchor
        due = sample + int((time.monotonic() - wall) * self.p["real_time_factor"] * self.rate) - self.sim.sample_index
        if self.p["duration_s"]:
            due = min(due, int(round(self.p["duration_s"] * self.rate)) - self.sim.sample_index)
        limit = max(1, int(MAX_CATCH_UP_S * self.rate))
        if due > limit:
            self.overruns += 1
            self.behind_s += (due - limit) / self.rate
            self.node.log_once("overrun", f"the simulation fell more than {MAX_CATCH_UP_S:g} s (simulated) behind its "
                               f"real-time schedule (real-time factor {self.p['real_time_factor']:g}): it slows "
                               "down and still publishes every sample (logged once; overruns counted in diagnostics)")
            self.anchor = (time.monotonic(), self.sim.sample_index + limit)
            due = limit
        return due

    def _sim_time(self, stamp: Any) -> float:
        seconds = stamp.sec + 1e-9 * stamp.nanosec
        return self.sim.t if seconds == 0 or self.stamp_base is None else seconds - self.stamp_base

    def _command_controller(self) -> Any:
        if self.p["torque_command_mode"] == "effort":
            return TorqueInput(self.robot, lambda t: self.command)
        hold = self.hold
        return FeedforwardPD(self.robot, lambda t: hold.feedforward + self.command, hold.q_m_d,
                             np.zeros(self.robot.n), kp=hold.kp, kd=hold.kd)

    def _move_to(self, target: np.ndarray) -> None:
        """Move to ``target``: a Poly9 path tracked with the flexible-joint feedforward over ``set_point_move_s``, or
        a step of the PD set point (``set_point_move_s`` = 0, and always on flexible-link / rigid-joint plants,
        which the flexible-joint feedforward cannot represent). Nothing changes when the move cannot be planned."""
        target = self._pose(target)
        start = self.hold.q_d if self.mode == "hold" else self.sim.state[:self.robot.n]
        hold = self.hold.with_set_point(target)
        if self.p["set_point_move_s"] == 0 or self.controller == "pd":
            self.hold = hold
            self.sim.set_controller(hold)
            self.mode, self.move_end = "hold", None
            return
        path = Poly9Trajectory(start, target, self.p["set_point_move_s"], start_time=self.sim.t)
        if self.controller == "decoupling":  # tracks the path, then its LQR loop holds the target
            from flexrobot_ros.simulation.decoupling_control import DecouplingControl

            self.hold = hold
            self.sim.set_controller(DecouplingControl(self.plant, path))
            self.mode, self.move_end = "decoupling", None
            return
        motion = feedforward(self.robot, path, "ejnea", rate_hz=self.rate)
        self.hold = hold
        self.sim.set_controller(FeedforwardPD(self.robot, motion.tau_m, motion.q_m, motion.qd_m, motion.t,
                                              hold.kp, hold.kd))
        self.mode, self.move_end = "moving", float(motion.t[-1])

    def _excites(self) -> bool:
        return self.p["excitation.type"] != "none"

    def _schedule_excitations(self) -> None:
        """Apply the automatic excitations that start before the next sample."""
        kind, period = self.p["excitation.type"], self.p["excitation.period_s"]
        while self._excites() and self.next_excitation < (self.sim.sample_index + 1) / self.rate:
            t0 = self.next_excitation
            if kind == "impacts":
                excitation = RectangularPulse(self.frame, self.p["impact.force"], t0, t0 + self.p["impact.duration_s"])
            else:
                excitation = RandomForce(self.frame, self.p["excitation.rms"], tuple(self.p["excitation.band_hz"]),
                                         t0, t0 + period, seed=self.p["excitation.seed"] + self.excitation_count,
                                         sample_rate=self.rate)
            self._apply(excitation)
            self.last_excitation = t0
            self.next_excitation += period

    def _apply(self, excitation: Any) -> None:
        self._set_excitations(self.excitations)
        self.sim.apply(excitation)
        self.excitations.append(excitation)
        self.excitation_count += 1

    def _set_excitations(self, excitations: list[Any]) -> None:
        """Keep those of ``excitations`` that have not ended."""
        live = [e for e in excitations if e.t1 > self.sim.t]
        if len(live) < len(self.excitations):
            self.sim.clear_excitations()
            for old in live:
                self.sim.apply(old)
        self.excitations = live

    def _publish(self, output: Any) -> None:
        types, names, decimation = self.node.types, self.names, self.p["joint_states_decimation"]
        dynamic_every = self.p["dynamic_joint_states_decimation"]
        tf_every = round(self.rate / self.p["tf_rate_hz"]) if self.p["tf_rate_hz"] else 0
        clock_every = max(round(self.rate / self.p["clock_rate_hz"]), 1) if self.p["clock_rate_hz"] else 0
        shapes_every = max(round(self.rate / self.p["link_shapes_rate_hz"]), 1) \
            if self.shapes is not None and self.p["link_shapes_rate_hz"] else 0
        q_m = np.column_stack([output.sensors[f"motor_encoder.{joint}"] for joint in names])
        q = np.column_stack([output.sensors[f"link_encoder.{joint}"] for joint in names])
        tau_j = output.elastic_torque  # (samples, n) [N m], computed once per chunk
        held, held_q = self.held  # joint_states: the simulated joints, then the locked ones at rest
        at_rest = np.zeros((len(output.t), len(held)))
        link_names, link_q = names + held, np.hstack([q, at_rest + held_q])
        link_qd, link_tau = np.hstack([output.qd, at_rest]), np.hstack([tau_j, at_rest])
        first = self.sim.sample_index - len(output.t) + 1
        for k, t in enumerate(output.t):
            stamp = self.node.stamp(self.stamp_base + t)
            if clock_every and (first + k) % clock_every == 0:
                self.clock.publish(types.rosgraph_msgs.msg.Clock(clock=stamp))
            self.motor_states.publish(joint_state(types, stamp, names, q_m[k], output.qd_m[k], output.tau_m[k]))
            if dynamic_every and self.dynamic_joint_states is not None and (first + k) % dynamic_every == 0:
                self.dynamic_joint_states.publish(dynamic_joint_state(types, stamp, names, dict(zip(
                    SIMULATED_INTERFACES, (q[k], output.qd[k], tau_j[k], q_m[k], output.qd_m[k])))))
            if (first + k) % decimation == 0:
                self.joint_states.publish(joint_state(types, stamp, link_names, link_q[k], link_qd[k], link_tau[k]))
                if self.deflections is not None:
                    self.deflections.publish(multiarray(types, self.sim.plant.tip_deflections(
                        output.states[k:k + 1])[0], ("link", "direction")))
            if tf_every and self.tf is not None and (first + k) % max(tf_every, 1) == 0:
                transforms = link_transforms(self.robot, output.q[k])
                if self.deflections is not None:  # flexible links: their deformed end frames too
                    transforms += self.sim.plant.deformed_tip_transforms(output.states[k])
                self.tf.publish(tf_message(types, stamp, transforms))
            if shapes_every and (first + k) % shapes_every == 0:
                self.shapes.publish(beam_markers(types, stamp, self.sim.plant.beam_shapes(output.states[k])))
                if not tf_every and self.tf is not None:  # robot_state_publisher sends the link frames: the deformed
                    # tips still come from here
                    self.tf.publish(tf_message(types, stamp, self.sim.plant.deformed_tip_transforms(output.states[k])))


def count_or_off(output: Counted | None) -> int | str:
    """Messages an optional output published, or "off" where its message package is not installed."""
    return "off" if output is None else output.count


def beam_markers(types: Any, stamp: Any, shapes: Any, width: float = 0.05) -> Any:
    """``visualization_msgs/MarkerArray``: one LINE_STRIP per flexible link (namespace ``link_shapes``, id = its
    index) through its deformed beam axis ``(link, (k, 3))`` [m], in the link's own frame (tf places it)."""
    viz, geometry, std = types.visualization_msgs.msg, types.geometry_msgs.msg, types.std_msgs.msg
    markers = []
    for i, (link, points) in enumerate(shapes):
        item = viz.Marker(ns="link_shapes", id=i, type=viz.Marker.LINE_STRIP, action=viz.Marker.ADD)
        item.header.stamp, item.header.frame_id = stamp, link
        item.pose.orientation.w = 1.0
        item.scale.x = width
        item.color = std.ColorRGBA(r=0.1, g=0.5, b=0.9, a=1.0)
        item.points = [geometry.Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
        markers.append(item)
    return viz.MarkerArray(markers=markers)


def main(argv: list[str] | None = None) -> int:
    """Console script ``simulator_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(SimulatorNode, "simulator_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
