"""Optimal excitation trajectories for rigid-body identification: finite Fourier series (seed 001 eqs. 8-12).

Each joint i follows (eqs. 8-10; Swevers et al.) with fundamental angular frequency w_f = 2 pi f_f [rad/s],
N harmonics, coefficients a_l^i, b_l^i [rad/s] and offset q_i0 [rad]::

    q_i(t)   = sum_l a_l^i / (w_f l) sin(w_f l t) - b_l^i / (w_f l) cos(w_f l t) + q_i0
    qd_i(t)  = sum_l a_l^i cos(w_f l t) + b_l^i sin(w_f l t)
    qdd_i(t) = sum_l -a_l^i w_f l sin(w_f l t) + b_l^i w_f l cos(w_f l t)

The trajectory is periodic (T_f = 1 / f_f). Here it also starts and ends at rest with zero jerk and snap,
qd = qdd = q''' = q'''' = 0 at t = 0 (sum_l a_l = sum_l l b_l = sum_l l^2 a_l = sum_l l^3 b_l = 0), so that the
feedforward's degree-9 spline, a JointTrajectoryController and a real robot can start it from standstill; these
four linear equalities are eliminated (the coefficients live in their null space).

The coefficients minimize cond(A) (eq. 11), A the observation matrix of eq. 7: the base regressor
(:mod:`.base_parameters`, friction and rotor columns included, parameters in SI units, no column scaling) stacked at
``observation_samples`` instants evenly spread over one period, subject to eq. 12 at ``constraint_samples``
instants: joint positions within [q_min, q_max], |qd| <= qd_max, |qdd| <= qdd_max (linear in the coefficients) and
the tool frame's origin inside the workspace box [x, y, z]_min..max in base-frame axes (nonlinear, with the
frame Jacobian as gradient). At P instants per period a trigonometric polynomial of degree N exceeds its largest
sampled magnitude by at most the factor 1 / cos(pi N / P) (P > 2N), so the limits (the half-ranges about the middle
of the position ranges, and the box) are scaled by cos(pi N / P) at the instants (0.9997 for N = 5, P = 200): the
continuous trajectory then stays within them. The solver is scipy's SLSQP (as Matlab's fmincon in the paper) from
random feasible starts; the objective's gradient is by finite differences of log10 cond(A).

The fundamental frequency must stay well below the joint flexibility: :func:`lowest_natural_frequency` computes the
closed-loop modes (:func:`flexrobot_ros.modal.modal_analysis`, any robot, the robot's default gains) at poses along
the trajectory, and the *flexibility margin* is the lowest natural frequency over those poses divided by the highest
harmonic N f_f; :func:`design_excitation` refuses a design whose margin is below ``min_margin`` (default 5).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pinocchio as pin
import scipy.linalg
import scipy.optimize

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.base_parameters import BaseParameters, base_parameters
from flexrobot_ros.identification.rigid_regressor import check_rigid_model, regressor

#: Seed 001 section 2.3 / Tables 1-2 (KUKA KR90 R3100): 5 harmonics, f_f = 0.1 Hz, |qdd| <= 8 rad/s^2.
PAPER_HARMONICS = 5
PAPER_FREQUENCY_HZ = 0.1
#: Table 2, workspace box of the end effector [m]: (x_min, y_min, z_min), (x_max, y_max, z_max).
KR90_WORKSPACE = ((-1.5, -1.6, 0.5), (2.6, 1.4, 2.5))
#: Derivative orders fixed to zero at t = 0 (and t = T_f): velocity, acceleration, jerk, snap.
REST_ORDERS = (1, 2, 3, 4)


@dataclass(frozen=True)
class FourierTrajectory:
    """Eqs. 8-10: ``frequency_hz`` f_f [Hz], ``a``, ``b`` (harmonics, n) [rad/s], ``q0`` (n,) [rad]."""

    frequency_hz: float
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray

    @property
    def harmonics(self) -> int:
        return self.a.shape[0]

    @property
    def n_joints(self) -> int:
        return self.a.shape[1]

    @property
    def period(self) -> float:
        """T_f = 1 / f_f [s]."""
        return 1.0 / self.frequency_hz

    def derivative(self, t: Any, order: int) -> np.ndarray:
        """The ``order``-th time derivative (0 = q) at times ``t`` [s], (samples, n) [rad/s^order]."""
        basis_a, basis_b, constant = _basis(np.atleast_1d(np.asarray(t, dtype=float)), self.frequency_hz,
                                            self.harmonics, order)
        return basis_a @ self.a + basis_b @ self.b + constant[:, None] * self.q0[None, :]

    def evaluate(self, t: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q [rad], qd [rad/s], qdd [rad/s^2] at times ``t`` [s], each (samples, n)."""
        return self.derivative(t, 0), self.derivative(t, 1), self.derivative(t, 2)

    def to_dict(self) -> dict[str, Any]:
        return {"frequency_hz": float(self.frequency_hz), "harmonics": self.harmonics,
                "a": self.a.T.tolist(), "b": self.b.T.tolist(), "q0": self.q0.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "fourier") -> "FourierTrajectory":
        """Inverse of :meth:`to_dict` (``a``, ``b`` per joint: n lists of N coefficients)."""
        try:
            a, b = np.asarray(data["a"], dtype=float).T, np.asarray(data["b"], dtype=float).T
            q0, frequency = np.asarray(data["q0"], dtype=float), float(data["frequency_hz"])
        except (KeyError, TypeError, ValueError) as error:
            raise IdentificationError(f"{source}: expected frequency_hz, a, b, q0 ({error})") from None
        if a.ndim != 2 or a.shape != b.shape or q0.shape != (a.shape[1],) or not frequency > 0:
            raise IdentificationError(f"{source}: a, b must be n lists of N coefficients and q0 n values, "
                                      f"frequency_hz > 0; got a {a.T.shape}, b {b.T.shape}, q0 {q0.shape}")
        return cls(frequency, a, b, q0)


