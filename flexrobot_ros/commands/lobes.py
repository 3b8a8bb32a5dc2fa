"""``flexrobot lobes ROBOT --q Q --teeth N --cutting-coefficients KT,KR --radial-immersion AE_D``: milling stability
lobes at a pose (zeroth-order solution of Altintas and Budak, :mod:`flexrobot_ros.modal.stability_lobes`) from the
robot's tool-tip receptance in the feed plane (cross terms included, :mod:`flexrobot_ros.modal.milling_frf`), and
with ``--grid``/``--poses`` a map of the minimum critical depth over poses (:mod:`flexrobot_ros.modal.stability_map`).
Instead of a robot, ``--frf FILE.csv`` (a measured receptance) or ``--modes FILE.yaml`` (the tool tip's modes), in
the formats of :mod:`flexrobot_ros.modal.milling_frf_files`.

Prints the minimum critical depth [mm], its chatter frequency [Hz], the spindle speeds [rpm] of the lobe minima in
the speed range and the best spindle speed of the range, where the stability limit is solved exactly at every one
of ENVELOPE_POINTS speeds (:mod:`flexrobot_ros.modal.lobe_envelope`); ``--json`` prints the same in SI units with
the limit at every speed and the FRF the lobes used; ``--plot-dir DIR`` writes ``lobes.png`` (and
``critical_depth_map.png`` with a map).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from flexrobot_ros.commands.arguments import (CommandError, add_vector, gains, number, output_directory, vector,
                                              within_limits)
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.errors import ModalError

#: Lobes drawn when no --spindle-speed-range is given (k = 0..DEFAULT_LOBES), and envelope points.
DEFAULT_LOBES, ENVELOPE_POINTS = 10, 2000
#: Options that describe a robot and its pose (refused with --frf or --modes).
ROBOT_OPTIONS = ("q", "tool", "feed_direction", "tool_axis", "frame", "tip_offset", "kp", "kd", "grid", "poses")

EPILOG = """\
Machining frame: z = --tool-axis (from the tool tip into the spindle), x = --feed-direction, y = z cross x, both in
the robot's base axes (default: a vertical spindle over a horizontal table, z_0 up, feed along x_0). The cutter
turns clockwise seen from the spindle (M03); up-milling: the tooth enters the cut at zero chip thickness.
K_t is the tangential cutting coefficient [N/m^2] (e.g. 7.96e8 for aluminium 7050), K_r the RATIO of the radial to
the tangential coefficient [-] (e.g. 0.212). Map (where to place the workpiece): --grid JOINT:LO:HI:N twice (around
--q) or --poses FILE (.npy (P, n) or .csv/.txt, one pose per line); joint values in rad | m.
Without a robot model, in the machining frame (x feed, y = tool axis cross x), SI units:
  --frf FILE.csv    header frequency_hz,xx_re,xx_im,xy_re,xy_im,yx_re,yx_im,yy_re,yy_im (any order; '#' comments),
                    one row per frequency [Hz] (increasing), receptance Phi_ij [m/N] = displacement i per force j,
                    linear between the rows; the chatter frequencies searched are the rows' (> 0 Hz), and a
                    speed whose lobe 0 chatters outside them is refused
  --modes FILE.yaml modes: [{frequency_hz: F, damping_ratio: Z, shape: [X, Y], stiffness_n_per_m: K}, ...]
                    (K: modal stiffness of that shape; without it the shape is mass-normalized [1/sqrt(kg)])
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lobes", help="milling stability lobes at a pose and the critical depth of cut over poses",
        description="Milling stability lobes (zeroth-order Altintas-Budak solution) from the robot's tool-tip FRF "
                    "in the feed plane, cross terms included, or from a measured FRF or modal parameters; "
                    "optionally a map of the minimum critical depth over poses.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("robot", nargs="?", help="shipped robot name or path to a flexibility YAML (or give --frf "
                        "or --modes)")
    parser.add_argument("--frf", type=Path, metavar="FILE.csv",
                        help="measured tool-tip receptance in the machining frame instead of a robot (see below)")
    parser.add_argument("--modes", type=Path, metavar="FILE.yaml",
                        help="tool-tip modes in the machining frame instead of a robot (see below)")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    add_vector(parser, "--q", help="link set point q1,...,qn [rad | m] of the lobes (and the base pose of --grid); "
               "required with a robot")
    parser.add_argument("--teeth", type=int, required=True, metavar="N", help="number of teeth of the cutter")
    parser.add_argument("--cutting-coefficients", required=True, metavar="KT,KR",
                        help="tangential cutting coefficient K_t [N/m^2] and radial/tangential ratio K_r [-]")
    parser.add_argument("--radial-immersion", required=True, metavar="AE_D",
                        help="radial depth of cut over cutter diameter a_e/D, 0 < a_e/D <= 1 (1 = slotting)")
    parser.add_argument("--milling", choices=("down", "up"), default="down", help="down- (default) or up-milling")
    add_vector(parser, "--feed-direction", metavar="V", help="feed direction x,y,z in base axes (default 1,0,0)")
    add_vector(parser, "--tool-axis", metavar="V",
               help="tool axis x,y,z in base axes, from the tool tip into the spindle (default 0,0,1)")
    parser.add_argument("--frame", help="frame whose origin is the tool tip (default: the robot's tool frame)")
    add_vector(parser, "--tip-offset", metavar="V",
               help="tool tip relative to --frame's origin x,y,z [m] in that frame's axes (default 0,0,0)")
    parser.add_argument("--spindle-speed-range", metavar="NMIN:NMAX",
                        help=f"spindle speeds [rpm] of the diagram (default: lobes k = 0..{DEFAULT_LOBES})")
    add_vector(parser, "--kp", metavar="KP",
               help="motor PD stiffness K_P [N m/rad]: one value or one per joint (default: YAML)")
    add_vector(parser, "--kd", metavar="KD",
               help="motor PD damping K_D [N m s/rad]: one value or one per joint (default: YAML)")
    parser.add_argument("--grid", action="append", metavar="JOINT:LO:HI:N",
                        help="map axis over a joint (give two; the other joints stay at --q)")
    parser.add_argument("--poses", type=Path, help="map over the poses of a .npy (P, n) or .csv/.txt file")
    parser.add_argument("--plot-dir", type=Path, help="write lobes.png (and critical_depth_map.png) into DIR")
    parser.add_argument("--json", action="store_true", help="print JSON (SI units) instead of text")
    parser.set_defaults(func=run)


