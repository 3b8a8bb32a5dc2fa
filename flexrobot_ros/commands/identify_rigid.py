"""``flexrobot identify-rigid ROBOT [RECORD ...]``: base parameters, rotor inertias, friction and torque offsets from
recorded positions and motor torques (seed 001 section 2.2).

Reads the records (:mod:`flexrobot_ros.identification.rigid_record`: CSV/NPZ time series or rosbag2 bags, several
files of one recording joined, channels by pattern, efforts scaled, a non-uniform clock resampled onto a uniform
grid) given on the command line or in an experiment file (``--experiment``,
:mod:`flexrobot_ros.identification.experiment`; the command line wins), filters the positions (zero-phase
Butterworth at 3 ``--cutoff``), reduces the record to the link side (``--link-positions``, else the joint deflection
through the flexibility YAML; ``--rigid`` skips it), differentiates (central differences), passes every regressor
column and the torques through the same low-pass at ``--cutoff`` (parallel filtering), solves the weighted least
squares over the fitted joints' rows (``--fit-joints``, ``--min-velocity``), prints the base parameters with their
standard deviations and the torque fit; ``--validate RECORD`` (and the experiment's ``validate``) predicts another
record's torques (held-out error against the recorded torques, :mod:`flexrobot_ros.identification.rigid_validation`);
``--out FILE.yaml`` writes the identified robot (copy of the flexibility YAML + URDF beside it; every changed value
on stderr, warnings even with ``--json``; when the export fails nothing is written, the identification is still
printed and the exit status is 2), ``--plot-dir`` the torque fit and the parameter table.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from flexrobot_ros.commands.arguments import CommandError, number, output_directory, output_file, split_values
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.text_table import Column, table

#: Low-pass cutoff [Hz] when neither the command line nor the experiment file gives one.
DEFAULT_CUTOFF_HZ = 5.0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "identify-rigid", help="identify base inertial parameters, rotor inertias and friction from positions and "
                               "motor torques (Huynh et al. 2020)",
        description="Rigid-body identification (Huynh et al. 2020, eqs. 4-7): base parameters by QR, rotor inertia and "
                    "viscous/Coulomb friction per joint (and a torque offset with --torque-offset), weighted least "
                    "squares with standard deviations. Channels are given by a glob whose last dotted part is the "
                    "joint ('q_m.*') or a pattern with {joint} ('- {joint}_position').")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("records", nargs="*", type=Path, metavar="RECORD",
                        help="CSV/NPZ time series or rosbag2 bag(s) recorded along an excitation (or the "
                             "experiment file's records)")
    parser.add_argument("--experiment", type=Path, metavar="FILE",
                        help="experiment YAML: records (several files of one recording, rows), channels, effort "
                             "scales and offsets, fitted joints, velocity threshold, torque offset, cutoff "
                             "(schema: flexrobot_ros/identification/experiment.py); the options below win over it")
    parser.add_argument("--positions", metavar="PATTERN",
                        help="motor position channels (after the gear; joint positions of rigid joints): a glob "
                             "whose last dotted part is the joint or a pattern with {joint} (default 'q_m.*'; bags: "
                             "'motor_states.position.*')")
    parser.add_argument("--link-positions", metavar="PATTERN",
                        help="link encoder channels (e.g. 'q.*', bags: 'joint_states.position.*'): the rigid model "
                             "is evaluated there; without them the link positions are the motor positions minus "
                             "the joint deflection (tau_m - motor-side terms) / K of the flexibility YAML")
    parser.add_argument("--rigid", action="store_true",
                        help="ignore the joint elasticity: evaluate the rigid model at the recorded positions as "
                             "they are (the deflection becomes a model error)")
    parser.add_argument("--torques", metavar="PATTERN",
                        help="motor torque channels (default 'tau_m.*'; bags: 'motor_states.effort.*')")
    parser.add_argument("--effort-scale", metavar="JOINT=VALUE,...",
                        help="torque = scale x recorded effort + offset: scales per joint (default 1), e.g. "
                             "arm_1_joint=100*0.136")
    parser.add_argument("--effort-offset", metavar="JOINT=VALUE,...",
                        help="offsets [N m | N] per joint added after the scale (default 0)")
    parser.add_argument("--fit-joints", metavar="JOINT,...",
                        help="the joints whose torques are fitted (default all; the others' motion still enters)")
    parser.add_argument("--min-velocity", metavar="V|JOINT=V,...",
                        help="leave a joint's equation out of the fit at every filtered row where its motor moves "
                             "slower than V [rad/s | m/s] at any sample within 1 / cutoff of the row (the Coulomb "
                             "law does not hold near reversals): one speed for all joints or per joint (default 0)")
    parser.add_argument("--torque-offset", action="store_true",
                        help="identify a constant torque offset per joint (drive or sensor zero error)")
    parser.add_argument("--cutoff", type=float, metavar="HZ",
                        help="cutoff [Hz] of the zero-phase Butterworth low-pass through which every regressor "
                             "column and the torques pass (parallel filtering; the positions are low-passed at 3x "
                             f"it before differentiation; default {DEFAULT_CUTOFF_HZ:g})")
    parser.add_argument("--physical", action="store_true",
                        help="also fit physically consistent standard parameters (positive masses, triangle "
                             "inequalities) and export those")
    parser.add_argument("--out", type=Path,
                        help="identified flexibility YAML to write (the URDF goes beside it, same stem)")
    parser.add_argument("--validate", type=Path, action="append", default=[], metavar="RECORD",
                        help="record(s) not used for the fit whose torques the identified model predicts")
    parser.add_argument("--tool", action="store_true", help="the robot carried its tool during the records")
    parser.add_argument("--plot-dir", type=Path, help="write torque_fit.png and parameters.png here")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.set_defaults(func=run)


def joint_values(text: str | None, option: str, joint_names: tuple[str, ...]) -> dict[str, float]:
    """``JOINT=VALUE,...`` of ``option`` as a dict (values read by :func:`.arguments.number`)."""
    out: dict[str, float] = {}
    for item in split_values(text or ""):
        joint, equals, value = item.partition("=")
        if not equals or not joint:
            raise CommandError(f"{option}: {item!r}: expected JOINT=VALUE (joints {list(joint_names)})")
        if joint not in joint_names:
            raise CommandError(f"{option}: {joint!r} is not a joint of the robot ({list(joint_names)})")
        out[joint] = number(value, f"{option} {joint}")
    return out


def min_velocity(text: str | None, experiment: Any, joint_names: tuple[str, ...]) -> list[float]:
    """The per-joint speed floor [rad/s | m/s]: ``--min-velocity`` (one number or JOINT=V,...), else the experiment's,
    else 0."""
    value: Any = experiment.min_velocity
    if text is not None:
        value = joint_values(text, "--min-velocity", joint_names) if "=" in text else number(text, "--min-velocity")
    if isinstance(value, dict):
        speeds = [float(value.get(joint, 0.0)) for joint in joint_names]
    else:
        speeds = [float(value or 0.0)] * len(joint_names)
    if min(speeds) < 0.0:
        raise CommandError(f"--min-velocity: {text}: expected speeds >= 0 [rad/s | m/s]")
    return speeds


def run(args: argparse.Namespace) -> int:
    import numpy  # noqa: F401  the BLAS libraries that single_threaded_blas finds must be loaded first
    import scipy.linalg  # noqa: F401

    from flexrobot_ros.oma.threads import single_threaded_blas

    with single_threaded_blas():  # small dense least squares: BLAS threads only wait for each other
        return identify(args)


def identify(args: argparse.Namespace) -> int:
    """The command (module docstring)."""
    from flexrobot_ros.identification.experiment import Experiment, RecordSpec, read_experiment
    from flexrobot_ros.identification.rigid_body import identify_rigid_body
    from flexrobot_ros.identification.rigid_record import (DEFAULT_POSITIONS, DEFAULT_TORQUES, Channels,
                                                           RecordWarning, read_record)
    from flexrobot_ros.identification.rigid_validation import held_out_error
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.model.flexible_robot import torque_or_force

    output_file(args.out, "--out", (".yaml", ".yml"))
    if args.plot_dir is not None:
        output_directory(args.plot_dir, "--plot-dir")
    progress = Progress("identify-rigid", quiet=args.json)
    robot = load_robot(args.robot, tool=args.tool)
    joints = robot.joint_names
    experiment = read_experiment(args.experiment, joints) if args.experiment else Experiment(source="")
    if args.records and experiment.records:
        raise CommandError(f"records given on the command line and in {experiment.source} (records); give them in "
                           "one place")
    fit_specs = experiment.records or tuple(RecordSpec((path,)) for path in args.records)
    if not fit_specs:
        raise CommandError("no record: give RECORD files or an --experiment file with records")
    validate_specs = experiment.validate + tuple(RecordSpec((path,)) for path in args.validate)
    channels = Channels(
        positions=args.positions or experiment.channels.get("positions", DEFAULT_POSITIONS),
        torques=args.torques or experiment.channels.get("torques", DEFAULT_TORQUES),
        link_positions=args.link_positions or experiment.channels.get("link_positions"))
    scale = {**experiment.effort_scale, **joint_values(args.effort_scale, "--effort-scale", joints)}
    offset = {**experiment.effort_offset, **joint_values(args.effort_offset, "--effort-offset", joints)}
    fit_joints = split_values(args.fit_joints) if args.fit_joints else experiment.fit_joints
    speeds = min_velocity(args.min_velocity, experiment, joints)
    torque_offset = args.torque_offset or bool(experiment.torque_offset)
    cutoff = args.cutoff if args.cutoff is not None else experiment.cutoff_hz or DEFAULT_CUTOFF_HZ

    files: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordWarning)
        recorded = [read_record(spec.files, robot, channels, scale, offset, spec.rows, files) for spec in fit_specs]
        held_out = [read_record(spec.files, robot, channels, scale, offset, spec.rows, files)
                    for spec in validate_specs]
    notes = list(dict.fromkeys(str(warning.message) for warning in caught if issubclass(warning.category,
                                                                                         RecordWarning)))
    for note in notes:
        print(f"flexrobot identify-rigid: warning: {note}", file=sys.stderr)
    for record in recorded + held_out:
        progress.say(record.clock())
    with progress.stage(f"weighted least squares on {len(recorded)} record(s), low-pass {cutoff:g} Hz"):
        result = identify_rigid_body(robot, [record.uniform() for record in recorded], cutoff_hz=cutoff,
                                     elasticity=not args.rigid, fit_joints=fit_joints, min_velocity=speeds,
                                     torque_offset=torque_offset)
    summary = {"robot": robot.name, "tool": robot.tool is not None, "records": [spec.name for spec in fit_specs],
               **result.to_dict(), "warnings": notes}
    validation = [held_out_error(robot, result, record) for record in held_out]
    summary["validation"] = [entry.to_dict() for entry in validation]
    phi = None
    if args.physical:
        from flexrobot_ros.identification.rigid_export import physically_consistent

        with progress.stage("physically consistent standard parameters"):
            phi, distance = physically_consistent(robot, result)
        summary["physical_mahalanobis_distance"] = distance
        progress.say(f"physically consistent fit: Mahalanobis distance {distance:.3g} to the LS base parameters "
                     f"(about {result.base.count ** 0.5:.2g} or less when they are physically consistent)")
    export_error = None
    if args.out is not None:
        from flexrobot_ros.errors import IdentificationError
        from flexrobot_ros.identification.rigid_export import standard_from_base, write_identified_robot

        description = (f"from {', '.join(spec.name for spec in fit_specs)} (positions {channels.positions!r}, "
                       f"torques {channels.torques!r}, low-pass {cutoff:g} Hz, link side: {result.link_side}), "
                       + ("physically consistent fit" if phi is not None else "closest to the previous values"))
        try:
            exported = write_identified_robot(robot, result, standard_from_base(robot, result) if phi is None
                                              else phi, args.out, description)
        except IdentificationError as error:    # the identification stands; nothing was written
            export_error = f"--out {args.out}: nothing written: {error}"
            summary["export"] = {"error": export_error}
        else:
            summary["export"] = exported.to_dict()
            summary["files"] = [str(exported.yaml), str(exported.urdf)]
            for path in summary["files"]:
                progress.wrote("identified robot", path)
            for line in exported.changes:
                progress.say(f"changed {line}")
            for line in exported.warnings:
                print(f"flexrobot identify-rigid: warning: {line}", file=sys.stderr)
    if args.plot_dir is not None:
        from flexrobot_ros.identification.rigid_plots import plot_rigid_fit

        summary["plots"] = [str(p) for p in plot_rigid_fit(robot, result, args.plot_dir)]
        for path in summary["plots"]:
            progress.wrote("plot", path)
    if args.json:
        print(json.dumps(summary))
        return _export_status(export_error)
    units = {joint: torque_or_force(kind) for joint, kind in zip(joints, robot.joint_types)}
    print(f"rigid-body identification of {robot.name}: {result.base.count} base parameters from "
          f"{summary['samples_used']} rows, torques of {len(result.joint_names)} of {robot.n} joints, cond(A) = "
          f"{result.condition:.4g}; link side: {summary['link_side']}")
    print("\n".join(table([Column("base parameter", align="<"), Column("value"), Column("std"), Column("rel. std"),
                           Column("unit", align="<"), Column("expression", align="<")],
                          [[entry["name"], f"{entry['value']:.6g}", f"{entry['std']:.3g}",
                            f"{entry['relative_std_percent']:.3g}%", entry["unit"], entry["expression"]]
                           for entry in summary["parameters"]], indent="  ")))
    print("\n".join(table([Column("joint", align="<"), Column("residual rms"), Column("peak torque"), Column("rows")],
                          [[joint, f"{result.residual_rms[j]:.4g} {units[joint]}",
                            f"{result.torque_peak[j]:.4g} {units[joint]}", str(result.rows_per_joint[j])]
                           for j, joint in enumerate(result.joint_names)], indent="  ")))
    fitted_units = sorted({units[joint] for joint in result.joint_names})
    for entry in validation:
        pooled = f"{entry.pooled_rms:.4g} {fitted_units[0]}" if len(fitted_units) == 1 else \
            f"{entry.pooled_rms:.4g} (N m and N)"
        print(f"  validation {entry.source}: {entry.samples} recorded samples, t = {entry.t_first:.4g}-"
              f"{entry.t_last:.4g} s, rms over the fitted joints {pooled}")
        print("\n".join(table([Column("joint", align="<"), Column("rms"), Column("of peak"), Column("peak"),
                               Column("low-passed rms")],
                              [[joint, f"{entry.rms[j]:.4g} {units[joint]}",
                                f"{100 * entry.rms[j] / entry.peak[j]:.3g} %", f"{entry.peak[j]:.4g} {units[joint]}",
                                f"{entry.filtered_rms[j]:.4g} {units[joint]}"]
                               for j, joint in enumerate(entry.joint_names)], indent="    ")))
    return _export_status(export_error)


def _export_status(error: str | None) -> int:
    """0, or 2 after the one-line error of an export that failed (the identification was printed anyway)."""
    if error is None:
        return 0
    print(f"flexrobot identify-rigid: error: {' '.join(error.split())}", file=sys.stderr)
    return 2
