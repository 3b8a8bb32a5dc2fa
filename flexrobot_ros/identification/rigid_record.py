"""Records for the rigid-body identification: channels mapped onto the robot's joints, efforts scaled, bad samples
named, a non-uniform clock resampled onto a uniform grid.

A record is one recording: one CSV/NPZ time series (:mod:`flexrobot_ros.timeseries`) or rosbag2 bag (read by
:func:`flexrobot_ros.oma.signals.read_signals`), or several CSV/NPZ files of the same recording whose time columns
agree sample for sample (a robot logger's position and effort exports: their columns are joined side by side).
``rows = (first, last)`` keeps the samples first..last (both included; 0 is the first data row after the header).

Channels. ``positions`` (motor positions after the gear, or the joint positions of rigid joints), ``torques``
(motor torques, or the efforts in drive units with ``effort_scale``) and ``link_positions`` (link encoders of
elastic joints) each name one channel per joint of the robot, by

* a pattern with ``{joint}``: ``"- {joint}_position"`` is the channel ``- arm_1_joint_position`` of joint
  ``arm_1_joint`` (a ROS 2 logger's export);
* a glob whose last dotted part is the joint name: ``q_m.*`` (``q_m.joint2``), ``motor_states.effort.*``;
* a mapping joint -> channel name.

Every joint needs its channel (an IdentificationError names the joint and the channel expected); a channel that a
pattern or glob matches for a name that is not a joint of the robot (``q_m.joint4`` of a 3-joint robot, a locked
joint) is ignored with a :class:`RecordWarning` naming it.

Checks (IdentificationError, one line): the times finite and strictly increasing (a clock that goes back names the
sample and both times), no gap (an interval above :data:`GAP_FACTOR` median intervals), every value used finite
(the column, the sample and its time are named). Samples are numbered as the file's data rows, from 0.

Efforts: torque [N m | N] = ``effort_scale`` x recorded value + ``effort_offset``, per joint (default 1 and 0); e.g.
a drive's current times the gear ratio times the motor's torque constant.

Clock. The low-pass and the central differences of :mod:`.rigid_body` need a uniform grid. A record whose sampling
intervals differ by more than :data:`UNIFORM_TOLERANCE` (a logger's clock: the TIAGo record's steps are 7.7-12.3 ms)
is resampled onto ``t_0 + k h`` over its span, h the median interval, by a cubic interpolating spline through the
recorded samples (``scipy.interpolate.CubicSpline``, not-a-knot), the positions and the torques alike. A smooth
signal sampled 10-20 times faster than its motion is reproduced to O(h^4 q'''') by it, where linear interpolation
leaves O(h^2 q'') kinks at the recorded samples that the second derivative (the accelerations) amplifies; the
low-pass that follows treats positions and torques alike. No sample is invented across a gap: gaps are refused.
"""
from __future__ import annotations

import fnmatch
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np

from flexrobot_ros.errors import IdentificationError, SignalError
from flexrobot_ros.identification.rigid_body import RigidRecord

#: A sampling interval longer than this many median intervals is a gap (refused): one lost sample of a jittery
#: clock (about 2 intervals) is bridged by the spline, two are not.
GAP_FACTOR = 2.5
#: Largest relative spread (max - min) / min of the sampling intervals of a record taken as uniform.
UNIFORM_TOLERANCE = 0.01
#: Default channels of the package's own records (simulator and excitation output).
DEFAULT_POSITIONS, DEFAULT_TORQUES = "q_m.*", "tau_m.*"

#: A channel specification (module docstring): a pattern with {joint}, a glob, or joint -> channel name.
ChannelSpec = Union[str, Mapping[str, str]]


class RecordWarning(UserWarning):
    """A record is usable but something in it is ignored (a channel of no joint of the robot)."""


@dataclass(frozen=True)
class Channels:
    """Which channels hold what (module docstring): ``positions``, ``torques``, optional ``link_positions``."""

    positions: ChannelSpec = DEFAULT_POSITIONS
    torques: ChannelSpec = DEFAULT_TORQUES
    link_positions: ChannelSpec | None = None


