"""``flexrobot identify-rigid ROBOT RECORD [RECORD ...]``: base parameters, rotor inertias and friction from recorded
positions and motor torques (seed 001 section 2.2).

Reads CSV/NPZ time series or rosbag2 bags (:func:`flexrobot_ros.identification.rigid_body.read_rigid_record`),
filters the positions (zero-phase Butterworth at 3 ``--cutoff``), reduces the record to the link side
(``--link-positions``, else the joint deflection through the flexibility YAML; ``--rigid`` skips it), differentiates
(central differences), passes every regressor column and the torques through the same low-pass at ``--cutoff``
(parallel filtering), solves the weighted least squares, prints the base parameters with their standard
deviations and the torque fit; ``--out FILE.yaml`` writes the identified robot (copy of the flexibility YAML + URDF beside it; every changed value
on stderr, warnings even with ``--json``; when the export fails nothing is written, the identification is still
printed and the exit status is 2), ``--validate RECORD`` predicts another record's torques, ``--plot-dir`` writes
the torque fit and the parameter table.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flexrobot_ros.commands.arguments import output_directory, output_file
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.text_table import Column, table


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "identify-rigid", help="identify base inertial parameters, rotor inertias and friction from positions and "
                               "motor torques (Huynh et al. 2020)",
        description="Rigid-body identification (Huynh et al. 2020, eqs. 4-7): base parameters by QR, rotor inertia and "
                    "viscous/Coulomb friction per joint, weighted least squares with standard deviations.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("records", nargs="+", type=Path, metavar="RECORD",
                        help="CSV/NPZ time series or rosbag2 bag(s) recorded along an excitation")
    parser.add_argument("--positions", default="q_m.*",
                        help="motor position channels (after the gear), the joint name last (default 'q_m.*'; "
                             "bags: 'motor_states.position.*')")
    parser.add_argument("--link-positions", metavar="GLOB",
                        help="link encoder channels (e.g. 'q.*', bags: 'joint_states.position.*'): the rigid model "
                             "is evaluated there; without them the link positions are the motor positions minus "
                             "the joint deflection (tau_m - motor-side terms) / K of the flexibility YAML")
    parser.add_argument("--rigid", action="store_true",
                        help="ignore the joint elasticity: evaluate the rigid model at the recorded positions as "
                             "they are (the deflection becomes a model error)")
    parser.add_argument("--torques", default="tau_m.*",
                        help="motor torque channels (default 'tau_m.*'; bags: 'motor_states.effort.*')")
    parser.add_argument("--cutoff", type=float, default=5.0,
                        help="cutoff [Hz] of the zero-phase Butterworth low-pass through which every regressor "
                             "column and the torques pass (parallel filtering; the positions are low-passed at 3x "
                             "it before differentiation; default 5)")
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


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from flexrobot_ros.identification.rigid_body import identify_rigid_body, read_rigid_record
    from flexrobot_ros.model import load_robot

    output_file(args.out, "--out", (".yaml", ".yml"))
    if args.plot_dir is not None:
        output_directory(args.plot_dir, "--plot-dir")
    progress = Progress("identify-rigid", quiet=args.json)
    robot = load_robot(args.robot, tool=args.tool)
    records = [read_rigid_record(path, robot, args.positions, args.torques, args.link_positions)
               for path in args.records]
    with progress.stage(f"weighted least squares on {len(records)} record(s), low-pass {args.cutoff:g} Hz"):
        result = identify_rigid_body(robot, records, cutoff_hz=args.cutoff, elasticity=not args.rigid)
    summary = {"robot": robot.name, "tool": robot.tool is not None, "records": [str(p) for p in args.records],
               **result.to_dict()}
    validation = []
    for path in args.validate:
        record = result.conditioned(read_rigid_record(path, robot, args.positions, args.torques,
                                                      args.link_positions))
        measured = record.measured_torques()
        rms = np.sqrt(np.mean((result.predict(robot, record) - measured) ** 2, axis=0))
        peak = np.abs(measured).max(axis=0)
        validation.append({"record": str(path), "rms_nm": rms.tolist(), "peak_nm": peak.tolist(),
                           "rms_over_peak_percent": (100 * rms / peak).tolist()})
    summary["validation"] = validation
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

        description = (f"from {', '.join(str(p) for p in args.records)} (positions {args.positions!r}, torques "
                       f"{args.torques!r}, low-pass {args.cutoff:g} Hz, link side: {result.link_side}), "
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
    print(f"rigid-body identification of {robot.name}: {result.base.count} base parameters from "
          f"{summary['samples_used']} samples x {robot.n} joints, cond(A) = {result.condition:.4g}; link side: "
          f"{summary['link_side']}")
    print("\n".join(table([Column("base parameter", align="<"), Column("value"), Column("std"), Column("rel. std"),
                           Column("unit", align="<"), Column("expression", align="<")],
                          [[entry["name"], f"{entry['value']:.6g}", f"{entry['std']:.3g}",
                            f"{entry['relative_std_percent']:.3g}%", entry["unit"], entry["expression"]]
                           for entry in summary["parameters"]], indent="  ")))
    print("\n".join(table([Column("joint", align="<"), Column("residual rms"), Column("peak torque")],
                          [[name, f"{result.residual_rms[j]:.4g} N m", f"{result.torque_peak[j]:.4g} N m"]
                           for j, name in enumerate(robot.joint_names)], indent="  ")))
    for entry in validation:
        print(f"  validation {entry['record']}: rms / peak " +
              ", ".join(f"{v:.3g} %" for v in entry["rms_over_peak_percent"]))
    return _export_status(export_error)


def _export_status(error: str | None) -> int:
    """0, or 2 after the one-line error of an export that failed (the identification was printed anyway)."""
    if error is None:
        return 0
    print(f"flexrobot identify-rigid: error: {' '.join(error.split())}", file=sys.stderr)
    return 2