def speed_range(text: str) -> tuple[float, float]:
    """``--spindle-speed-range NMIN:NMAX`` [rpm]."""
    parts = text.split(":")
    if len(parts) != 2:
        raise CommandError(f"--spindle-speed-range: expected NMIN:NMAX [rpm], got {text!r}")
    low, high = (number(part, "--spindle-speed-range") for part in parts)
    if not 0 < low < high:
        raise CommandError(f"--spindle-speed-range {text}: expected 0 < NMIN < NMAX [rpm]")
    return low, high


def process_of(args: argparse.Namespace) -> Any:
    from flexrobot_ros.modal.stability_lobes import MillingProcess

    coefficients = vector(args.cutting_coefficients, "--cutting-coefficients")
    if coefficients.size != 2:
        raise CommandError(f"--cutting-coefficients: expected KT,KR (K_t [N/m^2], K_r ratio [-]), got "
                           f"{coefficients.size} values")
    if coefficients[0] < 1e3:
        raise CommandError(f"--cutting-coefficients: K_t = {coefficients[0]:g} N/m^2 is implausibly small (give SI "
                           "units: 796 N/mm^2 is 7.96e8 N/m^2)")
    return MillingProcess.from_immersion(args.teeth, coefficients[0], coefficients[1],
                                         number(args.radial_immersion, "--radial-immersion"), args.milling)


def map_poses(robot: Any, args: argparse.Namespace, q: np.ndarray) -> tuple[str, Any]:
    """``("grid", (joints, values_a, values_b))`` or ``("poses", array)`` or ``("", None)``."""
    from flexrobot_ros.commands.modal_map import grid_axis, read_poses

    if args.grid and args.poses:
        raise CommandError("--grid and --poses: give one of them")
    if args.grid:
        if len(args.grid) != 2:
            raise CommandError(f"--grid: give exactly two axes (JOINT:LO:HI:N), got {len(args.grid)}")
        (joint_a, values_a), (joint_b, values_b) = grid_axis(args.grid[0]), grid_axis(args.grid[1])
        return "grid", ((joint_a, joint_b), values_a, values_b)
    if args.poses:
        return "poses", read_poses(args.poses)
    return "", None


def source_of(args: argparse.Namespace) -> str:
    """``"robot"``, ``"frf"`` or ``"modes"``: the one source of the receptance given."""
    given = [name for name, value in (("robot", args.robot), ("frf", args.frf), ("modes", args.modes)) if value]
    if len(given) != 1:
        raise CommandError("give one of: a robot (name or flexibility YAML), --frf FILE.csv (a measured FRF) or "
                           f"--modes FILE.yaml (tool-tip modes); got {len(given)}")
    if given[0] == "robot":
        if args.q is None:
            raise CommandError("--q: the pose of the lobes is required with a robot")
        return "robot"
    for name in ROBOT_OPTIONS:
        if getattr(args, name) not in (None, False):
            raise CommandError(f"--{name.replace('_', '-')} applies to a robot model; the FRF of --{given[0]} is "
                               "the tool tip's in the machining frame already")
    return given[0]


