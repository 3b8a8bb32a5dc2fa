"""Motor-torque regressor of the rigid-joint model with rotor inertia, friction and torque offsets (seed 001 eqs. 4-5).

With the joint elasticity neglected (seed 001 section 2.2, eq. 4) the motor torque of joint i is::

    tau_m = M(q) qdd + C(q, qd) qd + g(q) + B qdd + F_v qd + F_c tanh(qd / v_c) (+ tau_0) = Y(q, qd, qdd) phi

linear in the *standard parameters* phi: per link j the ten inertial parameters of pinocchio's
``Inertia.toDynamicParameters`` (m [kg], m c_x, m c_y, m c_z [kg m], I_xx, I_xy, I_yy, I_xz, I_yz, I_zz [kg m^2]
about the origin of joint frame j, in its axes), then per joint i the rotor inertia reflected to the joint
B_i = N_i^2 I_m,zz,i ("armature", [kg m^2]), the viscous friction F_v,i [N m s/rad] and the Coulomb friction
F_c,i [N m], and, with ``offsets=True``, per joint a constant torque offset tau_0,i [N m] (a drive's or torque
sensor's zero error) after all of them. The link block of Y is pinocchio's ``computeJointTorqueRegressor``; the
joint block is diag(qdd), diag(qd), diag(tanh(qd / v_c)), the offset block the identity. F_v and F_c lump the
link-side and motor-side friction (eq. 4: F_v = F_vq + F_vqm). Rows are joints, samples stacked joint-fastest: row
k n + i is joint i at sample k.

Eq. 4's sgn(qd) is taken as the package's friction law, tanh(qd / v_c) with the flexibility YAML's
``coulomb_width`` v_c (1e-3 rad/s by default; :mod:`flexrobot_ros.dynamics.flexible_joint`): the identified F_c is
then the coefficient of the model it is written back into. The two differ only below a few v_c, but a record that
starts or ends at rest spends seconds there, where sgn of a velocity of 1e-6 rad/s is +-1 and the robot's friction
torque is not (F_c 9 % low at a 20 Hz cutoff on a simulated kr90 record that starts and ends at rest).

Prismatic joints (declared ``rigid: true``, whose recorded effort is the joint force) take the same columns in
their units: armature [kg], F_v [N s/m], F_c [N], tau_0 [N] (v_c in m/s).

Coupled transmissions (:attr:`FlexibleRobot.coupling` G, ``coupled_transmissions`` of the flexibility YAML): the
rows are the motors, the motor positions after the gear are theta = G q and the motor torques
tau_m = G^-T tau_joint + B thetadd + F_v thetad + F_c tanh(thetad / v_c) (+ tau_0): the link block is G^-T times
pinocchio's, the joint block is built from the motor velocities and accelerations (each motor's rotor inertia and
friction act on its own coordinate: the friction of coupled joints is modelled on the motor side, the nominal
values of :func:`standard_parameters` taken as the motors'). With G = 1 this is the model above.

Revolute joints with transmission 1 (q_m = q in the rigid model) and rigid prismatic joints are handled: any other
joint is refused by :func:`check_rigid_model`.
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
PRISMATIC_UNITS = ("kg", "N s/m", "N")
#: Name of the torque-offset parameter of a joint (``tau_0.<joint>``).
OFFSET_PARAMETER = "tau_0"


def check_rigid_model(robot: Any) -> None:
    """Raise :class:`IdentificationError` naming the link or joint when the regressor does not give ``robot``'s motor
    torques: a flexible link (the model's links are rigid), an elastic prismatic joint (its motor turns a rack of
    radius r), any transmission but 1."""
    if robot.flexible_links:
        raise IdentificationError(f"robot {robot.name}: links {sorted(robot.flexible_links)} are flexible; the "
                                  "rigid-body identification models rigid links")
    for name, kind, w in zip(robot.joint_names, robot.joint_types, robot.transmission):
        if kind == "prismatic" and name not in robot.rigid_joints:
            raise IdentificationError(
                f"robot {robot.name}: joint {name} is prismatic and elastic (transmission {w:g} 1/m); the "
                "rigid-body identification handles revolute joints with transmission 1 and prismatic joints "
                "declared rigid: true (their recorded effort is the joint force)")
        if w != 1.0:
            raise IdentificationError(
                f"robot {robot.name}: joint {name} is {kind} with transmission {w:g}; the rigid-body "
                "identification handles revolute joints with transmission 1")


def parameter_names(robot: Any, offsets: bool = False) -> list[str]:
    """Names of the standard parameters: ``<parameter>.<link or joint>`` (``I_zz.link2``, ``F_v.joint3``), then the
    torque offsets ``tau_0.<joint>`` when ``offsets``."""
    names = [f"{p}.{child_link(robot, j)}" for j in range(1, robot.model.njoints) for p in LINK_PARAMETERS]
    names += [f"{p}.{joint}" for joint in robot.joint_names for p in JOINT_PARAMETERS]
    return names + ([f"{OFFSET_PARAMETER}.{joint}" for joint in robot.joint_names] if offsets else [])


def child_link(robot: Any, joint_id: int) -> str:
    """The URDF link that joint ``joint_id`` moves (the body frame whose parent joint it is)."""
    for frame in robot.model.frames:
        if frame.parentJoint == joint_id and frame.type == pin.FrameType.BODY:
            return frame.name
    return robot.model.names[joint_id]


def parameter_units(robot: Any, offsets: bool = False) -> list[str]:
    """Units of :func:`parameter_names`, same order (prismatic joints: kg, N s/m, N)."""
    joints = [unit for kind in robot.joint_types for unit in (PRISMATIC_UNITS if kind == "prismatic" else JOINT_UNITS)]
    offset = [PRISMATIC_UNITS[2] if kind == "prismatic" else JOINT_UNITS[2] for kind in robot.joint_types]
    return list(LINK_UNITS) * robot.n + joints + (offset if offsets else [])


def standard_parameters(robot: Any, offsets: bool = False) -> np.ndarray:
    """phi of ``robot``: its URDF link inertias, rotor inertias ``robot.motor_inertia`` and friction
    ``link_damping + motor_damping`` (viscous), ``link_coulomb + motor_coulomb`` (Coulomb), (13 n,), and zero
    torque offsets when ``offsets`` ((14 n,))."""
    links = [np.asarray(robot.model.inertias[j].toDynamicParameters()) for j in range(1, robot.model.njoints)]
    joints = np.column_stack([robot.motor_inertia, robot.link_damping + robot.motor_damping,
                              robot.link_coulomb + robot.motor_coulomb]).ravel()
    return np.concatenate(links + [joints] + ([np.zeros(robot.n)] if offsets else []))


def regressor(robot: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, data: Any = None,
              offsets: bool = False) -> np.ndarray:
    """Y stacked over samples: (samples n, 13 n), or (samples n, 14 n) with the torque offsets, for link-side q, qd,
    qdd (samples, n) [rad | m, rad/s | m/s, rad/s^2 | m/s^2]; rows are the motors (module docstring)."""
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    model, n = robot.model, robot.n
    data = data if data is not None else model.createData()
    samples = q.shape[0]
    out = np.zeros((samples, n, (14 if offsets else 13) * n))
    for k in range(samples):
        out[k, :, :10 * n] = pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])
    coupling = robot.coupling
    if robot.coupled_transmissions:
        out[:, :, :10 * n] = np.einsum("ij,kjp->kip", np.linalg.inv(coupling).T, out[:, :, :10 * n])
        qd, qdd = qd @ coupling.T, qdd @ coupling.T
    rows = np.arange(n)
    base = 10 * n + 3 * rows
    out[:, rows, base] = qdd
    out[:, rows, base + 1] = qd
    out[:, rows, base + 2] = np.tanh(qd / robot.coulomb_width)
    if offsets:
        out[:, rows, 13 * n + rows] = 1.0
    return out.reshape(samples * n, out.shape[2])


__all__ = ["LINK_PARAMETERS", "child_link", "LINK_UNITS", "JOINT_PARAMETERS", "JOINT_UNITS", "PRISMATIC_UNITS",
           "OFFSET_PARAMETER", "check_rigid_model", "parameter_names", "parameter_units", "standard_parameters",
           "regressor"]
