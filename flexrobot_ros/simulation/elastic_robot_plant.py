"""Forward dynamics of the composed elastic robot (:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`:
rigid and elastic joints, extra elasticities, flexible links, Coulomb friction on any joint) as a simulator
:class:`~flexrobot_ros.simulation.plant.Plant`.

It simulates every robot with flexible links or rigid joints (canadarm, rrp, flexarm2, moberg5_flexlink, mixed4), and
those with extra elasticities or gear dampers on rigid links (kr90_3dof, moberg5).

State layout (the blocks every plant has, then the elastic coordinates, positions and velocities contiguous)::

    x = [q (n), q_m (n), q_e (ne), eta (m), qd (n), qd_m (n), qd_e (ne), eta_dot (m), (beta), dissipated, work_in]

A rigid joint's motor entries repeat its joint's (``q_m = q``, ``qd_m = qd``) so that every controller sees one
layout. A sliding link with ``roots: integrated`` adds its clamped-mass roots as the block ``beta`` (seed 004 eqs.
45-47: beta_dot = dbeta/dd d_dot, started on eq. 38's roots; the default ``explicit`` keeps them functions of d, the
same dynamics); only the numeric path takes them. Dissipated power ``y_dot . f_d`` (viscous and Coulomb friction,
transmission, extra and modal damping); input power ``y_dot . (S tau_m + J^T w)``. Energy: kinetic (links, beams,
rotors), elastic (joint springs, extra springs, beam strain), gravitational.
Three evaluations of the same derivative: ``path="pinocchio"`` (the default for a model without beams,
:attr:`ElasticRobot.rigid_chain`: elastic joints on rigid links, extended flexible joints, the robots with extra
elasticities or gear dampers on rigid links) pinocchio's ABA with the Jacobian from its analytic ABA derivatives (the
configuration dependence of ``J^T w`` left out: wrenches are short excitations, and the Jacobian only steers the
integrators); for elastic joints alone (:attr:`ElasticRobotPlant.joints_only`: no q_e, beams, rigid joints or gear
dampers; the Scompi, LWR4, KR90, planar 2R) the state is ``[q, q_m, qd, qd_m, dissipated, work_in]`` = ``[y, y_dot,
...]`` and seed 000 eq. 2.1 is evaluated on it directly, ABA on the link rows and the motor rows divided by B::

    M(q) qdd + C(q, qd) qd + g(q) + D qd + f_c tanh(qd / w_c) + K W (W q - q_m) = sum_j J_j^T(q) w_j
    B qdd_m + D_m qd_m + f_cm tanh(qd_m / w_c) - K (W q - q_m) = tau_m

(the same numbers as the general pinocchio evaluation, without its index maps and matrix products: the
simulator's speed for the plain robots, ``bench/one_plant_speed.py``);
``path="casadi"`` (the default with ``compiled=True``) the CasADi functions of
:mod:`flexrobot_ros.flexible_links.elastic_robot_functions` composed into the state derivative, with the exact
Jacobian (implicit-function rule, wrench slopes by central differences of ``J^T w``; compiled with a sliding beam,
central differences of the generated derivative), ``compiled=True`` as generated C
cached in the package's code cache (the state derivative and its Jacobian when the plant is built, the Coulomb slope
then too when the model has Coulomb friction, else at its first call; or each at its first call with
``compile_on_first_use=True``: a run that never asks for the Jacobian skips its compile, 10-40 s);
``path="numeric"`` the DeNOC recursion (or a sliding beam's Lagrangian) with a central-difference Jacobian (the
reference the CasADi path is tested against, ``bench/elastic_robot.py``; the default with beams unless compiled, as
the former flexible-link plant: the CasADi composition takes 8 s of CPU to build on the Canadarm and 10-80 s on the
RRP, in every process that simulates one), the chain's (I, h) shared through
:func:`~flexrobot_ros.flexible_links.chain_dynamics.chain_dynamics`'s memory with a model-based controller that asks
at the same state (:meth:`inertia_and_bias`, seed 004's decoupling law).
Output columns added by :meth:`extra_columns`: ``q_e.<name>`` [rad | m], ``deflection.<link>.y`` / ``.z`` [m],
the tip deflection of each flexible link in its beam frame, and ``beta.<link>.<k>`` the integrated roots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import casadi as ca
import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError, SimulationError
from flexrobot_ros.flexible_links.compiled_dynamics import compiled_function, with_common_subexpressions
from flexrobot_ros.flexible_links.deformed_links import beam_axes, deformed_tip_transforms
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.flexible_links.tip_deflections import deflection_links, tip_deflections
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.simulation.controllers import PDGravityCompensation, _gains
from flexrobot_ros.simulation.plant import Energy, FrameWrench, StateLayout


class ElasticRobotPlant:
    """The composed elastic robot as a Plant (one pinocchio Data inside: one plant per thread)."""

    def __init__(self, robot: FlexibleRobot, method: str | None = None, modes: int | None = None,
                 elements: int | None = None, compiled: bool = False, path: str | None = None,
                 compile_on_first_use: bool = False):
        if path not in (None, "casadi", "numeric", "pinocchio"):
            raise SimulationError(f"robot {robot.name}: path: expected 'casadi', 'numeric' or 'pinocchio', "
                                  f"got {path!r}")
        self.robot = robot
        self.model = ElasticRobot(robot, method=method, modes=modes, elements=elements)
        model = self.model
        if model.roots and (compiled or path not in (None, "numeric")):
            raise SimulationError(f"robot {robot.name}: the compiled and CasADi plants do not take integrated roots "
                                  "(`roots: integrated` of a sliding link); use `roots: explicit` (same dynamics) or "
                                  "path='numeric'")
        if path is None:
            path = "casadi" if compiled else "pinocchio" if model.rigid_chain else "numeric"
        if compiled and path != "casadi":
            raise SimulationError(f"robot {robot.name}: compiled=True needs path='casadi'")
        if path == "pinocchio" and not model.rigid_chain:
            raise SimulationError(f"robot {robot.name}: path='pinocchio' needs a model without flexible links")
        self.path = path
        if path == "numeric" and model.chain_dynamics.lagrangian is not None:  # a sliding beam's Lagrangian, which
            model.chain_dynamics.lagrangian.eliminate_common_subexpressions()  # the integration evaluates each step
        n, ne, m = robot.n, model.ne, model.m
        self.n, self.ne, self.m = n, ne, m
        self.joint_names = robot.joint_names
        self.elastic_names = model.ext.elastic_names
        self.chain, self.beam_stiffness = model.chain, model.beam_stiffness
        p, r = 2 * n + ne + m, model.roots
        self.roots = r
        self.layout = StateLayout(size=2 * p + r + 2, slices={
            "q": slice(0, n), "q_m": slice(n, 2 * n), "q_e": slice(2 * n, 2 * n + ne), "eta": slice(2 * n + ne, p),
            "qd": slice(p, p + n), "qd_m": slice(p + n, p + 2 * n), "qd_e": slice(p + 2 * n, p + 2 * n + ne),
            "eta_dot": slice(p + 2 * n + ne, 2 * p), "positions": slice(0, p), "velocities": slice(p, 2 * p),
            **({"beta": slice(2 * p, 2 * p + r)} if r else {}),
            "dissipated": slice(2 * p + r, 2 * p + r + 1), "work_in": slice(2 * p + r + 1, 2 * p + r + 2)})
        # position index in x of each coordinate of y
        self._pos = np.empty(model.size, dtype=int)
        self._pos[model.q_index] = np.arange(n)
        self._pos[model.motor_index] = n + model.elastic_joints
        self._pos[model.qe_index] = 2 * n + np.arange(ne)
        self._pos[np.arange(model.eta.start, model.eta.stop)] = 2 * n + ne + np.arange(m)
        self._vel = self._pos + p
        self._rigid = np.flatnonzero(model.rigid)
        #: elastic joints alone on rigid links (module docstring): y = x[:2n], y_dot = x[2n:4n]
        self.joints_only = path == "pinocchio" and model.joints_only
        if self.joints_only:
            self._prepare_joints()
        #: the coordinates whose change makes a Jacobian stale (:meth:`relinearize_needed`)
        self._moving = self.layout["q"] if self.joints_only else slice(0, self.layout["eta"].start)
        #: exact Jacobian on the CasADi path, except compiled with a sliding beam: the C of its Lagrangian's
        #: Jacobian takes the compiler tens of minutes (RRP), so central differences of the compiled derivative
        self._exact_jacobian = path == "casadi" and not (compiled and model.chain_dynamics.lagrangian is not None)
        self._symbolic = self._build_symbolic(compiled, compile_on_first_use) if path == "casadi" else None
        self.deflection_links = deflection_links(robot, model.chain)  # (link, chain body index)

    # ------------------------------------------------------------------ helpers
    def frame_id(self, name: str) -> int:
        """Index of frame ``name`` in the extended model (ModelError listing the known frames otherwise)."""
        return self.model.frame_id(name)

    def frame_position(self, x: np.ndarray, frame_id: int) -> np.ndarray:
        """World position (3,) [m] of a frame's origin at state x, following the deformed links
        (:meth:`ElasticRobot.frame_placement`)."""
        return np.array(self.model.frame_placement(x[self._pos], frame_id).translation)

    def coordinates(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(y, y_dot) of the elastic-robot model at state x."""
        return x[self._pos], x[self._vel]

    def _beta(self, x: np.ndarray) -> np.ndarray | None:
        """The integrated roots of state x (None without them)."""
        return x[self.layout["beta"]] if self.roots else None

    def inertia_and_bias(self, z: np.ndarray, z_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(I (c, c), h (c,)) of the link side over the chain's coordinates ``z = [q_a, eta]`` (c of them: the
        joints in chain order, then the beams'; ``[q, eta]`` without extra elasticities), ``I z_ddot + h = [joint
        torques; 0]`` [N m | N] (seed 004 eqs. 27-28): h holds Coriolis and centrifugal terms, gravity, the beams'
        strain K eta and modal damping (joint friction, springs and motors are not in it). The chain's composite-body
        inertia and recursive bias, or its Lagrangian with a sliding beam; a controller asking at the plant's state
        shares the plant's evaluation (module docstring)."""
        return self.model.chain_dynamics.inertia_and_bias(z, z_dot)

    def state(self, q, q_m, qd=None, qd_m=None) -> np.ndarray:
        """A state with q_e and eta at their static equilibrium at ``q`` (springs carrying gravity) and at rest,
        the given joint and motor positions and rates (a rigid joint's motor entries set to its joint's)."""
        robot = self.robot
        q = robot.check_q(q, "q")
        try:
            y = self.model.static_equilibrium(q)
        except ModelError as error:
            raise SimulationError(f"robot {robot.name}: {error}; give an initial pose inside them") from None
        q_m = robot.check_q(q_m, "q_m").copy()
        qd = np.zeros(self.n) if qd is None else robot.check_q(qd, "qd")
        qd_m = np.zeros(self.n) if qd_m is None else robot.check_q(qd_m, "qd_m").copy()
        q_m[self._rigid], qd_m[self._rigid] = q[self._rigid], qd[self._rigid]
        x = self.rest_state(y)
        lay = self.layout
        x[lay["q"]], x[lay["q_m"]], x[lay["qd"]], x[lay["qd_m"]] = q, q_m, qd, qd_m
        return x

    def rest_state(self, y: np.ndarray) -> np.ndarray:
        """The state at rest at the model's coordinates ``y`` (:class:`ElasticRobot`: joints, motors, q_e, eta;
        every rate and energy integral zero, a rigid joint's motor entry its joint's, integrated roots on eq. 38's
        roots at the free lengths)."""
        y = np.asarray(y, dtype=float)
        x = np.zeros(self.layout.size)
        x[self._pos] = y
        x[self.layout["q_m"].start + self._rigid] = y[self.model.q_index[self._rigid]]
        if self.roots:  # started on eq. 38's roots at the free lengths
            lagrangian = self.model.chain_dynamics.lagrangian
            x[self.layout["beta"]] = lagrangian.evaluate("explicit_roots", y[:self.model.chain.size])[0].ravel()
        return x

    def static_motor_position(self, q: np.ndarray) -> np.ndarray:
        """Motor angles (n,) holding ``q`` at rest with q_e and eta at their static equilibrium (rigid joints: q)."""
        return self.model.motor_positions(self.model.static_equilibrium(np.asarray(q, dtype=float)))

    # ------------------------------------------------------------------ elastic joints alone (seed 000 eq. 2.1)
    def _prepare_joints(self) -> None:
        """Constants of :attr:`joints_only`'s evaluation: W, K, K W, 1 / B (n,), viscous [D, D_m] and Coulomb [f_c,
        f_cm] friction coefficients (2n,), the Coulomb width w_c [rad/s | m/s]."""
        robot = self.robot
        self._w, self._k = robot.transmission.copy(), robot.stiffness.copy()
        self._kw = self._k * self._w
        self._inv_b = 1.0 / robot.motor_inertia
        self._viscous = np.concatenate([robot.link_damping, robot.motor_damping])
        self._coulomb_force = np.concatenate([robot.link_coulomb, robot.motor_coulomb])
        self._width = float(robot.coulomb_width)
        self._coulomb = self.model.coulomb
        self._pinocchio = self.model.model, self.model.data

    def _joint_friction(self, velocities: np.ndarray) -> np.ndarray:
        """Viscous and smoothed Coulomb friction (2n,) [N m | N] of ``velocities = [qd, qd_m]``."""
        friction = self._viscous * velocities
        if self._coulomb:
            friction += self._coulomb_force * np.tanh(velocities / self._width)
        return friction

    def _joint_coulomb_slope(self, velocities: np.ndarray) -> np.ndarray:
        """d/dv of f_c tanh(v / w_c) = f_c / w_c (1 - tanh^2) (2n,), without overflow at high speed."""
        return self._coulomb_force / self._width * (1.0 - np.tanh(velocities / self._width) ** 2)

    def _joint_derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """``xdot`` (4n + 2,) of seed 000 eq. 2.1 (module docstring): ABA on the link rows, the motor rows / B."""
        n = self.n
        q, q_m, velocities = x[:n], x[n:2 * n], x[2 * n:4 * n]
        qd, qd_m = velocities[:n], velocities[n:]
        spring = self._k * (self._w * q - q_m)
        friction = self._joint_friction(velocities)
        tau_link = -self._w * spring - friction[:n]
        power_in = tau_m @ qd_m
        if wrenches:
            tau_ext = self.model.wrench_force(x[:2 * n], wrenches)[:n]
            tau_link += tau_ext
            power_in += tau_ext @ qd
        qdd = pin.aba(*self._pinocchio, q, qd, tau_link)
        qdd_m = (tau_m + spring - friction[n:]) * self._inv_b
        return np.concatenate((velocities, qdd, qdd_m, (velocities @ friction, power_in)))

    def _joint_jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                        wrenches: Sequence[FrameWrench], coulomb: bool) -> np.ndarray:
        """d(xdot)/dx (4n + 2, 4n + 2) of :meth:`_joint_derivative`: pinocchio's ``computeABADerivatives`` for the
        link rows, springs, friction and the energy integrals exact, ``J^T w`` held constant."""
        n, size = self.n, self.layout.size
        q, q_m, velocities = x[:n], x[n:2 * n], x[2 * n:4 * n]
        qd, qd_m = velocities[:n], velocities[n:]
        spring = self._k * (self._w * q - q_m)
        friction = self._joint_friction(velocities)
        slope = self._viscous.copy()
        if self._coulomb and coulomb:
            slope += self._joint_coulomb_slope(velocities)
        tau_ext = self.model.wrench_force(x[:2 * n], wrenches)[:n] if wrenches else np.zeros(n)
        tau_link = -self._w * spring - friction[:n] + tau_ext
        ddq_dq, ddq_dv, m_inv = (np.array(a) for a in pin.computeABADerivatives(*self._pinocchio, q, qd, tau_link))
        jac = np.zeros((size, size))
        jac[:n, 2 * n:3 * n] = np.eye(n)
        jac[n:2 * n, 3 * n:4 * n] = np.eye(n)
        link = slice(2 * n, 3 * n)
        jac[link, :n] = ddq_dq - m_inv * (self._kw * self._w)
        jac[link, n:2 * n] = m_inv * self._kw
        jac[link, 2 * n:3 * n] = ddq_dv - m_inv * slope[:n]
        motor = slice(3 * n, 4 * n)
        jac[motor] = dtau_dx * self._inv_b[:, None]
        jac[motor, :n] += np.diag(self._kw * self._inv_b)
        jac[motor, n:2 * n] -= np.diag(self._k * self._inv_b)
        jac[motor, 3 * n:4 * n] -= np.diag(slope[n:] * self._inv_b)
        jac[4 * n, 2 * n:4 * n] = friction + velocities * slope
        work = 4 * n + 1
        jac[work] = qd_m @ dtau_dx
        jac[work, 3 * n:4 * n] += tau_m
        jac[work, 2 * n:3 * n] += tau_ext
        return jac

    def _joint_coulomb_damping(self, x: np.ndarray) -> np.ndarray:
        """:meth:`coulomb_damping` of :attr:`joints_only`: ``-blockdiag(M^-1 diag(s_link), diag(s_motor / B))``."""
        n = self.n
        m_inv = pin.computeMinverse(*self._pinocchio, x[:n])
        m_inv = np.triu(m_inv) + np.triu(m_inv, 1).T
        slope = self._joint_coulomb_slope(x[2 * n:4 * n])
        damping = np.zeros((2 * n, 2 * n))
        damping[:n, :n] = -m_inv * slope[:n]
        damping[n:, n:] = -np.diag(slope[n:] * self._inv_b)
        return damping

    # ------------------------------------------------------------------ CasADi path
    def _state_derivative(self, x: ca.SX, y_ddot: ca.SX, dissipative: ca.SX, applied: ca.SX) -> ca.SX:
        """x_dot of the module docstring's layout from the accelerations and the two powers' forces."""
        model, lay = self.model, self.layout
        p = lay["velocities"].start
        y_dot = x[self._vel.tolist()]
        out = ca.SX.zeros(lay.size)
        out[:p] = x[p:2 * p]
        out[self._vel.tolist()] = y_ddot
        for j in self._rigid:
            out[lay["qd_m"].start + j] = y_ddot[model.q_index[j]]
            out[lay["q_m"].start + j] = y_dot[model.q_index[j]]
        out[lay["dissipated"].start] = ca.dot(y_dot, dissipative)
        out[lay["work_in"].start] = ca.dot(y_dot, applied)
        return out

    def _build_symbolic(self, compiled: bool, on_first_use: bool) -> tuple:
        """(derivative, pieces, shapes, coulomb): ``derivative(x, tau_m, f, c) -> x_dot``, ``pieces(x, tau_m, f, c,
        a) -> (M, dr/dx, dr/dtau, dxdot/dx, dxdot/da, dxdot/dtau)`` at fixed accelerations a (their ``shapes``),
        ``coulomb(x) -> (M, Coulomb slope)``, each ``(packed input) -> packed output`` (generated C with
        ``compiled``: the first two now and the third too with Coulomb friction, or each when first called with
        ``on_first_use``). The CasADi function of the first is kept as :attr:`derivative_function`."""
        F = self.model.functions
        size, n, L = self.model.size, self.n, self.layout.size
        x = ca.SX.sym("x", L)
        y, y_dot = x[self._pos.tolist()], x[self._vel.tolist()]
        substitute = [F.y, F.y_dot]
        values = [y, y_dot]

        def on_state(expression: ca.SX) -> ca.SX:
            return ca.substitute([expression], substitute, values)[0]
        inputs = ca.vertcat(x, F.u, F.f, F.c)
        dissipative, applied = on_state(F.dissipative_expression), on_state(F.applied_expression)
        x_dot = self._state_derivative(x, on_state(F.y_ddot), dissipative, applied)
        at_a = self._state_derivative(x, F.a, dissipative, applied)
        residual = on_state(F.residual)
        derivative = ca.Function("elastic_robot_plant", [inputs], [ca.densify(x_dot)])
        self.derivative_function = derivative
        pieces_out = ca.vertcat(*(ca.vec(ca.densify(v)) for v in (
            on_state(F.inertia_expression), ca.jacobian(residual, x), ca.jacobian(residual, F.u),
            ca.jacobian(at_a, x), ca.jacobian(at_a, F.a), ca.jacobian(at_a, F.u))))
        pieces = ca.Function("elastic_robot_plant_jacobian", [ca.vertcat(inputs, F.a)], [pieces_out])
        shapes = [(size, size), (size, L), (size, n), (L, L), (L, size), (L, n)]
        slope = on_state(self.model.force_function(F.y, F.y_dot, 1.0)[2])
        coulomb = ca.Function("elastic_robot_plant_coulomb", [x], [
            ca.densify(ca.vertcat(ca.vec(on_state(F.inertia_expression)), slope))])
        functions = ((derivative, L + n + size + 1, L), (pieces, L + n + 2 * size + 1, pieces_out.numel()),
                     (coulomb, L, size * size + size))
        if not compiled:  # CasADi's virtual machine on the functions with common subexpressions eliminated
            evaluate, evaluate_pieces, evaluate_coulomb = (
                lambda v, function=with_common_subexpressions(function): np.array(function(v)).ravel()
                for function, _, _ in functions)
        elif on_first_use:
            evaluate, evaluate_pieces, evaluate_coulomb = (_FirstUse(*entry) for entry in functions)
        else:  # the Coulomb slope only serves a model with Coulomb friction: compiled when first asked otherwise
            evaluate = compiled_function(*functions[0])
            evaluate_pieces = (compiled_function if self._exact_jacobian else _FirstUse)(*functions[1])
            evaluate_coulomb = (compiled_function if self.model.coulomb else _FirstUse)(*functions[2])
        return evaluate, evaluate_pieces, shapes, evaluate_coulomb

    def _external_force(self, x: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        return self.model.wrench_force(x[self._pos], wrenches) if wrenches else np.zeros(self.model.size)

    # ------------------------------------------------------------------ plant protocol
    def _derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench],
                    coulomb: bool) -> np.ndarray:
        y_ddot, dissipative, applied = self._accelerations(x, tau_m, wrenches, coulomb)
        out = self._pack(x, y_ddot, dissipative, applied)
        if self.roots:  # seed 004 eqs. 45-47: the roots' rates
            c = self.model.chain.size
            y, y_dot = self.coordinates(x)
            out[self.layout["beta"]] = self.model.chain_dynamics.lagrangian.rates_of_roots(y[:c], y_dot[:c],
                                                                                           self._beta(x))
        return out

    def _accelerations(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench],
                       coulomb: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(y_ddot, f_d, S u + J^T w) at state x (numeric and pinocchio paths)."""
        y, y_dot = self.coordinates(x)
        dissipative, applied, force = self._forces(x, tau_m, wrenches, coulomb)
        return self.model.acceleration(y, y_dot, force, self._beta(x)), dissipative, applied

    def _forces(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench],
                coulomb: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(f_d, S u + J^T w, their sum with the springs S u + J^T w - f_el - f_d) (size,) at state x."""
        model = self.model
        y, y_dot = self.coordinates(x)
        dissipative = model.dissipative_force(y_dot, coulomb)
        applied = model.input_map @ tau_m
        if wrenches:
            applied = applied + model.wrench_force(y, wrenches)
        return dissipative, applied, applied - model.elastic_force(y) - dissipative

    def _pack(self, x: np.ndarray, y_ddot: np.ndarray, dissipative: np.ndarray, applied: np.ndarray) -> np.ndarray:
        """x_dot of the module docstring's layout from the accelerations and the two powers' forces."""
        model = self.model
        y_dot = x[self._vel]
        out = np.empty(self.layout.size)
        lay, p = self.layout, self.layout["velocities"].start
        out[:p] = x[p:2 * p]
        out[self._vel] = y_ddot
        out[lay["qd_m"].start + self._rigid] = y_ddot[model.q_index[self._rigid]]
        out[lay["q_m"].start + self._rigid] = y_dot[model.q_index[self._rigid]]
        out[lay["dissipated"]] = y_dot @ dissipative
        out[lay["work_in"]] = y_dot @ applied
        return out

    def derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench] = ()) -> np.ndarray:
        """``xdot`` for motor torques ``tau_m`` (n,) [N m | N] and external wrenches (module docstring)."""
        if self.joints_only:
            return self._joint_derivative(x, tau_m, wrenches)
        tau_m = np.asarray(tau_m, dtype=float)
        if self._symbolic is None:
            return self._derivative(x, tau_m, wrenches, True)
        return self._symbolic[0](np.concatenate([x, tau_m, self._external_force(x, wrenches), [1.0]]))

    def jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                 wrenches: Sequence[FrameWrench] = (), coulomb: bool = True) -> np.ndarray:
        """d(xdot)/dx (the torque law's slope ``dtau_dx`` (n, size) included; ``coulomb=False`` leaves the smoothed
        Coulomb slopes out): exact on the CasADi path (module docstring), central differences on the numeric one and
        of the generated C of a compiled plant with a sliding beam."""
        tau_m = np.asarray(tau_m, dtype=float)
        if self.joints_only:
            return self._joint_jacobian(x, tau_m, dtau_dx, wrenches, coulomb)
        if self.path == "pinocchio":
            return self._pinocchio_jacobian(x, tau_m, dtau_dx, wrenches, coulomb)
        if not self._exact_jacobian:
            return self._difference_jacobian(x, tau_m, dtau_dx, wrenches, coulomb)
        evaluate, evaluate_pieces, shapes, _ = self._symbolic
        f = self._external_force(x, wrenches)
        head = np.concatenate([x, tau_m, f, [float(coulomb)]])
        a = evaluate(head)[self._vel]
        values, start, pieces = evaluate_pieces(np.concatenate([head, a])), 0, []
        for rows, cols in shapes:
            pieces.append(values[start:start + rows * cols].reshape(rows, cols, order="F"))
            start += rows * cols
        M, r_x, r_tau, s_x, s_a, s_tau = pieces
        if wrenches:  # d(J^T w)/dy enters the residual with a minus sign
            r_x = r_x - self._wrench_slope(x, wrenches)
        slopes = np.linalg.solve(M, -np.hstack([r_x, r_tau]))
        size = self.layout.size
        return s_x + s_a @ slopes[:, :size] + (s_tau + s_a @ slopes[:, size:]) @ dtau_dx

    def _pinocchio_jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                            wrenches: Sequence[FrameWrench], coulomb: bool) -> np.ndarray:
        """d(xdot)/dx on a rigid chain: :meth:`ElasticRobot.rigid_acceleration_jacobian` mapped onto the state, the
        torque law through the input map, the energy rows exact (``J^T w`` held constant)."""
        model, lay = self.model, self.layout
        y, y_dot = self.coordinates(x)
        dissipative, applied, force = self._forces(x, tau_m, wrenches, True)
        da_dy, da_dv, inverse = model.rigid_acceleration_jacobian(y, y_dot, force, coulomb)
        size = lay.size
        accelerations = np.zeros((model.size, size))
        accelerations[:, self._pos] = da_dy
        accelerations[:, self._vel] += da_dv
        accelerations += inverse @ (model.input_map @ dtau_dx)
        jac = np.zeros((size, size))
        positions, velocities = lay["positions"], lay["velocities"]
        jac[positions, velocities] = np.eye(positions.stop - positions.start)
        jac[self._vel] = accelerations
        rows = model.q_index[self._rigid]
        jac[lay["qd_m"].start + self._rigid] = accelerations[rows]
        jac[lay["q_m"].start + self._rigid] = 0.0
        jac[lay["q_m"].start + self._rigid, self._vel[rows]] = 1.0
        damping = model.damping_matrix + (np.diag(model.coulomb_slope(y_dot)) if coulomb and model.coulomb else 0.0)
        d = lay["dissipated"].start
        jac[d, self._vel] = dissipative + damping.T @ y_dot
        work = lay["work_in"].start
        jac[work] = y_dot @ model.input_map @ dtau_dx
        jac[work, self._vel] += applied
        return jac

    def _wrench_slope(self, x: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """d(J^T w)/dx (size, state size), central differences over the position block."""
        out = np.zeros((self.model.size, self.layout.size))
        for k in range(self.layout["velocities"].start):
            step = 1e-7 * max(1.0, abs(x[k]))
            plus, minus = x.copy(), x.copy()
            plus[k] += step
            minus[k] -= step
            out[:, k] = (self._external_force(plus, wrenches) - self._external_force(minus, wrenches)) / (2 * step)
        return out

    def _difference_jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                             wrenches: Sequence[FrameWrench], coulomb: bool) -> np.ndarray:
        size = self.layout.size
        out = np.zeros((size, size))
        if self._symbolic is None:
            derivative = self._derivative
        else:
            def derivative(x, tau, wrenches, coulomb):
                return self._symbolic[0](np.concatenate([x, tau, self._external_force(x, wrenches), [float(coulomb)]]))
        for k in range(size - 2):
            step = 1e-7 * max(1.0, abs(x[k]))
            plus, minus = x.copy(), x.copy()
            plus[k] += step
            minus[k] -= step
            delta = dtau_dx[:, k] * step
            out[:, k] = (derivative(plus, tau_m + delta, wrenches, coulomb)
                         - derivative(minus, tau_m - delta, wrenches, coulomb)) / (2 * step)
        return out

    def coulomb_damping(self, x: np.ndarray) -> np.ndarray | None:
        """d(accelerations)/d(velocities) of the smoothed Coulomb friction alone (velocity block order
        [qd, qd_m, qd_e, eta_dot]): -M^-1 diag(slope), or None without Coulomb friction."""
        model = self.model
        if not model.coulomb:
            return None
        if self.joints_only:
            return self._joint_coulomb_damping(x)
        if self.path == "pinocchio":
            y, y_dot = self.coordinates(x)
            block = -model.inverse_inertia(y) * model.coulomb_slope(y_dot)
        else:
            if self._symbolic is None:
                y, y_dot = self.coordinates(x)
                inertia, slope = model.inertia(y), model.coulomb_slope(y_dot)
            else:
                values, size = self._symbolic[3](x), model.size
                inertia, slope = values[:size * size].reshape(size, size, order="F"), values[size * size:]
            block = -np.linalg.solve(inertia, np.diag(slope))
        v0 = self.layout["velocities"].start
        rows = self._vel - v0
        out = np.zeros((v0, v0))
        out[np.ix_(rows, rows)] = block
        n = self.n
        out[n + self._rigid] = out[self._rigid]  # a rigid joint's motor rate is its joint rate
        return out

    def relinearize_needed(self, x: np.ndarray, x_lin: np.ndarray, h: float, distance: float) -> bool:
        """Whether a joint, motor or extra-elastic coordinate moved by more than ``distance`` [rad | m] since
        ``x_lin`` (for :attr:`joints_only`, a joint coordinate: M(q) and g(q) change with q alone, the motor side is
        linear). The beams' coordinates do not count: modal amplitudes or nodal values, not angles, they oscillate
        about the pose at the beams' frequencies, and the configuration the Jacobian follows is the joints' (the
        rule of the former flexible-link plant, which the regression data of canadarm and rrp hold)."""
        p = self._moving
        return bool(np.abs(x[p] - x_lin[p]).max() > distance)

    def energy(self, x: np.ndarray) -> Energy:
        """Kinetic, elastic and gravitational energy [J] and the two integrals of the state."""
        kinetic, elastic, gravitational = self.model.energy(*self.coordinates(x), self._beta(x))
        lay = self.layout
        return Energy(kinetic=kinetic, elastic=elastic, gravitational=gravitational,
                      dissipated=float(x[lay["dissipated"].start]), work_in=float(x[lay["work_in"].start]))

    def elastic_torque(self, q: np.ndarray, q_m: np.ndarray) -> np.ndarray:
        """Joint spring torques K (W q - q_m) [N m] (zero for rigid joints), arrays (..., n)."""
        k = np.where(self.model.rigid, 0.0, self.robot.stiffness)
        return k * (self.robot.transmission * np.asarray(q) - np.asarray(q_m))

    def frame_acceleration(self, x: np.ndarray, xdot: np.ndarray, frame_id: int) -> np.ndarray:
        """Classical linear acceleration (3,) [m/s^2] of a frame's origin, world axes, by central differences in
        time of its position along y + s y_dot + s^2/2 y_ddot (pinocchio's classical acceleration on a rigid
        chain)."""
        y, y_dot = self.coordinates(x)
        y_ddot = xdot[self._vel]
        if self.model.rigid_chain:
            model, data, c = self.model.model, self.model.data, self.model.chain.size
            pin.forwardKinematics(model, data, y[:c], y_dot[:c], y_ddot[:c])
            return np.array(pin.getFrameClassicalAcceleration(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED).linear)
        step = 1e-4

        def position(s: float) -> np.ndarray:
            return self.model.frame_placement(y + s * y_dot + 0.5 * s * s * y_ddot, frame_id).translation

        return (position(step) - 2 * position(0.0) + position(-step)) / (step * step)

    def _chain_coordinates(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q_a (samples, na), eta (samples, m)) of states (samples, state size): the chain's joint coordinates
        (one per body) and beam coordinates."""
        y = np.atleast_2d(states)[:, self._pos]
        return y[:, :self.model.na], y[:, self.model.eta]

    def tip_deflections(self, states: np.ndarray) -> np.ndarray:
        """(samples, links, 2) tip deflections w_y, w_z [m] of the flexible links (beam axes), ``deflection_links``
        order."""
        return tip_deflections(self.model.chain, self.deflection_links, *self._chain_coordinates(states))

    def deformed_tip_transforms(self, x: np.ndarray) -> tuple:
        """tf entries ``<link>`` -> ``<link>/deformed_tip``: each flexible link's deformed end frame in its link frame
        (:func:`~flexrobot_ros.flexible_links.deformed_links.deformed_tip_transforms`)."""
        q, eta = self._chain_coordinates(x)
        return deformed_tip_transforms(self.model.chain, self.deflection_links, q[0], eta[0])

    def beam_shapes(self, x: np.ndarray, points: int = 16) -> tuple:
        """Each flexible link's deformed beam axis ``(link, (points, 3))`` [m] in the link frame, root to tip
        (:func:`~flexrobot_ros.flexible_links.deformed_links.beam_axes`)."""
        q, eta = self._chain_coordinates(x)
        return beam_axes(self.model.chain, self.deflection_links, q[0], eta[0], points)

    def extra_columns(self, states: np.ndarray) -> dict[str, np.ndarray]:
        """``q_e.<name>`` [rad | m], ``qd_e.<name>`` [rad/s | m/s], ``deflection.<link>.y`` / ``.z`` [m] (tip
        deflection in beam axes; z only for links bending both ways) and, with integrated roots, ``beta.<link>.<k>``
        the root states [-]."""
        states = np.asarray(states)
        columns = {f"{block}.{name}": states[:, self.layout[block]][:, i] for block in ("q_e", "qd_e")
                   for i, name in enumerate(self.elastic_names)}
        values = self.tip_deflections(states)
        for k, (link, i) in enumerate(self.deflection_links):
            columns[f"deflection.{link}.y"] = values[:, k, 0]
            body = self.model.chain.bodies[i]
            if (body.sliding.planes == 2) if body.sliding is not None else body.beam.m_z:
                columns[f"deflection.{link}.z"] = values[:, k, 1]
        start = self.layout["beta"].start if self.roots else 0
        for link, i in self.deflection_links:
            sliding = self.model.chain.bodies[i].sliding
            if sliding is not None and sliding.roots_state:
                for mode in range(sliding.modes):
                    columns[f"beta.{link}.{mode + 1}"] = states[:, start]
                    start += 1
        return columns


class _FirstUse:
    """A compiled function (:func:`compiled_function`) whose C is generated and compiled at its first call."""

    def __init__(self, function: ca.Function, n_in: int, n_out: int):
        self._arguments = (function, n_in, n_out)
        self._evaluate = None

    def __call__(self, values: np.ndarray) -> np.ndarray:
        if self._evaluate is None:
            self._evaluate = compiled_function(*self._arguments)
        return self._evaluate(values)


@dataclass(frozen=True)
class ElasticRobotHold(PDGravityCompensation):
    """PD + gravity compensation of the composed model (build it with :func:`hold_controller`)."""

    plant: Any = None

    def with_set_point(self, q_d: Any) -> "ElasticRobotHold":
        return hold_controller(self.plant, q_d, self.kp, self.kd)


def hold_controller(plant: ElasticRobotPlant, q_d: Any, kp: Any = None, kd: Any = None) -> ElasticRobotHold:
    """PD + gravity compensation holding ``q_d``: seed 000 eq. 2.2 on the motors of elastic joints, directly on
    rigid joints, with the constant torques that hold the static equilibrium (q_e, eta deflected by gravity)."""
    robot = plant.robot
    q = robot.check_q(q_d, "q_d")
    y = plant.model.static_equilibrium(q)
    return ElasticRobotHold(robot=robot, q_d=q, q_m_d=plant.model.motor_positions(y),
                            feedforward=plant.model.holding_torque(y), kp=_gains(robot, kp, robot.kp, "kp"),
                            kd=_gains(robot, kd, robot.kd, "kd"), plant=plant)


__all__ = ["ElasticRobotHold", "ElasticRobotPlant", "hold_controller"]
