"""Joint trajectories with four continuous time derivatives (q, qd, qdd, q''' = jerk, q'''' = snap).

Flexible-joint inverse dynamics needs the link trajectory up to the snap: ddtau depends on q'''' (thesis ch. 4,
eqs. 4.8-4.10). Two kinds are provided, both with analytic derivatives:

* :class:`Poly9Trajectory` -- the rest-to-rest ninth-order profile of thesis eqs. 4.29-4.32
  (q = q0 + (qf - q0) eta(t/T), eta = 70 s^9 - 315 s^8 + 540 s^7 - 420 s^6 + 126 s^5); velocity, acceleration,
  jerk and snap vanish at both ends.
* :class:`SplineTrajectory` -- any vector-valued scipy B-spline whose fourth derivative is continuous, and
  :func:`spline_through_waypoints`, which interpolates waypoints (positions, optional velocities and
  accelerations, like ``trajectory_msgs/JointTrajectory``) with such a spline.

Times are in seconds, positions in rad (revolute) or m (prismatic); sampled arrays are (samples, joints).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.sparse
import scipy.sparse.linalg
from scipy.interpolate import BSpline

from flexrobot_ros.errors import TrajectoryError

#: Highest derivative the feedforward needs (the snap q'''').
DERIVATIVE_ORDER = 4
#: Relative tolerance on times at the ends of a trajectory (round-off of t0 + k / rate).
_TIME_TOL = 1e-9


@dataclass(frozen=True)
class TrajectorySamples:
    """A trajectory sampled at times ``t`` (samples,) [s]: q, qd, qdd, q3 (jerk), q4 (snap), each (samples, n)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    q3: np.ndarray
    q4: np.ndarray

    @property
    def n_samples(self) -> int:
        return len(self.t)


class Trajectory(ABC):
    """A joint trajectory on ``[start_time, end_time]`` with continuous derivatives up to the snap."""

    n_joints: int
    start_time: float
    end_time: float

    @property
    def duration(self) -> float:
        """end_time - start_time [s]."""
        return self.end_time - self.start_time

    @abstractmethod
    def _derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        """[q, qd, qdd, q3, q4] at validated times t (samples,), each (samples, n)."""

    def evaluate(self, t: Any) -> TrajectorySamples:
        """The trajectory and its first four derivatives at times ``t`` [s] (scalar or 1-D, inside the range)."""
        times = np.atleast_1d(np.asarray(t, dtype=float))
        if times.ndim != 1:
            raise TrajectoryError(f"times: expected a scalar or a 1-D array, got shape {times.shape}")
        if not np.all(np.isfinite(times)):
            raise TrajectoryError("times: non-finite value; expected finite times in seconds")
        tol = _TIME_TOL * max(1.0, abs(self.start_time), abs(self.end_time))
        if times.size and (times.min() < self.start_time - tol or times.max() > self.end_time + tol):
            raise TrajectoryError(
                f"times: [{times.min():.9g}, {times.max():.9g}] s leaves the trajectory's range "
                f"[{self.start_time:.9g}, {self.end_time:.9g}] s")
        times = np.clip(times, self.start_time, self.end_time)
        q, qd, qdd, q3, q4 = self._derivatives(times)
        return TrajectorySamples(t=times, q=q, qd=qd, qdd=qdd, q3=q3, q4=q4)

    def sample(self, rate_hz: float) -> TrajectorySamples:
        """Samples at ``start_time + k / rate_hz`` for k = 0, 1, ... up to ``end_time`` (included when on the grid)."""
        rate = float(rate_hz)
        if not np.isfinite(rate) or rate <= 0.0:
            raise TrajectoryError(f"rate: {rate_hz!r} Hz; expected a positive finite sampling rate")
        count = int(np.floor(self.duration * rate + 1e-6)) + 1
        return self.evaluate(self.start_time + np.arange(count) / rate)


