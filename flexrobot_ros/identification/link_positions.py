"""Link-side positions of an elastic-joint robot from its motor positions and motor torques (joint deflection).

The rigid model of seed 001 eq. 4 is evaluated at the joint positions; on a robot with elastic joints the link
positions q differ from the motor positions q_m (after the gear) by the joint deflection. The motor equation of the
package's flexible-joint model (:mod:`flexrobot_ros.dynamics.flexible_joint`, transmission W = 1)::

    B qdd_m + D_m qd_m + D_cm tanh(qd_m / v_c) + K (q_m - q) = tau_m

gives it from motor-side quantities alone::

    q = q_m - (tau_m - B qdd_m - D_m qd_m - D_cm tanh(qd_m / v_c)) / K

with the flexibility YAML's stiffness K [N m/rad], rotor inertia B = N^2 I_m,zz [kg m^2], motor-side viscous D_m
[N m s/rad] and Coulomb D_cm [N m] friction and Coulomb width v_c [rad/s]. Every term on the right is measured
(q_m, tau_m) or a derivative of a measured signal, so no iteration is needed: the link side (M(q), link friction)
does not enter. The identification cannot correct the YAML's B, D_m, D_cm instead (the rotor inertias of the
joints whose rotor is lumped into a link parameter, and the link/motor split of the friction, are not identifiable),
so an error Delta B in the YAML leaves a deflection error Delta B qdd_m / K. For the kr90 (K = 3e6 N m/rad,
tau_m up to 8000 N m) the deflection is about 3 mrad.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def link_positions(flexibility: Any, q_m: np.ndarray, qd_m: np.ndarray, qdd_m: np.ndarray, tau_m: np.ndarray
                   ) -> np.ndarray:
    """Link positions q (samples, n) [rad] from motor positions q_m [rad], velocities qd_m [rad/s], accelerations
    qdd_m [rad/s^2] and motor torques tau_m [N m], each (samples, n) in the robot's joint order, through the
    per-joint (n,) ``stiffness``, ``motor_inertia``, ``motor_damping``, ``motor_coulomb`` and ``coulomb_width`` of
    ``flexibility`` (a :class:`flexrobot_ros.dynamics.flexible_joint.JointFlexibility` or a robot)."""
    motor_terms = (flexibility.motor_inertia * qdd_m + flexibility.motor_damping * qd_m
                   + flexibility.motor_coulomb * np.tanh(qd_m / flexibility.coulomb_width))
    return q_m - (tau_m - motor_terms) / flexibility.stiffness


__all__ = ["link_positions"]
