"""Forward dynamics of a robot with flexible links (and rigid or elastic joints) as a simulator Plant.

The link side is the flexible-link chain of :mod:`flexrobot_ros.flexible_links` (recursive DeNOC forward dynamics,
seed 003): generalized coordinates ``y = [q (n), eta (m)]``, joint coordinates then the beams' modal or nodal
coordinates. Joints:

* elastic (the flexibility YAML's joint parameters, seed 000 eq. 2.1): ``B qdd_m + D_m qd_m - k (W q - q_m) = tau_m``
  and ``-W k (W q - q_m) - d qd`` on the link side;
* rigid (``rigid: true``): the motor torque acts on the joint directly (``tau_m - d qd``); the motor angle is the
  joint angle (``q_m = q``, ``qd_m = qd`` kept in the state so that every controller sees one layout).

State layout ``x = [q, eta, q_m, qd, eta_dot, qd_m, dissipated, work_in]`` (blocks named ``q``, ``eta``, ``q_m``,
``qd``, ``eta_dot``, ``qd_m``; ``positions`` = [q, eta, q_m], ``velocities`` = [qd, eta_dot, qd_m]); a sliding
link with ``roots: integrated`` adds its clamped-mass roots as a block ``beta`` before ``dissipated`` (seed 004
eqs. 45-47: beta_dot = dbeta/dd d_dot, started on eq. 38's roots; the default ``explicit`` keeps them functions of
d, the same dynamics). Dissipated
power: joint and motor viscous friction and the beams' modal damping; input power: motor torques and external
wrenches. Energy: ``kinetic`` links and rotors, ``elastic`` joint springs + beam strain, ``gravitational``.
Coulomb friction is not modelled on flexible-link robots. External wrenches act at a frame's origin in world
axes; a frame at a flexible link's end (its tip frame) follows the deformed tip.
``compiled=True`` evaluates the whole state derivative (link accelerations from the CasADi Lagrangian of the same
model, joint springs, motors, power terms) as one call of generated C
(:mod:`flexrobot_ros.flexible_links.compiled_dynamics`) instead of the Python recursion; energy and outputs are
unchanged.
Output columns added by :meth:`extra_columns`: ``deflection.<link>.y`` / ``.z`` [m], the tip deflection of each
flexible link in its beam frame (beam y in the plane of motion for planar arms); ``beta.<link>.<k>``, integrated roots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError, SimulationError
from flexrobot_ros.flexible_links.chain_dynamics import chain_dynamics
from flexrobot_ros.flexible_links.deformed_frames import deformed_frame_placement
from flexrobot_ros.flexible_links.denoc import forward_dynamics
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.flexible_links.deformed_links import beam_axes, deformed_tip_transforms
from flexrobot_ros.flexible_links.tip_deflections import deflection_links, tip_deflections
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.simulation.controllers import PDGravityCompensation, _gains
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, needs_elastic_robot
from flexrobot_ros.simulation.elastic_robot_plant import hold_controller as elastic_robot_hold
from flexrobot_ros.simulation.plant import Energy, FrameWrench, StateLayout


class FlexibleLinkPlant:
    """A robot with flexible links (``robot.flexible_links``) and/or rigid joints, as a Plant."""

    def __init__(self, robot: FlexibleRobot, method: str | None = None, modes: int | None = None,
                 elements: int | None = None, compiled: bool = False):
        self.robot = robot
        self.chain = chain_from_robot(robot, method=method, modes=modes, elements=elements)
        self._forward_dynamics = (lambda y, y_dot, tau: forward_dynamics(self.chain, y, y_dot, tau))
        self.dynamics = chain_dynamics(self.chain)
        self._lagrangian = self.dynamics.lagrangian  # the recursion does not model sliding beams: the Lagrangian
        if self._lagrangian is not None:  # through the chain's recent (I, h), which a model-based controller shares
            self._forward_dynamics = self._lagrangian_forward_dynamics
        n, m = self.n, self.m = robot.n, self.chain.m
        self.joint_names = robot.joint_names
        p = 2 * n + m
        r = self.roots = self._lagrangian.roots if self._lagrangian is not None else 0
        self.layout = StateLayout(size=2 * p + r + 2, slices={
            "q": slice(0, n), "eta": slice(n, n + m), "q_m": slice(n + m, p),
            "qd": slice(p, p + n), "eta_dot": slice(p + n, p + n + m), "qd_m": slice(p + n + m, 2 * p),
            "positions": slice(0, p), "velocities": slice(p, 2 * p),
            **({"beta": slice(2 * p, 2 * p + r)} if r else {}),
            "dissipated": slice(2 * p + r, 2 * p + r + 1), "work_in": slice(2 * p + r + 1, 2 * p + r + 2)})
        self._rigid = np.array([name in robot.rigid_joints for name in robot.joint_names])
        self._elastic = ~self._rigid
        self._k = np.where(self._rigid, 0.0, robot.stiffness)
        self._w = robot.transmission.copy()
        self._d = robot.link_damping.copy()
        self._dm = np.where(self._rigid, 0.0, robot.motor_damping)
        self._b = np.where(self._rigid, 1.0, robot.motor_inertia)
        self._rigid_f, self._elastic_f = self._rigid.astype(float), self._elastic.astype(float)
        self._eta_damping = np.zeros((m, m))
        self.beam_stiffness = np.zeros((m, m))  # K (m, m): the beams' modal or nodal stiffness, block diagonal
        for body in self.chain.bodies:
            if body.beam is not None and body.m:
                self._eta_damping[body.eta, body.eta] = body.beam.damping
                self.beam_stiffness[body.eta, body.eta] = body.beam.stiffness
        if np.any(robot.link_coulomb) or np.any(robot.motor_coulomb):
            raise SimulationError(f"robot {robot.name}: Coulomb friction is not simulated with flexible links")
        self._compiled_derivative = self._compile_derivative() if compiled else None
        self.deflection_links = deflection_links(robot, self.chain)

    # ------------------------------------------------------------------ helpers
    def frame_id(self, name: str) -> int:
        return self.robot.frame_id(name)

    def _split(self, x: np.ndarray):
        n, m, p = self.n, self.m, 2 * self.n + self.m
        return x[:n + m], x[n + m:p], x[p:p + n + m], x[p + n + m:2 * p]

    def state(self, q, q_m, qd=None, qd_m=None) -> np.ndarray:
        """A state at rest in the beams (eta = eta_dot = 0), with the given joint and motor positions and rates;
        rigid joints' motor entries are set to their joint's."""
        robot = self.robot
        q = robot.check_q(q, "q")
        try:
            self.chain.check_free_lengths(q)
        except ModelError as error:
            raise SimulationError(f"robot {robot.name}: {error}; give an initial pose inside them") from None
        q_m = np.where(self._rigid, q, robot.check_q(q_m, "q_m"))
        qd = np.zeros(self.n) if qd is None else robot.check_q(qd, "qd")
        qd_m = np.where(self._rigid, qd, np.zeros(self.n) if qd_m is None else robot.check_q(qd_m, "qd_m"))
        roots = np.array(self._lagrangian.explicit_roots(np.concatenate([q, np.zeros(self.m)]))).ravel() \
            if self.roots else np.zeros(0)
        return np.concatenate([q, np.zeros(self.m), q_m, qd, np.zeros(self.m), qd_m, roots, np.zeros(2)])

    def inertia_and_bias(self, y: np.ndarray, y_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M (n + m, n + m), h (n + m,)) of the link side, ``M y_ddot + h = [joint torques; 0]`` (seed 004 eqs.
        27-28): h holds Coriolis and centrifugal terms, gravity, the beams' strain K eta and modal damping (joint
        friction and springs are not in it). Composite-body inertia and recursive bias of the chain, or its
        Lagrangian with a sliding beam (:mod:`flexrobot_ros.flexible_links.chain_dynamics`)."""
        return self.dynamics.inertia_and_bias(y, y_dot)

    def _lagrangian_forward_dynamics(self, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray,
                                     beta: np.ndarray | None = None) -> np.ndarray:
        """y_ddot = I^-1 (tau - h) of the chain's Lagrangian (at root states ``beta`` when it has them)."""
        inertia, bias = self.dynamics.inertia_and_bias(y, y_dot, beta)
        return np.linalg.solve(inertia, tau - bias)

    def bias(self, y: np.ndarray, y_dot: np.ndarray) -> np.ndarray:
        """h(y, y_dot) (n + m,) of :meth:`inertia_and_bias`."""
        return self.dynamics.bias(y, y_dot)

    def static_motor_position(self, q: np.ndarray) -> np.ndarray:
        """q_m holding ``q`` at rest against gravity with undeformed beams (rigid joints: q)."""
        y = np.concatenate([q, np.zeros(self.m)])
        torque = self.bias(y, np.zeros(self.chain.size))[:self.n]
        stiff = np.where(self._rigid, 1.0, self._k * self._w)
        return np.where(self._rigid, q, self._w * q + torque / stiff)

    def frame_placement(self, y: np.ndarray, frame_id: int) -> pin.SE3:
        """World placement of a frame, following the deformed tip when the frame sits at a beam's end."""
        placements = None if self._lagrangian is None else \
            (lambda z: self._lagrangian.evaluate("placements", *self._lagrangian.arguments(z))[0])
        return deformed_frame_placement(self.robot.model, self.chain, frame_id, y, placements)

    def external_force(self, y: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """Generalized force (n + m,) of world-axes wrenches at frame origins (central-difference Jacobian)."""
        tau = np.zeros(self.chain.size)
        for frame_id, wrench in wrenches:
            for k in range(self.chain.size):
                step = 1e-7
                plus, minus = y.copy(), y.copy()
                plus[k] += step
                minus[k] -= step
                a, b = self.frame_placement(plus, frame_id), self.frame_placement(minus, frame_id)
                linear = (a.translation - b.translation) / (2 * step)
                angular = pin.log3(a.rotation @ b.rotation.T) / (2 * step)
                tau[k] += linear @ wrench[:3] + angular @ wrench[3:]
        return tau

    def _compile_derivative(self):
        """The whole state derivative of :meth:`derivative` as generated C of the CasADi Lagrangian
        (:mod:`flexrobot_ros.flexible_links.compiled_dynamics`): ``(x, tau_m, f) -> x_dot``, f (n + m,) the
        generalized force of external wrenches; one C call per evaluation."""
        import casadi as ca

        from flexrobot_ros.flexible_links.compiled_dynamics import compiled_function, quadrature_points
        from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

        if self.roots:
            raise SimulationError(f"robot {self.robot.name}: the compiled plant does not take integrated roots "
                                  "(`roots: integrated` of a sliding link); use `roots: explicit` (same dynamics)")
        n, m, size = self.n, self.m, self.layout.size
        p = 2 * n + m
        x, tau_m, external = ca.SX.sym("x", size), ca.SX.sym("tau_m", n), ca.SX.sym("f", n + m)
        y, q_m, y_dot, qd_m = x[:n + m], x[n + m:p], x[p:p + n + m], x[p + n + m:2 * p]
        q, qd = y[:n], y_dot[:n]
        rigid, elastic, k, w = (ca.DM(v) for v in (self._rigid_f, self._elastic_f, self._k, self._w))
        spring = k * (w * q - q_m)
        tau = ca.vertcat(rigid * tau_m - elastic * w * spring - ca.DM(self._d) * qd, ca.SX.zeros(m)) + external
        motor_rate = rigid * qd + elastic * qd_m
        reference = lagrangian_dynamics(self.chain, quadrature_points(self.chain))
        y_ddot = ca.solve(reference.inertia(y), tau - reference.bias(y, y_dot))
        qdd_m = rigid * y_ddot[:n] + elastic * (tau_m + spring - ca.DM(self._dm) * qd_m) / ca.DM(self._b)
        eta_dot = y_dot[n:]
        dissipated = (ca.dot(qd, ca.DM(self._d) * qd) + ca.dot(qd_m, ca.DM(self._dm) * qd_m)
                      + ca.dot(eta_dot, ca.DM(self._eta_damping) @ eta_dot))
        power_in = ca.dot(tau_m, motor_rate) + ca.dot(external, y_dot)
        out = ca.vertcat(y_dot, motor_rate, y_ddot, qdd_m, dissipated, power_in)
        cse = getattr(ca, "cse", lambda e: e)  # common subexpressions (CasADi >= 3.6)
        function = ca.Function("flexible_plant", [ca.vertcat(x, tau_m, external)], [cse(out)])
        evaluate = compiled_function(function, size + p, size)
        no_force = np.zeros(n + m)
        return lambda x, tau_m, f=no_force: evaluate(np.concatenate([x, tau_m, f]))

    # ------------------------------------------------------------------ plant protocol
    def derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench] = ()) -> np.ndarray:
        if self._compiled_derivative is not None:
            if not wrenches:
                return self._compiled_derivative(x, tau_m)
            return self._compiled_derivative(x, tau_m, self.external_force(x[:self.n + self.m], wrenches))
        n, m = self.n, self.m
        p = 2 * n + m
        y, q_m, y_dot, qd_m = x[:n + m], x[n + m:p], x[p:p + n + m], x[p + n + m:2 * p]
        q, qd = y[:n], y_dot[:n]
        rigid, elastic = self._rigid_f, self._elastic_f
        spring = self._k * (self._w * q - q_m)
        tau = np.zeros(n + m)
        tau[:n] = rigid * tau_m - elastic * self._w * spring - self._d * qd
        motor_rate = rigid * qd + elastic * qd_m
        power_in = float(tau_m @ motor_rate)
        if wrenches:
            external = self.external_force(y, wrenches)
            tau += external
            power_in += float(external @ y_dot)
        r = self.roots
        out = np.empty(2 * p + r + 2)
        if r:  # seed 004 eqs. 45-47: the roots' rates, and the dynamics at the root states
            beta = x[2 * p:2 * p + r]
            y_ddot = self._lagrangian_forward_dynamics(y, y_dot, tau, beta)
            out[2 * p:2 * p + r] = self._lagrangian.rates_of_roots(y, y_dot, beta)
        else:
            y_ddot = self._forward_dynamics(y, y_dot, tau)
        qdd_m = rigid * y_ddot[:n] + elastic * (tau_m + spring - self._dm * qd_m) / self._b
        eta_dot = y_dot[n:]
        dissipated = float(qd @ (self._d * qd) + qd_m @ (self._dm * qd_m) + eta_dot @ self._eta_damping @ eta_dot)
        out[:n + m], out[n + m:p], out[p:p + n + m], out[p + n + m:2 * p] = y_dot, motor_rate, y_ddot, qdd_m
        out[2 * p + r], out[2 * p + r + 1] = dissipated, power_in
        return out

    def jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                 wrenches: Sequence[FrameWrench] = (), coulomb: bool = True) -> np.ndarray:
        """d(xdot)/dx by central differences of :meth:`derivative` (the torque law's slope ``dtau_dx`` included);
        only the fixed-step integrator's lagged linearization and the implicit methods use it."""
        size = self.layout.size
        out = np.zeros((size, size))
        for k in range(size - 2):
            step = 1e-7 * max(1.0, abs(x[k]))
            plus, minus = x.copy(), x.copy()
            plus[k] += step
            minus[k] -= step
            delta = dtau_dx[:, k] * step
            out[:, k] = (self.derivative(plus, tau_m + delta, wrenches)
                         - self.derivative(minus, tau_m - delta, wrenches)) / (2 * step)
        return out

    def coulomb_damping(self, x: np.ndarray) -> None:
        return None

    def relinearize_needed(self, x: np.ndarray, x_lin: np.ndarray, h: float, distance: float) -> bool:
        n = self.n
        return bool(np.abs(x[:n] - x_lin[:n]).max() > distance)

    def energy(self, x: np.ndarray) -> Energy:
        y, q_m, y_dot, qd_m = self._split(x)
        n = self.n
        kinetic, strain, gravity = self.dynamics.energy(y, y_dot, x[self.layout["beta"]] if self.roots else None)
        rotor = np.where(self._rigid, 0.0, self._b * qd_m)
        deflection = self._w * y[:n] - q_m
        size = self.layout.size
        return Energy(kinetic=kinetic + 0.5 * float(qd_m @ rotor),
                      elastic=strain + 0.5 * float(deflection @ (self._k * deflection)), gravitational=gravity,
                      dissipated=float(x[size - 2]), work_in=float(x[size - 1]))

    def elastic_torque(self, q: np.ndarray, q_m: np.ndarray) -> np.ndarray:
        """Joint spring torques k (W q - q_m) [N m] (zero for rigid joints), arrays (..., n)."""
        return self._k * (self._w * q - q_m)

    def frame_acceleration(self, x: np.ndarray, xdot: np.ndarray, frame_id: int) -> np.ndarray:
        """Classical linear acceleration (3,) of a frame's origin, world axes, by central differences in time."""
        y, _, y_dot, _ = self._split(x)
        p = 2 * self.n + self.m
        y_ddot = xdot[p:p + self.n + self.m]
        step = 1e-4

        def position(s: float) -> np.ndarray:
            return self.frame_placement(y + s * y_dot + 0.5 * s * s * y_ddot, frame_id).translation

        return (position(step) - 2 * position(0.0) + position(-step)) / (step * step)

    # ------------------------------------------------------------------ outputs
    def tip_deflections(self, states: np.ndarray) -> np.ndarray:
        """(samples, links, 2) tip deflections w_y, w_z [m] of the flexible links (beam axes)."""
        n, m = self.n, self.m
        states = np.asarray(states)
        return tip_deflections(self.chain, self.deflection_links, states[:, :n], states[:, n:n + m])

    def deformed_tip_transforms(self, x: np.ndarray) -> tuple:
        """tf entries ``<link>`` -> ``<link>/deformed_tip``: each flexible link's deformed end frame (beam axes) in
        its link frame, for RViz (the rigid URDF tree shows the undeformed arm)."""
        n = self.n
        return deformed_tip_transforms(self.chain, self.deflection_links, x[:n], x[n:n + self.m])

    def beam_shapes(self, x: np.ndarray, points: int = 16) -> tuple:
        """Each flexible link's deformed beam axis: ``(link, (points, 3))`` [m] in the link frame, root to tip
        (:func:`~flexrobot_ros.flexible_links.deformed_links.beam_axes`), for an RViz line strip."""
        n = self.n
        return beam_axes(self.chain, self.deflection_links, x[:n], x[n:n + self.m], points)

    def extra_columns(self, states: np.ndarray) -> dict[str, np.ndarray]:
        """``deflection.<link>.y`` and ``deflection.<link>.z`` [m] (z only for links bending both ways); with
        integrated roots (``roots: integrated``), ``beta.<link>.<k>`` the root states [-]."""
        values = self.tip_deflections(states)
        columns = {}
        start = self.layout["beta"].start if self.roots else 0
        for k, (link, i) in enumerate(self.deflection_links):
            columns[f"deflection.{link}.y"] = values[:, k, 0]
            body = self.chain.bodies[i]
            if (body.sliding.planes == 2) if body.sliding is not None else body.beam.m_z:
                columns[f"deflection.{link}.z"] = values[:, k, 1]
            if body.sliding is not None and body.sliding.roots_state:
                for mode in range(body.sliding.modes):
                    columns[f"beta.{link}.{mode + 1}"] = np.asarray(states)[:, start]
                    start += 1
        return columns


