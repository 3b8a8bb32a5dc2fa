"""Linearized dynamics of the composed elastic robot (:class:`~flexrobot_ros.flexible_links.elastic_robot.
ElasticRobot`) about a held pose: closed-loop (PD, or seed 004's decoupling law) and locked-joint modes, for every
robot (flexible links, rigid and elastic joints, extra elasticities).

Coordinates: the model's ``y = [q_a (na), eta (m), q_m (elastic joints)]``. About the static equilibrium y* at the
joint set point ``q_d`` (q_e and eta where their springs carry gravity, q_m where the joint springs carry the joint
rows: :meth:`ElasticRobot.static_equilibrium`)::

    M_bar = M(y*),   K_bar = d(h + f_el)/dy (y*, 0) + K_P,   D_bar = d(h + f_d)/dy_dot (y*, 0) + K_D

(exact derivatives of the model's own terms, CasADi, :meth:`ElasticRobot.linearize`). The PD law ``tau = K_P (q_m^d -
q_m) - K_D qd_m`` adds K_P, K_D on the motor row of an elastic joint and on the joint row of a rigid one. Coulomb
friction is left out (a linearization about rest has no Coulomb damping).

``locked_joints=True`` keeps only the non-actuated coordinates [q_e; eta] (the robot's joints and motors braked):
the structural modes a hammer test on a braked robot measures.

:func:`linearize_decoupled` is the robot held by seed 004's decoupling law instead (rigid joints, no extra
elasticities). The beams' static deflection eta* under gravity is ``static_equilibrium(q)[model.eta]``.

The result is :class:`~flexrobot_ros.modal.modes.ModalResult`; its ``linearized.q`` is q_d, ``linearized.q_m`` the
motor set points of the elastic joints.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.control.decoupling_gains import DEFAULT_GP, DEFAULT_GV, decoupling_gains
from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.linearization import LinearizedModel
from flexrobot_ros.modal.modes import ModalResult, modes_of


def _held_pose(model: ElasticRobot, q_d: Any) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """(q (n,), y* (size,), (M, D, K) of :meth:`ElasticRobot.linearize` at y*) of the robot at rest at ``q_d``."""
    robot = model.robot
    q = np.asarray(q_d, dtype=float)
    if q.shape != (model.n,) or not np.all(np.isfinite(q)):
        raise ModalError(f"robot {robot.name}: q: expected {model.n} finite values for joints "
                         f"{list(robot.joint_names)}, got {np.asarray(q_d).tolist()}")
    try:
        y = model.static_equilibrium(q)
    except ModelError as error:
        raise ModalError(str(error)) from None
    return q, y, model.linearize(y)


def linearize_elastic_robot(model: ElasticRobot, q_d: Any, kp: Any = None, kd: Any = None,
                            locked_joints: bool = False) -> LinearizedModel:
    """M_bar, D_bar, K_bar of ``model`` held at ``q_d`` (n,) [rad | m] (module docstring); ``kp``/``kd`` [N m/rad,
    N m s/rad] default to the robot's controller gains."""
    robot = model.robot
    q, y, (M, D, K) = _held_pose(model, q_d)
    if locked_joints:
        free = np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)
        if not len(free):
            raise ModalError(f"robot {robot.name}: --locked-joints needs flexible links or extra elasticities")
        rows = np.ix_(free, free)
        return LinearizedModel(q=q, q_m=np.zeros(0), M_bar=M[rows], D_bar=D[rows], K_bar=K[rows],
                               K_G=np.zeros((0, 0)))
    n = model.n
    kp = robot.kp if kp is None else np.broadcast_to(np.asarray(kp, dtype=float), (n,))
    kd = robot.kd if kd is None else np.broadcast_to(np.asarray(kd, dtype=float), (n,))
    driven = model.q_index.copy()
    driven[model.elastic_joints] = model.motor_index
    K_G = K[np.ix_(model.q_index, model.q_index)].copy()
    K[driven, driven] += kp
    D[driven, driven] += kd
    return LinearizedModel(q=q, q_m=y[model.motors], M_bar=M, D_bar=D, K_bar=K, K_G=K_G)


