"""CasADi functions of the composed elastic-robot model (:mod:`.elastic_robot`): the same terms as symbolic
expressions, for exact derivatives and generated code (issue 24).

Coordinates and equations are :mod:`.elastic_robot`'s (y = [q_a (na), eta (m), q_m (n_el)], SI units, world
frame of the URDF base)::

    M(y) y_ddot + h(y, y_dot) + f_el(y) + f_d(y_dot) = S u + f

with f (size,) [N m | N] a generalized external force (``J^T w`` of wrenches, evaluated by the caller). The chain's
inertia and bias come from the CasADi Lagrangian of :mod:`.lagrangian` (the same chain the DeNOC recursion
evaluates; equal to it to round-off; a sliding beam's integrated roots replaced by its explicit roots, which they
equal along a motion started on them), rotors, joint springs, gear and extra dampers, modal damping and smoothed
Coulomb friction ``f_c tanh(v / coulomb_width)`` from :func:`force_function` (the single implementation of those
terms; :class:`~.elastic_robot.ElasticRobot` evaluates it too). The Coulomb terms carry a switch ``c`` (1 on, 0 off:
linearizations about rest leave them out).

Derivatives are exact: ``d y_ddot / d(y, y_dot, u)`` by the implicit-function rule on the residual
``r(y, y_dot, a) = M a + h + f_el + f_d - S u - f``: ``d a / d(.) = -M^-1 dr/d(.)`` at ``a = y_ddot``.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

import casadi as ca
import numpy as np

from flexrobot_ros.flexible_links.compiled_dynamics import quadrature_points
from flexrobot_ros.flexible_links.deformed_frames import deformed_frame_position_expression
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics


def _selection(rows: np.ndarray, size: int) -> ca.DM:
    """P (len(rows), size) with P y = y[rows]."""
    out = np.zeros((len(rows), size))
    out[np.arange(len(rows)), np.asarray(rows, dtype=int)] = 1.0
    return ca.DM(out)


def force_function(model: Any) -> ca.Function:
    """``forces(y, y_dot, c) -> (f_el (size,), f_d (size,), coulomb slope (size,))`` [N m | N; N m s/rad | N s/m]
    of an :class:`~.elastic_robot.ElasticRobot`'s parameters: joint springs s = K (W q - q_m) (W s on q, -s on q_m),
    extra springs K_e q_e, beam strain K_eta eta; viscous friction D qd, gear damping g = D_g (W qd - qd_m) (W g on
    q, -g on q_m), motor damping D_m qd_m, extra and modal dampers, and ``c`` times the smoothed Coulomb friction
    ``coulomb_force tanh(y_dot / width)`` on link and motor sides; the slope is d(f_d)/d(y_dot) of the Coulomb part
    alone (diagonal), at c = 1."""
    size = model.size
    y, yd, c = ca.SX.sym("y", size), ca.SX.sym("yd", size), ca.SX.sym("c")
    P_q = _selection(model.q_index, size)
    P_j = _selection(model.q_index[model.elastic_joints], size)
    P_m = _selection(model.motor_index, size)
    P_e = _selection(model.qe_index, size)
    P_eta = _selection(np.arange(model.eta.start, model.eta.stop), size)
    w, k = ca.DM(model._w), ca.DM(model._k)
    spring = k * (w * (P_j @ y) - P_m @ y)
    elastic = (P_j.T @ (w * spring) - P_m.T @ spring + P_e.T @ (ca.DM(model._ke) * (P_e @ y))
               + P_eta.T @ (ca.DM(model.beam_stiffness) @ (P_eta @ y)))
    qd, qd_m = P_q @ yd, P_m @ yd
    gear = ca.DM(model._dg) * (w * (P_j @ yd) - qd_m)
    viscous = (P_q.T @ (ca.DM(model._d) * qd) + P_j.T @ (w * gear) + P_m.T @ (ca.DM(model._dm) * qd_m - gear)
               + P_e.T @ (ca.DM(model._de) * (P_e @ yd)) + P_eta.T @ (ca.DM(model.beam_damping) @ (P_eta @ yd)))
    width = model.width
    coulomb = ca.DM(model.coulomb_force) * ca.tanh(yd / width)
    slope = ca.diag(ca.jacobian(coulomb, yd))
    return ca.Function("elastic_robot_forces", [y, yd, c], [elastic, viscous + c * coulomb, slope])


def force_function_slopes(forces: ca.Function, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(d f_el/dy, d f_d/dy_dot) (size, size) of :func:`force_function`'s ``forces`` with Coulomb off: constant
    matrices (stiffness [N m/rad | N/m], viscous damping [N m s/rad | N s/m]), the springs and dampers being
    linear."""
    y, yd = ca.SX.sym("y", size), ca.SX.sym("yd", size)
    elastic, dissipative, _ = forces(y, yd, 0.0)
    slopes = ca.Function("elastic_robot_force_slopes", [y, yd],
                         [ca.densify(ca.jacobian(elastic, y)), ca.densify(ca.jacobian(dissipative, yd))])
    stiffness, damping = slopes(np.zeros(size), np.zeros(size))
    return np.array(stiffness), np.array(damping)


