"""CasADi functions of seed 002's extended flexible-joint model (eqs. 1-2) in the coordinates of the DAE inverse
dynamics (:mod:`.inverse_dae`, :mod:`.zero_dynamics`), taken from the robot's composed model
(:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`, its forces
:func:`~flexrobot_ros.flexible_links.elastic_robot_functions.force_function` and its CasADi terms
:class:`~flexrobot_ros.flexible_links.elastic_robot_functions.ElasticRobotFunctions`): no second description of the
robot's physics here, only the choice of rows and the map of coordinates.

Coordinates: q_a (na) link-side coordinates in chain order (the extended pinocchio model's), q_m (n) motor positions
after the gear [rad | m]. On elastic joints and rigid links (the robots this DAE takes) the composed model's
coordinates are ``y = [q_a; q_m]`` (no beam coordinates eta, every joint has its motor, in joint order), and its
residual ``r = M(y) y_ddot + h + f_el + f_d - S u`` (block-diagonal M, S u the motor torques on the motor rows)
splits into:

* ``link_residual(q_a, v_a, a_a, q_m, v_m)`` (na) [N m | N]: the link rows of r, M(q_a) a_a + c + g
  + S_g^T(W K (W q_g - q_m) + W D_g (W v_g - v_m) + D v_g + f_c tanh(v_g / v_c)) + S_e^T (K_e q_e + D_e v_e)
  -- eq. 17a-b, = 0 on a motion. The chain's M a + c + g is pinocchio's ``rnea`` on the extended model as this
  package's symbolic RNEA writes it (:func:`~flexrobot_ros.dynamics.sdrnea.symbolic_rnea`; the composed model calls
  pinocchio on a rigid chain too): equal to the rows of the composed model's CasADi residual (its Lagrangian) to
  round-off, with a thirteenth of its expression (moberg5: 102 against 1,354 instructions, even after CasADi's
  ``cse``; 263 against 4,310 for the Jacobian the solvers use; the Lagrangian made bench/dae.py's IPOPT solve 3.3
  times slower).
* ``motor_torque(q_a, v_a, q_m, v_m, a_m)`` (n) [N m | N]: the motor rows of r at u = 0, B a_m + D_m v_m
  + f_cm tanh(v_m / v_c) - K (W q_g - q_m) - D_g (W v_g - v_m)  -- eq. 1d solved for tau_m
* ``output(q_a)`` (n): Gamma of eq. 2: selected coordinates [m] (``tool_axes``) of the tool frame's origin (base
  frame; :meth:`ElasticRobotFunctions.frame_position`) or, for link-space references, the actuated link positions
  q_g [rad | m].
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import casadi as cs

from flexrobot_ros.dynamics.dae.tool_axes import AXIS_INDEX, default_tool_axes
from flexrobot_ros.dynamics.sdrnea import symbolic_rnea
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.model.extended_model import ExtendedModel


@dataclass(frozen=True)
class SymbolicExtendedModel:
    """CasADi functions of one robot's extended model (see the module docstring); ``output_kind`` 'tool' or
    'joints', ``tool_axes`` the tool-point coordinates used as outputs, ``composed`` the composed model they come
    from."""

    ext: ExtendedModel
    n: int
    link_residual: cs.Function
    motor_torque: cs.Function
    output: cs.Function
    output_kind: str
    tool_axes: tuple[str, ...]
    composed: ElasticRobot

    @property
    def na(self) -> int:
        return self.ext.na

    @property
    def ne(self) -> int:
        return self.ext.ne


def composed_model(robot: Any, ext: ExtendedModel | None = None) -> ElasticRobot:
    """The :class:`ElasticRobot` of ``robot`` with the extended model ``ext`` (None: ``robot.extended``).

    Raises:
        ModelError: robots with flexible links or rigid joints (their DAE is :mod:`.elastic_robot_dae`: this one has
            no beam coordinates and a motor at every joint).
    """
    if robot.flexible_links or robot.rigid_joints:
        raise ModelError(f"robot {robot.name}: seed 002's DAE inverse dynamics takes elastic joints on rigid links; "
                         f"robot has {'flexible links' if robot.flexible_links else 'rigid joints'}: use the general "
                         "model's DAE (flexrobot_ros.dynamics.dae.tool_space_feedforward)")
    return ElasticRobot(robot if ext is None else dataclasses.replace(robot, extended=ext))


def _chain_inverse_dynamics(composed: ElasticRobot, q: cs.SX, v: cs.SX, a: cs.SX) -> cs.SX:
    """I(q_a) a + h(q_a, v_a) (na,) [N m | N] of the composed model's rigid chain (its extended pinocchio model):
    pinocchio's ``rnea`` as this package's symbolic RNEA writes it (CasADi; the numeric twin of the composed
    model's rigid-chain path, which calls pinocchio; equal to its CasADi Lagrangian to round-off with a thirteenth
    of the expression: module docstring, test_dae_composed)."""
    tree = KinematicTree.from_model(composed.model)
    na = composed.na
    seq, tau, _ = symbolic_rnea(tree, [q[i] for i in range(na)], [v[i] for i in range(na)],
                                [a[i] for i in range(na)])
    _, resolved = cs.substitute_inplace(seq.symbols, seq.definitions, [cs.vertcat(*tau)], False)
    return resolved[0]


def _tool_output(robot: Any, composed: ElasticRobot, y: cs.SX, axes: tuple[str, ...]) -> cs.SX:
    if robot.tool_frame is None:
        raise ModelError(f"robot {robot.name}: no tool_frame in its flexibility YAML: a tool-space output needs the "
                         "frame to move")
    functions = composed.functions
    point = functions.frame_position(composed.frame_id(robot.tool_frame))
    return cs.substitute(cs.vertcat(*[point[AXIS_INDEX[a]] for a in axes]), functions.y, y)


def symbolic_model(robot: Any, output: str = "tool", tool_axes: Sequence[str] | None = None,
                   ext: ExtendedModel | None = None) -> SymbolicExtendedModel:
    """Build the CasADi functions of ``robot``'s extended model (``ext`` overrides ``robot.extended``) from its
    composed model (module docstring).

    ``output`` 'tool': Gamma = the ``tool_axes`` coordinates of ``robot.tool_frame``'s origin (base frame);
    'joints': Gamma = q_g (link-space references).
    """
    if output not in ("tool", "joints"):
        raise ModelError(f"output {output!r}: expected 'tool' or 'joints'")
    composed = composed_model(robot, ext)
    ext, n, na = composed.ext, robot.n, composed.na
    axes: tuple[str, ...] = ()
    if output == "tool":
        axes = tuple(tool_axes) if tool_axes is not None else default_tool_axes(robot)
        unknown = [x for x in axes if x not in AXIS_INDEX]
        if unknown or len(axes) != n:
            raise ModelError(f"robot {robot.name}: tool_axes {list(axes)}: expected {n} of x, y, z (one output per "
                             "actuator)")
    q, v, a = (cs.SX.sym(name, na) for name in ("q_a", "v_a", "a_a"))
    q_m, v_m, a_m = (cs.SX.sym(name, n) for name in ("q_m", "v_m", "a_m"))
    y, y_dot = cs.vertcat(q, q_m), cs.vertcat(v, v_m)  # y = [q_a; q_m]: no eta, motors in joint order
    elastic, dissipative, _ = composed.force_function(y, y_dot, 1.0)
    forces = elastic + dissipative
    link_rows = _chain_inverse_dynamics(composed, q, v, a) + forces[:na]
    motor_rows = cs.DM(composed.rotor_inertia) * a_m + forces[composed.motors]  # S u = u on these rows
    link = cs.Function("link_residual", [q, v, a, q_m, v_m], [link_rows],
                       ["q_a", "v_a", "a_a", "q_m", "v_m"], ["r"])
    motor = cs.Function("motor_torque", [q, v, q_m, v_m, a_m], [motor_rows],
                        ["q_a", "v_a", "q_m", "v_m", "a_m"], ["tau_m"])
    gamma = q[list(ext.actuated_index)] if output == "joints" else _tool_output(robot, composed, y, axes)
    out = cs.Function("output", [q], [gamma], ["q_a"], ["gamma"])
    return SymbolicExtendedModel(ext=ext, n=n, link_residual=link, motor_torque=motor, output=out,
                                 output_kind=output, tool_axes=axes, composed=composed)


__all__ = ["SymbolicExtendedModel", "composed_model", "symbolic_model"]
