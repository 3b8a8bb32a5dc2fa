"""The motor Coulomb friction of a record, linearized: what the modes of a held robot see of it.

The flexibility YAML's motor friction is ``tau_f = d_fm qd_m + f_c tanh(qd_m / w)`` (``motor_coulomb`` f_c [N m],
``coulomb_width`` w [rad/s]). The held-pose linearization of seed 000 (eqs. 3.9-3.12) keeps only d_fm: it is the
linearization about a motor at rest *outside* the friction's smoothing band, as if the motors slid freely. After
an impact at a held pose the motors of a robot whose friction is strong against its PD law barely move: their
velocities stay inside the tanh band, where the friction is a viscous damper of slope f_c / w. The shipped LWR4
(f_c = 4.6-11.6 N m, w = 0.01 rad/s: 460-1160 N m s/rad against kd = 60 N m s/rad) is such a robot: the damper
holds its motors, the measured modes are close to the locked-rotor modes (motor side clamped), and the free-motor
model misses them (at one pose OMA 2.86 / 13.37 / 28.73 / 72.27 / 171.7 / 216.6 Hz, the free-motor model 9.50 /
13.70 / 29.13 / 72.52 / 171.8 Hz and nothing near 216 Hz).

**Equivalent (statistical) linearization** (Booton 1954, Kazakov; Roberts & Spanos, *Random Vibration and
Statistical Linearization*, ch. 5): the linear damper that replaces the nonlinearity over a motion is the mean
slope of the friction law over that motion, here over the record's motor velocities v_t (t = 1..T)::

    d_eq,j = (f_c,j / w) mean_t( 1 - tanh^2(v_t,j / w) )                               [N m s/rad]

(for a Gaussian motion this is the classical equivalent gain E[f'(v)] = E[v f(v)] / E[v^2], Price's theorem). It
covers the whole range: motors held inside the band (|v| << w): d_eq -> f_c / w, whose modes tend to the
locked-rotor modes as d_eq grows; motors sliding (sigma_v >> w): d_eq -> f_c sqrt(2 / pi) / sigma_v for Gaussian
motion, small, the free-motor modes; in between (partly locked), the mean over the record. At each pose
``D_bar`` gains ``d_eq`` on the motor coordinates (:func:`pose_linearization`). On the LWR4 record above the model
with d_eq reproduces every OMA mode within 0.03 % in frequency (2.863 / 13.372 / 28.721 / 72.249 / 171.67 Hz).

**Where no linear model holds it** (:meth:`MotorFriction.regime`): the linearization is exact for the smoothed law
while the motors stay in the band's linear zone (regime 'held': at least HELD_FRACTION of the samples inside), and
harmless when the friction is weak (regime 'negligible': d_eq below NEGLIGIBLE_FRACTION of the motor's d_fm + kd
in each of WINDOWS windows of the record; the KR90's 1.2 N m friction against kd = 1.2e6 N m s/rad). A motor
partly held or sliding against a friction that matters has a damping that changes with the amplitude, which
decays along the record, and the modes OMA reports then carry damping no linear model reproduces: the LWR4 struck
with 400 N (motors 70-80 % of the record inside the band) shows at one pose a 9.70 Hz mode at 3.92 % damping
where the true model linearized over that record gives 0.94 %; fitted anyway, it made up a link damping d_f3 =
1.07 N m s/rad for a truth of 0. A calibration leaves such a pose out and says why (:mod:`.calibration`), and
accepts a result only when the calibrated model reproduces every measured mode it used. The odd tanh also puts
odd harmonics of the lightly damped modes into the record (LWR4: 216.6 and 369 Hz, 3 and 5 times its 72.2 Hz
mode, with its damping ratio); no model mode pairs with them and they are left out.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.modal import LinearizedModel
from flexrobot_ros.modal.held_modes import linearize, modal_coordinates
from flexrobot_ros.modal.modes import ModalResult, modes_of
from flexrobot_ros.model import FlexibleRobot

#: Fraction of a record's samples inside the tanh band from which a motor counts as held by its friction.
HELD_FRACTION = 0.9
#: The friction is negligible when its equivalent damping stays below this fraction of the motor's viscous damping
#: d_fm + kd in every window of the record.
NEGLIGIBLE_FRACTION = 0.05
#: Windows of a record over which the equivalent damping is also evaluated (its change along the decaying response).
WINDOWS = 4
#: Regimes in which the linear model holds the record's friction (:meth:`MotorFriction.linear`).
LINEAR_REGIMES = ("held", "negligible")


@dataclass(frozen=True)
class MotorFriction:
    """The motor Coulomb friction over one record: per joint (n,) the ``equivalent_damping`` d_eq [N m s/rad]
    (module docstring; 0 where ``motor_coulomb`` is 0), ``window_damping`` (WINDOWS, n) the same over each quarter
    of the record, the ``inside_fraction`` of the samples with |qd_m| below the band ``width`` [rad/s],
    ``peak_velocity`` max |qd_m| [rad/s] and ``viscous`` the motor's viscous damping d_fm + kd [N m s/rad];
    ``joints`` their names."""

    equivalent_damping: np.ndarray
    window_damping: np.ndarray
    inside_fraction: np.ndarray
    peak_velocity: np.ndarray
    viscous: np.ndarray
    width: float
    joints: tuple[str, ...]

    def regime(self, j: int) -> str:
        """Joint ``j``'s friction over the record: 'negligible' (d_eq below NEGLIGIBLE_FRACTION of d_fm + kd in
        every window), 'held' (at least HELD_FRACTION of the samples inside the tanh band: its linear zone),
        'sliding' (at most 1 - HELD_FRACTION inside) or 'partly held' (in between)."""
        if np.max(self.window_damping[:, j]) <= NEGLIGIBLE_FRACTION * self.viscous[j]:
            return "negligible"
        inside = float(self.inside_fraction[j])
        return "held" if inside >= HELD_FRACTION else "sliding" if inside <= 1.0 - HELD_FRACTION else "partly held"

    @property
    def nonlinear(self) -> tuple[int, ...]:
        """The joints whose friction no linear model holds over this record (regime not in LINEAR_REGIMES): its
        equivalent damping depends on the amplitude, which decays along the record."""
        return tuple(j for j in range(len(self.joints)) if self.regime(j) not in LINEAR_REGIMES)

    def describe(self) -> str:
        """One line: each joint with friction, its regime, the share of the record inside the band, d_eq."""
        parts = [f"{name} {self.regime(j)} ({100 * self.inside_fraction[j]:.0f} % inside, d_eq "
                 f"{self.equivalent_damping[j]:.4g} N m s/rad)"
                 for j, name in enumerate(self.joints) if self.equivalent_damping[j] > 0.0]
        return (f"motor Coulomb friction (tanh band |qd_m| < {self.width:g} rad/s): "
                + (", ".join(parts) if parts else "none"))

    def why_nonlinear(self) -> str:
        """Why this record's friction is not modelled (the joints of :attr:`nonlinear`), or ''."""
        if not self.nonlinear:
            return ""
        joints = ", ".join(f"{self.joints[j]} ({self.regime(j)}: {100 * self.inside_fraction[j]:.0f} % of the "
                           f"record inside |qd_m| < {self.width:g} rad/s, peak {self.peak_velocity[j]:.3g} rad/s, "
                           f"d_eq {np.min(self.window_damping[:, j]):.4g}-{np.max(self.window_damping[:, j]):.4g} "
                           "N m s/rad along the record)" for j in self.nonlinear)
        return (f"the motor Coulomb friction of {joints} holds its motor only part of the time: its damping "
                "changes with the amplitude and no linear model holds it; excite less, so that the motors stay "
                "inside the band")


