"""The tool-point coordinates a tool-space reference controls: names (x, y, z of the tool frame's origin in the base
frame) and the default choice per robot."""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.extended_model import extended_model

#: Tool-point coordinate name -> index into a base-frame position (3,) [m].
AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def default_tool_axes(robot: Any) -> tuple[str, ...]:
    """Tool-point coordinates a robot with n actuators controls: all three for n = 3 (unless all three are revolute
    joints about one base axis), the two of the plane of motion for a planar arm with n = 2 (joint axes all along the
    third base axis).

    Raises:
        ModelError: other numbers of actuators (more than 3: more than the tool point's three coordinates, a 6- or
            7-axis arm), and planar arms with 3 (their tool point has two coordinates for three actuators: redundant,
            the tool's orientation is no tool-point coordinate; the Canadarm).
    """
    if robot.n > len(AXIS_INDEX):
        raise ModelError(f"robot {robot.name}: {robot.n} actuators for the tool point's {len(AXIS_INDEX)} coordinates "
                         "(x, y, z: the tool-space inversion does not control the tool's orientation); give a "
                         "joint-space trajectory")
    if robot.n in (2, 3):
        ext = extended_model(robot)
        tree = KinematicTree.from_model(ext.model)
        rotations: list[np.ndarray] = []  # joint frames at q = 0 in the base frame
        axes = []
        for i in range(tree.n):
            parent = np.eye(3) if tree.parents[i] < 0 else rotations[tree.parents[i]]
            rotations.append(parent @ tree.rotation[i])
            axes.append(rotations[i] @ tree.axis[i])
        normal = np.abs(np.mean(axes, axis=0))
        k = int(np.argmax(normal))
        planar = bool(np.allclose(np.abs(np.asarray(axes)[:, k]), 1.0))
        if robot.n == 3 and planar and all(kind != "prismatic" for kind in robot.joint_types):
            raise ModelError(f"robot {robot.name}: a planar arm with 3 actuators (revolute joints about the base "
                             f"{'xyz'[k]} axis): its tool point has 2 coordinates in the plane for 3 actuators "
                             "(redundant; the tool's orientation is no tool-point coordinate)")
        if robot.n == 3:
            return ("x", "y", "z")
        if planar:
            return tuple(a for a in "xyz" if AXIS_INDEX[a] != k)
    raise ModelError(f"robot {robot.name}: give tool_axes (the {robot.n} tool-point coordinates to control); only 2 "
                     "(planar) and 3 actuators have a default")


__all__ = ["AXIS_INDEX", "default_tool_axes"]
