"""Initial-value solution of the inverse-dynamics DAE by a constant-step, constant-order k-step BDF (seed 002,
sections 8.1 and 9).

At every step t_i = t_0 + i h the BDF derivative x'_i = (alpha_0 x_i + sum_{l>=1} alpha_l x_{i-l}) / h (eq. 20) is
inserted in F(t_i, x_i, x'_i) = 0 (eq. 21), solved for x_i by Newton with the Jacobian F_x + (alpha_0 / h) F_x'
(eq. 22). The k past values before t_0 are the consistent rest state (section 9.1). The motor torque follows from the
motor equation with the BDF motor acceleration (the BDF derivative of v_m, itself the BDF derivative of q_m).

Accuracy of tau_m: O(h^k) where the solution is smooth; across the start and end of a rest-to-rest reference with
r continuous derivatives (C^r, r = 5 for the paper's degree-11 p) the solution is only C^(r+2-nu) in q_m
(nu = 3 with transmission damping, 4 without), and the k-step stencils that straddle those instants differentiate
q_m twice across the jump of its next derivative: there tau_m is O(h^(r+1-nu)). ``DaeSolution.torque_order`` is
min(k, r + 1 - nu): 3 for the paper's C^5 line on the Table 1 model, 2 on a flexible-joint model without damping,
k for a C^(k+nu-1) reference.

The solver stops when Newton fails or the elastic coordinates leave ``elastic_bound`` (the result says where and
why, ``diverged``, instead of raising), and tells the two causes apart by the zeros of the model linearized at the
state where it stopped: with unstable zero dynamics (non-minimum phase) the solution grows without bound; on a
minimum-phase model it is bounded and the reference asks more deflection than the bound allows (a line passing near
the base of moberg5 in 0.3 s bends the non-actuated joint by 0.5-0.9 rad, with k = 3 and k = 6 solutions agreeing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.dynamics.dae.bdf import bdf_coefficients, bdf_extrapolation
from flexrobot_ros.dynamics.dae.inverse_dae import SYSTEMS, DaeError, InverseDae, newton
from flexrobot_ros.dynamics.dae.zero_dynamics import describe_zeros, zero_dynamics

#: Default bound on the elastic coordinates |q_e| [rad | m] beyond which the solve stops.
ELASTIC_BOUND = 0.5


@dataclass(frozen=True)
class DaeSolution:
    """A solved trajectory: t (N + 1,) [s]; x (N + 1, size) the DAE unknowns (``dae.layout``); q_a, q_m, v_a, v_m
    views; tau_m (N + 1, n) [N m]; method and its settings; newton_iterations (N,); condition (N,) the 2-norm
    condition numbers of the Newton matrices; ``diverged`` with ``message`` when the solve stopped before its end
    (Newton failed, or the elastic coordinates left the bound: unbounded or only too large; module docstring)."""

    t: np.ndarray
    x: np.ndarray
    tau_m: np.ndarray
    dae: InverseDae
    method: str
    k: int
    h: float
    scaled: bool
    newton_iterations: np.ndarray
    condition: np.ndarray
    diverged: bool = False
    message: str = ""
    xdot: np.ndarray | None = None

    @property
    def a_m(self) -> np.ndarray:
        """Motor accelerations (N + 1, n) [rad/s^2]: the BDF derivative of v_m, the one tau_m uses (zero at rest)."""
        if self.xdot is None:
            raise DaeError(f"{self.method}: no BDF derivatives recorded")
        return self.xdot[:, self.dae.layout.v_m]

    @property
    def torque_order(self) -> int:
        """Convergence order of tau_m in h (module docstring): min(k, r + 1 - nu) for a C^r reference and a DAE of
        structural index nu."""
        return max(min(self.k, int(self.dae.reference.continuity) + 1 - self.dae.index), 0)

    @property
    def q_a(self) -> np.ndarray:
        return self.x[:, self.dae.layout.q_a]

    @property
    def q_m(self) -> np.ndarray:
        return self.x[:, self.dae.layout.q_m]

    @property
    def v_a(self) -> np.ndarray:
        return self.x[:, self.dae.layout.v_a]

    @property
    def v_m(self) -> np.ndarray:
        return self.x[:, self.dae.layout.v_m]

    @property
    def q_g(self) -> np.ndarray:
        return self.q_a[:, self.dae.model.ext.actuated_index]

    @property
    def q_e(self) -> np.ndarray:
        return self.q_a[:, self.dae.model.ext.elastic_index]

    def output_error(self) -> np.ndarray:
        """|Gamma(q_a(t_i)) - theta(t_i)| (N + 1,) [m | rad]: how well the solution satisfies eq. 17f."""
        theta = self.dae.reference.evaluate(self.t, 0)[0]
        gamma = np.array([np.array(self.dae.gamma(q)).ravel() for q in self.q_a])
        return np.linalg.norm(gamma - theta, axis=1)


def solve_bdf(dae: InverseDae, t_end: float, h: float, k: int = 3, scaled: bool = False, t0: float = 0.0,
              x0: Any = None, q_g_guess: Any = None, tol: float = 1e-10, condition: bool = False,
              elastic_bound: float = ELASTIC_BOUND) -> DaeSolution:
    """Solve ``dae`` from rest at ``t0`` to ``t_end`` [s] with the k-step BDF of step ``h`` [s] (see the module
    docstring). ``x0`` the consistent initial state (default :meth:`InverseDae.rest_state` from ``q_g_guess``);
    ``condition=True`` records the Newton matrix condition numbers (costs an SVD per step); the solve stops when an
    elastic coordinate exceeds ``elastic_bound`` [rad | m]."""
    alpha = bdf_coefficients(k)
    if not (np.isfinite(h) and h > 0):
        raise DaeError(f"step h = {h!r} s: expected > 0")
    if not (np.isfinite(elastic_bound) and elastic_bound > 0):
        raise DaeError(f"elastic_bound = {elastic_bound!r}: expected a finite bound > 0 [rad | m]")
    steps = int(round((t_end - t0) / h))
    if steps < 1:
        raise DaeError(f"t_end = {t_end} s gives no BDF step of h = {h} s from t0 = {t0} s")
    x_start = dae.rest_state(t0, q_g_guess) if x0 is None else np.asarray(x0, dtype=float)
    scale = dae.scales(h, scaled)
    c = alpha[0] / h
    predictor = bdf_extrapolation(k)
    layout = dae.layout
    elastic = [layout.q_a.start + int(i) for i in dae.model.ext.elastic_index]
    t = t0 + h * np.arange(steps + 1)
    x = np.empty((steps + 1, layout.size))
    x[0] = x_start
    history = [x_start] * k  # x_{i-1} .. x_{i-k}
    iterations = np.zeros(steps, dtype=int)
    conditions = np.full(steps, np.nan)
    xdots = np.zeros((steps + 1, layout.size))
    diverged, message, last = False, "", steps
    for i in range(1, steps + 1):
        ref = dae.reference_vector(t[i])
        past = sum(a * xp for a, xp in zip(alpha[1:], history))

        def system(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            r, jac = dae.newton_system(y, (alpha[0] * y + past) / h, ref, scale, c)
            return np.array(r).ravel(), np.array(jac)

        guess = sum(w * xp for w, xp in zip(predictor, history))
        try:
            xi, iterations[i - 1] = newton(system, guess, tol)
        except DaeError as error:
            diverged, message, last = True, f"Newton failed at t = {t[i]:.6g} s: {error}", i - 1
            break
        x[i], xdots[i] = xi, (alpha[0] * xi + past) / h
        if elastic and np.abs(xi[elastic]).max() > elastic_bound:
            diverged, last = True, i
            message = (f"the elastic coordinates reached {np.abs(xi[elastic]).max():.3g} (> elastic_bound "
                       f"{elastic_bound:g}) at t = {t[i]:.6g} s: {_why_unbounded(dae, xi, xdots[i])}")
            break
        if condition:
            conditions[i - 1] = np.linalg.cond(system(xi)[1])
        history = [xi] + history[:-1]
    x, t, xdots = x[:last + 1], t[:last + 1], xdots[:last + 1]
    tau = np.array([np.array(dae.torque(xi, xd)).ravel() for xi, xd in zip(x, xdots)])
    method = f"bdf{k} on {SYSTEMS[dae.system]}{', scaled' if scaled else ''}"
    return DaeSolution(t=t, x=x, tau_m=tau, dae=dae, method=method, k=k, h=h, scaled=scaled,
                       newton_iterations=iterations[:last], condition=conditions[:last], diverged=diverged,
                       message=message, xdot=xdots)


def _why_unbounded(dae: InverseDae, x: np.ndarray, xdot: np.ndarray) -> str:
    """Why the solution left the elastic bound at state ``x``: from the zeros of the model linearized there."""
    analysis = zero_dynamics(dae.robot, dae.model).analyze(dae.layout.linear_state(x),
                                                           np.array(dae.torque(x, xdot)).ravel())
    description = describe_zeros([analysis], "at this state")
    if not analysis.minimum_phase:
        return (f"the initial-value solution is unbounded (unstable zero dynamics, {description}; use the "
                "optimization methods)")
    return (f"the model linearized here is {description}, so this is the deflection the reference asks for, not an "
            "unstable inverse: slow the reference down or raise elastic_bound")