class ElasticRobotFunctions:
    """Symbolic terms, forward dynamics and exact Jacobians of ``model`` (an
    :class:`~.elastic_robot.ElasticRobot`), as CasADi functions on numpy arrays:

    * ``inertia(y) -> M``, ``bias(y, y_dot) -> h`` (the model's ``inertia``/``bias``);
    * ``forward_dynamics(y, y_dot, u, f, c) -> y_ddot`` (the linear solve inside);
    * ``derivatives(y, y_dot, u, f, c, a) -> (M, dr/dy, dr/dy_dot, dr/du)``: the implicit-function pieces
      (:meth:`acceleration_jacobian` finishes them), built on first use;
    * ``linearization(y) -> (M, D, K)``: ``D = d(h + f_d)/dy_dot``, ``K = d(h + f_el)/dy`` at (y, 0), Coulomb off,
      built on first use;
    * :meth:`frame_position` ``(frame_id)``: the position expression of a frame following the deformed links.

    Symbols are exposed (``y``, ``y_dot``, ``u``, ``f``, ``c`` and the expressions ``y_ddot``, ``residual``) so
    that a plant can compose its own state derivative and compile it."""

    def __init__(self, model: Any):
        size, c_size = model.size, model.chain.size
        lagrangian = model.chain_dynamics.lagrangian
        if lagrangian is None:
            lagrangian = lagrangian_dynamics(model.chain, quadrature_points(model.chain))
        self._model, self._lagrangian = model, lagrangian
        self.y, self.y_dot = ca.SX.sym("y", size), ca.SX.sym("yd", size)
        self.u, self.f, self.c = ca.SX.sym("u", model.n), ca.SX.sym("f", size), ca.SX.sym("c")
        self.a = ca.SX.sym("a", size)
        y, yd = self.y, self.y_dot
        P_eta = _selection(np.arange(model.eta.start, model.eta.stop), size)
        z = y[:c_size]
        roots = [lagrangian.explicit_roots(z)] if lagrangian.roots else []  # integrated roots: equal to these
        M = ca.diagcat(lagrangian.inertia(z, *roots), ca.diag(ca.DM(model._b)))
        h = (ca.vertcat(lagrangian.bias(z, yd[:c_size], *roots), ca.SX.zeros(model.n_el))
             - P_eta.T @ (ca.DM(model.beam_stiffness) @ (P_eta @ y) + ca.DM(model.beam_damping) @ (P_eta @ yd)))
        elastic, dissipative, _ = model.force_function(y, yd, self.c)
        self.inertia_expression, self.bias_expression = M, h
        self.dissipative_expression = dissipative
        applied = ca.DM(model.input_map) @ self.u + self.f
        self.applied_expression = applied
        self.y_ddot = ca.solve(M, applied - elastic - dissipative - h)
        self.residual = M @ self.a + h + elastic + dissipative - applied
        self.inertia = ca.Function("elastic_robot_inertia", [y], [M])
        self.bias = ca.Function("elastic_robot_bias", [y, yd], [h])
        self._elastic = elastic
        self.forward_dynamics = ca.Function("elastic_robot_fd", [y, yd, self.u, self.f, self.c], [self.y_ddot])

    @cached_property
    def derivatives(self) -> ca.Function:
        """(y, y_dot, u, f, c, a) -> (M, dr/dy, dr/dy_dot, dr/du) of the residual, built on first use (the
        Jacobians of the Lagrangian's terms are most of this class's build time: 0.7 s on a 7-joint arm)."""
        r = self.residual
        return ca.Function("elastic_robot_fd_derivatives", [self.y, self.y_dot, self.u, self.f, self.c, self.a],
                           [self.inertia_expression, ca.jacobian(r, self.y), ca.jacobian(r, self.y_dot),
                            ca.jacobian(r, self.u)])

    @cached_property
    def linearization(self) -> ca.Function:
        """(y) -> (M, D, K) at (y, 0), Coulomb off (class docstring), built on first use."""
        y, yd, zero = self.y, self.y_dot, ca.SX.zeros(self._model.size)
        h, M = self.bias_expression, self.inertia_expression
        static = ca.substitute(h + self._elastic, yd, zero)
        damping = ca.substitute(ca.substitute(ca.jacobian(h + self.dissipative_expression, yd), yd, zero), self.c,
                                ca.SX(0.0))
        return ca.Function("elastic_robot_linearization", [y], [M, damping, ca.jacobian(static, y)])

    def frame_position(self, frame_id: int) -> ca.SX:
        """World position (3,) [m] of frame ``frame_id`` (:meth:`ElasticRobot.frame_id`) as an expression of the
        symbol ``y``: the translation of :meth:`ElasticRobot.frame_placement`, following the deformed beams."""
        model, lagrangian = self._model, self._lagrangian
        z = self.y[:model.chain.size]
        placements = lagrangian.placements(*([z] + ([lagrangian.explicit_roots(z)] if lagrangian.roots else [])))
        return deformed_frame_position_expression(model.model, model.chain, frame_id, z, placements)

    def acceleration_jacobian(self, y: np.ndarray, y_dot: np.ndarray, u: np.ndarray, f: np.ndarray,
                              c: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(y_ddot (size,), d y_ddot/dy, d y_ddot/dy_dot (size, size), d y_ddot/du (size, n)), exact."""
        a = np.array(self.forward_dynamics(y, y_dot, u, f, c)).ravel()
        M, r_y, r_yd, r_u = (np.array(v) for v in self.derivatives(y, y_dot, u, f, c, a))
        slopes = np.linalg.solve(M, -np.hstack([r_y, r_yd, r_u]))
        size = len(a)
        return a, slopes[:, :size], slopes[:, size:2 * size], slopes[:, 2 * size:]


__all__ = ["ElasticRobotFunctions", "force_function", "force_function_slopes"]
