"""Linearized dynamics of the composed elastic robot (:class:`~flexrobot_ros.flexible_links.elastic_robot.
ElasticRobot`) about a held pose: closed-loop (PD) and locked-joint modes.

Coordinates: the model's ``y = [q_a (na), eta (m), q_m (elastic joints)]``. About the static equilibrium y* at the
joint set point ``q_d`` (q_e and eta where their springs carry gravity, q_m where the joint springs carry the joint
rows: :meth:`ElasticRobot.static_equilibrium`)::

    M_bar = M(y*),   K_bar = d(h + f_el)/dy (y*, 0) + K_P,   D_bar = d(h + f_d)/dy_dot (y*, 0) + K_D

(exact derivatives of the model's own terms, CasADi, :meth:`ElasticRobot.linearize`). The PD law ``tau = K_P (q_m^d -
q_m) - K_D qd_m`` adds K_P, K_D on the motor row of an elastic joint and on the joint row of a rigid one. Coulomb
friction is left out (a linearization about rest has no Coulomb damping).

``locked_joints=True`` keeps only the non-actuated coordinates [q_e; eta] (the robot's joints and motors braked):
the structural modes a hammer test on a braked robot measures.

The result is :class:`~flexrobot_ros.modal.modes.ModalResult`; its ``linearized.q`` is q_d, ``linearized.q_m`` the
motor set points of the elastic joints.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.linearization import LinearizedModel
from flexrobot_ros.modal.modes import ModalResult, modes_of


def linearize_elastic_robot(model: ElasticRobot, q_d: Any, kp: Any = None, kd: Any = None,
                            locked_joints: bool = False) -> LinearizedModel:
    """M_bar, D_bar, K_bar of ``model`` held at ``q_d`` (n,) [rad | m] (module docstring); ``kp``/``kd`` [N m/rad,
    N m s/rad] default to the robot's controller gains."""
    robot = model.robot
    q = np.asarray(q_d, dtype=float)
    if q.shape != (model.n,) or not np.all(np.isfinite(q)):
        raise ModalError(f"robot {robot.name}: q: expected {model.n} finite values for joints "
                         f"{list(robot.joint_names)}, got {np.asarray(q_d).tolist()}")
    try:
        y = model.static_equilibrium(q)
    except ModelError as error:
        raise ModalError(str(error)) from None
    M, D, K = model.linearize(y)
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
                        locked_joints: bool = False) -> ModalResult:
    """Modes (frequencies ascending [Hz], damping ratios as fractions) of :func:`linearize_elastic_robot`."""
    return modes_of(linearize_elastic_robot(model, q_d, kp=kp, kd=kd, locked_joints=locked_joints))


__all__ = ["elastic_robot_coordinates", "elastic_robot_modes", "linearize_elastic_robot"]