@dataclass(frozen=True)
class RecordedSamples:
    """One record as recorded, mapped onto the robot's joints: times ``t`` (samples,) [s], strictly increasing but
    not necessarily uniform; positions ``q`` [rad | m], torques ``tau`` [N m | N] (scaled efforts) and optional
    link positions ``q_link``, each (samples, n) in the robot's joint order; ``source`` names the file(s);
    ``first_row`` is the file row of sample 0 (``rows``)."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    source: str
    q_link: np.ndarray | None = None
    first_row: int = 0

    @property
    def intervals(self) -> np.ndarray:
        """Sampling intervals (samples - 1,) [s]."""
        return np.diff(self.t)

    @property
    def is_uniform(self) -> bool:
        """Whether the intervals differ by at most :data:`UNIFORM_TOLERANCE` (then nothing is resampled)."""
        steps = self.intervals
        return bool(steps.max() <= (1.0 + UNIFORM_TOLERANCE) * steps.min())

    @property
    def grid_interval(self) -> float:
        """The uniform grid's interval h [s]: the median recorded interval."""
        return float(np.median(self.intervals))

    def clock(self) -> str:
        """One line on the clock and what :meth:`uniform` does with it (for the command's progress)."""
        steps = 1e3 * self.intervals
        span = f"{len(self.t)} samples over {self.t[-1] - self.t[0]:.4g} s"
        if self.is_uniform:
            return f"{self.source}: {span} at {1.0 / self.grid_interval:.6g} Hz (uniform)"
        return (f"{self.source}: {span}, intervals {steps.min():.4g}-{steps.max():.4g} ms: resampled onto a uniform "
                f"{1.0 / self.grid_interval:.6g} Hz grid (cubic spline through the recorded samples)")

    def uniform(self) -> RigidRecord:
        """The record on a uniform grid (module docstring, "Clock"): itself when its clock is uniform."""
        if self.is_uniform:
            return RigidRecord(self.t, self.q, self.tau, self.source, q_link=self.q_link)
        import scipy.interpolate

        h = self.grid_interval
        grid = self.t[0] + h * np.arange(int(np.floor((self.t[-1] - self.t[0]) / h * (1.0 + 1e-12))) + 1)
        columns = [self.q, self.tau] + ([] if self.q_link is None else [self.q_link])
        spline = scipy.interpolate.CubicSpline(self.t, np.hstack(columns), axis=0)(grid)
        n = self.q.shape[1]
        return RigidRecord(grid, spline[:, :n], spline[:, n:2 * n], f"{self.source} (resampled)",
                           q_link=None if self.q_link is None else spline[:, 2 * n:])


def read_record(paths: str | Path | Sequence[str | Path], robot: Any, channels: Channels = Channels(),
                effort_scale: Mapping[str, float] | None = None, effort_offset: Mapping[str, float] | None = None,
                rows: tuple[int, int] | None = None, cache: dict[Path, Any] | None = None) -> RecordedSamples:
    """The record of ``paths`` (one file or bag, or several files of one recording) for ``robot``'s joints (module
    docstring): channels mapped, ``rows`` kept, checked, efforts scaled (``effort_scale``/``effort_offset``: joint ->
    value). ``cache``: a dict the caller keeps, so that records taken from the same files (a fit window and a
    held-out window) read each file once. Raises IdentificationError naming the file, column, joint or sample;
    warns (:class:`RecordWarning`) about channels of no joint."""
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not paths:
        raise IdentificationError("a record needs at least one file")
    files = _read_files(paths, {} if cache is None else cache)
    source = " + ".join(str(path) for path in paths)
    t_all = files[0][1].t
    first, last = _rows(rows, len(t_all), source)
    t = t_all[first:last + 1]
    _check_clock(t, str(paths[0]), first)
    selected = {}
    for what, spec in (("positions", channels.positions), ("torques", channels.torques),
                       ("link positions", channels.link_positions)):
        if spec is None:
            continue
        columns = _joint_columns(files, spec, robot, what, source)
        values = []
        for joint, (k, c) in zip(robot.joint_names, columns):
            path, signals = files[k]
            column = signals.data[first:last + 1, c]
            _check_finite(column, t, str(path), signals.channels[c], first)
            values.append(column)
        selected[what] = np.column_stack(values)
    scale = _per_joint(effort_scale, robot, "effort_scale", 1.0)
    offset = _per_joint(effort_offset, robot, "effort_offset", 0.0)
    if np.any(scale == 0.0):
        zero = [j for j, s in zip(robot.joint_names, scale) if s == 0.0]
        raise IdentificationError(f"effort_scale: zero for joint(s) {zero}; expected the factor from the recorded "
                                  "effort to N m (N for prismatic joints)")
    return RecordedSamples(t=t, q=selected["positions"], tau=scale * selected["torques"] + offset, source=source,
                           q_link=selected.get("link positions"), first_row=first)


