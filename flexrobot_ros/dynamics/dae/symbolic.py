"""CasADi expressions of the extended flexible-joint model (seed 002, eqs. 1-2) for solvers that need exact
derivatives (the DAE inverse dynamics and the zero dynamics).

The rigid-body part is this package's symbolic RNEA (:func:`flexrobot_ros.dynamics.sdrnea.symbolic_rnea`) on
pinocchio's description of the extended chain (:class:`~flexrobot_ros.dynamics.serial_chain.SerialChain`), so the
expressions are pinocchio's ``rnea`` (checked in test_dae_*); the tool kinematics are the product of the chain's
joint placements and motions. Coordinates: q_a (na) in chain order, q_m (n) motor positions [rad].

* ``link_residual(q_a, v_a, a_a, q_m, v_m)`` (na): M(q_a) a_a + c + g + S_g^T(W K (W q_g - q_m)
  + W D_g (W v_g - v_m) + D v_g + f_c tanh(v_g / v_c)) + S_e^T (K_e q_e + D_e v_e)  -- eq. 17a-b, = 0 on a motion
* ``motor_torque(q_a, v_a, q_m, v_m, a_m)`` (n): B a_m + D_m v_m + f_cm tanh(v_m / v_c) - K (W q_g - q_m)
  - D_g (W v_g - v_m)  -- eq. 1d solved for tau_m
* ``output(q_a)`` (n): Gamma of eq. 2: selected tool-point coordinates [m] (``tool_axes``) or, for link-space
  references, the actuated link positions q_g.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import casadi as cs
import numpy as np

from flexrobot_ros.dynamics.sdrnea import symbolic_rnea
from flexrobot_ros.dynamics.serial_chain import SerialChain
from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.extended_model import ExtendedModel, extended_model

AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _rotation(axis: np.ndarray, angle: cs.SX) -> cs.SX:
    k = cs.SX(np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]))
    return cs.SX.eye(3) + cs.sin(angle) * k + (1.0 - cs.cos(angle)) * (k @ k)


def frame_position(chain: SerialChain, q: cs.SX, joint: int, offset: np.ndarray) -> cs.SX:
    """Base-frame position (3,) of the point ``offset`` [m] fixed in the frame of chain joint ``joint`` (0-based)."""
    rotation, position = cs.SX.eye(3), cs.SX.zeros(3)
    for i in range(joint + 1):
        position = position + rotation @ cs.SX(chain.translation[i])
        rotation = rotation @ cs.SX(chain.rotation[i])
        if chain.revolute[i]:
            rotation = rotation @ _rotation(chain.axis[i], q[i])
        else:
            position = position + rotation @ (q[i] * cs.SX(chain.axis[i]))
    return position + rotation @ cs.SX(np.asarray(offset, dtype=float))


@dataclass(frozen=True)
class SymbolicExtendedModel:
    """CasADi functions of one robot's extended model (see the module docstring); ``output_kind`` 'tool' or
    'joints', ``tool_axes`` the tool-point coordinates used as outputs."""

    ext: ExtendedModel
    n: int
    link_residual: cs.Function
    motor_torque: cs.Function
    output: cs.Function
    output_kind: str
    tool_axes: tuple[str, ...]

    @property
    def na(self) -> int:
        return self.ext.na

    @property
    def ne(self) -> int:
        return self.ext.ne


def default_tool_axes(robot: Any) -> tuple[str, ...]:
    """Tool-point coordinates a robot with n actuators controls: all three for n = 3 (unless all three are revolute
    joints about one base axis), the two of the plane of motion for a planar arm with n = 2 (joint axes all along the
    third base axis).

    Raises:
        ModelError: other numbers of actuators, and planar arms with 3 (their tool point has two coordinates for
            three actuators: redundant, the tool's orientation is no tool-point coordinate; the Canadarm).
    """
    if robot.n in (2, 3):
        ext = extended_model(robot)
        chain = SerialChain.from_model(ext.model)
        rotation = np.eye(3)
        axes = []
        for i in range(chain.n):
            rotation = rotation @ chain.rotation[i]
            axes.append(rotation @ chain.axis[i])
        normal = np.abs(np.mean(axes, axis=0))
        k = int(np.argmax(normal))
        planar = bool(np.allclose(np.abs(np.asarray(axes)[:, k]), 1.0))
        if robot.n == 3 and planar and all(kind != "prismatic" for kind in robot.joint_types):
            raise ModelError(f"robot {robot.name}: a planar arm with 3 actuators (revolute joints about the base "
                             f"{'xyz'[k]} axis): its tool point has 2 coordinates in the plane for 3 actuators "
                             "(redundant; the tool's orientation is no tool-point coordinate)")
        if robot.n == 3:
            return ("x", "y", "z")
        if planar:
            return tuple(a for a in "xyz" if AXIS_INDEX[a] != k)
    raise ModelError(f"robot {robot.name}: give tool_axes (the {robot.n} tool-point coordinates to control); only 2 "
                     "(planar) and 3 actuators have a default")


def symbolic_model(robot: Any, output: str = "tool", tool_axes: Sequence[str] | None = None,
                   ext: ExtendedModel | None = None) -> SymbolicExtendedModel:
    """Build the CasADi functions of ``robot``'s extended model (``ext`` overrides ``robot.extended``).

    ``output`` 'tool': Gamma = the ``tool_axes`` coordinates of ``robot.tool_frame``'s origin (base frame);
    'joints': Gamma = q_g (link-space references).
    """
    ext = ext or extended_model(robot)
    n, na = robot.n, ext.na
    chain = SerialChain.from_model(ext.model)
    q, v, a = (cs.SX.sym(name, na) for name in ("q_a", "v_a", "a_a"))
    q_m, v_m, a_m = (cs.SX.sym(name, n) for name in ("q_m", "v_m", "a_m"))
    seq, tau, _ = symbolic_rnea(chain, [q[i] for i in range(na)], [v[i] for i in range(na)],
                                [a[i] for i in range(na)])
    _, resolved = cs.substitute_inplace(seq.symbols, seq.definitions, [cs.vertcat(*tau)], False)
    rigid = resolved[0]
    act, el = list(ext.actuated_index), list(ext.elastic_index)
    w, k = cs.DM(robot.transmission), cs.DM(robot.stiffness)
    d_g = cs.DM(ext.spring_damping)
    width = float(robot.coulomb_width)
    q_g, v_g = q[act], v[act]
    spring = k * (w * q_g - q_m)
    damper = d_g * (w * v_g - v_m)
    link_friction = cs.DM(robot.link_damping) * v_g + cs.DM(robot.link_coulomb) * cs.tanh(v_g / width)
    load = cs.SX.zeros(na)
    load[act] = w * spring + w * damper + link_friction
    if el:
        load[el] = cs.DM(ext.elastic_stiffness) * q[el] + cs.DM(ext.elastic_damping) * v[el]
    link = cs.Function("link_residual", [q, v, a, q_m, v_m], [rigid + load],
                       ["q_a", "v_a", "a_a", "q_m", "v_m"], ["r"])
    motor = (cs.DM(robot.motor_inertia) * a_m + cs.DM(robot.motor_damping) * v_m
             + cs.DM(robot.motor_coulomb) * cs.tanh(v_m / width) - spring - damper)
    motor_fn = cs.Function("motor_torque", [q, v, q_m, v_m, a_m], [motor], ["q_a", "v_a", "q_m", "v_m", "a_m"],
                           ["tau_m"])
    if output == "joints":
        gamma = q_g
        axes: tuple[str, ...] = ()
    elif output == "tool":
        axes = tuple(tool_axes) if tool_axes is not None else default_tool_axes(robot)
        unknown = [x for x in axes if x not in AXIS_INDEX]
        if unknown or len(axes) != n:
            raise ModelError(f"robot {robot.name}: tool_axes {list(axes)}: expected {n} of x, y, z (one output per "
                             "actuator)")
        frame = ext.model.frames[ext.model.getFrameId(robot.tool_frame)]
        parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
        point = frame_position(chain, q, parent - 1, np.asarray(frame.placement.translation))
        gamma = cs.vertcat(*[point[AXIS_INDEX[x]] for x in axes])
    else:
        raise ModelError(f"output {output!r}: expected 'tool' or 'joints'")
    out = cs.Function("output", [q], [gamma], ["q_a"], ["gamma"])
    return SymbolicExtendedModel(ext=ext, n=n, link_residual=link, motor_torque=motor_fn, output=out,
                                 output_kind=output, tool_axes=axes)
