"""Each node's effective parameters on a latched topic, so a recording carries them, and a warning when a replayed
recording was made with a different model (issue 23).

``scompi_simulation.yaml`` has ``tool: true``, ``scompi_hardware.yaml`` ``tool: false``: replaying a simulation bag
into the hardware launch without ``tool:=true`` put the monitor 7 % off, silently. Now every node publishes, once at
start-up, one std_msgs/String on :data:`TOPIC` (transient local, depth 1: late subscribers and recorders get it)
holding YAML::

    node: /simulator_node
    robot: scompi
    tool: true
    robot_yaml: {path: /.../config/scompi.yaml, sha256: 3f1c...}   # the flexibility YAML the model was built from
    parameters: {rate_hz: 1000.0, ...}                              # every declared parameter, current values

Both ``ros2 bag record -a`` (rosbag2 subscribes latched topics transient local) and the standalone recorder
(``flexrobot bringup ... --record``) record it, and ``ros2 bag play`` / ``flexrobot bag play`` replay it latched. A
node that checks (the modal monitor, whose modes depend on the model) compares ``robot``, ``tool`` and the YAML's
content hash of every such message with its own and logs one warning per differing parameter, naming both values;
messages of the nodes of its own run agree with it and say nothing.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from flexrobot_ros.runtime import QOS_LATCHED
from flexrobot_ros.runtime.messages import message_to_dict

#: The topic of the run parameters (absolute: one per graph).
TOPIC = "/flexrobot/bringup_parameters"
#: What a replay must agree on: the model of the robot.
COMPARED = ("robot", "tool", "robot_yaml_sha256")


def file_sha256(path: Path | None) -> str:
    """Hex SHA-256 of a file's bytes ("" without a file)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else ""


def run_parameters(node: Any, robot: Any) -> dict[str, Any]:
    """The document a node publishes (see the module docstring); ``robot`` is its FlexibleRobot or None."""
    values = {name: message_to_dict(value) for name, value in node.parameters.items()}  # numpy, tuples: plain
    path = getattr(robot, "yaml_path", None)
    return {"node": node.fully_qualified_name, "robot": values.get("robot", ""), "tool": values.get("tool", False),
            "robot_yaml": {"path": str(path or ""), "sha256": file_sha256(path)}, "parameters": values}


def _compared(document: dict[str, Any]) -> dict[str, Any]:
    return {"robot": document.get("robot"), "tool": document.get("tool"),
            "robot_yaml_sha256": (document.get("robot_yaml") or {}).get("sha256")}


class RunParameters:
    """Publishes the node's run parameters on :data:`TOPIC`; with ``check=True`` also warns about recorded ones that
    differ (once per parameter)."""

    def __init__(self, node: Any, robot: Any, check: bool = False) -> None:
        self.node = node
        self.own = run_parameters(node, robot)
        string = node.types.std_msgs.msg.String
        self.publisher = node.create_publisher(string, TOPIC, QOS_LATCHED)
        self.publisher.publish(string(data=yaml.safe_dump(self.own, sort_keys=False)))
        if check:
            node.create_subscription(string, TOPIC, self.on_parameters, QOS_LATCHED.with_depth(100))

    def on_parameters(self, msg: Any) -> None:
        try:
            document = yaml.safe_load(msg.data)
        except yaml.YAMLError:
            document = None
        if not isinstance(document, dict):
            self.node.log_once("run parameters: unreadable", f"{TOPIC}: a message that is not a YAML mapping "
                               "(ignored)")
            return
        own, theirs = _compared(self.own), _compared(document)
        source = document.get("node", "?")
        for name in COMPARED:
            if theirs[name] is not None and theirs[name] != own[name]:
                self.node.log_once(
                    f"run parameters: {name}",
                    f"parameter '{name}' of the recorded or running {source} ({TOPIC}) is {theirs[name]!r}, this "
                    f"node's is {own[name]!r}: its modes are computed for another model than the data's (start it "
                    f"with {name.split('_sha256')[0]} as the recording's)")