class Poly9Trajectory(Trajectory):
    """Rest-to-rest ninth-order polynomial profile of thesis eqs. 4.29-4.32 from ``q0`` to ``qf`` in ``duration``.

    q(t) = q0 + (qf - q0) eta((t - start_time) / T) with eta(s) = 70 s^9 - 315 s^8 + 540 s^7 - 420 s^6 + 126 s^5;
    the k-th derivative is (qf - q0) eta^(k)(s) / T^k. All derivatives 1..4 vanish at both ends.
    """

    #: eta's coefficients, lowest power first (eq. 4.30).
    ETA = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 126.0, -420.0, 540.0, -315.0, 70.0])

    def __init__(self, q0: Sequence[float], qf: Sequence[float], duration: float, start_time: float = 0.0):
        self.q0 = _finite_vector(q0, "q0")
        self.qf = _finite_vector(qf, "qf")
        if self.q0.shape != self.qf.shape:
            raise TrajectoryError(f"qf: {self.qf.size} joints; expected {self.q0.size} like q0")
        duration = float(duration)
        if not np.isfinite(duration) or duration <= 0.0:
            raise TrajectoryError(f"duration: {duration!r} s; expected a positive finite duration")
        if not np.isfinite(float(start_time)):
            raise TrajectoryError(f"start_time: {start_time!r}; expected a finite time in seconds")
        self.n_joints = self.q0.size
        self.start_time = float(start_time)
        self.end_time = self.start_time + duration
        self._T = duration
        coefficients = [self.ETA]
        for _ in range(DERIVATIVE_ORDER):
            coefficients.append(np.polynomial.polynomial.polyder(coefficients[-1]))
        self._eta = coefficients

    def _derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        s = (t - self.start_time) / self._T
        delta = self.qf - self.q0
        out = []
        for k, c in enumerate(self._eta):
            eta_k = np.polynomial.polynomial.polyval(s, c) / self._T ** k
            out.append((self.q0 if k == 0 else 0.0) + eta_k[:, None] * delta[None, :])
        return out


class SplineTrajectory(Trajectory):
    """A trajectory given by a vector-valued scipy ``BSpline`` q(t) whose snap q'''' is continuous.

    The spline's coefficients are (n_coefficients, n_joints); its base interval ``[t[k], t[-k-1]]`` is the
    trajectory's time range. Raises :class:`TrajectoryError` if an interior knot's multiplicity leaves less than
    C^4 continuity (e.g. degree < 5 with simple knots), since ddtau needs a continuous q''''.
    """

    def __init__(self, spline: BSpline):
        k = int(spline.k)
        knots = np.asarray(spline.t, dtype=float)
        coefficients = np.asarray(spline.c, dtype=float)
        if coefficients.ndim != 2:
            raise TrajectoryError(
                f"spline coefficients: shape {coefficients.shape}; expected (n_coefficients, n_joints)")
        if not (np.all(np.isfinite(knots)) and np.all(np.isfinite(coefficients))):
            raise TrajectoryError("spline: non-finite knots or coefficients")
        start, end = knots[k], knots[-k - 1]
        if not end > start:
            raise TrajectoryError(f"spline: empty base interval [{start}, {end}] s")
        if k < DERIVATIVE_ORDER + 1:
            raise TrajectoryError(
                f"trajectory is not differentiable enough: spline degree {k} has a discontinuous or vanishing "
                f"derivative of order {DERIVATIVE_ORDER}; the snap q'''' needed for ddtau must be continuous "
                f"(use degree >= {DERIVATIVE_ORDER + 1})")
        interior = knots[(knots > start) & (knots < end)]
        values, counts = np.unique(interior, return_counts=True)
        worst = np.argmax(counts) if counts.size else None
        if worst is not None and k - counts[worst] < DERIVATIVE_ORDER:
            raise TrajectoryError(
                f"trajectory is not differentiable enough: knot t = {values[worst]:.9g} s has multiplicity "
                f"{counts[worst]} in a degree-{k} spline, so it is only C^{k - counts[worst]}; expected C^"
                f"{DERIVATIVE_ORDER} (continuous snap)")
        self.spline = BSpline(knots, coefficients, k, extrapolate=False)
        self._splines = [self.spline] + [self.spline.derivative(d) for d in range(1, DERIVATIVE_ORDER + 1)]
        self.n_joints = coefficients.shape[1]
        self.start_time = float(start)
        self.end_time = float(end)

    def _derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        return [np.asarray(s(t), dtype=float).reshape(len(t), self.n_joints) for s in self._splines]