def linearize_decoupled(model: ElasticRobot, q_d: Any, gp: Any, gv: Any) -> LinearizedModel:
    """M_bar, D_bar, K_bar of the robot held at ``q_d`` (n,) by seed 004's decoupling law (eqs. 31-33, exact model):
    eqs. 35-36 linearized about the pose at rest, coordinates z = [e = q_r - q_d (n), q_f - eta* (m)]::

        e_ddot + G_v e_dot + G_p e = 0                                        (eq. 34)
        M_ff q_f_ddot + dh_f/dy_dot z_dot + dh_f/dy z - M_rf^T (G_p e + G_v e_dot) = 0      (eq. 36)

    (u = -G_p e - G_v e_dot in eq. 36; h_f the beams' rows of h + f_el + f_d: strain, modal damping, gravity)
    so ``M_bar = blockdiag(I, M_ff)`` (symmetric positive definite). The system is block triangular: its
    eigenvalues are the joint loop's (s^2 + G_v s + G_p = 0, per joint) and the beams' with every joint locked,
    which the mode shapes' q rows tell apart (zero on the beam modes). ``gp`` [1/s^2], ``gv`` [1/s]: n positive
    gains, one, or None for the defaults (:func:`~flexrobot_ros.control.decoupling_gains.decoupling_gains`).
    Every joint must be rigid (``rigid: true``; the law of seed 004 drives the joints directly) and the model
    without extra elasticities."""
    robot = model.robot
    elastic = [robot.joint_names[i] for i in model.elastic_joints]
    if elastic:
        raise ModalError(f"robot {robot.name}: decoupling control (seed 004) needs rigid joints; joint(s) {elastic} "
                         "are elastic")
    if model.ne:
        raise ModalError(f"robot {robot.name}: decoupling control (seed 004) needs a model without extra "
                         f"elasticities; it has {list(model.ext.elastic_names)}")
    n, size = model.n, model.size
    gp, gv = decoupling_gains(gp, n, DEFAULT_GP, "gp"), decoupling_gains(gv, n, DEFAULT_GV, "gv")
    q, _, (inertia, damping, stiffness) = _held_pose(model, q_d)
    beams = slice(n, size)
    coupling = inertia[:n, beams].T                                   # M_rf^T (m, n)
    M, D, K = np.zeros((size, size)), np.zeros((size, size)), np.zeros((size, size))
    M[:n, :n], M[beams, beams] = np.eye(n), inertia[beams, beams]
    D[:n, :n], K[:n, :n] = np.diag(gv), np.diag(gp)
    D[beams], K[beams] = damping[beams], stiffness[beams]
    D[beams, :n] -= coupling * gv
    K[beams, :n] -= coupling * gp
    return LinearizedModel(q=q, q_m=np.zeros(0), M_bar=M, D_bar=D, K_bar=K, K_G=stiffness[:n, :n])


def elastic_robot_coordinates(model: ElasticRobot) -> list[str]:
    """Labels of y in order: ``q.<joint>``, ``q_e.<name>`` (chain order), ``eta.<k>``, ``q_m.<elastic joint>``."""
    labels = [""] * model.size
    for index, joint in zip(model.q_index, model.robot.joint_names):
        labels[index] = f"q.{joint}"
    for index, name in zip(model.qe_index, model.ext.elastic_names):
        labels[index] = f"q_e.{name}"
    for k in range(model.m):
        labels[model.eta.start + k] = f"eta.{k}"
    for index, j in zip(model.motor_index, model.elastic_joints):
        labels[index] = f"q_m.{model.robot.joint_names[j]}"
    return labels


def elastic_robot_modes(model: ElasticRobot, q_d: Any, kp: Any = None, kd: Any = None,
                        locked_joints: bool = False, decoupling: tuple[Any, Any] | None = None) -> ModalResult:
    """Modes (frequencies ascending [Hz], damping ratios as fractions) of :func:`linearize_elastic_robot`: held by
    the PD law (``kp``, ``kd``), with every joint locked, or, ``decoupling=(G_p, G_v)``, by seed 004's decoupling
    law (:func:`linearize_decoupled`)."""
    if decoupling is not None:
        return modes_of(linearize_decoupled(model, q_d, *decoupling))
    return modes_of(linearize_elastic_robot(model, q_d, kp=kp, kd=kd, locked_joints=locked_joints))


__all__ = ["elastic_robot_coordinates", "elastic_robot_modes", "linearize_decoupled", "linearize_elastic_robot"]