def _basis(t: np.ndarray, frequency_hz: float, harmonics: int, order: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """d^order/dt^order of the eq. 8 basis at times t: (samples, N) for a, (samples, N) for b, (samples,) for q0."""
    w = 2 * np.pi * frequency_hz * np.arange(1, harmonics + 1)         # w_f l [rad/s]
    phase = np.outer(t, w)
    # q = a/w sin - b/w cos: the k-th derivative of sin(wt) is w^k sin(wt + k pi/2).
    scale = w ** (order - 1)
    basis_a = scale * np.sin(phase + order * np.pi / 2)
    basis_b = -scale * np.cos(phase + order * np.pi / 2)
    return basis_a, basis_b, np.full(len(t), 1.0 if order == 0 else 0.0)


@dataclass(frozen=True)
class ExcitationLimits:
    """Eq. 12: ``q_min``, ``q_max`` (n,) [rad], ``qd_max``, ``qdd_max`` (n,) [rad/s, rad/s^2] (symmetric),
    ``workspace`` ((x, y, z)_min, (x, y, z)_max) [m] of ``frame``'s origin in base axes, or None."""

    q_min: np.ndarray
    q_max: np.ndarray
    qd_max: np.ndarray
    qdd_max: np.ndarray
    workspace: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    frame: str | None = None

    @classmethod
    def of_robot(cls, robot: Any, qdd_max: Any = 8.0, workspace: Any = None) -> "ExcitationLimits":
        """The URDF position and velocity limits (Table 1 for the shipped kr90), ``qdd_max`` [rad/s^2] (one value
        or n; Table 1: 8), ``workspace`` box of the tool frame (Table 2 for the KR90: :data:`KR90_WORKSPACE`)."""
        n = robot.n
        accel = np.broadcast_to(np.asarray(qdd_max, dtype=float), (n,)).copy()
        for what, values in (("lower position", robot.lower_limits), ("upper position", robot.upper_limits),
                             ("velocity", robot.velocity_limits)):
            bad = [name for name, v in zip(robot.joint_names, values) if not np.isfinite(v)]
            if bad:
                raise IdentificationError(f"robot {robot.name}: joints {bad} have no finite {what} limit in "
                                          f"{robot.urdf_source}; the excitation needs one")
        if not np.all(accel > 0):
            raise IdentificationError(f"qdd_max: expected positive accelerations [rad/s^2], got {accel.tolist()}")
        return cls(np.asarray(robot.lower_limits, float), np.asarray(robot.upper_limits, float),
                   np.asarray(robot.velocity_limits, float), accel, workspace, robot.tool_frame)


@dataclass(frozen=True)
class ExcitationDesign:
    """Result of :func:`design_excitation`: the optimized ``trajectory`` and its cond(A) ``condition``; the baseline
    of the same limits: ``random_condition``, the median cond(A) of ``random_samples`` random feasible Fourier
    trajectories (:func:`random_feasible`), ``random_trajectory`` the one with that median, ``random_best_condition``
    the lowest of them; the base parameters used, the lowest natural frequency [Hz] over the trajectory's poses and the
    flexibility ``margin`` (that frequency over the highest harmonic N f_f), and the optimizer's message."""

    trajectory: FourierTrajectory
    condition: float
    random_trajectory: FourierTrajectory
    random_condition: float
    random_best_condition: float
    base: BaseParameters = field(repr=False)
    lowest_frequency_hz: float
    margin: float
    message: str
    starts: int


class _Problem:
    """The optimization of eqs. 11-12 in the null-space coordinates z of the rest conditions."""

    def __init__(self, robot: Any, base: BaseParameters, limits: ExcitationLimits, frequency_hz: float,
                 harmonics: int, observation_samples: int, constraint_samples: int):
        self.robot, self.base, self.limits = robot, base, limits
        self.frequency_hz, self.harmonics, self.n = frequency_hz, harmonics, robot.n
        rest = np.array([np.concatenate([basis[0][0], basis[1][0], [0.0]]) for basis in
                         (_basis(np.zeros(1), frequency_hz, harmonics, k) for k in REST_ORDERS)])
        self.null = scipy.linalg.null_space(rest)                       # (2N + 1, 2N + 1 - 4) per joint
        if self.null.shape[1] < 2:
            raise IdentificationError(f"harmonics: {harmonics}; at least 3 are needed besides the 4 rest "
                                      "conditions of each joint")
        period = 1.0 / frequency_hz
        self.t_obs = np.arange(observation_samples) * period / observation_samples
        self.t_con = np.arange(constraint_samples + 1) * period / constraint_samples
        self.shrink = float(np.cos(np.pi * harmonics / constraint_samples))
        self.maps = [self._map(self.t_con, k) for k in range(3)]        # (samples, n, n z) per order
        self.obs_maps = [self._map(self.t_obs, k) for k in range(3)]
        self.data = robot.model.createData()
        self.frame_id = robot.frame_id(limits.frame) if limits.workspace is not None else None

    @property
    def size(self) -> int:
        return self.n * self.null.shape[1]

    def _map(self, t: np.ndarray, order: int) -> np.ndarray:
        basis_a, basis_b, constant = _basis(t, self.frequency_hz, self.harmonics, order)
        per_joint = np.column_stack([basis_a, basis_b, constant]) @ self.null   # (samples, m)
        m = self.null.shape[1]
        out = np.zeros((len(t), self.n, self.n * m))
        for j in range(self.n):
            out[:, j, j * m:(j + 1) * m] = per_joint
        return out

    def trajectory(self, z: np.ndarray) -> FourierTrajectory:
        delta = self.null @ np.asarray(z).reshape(self.n, -1).T          # (2N + 1, n)
        h = self.harmonics
        return FourierTrajectory(self.frequency_hz, delta[:h], delta[h:2 * h], delta[2 * h])

    def z_of(self, trajectory: FourierTrajectory) -> np.ndarray:
        delta = np.vstack([trajectory.a, trajectory.b, trajectory.q0[None, :]])
        return np.linalg.lstsq(self.null, delta, rcond=None)[0].T.ravel()

    def observation(self, z: np.ndarray) -> np.ndarray:
        q, qd, qdd = (m @ z for m in self.obs_maps)
        return self.base.columns(regressor(self.robot, q, qd, qdd, self.data))

    def log_condition(self, z: np.ndarray) -> float:
        singular = np.linalg.svd(self.observation(z), compute_uv=False)
        return float(np.log10(singular[0] / max(singular[-1], 1e-300)))

    def linear_constraints(self) -> tuple[np.ndarray, np.ndarray]:
        """G z <= h for positions, velocities and accelerations at the constraint instants."""
        lim, shrink = self.limits, self.shrink
        middle, half = 0.5 * (lim.q_max + lim.q_min), 0.5 * shrink * (lim.q_max - lim.q_min)
        rows, bounds = [], []
        q_map, qd_map, qdd_map = (m.reshape(-1, self.size) for m in self.maps)
        count = len(self.t_con)
        rows += [q_map, -q_map, qd_map, -qd_map, qdd_map, -qdd_map]
        bounds += [np.tile(middle + half, count), -np.tile(middle - half, count), np.tile(shrink * lim.qd_max, count),
                   np.tile(shrink * lim.qd_max, count), np.tile(shrink * lim.qdd_max, count),
                   np.tile(shrink * lim.qdd_max, count)]
        return np.vstack(rows), np.concatenate(bounds)

    def workspace(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slack of the workspace box (>= 0 inside) at the constraint instants and its gradient in z."""
        low, high = (np.asarray(v, dtype=float) for v in self.limits.workspace)
        margin = 0.5 * (1.0 - self.shrink) * (high - low)
        low, high = low + margin, high - margin
        q_all = self.maps[0] @ z
        values, gradients = [], []
        for k, q in enumerate(q_all):
            pin.framesForwardKinematics(self.robot.model, self.data, q)
            position = self.data.oMf[self.frame_id].translation
            jacobian = pin.computeFrameJacobian(self.robot.model, self.data, q, self.frame_id,
                                                pin.LOCAL_WORLD_ALIGNED)[:3] @ self.maps[0][k]
            values += [position - low, high - position]
            gradients += [jacobian, -jacobian]
        return np.concatenate(values), np.vstack(gradients)

    def feasible(self, z: np.ndarray, tolerance: float = 1e-9) -> bool:
        g, h = self.linear_constraints()
        if np.any(g @ z > h + tolerance):
            return False
        return self.limits.workspace is None or bool(np.all(self.workspace(z)[0] >= -tolerance))


def workspace_centre(problem: _Problem, rng: np.random.Generator, candidates: int = 2000) -> np.ndarray:
    """A pose within the joint limits whose tool lies deepest inside the workspace box (relative slack of the box
    and of the joint ranges, the smaller of the two), among ``candidates`` random poses; the middle of the joint
    ranges without a workspace."""
    lim = problem.limits
    middle = 0.5 * (lim.q_min + lim.q_max)
    if lim.workspace is None:
        return middle
    low, high = (np.asarray(v, dtype=float) for v in lim.workspace)
    poses = rng.uniform(lim.q_min, lim.q_max, (candidates, problem.n))
    best, best_slack = middle, -np.inf
    for q in poses:
        pin.framesForwardKinematics(problem.robot.model, problem.data, q)
        position = problem.data.oMf[problem.frame_id].translation
        box = np.min(np.minimum(position - low, high - position) / (high - low))
        joints = np.min(np.minimum(q - lim.q_min, lim.q_max - q) / (lim.q_max - lim.q_min))
        if min(box, joints) > best_slack:
            best, best_slack = q, min(box, joints)
    if best_slack <= 0.0:
        raise IdentificationError(f"robot {problem.robot.name}: no pose within the joint limits puts frame "
                                  f"{problem.limits.frame} inside the workspace box {lim.workspace} m")
    return best


def random_feasible(problem: _Problem, rng: np.random.Generator, centre: np.ndarray, attempts: int = 200
                    ) -> np.ndarray:
    """Random coefficients (normal in the null space) about the pose ``centre``, scaled to 90 % of the tightest
    position (about ``centre``), velocity or acceleration limit, then shrunk until the workspace holds."""
    lim, n = problem.limits, problem.n
    room = np.minimum(centre - lim.q_min, lim.q_max - centre)
    for _ in range(attempts):
        shape = problem.trajectory(rng.standard_normal(problem.size))
        q, qd, qdd = FourierTrajectory(shape.frequency_hz, shape.a, shape.b, np.zeros(n)).evaluate(problem.t_con)
        middle = 0.5 * (q.max(axis=0) + q.min(axis=0))
        scale = 0.9 * min(np.min(room / np.abs(q - middle).max(axis=0)),
                          np.min(lim.qd_max / np.abs(qd).max(axis=0)), np.min(lim.qdd_max / np.abs(qdd).max(axis=0)))
        for _ in range(10):
            candidate = problem.z_of(FourierTrajectory(shape.frequency_hz, scale * shape.a, scale * shape.b,
                                                       centre - scale * middle))
            if problem.feasible(candidate, 1e-7):
                return candidate
            scale *= 0.7
    raise IdentificationError(f"robot {problem.robot.name}: no random Fourier trajectory within the limits after "
                              f"{attempts} attempts; check the workspace box and the joint ranges")


def _shrink_into_limits(problem: _Problem, z: np.ndarray) -> np.ndarray | None:
    """``z`` with the Fourier amplitudes a, b scaled by the largest factor in 0.99 .. 0.5 that satisfies the limits
    (offsets kept), or None."""
    trajectory = problem.trajectory(z)
    for factor in (0.99, 0.97, 0.94, 0.9, 0.8, 0.65, 0.5):
        candidate = problem.z_of(FourierTrajectory(trajectory.frequency_hz, factor * trajectory.a,
                                                   factor * trajectory.b, trajectory.q0))
        if problem.feasible(candidate, 1e-7):
            return candidate
    return None


def lowest_natural_frequency(robot: Any, trajectory: FourierTrajectory, poses: int = 12) -> float:
    """The lowest closed-loop natural frequency [Hz] (robot's default gains) at ``poses`` instants of a period."""
    from flexrobot_ros.modal import modal_analysis

    q = trajectory.derivative(np.arange(poses) * trajectory.period / poses, 0)
    return float(min(modal_analysis(robot, pose).frequencies_hz[0] for pose in q))


def design_excitation(robot: Any, limits: ExcitationLimits | None = None, *, harmonics: int = PAPER_HARMONICS,
                      frequency_hz: float = PAPER_FREQUENCY_HZ, starts: int = 4, seed: int = 0,
                      observation_samples: int = 60, constraint_samples: int = 200, max_iterations: int = 150,
                      min_margin: float = 5.0, random_samples: int = 20, base: BaseParameters | None = None,
                      progress: Callable[[int, int, float], None] | None = None) -> ExcitationDesign:
    """Optimize a Fourier excitation (eqs. 8-12) for ``robot``; see the module docstring.

    ``starts`` random feasible starts, each refined by SLSQP (``max_iterations``); the best feasible optimum is
    kept. ``random_samples`` random feasible trajectories (the starts among them) give the baseline cond(A).
    ``progress(done, total, best_condition)`` is called after each start. A start whose optimum leaves the limits
    (SLSQP stops outside them on some starts) has its amplitudes shrunk until they hold (by up to half), else the
    next random sample replaces it; ``message`` says which start won and how. Raises IdentificationError when every
    random sample fails or when the flexibility margin is below ``min_margin``.
    """
    check_rigid_model(robot)
    if not (np.isfinite(frequency_hz) and frequency_hz > 0):
        raise IdentificationError(f"frequency_hz: {frequency_hz}; expected a positive fundamental frequency [Hz]")
    limits = limits or ExcitationLimits.of_robot(robot)
    base = base or base_parameters(robot)
    problem = _Problem(robot, base, limits, frequency_hz, harmonics, observation_samples, constraint_samples)
    g, h = problem.linear_constraints()
    constraints = [{"type": "ineq", "fun": lambda z: h - g @ z, "jac": lambda z: -g}]
    if limits.workspace is not None:
        constraints.append({"type": "ineq", "fun": lambda z: problem.workspace(z)[0],
                            "jac": lambda z: problem.workspace(z)[1]})
    rng = np.random.default_rng(seed)
    centre = workspace_centre(problem, rng)
    randoms = [random_feasible(problem, rng, centre) for _ in range(max(random_samples, starts))]
    random_logs = np.array([problem.log_condition(z) for z in randoms])
    median = int(np.argsort(random_logs)[len(randoms) // 2])
    best: tuple[float, np.ndarray, str] | None = None
    done = 0
    for attempt, z0 in enumerate(randoms):                # a start that fails is replaced by the next sample
        if done == starts:
            break
        result = scipy.optimize.minimize(problem.log_condition, z0, method="SLSQP", constraints=constraints,
                                         options={"maxiter": max_iterations, "ftol": 1e-6})
        z = result.x if problem.feasible(result.x, 1e-6) else _shrink_into_limits(problem, result.x)
        if z is None:
            continue
        note = "" if z is result.x else "; SLSQP ended outside the limits, amplitudes shrunk into them"
        done += 1
        value = problem.log_condition(z)
        if best is None or value < best[0]:
            best = (value, z, f"start {done} (random sample {attempt + 1}): {result.message}{note}")
        if progress is not None:
            progress(done, starts, 10 ** best[0])
    if best is None:
        raise IdentificationError(f"robot {robot.name}: SLSQP left the limits from all {len(randoms)} random "
                                  "starts; loosen the limits or lower the harmonics")
    trajectory = problem.trajectory(best[1])
    lowest = lowest_natural_frequency(robot, trajectory)
    margin = lowest / (harmonics * frequency_hz)
    if margin < min_margin:
        raise IdentificationError(
            f"robot {robot.name}: the highest harmonic {harmonics * frequency_hz:.4g} Hz is only {margin:.3g} times "
            f"below the lowest natural frequency {lowest:.4g} Hz over the trajectory (at least {min_margin:g} "
            "required); lower the fundamental frequency or the number of harmonics")
    return ExcitationDesign(trajectory=trajectory, condition=10 ** best[0],
                            random_trajectory=problem.trajectory(randoms[median]),
                            random_condition=10 ** random_logs[median],
                            random_best_condition=10 ** random_logs.min(), base=base, lowest_frequency_hz=lowest,
                            margin=margin, message=best[2], starts=starts)


def observation_condition(robot: Any, base: BaseParameters, trajectory: FourierTrajectory, samples: int = 250
                          ) -> float:
    """cond(A) of eq. 11 over ``samples`` instants evenly spread over one period."""
    t = np.arange(samples) * trajectory.period / samples
    return float(np.linalg.cond(base.columns(regressor(robot, *trajectory.evaluate(t)))))


def trajectory_document(trajectory: FourierTrajectory, periods: int = 1, waypoint_step: float | None = None
                        ) -> dict[str, Any]:
    """The trajectory as the feedforward's waypoint file (``{waypoints: [{t, q, qd, qdd}], degree: 9}``,
    :func:`flexrobot_ros.dynamics.trajectory.trajectory_from_dict`) over ``periods`` periods, with the Fourier
    coefficients under ``fourier`` (ignored by the reader, used to regenerate the series exactly).
    ``waypoint_step`` [s] defaults to a twentieth of the highest harmonic's period."""
    step = waypoint_step or trajectory.period / (20 * trajectory.harmonics)
    count = int(round(periods * trajectory.period / step))
    t = np.linspace(0.0, periods * trajectory.period, count + 1)
    q, qd, qdd = trajectory.evaluate(t)
    qd[[0, -1]] = 0.0                                                    # exact rest (round-off of the sums)
    qdd[[0, -1]] = 0.0
    points = [{"t": float(t[k]), "q": q[k].tolist(), "qd": qd[k].tolist(), "qdd": qdd[k].tolist()}
              for k in range(len(t))]
    return {"degree": 9, "fourier": {**trajectory.to_dict(), "periods": int(periods)}, "waypoints": points}


def write_trajectory(path: str | Path, trajectory: FourierTrajectory, periods: int = 1, header: str = "") -> Path:
    """Write :func:`trajectory_document` as YAML to ``path`` (``header``: comment lines, without '#')."""
    import yaml

    path = Path(path)
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    path.write_text(comment + yaml.safe_dump(trajectory_document(trajectory, periods), default_flow_style=None,
                                              sort_keys=False, width=120))
    return path


__all__ = ["FourierTrajectory", "ExcitationLimits", "ExcitationDesign", "design_excitation",
           "lowest_natural_frequency", "observation_condition", "random_feasible", "trajectory_document",
           "write_trajectory", "KR90_WORKSPACE", "PAPER_HARMONICS", "PAPER_FREQUENCY_HZ"]
