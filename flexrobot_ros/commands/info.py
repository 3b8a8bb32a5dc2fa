"""``flexrobot info ROBOT``: a readable (or ``--json``) summary of a shipped robot or a user flexibility YAML."""
from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from flexrobot_ros.commands.arguments import CommandError

if TYPE_CHECKING:
    from flexrobot_ros.model import FlexibleRobot, RobotListing


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("info", help="summarize a robot (joints, stiffness, inertias, mass, gravity)")
    parser.add_argument("robot", nargs="?", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    parser.add_argument("--list", action="store_true",
                        help="list the shipped robots, one line each: what it is, its source, joints and flexible "
                             "parts")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def summary(robot: FlexibleRobot) -> dict:
    """Machine-readable summary of a robot (SI units; total_mass in kg, CoM in m in the base frame at q = 0).

    Keys shared with every command's JSON: ``robot`` (the name) and ``tool`` (boolean: the tool/payload is
    included); ``tool_payload`` describes it (mass [kg], frame, CoM [m]) or is null. ``joints`` are the modelled
    joints only (``continuous``: a URDF continuous joint, revolute without position limits); ``locked_joints`` maps
    the URDF joints held at a position to it [rad | m]."""
    import numpy as np
    import pinocchio as pin

    from flexrobot_ros.model.flexible_robot import angle_or_length

    data = robot.create_data()
    q0 = np.zeros(robot.n)
    com = pin.centerOfMass(robot.model, data, q0)
    return {
        "robot": robot.name,
        "tool": robot.tool is not None,
        "urdf": robot.urdf_source,
        "yaml": str(robot.yaml_path) if robot.yaml_path else None,
        "n": robot.n,
        "joints": [
            {
                "name": name,
                "type": kind,
                "unit": angle_or_length(kind),
                "stiffness": float(robot.stiffness[i]),
                "motor_inertia": float(robot.motor_inertia[i]),
                "gear_ratio": float(robot.gear_ratio[i]),
                "transmission": float(robot.transmission[i]),
                "link_damping": float(robot.link_damping[i]),
                "motor_damping": float(robot.motor_damping[i]),
                "kp": float(robot.kp[i]),
                "kd": float(robot.kd[i]),
                "continuous": name in robot.continuous_joints,
            }
            for i, (name, kind) in enumerate(zip(robot.joint_names, robot.joint_types))
        ],
        "total_mass": robot.total_mass,
        "com_at_zero": com.tolist(),
        "gravity": robot.gravity.tolist(),
        "tool_payload": None if robot.tool is None else {"mass": robot.tool.mass, "frame": robot.tool.frame,
                                                          "com": robot.tool.com.tolist()},
        "tool_frame": robot.tool_frame,
        "locked_joints": {name: float(position) for name, position in robot.locked_joints.items()},
        "extended": None if robot.extended is None else {  # seed 002: extra elastic DOFs and gear dampers
            "elastic": [{"name": name, "type": kind, "stiffness": float(k), "damping": float(d)}
                        for name, kind, k, d in zip(robot.extended.elastic_names, robot.extended.elastic_types,
                                                    robot.extended.elastic_stiffness, robot.extended.elastic_damping)],
            "spring_damping": robot.extended.spring_damping.tolist()},
    }


def listing_line(item: RobotListing) -> str:
    """One line of ``--list``: name, the YAML's summary, joints and flexible parts."""
    counts = [f"{len(item.elastic_joints)} elastic" if item.elastic_joints else "",
              f"{len(item.rigid_joints)} rigid" if item.rigid_joints else ""]
    parts = [item.summary, f"{len(item.elastic_joints) + len(item.rigid_joints)} joints "
                           f"({', '.join(c for c in counts if c)})"]
    if item.flexible_links:
        parts.append(f"flexible links {', '.join(item.flexible_links)}")
    if item.extra_elasticities:
        parts.append(f"{item.extra_elasticities} extra elasticit{'y' if item.extra_elasticities == 1 else 'ies'}")
    return f"{item.robot:<12} " + "; ".join(parts)


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from flexrobot_ros.model import list_shipped_robots, load_robot
    from flexrobot_ros.model.flexible_robot import link_damping_unit

    if args.list:
        listings = list_shipped_robots()
        print(json.dumps({"robots": [asdict(item) for item in listings]}) if args.json
              else "\n".join(listing_line(item) for item in listings))
        return 0
    if not args.robot:
        raise CommandError("name a robot or use --list")
    info = summary(load_robot(args.robot, tool=args.tool))
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    rigid = sum(j["stiffness"] == float("inf") for j in info["joints"])
    print(f"robot {info['robot']}  ({info['n']} joints: {info['n'] - rigid} elastic, {rigid} rigid)  "
          f"URDF {info['urdf']}")
    print(f"total mass {info['total_mass']:.3f} kg, gravity {info['gravity']} m/s^2, tool frame {info['tool_frame']}"
          + (f", tool {info['tool_payload']['mass']} kg at {info['tool_payload']['frame']}" if info["tool"] else ""))
    if info["locked_joints"]:
        print("locked (held, not modelled) [rad | m]: "
              + ", ".join(f"{name} {value:g}" for name, value in info["locked_joints"].items()))
    width = max(12, 2 + max(len(j["name"]) for j in info["joints"]))  # vendor names are long (shoulder_pan_joint)
    print(f"{'joint':<{width}}{'type':<12}{'K':>11}{'B':>11}{'N':>6}{'W':>6}{'d_f':>13}{'d_fm':>13}{'Kp':>11}"
          f"{'Kd':>13}")
    print(f"{'':<{width + 12}}{'[N m/rad]':>11}{'[kg m^2]':>11}{'[-]':>6}{'[-]':>6}{'[N m s/rad]':>13}"
          f"{'[N m s/rad]':>13}{'[N m/rad]':>11}{'[N m s/rad]':>13}")
    for j in info["joints"]:
        kind = "continuous" if j["continuous"] else j["type"]
        print(f"{j['name']:<{width}}{kind:<12}{j['stiffness']:>11.6g}{j['motor_inertia']:>11.5g}"
              f"{j['gear_ratio']:>6.4g}{j['transmission']:>6.4g}{j['link_damping']:>13.4g}{j['motor_damping']:>13.3g}"
              f"{j['kp']:>11.5g}{j['kd']:>13.5g}")
    prismatic = [j["name"] for j in info["joints"] if j["type"] == "prismatic"]
    if prismatic:
        print(f"prismatic {', '.join(prismatic)}: W [rad/m] (motor angle per metre of travel), "
              f"d_f [{link_damping_unit('prismatic')}]")
    if info["extended"]:
        print(f"extended model: gear dampers D_g {info['extended']['spring_damping']} N m s/rad; extra elasticities "
              + (", ".join(f"{e['name']} ({e['type']}, K_e {e['stiffness']:.4g}, D_e {e['damping']:.4g})"
                           for e in info["extended"]["elastic"]) or "none"))
    return 0
