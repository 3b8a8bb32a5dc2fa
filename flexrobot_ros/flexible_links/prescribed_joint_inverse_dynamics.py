"""Inverse dynamics of a flexible-link chain along a prescribed joint motion: the joint forces that make the joints
follow q(t), with the link deformations that motion excites.

Equations of motion of the chain (coordinates ``y = [q (n), eta (m)]``, :mod:`.flexible_chain`; the Lagrangian of
:mod:`.lagrangian`)::

    R(y, y', y'') := I(y) y'' + h(y, y') = [tau (n); 0 (m)]

h holds Coriolis and centrifugal forces, gravity, the beams' strain K eta and modal damping D eta'. With q(t)
prescribed, the lower (elastic) rows are the deformation dynamics

    I_ee eta'' + D eta' + K eta = -I_eq q'' - (the rest of h_e)(q, q', eta, eta')

which are stable (the beams clamped on joints that move as told); they are integrated by scipy's ``solve_ivp``
(LSODA: Adams steps while the motion sets the step, BDF when finite-element beams' kHz modes make the equations
stiff; 2-10x faster than Radau on the shipped arms for the same result) from the beams **at rest in their static deflection at
the start pose**: eta(t0) solves ``h_e(q(t0), 0, eta, 0) = 0`` (K eta against gravity; zero without gravity) and
eta'(t0) = 0. The joint forces are the upper rows, ``tau = R_q``. Their time derivatives (for the motor side of elastic
joints, thesis eqs. 4.7-4.10) follow exactly from the time derivatives of R along the motion, formed by CasADi's
forward differentiation (``jtimes``) of the Lagrangian::

    R1 = dR/dt = dR/dy y' + dR/dy' y'' + I y'''          R2 = dR1/dt = ... + I y''''

whose elastic rows vanish too: ``I_ee eta''' = -R1_e(eta''' = 0)`` and ``I_ee eta'''' = -R2_e(eta'''' = 0)``, then
``dtau = R1_q``, ``ddtau = R2_q``. The joint trajectory between the samples is the quintic Hermite interpolant of
the samples (q, q', q'' for q; q', q'', q''' for q'; q'', q''', q'''' for q''; scipy ``BPoly.from_derivatives``;
exact at the samples).

Units: joint forces tau [N m | N] (revolute | prismatic), their derivatives per s and s^2; eta as the beams'
modal or nodal coordinates of :mod:`.beam_link`.
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import BPoly
from scipy.optimize import root

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.compiled_dynamics import compiled_function, quadrature_points
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

#: solve_ivp tolerances of the deformation integration (relative; absolute on eta and eta').
RTOL, ATOL = 1e-9, 1e-12


@dataclass(frozen=True)
class PrescribedJointMotion:
    """The chain along a prescribed joint motion, arrays (samples, ...): ``tau``, ``dtau``, ``ddtau`` (samples, n)
    joint forces [N m | N] and their time derivatives; ``eta``, ``eta_dot``, ``eta_ddot`` (samples, m) the elastic
    coordinates and their rates; ``evaluations`` the integrator's evaluations of the deformation dynamics."""

    tau: np.ndarray
    dtau: np.ndarray
    ddtau: np.ndarray
    eta: np.ndarray
    eta_dot: np.ndarray
    eta_ddot: np.ndarray
    evaluations: int


