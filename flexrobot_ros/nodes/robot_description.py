"""The robot a node loads: its flexibility YAML (``robot``) with the URDF from the file the YAML names or from the
latched ``robot_description`` topic, as robot_state_publisher and ros2_control publish it (std_msgs/String,
transient local).

The topic is used when the YAML says ``urdf: robot_description`` or the node's ``urdf`` parameter does (whatever
file the YAML names). Its name is relative, so it follows the node's namespace and remapping
(``-r robot_description:=/arm/robot_description``). At start-up the node subscribes transient local and waits up to
``robot_description_timeout`` [s] (its parameter services answer meanwhile; a stop signal ends the wait and the
node cleanly), then builds the robot with ``load_robot(yaml, urdf_text=...)``: a latched URDF published before the
node started arrives as one published after. A URDF that never arrives, that is not a valid URDF or that does not
fit the YAML (its joints, locked joints, tool frame) stops the node at start-up with one line naming the fully
qualified topic (exit code 2, as every start-up error). The node reads the topic once: a URDF published later does
not change the running model (restart the node).
"""
from __future__ import annotations

from typing import Any, Mapping

from flexrobot_ros.errors import ModelError, RuntimeLayerError
from flexrobot_ros.model import FlexibleRobot, load_robot
from flexrobot_ros.model.loader import urdf_from_topic
from flexrobot_ros.model.urdf_source import FROM_TOPIC
from flexrobot_ros.runtime import QOS_LATCHED, ParameterSpec

#: The topic (relative: in the node's namespace, remappable).
TOPIC = "robot_description"
#: Declared by every node that loads a robot, beside its ``robot`` and ``tool``.
PARAMETERS = (
    ParameterSpec("urdf", "", "where the URDF comes from: empty = as the flexibility YAML's urdf says (a file, or "
                  "robot_description); 'robot_description' = the latched robot_description topic (std_msgs/String, "
                  "transient local, in the node's namespace), whatever file the YAML names",
                  choices=("", FROM_TOPIC), read_only=True),
    ParameterSpec("robot_description_timeout", 30.0, "how long start-up waits for the URDF on robot_description "
                  "before the node exits with status 2 [s]", range=(0.0, 3600.0), read_only=True),
)


def uses_topic(robot: str, urdf: str) -> bool:
    """Whether a node with parameters ``robot`` (shipped name or flexibility YAML) and ``urdf`` reads its URDF from
    :data:`TOPIC`."""
    return urdf == FROM_TOPIC or urdf_from_topic(robot)


def load_node_robot(node: Any, p: Mapping[str, Any]) -> FlexibleRobot:
    """The robot of a node's parameters ``p`` (``robot``, ``tool``, ``urdf``, ``robot_description_timeout``): the
    YAML with its URDF file, or with the URDF that arrives on :data:`TOPIC` (see the module docstring).

    Raises:
        RuntimeLayerError: no URDF arrived within the timeout (naming the topic and the timeout).
        ModelError: the YAML is invalid, or the topic's URDF is not a URDF or does not fit the YAML (naming the topic).
        StopRequested: a stop signal arrived while waiting.
    """
    if not uses_topic(p["robot"], p["urdf"]):
        return load_robot(p["robot"], tool=p["tool"])
    topic, timeout = node.resolve_name(TOPIC), p["robot_description_timeout"]
    why = "parameter urdf" if p["urdf"] == FROM_TOPIC else f"urdf: {FROM_TOPIC} in {p['robot']}"
    node.logger.info(f"waiting up to {timeout:g} s for the URDF on {topic} ({why})")
    msg = node.wait_for_message(node.types.std_msgs.msg.String, TOPIC, timeout, QOS_LATCHED)
    if msg is None:
        raise RuntimeLayerError(f"no URDF on {topic} within {timeout:g} s ({why}; robot_description_timeout): start "
                                "the robot's driver or robot_state_publisher, or remap robot_description to the topic "
                                "that carries it")
    try:
        return load_robot(p["robot"], tool=p["tool"], urdf_text=msg.data, urdf_origin=f"topic {topic}")
    except ModelError as error:
        if topic in str(error):
            raise
        raise ModelError(f"{error} (the URDF from topic {topic})") from error


__all__ = ["PARAMETERS", "TOPIC", "load_node_robot", "uses_topic"]
