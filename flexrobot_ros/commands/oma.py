"""``flexrobot oma FILE``: operational modal analysis of recorded signals (CSV, NPZ or a rosbag2 bag).

Reads the signals (time column ``t`` [s] plus named channels such as ``q_m.joint2``; a headerless matrix, one
column per channel, with ``--fs``; in bags every sensor_msgs/JointState topic gives channels
``<topic>.position.<joint>``, ``.velocity.`` and ``.effort.``),
conditions them (:func:`flexrobot_ros.oma.signals.prepare`), identifies the modes with VAR or SSI-cov over a
range of model orders, and prints them (``--json`` for machines), optionally with a PNG of the stabilization
diagram and spectrum (``--plot``) and a modal-data YAML entry for ``flexrobot identify`` (``--modal-data``).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from flexrobot_ros.commands.arguments import CommandError, add_vector, output_file, vector
from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.identify import DEFAULT_METHOD, METHODS, identify_modes
from flexrobot_ros.oma.selection import SelectionOptions
from flexrobot_ros.oma.bag_signals import BAG_SUFFIXES, read_joint_state_bag
from flexrobot_ros.oma.signals import Signals, SignalWarning, prepare, read_signals, select_channels
from flexrobot_ros.oma.stabilization import StabilizationCriteria

#: The bag reader under its former name (tests and scripts import it from here).
_read_joint_state_bag = read_joint_state_bag
#: channels analysed when ``--channels`` is not given (the thesis identifies from motor positions)
DEFAULT_CHANNELS = "q_m.*"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``oma``."""
    p = subparsers.add_parser("oma", help="identify modes (frequencies, damping, shapes) from recorded signals",
                              description="Operational modal analysis of recorded signals (CSV, NPZ, a "
                              "headerless matrix or a rosbag2 bag): natural frequencies, damping ratios and mode shapes.")
    p.add_argument("file", help="signal file: .csv/.npz (column t [s] + channels), a headerless matrix "
                                "(.asc/.txt/.dat/.csv, one column per channel; with --fs) or a rosbag2 bag")
    p.add_argument("--fs", type=float, metavar="HZ",
                   help="sampling rate [Hz] of a headerless matrix file (channels ch1, ch2, ...)")
    p.add_argument("--channels", nargs="+", metavar="NAME",
                   help=f"channels by name or glob (default: {DEFAULT_CHANNELS} if present, else all)")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help="identification method (default %(default)s; var is the thesis' method)")
    p.add_argument("--orders", help="model orders first:last[:step] or a,b,c (default: var 2:40 lags, "
                                    "ssi-cov 2:100 states)")
    p.add_argument("--block-rows", type=int, help="SSI-cov block rows (default from the maximum order)")
    p.add_argument("--start", type=float, help="analyse from this time [s]")
    p.add_argument("--end", type=float, help="analyse up to this time [s]")
    p.add_argument("--band", type=float, metavar="HZ",
                   help="highest frequency of interest [Hz] (default 0.45 fs): the record is decimated to about "
                        "2.5 times it (see --decimate) so the fit concentrates on the band, and poles above it are "
                        "not reported")
    p.add_argument("--fmin", type=float, default=0.0, metavar="HZ", help="lowest frequency of interest [Hz]")
    p.add_argument("--damping-max", type=float, default=StabilizationCriteria.damping_max,
                   help="largest damping ratio of a physical mode, fraction (default %(default)s)")
    p.add_argument("--mpc-min", type=float, default=0.0, help="minimum modal phase collinearity (default off)")
    p.add_argument("--stability", type=float, nargs=3, metavar=("DF", "DZ", "MAC"),
                   default=(StabilizationCriteria.frequency_tol, StabilizationCriteria.damping_tol,
                            StabilizationCriteria.mac_min),
                   help="stable pole: relative frequency and damping change at most DF, DZ and MAC at least MAC "
                        "against the previous order (default %(default)s)")
    p.add_argument("--selection", choices=("hierarchical", "grid"), default="hierarchical",
                   help="clustering of stable poles (grid = the thesis' NAFID 0.1 Hz x 0.1 %% grid)")
    p.add_argument("--min-fraction", type=float, default=SelectionOptions.min_fraction,
                   help="a mode must be stable in this fraction of the orders (default %(default)s)")
    p.add_argument("--detrend", choices=("constant", "linear", "none"), default="constant")
    p.add_argument("--highpass", type=float, metavar="HZ", help="zero-phase high-pass to remove set-point motion")
    p.add_argument("--reference-prefix", metavar="PREFIX",
                   help="subtract, from channel <x>.<joint>, the column PREFIX.<joint> (e.g. q_d)")
    p.add_argument("--decimate", type=int,
                   help="decimation factor with anti-alias filter (default: from --band, sampling rate about 2.5 "
                        "times the band; 1 without --band)")
    p.add_argument("--on-gap", choices=("error", "longest"), default="error",
                   help="sampling gaps: refuse (default) or analyse the longest gap-free segment")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", metavar="PNG", help="write the stabilization diagram and spectrum to this PNG")
    p.add_argument("--modal-data", metavar="YAML",
                   help="add the modes at this pose to a modal-data file (input of 'flexrobot identify'); a pose "
                        "already in the file has its modes replaced")
    add_vector(p, "--pose", help="joint positions q of the record, comma- or space-separated (for --modal-data; "
                                 "default: the mean of the q.* channels)")
    p.add_argument("--pose-channels", metavar="GLOB",
                   help="take the pose as the mean of these channels (default q.* when present)")
    p.set_defaults(func=run)


