"""The tool-space inverse dynamics of any robot the package loads as a DAE (seed 002, sections 4 and 7, on the
general model of :class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`: elastic and rigid joints,
extra elasticities, flexible links).

Unknowns per time (``x``, size 2 s + n with s = ``model.size``)::

    x = [y (s), v (s), u (n)]      y = [q_a, eta, q_m] the model's coordinates [rad | m], v = y', u the motor torques
                                   [N m | N] (after the gear; a rigid joint's acts on the joint)

Equations ``F(x, y', v', theta) = 0`` (2 s + n rows, in this order)::

    (y' - v) / h                                             s rows   [rad/s^2 | m/s^2]
    M(y) v' + h(y, v) + f_el(y) + f_d(v) - S u               s rows   [N m | N]   (ElasticRobotFunctions.residual)
    (Gamma(y) - theta(t)) / h^2                              n rows   [m/s^2]

Gamma the ``tool_axes`` coordinates of the robot's tool frame following the deformed links (seed 002 eq. 2 on the
deformed tip: :meth:`ElasticRobotFunctions.frame_position`), theta the tool reference. The row scales 1/h and 1/h^2
(seed 002 section 9.2's scaling of the differentiated rows; h the BDF step) make the three blocks the same size for
the least-squares form (:mod:`.elastic_robot_optimization`); Newton's iterates do not depend on them. The output is
a position constraint of relative degree two in u: differential index 3 (one more than the dynamics' order).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import casadi as cs
import numpy as np

from flexrobot_ros.dynamics.dae.inverse_dae import DaeError, newton
from flexrobot_ros.dynamics.dae.reference import as_reference
from flexrobot_ros.dynamics.dae.tool_axes import AXIS_INDEX, default_tool_axes
from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot


class ElasticRobotDae:
    """Residual, Jacobians and consistent rest states of ``model``'s tool-space inverse dynamics along
    ``reference`` (a CartesianLine or anything with ``evaluate(t, 0)``, ``dimension``; module docstring).

    ``tool_axes`` the n tool-point coordinates to control (default: x, y, z for three actuators, the two of the
    plane of motion for a planar two-joint arm)."""

    def __init__(self, model: ElasticRobot, reference: Any, tool_axes: Sequence[str] | None = None):
        robot = model.robot
        self.model, self.robot, self.n, self.size = model, robot, model.n, model.size
        self.reference = as_reference(reference)
        if robot.tool_frame is None:
            raise DaeError(f"robot {robot.name}: no tool_frame in its flexibility YAML: a tool-space reference needs "
                           "the frame to move")
        self.tool_axes = tuple(tool_axes) if tool_axes is not None else default_tool_axes(robot)
        unknown = [a for a in self.tool_axes if a not in AXIS_INDEX]
        if unknown or len(self.tool_axes) != model.n:
            raise DaeError(f"robot {robot.name}: tool_axes {list(self.tool_axes)}: expected {model.n} of x, y, z (one "
                           "output per actuator)")
        if self.reference.dimension != model.n:
            raise DaeError(f"robot {robot.name}: the tool reference has {self.reference.dimension} coordinates; "
                           f"{model.n} expected (tool axes {list(self.tool_axes)})")
        f = model.functions
        s, n = model.size, model.n
        point = f.frame_position(model.frame_id(robot.tool_frame))
        gamma = cs.vertcat(*[point[AXIS_INDEX[a]] for a in self.tool_axes])
        #: Gamma(y) (n,) [m]: the controlled tool coordinates of the deformed robot.
        self.output = cs.Function("tool_output", [f.y], [gamma], ["y"], ["gamma"])
        #: dGamma/dy (n, s).
        self.output_jacobian = cs.Function("tool_output_jacobian", [f.y], [cs.jacobian(gamma, f.y)])
        dynamics = cs.Function("dynamics", [f.y, f.y_dot, f.a, f.u, f.f, f.c], [f.residual])
        x, xd = cs.SX.sym("x", 2 * s + n), cs.SX.sym("xd", 2 * s)
        theta, h = cs.SX.sym("theta", n), cs.SX.sym("h")
        y, v, u = x[:s], x[s:2 * s], x[2 * s:]
        rows = cs.vertcat((xd[:s] - v) / h, dynamics(y, v, xd[s:], u, cs.SX.zeros(s), 1.0),
                          (self.output(y) - theta) / h**2)
        #: F(x, [y', v'], theta, h) (2 s + n,): the module docstring's rows.
        self.residual = cs.Function("elastic_robot_dae", [x, xd, theta, h], [rows])
        rows_x, rows_xd = cs.jacobian(rows, x), cs.jacobian(rows, xd)
        #: (x, xd, theta, h) -> (F, dF/dx, dF/d[y', v']): the blocks of a stacked BDF system's Jacobian.
        self.jacobians = cs.Function("elastic_robot_dae_jacobians", [x, xd, theta, h],
                                     [rows, cs.densify(rows_x), cs.densify(rows_xd)])
        c = cs.SX.sym("c")
        #: (x, xd, theta, h, c) -> (F, dF/dx + c dF/d[y', v'] padded with zero u columns): a BDF step's Newton matrix
        #: with c = alpha_0 / h.
        self.newton_system = cs.Function(
            "elastic_robot_dae_newton", [x, xd, theta, h, c],
            [rows, rows_x + c * cs.horzcat(rows_xd, cs.SX.zeros(rows.numel(), n))])
        #: Inverse kinematics of the undeformed (rigid) robot along the reference.
        self.kinematics = ToolInverseKinematics(robot, self.tool_axes)

    def with_reference(self, reference: Any) -> "ElasticRobotDae":
        """The same DAE along another reference of the same dimension (the CasADi functions take theta as an
        input, so nothing is rebuilt)."""
        reference = as_reference(reference)
        if reference.dimension != self.n:
            raise DaeError(f"reference has {reference.dimension} coordinates; {self.n} expected")
        other = copy.copy(self)
        other.reference = reference
        return other

    @property
    def unknowns(self) -> int:
        """Unknowns per time, 2 s + n."""
        return 2 * self.size + self.n

    def theta(self, t: Any) -> np.ndarray:
        """Tool reference (samples, n) [m] at times t [s]."""
        return self.reference.evaluate(np.atleast_1d(np.asarray(t, dtype=float)), 0)[0]

    def rigid_path(self, t: np.ndarray, guess: Any = None) -> np.ndarray:
        """Joint positions (samples, n) of the undeformed robot with its tool on the reference at times t
        (:meth:`ToolInverseKinematics.path`, from ``guess``, default
        :func:`~flexrobot_ros.dynamics.dae.tool_inverse_kinematics.default_guess`)."""
        return self.kinematics.path(self.reference, t, guess).q

    def rest_state(self, t: float, q_guess: np.ndarray) -> np.ndarray:
        """The consistent state x at rest at time t (v = 0, y' = v' = 0): static equilibrium with the deformed
        tool at theta(t) and the holding torques u, by Newton on F from the undeformed pose ``q_guess``."""
        s = self.size
        x = np.zeros(self.unknowns)
        x[:s] = self.model.static_equilibrium(q_guess)
        x[2 * s:] = self.model.holding_torque(x[:s])
        theta = self.theta(t)[0]
        rest = np.r_[np.arange(s), np.arange(2 * s, 2 * s + self.n)]
        zero = np.zeros(2 * s)

        def system(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            full = x.copy()
            full[rest] = z
            r, jac = self.newton_system(full, zero, theta, 1.0, 0.0)
            keep = np.r_[np.arange(s, 2 * s), np.arange(2 * s, 2 * s + self.n)]
            return np.array(r).ravel()[keep], np.array(jac)[np.ix_(keep, rest)]

        x[rest], _ = newton(system, x[rest], 1e-13, 50)
        return x


@dataclass(frozen=True)
class ElasticRobotSolution:
    """A solved tool-space inverse: t (N + 1,) [s]; y, v (N + 1, s) the coordinates and their rates, a (N + 1, s)
    their accelerations (the BDF derivative of v the dynamics rows use); u (N + 1, n) the motor torques [N m | N];
    ``method`` the solver and its settings, ``message`` its outcome, ``diverged`` when it did not converge."""

    t: np.ndarray
    y: np.ndarray
    v: np.ndarray
    a: np.ndarray
    u: np.ndarray
    dae: ElasticRobotDae
    method: str
    message: str
    diverged: bool = False

    def output_error(self) -> np.ndarray:
        """|Gamma(y(t_i)) - theta(t_i)| (N + 1,) [m]: how far the model's deformed tool is from the reference."""
        gamma = np.array(self.dae.output.map(len(self.t))(self.y.T)).T
        return np.linalg.norm(gamma - self.dae.theta(self.t), axis=1)


__all__ = ["ElasticRobotDae", "ElasticRobotSolution"]
