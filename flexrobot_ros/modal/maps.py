"""Modal maps: closed-loop modes over many poses or gains at once (seed 000 section 2.4.2, Fig. 2.3-2.5, App. II).

A map evaluates the modes of any robot held at P set points (:func:`flexrobot_ros.modal.linearize_batch`, the one
linearization: seed 000's vectorized over the poses for elastic joints on rigid links, the composed model pose by
pose for the others), with one batched eigenvalue call per chunk
(see :mod:`flexrobot_ros.modal.eigenproblem`); the mode conventions are those of :mod:`flexrobot_ros.modal.modes`.
Kinds of map:

* ``path``: poses interpolated linearly between two set points (the thesis' 50 configurations,
  :func:`thesis_configurations`), coordinate = configuration number 1..P;
* ``grid``: two joints swept over a rectangular grid around a base pose (Appendix II), coordinate = pose index,
  ``grid_shape`` = (len(values_a), len(values_b)), poses in C order (joint a slow, joint b fast);
* ``gain``: one pose, equal diagonal gains K_P swept and K_D = c sqrt(K_P) (Fig. 2.5), coordinate = K_P;
* ``poses``: any (P, n) list, coordinate = pose index.

File format (:func:`save_map` / :func:`load_map`): one ``.npz`` (numpy ``savez_compressed``) with
``format = "flexrobot_ros.modal_map/1"`` and the arrays of :class:`ModalMap` under their field names:
``robot``, ``kind``, ``coordinate_label`` (str); ``tool`` (bool); ``joint_names`` (n,) str; ``coordinate`` (P,);
``q``, ``q_m``, ``kp``, ``kd`` (P, n) [SI]; ``frequencies_hz``, ``damping_ratios`` (P, m) (fractions);
``eigenvalues`` (P, m) complex [1/s]; ``overdamped`` (P, m) bool; ``mode_count`` (P,) int (columns >= mode_count
are NaN); ``verdict`` (P,) str 'stable'|'marginal'|'unstable'; ``max_real_part`` (P,) [1/s]; optional
``mode_shapes`` (P, c, m) complex over the linearization's c coordinates
(:func:`flexrobot_ros.modal.modal_coordinates`: [q; q_m] for elastic joints on rigid links; max-|entry| =
1); ``q_m`` holds the motor set points of the elastic joints; for grids ``grid_joints`` (2,) str and
``grid_values_a``, ``grid_values_b``.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable

import numpy as np

from flexrobot_ros.errors import FlexrobotError, ModalError
from flexrobot_ros.modal.eigenproblem import VERDICTS, solve_modes
from flexrobot_ros.modal.held_modes import linearize_batch
from flexrobot_ros.modal.linearization import check_pose, joint_vector, pose_array
from flexrobot_ros.model import FlexibleRobot

MAP_FORMAT = "flexrobot_ros.modal_map/1"
#: Poses per batched eigenvalue call: big enough to amortize Python overhead, small enough to stay in cache.
DEFAULT_CHUNK = 1024

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ModalMap:
    """Modes at P set points; field meanings and units in the module docstring (file format section)."""

    robot: str
    tool: bool
    joint_names: tuple[str, ...]
    kind: str
    coordinate: np.ndarray
    coordinate_label: str
    q: np.ndarray
    q_m: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    eigenvalues: np.ndarray
    overdamped: np.ndarray
    mode_count: np.ndarray
    verdict: np.ndarray
    max_real_part: np.ndarray
    mode_shapes: np.ndarray | None = None
    grid_joints: tuple[str, str] | None = None
    grid_values_a: np.ndarray | None = None
    grid_values_b: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.q.shape[0])

    @property
    def grid_shape(self) -> tuple[int, int] | None:
        """(len(values_a), len(values_b)) for grid maps, else None."""
        if self.grid_values_a is None or self.grid_values_b is None:
            return None
        return (len(self.grid_values_a), len(self.grid_values_b))

    @property
    def all_stable(self) -> bool:
        return bool(np.all(self.verdict == "stable"))


def console_progress(label: str) -> Progress:
    """A progress callback printing ``label: done/total (pct%), rate, ETA`` on one stderr line."""
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else 0.0
        end = "\n" if done >= total else ""
        print(f"\r{label}: {done}/{total} poses ({100.0 * done / total:5.1f} %), {rate:8.0f} poses/s, "
              f"ETA {eta:5.1f} s", end=end, file=sys.stderr, flush=True)

    return report


def _progress(progress: bool | Progress | None, label: str) -> Progress | None:
    if progress is True:
        return console_progress(label)
    return progress or None


def modal_map(robot: FlexibleRobot, poses: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
              frame: str | None = None, shapes: bool = False, chunk: int = DEFAULT_CHUNK,
              progress: bool | Progress | None = None, kind: str = "poses", coordinate: Any = None,
              coordinate_label: str = "pose") -> ModalMap:
    """Modes at every pose of ``poses`` (P, n); ``kp``/``kd`` scalar, (n,) or per pose (P, n) (default the robot's).

    ``shapes=True`` keeps the mode shapes (P, c, m). ``progress=True`` prints progress to stderr, or pass a
    callable ``(done, total)``. Raises :class:`ModalError` on bad poses/gains or a singular mass matrix.
    """
    q = pose_array(robot, poses)
    count = q.shape[0]
    kp_all = _per_pose(robot, robot.kp if kp is None else kp, count, "kp")
    kd_all = _per_pose(robot, robot.kd if kd is None else kd, count, "kd")
    if chunk < 1:
        raise ModalError(f"chunk: expected a positive number of poses, got {chunk}")
    report = _progress(progress, f"modal map {robot.name}")
    parts = []
    for start in range(0, count, chunk):
        stop = min(start + chunk, count)
        batch = linearize_batch(robot, q[start:stop], kp=kp_all[start:stop], kd=kd_all[start:stop],
                                wrench=wrench, frame=frame)
        try:
            arrays = solve_modes(batch.M_bar, batch.D_bar, batch.K_bar, shapes=shapes)
        except ModalError as error:
            raise ModalError(f"robot {robot.name}, poses {start}..{stop - 1}: {error}") from None
        parts.append((batch, arrays))
        if report:
            report(stop, count)
    width = max(int(a.mode_count.max()) for _, a in parts)

    def stack(get: Callable[[Any], np.ndarray], fill: Any) -> np.ndarray:
        blocks = []
        for _, arrays in parts:
            block = get(arrays)
            missing = width - block.shape[-1]
            if missing:
                pad = [(0, 0)] * (block.ndim - 1) + [(0, missing)]
                block = np.pad(block, pad, constant_values=fill)
            blocks.append(block)
        return np.concatenate(blocks)

    coordinate = np.arange(count, dtype=float) if coordinate is None else np.asarray(coordinate, dtype=float)
    if coordinate.shape != (count,):
        raise ModalError(f"coordinate: expected {count} values, got shape {coordinate.shape}")
    return ModalMap(
        robot=robot.name, tool=robot.tool is not None, joint_names=tuple(robot.joint_names), kind=kind,
        coordinate=coordinate, coordinate_label=coordinate_label,
        q=q, q_m=np.concatenate([b.q_m for b, _ in parts]), kp=kp_all, kd=kd_all,
        frequencies_hz=stack(lambda a: a.frequencies_hz, np.nan),
        damping_ratios=stack(lambda a: a.damping_ratios, np.nan),
        eigenvalues=stack(lambda a: a.eigenvalues, np.nan),
        overdamped=stack(lambda a: a.overdamped, False),
        mode_count=np.concatenate([a.mode_count for _, a in parts]),
        verdict=np.asarray(VERDICTS)[np.concatenate([a.verdict_code for _, a in parts])],
        max_real_part=np.concatenate([a.max_real_part for _, a in parts]),
        mode_shapes=stack(lambda a: a.mode_shapes, np.nan) if shapes else None,
    )


def _per_pose(robot: FlexibleRobot, gains: Any, count: int, what: str) -> np.ndarray:
    array = np.asarray(gains, dtype=float)
    if array.ndim == 2:
        if array.shape != (count, robot.n) or not np.all(np.isfinite(array)):
            raise ModalError(f"robot {robot.name}: {what}: expected finite per-pose gains of shape "
                             f"({count}, {robot.n}), got shape {array.shape}")
        return array.copy()
    return np.tile(joint_vector(robot, array, what), (count, 1))


def linear_path(start: Any, end: Any, count: int) -> np.ndarray:
    """``count`` poses (count, n) interpolated linearly from ``start`` to ``end`` (both included)."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    if start.shape != end.shape or start.ndim != 1 or count < 2:
        raise ModalError(f"linear_path: expected two poses of one length and count >= 2, got shapes {start.shape}, "
                         f"{end.shape} and count {count}")
    return np.linspace(start, end, count)


def thesis_configurations(count: int = 50) -> np.ndarray:
    """The Scompi sweep of seed 000 section 2.4.2 (Fig. 2.2): q1 = 0 m, q6 = 0, and linearly
    q2 in [-pi/6, pi/6], q3 in [2pi/3, pi/3], q4 in [-pi/18, pi/3], q5 in [-2pi/3, -pi/3]; (count, 6).
    Configuration 8 (index 7) is eq. 2.21."""
    pi = np.pi
    return linear_path([0.0, -pi / 6, 2 * pi / 3, -pi / 18, -2 * pi / 3, 0.0],
                       [0.0, pi / 6, pi / 3, pi / 3, -pi / 3, 0.0], count)


def path_map(robot: FlexibleRobot, start: Any, end: Any, count: int = 50, **options: Any) -> ModalMap:
    """Modes along a linear path of ``count`` poses (coordinate = configuration number 1..count)."""
    poses = linear_path(check_pose(robot, start, "start"), check_pose(robot, end, "end"), count)
    return modal_map(robot, poses, kind="path", coordinate=np.arange(1, count + 1),
                     coordinate_label="configuration", **options)


def grid_poses(robot: FlexibleRobot, base: Any, joints: tuple[str, str], values_a: Any, values_b: Any
               ) -> np.ndarray:
    """Poses (len(a) * len(b), n): ``base`` with joint ``joints[0]`` = each of ``values_a`` (slow index) and
    ``joints[1]`` = each of ``values_b`` (fast index)."""
    base = check_pose(robot, base, "base")
    try:
        index_a, index_b = robot.joint_index(joints[0]), robot.joint_index(joints[1])
    except FlexrobotError as error:
        raise ModalError(f"grid: {error}") from None
    if index_a == index_b:
        raise ModalError(f"grid: the two grid joints must differ, got {joints}")
    values_a = np.asarray(values_a, dtype=float).ravel()
    values_b = np.asarray(values_b, dtype=float).ravel()
    if values_a.size == 0 or values_b.size == 0:
        raise ModalError("grid: each grid axis needs at least one value")
    poses = np.tile(base, (values_a.size * values_b.size, 1))
    grid_a, grid_b = np.meshgrid(values_a, values_b, indexing="ij")
    poses[:, index_a] = grid_a.ravel()
    poses[:, index_b] = grid_b.ravel()
    return poses


def appendix_ii_grid(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Grid axes of seed 000 Appendix II: q1_i = i pi / p (i = 0..2p), q2_j = j pi / p (j = 0..p)."""
    if p < 1:
        raise ModalError(f"appendix_ii_grid: p must be >= 1, got {p}")
    return np.arange(2 * p + 1) * np.pi / p, np.arange(p + 1) * np.pi / p


def grid_map(robot: FlexibleRobot, base: Any, joints: tuple[str, str], values_a: Any, values_b: Any,
             **options: Any) -> ModalMap:
    """Modes over a 2-D joint grid (see :func:`grid_poses`); the map carries the grid axes."""
    poses = grid_poses(robot, base, joints, values_a, values_b)
    result = modal_map(robot, poses, kind="grid", coordinate_label="pose", **options)
    return _replace(result, grid_joints=(joints[0], joints[1]),
                    grid_values_a=np.asarray(values_a, dtype=float).ravel(),
                    grid_values_b=np.asarray(values_b, dtype=float).ravel())


def gain_map(robot: FlexibleRobot, q_d: Any, kp_values: Any, kd_factor: float = 0.425, kd_values: Any = None,
             **options: Any) -> ModalMap:
    """Modes at one pose for equal diagonal gains K_P = each of ``kp_values`` and K_D = ``kd_factor`` sqrt(K_P)
    (seed 000 Fig. 2.5: K_P 2000..15000, K_D = 0.425 sqrt(K_P)), or the given ``kd_values``."""
    kp_values = np.asarray(kp_values, dtype=float).ravel()
    kd_values = kd_factor * np.sqrt(np.abs(kp_values)) if kd_values is None else np.asarray(kd_values, float).ravel()
    if kp_values.size == 0 or kd_values.shape != kp_values.shape:
        raise ModalError(f"gain sweep: expected matching non-empty kp/kd lists, got {kp_values.size} and "
                         f"{kd_values.size} values")
    q = check_pose(robot, q_d)
    count = kp_values.size
    return modal_map(robot, np.tile(q, (count, 1)), kp=np.repeat(kp_values[:, None], robot.n, axis=1),
                     kd=np.repeat(kd_values[:, None], robot.n, axis=1), kind="gain", coordinate=kp_values,
                     coordinate_label="K_P [N m/rad]", **options)


def _replace(result: ModalMap, **changes: Any) -> ModalMap:
    values = {f.name: getattr(result, f.name) for f in fields(result)}
    values.update(changes)
    return ModalMap(**values)


def save_map(path: str | Path, result: ModalMap) -> Path:
    """Write ``result`` to ``path`` (.npz, format in the module docstring); returns the path written."""
    path = Path(path)
    arrays: dict[str, Any] = {"format": np.array(MAP_FORMAT)}
    for f in fields(result):
        value = getattr(result, f.name)
        if value is None:
            continue
        arrays[f.name] = np.asarray(value)
    try:
        with open(path, "wb") as handle:
            np.savez_compressed(handle, **arrays)
    except OSError as error:
        raise ModalError(f"{path}: cannot write the modal map: {error}") from None
    return path


def load_map(path: str | Path) -> ModalMap:
    """Read a map written by :func:`save_map`; a ModalError names the file and what is wrong."""
    path = Path(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ModalError(f"{path}: not a readable .npz modal map: {error}") from None
    with archive:
        if "format" not in archive.files or str(archive["format"]) != MAP_FORMAT:
            raise ModalError(f"{path}: format: expected {MAP_FORMAT!r}, got "
                             f"{str(archive['format']) if 'format' in archive.files else None!r}")
        values: dict[str, Any] = {}
        for f in fields(ModalMap):
            if f.name not in archive.files:
                if f.default is not None:
                    raise ModalError(f"{path}: missing field {f.name!r}")
                values[f.name] = None
                continue
            value = archive[f.name]
            if f.name in ("robot", "kind", "coordinate_label"):
                value = str(value)
            elif f.name == "tool":
                value = bool(value)
            elif f.name in ("joint_names", "grid_joints"):
                value = tuple(str(v) for v in value)
            values[f.name] = value
    return ModalMap(**values)


__all__ = ["ModalMap", "modal_map", "path_map", "grid_map", "gain_map", "grid_poses", "linear_path",
           "thesis_configurations", "appendix_ii_grid", "save_map", "load_map", "console_progress", "MAP_FORMAT"]