def spline_through_waypoints(times: Sequence[float], positions: Any, velocities: Any = None,
                             accelerations: Any = None, degree: int = 9) -> SplineTrajectory:
    """The degree-``degree`` B-spline through waypoints, with continuous derivatives up to order ``degree - 1``.

    Args:
        times: (points,) strictly increasing waypoint times [s].
        positions: (points, n) joint positions at the waypoints.
        velocities, accelerations: optional, either (points, n) arrays or per-point sequences whose entries are
            ``None`` (or empty, as in ``trajectory_msgs/JointTrajectoryPoint``) where the derivative is free.
        degree: odd spline degree, 5, 7 or 9.

    At both ends the derivatives of orders 1 .. (degree - 1) / 2 are imposed: the given velocity/acceleration,
    zero otherwise. With the default degree 9 the trajectory starts and ends at rest with zero jerk and snap, as
    the thesis' poly9 profile does (two waypoints give exactly that profile). Interior velocities/accelerations,
    when given, are interpolated too (Hermite-Birkhoff collocation with knots at averages of the data sites).
    """
    if degree not in (5, 7, 9):
        if isinstance(degree, (int, np.integer)) and degree < DERIVATIVE_ORDER + 1:
            raise TrajectoryError(
                f"trajectory is not differentiable enough: degree {degree} spline has a discontinuous "
                f"derivative of order {DERIVATIVE_ORDER} (snap, needed for ddtau); use degree 5, 7 or 9")
        raise TrajectoryError(f"degree: {degree!r}; expected 5, 7 or 9")
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size < 2:
        raise TrajectoryError(f"waypoints: {t.size} time(s); expected at least 2 waypoints")
    if not np.all(np.isfinite(t)):
        bad = int(np.flatnonzero(~np.isfinite(t))[0])
        raise TrajectoryError(f"waypoint {bad}: time {float(t[bad])} is not finite")
    steps = np.diff(t)
    if np.any(steps <= 0.0):
        bad = int(np.flatnonzero(steps <= 0.0)[0])
        raise TrajectoryError(
            f"waypoint {bad + 1}: time {t[bad + 1]:.9g} s is not after waypoint {bad}'s {t[bad]:.9g} s; "
            "expected strictly increasing times")
    q = np.asarray(positions, dtype=float)
    if q.ndim != 2 or q.shape[0] != t.size:
        raise TrajectoryError(f"positions: shape {q.shape}; expected ({t.size}, n_joints)")
    _check_finite_rows(q, "positions")
    n = q.shape[1]
    given = {1: _optional_rows(velocities, t.size, n, "velocities"),
             2: _optional_rows(accelerations, t.size, n, "accelerations")}

    t0, span = t[0], t[-1] - t[0]
    s = (t - t0) / span  # normalized time in [0, 1]; a d-th derivative scales by span**d
    sites: list[tuple[float, int, np.ndarray]] = []  # (normalized time, derivative order, values)
    half = (degree - 1) // 2
    last = t.size - 1
    for i in range(t.size):
        sites.append((s[i], 0, q[i]))
        for order in (1, 2):
            value = given[order][i]
            if value is not None and (0 < i < last or order <= half):
                sites.append((s[i], order, value * span ** order))
        if i in (0, last):
            for order in range(1, half + 1):
                if order > 2 or given[order][i] is None:
                    sites.append((s[i], order, np.zeros(n)))
    sites.sort(key=lambda site: (site[0], site[1]))
    x = np.array([site[0] for site in sites])
    count = x.size
    k = degree
    interior = [x[j + 1:j + k + 1].mean() for j in range(count - k - 1)]
    knots = np.concatenate([np.zeros(k + 1), interior, np.ones(k + 1)])
    rows, cols, vals = [], [], []
    for row, (xi, order, _) in enumerate(sites):
        first, values = _basis_derivatives(knots, k, xi, order)
        rows.extend([row] * (k + 1))
        cols.extend(range(first, first + k + 1))
        vals.extend(values)
    matrix = scipy.sparse.csc_matrix((vals, (rows, cols)), shape=(count, count))
    rhs = np.array([site[2] for site in sites])
    try:
        lu = scipy.sparse.linalg.splu(matrix)
        coefficients = lu.solve(rhs)
    except RuntimeError as error:
        raise TrajectoryError(f"waypoints: the interpolation conditions are singular ({error})") from None
    if not np.all(np.isfinite(coefficients)):
        raise TrajectoryError("waypoints: the interpolation conditions are singular")
    return SplineTrajectory(BSpline(t0 + span * knots, coefficients, k))


