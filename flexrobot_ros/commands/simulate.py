"""``flexrobot simulate ROBOT``: simulate a robot held by PD + gravity compensation, with impacts, to CSV/NPZ.

Example (seed 000 section 2.4.3, case 2)::

    flexrobot simulate scompi --tool --q0 0 -0.37399913 1.94479545 0 -1.94479545 0 --duration 3 --rate 1000 \\
        --impact "tool0,0,50,0,0.2,0.206" --out impact.csv --plot impact.png

The output has a header row, ``t`` [s] first, then ``q.<joint>``, ``q_m.<joint>``, ``qd.<joint>``,
``qd_m.<joint>``, ``tau_m.<joint>``, ``tau_j.<joint>`` (and ``energy.<term>`` with ``--energy``); see
:mod:`flexrobot_ros.timeseries`.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from flexrobot_ros.errors import SimulationError
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import (AccurateIntegration, FixedStepIntegration, PDGravityCompensation,
                                      RectangularPulse, Simulation, SimulationOutput)
from flexrobot_ros.simulation.integrators import ACCURATE_METHODS
from flexrobot_ros.timeseries import write_timeseries


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("simulate", help="simulate PD-held robot with impacts, write CSV/NPZ (+ plot)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    parser.add_argument("--q0", type=float, nargs="+", help="initial link positions [rad | m] (default zeros); the "
                        "robot starts at rest with the springs carrying gravity")
    parser.add_argument("--set-point", type=float, nargs="+", help="PD set point q_d (default: q0)")
    parser.add_argument("--kp", type=float, help="motor PD stiffness gain for every joint (default: the YAML's)")
    parser.add_argument("--kd", type=float, help="motor PD damping gain for every joint (default: the YAML's)")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time [s] (default 3)")
    parser.add_argument("--rate", type=float, default=1000.0, help="output sample rate [Hz] (default 1000)")
    parser.add_argument("--impact", action="append", default=[], metavar="FRAME,FX,FY,FZ,T0,T1",
                        help="rectangular force pulse [N] in world axes at a frame during [T0, T1) s; 'FRAME,FX,FY,FZ,"
                             "MX,MY,MZ,T0,T1' adds a moment [N m]; repeatable")
    parser.add_argument("--mode", choices=("fixed", "accurate"), default="fixed",
                        help="fixed-step real-time (default) or accurate variable-step integration")
    parser.add_argument("--substeps", type=int, default=1, help="fixed mode: integration steps per sample")
    parser.add_argument("--method", choices=ACCURATE_METHODS, default="LSODA", help="accurate mode: solve_ivp method")
    parser.add_argument("--rtol", type=float, default=1e-10, help="accurate mode: relative tolerance")
    parser.add_argument("--atol", type=float, default=1e-12, help="accurate mode: absolute tolerance")
    parser.add_argument("--energy", action="store_true", help="also write energy.<term> columns [J]")
    parser.add_argument("--out", required=True, help="output file (.csv or .npz)")
    parser.add_argument("--plot", help="PNG of the motor and link deviations from the set point")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(func=run)


def parse_impact(text: str) -> RectangularPulse:
    """'frame,fx,fy,fz,t0,t1' or 'frame,fx,fy,fz,mx,my,mz,t0,t1' as a rectangular pulse."""
    fields = [field.strip() for field in text.split(",")]
    if len(fields) not in (6, 9) or not fields[0]:
        raise SimulationError(f"--impact {text!r}: expected 'FRAME,FX,FY,FZ,T0,T1' or 'FRAME,FX,FY,FZ,MX,MY,MZ,T0,T1'")
    try:
        values = [float(field) for field in fields[1:]]
    except ValueError:
        raise SimulationError(f"--impact {text!r}: forces and times must be numbers") from None
    return RectangularPulse(fields[0], values[:-2], values[-2], values[-1])


def plot_output(output: SimulationOutput, q_d: np.ndarray, q_m_d: np.ndarray, impacts: list[RectangularPulse],
                path: Path, title: str) -> None:
    """Motor and link deviations from the set point versus time (two panels), impact windows shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    for axis, values, reference, label in ((axes[0], output.q_m, q_m_d, "q_m - q_m^d"),
                                           (axes[1], output.q, q_d, "q - q^d")):
        for i, name in enumerate(output.plant.joint_names):
            axis.plot(output.t, values[:, i] - reference[i], label=name, linewidth=0.8)
        for impact in impacts:
            axis.axvspan(impact.t0, impact.t1, color="0.85")
        axis.set_ylabel(f"{label} [rad | m]")
        axis.grid(True, linewidth=0.3)
    axes[0].legend(ncol=6, fontsize="small")
    axes[0].set_title(title)
    axes[1].set_xlabel("t [s]")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot, tool=args.tool)
    q0 = robot.check_q(np.zeros(robot.n) if args.q0 is None else args.q0, "--q0")
    q_d = q0 if args.set_point is None else robot.check_q(args.set_point, "--set-point")
    controller = PDGravityCompensation.create(robot, q_d, kp=args.kp, kd=args.kd)
    impacts = [parse_impact(text) for text in args.impact]
    simulation = Simulation(robot, controller, q0=q0, rate=args.rate, mode=args.mode,
                            fixed=FixedStepIntegration(substeps=args.substeps),
                            accurate=AccurateIntegration(args.method, args.rtol, args.atol), excitations=impacts)
    start = time.perf_counter()
    output = simulation.run(args.duration)
    wall = time.perf_counter() - start
    path = write_timeseries(args.out, output.t, output.columns(energy=args.energy))
    if args.plot:
        plot_output(output, controller.q_d, controller.q_m_d, impacts, Path(args.plot),
                    f"{robot.name}{' + tool' if args.tool else ''}: {args.mode} mode, {args.rate:g} Hz")
    summary = {
        "robot": robot.name, "tool": bool(args.tool), "mode": args.mode, "samples": int(output.t.size),
        "duration_s": float(output.t[-1]), "rate_hz": args.rate, "wall_time_s": wall,
        "real_time_factor": float(output.t[-1] / wall) if wall > 0 else None,
        "max_motor_deviation_rad": float(np.abs(output.q_m - controller.q_m_d).max()),
        "out": str(path), "plot": args.plot,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['samples']} samples over {summary['duration_s']:g} s ({args.mode} mode) in {wall:.3f} s "
              f"wall ({summary['real_time_factor']:.1f}x real time); max |q_m - q_m^d| = "
              f"{summary['max_motor_deviation_rad']:.3g} rad -> {path}" + (f", plot {args.plot}" if args.plot else ""))
    return 0