def has_motor_coulomb(robot: FlexibleRobot) -> bool:
    """Whether any joint of ``robot`` has motor Coulomb friction (rigid joints have none: schema)."""
    return bool(np.any(np.asarray(robot.motor_coulomb) > 0.0))


def record_friction(robot: FlexibleRobot, motor_velocities: Any, source: str = "record") -> MotorFriction:
    """:class:`MotorFriction` of ``robot``'s motor Coulomb friction over the motor velocities (samples, n) [rad/s]
    of one record (module docstring). Raises IdentificationError naming ``source`` for a wrong shape or a
    non-finite velocity."""
    velocities = np.asarray(motor_velocities, dtype=float)
    if velocities.ndim != 2 or velocities.shape[1] != robot.n or velocities.shape[0] < 1:
        raise IdentificationError(f"{source}: motor velocities: expected (samples, {robot.n}) values for the joints "
                                  f"{list(robot.joint_names)}, got shape {velocities.shape}")
    bad = np.argwhere(~np.isfinite(velocities))
    if bad.size:
        sample, joint = bad[0]
        raise IdentificationError(f"{source}: motor velocity of {robot.joint_names[joint]} at sample {sample} is "
                                  f"{velocities[sample, joint]}; expected a finite number [rad/s]")
    width = float(robot.coulomb_width)
    ratio = velocities / width
    scale = np.asarray(robot.motor_coulomb, dtype=float) / width
    slope = 1.0 - np.tanh(ratio) ** 2
    windows = np.array([scale * part.mean(axis=0) for part in np.array_split(slope, min(WINDOWS, len(slope)))])
    return MotorFriction(equivalent_damping=scale * slope.mean(axis=0), window_damping=windows,
                         inside_fraction=np.mean(np.abs(ratio) < 1.0, axis=0),
                         peak_velocity=np.abs(velocities).max(axis=0),
                         viscous=np.asarray(robot.motor_damping, dtype=float) + np.asarray(robot.kd, dtype=float),
                         width=width, joints=tuple(robot.joint_names))


