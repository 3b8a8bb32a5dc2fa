"""``flexrobot bringup simulation|hardware [ROBOT]``: the nodes as processes, a summary and plots.

Standalone bring-up on the DDS runtime (ROS 2 wire conventions, so a ROS 2 graph on the network sees the nodes), or
on rclpy with ``FLEXROBOT_RUNTIME=rclpy`` (the nodes and the bring-up's own node on one runtime, whose services
they call: :func:`runtime_of_bringup`): the same node programs and the same ROS 2 parameter files as
``ros2 launch flexrobot_ros <kind>.launch.py``
(``config/<robot>_<kind>.yaml`` when shipped, else ``config/<kind>.yaml``; ``--params`` overrides), started with
:mod:`flexrobot_ros.runtime.processes` and stopped cleanly at the end or on Ctrl-C.

``simulation`` starts simulator_node, feedforward_node, modal_monitor_node and oma_node; when the simulator publishes
``/clock`` (``clock_rate_hz`` > 0, the default) the other three run with ``use_sim_time`` true. With ``--duration T`` it
runs a scripted experiment in simulated time (seed 000 section 2.4.3 at two poses, joined by a feedforward move):

- [0, 0.35 T]: hold the simulator's ``set_point`` (Scompi: configuration 8, eq. 2.21); impact at 0.2 s (50 N
  along y0 for 6 ms); at 0.35 T the OMA node identifies its window (0.35 T - 0.1 s long): pose A;
- [0.35 T, 0.65 T]: a rest-to-rest 9th-order move to the first pose of ``set_points`` (none: 0.2 rad | m on the
  first three joints, within their limits: :func:`plan_poses`) sent as a desired JointTrajectory to the
  feedforward node, whose motor references drive the simulator (feedforward + motor PD);
- [0.65 T, T]: hold; impact at 0.65 T + 0.2 s; at T the OMA node identifies again: pose B.

The summary lists, per pose, the monitor's modes beside the OMA node's (a monitor mode is matched, and shown beside
an OMA mode, when that mode lies within 0.1 Hz and 0.5 damping points; modes above the encoders' Nyquist limit,
half of oma_node's ``sample_rate_hz``, are marked and not counted) and the move's tracking error max |q - q_d| from
joint_states (rad, or m for a prismatic joint). When no encoder data or link states arrived (hardware), it says so
instead.
Without ``--duration`` the nodes run with their own excitation until Ctrl-C and the latest modes are summarised.

``hardware`` starts feedforward_node, modal_monitor_node and oma_node on the robot's topics (``--encoders`` for
the OMA input, ``--joint-states`` for the monitor) until ``--duration`` wall-clock seconds or Ctrl-C, then asks
the OMA node for a last identification and summarises the latest modes.

On a robot whose driver publishes the URDF (robot_state_publisher, ros2_control: the latched ``robot_description``
topic in ``--namespace``), a flexibility YAML with ``urdf: robot_description``, or ``--urdf robot_description`` with
any YAML, makes every node and the bring-up's own node take it from there (:mod:`flexrobot_ros.nodes.
robot_description`: they wait up to ``robot_description_timeout``, 30 s; Ctrl-C ends the wait). The simulation
bring-up needs a URDF file: its simulator is the robot.

``--calibrate`` also starts calibration_node, calls its ``~/calibrate`` once and adds its before/after report to the
summary (:mod:`.bringup_calibration`); in simulation ``--true-yaml FILE`` is the robot the simulator runs while the
other nodes start from the nominal ROBOT.

``--record DIR`` records every topic into a rosbag2 bag; ``--plot-dir DIR`` writes PNG figures; ``--json`` prints the
summary as JSON on stdout (node output goes to stderr, each line prefixed with ``[node]``).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.commands.arguments import CommandError, add_deprecated, output_directory
from flexrobot_ros.commands.bag import StreamGaps, bag_gaps
from flexrobot_ros.commands.bringup_calibration import NODE as CALIBRATION_NODE
from flexrobot_ros.commands.bringup_calibration import SIMULATOR_OVERRIDES, CalibrationRun, format_calibration
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.nodes.silent_input import SILENT_INPUT_S

#: A monitor mode is matched by an OMA mode within these (seed 000 Table 2.5 agreement, issue 8 acceptance).
MATCH_FREQUENCY_HZ = 0.1
MATCH_DAMPING_POINTS = 0.5
#: Fractions of --duration: end of the first hold, end of the move.
HOLD_END, MOVE_END = 0.35, 0.65
#: Move of pose B from pose A on the first three joints when the parameter file gives no set_points [rad | m].
DEFAULT_STEP = 0.2
#: Shortest scripted experiment [s]: each OMA window then spans 1.35 s after the impact.
MINIMUM_DURATION_S = 4.0
NODES = {"simulation": ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node"),
         "hardware": ("feedforward_node", "modal_monitor_node", "oma_node")}


def runtime_of_bringup() -> str:
    """The runtime of the bring-up's nodes and of its own node (one runtime: services do not cross DDS vendors):
    ``$FLEXROBOT_RUNTIME`` (``rclpy`` or ``dds``) when set, else the standalone runtime, rclpy importable or not.

    Raises:
        RuntimeLayerError: ``$FLEXROBOT_RUNTIME`` names no runtime, or rclpy where it is not importable.
    """
    from flexrobot_ros.runtime import backend_name

    return backend_name() if os.environ.get("FLEXROBOT_RUNTIME", "").strip() else "dds"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``bringup``."""
    parser = subparsers.add_parser("bringup", help="start the nodes standalone (simulation or hardware), print a "
                                   "summary of modes and tracking, write plots",
                                   description="Start the four nodes (or three on a robot) as processes on the "
                                   "standalone DDS runtime, run a scripted experiment, print a summary of the modes "
                                   "and the tracking error, write plots.")
    parser.add_argument("kind", choices=sorted(NODES), help="simulation: with the simulator; hardware: on a robot")
    parser.add_argument("robot", nargs="?", help="shipped robot name or path to a flexibility YAML (default scompi)")
    add_deprecated(parser, "--robot", "the robot as a positional argument ('flexrobot bringup KIND ROBOT')",
                   "robot_option")
    parser.add_argument("--tool", action=argparse.BooleanOptionalAction, default=None,
                        help="with/without the YAML's tool (default: as the parameter file says)")
    parser.add_argument("--params", type=Path, help="ROS 2 parameter file (default config/<robot>_<kind>.yaml)")
    parser.add_argument("--duration", type=float, help="simulated seconds of the scripted experiment (simulation) "
                        "or wall-clock seconds (hardware); default: until Ctrl-C")
    parser.add_argument("--real-time-factor", type=float, default=None,
                        help="simulated seconds per wall second (default: the parameter file's)")
    parser.add_argument("--encoders", default="motor_states", help="hardware: JointState topic of the motor "
                        "encoders, the OMA input (default motor_states)")
    parser.add_argument("--joint-states", default="joint_states", help="hardware: JointState topic of the link "
                        "positions, the monitor input (default joint_states)")
    parser.add_argument("--namespace", default=None, help="namespace of every node")
    parser.add_argument("--urdf", choices=("robot_description",), help="hardware: every node takes the URDF from the "
                        "latched robot_description topic (the robot's driver or robot_state_publisher publishes it) "
                        "whatever file the flexibility YAML names; a YAML with urdf: robot_description does so anyway")
    parser.add_argument("--record", type=Path, help="record every topic into this rosbag2 directory")
    parser.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3", help="bag storage")
    parser.add_argument("--plot-dir", type=Path, metavar="DIR", help="write PNG figures into this directory")
    add_deprecated(parser, "--plots", "--plot-dir", "plot_dir", type=Path)
    parser.add_argument("--calibrate", action="store_true", help="start calibration_node too, calibrate once over the "
                        "poses of its parameter-file section and print the before/after report (no --duration)")
    parser.add_argument("--true-yaml", type=Path, metavar="FILE", help="simulation with --calibrate: the flexibility "
                        "YAML the simulator runs (the robot as built); the other nodes run the nominal ROBOT")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)


