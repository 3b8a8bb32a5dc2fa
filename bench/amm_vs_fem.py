"""Assumed modes vs finite elements on the flexible RRP robot of seed 004 (issue 14): what each costs.

Sections:
1. seed 004 Table 1 (clamped-free beam of link 2, rad/s): FEM with N = 1, 2, 3 elements against the exact values;
2. inertia-matrix cost per evaluation (seed 004 Table 2 counts multiplications and additions of the closed-form
   inertia matrix with the numerical parameters substituted before the symbolic derivation): the same measure on
   the package's CasADi Lagrangian of the shipped ``rrp`` (multiplications, additions of the generated expression
   graph of I(y)), and its CPU time per call, AMM vs FEM, two modes or two elements per flexible link and plane;
3. the section 5 simulation (RRP, cycloids over 0.5 s, then 1 s of rest) with each model: model size (second-order
   equations), CPU time, and the ratio FEM / AMM next to the paper's 2036.89 s / 1533.34 s = 1.33.

The last line is the headline: CPU FEM / AMM of the simulation and of one inertia-matrix evaluation.

    python bench/amm_vs_fem.py [--plot amm_vs_fem.png]
"""
from __future__ import annotations

import os
import sys

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

from typing import Any  # noqa: E402

import casadi as ca  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.flexible_links.beam_elements import clamped_beam_frequencies  # noqa: E402
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics  # noqa: E402
from flexrobot_ros.flexible_links.link_specs import chain_from_robot  # noqa: E402
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes  # noqa: E402
from flexrobot_ros.dynamics.trajectory import load_trajectory  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.model.loader import share_directory  # noqa: E402
from flexrobot_ros.simulation import Simulation  # noqa: E402
from flexrobot_ros.simulation.decoupling_control import DecouplingControl  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402

MODELS = {"AMM": dict(method="assumed_modes", modes=2), "FEM": dict(method="finite_elements", elements=2)}
EI, RHO_A = 1165.4916, 0.331                       # seed 004 Table 3, links 2 and 3
PAPER_CPU = {"AMM": 1533.34, "FEM": 2036.89}       # seed 004 section 5 [s], IRIS-4D
PAPER_TABLE2_RRP = {"AMM": (743, 284), "FEM": (376, 128)}


def operation_counts(function: ca.Function) -> tuple[int, int]:
    """(multiplications, additions + subtractions) of an SX function's instruction list."""
    multiplications = additions = 0
    for k in range(function.n_instructions()):
        op = function.instruction_id(k)
        multiplications += op == ca.OP_MUL
        additions += op in (ca.OP_ADD, ca.OP_SUB)
    return multiplications, additions