def _read_files(paths: list[Path], cache: dict[Path, Any]) -> list[tuple[Path, Any]]:
    """(path, Signals) of every file (read once per ``cache``); the second and later files must have the first
    one's times, and no channel may appear in two files."""
    from flexrobot_ros.oma.signals import read_signals

    files = []
    for path in paths:
        if path not in cache:
            try:
                cache[path] = read_signals(path)
            except SignalError as error:
                raise IdentificationError(str(error)) from None
        files.append((path, cache[path]))
    reference_path, reference = files[0]
    owner = {name: reference_path for name in reference.channels}
    for path, signals in files[1:]:
        if len(signals.t) != len(reference.t):
            raise IdentificationError(f"{path}: {len(signals.t)} samples, {reference_path} has {len(reference.t)}; "
                                      "the files of one record share one clock")
        differ = np.flatnonzero(~((signals.t == reference.t) | (np.isnan(signals.t) & np.isnan(reference.t))))
        if differ.size:
            k = int(differ[0])
            raise IdentificationError(f"{path}: t of sample {k} is {signals.t[k]:.9g} s, {reference_path} has "
                                      f"{reference.t[k]:.9g} s; the files of one record share one clock")
        for name in signals.channels:
            if name in owner:
                raise IdentificationError(f"{path}: channel {name!r} is also in {owner[name]}; the files of one record "
                                          "hold different channels")
            owner[name] = path
    return files


def _rows(rows: tuple[int, int] | None, samples: int, source: str) -> tuple[int, int]:
    if rows is None:
        return 0, samples - 1
    first, last = rows
    if not (0 <= first < last < samples):
        raise IdentificationError(f"{source}: rows {first}-{last}: expected 0 <= first < last <= {samples - 1} (its "
                                  f"{samples} samples are the data rows 0-{samples - 1})")
    return int(first), int(last)


def _check_clock(t: np.ndarray, path: str, first: int) -> None:
    """Times finite, strictly increasing, without gaps; at least 11 samples."""
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        k = int(bad[0])
        raise IdentificationError(f"{path}: column 't', sample {first + k}: {t[k]}; expected a finite time [s]")
    if len(t) < 11:
        raise IdentificationError(f"{path}: {len(t)} samples; the identification needs at least 11")
    steps = np.diff(t)
    back = np.flatnonzero(steps <= 0.0)
    if back.size:
        k = int(back[0])
        raise IdentificationError(f"{path}: column 't', sample {first + k + 1}: {t[k + 1]:.9g} s after "
                                  f"{t[k]:.9g} s at sample {first + k}; expected strictly increasing times (the "
                                  "clock went back or repeated a time)")
    median = float(np.median(steps))
    gaps = np.flatnonzero(steps > GAP_FACTOR * median)
    if gaps.size:
        k = int(gaps[0])
        raise IdentificationError(f"{path}: column 't': a gap of {steps[k]:.6g} s between samples {first + k} and "
                                  f"{first + k + 1} (t = {t[k]:.9g} s), {steps[k] / median:.3g} times the median "
                                  f"interval {median:.6g} s; expected at most {GAP_FACTOR:g} (use rows to take the "
                                  "samples before or after it)")


def _check_finite(column: np.ndarray, t: np.ndarray, path: str, name: str, first: int) -> None:
    bad = np.flatnonzero(~np.isfinite(column))
    if bad.size:
        k = int(bad[0])
        raise IdentificationError(f"{path}: column {name!r}, sample {first + k} (t = {t[k]:.6g} s): {column[k]}; "
                                  f"expected a finite number ({bad.size} non-finite value(s) in the column)")