# ----------------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------------

def parameter_file(kind: str, robot: str) -> Path:
    """``config/<robot>_<kind>.yaml`` of the shipped files when it exists, else ``config/<kind>.yaml``."""
    from flexrobot_ros.model.loader import share_directory

    config = share_directory() / "config"
    name = Path(robot).stem if robot.endswith((".yaml", ".yml")) else robot
    specific = config / f"{name}_{kind}.yaml"
    return specific if specific.is_file() else config / f"{kind}.yaml"


def node_parameters(files: list[Path], name: str, namespace: str | None) -> dict[str, Any]:
    """The values a parameter file gives node ``name`` (what the node will see, before its defaults)."""
    from flexrobot_ros.runtime.params import parameters_for_node

    fqn = f"{(namespace or '').rstrip('/')}/{name}" if namespace else f"/{name}"
    return {key: value for key, (value, _) in parameters_for_node(files, fqn).items()}


def simulated_time(files: list[Path], namespace: str | None) -> bool:
    """Whether simulator_node publishes /clock with these parameter files (its ``clock_rate_hz`` > 0): the other
    nodes then run with ``use_sim_time`` (stamps and timers in simulated time, as rclpy nodes with a simulator)."""
    from flexrobot_ros.nodes.simulator_node import PARAMETERS

    default = next(spec.default for spec in PARAMETERS if spec.name == "clock_rate_hz")
    return float(node_parameters(files, "simulator_node", namespace).get("clock_rate_hz", default)) > 0


@dataclass
class Plan:
    """The scripted experiment in simulated time [s] (see the module docstring)."""

    duration: float
    start_pose: np.ndarray
    target_pose: np.ndarray

    @property
    def hold_end(self) -> float:
        return HOLD_END * self.duration

    @property
    def move_start(self) -> float:
        return self.hold_end + 0.3

    @property
    def move_end(self) -> float:
        return MOVE_END * self.duration

    def overrides(self) -> dict[str, dict[str, Any]]:
        """Parameter overrides per node that make the nodes follow the plan."""
        return {"simulator_node": {"duration_s": self.duration, "autostart": False, "excitation.type": "impacts",
                                   "excitation.first_s": 0.2, "excitation.period_s": self.move_end,
                                   "pause_at_s": [self.hold_end]},
                "oma_node": {"window_s": round(self.hold_end - 0.05, 6), "update_period_s": self.hold_end}}


