"""``flexrobot init URDF --out FILE.yaml``: a starter flexibility YAML for any URDF or xacro file.

The chain from ``--base-link`` (default: the root link) to ``--tip-link`` (default: the end of the longest chain)
is elastic, every other movable joint locked at 0 clipped into its limits; every number is a placeholder marked as
such, by the rule of :mod:`flexrobot_ros.model.placeholder_rule` (:mod:`flexrobot_ros.model.starter_yaml` writes
the file). The file is written only once it loads (:func:`flexrobot_ros.model.load_robot`); the closed loop's modes
at the start pose are printed with the stability verdict, then the next steps.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from flexrobot_ros.commands.arguments import CommandError, output_file
from flexrobot_ros.errors import ModelError
from flexrobot_ros.text_table import Column, table


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from flexrobot_ros.model.placeholder_rule import RULE, SOURCES

    parser = subparsers.add_parser(
        "init", help="write a starter flexibility YAML for a URDF: one chain elastic, the other joints locked, "
                     "every value a marked placeholder",
        description="Write a starter flexibility YAML for a URDF or xacro file: the movable joints of the chain from "
                    "--base-link to --tip-link are elastic, every other movable joint is locked at 0 clipped into its "
                    "limits (continuous joints are noted). Defaults: --base-link the URDF's root link, --tip-link the "
                    "end of the longest chain of movable joints (descending from the base into the branch with the "
                    "longest run of movable joints, stopping where branches tie, as at a gripper's fingers); "
                    "tool_frame is the tip. Start pose q0: every joint at 0 clipped into its limits. Every number is "
                    "a PLACEHOLDER chosen so that the file loads and the closed loop is stable with sensible modes: "
                    + "; ".join(RULE) + ". Where the real numbers come from: "
                    + "; ".join(f"{key}: {text}" for key, (_, text) in SOURCES.items()) + ". The file is written "
                    "only once it loads; the closed-loop modes at q0 are printed.")
    parser.add_argument("urdf", type=Path, help="the robot's URDF, or a .xacro file (with --xacro-arg)")
    parser.add_argument("--base-link", metavar="LINK",
                        help="first link of the elastic chain (default: the root link)")
    parser.add_argument("--tip-link", metavar="LINK",
                        help="last link of the elastic chain, and the tool frame (default: the end of the longest "
                             "chain)")
    parser.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                        help="an argument of the xacro file (repeat for several); written to the YAML's xacro_args")
    parser.add_argument("--out", type=Path, required=True, help="the flexibility YAML to write (.yaml)")
    parser.add_argument("--force", action="store_true", help="overwrite --out when it exists")
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(func=run)


def xacro_arguments(texts: list[str], urdf: Path) -> dict[str, str]:
    """``--xacro-arg NAME:=VALUE`` options as a mapping; refused for a file that is not a .xacro file."""
    arguments = {}
    for text in texts:
        name, separator, value = text.partition(":=")
        if not separator or not name.strip():
            raise CommandError(f"--xacro-arg {text!r}: expected NAME:=VALUE (xacro's argument syntax)")
        arguments[name.strip()] = value
    if arguments and urdf.suffix != ".xacro":
        raise CommandError(f"--xacro-arg: {urdf} is not a .xacro file; its arguments would have no effect")
    return arguments


def urdf_reference(urdf: Path, out: Path) -> str:
    """What the YAML's ``urdf:`` says: the path relative to the YAML's folder when the URDF lies in or below it,
    else the absolute path."""
    urdf, folder = urdf.resolve(), out.resolve().parent
    return str(urdf.relative_to(folder)) if urdf.is_relative_to(folder) else str(urdf)


def write_verified(out: Path, text: str) -> Any:
    """Write ``text`` to ``out`` once it loads: a temporary file beside ``out`` is loaded, then renamed over it.
    Returns the loaded robot (a ModelError names the problem and nothing is written when it does not load)."""
    from flexrobot_ros.model import load_robot

    temporary = out.with_name(f".{out.stem}.init.yaml")
    try:
        temporary.write_text(text)
    except OSError as error:
        raise ModelError(f"--out {out}: cannot write: {error.strerror}") from None
    try:
        robot = load_robot(temporary)
        os.replace(temporary, out)
    except ModelError as error:
        raise ModelError(f"the file written for {out} does not load (a bug of flexrobot init; please report it with "
                         f"the URDF): {error}") from None
    finally:
        temporary.unlink(missing_ok=True)  # still there only when it did not load
    return robot


def urdf_type(joint: Any) -> str:
    """The URDF type of a :class:`~flexrobot_ros.model.starter_yaml.StarterJoint`: revolute, continuous, prismatic."""
    return "continuous" if joint.continuous else joint.kind


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from flexrobot_ros import __version__
    from flexrobot_ros.modal import modal_analysis
    from flexrobot_ros.model.placeholder_rule import locked_rotor_hz
    from flexrobot_ros.model.starter_yaml import starter_yaml
    from flexrobot_ros.model.urdf_source import read_urdf_text

    if not args.urdf.is_file():
        raise CommandError(f"{args.urdf}: no such URDF file")
    arguments = xacro_arguments(args.xacro_arg, args.urdf)
    out = output_file(args.out, "--out", (".yaml", ".yml"))
    if out.exists() and not args.force:
        raise CommandError(f"--out {out}: already exists; give --force to overwrite it")
    text = read_urdf_text(args.urdf, arguments, "URDF")
    options = [("--base-link", args.base_link), ("--tip-link", args.tip_link)]
    command = " ".join(["flexrobot init", str(args.urdf)] + [f"{flag} {value}" for flag, value in options if value]
                       + [f"--xacro-arg {a}" for a in args.xacro_arg] + [f"--out {out}"])
    starter = starter_yaml(text, str(args.urdf), urdf_reference(args.urdf, out), base=args.base_link,
                           tip=args.tip_link, xacro_args=arguments,
                           header=[f"Written by flexrobot_ros {__version__}: {command}"])
    robot = write_verified(out, starter.text)
    q0 = starter.start_pose
    modes = modal_analysis(robot, q0)
    report = {
        "robot": robot.name, "tool": False, "out": str(out), "urdf": robot.urdf_source,
        "base": starter.base, "base_given": starter.base_given, "tip": starter.tip, "tip_given": starter.tip_given,
        "tool_frame": robot.tool_frame, "frames_below_tip": list(starter.frames_below_tip),
        "elastic_joints": [{"name": j.name, "urdf_type": urdf_type(j), "start": j.start, "unit": j.unit,
                            "driven_inertia": j.driven_inertia, **asdict(j.placeholders),
                            "motor_inertia": j.placeholders.motor_inertia,
                            "locked_rotor_hz": locked_rotor_hz(j.placeholders, j.driven_inertia)}
                           for j in starter.elastic],
        "locked_joints": [{"name": j.name, "urdf_type": urdf_type(j), "position": j.start, "unit": j.unit}
                          for j in starter.locked],
        "start_pose": q0.tolist(), "frequencies_hz": modes.frequencies_hz.tolist(),
        "damping_ratios": modes.damping_ratios.tolist(), "stable": modes.stable, "verdict": modes.verdict,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("\n".join(describe(report)))
    return 0


def describe(report: dict[str, Any]) -> list[str]:
    """What ``flexrobot init`` did, as text (from its JSON ``report``): the file, the chain, the elastic joints'
    placeholders, the locked and continuous joints, the modes at the start pose, the next steps."""
    out, below = report["out"], report["frames_below_tip"]
    base = f"{report['base']} ({'given' if report['base_given'] else 'the root link'})"
    tip = f"{report['tip']} ({'given' if report['tip_given'] else 'the end of the longest chain'})"
    lines = [f"flexrobot init: wrote {out} (robot {report['robot']}, URDF {report['urdf']}); it loads",
             f"elastic chain: {base} -> {tip}; tool_frame {report['tool_frame']}"
             + (f" (fixed frames below it: {', '.join(below)}; --tip-link to choose one)" if below else ""),
             f"elastic joints ({len(report['elastic_joints'])}), placeholders from the inertia M_ii each drives at the "
             "start pose q0:"]
    lines += table([Column("joint", align="<"), Column("URDF type", align="<"), Column("q0"), Column("M_ii"),
                    Column("K", "N m/rad"), Column("B", "kg m^2"), Column("Kp", "N m/rad"), Column("Kd", "N m s/rad"),
                    Column("f_lr", "Hz")],
                   [[j["name"], j["urdf_type"], f"{j['start']:.6g} {j['unit']}",
                     f"{j['driven_inertia']:.4g} {'kg' if j['unit'] == 'm' else 'kg m^2'}", f"{j['stiffness']:.4g}",
                     f"{j['motor_inertia']:.4g}", f"{j['kp']:.4g}", f"{j['kd']:.4g}", f"{j['locked_rotor_hz']:.2f}"]
                    for j in report["elastic_joints"]], indent="  ")
    locked = report["locked_joints"]
    if locked:
        lines.append(f"locked joints ({len(locked)}), at 0 clipped into their limits:")
        lines += table([Column("joint", align="<"), Column("URDF type", align="<"), Column("position")],
                       [[j["name"], j["urdf_type"], f"{j['position']:.6g} {j['unit']}"] for j in locked], indent="  ")
    else:
        lines.append("locked joints: none")
    continuous = [f"{j['name']} ({side})" for side in ("elastic", "locked") for j in report[f"{side}_joints"]
                  if j["urdf_type"] == "continuous"]
    lines.append(f"continuous joints (revolute without position limits): {', '.join(continuous) or 'none'}")
    frequencies, zeta = report["frequencies_hz"], [100 * value for value in report["damping_ratios"]]
    lines.append(f"closed loop at q0 (flexrobot modal): {len(frequencies)} modes, {min(frequencies):.3g} to "
                 f"{max(frequencies):.3g} Hz, damping ratios {min(zeta):.3g} to {max(zeta):.3g} %; verdict: "
                 f"{report['verdict']}")
    q0 = ",".join(f"{value:.6g}" for value in report["start_pose"])
    return lines + [
        "next steps:",
        f"  flexrobot info {out}",
        f"  flexrobot modal {out} --q {q0}",
        f"  replace every PLACEHOLDER in {out}: stiffness from a static deflection test or the self-calibration "
        f"(flexrobot bringup hardware {out} --calibrate), rotor inertia and gear ratio from the datasheets, damping "
        "from identification (flexrobot identify)"]
