"""Benchmark of the modal analysis and the SDRNEA feedforward on a vendor robot: the Franka Panda of example-robot-data
(7 elastic joints, the two fingers locked; the flexibility YAML of test/vendor_cases.py), beside the shipped robots
the other benches measure (bench/modal.py: Scompi; bench/feedforward.py: LWR4), all in this run.

Every time is the best CPU time of this process over a few rounds (measured round-robin, so that load from other
processes on the shared machine hits every row alike), printed as an absolute time and as a ratio to one ``pin.rnea``
call of the same robot measured in the same run (and, for the modal rows, to one ``pin.crba`` call, bench/modal.py's
unit). Rows:

- modal analysis, one pose: ``modal_analysis`` (what ``flexrobot modal`` calls: linearization, eigenvalues, mode
  shapes), and ``modal_map`` batched over random poses within the limits, per pose (frequencies + damping);
- SDRNEA feedforward, per sample: the compiled code (tau, dtau, ddtau, q_m .. tau_m) called once per sample from
  Python (the 1 kHz control-loop use) and batched over a 10,000-sample trajectory.

Needs example-robot-data (``pip install .[test]``). BLAS/LAPACK threads are pinned to 1. The last line printed is the
headline figure.

    python bench/vendor_panda.py [--poses 2000] [--rounds 5]
"""
from __future__ import annotations

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from flexrobot_ros.dynamics.feedforward import compiled_feedforward  # noqa: E402
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory  # noqa: E402
from flexrobot_ros.modal import modal_analysis  # noqa: E402
from flexrobot_ros.modal.maps import modal_map  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from modal import interleaved  # noqa: E402  (bench/modal.py: the same round-robin timing)
from vendor_cases import PANDA  # noqa: E402
from vendor_robots import vendor_folder  # noqa: E402

SAMPLES = 10_000
#: Scompi configuration 8 (bench/modal.py's pose) and the LWR4 trajectory of bench/feedforward.py (thesis ch. 4).
Q8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
PI = np.pi
LWR4_Q0 = [-PI / 4, -PI / 4, PI / 4, PI / 4, -PI / 4, -2 * PI / 3, PI / 4]
LWR4_QF = [5 * PI / 6, 2 * PI / 3, -5 * PI / 6, -2 * PI / 3, 3 * PI / 4, PI / 2, -3 * PI / 4]


def repeated(function, count: int):
    """``function`` called ``count`` times (one timed unit of many short calls)."""
    def run() -> None:
        for _ in range(count):
            function()
    return run


