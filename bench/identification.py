"""Benchmark of the joint stiffness/damping identification (seed 000 chapter 3, issue 7), on one core.

Rows, each with wall time, residual + Jacobian evaluations, and a ratio to a reference measured in the same run:

1. Planar 2R, Table 3.2 case 1: modes 1 and 4 at the 15 configurations of Table 3.1, all six parameters, bounds of
   eq. 3.42, 40 seeded random starts, the full ``identify_joint_parameters`` call (matching, multistart,
   identifiability, predicted modes). Reference: the same 40 local solves with the finite-difference Jacobian
   (scipy '2-point', what lsqnonlin does in the thesis) instead of the analytic one.
2. The same with the starts spread over two worker processes (workers=2): the ratio says whether it pays.
3. Scompi round trip from model data: modes 1-11 (the OMA-observable ones, Table 2.5) at 4 configurations of
   section 2.4.2, K identified from a YAML 20-30 % off, 8 starts, determinant and eigenvalue residuals.
   Reference: one forward modal analysis at the 4 poses.
4. Scompi round trip through the simulator and OMA: the impact experiment of section 2.4.3 at 5 configurations,
   SSI-cov OMA of the motor positions, K identified (eigenvalue residuals); ratio to the simulated duration.

Goal (issue 7): row 1 under 5 s on one core. The last line printed is the headline figure.

    python bench/identification.py
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import least_squares  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.identification import identify_joint_parameters, modal_data_from_model  # noqa: E402
from flexrobot_ros.identification.affine_model import AffineModel  # noqa: E402
from flexrobot_ros.identification.characteristic_determinant import CharacteristicDeterminant  # noqa: E402
from flexrobot_ros.identification.parameters import parse_parameters, resolve_bounds  # noqa: E402
from flexrobot_ros.modal import linearize, modal_analysis  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402

TABLE_3_1_POSES = np.array([
    [1.474, 1.765], [0.133, 1.947], [2.193, 0.839], [0.667, 0.501], [0.946, 0.443], [2.24, 2.208], [-1.373, 1.717],
    [0.849, 0.179], [0.549, 2.582], [2.945, 2.577], [-2.307, 2.945], [1.627, 0.974], [-2.088, 1.638],
    [2.335, 1.686], [1.856, 2.96]])
BOUNDS_3_42 = {"k": (0.0, 5000.0), "d_f": (0.0, 100.0), "d_fm": (0.0, 100.0)}
TRUE_2R = np.array([2000.0, 1600.0, 3.91, 2.21, 2.04, 1.68])


def sweep_configuration(index: int) -> np.ndarray:
    """Configuration ``index`` (0-based) of the 50 of seed 000 section 2.4.2."""
    s = index / 49.0
    return np.array([0.0, -np.pi / 6 + np.pi / 3 * s, 2 * np.pi / 3 - np.pi / 3 * s, -np.pi / 18 + 7 * np.pi / 18 * s,
                     -2 * np.pi / 3 + np.pi / 3 * s, 0.0])


def timed(function):
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def finite_difference_reference(robot, data) -> tuple[float, int, float]:
    """The 40 local solves of row 1 with scipy's '2-point' Jacobian: (seconds, evaluations, max relative error)."""
    parameters = parse_parameters(robot, "k,d_f,d_fm")
    nominal = np.array([p.value_in(robot) for p in parameters])
    lower, upper = resolve_bounds(robot, parameters, BOUNDS_3_42)
    model = AffineModel([linearize(robot, pose.q) for pose in data.poses], parameters, nominal, robot.transmission)
    problem = CharacteristicDeterminant(model, [np.array([m.eigenvalue for m in pose.modes]) for pose in data.poses])
    initials = lower + (upper - lower) * np.random.default_rng(0).random((40, len(parameters)))
    started = time.perf_counter()
    best = None
    for x0 in initials:
        solution = least_squares(problem.residuals, x0, jac="2-point", bounds=(lower, upper), method="trf",
                                 x_scale=upper - lower, ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=500)
        if best is None or solution.cost < best.cost:
            best = solution
    return time.perf_counter() - started, problem.n_evaluations, float(np.max(np.abs(best.x / TRUE_2R - 1)))


def row(label: str, seconds: float, evaluations: str, reference: float, reference_label: str) -> None:
    print(f"{label:<58} {seconds:8.3f} s  {evaluations:<28} {seconds / reference:7.3f} x {reference_label}")


