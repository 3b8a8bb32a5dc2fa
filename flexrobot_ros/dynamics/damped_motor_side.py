"""Motor side of elastic joints whose transmission has a damper, along a prescribed link motion (seed 002 eqs. 1b,
1d; the gear damping ``spring_damping`` D_g of the YAML): motor references and torques from the link side.

Model (per joint, motor side of the gear, the terms of :class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`
and of the extended flexible-joint model)::

    link:   L := tau + tau_f(qd) = W (K delta + D_g delta'),     delta = q_m - W q   (motor deflection)
    motor:  tau_m = B qdd_m + tau_fm(qd_m) + K delta + D_g delta' = B qdd_m + tau_fm(qd_m) + W^-1 L

with the link load L and its first two time derivatives from :func:`.flexible_joint.link_load` (thesis eqs.
4.7-4.10's notation: tau the link-side torque of the motion, tau_f = D qd + D_c tanh(qd / v_c)). With D_g > 0 the
motor deflection is not algebraic in L (as it is in eq. 4.7, D_g = 0) but the stable first-order equation

    delta' = -a delta + g(t),      a = K / D_g [1/s],      g = L / (W D_g) [rad/s | m/s]

so q_m follows the link motion with the lag D_g / K. It is integrated **exactly** between the samples: g between
two samples is the quintic Hermite interpolant of g, g', g'' (scipy ``BPoly.from_derivatives``, exact at the
samples), and

    delta(t + s) = exp(-a s) delta(t) + integral_0^s exp(-a (s - u)) g(t + u) du

over sub-steps s with a s <= 1 (Gauss-Legendre, 8 points: exact to round-off for an exponential times a quintic on
such a step), then ``delta' = g - a delta`` and ``delta'' = g' - a delta'`` at the samples. The start is on the
slow manifold of the equation, ``delta(t0) = (g - g'/a + g''/a^2) / a`` at t0 (the deflection the damper settles to
along the motion; at rest it is the static ``L / (W K)``). Joints with D_g = 0 take eq. 4.7's algebraic delta = L /
(W K), delta' = L' / (W K), delta'' = L'' / (W K).

Units: q_m [rad | m], qd_m per s, qdd_m per s^2, tau_m [N·m | N], D_g [N·m·s/rad | N·s/m], arrays (samples, n).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.interpolate import BPoly

from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, MotorSide, link_load, motor_torque

#: Gauss-Legendre points per sub-step of the motor-deflection integral.
POINTS = 8


def damped_motor_side(params: JointFlexibility, spring_damping: Any, t: np.ndarray, q: np.ndarray, qd: np.ndarray,
                      qdd: np.ndarray, q3: np.ndarray, tau: np.ndarray, dtau: np.ndarray,
                      ddtau: np.ndarray) -> MotorSide:
    """q_m, qd_m, qdd_m, tau_m (samples, n) of the module docstring at the sample times ``t`` (samples,) [s] from
    the link samples q .. q3 (samples, n) and the link torques tau, dtau, ddtau (samples, n); ``spring_damping``
    (n,) the transmissions' D_g [N·m·s/rad | N·s/m] (0: eq. 4.7's algebraic motor side)."""
    w, k = params.transmission, params.stiffness
    damping = np.asarray(spring_damping, dtype=float)
    load = link_load(params, qd, qdd, q3, tau, dtau, ddtau)
    compliance = 1.0 / (w * k)
    delta = [compliance * value for value in load]  # delta, delta', delta'' of the joints without a damper (eq. 4.7)
    damped = np.flatnonzero(damping > 0.0)
    if damped.size:
        a = k[damped] / damping[damped]
        g = [value[:, damped] / (w[damped] * damping[damped]) for value in load]
        x = _deflection(t, a, *g)
        x_dot = g[0] - a * x
        x_ddot = g[1] - a * x_dot
        for column, value in zip(delta, (x, x_dot, x_ddot)):
            column[:, damped] = value
    q_m, qd_m, qdd_m = w * q + delta[0], w * qd + delta[1], w * qdd + delta[2]
    return MotorSide(q_m=q_m, qd_m=qd_m, qdd_m=qdd_m, tau_m=motor_torque(params, qd_m, qdd_m, load[0]))


def _deflection(t: np.ndarray, a: np.ndarray, g: np.ndarray, dg: np.ndarray, ddg: np.ndarray) -> np.ndarray:
    """delta (samples, joints) of delta' = -a delta + g(t) from the slow-manifold start (module docstring)."""
    out = np.empty_like(g)
    out[0] = (g[0] - dg[0] / a + ddg[0] / (a * a)) / a
    if len(t) < 2:
        return out
    forcing = BPoly.from_derivatives(t, np.stack([g, dg, ddg], axis=1))
    steps = np.diff(t)
    substeps = max(1, int(np.ceil(a.max() * steps.max())))
    nodes, weights = np.polynomial.legendre.leggauss(POINTS)
    nodes, weights = 0.5 * (nodes + 1.0), 0.5 * weights  # on [0, 1]
    h = steps / substeps  # (intervals,) sub-step length [s]
    # u (intervals, substeps, POINTS): times of the quadrature points
    starts = t[:-1, None] + h[:, None] * np.arange(substeps)[None, :]
    u = starts[:, :, None] + h[:, None, None] * nodes[None, None, :]
    values = forcing(u.ravel()).reshape(u.shape + (len(a),))  # g at the points (intervals, substeps, POINTS, joints)
    decay = np.exp(-a[None, :] * h[:, None])  # (intervals, joints) over one sub-step
    kernel = np.exp(-a[None, None, :] * (h[:, None, None] * (1.0 - nodes)[None, :, None]))  # (intervals, POINTS, j)
    increments = h[:, None, None] * np.einsum("p,ipj,isjp->isj", weights, kernel,
                                              values.transpose(0, 1, 3, 2))  # (intervals, substeps, joints)
    powers = decay[:, None, :] ** np.arange(substeps - 1, -1, -1)[None, :, None]  # decay^(substeps-1-s)
    interval_decay, interval_increment = decay ** substeps, np.einsum("isj,isj->ij", powers, increments)
    for i in range(len(steps)):
        out[i + 1] = interval_decay[i] * out[i] + interval_increment[i]
    return out


__all__ = ["POINTS", "damped_motor_side"]
