"""Benchmark of the closed-loop modal analysis of the Scompi (seed 000 ch. 2; the thesis needed 3 ms per pose).

Every time is the best CPU time of this process over a few repeats, printed as an absolute time and as a ratio
to one ``pin.crba`` call measured in the same run. Rows:
one ``modal_analysis`` call (one pose: linearization, eigenvalues, mode shapes; the entry for any robot, measured
again interleaved with its elastic-joint fast path called directly, the ratio being the entry's dispatch overhead),
then ``modal_map`` batched over
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

from flexrobot_ros.modal import linearize_batch, modal_analysis  # noqa: E402
from flexrobot_ros.modal.eigenproblem import solve_modes  # noqa: E402
from flexrobot_ros.modal.linearization import linearize_elastic_joints  # noqa: E402
from flexrobot_ros.modal.maps import modal_map  # noqa: E402
from flexrobot_ros.modal.modes import modes_of  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402

Q8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])


def best(function, number: int, repeat: int = 5) -> float:
    """Best CPU time per call [s] of this process over ``repeat`` runs of ``number`` calls (CPU time, so that other
    processes sharing the machine do not inflate the figures)."""
    return min(timeit.repeat(function, number=number, repeat=repeat, timer=time.process_time)) / number


def row(label: str, seconds: float, reference: float) -> None:
    print(f"  {label:<62}{seconds * 1e6:>10.2f} us {seconds / reference:>9.1f} x crba")


def interleaved(functions: dict[str, tuple[object, int]], rounds: int = 5) -> dict[str, float]:
    """Best CPU time per unit [s] of each ``label: (function, units per call)``, measured round-robin so that load
    from other processes on the shared machine hits every row alike."""
    times: dict[str, float] = {label: float("inf") for label in functions}
    for _ in range(rounds):
        for label, (function, units) in functions.items():
            start = time.process_time()
            function()
            times[label] = min(times[label], (time.process_time() - start) / units)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=10_000, help="poses of the batched runs (default 10000)")
    parser.add_argument("--threads", action="store_true", help="leave BLAS threading at its default")
    parser.add_argument("--rounds", type=int, default=5, help="round-robin repeats, best kept (default 5)")
    args = parser.parse_args()
    robot = load_robot("scompi")
    rng = np.random.default_rng(0)
    count = args.poses
    poses = np.column_stack([rng.uniform(-0.3, 0.3, count), rng.uniform(-np.pi, np.pi, (count, 5))])
    data = robot.create_data()
    batch = linearize_batch(robot, poses)
    floor_poses = min(count, 2000)
    states = np.array([batch.at(i).state_matrix() for i in range(floor_poses)])
    crba = best(lambda: pin.crba(robot.model, data, Q8), number=20_000)
    single = best(lambda: modal_analysis(robot, Q8), number=200)
    times = interleaved({
        "entry": (lambda: [modal_analysis(robot, Q8) for _ in range(50)], 50),
        "fast path": (lambda: [modes_of(linearize_elastic_joints(robot, Q8)) for _ in range(50)], 50),
        "linearize": (lambda: linearize_batch(robot, poses), count),
        "solve": (lambda: solve_modes(batch.M_bar, batch.D_bar, batch.K_bar), count),
        "values": (lambda: modal_map(robot, poses), count),
        "shapes": (lambda: modal_map(robot, poses, shapes=True), count),
        "floor values": (lambda: np.linalg.eigvals(states), floor_poses),
        "floor vectors": (lambda: np.linalg.eig(states), floor_poses),
    }, rounds=args.rounds)
    print(f"Scompi (n = 6, 24 x 24 state matrix), {count} random poses, BLAS threads "
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, best CPU time of {args.rounds} rounds")
    print(f"  {'reference: one pinocchio crba call':<62}{crba * 1e6:>10.2f} us {1.0:>9.1f} x crba")
    row("modal_analysis, one pose (linearize + eig + shapes)", single, crba)
    row("  the same, interleaved with the rows below", times["entry"], crba)
    row("  its fast path called directly (linearize_elastic_joints)", times["fast path"], crba)
    print(f"  entry / fast path called directly: x{times['entry'] / times['fast path']:.3f} (the dispatch)")
    row("  stage: linearize_batch per pose", times["linearize"], crba)
    row(f"  stage: solve_modes per pose (one call on all {count} poses)", times["solve"], crba)
    row(f"modal_map, {count} poses: frequencies + damping, per pose", times["values"], crba)
    row(f"modal_map, {count} poses: + mode shapes, per pose", times["shapes"], crba)
    row(f"numpy floor: eigvals of stacked eq. 2.14 matrices ({floor_poses})", times["floor values"], crba)
    row(f"numpy floor: eig of stacked eq. 2.14 matrices ({floor_poses})", times["floor vectors"], crba)
    result = modal_map(robot, poses[:200])
    reference = np.sort(np.abs(np.linalg.eigvals(states[:200])), axis=1)[:, ::2] / (2 * np.pi)
    print(f"  agreement with the eq. 2.14 eigenvalues (200 poses): max |df| "
          f"{np.abs(result.frequencies_hz - reference).max():.2e} Hz")
    print("thesis (Matlab) 3000 us/pose; goal <= 50 us (values), <= 100 us (shapes)")
    values, shapes = times["values"], times["shapes"]
    print(f"HEADLINE modal map, Scompi, batched on one core: {values * 1e6:.1f} us/pose frequencies+damping "
          f"({values / crba:.1f} x crba), {shapes * 1e6:.1f} us/pose with mode shapes ({shapes / crba:.1f} x crba); "
          f"numpy floor {times['floor values'] * 1e6:.1f} / {times['floor vectors'] * 1e6:.1f} us")


if __name__ == "__main__":
    main()
