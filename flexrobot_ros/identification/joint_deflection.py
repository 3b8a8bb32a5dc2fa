"""Reduction of an elastic-joint record to the rigid model: link positions and the motor-side torque difference.

The rigid model of seed 001 eq. 4 (:mod:`.rigid_regressor`) is one set of joint positions q: link inertias,
rotor inertia and friction all act on the same q, qd, qdd. On a robot with elastic joints the link positions q
differ from the motor positions q_m (after the gear) by the joint deflection. The package's flexible-joint model
(:mod:`flexrobot_ros.dynamics.flexible_joint`, transmission 1) is::

    link:   M(q) qdd + C(q, qd) qd + g(q) + D qd + D_c tanh(qd / v_c)   =  K (q_m - q)
    motor:  B qdd_m + D_m qd_m + D_cm tanh(qd_m / v_c) + K (q_m - q)       =  tau_m

The motor equation gives the link positions from motor-side quantities alone (:func:`link_positions`)::

    q = q_m - (tau_m - B qdd_m - D_m qd_m - D_cm tanh(qd_m / v_c)) / K

and adding the two equations, the motor torque is the rigid model at the link state plus the motor-side terms'
difference between the motor and the link state (:func:`motor_side_difference`)::

    tau_m = Y(q, qd, qdd) phi + B (qdd_m - qdd) + D_m (qd_m - qd) + D_cm (tanh(qd_m / v_c) - tanh(qd / v_c))

with the flexibility YAML's stiffness K [N m/rad], rotor inertia B = N^2 I_m,zz [kg m^2], motor-side viscous D_m
[N m s/rad] and Coulomb D_cm [N m] friction and Coulomb width v_c [rad/s]. Every term on the right of q is measured
(q_m, tau_m) or a derivative of a measured signal, so no iteration is needed: the link side (M(q), link friction)
does not enter. The identification cannot correct the YAML's B, D_m, D_cm instead (the rotor inertias lumped into
link parameters, and the link/motor split of the friction, are not identifiable), so an error Delta B in the YAML
leaves a deflection error Delta B qdd_m / K and a torque error Delta B (qdd_m - qdd). On the kr90 (K = 3e6 N m/rad,
tau_m up to 12600 N m, B = 800-950 kg m^2) the deflection is up to 4 mrad and B (qdd_m - qdd) up to about 30 N m.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def link_positions(flexibility: Any, q_m: np.ndarray, qd_m: np.ndarray, qdd_m: np.ndarray, tau_m: np.ndarray
                   ) -> np.ndarray:
    """Link positions q (samples, n) [rad] from motor positions q_m [rad], velocities qd_m [rad/s], accelerations
    qdd_m [rad/s^2] and motor torques tau_m [N m], each (samples, n) in the robot's joint order, through the
    per-joint (n,) ``stiffness``, ``motor_inertia``, ``motor_damping``, ``motor_coulomb`` and ``coulomb_width`` of
    ``flexibility`` (a :class:`flexrobot_ros.dynamics.flexible_joint.JointFlexibility`)."""
    return q_m - (tau_m - motor_terms(flexibility, qd_m, qdd_m)) / flexibility.stiffness


def motor_side_difference(flexibility: Any, qd: np.ndarray, qdd: np.ndarray, qd_m: np.ndarray, qdd_m: np.ndarray
                          ) -> np.ndarray:
    """The motor-side terms at the motor state minus those at the link state (samples, n) [N m], from link and
    motor velocities [rad/s] and accelerations [rad/s^2] (samples, n): what tau_m has beyond the rigid model
    Y(q, qd, qdd) phi."""
    return motor_terms(flexibility, qd_m, qdd_m) - motor_terms(flexibility, qd, qdd)


def motor_terms(flexibility: Any, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """B qdd + D_m qd + D_cm tanh(qd / v_c) (samples, n) [N m]."""
    return (flexibility.motor_inertia * qdd + flexibility.motor_damping * qd
            + flexibility.motor_coulomb * np.tanh(qd / flexibility.coulomb_width))


__all__ = ["link_positions", "motor_side_difference", "motor_terms"]