def friction_damping_matrix(robot: FlexibleRobot, damping: Any, size: int) -> np.ndarray:
    """The (size, size) addition to ``D_bar`` of :func:`~flexrobot_ros.modal.linearize`:
    ``damping`` (n,) [N m s/rad] on the motor coordinate ``q_m.<joint>`` of each joint that has one."""
    labels = modal_coordinates(robot)
    if len(labels) != size:
        raise IdentificationError(f"robot {robot.name}: {size} coordinates in its linearization, {len(labels)} "
                                  "labels: the motor friction cannot be placed")
    matrix = np.zeros((size, size))
    index = {label: i for i, label in enumerate(labels)}
    for value, joint in zip(np.asarray(damping, dtype=float), robot.joint_names):
        i = index.get(f"q_m.{joint}")
        if i is not None:
            matrix[i, i] = value
    return matrix


def pose_linearization(robot: FlexibleRobot, q: Any, friction_damping: Any = None) -> LinearizedModel:
    """The held-pose linearization of ``robot`` at ``q`` [rad | m] with the record's equivalent motor friction
    damping ``friction_damping`` (n,) [N m s/rad] added to ``D_bar`` (None: the plain held linearization)."""
    linearized = linearize(robot, q)
    if friction_damping is None:
        return linearized
    extra = friction_damping_matrix(robot, friction_damping, linearized.D_bar.shape[0])
    return dataclasses.replace(linearized, D_bar=linearized.D_bar + extra)


def pose_modes(robot: FlexibleRobot, q: Any, friction_damping: Any = None) -> ModalResult:
    """Modes of :func:`pose_linearization` (frequencies [Hz] ascending, damping ratios as fractions)."""
    return modes_of(pose_linearization(robot, q, friction_damping))


__all__ = ["HELD_FRACTION", "LINEAR_REGIMES", "NEGLIGIBLE_FRACTION", "WINDOWS", "MotorFriction",
           "friction_damping_matrix", "has_motor_coulomb", "pose_linearization",
           "pose_modes", "record_friction"]
