"""Reference dynamics of a flexible-link chain: the Lagrangian, differentiated by CasADi (independent of DeNOC).

The kinetic energy is summed over material points (Gauss-Legendre points of every beam, tip masses) whose world
positions follow from the joint transforms and the deformed tip frames, plus each rigid body's (or hub's)
1/2 V^T I V; the potential is the strain energy 1/2 eta^T K eta plus gravity. CasADi gives::

    I(y) = d^2 T / d y_dot^2,    h = (d^2 T / d y_dot d y) y_dot - dT/dy + dV/dy + D y_dot,
    C(y, y_dot) = 1/2 (I_dot + d(I y_dot)/dy - d(I y_dot)/dy^T)   (Christoffel symbols; I_dot - 2 C is skew)

Only the chain's *model* (shape functions, placements, tip-frame rule, inertias) is shared with the recursive
algorithm; none of its integrals, twists or recursions are.
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexrobot_ros.flexible_links.beam_elements import ClampedBeamMesh
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain


def _rotation_about(axis: np.ndarray, angle: ca.SX) -> ca.SX:
    k = ca.SX(ca.DM(axis.reshape(3, 1)))
    K = ca.skew(k)
    return ca.SX.eye(3) + ca.sin(angle) * K + (1 - ca.cos(angle)) * (K @ K)


def _transform(R: np.ndarray | ca.SX, p: np.ndarray | ca.SX) -> tuple[ca.SX, ca.SX]:
    return ca.SX(R) if isinstance(R, np.ndarray) else R, ca.SX(p.reshape(3, 1)) if isinstance(p, np.ndarray) else p


@dataclass
class LagrangianDynamics:
    """CasADi functions of the chain's Lagrangian dynamics (numeric callables on numpy arrays)."""

    inertia: ca.Function        # (y) -> I
    bias: ca.Function           # (y, y_dot) -> h
    coriolis: ca.Function       # (y, y_dot) -> C
    inertia_dot: ca.Function    # (y, y_dot) -> I_dot
    energy: ca.Function         # (y, y_dot) -> [T, V_strain, V_gravity]
    placements: ca.Function     # (y) -> (12 n,): per body vec(R) (column-major) and p of B_i in the world; for a
    #                             sliding beam, its deformed tip frame (beam slopes turn it, as BeamLink.tip_motion)

    def forward_dynamics(self, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """y_ddot = I^-1 (tau - h)."""
        inertia = np.array(self.inertia(y))
        return np.linalg.solve(inertia, np.asarray(tau) - np.array(self.bias(y, y_dot)).ravel())


def lagrangian_dynamics(chain: FlexibleLinkChain, points_per_beam: int = 24) -> LagrangianDynamics:
    """Build the reference dynamics of ``chain``: ``points_per_beam`` Gauss-Legendre points per assumed-modes beam
    for the kinetic energy (4 per element, exact, for finite elements)."""
    y = ca.SX.sym("y", chain.size)
    yd = ca.SX.sym("yd", chain.size)
    n = chain.n
    R, p = ca.SX.eye(3), ca.SX.zeros(3, 1)
    kinetic = 0
    strain = 0
    gravity_potential = 0
    g = ca.DM(chain.gravity.reshape(3, 1))
    damping = ca.SX.zeros(chain.size, 1)
    previous = None
    frames = []
    for i, body in enumerate(chain.bodies):
        placement = body.placement
        Rj, pj = _transform(placement.rotation, placement.translation)
        if previous is not None and previous.beam is not None:
            beam = previous.beam
            eta = y[n + previous.eta.start:n + previous.eta.stop]
            a = ca.dot(ca.DM(beam.tip_slope_y), eta)
            b = -ca.dot(ca.DM(beam.tip_slope_z), eta)
            Rz = ca.vertcat(ca.horzcat(ca.cos(a), -ca.sin(a), 0), ca.horzcat(ca.sin(a), ca.cos(a), 0),
                            ca.horzcat(0, 0, 1))
            Ry = ca.vertcat(ca.horzcat(ca.cos(b), 0, ca.sin(b)), ca.horzcat(0, 1, 0),
                            ca.horzcat(-ca.sin(b), 0, ca.cos(b)))
            tip = beam.undeformed_tip()
            Rt, pt = _transform(tip.rotation, tip.translation)
            Rd, pd = Rz @ Ry, ca.DM(beam.tip_deflection) @ eta
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
                velocity = ca.substitute(ca.jtimes(point, y, yd), label, y[i] - xi)
                kinetic += 0.5 * weight * ca.dot(velocity, velocity)
                gravity_potential -= weight * ca.dot(g, ca.substitute(point, label, y[i] - xi))
            strain += sliding.strain_energy(eta, y[i])
        p = p + R @ (pj + Rj @ pq)
        R = R @ Rj @ Rq
        if body.sliding is not None:
            sliding = body.sliding
            eta = y[n + body.eta.start:n + body.eta.stop]
            tip_w, slopes = sliding.tip(eta, y[i])
            deflection = ca.DM(sliding.rotation[:, 1:1 + sliding.planes]) @ tip_w
            a, b = slopes[0], (-slopes[1] if sliding.planes == 2 else 0)
            Rz = ca.vertcat(ca.horzcat(ca.cos(a), -ca.sin(a), 0), ca.horzcat(ca.sin(a), ca.cos(a), 0),
                            ca.horzcat(0, 0, 1))
            Ry = ca.vertcat(ca.horzcat(ca.cos(b), 0, ca.sin(b)), ca.horzcat(0, 1, 0),
                            ca.horzcat(-ca.sin(b), 0, ca.cos(b)))
            beam = ca.DM(sliding.rotation)
            frames += [ca.vec(R @ beam @ Rz @ Ry @ beam.T), p + R @ deflection]
        else:
            frames += [ca.vec(R), p]
        # rigid part: 1/2 V^T I V with V the body twist
        Rdot = ca.reshape(ca.jtimes(ca.vec(R), y, yd), 3, 3)
        pdot = ca.jtimes(p, y, yd)
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
                velocity = ca.jtimes(point, y, yd)
                kinetic += 0.5 * wq * ca.dot(velocity, velocity)
                gravity_potential -= wq * ca.dot(g, point)
            strain += 0.5 * ca.dot(eta, ca.DM(beam.stiffness) @ eta)
            etad = yd[n + body.eta.start:n + body.eta.stop]
            damping[n + body.eta.start:n + body.eta.stop] = ca.DM(beam.damping) @ etad
        previous = body
    potential = strain + gravity_potential
    momentum = ca.gradient(kinetic, yd)
    inertia = ca.jacobian(momentum, yd)
    bias = ca.jtimes(momentum, y, yd) - ca.gradient(kinetic, y) + ca.gradient(potential, y) + damping
    inertia_y = inertia @ yd
    J1 = ca.jacobian(inertia_y, y)
    inertia_dot = ca.reshape(ca.jtimes(ca.vec(inertia), y, yd), chain.size, chain.size)
    coriolis = 0.5 * (inertia_dot + J1 - J1.T)
    cse = getattr(ca, "cse", lambda e: e)  # common subexpressions (CasADi >= 3.6): the sliding beams' roots
    return LagrangianDynamics(
        inertia=ca.Function("inertia", [y], [cse(ca.densify(inertia))]),
        bias=ca.Function("bias", [y, yd], [cse(ca.densify(bias))]),
        coriolis=ca.Function("coriolis", [y, yd], [ca.densify(coriolis)]),
        inertia_dot=ca.Function("inertia_dot", [y, yd], [ca.densify(inertia_dot)]),
        energy=ca.Function("energy", [y, yd], [ca.vertcat(kinetic, strain, gravity_potential)]),
        placements=ca.Function("placements", [y], [ca.vertcat(*frames)]),
    )


__all__ = ["LagrangianDynamics", "lagrangian_dynamics"]
