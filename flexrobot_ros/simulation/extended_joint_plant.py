"""Forward dynamics of the extended flexible-joint robot (seed 002, eq. 1) as a simulator
:class:`~flexrobot_ros.simulation.plant.Plant`.

::

    M(q_a) qdd_a + c(q_a, qd_a) + g(q_a) = S_g^T tau_g + S_e^T tau_e + sum_j J_j^T(q_a) w_j
    tau_g = -W K (W q - q_m) - W D_g (W qd - qd_m) - D qd - f_c tanh(qd / v_c)
    tau_e = -K_e q_e - D_e qd_e
    B qdd_m + D_m qd_m + f_cm tanh(qd_m / v_c) - K (W q - q_m) - D_g (W qd - qd_m) = tau_m

q_a = (q, q_e) in the chain order of ``robot.extended.model`` (pinocchio's ABA solves the link side; its
``computeABADerivatives`` gives the Jacobian). State layout (the blocks every plant has, the elastic coordinates in
their own blocks, positions and velocities contiguous)::

    x = [q (n), q_m (n), q_e (ne), qd (n), qd_m (n), qd_e (ne), dissipated, work_in]

Dissipated power: D_g (W qd - qd_m)^2 + qd.(D qd + f_c tanh) + qd_m.(D_m qd_m + f_cm tanh) + D_e qd_e^2; input
power tau_m.qd_m + sum_j (J_j^T w_j).qd_a. With no extra elasticity and D_g = 0 this is
:class:`~flexrobot_ros.simulation.flexible_joint_plant.FlexibleJointPlant`'s model.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.elastic_equilibrium import elastic_equilibrium
from flexrobot_ros.model.extended_model import ExtendedModel, extended_model
from flexrobot_ros.simulation.plant import Energy, FrameWrench, StateLayout

_LWA = pin.LOCAL_WORLD_ALIGNED


def state_layout(n: int, ne: int) -> StateLayout:
    """The extended plant's state layout (module docstring)."""
    p = 2 * n + ne
    return StateLayout(size=2 * p + 2, slices={
        "q": slice(0, n), "q_m": slice(n, 2 * n), "q_e": slice(2 * n, p),
        "qd": slice(p, p + n), "qd_m": slice(p + n, p + 2 * n), "qd_e": slice(p + 2 * n, 2 * p),
        "positions": slice(0, p), "velocities": slice(p, 2 * p),
        "dissipated": slice(2 * p, 2 * p + 1), "work_in": slice(2 * p + 1, 2 * p + 2)})