def best(function, repeats=5, number=200) -> float:
    """Best mean CPU time [s] of ``function()`` over ``repeats`` batches of ``number`` calls."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            function()
        times.append((time.process_time() - start) / number)
    return min(times)


def table1() -> None:
    exact = ClampedFreeModes(1.0, 6).frequencies_rad_s(EI, RHO_A)
    print("1. seed 004 Table 1, clamped-free link (rad/s): exact " + ", ".join(f"{w:.3f}" for w in exact))
    for n in (1, 2, 3):
        fem = clamped_beam_frequencies(EI, RHO_A, 1.0, n)
        print(f"   FEM N = {n}: " + ", ".join(f"{w:.3f}" for w in fem)
              + f"  (first {n} within {np.max(fem[:n] / exact[:n] - 1) * 100:.3f} %)")


def inertia_costs(robot) -> dict[str, tuple[int, int, int, float]]:
    """Per model: (size, multiplications, additions, CPU seconds per I(y) call)."""
    out = {}
    for name, options in MODELS.items():
        chain = chain_from_robot(robot, **options)
        dynamics = lagrangian_dynamics(chain)
        y = np.random.default_rng(0).normal(scale=0.1, size=chain.size)
        y[:robot.n] = [0.3, 0.4, 0.6][:robot.n]
        mul, add = operation_counts(dynamics.inertia)
        out[name] = (chain.size, mul, add, best(lambda: dynamics.inertia(y)))
    return out


def section5_run(robot, options: dict) -> tuple[float, np.ndarray, np.ndarray, ElasticRobotPlant, Any]:
    """The section 5 run with one model: (CPU s, times, end-effector errors [m], plant, output). Decoupling control
    along the cycloids, LQR from 0.5 s, 1.5 s at 1 kHz (fixed step)."""
    trajectory = load_trajectory(share_directory() / "config" / "rrp_trajectory.yaml")
    plant = ElasticRobotPlant(robot, **options)
    control = DecouplingControl(plant, trajectory)
    start = time.process_time()
    output = Simulation(plant, control, q0=control.q_d, rate=1000.0).run(1.5)
    cpu = time.process_time() - start
    tool, data = robot.frame_id("tool0"), robot.model.createData()
    errors = []
    for x, q_d in zip(output.states, trajectory.evaluate(np.minimum(output.t, trajectory.end_time)).q):
        pin.framesForwardKinematics(robot.model, data, q_d)
        errors.append(np.linalg.norm(plant.frame_position(x, tool) - data.oMf[tool].translation))
    return cpu, output.t, np.array(errors), plant, output


def plot(runs: dict, path: Path) -> None:
    """End-effector error and link-2 tip deflections of both models over the run (seed 004 Figs. 6-7)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for (name, (_, t, error, plant, output)), style in zip(runs.items(), ("-", "--")):
        top.semilogy(t, np.maximum(error, 1e-9) * 1e3, style, label=name)
        deflection = plant.tip_deflections(output.states)[:, 0]
        bottom.plot(t, deflection[:, 0] * 1e3, style, label=f"{name} in plane")
        bottom.plot(t, deflection[:, 1] * 1e3, style, label=f"{name} out of plane")
    top.axvline(0.5, color="grey", lw=0.8)
    top.set_ylabel("end-effector error [mm]")
    top.legend()
    bottom.set_ylabel("link 2 tip deflection [mm]")
    bottom.set_xlabel("time [s] (LQR from 0.5 s)")
    bottom.legend(fontsize=8)
    figure.suptitle("RRP of seed 004 section 5: assumed modes vs finite elements (2 per plane)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"   plot: {path}")


def main() -> None:
    robot = load_robot("rrp", tool=True)
    table1()
    costs = inertia_costs(robot)
    print("2. inertia matrix of the RRP (CasADi Lagrangian, numerical parameters substituted), per evaluation:")
    for name, (size, mul, add, cpu) in costs.items():
        paper = PAPER_TABLE2_RRP[name]
        print(f"   {name}: {size} coordinates, {mul} mult. {add} add. (paper's Table 2 RRP: {paper[0]} / {paper[1]}), "
              f"{cpu * 1e6:.1f} us per call")
    runs = {name: section5_run(robot, options) for name, options in MODELS.items()}
    print("3. section 5 run (decoupling control along the cycloids, LQR from 0.5 s, 1.5 s at 1 kHz, fixed step):")
    for name, (cpu, t, error, plant, _) in runs.items():
        settle = t[np.nonzero(error > 1e-4)[0][-1]] if np.any(error > 1e-4) else 0.0
        print(f"   {name}: {plant.n + plant.m} second-order equations, {cpu:.2f} s CPU; end-effector error peak "
              f"{error.max() * 1e3:.2f} mm, below 0.1 mm from t = {settle:.3f} s (paper: {PAPER_CPU[name]} s CPU)")
    if "--plot" in sys.argv:
        plot(runs, Path(sys.argv[sys.argv.index("--plot") + 1]))
    ratio = runs["FEM"][0] / runs["AMM"][0]
    inertia_ratio = costs["FEM"][3] / costs["AMM"][3]
    ops_ratio = sum(costs["FEM"][1:3]) / sum(costs["AMM"][1:3])
    print(f"amm vs fem (RRP): simulation CPU FEM/AMM = {ratio:.2f} (paper 1.33; {runs['AMM'][0]:.2f} s AMM, "
          f"{runs['FEM'][0]:.2f} s FEM); inertia matrix FEM/AMM = {inertia_ratio:.2f} per call "
          f"({costs['AMM'][3] * 1e6:.1f} us AMM), {ops_ratio:.2f} in operations (paper's Table 2 RRP: "
          f"{sum(PAPER_TABLE2_RRP['FEM']) / sum(PAPER_TABLE2_RRP['AMM']):.2f})")


if __name__ == "__main__":
    main()
