"""Benchmark of the closed-loop modal analysis of the Scompi (seed 000 ch. 2; the thesis needed 3 ms per pose).

Every time is the best CPU time of this process over a few repeats, printed as an absolute time and as a ratio to one ``pin.crba`` call measured in the same run. Rows:
one ``modal_analysis`` call (one pose: linearization, eigenvalues, mode shapes), then ``modal_map`` batched over
10,000 random poses (frequencies + damping, and with mode shapes), its two stages, and the numpy floor it is
meant to beat: batched ``numpy.linalg.eigvals`` / ``eig`` on the stacked 24 x 24 state matrices of eq. 2.14.

Goals (issue 3): batched on one core, <= 50 us per pose for frequencies and damping, <= 100 us with mode shapes.
BLAS/LAPACK threads are pinned to 1 before numpy loads ("one core"; ``--threads`` leaves the default).
The last line printed is the headline figure.

    python bench/modal.py [--poses 10000] [--threads]
"""
from __future__ import annotations

import os
import sys

if "--threads" not in sys.argv:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.modal import modal_analysis  # noqa: E402
from flexrobot_ros.modal.eigenproblem import solve_modes  # noqa: E402
from flexrobot_ros.modal.linearization import linearize_batch  # noqa: E402
from flexrobot_ros.modal.maps import modal_map  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402

Q8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])


def best(function, number: int, repeat: int = 5) -> float:
    """Best CPU time per call [s] of this process over ``repeat`` runs of ``number`` calls (CPU time, so that other
    processes sharing the machine do not inflate the figures)."""
    return min(timeit.repeat(function, number=number, repeat=repeat, timer=time.process_time)) / number


def row(label: str, seconds: float, reference: float) -> None:
    print(f"  {label:<62}{seconds * 1e6:>10.2f} us {seconds / reference:>9.1f} x crba")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=10_000, help="poses of the batched runs (default 10000)")
    parser.add_argument("--threads", action="store_true", help="leave BLAS threading at its default")
    args = parser.parse_args()
    robot = load_robot("scompi")
    rng = np.random.default_rng(0)
    poses = np.column_stack([rng.uniform(-0.3, 0.3, args.poses), rng.uniform(-np.pi, np.pi, (args.poses, 5))])
    data = robot.create_data()
    crba = best(lambda: pin.crba(robot.model, data, Q8), number=20_000)
    count = args.poses
    print(f"Scompi (n = 6, 24 x 24 state matrix), {count} random poses, BLAS threads "
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    print(f"  {'reference: one pinocchio crba call':<62}{crba * 1e6:>10.2f} us {1.0:>9.1f} x crba")
    single = best(lambda: modal_analysis(robot, Q8), number=200)
    row("modal_analysis, one pose (linearize + eig + shapes)", single, crba)
    batch_time = best(lambda: linearize_batch(robot, poses), number=1, repeat=3) / count
    batch = linearize_batch(robot, poses)
    row("  stage: linearize_batch per pose", batch_time, crba)
    solve_time = best(lambda: solve_modes(batch.M_bar, batch.D_bar, batch.K_bar), number=1, repeat=3) / count
    row("  stage: solve_modes per pose (one call on all poses)", solve_time, crba)
    values = best(lambda: modal_map(robot, poses), number=1, repeat=3) / count
    row(f"modal_map, {count} poses: frequencies + damping, per pose", values, crba)
    shapes = best(lambda: modal_map(robot, poses, shapes=True), number=1, repeat=3) / count
    row(f"modal_map, {count} poses: + mode shapes, per pose", shapes, crba)
    floor_poses = min(count, 2000)
    states = np.array([batch.at(i).state_matrix() for i in range(floor_poses)])
    floor_values = best(lambda: np.linalg.eigvals(states), number=1, repeat=3) / floor_poses
    floor_vectors = best(lambda: np.linalg.eig(states), number=1, repeat=3) / floor_poses
    row(f"numpy floor: eigvals of stacked eq. 2.14 matrices ({floor_poses})", floor_values, crba)
    row(f"numpy floor: eig of stacked eq. 2.14 matrices ({floor_poses})", floor_vectors, crba)
    result = modal_map(robot, poses[:200])
    reference = np.sort(np.abs(np.linalg.eigvals(states[:200])), axis=1)[:, ::2] / (2 * np.pi)
    print(f"  agreement with the eq. 2.14 eigenvalues (200 poses): max |df| "
          f"{np.abs(result.frequencies_hz - reference).max():.2e} Hz")
    print(f"thesis (Matlab) 3000 us/pose; goal <= 50 us (values), <= 100 us (shapes)")
    print(f"HEADLINE modal map, Scompi, batched on one core: {values * 1e6:.1f} us/pose frequencies+damping "
          f"({values / crba:.1f} x crba), {shapes * 1e6:.1f} us/pose with mode shapes ({shapes / crba:.1f} x crba); "
          f"numpy floor {floor_values * 1e6:.1f} / {floor_vectors * 1e6:.1f} us")


if __name__ == "__main__":
    main()