def _joint_columns(files: list[tuple[Path, Any]], spec: ChannelSpec, robot: Any, what: str,
                   source: str) -> list[tuple[int, int]]:
    """(file index, column index) of each joint's channel of ``what`` (module docstring, "Channels")."""
    found: dict[str, tuple[int, int, str]] = {}
    if isinstance(spec, Mapping):
        unknown = sorted(set(spec) - set(robot.joint_names))
        if unknown:
            raise IdentificationError(f"{what}: joint(s) {unknown} are not joints of robot {robot.name} "
                                      f"({list(robot.joint_names)})")
        for joint, name in spec.items():
            for k, (_, signals) in enumerate(files):
                if name in signals.channels:
                    found[joint] = (k, signals.channels.index(name), name)
        expected = {joint: repr(spec[joint]) if joint in spec else "a channel (none given)"
                    for joint in robot.joint_names}
    else:
        joint_of = _joint_reader(spec, what)
        for k, (path, signals) in enumerate(files):
            for c, name in enumerate(signals.channels):
                joint = joint_of(name)
                if joint is None:
                    continue
                if joint not in robot.joint_names:
                    locked = robot.locked_joints.get(joint)
                    why = (f"{joint} is locked by the flexibility YAML at {locked:g}" if locked is not None else
                           f"{joint} is not a joint of robot {robot.name} ({list(robot.joint_names)})")
                    warnings.warn(f"{path}: channel {name!r} matches the {what} {spec!r} but {why}; ignored",
                                  RecordWarning, stacklevel=4)
                    continue
                if joint in found:
                    raise IdentificationError(f"{path}: channels {found[joint][2]!r} and {name!r} both match the "
                                              f"{what} {spec!r} for joint {joint}; give a narrower pattern")
                found[joint] = (k, c, name)
        expected = {joint: (repr(spec.replace("{joint}", joint)) if "{joint}" in spec else
                            f"a channel matching {spec!r} whose last dotted part is {joint}")
                    for joint in robot.joint_names}
    missing = [joint for joint in robot.joint_names if joint not in found]
    if missing:
        names = [name for _, signals in files for name in signals.channels]
        raise IdentificationError(f"{source}: {what} {spec!r}: no channel for joint(s) {missing} (expected "
                                  f"{', '.join(expected[j] for j in missing)}); channels: {', '.join(names)}")
    return [found[joint][:2] for joint in robot.joint_names]


def _joint_reader(spec: str, what: str) -> Callable[[str], str | None]:
    """The joint name a channel name gives under ``spec`` (a ``{joint}`` pattern or a glob), else None."""
    if "{joint}" in spec:
        parts = spec.split("{joint}")
        if len(parts) != 2:
            raise IdentificationError(f"{what} {spec!r}: expected one {{joint}} in the pattern")
        regex = re.compile(f"^{re.escape(parts[0])}(.+){re.escape(parts[1])}$")

        def from_pattern(name: str) -> str | None:
            match = regex.match(name)
            return match.group(1) if match else None

        return from_pattern

    def from_glob(name: str) -> str | None:
        return name.rsplit(".", 1)[-1] if fnmatch.fnmatchcase(name, spec) else None

    return from_glob


def _per_joint(values: Mapping[str, float] | None, robot: Any, what: str, default: float) -> np.ndarray:
    out = np.full(robot.n, default)
    for joint, value in (values or {}).items():
        if joint not in robot.joint_names:
            raise IdentificationError(f"{what}: {joint!r} is not a joint of robot {robot.name} "
                                      f"({list(robot.joint_names)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise IdentificationError(f"{what}: {joint}: {value!r}; expected a finite number")
        out[robot.joint_names.index(joint)] = float(value)
    return out


__all__ = ["Channels", "RecordedSamples", "RecordWarning", "read_record", "GAP_FACTOR", "UNIFORM_TOLERANCE",
           "DEFAULT_POSITIONS", "DEFAULT_TORQUES"]
