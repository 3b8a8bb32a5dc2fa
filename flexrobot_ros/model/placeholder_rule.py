"""The placeholder rule of ``flexrobot init``: physically plausible elastic-joint parameters for one joint from the
link-side inertia it drives, so that a starter flexibility YAML loads and its closed loop is stable with sensible
modes before anything is measured.

Per elastic joint, ``M_ii`` [kg m^2, or kg for a prismatic joint] is the link-side inertia the joint drives: the
diagonal of pinocchio's joint-space inertia matrix (CRBA) at the start pose with the other elastic joints held.
``W`` = 1 for a revolute joint, 1/r for a prismatic one (r = :data:`TRANSMISSION_RADIUS_M`). The link side of the
joint in seed 000's model (eq. 2.1) reads ``M_ii q'' + k W^2 q - k W q_m = 0``:

* stiffness ``k = M_ii (2 pi f_lr)^2 / W^2`` [N m/rad]: the locked-rotor frequency (motor held, link swinging on
  the spring) is f_lr = :data:`LOCKED_ROTOR_HZ`;
* reflected motor inertia ``B = MOTOR_INERTIA_FRACTION M_ii / W^2`` [kg m^2], as ``gear_ratio`` N =
  :data:`GEAR_RATIO` and ``rotor_inertia`` ``I_r = B / N^2``;
* motor-side PD gains ``kp = k`` [N m/rad] (the position loop as stiff as the joint) and
  ``kd = 2 zeta_m sqrt((k + kp) B)`` [N m s/rad], zeta_m = :data:`MOTOR_DAMPING_RATIO`: the motor's damping ratio
  against spring and PD with the link held;
* ``link_damping = 2 zeta_l sqrt(k W^2 M_ii)`` [N m s/rad | N s/m], zeta_l = :data:`LINK_DAMPING_RATIO` at the
  locked-rotor frequency; ``motor_damping`` 0.

One joint alone (link M_ii and motor B on the spring k, the PD on the motor) has two modes, at 0.67 and 2.1 f_lr
(10 and 32 Hz), damped about 11 % and 16 %; a coupled arm's modes spread around these. PD + gravity compensation on
elastic joints is stable when the series stiffness k kp / (k + kp) = k / 2 exceeds the gravity gradient; per joint
(coupling aside) it does by a factor of at least (2 pi f_lr)^2 rho / (2 g), rho the driven bodies' radius of
gyration about their centre of mass (14 for rho = 3 cm). ``flexrobot init`` checks the coupled closed loop.

No pinocchio here: ``flexrobot init --help`` prints these constants.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: Locked-rotor frequency of every elastic joint [Hz] (the stiffness rule).
LOCKED_ROTOR_HZ = 15.0
#: Reflected motor inertia as a fraction of the link-side inertia the joint drives [-].
MOTOR_INERTIA_FRACTION = 0.5
#: Placeholder gear ratio N [-].
GEAR_RATIO = 100.0
#: Damping ratio of the link side at the locked-rotor frequency [-] (link_damping).
LINK_DAMPING_RATIO = 0.02
#: Damping ratio of the motor against spring and PD stiffness with the link held [-] (kd).
MOTOR_DAMPING_RATIO = 0.2
#: Placeholder transmission radius of a prismatic joint [m] (W = 1/r).
TRANSMISSION_RADIUS_M = 0.01
#: Significant digits the placeholders are rounded to (what the YAML shows).
DIGITS = 4

#: The rule, one item per parameter (``flexrobot init --help`` joins them, the YAML's header lists them).
RULE = (
    "M_ii = the link-side inertia the joint drives (diagonal of pinocchio's joint-space inertia matrix at the start "
    "pose, the other joints held); W = 1, or 1/r for a prismatic joint",
    f"stiffness k = M_ii (2 pi {LOCKED_ROTOR_HZ:g} Hz)^2 / W^2 (locked-rotor frequency {LOCKED_ROTOR_HZ:g} Hz)",
    f"gear_ratio N = {GEAR_RATIO:g}, rotor_inertia I_r = B / N^2 with the reflected motor inertia "
    f"B = {MOTOR_INERTIA_FRACTION:g} M_ii / W^2",
    f"transmission_radius r = {TRANSMISSION_RADIUS_M:g} m (prismatic joints)",
    f"controller kp = k, kd = 2 ({MOTOR_DAMPING_RATIO:g}) sqrt((k + kp) B) (motor damping ratio "
    f"{MOTOR_DAMPING_RATIO:g} with the link held)",
    f"link_damping = 2 ({LINK_DAMPING_RATIO:g}) sqrt(k W^2 M_ii) (damping ratio {LINK_DAMPING_RATIO:g} at the "
    "locked-rotor frequency), motor_damping 0",
)

#: Where the real numbers come from, per YAML field: one line for each placeholder's comment, and the longer text
#: of the YAML's header and ``flexrobot init --help``.
SOURCES = {
    "stiffness": ("measure it: static deflection test, or bringup --calibrate / flexrobot identify",
                  "a static deflection test (torque / deflection at the joint), the self-calibration 'flexrobot "
                  "bringup hardware FILE --calibrate', or 'flexrobot identify' from measured modes (T. T. Do's "
                  "thesis, ch. 3)"),
    "gear_ratio": ("gear datasheet", "the gear's datasheet"),
    "rotor_inertia": ("motor + gear datasheets", "the motor's and the gear's datasheets (rotor plus gear input, e.g. "
                                                 "a wave generator)"),
    "transmission_radius": ("rack / ball screw datasheet", "the rack's or ball screw's datasheet (r = lead / (2 pi) "
                                                          "for a ball screw)"),
    "link_damping": ("identify it: bringup --calibrate / flexrobot identify",
                     "identification: the self-calibration, or 'flexrobot identify FILE --modal-data modes.yaml "
                     "--params k,d_f,d_fm' (T. T. Do's thesis, ch. 3)"),
    "motor_damping": ("constant-speed run or identification",
                      "a constant-speed run (motor torque against speed) or the identification"),
    "controller": ("the gains your drives run", "the gains your drives run (motor side, per rad after the gear)"),
}


@dataclass(frozen=True)
class Placeholders:
    """The placeholder parameters of one elastic joint (units of the flexibility YAML, :mod:`.schema`):
    ``transmission_radius`` is None for a revolute joint."""

    stiffness: float
    gear_ratio: float
    rotor_inertia: float
    transmission_radius: float | None
    link_damping: float
    motor_damping: float
    kp: float
    kd: float

    @property
    def motor_inertia(self) -> float:
        """B = N^2 I_r [kg m^2]."""
        return self.gear_ratio**2 * self.rotor_inertia


def rounded(value: float) -> float:
    """``value`` to :data:`DIGITS` significant digits."""
    return float(f"{value:.{DIGITS}g}")


def placeholders(driven_inertia: float, prismatic: bool) -> Placeholders:
    """The rule of the module docstring for a joint driving ``driven_inertia`` M_ii > 0 [kg m^2 | kg], each value
    rounded to :data:`DIGITS` digits (the later ones computed from the rounded earlier ones)."""
    w = 1.0 / TRANSMISSION_RADIUS_M if prismatic else 1.0
    k = rounded(driven_inertia * (2.0 * math.pi * LOCKED_ROTOR_HZ) ** 2 / w**2)
    rotor = rounded(MOTOR_INERTIA_FRACTION * driven_inertia / w**2 / GEAR_RATIO**2)
    motor = GEAR_RATIO**2 * rotor
    return Placeholders(stiffness=k, gear_ratio=GEAR_RATIO, rotor_inertia=rotor,
                        transmission_radius=TRANSMISSION_RADIUS_M if prismatic else None,
                        link_damping=rounded(2.0 * LINK_DAMPING_RATIO * math.sqrt(k * w**2 * driven_inertia)),
                        motor_damping=0.0, kp=k, kd=rounded(2.0 * MOTOR_DAMPING_RATIO * math.sqrt(2.0 * k * motor)))


def locked_rotor_hz(joint: Placeholders, driven_inertia: float) -> float:
    """The locked-rotor frequency [Hz] of a joint with parameters ``joint`` driving ``driven_inertia`` [kg m^2 | kg]:
    sqrt(k W^2 / M_ii) / (2 pi)."""
    w = 1.0 if joint.transmission_radius is None else 1.0 / joint.transmission_radius
    return math.sqrt(joint.stiffness * w**2 / driven_inertia) / (2.0 * math.pi)


__all__ = ["placeholders", "locked_rotor_hz", "Placeholders", "rounded", "RULE", "LOCKED_ROTOR_HZ",
           "MOTOR_INERTIA_FRACTION", "GEAR_RATIO", "LINK_DAMPING_RATIO", "MOTOR_DAMPING_RATIO", "TRANSMISSION_RADIUS_M",
           "DIGITS", "SOURCES"]
