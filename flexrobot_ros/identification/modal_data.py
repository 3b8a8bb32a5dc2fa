"""Measured modal data at several poses: the input of the stiffness/damping identification (seed 000 ch. 3).

File format (YAML; written by the OMA command and node, read by ``flexrobot identify``)::

    robot: scompi                      # optional, informational
    shape_coordinates: motor           # optional: what 'shape' entries hold (see below), default 'motor'
    poses:
      - q: [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]   # link-side pose [rad | m], pinocchio joint order
        modes:
          - frequency_hz: 12.3         # undamped natural frequency |lambda| / 2 pi [Hz]
            damping_ratio: 0.021       # -Re(lambda) / |lambda|, a FRACTION (0.021 = 2.1 %)
            shape: [1.0, 0.2, ...]     # optional mode shape: real numbers, or [re, im] pairs for complex shapes
        motor_friction_damping: [1132.3, ...]   # optional, n values [N m s/rad]: the motor Coulomb friction of the
                                        # record as equivalent viscous damping (a self-calibration writes it;
                                        # :mod:`.motor_friction`), added to the motor damping of the model there

``shape_coordinates``: ``motor`` (n entries, the motor angles q_m measured by the encoders), ``link`` (n entries,
link coordinates q) or ``full`` (every coordinate of the linearization, :func:`flexrobot_ros.modal.modal_coordinates`:
2n entries ``[q; q_m]`` for elastic joints on rigid links).
Keys other than these are ignored (OMA may add its own statistics).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import yaml

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.yaml_files import finite, read_yaml

if TYPE_CHECKING:  # reading modal data files needs no modal analysis (pinocchio, scipy)
    from flexrobot_ros.modal import ModalResult

SHAPE_COORDINATES = ("motor", "link", "full")


@dataclass(frozen=True)
class MeasuredMode:
    """One identified mode: ``frequency_hz`` [Hz] (undamped, |lambda| / 2 pi), ``damping_ratio`` (fraction) and an
    optional complex ``shape`` (see the module docstring for its coordinates)."""

    frequency_hz: float
    damping_ratio: float
    shape: np.ndarray | None = None

    @property
    def eigenvalue(self) -> complex:
        """lambda = -omega zeta + j omega sqrt(1 - zeta^2) [1/s] of seed 000 eq. 3.20."""
        omega = 2.0 * math.pi * self.frequency_hz
        return complex(-omega * self.damping_ratio, omega * math.sqrt(1.0 - self.damping_ratio**2))


@dataclass(frozen=True)
class PoseModes:
    """The modes measured at one link-side pose ``q`` (n,) [rad | m]; ``motor_friction_damping`` (n,) [N m s/rad]
    the equivalent viscous damping of the motor Coulomb friction over the record the modes came from
    (:mod:`.motor_friction`), None when it is not modelled (the motors slide freely, or the data do not say)."""

    q: np.ndarray
    modes: tuple[MeasuredMode, ...]
    motor_friction_damping: np.ndarray | None = None


@dataclass(frozen=True)
class ModalData:
    """Modal data at several poses; ``source`` names the file (or generator) for messages and reports."""

    poses: tuple[PoseModes, ...]
    shape_coordinates: str = "motor"
    source: str = "<memory>"
    robot: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_modes(self) -> int:
        """Total number of measured modes (N of seed 000 eq. 3.25)."""
        return sum(len(p.modes) for p in self.poses)

    def to_document(self) -> dict:
        """The YAML document (plain Python types) of this data set."""
        document: dict[str, Any] = {}
        if self.robot:
            document["robot"] = self.robot
        document["shape_coordinates"] = self.shape_coordinates
        document["poses"] = [_pose_document(pose) for pose in self.poses]
        return document


def _pose_document(pose: PoseModes) -> dict:
    entry: dict[str, Any] = {"q": [float(v) for v in pose.q], "modes": [_mode_document(mode) for mode in pose.modes]}
    if pose.motor_friction_damping is not None:
        entry["motor_friction_damping"] = [float(v) for v in pose.motor_friction_damping]
    return entry


def _mode_document(mode: MeasuredMode) -> dict:
    entry: dict[str, Any] = {"frequency_hz": float(mode.frequency_hz), "damping_ratio": float(mode.damping_ratio)}
    if mode.shape is not None:
        shape = np.asarray(mode.shape)
        if np.all(shape.imag == 0):
            entry["shape"] = [float(v) for v in shape.real]
        else:
            entry["shape"] = [[float(v.real), float(v.imag)] for v in shape]
    return entry


def _number(value: Any, where: str) -> float:
    return finite(value, where, IdentificationError)


def _shape(value: Any, where: str) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or not value:
        raise IdentificationError(f"{where}: expected a non-empty list of numbers or [re, im] pairs, got {value!r}")
    entries = []
    for k, entry in enumerate(value):
        if isinstance(entry, (list, tuple)):
            if len(entry) != 2:
                raise IdentificationError(f"{where}[{k}]: expected a number or an [re, im] pair, got {entry!r}")
            entries.append(complex(_number(entry[0], f"{where}[{k}][0]"), _number(entry[1], f"{where}[{k}][1]")))
        else:
            entries.append(complex(_number(entry, f"{where}[{k}]")))
    shape = np.array(entries, dtype=complex)
    if not np.any(shape):
        raise IdentificationError(f"{where}: the mode shape is all zeros")
    return shape


def measured_mode(frequency_hz: Any, damping_ratio: Any, shape: Any = None, where: str = "mode") -> MeasuredMode:
    """A validated :class:`MeasuredMode`: frequency finite and > 0 [Hz], damping ratio a finite fraction in [0, 1)."""
    frequency = _number(frequency_hz, f"{where}.frequency_hz")
    if frequency <= 0.0:
        raise IdentificationError(f"{where}.frequency_hz: expected a frequency > 0 Hz, got {frequency!r}")
    damping = _number(damping_ratio, f"{where}.damping_ratio")
    if not 0.0 <= damping < 1.0:
        hint = " (damping ratios are fractions: 0.05 means 5 %)" if damping >= 1.0 else ""
        raise IdentificationError(f"{where}.damping_ratio: expected a fraction in [0, 1) for an oscillating, "
                                  f"stable mode, got {damping!r}{hint}")
    return MeasuredMode(frequency, damping, None if shape is None else _shape(shape, f"{where}.shape"))


def _friction(value: Any, n: int, where: str) -> np.ndarray | None:
    """The optional ``motor_friction_damping`` of a pose: n finite values >= 0 [N m s/rad], or None."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise IdentificationError(f"{where}.motor_friction_damping: expected {n} values [N m s/rad] (one per joint, "
                                  f"as q), got {value!r}")
    damping = np.array([_number(v, f"{where}.motor_friction_damping[{j}]") for j, v in enumerate(value)])
    if np.any(damping < 0.0):
        j = int(np.argmax(damping < 0.0))
        raise IdentificationError(f"{where}.motor_friction_damping[{j}]: expected a damping >= 0 N m s/rad, got "
                                  f"{damping[j]!r}")
    return damping