def round_trip(start, truth) -> None:
    """Row 4: impact experiment at 5 configurations (LSODA) -> SSI-cov OMA (orders 2-60) -> K (eigenvalue
    residuals, 8 starts); ratio to the simulated signal duration (5 x 3 s)."""
    from flexrobot_ros.identification import MeasuredMode, ModalData, PoseModes
    from flexrobot_ros.oma.identify import identify_modes
    from flexrobot_ros.simulation.impact_experiment import impact_experiment, thesis_configuration

    simulate = oma = 0.0
    poses = []
    for configuration in (1, 8, 20, 34, 50):
        record, seconds = timed(lambda: impact_experiment(case=1, configuration=configuration))
        simulate += seconds
        modes, seconds = timed(lambda: identify_modes(record.q_m - record.q_m[0], 1000.0, "ssi-cov", "2:60"))
        oma += seconds
        poses.append(PoseModes(thesis_configuration(configuration), tuple(
            MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in modes.modes)))
    data = ModalData(tuple(poses), "motor", "simulated impacts + SSI-cov")
    result, identify = timed(lambda: identify_joint_parameters(start, data, "k", starts=8, seed=0,
                                                               residual="eigenvalue"))
    total = simulate + oma + identify
    row("Scompi round trip: simulate 5 impacts + SSI-cov + identify K", total,
        f"{result.evaluations} res + {result.jacobians} jac", 15.0, "signal duration (5 x 3 s)")
    error = result.robot.stiffness / truth.stiffness - 1
    print(f"{'':<58} simulate {simulate:.2f} s, OMA {oma:.2f} s, identify {identify:.2f} s; "
          f"max |K/K_2.1 - 1| joints 1-5 = {np.max(np.abs(error[:5])):.1e} (k6 not observable: {error[5]:+.2f})")


def main() -> None:
    planar = load_robot("planar_2r")
    data = modal_data_from_model(planar, TABLE_3_1_POSES, (0, 3), source="Table 3.1 poses")
    identify_joint_parameters(planar, data, bounds=BOUNDS_3_42, starts=2, seed=0)        # warm-up (imports, caches)

    result, seconds = timed(lambda: identify_joint_parameters(planar, data, bounds=BOUNDS_3_42, starts=40, seed=0,
                                                              include_nominal=False))
    fd_seconds, fd_evaluations, fd_error = finite_difference_reference(planar, data)
    error = float(np.max(np.abs(result.estimate / TRUE_2R - 1)))
    print(f"planar 2R, Table 3.2 case 1, 40 starts: max relative error {error:.1e} (finite-difference Jacobian: "
          f"{fd_error:.1e}), F = {result.objective:.3g}")
    row("2R case 1, 40 starts, analytic Jacobian (full call)", seconds,
        f"{result.evaluations} res + {result.jacobians} jac", fd_seconds, "40 solves with FD Jacobian")
    print(f"{'  reference: 40 solves with 2-point FD Jacobian':<58} {fd_seconds:8.3f} s  {fd_evaluations} res")
    parallel, parallel_seconds = timed(lambda: identify_joint_parameters(
        planar, data, bounds=BOUNDS_3_42, starts=40, seed=0, include_nominal=False, workers=2))
    row("2R case 1, 40 starts, 2 worker processes", parallel_seconds,
        f"{parallel.evaluations} res + {parallel.jacobians} jac", seconds, "serial (row above)")

    scompi = load_robot("scompi")
    poses = np.array([sweep_configuration(i) for i in (0, 7, 33, 49)])
    scompi_data = modal_data_from_model(scompi, poses, range(11), source="Scompi model")
    _, forward = timed(lambda: [modal_analysis(scompi, q) for q in poses])
    start = scompi.with_parameters(stiffness=scompi.stiffness * np.array([1.3, 0.75, 1.2, 0.8, 1.25, 0.7]))
    for residual in ("determinant", "eigenvalue"):
        scompi_result, scompi_seconds = timed(lambda: identify_joint_parameters(
            start, scompi_data, "k", starts=8, seed=0, residual=residual))
        k_error = float(np.max(np.abs(scompi_result.robot.stiffness / scompi.stiffness - 1)))
        row(f"Scompi K from model modes 1-11 at 4 poses, {residual}", scompi_seconds,
            f"{scompi_result.evaluations} res + {scompi_result.jacobians} jac", forward, "forward modal analysis")
        print(f"{'':<58} max |K/K_2.1 - 1| = {k_error:.1e}")
    round_trip(start, scompi)
    print(f"HEADLINE identification 2R Table 3.2 case 1, 40 starts, one core: {seconds:.2f} s, {result.evaluations} "
          f"residual + {result.jacobians} Jacobian evaluations, {fd_seconds / seconds:.1f}x faster than with "
          f"finite-difference Jacobians (goal < 5 s)")


if __name__ == "__main__":
    main()
