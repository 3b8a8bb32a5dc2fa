"""``flexrobot excite ROBOT --out FILE.yaml``: an optimal Fourier excitation for rigid-body identification.

Seed 001 eqs. 8-12 (:mod:`flexrobot_ros.identification.excitation`): writes the trajectory as the feedforward's
waypoint file (``flexrobot feedforward ROBOT --trajectory FILE.yaml``), prints cond(A) of the optimized and of the
best random Fourier trajectory with the same limits, the lowest natural frequency over the trajectory's poses and
the flexibility margin; ``--plot-dir`` writes the joint trajectories and the tool path.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from flexrobot_ros.commands.arguments import CommandError, add_vector, output_directory, output_file, vector
from flexrobot_ros.commands.progress import Progress


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "excite", help="optimal Fourier excitation trajectory for rigid-body identification (Huynh et al. 2020, "
                        "eqs. 8-12)",
        description="Optimize a finite Fourier series excitation (Huynh et al. 2020, eqs. 8-12) minimizing "
                    "cond(A) of the base-parameter observation matrix within the joint limits (and a workspace box) "
                    "and write it as a trajectory file the feedforward reads.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--out", type=Path, required=True, help="trajectory YAML to write (waypoints)")
    parser.add_argument("--harmonics", type=int, default=5,
                        help="harmonics N per joint (default 5, as Huynh et al. 2020)")
    parser.add_argument("--frequency", type=float, default=0.1,
                        help="fundamental frequency f_f [Hz] (default 0.1, as Huynh et al. 2020); period 1/f_f")
    parser.add_argument("--qdd-max", default="8", help="acceleration limit [rad/s^2], one or one per joint "
                                                       "(default 8, Huynh et al. 2020, Table 1)")
    add_vector(parser, "--workspace", metavar="X",
               help="box of the tool frame's origin [m]: x_min,y_min,z_min,x_max,y_max,z_max (Huynh et al. 2020, "
                    "Table 2 for the KR90: -1.5,-1.6,0.5,2.6,1.4,2.5); default none")
    parser.add_argument("--periods", type=int, default=1, help="periods written to the file (default 1)")
    parser.add_argument("--starts", type=int, default=4, help="random feasible starts of SLSQP (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random starts (default 0)")
    parser.add_argument("--min-margin", type=float, default=5.0,
                        help="smallest allowed ratio of the lowest natural frequency to the highest harmonic "
                             "(default 5)")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    parser.add_argument("--plot-dir", type=Path, help="write excitation.png (joints) and tool_path.png here")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.identification.excitation import ExcitationLimits, design_excitation, write_trajectory
    from flexrobot_ros.model import load_robot

    output_file(args.out, "--out", (".yaml", ".yml"))
    if args.plot_dir is not None:
        output_directory(args.plot_dir, "--plot-dir")
    for name, value in (("--harmonics", args.harmonics), ("--periods", args.periods), ("--starts", args.starts)):
        if value < 1:
            raise CommandError(f"{name}: expected at least 1, got {value}")
    robot = load_robot(args.robot, tool=args.tool)
    qdd_max = vector(args.qdd_max, "--qdd-max")
    if qdd_max.size not in (1, robot.n):
        raise CommandError(f"--qdd-max: expected 1 or {robot.n} values for joints {list(robot.joint_names)}")
    box = vector(args.workspace, "--workspace", 6)
    workspace = None if box is None else (tuple(box[:3]), tuple(box[3:]))
    if box is not None and any(low >= high for low, high in zip(*workspace)):
        raise CommandError(f"--workspace: expected x_min,y_min,z_min below x_max,y_max,z_max, got {box.tolist()}")
    limits = ExcitationLimits.of_robot(robot, qdd_max, workspace)
    progress = Progress("excite", quiet=args.json)
    with progress.stage(f"optimizing cond(A): {args.harmonics} harmonics at {args.frequency:g} Hz, "
                        f"{args.starts} starts"):
        design = design_excitation(
            robot, limits, harmonics=args.harmonics, frequency_hz=args.frequency, starts=args.starts,
            seed=args.seed, min_margin=args.min_margin,
            progress=lambda done, total, best: progress.say(f"start {done}/{total}: best cond(A) {best:.4g}"))
    header = (f"Fourier excitation for {robot.name} by 'flexrobot excite' (Huynh et al. 2020, eqs. 8-12): "
              f"{args.harmonics} harmonics, f_f = {args.frequency:g} Hz, cond(A) = {design.condition:.4g} "
              f"(median of 20 random Fourier trajectories with the same limits: {design.random_condition:.4g})")
    write_trajectory(args.out, design.trajectory, args.periods, header)
    progress.wrote("trajectory", args.out)
    plots = []
    if args.plot_dir is not None:
        from flexrobot_ros.identification.rigid_plots import plot_excitation

        plots = plot_excitation(robot, design, args.plot_dir, workspace)
        for path in plots:
            progress.wrote("plot", path)
    summary = {"robot": robot.name, "tool": robot.tool is not None, "out": str(args.out),
               "harmonics": args.harmonics, "frequency_hz": args.frequency, "period_s": 1.0 / args.frequency,
               "periods": args.periods, "condition_number": design.condition,
               "random_condition_number": design.random_condition,
               "random_best_condition_number": design.random_best_condition,
               "lowest_natural_frequency_hz": design.lowest_frequency_hz,
               "highest_harmonic_hz": args.harmonics * args.frequency, "flexibility_margin": design.margin,
               "base_parameters": design.base.count, "fourier": design.trajectory.to_dict(),
               "plots": [str(p) for p in plots]}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"wrote {args.out}: {args.periods} x {1 / args.frequency:g} s Fourier excitation of robot {robot.name} "
          f"({args.harmonics} harmonics at {args.frequency:g} Hz, {design.base.count} base parameters)")
    print(f"cond(A): optimized {design.condition:.4g}, random Fourier with the same limits "
          f"{design.random_condition:.4g} (median of 20; {design.random_condition / design.condition:.3g} x higher; "
          f"best random {design.random_best_condition:.4g})")
    print(f"lowest natural frequency over the trajectory {design.lowest_frequency_hz:.4g} Hz = "
          f"{design.margin:.3g} x the highest harmonic {args.harmonics * args.frequency:.4g} Hz")
    return 0
