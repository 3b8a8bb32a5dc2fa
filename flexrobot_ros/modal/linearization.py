"""Linearized closed-loop dynamics of elastic joints on rigid links about a set point (seed 000, section 2.3.1).

The fast path of the one linearization entry, :func:`flexrobot_ros.modal.linearize` (it takes this evaluation for
robots with elastic joints alone, :func:`~flexrobot_ros.flexible_links.elastic_robot.elastic_joints_only`, and the
composed model for every other robot): call that. :func:`linearize_elastic_joints` evaluates eq. 2.1's joint model
only, whatever the robot holds besides (extra elasticities, gear dampers, flexible links, rigid joints).

The robot (eq. 2.1) under PD control with gravity and wrench feedforward (eq. 2.2) is linearized about the
equilibrium ``z^d = [q^d; q_m^d]``, ``zdot = zddot = 0`` (eq. 2.7)::

    M_bar dzdd + D_bar dzd + K_bar dz = 0                                           (eq. 2.8)
    M_bar = [[M(q^d), 0], [0, B]]                                                   (eq. 2.9)
    D_bar = [[D, 0], [0, D_m + K_D]]                                                (eq. 2.10)
    K_bar = [[K_G(q^d) + K W^2, -K W], [-K W, K + K_P]]                             (eq. 2.11)
    K_G(q^d) = dg/dq - d(J^T w_ext)/dq  at q^d                                      (eq. 2.12)

State order: ``z = [q; q_m]`` (link side first, then motor side), in pinocchio's joint order; units rad (m for
prismatic link coordinates), rad for motor angles (the composed model's coordinates of the other robots extend it:
:func:`flexrobot_ros.modal.modal_coordinates`).

External wrench convention (``wrench``, ``frame``): ``w = [f_x, f_y, f_z, m_x, m_y, m_z]`` [N, N m] acting on the
robot at the origin of the pinocchio frame ``frame`` (default: ``robot.tool_frame``), with components in the base
(world) axes, and constant in the world while the robot moves (a dead load, like gravity). Its generalized force is
``J^T(q) w`` with ``J`` the frame Jacobian in pinocchio's ``LOCAL_WORLD_ALIGNED`` convention. Its stiffness term is
computed analytically from pinocchio's Jacobian time variation (``dJ/dq_k = dJ/dt`` at ``qdot = e_k``); the gravity
term from ``pinocchio.computeGeneralizedGravityDerivatives``. No finite differences.
"""
from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import FlexrobotError, ModalError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class LinearizedModel:
    """Linearized closed loop of seed 000 eqs. 2.3 and 2.9-2.12 at one set point; state ``z = [q; q_m]``.

    ``q`` (n,) link set point q^d [rad | m]; ``q_m`` (n,) motor set point q_m^d [rad] (eq. 2.3);
    ``M_bar`` (2n, 2n) [kg m^2 | kg]; ``D_bar`` (2n, 2n) [N m s/rad | N s/m]; ``K_bar`` (2n, 2n) [N m/rad | N/m];
    ``K_G`` (n, n) gravity/external-load stiffness of eq. 2.12 (already contained in ``K_bar``'s upper-left block).
    """

    q: np.ndarray
    q_m: np.ndarray
    M_bar: np.ndarray
    D_bar: np.ndarray
    K_bar: np.ndarray
    K_G: np.ndarray

    @property
    def n(self) -> int:
        """Number of elastic joints."""
        return int(self.q.shape[0])

    def state_matrix(self) -> np.ndarray:
        """The (2N, 2N) state matrix ``A = [[0, I], [-M_bar^-1 K_bar, -M_bar^-1 D_bar]]`` of eq. 2.14 for the N
        coordinates of ``M_bar`` (2n for elastic joints alone).

        Raises :class:`ModalError` when ``M_bar`` is singular or not positive definite.
        """
        m = self.M_bar.shape[0]
        factor = cholesky_mass(self.M_bar, self.q)
        solve = lambda rhs: _cho_solve(factor, rhs)  # noqa: E731
        a = np.zeros((2 * m, 2 * m))
        a[:m, m:] = np.eye(m)
        a[m:, :m] = -solve(self.K_bar)
        a[m:, m:] = -solve(self.D_bar)
        return a