def parse_modal_data(document: Any, source: str = "<memory>") -> ModalData:
    """Validate a modal-data document (the module docstring's format); errors name ``source``, pose and mode."""
    if not isinstance(document, Mapping):
        raise IdentificationError(f"{source}: expected a mapping with a 'poses' list, got {type(document).__name__}")
    coordinates = document.get("shape_coordinates", "motor")
    if coordinates not in SHAPE_COORDINATES:
        raise IdentificationError(f"{source}: shape_coordinates: expected one of {SHAPE_COORDINATES}, "
                                  f"got {coordinates!r}")
    robot = document.get("robot")
    if robot is not None and not isinstance(robot, str):
        raise IdentificationError(f"{source}: robot: expected a name, got {robot!r}")
    raw_poses = document.get("poses")
    if not isinstance(raw_poses, list) or not raw_poses:
        raise IdentificationError(f"{source}: poses: expected a non-empty list of {{q: [...], modes: [...]}}")
    poses = []
    for i, raw in enumerate(raw_poses):
        where = f"{source}: poses[{i}]"
        if not isinstance(raw, Mapping) or "q" not in raw or "modes" not in raw:
            raise IdentificationError(f"{where}: expected a mapping with 'q' (joint positions) and 'modes'")
        if not isinstance(raw["q"], (list, tuple)) or not raw["q"]:
            raise IdentificationError(f"{where}.q: expected a list of joint positions, got {raw['q']!r}")
        q = np.array([_number(v, f"{where}.q[{j}]") for j, v in enumerate(raw["q"])])
        if not isinstance(raw["modes"], list) or not raw["modes"]:
            raise IdentificationError(f"{where}.modes: expected a non-empty list of modes")
        modes = []
        for k, mode in enumerate(raw["modes"]):
            at = f"{where}.modes[{k}]"
            if not isinstance(mode, Mapping):
                raise IdentificationError(f"{at}: expected a mapping with frequency_hz and damping_ratio")
            for key in ("frequency_hz", "damping_ratio"):
                if key not in mode:
                    raise IdentificationError(f"{at}: missing '{key}'")
            modes.append(measured_mode(mode["frequency_hz"], mode["damping_ratio"], mode.get("shape"), at))
        poses.append(PoseModes(q, tuple(modes), _friction(raw.get("motor_friction_damping"), q.size, where)))
    extra = {k: v for k, v in document.items() if k not in ("poses", "shape_coordinates", "robot")}
    return ModalData(tuple(poses), coordinates, source, robot, extra)


