"""The minimum critical depth of cut over robot poses: where to place the workpiece (seed 001's purpose).

At each pose q the closed loop is linearized (:func:`flexrobot_ros.modal.linearize_batch`), the
chatter frequencies are gridded around its modes (:func:`~flexrobot_ros.modal.stability_lobes.
chatter_frequency_grid`) and the zeroth-order minimum critical depth a_lim,min [m] of the cut is found for the
tool-tip receptance in the feed plane (:mod:`flexrobot_ros.modal.milling_frf`): below it the cut is stable at every
spindle speed. The tool axis and the feed direction are fixed in the base frame (the workpiece does not turn with
the robot), so the map says which poses, and hence which tool-tip positions, machine the same cut most stably.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal.held_modes import linearize_batch
from flexrobot_ros.modal.maps import grid_poses
from flexrobot_ros.modal.milling_frf import machining_frame, robot_feed_plane_frf
from flexrobot_ros.modal.modes import modes_of
from flexrobot_ros.modal.stability_lobes import MillingProcess, chatter_frequency_grid, minimum_critical_depth
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class CriticalDepthMap:
    """``poses`` (P, n) [rad | m]; ``minimum_depths_m`` (P,) a_lim,min [m] (inf where nothing chatters);
    ``chatter_frequencies_hz`` (P,) [Hz] where it is reached; ``tool_positions_m`` (P, 3) the tool tip in base
    axes [m]; ``rotation`` (3, 3) the machining frame (columns x feed, y, z tool axis, base axes); for a grid,
    ``grid_joints`` and ``grid_values_a`` (slow index), ``grid_values_b`` (fast index) [rad | m], else None."""

    robot: str
    poses: np.ndarray
    minimum_depths_m: np.ndarray
    chatter_frequencies_hz: np.ndarray
    tool_positions_m: np.ndarray
    rotation: np.ndarray
    process: MillingProcess
    grid_joints: tuple[str, str] | None = None
    grid_values_a: np.ndarray | None = None
    grid_values_b: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.poses.shape[0])


def critical_depth_map(robot: FlexibleRobot, poses: Any, process: MillingProcess, tool_axis: Any = (0.0, 0.0, 1.0),
                       feed_direction: Any = (1.0, 0.0, 0.0), frame: str | None = None, tip_offset: Any = None,
                       kp: Any = None, kd: Any = None, progress: Callable[[int, int], None] | None = None
                       ) -> CriticalDepthMap:
    """a_lim,min [m] of ``process`` at each of ``poses`` (P, n) (module docstring); ``progress(done, total)`` is
    called after each pose. Elastic joints on rigid links only (the tool receptance over [q; q_m]); a ModalError
    otherwise."""
    if not elastic_joints_only(robot):
        raise ModalError(f"robot {robot.name}: the critical depth map takes the tool receptance of elastic joints on "
                         "rigid links; this robot has extra elasticities, gear dampers, flexible links or rigid "
                         "joints")
    batch = linearize_batch(robot, poses, kp=kp, kd=kd)
    count = len(batch)
    depths, frequencies = np.empty(count), np.empty(count)
    positions = np.empty((count, 3))
    for i in range(count):
        linearized = batch.at(i)
        modes = modes_of(linearized)
        frf = robot_feed_plane_frf(robot, linearized.q, tool_axis, feed_direction, frame=frame,
                                   tip_offset=tip_offset, linearized=linearized)
        grid = chatter_frequency_grid(modes.frequencies_hz, modes.damping_ratios)
        depths[i], frequencies[i], _ = minimum_critical_depth(frf, grid, process)
        positions[i] = frf.position
        if progress is not None:
            progress(i + 1, count)
    return CriticalDepthMap(robot=robot.name, poses=batch.q, minimum_depths_m=depths,
                            chatter_frequencies_hz=frequencies, tool_positions_m=positions,
                            rotation=machining_frame(tool_axis, feed_direction), process=process)


def critical_depth_grid(robot: FlexibleRobot, base: Any, joints: tuple[str, str], values_a: Any, values_b: Any,
                        process: MillingProcess, **options: Any) -> CriticalDepthMap:
    """:func:`critical_depth_map` over the 2-D grid of joints ``joints`` around ``base`` (see
    :func:`flexrobot_ros.modal.maps.grid_poses`); the map carries the grid axes."""
    poses = grid_poses(robot, base, joints, values_a, values_b)
    result = critical_depth_map(robot, poses, process, **options)
    return CriticalDepthMap(**{**result.__dict__, "grid_joints": (joints[0], joints[1]),
                               "grid_values_a": np.asarray(values_a, dtype=float).ravel(),
                               "grid_values_b": np.asarray(values_b, dtype=float).ravel()})


__all__ = ["CriticalDepthMap", "critical_depth_map", "critical_depth_grid"]
