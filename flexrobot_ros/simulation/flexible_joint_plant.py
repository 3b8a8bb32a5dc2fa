"""Forward dynamics of the reduced flexible-joint robot (seed 000 eq. 2.1 / eqs. A I-20, A I-21) with friction.

::

    M(q) qdd + C(q, qd) qd + g(q) + D qd + f_c tanh(qd / w_c) + K W (W q - q_m) = sum_j J_j^T(q) w_j
    B qdd_m + D_m qd_m + f_cm tanh(qd_m / w_c) - K (W q - q_m) = tau_m

``q`` link coordinates [rad | m], ``q_m`` motor positions after the gear [rad], ``W = diag(1/r_i)`` (1 for revolute
joints), ``K`` joint stiffness, ``B = diag(N_i^2 I_r,i)``, ``D``/``D_m`` viscous and ``f_c``/``f_cm`` Coulomb friction
on the link/motor side, smoothed with ``w_c = robot.coulomb_width`` [rad/s | m/s] so that the right-hand side stays
smooth for the integrators (Coulomb force reaches 76 % of f_c at |v| = w_c and 99.9 % at 4 w_c).
``w_j`` are external wrenches [f; m] in world axes acting at the origin of frame j, mapped through the frame
Jacobian ``J_j`` in pinocchio's LOCAL_WORLD_ALIGNED convention. A tool is already part of ``robot.model``.

The link side is solved with pinocchio's ABA (``pin.aba``, one O(n) call: 3.0 us on the Scompi) rather than CRBA +
RNEA + a Cholesky solve (1.4 + 1.3 us plus about 5 us for numpy's 6x6 solve), measured in bench/simulator.py.
Jacobians use ``pin.computeABADerivatives`` (5.8 us), which also returns M^-1.

State layout: ``x = [q, q_m, qd, qd_m, dissipated, work_in]`` (4n + 2), with dissipated power
``qd.(D qd + f_c tanh) + qd_m.(D_m qd_m + f_cm tanh)`` and input power ``tau_m.qd_m + sum_j (J_j^T w_j).qd``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.simulation.plant import Energy, FrameWrench, StateLayout

_LWA = pin.LOCAL_WORLD_ALIGNED


class FlexibleJointPlant:
    """The flexible-joint robot of seed 000 eq. 2.1 as a :class:`~flexrobot_ros.simulation.plant.Plant`.

    Holds its own pinocchio ``Data`` (one plant per thread). Parameters are read from ``robot`` once; build a new
    plant from ``robot.with_parameters(...)`` to change them.
    """

    def __init__(self, robot: FlexibleRobot):
        self.robot = robot
        self.model = robot.model
        self.data = robot.create_data()
        n = self.n = robot.n
        self.joint_names = robot.joint_names
        self.layout = StateLayout(size=4 * n + 2, slices={
            "q": slice(0, n), "q_m": slice(n, 2 * n), "qd": slice(2 * n, 3 * n), "qd_m": slice(3 * n, 4 * n),
            "positions": slice(0, 2 * n), "velocities": slice(2 * n, 4 * n),
            "dissipated": slice(4 * n, 4 * n + 1), "work_in": slice(4 * n + 1, 4 * n + 2)})
        self._w = robot.transmission.copy()
        self._k = robot.stiffness.copy()
        self._kw = self._k * self._w
        self._d = robot.link_damping.copy()
        self._dm = robot.motor_damping.copy()
        self._cl = robot.link_coulomb.copy()
        self._cm = robot.motor_coulomb.copy()
        self._coulomb = bool(np.any(self._cl) or np.any(self._cm))
        self._viscous = np.concatenate([self._d, self._dm])
        self._coulomb_force = np.concatenate([self._cl, self._cm])
        self._width = float(robot.coulomb_width)
        self._b = robot.motor_inertia.copy()
        self._inv_b = 1.0 / self._b

    # ------------------------------------------------------------------ plant protocol
    def frame_id(self, name: str) -> int:
        """Index of the pinocchio frame ``name`` (ModelError listing the known frames otherwise)."""
        return self.robot.frame_id(name)

    def state(self, q, q_m, qd=None, qd_m=None) -> np.ndarray:
        """``x = [q, q_m, qd, qd_m, 0, 0]``; each argument is validated (length n, finite) with a ModelError."""
        robot = self.robot
        parts = [robot.check_q(q, "q"), robot.check_q(q_m, "q_m"),
                 np.zeros(self.n) if qd is None else robot.check_q(qd, "qd"),
                 np.zeros(self.n) if qd_m is None else robot.check_q(qd_m, "qd_m"), np.zeros(2)]
        return np.concatenate(parts)

    def external_torque(self, q: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """Generalized force ``sum_j J_j^T(q) w_j`` (n,) [N m | N] of world-axes wrenches at frame origins."""
        tau = np.zeros(self.n)
        for frame_id, wrench in wrenches:
            tau += pin.computeFrameJacobian(self.model, self.data, q, frame_id, _LWA).T @ wrench
        return tau

    def friction(self, qd: np.ndarray, qd_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Link-side and motor-side friction torques (viscous + smoothed Coulomb) [N m | N]."""
        if not self._coulomb:
            return self._d * qd, self._dm * qd_m
        width = self._width
        return (self._d * qd + self._cl * np.tanh(qd / width),
                self._dm * qd_m + self._cm * np.tanh(qd_m / width))

    def derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench] = ()) -> np.ndarray:
        """``xdot`` (4n + 2,) of seed 000 eq. 2.1 with friction, motor torques ``tau_m`` (n,) and wrenches."""
        n = self.n
        q, q_m, velocities = x[:n], x[n:2 * n], x[2 * n:4 * n]
        qd, qd_m = velocities[:n], velocities[n:]
        spring = self._k * (self._w * q - q_m)
        friction = self._viscous * velocities
        if self._coulomb:
            friction += self._coulomb_force * np.tanh(velocities / self._width)
        tau_link = -self._w * spring - friction[:n]
        power_in = tau_m @ qd_m
        if wrenches:
            tau_ext = self.external_torque(q, wrenches)
            tau_link += tau_ext
            power_in += tau_ext @ qd
        qdd = pin.aba(self.model, self.data, q, qd, tau_link)
        qdd_m = (tau_m + spring - friction[n:]) * self._inv_b
        return np.concatenate((velocities, qdd, qdd_m, (velocities @ friction, power_in)))

    def jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                 wrenches: Sequence[FrameWrench] = (), coulomb: bool = True) -> np.ndarray:
        """d(xdot)/dx (4n + 2, 4n + 2) for a torque law with state Jacobian ``dtau_dx`` (n, 4n + 2).

        Exact for the rigid-body terms (pinocchio ``computeABADerivatives``), springs, friction and the energy
        integrals, except that the configuration dependence of ``J^T(q) w`` (the geometric stiffness of an external
        wrench) is left out: wrenches are short excitations, and the Jacobian only steers the integrators.
        ``coulomb=False`` leaves the Coulomb slopes out of the acceleration rows (see :meth:`coulomb_damping`).
        """
        n, size = self.n, self.layout.size
        q, q_m, qd, qd_m = x[:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:4 * n]
        spring = self._k * (self._w * q - q_m)
        f_link, f_motor = self.friction(qd, qd_m)
        slope_link, slope_motor = self._d.copy(), self._dm.copy()
        if self._coulomb and coulomb:
            slope_link += self._coulomb_slope(self._cl, qd)
            slope_motor += self._coulomb_slope(self._cm, qd_m)
        tau_ext = self.external_torque(q, wrenches) if wrenches else np.zeros(n)
        tau_link = -self._w * spring - f_link + tau_ext
        ddq_dq, ddq_dv, m_inv = (np.array(a) for a in pin.computeABADerivatives(self.model, self.data, q, qd,
                                                                                 tau_link))
        jac = np.zeros((size, size))
        jac[:n, 2 * n:3 * n] = np.eye(n)
        jac[n:2 * n, 3 * n:4 * n] = np.eye(n)
        link = slice(2 * n, 3 * n)
        jac[link, :n] = ddq_dq - m_inv * (self._kw * self._w)
        jac[link, n:2 * n] = m_inv * self._kw
        jac[link, 2 * n:3 * n] = ddq_dv - m_inv * slope_link
        motor = slice(3 * n, 4 * n)
        jac[motor] = dtau_dx * self._inv_b[:, None]
        jac[motor, :n] += np.diag(self._kw * self._inv_b)
        jac[motor, n:2 * n] -= np.diag(self._k * self._inv_b)
        jac[motor, 3 * n:4 * n] -= np.diag(slope_motor * self._inv_b)
        dissipated, work = 4 * n, 4 * n + 1
        jac[dissipated, 2 * n:3 * n] = f_link + qd * slope_link
        jac[dissipated, 3 * n:4 * n] = f_motor + qd_m * slope_motor
        jac[work] = qd_m @ dtau_dx
        jac[work, 3 * n:4 * n] += tau_m
        jac[work, 2 * n:3 * n] += tau_ext
        return jac

    def _coulomb_slope(self, force: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """d/dv of f_c tanh(v / w_c) = f_c / w_c (1 - tanh^2), without overflow at high speed."""
        return force / self._width * (1.0 - np.tanh(velocity / self._width) ** 2)

    def coulomb_damping(self, x: np.ndarray) -> np.ndarray | None:
        """d(accelerations)/d(velocities) (2n, 2n) of the smoothed Coulomb friction alone at ``x``:
        ``-blockdiag(M^-1 diag(s_link), diag(s_motor / B))`` with ``s = f_c / w_c (1 - tanh^2(v / w_c))``, or None
        when the robot has no Coulomb friction. Velocity order ``[qd, qd_m]`` as in the state."""
        if not self._coulomb:
            return None
        n = self.n
        m_inv = pin.computeMinverse(self.model, self.data, x[:n])
        m_inv = np.triu(m_inv) + np.triu(m_inv, 1).T
        damping = np.zeros((2 * n, 2 * n))
        damping[:n, :n] = -m_inv * self._coulomb_slope(self._cl, x[2 * n:3 * n])
        damping[n:, n:] = -np.diag(self._coulomb_slope(self._cm, x[3 * n:4 * n]) * self._inv_b)
        return damping

    def relinearize_needed(self, x: np.ndarray, x_lin: np.ndarray, h: float, distance: float) -> bool:
        """Whether a Jacobian taken at ``x_lin`` is too stale at ``x`` for a step ``h`` [s]: a joint coordinate moved
        by more than ``distance`` [rad | m] (M(q) and g(q) change with the configuration)."""
        n = self.n
        return bool(np.abs(x[:n] - x_lin[:n]).max() > distance)

    def energy(self, x: np.ndarray) -> Energy:
        """Kinetic (links and rotors), elastic, gravitational energy and the two energy integrals [J]."""
        n = self.n
        q, q_m, qd, qd_m = x[:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:4 * n]
        kinetic = pin.computeKineticEnergy(self.model, self.data, q, qd) + 0.5 * qd_m @ (self._b * qd_m)
        deflection = self._w * q - q_m
        return Energy(kinetic=float(kinetic), elastic=float(0.5 * deflection @ (self._k * deflection)),
                      gravitational=float(pin.computePotentialEnergy(self.model, self.data, q)),
                      dissipated=float(x[4 * n]), work_in=float(x[4 * n + 1]))

    def elastic_torque(self, q: np.ndarray, q_m: np.ndarray) -> np.ndarray:
        """Joint torque transmitted by the springs ``K (W q - q_m)`` [N m], arrays (..., n)."""
        return self._k * (self._w * q - q_m)

    def frame_acceleration(self, x: np.ndarray, xdot: np.ndarray, frame_id: int) -> np.ndarray:
        """Classical linear acceleration (3,) [m/s^2] of a frame's origin in world axes (no gravity)."""
        n = self.n
        pin.forwardKinematics(self.model, self.data, x[:n], x[2 * n:3 * n], xdot[2 * n:3 * n])
        return np.array(pin.getFrameClassicalAcceleration(self.model, self.data, frame_id, _LWA).linear)


__all__ = ["FlexibleJointPlant"]
