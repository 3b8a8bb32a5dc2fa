"""Self-calibration: measure the modes at a list of poses on a running robot, then identify its joint parameters.

The procedure (issue 26), ROS-free; whoever runs it supplies a :class:`CalibrationCell`, the things only the robot
(or its simulator) can do:

1. for each pose of the list: ``move_to(q)`` brings the robot there (a commanded move in simulation; on hardware,
   waiting until the robot reports the pose within a tolerance, with a timeout) and returns the link pose it
   reports [rad | m]; ``excite()`` excites it (an impact, ambient motion, the user's excitation);
   ``measure_modes()`` identifies its modes by OMA (undamped natural frequencies [Hz], damping ratios as fractions,
   mode shapes in ``shape_coordinates``); on a robot with motor Coulomb friction ``motor_velocities()`` gives the
   motor velocities of that record [rad/s], whose friction the model of the pose then holds (step 2);
2. the record's motor Coulomb friction, linearized (:mod:`.motor_friction`: the mean slope of ``f_c tanh(qd_m /
   w)`` over the record, an equivalent viscous motor damping per joint and pose). Friction that holds the motors
   (the shipped LWR4: |qd_m| inside the 0.01 rad/s band for the whole record after a 50 N blow) moves every
   measured mode towards the locked-rotor modes, which the free-motor model misses by up to 45 %; the progress
   and the report say, per pose, which motors it holds and the damping it stands for. A pose whose record's
   friction no linear model holds (a motor held only part of the time, or sliding against a friction that
   matters: its damping changes with the decaying amplitude) is left out and reported, with the advice to excite
   less;
3. the measured modes are paired with the model's predicted modes at each pose (frequency + MAC,
   :mod:`.matching`; unpaired ones are left out and listed) and the unknowns (default ``k,d_f``: joint stiffness
   and link damping of every joint) are identified across the poses by the inverse eigenvalue problem of seed 000
   chapter 3 (:func:`~flexrobot_ros.identification.joint_parameters.identify_joint_parameters`, eigenvalue
   residuals); on a robot with flexible links, ``EI`` / ``EI,zeta`` name the links' bending stiffness [N m^2] and
   modal damping ratio instead, identified the same way on the flexible-link linearization
   (:func:`~flexrobot_ros.identification.link_identification.identify_link_parameters`; e.g. the Canadarm with
   every EI 15 % off: EI within 0.2 %, every mode below 50 Hz within 0.1 %, test_link_calibration.py);
4. identifiability, before and after the solve: a parameter the data do not determine - in the null space of the
   measured modes' sensitivity matrix, or with a standard deviation above ``determined_fraction`` of its value for
   the stated data uncertainty, or at a bound after the solve - is kept at its nominal value and reported so, one
   at a time (the worst first: :func:`~flexrobot_ros.identification.identifiability.undetermined_parameters`), and
   the rest are identified without it. Before the solve this runs on the sensitivity at the nominal values (joint
   parameters), so that an unobservable parameter (kr90's d_fm: its motor modes lie far above the measured band)
   neither drags the solve along its null direction nor makes the observable ones (kr90's d_f, carried by the
   link modes' damping) look undetermined. What is determined depends on the excitation: e.g. the Scompi's k6
   moves only its 850 Hz, 80 %-damped wrist mode, above the encoders' Nyquist limit (+20 % on k6 shifts the 13.1 Hz
   motor mode of joint 6 by 0.01 %), and its d_f6 is carried by the damping of that 13.1 Hz mode, measured only
   when the excitation moves joint 6 (a blow off the wrist axis);
5. acceptance: the result is accepted only when the calibrated model reproduces EVERY measured mode the
   identification used, at its pose: frequency within ``mode_frequency_tolerance`` (relative, default 1 %) and
   damping ratio within ``mode_damping_tolerance`` (absolute, default 1 percentage point); otherwise it is refused
   (:attr:`CalibrationResult.accepted` false, :attr:`CalibrationResult.refusal` naming each mode missed) and its
   estimate is not applied: :attr:`CalibrationResult.robot` stays the nominal model and nothing is written or
   pushed. A model that cannot reproduce the record (friction the linearization does not capture, a bad mode)
   is refused instead of giving values;
6. the report: per pose and measured mode, the frequency and damping ratio predicted before (nominal model) and
   after (calibrated model) beside the measured ones.

A failure at a pose (a move that times out, an excitation refused, no modes found) ends the sweep - on hardware the
robot's state is then unknown - and is reported with the pose's number and target; the modes measured at the poses
before it are kept in :attr:`CalibrationResult.data`, and they are identified when there are enough of them.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from flexrobot_ros.errors import CalibrationError, FlexrobotError, IdentificationError
from flexrobot_ros.identification.joint_parameters import (
    IdentificationResult, identified_links, identify_joint_parameters, kept_coupling, undetermined_joint_parameters)
from flexrobot_ros.identification.link_identification import identify_link_parameters
from flexrobot_ros.identification.link_parameters import is_link_kind, parse_link_parameters
from flexrobot_ros.identification.matching import FREQUENCY_TOLERANCE, MAC_THRESHOLD, match_modes
from flexrobot_ros.identification.modal_data import MeasuredMode, ModalData, PoseModes
from flexrobot_ros.identification.motor_friction import MotorFriction, has_motor_coulomb, pose_modes, record_friction
from flexrobot_ros.identification.parameters import KIND_FIELDS, parse_parameters
from flexrobot_ros.modal.held_modes import has_link_layer
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.text_table import MISSING, Column, table

#: A parameter whose standard deviation (for the stated data uncertainty) exceeds this fraction of its value is not
#: determined by the data and is kept at its nominal value (the identification's own "poorly determined" limit).
DETERMINED_FRACTION = 0.5
#: Acceptance (step 5): largest relative frequency error of a used measured mode against the calibrated model. Twice
#: the default data uncertainty (frequency_std 0.5 %); SSI-cov on a simulated LWR4 record gives the true model's
#: modes within 0.1 %, its two close 2.7 / 2.9 Hz modes within 0.3 % (test_calibration_friction.py).
MODE_FREQUENCY_TOLERANCE = 0.01
#: Acceptance (step 5): largest damping-ratio error (absolute fraction: 0.01 = 1 percentage point) of a used mode.
MODE_DAMPING_TOLERANCE = 0.01
#: Pairing (step 3): a measured mode is not a model mode whose damping ratio differs by more than this (absolute):
#: encoder noise gives SSI-cov lightly damped poles at 150-195 Hz beside the KR90's 178 Hz, 67 %-damped motor mode,
#: and the frequency + MAC pairing alone took them for it.
DAMPING_MATCH_TOLERANCE = 0.2
#: How far (relative) a parameter kept at its nominal value may be off: the issue's true YAMLs scale the LWR4's
#: stiffnesses by 0.77-1.21. An identified parameter that this much on the kept ones moves more than its own standard
#: deviation is kept at nominal too (:func:`governed_by_kept`).
NOMINAL_UNCERTAINTY = 0.25

Progress = Callable[[str], None]


class CalibrationCell(Protocol):
    """What the robot (or its simulator) does for the calibration; each step raises a
    :class:`~flexrobot_ros.errors.FlexrobotError` naming what went wrong."""

    def move_to(self, pose: np.ndarray) -> np.ndarray:
        """Bring the robot to the link pose ``pose`` (n,) [rad | m] and return the pose it reports there."""

    def excite(self) -> None:
        """Excite the robot held at the pose (impact, ambient motion, the user's excitation)."""

    def measure_modes(self) -> Sequence[MeasuredMode]:
        """The modes identified by OMA from the response to the excitation."""

    def motor_velocities(self) -> np.ndarray:
        """The motor velocities (samples, n) [rad/s] of the record ``measure_modes`` analysed (asked only on a
        robot with motor Coulomb friction)."""


@dataclass(frozen=True)
class CalibrationOptions:
    """``parameters``: the unknowns (:func:`~flexrobot_ros.identification.parameters.parse_parameters` selection);
    ``starts``/``seed``: random starts of each identification; ``frequency_tolerance`` (relative) and
    ``mac_threshold``: mode pairing; ``determined_fraction``: see :data:`DETERMINED_FRACTION`; ``frequency_std``
    (relative) and ``damping_std`` (absolute fraction): data uncertainty for the standard deviations;
    ``shape_coordinates``: what the measured shapes hold ('motor', 'link' or 'full'); ``mode_frequency_tolerance``
    (relative) and ``mode_damping_tolerance`` (absolute fraction): acceptance (step 5 of the module docstring);
    ``parameters_setting``: the name of the setting ``parameters`` came from, for messages (calibration_node's
    ``identification.parameters``); ``damping_match_tolerance``: see :data:`DAMPING_MATCH_TOLERANCE`;
    ``nominal_uncertainty``: see :data:`NOMINAL_UNCERTAINTY`."""

    parameters: str = "k,d_f"
    starts: int = 8
    seed: int = 0
    frequency_tolerance: float = FREQUENCY_TOLERANCE
    mac_threshold: float = MAC_THRESHOLD
    determined_fraction: float = DETERMINED_FRACTION
    frequency_std: float = 0.005
    damping_std: float = 0.005
    shape_coordinates: str = "motor"
    mode_frequency_tolerance: float = MODE_FREQUENCY_TOLERANCE
    mode_damping_tolerance: float = MODE_DAMPING_TOLERANCE
    parameters_setting: str = "identification.parameters"
    damping_match_tolerance: float = DAMPING_MATCH_TOLERANCE
    nominal_uncertainty: float = NOMINAL_UNCERTAINTY


@dataclass(frozen=True)
class PoseFailure:
    """The step (``move``, ``excite`` or ``measure``) that failed at pose number ``pose`` (0-based) with target
    ``q`` [rad | m], and why."""

    pose: int
    q: np.ndarray
    step: str
    message: str

    def describe(self) -> str:
        return (f"pose {self.pose + 1} (q = {np.round(self.q, 6).tolist()}): {self.step} failed: {self.message}")


@dataclass(frozen=True)
class ModeReport:
    """One measured mode at pose ``pose`` (0-based) beside the model's paired mode before and after calibration:
    frequencies [Hz] and damping ratios (fractions); NaN where no model mode pairs with it (``*_mode`` -1)."""

    pose: int
    mode: int
    measured_frequency_hz: float
    measured_damping_ratio: float
    before_mode: int
    before_frequency_hz: float
    before_damping_ratio: float
    after_mode: int
    after_frequency_hz: float
    after_damping_ratio: float

    @property
    def before_error(self) -> float:
        """(predicted before - measured) / measured frequency."""
        return self.before_frequency_hz / self.measured_frequency_hz - 1.0

    @property
    def after_error(self) -> float:
        """(predicted after - measured) / measured frequency."""
        return self.after_frequency_hz / self.measured_frequency_hz - 1.0

    def to_dict(self) -> dict:
        return {key: (None if isinstance(value, float) and not np.isfinite(value) else value)
                for key, value in self.__dict__.items()}


@dataclass(frozen=True)
class CalibrationResult:
    """Outcome of :func:`calibrate`.

    ``nominal``: the robot the calibration started from; ``robot``: the calibrated copy when the result was
    accepted (``nominal`` itself when it was refused or nothing was identified); ``data``: the modes measured at each
    pose reached (link poses as reported, with the motor friction of each record); ``identification``: the final
    identification (None when too few poses were measured or nothing was determined; when refused, its estimate is
    shown and not applied); ``kept``: parameters the data do not determine, kept at their nominal values, with the
    reason; ``modes``: before/after per pose and mode (after: the estimate, applied or not); ``failure``: the pose
    where the sweep stopped (None when every pose was measured); ``wall_time_s``; ``friction``: the motor Coulomb
    friction of each pose's record (None per pose on a robot without); ``accepted``: the calibrated model reproduces
    every used measured mode within ``tolerances`` (module docstring, step 5); ``refusal``: why not; ``left_out``:
    the poses (0-based) whose record's friction no linear model holds, not identified from, and why.
    """

    nominal: FlexibleRobot
    robot: FlexibleRobot
    data: ModalData
    identification: IdentificationResult | None
    kept: dict[str, str]
    modes: tuple[ModeReport, ...]
    failure: PoseFailure | None
    wall_time_s: float
    warnings: tuple[str, ...] = field(default_factory=tuple)
    friction: tuple[MotorFriction | None, ...] = field(default_factory=tuple)
    accepted: bool = False
    refusal: tuple[str, ...] = field(default_factory=tuple)
    tolerances: dict[str, float] = field(default_factory=dict)
    left_out: dict[int, str] = field(default_factory=dict)

    @property
    def identified(self) -> dict[str, dict[str, float]]:
        """``{joint: {field: value}}`` of the identified (determined) parameters of an accepted result, for the YAML
        writer ({} when refused)."""
        fields: dict[str, dict[str, float]] = {}
        for p in () if self.identification is None or not self.accepted else self.identification.parameters:
            if not p.field:
                fields.setdefault(p.joint, {})[KIND_FIELDS[p.kind]] = p.value
        return fields

    @property
    def identified_links(self) -> dict[str, dict[str, float]]:
        """``{link: {field: value}}`` of the identified (determined) flexible-link parameters (EI [N m^2], EI.y,
        EI.z, damping_ratio) of an accepted result, for the YAML writer ({} when refused)."""
        if self.identification is None or not self.accepted:
            return {}
        return identified_links(self.identification.parameters)

    def to_dict(self) -> dict:
        """JSON-ready summary (SI units, damping ratios as fractions)."""
        ident = self.identification
        return {
            "robot": self.nominal.name, "poses_measured": len(self.data.poses),
            "failure": None if self.failure is None else self.failure.describe(),
            "accepted": self.accepted, "refusal": list(self.refusal), "tolerances": dict(self.tolerances),
            "poses_left_out": {str(i + 1): why for i, why in self.left_out.items()},
            "parameters": [] if ident is None else [p.to_dict() for p in ident.parameters],
            "kept_nominal": dict(self.kept),
            "identifiability": None if ident is None else ident.identifiability.to_dict(),
            "motor_friction": [None if f is None else {
                "equivalent_damping": f.equivalent_damping.tolist(), "inside_fraction": f.inside_fraction.tolist(),
                "peak_velocity": f.peak_velocity.tolist(), "width": f.width,
                "window_damping": f.window_damping.tolist(),
                "regime": [f.regime(j) for j in range(len(f.joints))]} for f in self.friction],
            "modes": [m.to_dict() for m in self.modes], "wall_time_s": self.wall_time_s,
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        """Multi-line report: verdict, identified values, parameters kept at nominal, the motor friction per pose,
        before/after per pose and mode."""
        lines = [f"Self-calibration of {self.nominal.name}: {len(self.data.poses)} poses measured"
                 + ("" if self.failure is None else f"; stopped at {self.failure.describe()}")]
        if self.identification is not None:
            lines.append("  accepted: the calibrated model reproduces every used measured mode" if self.accepted else
                         "  REFUSED: the estimate below is not applied")
        lines += [f"  refused: {reason}" for reason in self.refusal]
        ident = self.identification
        if ident is not None:
            lines += table([Column("parameter", align="<"), Column("nominal"), Column("calibrated"), Column("change"),
                            Column("std"), Column("unit", align="<")],
                           [[p.name, f"{p.nominal:.6g}", f"{p.value:.8g}",
                             f"{100 * (p.value / p.nominal - 1):.2f}%" if p.nominal else MISSING, f"{p.std:.3g}",
                             p.unit] for p in ident.parameters], indent="  ")
        for name, reason in self.kept.items():
            lines.append(f"  {name}: kept at its nominal value ({reason})")
        for i, friction in enumerate(self.friction):
            if friction is not None:
                lines.append(f"  pose {i + 1}: {friction.describe()}")
        lines.append(f"  {'pose':>4}{'mode':>5}{'f meas [Hz]':>13}{'f before [Hz]':>15}{'err [%]':>9}"
                     f"{'f after [Hz]':>14}{'err [%]':>9}{'zeta meas [%]':>15}{'before [%]':>12}{'after [%]':>11}")
        for m in self.modes:
            lines.append(f"  {m.pose + 1:>4}{m.mode + 1:>5}{m.measured_frequency_hz:>13.4f}"
                         f"{m.before_frequency_hz:>15.4f}{100 * m.before_error:>9.3f}{m.after_frequency_hz:>14.4f}"
                         f"{100 * m.after_error:>9.3f}{100 * m.measured_damping_ratio:>15.3f}"
                         f"{100 * m.before_damping_ratio:>12.3f}{100 * m.after_damping_ratio:>11.3f}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def measure_poses(robot: FlexibleRobot, poses: Sequence[np.ndarray], cell: CalibrationCell,
                  progress: Progress | None = None,
                  ) -> tuple[list[PoseModes], list[MotorFriction | None], PoseFailure | None]:
    """Steps 1-2 of the module docstring: the modes at each pose and the motor friction of its record, until the
    first failure."""
    say = progress or (lambda message: None)
    measured: list[PoseModes] = []
    frictions: list[MotorFriction | None] = []
    coulomb = has_motor_coulomb(robot)
    for i, q in enumerate(poses):
        where = f"pose {i + 1}/{len(poses)}"
        step = "move"
        try:
            say(f"{where}: moving to q = {np.round(q, 6).tolist()}")
            reached = np.asarray(cell.move_to(np.asarray(q, dtype=float)), dtype=float)
            step = "excite"
            say(f"{where}: exciting at q = {np.round(reached, 6).tolist()}")
            cell.excite()
            step = "measure"
            modes = tuple(cell.measure_modes())
            if not modes:
                raise CalibrationError("OMA found no mode in the response")
            friction = record_friction(robot, _motor_velocities(robot, cell), where) if coulomb else None
        except FlexrobotError as error:
            failure = PoseFailure(i, np.asarray(q, dtype=float), step, str(error))
            say(f"{where}: FAILED: {failure.describe()}")
            return measured, frictions, failure
        measured.append(PoseModes(reached, modes, None if friction is None else friction.equivalent_damping))
        frictions.append(friction)
        say(f"{where}: {len(modes)} modes: " + ", ".join(f"{m.frequency_hz:.3f} Hz ({100 * m.damping_ratio:.2f} %)"
                                                       for m in modes))
        if friction is not None:
            say(f"{where}: {friction.describe()}")
    return measured, frictions, None


def _motor_velocities(robot: FlexibleRobot, cell: CalibrationCell) -> np.ndarray:
    velocities = getattr(cell, "motor_velocities", None)
    if velocities is None:
        raise CalibrationError(f"robot {robot.name} has motor Coulomb friction, which moves its modes with the motion "
                               "of the record; this cell gives no motor velocities (motor_velocities()) to model it")
    return np.asarray(velocities(), dtype=float)


def undetermined_after(result: IdentificationResult, fraction: float
                       ) -> tuple[dict[str, str], tuple[int, float] | None]:
    """What the solve of ``result`` leaves undetermined: ({name: reason}, the (pose, frequency [Hz]) of the measured
    mode that alone carries it, or None). Every parameter at a bound; else the one with the largest standard
    deviation relative to its value if that exceeds ``fraction`` (inf: in the null space of the sensitivity
    matrix); else the one with the largest standard deviation with one measured mode left out, if that exceeds it
    (the mode then carries it alone); one at a time like :func:`~flexrobot_ros.identification.identifiability.
    undetermined_parameters`; ({}, None) when all are determined."""
    bound = {p.name: f"at its bound [{p.lower:.6g}, {p.upper:.6g}] {p.unit} after the solve"
             for p in result.parameters if p.at_bound}
    if bound:
        return bound, None
    relative = lambda p, std: std / abs(p.value) if p.value else np.inf  # noqa: E731
    worst = max(result.parameters, key=lambda p: relative(p, p.std))
    if relative(worst, worst.std) > fraction:
        if not np.isfinite(worst.std):
            return {worst.name: "not observable from the measured modes at the estimate (in the null space of their "
                                "sensitivity matrix)"}, None
        return {worst.name: f"not determined by the measured modes: standard deviation {worst.std:.3g} {worst.unit} "
                            f"for {worst.value:.3g} at the estimate"}, None
    worst = max(result.parameters, key=lambda p: relative(p, p.deletion_std))
    if relative(worst, worst.deletion_std) <= fraction or worst.carried_by < 0:
        return {}, None
    mode = result.comparisons[worst.carried_by]
    return {worst.name: f"carried by the {mode.measured_frequency_hz:.4g} Hz mode of pose {mode.pose + 1} alone, "
                        "which then fits it exactly whatever that mode's error: nothing cross-checks it"}, \
        (mode.pose, mode.measured_frequency_hz)


def governed_by_kept(robot: FlexibleRobot, result: IdentificationResult, data: ModalData, kept: dict[str, str],
                     options: CalibrationOptions) -> dict[str, str]:
    """The identified parameter (name -> reason) whose estimate the parameters kept at their nominal values move
    more than the data do: ``options.nominal_uncertainty`` (relative) on every kept parameter with a nonzero
    nominal value shifts it (:func:`~flexrobot_ros.identification.joint_parameters.kept_coupling`, root sum of
    squares) by more than its own standard deviation; the worst one, or {} when none. Its value would be the
    nominal values' doing, not the measurement's: the bring-up records of an LWR4 in which k1 and k2 were kept
    gave k3 -3.4 % and k4 +4.6 % off the truth at standard deviations of 3 % and 1 %; 25 % on k1 moves k3 by 11 %,
    on k2 k4 by 4.5 %."""
    free = [_selection(p) for p in result.parameters]
    names = [name.replace(".", ":", 1) for name in kept]
    free_unknowns, kept_unknowns, coupling = kept_coupling(
        robot, result.robot, data, free, names, frequency_tolerance=options.frequency_tolerance,
        mac_threshold=options.mac_threshold, damping_match_tolerance=options.damping_match_tolerance)
    uncertainty = np.array([options.nominal_uncertainty if p.value_in(robot) else 0.0 for p in kept_unknowns])
    moved = coupling * uncertainty[None, :]
    shift = np.sqrt(np.sum(moved ** 2, axis=1))
    table = {p.name: p for p in result.parameters}
    own = np.array([table[p.name].std / abs(table[p.name].value) if table[p.name].value else np.inf
                    for p in free_unknowns])
    ratio = shift / own
    worst = int(np.argmax(ratio))
    if not ratio[worst] > 1.0:
        return {}
    by = [kept_unknowns[j].name for j in np.argsort(-np.abs(moved[worst]))[:2] if moved[worst, j]]
    return {free_unknowns[worst].name: (
        f"its estimate depends on {', '.join(by)}, kept at the nominal value: "
        f"{100 * options.nominal_uncertainty:.3g} % on the kept parameters moves it by {100 * shift[worst]:.3g} %, "
        f"more than its standard deviation from the measured modes ({100 * own[worst]:.3g} %)")}


def without_mode(data: ModalData, pose: int, frequency_hz: float) -> ModalData:
    """``data`` without the measured mode of ``frequency_hz`` [Hz] at pose ``pose`` (0-based)."""
    poses = list(data.poses)
    poses[pose] = dataclasses.replace(poses[pose], modes=tuple(m for m in poses[pose].modes
                                                               if m.frequency_hz != frequency_hz))
    return dataclasses.replace(data, poses=tuple(poses))


def reproduction_failures(result: IdentificationResult, frequency_tolerance: float,
                          damping_tolerance: float) -> list[str]:
    """Step 5: each measured mode the identification used that its calibrated model does not reproduce at its pose
    (no paired mode, relative frequency error above ``frequency_tolerance``, damping-ratio error above
    ``damping_tolerance``), described."""
    failures = []
    for c in result.comparisons:
        where = (f"pose {c.pose + 1}, measured mode {c.measured_frequency_hz:.4g} Hz "
                 f"({100 * c.measured_damping_ratio:.3g} %)")
        if c.model_mode < 0:
            failures.append(f"{where}: no mode of the calibrated model pairs with it")
            continue
        frequency = c.predicted_frequency_hz / c.measured_frequency_hz - 1.0
        damping = c.predicted_damping_ratio - c.measured_damping_ratio
        if abs(frequency) > frequency_tolerance or abs(damping) > damping_tolerance:
            failures.append(f"{where}: the calibrated model gives {c.predicted_frequency_hz:.4g} Hz "
                            f"({100 * c.predicted_damping_ratio:.3g} %): frequency {100 * frequency:+.3g} % "
                            f"(tolerance {100 * frequency_tolerance:.3g} %), damping {100 * damping:+.3g} points "
                            f"(tolerance {100 * damping_tolerance:.3g})")
    return failures


def mode_reports(nominal: FlexibleRobot, calibrated: FlexibleRobot, data: ModalData,
                 options: CalibrationOptions) -> tuple[ModeReport, ...]:
    """Step 6: each measured mode beside the paired mode of the nominal and of the calibrated model at its pose (both
    with the record's motor friction)."""
    rows = []
    for i, pose in enumerate(data.poses):
        pairs = [match_modes(pose_modes(model, pose.q, pose.motor_friction_damping), pose, i, data.shape_coordinates,
                             options.frequency_tolerance, options.mac_threshold, data.source,
                             options.damping_match_tolerance) for model in (nominal, calibrated)]
        for k, mode in enumerate(pose.modes):
            before, after = (int(p.model_mode[k]) for p in pairs)
            rows.append(ModeReport(i, k, mode.frequency_hz, mode.damping_ratio, before,
                                   float(pairs[0].model_frequency_hz[k]), float(pairs[0].model_damping_ratio[k]),
                                   after, float(pairs[1].model_frequency_hz[k]),
                                   float(pairs[1].model_damping_ratio[k])))
    return tuple(rows)


def identification_of(robot: FlexibleRobot, options: CalibrationOptions) -> tuple[Callable[..., Any], dict]:
    """The identification that ``options.parameters`` names and its settings: the joint parameters (k, d_f,
    d_fm: :func:`~flexrobot_ros.identification.joint_parameters.identify_joint_parameters`) or the flexible links'
    (EI, zeta: :func:`~flexrobot_ros.identification.link_identification.identify_link_parameters`); a mixture is
    refused (IdentificationError)."""
    items = [item for item in str(options.parameters).split(",") if item.strip()]
    links = [is_link_kind(item) for item in items]
    settings: dict[str, Any] = dict(starts=options.starts, seed=options.seed, drop_unmatched=True,
                                    frequency_tolerance=options.frequency_tolerance,
                                    mac_threshold=options.mac_threshold, frequency_std=options.frequency_std,
                                    damping_std=options.damping_std, parameters_setting=options.parameters_setting,
                                    damping_match_tolerance=options.damping_match_tolerance)
    if links and all(links):
        return identify_link_parameters, settings
    if any(links):
        raise IdentificationError(f"{options.parameters_setting} {options.parameters!r}: joint parameters (k, d_f, "
                                  "d_fm) and link parameters (EI, zeta) are calibrated in separate runs")
    return identify_joint_parameters, dict(settings, residual="eigenvalue")


def check_parameters(robot: FlexibleRobot, selection: str) -> tuple[Any, ...]:
    """The unknowns ``selection`` names on ``robot`` (joint or flexible-link parameters, not both), or an
    IdentificationError naming what is wrong (the check a node runs before it starts a calibration)."""
    identify, _ = identification_of(robot, CalibrationOptions(parameters=selection))
    if identify is identify_link_parameters:
        return parse_link_parameters(robot, selection)
    if has_link_layer(robot):
        raise IdentificationError(f"robot {robot.name} has flexible links or rigid joints: calibrate its links' EI, "
                                  f"zeta, not {selection!r} (k, d_f, d_fm belong to the flexible-joint model)")
    return parse_parameters(robot, selection)


def _selection(parameter: Any) -> str:
    """The selection item that names one parameter (JointParameter, LinkParameter or IdentifiedParameter) again
    (``k:joint2``, ``EI:link1``)."""
    name = getattr(parameter, "joint_name", None) or getattr(parameter, "link", None) or parameter.joint
    return f"{parameter.kind}:{name}"


def identify_determined(robot: FlexibleRobot, data: ModalData, options: CalibrationOptions,
                        progress: Progress | None = None
                        ) -> tuple[IdentificationResult | None, dict[str, str], list[str]]:
    """Steps 3-4: (the identification of the determined unknowns or None when none is, the unknowns kept at their
    nominal values with the reason, the measured modes left out because each alone carried a parameter kept at
    nominal). Raises IdentificationError when the data cannot be identified at all (too few modes for the unknowns
    left: eq. 3.32)."""
    say = progress or (lambda message: None)
    identify, settings = identification_of(robot, options)
    kept: dict[str, str] = {}
    left_out: list[str] = []

    def leave_out(pose: int, frequency_hz: float, name: str) -> None:
        nonlocal data
        data = without_mode(data, pose, frequency_hz)
        left_out.append(f"pose {pose + 1}: the {frequency_hz:.4g} Hz mode left out: it alone carries {name}, kept "
                        "at its nominal value")
        say(left_out[-1])

    if identify is identify_joint_parameters:
        unknowns = parse_parameters(robot, options.parameters)
        left = [_selection(p) for p in unknowns]
        while left:    # again after a mode is left out: the count of eq. 3.32 and what the rest carry change
            found = undetermined_joint_parameters(
                robot, data, left, options.determined_fraction, frequency_tolerance=options.frequency_tolerance,
                mac_threshold=options.mac_threshold, frequency_std=options.frequency_std,
                damping_std=options.damping_std, damping_match_tolerance=options.damping_match_tolerance)
            for p, why, single in found:
                kept[p.name] = "at the nominal values: " + why.reason(options.determined_fraction)
                if single is not None:
                    leave_out(single[0], single[1].frequency_hz, p.name)
            left = [_selection(p) for p in unknowns if p.name not in kept]
            if not any(single is not None for _, _, single in found):
                break
        if kept:
            say("kept at nominal (not determined by these modes at the nominal values): " + ", ".join(kept))
    else:
        unknowns = parse_link_parameters(robot, options.parameters)
    free = [_selection(p) for p in unknowns if p.name not in kept]
    while free:
        say(f"identifying {','.join(free)} from {data.n_modes} modes at {len(data.poses)} poses")
        result = identify(robot, data, free, **settings)
        undetermined, single = undetermined_after(result, options.determined_fraction)
        if not undetermined and kept and identify is identify_joint_parameters:
            undetermined = governed_by_kept(robot, result, data, kept, options)
        if not undetermined:
            return result, kept, left_out
        say("kept at nominal (not determined by these modes): " + ", ".join(undetermined))
        kept.update(undetermined)
        if single is not None:
            leave_out(*single, next(iter(undetermined)))
        left = list(dict.fromkeys(_selection(p) for p in result.parameters if p.name not in kept))
        if left == free:
            raise IdentificationError(f"{', '.join(undetermined)} cannot be kept at nominal alone: the selection "
                                      f"{','.join(free)} ({options.parameters_setting}) names it with another "
                                      "parameter (both bending planes of a link); name the planes' links apart")
        free = left
    return None, kept, left_out


def calibrate(robot: FlexibleRobot, poses: Sequence[Sequence[float]], cell: CalibrationCell,
              options: CalibrationOptions | None = None, progress: Progress | None = None) -> CalibrationResult:
    """Calibrate ``robot`` (the nominal model) at the link ``poses`` [rad | m] with ``cell`` (module docstring).

    ``progress(message)`` is called at each step. Raises :class:`~flexrobot_ros.errors.IdentificationError` for
    poses of the wrong length and a parameter selection that does not apply to the robot, before anything moves;
    failures while measuring, and data that cannot be identified, are reported in the result (not accepted).
    """
    started = time.perf_counter()
    options = options or CalibrationOptions()
    say = progress or (lambda message: None)
    targets = [robot.check_q(q, f"calibration pose {i + 1}") for i, q in enumerate(poses)]
    if len(targets) < 2:
        raise IdentificationError(f"calibration: {len(targets)} pose(s) given; the joint parameters are separated by "
                                  "how the modes change with the pose: give two or more")
    check_parameters(robot, options.parameters)
    tolerances = {"frequency_relative": options.mode_frequency_tolerance,
                  "damping_ratio_absolute": options.mode_damping_tolerance}
    measured, frictions, failure = measure_poses(robot, targets, cell, say)
    data = ModalData(tuple(measured), options.shape_coordinates, f"calibration of {robot.name}", robot.name)
    left_out = {i: f.why_nonlinear() for i, f in enumerate(frictions) if f is not None and f.nonlinear}
    for i, why in left_out.items():
        say(f"pose {i + 1} left out: {why}")
    used = dataclasses.replace(data, poses=tuple(dataclasses.replace(p, modes=()) if i in left_out else p
                                                 for i, p in enumerate(measured)))

    def outcome(result: IdentificationResult | None, kept: dict[str, str], refusal: list[str],
                warnings: Sequence[str] = ()) -> CalibrationResult:
        accepted = result is not None and not refusal
        reports = mode_reports(robot, robot if result is None else result.robot, data, options)
        notes = [f"pose {i + 1} left out: {why}" for i, why in left_out.items()]
        return CalibrationResult(robot, result.robot if accepted else robot, data, result, kept, reports, failure,
                                 time.perf_counter() - started, tuple(notes + list(warnings)), tuple(frictions),
                                 accepted, tuple(refusal), tolerances, left_out)

    if len(measured) - len(left_out) < 2:
        say(f"{len(measured) - len(left_out)} pose(s) to identify from: nothing identified")
        return outcome(None, {}, [f"{len(measured)} pose(s) measured, {len(left_out)} left out (their motor "
                                  "friction): two or more are needed"])
    try:
        result, kept, single = identify_determined(robot, used, options, say)
    except IdentificationError as error:
        say(f"nothing identified: {error}")
        return outcome(None, {}, [str(error)])
    if result is None:
        say("nothing identified: no parameter is determined by the measured modes")
        return outcome(None, kept, [f"no parameter of {options.parameters!r} ({options.parameters_setting}) is "
                                    "determined by the measured modes"], single)
    refusal = reproduction_failures(result, options.mode_frequency_tolerance, options.mode_damping_tolerance)
    if refusal:
        say(f"REFUSED: the calibrated model misses {len(refusal)} of the {len(result.comparisons)} measured modes it "
            f"was fitted to (tolerance {100 * options.mode_frequency_tolerance:.3g} % in frequency, "
            f"{100 * options.mode_damping_tolerance:.3g} points in damping); nothing is applied")
    else:
        say(f"accepted: the calibrated model reproduces all {len(result.comparisons)} measured modes it was fitted to")
    return outcome(result, kept, refusal, single + list(result.warnings))


__all__ = ["CalibrationCell", "CalibrationOptions", "CalibrationResult", "ModeReport", "PoseFailure", "calibrate",
           "measure_poses", "undetermined_after", "check_parameters", "identification_of", "identify_determined",
           "mode_reports", "reproduction_failures", "governed_by_kept", "without_mode", "DETERMINED_FRACTION",
           "MODE_FREQUENCY_TOLERANCE", "MODE_DAMPING_TOLERANCE", "DAMPING_MATCH_TOLERANCE", "NOMINAL_UNCERTAINTY"]