def cholesky_mass(m_bar: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
    """Lower Cholesky factor of a mass matrix, or a ModalError saying it is singular / not positive definite."""
    where = "" if q is None else f" at q = {np.round(q, 6).tolist()}"
    if not np.all(np.isfinite(m_bar)):
        raise ModalError(f"mass matrix M_bar{where} has non-finite entries")
    try:
        factor = np.linalg.cholesky(m_bar)
    except np.linalg.LinAlgError:
        raise ModalError(f"mass matrix M_bar{where} is singular or not positive definite (smallest eigenvalue "
                         f"{np.linalg.eigvalsh(0.5 * (m_bar + m_bar.T)).min():.3g}); check link masses/inertias "
                         "and motor inertias") from None
    diagonal = np.diag(factor)
    if diagonal.min() <= 1e-9 * diagonal.max():
        raise ModalError(f"mass matrix M_bar{where} is numerically singular (Cholesky pivot ratio "
                         f"{diagonal.min() / diagonal.max():.3g}); check link masses/inertias and motor inertias")
    return factor


def _cho_solve(factor: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    from scipy.linalg import solve_triangular

    return solve_triangular(factor.T, solve_triangular(factor, rhs, lower=True), lower=False)


_SCRATCH = threading.local()


def scratch_data(robot: FlexibleRobot) -> pin.Data:
    """A pinocchio Data for ``robot.model`` reused across calls of this thread (createData costs ~15 us)."""
    cache = getattr(_SCRATCH, "cache", None)
    if cache is None:
        cache = _SCRATCH.cache = {}
    entry = cache.get(id(robot.model))
    if entry is None or entry[0] is not robot.model:
        if len(cache) >= 16:
            cache.clear()
        entry = cache[id(robot.model)] = (robot.model, robot.create_data())
    return entry[1]


def joint_vector(robot: FlexibleRobot, values: Any, what: str) -> np.ndarray:
    """A per-joint parameter as a finite float vector of length n (a scalar is broadcast), or a ModalError."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        array = np.full(robot.n, float(array))
    if array.shape != (robot.n,):
        raise ModalError(f"robot {robot.name}: {what}: expected {robot.n} values for joints "
                         f"{list(robot.joint_names)} (or one scalar), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ModalError(f"robot {robot.name}: {what}: non-finite value(s) {array.tolist()}")
    return array


def frame_index(robot: FlexibleRobot, frame: str | None) -> int:
    """pinocchio id of ``frame`` (default ``robot.tool_frame``); a ModalError lists the known frames."""
    try:
        return robot.frame_id(frame or robot.tool_frame)
    except FlexrobotError as error:  # ModelError -> the modal layer's own error type, same message
        raise ModalError(str(error)) from None


def check_wrench(robot: FlexibleRobot, wrench: Any, frame: str | None) -> tuple[np.ndarray | None, int]:
    """Validated ``(wrench (6,) or None, frame id)``; ``frame`` defaults to ``robot.tool_frame`` (id -1 when there is
    no wrench)."""
    if wrench is None:
        return None, -1
    frame_id = frame_index(robot, frame)
    array = np.asarray(wrench, dtype=float)
    if array.shape != (6,) or not np.all(np.isfinite(array)):
        raise ModalError(f"robot {robot.name}: wrench: expected 6 finite values [fx, fy, fz, mx, my, mz] in N and "
                         f"N m (world axes, at frame {frame or robot.tool_frame!r}), got {array.tolist()}")
    return (array if np.any(array) else None), frame_id


def check_pose(robot: FlexibleRobot, q_d: Any, what: str = "q_d") -> np.ndarray:
    """``q_d`` as a finite (n,) float array, or a ModalError naming ``what`` and the joints."""
    try:
        return robot.check_q(q_d, what)
    except FlexrobotError as error:  # ModelError -> the modal layer's own error type, same message
        raise ModalError(str(error)) from None


def wrench_torque(robot: FlexibleRobot, data: pin.Data, q: np.ndarray, wrench: np.ndarray, frame_id: int
                  ) -> np.ndarray:
    """Generalized force ``J^T(q) w`` [N m | N] of a world-axes wrench at a frame's origin."""
    jacobian = pin.computeFrameJacobian(robot.model, data, q, frame_id, pin.LOCAL_WORLD_ALIGNED)
    return np.reshape(jacobian, (6, robot.n)).T @ wrench


def wrench_stiffness(robot: FlexibleRobot, data: pin.Data, q: np.ndarray, wrench: np.ndarray, frame_id: int
                     ) -> np.ndarray:
    """``d(J^T(q) w)/dq`` (n, n) for a constant world-axes wrench (analytic, Jacobian time variation).

    The LOCAL_WORLD_ALIGNED time variation is formed from the WORLD one (``J_lin - p x J_ang`` differentiated),
    because pinocchio < 3 returns a wrong ``getFrameJacobianTimeVariation(..., LOCAL_WORLD_ALIGNED)``
    (stack-of-tasks/pinocchio#2141)."""
    n = robot.n
    result = np.empty((n, n))
    unit = np.eye(n)
    for k in range(n):
        pin.computeJointJacobiansTimeVariation(robot.model, data, q, unit[k])
        pin.updateFramePlacements(robot.model, data)
        jacobian = np.reshape(pin.getFrameJacobian(robot.model, data, frame_id, pin.WORLD), (6, n))
        d_world = np.reshape(pin.getFrameJacobianTimeVariation(robot.model, data, frame_id, pin.WORLD), (6, n))
        origin = data.oMf[frame_id].translation
        origin_rate = jacobian[:3, k] - np.cross(origin, jacobian[3:, k])  # dp/dq_k of the frame origin
        d_linear = d_world[:3] - np.cross(origin_rate, jacobian[3:], axis=0) - np.cross(origin, d_world[3:], axis=0)
        result[:, k] = d_linear.T @ wrench[:3] + d_world[3:].T @ wrench[3:]
    return result


def motor_set_point(robot: FlexibleRobot, q_d: Any, wrench: Any = None, frame: str | None = None) -> np.ndarray:
    """Motor set point ``q_m^d = W q^d + (K W)^-1 (g(q^d) - J^T(q^d) w)`` [rad] of seed 000 eq. 2.3.

    ``q_d`` (n,) link set point [rad | m]; ``wrench`` and ``frame`` as in the module docstring.
    """
    q = check_pose(robot, q_d)
    wrench, frame_id = check_wrench(robot, wrench, frame)
    data = scratch_data(robot)
    load = pin.computeGeneralizedGravity(robot.model, data, q).copy()
    if wrench is not None:
        load -= wrench_torque(robot, data, q, wrench, frame_id)
    w = robot.transmission
    return w * q + load / (robot.stiffness * w)


def linearize_elastic_joints(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                             frame: str | None = None) -> LinearizedModel:
    """Linearized closed loop (seed 000 eqs. 2.3, 2.9-2.12) of ``robot``'s elastic joints at the link set point
    ``q_d``: the fast path of :func:`flexrobot_ros.modal.linearize` (module docstring).

    ``kp``, ``kd``: motor-side PD gains [N m/rad], [N m s/rad], scalars or (n,), default ``robot.kp``/``robot.kd``
    (any finite value is accepted: destabilizing gains are reported by the stability verdict of
    :func:`flexrobot_ros.modal.modal_analysis`, not refused). ``wrench``/``frame``: a constant external
    wrench, see the module docstring. Raises :class:`ModalError` on a pose or gain of the wrong length or with
    non-finite values, or an unknown frame.
    """
    q = check_pose(robot, q_d)
    kp = joint_vector(robot, robot.kp if kp is None else kp, "kp")
    kd = joint_vector(robot, robot.kd if kd is None else kd, "kd")
    wrench, frame_id = check_wrench(robot, wrench, frame)
    model, data, n = robot.model, scratch_data(robot), robot.n
    mass = np.array(pin.crba(model, data, q))
    lower = np.tril_indices(n, -1)
    mass[lower] = mass.T[lower]  # crba fills the upper triangle
    k_g = np.array(pin.computeGeneralizedGravityDerivatives(model, data, q))
    load = data.g.copy()  # the gravity torque g(q), computed by the derivative pass
    if wrench is not None:
        k_g -= wrench_stiffness(robot, data, q, wrench, frame_id)
        load -= wrench_torque(robot, data, q, wrench, frame_id)
    k, w = robot.stiffness, robot.transmission
    q_m = w * q + load / (k * w)
    m_bar = np.zeros((2 * n, 2 * n))
    m_bar[:n, :n] = mass
    m_bar[n:, n:] = np.diag(robot.motor_inertia)
    d_bar = np.diag(np.concatenate([robot.link_damping, robot.motor_damping + kd]))
    k_bar = np.zeros((2 * n, 2 * n))
    k_bar[:n, :n] = k_g + np.diag(k * w * w)
    k_bar[:n, n:] = k_bar[n:, :n] = -np.diag(k * w)
    k_bar[n:, n:] = np.diag(k + kp)
    for name, matrix in (("M_bar", m_bar), ("K_bar", k_bar)):
        if not np.all(np.isfinite(matrix)):
            raise ModalError(f"robot {robot.name}: {name} at q = {q.tolist()} has non-finite entries")
    return LinearizedModel(q=q, q_m=q_m, M_bar=m_bar, D_bar=d_bar, K_bar=k_bar, K_G=k_g)


@dataclass(frozen=True)
class LinearizedBatch:
    """P linearized closed loops (the fields of :class:`LinearizedModel` stacked along a first pose axis).

    ``q``, ``q_m`` (P, n); ``M_bar``, ``D_bar``, ``K_bar`` (P, 2n, 2n); ``K_G`` (P, n, n); ``kp``, ``kd`` (P, n)
    the gains each pose was linearized with.
    """

    q: np.ndarray
    q_m: np.ndarray
    M_bar: np.ndarray
    D_bar: np.ndarray
    K_bar: np.ndarray
    K_G: np.ndarray
    kp: np.ndarray
    kd: np.ndarray

    def __len__(self) -> int:
        return int(self.q.shape[0])

    def at(self, index: int) -> LinearizedModel:
        """The :class:`LinearizedModel` of one pose."""
        return LinearizedModel(q=self.q[index], q_m=self.q_m[index], M_bar=self.M_bar[index],
                               D_bar=self.D_bar[index], K_bar=self.K_bar[index], K_G=self.K_G[index])


def pose_array(robot: FlexibleRobot, poses: Any) -> np.ndarray:
    """Poses as a finite (P, n) float array, or a ModalError naming the bad pose and joint."""
    array = np.asarray(poses, dtype=float)
    if array.ndim == 1 and array.shape[0] == robot.n:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != robot.n or array.shape[0] == 0:
        raise ModalError(f"robot {robot.name}: poses: expected an array (P, {robot.n}) with columns "
                         f"{list(robot.joint_names)}, got shape {array.shape}")
    bad = ~np.isfinite(array)
    if np.any(bad):
        row, column = np.argwhere(bad)[0]
        raise ModalError(f"robot {robot.name}: poses: non-finite value {array[row, column]} at pose {row}, joint "
                         f"{robot.joint_names[column]} ({int(bad.any(axis=1).sum())} bad pose(s))")
    return array


def gain_array(robot: FlexibleRobot, gains: Any, count: int, what: str) -> np.ndarray:
    """Gains as a finite (P, n) array from a scalar, an (n,) vector or a (P, n) array."""
    array = np.asarray(gains, dtype=float)
    if array.ndim == 2:
        if array.shape != (count, robot.n):
            raise ModalError(f"robot {robot.name}: {what}: expected ({count}, {robot.n}) per-pose gains, got shape "
                             f"{array.shape}")
        if not np.all(np.isfinite(array)):
            raise ModalError(f"robot {robot.name}: {what}: non-finite gain(s)")
        return array
    return np.broadcast_to(joint_vector(robot, array, what), (count, robot.n))


def linearize_elastic_joints_batch(robot: FlexibleRobot, poses: Any, kp: Any = None, kd: Any = None,
                                   wrench: Any = None, frame: str | None = None) -> LinearizedBatch:
    """:func:`linearize_elastic_joints` at P poses (P, n) at once; ``kp``/``kd`` may also be (P, n) per-pose gains:
    the fast path of :func:`flexrobot_ros.modal.linearize_batch`.

    The rigid-body terms come from pinocchio (``crba``, ``computeGeneralizedGravityDerivatives``) pose by pose;
    the assembly of eqs. 2.9-2.11 is vectorized.
    """
    q = pose_array(robot, poses)
    count, n = q.shape
    kp = gain_array(robot, robot.kp if kp is None else kp, count, "kp")
    kd = gain_array(robot, robot.kd if kd is None else kd, count, "kd")
    wrench, frame_id = check_wrench(robot, wrench, frame)
    model, data = robot.model, scratch_data(robot)
    mass = np.empty((count, n, n))
    k_g = np.empty((count, n, n))
    load = np.empty((count, n))
    for i in range(count):
        mass[i] = pin.crba(model, data, q[i])
        k_g[i] = pin.computeGeneralizedGravityDerivatives(model, data, q[i])
        load[i] = data.g  # the gravity torque g(q), computed by the derivative pass
        if wrench is not None:
            k_g[i] -= wrench_stiffness(robot, data, q[i], wrench, frame_id)
            load[i] -= wrench_torque(robot, data, q[i], wrench, frame_id)
    upper = np.triu(np.ones((n, n), dtype=bool))
    mass = np.where(upper, mass, np.swapaxes(mass, 1, 2))
    k, w = robot.stiffness, robot.transmission
    m_bar = np.zeros((count, 2 * n, 2 * n))
    m_bar[:, :n, :n] = mass
    m_bar[:, n:, n:] = np.diag(robot.motor_inertia)
    diagonal = np.arange(n)
    d_bar = np.zeros_like(m_bar)
    d_bar[:, diagonal, diagonal] = robot.link_damping
    d_bar[:, n + diagonal, n + diagonal] = robot.motor_damping + kd
    k_bar = np.zeros_like(m_bar)
    k_bar[:, :n, :n] = k_g
    k_bar[:, diagonal, diagonal] += k * w * w
    k_bar[:, diagonal, n + diagonal] = k_bar[:, n + diagonal, diagonal] = -k * w
    k_bar[:, n + diagonal, n + diagonal] = k + kp
    for name, matrix in (("M_bar", m_bar), ("K_bar", k_bar)):
        bad = ~np.all(np.isfinite(matrix.reshape(count, -1)), axis=1)
        if np.any(bad):
            raise ModalError(f"robot {robot.name}: {name} has non-finite entries at pose(s) "
                             f"{np.flatnonzero(bad)[:10].tolist()}")
    return LinearizedBatch(q=q, q_m=w * q + load / (k * w), M_bar=m_bar, D_bar=d_bar, K_bar=k_bar, K_G=k_g,
                           kp=np.array(kp), kd=np.array(kd))


def _former(name: str, evaluation: Callable[..., Any]) -> Callable[..., Any]:
    """The former ``linearize``/``linearize_batch`` of this module: ``evaluation`` for elastic joints on rigid links
    (the numbers they gave), a ModalError naming the entry for the other robots (whose extra elasticities, gear
    dampers, flexible links or rigid joints they dropped or failed on)."""
    @functools.wraps(evaluation)
    def former(robot: FlexibleRobot, *args: Any, **kwargs: Any) -> Any:
        if not elastic_joints_only(robot):
            raise ModalError(f"robot {robot.name}: {__name__}.{name} (deprecated) evaluates elastic joints on rigid "
                             f"links only; use flexrobot_ros.modal.{name}, which linearizes any robot")
        return evaluation(robot, *args, **kwargs)

    former.__name__ = former.__qualname__ = name
    return former


_FORMER = {"linearize": _former("linearize", linearize_elastic_joints),
           "linearize_batch": _former("linearize_batch", linearize_elastic_joints_batch)}


def __getattr__(name: str) -> Any:
    """The former names ``linearize`` and ``linearize_batch`` of this module, kept one release with a
    DeprecationWarning (:func:`_former`); the entries are :func:`flexrobot_ros.modal.linearize` and
    :func:`flexrobot_ros.modal.linearize_batch`."""
    if name in _FORMER:
        warnings.warn(f"{__name__}.{name} is deprecated and goes in the next release: use "
                      f"flexrobot_ros.modal.{name} (any robot)", DeprecationWarning, stacklevel=2)
        return _FORMER[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["check_pose", "frame_index", "LinearizedModel", "LinearizedBatch", "linearize_elastic_joints_batch",
           "pose_array", "gain_array", "motor_set_point", "linearize_elastic_joints", "cholesky_mass", "joint_vector",
           "check_wrench", "wrench_torque", "wrench_stiffness", "scratch_data"]
