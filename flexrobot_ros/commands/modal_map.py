"""``flexrobot modal-map ROBOT ... --out FILE.npz --plot FILE.png``: modes over a path, a 2-D grid or a gain sweep.

The sweeps and options are listed in :data:`EPILOG` (shown by ``--help``); the NPZ format is documented in
:mod:`flexrobot_ros.modal.maps`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from flexrobot_ros.commands.arguments import (CommandError, add_deprecated, add_vector, gains, number, output_file,
                                              vector)
from flexrobot_ros.commands.modal import add_common, check_frame
from flexrobot_ros.errors import ModalError

if TYPE_CHECKING:
    from flexrobot_ros.modal.maps import ModalMap
    from flexrobot_ros.model import FlexibleRobot


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("modal-map", help="modes over a path, grid or gain sweep, saved as NPZ + PNG",
                                   description="Closed-loop modes over a path, a 2-D joint grid or a gain sweep, "
                                   "saved as NPZ (and plotted as PNG).",
                                   formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    add_common(parser)
    sweep = parser.add_mutually_exclusive_group(required=True)
    sweep.add_argument("--thesis-path", action="store_true", help="the thesis' 50 Scompi configurations")
    add_vector(sweep, "--start", help="first pose of a linear path (with --end)")
    sweep.add_argument("--grid", action="append", help="JOINT:LO:HI:N grid axis (give two)")
    sweep.add_argument("--appendix-ii", type=int, metavar="P",
                       help="the thesis' Appendix II grid over joints 1 and 2")
    sweep.add_argument("--gain-sweep", metavar="LO:HI:N", help="equal diagonal K_P values (with --q)")
    sweep.add_argument("--poses", type=Path, help=".npy (P, n) or .csv/.txt file of poses")
    add_vector(parser, "--end", help="last pose of a linear path")
    parser.add_argument("--count", type=int, help=f"poses on a path (default {COUNT})")
    add_vector(parser, "--base", help="base pose for grids (default zeros)")
    add_vector(parser, "--q", help="pose of a gain sweep")
    parser.add_argument("--kd-factor", type=float, help=f"K_D = C sqrt(K_P) in gain sweeps (default {KD_FACTOR})")
    parser.add_argument("--payload", choices=("off", "on", "both"), default=None,
                        help="without/with the YAML's tool, or both (overrides --tool)")
    parser.add_argument("--shapes", action="store_true", help="store mode shapes (P, 2n, modes) in the NPZ")
    parser.add_argument("--plot-modes", metavar="K,K", help="modes to plot, counted from 1, e.g. 1,2 (default all)")
    add_deprecated(parser, "--modes", "--plot-modes", "plot_modes")
    parser.add_argument("--grid-mode", type=int, help="mode drawn by grid plots, counted from 1 (default 1)")
    parser.add_argument("--out", type=Path, required=True, help="NPZ file to write (suffix .npz)")
    parser.add_argument("--plot", type=Path, help="PNG file to write (suffix .png)")
    parser.add_argument("--no-progress", action="store_true", help="do not print progress to stderr")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.set_defaults(func=run)


#: What ``--help`` shows after the options: the sweeps, in plain words.
EPILOG = """\
Sweeps (one of):
  --thesis-path                       the 50 Scompi configurations of the thesis' section 2.4.2 (--count to change)
  --start Q --end Q [--count N]       a linear path between two poses
  --grid JOINT:LO:HI:N --grid JOINT:LO:HI:N --base Q    a 2-D joint grid around a base pose
  --appendix-ii P [--base Q]          the thesis' Appendix II: q1 = i pi/P (i = 0..2P), q2 = j pi/P (j = 0..P)
  --gain-sweep LO:HI:N --q Q [--kd-factor C]   equal K_P from LO to HI, K_D = C sqrt(K_P) (default C = 0.425)
  --poses FILE                        poses from a .npy (P, n) or a .csv/.txt file (one pose per line)
