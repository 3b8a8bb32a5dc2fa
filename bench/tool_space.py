"""Benchmark of the tool-space feedforward of the general model (issue 25): flexarm2 (planar two-link arm, both links
flexible) moving its tool along a straight line, rest to rest.

For each BDF step h (order k = 3): the time of the tool-space DAE (zeros along the path, whole-trajectory
optimization) as a ratio to the rigid baseline of the same line measured in the same run (pinocchio inverse
kinematics and dynamics), the absolute times beside; then both torques through the simulator (ElasticRobotPlant,
1 kHz, shipped PD): the largest tip distance from the timed line during the motion [mm] and the residual vibration
over 0.5 s after it [mm]. The last line printed is the headline.

    python bench/tool_space.py [--steps 0.004 0.002] [--duration 0.6]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics import feedforward  # noqa: E402
from flexrobot_ros.dynamics.dae.reference import CartesianLine  # noqa: E402
from flexrobot_ros.dynamics.dae.tool_space_feedforward import tool_space_feedforward  # noqa: E402
from flexrobot_ros.dynamics.feedforward import tool_space_feedforward_result  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import FeedforwardPD, Simulation  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402

START, END = [0.6, 0.3], [0.4, 0.6]


def tip_errors(robot, plant, result, line, after: float = 0.5) -> tuple[float, float]:
    """(max tip distance from the timed line during the motion, max distance from its end over ``after`` s) [m]."""
    controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
    end = line.t0 + line.duration
    out = Simulation(plant, controller, q0=result.q[0], rate=1000.0).run(end + after)
    frame = plant.model.frame_id(robot.tool_frame)
    tips = np.array([plant.model.frame_placement(plant.coordinates(x)[0], frame).translation[:2]
                     for x in out.states])
    error = np.linalg.norm(tips - line.evaluate(out.t, 0)[0], axis=1)
    during = (out.t >= line.t0) & (out.t <= end)
    return float(error[during].max()), float(error[out.t > end].max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=float, nargs="+", default=[0.004, 0.002], help="BDF steps h [s]")
    parser.add_argument("--duration", type=float, default=0.6, help="duration of the line motion [s]")
    args = parser.parse_args()
    robot = load_robot("flexarm2")
    plant = ElasticRobotPlant(robot)
    line = CartesianLine(START, END, 0.0, args.duration)
    print(f"flexarm2, tool line {START} -> {END} m in {args.duration:g} s, k = 3, shipped PD "
          f"(K_P = {robot.kp[0]:g} N m/rad, K_D = {robot.kd[0]:g} N m s/rad), simulator at 1 kHz")
    headline = ""
    for h in args.steps:
        start = time.perf_counter()
        solved = tool_space_feedforward(robot, line, h=h, k=3)
        dae_s = time.perf_counter() - start
        result = tool_space_feedforward_result(robot, solved)
        shifted = solved.reference
        start = time.perf_counter()
        rigid = feedforward(robot, shifted, "rigid", rate_hz=1.0 / h)
        rigid_s = time.perf_counter() - start
        dae_during, dae_after = tip_errors(robot, plant, result, shifted)
        rigid_during, rigid_after = tip_errors(robot, plant, rigid, shifted)
        zeros = solved.unstable_zeros()
        print(f"h = {1e3 * h:g} ms: {solved.solver}, {solved.size}; unstable zeros {zeros.real.min():.1f}-"
              f"{zeros.real.max():.1f} rad/s; pre-actuation {shifted.t0:.3f} s")
        print(f"  time: dae {dae_s:.2f} s = {dae_s / rigid_s:.0f}x the rigid baseline ({rigid_s:.3f} s)")
        print(f"  tip during the motion: dae {1e3 * dae_during:.4f} mm, rigid {1e3 * rigid_during:.2f} mm; residual "
              f"after it: dae {1e3 * dae_after:.4f} mm, rigid {1e3 * rigid_after:.2f} mm "
              f"({rigid_after / dae_after:.0f}x smaller)")
        headline = (f"tool-space dae on flexarm2, h = {1e3 * h:g} ms: {dae_s / rigid_s:.0f}x the rigid baseline's time "
                    f"({dae_s:.2f} s vs {rigid_s:.3f} s); tip within {1e3 * dae_during:.3f} mm of the line, residual "
                    f"vibration {rigid_after / dae_after:.0f}x below the rigid baseline")
    print(headline)


if __name__ == "__main__":
    main()
