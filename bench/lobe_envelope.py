"""Benchmark of the stability limit at given spindle speeds (issue 37, item 6): exact roots vs the grid envelope.

The case of the issue: the shipped kr90 in its milling posture (q = 0, 55, -100.5 deg), two teeth, half-immersion
down-milling, K_t = 7.96e8 N/m^2, K_r = 0.212, 2000 speeds in 100-1000 rpm (what ``flexrobot lobes --json``
evaluates). Both methods start from the same lobes (``zeroth_order_lobes``, computed once, not timed):

* grid envelope (issue 27, the reference, kept here only): each lobe k and branch is the polyline through its
  points (n_k(f_i), a(f_i)) at the lobes' chatter frequencies, and the envelope at a speed is the lowest polyline
  there, linear between the points;
* exact (``flexrobot_ros.modal.lobe_envelope.stability_limit``): at each speed every root of the phase condition is
  solved on the receptance (the robot's closed loop, one 6 x 6 complex solve per frequency), in increasing order of
  a depth bound, and the smallest depth kept.

Times are the best of five runs, as a ratio to the grid envelope measured in the same run and in milliseconds; the
grid envelope's error against the exact limit is printed beside. The last line is the headline.

    python bench/lobe_envelope.py
"""
from __future__ import annotations

import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.modal import modal_analysis  # noqa: E402
from flexrobot_ros.modal.lobe_envelope import stability_limit  # noqa: E402
from flexrobot_ros.modal.milling_frf import robot_feed_plane_frf  # noqa: E402
from flexrobot_ros.modal.stability_lobes import (MillingProcess, chatter_frequency_grid, lobe_count,  # noqa: E402
                                                 zeroth_order_lobes)
from flexrobot_ros.model import load_robot  # noqa: E402

LOW_RPM, HIGH_RPM, SPEEDS = 100.0, 1000.0, 2000


def grid_envelope(lobes, speeds_rpm: np.ndarray) -> np.ndarray:
    """The issue-27 envelope: the lowest lobe polyline at each speed (inf where none passes)."""
    best = np.full(speeds_rpm.size, np.inf)
    for k in lobes.lobe_numbers:
        for branch in range(2):
            n, a = lobes.spindle_speeds_rpm[k, :, branch], lobes.critical_depths_m[:, branch]
            n0, n1, a0, a1 = n[:-1], n[1:], a[:-1], a[1:]
            valid = np.isfinite(n0) & np.isfinite(n1) & np.isfinite(a0) & np.isfinite(a1)
            n0, n1, a0, a1 = n0[valid], n1[valid], a0[valid], a1[valid]
            first = np.searchsorted(speeds_rpm, np.minimum(n0, n1), side="left")
            counts = np.searchsorted(speeds_rpm, np.maximum(n0, n1), side="right") - first
            segment = np.repeat(np.arange(counts.size), counts)
            index = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + first[segment]
            span = n1[segment] - n0[segment]
            weight = np.divide(speeds_rpm[index] - n0[segment], span, out=np.zeros(index.size), where=span != 0)
            np.minimum.at(best, index, a0[segment] + weight * (a1[segment] - a0[segment]))
    return best


def best_time(function, repeat: int = 5) -> float:
    """Best wall time of one call [s]."""
    return min(timeit.repeat(function, repeat=repeat, number=1))


def main() -> None:
    robot = load_robot("kr90")
    q = np.radians([0.0, 55.0, -100.5])
    modes = modal_analysis(robot, q)
    frf = robot_feed_plane_frf(robot, q, linearized=modes.linearized)
    process = MillingProcess.from_immersion(2, 7.96e8, 0.212, 0.5, "down")
    lobes = zeroth_order_lobes(frf, chatter_frequency_grid(modes.frequencies_hz, modes.damping_ratios), process)
    lobes = lobes.with_lobes(lobe_count(lobes.chatter_frequencies_hz, lobes.critical_depths_m, process.teeth,
                                        LOW_RPM))
    speeds = np.linspace(LOW_RPM, HIGH_RPM, SPEEDS)
    exact = stability_limit(lobes, speeds).critical_depths_m
    grid = grid_envelope(lobes, speeds)
    error = grid / exact - 1
    worst = int(np.argmax(np.abs(error)))
    reference = best_time(lambda: grid_envelope(lobes, speeds))
    solved = best_time(lambda: stability_limit(lobes, speeds))
    print(f"kr90 milling posture, {SPEEDS} speeds {LOW_RPM:g}-{HIGH_RPM:g} rpm, lobes k = 0..{lobes.lobe_numbers[-1]} "
          f"on {lobes.chatter_frequencies_hz.size} chatter frequencies")
    print(f"  grid envelope (reference): {1.0:6.1f} x  {reference * 1e3:8.2f} ms   error against the exact limit "
          f"{100 * error.min():+.1f}..{100 * error.max():+.1f} % (worst at {speeds[worst]:.1f} rpm: "
          f"{1e3 * grid[worst]:.4f} mm for {1e3 * exact[worst]:.4f} mm)")
    print(f"  exact roots:               {solved / reference:6.1f} x  {solved * 1e3:8.2f} ms   (the limit the error "
          "is measured against)")
    print(f"exact stability limit at {SPEEDS} speeds: {solved * 1e3:.0f} ms = {solved / reference:.0f} x the grid "
          f"envelope ({reference * 1e3:.1f} ms), which lay up to {100 * error.max():.0f} % above the limit")


if __name__ == "__main__":
    main()
