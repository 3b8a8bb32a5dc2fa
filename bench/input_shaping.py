"""Benchmark of pose-scheduled input shaping (issue 26 part 2) on the Scompi with its tool.

One point-to-point move (poly9 in 0.5 s from the thesis' configuration 8 to (0.1 m, -0.1, 1.6, 0.3, -1.6, 0.3 rad),
the move of ``test/test_shaping_scompi.py`` and ``docs/input_shaping.md``). The reference time is the unshaped
feedforward computation of that move (``feedforward(robot, move, "sdrnea")`` at 1 kHz, compiled code already
cached), measured in the same run. Rows: :func:`flexrobot_ros.shaping.shape_reference` for ZV, ZVD, EI and auto
(+-10 % frequency error), with the schedule of modal analyses every 20 ms (the former default: "before") and the
current default (50 ms: "after"), each as absolute time [s] and ratio to the reference, with the number of schedule
times of the shaped motion (one modal analysis each, plus those of the first pass along the shorter reference). The
after/before agreement is printed too: the largest difference of the shaped reference's position [rad | m] over the
move. Best of ``--repeat`` runs
(other jobs share the machine). The last line is the headline.

    python bench/input_shaping.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small eigenproblems: one BLAS thread (FACTS.md)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.shaping import shape_reference  # noqa: E402

Q0 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
QF = np.array([0.1, -0.1, 1.6, 0.3, -1.6, 0.3])
KINDS = ("zv", "zvd", "ei", "auto")
BEFORE_STEP_S = 0.02


def best_time(function: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Smallest wall time [s] of ``repeat`` calls and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, best kept (default 3)")
    args = parser.parse_args()
    robot = load_robot("scompi", tool=True)
    move = Poly9Trajectory(Q0, QF, 0.5)
    feedforward(robot, move, "sdrnea", rate_hz=1000.0)  # compiles (or loads) the generated code once
    reference, _ = best_time(lambda: feedforward(robot, move, "sdrnea", rate_hz=1000.0), max(args.repeat, 5))
    print(f"Scompi (tool), poly9 move of 0.5 s; reference: unshaped feedforward (sdrnea, 1 kHz) "
          f"{reference * 1e3:.2f} ms; best of {args.repeat} runs")
    print(f"  {'shaper':<7}{'schedule':>10}{'schedule times':>16}{'time':>11}{'x feedforward':>15}"
          f"{'added move':>12}{'max |dq| after-before':>24}")
    totals = {"before": 0.0, "after": 0.0}
    headline = {}
    for kind in KINDS:
        before_s, before = best_time(lambda: shape_reference(robot, move, kind, schedule_step_s=BEFORE_STEP_S),
                                     args.repeat)
        after_s, after = best_time(lambda: shape_reference(robot, move, kind), args.repeat)
        t = np.linspace(move.start_time, max(before.trajectory.end_time, after.trajectory.end_time), 2001)
        difference = np.abs(after.trajectory.evaluate(t).q - before.trajectory.evaluate(t).q).max()
        for label, seconds, shaping in (("before", before_s, before), ("after", after_s, after)):
            step_ms = 1e3 * (BEFORE_STEP_S if label == "before" else 0.05)
            print(f"  {kind:<7}{step_ms:>7.0f} ms{shaping.schedule_times.size:>16}{seconds:>9.3f} s"
                  f"{seconds / reference:>13.1f} x{shaping.added_time_s:>10.3f} s"
                  + (f"{difference:>17.2e} rad" if label == "after" else ""))
            totals[label] += seconds
        headline[kind] = (before_s, after_s)
    print(f"  all four: before {totals['before']:.2f} s, after {totals['after']:.2f} s "
          f"({totals['before'] / totals['after']:.1f}x faster)")
    before_s, after_s = headline["zvd"]
    print(f"shape_reference zvd: {after_s:.3f} s = {after_s / reference:.0f}x the unshaped feedforward "
          f"({reference * 1e3:.1f} ms); before (20 ms schedule) {before_s:.3f} s = {before_s / reference:.0f}x; "
          f"speed-up {before_s / after_s:.1f}x")


if __name__ == "__main__":
    main()
