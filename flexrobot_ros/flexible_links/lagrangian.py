"""Reference dynamics of a flexible-link chain: the Lagrangian, differentiated by CasADi (independent of DeNOC).

The kinetic energy is summed over material points (Gauss-Legendre points of every beam, tip masses) whose world
positions follow from the joint transforms (each body frame from its parent's: a tree of rigid links too) and the
deformed tip frames, plus each rigid body's (or hub's) 1/2 V^T I V; the potential is the strain energy
1/2 eta^T K eta plus gravity. CasADi gives::

    I(y) = d^2 T / d y_dot^2,    h = (d^2 T / d y_dot d y) y_dot - dT/dy + dV/dy + D y_dot,
    C(y, y_dot) = 1/2 (I_dot + d(I y_dot)/dy - d(I y_dot)/dy^T)   (Christoffel symbols; I_dot - 2 C is skew)

Only the chain's *model* (shape functions, placements, tip-frame rule, inertias) is shared with the recursive
algorithm; none of its integrals, twists or recursions are.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import casadi as ca
import numpy as np

from flexrobot_ros.flexible_links.beam_elements import ClampedBeamMesh
from flexrobot_ros.flexible_links.beam_link import tip_rotation_expression
from flexrobot_ros.flexible_links.buffered_function import BufferedFunction
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain


def _rotation_about(axis: np.ndarray, angle: ca.SX) -> ca.SX:
    k = ca.SX(ca.DM(axis.reshape(3, 1)))
    K = ca.skew(k)
    return ca.SX.eye(3) + ca.sin(angle) * K + (1 - ca.cos(angle)) * (K @ K)


def _transform(R: np.ndarray | ca.SX, p: np.ndarray | ca.SX) -> tuple[ca.SX, ca.SX]:
    return ca.SX(R) if isinstance(R, np.ndarray) else R, ca.SX(p.reshape(3, 1)) if isinstance(p, np.ndarray) else p


@dataclass
class LagrangianDynamics:
    """CasADi functions of the chain's Lagrangian dynamics (numeric callables on numpy arrays); the methods evaluate
    them through bound buffers (:mod:`.buffered_function`: the same numbers, without DM conversions)."""

    inertia: ca.Function        # (y) -> I
    bias: ca.Function           # (y, y_dot) -> h
    inertia_bias: ca.Function   # (y, y_dot) -> (I, h): the two above in one evaluation
    energy: ca.Function         # (y, y_dot) -> [T, V_strain, V_gravity]
    placements: ca.Function     # (y) -> (12 n,): per body vec(R) (column-major) and p of B_i in the world; for a
    #                             sliding beam, its deformed tip frame (beam slopes turn it, as BeamLink.tip_motion)
    roots: int = 0              # > 0: sliding beams' roots as states (``roots_state``): every function above takes
    #                             them as a last input ``beta`` (roots,)
    explicit_roots: ca.Function | None = None   # (y) -> beta: the roots as functions of the free lengths
    root_rates: ca.Function | None = None       # (y, y_dot, beta) -> beta_dot (seed 004 eqs. 45-47)
    inertia_rates: Callable[[], tuple[ca.Function, ca.Function]] | None = field(default=None, repr=False,
                                                                                 compare=False)
    #                             () -> (coriolis, inertia_dot), built on first use of either (their expressions
    #                             are the largest: on the RRP's clamped-mass link a third of the build time)
    common_subexpressions: Callable[[], tuple[ca.Function, ca.Function, ca.Function]] | None = field(
        default=None, repr=False, compare=False)
    #                             () -> (inertia, bias, inertia_bias) with common subexpressions eliminated, for
    #                             chains where they pay (below); :meth:`evaluate` swaps them in after
    #                             ``SWAP_AFTER`` evaluations of the three
    _buffered: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _evaluations: int = field(default=0, init=False, repr=False, compare=False)

    #: Evaluations of inertia/bias after which :meth:`evaluate` builds and uses ``common_subexpressions``: on the
    #: RRP's clamped-mass links they take 3.5 s to build and save about 0.6 ms per evaluation, so a modal analysis
    #: or a short check never builds them, and a caller that did not ask for them at once (a plant asks:
    #: :meth:`eliminate_common_subexpressions`) pays at most about twice the best choice made in hindsight
    #: (rent or buy).
    SWAP_AFTER = 4700

    @functools.cached_property
    def _rates(self) -> tuple[ca.Function, ca.Function]:
        return self.inertia_rates()

    @property
    def coriolis(self) -> ca.Function:
        """(y, y_dot) -> C, Christoffel symbols of I (I_dot - 2 C skew-symmetric)."""
        return self._rates[0]

    @property
    def inertia_dot(self) -> ca.Function:
        """(y, y_dot) -> I_dot, the total time derivative of I."""
        return self._rates[1]

    def evaluate(self, name: str, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """numpy outputs of the function field ``name`` (e.g. ``"bias"``) at ``inputs``, through its bound buffers
        (bound on first use)."""
        if name in ("inertia", "bias", "inertia_bias") and self.common_subexpressions is not None:
            self._evaluations += 1
            if self._evaluations >= self.SWAP_AFTER:
                self.eliminate_common_subexpressions()
        buffered = self._buffered.get(name)
        if buffered is None:
            buffered = self._buffered[name] = BufferedFunction(getattr(self, name))
        return buffered(*inputs)

    def eliminate_common_subexpressions(self) -> None:
        """Evaluate ``inertia``, ``bias`` and ``inertia_bias`` from now on with their common subexpressions
        eliminated (bitwise the same numbers; nothing to do on chains where they do not pay): what a caller that
        will evaluate them many times (a plant about to be integrated) asks for at once, and :meth:`evaluate` after
        ``SWAP_AFTER`` evaluations."""
        if self.common_subexpressions is not None:
            self.inertia, self.bias, self.inertia_bias = self.common_subexpressions()
            self.common_subexpressions = None
            for swapped in ("inertia", "bias", "inertia_bias"):
                self._buffered.pop(swapped, None)

    def arguments(self, y: np.ndarray, beta: np.ndarray | None = None) -> list:
        """[y] or, with root states, [y, beta] (``beta`` None: the explicit roots at y's free lengths)."""
        if not self.roots:
            return [y]
        return [y, self.evaluate("explicit_roots", y)[0] if beta is None else beta]

    def inertia_and_bias(self, y: np.ndarray, y_dot: np.ndarray,
                         beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(I (size, size), h (size,)) at ``(y, y_dot)`` (at root states ``beta`` when the chain has them)."""
        y, *roots = self.arguments(y, beta)
        return self.evaluate("inertia_bias", y, y_dot, *roots)

    def rates_of_roots(self, y: np.ndarray, y_dot: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """beta_dot (roots,) of ``root_rates`` (seed 004 eqs. 45-47)."""
        return self.evaluate("root_rates", y, y_dot, beta)[0]

    def forward_dynamics(self, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray,
                         beta: np.ndarray | None = None) -> np.ndarray:
        """y_ddot = I^-1 (tau - h) (at root states ``beta`` when the chain has them)."""
        inertia, bias = self.inertia_and_bias(y, y_dot, beta)
        return np.linalg.solve(inertia, np.asarray(tau) - bias)


def lagrangian_dynamics(chain: FlexibleLinkChain, points_per_beam: int = 24) -> LagrangianDynamics:
    """Build the reference dynamics of ``chain``: ``points_per_beam`` Gauss-Legendre points per assumed-modes beam
    for the kinetic energy (4 per element, exact, for finite elements).

    Sliding beams with ``roots_state`` (seed 004 section 4.2: the roots beta of eq. 38 integrated with the state)
    take their roots from an input symbol beta; along the motion beta_dot = S(beta, y) y_dot with S the slopes of
    eqs. 45-47, so every total time derivative and every partial derivative by the free length d carries the
    beta terms (d/dt = d/dy y_dot + d/dbeta beta_dot, d/dd = d/dd + S^T d/dbeta): with beta on the root curve these
    are the explicit-roots dynamics exactly."""
    states = [body.sliding for body in chain.bodies if body.sliding is not None and body.sliding.roots_state]
    beta = ca.SX.sym("beta", sum(s.modes for s in states))
    try:
        return _build(chain, points_per_beam, states, beta)
    finally:
        for sliding in states:
            sliding.root_symbols = None
            sliding._functions.pop("constants", None)


def _build(chain: FlexibleLinkChain, points_per_beam: int, states: list, beta: ca.SX) -> LagrangianDynamics:
    y = ca.SX.sym("y", chain.size)
    yd = ca.SX.sym("yd", chain.size)
    n = chain.n
    root_slopes = ca.SX.zeros(beta.numel(), chain.size)    # d beta / d y (the free lengths' columns)
    start = 0
    for i, body in enumerate(chain.bodies):
        if body.sliding is not None and body.sliding.roots_state:
            count = body.sliding.modes
            body.sliding.root_symbols = [beta[start + k] for k in range(count)]
            root_slopes[start:start + count, i] = body.sliding.root_slopes(beta[start:start + count], y[i])
            start += count
    z, zd = ca.vertcat(y, beta), ca.vertcat(yd, root_slopes @ yd)   # coordinates with the roots, and their rates
    extra = [beta] if beta.numel() else []

    def total_gradient(expression: ca.SX) -> ca.SX:
        return ca.gradient(expression, y) + (root_slopes.T @ ca.gradient(expression, beta) if extra else 0)
    rotations: list[ca.SX] = []  # R, p of every body frame B_i (world), read by its children
    positions: list[ca.SX] = []
    kinetic = 0
    strain = 0
    gravity_potential = 0
    g = ca.DM(chain.gravity.reshape(3, 1))
    damping = ca.SX.zeros(chain.size, 1)
    frames = []
    for i, body in enumerate(chain.bodies):
        k = chain.parents[i]
        previous = None if k < 0 else chain.bodies[k]  # the parent body (the previous one on a serial chain)
        R, p = (ca.SX.eye(3), ca.SX.zeros(3, 1)) if k < 0 else (rotations[k], positions[k])
        placement = body.placement
        Rj, pj = _transform(placement.rotation, placement.translation)
        if previous is not None and previous.beam is not None:
            beam = previous.beam
            eta = y[n + previous.eta.start:n + previous.eta.stop]
            a = ca.dot(ca.DM(beam.tip_slope_y), eta)
            b = -ca.dot(ca.DM(beam.tip_slope_z), eta)
            tip = beam.undeformed_tip()
            Rt, pt = _transform(tip.rotation, tip.translation)
            Rd, pd = tip_rotation_expression(a, b), ca.DM(beam.tip_deflection) @ eta
            # parent -> C = tip * D * placement
            pj_full = pt + Rt @ (pd + Rd @ pj)
            Rj = Rt @ Rd @ Rj
            pj = pj_full
        axis = body.motion_subspace
        if body.joint_type == "revolute":
            Rq, pq = _rotation_about(axis[3:], y[i]), ca.SX.zeros(3, 1)
        else:
            Rq, pq = ca.SX.eye(3), ca.SX(ca.DM(axis[:3].reshape(3, 1))) * y[i]
        if body.sliding is not None:  # seed 004 eqs. 19-22: material points by their distance from the tip
            sliding = body.sliding
            eta = y[n + body.eta.start:n + body.eta.stop]
            p_hub, R_hub = p + R @ pj, R @ Rj
            label = ca.SX.sym("s")
            for element, xi, weight in sliding.quadrature(y[i]):
                point = p_hub + R_hub @ sliding.position(eta, y[i], label, element)
                velocity = ca.substitute(ca.jtimes(point, z, zd), label, y[i] - xi)
                kinetic += 0.5 * weight * ca.dot(velocity, velocity)
                gravity_potential -= weight * ca.dot(g, ca.substitute(point, label, y[i] - xi))
            strain += sliding.strain_energy(eta, y[i])
        p = p + R @ (pj + Rj @ pq)
        R = R @ Rj @ Rq
        rotations.append(R)
        positions.append(p)
        if body.sliding is not None:
            sliding = body.sliding
            eta = y[n + body.eta.start:n + body.eta.stop]
            tip_w, slopes = sliding.tip(eta, y[i])
            deflection = ca.DM(sliding.rotation[:, 1:1 + sliding.planes]) @ tip_w
            a, b = slopes[0], (-slopes[1] if sliding.planes == 2 else 0)
            beam = ca.DM(sliding.rotation)
            frames += [ca.vec(tip_rotation_expression(a, b, left=R @ beam) @ beam.T), p + R @ deflection]
        else:
            frames += [ca.vec(R), p]
        # rigid part: 1/2 V^T I V with V the body twist
        Rdot = ca.reshape(ca.jtimes(ca.vec(R), z, zd), 3, 3)
        pdot = ca.jtimes(p, z, zd)
        v_body = R.T @ pdot
        W = R.T @ Rdot
        w_body = ca.vertcat(W[2, 1], W[0, 2], W[1, 0])
        twist = ca.vertcat(v_body, w_body)
        I6 = ca.DM(body.rigid_inertia.matrix())
        kinetic += 0.5 * ca.dot(twist, I6 @ twist)
        mass = body.rigid_inertia.mass
        gravity_potential -= mass * ca.dot(g, p + R @ ca.DM(body.rigid_inertia.lever.reshape(3, 1)))
        if body.beam is not None:
            beam = body.beam
            eta = y[n + body.eta.start:n + body.eta.stop]
            segments = beam.family_y.elements if isinstance(beam.family_y, ClampedBeamMesh) else 1
            order = 4 if segments > 1 or isinstance(beam.family_y, ClampedBeamMesh) else points_per_beam
            s, w = np.polynomial.legendre.leggauss(order)
            h = beam.length / segments
            x = (np.arange(segments)[:, None] * h + (s + 1) * h / 2).ravel()
            weights = list(beam.rho * np.tile(w * h / 2, segments)) + [beam.tip_mass]
            x = np.append(x, beam.length)
            shapes = beam._shape_matrix(x)                                    # (Q, 3, m) beam axes
            for xq, wq, Sq in zip(x, weights, shapes):
                if wq == 0.0:
                    continue
                local = beam.origin + beam.rotation @ np.array([xq, 0.0, 0.0])
                r = ca.DM(local.reshape(3, 1)) + ca.DM(beam.rotation @ Sq) @ eta
                point = p + R @ r
                velocity = ca.jtimes(point, z, zd)
                kinetic += 0.5 * wq * ca.dot(velocity, velocity)
                gravity_potential -= wq * ca.dot(g, point)
            strain += 0.5 * ca.dot(eta, ca.DM(beam.stiffness) @ eta)
            etad = yd[n + body.eta.start:n + body.eta.stop]
            damping[n + body.eta.start:n + body.eta.stop] = ca.DM(beam.damping) @ etad
    potential = strain + gravity_potential
    momentum = ca.gradient(kinetic, yd)
    inertia = ca.jacobian(momentum, yd)
    bias = ca.jtimes(momentum, z, zd) - total_gradient(kinetic) + total_gradient(potential) + damping

    def inertia_rates() -> tuple[ca.Function, ca.Function]:
        inertia_y = inertia @ yd
        J1 = ca.jacobian(inertia_y, y) + (ca.jacobian(inertia_y, beta) @ root_slopes if extra else 0)
        inertia_dot = ca.reshape(ca.jtimes(ca.vec(inertia), z, zd), chain.size, chain.size)
        coriolis = 0.5 * (inertia_dot + J1 - J1.T)
        return (ca.Function("coriolis", [y, yd] + extra, [ca.densify(coriolis)]),
                ca.Function("inertia_dot", [y, yd] + extra, [ca.densify(inertia_dot)]))
    # Common subexpressions (CasADi >= 3.6; structural, so the same numbers) pay on a sliding beam's clamped-mass
    # modes, whose roots recur in every term (RRP: 474,788 -> 353,964 instructions, 2.0 -> 1.26 ms per inertia and
    # bias, 3.5 s more to build), after enough evaluations (LagrangianDynamics.SWAP_AFTER); elsewhere they cost the
    # build and gain nothing (RRP with finite elements: 0.22 -> 1.1 s to build, 0.38 -> 0.48 ms per evaluation).
    assumed_modes = any(body.sliding is not None and body.sliding.modes for body in chain.bodies)
    explicit = None
    if extra:  # the same roots as functions of the free lengths (initial states, and callers without root states)
        for sliding in states:
            sliding.root_symbols = None
        explicit = ca.Function("explicit_roots", [y], [ca.densify(ca.vertcat(*[
            r for i, body in enumerate(chain.bodies) if body.sliding is not None and body.sliding.roots_state
            for r in body.sliding.explicit_roots(y[i])]))])
    dense_inertia, dense_bias = ca.densify(inertia), ca.densify(bias)

    def functions(inertia: ca.SX, bias: ca.SX) -> tuple[ca.Function, ca.Function, ca.Function]:
        return (ca.Function("inertia", [y] + extra, [inertia]), ca.Function("bias", [y, yd] + extra, [bias]),
                ca.Function("inertia_bias", [y, yd] + extra, [inertia, bias]))
    plain = functions(dense_inertia, dense_bias)
    cse = getattr(ca, "cse", None)
    return LagrangianDynamics(
        inertia=plain[0], bias=plain[1], inertia_bias=plain[2],
        common_subexpressions=((lambda: functions(cse(dense_inertia), cse(dense_bias))) if assumed_modes and cse
                               else None),
        energy=ca.Function("energy", [y, yd] + extra, [ca.densify(ca.vertcat(kinetic, strain, gravity_potential))]),
        placements=ca.Function("placements", [y] + extra, [ca.densify(ca.vertcat(*frames))]),
        roots=beta.numel(), explicit_roots=explicit,
        root_rates=ca.Function("root_rates", [y, yd, beta], [ca.densify(root_slopes @ yd)]) if extra else None,
        inertia_rates=inertia_rates,
    )


__all__ = ["LagrangianDynamics", "lagrangian_dynamics"]
