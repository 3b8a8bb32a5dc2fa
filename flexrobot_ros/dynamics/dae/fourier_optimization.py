"""Continuous DAE optimization (seed 002, section 10.3, eqs. 27-29): the whole trajectory of q = [q_a, q_m] as one
polynomial + Fourier expansion, fitted to the DAE at N collocation times.

::

    q(t) = sum_{m=0..M} a_m t^m + sum_{r=1..R} [b_r sin(r w t) + c_r cos(r w t)],   w = 2 pi / (N h)    (27)

qd and qdd are analytic. At t_i = i h (i = 0..N-1) the residual Phi (eq. 28) is the link dynamics of eq. 1 (na
rows; the motor torque balance is left out) and the output constraint Gamma(q_a) - theta(t_i) (n rows, weighted by
``constraint_weight`` [N m/m], default the largest gear stiffness, so both are torques). mu = [a, b, c] (one vector
per coordinate) solves min ||Psi(mu)||^2 (eq. 29) by Levenberg-Marquardt (scipy) with CasADi's exact Jacobian, from
the least-squares fit of the rigid solution (q_m = W q_g, q_e = 0, section 10.4's suggested initial value). The
expansion is periodic in N h, so the torque may start before the motion and end after it. Sizes (M = 1, R = 20,
h = 5 ms, 0.3 s, moberg5): (M + 1 + 2R)(na + n) = 210 unknowns, N (na + n) = 305 equations, as in section 10.4.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np
import scipy.optimize

from flexrobot_ros.dynamics.dae.bdf_optimization import ProblemSize
from flexrobot_ros.dynamics.dae.inverse_dae import DaeError, InverseDae, newton


def basis(t: Any, degree: int, harmonics: int, period: float) -> list[np.ndarray]:
    """The basis of eq. 27 and its first two derivatives at times t: three (samples, degree + 1 + 2 harmonics)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    powers = np.arange(degree + 1)
    poly = [t[:, None] ** powers,
            np.where(powers > 0, powers * t[:, None] ** np.maximum(powers - 1, 0), 0.0),
            np.where(powers > 1, powers * (powers - 1) * t[:, None] ** np.maximum(powers - 2, 0), 0.0)]
    w = 2 * np.pi / period * np.arange(1, harmonics + 1)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    fourier = [np.hstack([s, c]), np.hstack([w * c, -w * s]), np.hstack([-w**2 * s, -w**2 * c])]
    return [np.hstack([p, f]) for p, f in zip(poly, fourier)]


@dataclass(frozen=True)
class FourierSolution:
    """The fitted expansion: ``coefficients`` (n_basis, na + n) of [q_a, q_m]; ``evaluate(t)`` gives q_a, q_m, their
    rates and accelerations and tau_m; ``residual_max`` the largest |Psi| at the collocation times."""

    dae: InverseDae
    coefficients: np.ndarray
    degree: int
    harmonics: int
    period: float
    residual_max: float
    message: str

    def evaluate(self, t: Any) -> dict[str, np.ndarray]:
        na, n = self.dae.model.na, self.dae.robot.n
        phi = basis(t, self.degree, self.harmonics, self.period)
        q, qd, qdd = (p @ self.coefficients for p in phi)
        tau = np.array([np.array(self.dae.model.motor_torque(q[i, :na], qd[i, :na], q[i, na:], qd[i, na:],
                                                             qdd[i, na:])).ravel() for i in range(len(q))])
        return {"q_a": q[:, :na], "q_m": q[:, na:], "v_a": qd[:, :na], "v_m": qd[:, na:], "a_a": qdd[:, :na],
                "a_m": qdd[:, na:], "tau_m": tau.reshape(len(q), n)}


