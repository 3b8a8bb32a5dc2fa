"""EJNEA: numeric recursive Newton-Euler for tau, dtau/dt and d²tau/dt² of a kinematic tree in O(n).

After Buondonno & De Luca (2015), as summarized in thesis ch. 4: the forward recursion propagates, besides the
body velocities and accelerations, their time derivatives (up to the jerk of the velocity and the snap of the
acceleration); the backward recursion propagates the body wrenches and their first two time derivatives; the
joint torques' derivatives are their projections on the joint axes.

Formulation (spatial vectors in body coordinates, Featherstone's notation, pinocchio's frames; see
:mod:`.kinematic_tree`). With ``p`` the parent of joint ``i`` (the base for a joint on it), ``X`` the motion
transform from parent to joint-i coordinates, ``s`` the constant joint motion subspace in joint-i coordinates and
``w = s qd``:

* v_i = X v_p + s qd,   a_i = X a_p + s qdd + v_i x s qd   (v_base = 0, a_base = -gravity),
* f_i = I_i a_i + v_i x* I_i v_i,   F_i = f_i + sum_{c child of i} X_c^T F_c,   tau_i = s^T F_i (+ armature qdd).

The forward pass visits the joints in pinocchio's (topological) order, the backward pass in reverse, so a serial
chain costs exactly what it did as a chain.

Time derivatives of body-coordinate components use dX/dt = -(w x) X, hence
d/dt (X y) = X y' - w x (X y) and d/dt (X^T F) = X^T (F' + w x* F); all other terms follow from Leibniz' rule.
Every array operation is vectorized over the trajectory samples.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.kinematic_tree import KinematicTree, TorqueDerivatives
from flexrobot_ros.errors import TrajectoryError

Vec = tuple[np.ndarray, np.ndarray]  # spatial vectors (linear, angular), each (..., samples, 3)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis of broadcastable (..., 3) arrays (faster than np.cross for short rows)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _hat(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


class Ejnea:
    """EJNEA bound to one kinematic tree (the constants are prepared once; calls allocate only sample arrays)."""

    def __init__(self, model: pin.Model | KinematicTree):
        tree = model if isinstance(model, KinematicTree) else KinematicTree.from_model(model)
        self.tree = tree
        self.n = tree.n
        #: the last child of each joint (-1: none): its parent's jets are kept until that child has read them
        self._last_child = np.full(tree.n, -1)
        for j, p in enumerate(tree.parents):
            if p >= 0:
                self._last_child[p] = j
        self._hat_axis = [_hat(a).T for a in tree.axis]  # x @ hat(a).T == a x x, row-wise
        self._hat_p0 = [_hat(p).T for p in tree.translation]
        self._hat_com = [_hat(c).T for c in tree.com]
        self._axis_parent = [r @ a for r, a in zip(tree.rotation, tree.axis)]  # prismatic axis in parent frame
        self._inertia_origin = [
            ic + m * (c @ c * np.eye(3) - np.outer(c, c)) for m, c, ic in zip(tree.mass, tree.com, tree.inertia)]

    def __call__(self, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> TorqueDerivatives:
        """tau, dtau, ddtau at (samples, n) or (n,) joint positions, velocities, accelerations, jerks, snaps."""
        derivatives = [np.asarray(x, dtype=float) for x in (q, qd, qdd, q3, q4)]
        single = derivatives[0].ndim == 1
        derivatives = [np.atleast_2d(x) for x in derivatives]
        shape = derivatives[0].shape
        for name, x in zip(("q", "qd", "qdd", "q3", "q4"), derivatives):
            if x.ndim != 2 or x.shape != shape or shape[1] != self.n:
                raise TrajectoryError(f"{name}: shape {x.shape}; expected (samples, {self.n}) like q")
        tau = self._evaluate(derivatives)
        if single:
            tau = [x[0] for x in tau]
        return TorqueDerivatives(*tau)

    # -- spatial algebra on (linear, angular) pairs ------------------------------------------------------------
    def _s_cross_motion(self, j: int, z: Vec) -> Vec:
        """s_j x z for a motion vector z (s_j the joint's motion subspace)."""
        hat = self._hat_axis[j]
        if self.tree.revolute[j]:
            return z[0] @ hat, z[1] @ hat
        return z[1] @ hat, np.zeros_like(z[1])

    def _s_cross_force(self, j: int, f: Vec) -> Vec:
        """s_j x* f for a force vector f."""
        hat = self._hat_axis[j]
        if self.tree.revolute[j]:
            return f[0] @ hat, f[1] @ hat
        return np.zeros_like(f[0]), f[0] @ hat

    def _rotate(self, j: int, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, inverse: bool) -> np.ndarray:
        """R_j^T x (inverse) or R_j x, where R_j = R0_j exp(hat(a_j) q_j) rotates joint-j into parent axes."""
        r0, a = self.tree.rotation[j], self.tree.axis[j]
        if inverse:
            x = x @ r0  # R0^T x, row-wise
        if self.tree.revolute[j]:
            sign = -1.0 if inverse else 1.0
            ax = x @ self._hat_axis[j]
            x = x * cos[:, None] + sign * sin[:, None] * ax + (1.0 - cos)[:, None] * (x @ a)[..., None] * a
        if not inverse:
            x = x @ r0.T
        return x

    def _to_child(self, j: int, z: Vec, q: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Vec:
        """X_j z: a motion vector from parent to joint-j coordinates."""
        lin = z[0] - z[1] @ self._hat_p0[j]  # v + w x p0  (w x p0 = -p0 x w)
        if not self.tree.revolute[j]:
            lin = lin + q[:, None] * _cross(z[1], np.broadcast_to(self._axis_parent[j], z[1].shape))
        return self._rotate(j, lin, cos, sin, True), self._rotate(j, z[1], cos, sin, True)

    def _to_parent(self, j: int, f: Vec, q: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Vec:
        """X_j^T f: a force vector from joint-j to parent coordinates."""
        force = self._rotate(j, f[0], cos, sin, False)
        moment = self._rotate(j, f[1], cos, sin, False) + force @ self._hat_p0[j]  # R n + p0 x f
        if not self.tree.revolute[j]:
            moment = moment + q[:, None] * _cross(np.broadcast_to(self._axis_parent[j], force.shape), force)
        return force, moment

    def _inertia_times(self, j: int, v: Vec) -> Vec:
        """I_j v: the spatial inertia of body j (about the joint origin) applied to a motion vector."""
        m, c_hat_t = self.tree.mass[j], self._hat_com[j]
        force = m * (v[0] - v[1] @ c_hat_t)  # m (v + w x c)
        moment = v[1] @ self._inertia_origin[j].T + m * (v[0] @ c_hat_t)  # I_O w + m c x v
        return force, moment

    # -- the recursion ----------------------------------------------------------------------------------------
    # Jets are stacked along a leading axis: x[k] is the k-th time derivative (k = 0, 1, 2) of the components.
    def _evaluate(self, derivatives: list[np.ndarray]) -> list[np.ndarray]:
        samples = derivatives[0].shape[0]
        parents = self.tree.parents
        base_a_lin = np.zeros((3, samples, 3))
        base_a_lin[0] = -self.tree.gravity  # a_0 = -g (Featherstone's fictitious base acceleration)
        base = (np.zeros((3, samples, 3)), np.zeros((3, samples, 3)), base_a_lin, np.zeros((3, samples, 3)))
        motion: list[tuple[np.ndarray, ...] | None] = [None] * self.n  # jets of a joint with children still to visit
        per_joint = []
        for j in range(self.n):
            p = parents[j]
            v_lin, v_ang, a_lin, a_ang = base if p < 0 else motion[p]
            if p >= 0 and self._last_child[p] == j:
                motion[p] = None  # every child of p has its parent's jets now
            q = derivatives[0][:, j]
            rates = np.stack([x[:, j] for x in derivatives[1:]])  # q^(1) .. q^(4), (4, samples)
            cos, sin = np.cos(q), np.sin(q)
            # velocity and acceleration jets transported together: X_j [v; a]
            lin, ang = self._transport_motion(j, (np.concatenate([v_lin, a_lin]), np.concatenate([v_ang, a_ang])),
                                              q, rates, cos, sin)
            v_lin, v_ang, a_lin, a_ang = lin[:3], ang[:3], lin[3:], ang[3:]
            axis = self.tree.axis[j]
            joint_v, joint_a = rates[:3, :, None] * axis, rates[1:, :, None] * axis  # s q^(k+1), s q^(k+2)
            if self.tree.revolute[j]:
                v_ang, a_ang = v_ang + joint_v, a_ang + joint_a
            else:
                v_lin, a_lin = v_lin + joint_v, a_lin + joint_a
            # a^(k) += sum_m C(k, m) v^(m) x s q^(k-m+1)  =  - sum_m C(k, m) q^(k-m+1) s x v^(m)
            sv_lin, sv_ang = self._s_cross_motion(j, (v_lin, v_ang))
            a_lin = a_lin - _leibniz_rates(rates, sv_lin)
            a_ang = a_ang - _leibniz_rates(rates, sv_ang)
            if self._last_child[j] >= 0:
                motion[j] = (v_lin, v_ang, a_lin, a_ang)
            # f^(k) = I a^(k) + sum_m C(k, m) v^(m) x* I v^(k-m)
            force, moment = self._inertia_times(j, (a_lin, a_ang))
            h_force, h_moment = self._inertia_times(j, (v_lin, v_ang))
            w_m, v_m = v_ang[:, None], v_lin[:, None]
            force = force + _leibniz_pairs(_cross(w_m, h_force[None]))
            moment = moment + _leibniz_pairs(_cross(w_m, h_moment[None]) + _cross(v_m, h_force[None]))
            per_joint.append((force, moment, q, rates, cos, sin))
        tau = [np.empty((samples, self.n)) for _ in range(3)]
        children: list[Vec | None] = [None] * self.n  # the wrench jets the children pass to each joint, summed
        for j in reversed(range(self.n)):
            force, moment, q, rates, cos, sin = per_joint[j]
            child = children[j]
            if child is not None:
                force, moment = force + child[0], moment + child[1]
            projected = (moment if self.tree.revolute[j] else force) @ self.tree.axis[j]  # (3, samples)
            for k in range(3):
                tau[k][:, j] = projected[k] + self.tree.armature[j] * rates[k + 1]
            p = parents[j]
            if p >= 0:
                transported = self._transport_force(j, (force, moment), q, rates, cos, sin)
                sibling = children[p]
                children[p] = transported if sibling is None else \
                    (sibling[0] + transported[0], sibling[1] + transported[1])
        return tau

    def _transport_motion(self, j: int, z: Vec, q, rates, cos, sin) -> Vec:
        """Derivatives of X_j z(t) from those of z (parent coordinates); z stacks jets of 3 orders, possibly twice.

        With Z_k = X_j z^(k) and w = s qd: (X z)' = Z_1 - w x Z_0 and
        (X z)'' = Z_2 - 2 w x Z_1 - w' x Z_0 + w x (w x Z_0).
        """
        lin, ang = self._to_child(j, z, q, cos, sin)
        s_lin, s_ang = self._s_cross_motion(j, (lin, ang))
        base = np.arange(0, lin.shape[0], 3)  # order-0 entries of each stacked jet
        ss_lin, ss_ang = self._s_cross_motion(j, (s_lin[base], s_ang[base]))
        qd, qdd = rates[0][:, None], rates[1][:, None]
        for y, sx, ssx in ((lin, s_lin, ss_lin), (ang, s_ang, ss_ang)):  # y is a fresh array: update in place
            y[base + 1] -= qd * sx[base]
            y[base + 2] -= 2.0 * qd * sx[base + 1] + qdd * sx[base] - qd * qd * ssx
        return lin, ang

    def _transport_force(self, j: int, f: Vec, q, rates, cos, sin) -> Vec:
        """Derivatives 0..2 of X_j^T F(t) from those of F (joint-j coordinates): X^T L^k F with L F = F' + w x* F."""
        s_force, s_moment = self._s_cross_force(j, f)
        ss_force, ss_moment = self._s_cross_force(j, (s_force[0], s_moment[0]))
        qd, qdd = rates[0][:, None], rates[1][:, None]
        out = []
        for x, sx, ssx in ((f[0], s_force, ss_force), (f[1], s_moment, ss_moment)):
            out.append(np.stack([x[0], x[1] + qd * sx[0], x[2] + 2.0 * qd * sx[1] + qdd * sx[0] + qd * qd * ssx]))
        return self._to_parent(j, (out[0], out[1]), q, cos, sin)


def _leibniz_rates(rates: np.ndarray, x: np.ndarray) -> np.ndarray:
    """k-th derivative (k = 0, 1, 2) of qd(t) x(t) from the jets of qd (rates[0..2]) and x, stacked."""
    qd, qdd, q3 = rates[0][:, None], rates[1][:, None], rates[2][:, None]
    return np.stack([qd * x[0], qdd * x[0] + qd * x[1], q3 * x[0] + 2.0 * qdd * x[1] + qd * x[2]])


def _leibniz_pairs(products: np.ndarray) -> np.ndarray:
    """k-th derivative of a bilinear product b(u, v) from products[m, l] = b(u^(m), v^(l)), stacked."""
    p = products
    return np.stack([p[0, 0], p[1, 0] + p[0, 1], p[2, 0] + 2.0 * p[1, 1] + p[0, 2]])


def ejnea(model: pin.Model | KinematicTree, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> TorqueDerivatives:
    """tau, dtau/dt and d²tau/dt² of a kinematic tree by EJNEA (see :class:`Ejnea`; arrays (samples, n) or (n,))."""
    return Ejnea(model)(q, qd, qdd, q3, q4)