@dataclass(frozen=True)
class FeedPlaneSource:
    """Where the lobes' receptance comes from: ``frf`` (the callable), ``grid(up_to_hz)`` the chatter frequencies
    [Hz] to start from (reaching up to ``up_to_hz`` where the source allows), ``report`` its JSON fields, ``title``
    and text ``lines`` that describe it, ``map`` what :func:`run_map` needs (robot, kind, sweep, q, kp, kd,
    geometry) or None."""

    frf: Any
    grid: Callable[[float | None], np.ndarray]
    report: dict[str, Any]
    title: str
    lines: tuple[str, ...] = ()
    map: tuple | None = None


def robot_receptance(args: argparse.Namespace) -> FeedPlaneSource:
    """The robot's feed-plane FRF at ``--q``."""
    from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
    from flexrobot_ros.modal import modal_analysis
    from flexrobot_ros.modal.milling_frf import robot_feed_plane_frf
    from flexrobot_ros.modal.stability_lobes import chatter_frequency_grid
    from flexrobot_ros.model import load_robot

    robot = load_robot(args.robot, tool=args.tool)
    if not elastic_joints_only(robot):
        raise CommandError(f"robot {robot.name}: lobes use the flexible-joint receptance; flexible links, rigid "
                           "joints, extra elasticities and gear dampers are not supported yet")
    q = within_limits(robot, vector(args.q, "--q", robot.n, robot.joint_names), "--q")
    kp = gains(args.kp, "--kp", robot.n, robot.joint_names)
    kd = gains(args.kd, "--kd", robot.n, robot.joint_names)
    geometry = {"tool_axis": (0.0, 0.0, 1.0) if args.tool_axis is None else vector(args.tool_axis, "--tool-axis", 3),
                "feed_direction": ((1.0, 0.0, 0.0) if args.feed_direction is None
                                   else vector(args.feed_direction, "--feed-direction", 3)),
                "frame": args.frame, "tip_offset": vector(args.tip_offset, "--tip-offset", 3)}
    kind, sweep = map_poses(robot, args, q)
    modes = modal_analysis(robot, q, kp=kp, kd=kd)
    frf = robot_feed_plane_frf(robot, q, kp=kp, kd=kd, linearized=modes.linearized, **geometry)
    return FeedPlaneSource(
        frf=frf, grid=lambda up_to: chatter_frequency_grid(modes.frequencies_hz, modes.damping_ratios,
                                                           up_to_hz=up_to),
        report={"robot": robot.name, "tool": robot.tool is not None, "q": q.tolist(),
                "frame": args.frame or robot.tool_frame, "machining_frame_in_base_axes": frf.rotation.T.tolist(),
                "tool_tip_position_m": frf.position.tolist()},
        title=f"{robot.name} at q = {np.round(np.degrees(q), 2).tolist()} deg",
        lines=(f"tool tip at {np.round(frf.position, 4).tolist()} m (base axes); feed x = "
               f"{np.round(frf.rotation[:, 0], 4).tolist()}, tool axis z = "
               f"{np.round(frf.rotation[:, 2], 4).tolist()}",),
        map=(robot, kind, sweep, q, kp, kd, geometry) if kind else None)


