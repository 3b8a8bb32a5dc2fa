"""Pose-scheduled input shaping of a joint trajectory: a time-varying convolution with exact derivatives.

A reference x(t) (a :class:`Trajectory` on [t_0, t_f], held at its end poses outside) convolved with an impulse
sequence whose amplitudes a_i(t) and delays tau_i(t) [s] vary with time (input shaping with the shaper retuned as
the modes change along the motion)::

    y(t) = sum_i a_i(t) x(t - tau_i(t)),        sum_i a_i(t) = 1,   tau_1 = 0 <= tau_i(t)

With constant a_i, tau_i this is the ordinary convolution with the shaper. The shaper is given at schedule times
s_k [s] (one :class:`~flexrobot_ros.dynamics.input_shaping.Shaper` per time, all with the same impulse structure);
a_i(t) and tau_i(t) are the quintic splines (C^4) through those values with zero first and second derivatives at
the first and last schedule time, held constant outside. Interpolation is linear in the data, so the amplitudes
still sum to 1. The derivatives of y up to the snap (what the flexible-joint feedforward needs) are exact: with
phi_i = t - tau_i(t), Faa di Bruno's formula gives those of x(phi_i(t)) from the reference's analytic derivatives
at phi_i, and Leibniz' rule those of the products with a_i(t). The shaped trajectory ends when the last impulse has
passed the reference's end: t_f + max_k tau_N(s_k), the move time shaping adds.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy.interpolate import make_interp_spline

from flexrobot_ros.dynamics.input_shaping import Shaper
from flexrobot_ros.dynamics.trajectory import DERIVATIVE_ORDER, Trajectory
from flexrobot_ros.errors import ShapingError

#: Binomial coefficients C(m, j) for m, j <= 4 (Leibniz' rule).
_BINOMIAL = np.array([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 2, 1, 0, 0], [1, 3, 3, 1, 0], [1, 4, 6, 4, 1]], float)


class ShapedTrajectory(Trajectory):
    """``reference`` convolved with the shapers ``shapers`` given at ``schedule_times`` [s] (module docstring).

    Raises:
        ShapingError: no shaper, mismatched or unsorted schedule times, or shapers of different impulse counts.
    """

    def __init__(self, reference: Trajectory, schedule_times: Any, shapers: Sequence[Shaper]):
        times = np.atleast_1d(np.asarray(schedule_times, dtype=float))
        if not shapers or times.shape != (len(shapers),) or not np.all(np.isfinite(times)) \
                or np.any(np.diff(times) <= 0.0):
            raise ShapingError(f"shaper schedule: {len(shapers)} shapers at {times.size} times; expected one shaper "
                               "per schedule time, at least one, times finite and strictly increasing")
        counts = {len(s.amplitudes) for s in shapers}
        if len(counts) != 1:
            raise ShapingError(f"shaper schedule: impulse counts {sorted(counts)} differ along the schedule; "
                               "expected the same shapers (kinds and modes) at every time")
        self.reference = reference
        self.schedule_times = times
        self.shapers = tuple(shapers)
        amplitudes = np.array([s.amplitudes for s in shapers])
        delays = np.array([s.times_s for s in shapers])
        self._splines = [_schedule_spline(times, values) for values in (amplitudes, delays)]
        self.n_joints = reference.n_joints
        self.start_time = reference.start_time
        self.added_time_s = float(delays.max())
        self.end_time = reference.end_time + self.added_time_s

    def schedule(self, t: Any) -> tuple[np.ndarray, np.ndarray]:
        """Amplitudes and delays [s] at times ``t`` (samples,) and their first four time derivatives: two arrays
        (5, samples, impulses), index 0 the values."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        return tuple(_evaluate(spline, t, self.schedule_times) for spline in self._splines)

    def _derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        a, tau = self.schedule(t)
        phi = t[:, None] - tau[0]  # (samples, impulses): the reference time each impulse reads
        ref = self.reference
        inside = (phi > ref.start_time) & (phi < ref.end_time)
        x = ref.evaluate(np.clip(phi.ravel(), ref.start_time, ref.end_time))
        shape = phi.shape + (self.n_joints,)
        xs = [x.q.reshape(shape)] + [np.where(inside[..., None], d.reshape(shape), 0.0)
                                     for d in (x.qd, x.qdd, x.q3, x.q4)]  # held (at rest) outside its range
        p1, p2, p3, p4 = (1.0 - tau[1])[..., None], -tau[2][..., None], -tau[3][..., None], -tau[4][..., None]
        g = [xs[0], xs[1] * p1, xs[2] * p1**2 + xs[1] * p2, xs[3] * p1**3 + 3 * xs[2] * p1 * p2 + xs[1] * p3,
             xs[4] * p1**4 + 6 * xs[3] * p1**2 * p2 + xs[2] * (3 * p2**2 + 4 * p1 * p3) + xs[1] * p4]
        return [sum(_BINOMIAL[m, j] * np.einsum("si,sin->sn", a[j], g[m - j]) for j in range(m + 1))
                for m in range(DERIVATIVE_ORDER + 1)]


def _schedule_spline(times: np.ndarray, values: np.ndarray) -> Any:
    """Quintic interpolating spline of ``values`` (nodes, impulses) over ``times``, flat (zero first and second
    derivatives) at both ends; None for a single node (constant)."""
    if times.size == 1:
        return values[0]
    flat = [(1, np.zeros(values.shape[1])), (2, np.zeros(values.shape[1]))]
    return make_interp_spline(times, values, k=5, bc_type=(flat, flat))


def _evaluate(spline: Any, t: np.ndarray, times: np.ndarray) -> np.ndarray:
    """(5, samples, impulses): values and derivatives 1..4, held constant outside [times[0], times[-1]]."""
    if isinstance(spline, np.ndarray):
        out = np.zeros((DERIVATIVE_ORDER + 1, t.size, spline.size))
        out[0] = spline
        return out
    clipped = np.clip(t, times[0], times[-1])
    held = ((t < times[0]) | (t > times[-1]))[:, None]
    return np.array([spline(clipped, nu=k) if k == 0 else np.where(held, 0.0, spline(clipped, nu=k))
                     for k in range(DERIVATIVE_ORDER + 1)])


__all__ = ["ShapedTrajectory"]