def plan_poses(robot: Any, set_point: Any, set_points: Any) -> tuple[np.ndarray, np.ndarray]:
    """The scripted experiment's poses [rad | m]: pose A the simulator's ``set_point`` (empty: the pose the
    simulator holds, :attr:`~flexrobot_ros.model.FlexibleRobot.default_pose`, zeros clipped into the joint limits), pose B the first pose of ``set_points`` (empty: pose A moved
    by :data:`DEFAULT_STEP` on the first three joints, towards the farther limit where the step would cross one)."""
    lower, upper = np.asarray(robot.lower_limits), np.asarray(robot.upper_limits)
    start = robot.check_q(set_point if set_point else robot.default_pose, "set_point")
    if set_points:
        return start, robot.check_q(list(set_points)[:robot.n], "set_points")
    step = np.where(np.arange(robot.n) < 3, DEFAULT_STEP, 0.0)
    step = np.where((start + step > upper) & (upper - start < start - lower), -step, step)
    return start, np.clip(start + step, lower, upper)


# ----------------------------------------------------------------------------------------------------------------
# What the bring-up's own node sees
# ----------------------------------------------------------------------------------------------------------------

@dataclass
class Modes:
    """Natural frequencies [Hz] and damping ratios (fractions) from one source at one time."""

    frequencies_hz: list[float]
    damping_ratios: list[float]


@dataclass
class Collector:
    """Subscriptions of the bring-up node: link states, the modes of both nodes, everyone's diagnostics."""

    node: Any
    joints: tuple[str, ...]
    states: list[tuple[float, np.ndarray]] = field(default_factory=list)
    latest: dict[str, list[float]] = field(default_factory=dict)
    series: dict[str, list[tuple[float, list[float]]]] = field(default_factory=dict)
    status: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED

        types, node = self.node.types, self.node
        node.create_subscription(types.sensor_msgs.msg.JointState, "joint_states", self._on_state,
                                 QOS_DEFAULT.with_depth(5000))
        for topic in ("modal/frequencies", "modal/damping", "oma/frequencies", "oma/damping"):
            node.create_subscription(types.std_msgs.msg.Float64MultiArray, topic,
                                     lambda msg, topic=topic: self._on_modes(topic, msg), QOS_LATCHED)
        node.create_subscription(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics", self._on_diagnostics,
                                 QOS_DEFAULT.with_depth(100))

    def _on_state(self, msg: Any) -> None:
        from flexrobot_ros.nodes.convert import InputError, joint_values
        from flexrobot_ros.runtime.messages import time_seconds

        try:
            self.states.append((time_seconds(msg.header.stamp), joint_values(msg, self.joints)))
        except InputError:
            pass  # the nodes report bad input in their diagnostics; the summary uses what is usable

    def _on_modes(self, topic: str, msg: Any) -> None:
        from flexrobot_ros.runtime.messages import as_array

        values = as_array(msg.data).tolist()
        self.latest[topic] = values
        self.series.setdefault(topic, []).append((self.state_time(), values))

    def _on_diagnostics(self, msg: Any) -> None:
        for status in msg.status:
            self.status[status.name.split(":")[0]] = {kv.key: kv.value for kv in status.values}

    def state_time(self) -> float:
        """Stamp [s] of the newest link state (NaN before the first)."""
        return self.states[-1][0] if self.states else float("nan")

    def modes(self, source: str) -> Modes | None:
        """Latest modes of ``modal`` (the monitor) or ``oma``."""
        f, z = self.latest.get(f"{source}/frequencies"), self.latest.get(f"{source}/damping")
        return None if f is None or z is None or len(f) != len(z) else Modes(f, z)

    def value(self, node_name: str, key: str) -> str:
        """Newest diagnostics value ``key`` of the node ``node_name`` ("" before it reported one)."""
        return next((values[key] for name, values in self.status.items()
                     if name.endswith("/" + node_name) and key in values), "")

    def simulator(self, key: str) -> str:
        return self.value("simulator_node", key)


def match_modes(monitor: Modes | None, oma: Modes | None, nyquist_hz: float = float("inf")) -> list[dict[str, Any]]:
    """Each monitor mode, paired with an OMA mode only when they agree within the tolerances (MATCH_FREQUENCY_HZ,
    MATCH_DAMPING_POINTS); each OMA mode pairs with one monitor mode at most (closest frequencies first). Monitor
    modes at or above ``nyquist_hz`` (half the encoder sample rate) cannot be seen in the encoder data: they are
    marked ``above_nyquist`` and never paired."""
    rows: list[dict[str, Any]] = []
    for f, z in zip(monitor.frequencies_hz if monitor else [], monitor.damping_ratios if monitor else []):
        rows.append({"monitor_hz": f, "monitor_damping": z, "oma_hz": None, "oma_damping": None, "matched": False,
                     "above_nyquist": bool(f >= nyquist_hz)})
    if not oma or not oma.frequencies_hz:
        return rows
    candidates = sorted(
        (abs(fo - row["monitor_hz"]), i, k)
        for i, row in enumerate(rows) if not row["above_nyquist"]
        for k, (fo, zo) in enumerate(zip(oma.frequencies_hz, oma.damping_ratios))
        if abs(fo - row["monitor_hz"]) <= MATCH_FREQUENCY_HZ
        and abs(zo - row["monitor_damping"]) * 100 <= MATCH_DAMPING_POINTS)
    used: set[int] = set()
    for _, i, k in candidates:
        if rows[i]["matched"] or k in used:
            continue
        rows[i].update(oma_hz=oma.frequencies_hz[k], oma_damping=oma.damping_ratios[k], matched=True)
        used.add(k)
    return rows