def trajectory_from_dict(data: Mapping[str, Any], source: str = "trajectory") -> Trajectory:
    """A trajectory from its YAML/JSON form (``source`` names the file in error messages).

    Either ``{profile: poly9, duration: T, q0: [...], qf: [...]}`` (optional ``start_time``) or
    ``{waypoints: [{t: .., q: [...], qd: [...], qdd: [...]}, ...]}`` (``qd``/``qdd`` optional; optional
    ``degree``: 5, 7 or 9, default 9).
    """
    if not isinstance(data, Mapping):
        raise TrajectoryError(f"{source}: expected a mapping with 'profile' or 'waypoints', got {type(data).__name__}")
    if "profile" in data:
        if data["profile"] != "poly9":
            raise TrajectoryError(f"{source}: profile {data['profile']!r}; expected 'poly9'")
        for field in ("duration", "q0", "qf"):
            if field not in data:
                raise TrajectoryError(f"{source}: field '{field}' missing for profile poly9")
        try:
            return Poly9Trajectory(data["q0"], data["qf"], data["duration"], data.get("start_time", 0.0))
        except (TypeError, ValueError) as error:
            raise TrajectoryError(f"{source}: {error}") from None
        except TrajectoryError as error:
            raise TrajectoryError(f"{source}: {error}") from None
    if "waypoints" in data:
        points = data["waypoints"]
        if not isinstance(points, Sequence) or isinstance(points, (str, bytes)):
            raise TrajectoryError(f"{source}: field 'waypoints' must be a list of {{t, q}} mappings")
        times, positions, velocities, accelerations = [], [], [], []
        for i, point in enumerate(points):
            if not isinstance(point, Mapping) or "t" not in point or "q" not in point:
                raise TrajectoryError(f"{source}: waypoints[{i}] must be a mapping with 't' and 'q'")
            try:
                times.append(float(point["t"]))
                positions.append(np.asarray(point["q"], dtype=float))
                velocities.append(None if point.get("qd") is None else np.asarray(point["qd"], dtype=float))
                accelerations.append(None if point.get("qdd") is None else np.asarray(point["qdd"], dtype=float))
            except (TypeError, ValueError) as error:
                raise TrajectoryError(f"{source}: waypoints[{i}]: {error}") from None
        lengths = {p.shape for p in positions}
        if len(lengths) > 1:
            raise TrajectoryError(f"{source}: waypoints have different numbers of joints {sorted(lengths)}")
        try:
            return spline_through_waypoints(times, np.array(positions), velocities, accelerations,
                                            degree=data.get("degree", 9))
        except TrajectoryError as error:
            raise TrajectoryError(f"{source}: {error}") from None
    raise TrajectoryError(f"{source}: expected a field 'profile' (poly9) or 'waypoints'")


def load_trajectory(path: str | Path) -> Trajectory:
    """Read a trajectory YAML file (see :func:`trajectory_from_dict` for the two forms)."""
    from flexrobot_ros.yaml_files import read_yaml

    return trajectory_from_dict(read_yaml(path, TrajectoryError, "the trajectory"), source=str(path))