def file_receptance(args: argparse.Namespace, source: str) -> FeedPlaneSource:
    """The feed-plane FRF of ``--frf`` or ``--modes``."""
    from flexrobot_ros.modal.milling_frf_files import read_measured_frf, read_tool_modes
    from flexrobot_ros.modal.stability_lobes import chatter_frequency_grid

    if source == "frf":
        frf = read_measured_frf(args.frf)
        rows = frf.frequencies_hz[frf.frequencies_hz > 0]

        def grid(up_to: float | None) -> np.ndarray:
            return rows
        what = f"measured FRF {args.frf} ({frf.frequencies_hz.size} rows, {frf.frequencies_hz[0]:g}-" \
               f"{frf.frequencies_hz[-1]:g} Hz)"
    else:
        frf = read_tool_modes(args.modes)

        def grid(up_to: float | None) -> np.ndarray:
            return chatter_frequency_grid(frf.natural_frequencies_hz, frf.damping_ratios, up_to_hz=up_to)
        what = f"tool-tip modes {args.modes} ({frf.natural_frequencies_hz.size} modes)"
    path = args.frf if source == "frf" else args.modes
    return FeedPlaneSource(frf=frf, grid=grid, report={f"{source}_file": str(path)}, title=what)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.modal.lobe_envelope import speed_coverage, stability_limit
    from flexrobot_ros.modal.milling_frf_files import frf_table
    from flexrobot_ros.modal.stability_lobes import lobe_count, zeroth_order_lobes

    source = source_of(args)
    process = process_of(args)
    speeds_given = speed_range(args.spindle_speed_range) if args.spindle_speed_range else None
    plot_dir = output_directory(args.plot_dir, "--plot-dir") if args.plot_dir else None
    progress = Progress("lobes", quiet=args.json)
    given = robot_receptance(args) if source == "robot" else file_receptance(args, source)
    frf = given.frf
    grid = given.grid(process.teeth * speeds_given[1] / 60.0 if speeds_given else None)
    with progress.stage(f"stability lobes at {grid.size} chatter frequencies, {grid[0]:.4g}-{grid[-1]:.4g} Hz"):
        lobes = zeroth_order_lobes(frf, grid, process, lobes=DEFAULT_LOBES)
        if not (speeds_given or np.isfinite(lobes.minimum_depth_m)):
            raise CommandError(f"{given.title}: no chatter frequency in {grid[0]:.4g}-{grid[-1]:.4g} Hz gives this cut "
                               "a finite critical depth (nothing chatters); give --spindle-speed-range for a diagram")
        low, high = speeds_given or (0.9 * lobes.minimum_speeds_rpm[-1], 2.5 * lobes.minimum_speeds_rpm[0])
        if process.teeth * high / 60.0 > grid[-1]:  # the default range's lobe 0 reaches above the grid
            grid = given.grid(process.teeth * high / 60.0)
            lobes = zeroth_order_lobes(frf, grid, process, lobes=DEFAULT_LOBES)
        if not speeds_given:  # the default range within the speeds the band covers (a measured FRF's)
            covered = speed_coverage(lobes)
            low, high = max(low, covered[0]), min(high, covered[1])
            if not low < high:
                raise CommandError(f"{given.title}: lobe 0 chatters inside {grid[0]:.4g}-{grid[-1]:.4g} Hz only at "
                                   f"{covered[0]:.6g}-{covered[1]:.6g} rpm, outside the lobes' default range; give "
                                   "--spindle-speed-range")
        lobes = lobes.with_lobes(lobe_count(lobes.chatter_frequencies_hz, lobes.critical_depths_m, process.teeth, low))
    speeds = np.linspace(low, high, ENVELOPE_POINTS)
    try:
        with progress.stage(f"stability limit at {speeds.size} spindle speeds, {low:.1f}-{high:.1f} rpm"):
            limit = stability_limit(lobes, speeds)
    except ModalError as error:  # speeds the chatter frequencies of the source do not cover: name the source
        raise CommandError(f"{given.title}: {error}") from error
    envelope = limit.critical_depths_m
    best = int(np.argmax(envelope))
    numbers, minima = lobes.minima_between(low, high)
    measured = source == "frf"
    report: dict[str, Any] = {
        "source": source, **given.report, "teeth": process.teeth, "kt_n_per_m2": process.kt,
        "kr_ratio": process.kr, "milling": args.milling,
        "radial_immersion": number(args.radial_immersion, "--radial-immersion"),
        "entry_angle_rad": process.entry_angle, "exit_angle_rad": process.exit_angle,
        "minimum_critical_depth_m": lobes.minimum_depth_m if np.isfinite(lobes.minimum_depth_m) else None,
        "minimum_chatter_frequency_hz": (lobes.minimum_chatter_frequency_hz
                                         if np.isfinite(lobes.minimum_depth_m) else None),
        "lobe_minima": [{"k": int(k), "spindle_speed_rpm": float(n)} for k, n in zip(numbers, minima)],
        "spindle_speed_range_rpm": [low, high],
        "best_spindle_speed_rpm": float(speeds[best]),
        "best_critical_depth_m": float(envelope[best]) if np.isfinite(envelope[best]) else None,
        "envelope": {"spindle_speed_rpm": speeds.tolist(),
                     "critical_depth_m": [float(a) if np.isfinite(a) else None for a in envelope],
                     "chatter_frequency_hz": [float(f) if np.isfinite(f) else None for f in
                                              limit.chatter_frequencies_hz],
                     "lobe": [int(k) if k >= 0 else None for k in limit.lobe_numbers]},
        "frf_sampling": "the rows of --frf" if measured else "the lobes' chatter frequencies",
        "frf": frf_table(*((frf.frequencies_hz, frf.values) if measured
                           else (lobes.chatter_frequencies_hz, frf(lobes.chatter_frequencies_hz)))),
    }
    title = (f"{given.title}: N = {process.teeth}, K_t = {process.kt:.4g} N/m^2, K_r = {process.kr:g}, a_e/D = "
             f"{report['radial_immersion']:g} {args.milling}-milling")
    if plot_dir:
        from flexrobot_ros.modal.stability_plots import plot_lobes

        report["lobes_plot"] = str(plot_lobes(lobes, limit, plot_dir / "lobes.png", title=title))
        progress.wrote("lobes plot", report["lobes_plot"])
    if given.map:
        report["map"] = run_map(args, process, *given.map, plot_dir, progress, title)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(title)
    for line in given.lines:
        print(line)
    if np.isfinite(lobes.minimum_depth_m):
        print(f"minimum critical depth: {1e3 * lobes.minimum_depth_m:.4g} mm (stable at every spindle speed below "
              f"it), chatter at {lobes.minimum_chatter_frequency_hz:.4f} Hz")
    else:
        print(f"minimum critical depth: none (nothing chatters at {grid[0]:.4g}-{grid[-1]:.4g} Hz)")
    print(f"lobe minima in {low:.1f}-{high:.1f} rpm: "
          + (", ".join(f"k = {k}: {n:.1f} rpm" for k, n in zip(numbers[:6], minima[:6])) or "none")
          + (" ..." if numbers.size > 6 else ""))
    best_depth = f"{1e3 * envelope[best]:.4g} mm" if np.isfinite(envelope[best]) else "unlimited (no lobe)"
    print(f"best spindle speed in {low:.1f}-{high:.1f} rpm: {speeds[best]:.1f} rpm, critical depth {best_depth} "
          f"(the limit solved at {speeds.size} speeds)")
    if "map" in report:
        item = report["map"]
        print(f"map over {item['points']} poses: minimum critical depth {1e3 * item['depth_range_m'][0]:.4g}.."
              f"{1e3 * item['depth_range_m'][1]:.4g} mm; best pose {np.round(item['best_pose'], 4).tolist()} "
              f"(tool tip at {np.round(item['best_tool_tip_position_m'], 3).tolist()} m)")
    return 0


