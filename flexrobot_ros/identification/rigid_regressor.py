"""Joint-torque regressor of the rigid-joint model with rotor inertia and friction (seed 001 eqs. 4-5).

With the joint elasticity neglected (seed 001 section 2.2, eq. 4) the motor torque of joint i is::

    tau_m = M(q) qdd + C(q, qd) qd + g(q) + B qdd + F_v qd + F_c tanh(qd / v_c) = Y(q, qd, qdd) phi

linear in the *standard parameters* phi: per link j the ten inertial parameters of pinocchio's
``Inertia.toDynamicParameters`` (m [kg], m c_x, m c_y, m c_z [kg m], I_xx, I_xy, I_yy, I_xz, I_yz, I_zz [kg m^2]
about the origin of joint frame j, in its axes), then per joint i the rotor inertia reflected to the joint
B_i = N_i^2 I_m,zz,i ("armature", [kg m^2]), the viscous friction F_v,i [N m s/rad] and the Coulomb friction
F_c,i [N m]. The link block of Y is pinocchio's ``computeJointTorqueRegressor``; the joint block is
diag(qdd), diag(qd), diag(tanh(qd / v_c)). F_v and F_c lump the link-side and motor-side friction (eq. 4:
F_v = F_vq + F_vqm). Rows are joints, samples stacked joint-fastest: row k n + i is joint i at sample k.

Eq. 4's sgn(qd) is taken as the package's friction law, tanh(qd / v_c) with the flexibility YAML's
``coulomb_width`` v_c (1e-3 rad/s by default; :mod:`flexrobot_ros.dynamics.flexible_joint`): the identified F_c is
then the coefficient of the model it is written back into. The two differ only below a few v_c, but a record that
starts or ends at rest spends seconds there, where sgn of a velocity of 1e-6 rad/s is +-1 and the robot's friction
torque is not (F_c 9 % low at a 20 Hz cutoff on a simulated kr90 record that starts and ends at rest).

Only revolute joints with transmission 1 (q_m = q in the rigid model) are handled: a robot with another
transmission is refused by :func:`check_rigid_model`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import IdentificationError

#: Names of pinocchio's ten inertial parameters of a link, in ``toDynamicParameters`` order.
LINK_PARAMETERS = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")
#: Units of :data:`LINK_PARAMETERS`.
LINK_UNITS = ("kg", "kg m", "kg m", "kg m", "kg m^2", "kg m^2", "kg m^2", "kg m^2", "kg m^2", "kg m^2")
#: Per-joint parameters appended after the links, with their units.
JOINT_PARAMETERS = ("armature", "F_v", "F_c")
JOINT_UNITS = ("kg m^2", "N m s/rad", "N m")


def check_rigid_model(robot: Any) -> None:
    """Raise :class:`IdentificationError` naming the joint when ``robot`` is not a chain of revolute joints with
    transmission 1 (the regressor's motor torque is the joint torque then)."""
    for name, kind, w in zip(robot.joint_names, robot.joint_types, robot.transmission):
        if kind != "revolute" or w != 1.0:
            raise IdentificationError(
                f"robot {robot.name}: joint {name} is {kind} with transmission {w:g}; the rigid-body "
                "identification handles revolute joints with transmission 1")


def parameter_names(robot: Any) -> list[str]:
    """Names of the standard parameters: ``<parameter>.<link or joint>`` (``I_zz.link2``, ``F_v.joint3``)."""
    names = [f"{p}.{child_link(robot, j)}" for j in range(1, robot.model.njoints) for p in LINK_PARAMETERS]
    return names + [f"{p}.{joint}" for joint in robot.joint_names for p in JOINT_PARAMETERS]


def child_link(robot: Any, joint_id: int) -> str:
    """The URDF link that joint ``joint_id`` moves (the body frame whose parent joint it is)."""
    for frame in robot.model.frames:
        if frame.parentJoint == joint_id and frame.type == pin.FrameType.BODY:
            return frame.name
    return robot.model.names[joint_id]


def parameter_units(robot: Any) -> list[str]:
    """Units of :func:`parameter_names`, same order."""
    return list(LINK_UNITS) * robot.n + list(JOINT_UNITS) * robot.n


def standard_parameters(robot: Any) -> np.ndarray:
    """phi of ``robot``: its URDF link inertias, rotor inertias ``robot.motor_inertia`` and friction
    ``link_damping + motor_damping`` (viscous), ``link_coulomb + motor_coulomb`` (Coulomb), (13 n,)."""
    links = [np.asarray(robot.model.inertias[j].toDynamicParameters()) for j in range(1, robot.model.njoints)]
    joints = np.column_stack([robot.motor_inertia, robot.link_damping + robot.motor_damping,
                              robot.link_coulomb + robot.motor_coulomb]).ravel()
    return np.concatenate(links + [joints])


def regressor(robot: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, data: Any = None) -> np.ndarray:
    """Y stacked over samples: (samples n, 13 n) for q, qd, qdd (samples, n) [rad, rad/s, rad/s^2]."""
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    model, n = robot.model, robot.n
    data = data if data is not None else model.createData()
    samples = q.shape[0]
    out = np.zeros((samples, n, 13 * n))
    for k in range(samples):
        out[k, :, :10 * n] = pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])
    rows = np.arange(n)
    base = 10 * n + 3 * rows
    out[:, rows, base] = qdd
    out[:, rows, base + 1] = qd
    out[:, rows, base + 2] = np.tanh(qd / robot.coulomb_width)
    return out.reshape(samples * n, 13 * n)


__all__ = ["LINK_PARAMETERS", "child_link", "LINK_UNITS", "JOINT_PARAMETERS", "JOINT_UNITS", "check_rigid_model",
           "parameter_names", "parameter_units", "standard_parameters", "regressor"]