class PrescribedJointInverseDynamics:
    """The CasADi functions of one chain (built once: a few seconds, plus compiling the deformation dynamics to C
    on first use, cached like the compiled plant); call it with sampled joint trajectories."""

    def __init__(self, chain: FlexibleLinkChain):
        reference = lagrangian_dynamics(chain, quadrature_points(chain))
        if reference.roots:
            raise ModelError("prescribed-joint inverse dynamics: a sliding link with `roots: integrated` is not "
                             "supported; use `roots: explicit` (the same dynamics)")
        self.chain = chain
        n, m, size = chain.n, chain.m, chain.size
        self.n, self.m = n, m
        y, yd, ydd, y3, y4 = (ca.SX.sym(name, size) for name in ("y", "yd", "ydd", "y3", "y4"))
        inertia = reference.inertia(y)
        residual = inertia @ ydd + reference.bias(y, yd)
        rate = ca.jtimes(residual, ca.vertcat(y, yd, ydd), ca.vertcat(yd, ydd, y3))
        rate2 = ca.jtimes(rate, ca.vertcat(y, yd, ydd, y3), ca.vertcat(yd, ydd, y3, y4))
        self._residual = ca.Function("prescribed_r", [y, yd, ydd], [residual, inertia[n:, :]])
        self._rate = ca.Function("prescribed_r1", [y, yd, ydd, y3], [rate])
        self._rate2 = ca.Function("prescribed_r2", [y, yd, ydd, y3, y4], [rate2])
        at_rest = ca.substitute(residual[n:], ca.vertcat(yd, ydd), ca.SX.zeros(2 * size))
        self._static = ca.Function("prescribed_static", [y], [at_rest, ca.jacobian(at_rest, y[n:])])
        # the deformation dynamics x' = [eta'; eta''] of x = [eta; eta'] with the joints' [q; q'; q''], as generated
        # C: the integrator calls it tens of thousands of times (CasADi's own evaluation of the Lagrangian takes
        # ~1 ms per call); Radau forms its Jacobian by differences of these calls
        if m == 0:  # no flexible link: nothing to integrate
            return
        joints, x = ca.SX.sym("joints", 3 * n), ca.SX.sym("x", 2 * m)
        values = ca.vertcat(joints[:n], x[:m], joints[n:2 * n], x[m:], joints[2 * n:], ca.SX.zeros(m))
        lower, coupling = ca.substitute([residual[n:], inertia[n:, n:]], [ca.vertcat(y, yd, ydd)], [values])
        state_rate = ca.vertcat(x[m:], -ca.solve(coupling, lower))
        cse = getattr(ca, "cse", lambda e: e)  # common subexpressions (CasADi >= 3.6)
        arguments = ca.vertcat(joints, x)
        self._state_rate = compiled_function(ca.Function("prescribed_xdot", [arguments], [cse(state_rate)]),
                                             3 * n + 2 * m, 2 * m)

    # ------------------------------------------------------------------ deformation dynamics
    def static_deflection(self, q0: np.ndarray) -> np.ndarray:
        """eta (m,) of the beams at rest at the joint position ``q0`` (n,): ``h_e(q0, 0, eta, 0) = 0``."""
        if self.m == 0:
            return np.zeros(0)

        def lower_rows(eta: np.ndarray) -> np.ndarray:
            return np.array(self._static(np.r_[q0, eta])[0]).ravel()

        def slope(eta: np.ndarray) -> np.ndarray:
            return np.array(self._static(np.r_[q0, eta])[1])

        solution = root(lower_rows, np.zeros(self.m), jac=slope, tol=1e-14)
        if not solution.success:
            raise ModelError(f"prescribed-joint inverse dynamics: no static deflection at q = {q0.tolist()}: "
                             f"{solution.message}")
        return solution.x

    def integrate(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, q3: np.ndarray,
                  q4: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> tuple[np.ndarray, np.ndarray, int]:
        """(eta, eta_dot) (samples, m) at the sample times ``t`` [s] and the number of evaluations: the deformation
        dynamics along the joint samples (samples, n), from the static deflection at q(t0) at rest. Between the
        samples, q, q' and q'' are each the quintic Hermite interpolant of their value and two derivatives."""
        m = self.m
        start = np.r_[self.static_deflection(q[0]), np.zeros(m)]
        if len(t) < 2 or m == 0:
            return np.repeat(start[None, :m], len(t), axis=0), np.zeros((len(t), m)), 0
        joints = BPoly.from_derivatives(t, np.stack([np.c_[q, qd, qdd], np.c_[qd, qdd, q3], np.c_[qdd, q3, q4]],
                                                    axis=1))

        def arguments(time: float, x: np.ndarray) -> np.ndarray:
            return np.concatenate([joints(time), x])

        solution = solve_ivp(lambda time, x: self._state_rate(arguments(time, x)), (t[0], t[-1]), start,
                             method="LSODA", t_eval=t, rtol=rtol, atol=atol)
        if not solution.success:
            raise ModelError(f"prescribed-joint inverse dynamics: the deformation integration failed at "
                             f"t = {solution.t[-1]:.6g} s: {solution.message}")
        return solution.y[:m].T, solution.y[m:].T, int(solution.nfev)

    # ------------------------------------------------------------------ joint forces
    def __call__(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, q3: np.ndarray,
                 q4: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> PrescribedJointMotion:
        """The joint forces and deformations along joint samples (samples, n) at times ``t`` (samples,) [s]."""
        n, m = self.n, self.m
        eta, eta_dot, evaluations = self.integrate(t, q, qd, qdd, q3, q4, rtol, atol)
        count = len(t)
        zeros = np.zeros((m, count))
        y, yd = np.r_[q.T, eta.T], np.r_[qd.T, eta_dot.T]
        residual, inertia = self._residual.map(count)(y, yd, np.r_[qdd.T, zeros])
        inertia = np.array(inertia).T.reshape(count, n + m, m).transpose(0, 2, 1)  # (samples, m, size)
        solve = inertia[:, :, n:]

        def unknown(rows: np.ndarray) -> np.ndarray:
            """The highest elastic derivative that zeroes the elastic rows ``rows`` (size, samples)."""
            return -np.linalg.solve(solve, rows[n:].T[:, :, None])[:, :, 0].T

        eta_ddot = unknown(np.array(residual))
        ydd = np.r_[qdd.T, eta_ddot]
        rate = np.array(self._rate.map(count)(y, yd, ydd, np.r_[q3.T, zeros]))
        eta3 = unknown(rate)
        y3 = np.r_[q3.T, eta3]
        rate2 = np.array(self._rate2.map(count)(y, yd, ydd, y3, np.r_[q4.T, zeros]))
        eta4 = unknown(rate2)
        coupling = inertia[:, :, :n]  # I_eq (samples, m, n); I_qe = its transpose (I symmetric)
        tau = np.array(residual)[:n].T + np.einsum("kej,ke->kj", coupling, eta_ddot.T)
        dtau = rate[:n].T + np.einsum("kej,ke->kj", coupling, eta3.T)
        ddtau = rate2[:n].T + np.einsum("kej,ke->kj", coupling, eta4.T)
        return PrescribedJointMotion(tau=tau, dtau=dtau, ddtau=ddtau, eta=eta, eta_dot=eta_dot,
                                     eta_ddot=eta_ddot.T, evaluations=evaluations)


__all__ = ["ATOL", "PrescribedJointInverseDynamics", "PrescribedJointMotion", "RTOL"]