def plant_for(robot: FlexibleRobot, **options):
    """The plant that simulates ``robot``: for flexible links or rigid joints, FlexibleLinkPlant, or the composed
    :class:`~flexrobot_ros.simulation.elastic_robot_plant.ElasticRobotPlant` when they come with extra
    elasticities, transmission damping or Coulomb friction; else None."""
    if not (robot.flexible_links or robot.rigid_joints):
        return None
    if needs_elastic_robot(robot):
        return ElasticRobotPlant(robot, **options)
    return FlexibleLinkPlant(robot, **options)


@dataclass(frozen=True)
class FlexibleLinkHold(PDGravityCompensation):
    """PD + gravity compensation of a flexible-link robot (build it with :func:`hold_controller`)."""

    plant: Any = None

    def with_set_point(self, q_d: Any) -> "FlexibleLinkHold":
        return hold_controller(self.plant, q_d, self.kp, self.kd)


def hold_controller(plant: FlexibleLinkPlant | ElasticRobotPlant, q_d, kp=None, kd=None) -> Any:
    """PD + gravity compensation holding ``q_d`` on a flexible-link robot (seed 000 eq. 2.2 on the motor side;
    gravity torque from the chain with undeformed beams; rigid joints are driven directly); on the composed plant,
    its own hold law (:func:`flexrobot_ros.simulation.elastic_robot_plant.hold_controller`)."""
    if isinstance(plant, ElasticRobotPlant):
        return elastic_robot_hold(plant, q_d, kp, kd)
    robot = plant.robot
    q = robot.check_q(q_d, "q_d")
    q_m_d = plant.static_motor_position(q)
    gravity = plant.bias(np.concatenate([q, np.zeros(plant.m)]), np.zeros(plant.chain.size))[:plant.n]
    feedforward = np.where(plant._rigid, gravity, plant._k * (q_m_d - plant._w * q))
    return FlexibleLinkHold(robot=robot, q_d=q, q_m_d=q_m_d, feedforward=feedforward,
                            kp=_gains(robot, kp, robot.kp, "kp"), kd=_gains(robot, kd, robot.kd, "kd"), plant=plant)
__all__ = ["FlexibleLinkHold", "FlexibleLinkPlant", "hold_controller", "plant_for"]
