"""Frame Jacobian of a robot with flexible links over the coordinates of its linearization.

The closed-loop linearization of :mod:`flexrobot_ros.modal.elastic_robot_linearization` uses the composed model's
coordinates ``y = [q_a, eta, q_m (elastic joints)]`` (``q_a = theta`` (n) without extra elasticities) about the held
pose ``y*`` (:meth:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot.static_equilibrium`: eta* the beams'
static deflection). A frame at a beam's tip moves with the joints and with the beam's elastic coordinates (seed 003
eq. 10, :meth:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot.frame_placement`); the motors move it only
through the joint springs. Its Jacobian::

    J_y = [d x / d q_a, d x / d eta, 0]      (6, size)

with ``x`` the frame's translation [m] and rotation [rad] in world axes (``axes='world'``, pinocchio's
LOCAL_WORLD_ALIGNED) or in the frame's own axes (``'local'``), the composed model's own
:meth:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot.frame_jacobian` (central differences of the deformed
placement, step 1e-6 in each coordinate, rad or modal amplitude). It is what
:func:`~flexrobot_ros.modal.participation.modal_participation` needs to weigh the link modes at the tool.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.linearization import frame_index

def flexible_link_frame_jacobian(model: ElasticRobot, q_d: Any, frame: str | None = None,
                                 axes: str = "world") -> np.ndarray:
    """J_y (6, model.size) of ``frame`` (default the robot's tool frame) at the pose ``q_d`` (n,) [rad | m] held at
    the static equilibrium (module docstring); rows [x, y, z, rx, ry, rz]."""
    if axes not in ("world", "local"):
        raise ModalError(f"axes: expected one of ['world', 'local'], got {axes!r}")
    robot = model.robot
    frame_id = model.frame_id(robot.model.frames[frame_index(robot, frame)].name)
    try:
        y = model.static_equilibrium(np.asarray(q_d, dtype=float))
    except ModelError as error:
        raise ModalError(str(error)) from None
    jacobian = model.frame_jacobian(y, frame_id)
    if axes == "local":
        rotation = model.frame_placement(y, frame_id).rotation.T
        jacobian[:3], jacobian[3:] = rotation @ jacobian[:3], rotation @ jacobian[3:]
    return jacobian


__all__ = ["flexible_link_frame_jacobian"]
