"""Linearized closed loop of an extended flexible-joint robot about a set point, for the modal analysis (seed 000
section 2.3.1 extended by the non-actuated spring-dampers of seed 002 eq. 1c).

State ``z = [q (n); q_m (n); q_e (ne)]`` (the simulator's position blocks). At the link set point q^d the elastic
coordinates settle where their springs carry the load, ``K_e q_e + g_e(q_a) = 0`` (Newton), and the motors where
the gear springs do, ``q_m^d = W q^d + (K W)^-1 g_g(q_a)`` (eq. 2.3). With ``P`` the map of q_a into z::

    M_bar = P M(q_a) P^T + blockdiag(0, B, 0)
    D_bar = P (S_g^T (D + W D_g W) S_g + S_e^T D_e S_e) P^T + motor block D_m + D_g + K_D, coupling -W D_g
    K_bar = P (dg/dq_a + S_g^T W K W S_g + S_e^T K_e S_e) P^T + motor block K + K_P, coupling -K W

With ne = 0 and D_g = 0 these are eqs. 2.9-2.11 (:func:`flexrobot_ros.modal.linearization.linearize`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.elastic_equilibrium import elastic_equilibrium
from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.modal.eigenproblem import solve_modes
from flexrobot_ros.modal.linearization import check_pose, joint_vector
from flexrobot_ros.model.extended_model import extended_model


@dataclass(frozen=True)
class ExtendedLinearization:
    """M_bar, D_bar, K_bar (2n + ne square) in the state order ``coordinates`` = joint names, 'motor.<joint>',
    elastic names; ``q``, ``q_m``, ``q_e`` the equilibrium [rad | m]."""

    q: np.ndarray
    q_m: np.ndarray
    q_e: np.ndarray
    M_bar: np.ndarray
    D_bar: np.ndarray
    K_bar: np.ndarray
    coordinates: tuple[str, ...]


@dataclass(frozen=True)
class ExtendedModes:
    """Closed-loop modes (conventions of :mod:`flexrobot_ros.modal.modes`): frequencies [Hz], damping ratios,
    eigenvalues, mode shapes (2n + ne, modes) in ``linearized.coordinates`` order."""

    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    eigenvalues: np.ndarray
    mode_shapes: np.ndarray
    linearized: ExtendedLinearization

    @property
    def n_modes(self) -> int:
        return int(self.frequencies_hz.size)

    @property
    def verdict(self) -> str:
        """'stable' | 'unstable' | 'marginal' (the rule of :func:`flexrobot_ros.modal.modes.stability_verdict`)."""
        from flexrobot_ros.modal.modes import stability_verdict

        return stability_verdict(self.eigenvalues)[0]

    @property
    def stable(self) -> bool:
        return self.verdict == "stable"


def linearize_extended(robot: Any, q_d: Any, kp: Any = None, kd: Any = None) -> ExtendedLinearization:
    """The linearized closed loop of the module docstring at link set point ``q_d`` with motor PD gains
    ``kp``, ``kd`` (default the robot's)."""
    q = check_pose(robot, q_d)
    kp = joint_vector(robot, robot.kp if kp is None else kp, "kp")
    kd = joint_vector(robot, robot.kd if kd is None else kd, "kd")
    ext = extended_model(robot)
    model, data = ext.model, ext.create_data()
    n, ne, na = robot.n, ext.ne, ext.na
    act, el = list(ext.actuated_index), list(ext.elastic_index)
    try:
        q_a = ext.full_q(q, elastic_equilibrium(ext, q))
    except ModelError as error:
        raise ModalError(f"robot {robot.name}: {error}") from None
    dg = np.array(pin.computeGeneralizedGravityDerivatives(model, data, q_a))
    gravity = data.g.copy()
    mass = np.array(pin.crba(model, data, q_a))
    mass = np.triu(mass) + np.triu(mass, 1).T
    k, w, dgain = robot.stiffness, robot.transmission, ext.spring_damping
    q_m = w * q + gravity[act] / (k * w)
    size = 2 * n + ne
    place = np.empty(na, dtype=int)
    place[act] = np.arange(n)
    place[el] = 2 * n + np.arange(ne)
    motor = np.arange(n, 2 * n)
    m_bar, d_bar, k_bar = (np.zeros((size, size)) for _ in range(3))
    m_bar[np.ix_(place, place)] = mass
    m_bar[motor, motor] = robot.motor_inertia
    k_bar[np.ix_(place, place)] = dg
    link, elastic = place[act], place[el]
    k_bar[link, link] += k * w * w
    k_bar[elastic, elastic] += ext.elastic_stiffness
    k_bar[link, motor] = k_bar[motor, link] = -k * w
    k_bar[motor, motor] = k + kp
    d_bar[link, link] = robot.link_damping + w * dgain * w
    d_bar[elastic, elastic] = ext.elastic_damping
    d_bar[link, motor] = d_bar[motor, link] = -w * dgain
    d_bar[motor, motor] = robot.motor_damping + dgain + kd
    names = tuple(robot.joint_names) + tuple(f"motor.{j}" for j in robot.joint_names) + ext.elastic_names
    return ExtendedLinearization(q=q, q_m=q_m, q_e=q_a[el], M_bar=m_bar, D_bar=d_bar, K_bar=k_bar, coordinates=names)


def extended_modal_analysis(robot: Any, q_d: Any, kp: Any = None, kd: Any = None) -> ExtendedModes:
    """Modes of :func:`linearize_extended` (one LAPACK eigenproblem, :func:`flexrobot_ros.modal.eigenproblem.
    solve_modes`)."""
    lin = linearize_extended(robot, q_d, kp, kd)
    arrays = solve_modes(lin.M_bar[None], lin.D_bar[None], lin.K_bar[None], shapes=True)
    count = int(arrays.mode_count[0])
    return ExtendedModes(frequencies_hz=arrays.frequencies_hz[0, :count],
                         damping_ratios=arrays.damping_ratios[0, :count],
                         eigenvalues=arrays.eigenvalues[0, :count], mode_shapes=arrays.mode_shapes[0, :, :count],
                         linearized=lin)


def extended_analysis(robot: Any) -> Any:
    """:func:`extended_modal_analysis` for a robot with an extended model (extra elastic DOFs or gear dampers D_g),
    None otherwise (the caller keeps the flexible-joint :func:`~flexrobot_ros.modal.modes.modal_analysis`)."""
    return extended_modal_analysis if getattr(robot, "extended", None) is not None else None