class ExtendedJointPlant:
    """The extended flexible-joint robot as a Plant (one pinocchio Data: one plant per thread)."""

    def __init__(self, robot: Any, ext: ExtendedModel | None = None):
        self.robot = robot
        self.ext = ext or extended_model(robot)
        self.model = self.ext.model
        self.data = self.model.createData()
        n, ne = robot.n, self.ext.ne
        self.n, self.ne, self.na = n, ne, self.ext.na
        self.joint_names = robot.joint_names
        self.elastic_names = self.ext.elastic_names
        self.layout = state_layout(n, ne)
        lay = self.layout
        act, el = np.asarray(self.ext.actuated_index), np.asarray(self.ext.elastic_index)
        self._act, self._el = act, el
        self._pos = np.empty(self.na, dtype=int)  # x index of each q_a coordinate
        self._pos[act] = np.arange(lay["q"].start, lay["q"].stop)
        self._pos[el] = np.arange(lay["q_e"].start, lay["q_e"].stop)
        self._vel = self._pos + lay["velocities"].start
        self._w, self._k = robot.transmission.copy(), robot.stiffness.copy()
        self._dg = self.ext.spring_damping.copy()
        self._d, self._dm = robot.link_damping.copy(), robot.motor_damping.copy()
        self._cl, self._cm = robot.link_coulomb.copy(), robot.motor_coulomb.copy()
        self._coulomb = bool(np.any(self._cl) or np.any(self._cm))
        self._width = float(robot.coulomb_width)
        self._b = robot.motor_inertia.copy()
        self._ke, self._de = self.ext.elastic_stiffness.copy(), self.ext.elastic_damping.copy()

    # ------------------------------------------------------------------ helpers
    def q_a(self, x: np.ndarray) -> np.ndarray:
        """Link-side coordinates q_a (na,) of the extended chain at state x."""
        return x[self._pos]

    def v_a(self, x: np.ndarray) -> np.ndarray:
        return x[self._vel]

    def frame_id(self, name: str) -> int:
        """Index of frame ``name`` in the extended model (ModelError listing known frames otherwise)."""
        if not self.model.existFrame(name):
            return self.robot.frame_id(name)  # raises the robot's ModelError
        return self.model.getFrameId(name)

    def frame_position(self, x: np.ndarray, frame_id: int) -> np.ndarray:
        """Base-frame position (3,) [m] of a frame's origin at state x."""
        pin.framesForwardKinematics(self.model, self.data, self.q_a(x))
        return np.array(self.data.oMf[frame_id].translation)

    def state(self, q, q_m, qd=None, qd_m=None, q_e=None, qd_e=None) -> np.ndarray:
        """``x`` with the given joint positions/rates, elastic coordinates at ``q_e`` (default: where their springs
        carry gravity at q, at rest) and rates ``qd_e`` (default 0), zero energy integrals."""
        robot = self.robot
        zeros = np.zeros(self.ne)
        q = robot.check_q(q, "q")
        parts = [q, robot.check_q(q_m, "q_m"),
                 elastic_equilibrium(self.ext, q) if q_e is None else np.asarray(q_e, dtype=float).reshape(self.ne),
                 np.zeros(self.n) if qd is None else robot.check_q(qd, "qd"),
                 np.zeros(self.n) if qd_m is None else robot.check_q(qd_m, "qd_m"),
                 zeros if qd_e is None else np.asarray(qd_e, dtype=float).reshape(self.ne), np.zeros(2)]
        return np.concatenate(parts)

    def external_torque(self, q_a: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """Generalized force (na,) of world-axes wrenches at frame origins, extended coordinates."""
        tau = np.zeros(self.na)
        for frame_id, wrench in wrenches:
            tau += pin.computeFrameJacobian(self.model, self.data, q_a, frame_id, _LWA).T @ wrench
        return tau

    def _unpack(self, x: np.ndarray):
        lay = self.layout
        return (x[lay["q"]], x[lay["q_m"]], x[lay["q_e"]], x[lay["qd"]], x[lay["qd_m"]], x[lay["qd_e"]])

    def _friction(self, qd: np.ndarray, qd_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self._coulomb:
            return self._d * qd, self._dm * qd_m
        return (self._d * qd + self._cl * np.tanh(qd / self._width),
                self._dm * qd_m + self._cm * np.tanh(qd_m / self._width))

    def _slope(self, force: np.ndarray, v: np.ndarray) -> np.ndarray:
        return force / self._width * (1.0 - np.tanh(v / self._width) ** 2)

    def _link_torque(self, x: np.ndarray, wrenches: Sequence[FrameWrench]):
        q, q_m, q_e, qd, qd_m, qd_e = self._unpack(x)
        spring = self._k * (self._w * q - q_m)
        damper = self._dg * (self._w * qd - qd_m)
        f_link, f_motor = self._friction(qd, qd_m)
        tau = np.zeros(self.na)
        tau[self._act] = -self._w * (spring + damper) - f_link
        tau[self._el] = -self._ke * q_e - self._de * qd_e
        tau_ext = self.external_torque(self.q_a(x), wrenches) if wrenches else None
        if tau_ext is not None:
            tau += tau_ext
        return tau, tau_ext, spring, damper, f_link, f_motor

    # ------------------------------------------------------------------ plant protocol
    def derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench] = ()) -> np.ndarray:
        """``xdot`` (module docstring) for motor torques ``tau_m`` (n,) [N m] and external wrenches."""
        q, q_m, q_e, qd, qd_m, qd_e = self._unpack(x)
        tau, tau_ext, spring, damper, f_link, f_motor = self._link_torque(x, wrenches)
        v_a = self.v_a(x)
        qdd_a = pin.aba(self.model, self.data, self.q_a(x), v_a, tau)
        qdd_m = (tau_m + spring + damper - f_motor) / self._b
        rel = self._w * qd - qd_m
        dissipated = rel @ (self._dg * rel) + qd @ f_link + qd_m @ f_motor + qd_e @ (self._de * qd_e)
        power = tau_m @ qd_m + (tau_ext @ v_a if tau_ext is not None else 0.0)
        lay = self.layout
        out = np.empty(lay.size)
        out[lay["positions"]] = x[lay["velocities"]]
        out[lay["qd"]] = qdd_a[self._act]
        out[lay["qd_m"]] = qdd_m
        out[lay["qd_e"]] = qdd_a[self._el]
        out[lay["dissipated"]] = dissipated
        out[lay["work_in"]] = power
        return out

    def jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                 wrenches: Sequence[FrameWrench] = (), coulomb: bool = True) -> np.ndarray:
        """d(xdot)/dx for a torque law with state Jacobian ``dtau_dx`` (n, size); rigid-body part from pinocchio's
        computeABADerivatives, the configuration dependence of J^T w left out (as in FlexibleJointPlant)."""
        lay, n = self.layout, self.n
        q, q_m, q_e, qd, qd_m, qd_e = self._unpack(x)
        tau, tau_ext, spring, damper, f_link, f_motor = self._link_torque(x, wrenches)
        ddq_dq, ddq_dv, m_inv = (np.array(a) for a in pin.computeABADerivatives(
            self.model, self.data, self.q_a(x), self.v_a(x), tau))
        m_inv = np.triu(m_inv) + np.triu(m_inv, 1).T
        slope_link, slope_motor = self._d.copy(), self._dm.copy()
        if self._coulomb and coulomb:
            slope_link += self._slope(self._cl, qd)
            slope_motor += self._slope(self._cm, qd_m)
        w, k, dg = self._w, self._k, self._dg
        # d tau_a / d (x): tau_a depends on q, q_m, q_e, qd, qd_m, qd_e
        dtau = np.zeros((self.na, lay.size))
        act, el = self._act, self._el
        dtau[act, lay["q"].start + np.arange(n)] = -w * k * w
        dtau[act, lay["q_m"].start + np.arange(n)] = w * k
        dtau[act, lay["qd"].start + np.arange(n)] = -w * dg * w - slope_link
        dtau[act, lay["qd_m"].start + np.arange(n)] = w * dg
        dtau[el, lay["q_e"].start + np.arange(self.ne)] = -self._ke
        dtau[el, lay["qd_e"].start + np.arange(self.ne)] = -self._de
        dacc = m_inv @ dtau
        dacc[:, self._pos] += ddq_dq
        dacc[:, self._vel] += ddq_dv
        jac = np.zeros((lay.size, lay.size))
        positions, velocities = lay["positions"], lay["velocities"]
        jac[positions, velocities] = np.eye(positions.stop - positions.start)
        jac[lay["qd"]] = dacc[act]
        jac[lay["qd_e"]] = dacc[el]
        motor = lay["qd_m"]
        jm = dtau_dx / self._b[:, None]
        jm[:, lay["q"]] += np.diag(k * w / self._b)
        jm[:, lay["q_m"]] -= np.diag(k / self._b)
        jm[:, lay["qd"]] += np.diag(dg * w / self._b)
        jm[:, lay["qd_m"]] -= np.diag((dg + slope_motor) / self._b)
        jac[motor] = jm
        rel = w * qd - qd_m
        d = lay["dissipated"].start
        jac[d, lay["qd"]] = 2 * dg * w * rel + f_link + qd * slope_link
        jac[d, lay["qd_m"]] = -2 * dg * rel + f_motor + qd_m * slope_motor
        jac[d, lay["qd_e"]] = 2 * self._de * qd_e
        work = lay["work_in"].start
        jac[work] = qd_m @ dtau_dx
        jac[work, lay["qd_m"]] += tau_m
        if tau_ext is not None:
            jac[work, self._vel] += tau_ext
        return jac

    def coulomb_damping(self, x: np.ndarray) -> np.ndarray | None:
        """d(accelerations)/d(velocities) of the smoothed Coulomb friction alone (velocity block order
        [qd, qd_m, qd_e]), or None without Coulomb friction."""
        if not self._coulomb:
            return None
        lay, n = self.layout, self.n
        m_inv = pin.computeMinverse(self.model, self.data, self.q_a(x))
        m_inv = np.triu(m_inv) + np.triu(m_inv, 1).T
        v0 = lay["velocities"].start
        size = lay["velocities"].stop - v0
        damping = np.zeros((size, size))
        slope = self._slope(self._cl, x[lay["qd"]])
        rows = self._vel - v0
        damping[np.ix_(rows, np.arange(n))] = -m_inv[:, self._act] * slope
        damping[n:2 * n, n:2 * n] = -np.diag(self._slope(self._cm, x[lay["qd_m"]]) / self._b)
        return damping

    def relinearize_needed(self, x: np.ndarray, x_lin: np.ndarray, h: float, distance: float) -> bool:
        """Whether a coordinate of the chain (q or q_e) moved by more than ``distance`` since ``x_lin``."""
        return bool(np.abs(x[self._pos] - x_lin[self._pos]).max() > distance)

    def energy(self, x: np.ndarray) -> Energy:
        """Kinetic (links and rotors), elastic (gear springs and extra springs), gravitational energy [J]."""
        q, q_m, q_e, qd, qd_m, qd_e = self._unpack(x)
        q_a, v_a = self.q_a(x), self.v_a(x)
        kinetic = pin.computeKineticEnergy(self.model, self.data, q_a, v_a) + 0.5 * qd_m @ (self._b * qd_m)
        deflection = self._w * q - q_m
        elastic = 0.5 * deflection @ (self._k * deflection) + 0.5 * q_e @ (self._ke * q_e)
        lay = self.layout
        return Energy(kinetic=float(kinetic), elastic=float(elastic),
                      gravitational=float(pin.computePotentialEnergy(self.model, self.data, q_a)),
                      dissipated=float(x[lay["dissipated"].start]), work_in=float(x[lay["work_in"].start]))

    def extra_columns(self, states: np.ndarray) -> dict[str, np.ndarray]:
        """``q_e.<name>`` [rad | m] and ``qd_e.<name>`` of the extra elastic coordinates, for the time series."""
        lay = self.layout
        return {f"{block}.{name}": states[:, lay[block]][:, i] for block in ("q_e", "qd_e")
                for i, name in enumerate(self.elastic_names)}

    def elastic_torque(self, q: np.ndarray, q_m: np.ndarray) -> np.ndarray:
        """Gear-spring torque K (W q - q_m) [N m], arrays (..., n) (the damper's share is not included)."""
        return self._k * (self._w * q - q_m)

    def frame_acceleration(self, x: np.ndarray, xdot: np.ndarray, frame_id: int) -> np.ndarray:
        """Classical linear acceleration (3,) [m/s^2] of a frame's origin in world axes (no gravity)."""
        pin.forwardKinematics(self.model, self.data, self.q_a(x), self.v_a(x), xdot[self._vel])
        return np.array(pin.getFrameClassicalAcceleration(self.model, self.data, frame_id, _LWA).linear)


def plant_for(robot: Any) -> Any:
    """The plant that simulates ``robot``: the extended flexible-joint plant when the robot has an extended model
    (extra elasticities or transmission damping), else the flexible-joint plant."""
    if getattr(robot, "extended", None) is not None:
        return ExtendedJointPlant(robot)
    from flexrobot_ros.simulation.flexible_joint_plant import FlexibleJointPlant

    return FlexibleJointPlant(robot)
