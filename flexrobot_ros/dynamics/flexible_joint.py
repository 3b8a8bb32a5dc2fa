"""Motor side of flexible-joint inverse dynamics: q_m, qd_m, qdd_m and tau_m from the link side (thesis eqs. 4.7-4.10).

Model (reduced/Spong form, thesis eqs. 4.1-4.4, with the transmission ``W`` of prismatic joints and the errata
of docs/errata.md applied)::

    link:   M(q) qdd + C(q, qd) qd + g(q) + tau_f(qd)  =  W K (q_m - W q)         (tau := M qdd + C qd + g)
    motor:  B qdd_m + tau_fm(qd_m) + K (q_m - W q)      =  tau_m

``K`` stiffness [N·m/rad, motor-side angle], ``W`` = 1 for revolute joints and 1/r for a prismatic joint driven
through a pinion of radius r [1/m], ``B`` motor inertia reflected to the link side of the gear [kg·m²], friction
``tau_f = D qd + D_c tanh(qd / v_c)`` on the link and ``tau_fm = D_m qd_m + D_cm tanh(qd_m / v_c)`` on the motor.
Solving the link equation for q_m and differentiating (the link friction is differentiated too: docs/errata.md, eq. 4.9
uses the jerk; eq. 4.10 keeps tau_f)::

    q_m    = W q    + (W K)^-1 (tau   + tau_f)
    qd_m   = W qd   + (W K)^-1 (dtau  + dtau_f)
    qdd_m  = W qdd  + (W K)^-1 (ddtau + ddtau_f)
    tau_m  = B qdd_m + tau_fm(qd_m) + W^-1 (tau + tau_f)

Coulomb friction: ``sign(v)`` is smoothed as ``tanh(v / v_c)`` with the robot's ``coulomb_width`` v_c [rad/s or
m/s], the same law the simulator integrates, and the smoothed law is differentiated exactly::

    d/dt  D_c tanh(v/v_c) = D_c (1 - th²) a / v_c
    d²/dt² D_c tanh(v/v_c) = D_c (1 - th²) (j - 2 th a² / v_c) / v_c        (th = tanh(v/v_c), a = v', j = v'')

so q_m is exactly twice differentiable; near a velocity reversal the smoothed Coulomb term demands a steep
motor-angle change of amplitude ~ D_c / K over a time ~ v_c / |qdd|. Only the link Coulomb term is
differentiated; the motor Coulomb term enters tau_m undifferentiated.

The functions take numpy arrays (samples, n) with per-joint parameters (n,), or, for code generation, CasADi
column vectors with the same formulas (pass ``tanh=casadi.tanh``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np

from flexrobot_ros.errors import ModelError


@dataclass(frozen=True)
class JointFlexibility:
    """Per-joint elastic-transmission parameters, each (n,) in SI units (see the module docstring)."""

    stiffness: np.ndarray       # K [N·m/rad]
    transmission: np.ndarray    # W [-] revolute, [1/m] prismatic
    link_damping: np.ndarray    # D [N·m·s/rad or N·s/m]
    link_coulomb: np.ndarray    # D_c [N·m or N]
    motor_inertia: np.ndarray   # B [kg·m²]
    motor_damping: np.ndarray   # D_m [N·m·s/rad]
    motor_coulomb: np.ndarray   # D_cm [N·m]
    coulomb_width: np.ndarray   # v_c [rad/s or m/s]; replaced by 1 where both Coulomb coefficients are 0

    def __post_init__(self) -> None:
        n = np.size(self.stiffness)
        for field in fields(self):
            value = np.array(np.broadcast_to(np.asarray(getattr(self, field.name), dtype=float), (n,)))
            if not np.all(np.isfinite(value)):
                raise ModelError(f"{field.name}: non-finite value {value.tolist()}")
            value.setflags(write=False)
            object.__setattr__(self, field.name, value)
        for name in ("stiffness", "transmission"):
            value = getattr(self, name)
            if np.any(value <= 0.0):
                raise ModelError(f"{name}: {value.tolist()}; expected positive values for every joint")
        for name in ("link_damping", "link_coulomb", "motor_inertia", "motor_damping", "motor_coulomb"):
            if np.any(getattr(self, name) < 0.0):
                raise ModelError(f"{name}: {getattr(self, name).tolist()}; expected values >= 0")
        needs_width = (self.link_coulomb > 0.0) | (self.motor_coulomb > 0.0)
        if np.any(needs_width & (self.coulomb_width <= 0.0)):
            raise ModelError(
                f"coulomb_width: {self.coulomb_width.tolist()}; expected > 0 where Coulomb friction is non-zero")
        if np.any(self.coulomb_width <= 0.0):  # irrelevant there (no Coulomb friction); keeps v / v_c finite
            width = np.where(self.coulomb_width > 0.0, self.coulomb_width, 1.0)
            width.setflags(write=False)
            object.__setattr__(self, "coulomb_width", width)

    @property
    def n(self) -> int:
        return self.stiffness.size

    @classmethod
    def from_robot(cls, robot: Any) -> "JointFlexibility":
        """The parameters of a :class:`flexrobot_ros.model.FlexibleRobot` (or any object with those fields)."""
        return cls(stiffness=robot.stiffness, transmission=robot.transmission, link_damping=robot.link_damping,
                   link_coulomb=robot.link_coulomb, motor_inertia=robot.motor_inertia,
                   motor_damping=robot.motor_damping, motor_coulomb=robot.motor_coulomb,
                   coulomb_width=robot.coulomb_width)

    def digest(self) -> str:
        """sha256 over every parameter (exact), part of the generated-code cache key."""
        h = hashlib.sha256()
        for field in fields(self):
            h.update(field.name.encode())
            h.update(" ".join(float(x).hex() for x in getattr(self, field.name)).encode())
        return h.hexdigest()


@dataclass(frozen=True)
class MotorSide:
    """Motor references and torque, each (samples, n): q_m [rad], qd_m [rad/s], qdd_m [rad/s²], tau_m [N·m]."""

    q_m: Any
    qd_m: Any
    qdd_m: Any
    tau_m: Any


def coulomb_friction(coulomb: Any, width: Any, v: Any, a: Any, j: Any,
                     tanh: Callable[[Any], Any] = np.tanh) -> tuple[Any, Any, Any]:
    """Smoothed Coulomb friction ``D_c tanh(v / v_c)`` and its first two time derivatives given v, v', v''."""
    th = tanh(v / width)
    slope = coulomb * (1.0 - th * th) / width
    return coulomb * th, slope * a, slope * (j - 2.0 * th * a * a / width)


