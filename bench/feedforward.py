"""Benchmark of the flexible-joint feedforward of the KUKA LWR4 (thesis ch. 4): tau, dtau, ddtau and tau_m.

Every time is printed as a ratio to one ``pin.rnea`` call (link torques only, measured in the same run) and as an
absolute time. Rows: compiled SDRNEA called once per sample from Python (bound ctypes call, the 1 kHz control-loop
use), EJNEA called once per sample, and both batched over a 10,000-sample trajectory (SDRNEA: one C loop; EJNEA:
numpy vectorized over samples). Then the generated code's operation counts next to the thesis' (section 4.5.3:
1289 additions, 1516 multiplications, 12 trigonometric functions for tau, dtau, ddtau).

Goals (issue 5): compiled SDRNEA <= 3x one rnea call per sample from Python; a 10,000-sample trajectory <= 20 ms.
The last line printed is the headline figure.

    python bench/feedforward.py [--flags]    # --flags also times gcc -O1 vs -O2 (compile time and run time)
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import timeit
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros import compiled_code  # noqa: E402
from flexrobot_ros.dynamics import codegen  # noqa: E402
from flexrobot_ros.dynamics.ejnea import Ejnea  # noqa: E402
from flexrobot_ros.dynamics.feedforward import compiled_feedforward  # noqa: E402
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, motor_side  # noqa: E402
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree  # noqa: E402
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402

PI = np.pi
Q0 = [-PI / 4, -PI / 4, PI / 4, PI / 4, -PI / 4, -2 * PI / 3, PI / 4]
QF = [5 * PI / 6, 2 * PI / 3, -5 * PI / 6, -2 * PI / 3, 3 * PI / 4, PI / 2, -3 * PI / 4]
SAMPLES = 10_000
THESIS = {"additions": 1289, "multiplications": 1516, "trigonometric": 12}


def best(function, number: int, repeat: int = 7) -> float:
    """Best time per call [s] over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def row(label: str, seconds: float, reference: float) -> None:
    print(f"  {label:<58}{seconds * 1e6:>10.3f} us {seconds / reference:>8.2f} x rnea")


def compare_flags(robot) -> None:
    """Compile time and per-sample run time of the generated code with -O1 and -O2 (fresh cache each)."""
    import time

    chain, flexibility = KinematicTree.from_model(robot.model), JointFlexibility.from_robot(robot)
    x = np.random.default_rng(0).normal(size=(SAMPLES, 35))
    original = compiled_code.CFLAGS  # the flags compile_library passes to the compiler
    print("compiler flags (fresh cache each; compile = C generation + gcc):")
    for flags in (("-O1", "-shared", "-fPIC"), ("-O2", "-shared", "-fPIC")):
        folder = Path(tempfile.mkdtemp(prefix="ffbench"))
        try:
            compiled_code.CFLAGS = flags
            start = time.perf_counter()
            compiled = codegen.load_sdrnea(chain, flexibility, directory=folder)
            elapsed = time.perf_counter() - start
            batch = best(lambda: compiled.evaluate_batch(x), number=3) / SAMPLES
            print(f"  {flags[0]}: generate + compile {elapsed:6.2f} s, batched {batch * 1e6:6.3f} us/sample")
        finally:
            compiled_code.CFLAGS = original
            shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flags", action="store_true", help="also compare gcc -O1 and -O2")
    args = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # the thesis trajectory exceeds the KUKA speed limits

    robot = load_robot("lwr4")
    model, data = robot.model, robot.create_data()
    samples = Poly9Trajectory(Q0, QF, 3.0).evaluate(np.linspace(0.0, 3.0, SAMPLES))
    q, qd, qdd, q3, q4 = samples.q, samples.qd, samples.qdd, samples.q3, samples.q4
    k = SAMPLES // 3

    compiled = compiled_feedforward(robot)  # generated and compiled on first use, then cached
    flexibility = JointFlexibility.from_robot(robot)
    ejnea = Ejnea(model)
    x_batch = np.ascontiguousarray(np.concatenate([q, qd, qdd, q3, q4], axis=1))
    x_one = x_batch[k].copy()
    one = [v[k:k + 1] for v in (q, qd, qdd, q3, q4)]

    def ejnea_feedforward(v):
        out = ejnea(*v)
        return motor_side(flexibility, v[0], v[1], v[2], v[3], out.tau, out.dtau, out.ddtau)

    rnea = best(lambda: pin.rnea(model, data, q[k], qd[k], qdd[k]), number=20_000)
    sdrnea_one = best(lambda: compiled.evaluate_packed(x_one), number=20_000)
    ejnea_one = best(lambda: ejnea_feedforward(one), number=300)
    sdrnea_batch = best(lambda: compiled.evaluate_batch(x_batch), number=3)
    ejnea_batch = best(lambda: ejnea_feedforward([q, qd, qdd, q3, q4]), number=1, repeat=3)

    check = compiled.evaluate_batch(x_batch)[:, 6 * 7:]
    deviation = np.abs(check - ejnea_feedforward([q, qd, qdd, q3, q4]).tau_m).max()

    print(f"KUKA LWR4 (7 joints), thesis trajectory T = 3 s, {SAMPLES} samples; backend {compiled.backend}, "
          f"gcc {' '.join(compiled_code.CFLAGS)}; CPU cores {os.cpu_count()}")
    print(f"reference: one pin.rnea call (tau only) = {rnea * 1e6:.3f} us")
    print("per sample, tau + dtau + ddtau + q_m .. tau_m:")
    row("compiled SDRNEA, one bound ctypes call per sample", sdrnea_one, rnea)
    row("EJNEA (numpy) + motor side, one call per sample", ejnea_one, rnea)
    row(f"compiled SDRNEA, batched C loop over {SAMPLES} samples", sdrnea_batch / SAMPLES, rnea)
    row(f"EJNEA (numpy, vectorized) + motor side, {SAMPLES} samples", ejnea_batch / SAMPLES, rnea)
    print(f"whole {SAMPLES}-sample trajectory: SDRNEA {sdrnea_batch * 1e3:.2f} ms, EJNEA {ejnea_batch * 1e3:.2f} ms"
          f" (goal <= 20 ms); max |tau_m(SDRNEA) - tau_m(EJNEA)| = {deviation:.1e} N m")
    print("thesis (Matlab 2018b, C-coded mex): SDRNEA 19.3 us, EJNEA 35.1 us per iteration")
    ops, total = compiled.operations, compiled.operations_total
    print("generated code, tau + dtau + ddtau (with the motor side in parentheses) vs thesis section 4.5.3:")
    for field in ("additions", "multiplications", "trigonometric"):
        print(f"  {field:<16}{getattr(ops, field):>6} ({getattr(total, field)})   thesis {THESIS[field]:>5}")
    print(f"  {'other (tanh)':<16}{ops.other:>6} ({total.other})")
    if args.flags:
        compare_flags(robot)
    print(f"headline: compiled SDRNEA feedforward (tau, dtau, ddtau, q_m, tau_m) = {sdrnea_one / rnea:.2f} x one "
          f"pin.rnea call per sample from Python ({sdrnea_one * 1e6:.2f} us, goal <= 3x); {SAMPLES} samples in "
          f"{sdrnea_batch * 1e3:.2f} ms (goal <= 20 ms)")


if __name__ == "__main__":
    main()
