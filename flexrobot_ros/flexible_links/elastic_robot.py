"""One dynamics object over all generalized coordinates of an elastic robot: elastic and rigid joints, extra
elasticities and flexible links, composed from the existing terms (issue 24, docs/elastic_model_design.md).

Coordinates (SI: rad or m, modal amplitudes m, nodal slopes rad)::

    y = [z; q_m],   z = [q_a (na), eta (m)],   q_m (n_el)

``q_a`` the link-side coordinates of the extended pinocchio model (``robot.extended.model``, chain order: the
robot's joints at ``q_index`` and the non-actuated elastic coordinates q_e at ``qe_index``), ``eta`` the beams'
modal or nodal coordinates (the flexible-link chain of :mod:`flexrobot_ros.flexible_links` built on the extended
model), ``q_m`` the motor angles after the gear of the elastic joints (``elastic_joints``, indices into the robot's
joints). A rigid joint's motor is its joint: its torque enters the joint row.

Equations (world frame of the URDF base; wrenches in world axes at a frame's origin)::

    M(y) y_ddot + h(y, y_dot) + f_el(y) + f_d(y, y_dot) = S u + sum_j J_j(y)^T w_j

    M = blockdiag(I_chain(z), B)                                  chain inertia (DeNOC composite bodies or the
                                                                  CasADi Lagrangian of a sliding beam), rotors B
    h = [h_chain(z, z_dot) - K_eta eta - D_eta eta_dot; 0]        Coriolis, centrifugal, gravity
    f_el = [W s on q; K_e q_e on q_e; K_eta eta on eta; -s on q_m],     s = K (W q - q_m)    (elastic joints)
    f_d  = [W g + D qd + f_c tanh(qd / v_c) on q; D_e qd_e; D_eta eta_dot;
            -g + D_m qd_m + f_cm tanh(qd_m / v_c) on q_m],        g = D_g (W qd - qd_m)    (elastic joints)
    S u: the motor torque u_i on the motor row of an elastic joint, on the joint row of a rigid one.

Energy: kinetic 1/2 y_dot^T M y_dot, elastic 1/2 s^T K^-1 s + 1/2 K_e q_e^2 + beam strain, gravitational (zero at
the base origin); d/dt(E) = y_dot^T (S u + J^T w) - y_dot^T f_d. Coulomb friction is the smoothed
``f tanh(v / coulomb_width)`` on any joint (link side on rigid and elastic joints, motor side on elastic ones).

Without beams (``m == 0``: elastic joints, extra elasticities, rigid joints on rigid links) the chain is the extended
pinocchio model itself: :attr:`ElasticRobot.rigid_chain` is true and the chain's terms come from pinocchio's
algorithms (CRBA, RNEA, ABA and its analytic derivatives, gravity derivatives, frame Jacobians), the joint, gear and
extra-spring forces from the constant slopes of :func:`force_function` (``f_el`` and the viscous part of ``f_d`` are
linear), so that the modes per pose and the simulator run at pinocchio's speed.

A sliding beam with ``roots: integrated`` (seed 004 eqs. 45-47) has its clamped-mass roots beta as extra states
(:attr:`ElasticRobot.roots` of them): the chain's terms take them as an argument ``beta`` (None: the explicit roots
at y's free lengths, which is what they equal along any motion started on them; the static equilibrium and the
linearization use those). The loader still refuses them together with extra elasticities, transmission damping or
Coulomb friction (:func:`~flexrobot_ros.model.extended_model.check_composable`): only the plant's numeric path
integrates them, and the other users of this model (feedforward, tool space) take explicit roots.

Not composed yet (refused when the object is built, one line): an extra elasticity inserted with ``side: after`` at
the joint that carries a flexible link.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.chain_dynamics import chain_dynamics
from flexrobot_ros.flexible_links.deformed_frames import deformed_frame_placement
from flexrobot_ros.flexible_links.elastic_robot_functions import (ElasticRobotFunctions, force_function,
                                                                  force_function_slopes)
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.link_specs import build_beams, build_sliding_beams, hub_inertias, link_joints
from flexrobot_ros.model.extended_model import extended_model

#: One external wrench: (frame id of :meth:`ElasticRobot.frame_id`, [f; m] (6,) [N, N m], world axes, at the
#: frame's origin).
Wrench = tuple[int, np.ndarray]
#: Central-difference step of the frame Jacobians [rad | m].
STEP = 1e-6


def elastic_joints_only(robot: Any) -> bool:
    """Whether ``robot`` has elastic joints alone on rigid links (no flexible links, rigid joints, extra elasticities
    or gear dampers): seed 000 eq. 2.1 over y = [q; q_m], whose direct evaluations (the plant's, the seed-000
    linearization) are the fast paths of these robots."""
    ext = getattr(robot, "extended", None)
    return not (robot.flexible_links or robot.rigid_joints) and \
        (ext is None or (ext.ne == 0 and not np.any(ext.spring_damping)))


@dataclass(frozen=True)
class Outputs:
    """What the nodes read of a configuration: ``encoders`` (n,) motor angles after the gear [rad | m] (a rigid
    joint's is its joint position), ``q`` (n,) link-side joint positions, ``tool`` the world placement of the tool
    frame (None without one)."""

    encoders: np.ndarray
    q: np.ndarray
    tool: pin.SE3 | None


class ElasticRobot:
    """Mass matrix, bias, elastic and dissipative forces, input map, outputs and energy of a loaded robot (module
    docstring); ``method``/``modes``/``elements`` override every flexible link's discretization."""

    def __init__(self, robot: Any, method: str | None = None, modes: int | None = None,
                 elements: int | None = None):
        source = str(robot.yaml_path or robot.name)
        self.robot = robot
        self.ext = ext = extended_model(robot)
        model = ext.model
        specs = robot.flexible_links
        joints = link_joints(model)
        inserted_after = {s.name for s in ext.specs if s.axis is not None and s.side == "after"}
        for link, spec in specs.items():
            if link in joints and model.names[joints[link]] in inserted_after:
                raise ModelError(f"{source}: flexible_links.{link}: an extra elasticity with side: after at the "
                                 "joint of a flexible link is not composed yet; use side: before")
        sliding = build_sliding_beams(model, specs, source, method=method, modes=modes, elements=elements)
        beams = build_beams(model, specs, source, method=method, modes=modes, elements=elements, sliding=sliding)
        self.chain = FlexibleLinkChain(model, beams, gravity=np.asarray(robot.gravity, dtype=float),
                                       hubs=hub_inertias(model, specs), sliding=sliding)
        self.chain_dynamics = chain_dynamics(self.chain)
        lagrangian = self.chain_dynamics.lagrangian
        #: number of sliding-beam roots integrated as states (``roots: integrated``), 0 without
        self.roots = lagrangian.roots if lagrangian is not None else 0
        self.model, self.data = model, model.createData()
        n, na, m = robot.n, ext.na, self.chain.m
        self.n, self.na, self.m, self.ne = n, na, m, ext.ne
        rigid = np.array([name in robot.rigid_joints for name in robot.joint_names])
        self.rigid = rigid
        self.elastic_joints = np.flatnonzero(~rigid)
        self.n_el = len(self.elastic_joints)
        self.size = self.chain.size + self.n_el
        self.q_index = np.asarray(ext.actuated_index, dtype=int)
        self.qe_index = np.asarray(ext.elastic_index, dtype=int)
        self.eta = slice(na, na + m)
        self.motors = slice(self.chain.size, self.size)
        self.motor_index = np.arange(self.chain.size, self.size)
        e = self.elastic_joints
        self._w, self._k = robot.transmission[e].copy(), robot.stiffness[e].copy()
        self._b, self._dm = robot.motor_inertia[e].copy(), robot.motor_damping[e].copy()
        self._cm, self._dg = robot.motor_coulomb[e].copy(), ext.spring_damping[e].copy()
        self._d, self._cl = robot.link_damping.copy(), robot.link_coulomb.copy()
        self._ke, self._de = ext.elastic_stiffness.copy(), ext.elastic_damping.copy()
        self.width = float(robot.coulomb_width)
        self.coulomb = bool(np.any(self._cl) or np.any(self._cm))
        #: Coulomb friction amplitude per coordinate of y (size,) [N m | N]: f_c on the joints, f_cm on the motors
        self.coulomb_force = np.zeros(self.size)
        self.coulomb_force[self.q_index] = self._cl
        self.coulomb_force[self.motor_index] = self._cm
        self.beam_stiffness, self.beam_damping = np.zeros((m, m)), np.zeros((m, m))
        for body in self.chain.bodies:
            if body.beam is not None and body.m:
                self.beam_stiffness[body.eta, body.eta] = body.beam.stiffness
                self.beam_damping[body.eta, body.eta] = body.beam.damping
        self.input_map = np.zeros((self.size, n))  # S (size, n): motor torques -> generalized forces
        self.input_map[self.q_index[rigid], np.flatnonzero(rigid)] = 1.0
        self.input_map[self.motor_index, e] = 1.0
        #: no beams: the chain is the extended pinocchio model (module docstring)
        self.rigid_chain = m == 0
        #: elastic joints alone on rigid links (:func:`elastic_joints_only`): y = [q; q_m]
        self.joints_only = elastic_joints_only(robot)
        self._functions: ElasticRobotFunctions | None = None

    @cached_property
    def force_function(self) -> Any:
        """:func:`force_function` of this model's parameters (CasADi, built on first use: about 3 ms, which the
        plant's elastic-joints evaluation never needs)."""
        return force_function(self)

    @cached_property
    def _force_slopes(self) -> tuple[np.ndarray, np.ndarray]:
        return force_function_slopes(self.force_function, self.size)

    @property
    def rotor_inertia(self) -> np.ndarray:
        """B (n_el,) [kg m^2 | kg]: the motors' block of M, diagonal, on the elastic joints' motor rows."""
        return self._b.copy()

    @property
    def stiffness_matrix(self) -> np.ndarray:
        """d f_el / dy (size, size) [N m/rad | N/m], constant: the springs are linear."""
        return self._force_slopes[0]

    @property
    def damping_matrix(self) -> np.ndarray:
        """The viscous d f_d / dy_dot (size, size) [N m s/rad | N s/m], constant: the dampers are linear."""
        return self._force_slopes[1]

    @property
    def functions(self) -> ElasticRobotFunctions:
        """The CasADi path (:mod:`.elastic_robot_functions`), built on first use (its Lagrangian: 0.1 s on a 7-joint
        arm; the exact derivatives and the linearization on their own first use, 0.6 s more)."""
        if self._functions is None:
            self._functions = ElasticRobotFunctions(self)
        return self._functions

    # ------------------------------------------------------------------ coordinates
    def coordinates(self, q: np.ndarray, q_m: np.ndarray | None = None, q_e: np.ndarray | None = None,
                    eta: np.ndarray | None = None) -> np.ndarray:
        """y (size,) from joint positions q (n,), motor angles q_m (n,; default W q, a rigid joint's ignored),
        q_e (ne,) and eta (m,) (default 0)."""
        y = np.zeros(self.size)
        q = np.asarray(q, dtype=float)
        y[self.q_index] = q
        if q_e is not None:
            y[self.qe_index] = q_e
        if eta is not None:
            y[self.eta] = eta
        e = self.elastic_joints
        y[self.motors] = self._w * q[e] if q_m is None else np.asarray(q_m, dtype=float)[e]
        return y

    def joint_positions(self, y: np.ndarray) -> np.ndarray:
        """q (..., n) of coordinates y (..., size)."""
        return np.asarray(y)[..., self.q_index]

    def motor_positions(self, y: np.ndarray) -> np.ndarray:
        """Motor angles (..., n) after the gear: q_m of elastic joints, q of rigid ones (the encoders)."""
        y = np.asarray(y)
        out = np.array(y[..., self.q_index])
        out[..., self.elastic_joints] = y[..., self.motors]
        return out

    # ------------------------------------------------------------------ terms
    def inertia_and_bias(self, y: np.ndarray, y_dot: np.ndarray,
                         beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(M (size, size) [kg m^2 | kg m | kg], h (size,) [N m | N]) at (y, y_dot), one pass of the chain;
        ``beta`` the integrated roots (module docstring)."""
        c = self.chain.size
        if self.rigid_chain:
            return self.inertia(y), self.bias(y, y_dot)
        inertia, h_chain = self.chain_dynamics.inertia_and_bias(y[:c], y_dot[:c], beta)
        M = np.zeros((self.size, self.size))
        M[:c, :c] = inertia
        M[self.motor_index, self.motor_index] = self._b
        h = np.zeros(self.size)
        h[:c] = h_chain
        h[self.eta] -= self.beam_stiffness @ y[self.eta] + self.beam_damping @ y_dot[self.eta]
        return M, h

    def inertia(self, y: np.ndarray) -> np.ndarray:
        """M(y) (size, size), symmetric positive definite (pinocchio's CRBA on a rigid chain)."""
        if not self.rigid_chain:
            return self.inertia_and_bias(y, np.zeros(self.size))[0]
        c = self.chain.size
        M = np.zeros((self.size, self.size))
        inertia = np.array(pin.crba(self.model, self.data, y[:c]))
        M[:c, :c] = np.triu(inertia) + np.triu(inertia, 1).T
        M[self.motor_index, self.motor_index] = self._b
        return M

    def inverse_inertia(self, y: np.ndarray) -> np.ndarray:
        """M(y)^-1 (size, size) (pinocchio's ``computeMinverse`` on a rigid chain)."""
        if not self.rigid_chain:
            return np.linalg.inv(self.inertia(y))
        c = self.chain.size
        inverse = np.zeros((self.size, self.size))
        m_inv = np.array(pin.computeMinverse(self.model, self.data, y[:c]))
        inverse[:c, :c] = np.triu(m_inv) + np.triu(m_inv, 1).T
        inverse[self.motor_index, self.motor_index] = 1.0 / self._b
        return inverse

    def bias(self, y: np.ndarray, y_dot: np.ndarray) -> np.ndarray:
        """h(y, y_dot) (size,): Coriolis, centrifugal and gravity forces."""
        c = self.chain.size
        h = np.zeros(self.size)
        if self.rigid_chain:
            h[:c] = pin.nonLinearEffects(self.model, self.data, y[:c], y_dot[:c])
            return h
        h[:c] = self.chain_dynamics.bias(y[:c], y_dot[:c])
        h[self.eta] -= self.beam_stiffness @ y[self.eta] + self.beam_damping @ y_dot[self.eta]
        return h

    def spring_torque(self, y: np.ndarray) -> np.ndarray:
        """s = K (W q - q_m) (n_el,) [N m], the elastic joints' spring torques."""
        return self._k * (self._w * y[self.q_index[self.elastic_joints]] - y[self.motors])

    def elastic_force(self, y: np.ndarray) -> np.ndarray:
        """f_el(y) (size,) = dV_el/dy: joint springs, extra springs, beam strain (linear: ``stiffness_matrix @ y``)."""
        return self.stiffness_matrix @ y

    def dissipative_force(self, y_dot: np.ndarray, coulomb: bool = True) -> np.ndarray:
        """f_d(y_dot) (size,): viscous friction, transmission and extra dampers, modal damping, and (``coulomb``)
        the smoothed Coulomb friction; y_dot . f_d >= 0 is the dissipated power [W]."""
        viscous = self.damping_matrix @ y_dot
        if not (coulomb and self.coulomb):
            return viscous
        return viscous + self.coulomb_force * np.tanh(y_dot / self.width)

    def coulomb_slope(self, y_dot: np.ndarray) -> np.ndarray:
        """d(f_d)/d(y_dot) of the smoothed Coulomb friction alone (size,), a diagonal [N m s/rad | N s/m]."""
        return self.coulomb_force / self.width * (1.0 - np.tanh(y_dot / self.width) ** 2)

    # ------------------------------------------------------------------ frames and wrenches
    def frame_id(self, name: str) -> int:
        """Index of frame ``name`` in the extended model (ModelError listing the known frames otherwise)."""
        if not self.model.existFrame(name):
            raise ModelError(f"robot {self.robot.name}: unknown frame {name!r}; frames: "
                             f"{[f.name for f in self.model.frames]}")
        return int(self.model.getFrameId(name))

    def frame_placement(self, y: np.ndarray, frame_id: int) -> pin.SE3:
        """World placement of a frame, following the deformed tip when the frame sits at a beam's end (or on a
        sliding beam's link)."""
        if self.rigid_chain:
            pin.framesForwardKinematics(self.model, self.data, y[:self.na])
            return pin.SE3(self.data.oMf[frame_id])
        lagrangian = self.chain_dynamics.lagrangian
        placements = None if lagrangian is None else \
            (lambda z: np.array(lagrangian.placements(*lagrangian.arguments(z))))
        return deformed_frame_placement(self.model, self.chain, frame_id, y[:self.chain.size], placements)

    def frame_jacobian(self, y: np.ndarray, frame_id: int) -> np.ndarray:
        """J (6, size): [linear velocity of the frame's origin; angular velocity], world axes, per unit y_dot
        (pinocchio's on a rigid chain, else central differences of :meth:`frame_placement`, step :data:`STEP`)."""
        out = np.zeros((6, self.size))
        if self.rigid_chain:
            out[:, :self.na] = pin.computeFrameJacobian(self.model, self.data, y[:self.na], frame_id,
                                                        pin.LOCAL_WORLD_ALIGNED)
            return out
        for k in range(self.chain.size):
            plus, minus = y.copy(), y.copy()
            plus[k] += STEP
            minus[k] -= STEP
            a, b = self.frame_placement(plus, frame_id), self.frame_placement(minus, frame_id)
            out[:3, k] = (a.translation - b.translation) / (2 * STEP)
            out[3:, k] = pin.log3(a.rotation @ b.rotation.T) / (2 * STEP)
        return out

    def wrench_force(self, y: np.ndarray, wrenches: Sequence[Wrench]) -> np.ndarray:
        """sum_j J_j^T w_j (size,): generalized force of world-axes wrenches at frame origins."""
        f = np.zeros(self.size)
        for frame_id, wrench in wrenches:
            f += self.frame_jacobian(y, frame_id).T @ np.asarray(wrench, dtype=float)
        return f

    def outputs(self, y: np.ndarray) -> Outputs:
        """Motor encoders, link joint positions and the tool pose at y."""
        tool = self.robot.tool_frame
        return Outputs(encoders=self.motor_positions(y), q=self.joint_positions(y).copy(),
                       tool=None if tool is None else self.frame_placement(y, self.frame_id(tool)))

    # ------------------------------------------------------------------ dynamics
    def generalized_force(self, y: np.ndarray, y_dot: np.ndarray, tau_m: np.ndarray,
                          wrenches: Sequence[Wrench] = (), coulomb: bool = True) -> np.ndarray:
        """S u + J^T w - f_el - f_d (size,) for motor torques ``tau_m`` (n,) [N m | N]."""
        f = self.input_map @ np.asarray(tau_m, dtype=float) - self.elastic_force(y) \
            - self.dissipative_force(y_dot, coulomb)
        if wrenches:
            f += self.wrench_force(y, wrenches)
        return f

    def forward_dynamics(self, y: np.ndarray, y_dot: np.ndarray, tau_m: np.ndarray,
                         wrenches: Sequence[Wrench] = ()) -> np.ndarray:
        """y_ddot (size,) of the module docstring's equation."""
        return self.acceleration(y, y_dot, self.generalized_force(y, y_dot, tau_m, wrenches))

    def acceleration(self, y: np.ndarray, y_dot: np.ndarray, f: np.ndarray,
                     beta: np.ndarray | None = None) -> np.ndarray:
        """y_ddot = M^-1 (f - h) (size,) for a generalized force ``f`` (size,) [N m | N] (pinocchio's ABA on a
        rigid chain); ``beta`` the integrated roots (module docstring)."""
        if not self.rigid_chain:
            M, h = self.inertia_and_bias(y, y_dot, beta)
            return np.linalg.solve(M, f - h)
        c = self.chain.size
        return np.concatenate([pin.aba(self.model, self.data, y[:c], y_dot[:c], f[:c]), f[c:] / self._b])

    def rigid_acceleration_jacobian(self, y: np.ndarray, y_dot: np.ndarray, f: np.ndarray,
                                    coulomb: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """On a rigid chain (:attr:`rigid_chain`), for the generalized force ``f`` (size,) of
        :meth:`generalized_force` at (y, y_dot): (d y_ddot/dy, d y_ddot/dy_dot, M^-1) (size, size) with ``f``'s own
        slopes (springs, dampers, Coulomb when ``coulomb``) included and those of the inputs and wrenches left out
        (the caller adds ``M^-1`` times them). Chain part from pinocchio's ``computeABADerivatives``."""
        c = self.chain.size
        dq, dv, m_inv = (np.array(a) for a in pin.computeABADerivatives(self.model, self.data, y[:c], y_dot[:c],
                                                                           f[:c]))
        inverse = np.zeros((self.size, self.size))
        inverse[:c, :c] = np.triu(m_inv) + np.triu(m_inv, 1).T
        inverse[self.motor_index, self.motor_index] = 1.0 / self._b
        damping = self.damping_matrix + (np.diag(self.coulomb_slope(y_dot)) if coulomb and self.coulomb else 0.0)
        da_dy, da_dv = -inverse @ self.stiffness_matrix, -inverse @ damping
        da_dy[:c, :c] += dq
        da_dv[:c, :c] += dv
        return da_dy, da_dv, inverse

    def energy(self, y: np.ndarray, y_dot: np.ndarray, beta: np.ndarray | None = None) -> tuple[float, float, float]:
        """(kinetic, elastic, gravitational) energy [J] at (y, y_dot); ``beta`` the integrated roots (pinocchio's
        kinetic and potential energy on a rigid chain; gravitational zero at the base origin either way)."""
        c = self.chain.size
        if self.rigid_chain:
            kinetic = float(pin.computeKineticEnergy(self.model, self.data, y[:c], y_dot[:c]))
            strain, gravity = 0.0, float(pin.computePotentialEnergy(self.model, self.data, y[:c]))
        else:
            kinetic, strain, gravity = self.chain_dynamics.energy(y[:c], y_dot[:c], beta)
        s, qe = self.spring_torque(y), y[self.qe_index]
        kinetic += 0.5 * float(y_dot[self.motors] @ (self._b * y_dot[self.motors]))
        elastic = strain + 0.5 * float(s @ (s / self._k)) + 0.5 * float(qe @ (self._ke * qe))
        return kinetic, elastic, gravity

    # ------------------------------------------------------------------ equilibrium and linearization
    def static_equilibrium(self, q: np.ndarray, iterations: int = 30) -> np.ndarray:
        """y at rest (size,) with the joints at ``q`` (n,): q_e and eta where their springs carry gravity (Newton
        steps on their rows of h + f_el, exact Jacobian), q_m where the joint springs carry the joint rows (W q + t / (K W))."""
        q = np.asarray(q, dtype=float)
        self.chain.check_free_lengths(self.coordinates(q)[:self.na])
        y, zero = self.coordinates(q), np.zeros(self.size)
        free = np.concatenate([self.qe_index, np.arange(self.eta.start, self.eta.stop)]).astype(int)
        for _ in range(iterations if len(free) else 0):
            if not self.rigid_chain and not np.any((self.bias(y, zero) + self.elastic_force(y))[free]):
                break  # at equilibrium already (no gravity: undeformed beams), no slope needed
            force, slope = self.rest_force(y)
            step = np.linalg.solve(slope[np.ix_(free, free)], -force[free])
            y[free] += step
            if np.max(np.abs(step)) < 1e-14 * max(1.0, np.max(np.abs(y[free]))):
                break
        joint = self.bias(y, zero)[self.q_index[self.elastic_joints]]
        y[self.motors] = self._w * q[self.elastic_joints] + joint / (self._k * self._w)
        return y

    def rest_force(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(h + f_el at rest (size,) [N m | N], its slope K = d(h + f_el)/dy (size, size)) at y: gravity and
        springs (pinocchio's gravity and its analytic derivatives on a rigid chain, CasADi's exact ones else)."""
        if not self.rigid_chain:
            return self.bias(y, np.zeros(self.size)) + self.elastic_force(y), \
                np.array(self.functions.linearization(y)[2])
        c = self.chain.size
        slope = self.stiffness_matrix.copy()
        slope[:c, :c] += pin.computeGeneralizedGravityDerivatives(self.model, self.data, y[:c])
        force = self.stiffness_matrix @ y
        force[:c] += self.data.g
        return force, slope

    def holding_torque(self, y: np.ndarray) -> np.ndarray:
        """Motor torques (n,) [N m | N] that hold the static equilibrium y: gravity on a rigid joint's row, the
        spring torque K (q_m - W q) on an elastic joint's motor."""
        out = np.zeros(self.n)
        rigid = self.rigid
        out[rigid] = self.bias(y, np.zeros(self.size))[self.q_index[rigid]]
        out[self.elastic_joints] = -self.spring_torque(y)
        return out

    def linearize(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M, D, K) (size, size) of the free robot (zero motor torques' slope) about the rest state y: M(y),
        D = d(h + f_d)/d(y_dot), K = d(h + f_el)/dy, exact (CasADi, :mod:`.elastic_robot_functions`); Coulomb
        friction left out (its smoothed slope at rest is a modelling artefact, not a damping); on a rigid chain with
        pinocchio's inertia and analytic gravity derivatives (Coriolis has no slope at rest)."""
        if not self.rigid_chain:
            return tuple(np.array(v) for v in self.functions.linearization(y))
        return self.inertia(y), self.damping_matrix.copy(), self.rest_force(y)[1]

__all__ = ["ElasticRobot", "Outputs", "STEP", "Wrench", "elastic_joints_only"]