def read_modal_data(path: str | Path) -> ModalData:
    """Read and validate a modal-data YAML file (IdentificationError naming the file, pose, mode and field)."""
    return parse_modal_data(read_yaml(path, IdentificationError, "modal data"), str(path))


def write_modal_data(path: str | Path, data: ModalData) -> Path:
    """Write ``data`` in the module docstring's format (full float precision)."""
    path = Path(path)
    try:
        path.write_text(yaml.safe_dump(data.to_document(), sort_keys=False, default_flow_style=None))
    except OSError as error:
        raise IdentificationError(f"{path}: cannot write modal data: {error}") from error
    return path


def modal_data_from_modes(poses: Sequence[Any], modes: Iterable[Iterable[tuple[float, float]]],
                          source: str = "<memory>") -> ModalData:
    """Modal data from per-pose lists of ``(frequency_hz, damping_ratio)`` pairs (validated like a file)."""
    entries = []
    for i, (q, pose_modes) in enumerate(zip(poses, modes)):
        entries.append(PoseModes(np.asarray(q, dtype=float),
                                 tuple(measured_mode(f, z, None, f"{source}: poses[{i}].modes[{k}]")
                                       for k, (f, z) in enumerate(pose_modes))))
    return ModalData(tuple(entries), "motor", source)


def model_shape(result: ModalResult, coordinates: str) -> np.ndarray:
    """The model's mode shapes (modes, entries) in the measured coordinates ('motor', 'link' or 'full').

    Layouts (:func:`flexrobot_ros.modal.modal_coordinates`): elastic joints on rigid links ``[q (n), q_m (n)]``;
    the composed model ``[q (n), q_e (ne), eta (m), q_m (e elastic joints)]``, whose 'motor' rows are the motors
    when every joint is elastic and the joints themselves when every joint is rigid (the encoder of a rigid joint
    reads the joint); a mixture is refused (the result does not say which joints are rigid). 'full' is every row."""
    shapes = result.mode_shapes.T
    linearized = result.linearized
    n, motors = len(linearized.q), len(linearized.q_m)
    if coordinates not in SHAPE_COORDINATES:
        raise IdentificationError(f"shape coordinates: expected one of {SHAPE_COORDINATES}, got {coordinates!r}")
    if coordinates == "full":
        return shapes
    if coordinates == "link":
        return shapes[:, :n]
    if motors == 0:
        return shapes[:, :n]
    if motors != n:
        raise IdentificationError(f"motor-side mode shapes of a robot with {motors} elastic and {n - motors} rigid "
                                  "joints are not available; measure link-side shapes (shape_coordinates: link)")
    return shapes[:, shapes.shape[1] - n:]


__all__ = ["MeasuredMode", "PoseModes", "ModalData", "SHAPE_COORDINATES", "measured_mode", "parse_modal_data",
           "read_modal_data", "write_modal_data", "modal_data_from_modes", "model_shape"]


def modal_data_from_model(robot: Any, poses: Sequence[Any], mode_indices: Sequence[int] | None = None,
                          damping_shift: float = 0.0, shapes: str | None = None,
                          source: str = "model") -> ModalData:
    """Full-precision modal data computed by :func:`flexrobot_ros.modal.modal_analysis` (any robot) at ``poses``.

    ``mode_indices`` selects modes by their index in frequency order (default: all oscillating modes);
    ``damping_shift`` is added to every damping ratio (seed 000 section 3.5.2, cases 2-7); ``shapes`` is None or
    one of :data:`SHAPE_COORDINATES` to include the model's mode shapes in those coordinates (the rows the matching
    compares them with, :func:`model_shape`).
    """
    from flexrobot_ros.modal import modal_analysis

    entries = []
    for i, q in enumerate(poses):
        result = modal_analysis(robot, q)
        indices = np.flatnonzero(~result.overdamped) if mode_indices is None else mode_indices
        rows = None if shapes is None else model_shape(result, shapes)
        modes = []
        for k in indices:
            if k >= result.n_modes or result.overdamped[k]:
                raise IdentificationError(f"{source}: pose {i}: mode index {k} is not an oscillating mode of "
                                          f"{robot.name} (it has {result.n_modes} modes)")
            shape = None if rows is None else rows[k]
            modes.append(measured_mode(result.frequencies_hz[k], result.damping_ratios[k] + damping_shift, None,
                                       f"{source}: pose {i} mode {k}"))
            if shape is not None:
                modes[-1] = MeasuredMode(modes[-1].frequency_hz, modes[-1].damping_ratio, np.array(shape))
        entries.append(PoseModes(robot.check_q(q), tuple(modes)))
    return ModalData(tuple(entries), shapes or "motor", source, robot.name)


__all__ += ["modal_data_from_model"]
