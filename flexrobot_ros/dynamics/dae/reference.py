"""References for the DAE inverse dynamics: the rest-to-rest polynomial p(t) and straight Cartesian lines
(seed 002, section 9.1, eq. 24), link-space trajectories, and tool-space trajectories through waypoints.

``p(s) = a_6 s^6 + .. + a_11 s^11`` on s = (t - t_0) / T in [0, 1] has p^[i](0) = 0 for i = 0..5 and p(1) = 1,
p^[i](1) = 0 for i = 1..5 (the paper's polynomial, here in normalized time): the reference is five times
continuously differentiable across its start and end (``continuity`` = 5), enough for an inverse-dynamics DAE of
differential index up to 5 (section 9.1: the reference must be at least nu_0 times differentiable). Before t_0
and after t_0 + T the reference rests.

p and its derivatives are evaluated in Bernstein form, ``p(s) = sum_{j > r} B_{j,2r+1}(s)`` and
``p^[i](s) = (2r+1)!/(2r+1-i)! sum_j (Delta^i b)_j B_{j,2r+1-i}(s)`` (b_j = 1 for j > r, else 0): sums of
non-negative basis functions with small integer weights, where the monomial form cancels terms up to 3465 s^8
(degree 11) or ~10^5 (degree 19). The BDF differentiates the solution twice to get the motor torque, which
multiplies this round-off by ~(sum |alpha_l|)^2 / h^2.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb, factorial
from typing import Any

import numpy as np

from flexrobot_ros.dynamics.trajectory import SplineTrajectory, Trajectory
from flexrobot_ros.errors import TrajectoryError


def rest_to_rest_coefficients(continuity: int = 5) -> np.ndarray:
    """Coefficients c_0..c_{2r+1} (ascending powers of s) of the rest-to-rest polynomial with r = ``continuity``
    vanishing derivatives at both ends; r = 5 gives the paper's degree-11 p with c_0..c_5 = 0. Exact integers,
    expanded from the Bernstein form p = sum_{j > r} C(2r+1, j) s^j (1 - s)^(2r+1-j) (a linear solve of the
    2r + 2 end conditions loses 1e-7 at r = 5 and everything at r = 9)."""
    r = int(continuity)
    degree = 2 * r + 1
    c = [0] * (degree + 1)
    for j in range(r + 1, degree + 1):
        for i in range(degree - j + 1):
            c[j + i] += comb(degree, j) * comb(degree - j, i) * (-1) ** i
    return np.array(c, dtype=float)


@dataclass(frozen=True)
class CartesianLine:
    """theta(t) = start + p((t - t0) / duration) (end - start) (eq. 24) [m], a straight line between two tool
    points with the rest-to-rest polynomial of ``continuity`` (default 5: the paper's degree 11)."""

    start: np.ndarray
    end: np.ndarray
    t0: float
    duration: float
    continuity: int = 5

    def __post_init__(self) -> None:
        start, end = (np.asarray(v, dtype=float).ravel() for v in (self.start, self.end))
        if start.shape != end.shape or not (np.all(np.isfinite(start)) and np.all(np.isfinite(end))):
            raise TrajectoryError(f"CartesianLine: start {start.tolist()} and end {end.tolist()} must be finite "
                                  "points of the same dimension")
        if not (np.isfinite(self.duration) and self.duration > 0 and np.isfinite(self.t0)):
            raise TrajectoryError(f"CartesianLine: duration {self.duration!r} s must be > 0, t0 {self.t0!r} finite")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)
        degree = 2 * int(self.continuity) + 1
        b = (np.arange(degree + 1) > int(self.continuity)).astype(float)
        differences = [b]
        for _ in range(degree):
            differences.append(np.diff(differences[-1]))
        object.__setattr__(self, "_bernstein", differences)

    @property
    def dimension(self) -> int:
        return self.start.size

    @property
    def length(self) -> float:
        """Length of the line [m]."""
        return float(np.linalg.norm(self.end - self.start))

    def profile(self, t: Any, order: int = 0) -> np.ndarray:
        """d^order p / dt^order at times t [s] (0 outside the motion for order >= 1)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        s = np.clip((t - self.t0) / self.duration, 0.0, 1.0)
        degree = 2 * int(self.continuity) + 1
        if order > degree:
            return np.zeros_like(t)
        m = degree - order
        weights = self._bernstein[order]
        j = np.arange(m + 1)
        basis = np.array([comb(m, i) for i in j]) * s[:, None] ** j * (1.0 - s[:, None]) ** (m - j)
        value = basis @ weights * (factorial(degree) / factorial(m)) / self.duration ** order
        if order:
            value = np.where((t < self.t0) | (t > self.t0 + self.duration), 0.0, value)
        return value

    def evaluate(self, t: Any, order: int = 2) -> list[np.ndarray]:
        """[theta, theta', .., theta^(order)] at times t, each (samples, dimension)."""
        delta = self.end - self.start
        return [(self.start if i == 0 else 0.0) + self.profile(t, i)[:, None] * delta for i in range(order + 1)]


@dataclass(frozen=True)
class JointReference:
    """A link-space reference q_g(t) (rad | m) from a :class:`~flexrobot_ros.dynamics.trajectory.Trajectory`
    (derivatives up to the snap); ``continuity``: number of continuous derivatives (Poly9: 4; a degree-d
    B-spline: d - 1)."""

    trajectory: Trajectory

    @property
    def dimension(self) -> int:
        return self.trajectory.n_joints

    @property
    def continuity(self) -> int:
        """Continuous derivatives of the reference held at rest outside its span: those of the trajectory inside,
        limited at both ends by the number of leading derivatives (velocity, acceleration, ..) that vanish there."""
        inside = 4
        if isinstance(self.trajectory, SplineTrajectory):
            spline = self.trajectory.spline
            k = int(spline.k)
            inner = spline.t[(spline.t > spline.t[k]) & (spline.t < spline.t[-k - 1])]
            inside = k - (int(np.unique(inner, return_counts=True)[1].max()) if inner.size else 1)
        ends = self.trajectory.evaluate(np.array([self.trajectory.start_time, self.trajectory.end_time]))
        scale = 1.0 + float(np.abs(ends.q).max())
        resting = 0
        for value in (ends.qd, ends.qdd, ends.q3, ends.q4):
            if np.abs(value).max() > 1e-9 * scale / self.trajectory.duration ** (resting + 1):
                return min(inside, resting)
            resting += 1
        return inside

    def evaluate(self, t: Any, order: int = 2) -> list[np.ndarray]:
        """[q, qd, ..] up to ``order`` (<= 4) at times t; outside the trajectory's span the reference rests at its
        end positions (derivatives zero)."""
        if order > 4:
            raise TrajectoryError(f"link-space references give derivatives up to 4, {order} asked")
        t = np.atleast_1d(np.asarray(t, dtype=float))
        start, end = self.trajectory.start_time, self.trajectory.end_time
        samples = self.trajectory.evaluate(np.clip(t, start, end))
        values = [samples.q, samples.qd, samples.qdd, samples.q3, samples.q4][:order + 1]
        outside = (t < start) | (t > end)
        return [v if i == 0 else np.where(outside[:, None], 0.0, v) for i, v in enumerate(values)]


class ShiftedTrajectoryReference:
    """Base of the references along a :class:`~flexrobot_ros.dynamics.trajectory.Trajectory` whose motion starts
    at ``t0`` [s] (trajectory time ``t - t0 + trajectory.start_time``) and rests at its ends before and after it:
    :class:`ToolTrajectory` and :class:`~flexrobot_ros.dynamics.dae.tool_path.ToolPath`. A subclass is a frozen
    dataclass with fields ``trajectory`` and ``t0``; its ``__post_init__`` calls this one."""

    trajectory: Trajectory
    t0: float

    def __post_init__(self) -> None:
        if not np.isfinite(self.t0):
            raise TrajectoryError(f"{type(self).__name__}: t0 {self.t0!r} s must be finite")

    @property
    def duration(self) -> float:
        """Duration of the motion [s]."""
        return float(self.trajectory.duration)

    @property
    def continuity(self) -> int:
        """Continuous derivatives, those of the trajectory held at rest (:attr:`JointReference.continuity`)."""
        return JointReference(self.trajectory).continuity

    def trajectory_values(self, t: Any, order: int) -> list[np.ndarray]:
        """[q, qd, ..] of the trajectory up to ``order`` (<= 4) at times t [s] shifted to trajectory time, resting
        at its ends outside the motion; each (samples, trajectory.n_joints)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        return JointReference(self.trajectory).evaluate(t - self.t0 + self.trajectory.start_time, order)


@dataclass(frozen=True)
class ToolTrajectory(ShiftedTrajectoryReference):
    """theta(t) [m]: the tool-point coordinates along ``trajectory`` (a :class:`~flexrobot_ros.dynamics.trajectory.
    Trajectory` whose columns are tool coordinates, e.g. the C^4 spline through the waypoints of a tool-space
    JointTrajectory), its motion starting at ``t0`` [s] (trajectory time ``t - t0 + trajectory.start_time``); before
    and after the motion it rests at its ends. Derivatives up to the snap; continuity as :class:`JointReference`."""

    trajectory: Trajectory
    t0: float = 0.0

    @property
    def dimension(self) -> int:
        return self.trajectory.n_joints

    def evaluate(self, t: Any, order: int = 2) -> list[np.ndarray]:
        """[theta, theta', ..] up to ``order`` (<= 4) at times t [s], each (samples, dimension) [m, m/s, ..]."""
        return self.trajectory_values(t, order)


def tool_line_from_dict(data: Any, source: str = "the tool trajectory") -> CartesianLine:
    """The CartesianLine of a tool trajectory document ``{line: {start: [x, y(, z)], end: [..], duration: T,
    t0: 0}}`` (positions [m] of the tool frame, world frame; T [s]; t0 [s] the motion start, default 0); a
    TrajectoryError naming ``source`` and the field otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("line"), dict):
        raise TrajectoryError(f"{source}: expected a mapping with a 'line' mapping (start, end, duration)")
    line = data["line"]
    unknown = sorted(set(line) - {"start", "end", "duration", "t0"})
    if unknown:
        raise TrajectoryError(f"{source}: line: unknown keys {unknown}; expected start, end, duration, t0")
    values = {}
    for key in ("start", "end"):
        value = line.get(key)
        if not isinstance(value, list) or len(value) not in (2, 3) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise TrajectoryError(f"{source}: line.{key}: expected 2 or 3 numbers [m], got {value!r}")
        values[key] = value
    for key, default in (("duration", None), ("t0", 0.0)):
        value = line.get(key, default)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TrajectoryError(f"{source}: line.{key}: expected a number [s], got {value!r}")
        values[key] = float(value)
    try:
        return CartesianLine(values["start"], values["end"], values["t0"], values["duration"])
    except TrajectoryError as error:
        raise TrajectoryError(f"{source}: line: {error}") from None


def as_reference(reference: Any) -> Any:
    """A CartesianLine/JointReference (or anything with evaluate, continuity, dimension) as is; a Trajectory
    wrapped in a JointReference."""
    if isinstance(reference, Trajectory):
        return JointReference(reference)
    if not all(hasattr(reference, name) for name in ("evaluate", "continuity", "dimension")):
        raise TrajectoryError(f"reference: {type(reference).__name__}; expected a CartesianLine, JointReference or "
                              "Trajectory")
    return reference
