"""Forward kinematics of a :class:`~flexrobot_ros.model.FlexibleRobot` for display: link frames and frame origins.

:func:`link_transforms` gives, at a link-side pose ``q``, the transform of every URDF link relative to its parent
link: the tree ``robot_state_publisher`` publishes on ``/tf`` for the same URDF and joint positions, so both can run
side by side. :func:`frame_origins` gives frame origins in the base (world) frame, e.g. to draw the arm's skeleton
deformed by a mode shape. Both are thin wrappers of pinocchio's ``framesForwardKinematics``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class LinkTransform:
    """Pose of URDF link ``child`` in link ``parent``: ``translation`` (3,) [m] and unit quaternion ``rotation``
    (4,) in ROS order (x, y, z, w)."""

    parent: str
    child: str
    translation: np.ndarray
    rotation: np.ndarray


def _placements(robot: FlexibleRobot, q: Any) -> Any:
    data = robot.create_data()
    pin.framesForwardKinematics(robot.model, data, robot.check_q(q))
    return data.oMf


def _parent_frame(model: pin.Model, frame_id: int) -> int:
    """Index of the frame above frame ``frame_id`` (``parentFrame`` in pinocchio 3, ``previousFrame`` in 2.x)."""
    frame = model.frames[frame_id]
    return frame.parentFrame if hasattr(frame, "parentFrame") else frame.previousFrame


def _parent_link(model: pin.Model, frame_id: int) -> int | None:
    """Index of the BODY frame (URDF link) above BODY frame ``frame_id``, None for the root link.

    Walks up through joint frames (pinocchio 2.x also puts a FIXED_JOINT ``root_joint`` frame above the root link);
    the universe frame is its own parent."""
    index = _parent_frame(model, frame_id)
    while model.frames[index].type != pin.FrameType.BODY:
        parent = _parent_frame(model, index)
        if parent == index:
            return None
        index = parent
    return index


def link_transforms(robot: FlexibleRobot, q: Any) -> tuple[LinkTransform, ...]:
    """Every URDF link relative to its parent link at pose ``q`` (n,) [rad | m], in model order.

    Raises:
        ModelError: ``q`` has the wrong length or non-finite values.
    """
    model = robot.model
    placements = _placements(robot, q)
    transforms = []
    for index, frame in enumerate(model.frames):
        if frame.type != pin.FrameType.BODY:
            continue
        parent = _parent_link(model, index)
        if parent is None:
            continue
        relative = placements[parent].actInv(placements[index])
        quaternion = pin.Quaternion(relative.rotation).coeffs()  # pinocchio stores (x, y, z, w)
        transforms.append(LinkTransform(model.frames[parent].name, frame.name, np.array(relative.translation),
                                        np.array(quaternion)))
    return tuple(transforms)


def chain_links(robot: FlexibleRobot, tip: str | None = None) -> tuple[str, ...]:
    """Names of the URDF links from the root link to ``tip`` (default the robot's tool frame), base first.

    Raises:
        ModelError: ``tip`` is not a frame of the robot.
    """
    model = robot.model
    index = robot.frame_id(tip or robot.tool_frame)
    names = []
    while index is not None:
        if model.frames[index].type == pin.FrameType.BODY:
            names.append(model.frames[index].name)
            index = _parent_link(model, index)
        else:
            parent = _parent_frame(model, index)
            index = None if parent == index else parent
    return tuple(reversed(names))


def frame_origins(robot: FlexibleRobot, q: Any, frames: Sequence[str]) -> np.ndarray:
    """Origins (len(frames), 3) [m] of the named frames in the base (world) frame at pose ``q``.

    Raises:
        ModelError: ``q`` is invalid or a frame name is unknown.
    """
    ids = [robot.frame_id(name) for name in frames]
    placements = _placements(robot, q)
    return np.array([placements[i].translation for i in ids]).reshape(len(ids), 3)


__all__ = ["LinkTransform", "chain_links", "frame_origins", "link_transforms"]
