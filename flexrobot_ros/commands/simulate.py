"""``flexrobot simulate ROBOT``: simulate a robot held by PD + gravity compensation, with impacts, to CSV/NPZ/rosbag2.

Example (seed 000 section 2.4.3, case 2)::

    flexrobot simulate scompi --tool --q0 0,-0.37399913,1.94479545,0,-1.94479545,0 --duration 3 --rate 1000 \\
        --impact "tool0,0,50,0,0.2,0.206" --out impact.csv --plot impact.png

The format follows ``--out``'s suffix:

* ``.csv`` / ``.npz``: a time series with ``t`` [s] first, then ``q.<joint>``, ``q_m.<joint>``, ``qd.<joint>``,
  ``qd_m.<joint>``, ``tau_m.<joint>``, ``tau_j.<joint>`` (and ``energy.<term>`` with ``--energy``); see
  :mod:`flexrobot_ros.timeseries`.
* no suffix (e.g. ``--out impact_bag``): a new rosbag2 bag directory (``--storage sqlite3``, the default, or
  ``mcap``; ROS 2 Jazzy message definitions) with one sensor_msgs/msg/JointState per sample on each of
  ``/motor_states`` (position q_m, velocity qd_m, effort tau_m: motor side, after the gear) and ``/joint_states``
  (position q, velocity qd, effort tau_j: link side, effort = elastic joint torque); ``--bag-topics`` picks
  one of them. ``header.stamp`` and the bag time are the simulated time, starting at 0 s (1970-01-01 in
  ``ros2 bag info``); see :mod:`flexrobot_ros.runtime.bag_writer`. ``flexrobot oma BAG`` names the channels
  ``motor_states.position.<joint>`` etc.

Any other suffix is an error.

Robots with flexible links or rigid joints (e.g. ``canadarm``) are simulated by the composed model's
:class:`flexrobot_ros.simulation.elastic_robot_plant.ElasticRobotPlant` (``--compiled``: generated C), and the
time series gains ``deflection.<link>.y`` (and ``.z``) [m], the links' tip deflections. ``--open-loop TRAJECTORY``
drives the joints with the rigid model's torques along a trajectory file (seed 003 section 7.1)::

    flexrobot simulate canadarm --open-loop config/canadarm_trajectory.yaml --duration 10 --out canadarm.csv

``--feedforward FILE`` runs a feedforward file (the CSV/NPZ ``flexrobot feedforward --out`` writes) through the
simulator under the motor PD (``--kp``/``--kd``, default the robot's shipped gains) about its motor reference,
``tau_m = tau_ff + K_P (q_m^ref - q_m) + K_D (qd_m^ref - qd_m)``, for the file's span unless ``--duration`` says
otherwise: it starts at the rest state of the file's first sample under that law (:func:`feedforward_law`; a file
whose first sample moves is refused), and after the file's end holds the last motor pose with its static torque
(the file's last torque when the file ends at rest, else the plant's static torque at the last link pose); the time
series gains ``error.<joint>`` = q - q_ref(t) [rad | m], and the closing line reports the worst joint error [rad | m]
and the largest tip deflection [mm]::

    flexrobot feedforward canadarm --trajectory config/canadarm_trajectory.yaml --out canadarm_ff.csv
    flexrobot simulate canadarm --feedforward canadarm_ff.csv --compiled --out canadarm_tracking.csv
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from flexrobot_ros.commands.arguments import (LINK_MODELS, CommandError, add_deprecated, add_link_model_arguments,
                                              add_vector, gains, output_directory, output_file, vector, within_limits)
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.commands.run_summary import describe, held, tracking
from flexrobot_ros.errors import SimulationError
from flexrobot_ros.simulation.excitation import RectangularPulse
from flexrobot_ros.simulation.integrators import ACCURATE_METHODS, AccurateIntegration, FixedStepIntegration
from flexrobot_ros.timeseries import SUFFIXES, write_timeseries

if TYPE_CHECKING:  # the robot model and the simulator load pinocchio and scipy: imported in run, not for --help
    from flexrobot_ros.simulation.simulation import Simulation, SimulationOutput

#: Bag topics and what they carry: (position, velocity, effort) attributes of the simulation output.
BAG_TOPICS = {"motor_states": ("q_m", "qd_m", "tau_m"), "joint_states": ("q", "qd", "elastic_torque")}
#: Storage back ends of a bag written by ``--out DIR`` (as ``ros2 bag record --storage``).
BAG_STORAGES = ("sqlite3", "mcap")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("simulate",
                                   help="simulate PD-held robot with impacts, write CSV/NPZ/rosbag2 (+ plot)",
                                   description="Simulate a robot held by its motor PD controller with gravity "
                                   "compensation, with impacts; write a CSV/NPZ time series or a rosbag2 bag.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    add_vector(parser, "--q0", help="initial link positions [rad | m], comma- or space-separated (default zeros); "
               "the robot starts at rest with the springs carrying gravity")
    add_vector(parser, "--set-point", help="PD set point q_d (default: q0)")
    add_vector(parser, "--kp", metavar="KP",
               help="motor PD stiffness K_P [N m/rad]: one value or one per joint (default: the YAML's)")
    add_vector(parser, "--kd", metavar="KD",
               help="motor PD damping K_D [N m s/rad]: one value or one per joint (default: the YAML's)")
    parser.add_argument("--duration", type=float,
                        help="simulated time [s] (default 3, or the span of the --feedforward file)")
    parser.add_argument("--rate", type=float, default=1000.0, help="output sample rate [Hz] (default 1000)")
    parser.add_argument("--impact", action="append", default=[], metavar="FRAME,FX,FY,FZ,T0,T1",
                        help="rectangular force pulse [N] in world axes at a frame during [T0, T1) s; 'FRAME,FX,FY,FZ,"
                             "MX,MY,MZ,T0,T1' adds a moment [N m]; repeatable")
    parser.add_argument("--mode", choices=("fixed", "accurate"), default="fixed",
                        help="fixed-step real-time (default) or accurate variable-step integration")
    parser.add_argument("--substeps", type=int, default=1, help="fixed mode: integration steps per sample")
    parser.add_argument("--solver", choices=ACCURATE_METHODS, default="LSODA",
                        help="accurate mode: the ODE solver of scipy's solve_ivp (default LSODA)")
    add_deprecated(parser, "--method", "--solver", "solver", choices=ACCURATE_METHODS)
    parser.add_argument("--rtol", type=float, default=1e-10, help="accurate mode: relative tolerance")
    parser.add_argument("--atol", type=float, default=1e-12, help="accurate mode: absolute tolerance")
    parser.add_argument("--energy", action="store_true", help="also write energy.<term> columns [J]")
    parser.add_argument("--out", required=True,
                        help="output: FILE.csv or FILE.npz (time series), or a path without suffix: a new rosbag2 "
                             "bag directory with sensor_msgs/JointState topics /motor_states (q_m, qd_m, tau_m) and "
                             "/joint_states (q, qd, tau_j), stamps = simulated time from 0 s")
    parser.add_argument("--storage", choices=BAG_STORAGES,
                        help="bag storage when --out is a bag directory (default sqlite3)")
    parser.add_argument("--bag-topics", nargs="+", choices=tuple(BAG_TOPICS), metavar="TOPIC",
                        help=f"bag topics to write, among {', '.join(BAG_TOPICS)} (default both)")
    parser.add_argument("--plot", help="PNG of the motor and link deviations from the set point")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--open-loop", type=Path, metavar="TRAJECTORY",
                        help="drive the joints open loop with the rigid-model torques (pinocchio inverse dynamics of "
                             "the URDF) along a trajectory YAML, instead of holding --q0 (e.g. the Canadarm's "
                             "config/canadarm_trajectory.yaml: the motion of the DeNOC paper's Canadarm run)")
    parser.add_argument("--feedforward", type=Path, metavar="FILE",
                        help="track a feedforward file (the CSV/NPZ of flexrobot feedforward --out) with the motor PD "
                             "(--kp/--kd, default the robot's) about its motor reference, from the rest state of its "
                             "first sample under that law, the last pose held with its static torque after the "
                             "file's end; writes error.<joint> = q - q_ref(t) [rad | m] and reports the worst joint "
                             "error and, for flexible links, the largest tip deflection [mm]")
    parser.add_argument("--compiled", action="store_true",
                        help="flexible-link robots: generated C for the link dynamics (compiled once per model, "
                             "~20 s, then cached; about 10x faster than the Python recursion)")
    links = parser.add_argument_group("flexible links (robots with a flexible_links section)")
    add_link_model_arguments(links)
    links.add_argument("--controller", choices=("pd", "decoupling"), default="pd",
                       help="pd: motor PD + gravity compensation holding --set-point (default); decoupling: the RRP "
                            "paper's model-based decoupling control along --trajectory, then an LQR vibration loop "
                            "(rigid joints)")
    links.add_argument("--trajectory", type=Path, metavar="FILE",
                       help="--controller decoupling: the joint trajectory YAML to track (e.g. config/"
                            "rrp_trajectory.yaml, the RRP paper's motion); the LQR loop takes over at its end")
    parser.set_defaults(func=run)


def flexible_link_controller(robot, q_d: np.ndarray, kp, kd, compiled: bool, hold: bool = True, **link_model):
    """(plant, hold controller or None) for a robot with flexible links or rigid joints, else (None, None);
    ``link_model``: the plant's method/modes/elements overrides (``compiled``: generated C, loaded or compiled when
    the plant is built, before the run and its real-time factor)."""
    from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller

    if not (robot.flexible_links or robot.rigid_joints):
        return None, None
    plant = ElasticRobotPlant(robot, compiled=compiled, **link_model)
    return plant, hold_controller(plant, q_d, kp=kp, kd=kd) if hold else None


def open_loop_controller(robot, path: Path, times: np.ndarray | None = None):
    """(open-loop motor torques, the trajectory): the rigid model's inverse dynamics along the trajectory file (zero
    after its end).

    With ``times`` [s] (increasing; e.g. :meth:`FixedStepIntegration.evaluation_times`) the trajectory is sampled
    there once, vectorized, and the torques are read from those samples (exact at ``times``, linear between);
    without, they are evaluated at each call (the accurate mode's solver-chosen instants)."""
    import pinocchio as pin

    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.simulation.controllers import TorqueInput

    trajectory = load_trajectory(path)
    if trajectory.n_joints != robot.n:
        raise SimulationError(f"--open-loop {path}: {trajectory.n_joints} joints, robot {robot.name} has {robot.n}")
    model = robot.model.copy()
    data = model.createData()

    def torques(t: np.ndarray) -> np.ndarray:
        """(len(t), n) [N m] at times t [s]: rnea on the trajectory held at its ends, zero after its end."""
        sample = trajectory.evaluate(np.clip(t, trajectory.start_time, trajectory.end_time))
        out = np.array([pin.rnea(model, data, q, qd, qdd) for q, qd, qdd in zip(sample.q, sample.qd, sample.qdd)])
        out[t > trajectory.end_time] = 0.0
        return out

    if times is not None:
        times = np.asarray(times, dtype=float)
        return TorqueInput(robot, torques(times), times), trajectory
    return TorqueInput(robot, lambda t: torques(np.array([t]))[0]), trajectory


def feedforward_law(plant, recorded, kp, kd):
    """(the FeedforwardPD law of a feedforward file on ``plant``, its rest state at the file's first sample): the
    torques and motor references of ``recorded`` (a :class:`~flexrobot_ros.commands.feedforward_file.
    FeedforwardFile`) under the motor PD ``kp``, ``kd`` (None: the robot's), and after the file's end the last
    motor pose held with its static torque: the file's last torque when the file ends at rest (its rates zero: the
    static torque of the model it was computed on), else the static torque the plant needs at the last link pose
    (:meth:`ElasticRobot.holding_torque` of its static equilibrium there: gravity with the beams' static deflection
    on a rigid joint, the spring torque on an elastic one); the state where that law at t = 0 holds the plant at
    rest (:func:`~flexrobot_ros.simulation.law_equilibrium.law_equilibrium`, from the file's first link pose)."""
    from flexrobot_ros.simulation.controllers import FeedforwardPD
    from flexrobot_ros.simulation.law_equilibrium import law_equilibrium

    model = plant.model
    static = recorded.tau_m[-1] if recorded.ends_at_rest else \
        model.holding_torque(model.static_equilibrium(recorded.q[-1]))
    law = FeedforwardPD(plant.robot, recorded.tau_m, recorded.q_m, recorded.qd_m, times=recorded.t, kp=kp, kd=kd,
                        hold=(static, recorded.q_m[-1]))
    return law, law_equilibrium(plant, law, 0.0, recorded.q[0])


def run_with_progress(simulation: Simulation, duration: float, progress: Progress,
                      period_s: float = 5.0) -> SimulationOutput:
    """``simulation.run(duration)`` [s] as a progress stage. Fixed mode steps in tenths of the run (bit-identical to
    one run) and says how far it is after each tenth that ends ``period_s`` [s] or more after its last line;
    accurate mode is one solver run."""
    from flexrobot_ros.simulation.simulation import SimulationOutput

    with progress.stage(f"simulating {duration:g} s at {simulation.rate:g} Hz ({simulation.mode} mode)"):
        if simulation.mode != "fixed":
            return simulation.run(duration)
        bounds = np.linspace(0, int(round(duration * simulation.rate)), 11).round().astype(int)
        parts, last = [simulation.observe()], time.perf_counter()
        for first, end in zip(bounds[:-1], bounds[1:]):
            parts.append(simulation.step(end - first))
            if end < bounds[-1] and time.perf_counter() - last >= period_s:
                progress.say(f"simulated {simulation.t:g} of {duration:g} s ({100 * end / bounds[-1]:.0f} %)")
                last = time.perf_counter()
        return SimulationOutput.concatenate(parts)


def parse_impact(text: str) -> RectangularPulse:
    """'frame,fx,fy,fz,t0,t1' or 'frame,fx,fy,fz,mx,my,mz,t0,t1' as a rectangular pulse."""
    fields = [field.strip() for field in text.split(",")]
    if len(fields) not in (6, 9) or not fields[0]:
        raise SimulationError(f"--impact {text!r}: expected 'FRAME,FX,FY,FZ,T0,T1' or 'FRAME,FX,FY,FZ,MX,MY,MZ,T0,T1'")
    try:
        values = [float(field) for field in fields[1:]]
    except ValueError:
        raise SimulationError(f"--impact {text!r}: forces and times must be numbers") from None
    return RectangularPulse(fields[0], values[:-2], values[-2], values[-1])


def output_format(out: str, storage: str | None, bag_topics: list[str] | None, energy: bool = False) -> str:
    """``"timeseries"`` for a .csv/.npz ``--out``, ``"bag"`` for a path without suffix; else a clear error."""
    suffix = Path(out).suffix.lower()
    if suffix in SUFFIXES:
        if storage or bag_topics:
            raise SimulationError(f"--out {out}: --storage/--bag-topics apply to bags (a path without suffix), not "
                                  f"to {suffix} files")
        return "timeseries"
    if energy:
        raise SimulationError(f"--out {out}: --energy columns go to .csv/.npz files; a bag holds JointState topics")
    if suffix:
        raise SimulationError(f"--out {out}: unknown suffix {suffix!r}; expected {' or '.join(SUFFIXES)} for a time "
                              f"series, or a path without suffix for a rosbag2 bag directory")
    if Path(out).exists():
        raise SimulationError(f"--out {out}: already exists; a bag is written to a new directory")
    return "bag"


def write_bag(out: str, output: SimulationOutput, storage: str, topics: list[str]) -> Path:
    """The simulation as a rosbag2 bag: one JointState per sample on each of ``/<topic>`` (see BAG_TOPICS)."""
    from flexrobot_ros.runtime.bag_writer import JointStateSeries, write_joint_state_bag

    series = [JointStateSeries(f"/{topic}", *(getattr(output, name) for name in BAG_TOPICS[topic]))
              for topic in topics]
    return write_joint_state_bag(out, output.t, output.plant.joint_names, series, storage=storage)


def plot_output(output: SimulationOutput, q_d: np.ndarray, q_m_d: np.ndarray, impacts: list[RectangularPulse],
                path: Path, title: str) -> None:
    """Motor and link deviations from the set point versus time (two panels), impact windows shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    for axis, values, reference, label in ((axes[0], output.q_m, q_m_d, "q_m - q_m^d"),
                                           (axes[1], output.q, q_d, "q - q^d")):
        for i, name in enumerate(output.plant.joint_names):
            axis.plot(output.t, values[:, i] - reference[i], label=name, linewidth=0.8)
        for impact in impacts:
            axis.axvspan(impact.t0, impact.t1, color="0.85")
        axis.set_ylabel(f"{label} [rad | m]")
        axis.grid(True, linewidth=0.3)
    axes[0].legend(ncol=6, fontsize="small")
    axes[0].set_title(title)
    axes[1].set_xlabel("t [s]")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def check_impacts(impacts: list[RectangularPulse], duration: float) -> list[str]:
    """Refuse impacts that start at or after the end of the simulation (they would never act); warnings for
    impacts cut short by the end."""
    notes = []
    for impact in impacts:
        if impact.t0 >= duration:
            raise SimulationError(f"--impact at {impact.frame} from {impact.t0:g} s: starts at or after the end of the "
                                  f"simulation (--duration {duration:g} s), so it would never act; lengthen "
                                  "--duration or move the impact")
        if impact.t1 > duration:
            notes.append(f"the impact at {impact.frame} during [{impact.t0:g}, {impact.t1:g}) s is cut short by the "
                         f"end of the simulation at {duration:g} s")
    return notes


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.simulation.controllers import PDGravityCompensation
    from flexrobot_ros.simulation.simulation import Simulation, plant_for

    progress = Progress("simulate", quiet=args.json)
    out_format = output_format(args.out, args.storage, args.bag_topics, args.energy)
    if out_format == "bag":
        output_directory(Path(args.out).parent, "--out", args.out)
    else:
        output_file(args.out, "--out")
    output_file(args.plot, "--plot", (".png",))
    if args.feedforward is not None:
        given = [option for option, value in (("--q0", args.q0), ("--set-point", args.set_point),
                                              ("--open-loop", args.open_loop), ("--trajectory", args.trajectory))
                 if value is not None] + (["--controller decoupling"] if args.controller == "decoupling" else [])
        if given:
            raise CommandError(f"--feedforward {args.feedforward} starts at the file's first pose and tracks its "
                               f"motor reference with the PD: {', '.join(given)} would conflict")
    if args.open_loop:
        given = [option for option, value in (("--q0", args.q0), ("--set-point", args.set_point), ("--kp", args.kp),
                                              ("--kd", args.kd)) if value is not None]
        if given:
            raise SimulationError(f"--open-loop starts at the trajectory's first pose and applies its torques without "
                                  f"feedback: {', '.join(given)} would have no effect")
    robot = load_robot(args.robot, tool=args.tool)
    recorded = None  # the feedforward file tracked, or None
    if args.feedforward is not None:
        from flexrobot_ros.commands.feedforward_file import read_feedforward

        from flexrobot_ros.model.flexible_robot import angle_or_length

        recorded = read_feedforward(args.feedforward, robot.joint_names,
                                    [angle_or_length(kind) for kind in robot.joint_types])
        if recorded.start_warning:
            print(f"flexrobot simulate: warning: {recorded.start_warning}", file=sys.stderr)
    duration = args.duration if args.duration is not None else (recorded.duration if recorded else 3.0)
    if not duration > 0 or not args.rate > 0:
        raise SimulationError(f"--duration {duration:g} s and --rate {args.rate:g} Hz must be positive")
    impacts = [parse_impact(text) for text in args.impact]
    for note in check_impacts(impacts, duration):
        print(f"flexrobot simulate: warning: {note}", file=sys.stderr)
    if args.compiled and not (robot.flexible_links or robot.rigid_joints):
        raise SimulationError(f"--compiled: generated code is for flexible-link robots; robot {robot.name} has none")
    for impact in impacts:
        robot.frame_id(impact.frame)
    q0 = vector(args.q0, "--q0", robot.n, robot.joint_names) if args.q0 is not None else np.zeros(robot.n)
    q_d = q0 if args.set_point is None else vector(args.set_point, "--set-point", robot.n, robot.joint_names)
    kp = gains(args.kp, "--kp", robot.n, robot.joint_names)
    kd = gains(args.kd, "--kd", robot.n, robot.joint_names)
    link_model = {"method": LINK_MODELS.get(args.link_model), "modes": args.modes, "elements": args.elements}
    if any(value is not None for value in link_model.values()) and not robot.flexible_links:
        raise CommandError(f"robot {robot.name}: --link-model/--link-modes/--link-elements need flexible links")
    decoupling = args.controller == "decoupling"
    if not (args.open_loop or decoupling or recorded):  # the poses held; the others start on their trajectory
        within_limits(robot, q0, "--q0" if args.q0 is not None else "--q0 (default: zeros)")
        within_limits(robot, q_d, "--set-point")
    # the link positions [rad | m] a run tracks, a function of time [s] (open loop, decoupling, --feedforward), or None
    reference = None
    x0 = None  # the whole initial state (--feedforward: the rest state of the file's first sample), or None
    if decoupling != (args.trajectory is not None):
        raise CommandError("--controller decoupling tracks --trajectory FILE: give both or neither")
    fixed = FixedStepIntegration(substeps=args.substeps)
    with progress.stage(f"building the plant of {robot.name}", "--compiled: generated C, compiled on first use in "
                        "~20-30 s, then cached" if args.compiled else ""):
        plant, controller = flexible_link_controller(robot, q_d, kp, kd, args.compiled,
                                                     hold=not (args.open_loop or decoupling or recorded),
                                                     **link_model)
    if decoupling:
        from flexrobot_ros.dynamics.trajectory import load_trajectory
        from flexrobot_ros.simulation.decoupling_control import DecouplingControl

        given = [option for option, value in (("--q0", args.q0), ("--set-point", args.set_point), ("--kp", args.kp),
                                              ("--kd", args.kd), ("--open-loop", args.open_loop)) if value is not None]
        if given or plant is None:
            raise CommandError(f"--controller decoupling starts on the trajectory and needs a flexible-link robot with "
                               f"rigid joints; {', '.join(given) or 'robot ' + robot.name + ' has no flexible links'} "
                               "would have no effect")
        trajectory = load_trajectory(args.trajectory)
        controller = DecouplingControl(plant, trajectory)
        q0, reference = controller.q_d, held(trajectory)
    elif args.open_loop:
        controller, trajectory = open_loop_controller(robot, args.open_loop, fixed.evaluation_times(
            args.rate, duration) if args.mode == "fixed" else None)
        q0, reference = trajectory.evaluate([trajectory.start_time]).q[0], held(trajectory)
        controller.q_d, controller.q_m_d = q0, q0 * robot.transmission  # references of the plot
    elif recorded is not None:
        plant = plant or plant_for(robot)
        controller, x0 = feedforward_law(plant, recorded, kp, kd)
        q0, reference = recorded.q[0], recorded.reference
        controller.q_d, controller.q_m_d = q0, recorded.q_m[0]  # references of the plot
    elif controller is None:
        controller = PDGravityCompensation.create(robot, q_d, kp=kp, kd=kd)
    simulation = Simulation(plant or robot, controller, q0=q0, rate=args.rate, mode=args.mode,
                            fixed=fixed, x0=x0,
                            accurate=AccurateIntegration(args.solver, args.rtol, args.atol), excitations=impacts)
    start = time.perf_counter()
    output = run_with_progress(simulation, duration, progress)
    wall = time.perf_counter() - start
    if out_format == "bag":
        topics = list(dict.fromkeys(args.bag_topics or BAG_TOPICS))
        path = write_bag(args.out, output, args.storage or "sqlite3", topics)
        progress.wrote(f"rosbag2 bag ({', '.join(topics)})", path)
    else:
        columns = output.columns(energy=args.energy)
        if recorded is not None:
            error = output.q - recorded.reference(output.t)
            columns.update({f"error.{joint}": error[:, j] for j, joint in enumerate(robot.joint_names)})
        path = write_timeseries(args.out, output.t, columns)
        progress.wrote("time series", path)
    if args.plot:
        plot_output(output, controller.q_d, controller.q_m_d, impacts, Path(args.plot),
                    f"{robot.name}{' + tool' if args.tool else ''}: {args.mode} mode, {args.rate:g} Hz")
        progress.wrote("plot", args.plot)
    summary = {
        "robot": robot.name, "tool": bool(args.tool), "mode": args.mode, "samples": int(output.t.size),
        "duration_s": float(output.t[-1]), "rate_hz": args.rate, "wall_time_s": wall,
        "real_time_factor": float(output.t[-1] / wall) if wall > 0 else None,
        **tracking(robot, output, controller.q_m_d, reference),
        "out": str(path), "plot": args.plot,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['samples']} samples over {summary['duration_s']:g} s ({args.mode} mode) in {wall:.3f} s "
              f"wall ({summary['real_time_factor']:.2g}x real time); {describe(summary)} -> {path}"
              + (f", plot {args.plot}" if args.plot else ""))
    return 0
