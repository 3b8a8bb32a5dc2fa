"""``flexrobot feedforward ROBOT --trajectory FILE.yaml --out FILE.csv``: motor references and torques.

The trajectory YAML is ``{profile: poly9, duration: T, q0: [...], qf: [...]}`` or
``{waypoints: [{t: .., q: [...], qd: [...], qdd: [...]}, ...], degree: 9}`` (see
:func:`flexrobot_ros.dynamics.trajectory.trajectory_from_dict`). The CSV has a column ``<quantity>.<joint>`` for q,
qd, qdd, q3, q4, tau, dtau, ddtau, q_m, qd_m, qdd_m and tau_m (SI units); ``--json`` prints ``robot``, ``tool``,
``method``, ``joint_names``, ``t`` and the same quantities as (samples x joints) arrays, and ``shaping`` (the
shaper, per mode its kind, frequency [Hz], damping ratio and participation, the added move time [s]).
``--shaper zv|zvd|ei|auto`` shapes the reference first (:func:`flexrobot_ros.shaping.shape_reference`).
``--end auto|rest|as-given`` (:mod:`flexrobot_ros.dynamics.post_actuation`): a rest-to-rest motion ends at rest (method
prescribed: the final pose held until the deformation energy is below ``--rest-energy`` of its peak, or refused,
exit 2, when the model's damping cannot bring it there within ``--max-post-actuation``), a motion that ends moving is
inverted as given (``rest``: refused); ``as-given`` inverts any motion as given. The closing line (``--json``:
``end``) says how the file ends.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from flexrobot_ros.commands.arguments import (LINK_MODELS, CommandError, add_link_model_arguments, output_file,
                                              vector)
from flexrobot_ros.dynamics.feedforward_names import MAX_POST_ACTUATION_S, METHODS, QUANTITIES, REST_ENERGY_FRACTION
from flexrobot_ros.dynamics.shaper_names import DEFAULT_FREQUENCY_ERROR, SHAPERS
from flexrobot_ros.text_table import Column, table
from flexrobot_ros.timeseries import write_timeseries

#: Quantities of the CSV and of ``--json``, (samples x joints) each.
JSON_KEYS = QUANTITIES
#: ``--end``: how a joint-space motion's feedforward ends (see the option's help).
END_MODES = ("auto", "rest", "as-given")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "feedforward", help="motor references q_m and motor torques tau_m that make an elastic robot follow a "
                            "link trajectory (EJNEA or SDRNEA, the thesis' chapter 4)",
        description="Motor references q_m [rad] and motor torques tau_m [N m] that make a robot with elastic joints "
                    "follow a link trajectory, written as a CSV or NPZ time series.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--trajectory", type=Path,
                        help="trajectory YAML: joint space (poly9 profile or waypoints) or tool space ({line: {start: "
                             "[x, y(, z)], end: [..], duration: T}})")
    parser.add_argument("--line", nargs=2, metavar=("X0,Y0[,Z0]", "X1,Y1[,Z1]"),
                        help="tool-space straight line [m] of the tool frame (world frame), instead of --trajectory: "
                             "the deformed tool moves along it (method dae, the default) or the rigid robot's "
                             "(method rigid)")
    parser.add_argument("--duration", type=float, metavar="T", help="duration of the --line motion [s]")
    parser.add_argument("--tool-path", action="store_true",
                        help="with a joint-space --trajectory: the deformed tool follows the path that trajectory "
                             "traces with rigid links (method dae; rigid: the trajectory's rigid baseline)")
    parser.add_argument("--order", type=int, metavar="K",
                        help="BDF order of method dae (1-6; default 3 on robots with flexible links or rigid joints, "
                             "6 otherwise)")
    parser.add_argument("--step", type=float, metavar="H",
                        help="BDF step of method dae [s] (default 1 / --rate)")
    parser.add_argument("--method", choices=METHODS,
                        help="inverse-dynamics algorithm: sdrnea: generated C code, compiled once per robot and "
                             "cached (default for elastic joints on rigid links); ejnea: numeric recursion; dae: "
                             "robots with extra elasticities (BDF or optimization, after Moberg & Hanssen); "
                             "prescribed: any robot, the flexible links' deformations and extra elasticities "
                             "integrated along the joint motion (default for robots with flexible links or rigid joints); rigid: the rigid-robot "
                             "baseline (links and joints rigid, motor reference = link reference)")
    parser.add_argument("--rate", type=float, default=1000.0, help="sampling rate [Hz] (default 1000)")
    parser.add_argument("--out", type=Path, required=True, help="output time series (.csv or .npz)")
    parser.add_argument("--plot", type=Path, help="also write a PNG figure (q, deflection, tau, tau_m)")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    parser.add_argument("--shaper", choices=SHAPERS, default="none",
                        help="input shaping of the reference for the dominant modes the model predicts along the "
                             "motion (pose-scheduled): zv, zvd, ei (5 %% vibration tolerance), auto (the shortest "
                             "that stays within 5 %% over +- --shaper-frequency-error), none (default)")
    parser.add_argument("--shaper-frequency-error", type=float, default=DEFAULT_FREQUENCY_ERROR, metavar="E",
                        help="relative frequency error the auto shaper is robust to (default 0.1: +-10 %%)")
    parser.add_argument("--json", action="store_true", help="print the arrays as JSON on stdout")
    rest = parser.add_argument_group("the end of a joint-space motion")
    rest.add_argument("--end", choices=END_MODES, default="auto",
                      help="auto (default): a rest-to-rest motion ends at rest (method prescribed: the final pose "
                           "held after it until the deformation energy is below --rest-energy of its peak, refused "
                           "when the model's damping cannot bring it there within --max-post-actuation), a motion "
                           "that ends moving is written as given; rest: the same, and a motion that is not rest to "
                           "rest is refused; as-given: the inversion of the motion as given (a deformation still "
                           "vibrating at its end stays in the file)")
    rest.add_argument("--rest-energy", type=float, default=REST_ENERGY_FRACTION, metavar="FRACTION",
                      help="at rest: deformation energy at most this fraction of its peak over the motion (default "
                           f"{REST_ENERGY_FRACTION:g}: vibration amplitudes 1e-3 of the motion's)")
    rest.add_argument("--max-post-actuation", type=float, default=MAX_POST_ACTUATION_S, metavar="S",
                      help=f"longest post-actuation [s] (default {MAX_POST_ACTUATION_S:g})")
    links = parser.add_argument_group("flexible links (robots with a flexible_links section; method prescribed)")
    add_link_model_arguments(links)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.dynamics.feedforward import default_method, feedforward  # casadi, pinocchio, scipy
    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.errors import RestError
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.model.flexible_robot import torque_or_force

    output_file(args.out, "--out", (".csv", ".npz"))
    output_file(args.plot, "--plot", (".png",))
    robot = load_robot(args.robot, tool=args.tool)
    link_model = {"method": LINK_MODELS.get(args.link_model), "modes": args.modes, "elements": args.elements}
    if any(value is not None for value in link_model.values()):
        if not robot.flexible_links:
            raise CommandError(f"robot {robot.name}: --link-model/--link-modes/--link-elements need flexible links")
        if (args.method or default_method(robot)) != "prescribed":
            raise CommandError(f"--link-model/--link-modes/--link-elements: the link discretization of method "
                               f"'prescribed'; method {args.method or default_method(robot)!r} does not integrate "
                               "the link deformations")
    line = _tool_line(args, robot)
    trajectory = load_trajectory(args.trajectory) if line is None else None
    if args.step is not None and not (args.step > 0 and args.step < float("inf")):
        raise CommandError(f"--step {args.step}: expected a BDF step > 0 [s]")
    rate = args.rate if args.step is None else 1.0 / args.step
    if line is not None:
        ending = [option for option, given in (("--end", args.end != "auto"),
                                               ("--rest-energy", args.rest_energy != REST_ENERGY_FRACTION),
                                               ("--max-post-actuation",
                                                args.max_post_actuation != MAX_POST_ACTUATION_S)) if given]
        if ending:
            raise CommandError(f"{', '.join(ending)}: the end of a joint-space motion's feedforward; a tool-space "
                               "line is rest to rest by its profile")
        return _run_tool_space(args, robot, line, rate)
    start = time.perf_counter()
    shaping = None
    if args.shaper != "none":
        from flexrobot_ros.shaping import shape_reference

        shaping = shape_reference(robot, trajectory, args.shaper, frequency_error=args.shaper_frequency_error)
        trajectory = shaping.trajectory
    method = args.method or default_method(robot)
    trajectory, rest, ending = _end(args, robot, trajectory, rate, method)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            result = feedforward(robot, trajectory, method, rate_hz=rate, order=args.order, link_model=link_model,
                                 rest=rest)
        except RestError as error:
            raise CommandError(f"{error}; {_rest_advice(robot, error, _final_pose(trajectory))}") from None
    elapsed = time.perf_counter() - start
    for warning in caught:
        print(f"flexrobot feedforward: warning: {warning.message}", file=sys.stderr)
    write_timeseries(args.out, result.t, result.columns())
    if args.plot is not None:
        from flexrobot_ros.dynamics.feedforward_plot import plot_feedforward

        plot_feedforward(result, args.plot, robot.transmission)
    if args.json:
        payload = {"robot": robot.name, "tool": robot.tool is not None, "method": result.method, "joint_names": list(result.joint_names),
                   "t": result.t.tolist(), **{key: getattr(result, key).tolist() for key in JSON_KEYS},
                   "shaping": shaping.summary() if shaping is not None else {"shaper": "none", "added_time_s": 0.0},
                   "end": _end_summary(args, rest, ending, result)}
        print(json.dumps(payload))
        return 0
    print(f"wrote {args.out}: {len(result.t)} samples x {robot.n} joints of robot {robot.name} "
          f"({result.method}, {elapsed:.3f} s)" + (f", plot {args.plot}" if args.plot else ""))
    if shaping is not None:
        modes = ", ".join(f"{m['kind']} at {m['frequency_hz']:.4g} Hz ({100 * m['damping_ratio']:.1f} %)"
                          for m in shaping.summary()["modes"])
        print(f"shaper {args.shaper}: {modes} (modes at the end pose); added move time {shaping.added_time_s:.3f} s")
    print(f"end: {_end_text(args, rest, ending, result)}")
    deflection = abs(result.q_m - robot.transmission * result.q).max(axis=0)
    rows = [[name, f"{abs(result.tau[:, j]).max():.4g} {torque_or_force(kind):<3}",
             f"{abs(result.tau_m[:, j]).max():.4g} N m", f"{deflection[j]:.4g} rad"]
            for j, (name, kind) in enumerate(zip(result.joint_names, robot.joint_types))]
    print("\n".join(table([Column("joint", align="<"), Column("max|tau|"), Column("max|tau_m|"),
                           Column("max|q_m-Wq|")], rows)))
    return 0


def _final_pose(trajectory: Any) -> Any:
    """The last link pose (n,) [rad | m] of a Trajectory or of its TrajectorySamples."""
    if hasattr(trajectory, "q"):
        return trajectory.q[-1]
    return trajectory.evaluate([trajectory.end_time]).q[0]


def _end(args: argparse.Namespace, robot: Any, trajectory: Any, rate: float, method: str) -> tuple[Any, Any, str]:
    """(the trajectory or its samples at ``rate`` [Hz], the RestToRest of ``--end`` or None, why the motion is not
    rest to rest or ''): a rest-to-rest motion sampled through its end (``samples_through_the_end``: its last sample
    at rest even when the end falls between two, as a shaped motion's does); ``--end rest`` refuses a motion that is
    not rest to rest (TrajectoryError, exit 2), ``auto`` inverts it as given."""
    from flexrobot_ros.dynamics.feedforward import check_rest_to_rest, rest_order
    from flexrobot_ros.dynamics.post_actuation import RestToRest, not_at_rest, samples_through_the_end
    from flexrobot_ros.errors import TrajectoryError
    from flexrobot_ros.model.flexible_robot import angle_or_length

    if args.end == "as-given":
        return trajectory, None, ""
    try:
        rest = RestToRest(args.rest_energy, args.max_post_actuation)
    except TrajectoryError as error:
        raise CommandError(f"--rest-energy {args.rest_energy:g} / --max-post-actuation {args.max_post_actuation:g}: "
                           f"{error}") from None
    samples = samples_through_the_end(trajectory, rate)
    if args.end == "rest":
        check_rest_to_rest(robot, samples, method)
    why = not_at_rest(samples, robot.joint_names, [angle_or_length(kind) for kind in robot.joint_types],
                      rest_order(robot, method))
    if why:
        return trajectory, None, why
    return trajectory if method == "dae" else samples, rest, ""  # the DAE's BDF steps take the trajectory itself


def _rest_advice(robot: Any, error: Any, final: Any) -> str:
    """What to do about a rest-to-rest motion whose feedforward cannot end at rest (a RestError), ``final`` the
    final pose (n,) [rad | m]."""
    import math

    pose = ",".join(f"{value:.6g}" for value in final)
    longer = (f"hold longer (--max-post-actuation {math.ceil(error.hold_needed_s)})" if
              math.isfinite(error.hold_needed_s) else
              "model the links' damping (flexible_links.<link>.damping_ratio) if they have some")
    return (f"what to do: {longer}; or use input shaping (--method rigid --shaper zvd; flexrobot shape {robot.name} "
            f"--q {pose} chooses the shaper); or a slower motion; or --end as-given for the inversion with the "
            "vibration left in it")


def _end_summary(args: argparse.Namespace, rest: Any, why: str, result: Any) -> dict[str, Any]:
    """``end`` of ``--json``: ``mode`` (--end), ``rest_to_rest`` (False: ``why``), and with a post-actuation its
    ``post_actuation_s`` [s], deformation energies [J] (``energy_at_motion_end_j``, ``energy_j`` at the last
    sample, ``threshold_j``, ``peak_j``)."""
    out: dict[str, Any] = {"mode": args.end, "rest_to_rest": rest is not None}
    if why:
        out["why"] = why
    post = result.post_actuation
    if post is not None:
        out.update(post_actuation_s=post.hold_s, energy_at_motion_end_j=post.energy_at_motion_end_j,
                   energy_j=post.energy_j, threshold_j=post.threshold_j, peak_j=post.peak_j)
    return out


def _end_text(args: argparse.Namespace, rest: Any, why: str, result: Any) -> str:
    """The closing line's account of how the file ends (``--end``)."""
    if args.end == "as-given":
        return "the inversion of the motion as given (--end as-given); it ends where the motion ends"
    if rest is None:
        return (f"the motion is not rest to rest ({why}): the file is its inversion as given and does not end at "
                "rest (flexrobot simulate holds its last pose with the static torque after it)")
    post = result.post_actuation
    if post is None or post.peak_j == 0.0:
        return "rest to rest: the file ends at rest, on the static torque of the final pose"
    energies = (f"the deformation energy {post.energy_j:.3g} J, at most {rest.energy_fraction:g} of its peak "
                f"{post.peak_j:.3g} J")
    if post.hold_s == 0.0:
        return f"at rest when the motion ends: {energies}"
    return (f"post-actuation: the final pose held {post.hold_s:.3f} s after the motion "
            f"({post.energy_at_motion_end_j:.3g} J of deformation energy when the joints stopped), until {energies}")


def _tool_line(args: argparse.Namespace, robot: Any) -> Any:
    """The CartesianLine of ``--line`` with ``--duration`` or of a tool-space ``--trajectory`` YAML, the ToolPath of
    a joint-space one with ``--tool-path``; None for a joint-space trajectory."""
    from flexrobot_ros.dynamics.dae.reference import CartesianLine, tool_line_from_dict
    from flexrobot_ros.dynamics.feedforward import tool_path
    from flexrobot_ros.dynamics.trajectory import trajectory_from_dict
    from flexrobot_ros.errors import TrajectoryError
    from flexrobot_ros.yaml_files import read_yaml

    if (args.line is None) == (args.trajectory is None):
        raise CommandError("give either --trajectory FILE or --line X0,Y0[,Z0] X1,Y1[,Z1] with --duration T")
    if args.line is None:
        if args.duration is not None:
            raise CommandError("--duration sets the --line motion; a --trajectory file has its own times")
        document = read_yaml(args.trajectory, TrajectoryError, "the trajectory")
        if isinstance(document, dict) and "line" in document:
            return tool_line_from_dict(document, f"--trajectory {args.trajectory}")
        if args.tool_path:
            return tool_path(robot, trajectory_from_dict(document, source=str(args.trajectory)))
        return None
    if args.tool_path:
        raise CommandError("--tool-path takes the path of a joint-space --trajectory; --line is a tool path already")
    if args.duration is None or not (0 < args.duration < float("inf")):
        raise CommandError(f"--duration {args.duration}: --line needs the duration of the motion, > 0 [s]")
    start, end = (vector(value, "--line") for value in args.line)
    if start.size != end.size or start.size not in (2, 3):
        raise CommandError(f"--line {' '.join(args.line)}: expected two points of 2 or 3 coordinates [m] each")
    return CartesianLine(start, end, 0.0, args.duration)


def _run_tool_space(args: argparse.Namespace, robot: Any, line: Any, rate: float) -> int:
    """``--line``, a tool-space file or ``--tool-path``: method dae (the deformed tool on the line or path; zeros
    and solver reported) or rigid (inverse kinematics and dynamics of the rigid robot)."""
    import numpy as np

    from flexrobot_ros.dynamics.feedforward import feedforward, general

    method = args.method or "dae"
    if method not in ("dae", "rigid"):
        raise CommandError(f"--method {method}: a tool-space line takes dae (the deformed tool on the line) or rigid")
    if args.shaper != "none":
        raise CommandError("--shaper shapes a joint-space trajectory; it does not apply to a tool-space line")
    if method == "dae" and not general(robot) and not hasattr(line, "start"):
        raise CommandError(f"--tool-path: robot {robot.name} has rigid links; its links following --trajectory put "
                           "the tool on that path already (use the file without --tool-path)")
    start = time.perf_counter()
    result = feedforward(robot, line, method, rate_hz=rate, order=args.order)
    solver, reason, zeros = result.solver, result.solver_reason, result.unstable_zeros
    elapsed = time.perf_counter() - start
    write_timeseries(args.out, result.t, result.columns())
    if args.plot is not None:
        from flexrobot_ros.dynamics.feedforward_plot import plot_feedforward

        plot_feedforward(result, args.plot, robot.transmission)
    ends = ({"line_start_m": line.start.tolist(), "line_end_m": line.end.tolist()} if hasattr(line, "start") else
            {"tool_path_of": str(args.trajectory)})
    summary = {**ends, "duration_s": line.duration, "solver": solver or "rigid inverse kinematics and dynamics",
               "reason": reason, "unstable_zeros_rad_s": [[float(z.real), float(z.imag)] for z in zeros]}
    if args.json:
        payload = {"robot": robot.name, "tool": robot.tool is not None, "method": result.method,
                   "joint_names": list(result.joint_names), "t": result.t.tolist(),
                   **{key: getattr(result, key).tolist() for key in JSON_KEYS}, "tool_space": summary}
        print(json.dumps(payload))
        return 0
    print(f"wrote {args.out}: {len(result.t)} samples x {robot.n} joints of robot {robot.name} "
          f"({result.method}, {elapsed:.3f} s)" + (f", plot {args.plot}" if args.plot else ""))
    what = (f"tool line {line.start.tolist()} -> {line.end.tolist()} m" if hasattr(line, "start") else
            f"tool path of {args.trajectory}")
    print(f"{what} in {line.duration:g} s: {summary['solver']}")
    if reason:
        print(f"zeros along the path: {reason}")
    if zeros.size:
        slowest = zeros[np.argmin(zeros.real)]
        print(f"non-minimum-phase zeros [rad/s]: {zeros.size} over the path poses, real parts "
              f"{zeros.real.min():.4g} to {zeros.real.max():.4g} (slowest {slowest.real:.4g}{slowest.imag:+.4g}j)")
    peaks = np.abs(result.tau_m).max(axis=0)
    print("max |tau_m| [N m | N]: " + ", ".join(f"{name} {v:.4g}" for name, v in zip(result.joint_names, peaks)))
    return 0