def _load(args: argparse.Namespace) -> tuple[Signals, Signals]:
    """(analysed channels, all channels) cropped to --start/--end."""
    path = Path(args.file)
    is_bag = path.is_dir() or path.suffix.lower() in BAG_SUFFIXES
    if is_bag and args.fs is not None:
        raise CommandError(f"--fs: {path} is a bag; its messages carry their own stamps (leave --fs out)")
    raw = read_joint_state_bag(path, args.channels) if is_bag else read_signals(path, fs_hz=args.fs)
    if args.start is not None or args.end is not None:
        lo = -np.inf if args.start is None else args.start
        hi = np.inf if args.end is None else args.end
        keep = (raw.t >= lo) & (raw.t <= hi)
        raw = Signals(raw.t[keep], raw.data[keep], raw.channels, raw.source)
    if args.channels:
        chosen = raw.select(args.channels)
    else:
        has_default = any(c.startswith(DEFAULT_CHANNELS[:-1]) for c in raw.channels)
        chosen = raw.select([DEFAULT_CHANNELS]) if has_default else raw
    return chosen, raw


def _references(args: argparse.Namespace, chosen: Signals, raw: Signals) -> dict[str, np.ndarray]:
    if not args.reference_prefix:
        return {}
    out = {}
    for name in chosen.channels:
        joint = name.split(".", 1)[-1]
        ref = f"{args.reference_prefix}.{joint}"
        if ref not in raw.channels:
            raise SignalError(f"{raw.source}: no reference column {ref!r} for channel {name!r}")
        out[name] = raw.data[:, raw.channels.index(ref)]
    return out


#: Two poses closer than this [rad | m] in every joint are the same pose of a modal-data file.
SAME_POSE_TOLERANCE = 1e-6


#: Last part of the prefix of per-joint channels (``q_m.joint2``, ``motor_states.position.joint2``).
JOINT_QUANTITIES = ("q", "q_m", "qd", "qd_m", "tau_m", "tau_j", "position", "velocity", "effort")


def _joint_count(raw: Signals, chosen: Signals) -> int | None:
    """Joints of the record: the channels of the record that share the analysed per-joint channels' prefix
    (``q_m.`` in ``q_m.joint2``, ``motor_states.position.``); None for other channels (an accelerometer's) or
    when the analysed channels mix prefixes."""
    prefixes = {name.rsplit(".", 1)[0] for name in chosen.channels if "." in name}
    if len(prefixes) != 1 or not all("." in name for name in chosen.channels):
        return None
    prefix = prefixes.pop()
    if prefix.rsplit(".", 1)[-1] not in JOINT_QUANTITIES:
        return None
    prefix += "."
    return sum(1 for name in raw.channels if name.startswith(prefix))


def _pose(args: argparse.Namespace, raw: Signals, chosen: Signals) -> np.ndarray:
    """The pose of the record for ``--modal-data``, checked against the record's joint count."""
    expected = _joint_count(raw, chosen)
    if args.pose:
        q = vector(args.pose, "--pose")
        if expected is not None and q.size != expected:
            raise CommandError(f"--pose: {q.size} values for a record of {expected} joints "
                               f"({', '.join(chosen.channels[:expected])}...); give one position per joint")
        return q
    pattern = args.pose_channels or "q.*"
    try:
        idx = select_channels(raw.channels, [pattern], raw.source)
    except SignalError:
        raise SignalError(f"{raw.source}: --modal-data needs the pose: give --pose q1,q2,... or --pose-channels "
                          f"(no channel matches {pattern!r})") from None
    return raw.data[:, idx].mean(axis=0)


def _existing_modal_data(path: Path, q: np.ndarray):
    """The modal data already in ``path`` (None when the file does not exist), checked against the new pose."""
    from flexrobot_ros.identification import modal_data as md

    if not path.exists():
        return None
    old = md.read_modal_data(path)
    sizes = {pose.q.size for pose in old.poses}
    if sizes and sizes != {q.size}:
        raise CommandError(f"--modal-data {path}: its poses have {sorted(sizes)} joint positions, this pose has "
                           f"{q.size}; use a new file for another robot")
    return old


