"""Initial-value solution of the general model's tool-space DAE by a constant-step k-step BDF (seed 002, sections
8.1 and 9, on :class:`~flexrobot_ros.dynamics.dae.elastic_robot_dae.ElasticRobotDae`): the method when the tool's
zero dynamics are stable (minimum phase).

At t_i = i h the BDF derivatives [y', v']_i = (alpha_0 [y, v]_i + sum_{l>=1} alpha_l [y, v]_{i-l}) / h (eq. 20) go
into F(x_i, [y', v']_i, theta(t_i)) = 0, solved for x_i = [y, v, u]_i by Newton with the matrix dF/dx + (alpha_0 / h)
dF/d[y', v'] (eq. 22), from the consistent rest state at t = 0 (section 9.1, its k past values equal). The solve
stops (``diverged``) when Newton fails or the elastic coordinates [q_e, eta] leave ``elastic_bound``: on a
non-minimum-phase output the causal solution grows without bound.
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.dynamics.dae.bdf import bdf_coefficients, bdf_extrapolation
from flexrobot_ros.dynamics.dae.bdf_inverse import ELASTIC_BOUND
from flexrobot_ros.dynamics.dae.elastic_robot_dae import ElasticRobotDae, ElasticRobotSolution
from flexrobot_ros.dynamics.dae.inverse_dae import DaeError, newton


def solve_elastic_robot_bdf(dae: ElasticRobotDae, steps: int, h: float, k: int = 3, q_guess: np.ndarray | None = None,
                            elastic_bound: float = ELASTIC_BOUND) -> ElasticRobotSolution:
    """``steps`` BDF steps of ``h`` [s] and order ``k`` from rest at t = 0 (module docstring); ``q_guess`` the joint
    positions the inverse kinematics of the start starts from; ``elastic_bound`` [rad | m | modal units]."""
    if not (np.isfinite(h) and h > 0) or steps < 1:
        raise DaeError(f"step h = {h!r} s and {steps} steps: expected h > 0 and at least one step")
    alpha, predictor = bdf_coefficients(k), bdf_extrapolation(k)
    s = dae.size
    model = dae.model
    elastic = np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)
    t = h * np.arange(steps + 1)
    theta = dae.theta(t)
    x = np.zeros((steps + 1, dae.unknowns))
    rates = np.zeros((steps + 1, 2 * s))
    x[0] = dae.rest_state(0.0, dae.rigid_path(t[:1], q_guess)[0])
    history = [x[0]] * k
    diverged, message, last = False, f"{steps} steps", steps
    for i in range(1, steps + 1):
        past = sum(a * xp[:2 * s] for a, xp in zip(alpha[1:], history))

        def system(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            r, jac = dae.newton_system(z, (alpha[0] * z[:2 * s] + past) / h, theta[i], h, alpha[0] / h)
            return np.array(r).ravel(), np.array(jac)

        try:
            x[i], _ = newton(system, sum(w * xp for w, xp in zip(predictor, history)), 1e-10)
        except DaeError as error:
            diverged, message, last = True, f"Newton failed at t = {t[i]:.6g} s: {error}", i - 1
            break
        rates[i] = (alpha[0] * x[i, :2 * s] + past) / h
        if elastic.size and np.abs(x[i, elastic]).max() > elastic_bound:
            diverged, last = True, i
            message = (f"the elastic coordinates reached {np.abs(x[i, elastic]).max():.3g} (> elastic_bound "
                       f"{elastic_bound:g}) at t = {t[i]:.6g} s: the causal inverse is unbounded (unstable zero "
                       "dynamics); use the optimization")
            break
        history = [x[i]] + history[:-1]
    x, rates, t = x[:last + 1], rates[:last + 1], t[:last + 1]
    return ElasticRobotSolution(t=t, y=x[:, :s], v=x[:, s:2 * s], a=rates[:, s:], u=x[:, 2 * s:], dae=dae,
                                method=f"bdf{k} initial-value solve (h = {h:g} s)", message=message,
                                diverged=diverged)


__all__ = ["solve_elastic_robot_bdf"]
