"""ros2_control conventions shared by the nodes that talk to controllers: a controller's joint order and its topics.

A ros2_control controller lists its ``joints`` in its own order; its topics live in its namespace
(``<controller>/commands`` of a forward_command_controller, ``<controller>/joint_trajectory`` of a
joint_trajectory_controller). The feedforward node publishes to them and the simulator subscribes to
``<controller>/commands`` as a robot's controller would.
"""
from __future__ import annotations

import re

from flexrobot_ros.errors import RuntimeLayerError

_CONTROLLER = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def joint_order(joints: list[str], robot_joints: tuple[str, ...]) -> list[int]:
    """Indices into the robot's joints of ``ros2_control.joints`` (empty: the robot's order).

    Raises:
        RuntimeLayerError: the list is not a permutation of the robot's joints.
    """
    if not joints:
        return list(range(len(robot_joints)))
    if sorted(joints) != sorted(robot_joints):
        raise RuntimeLayerError(f"parameter 'ros2_control.joints': {list(joints)}; expected each of the robot's "
                                f"joints {list(robot_joints)} once, in the controller's order")
    return [robot_joints.index(joint) for joint in joints]


def checked_topic(controller: str, topic: str) -> str:
    """``<controller>/<topic>`` for the controller name of ``ros2_control.controller`` (relative: in the node's
    namespace; ``/ns/name``: absolute).

    Raises:
        RuntimeLayerError: the name is not a ROS name.
    """
    if not _CONTROLLER.match(controller):
        raise RuntimeLayerError(f"parameter 'ros2_control.controller': {controller!r}; expected a controller name "
                                "(letters, digits and '_' not starting with a digit, '/'-separated), e.g. "
                                "joint_trajectory_controller")
    return f"{controller}/{topic}"
