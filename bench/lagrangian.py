"""Cost of the CasADi Lagrangian on the RRP with a sliding link (issue 21: the test suite's heaviest files spend their
time here), old evaluation path against the package's, measured in the same run.

Sections:
1. build time of the Lagrangian of the shipped ``rrp`` (links 2 and 3 flexible, two elements per plane, 19
   equations), absolute;
2. one evaluation of I(y) and h(y, y_dot), CPU per call (best of 5 blocks): plain CasADi calls with DM <-> numpy
   conversions (``np.array(f(...))``, the old path, still the public ``inertia`` / ``bias`` functions) against
   ``LagrangianDynamics.inertia_and_bias`` (one function, bound buffers); the numbers must be equal bit for bit;
3. seed 004 section 5's decoupling control (cycloids, LQR from 0.5 s) over the first 0.4 s at 1 kHz (exponential
   Euler with Jacobian refreshes): CPU with ``ChainDynamics`` remembering (I, h) of recent states (controller and
   plant share them) against the same run with that memory off; the states must be equal bit for bit.

The last line is the headline: the speed-up of the decoupling run and of one (I, h) evaluation.

    python bench/lagrangian.py
"""
from __future__ import annotations

import os
import sys

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics.trajectory import load_trajectory  # noqa: E402
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics  # noqa: E402
from flexrobot_ros.flexible_links.link_specs import chain_from_robot  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.model.loader import share_directory  # noqa: E402
from flexrobot_ros.simulation import Simulation  # noqa: E402
from flexrobot_ros.simulation.decoupling_control import DecouplingControl  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402


def cpu_per_call(call, calls: int = 200, blocks: int = 5) -> float:
    """Best CPU time [s] per call over ``blocks`` blocks of ``calls`` calls."""
    best = np.inf
    for _ in range(blocks):
        start = time.process_time()
        for _ in range(calls):
            call()
        best = min(best, (time.process_time() - start) / calls)
    return best


def decoupling_run(robot, remember: bool, duration: float) -> tuple[float, np.ndarray]:
    """CPU time [s] and states of the section 5 run over ``duration`` s at 1 kHz (plant and controller built first)."""
    plant = ElasticRobotPlant(robot, path="numeric")  # the chain's (I, h), which the controller shares
    if not remember:
        plant.model.chain_dynamics._recent_size = 0
    control = DecouplingControl(plant, load_trajectory(share_directory() / "config" / "rrp_trajectory.yaml"))
    simulation = Simulation(plant, control, q0=control.q_d, rate=1000.0)
    start = time.process_time()
    output = simulation.run(duration)
    return time.process_time() - start, output.states


def main() -> None:
    robot = load_robot("rrp", tool=True)
    chain = chain_from_robot(robot)
    start = time.process_time()
    dynamics = lagrangian_dynamics(chain)
    print(f"1. Lagrangian of the shipped rrp ({chain.size} equations): built in {time.process_time() - start:.2f} s "
          "CPU")

    rng = np.random.default_rng(0)
    y = np.r_[0.3, 0.5, 0.6, 1e-3 * rng.normal(size=chain.m)]
    y_dot = rng.normal(size=chain.size)
    old = cpu_per_call(lambda: (np.array(dynamics.inertia(y)), np.array(dynamics.bias(y, y_dot)).ravel()))
    new = cpu_per_call(lambda: dynamics.inertia_and_bias(y, y_dot))
    equal = all(np.array_equal(a, b) for a, b in zip(
        (np.array(dynamics.inertia(y)), np.array(dynamics.bias(y, y_dot)).ravel()),
        dynamics.inertia_and_bias(y, y_dot)))
    print(f"2. I and h per evaluation: plain CasADi calls {old * 1e3:.3f} ms, bound buffers {new * 1e3:.3f} ms "
          f"(x{old / new:.2f}); equal bit for bit: {equal}")

    duration = 0.4
    off, states_off = decoupling_run(robot, remember=False, duration=duration)
    on, states_on = decoupling_run(robot, remember=True, duration=duration)
    print(f"3. decoupling control, first {duration} s at 1 kHz: {off:.2f} s CPU evaluating every (I, h), {on:.2f} s "
          f"remembering recent states (x{off / on:.2f}); equal states bit for bit: "
          f"{np.array_equal(states_off, states_on)}")
    print(f"lagrangian: RRP decoupling run x{off / on:.2f} faster ({off:.2f} -> {on:.2f} s CPU for {duration} s), "
          f"one (I, h) x{old / new:.2f} ({old * 1e3:.3f} -> {new * 1e3:.3f} ms)")


if __name__ == "__main__":
    main()
