"""The experiment file of ``flexrobot identify-rigid --experiment FILE``: which records, how their channels map onto
the robot, how the efforts convert to torques, and what the fit uses. Every field is optional; the command line
wins over the file (``--cutoff``, ``--positions``, ``--effort-scale`` ...). Example (the PAL TIAGo record of FIGAROH's
examples, fit on its first half, predicting the second)::

    records:                          # the records fitted, each one recording:
      - files: [tiago_position.csv,   #   one or more CSV/NPZ files (or one rosbag2 bag) whose time columns agree
                tiago_effort.csv]     #   sample for sample, columns joined; paths relative to this file
        rows: [921, 3855]             #   optional: first and last sample used (0 = the first data row)
      - other.csv                     #   a record of one file, all of its samples
    validate:                         # records predicted by the identified model (same form); held-out error
      - files: [tiago_position.csv, tiago_effort.csv]
        rows: [3856, 6790]
    channels:                         # the channel of each joint: a pattern with {joint}, a glob whose last dotted
      positions: "- {joint}_position" #   part is the joint ('q_m.*'), or a mapping joint -> channel name
      torques: "- {joint}_effort"     #   (defaults 'q_m.*' and 'tau_m.*')
      link_positions: "q.*"           #   optional: link encoders of elastic joints
    effort:                           # torque [N m | N] = scale x recorded effort + offset (defaults 1 and 0)
      arm_1_joint: {scale: 13.6}      #   gear ratio 100 x motor constant 0.136 N m/A
      arm_3_joint: -8.7               #   a number alone is the scale
    fit_joints: [arm_1_joint, arm_2_joint]   # the joints whose torques are fitted (default: all)
    min_velocity: 0.02                # [rad/s | m/s]: a joint's rows where its motor is slower are left out of the
                                      #   fit (Coulomb friction is sgn(qd)); one number, or a mapping joint -> speed
    torque_offset: true               # identify a constant torque offset per joint (default false)
    cutoff_hz: 5.0                    # low-pass cutoff [Hz] (default 5)

Errors (:class:`IdentificationError`) name the file and the field and say what was expected; joint names are
checked against the robot.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.rigid_record import ChannelSpec
from flexrobot_ros.yaml_files import finite, read_yaml

TOP_KEYS = frozenset({"records", "validate", "channels", "effort", "fit_joints", "min_velocity", "torque_offset",
                      "cutoff_hz"})
RECORD_KEYS = frozenset({"files", "rows"})
CHANNEL_KEYS = frozenset({"positions", "torques", "link_positions"})
EFFORT_KEYS = frozenset({"scale", "offset"})


@dataclass(frozen=True)
class RecordSpec:
    """One record of an experiment: its ``files`` (one recording) and the samples ``rows`` (first, last) or None."""

    files: tuple[Path, ...]
    rows: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        text = " + ".join(str(path) for path in self.files)
        return text if self.rows is None else f"{text} rows {self.rows[0]}-{self.rows[1]}"


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file (module docstring); None or empty: not given."""

    source: str
    records: tuple[RecordSpec, ...] = ()
    validate: tuple[RecordSpec, ...] = ()
    channels: Mapping[str, ChannelSpec] = field(default_factory=dict)
    effort_scale: Mapping[str, float] = field(default_factory=dict)
    effort_offset: Mapping[str, float] = field(default_factory=dict)
    fit_joints: tuple[str, ...] | None = None
    min_velocity: float | Mapping[str, float] | None = None
    torque_offset: bool | None = None
    cutoff_hz: float | None = None


def read_experiment(path: str | Path, joint_names: tuple[str, ...]) -> Experiment:
    """The experiment file ``path`` for a robot with joints ``joint_names``; IdentificationError on any problem."""
    path = Path(path)
    document = read_yaml(path, IdentificationError, "the experiment file")
    return parse_experiment(document, str(path), path.parent, joint_names)