def trajectory_from_joint_trajectory(message: Any, joint_names: Sequence[str] | None = None,
                                     degree: int = 9) -> SplineTrajectory:
    """A spline through a ``trajectory_msgs/JointTrajectory``-like message (any object with the same fields).

    ``message.joint_names`` and ``message.points[i].{positions, velocities, accelerations, time_from_start}``
    are read (``time_from_start`` with ``sec``/``nanosec`` or a float in seconds). When ``joint_names`` is
    given, the columns are reordered to it and every name must appear in the message.
    """
    names = list(message.joint_names)
    order = list(range(len(names)))
    if joint_names is not None:
        missing = [name for name in joint_names if name not in names]
        if missing:
            raise TrajectoryError(f"JointTrajectory: joints {missing} missing; message has {names}")
        order = [names.index(name) for name in joint_names]
    times, positions, velocities, accelerations = [], [], [], []
    for i, point in enumerate(message.points):
        stamp = point.time_from_start
        times.append(float(stamp) if isinstance(stamp, (int, float)) else stamp.sec + 1e-9 * stamp.nanosec)
        if len(point.positions) != len(names):
            raise TrajectoryError(
                f"JointTrajectory point {i}: {len(point.positions)} positions; expected {len(names)}")
        positions.append(np.asarray(point.positions, dtype=float)[order])
        for field, store in (("velocities", velocities), ("accelerations", accelerations)):
            value = np.asarray(getattr(point, field, ()), dtype=float)
            if value.size and value.size != len(names):
                raise TrajectoryError(f"JointTrajectory point {i}: {value.size} {field}; expected 0 or {len(names)}")
            store.append(value[order] if value.size else None)
    return spline_through_waypoints(times, np.array(positions), velocities, accelerations, degree=degree)


def _basis_derivatives(knots: np.ndarray, k: int, x: float, order: int) -> tuple[int, np.ndarray]:
    """The ``order``-th derivatives at ``x`` of the k + 1 B-splines not vanishing there: (first index, values)."""
    span = int(np.clip(np.searchsorted(knots, x, side="right") - 1, k, knots.size - k - 2))
    local = BSpline(knots[span - k:span + k + 2], np.eye(k + 1), k, extrapolate=True)
    values = local(x, nu=order) if order else local(x)
    return span - k, np.asarray(values, dtype=float).ravel()


def _finite_vector(value: Any, field: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TrajectoryError(f"{field}: {value!r}; expected a list of numbers") from None
    if array.ndim != 1 or array.size == 0:
        raise TrajectoryError(f"{field}: shape {array.shape}; expected a non-empty 1-D list of joint values")
    if not np.all(np.isfinite(array)):
        raise TrajectoryError(f"{field}: non-finite value in {array.tolist()}; expected finite joint values")
    return array


def _check_finite_rows(array: np.ndarray, field: str) -> None:
    bad = ~np.isfinite(array)
    if np.any(bad):
        point, joint = np.argwhere(bad)[0]
        raise TrajectoryError(
            f"waypoint {point}: {field}[{joint}] = {float(array[point, joint])}; expected finite values")


def _optional_rows(value: Any, points: int, n: int, field: str) -> list[np.ndarray | None]:
    """Per-point optional rows: None/empty entries mean 'not given'."""
    if value is None:
        return [None] * points
    if isinstance(value, np.ndarray) and value.ndim == 2:
        rows: list[Any] = list(value)
    else:
        rows = list(value)
    if len(rows) != points:
        raise TrajectoryError(f"{field}: {len(rows)} entries; expected one per waypoint ({points})")
    out: list[np.ndarray | None] = []
    for i, row in enumerate(rows):
        if row is None or np.size(row) == 0:
            out.append(None)
            continue
        array = np.asarray(row, dtype=float).ravel()
        if array.size != n:
            raise TrajectoryError(f"waypoint {i}: {field} has {array.size} values; expected {n}")
        if not np.all(np.isfinite(array)):
            raise TrajectoryError(f"waypoint {i}: {field} {array.tolist()} has non-finite values")
        out.append(array)
    return out
