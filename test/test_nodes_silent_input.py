"""Issue 23: the OMA node warns by itself when its encoder topic stays silent after start (the hardware launch said
nothing; only ``flexrobot bringup`` did). Two OMA nodes on the standalone runtime, ``silent_warning_s`` 1 s: one on a
topic nobody publishes warns once, naming the topic; one fed with encoder samples does not."""
from __future__ import annotations

import numpy as np

from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_state
from flexrobot_ros.nodes.oma_node import OmaNode
from node_harness import Q8, Harness, LogRecords

SILENT = "no samples received on"


def test_oma_node_warns_once_when_its_encoders_stay_silent():
    names = load_robot("scompi").joint_names
    logs = {ns: LogRecords(f"/{ns}/oma_node") for ns in ("quiet", "fed")}
    try:
        with Harness() as harness:
            for ns in logs:
                OmaNode(harness.node("oma_node", {"silent_warning_s": 1.0}, namespace=f"/{ns}"))
            source = harness.node("encoders")
            publisher = source.create_publisher(source.types.sensor_msgs.msg.JointState, "/fed/motor_states")
            harness.spin(10.0, lambda: publisher.get_subscription_count() > 0)
            for k in range(300):  # 3 s of wall time, one sample each 10 ms, the 1 s mark well inside
                publisher.publish(joint_state(source.types, source.stamp(1000.0 + k / 1000.0), names,
                                              Q8 + 1e-4 * np.sin(k), np.zeros(6), np.zeros(6)))
                harness.spin(0.01)
        silent = {ns: [m for m in log.warnings() if m.startswith(SILENT)] for ns, log in logs.items()}
    finally:
        for log in logs.values():
            log.close()
    assert silent["fed"] == []
    assert silent["quiet"] == ["no samples received on /quiet/motor_states 1 s after start (is the robot publishing? "
                               "check the encoder topic (hardware.launch.py encoders:=, flexrobot bringup "
                               "--encoders)); still waiting"]