def _write_modal_data(args: argparse.Namespace, result, q: np.ndarray, old) -> tuple[Path, str]:
    """Add (or replace) the modes at pose ``q`` in the modal-data file; returns the path and what was done."""
    from flexrobot_ros.identification import modal_data as md

    motor = all(c.startswith("q_m.") for c in result.channels)
    def pairs(shape: np.ndarray) -> list[list[float]]:  # largest entry = 1, like flexrobot_ros.modal's shapes
        shape = shape / shape[np.argmax(np.abs(shape))]
        return [[float(v.real), float(v.imag)] for v in shape]

    modes = tuple(md.measured_mode(m.frequency_hz, m.damping_ratio, pairs(m.shape) if motor else None,
                                   f"{args.file}: mode {k + 1}") for k, m in enumerate(result.modes))
    pose = md.PoseModes(q, modes)
    path = Path(args.modal_data)
    if old is None:
        data, action = md.ModalData((pose,), "motor", str(path)), "new file, pose 1"
    else:
        same = [k for k, p in enumerate(old.poses) if np.max(np.abs(p.q - q)) <= SAME_POSE_TOLERANCE]
        if same:
            poses = tuple(pose if k == same[0] else p for k, p in enumerate(old.poses) if k not in same[1:])
            action = f"replaced the modes of pose {same[0] + 1} of {len(poses)} (same q)"
        else:
            poses = old.poses + (pose,)
            action = f"added pose {len(poses)}"
        data = md.ModalData(poses, old.shape_coordinates, str(path), old.robot, old.extra)
    return md.write_modal_data(path, data), action


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r  model order {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Handler of ``flexrobot oma``."""
    plot = output_file(args.plot, "--plot", (".png",))
    modal_data = output_file(args.modal_data, "--modal-data", (".yaml", ".yml"))
    chosen, raw = _load(args)
    if modal_data is not None:
        pose = _pose(args, raw, chosen)
        old = _existing_modal_data(modal_data, pose)
    elif args.pose:
        raise CommandError("--pose is the pose of --modal-data; give --modal-data FILE.yaml too")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SignalWarning)  # they are printed as notes below
        prepared = prepare(chosen, detrend=args.detrend, highpass_hz=args.highpass,
                           references=_references(args, chosen, raw), band_hz=args.band,
                           decimate=args.decimate, on_gap=args.on_gap)
    criteria = StabilizationCriteria(frequency_tol=args.stability[0], damping_tol=args.stability[1],
                                     mac_min=args.stability[2], damping_max=args.damping_max, fmin_hz=args.fmin,
                                     fmax_hz=args.band, mpc_min=args.mpc_min)
    selection = SelectionOptions(method=args.selection, min_fraction=args.min_fraction)
    result = identify_modes(prepared.data, prepared.fs_hz, args.method, args.orders, prepared.channels, criteria,
                            selection, args.block_rows, noise_floor=prepared.noise_floor, progress=_progress)
    notes = list(prepared.notes) + list(result.notes)
    outputs = {}
    if plot is not None:
        from flexrobot_ros.oma.plots import plot_stabilization

        outputs["plot"] = str(plot_stabilization(result, plot, prepared.data,
                                                 title=f"{Path(args.file).name}: {result.method}"))
    if modal_data is not None:
        written, action = _write_modal_data(args, result, pose, old)
        outputs["modal_data"] = str(written)
        notes.append(f"modal data {written}: {action}")
    if args.json:
        doc = result.to_dict()
        doc["notes"] = notes
        doc["source"] = str(args.file)
        doc.update(outputs)
        print(json.dumps(doc, indent=2))
        return 0
    print(f"{args.file}: {len(prepared.channels)} channels ({', '.join(prepared.channels)}), "
          f"{prepared.data.shape[0]} samples at {prepared.fs_hz:.6g} Hz")
    print(f"{result.method}, orders {result.orders[0]}..{result.orders[-1]} ({len(result.orders)}), "
          f"{result.elapsed_s:.2f} s: {len(result.modes)} modes")
    print(f"{'mode':>4} {'f [Hz]':>10} {'zeta [%]':>9} {'std f':>8} {'std zeta':>9} {'conf':>5} {'MPC':>5}")
    for k, m in enumerate(result.modes, 1):
        print(f"{k:>4} {m.frequency_hz:>10.4f} {100 * m.damping_ratio:>9.4f} {m.frequency_std_hz:>8.4f} "
              f"{100 * m.damping_std:>9.4f} {m.confidence:>5.2f} {m.mpc:>5.2f}")
    if result.uncertain:
        print(f"uncertain poles, not modes (confidence below {selection.min_confidence:.0%} of the best mode's, "
              f"damping spread above {selection.max_damping_spread:.0%}):")
        for m in result.uncertain:
            print(f"{'-':>4} {m.frequency_hz:>10.4f} {100 * m.damping_ratio:>9.4f} {m.frequency_std_hz:>8.4f} "
                  f"{100 * m.damping_std:>9.4f} {m.confidence:>5.2f} {m.mpc:>5.2f}")
    for note in notes:
        print(f"note: {note}")
    for what, path in outputs.items():
        print(f"{what}: {path}")
    return 0