--payload both computes the map without and with the tool (second file FILE.tool.npz, overlaid plot).
"""
#: Poses on a path and K_D = C sqrt(K_P) factor of a gain sweep when not given.
COUNT, KD_FACTOR = 50, 0.425
#: Options that apply to some sweeps only: option -> (attribute, sweeps it applies to).
SWEEP_OPTIONS = {"--end": ("end", ("start",)), "--count": ("count", ("thesis_path", "start")),
                 "--base": ("base", ("grid", "appendix_ii")), "--q": ("q", ("gain_sweep",)),
                 "--kd-factor": ("kd_factor", ("gain_sweep",)), "--grid-mode": ("grid_mode", ("grid", "appendix_ii"))}


def check_options(args: argparse.Namespace) -> None:
    """Refuse options that the chosen sweep (or the absence of --plot) would ignore; fill in their defaults."""
    sweep = next(name for name in ("thesis_path", "start", "grid", "appendix_ii", "gain_sweep", "poses")
                 if getattr(args, name) not in (None, False))
    for option, (attribute, sweeps) in SWEEP_OPTIONS.items():
        if getattr(args, attribute) is not None and sweep not in sweeps:
            used = " or ".join("--" + name.replace("_", "-") for name in sweeps)
            raise CommandError(f"{option} applies to {used} sweeps, not to --{sweep.replace('_', '-')}")
    if (args.plot_modes or args.grid_mode is not None) and not args.plot:
        raise CommandError("--plot-modes and --grid-mode choose what --plot draws; give --plot FILE.png too")
    args.count = COUNT if args.count is None else args.count
    args.kd_factor = KD_FACTOR if args.kd_factor is None else args.kd_factor
    args.grid_mode = 1 if args.grid_mode is None else args.grid_mode
    if args.count < 1:
        raise CommandError(f"--count: expected at least 1 pose, got {args.count}")


def grid_axis(text: str) -> tuple[str, np.ndarray]:
    """``(joint, values)`` of a ``--grid JOINT:LO:HI:N`` argument: N poses from LO to HI [rad, or m for a prismatic joint]."""
    parts = text.split(":")
    if len(parts) != 4:
        raise ModalError(f"--grid: expected JOINT:LO:HI:N, got {text!r}")
    count = int(number(parts[3], "--grid"))
    if count < 1:
        raise ModalError(f"--grid: N must be >= 1, got {count}")
    return parts[0], np.linspace(number(parts[1], "--grid"), number(parts[2], "--grid"), count)


def read_poses(path: Path) -> np.ndarray:
    """Poses (one row each, joint positions [rad or m]) from a .npy, .csv or whitespace-separated text file."""
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        return np.loadtxt(path, delimiter="," if path.suffix == ".csv" else None, ndmin=2)
    except (OSError, ValueError) as error:
        raise ModalError(f"{path}: cannot read poses: {error}") from None


def compute(robot: FlexibleRobot, args: argparse.Namespace) -> ModalMap:
    """The map requested by the command-line arguments for one robot (with or without tool)."""
    from flexrobot_ros.modal import maps

    n, joints = robot.n, robot.joint_names
    options: dict[str, Any] = {"kp": gains(args.kp, "--kp", n, joints), "kd": gains(args.kd, "--kd", n, joints),
                               "wrench": vector(args.wrench, "--wrench", 6),
                               "frame": args.frame, "shapes": args.shapes,
                               "progress": not args.no_progress and sys.stderr.isatty()}
    base = vector(args.base, "--base", n, joints) if args.base else np.zeros(robot.n)
    if args.thesis_path:
        if robot.n != 6:
            raise ModalError(f"--thesis-path is the 6-joint Scompi sweep; robot {robot.name} has {robot.n} joints")
        return maps.modal_map(robot, maps.thesis_configurations(args.count), kind="path",
                              coordinate=np.arange(1, args.count + 1), coordinate_label="configuration", **options)
    if args.start:
        if not args.end:
            raise ModalError("--start needs --end")
        return maps.path_map(robot, vector(args.start, "--start", n, joints), vector(args.end, "--end", n, joints),
                             args.count, **options)
    if args.grid:
        if len(args.grid) != 2:
            raise ModalError(f"--grid: give exactly two axes, got {len(args.grid)}")
        (joint_a, values_a), (joint_b, values_b) = grid_axis(args.grid[0]), grid_axis(args.grid[1])
        return maps.grid_map(robot, base, (joint_a, joint_b), values_a, values_b, **options)
    if args.appendix_ii is not None:
        values_a, values_b = maps.appendix_ii_grid(args.appendix_ii)
        return maps.grid_map(robot, base, (robot.joint_names[0], robot.joint_names[1]), values_a, values_b, **options)
    if args.gain_sweep:
        if not args.q:
            raise ModalError("--gain-sweep needs --q")
        parts = args.gain_sweep.split(":")
        if len(parts) != 3:
            raise ModalError(f"--gain-sweep: expected LO:HI:N, got {args.gain_sweep!r}")
        values = np.linspace(number(parts[0], "--gain-sweep"), number(parts[1], "--gain-sweep"),
                             int(number(parts[2], "--gain-sweep")))
        options.pop("kp"), options.pop("kd")
        return maps.gain_map(robot, vector(args.q, "--q", n, joints), values, kd_factor=args.kd_factor, **options)
    return maps.modal_map(robot, read_poses(args.poses), **options)


def _tool_path(path: Path) -> Path:
    return path.with_name(path.stem + ".tool" + path.suffix)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.modal import maps
    from flexrobot_ros.model import load_robot

    output_file(args.out, "--out", (".npz",))
    output_file(args.plot, "--plot", (".png",))
    check_frame(args)
    check_options(args)
    if args.plot_modes:
        args.plot_modes = [int(number(m, "--plot-modes")) for m in args.plot_modes.split(",")]
    payload = args.payload or ("on" if args.tool else "off")
    robots = {"off": [False], "on": [True], "both": [False, True]}[payload]
    results = [compute(load_robot(args.robot, tool=tool), args) for tool in robots]
    written = []
    for result in results:
        out = _tool_path(args.out) if (payload == "both" and result.tool) else args.out
        written.append(str(maps.save_map(out, result)))
    summary: dict[str, Any] = {"files": written, "maps": []}
    for result in results:
        summary["maps"].append({
            "robot": result.robot, "tool": result.tool, "kind": result.kind, "points": len(result),
            "modes": int(result.frequencies_hz.shape[1]),
            "frequency_range_hz": [float(np.nanmin(result.frequencies_hz)), float(np.nanmax(result.frequencies_hz))],
            "damping_range": [float(np.nanmin(result.damping_ratios)), float(np.nanmax(result.damping_ratios))],
            "unstable_points": int(np.sum(result.verdict == "unstable")),
            "marginal_points": int(np.sum(result.verdict == "marginal")),
        })
    if args.plot:
        from flexrobot_ros.modal import plots

        modes = None if not args.plot_modes else [m - 1 for m in args.plot_modes]
        if results[0].kind == "grid":
            summary["plot"] = str(plots.plot_grid(results[0], args.plot, mode=args.grid_mode - 1))
        else:
            labels = ["no tool", "with tool"] if payload == "both" else None
            summary["plot"] = str(plots.plot_map(results, args.plot, modes=modes, labels=labels))
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    for item, path in zip(summary["maps"], written):
        print(f"{item['robot']}{' + tool' if item['tool'] else ''}: {item['kind']} map, {item['points']} points, "
              f"{item['modes']} modes, f {item['frequency_range_hz'][0]:.4g}..{item['frequency_range_hz'][1]:.6g} Hz,"
              f" zeta {100 * item['damping_range'][0]:.4g}..{100 * item['damping_range'][1]:.4g} %, "
              f"{item['unstable_points']} unstable, {item['marginal_points']} marginal -> {path}")
    if args.plot:
        print(f"plot -> {summary['plot']}")
    return 0