# ----------------------------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------------------------

class BringUp:
    """One bring-up: processes, the bring-up node, the scripted experiment, the summary."""

    def __init__(self, args: argparse.Namespace) -> None:
        from flexrobot_ros.model import load_robot
        from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, uses_topic
        from flexrobot_ros.runtime.processes import NodeLaunch

        self.args = args
        self.files = [args.params or parameter_file(args.kind, args.robot)]
        if not self.files[0].is_file():
            raise RuntimeLayerError(f"parameter file {self.files[0]} does not exist")
        names = NODES[args.kind] + ((CALIBRATION_NODE,) if args.calibrate else ())
        given = {name: node_parameters(self.files, name, args.namespace) for name in names}
        tool = args.tool if args.tool is not None else bool(given[NODES[args.kind][-1]].get("tool", False))
        #: the URDF parameters of the nodes (robot_description.PARAMETERS), for this command's own node too
        self.urdf = {spec.name: given[NODES[args.kind][-1]].get(spec.name, spec.default) for spec in URDF_PARAMETERS}
        self.urdf["urdf"] = args.urdf or self.urdf["urdf"]
        from_topic = uses_topic(args.robot, self.urdf["urdf"])
        if args.kind == "simulation" and from_topic:
            raise CommandError(f"bringup simulation {args.robot}: the URDF would come from the robot_description "
                               "topic (urdf: robot_description), but the simulator is the robot and publishes it: "
                               "give a flexibility YAML whose urdf is a file")
        #: the robot; with the URDF on robot_description, loaded from there once this command's node is up (run)
        self.robot = None if from_topic else load_robot(args.robot, tool=tool)
        self.tool = tool
        #: Half the encoder sample rate [Hz] (oma_node's sample_rate_hz): modes above it are invisible to OMA.
        self.nyquist_hz = 0.5 * float(given["oma_node"].get("sample_rate_hz", 1000.0))
        self.plan = None
        if args.kind == "simulation" and args.duration:
            simulator = given["simulator_node"]
            start, target = plan_poses(self.robot, simulator.get("set_point"), simulator.get("set_points"))
            if args.duration < MINIMUM_DURATION_S:
                raise RuntimeLayerError(f"--duration {args.duration:g}: the scripted experiment needs at least "
                                        f"{MINIMUM_DURATION_S:g} simulated seconds (two holds of 0.35 T around the "
                                        "impacts, a move of 0.3 T)")
            self.plan = Plan(float(args.duration), start, target)
        overrides = self.plan.overrides() if self.plan else {}
        if args.calibrate and args.kind == "simulation":
            overrides["simulator_node"] = {**SIMULATOR_OVERRIDES, **({"robot": str(args.true_yaml)}
                                                                     if args.true_yaml else {})}
        self.rtf = args.real_time_factor or float(given.get("simulator_node", {}).get("real_time_factor", 1.0))
        common = {"robot": args.robot, "tool": tool, **({"urdf": args.urdf} if args.urdf else {})}
        #: non-simulator nodes follow the simulator's /clock (unless the parameter file says otherwise)
        self.sim_time = args.kind == "simulation" and simulated_time(self.files, args.namespace)
        #: the runtime of the nodes and of this command's own node: services do not cross DDS vendors
        self.backend = runtime_of_bringup()
        env = {"FLEXROBOT_RUNTIME": self.backend, "PYTHONUNBUFFERED": "1"}
        remap = {"oma_node": {"motor_states": args.encoders}, "modal_monitor_node": {"joint_states": args.joint_states}}
        self.launches = []
        for name in names:
            parameters = {**common, **overrides.get(name, {})}
            if self.sim_time and name != "simulator_node" and "use_sim_time" not in given[name]:
                parameters["use_sim_time"] = True
            if name == "simulator_node" and args.real_time_factor:
                parameters["real_time_factor"] = float(args.real_time_factor)
            self.launches.append(NodeLaunch(name, module=f"flexrobot_ros.nodes.{name}", namespace=args.namespace,
                                            parameter_files=tuple(str(f) for f in self.files), parameters=parameters,
                                            remappings=remap.get(name, {}) if args.kind == "hardware" else {},
                                            env=env, required=name == "simulator_node"))
        self.phases: list[dict[str, Any]] = []
        self.calibration: CalibrationRun | None = None
        self.trajectory: Any = None
        self.reason = ""
        self.signal: int | None = None  # the signal that stopped the run (SIGINT: Ctrl-C), if any
        self.node: Any = None  # this command's own node, once run() made it

    def run(self) -> dict[str, Any]:
        from flexrobot_ros.nodes.robot_description import load_node_robot
        from flexrobot_ros.runtime import StopRequested, create_node
        from flexrobot_ros.runtime.processes import Launcher

        stop = threading.Event()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        def stop_on(sig: int, _frame: Any) -> None:
            self.signal = sig
            stop.set()
            if self.node is not None:
                self.node.request_stop()  # ends the wait for robot_description

        for sig in previous:
            signal.signal(sig, stop_on)
        launcher = Launcher(self.launches, output=sys.stderr, grace_s=5.0)
        node = recorder = None
        started = time.monotonic()
        try:
            launcher.start()
            node = self.node = create_node("flexrobot_bringup", namespace=self.args.namespace, backend=self.backend)
            if self.robot is None:
                try:
                    self.robot = load_node_robot(node, {"robot": self.args.robot, "tool": self.tool, **self.urdf})
                except StopRequested:
                    raise KeyboardInterrupt from None  # Ctrl-C while waiting for the URDF: nothing ran to summarise
            self.collector = Collector(node, self.robot.joint_names)
            self.launcher, self.stop = launcher, stop
            if self.args.record:  # on the standalone runtime either way: it only listens, and topics cross vendors
                from flexrobot_ros.runtime.bags import BackgroundRecorder, BagRecorder

                recorder = (BagRecorder(node, self.args.record, None, self.args.storage) if self.backend == "dds" else
                            BackgroundRecorder(self.args.record, None, self.args.storage, self.args.namespace))
            self.calibration = CalibrationRun(node, self.args.namespace) if self.args.calibrate else None
            self._prepare()
            exited = set(launcher.exited())
            up = [launch.name for launch in self.launches if launch.name not in exited]
            if exited:
                print(f"flexrobot bringup: {', '.join(sorted(exited))} exited during start-up (output above)",
                      file=sys.stderr, flush=True)
            if not self._alive():
                self.reason = ("stopped" if self.stop.is_set() else
                               f"{', '.join(sorted(exited))} exited during start-up")
            else:
                doing = ("calibrating" if self.calibration else "running the experiment" if self.plan
                         else "running until Ctrl-C")
                print(f"flexrobot bringup: {len(up)} of {len(self.launches)} nodes up ({', '.join(up)}); {doing}",
                      file=sys.stderr, flush=True)
                self.reason = (self._calibrate() if self.calibration else self._experiment() if self.plan
                               else self._free_run())
        finally:
            results = launcher.shutdown()
            bag = recorder.close() if recorder is not None else None
            if node is not None:
                node.destroy()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self._summary(results, bag, time.monotonic() - started)

    # ------------------------------------------------------------------ steps
    def _spin(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.node.spin_once(min(0.05, max(0.0, deadline - time.monotonic())))

    def _alive(self) -> bool:
        required = {launch.name for launch in self.launches if launch.required}
        return not self.stop.is_set() and not (set(self.launcher.exited()) & required)

    def _serving(self, node_name: str | None) -> bool:
        """Whether a call to ``node_name`` may still complete: the run is alive, or it was stopped (a signal to
        this process) and that node still runs, so the closing snapshot gets its answer."""
        return self._alive() or (node_name is not None and node_name not in self.launcher.exited())

    def _client(self, node_name: str, service: str, srv: str = "Trigger") -> Any:
        return self.node.create_client(getattr(self.node.types.std_srvs.srv, srv), f"{node_name}/{service}")

    def _call(self, client: Any, request: Any, timeout: float = 60.0, node_name: str | None = None) -> Any:
        """A service call that keeps this node's subscriptions served; None on failure or timeout. With
        ``node_name`` it also completes after a stop, while that node runs (:meth:`_serving`)."""
        future = client.call_async(request, timeout)
        while not future.done() and self._serving(node_name):
            self.node.spin_once(0.02)
        try:
            return future.result(timeout=0) if future.done() else None
        except Exception as error:  # the service's node died or timed out: the summary says what is missing
            print(f"flexrobot bringup: {client.srv_name}: {error}", file=sys.stderr)
            return None

    def _prepare(self) -> None:
        """Wait (up to 90 s) for every node's services and subscriptions, then for discovery to settle."""
        names = [launch.name for launch in self.launches]
        self.identify = self._client("oma_node", "identify")
        waits = [self.identify, self._client("modal_monitor_node", "map")]
        if "simulator_node" in names:
            self.run_client = self._client("simulator_node", "run", "SetBool")
            waits.append(self.run_client)
        if self.calibration is not None:
            waits.append(self.calibration.client)
        self.desired = self.node.create_publisher(self.node.types.trajectory_msgs.msg.JointTrajectory,
                                                  "desired_trajectory")
        links = [(node, key) for node, key, pair in (
            ("simulator_node", "motor_states subscribers", {"simulator_node", "oma_node"}),
            ("feedforward_node", "motor_trajectory subscribers", {"feedforward_node", "simulator_node"}))
            if pair <= set(names)]
        deadline = time.monotonic() + 90.0
        while time.monotonic() < deadline and self._alive():
            if all(client.service_is_ready() for client in waits) and self.desired.get_subscription_count() and \
                    all(self._count(node, key) > 0 for node, key in links):
                break  # services up; encoders -> OMA and feedforward -> simulator matched (no sample lost)
            self._spin(0.1)
        else:
            if self._alive():
                raise RuntimeLayerError("the nodes did not come up within 90 s (see their output above)")
        if "oma_node" in names and "simulator_node" not in names:  # on a robot: wait for its encoders a while
            limit = time.monotonic() + SILENT_INPUT_S  # oma_node itself warns when none arrived by then
            while self._alive() and time.monotonic() < limit and not self._count("oma_node", "samples received"):
                self._spin(0.1)
        self._spin(1.0)

    def _count(self, node_name: str, key: str) -> int:
        """An integer diagnostics value of ``node_name`` (0 before it reported one)."""
        return int(self.collector.value(node_name, key) or 0)

    def _sim_time(self) -> float:
        base = self.collector.simulator("stamp at t = 0 [s]")
        return self.collector.state_time() - float(base) if base else float("nan")

    def _wait_sim(self, until: float, paused: bool = False) -> bool:
        """Until simulated time ``until`` [s] (``paused``: until the simulator has paused there by itself)."""
        limit = time.monotonic() + 60.0 + until / self.rtf * 3.0
        while self._alive() and time.monotonic() < limit:
            state = self.collector.simulator("state")
            if paused:
                reached = state == "paused" and float(self.collector.simulator("simulated time [s]")) >= until - 1e-3
            else:
                reached = self._sim_time() >= until - 0.02
            if reached or state == "finished":
                return True
            self.node.spin_once(0.02)
        return False

    def _wait_for_oma(self, timeout_s: float = 10.0) -> None:
        """Until the OMA node has taken the encoder samples up to the newest link state seen here (on a loaded
        machine it can lag the stream: identifying earlier would miss the end of the window)."""
        target, limit = self.collector.state_time(), time.monotonic() + timeout_s
        while np.isfinite(target) and self._serving("oma_node") and time.monotonic() < limit:
            stamp = self.collector.value("oma_node", "last sample stamp [s]")
            if stamp and float(stamp) >= target - 1e-5:  # the diagnostics print stamps to 1 us
                return
            self.node.spin_once(0.05)

    def _snapshot(self, name: str, pose: np.ndarray) -> None:
        self._wait_for_oma()
        response = self._call(self.identify, self.node.types.std_srvs.srv.Trigger.Request(), node_name="oma_node")
        self._spin(0.3)  # the identification's topics and the monitor's latest modes arrive
        monitor, oma = self.collector.modes("modal"), self.collector.modes("oma")
        rows = match_modes(monitor, oma, self.nyquist_hz)
        self.phases.append({"name": name, "q": pose.tolist(), "time_s": self._sim_time(),
                            "identify": None if response is None else response.message,
                            "monitor": None if monitor is None else monitor.__dict__,
                            "oma": None if oma is None else oma.__dict__, "modes": rows,
                            "matched": sum(row["matched"] for row in rows),
                            "observable": sum(not row["above_nyquist"] for row in rows),
                            "encoder_samples": self._count("oma_node", "samples received"),
                            "link_states": len(self.collector.states)})

    def _run_simulator(self, running: bool) -> None:
        self._call(self.run_client, self.node.types.std_srvs.srv.SetBool.Request(data=running))

    def _experiment(self) -> str:
        from flexrobot_ros.dynamics import Poly9Trajectory, trajectory_from_joint_trajectory
        from flexrobot_ros.nodes.convert import joint_trajectory

        plan = self.plan
        self._run_simulator(True)
        deadline = time.monotonic() + 10.0
        while not self.collector.simulator("stamp at t = 0 [s]") and self._alive() and time.monotonic() < deadline:
            self.node.spin_once(0.02)
        if not self.collector.simulator("stamp at t = 0 [s]"):
            return "stopped" if self.stop.is_set() else "no clock from the simulator"
        start = float(self.collector.simulator("stamp at t = 0 [s]")) + plan.move_start
        path = Poly9Trajectory(plan.start_pose, plan.target_pose, plan.move_end - plan.move_start)
        waypoints = path.evaluate(np.linspace(path.start_time, path.end_time, 16))
        msg = joint_trajectory(self.node.types, self.node.stamp(start), self.robot.joint_names, waypoints.t,
                               waypoints.q, waypoints.qd, waypoints.qdd)
        self.trajectory = (start, trajectory_from_joint_trajectory(msg, self.robot.joint_names))
        self.desired.publish(msg)
        if not self._wait_sim(plan.hold_end, paused=True):  # the simulator pauses there by itself (pause_at_s)
            return "stopped" if self.stop.is_set() else "simulator ended early"
        self._snapshot("pose A", plan.start_pose)   # on a window that ends exactly before the move
        self._run_simulator(True)
        if not self._wait_sim(plan.duration):
            return "stopped" if self.stop.is_set() else "simulator ended early"
        self._snapshot("pose B", plan.target_pose)
        return "finished"

    def _calibrate(self) -> str:
        """Run the simulator (if any), then one calibration (:mod:`.bringup_calibration`)."""
        if self.args.kind == "simulation":
            self._run_simulator(True)
        return self.calibration.run(self._call, self._alive)

    def _free_run(self) -> str:
        if self.args.kind == "simulation":
            self._call(self.run_client, self.node.types.std_srvs.srv.SetBool.Request(data=True))
        deadline = None if self.args.duration is None else time.monotonic() + self.args.duration
        while self._alive() and (deadline is None or time.monotonic() < deadline):
            self.node.spin_once(0.05)
        reason = "stopped" if self.stop.is_set() else "deadline" if self._alive() else "simulator ended"
        pose = self.collector.states[-1][1] if self.collector.states else np.full(self.robot.n, np.nan)
        if not set(self.launcher.exited()) & {"oma_node"}:
            self._snapshot("latest", pose)
        return reason

    # ------------------------------------------------------------------ results
    def _tracking(self) -> dict[str, Any] | None:
        if self.trajectory is None or not self.collector.states:
            return None
        start, path = self.trajectory
        t = np.array([s for s, _ in self.collector.states]) - start
        q = np.array([v for _, v in self.collector.states])
        inside = (t >= path.start_time) & (t <= path.end_time)
        if not np.any(inside):
            return None
        from flexrobot_ros.model.flexible_robot import angle_or_length

        error = q[inside] - path.evaluate(t[inside]).q
        worst = np.unravel_index(np.argmax(np.abs(error)), error.shape)
        return {"max_error": float(np.abs(error).max()), "joint": self.robot.joint_names[worst[1]],
                "unit": angle_or_length(self.robot.joint_types[worst[1]]),
                "rms_error": float(np.sqrt(np.mean(error**2))), "samples": int(inside.sum()),
                "t": t[inside].tolist(), "error": error.tolist()}

    def _pace(self) -> dict[str, Any] | None:
        """The simulator's pace from its newest diagnostics: real-time factor requested and achieved over its
        running time, overruns and the simulated seconds its schedule gave up (None without a simulator report)."""
        achieved = self.collector.simulator("real-time factor (achieved, running)")
        if not achieved:
            return None
        return {"real_time_factor_requested": float(self.collector.simulator("real-time factor (target)")),
                "real_time_factor_achieved": float(achieved),
                "overruns": int(self.collector.simulator("overruns")),
                "behind_schedule_s": float(self.collector.simulator("behind schedule [s]")),
                "running_wall_time_s": float(self.collector.simulator("running wall time [s]"))}

    def _summary(self, results: list[Any], bag: Any, elapsed: float) -> dict[str, Any]:
        tracking = self._tracking()
        summary = {
            "kind": self.args.kind, "robot": self.robot.name, "calibrate": bool(self.args.calibrate),
            "tool": self.tool, "parameter_files":
            [str(f) for f in self.files], "duration_s": self.args.duration, "real_time_factor": self.rtf,
            "stopped": self.reason, "signal": None if self.signal is None else signal.Signals(self.signal).name,
            "wall_time_s": elapsed, "phases": self.phases, "nyquist_hz": self.nyquist_hz,
            "encoders": self.args.encoders if self.args.kind == "hardware" else "motor_states",
            "joint_states": self.args.joint_states if self.args.kind == "hardware" else "joint_states",
            "tracking": None if tracking is None else {k: v for k, v in tracking.items() if k not in ("t", "error")},
            "nodes": [{"name": r.name, "returncode": r.returncode, "stopped_by": r.stopped_by} for r in results],
            "diagnostics": self.collector.status if hasattr(self, "collector") else {},
            "simulator": self._pace() if hasattr(self, "collector") else None,
            "bag": None if bag is None else {"path": str(bag.path), "messages": bag.message_count,
                                             "topics": bag.counts(), "gaps": [g.as_dict() for g in bag_gaps(bag.path)]},
            "plots": [],
            "calibration": None if self.calibration is None else self.calibration.report,
        }
        if self.args.plot_dir is not None and hasattr(self, "collector"):
            from flexrobot_ros.commands.bringup_plots import plot_bringup

            summary["plots"] = [str(p) for p in plot_bringup(self.args.plot_dir, summary, self.collector.series,
                                                               self.collector.states, tracking,
                                                               self.robot.joint_names)]
        return summary


def format_phase(phase: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    """One pose of the summary: what data were missing, the monitor's modes beside the OMA modes matched to them,
    and the count (modes above the encoders' Nyquist limit are marked and not counted)."""
    nyquist = summary.get("nyquist_hz", float("inf"))
    missing = []
    if phase.get("encoder_samples", 1) == 0 and not phase.get("oma"):
        missing.append(f"no encoder data arrived on {summary.get('encoders', 'motor_states')} (oma_node received "
                       "no sample; is the robot publishing? check --encoders)")
    if phase.get("link_states", 1) == 0 and not phase.get("monitor"):
        missing.append(f"no link states arrived on {summary.get('joint_states', 'joint_states')} (check "
                       "--joint-states)")
    where = (f": q = {np.round(phase['q'], 4).tolist()}, t = {phase['time_s']:.2f} s"
             if np.isfinite(phase["time_s"]) and np.all(np.isfinite(phase["q"])) else ":")
    lines = [f"\n{phase['name']}{where}"] + [f"  {text}" for text in missing]
    if not phase["modes"]:
        return lines
    lines.append("  mode   monitor f [Hz]  zeta [%]      OMA f [Hz]  zeta [%]    df [Hz]  dzeta [pt]")
    for k, row in enumerate(phase["modes"], 1):
        monitor = f"  {k:4d}  {row['monitor_hz']:14.4f}  {100 * row['monitor_damping']:8.3f}"
        if row["matched"]:
            lines.append(f"{monitor}  {row['oma_hz']:14.4f}  {100 * row['oma_damping']:8.3f}  "
                         f"{row['oma_hz'] - row['monitor_hz']:9.4f}  "
                         f"{100 * (row['oma_damping'] - row['monitor_damping']):10.3f}")
        elif row.get("above_nyquist"):
            lines.append(f"{monitor}  {'(above the ' + format(nyquist, 'g') + ' Hz Nyquist limit)':>46}")
        else:
            lines.append(f"{monitor}  {'(not matched)':>14}")
    observable = phase.get("observable", len(phase["modes"]))
    above = len(phase["modes"]) - observable
    lines.append(f"  {phase['matched']} of {observable} monitor modes matched by an OMA mode within "
                 f"{MATCH_FREQUENCY_HZ} Hz and {MATCH_DAMPING_POINTS} damping points"
                 + (f" ({above} more above the {nyquist:g} Hz Nyquist limit of the encoders, not counted)"
                    if above else "") + ("" if phase.get("oma") else "; no OMA modes"))
    return lines


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as text: per pose, the monitor's and OMA's modes side by side; tracking; nodes; files."""
    lines = [f"flexrobot bringup {summary['kind']}: {summary['robot']}{' + tool' if summary['tool'] else ''}, "
             f"stopped: {summary['stopped']} after {summary['wall_time_s']:.1f} s wall clock"]
    for phase in summary["phases"]:
        lines += format_phase(phase, summary)
    if summary.get("calibration") is not None or summary.get("calibrate"):
        lines += format_calibration(summary.get("calibration"))
    tracking = summary["tracking"]
    if tracking:
        lines.append(f"\nmove: max |q - q_d| = {tracking['max_error']:.3e} {tracking['unit']} ({tracking['joint']}), "
                     f"RMS over all joints {tracking['rms_error']:.3e} (rad for revolute, m for prismatic joints) "
                     f"over {tracking['samples']} link-state samples")
    pace = summary.get("simulator")
    if pace:
        lines.append(f"\nsimulator: real-time factor {pace['real_time_factor_achieved']:.3g} achieved of "
                     f"{pace['real_time_factor_requested']:g} requested over {pace['running_wall_time_s']:.1f} s "
                     f"running; {pace['overruns']} overruns (times it gave up catching up), "
                     f"{pace['behind_schedule_s']:.3f} s of simulated time behind schedule (slowed down, no sample "
                     "dropped)")
    lines.append("\nnodes: " + ", ".join(f"{n['name']} exit {n['returncode']} ({n['stopped_by']})"
                                         for n in summary["nodes"]))
    if summary["bag"]:
        lines.append(f"bag: {summary['bag']['path']} ({summary['bag']['messages']} messages on "
                     f"{len(summary['bag']['topics'])} topics)")
        lines += [f"  {StreamGaps.from_dict(gaps).describe()}" for gaps in summary["bag"].get("gaps", [])]
    if summary["plots"]:
        lines.append("plots: " + ", ".join(summary["plots"]))
    return "\n".join(lines)


def robot_argument(args: argparse.Namespace) -> str:
    """The robot: the positional argument, or the deprecated ``--robot`` (not both, unless they agree), else
    scompi."""
    if args.robot and args.robot_option and args.robot != args.robot_option:
        raise CommandError(f"robot {args.robot!r} and --robot {args.robot_option!r}: name the robot once")
    return args.robot or args.robot_option or "scompi"


def run(args: argparse.Namespace) -> int:
    """``flexrobot bringup``: 0 when every node stopped cleanly, 1 otherwise; stopped by a signal, 128 + its number
    (Ctrl-C: 130, as every command) after the summary."""
    args.robot = robot_argument(args)
    if args.plot_dir is not None:
        output_directory(args.plot_dir, "--plot-dir")
    if args.record is not None:
        if args.record.exists():
            raise CommandError(f"--record {args.record}: already exists; a bag is written to a new directory")
        output_directory(args.record.parent, "--record", args.record)
    if args.duration is not None and not args.duration > 0:
        raise CommandError(f"--duration {args.duration:g}: expected a positive number of seconds")
    if args.calibrate and args.duration is not None and args.kind == "simulation":
        raise CommandError("--calibrate runs its own sweep (the poses of the calibration_node section); leave out "
                           "--duration")
    if args.true_yaml is not None:
        if not (args.calibrate and args.kind == "simulation"):
            raise CommandError("--true-yaml: only with 'bringup simulation ... --calibrate' (the simulator's robot)")
        if not args.true_yaml.is_file():
            raise CommandError(f"--true-yaml {args.true_yaml}: no such file")
    summary = BringUp(args).run()
    print(json.dumps(summary) if args.json else format_summary(summary))
    if summary["signal"] is not None:
        return 128 + signal.Signals[summary["signal"]].value
    clean = all(n["returncode"] == 0 for n in summary["nodes"])
    return 0 if clean else 1