def link_load(params: JointFlexibility | Any, qd: Any, qdd: Any, q3: Any, tau: Any, dtau: Any, ddtau: Any,
              tanh: Callable[[Any], Any] = np.tanh) -> tuple[Any, Any, Any]:
    """The torque the transmission carries, ``tau + tau_f`` [N·m | N], and its first two time derivatives."""
    coulomb, dcoulomb, ddcoulomb = coulomb_friction(params.link_coulomb, params.coulomb_width, qd, qdd, q3, tanh)
    return (tau + params.link_damping * qd + coulomb, dtau + params.link_damping * qdd + dcoulomb,
            ddtau + params.link_damping * q3 + ddcoulomb)


def motor_torque(params: JointFlexibility | Any, qd_m: Any, qdd_m: Any, load: Any,
                 tanh: Callable[[Any], Any] = np.tanh) -> Any:
    """Eq. 4.10: tau_m = B qdd_m + tau_fm(qd_m) + W^-1 (tau + tau_f) [N·m], ``load`` = tau + tau_f."""
    return (params.motor_inertia * qdd_m + params.motor_damping * qd_m
            + params.motor_coulomb * tanh(qd_m / params.coulomb_width) + load / params.transmission)


def motor_side(params: JointFlexibility | Any, q: Any, qd: Any, qdd: Any, q3: Any, tau: Any, dtau: Any,
               ddtau: Any, tanh: Callable[[Any], Any] = np.tanh) -> MotorSide:
    """q_m, qd_m, qdd_m, tau_m of eqs. 4.7-4.10 (module docstring) from the link trajectory and tau, dtau, ddtau."""
    w, k = params.transmission, params.stiffness
    load, dload, ddload = link_load(params, qd, qdd, q3, tau, dtau, ddtau, tanh)
    compliance = 1.0 / (w * k)
    q_m = w * q + compliance * load
    qd_m = w * qd + compliance * dload
    qdd_m = w * qdd + compliance * ddload
    return MotorSide(q_m=q_m, qd_m=qd_m, qdd_m=qdd_m, tau_m=motor_torque(params, qd_m, qdd_m, load, tanh))


def rigid_motor_side(params: JointFlexibility | Any, q: Any, qd: Any, qdd: Any, tau: Any,
                     tanh: Callable[[Any], Any] = np.tanh) -> MotorSide:
    """The rigid-joint feedforward (thesis eq. 4.5, K -> infinity): q_m = W q and tau_m = B W qdd + ... ."""
    w = params.transmission
    link_load = (tau + params.link_damping * qd
                 + params.link_coulomb * tanh(qd / params.coulomb_width))
    q_m, qd_m, qdd_m = w * q, w * qd, w * qdd
    return MotorSide(q_m=q_m, qd_m=qd_m, qdd_m=qdd_m, tau_m=motor_torque(params, qd_m, qdd_m, link_load, tanh))
