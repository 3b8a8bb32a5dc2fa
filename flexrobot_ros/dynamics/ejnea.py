"""EJNEA: numeric recursive Newton-Euler for tau, dtau/dt and d²tau/dt² of a serial chain in O(n).

After Buondonno & De Luca (2015), as summarized in thesis ch. 4: the forward recursion propagates, besides the
body velocities and accelerations, their time derivatives (up to the jerk of the velocity and the snap of the
acceleration); the backward recursion propagates the body wrenches and their first two time derivatives; the
joint torques' derivatives are their projections on the joint axes.

Formulation (spatial vectors in body coordinates, Featherstone's notation, pinocchio's frames; see
:mod:`.serial_chain`). With ``X`` the motion transform from parent to joint-i coordinates, ``s`` the constant
joint motion subspace in joint-i coordinates and ``w = s qd``:

* v_i = X v_p + s qd,   a_i = X a_p + s qdd + v_i x s qd   (a_0 = -gravity),
* f_i = I_i a_i + v_i x* I_i v_i,   F_i = f_i + X_{i+1}^T F_{i+1},   tau_i = s^T F_i (+ armature qdd).

Time derivatives of body-coordinate components use dX/dt = -(w x) X, hence
d/dt (X y) = X y' - w x (X y) and d/dt (X^T F) = X^T (F' + w x* F); all other terms follow from Leibniz' rule.
Every array operation is vectorized over the trajectory samples.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.serial_chain import SerialChain, TorqueDerivatives
from flexrobot_ros.errors import TrajectoryError

Vec = tuple[np.ndarray, np.ndarray]  # a spatial vector (linear, angular), each (samples, 3)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (samples, 3) arrays (faster than np.cross for short rows)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=1)


def _hat(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


class Ejnea:
    """EJNEA bound to one serial chain (the constants are prepared once; calls allocate only sample arrays)."""

    def __init__(self, model: pin.Model | SerialChain):
        chain = model if isinstance(model, SerialChain) else SerialChain.from_model(model)
        self.chain = chain
        self.n = chain.n
        self._hat_axis = [_hat(a).T for a in chain.axis]  # x @ hat(a).T == a x x, row-wise
        self._hat_p0 = [_hat(p).T for p in chain.translation]
        self._hat_com = [_hat(c).T for c in chain.com]
        self._axis_parent = [r @ a for r, a in zip(chain.rotation, chain.axis)]  # prismatic axis in parent frame
        self._inertia_origin = [
            ic + m * (c @ c * np.eye(3) - np.outer(c, c)) for m, c, ic in zip(chain.mass, chain.com, chain.inertia)]

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
        if self.chain.revolute[j]:
            return z[0] @ hat, z[1] @ hat
        return z[1] @ hat, np.zeros_like(z[1])

    def _s_cross_force(self, j: int, f: Vec) -> Vec:
        """s_j x* f for a force vector f."""
        hat = self._hat_axis[j]
        if self.chain.revolute[j]:
            return f[0] @ hat, f[1] @ hat
        return np.zeros_like(f[0]), f[0] @ hat

    def _rotate(self, j: int, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, inverse: bool) -> np.ndarray:
        """R_j^T x (inverse) or R_j x, where R_j = R0_j exp(hat(a_j) q_j) rotates joint-j into parent axes."""
        r0, a = self.chain.rotation[j], self.chain.axis[j]
        if inverse:
            x = x @ r0  # R0^T x, row-wise
        if self.chain.revolute[j]:
            sign = -1.0 if inverse else 1.0
            ax = x @ self._hat_axis[j]
            x = x * cos[:, None] + sign * sin[:, None] * ax + (1.0 - cos)[:, None] * (x @ a)[:, None] * a
        if not inverse:
            x = x @ r0.T
        return x

    def _to_child(self, j: int, z: Vec, q: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Vec:
        """X_j z: a motion vector from parent to joint-j coordinates."""
        lin = z[0] - z[1] @ self._hat_p0[j]  # v + w x p0  (w x p0 = -p0 x w)
        if not self.chain.revolute[j]:
            lin = lin + q[:, None] * _cross(z[1], np.broadcast_to(self._axis_parent[j], z[1].shape))
        return self._rotate(j, lin, cos, sin, True), self._rotate(j, z[1], cos, sin, True)

    def _to_parent(self, j: int, f: Vec, q: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> Vec:
        """X_j^T f: a force vector from joint-j to parent coordinates."""
        force = self._rotate(j, f[0], cos, sin, False)
        moment = self._rotate(j, f[1], cos, sin, False) + force @ self._hat_p0[j]  # R n + p0 x f
        if not self.chain.revolute[j]:
            moment = moment + q[:, None] * _cross(np.broadcast_to(self._axis_parent[j], force.shape), force)
        return force, moment

    def _inertia_times(self, j: int, v: Vec) -> Vec:
        """I_j v: the spatial inertia of body j (about the joint origin) applied to a motion vector."""
        m, c_hat_t = self.chain.mass[j], self._hat_com[j]
        force = m * (v[0] - v[1] @ c_hat_t)  # m (v + w x c)
        moment = v[1] @ self._inertia_origin[j].T + m * (v[0] @ c_hat_t)  # I_O w + m c x v
        return force, moment

    # -- the recursion ----------------------------------------------------------------------------------------
    def _evaluate(self, derivatives: list[np.ndarray]) -> list[np.ndarray]:
        samples = derivatives[0].shape[0]
        zero = np.zeros((samples, 3))
        gravity = np.broadcast_to(-self.chain.gravity, (samples, 3))
        v_parent: list[Vec] = [(zero, zero)] * 3
        a_parent: list[Vec] = [(gravity, zero), (zero, zero), (zero, zero)]
        per_joint = []
        for j in range(self.n):
            q, qd, qdd, q3, q4 = (x[:, j] for x in derivatives)
            cos, sin = np.cos(q), np.sin(q)
            vel = self._transport_motion(j, v_parent, q, qd, qdd, cos, sin)
            acc = self._transport_motion(j, a_parent, q, qd, qdd, cos, sin)
            axis = self.chain.axis[j]
            col = 1 if self.chain.revolute[j] else 0
            for k, qk in enumerate((qd, qdd, q3)):
                vel[k] = _add_axis(vel[k], col, qk[:, None] * axis)
            for k, qk in enumerate((qdd, q3, q4)):
                acc[k] = _add_axis(acc[k], col, qk[:, None] * axis)
            joint_rates = (qd, qdd, q3)
            for k in range(3):
                for m in range(k + 1):
                    sv = self._s_cross_motion(j, vel[m])  # s x v = -(v x s)
                    scale = -_BINOMIAL[k][m] * joint_rates[k - m][:, None]
                    acc[k] = (acc[k][0] + scale * sv[0], acc[k][1] + scale * sv[1])
            wrench = []
            inertia_v = [self._inertia_times(j, v) for v in vel]
            for k in range(3):
                f = self._inertia_times(j, acc[k])
                force, moment = f
                for m in range(k + 1):
                    v, h = vel[m], inertia_v[k - m]
                    b = _BINOMIAL[k][m]
                    force = force + b * _cross(v[1], h[0])
                    moment = moment + b * (_cross(v[1], h[1]) + _cross(v[0], h[0]))
                wrench.append((force, moment))
            per_joint.append((wrench, q, qd, qdd, cos, sin))
            v_parent, a_parent = vel, acc
        tau = [np.empty((samples, self.n)) for _ in range(3)]
        child: list[Vec] | None = None
        for j in reversed(range(self.n)):
            wrench, q, qd, qdd, cos, sin = per_joint[j]
            if child is not None:
                wrench = [(w[0] + c[0], w[1] + c[1]) for w, c in zip(wrench, child)]
            col = 1 if self.chain.revolute[j] else 0
            axis = self.chain.axis[j]
            rates = (derivatives[2][:, j], derivatives[3][:, j], derivatives[4][:, j])
            for k in range(3):
                tau[k][:, j] = wrench[k][col] @ axis + self.chain.armature[j] * rates[k]
            if j > 0:
                child = self._transport_force(j, wrench, q, qd, qdd, cos, sin)
        return tau

    def _transport_motion(self, j: int, z: list[Vec], q, qd, qdd, cos, sin) -> list[Vec]:
        """Derivatives 0..2 of X_j z(t) from those of z (parent coordinates)."""
        x0, x1, x2 = (self._to_child(j, zk, q, cos, sin) for zk in z)
        s0 = self._s_cross_motion(j, x0)
        s1 = self._s_cross_motion(j, x1)
        ss0 = self._s_cross_motion(j, s0)
        a, b = qd[:, None], qdd[:, None]
        d1 = (x1[0] - a * s0[0], x1[1] - a * s0[1])
        d2 = tuple(x2[i] - 2.0 * a * s1[i] - b * s0[i] + a * a * ss0[i] for i in range(2))
        return [x0, d1, d2]

    def _transport_force(self, j: int, f: list[Vec], q, qd, qdd, cos, sin) -> list[Vec]:
        """Derivatives 0..2 of X_j^T F(t) from those of F (joint-j coordinates)."""
        s0 = self._s_cross_force(j, f[0])
        s1 = self._s_cross_force(j, f[1])
        ss0 = self._s_cross_force(j, s0)
        a, b = qd[:, None], qdd[:, None]
        l1 = tuple(f[1][i] + a * s0[i] for i in range(2))
        l2 = tuple(f[2][i] + 2.0 * a * s1[i] + b * s0[i] + a * a * ss0[i] for i in range(2))
        return [self._to_parent(j, x, q, cos, sin) for x in (f[0], l1, l2)]


_BINOMIAL = ((1.0,), (1.0, 1.0), (1.0, 2.0, 1.0))


def _add_axis(z: Vec, col: int, term: np.ndarray) -> Vec:
    return (z[0] + term, z[1]) if col == 0 else (z[0], z[1] + term)


def ejnea(model: pin.Model | SerialChain, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> TorqueDerivatives:
    """tau, dtau/dt and d²tau/dt² of a serial chain by EJNEA (see :class:`Ejnea`; arrays (samples, n) or (n,))."""
    return Ejnea(model)(q, qd, qdd, q3, q4)
