"""Zeros of the tool output of the general model linearized at rest along a tool path (seed 002, section 10, on
:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`).

At a pose q of the undeformed robot on the path, the model rests in its static equilibrium y* (q_e, eta carrying
gravity, :meth:`ElasticRobot.static_equilibrium`) with the holding torques u*; the state z = [y, y'] linearizes to::

    dz = [[0, I], [da/dy, da/dy']] z + [[0], [da/du]] du,        dGamma = [dGamma/dy, 0] z

(exact derivatives: :meth:`~flexrobot_ros.flexible_links.elastic_robot_functions.ElasticRobotFunctions.
acceleration_jacobian`, Coulomb friction off as in every linearization about rest), and the invariant zeros of
(A, B, C) are :func:`~flexrobot_ros.dynamics.dae.zero_dynamics.invariant_zeros`'. A zero in the right half-plane
(the normal case for a flexible link's tip) makes the zero dynamics unstable: the inverse is non-causal and needs
the whole-trajectory optimization with pre-actuation.
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.dynamics.dae.elastic_robot_dae import ElasticRobotDae
from flexrobot_ros.dynamics.dae.zero_dynamics import ZeroAnalysis, invariant_zeros


def tool_zeros(dae: ElasticRobotDae, q: np.ndarray) -> ZeroAnalysis:
    """Zeros and poles [rad/s] of the tool output linearized at rest at the undeformed pose ``q`` (n,) [rad | m]."""
    model = dae.model
    s = model.size
    y = model.static_equilibrium(np.asarray(q, dtype=float))
    u = model.holding_torque(y)
    zero = np.zeros(s)
    _, a_y, a_v, a_u = model.functions.acceleration_jacobian(y, zero, u, zero, 0.0)
    c = np.array(dae.output_jacobian(y))
    A = np.block([[np.zeros((s, s)), np.eye(s)], [a_y, a_v]])
    B = np.vstack([np.zeros((s, model.n)), a_u])
    C = np.hstack([c, np.zeros((model.n, s))])
    return invariant_zeros(A, B, C)


def path_tool_zeros(dae: ElasticRobotDae, q_path: np.ndarray) -> list[ZeroAnalysis]:
    """:func:`tool_zeros` at each pose of ``q_path`` (samples, n)."""
    return [tool_zeros(dae, q) for q in np.asarray(q_path, dtype=float)]


__all__ = ["path_tool_zeros", "tool_zeros"]