def random_poses(robot, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` poses uniformly within the position limits (an unlimited joint: within +-pi)."""
    lower = np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -PI)
    upper = np.where(np.isfinite(robot.upper_limits), robot.upper_limits, PI)
    return rng.uniform(lower, upper, (count, robot.n))


def packed_trajectory(q0, qf, duration: float) -> np.ndarray:
    """x = [q, qd, qdd, q3, q4] (SAMPLES, 5n) of a poly9 move, the compiled SDRNEA's input."""
    samples = Poly9Trajectory(q0, qf, duration).evaluate(np.linspace(0.0, duration, SAMPLES))
    return np.ascontiguousarray(np.concatenate([samples.q, samples.qd, samples.qdd, samples.q3, samples.q4], axis=1))


def row(label: str, seconds: float, rnea: float, crba: float | None = None) -> None:
    also = "" if crba is None else f" {seconds / crba:>8.1f} x crba"
    print(f"  {label:<60}{seconds * 1e6:>10.2f} us {seconds / rnea:>9.2f} x rnea{also}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=2000, help="poses of the batched modal map (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="round-robin repeats, best kept (default 5)")
    args = parser.parse_args()
    folder = vendor_folder()
    if folder is None:
        sys.exit("bench/vendor_panda.py: example-robot-data is not installed (pip install .[test])")
    warnings.simplefilter("ignore", RuntimeWarning)  # the LWR4 thesis trajectory exceeds its speed limits
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as directory:
        panda = load_robot(PANDA.write_yaml(folder, Path(directory)))
    robots = {"panda": panda, "scompi": load_robot("scompi"), "lwr4": load_robot("lwr4")}
    pose = {"panda": np.array(PANDA.pose_a), "scompi": Q8, "lwr4": np.array(LWR4_Q0)}
    poses = {name: random_poses(robots[name], args.poses, rng) for name in ("panda", "scompi")}
    moves = {"panda": packed_trajectory(PANDA.pose_a, PANDA.pose_b, 1.5), "lwr4": packed_trajectory(LWR4_Q0,
                                                                                                    LWR4_QF, 3.0)}
    compiled = {name: compiled_feedforward(robots[name]) for name in moves}  # generated and compiled once, cached
    one = {name: moves[name][SAMPLES // 3].copy() for name in moves}
    data = {name: robot.create_data() for name, robot in robots.items()}
    rates = {name: rng.normal(size=(2, robot.n)) for name, robot in robots.items()}  # qd, qdd of the rnea calls
    calls = 2000
    functions = {}
    for name, robot in robots.items():
        q, model, scratch = pose[name], robot.model, data[name]
        functions[f"{name} rnea"] = (repeated(lambda m=model, d=scratch, q=q, r=rates[name]: pin.rnea(m, d, q, *r),
                                              calls), calls)
        functions[f"{name} crba"] = (repeated(lambda m=model, d=scratch, q=q: pin.crba(m, d, q), calls), calls)
    for name in ("panda", "scompi"):
        functions[f"{name} modes"] = (repeated(lambda r=robots[name], q=pose[name]: modal_analysis(r, q), 50), 50)
        functions[f"{name} map"] = (lambda r=robots[name], p=poses[name]: modal_map(r, p), args.poses)
    for name in moves:
        functions[f"{name} sdrnea one"] = (repeated(lambda c=compiled[name], x=one[name]: c.evaluate_packed(x),
                                                    calls), calls)
        functions[f"{name} sdrnea batch"] = (lambda c=compiled[name], x=moves[name]: c.evaluate_batch(x), SAMPLES)
    times = interleaved(functions, args.rounds)

    print(f"best CPU time of {args.rounds} rounds, BLAS threads 1; Panda: example-robot-data panda.urdf, 7 elastic "
          f"joints, fingers locked (test/vendor_cases.py)")
    for name, title in (("panda", "Franka Panda (n = 7, 28 x 28 state matrix)"),
                        ("scompi", "Scompi, shipped (n = 6, 24 x 24; bench/modal.py's robot)")):
        rnea, crba = times[f"{name} rnea"], times[f"{name} crba"]
        print(f"{title}: one pin.rnea call {rnea * 1e6:.2f} us, one pin.crba call {crba * 1e6:.2f} us")
        row("modal analysis, one pose (modal_analysis: flexrobot modal)", times[f"{name} modes"], rnea, crba)
        row(f"modal_map over {args.poses} random poses, per pose", times[f"{name} map"], rnea, crba)
    for name, title in (("panda", "Franka Panda, poly9 move A -> B in 1.5 s"),
                        ("lwr4", "KUKA LWR4, shipped (n = 7; bench/feedforward.py's trajectory)")):
        rnea = times[f"{name} rnea"]
        print(f"{title}: one pin.rnea call {rnea * 1e6:.2f} us")
        row("SDRNEA feedforward, one compiled call per sample", times[f"{name} sdrnea one"], rnea)
        row(f"SDRNEA feedforward, batched over {SAMPLES} samples, per sample", times[f"{name} sdrnea batch"], rnea)
    modes, sdrnea = times["panda modes"] / times["panda rnea"], times["panda sdrnea one"] / times["panda rnea"]
    print(f"headline: Franka Panda (vendor URDF, 7 joints): modal analysis {times['panda modes'] * 1e6:.0f} us per "
          f"pose = {modes:.0f} x pin.rnea (Scompi {times['scompi modes'] / times['scompi rnea']:.0f} x); SDRNEA "
          f"feedforward {times['panda sdrnea one'] * 1e6:.2f} us per sample = {sdrnea:.2f} x pin.rnea (LWR4 "
          f"{times['lwr4 sdrnea one'] / times['lwr4 rnea']:.2f} x)")


if __name__ == "__main__":
    main()