def run_map(args: argparse.Namespace, process: Any, robot: Any, kind: str, sweep: Any, q: np.ndarray, kp: Any,
            kd: Any, geometry: dict, plot_dir: Path | None, progress: Progress, title: str) -> dict:
    """The minimum critical depth over the poses of ``--grid`` or ``--poses``: summary (SI units) and plot."""
    from flexrobot_ros.modal.stability_map import critical_depth_grid, critical_depth_map

    def report(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\rflexrobot lobes: pose {done}/{total}", end="\n" if done == total else "", file=sys.stderr,
                  flush=True)

    options = {"kp": kp, "kd": kd, "progress": report, **geometry}
    count = sweep[1].size * sweep[2].size if kind == "grid" else len(sweep)
    with progress.stage(f"critical depth map over {count} poses"):
        if kind == "grid":
            result = critical_depth_grid(robot, q, sweep[0], sweep[1], sweep[2], process, **options)
        else:
            result = critical_depth_map(robot, sweep, process, **options)
    depths = np.where(np.isfinite(result.minimum_depths_m), result.minimum_depths_m, np.nan)
    best = int(np.nanargmax(depths))
    summary: dict[str, Any] = {
        "kind": kind, "points": len(result), "poses": result.poses.tolist(),
        "minimum_critical_depth_m": [float(a) if np.isfinite(a) else None for a in result.minimum_depths_m],
        "chatter_frequency_hz": [float(f) if np.isfinite(f) else None for f in result.chatter_frequencies_hz],
        "tool_tip_position_m": result.tool_positions_m.tolist(),
        "depth_range_m": [float(np.nanmin(depths)), float(np.nanmax(depths))],
        "best_pose": result.poses[best].tolist(), "best_tool_tip_position_m": result.tool_positions_m[best].tolist(),
    }
    if kind == "grid":
        summary["grid_joints"] = list(result.grid_joints)
        summary["grid_values"] = [result.grid_values_a.tolist(), result.grid_values_b.tolist()]
    if plot_dir:
        from flexrobot_ros.modal.stability_plots import plot_depth_map

        summary["plot"] = str(plot_depth_map(result, plot_dir / "critical_depth_map.png", title=title))
        progress.wrote("critical depth map", summary["plot"])
    return summary