def parse_experiment(document: Any, source: str, folder: Path, joint_names: tuple[str, ...]) -> Experiment:
    """Validate an experiment document; relative file paths are taken from ``folder``."""
    top = _mapping(document, TOP_KEYS, source)
    channels = {}
    for key, value in _mapping(top.get("channels") or {}, CHANNEL_KEYS, f"{source}: channels").items():
        channels[key] = _channel(value, joint_names, f"{source}: channels.{key}")
    scale, offset = {}, {}
    for joint, value in _mapping(top.get("effort") or {}, frozenset(joint_names), f"{source}: effort",
                                 "joints of the robot").items():
        where = f"{source}: effort.{joint}"
        if isinstance(value, Mapping):
            value = _mapping(value, EFFORT_KEYS, where)
            if "scale" in value:
                scale[joint] = finite(value["scale"], f"{where}.scale", IdentificationError)
            if "offset" in value:
                offset[joint] = finite(value["offset"], f"{where}.offset [N m | N]", IdentificationError)
        else:
            scale[joint] = finite(value, f"{where} (the scale)", IdentificationError)
        if scale.get(joint) == 0.0:
            raise IdentificationError(f"{where}.scale: 0; expected the factor from the recorded effort to N m (N)")
    fit = top.get("fit_joints")
    if fit is not None:
        if not isinstance(fit, list) or not fit or not all(isinstance(j, str) for j in fit):
            raise IdentificationError(f"{source}: fit_joints: expected a list of joint names, got {fit!r}")
        _known(fit, joint_names, f"{source}: fit_joints")
    speed = top.get("min_velocity")
    if isinstance(speed, Mapping):
        speed = {joint: _speed(value, f"{source}: min_velocity.{joint}") for joint, value in
                 _mapping(speed, frozenset(joint_names), f"{source}: min_velocity", "joints of the robot").items()}
    elif speed is not None:
        speed = _speed(speed, f"{source}: min_velocity")
    offsets = top.get("torque_offset")
    if offsets is not None and not isinstance(offsets, bool):
        raise IdentificationError(f"{source}: torque_offset: expected true or false, got {offsets!r}")
    cutoff = top.get("cutoff_hz")
    if cutoff is not None:
        cutoff = finite(cutoff, f"{source}: cutoff_hz", IdentificationError)
        if cutoff <= 0.0:
            raise IdentificationError(f"{source}: cutoff_hz: {cutoff:g}; expected a cutoff > 0 [Hz]")
    return Experiment(source=source, records=_records(top.get("records"), folder, f"{source}: records"),
                      validate=_records(top.get("validate"), folder, f"{source}: validate"), channels=channels,
                      effort_scale=scale, effort_offset=offset, fit_joints=None if fit is None else tuple(fit),
                      min_velocity=speed, torque_offset=offsets, cutoff_hz=cutoff)


def _mapping(value: Any, allowed: frozenset[str], where: str, what: str = "keys") -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise IdentificationError(f"{where}: expected a mapping, got {value!r}")
    unknown = sorted(str(key) for key in value if key not in allowed)
    if unknown:
        raise IdentificationError(f"{where}: unknown key(s) {unknown}; expected {what} {sorted(allowed)}")
    return value


def _known(names: list[str], joint_names: tuple[str, ...], where: str) -> None:
    unknown = [name for name in names if name not in joint_names]
    if unknown:
        raise IdentificationError(f"{where}: {unknown} are not joints of the robot ({list(joint_names)})")


def _channel(value: Any, joint_names: tuple[str, ...], where: str) -> ChannelSpec:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        _known([str(key) for key in value], joint_names, where)
        return dict(value)
    raise IdentificationError(f"{where}: expected a pattern with {{joint}}, a glob or a mapping joint -> channel "
                              f"name, got {value!r}")


def _speed(value: Any, where: str) -> float:
    speed = finite(value, f"{where} [rad/s | m/s]", IdentificationError)
    if speed < 0.0:
        raise IdentificationError(f"{where}: {speed:g}; expected a speed >= 0 [rad/s | m/s]")
    return speed


def _records(value: Any, folder: Path, where: str) -> tuple[RecordSpec, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise IdentificationError(f"{where}: expected a list of records (a file, or {{files, rows}}), got {value!r}")
    out = []
    for k, entry in enumerate(value):
        here = f"{where}[{k}]"
        if isinstance(entry, str):
            entry = {"files": [entry]}
        entry = _mapping(entry, RECORD_KEYS, here)
        files = entry.get("files")
        if isinstance(files, str):
            files = [files]
        if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
            raise IdentificationError(f"{here}.files: expected a list of file names, got {files!r}")
        rows = entry.get("rows")
        if rows is not None:
            if (not isinstance(rows, list) or len(rows) != 2 or not all(isinstance(r, int) and not isinstance(r, bool)
                                                                        for r in rows)
                    or not 0 <= rows[0] < rows[1]):
                raise IdentificationError(f"{here}.rows: expected [first, last] sample numbers, 0 <= first < last, "
                                          f"got {rows!r}")
            rows = (rows[0], rows[1])
        out.append(RecordSpec(files=tuple(_path(folder, f) for f in files), rows=rows))
    return tuple(out)


def _path(folder: Path, name: str) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else folder / path


__all__ = ["Experiment", "RecordSpec", "read_experiment", "parse_experiment"]