def rigid_path(dae: InverseDae, t: np.ndarray, q_g_guess: Any) -> np.ndarray:
    """Actuated link positions (samples, n) with Gamma(q_g, q_e = 0) = theta(t) (Newton, continued along t)."""
    model, ext = dae.model, dae.model.ext
    q = cs.SX.sym("q", dae.robot.n)
    qa = cs.SX.zeros(model.na)
    qa[list(ext.actuated_index)] = q
    gamma = model.output(qa)
    fun = cs.Function("ik", [q], [gamma, cs.jacobian(gamma, q)])
    theta = dae.reference.evaluate(t, 0)[0]
    out, guess = [], np.asarray(q_g_guess, dtype=float)
    for target in theta:
        guess, _ = newton(lambda y: (np.array(fun(y)[0]).ravel() - target, np.array(fun(y)[1])), guess, 1e-13, 50)
        out.append(guess.copy())
    return np.array(out)


def solve_fourier_optimization(dae: InverseDae, points: int, h: float, degree: int = 1, harmonics: int = 20,
                               q_g_guess: Any = None, constraint_weight: float | None = None
                               ) -> tuple[FourierSolution, ProblemSize]:
    """Fit eq. 27 to the DAE at t_i = i h, i = 0..points-1 (module docstring)."""
    if q_g_guess is None:
        raise DaeError("q_g_guess: give the actuated link positions near the start (for the rigid initial fit)")
    model, ext, n = dae.model, dae.model.ext, dae.robot.n
    na, nc = model.na, model.na + n
    period = points * h
    t = h * np.arange(points)
    phi, dphi, ddphi = basis(t, degree, harmonics, period)
    nb = phi.shape[1]
    weight = float(np.max(dae.robot.stiffness)) if constraint_weight is None else float(constraint_weight)
    c, cd, cdd = (cs.SX.sym(name, nc) for name in ("c", "cd", "cdd"))
    target = cs.SX.sym("theta", n)
    phi_row = cs.vertcat(model.link_residual(c[:na], cd[:na], cdd[:na], c[na:], cd[na:]),
                         weight * (model.output(c[:na]) - target))
    point = cs.Function("phi", [c, cd, cdd, target],
                        [phi_row, cs.jacobian(phi_row, c), cs.jacobian(phi_row, cd), cs.jacobian(phi_row, cdd)])
    points_map = point.map(points)
    theta = dae.reference.evaluate(t, 0)[0].T

    def psi(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Psi (eq. 29, stacked per time) and its Jacobian by the chain rule through the basis."""
        coefficients = mu.reshape(nc, nb).T
        r, j0, j1, j2 = (np.array(a) for a in points_map(*(p.dot(coefficients).T for p in (phi, dphi, ddphi)),
                                                          theta))
        rows = phi_row.numel()
        blocks = [j.reshape(rows, points, nc) for j in (j0, j1, j2)]
        jac = sum(np.einsum("rpc,pb->prcb", block, basis_values)
                  for block, basis_values in zip(blocks, (phi, dphi, ddphi)))
        return r.T.ravel(), jac.reshape(points * rows, nc * nb)

    q_g = rigid_path(dae, t, q_g_guess)
    rigid = np.zeros((points, nc))
    rigid[:, list(ext.actuated_index)] = q_g
    rigid[:, na:] = dae.robot.transmission * q_g
    start, *_ = np.linalg.lstsq(phi, rigid, rcond=None)
    begin = time.perf_counter()
    result = scipy.optimize.least_squares(lambda m: psi(m)[0], start.T.ravel(), jac=lambda m: psi(m)[1],
                                          method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=2000)
    seconds = time.perf_counter() - begin
    values = psi(result.x)[0]
    solution = FourierSolution(dae=dae, coefficients=result.x.reshape(nc, nb).T, degree=degree, harmonics=harmonics,
                               period=period, residual_max=float(np.abs(values).max()), message=result.message)
    size = ProblemSize(unknowns=nb * nc, equations=values.size, paper_unknowns=210, paper_equations=305,
                       seconds=seconds)
    return solution, size
