"""Benchmark of the time-varying clamped-mass roots of seed 004 (section 4.2): differential form vs root solve.

Link 3 of the RRP robot (rho A = 0.331 kg/m, payload 0.0828 kg, two modes) slides from 0.3 to 1.0 m along the
section 5 cycloid in 0.5 s, sampled at 1 kHz. Two ways to have beta_i(t) at every step, as a plant would:

* differential (eq. 40 = eqs. 45-47 with the m_p erratum): the roots are states; one classical RK4 step costs four
  evaluations of ``PrismaticLinkRoots.rate``;
* solve: ``PrismaticLinkRoots.roots(l, previous)`` every step (Brent's method in a bracket around the previous
  roots, checked by the Wittrick-Williams count), or the global solve ``roots(l)``.

Times are per 1 ms step, as ratios to one evaluation of the frequency equation for both roots (the unit of work of
any root finder, measured in the same run) and in microseconds; the RK4 error at 1 kHz is printed beside. The
last line is the headline: solve-per-step over differential-per-step cost.

    python bench/clamped_mass_roots.py
"""
from __future__ import annotations

import math
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.flexible_links.clamped_mass import (  # noqa: E402
    PrismaticLinkRoots, TipBody, frequency_equation)

T, L0, L1, RATE_HZ = 0.5, 0.3, 1.0, 1000


def cycloid(t: float) -> tuple[float, float]:
    """Free length l(t) [m] and its rate [m/s], seed 004 section 5."""
    tau = t / T
    return L0 + (L1 - L0) * (tau - math.sin(2 * math.pi * tau) / (2 * math.pi)), (L1 - L0) / T * (
        1 - math.cos(2 * math.pi * tau))


def per_call(function, repeat: int = 5, number: int = 200) -> float:
    """Best time of one call [s]."""
    return min(timeit.repeat(function, repeat=repeat, number=number)) / number


def main() -> None:
    link3 = PrismaticLinkRoots(count=2, mass_per_length=0.331, tip=TipBody(mass=0.0828))
    beta0 = link3.roots(L0)
    h = 1.0 / RATE_HZ
    steps = int(round(T * RATE_HZ))

    # differential form, RK4 at 1 kHz
    beta = beta0.copy()
    for k in range(steps):
        t = k * h
        k1 = link3.rate(beta, *cycloid(t))
        k2 = link3.rate(beta + 0.5 * h * k1, *cycloid(t + 0.5 * h))
        k3 = link3.rate(beta + 0.5 * h * k2, *cycloid(t + 0.5 * h))
        k4 = link3.rate(beta + h * k3, *cycloid(t + h))
        beta = beta + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    rk4_error = float(np.max(np.abs(beta - link3.roots(L1))))

    # root solve per step along the same motion
    previous = beta0
    for k in range(1, steps + 1):
        previous = link3.roots(cycloid(k * h)[0], previous=previous)
    solve_error = float(np.max(np.abs(previous - link3.roots(L1))))

    mid_l, mid_rate = cycloid(0.25)
    mid_beta = link3.roots(mid_l)
    near = link3.roots(cycloid(0.25 - h)[0])
    params = link3.parameters(mid_l)
    unit = per_call(lambda: frequency_equation(mid_beta, params.M, params.J, params.D))
    rate = per_call(lambda: link3.rate(mid_beta, mid_l, mid_rate))
    local = per_call(lambda: link3.roots(mid_l, previous=near), number=50)
    global_ = per_call(lambda: link3.roots(mid_l), number=50)
    differential = 4 * rate

    print(f"link 3 roots along the section 5 cycloid, {RATE_HZ} Hz; unit = one eq. 38 evaluation "
          f"({unit * 1e6:.1f} us)")
    print(f"  differential (RK4, 4 rate calls): {differential / unit:7.1f} units  {differential * 1e6:8.1f} us/step"
          f"   end error {rk4_error:.1e}")
    print(f"  solve per step (local, checked):  {local / unit:7.1f} units  {local * 1e6:8.1f} us/step"
          f"   end error {solve_error:.1e}")
    print(f"  solve per step (global):          {global_ / unit:7.1f} units  {global_ * 1e6:8.1f} us/step")
    print(f"solve per step / differential per step = {local / differential:.2f} "
          f"({local * 1e6:.0f} us vs {differential * 1e6:.0f} us per 1 ms step)")


if __name__ == "__main__":
    main()
