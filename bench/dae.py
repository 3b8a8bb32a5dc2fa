"""Benchmark of the DAE inverse dynamics of the extended flexible-joint model (seed 002, Table 2 and section 10).

Table 2 of the paper times Matlab/fsolve solutions of the index-3, -2 and -1 systems (eqs. 17, 18, 19) on the
moberg5 arm (Table 1), 2.2 m line in 0.3 s, for nonlinear dynamics (NL) with 3-step BDF and h = 3 ms (33), 6-step
BDF and h = 1 ms (61), with (S) and without scaling of the algebraic equations. Its linear-dynamics columns (L) are
not defined in the paper (ERRATA 002) and are left out. Every time here is printed as a ratio to the index-2 NL33S
solve of the same run, beside the absolute time and the paper's ratio (paper times 15-97 s). Then the
non-minimum-phase solvers of section 10 (moberg5_nmp, Table 3) with their problem sizes beside the paper's.
The last line printed is the headline figure.

    python bench/dae.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics.dae.bdf_inverse import solve_bdf  # noqa: E402
from flexrobot_ros.dynamics.dae.bdf_optimization import solve_bdf_optimization  # noqa: E402
from flexrobot_ros.dynamics.dae.fourier_optimization import solve_fourier_optimization  # noqa: E402
from flexrobot_ros.dynamics.dae.inverse_dae import InverseDae  # noqa: E402
from flexrobot_ros.dynamics.dae.reference import CartesianLine  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402

#: Table 2 [s]: (system, variant) -> paper time; variants NL33S, NL33, NL61S.
TABLE_2 = {(3, "NL33S"): 18, (3, "NL33"): 29, (3, "NL61S"): 73,
           (2, "NL33S"): 17, (2, "NL33"): 18, (2, "NL61S"): 75,
           (1, "NL33S"): 22, (1, "NL33"): 34, (1, "NL61S"): 69}
VARIANTS = {"NL33S": (3, 0.003, True), "NL33": (3, 0.003, False), "NL61S": (6, 0.001, True)}
LINE = CartesianLine([-1.1, -1.2], [1.1, -1.2], 0.0, 0.3)
Q_START = [-0.4335, 2.3005]


def best_of(function, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    robot = load_robot("moberg5")
    daes = {system: InverseDae(robot, LINE, system) for system in (3, 2, 1)}
    measured = {}
    for (system, variant) in TABLE_2:
        k, h, scaled = VARIANTS[variant]
        seconds, solution = best_of(lambda: solve_bdf(daes[system], 0.3, h, k, scaled, q_g_guess=Q_START))
        measured[system, variant] = (seconds, solution)
    reference = measured[2, "NL33S"][0]
    print("Table 2 (moberg5, 2.2 m in 0.3 s): time / index-2 NL33S of this run [paper's ratio]  (absolute)")
    print(f"{'':10}" + "".join(f"{v:>28}" for v in VARIANTS))
    for system in (3, 2, 1):
        cells = []
        for variant in VARIANTS:
            seconds, solution = measured[system, variant]
            status = "diverged" if solution.diverged else f"{seconds / reference:5.2f}x"
            paper = TABLE_2[system, variant] / TABLE_2[2, "NL33S"]
            cells.append(f"{status:>9} [{paper:4.2f}x] ({seconds * 1e3:6.1f} ms)")
        print(f"index {system:<4}" + "".join(f"{c:>28}" for c in cells))
    diverged = [key for key, (_, s) in measured.items() if s.diverged]
    if diverged:
        print(f"failed (Newton lost solvability, the index-3 small-step effect of section 9.2): {diverged}")

    nmp = load_robot("moberg5_nmp")
    ext = nmp.extended
    data = ext.create_data()
    q0 = np.array([0.2, 1.5])
    pin.framesForwardKinematics(ext.model, data, ext.full_q(q0))
    start = data.oMf[ext.model.getFrameId("tool0")].translation[[0, 2]]
    line = CartesianLine(start, start + 0.025, 0.1, 0.1)
    print("\nSection 10 (moberg5_nmp, 25 mm x 25 mm line, motion 0.1-0.2 s): problem sizes and times")
    rows = []
    for form, paper_seconds in (("nco", 880.0), ("nls", 630.0)):
        solution, size = solve_bdf_optimization(InverseDae(nmp, line, 1), 151, 0.002, 6, form, q_g_guess=q0)
        rows.append((f"discretized {form.upper()} (k = 6, h = 2 ms)", size, paper_seconds, solution.message))
    fourier, size = solve_fourier_optimization(InverseDae(nmp, line, 3), 61, 0.005, 1, 20, q_g_guess=q0)
    rows.append(("continuous (M = 1, R = 20, h = 5 ms)", size, 22.0, fourier.message))
    for name, size, paper_seconds, message in rows:
        print(f"  {name:<40} {size}; paper {paper_seconds:g} s -> {paper_seconds / size.seconds:,.0f}x faster  "
              f"[{message[:40]}]")
    solved = [seconds for seconds, solution in measured.values() if not solution.diverged]
    print(f"headline: Table 2 solves take {min(solved) * 1e3:.0f}-{max(solved) * 1e3:.0f} ms "
          f"(index-3 NL33S = {measured[3, 'NL33S'][0] / reference:.2f}x index-2 NL33S, paper 1.06x; paper 15-97 s); "
          f"NMP optimizations {min(r[1].seconds for r in rows):.2f}-{max(r[1].seconds for r in rows):.2f} s "
          "(paper 22-880 s)")


if __name__ == "__main__":
    main()
