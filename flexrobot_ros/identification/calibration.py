"""Self-calibration: measure the modes at a list of poses on a running robot, then identify its joint parameters.

The procedure (issue 26), ROS-free; whoever runs it supplies a :class:`CalibrationCell`, the three things only the
robot (or its simulator) can do:

1. for each pose of the list: ``move_to(q)`` brings the robot there (a commanded move in simulation; on hardware,
   waiting until the robot reports the pose within a tolerance, with a timeout) and returns the link pose it
   reports [rad | m]; ``excite()`` excites it (an impact, ambient motion, the user's excitation);
   ``measure_modes()`` identifies its modes by OMA (undamped natural frequencies [Hz], damping ratios as fractions,
   mode shapes in ``shape_coordinates``);
2. the measured modes are paired with the model's predicted modes at each pose (frequency + MAC,
   :mod:`.matching`) and the unknowns (default ``k,d_f``: joint stiffness and link damping of every joint) are
   identified across the poses by the inverse eigenvalue problem of seed 000 chapter 3
   (:func:`~flexrobot_ros.identification.joint_parameters.identify_joint_parameters`, eigenvalue residuals, measured
   modes matching no model mode left out); on a robot with flexible links, ``EI`` / ``EI,zeta`` name the links'
   bending stiffness [N m^2] and modal damping ratio instead, identified the same way on the flexible-link
   linearization (:func:`~flexrobot_ros.identification.link_identification.identify_link_parameters`; e.g. the
   Canadarm with every EI 15 % off: EI within 0.2 %, every mode below 50 Hz within 0.1 %, test_link_calibration.py);
3. identifiability: a parameter the data do not determine - at a bound, or with a standard deviation above
   ``determined_fraction`` of its value for the stated data uncertainty (e.g. the Scompi's k6, which moves only its
   850 Hz, 80 %-damped wrist mode, above the encoders' Nyquist limit: +20 % on k6 shifts the 13.1 Hz motor mode of
   joint 6 by 0.01 %) - is kept at its nominal value and the rest are identified again without it. What is
   determined depends on the excitation: the Scompi's d_f6 is carried by the damping of that 13.1 Hz mode (+30 % on
   d_f6: +0.73 damping points), measured only when the excitation moves joint 6 (a blow off the wrist axis);
4. the report: per pose and measured mode, the frequency and damping ratio predicted before (nominal model) and after
   (calibrated model) beside the measured ones.

A failure at a pose (a move that times out, an excitation refused, no modes found) ends the sweep - on hardware the
robot's state is then unknown - and is reported with the pose's number and target; the modes measured at the poses
before it are kept in :attr:`CalibrationResult.data`, and they are identified when there are enough of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from flexrobot_ros.errors import CalibrationError, FlexrobotError, IdentificationError
from flexrobot_ros.identification.joint_parameters import (
    IdentificationResult, identified_links, identify_joint_parameters)
from flexrobot_ros.identification.link_identification import identify_link_parameters
from flexrobot_ros.identification.link_parameters import is_link_kind, parse_link_parameters
from flexrobot_ros.identification.matching import FREQUENCY_TOLERANCE, MAC_THRESHOLD, match_modes
from flexrobot_ros.identification.modal_data import MeasuredMode, ModalData, PoseModes
from flexrobot_ros.identification.parameters import KIND_FIELDS, parse_parameters
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.modal.held_modes import has_link_layer
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.text_table import MISSING, Column, table

#: A parameter whose standard deviation (for the stated data uncertainty) exceeds this fraction of its value is not
#: determined by the data and is kept at its nominal value (the identification's own "poorly determined" limit).
DETERMINED_FRACTION = 0.5

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


@dataclass(frozen=True)
class CalibrationOptions:
    """``parameters``: the unknowns (:func:`~flexrobot_ros.identification.parameters.parse_parameters` selection);
    ``starts``/``seed``: random starts of each identification; ``frequency_tolerance`` (relative) and
    ``mac_threshold``: mode pairing; ``determined_fraction``: see :data:`DETERMINED_FRACTION`; ``frequency_std``
    (relative) and ``damping_std`` (absolute fraction): data uncertainty for the standard deviations;
    ``shape_coordinates``: what the measured shapes hold ('motor', 'link' or 'full')."""

    parameters: str = "k,d_f"
    starts: int = 8
    seed: int = 0
    frequency_tolerance: float = FREQUENCY_TOLERANCE
    mac_threshold: float = MAC_THRESHOLD
    determined_fraction: float = DETERMINED_FRACTION
    frequency_std: float = 0.005
    damping_std: float = 0.005
    shape_coordinates: str = "motor"


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

    ``nominal``: the robot the calibration started from; ``robot``: the calibrated copy (``nominal`` itself when
    nothing was identified); ``data``: the modes measured at each pose reached (link poses as reported);
    ``identification``: the final identification (None when too few poses were measured); ``kept``: parameters the
    data do not determine, kept at their nominal values, with the reason; ``modes``: before/after per pose and mode;
    ``failure``: the pose where the sweep stopped (None when every pose was measured); ``wall_time_s``.
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

    @property
    def identified(self) -> dict[str, dict[str, float]]:
        """``{joint: {field: value}}`` of the identified (determined) parameters, for the YAML writer."""
        fields: dict[str, dict[str, float]] = {}
        for p in () if self.identification is None else self.identification.parameters:
            if not p.field:
                fields.setdefault(p.joint, {})[KIND_FIELDS[p.kind]] = p.value
        return fields

    @property
    def identified_links(self) -> dict[str, dict[str, float]]:
        """``{link: {field: value}}`` of the identified (determined) flexible-link parameters (EI [N m^2], EI.y,
        EI.z, damping_ratio), for the YAML writer."""
        return {} if self.identification is None else identified_links(self.identification.parameters)

    def to_dict(self) -> dict:
        """JSON-ready summary (SI units, damping ratios as fractions)."""
        ident = self.identification
        return {
            "robot": self.nominal.name, "poses_measured": len(self.data.poses),
            "failure": None if self.failure is None else self.failure.describe(),
            "parameters": [] if ident is None else [p.to_dict() for p in ident.parameters],
            "kept_nominal": dict(self.kept),
            "identifiability": None if ident is None else ident.identifiability.to_dict(),
            "modes": [m.to_dict() for m in self.modes], "wall_time_s": self.wall_time_s,
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        """Multi-line report: identified values, parameters kept at nominal, before/after per pose and mode."""
        lines = [f"Self-calibration of {self.nominal.name}: {len(self.data.poses)} poses measured"
                 + ("" if self.failure is None else f"; stopped at {self.failure.describe()}")]
        ident = self.identification
        if ident is not None:
            lines += table([Column("parameter", align="<"), Column("nominal"), Column("calibrated"), Column("change"),
                            Column("std"), Column("unit", align="<")],
                           [[p.name, f"{p.nominal:.6g}", f"{p.value:.8g}",
                             f"{100 * (p.value / p.nominal - 1):.2f}%" if p.nominal else MISSING, f"{p.std:.3g}",
                             p.unit] for p in ident.parameters], indent="  ")
        for name, reason in self.kept.items():
            lines.append(f"  {name}: kept at its nominal value ({reason})")
        lines.append(f"  {'pose':>4}{'mode':>5}{'f meas [Hz]':>13}{'f before [Hz]':>15}{'err [%]':>9}"
                     f"{'f after [Hz]':>14}{'err [%]':>9}{'zeta meas [%]':>15}{'before [%]':>12}{'after [%]':>11}")
        for m in self.modes:
            lines.append(f"  {m.pose + 1:>4}{m.mode + 1:>5}{m.measured_frequency_hz:>13.4f}"
                         f"{m.before_frequency_hz:>15.4f}{100 * m.before_error:>9.3f}{m.after_frequency_hz:>14.4f}"
                         f"{100 * m.after_error:>9.3f}{100 * m.measured_damping_ratio:>15.3f}"
                         f"{100 * m.before_damping_ratio:>12.3f}{100 * m.after_damping_ratio:>11.3f}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def measure_poses(poses: Sequence[np.ndarray], cell: CalibrationCell, progress: Progress | None = None,
                  ) -> tuple[list[PoseModes], PoseFailure | None]:
    """Step 1 of the module docstring: the modes at each pose, until the first failure."""
    say = progress or (lambda message: None)
    measured: list[PoseModes] = []
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
        except FlexrobotError as error:
            failure = PoseFailure(i, np.asarray(q, dtype=float), step, str(error))
            say(f"{where}: FAILED: {failure.describe()}")
            return measured, failure
        measured.append(PoseModes(reached, modes))
        say(f"{where}: {len(modes)} modes: " + ", ".join(f"{m.frequency_hz:.3f} Hz ({100 * m.damping_ratio:.2f} %)"
                                                       for m in modes))
    return measured, None


def determined(result: IdentificationResult, fraction: float) -> dict[str, str]:
    """Parameters of ``result`` the data do not determine (name -> reason): at a bound, or a standard deviation
    above ``fraction`` of the value."""
    undetermined = {}
    for p in result.parameters:
        if p.at_bound:
            undetermined[p.name] = f"at its bound [{p.lower:.6g}, {p.upper:.6g}] {p.unit}"
        elif p.std > fraction * abs(p.value):
            undetermined[p.name] = (f"not determined by the measured modes: standard deviation {p.std:.3g} {p.unit} "
                                    f"for {p.value:.3g}")
    return undetermined


def mode_reports(nominal: FlexibleRobot, calibrated: FlexibleRobot, data: ModalData,
                 options: CalibrationOptions) -> tuple[ModeReport, ...]:
    """Step 4: each measured mode beside the paired mode of the nominal and of the calibrated model at its pose."""
    rows = []
    for i, pose in enumerate(data.poses):
        pairs = [match_modes(modal_analysis(model, pose.q), pose, i, data.shape_coordinates,
                             options.frequency_tolerance, options.mac_threshold, data.source)
                 for model in (nominal, calibrated)]
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
                                    damping_std=options.damping_std)
    if links and all(links):
        return identify_link_parameters, settings
    if any(links):
        raise IdentificationError(f"calibration parameters {options.parameters!r}: joint parameters (k, d_f, d_fm) "
                                  "and link parameters (EI, zeta) are calibrated in separate runs")
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
    """The selection item that names one identified parameter again (``k:joint2``, ``EI:link1``)."""
    return f"{parameter.kind}:{parameter.joint}"


def calibrate(robot: FlexibleRobot, poses: Sequence[Sequence[float]], cell: CalibrationCell,
              options: CalibrationOptions | None = None, progress: Progress | None = None) -> CalibrationResult:
    """Calibrate ``robot`` (the nominal model) at the link ``poses`` [rad | m] with ``cell`` (module docstring).

    ``progress(message)`` is called at each step. Raises :class:`~flexrobot_ros.errors.IdentificationError` for
    poses of the wrong length before anything moves; failures while measuring are reported in the result.
    """
    started = time.perf_counter()
    options = options or CalibrationOptions()
    say = progress or (lambda message: None)
    targets = [robot.check_q(q, f"calibration pose {i + 1}") for i, q in enumerate(poses)]
    if len(targets) < 2:
        raise IdentificationError(f"calibration: {len(targets)} pose(s) given; the joint parameters are separated by "
                                  "how the modes change with the pose: give two or more")
    measured, failure = measure_poses(targets, cell, say)
    data = ModalData(tuple(measured), options.shape_coordinates, f"calibration of {robot.name}", robot.name)
    if len(measured) < 2:
        say(f"{len(measured)} pose(s) measured: nothing identified")
        return CalibrationResult(robot, robot, data, None, {}, mode_reports(robot, robot, data, options), failure,
                                 time.perf_counter() - started)
    identify, settings = identification_of(robot, options)
    say(f"identifying {options.parameters} from {data.n_modes} modes at {len(measured)} poses")
    try:
        result = identify(robot, data, options.parameters, **settings)
        kept = determined(result, options.determined_fraction)
        if kept:
            say("kept at nominal (not determined by these modes): " + ", ".join(kept))
            rest = list(dict.fromkeys(_selection(p) for p in result.parameters if p.name not in kept))
            result = identify(robot, data, rest, **settings) if rest else None
    except IdentificationError as error:
        if failure is None:
            raise
        say(f"identification from the poses measured before the failure: {error}")
        return CalibrationResult(robot, robot, data, None, {}, mode_reports(robot, robot, data, options), failure,
                                 time.perf_counter() - started, (str(error),))
    calibrated = robot if result is None else result.robot
    reports = mode_reports(robot, calibrated, data, options)
    return CalibrationResult(robot, calibrated, data, result, kept, reports, failure, time.perf_counter() - started,
                             () if result is None else result.warnings)


__all__ = ["CalibrationCell", "CalibrationOptions", "CalibrationResult", "ModeReport", "PoseFailure", "calibrate",
           "measure_poses", "determined", "check_parameters", "identification_of", "mode_reports",
           "DETERMINED_FRACTION"]
