"""``flexrobot modal ROBOT --q Q1,...,Qn``: closed-loop natural frequencies, damping ratios and stability at a pose.

Prints a table (mode, f [Hz], zeta [%], stable) or, with ``--json``, ``{"frequencies_hz": [...], "damping_ratios":
[...] (fractions), "stable": bool, "verdict": ..., "eigenvalues": [[re, im], ...], "mode_stability": ["stable" |
"marginal" | "unstable", ...], ...}``; a mode is marginal when its real part is zero within round-off. Optional:
the modal participation at the tool frame, a PNG of the mode shapes, a PNG of the tool receptance.

The modes come from the one linearization entry (:func:`flexrobot_ros.modal.modal_analysis`): seed 000's
analytic linearization for elastic joints on rigid links, the composed model's
(:mod:`flexrobot_ros.modal.elastic_robot_linearization`) for every other robot. With flexible links the modes include
the link modes; ``--locked-joints`` gives the structural modes of the braked arm; ``--link-model amm|fem``,
``--link-modes N``, ``--link-elements N`` override every flexible link's discretization. Robots with extra
elasticities or gear dampers get report entries ``model``, ``coordinates``, each mode's ``dominant`` coordinate and the
``elastic_equilibrium`` q_e. Example: ``flexrobot modal canadarm --q 0.4,-1.1,0.7 --locked-joints --json``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.commands.arguments import (LINK_MODELS, CommandError, add_link_model_arguments, add_vector, gains,
                                              number, output_file, vector, within_limits)
from flexrobot_ros.commands.progress import Progress

def add_common(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``modal`` and ``modal-map``."""
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    add_vector(parser, "--kp", metavar="KP",
               help="motor PD stiffness K_P [N m/rad]: one value or one per joint (default: YAML)")
    add_vector(parser, "--kd", metavar="KD",
               help="motor PD damping K_D [N m s/rad]: one value or one per joint (default: YAML)")
    add_vector(parser, "--wrench", metavar="W",
               help="constant external wrench fx,fy,fz,mx,my,mz [N, N m] in world axes")
    parser.add_argument("--frame", help="frame the wrench acts at (default: the robot's tool frame)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("modal", help="closed-loop modes and stability at one pose (the thesis' "
                                   "chapter 2)", description="Closed-loop natural frequencies, damping ratios and "
                                   "stability of a robot at one pose.")
    add_common(parser)
    add_vector(parser, "--q",
               help="link set point q1,...,qn [rad | m], comma- or space-separated, e.g. 0,-pi/6,2*pi/3,... "
                    "(required, except with --controller: the poses come from the motion)")
    parser.add_argument("--participation", action="store_true",
                        help="also print each mode's participation at the tool frame")
    parser.add_argument("--undamped", action="store_true",
                        help="also print the undamped (conservative, D_bar = 0) natural frequencies")
    parser.add_argument("--shapes-plot", type=Path, help="write a polar PNG of the first two mode shapes")
    parser.add_argument("--frf-plot", type=Path, help="write a PNG of the tool receptance |H| (3 x 3 translational)")
    parser.add_argument("--frf-range", help=f"FMIN:FMAX:COUNT [Hz] for --frf-plot (default {FRF_RANGE})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    links = parser.add_argument_group("flexible links (robots with a flexible_links section)")
    links.add_argument("--locked-joints", action="store_true",
                       help="structural modes with every joint locked (the braked arm as a clamped frame)")
    add_link_model_arguments(links)
    links.add_argument("--controller", choices=("decoupling",),
                       help="closed-loop eigenvalues along a motion under the RRP paper's decoupling control (+ LQR "
                            "from the end of --trajectory): --trajectory FILE --times T1,T2,... (s)")
    links.add_argument("--trajectory", type=Path, metavar="FILE", help="the joint trajectory of --controller")
    links.add_argument("--times", help="times [s] along the motion for --controller, comma-separated")
    parser.set_defaults(func=run)


#: Default frequency grid of ``--frf-plot``: FMIN:FMAX:COUNT [Hz].
FRF_RANGE = "0.5:200:800"


def check_frame(args: argparse.Namespace) -> None:
    """``--frame`` is where ``--wrench`` acts: alone it would have no effect."""
    if args.frame and args.wrench is None:
        raise CommandError(f"--frame {args.frame}: it is the frame --wrench acts at; give --wrench too")


def frf_grid(text: str) -> np.ndarray:
    """``--frf-range FMIN:FMAX:COUNT`` as a frequency grid [Hz]."""
    parts = text.split(":")
    if len(parts) != 3:
        raise CommandError(f"--frf-range: expected FMIN:FMAX:COUNT, got {text!r}")
    low, high, count = (number(part, "--frf-range") for part in parts)
    if not 0 <= low < high or count < 2 or count != int(count):
        raise CommandError(f"--frf-range {text}: expected 0 <= FMIN < FMAX and an integer COUNT >= 2")
    return np.linspace(low, high, int(count))


def check_options(robot: Any, args: argparse.Namespace) -> None:
    """The options that do not apply to ``robot``'s linearization: the link discretization without flexible links,
    --locked-joints without flexible links or extra elasticities, the wrench, participation, undamped modes and
    plots beyond elastic joints on rigid links (seed 000's linearization, the one in the joint coordinates)."""
    from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only

    if not robot.flexible_links and (args.link_model or args.modes is not None or args.elements is not None):
        raise CommandError(f"robot {robot.name}: --link-model/--link-modes/--link-elements need flexible links (a "
                           "flexible_links section in the flexibility YAML)")
    if args.locked_joints and elastic_joints_only(robot):
        raise CommandError(f"robot {robot.name}: --locked-joints needs flexible links or extra elasticities (the "
                           "coordinates left free with every joint locked)")
    if not elastic_joints_only(robot) and (args.wrench or args.participation or args.undamped or args.shapes_plot
                                           or args.frf_plot):
        raise CommandError(f"robot {robot.name}: --wrench, --participation, --undamped and the plots are available "
                           "for elastic joints on rigid links only (this robot has extra elasticities, gear dampers, "
                           "flexible links or rigid joints)")


def composed_entries(robot: Any, q: np.ndarray, result: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The report's entries of a robot the composed elastic-robot model linearizes (extra elasticities or gear
    dampers, Coulomb friction with flexible links): ``model`` ("extended"), ``coordinates`` (labels of the shapes'
    rows), ``dominant`` (each mode's largest coordinate), ``elastic_equilibrium`` (q_e [rad | m]); none for the
    others."""
    from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
    from flexrobot_ros.modal import modal_coordinates
    from flexrobot_ros.modal.held_modes import composed_model, has_link_layer

    if elastic_joints_only(robot) or has_link_layer(robot):
        return {}
    model = composed_model(robot, LINK_MODELS.get(args.link_model), args.modes, args.elements)
    labels = modal_coordinates(robot, args.locked_joints, model)
    dominant = [str(labels[int(np.argmax(np.abs(result.mode_shapes[:, k])))]) for k in range(result.n_modes)]
    q_e = model.static_equilibrium(q)[model.qe_index]
    return {"model": "extended", "coordinates": labels, "dominant": dominant, "elastic_equilibrium": q_e.tolist()}


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.modal.eigenproblem import VERDICTS, eigenvalue_codes, stability_tolerance
    from flexrobot_ros.modal import modal_analysis
    from flexrobot_ros.model import load_robot

    shapes_plot = output_file(args.shapes_plot, "--shapes-plot", (".png",))
    frf_plot = output_file(args.frf_plot, "--frf-plot", (".png",))
    if args.frf_range and not frf_plot:
        raise CommandError("--frf-range is the frequency grid of --frf-plot; give --frf-plot FILE.png too")
    grid = frf_grid(args.frf_range or FRF_RANGE) if frf_plot else None
    check_frame(args)
    robot = load_robot(args.robot, tool=args.tool)
    if args.controller or args.trajectory or args.times:
        if args.q is not None:
            raise CommandError("--q: with --controller the poses come from the motion along --trajectory")
        return run_along_motion(robot, args)
    if args.q is None:
        raise CommandError("--q: the link set point is required (q1,...,qn)")
    q = within_limits(robot, vector(args.q, "--q", robot.n, robot.joint_names), "--q")
    wrench = vector(args.wrench, "--wrench", 6)
    kp = gains(args.kp, "--kp", robot.n, robot.joint_names)
    kd = gains(args.kd, "--kd", robot.n, robot.joint_names)
    check_options(robot, args)
    result = modal_analysis(robot, q, kp=kp, kd=kd, wrench=wrench, frame=args.frame,
                            locked_joints=args.locked_joints, method=LINK_MODELS.get(args.link_model),
                            modes=args.modes, elements=args.elements)
    composed = composed_entries(robot, q, result, args)
    tol = stability_tolerance(np.concatenate([result.eigenvalues, result.offending_eigenvalues])[None])[0]
    codes = eigenvalue_codes(result.eigenvalues, tol)
    report: dict[str, Any] = {"robot": robot.name, "tool": robot.tool is not None, **result.to_dict(),
                              "mode_stable": (codes == 0).tolist(),
                              "mode_stability": [VERDICTS[code] for code in codes],
                              "stability_tolerance_per_s": float(tol), "locked_joints": bool(args.locked_joints),
                              **composed}
    participation = None
    if args.participation:
        from flexrobot_ros.modal.participation import modal_participation

        participation = modal_participation(robot, result)
        report["participation"] = participation.participation.tolist()
        report["peak_compliance_m_per_n"] = participation.peak_compliance.tolist()
    undamped = None
    if args.undamped:
        from flexrobot_ros.modal.undamped import undamped_modes

        undamped = undamped_modes(result.linearized)
        report["undamped_frequencies_hz"] = undamped.frequencies_hz.tolist()
        report["statically_stable"] = undamped.statically_stable
    progress = Progress("modal", quiet=args.json)
    if shapes_plot:
        from flexrobot_ros.modal.plots import plot_mode_shapes

        report["shapes_plot"] = str(plot_mode_shapes(result, shapes_plot, modes=(0, min(1, result.n_modes - 1))))
        progress.wrote("mode-shape plot", report["shapes_plot"])
    if frf_plot:
        from flexrobot_ros.modal.frf import receptance
        from flexrobot_ros.modal.plots import plot_receptance

        with progress.stage(f"tool receptance at {grid.size} frequencies, {grid[0]:g}-{grid[-1]:g} Hz"):
            frf = receptance(robot, q, grid, kp=kp, kd=kd, wrench=wrench, wrench_frame=args.frame)
        report["frf_plot"] = str(plot_receptance(frf, frf_plot))
        progress.wrote("receptance plot", report["frf_plot"])
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"robot {robot.name}{' + tool' if robot.tool else ''} at q = {np.round(q, 6).tolist()}"
          + ("; every joint locked (structural modes of the braked arm)" if args.locked_joints else ""))
    header = f"{'mode':>4} {'f [Hz]':>12} {'zeta [%]':>10} {'stable':>8}"
    print(header + (f" {'particip.':>9}" if participation else "") + (f" {'undamped f':>11}" if undamped else "")
          + ("  dominant coordinate" if composed else ""))
    for k in range(result.n_modes):
        zeta = 0.0 if codes[k] == 1 else 100 * result.damping_ratios[k]  # marginal: zero within round-off
        line = (f"{k + 1:>4} {result.frequencies_hz[k]:>12.4f} {zeta:>10.4f} "
                f"{('yes', 'marginal', 'NO')[codes[k]]:>8}")
        if participation is not None:
            line += f" {100 * participation.participation[k]:>8.1f}%"
        if undamped is not None and k < undamped.frequencies_hz.size:
            line += f" {undamped.frequencies_hz[k]:>11.4f}"
        if composed:
            line += f"  {composed['dominant'][k]}"
        if result.overdamped[k]:
            line += "  (real eigenvalue, over-damped)"
        print(line)
    print(verdict_line(result.offending_eigenvalues, tol))
    return 0


def verdict_line(offending: np.ndarray, tol: float) -> str:
    """The stability verdict from the ``offending`` eigenvalues [1/s] of a spectrum (Re >= -``tol`` [1/s]): the
    unstable ones listed; the marginal ones (real part zero within round-off: undamped modes, free rigid-body
    motion) counted."""
    from flexrobot_ros.modal.eigenproblem import eigenvalue_codes

    values = np.asarray(offending)
    codes = eigenvalue_codes(values, tol)
    marginal = int(np.count_nonzero(codes == 1))
    if codes.max(initial=0) == 2:
        return (f"verdict: unstable; eigenvalues in the right half-plane (Re > {tol:.3g} 1/s) "
                f"{np.round(values[codes == 2], 4).tolist()} [1/s]")
    if marginal:
        return (f"verdict: marginally stable: {marginal} eigenvalue(s) with |Re| <= {tol:.3g} 1/s (zero within "
                "round-off: undamped modes or free rigid-body motion), none in the right half-plane")
    return "verdict: stable"


def run_along_motion(robot: Any, args: argparse.Namespace) -> int:
    """``--controller decoupling --trajectory FILE --times ...``: the closed loop's eigenvalues along the motion
    (seed 004 Figs. 9-10): frequencies [Hz] and damping ratios of its oscillatory eigenvalues at each time."""
    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.modal.eigenproblem import VERDICTS, classify, eigenvalue_codes, stability_tolerance
    from flexrobot_ros.simulation.decoupling_control import DecouplingControl, eigenvalues_along_motion
    from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

    if not (args.controller and args.trajectory and args.times):
        raise CommandError("--controller decoupling, --trajectory FILE and --times T1,... go together")
    if not robot.flexible_links:
        raise CommandError(f"--controller decoupling: robot {robot.name} has no flexible links")
    times = [number(text, "--times") for text in args.times.split(",")]
    progress = Progress("modal", quiet=args.json)
    with progress.stage(f"building the plant of {robot.name}"):
        plant = ElasticRobotPlant(robot, method=LINK_MODELS.get(args.link_model), modes=args.modes,
                                  elements=args.elements)
    with progress.stage(f"simulating the motion to t = {max(times):g} s under decoupling control and linearizing "
                        f"at {len(times)} times"):
        sampled, eigenvalues = eigenvalues_along_motion(plant, DecouplingControl(plant, load_trajectory(
            args.trajectory)), times)
    rows = []
    for t, values in zip(sampled, eigenvalues):
        oscillatory = values[values.imag > 1e-6]
        oscillatory = oscillatory[np.lexsort((-oscillatory.real, np.abs(oscillatory)))]  # by frequency
        tol = stability_tolerance(values[None])
        rows.append({"t": float(t), "frequencies_hz": (np.abs(oscillatory) / (2 * np.pi)).tolist(),
                     "damping_ratios": (-oscillatory.real / np.abs(oscillatory)).tolist(),
                     "stability": [VERDICTS[code] for code in eigenvalue_codes(oscillatory, tol)],
                     "verdict": VERDICTS[int(classify(values[None])[0])],
                     "max_real_part": float(values.real.max())})
    report = {"robot": robot.name, "controller": "decoupling", "along_motion": rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"robot {robot.name}{' + tool' if robot.tool else ''}, decoupling control along {args.trajectory}: "
          "oscillatory closed-loop modes, f [Hz] (zeta [%], stability) sorted by frequency")
    for row in rows:
        modes = ", ".join(f"{f:.3f} ({0.0 if kind == 'marginal' else 100 * zeta:.2f}, {kind})" for f, zeta, kind in
                          zip(row["frequencies_hz"], row["damping_ratios"], row["stability"]))
        print(f"t = {row['t']:.3f} s, {row['verdict']}: {modes}")
    return 0
