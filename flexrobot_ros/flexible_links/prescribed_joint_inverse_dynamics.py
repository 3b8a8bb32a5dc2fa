"""Inverse dynamics of a flexible-link chain along a prescribed joint motion: the joint forces that make the joints
follow q(t), with the link deformations (and the motion of non-actuated elastic joints) that motion excites.

Equations of motion of the chain (coordinates ``y = [theta (chain joints), eta (m)]``, :mod:`.flexible_chain`; the
Lagrangian of :mod:`.lagrangian`)::

    R(y, y', y'') := I(y) y'' + h(y, y') + [K_e q_e + D_e q_e' on the q_e rows] = [tau (n) on the q rows; 0]

h holds Coriolis and centrifugal forces, gravity, the beams' strain K eta and modal damping D eta'. The chain's
joints are the prescribed joints q (n, ``prescribed``: the robot's joints) and, on a chain built on the extended
model (seed 002 eq. 1; :class:`~.elastic_robot.ElasticRobot`'s chain), the non-actuated elastic joints q_e
(``extra``) with their springs K_e and dampers D_e (seed 002 eq. 1c). With q(t) prescribed, the rows of the free
coordinates e = [q_e; eta] are the deformation dynamics

    I_ee e'' + D e' + K e = -I_eq q'' - (the rest of h_e)(q, q', e, e')

which are stable (the beams clamped and the extra springs attached on joints that move as told); they are
integrated by scipy's ``solve_ivp`` (LSODA: Adams steps while the motion sets the step, BDF when finite-element
beams' kHz modes make the equations stiff; 2-10x faster than Radau on the shipped arms for the same result) from
**rest in the static deflection at the start pose**: e(t0) solves ``R_e(q(t0), 0, e, 0) = 0`` (K eta and K_e q_e
against gravity; zero without gravity) and e'(t0) = 0. The joint forces are the prescribed rows, ``tau = R_q``.
Their time derivatives (for the motor side of elastic joints, thesis eqs. 4.7-4.10) follow exactly from the time
derivatives of R along the motion, formed by CasADi's forward differentiation (``jtimes``) of the Lagrangian::

    R1 = dR/dt = dR/dy y' + dR/dy' y'' + I y'''          R2 = dR1/dt = ... + I y''''

whose free rows vanish too: ``I_ee e''' = -R1_e(e''' = 0)`` and ``I_ee e'''' = -R2_e(e'''' = 0)``, then
``dtau = R1_q``, ``ddtau = R2_q``. The joint trajectory between the samples is the quintic Hermite interpolant of
the samples (q, q', q'' for q; q', q'', q''' for q'; q'', q''', q'''' for q''; scipy ``BPoly.from_derivatives``;
exact at the samples).

Units: joint forces tau [N m | N] (revolute | prismatic), their derivatives per s and s^2; q_e [rad | m]; eta as
the beams' modal or nodal coordinates of :mod:`.beam_link`; K_e [N m/rad | N/m], D_e [N m s/rad | N s/m].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import BPoly
from scipy.optimize import root

from flexrobot_ros.compiled_code import bound_library
from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.compiled_dynamics import compiled_function, compiled_library, quadrature_points
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

#: solve_ivp tolerances of the deformation integration (relative; absolute on e and e').
RTOL, ATOL = 1e-9, 1e-12


@dataclass(frozen=True)
class PrescribedJointMotion:
    """The chain along a prescribed joint motion, arrays (samples, ...): ``tau``, ``dtau``, ``ddtau`` (samples, n)
    forces [N m | N] of the prescribed joints and their time derivatives; ``eta``, ``eta_dot``, ``eta_ddot``
    (samples, m) the beams' elastic coordinates and their rates; ``q_e``, ``qd_e``, ``qdd_e`` (samples, ne) the
    non-actuated elastic joints' [rad | m] and their rates (ne = 0 without them); ``evaluations`` the integrator's
    evaluations of the deformation dynamics."""

    tau: np.ndarray
    dtau: np.ndarray
    ddtau: np.ndarray
    eta: np.ndarray
    eta_dot: np.ndarray
    eta_ddot: np.ndarray
    evaluations: int
    q_e: np.ndarray
    qd_e: np.ndarray
    qdd_e: np.ndarray


class PrescribedJointInverseDynamics:
    """The CasADi functions of one chain (built once: a few seconds, plus compiling the deformation dynamics to C
    on first use, cached like the compiled plant); call it with sampled joint trajectories.

    ``prescribed`` (n,): the chain joints (indices into its joint coordinates) whose motion is given, in the order of
    the trajectory's columns (default: every chain joint, in chain order); ``extra`` (ne,): the other chain joints,
    non-actuated elastic joints with springs ``stiffness`` (ne,) [N m/rad | N/m] and dampers ``damping`` (ne,)
    [N m s/rad | N s/m] to the previous body (default: none)."""

    def __init__(self, chain: FlexibleLinkChain, prescribed: Sequence[int] | None = None, extra: Sequence[int] = (),
                 stiffness: Sequence[float] = (), damping: Sequence[float] = ()):
        reference = lagrangian_dynamics(chain, quadrature_points(chain))
        if reference.roots:
            raise ModelError("prescribed-joint inverse dynamics: a sliding link with `roots: integrated` is not "
                             "supported; use `roots: explicit` (the same dynamics)")
        self.chain = chain
        size = chain.size
        prescribed = np.arange(chain.n) if prescribed is None else np.asarray(prescribed, dtype=int)
        extra = np.asarray(extra, dtype=int)
        stiffness, damping = np.asarray(stiffness, dtype=float), np.asarray(damping, dtype=float)
        if sorted(np.r_[prescribed, extra].tolist()) != list(range(chain.n)) or \
                stiffness.shape != extra.shape or damping.shape != extra.shape or np.any(stiffness <= 0.0):
            raise ModelError(f"prescribed-joint inverse dynamics: prescribed joints {prescribed.tolist()} and extra "
                             f"elastic joints {extra.tolist()} (stiffness {stiffness.tolist()}, damping "
                             f"{damping.tolist()}) must split the chain's {chain.n} joints, each extra joint with a "
                             "positive stiffness")
        n, ne, m = len(prescribed), len(extra), chain.m
        self.n, self.ne, self.m = n, ne, m
        self.prescribed = prescribed
        self.free = np.r_[extra, chain.n + np.arange(m)].astype(int)  # e = [q_e; eta]
        k = len(self.free)
        P, F = self.prescribed.tolist(), self.free.tolist()
        y, yd, ydd, y3, y4 = (ca.SX.sym(name, size) for name in ("y", "yd", "ydd", "y3", "y4"))
        inertia = reference.inertia(y)
        residual = inertia @ ydd + reference.bias(y, yd)
        if ne:
            select = np.zeros((ne, size))
            select[np.arange(ne), extra] = 1.0
            select = ca.DM(select)
            residual = residual + select.T @ (ca.DM(stiffness) * (select @ y) + ca.DM(damping) * (select @ yd))
        rate = ca.jtimes(residual, ca.vertcat(y, yd, ydd), ca.vertcat(yd, ydd, y3))
        rate2 = ca.jtimes(rate, ca.vertcat(y, yd, ydd, y3), ca.vertcat(yd, ydd, y3, y4))
        # R with I[F, :] (column-major), R1, R2 as functions of the stacked sample [y; yd; ydd (; y3 (; y4))]:
        # CasADi's map, or per sample in generated C for long trajectories (_evaluate)
        self._stacked = (
            ca.Function("prescribed_rows", [ca.vertcat(y, yd, ydd)], [ca.vertcat(residual, ca.vec(inertia[F, :]))]),
            ca.Function("prescribed_rows1", [ca.vertcat(y, yd, ydd, y3)], [rate]),
            ca.Function("prescribed_rows2", [ca.vertcat(y, yd, ydd, y3, y4)], [rate2]))
        self._batches: list | None = None
        at_rest = ca.substitute(residual[F], ca.vertcat(yd, ydd), ca.SX.zeros(2 * size))
        self._static = ca.Function("prescribed_static", [y], [at_rest, ca.jacobian(at_rest, y[F])])
        # the free rows' inertia and damping at rest (the joints locked): built on first use (rest-to-rest motions)
        self._locked_rows = (residual[F], inertia[F, F], y, yd, ydd)
        self._locked: ca.Function | None = None
        # the deformation dynamics x' = [e'; e''] of x = [e; e'] with the joints' [q; q'; q''], as generated C: the
        # integrator calls it tens of thousands of times (CasADi's own evaluation of the Lagrangian takes ~1 ms per
        # call)
        if k == 0:  # no flexible link, no extra joint: nothing to integrate
            return
        joints, x = ca.SX.sym("joints", 3 * n), ca.SX.sym("x", 2 * k)
        order = np.argsort(np.r_[P, F]).tolist()  # chain coordinate -> its place in [q; e]

        def chain_order(given: ca.SX, free: ca.SX) -> ca.SX:
            return ca.vertcat(given, free)[order]

        values = ca.vertcat(chain_order(joints[:n], x[:k]), chain_order(joints[n:2 * n], x[k:]),
                            chain_order(joints[2 * n:], ca.SX.zeros(k)))
        lower, coupling = ca.substitute([residual[F], inertia[F, F]], [ca.vertcat(y, yd, ydd)], [values])
        state_rate = ca.vertcat(x[k:], -ca.solve(coupling, lower))
        arguments = ca.vertcat(joints, x)
        self._state_rate = compiled_function(ca.Function("prescribed_xdot", [arguments], [state_rate]),
                                             3 * n + 2 * k, 2 * k)

    def _evaluate(self, which: int, *columns: np.ndarray) -> np.ndarray:
        """Function ``which`` (0: R and I[F, :], 1: R1, 2: R2) at every sample: arguments (size, samples) each,
        result (outputs, samples). Chains with free coordinates evaluate, for BATCH_MIN_SAMPLES samples or more, the
        generated C of :func:`_batch` (compiled on first use; the same numbers to round-off, ~1e-14 relative on the
        Canadarm); shorter trajectories and the others (rigid robots: small functions) CasADi's map."""
        if len(self.free) == 0 or (self._batches is None and columns[0].shape[1] < BATCH_MIN_SAMPLES):
            return np.array(self._stacked[which].map(columns[0].shape[1])(np.concatenate(columns, axis=0)))
        if self._batches is None:
            self._batches = [_batch(function) for function in self._stacked]
        return self._batches[which](np.concatenate(columns, axis=0).T).T

    def _chain_coordinates(self, q: np.ndarray, e: np.ndarray) -> np.ndarray:
        """Chain coordinates (size, ...) from prescribed ones q (n, ...) and free ones e (k, ...)."""
        out = np.zeros((self.chain.size,) + np.shape(q)[1:])
        out[self.prescribed], out[self.free] = q, e
        return out

    # ------------------------------------------------------------------ deformation dynamics
    def static_deflection(self, q0: np.ndarray) -> np.ndarray:
        """e = [q_e; eta] (ne + m,) at rest at the joint position ``q0`` (n,): ``R_e(q0, 0, e, 0) = 0``."""
        k = len(self.free)
        if k == 0:
            return np.zeros(0)

        def lower_rows(e: np.ndarray) -> np.ndarray:
            return np.array(self._static(self._chain_coordinates(q0, e))[0]).ravel()

        def slope(e: np.ndarray) -> np.ndarray:
            return np.array(self._static(self._chain_coordinates(q0, e))[1])

        solution = root(lower_rows, np.zeros(k), jac=slope, tol=1e-14)
        if not solution.success:
            raise ModelError(f"prescribed-joint inverse dynamics: no static deflection at q = {q0.tolist()}: "
                             f"{solution.message}")
        return solution.x

    def locked_linearization(self, q0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(e_s, M, D, K) of the deformation with the joints locked at ``q0`` (n,): e_s (ne + m,) the static
        deflection there (:meth:`static_deflection`), and about it the free rows' inertia I_ee, damping
        dR_e/de' and stiffness dR_e/de (ne + m, ne + m) at rest: ``M e'' + D e' + K e = 0`` are the small
        vibrations of the deformation about e_s while the joints hold q0 (K includes gravity's geometric terms)."""
        k = len(self.free)
        if k == 0:
            empty = np.zeros((0, 0))
            return np.zeros(0), empty, empty, empty
        if self._locked is None:
            rows, inertia, y, yd, ydd = self._locked_rows
            F, size = self.free.tolist(), self.chain.size
            rest = [ca.SX.zeros(size), ca.SX.zeros(size)]
            outputs = [ca.substitute(value, ca.vertcat(yd, ydd), ca.vertcat(*rest))
                       for value in (inertia, ca.jacobian(rows, yd[F]), ca.jacobian(rows, y[F]))]
            self._locked = ca.Function("prescribed_locked", [y], outputs)
        e_s = self.static_deflection(q0)
        M, D, K = (np.array(value) for value in self._locked(self._chain_coordinates(q0, e_s)))
        return e_s, M, D, K

    def integrate(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, q3: np.ndarray,
                  q4: np.ndarray, rtol: float = RTOL, atol: float = ATOL,
                  start: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(e, e_dot) (samples, ne + m), e = [q_e; eta], at the sample times ``t`` [s] and the number of evaluations:
        the deformation dynamics along the joint samples (samples, n), from ``start`` = (e, e_dot) at t[0] (default:
        the static deflection at q(t0), at rest). Between the samples, q, q' and q'' are each the quintic Hermite
        interpolant of their value and two derivatives."""
        k = len(self.free)
        start = np.r_[self.static_deflection(q[0]), np.zeros(k)] if start is None else \
            np.concatenate([np.asarray(start[0], dtype=float), np.asarray(start[1], dtype=float)])
        if len(t) < 2 or k == 0:
            return np.repeat(start[None, :k], len(t), axis=0), np.zeros((len(t), k)), 0
        joints = BPoly.from_derivatives(t, np.stack([np.c_[q, qd, qdd], np.c_[qd, qdd, q3], np.c_[qdd, q3, q4]],
                                                    axis=1))

        def arguments(time: float, x: np.ndarray) -> np.ndarray:
            return np.concatenate([joints(time), x])

        solution = solve_ivp(lambda time, x: self._state_rate(arguments(time, x)), (t[0], t[-1]), start,
                             method="LSODA", t_eval=t, rtol=rtol, atol=atol)
        if not solution.success:
            raise ModelError(f"prescribed-joint inverse dynamics: the deformation integration failed at "
                             f"t = {solution.t[-1]:.6g} s: {solution.message}")
        return solution.y[:k].T, solution.y[k:].T, int(solution.nfev)

    # ------------------------------------------------------------------ joint forces
    def __call__(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, q3: np.ndarray,
                 q4: np.ndarray, rtol: float = RTOL, atol: float = ATOL,
                 start: tuple[np.ndarray, np.ndarray] | None = None) -> PrescribedJointMotion:
        """The joint forces and deformations along joint samples (samples, n) at times ``t`` (samples,) [s], the
        deformation started at ``start`` = (e, e_dot) (default: at rest in the static deflection at q(t0))."""
        P, F = self.prescribed, self.free
        e, e_dot, evaluations = self.integrate(t, q, qd, qdd, q3, q4, rtol, atol, start)
        count, k = len(t), len(F)
        zeros = np.zeros((k, count))
        y, yd = self._chain_coordinates(q.T, e.T), self._chain_coordinates(qd.T, e_dot.T)
        size = self.chain.size
        rows = self._evaluate(0, y, yd, self._chain_coordinates(qdd.T, zeros))
        residual = rows[:size]
        inertia = rows[size:].T.reshape(count, size, k).transpose(0, 2, 1)  # (samples, k, size)
        solve = inertia[:, :, F]

        def unknown(rows: np.ndarray) -> np.ndarray:
            """The highest free derivative that zeroes the free rows of ``rows`` (size, samples)."""
            return -np.linalg.solve(solve, rows[F].T[:, :, None])[:, :, 0].T

        e_ddot = unknown(np.array(residual))
        ydd = self._chain_coordinates(qdd.T, e_ddot)
        rate = self._evaluate(1, y, yd, ydd, self._chain_coordinates(q3.T, zeros))
        e3 = unknown(rate)
        y3 = self._chain_coordinates(q3.T, e3)
        rate2 = self._evaluate(2, y, yd, ydd, y3, self._chain_coordinates(q4.T, zeros))
        e4 = unknown(rate2)
        coupling = inertia[:, :, P]  # I_eq (samples, k, n); I_qe = its transpose (I symmetric)
        tau = residual[P].T + np.einsum("kej,ke->kj", coupling, e_ddot.T)
        dtau = rate[P].T + np.einsum("kej,ke->kj", coupling, e3.T)
        ddtau = rate2[P].T + np.einsum("kej,ke->kj", coupling, e4.T)
        ne = self.ne
        return PrescribedJointMotion(tau=tau, dtau=dtau, ddtau=ddtau, eta=e[:, ne:], eta_dot=e_dot[:, ne:],
                                     eta_ddot=e_ddot.T[:, ne:], evaluations=evaluations, q_e=e[:, :ne],
                                     qd_e=e_dot[:, :ne], qdd_e=e_ddot.T[:, :ne])


#: Trajectories of at least this many samples evaluate R, R1, R2 as generated C (:func:`_batch`): on the Canadarm
#: CasADi's map costs ~3.1 ms per sample, the C ~0.65 ms, and finding the cached library ~2.4 s (hashing the
#: functions); compiling it the first time ~30-50 s of CPU.
BATCH_MIN_SAMPLES = 2000

#: Compiler flags of the batched residual functions: their generated C is large straight-line code (the Canadarm's R2:
#: 2.7e5 operations after common-subexpression elimination), which gcc compiles at -O0 in ~14 s of CPU and at -O1 in
#: minutes; at -O0 it evaluates ~5x faster than CasADi's virtual machine, with the same operations in the same order
#: (bit-identical on the Canadarm).
BATCH_FLAGS = ("-O0", "-shared", "-fPIC")


def _batch(function: ca.Function) -> Callable[[np.ndarray], np.ndarray]:
    """``evaluate(x (samples, n_in)) -> (samples, n_out)`` of a one-input, one-output SX function: a C loop over
    the samples (``ff_batch`` of :mod:`flexrobot_ros.compiled_code`) of its generated C, compiled with
    :data:`BATCH_FLAGS` once and cached in the package's code cache under a sha256 of the function, the CasADi
    version and the flags; common subexpressions are eliminated only when it is compiled. CasADi's map of the
    function without a C compiler or when compiling fails."""
    n_in, n_out = function.size1_in(0), function.size1_out(0)
    library = compiled_library(function, n_in, n_out, flags=BATCH_FLAGS)
    if library is None:
        return lambda x: np.array(function.map(x.shape[0])(x.T)).T
    lib = bound_library(library, n_in, n_out)[0]

    def evaluate(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=float)
        out = np.empty((x.shape[0], n_out))
        if lib.ff_batch(x.ctypes.data, out.ctypes.data, x.shape[0]):
            raise FloatingPointError(f"compiled {function.name()} failed")
        return out
    return evaluate


__all__ = ["ATOL", "BATCH_MIN_SAMPLES", "PrescribedJointInverseDynamics", "PrescribedJointMotion", "RTOL"]
