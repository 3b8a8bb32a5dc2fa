"""Benchmark of the composed elastic-robot plant (issue 24): the numeric path (DeNOC recursion, central-difference
Jacobian) against the CasADi path (symbolic forward dynamics, exact Jacobian; CasADi's virtual machine, and generated
C compiled once into the package's code cache) on mixed4 and moberg5_flexlink.

Sections:
1. per call: one state derivative and one state Jacobian of each path at a random moving state (best CPU time of a
   few repeats, the machine is shared), and the largest difference between the paths;
2. a 0.5 s ``simulate mixed4`` run (PD + gravity compensation about q_d = [0.2, 0.4, -0.6] rad from q0 = q_d + 0.1
   rad, fixed-step mode, 1 kHz, as the CLI): wall time and real-time factor of each path, final-state difference;
3. the headline (last line): numeric / CasADi ratios measured in this run.

BLAS threads are pinned to 1.

    python bench/elastic_robot.py
"""
from __future__ import annotations

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import Simulation  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller  # noqa: E402

DURATION = 0.5  # simulated time of section 2 [s]


def best(function, repeats: int = 5, number: int = 5) -> float:
    """Best time per call [s] over ``repeats`` batches of ``number`` calls."""
    return min(timeit.repeat(function, repeat=repeats, number=number)) / number


def plants(robot) -> dict[str, ElasticRobotPlant]:
    """The three evaluations of one robot's plant, with their build times [s] printed."""
    out = {}
    for label, options in (("numeric", {"path": "numeric"}), ("casadi", {}), ("compiled", {"compiled": True})):
        start = time.perf_counter()
        out[label] = ElasticRobotPlant(robot, **options)
        print(f"  build {label:8s} {time.perf_counter() - start:7.2f} s")
    return out


def per_call(name: str) -> tuple[float, float]:
    """Section 1 for one robot; returns (derivative, Jacobian) numeric/compiled time ratios."""
    robot = load_robot(name)
    print(f"{name}:")
    built = plants(robot)
    rng = np.random.default_rng(24)
    n = robot.n
    q = rng.uniform(-0.5, 0.5, n)
    x = built["numeric"].state(q, built["numeric"].static_motor_position(q), qd=rng.uniform(-1.0, 1.0, n))
    tau, slope = rng.uniform(-3.0, 3.0, n), rng.uniform(-1.0, 1.0, (n, len(x)))
    reference_derivative = built["numeric"].derivative(x, tau)
    reference_jacobian = built["numeric"].jacobian(x, tau, slope)
    times = {}
    for label, plant in built.items():
        d = best(lambda: plant.derivative(x, tau))
        j = best(lambda: plant.jacobian(x, tau, slope), repeats=3, number=2)
        times[label] = (d, j)
        dd = np.max(np.abs(plant.derivative(x, tau) - reference_derivative)) / np.max(np.abs(reference_derivative))
        dj = np.max(np.abs(plant.jacobian(x, tau, slope) - reference_jacobian)) / np.max(np.abs(reference_jacobian))
        print(f"  {label:8s} derivative {d * 1e3:8.3f} ms (x{times['numeric'][0] / d:6.1f})  Jacobian "
              f"{j * 1e3:8.3f} ms (x{times['numeric'][1] / j:6.1f})  vs numeric: {dd:.1e} / {dj:.1e} (relative; "
              "the Jacobian's is the central differences' error)")
    return times["numeric"][0] / times["compiled"][0], times["numeric"][1] / times["compiled"][1]


def simulate(robot, plant: ElasticRobotPlant) -> tuple[float, np.ndarray]:
    """(wall time [s], final state) of the section-2 run."""
    q_d = np.array([0.2, 0.4, -0.6])
    simulation = Simulation(plant, hold_controller(plant, q_d), q0=q_d + 0.1, rate=1000.0)
    start = time.perf_counter()
    output = simulation.run(DURATION)
    return time.perf_counter() - start, output.states[-1]


def main() -> None:
    print("1. per call (best of repeats; x: speed-up over the numeric path in this run)")
    ratios = {name: per_call(name) for name in ("moberg5_flexlink", "mixed4")}
    print(f"2. simulate mixed4, {DURATION:g} s, fixed step, 1 kHz")
    robot = load_robot("mixed4")
    walls, finals = {}, {}
    for label, plant in plants(robot).items():
        walls[label], finals[label] = simulate(robot, plant)
        difference = np.max(np.abs(finals[label] - finals["numeric"]))
        print(f"  {label:8s} wall {walls[label]:7.3f} s  real-time factor {DURATION / walls[label]:7.3f}x  "
              f"(x{walls['numeric'] / walls[label]:6.1f} over numeric)  final state vs numeric {difference:.1e}")
    d, j = ratios["mixed4"]
    print(f"headline: mixed4 numeric/compiled: derivative x{d:.1f}, Jacobian x{j:.0f}, 0.5 s simulate "
          f"x{walls['numeric'] / walls['compiled']:.1f} (numeric {walls['numeric']:.2f} s, compiled "
          f"{walls['compiled']:.3f} s wall, {DURATION / walls['compiled']:.2f}x real time)")


if __name__ == "__main__":
    main()
