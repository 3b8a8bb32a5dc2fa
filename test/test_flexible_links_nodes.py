"""simulator_node and modal_monitor_node with the Canadarm (flexible links, rigid joints) on the standalone runtime:
the node publishes link_deflections (links x [w_y, w_z]) that an impact excites and the deformed link ends on tf,
and the monitor's modes are the
link-layer linearization's at the pose it received (closed loop, link modes included)."""
from __future__ import annotations

import numpy as np

from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.flexible_links.linearization import flexible_link_modes
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.simulator_node import SimulatorNode
from flexrobot_ros.runtime.messages import as_array
from node_harness import Harness, Probe

ARRAY, JS, TF = "std_msgs/msg/Float64MultiArray", "sensor_msgs/msg/JointState", "tf2_msgs/msg/TFMessage"
POSE = [0.4, -1.1, 0.7]


def test_canadarm_nodes():
    robot = load_robot("canadarm")
    with Harness() as harness:
        parameters = {"robot": "canadarm", "tool": False, "set_point": POSE, "set_points": [], "rate_hz": 200.0,
                      "duration_s": 0.5, "real_time_factor": 2.0, "autostart": True,
                      "excitation.type": "impacts", "excitation.first_s": 0.1, "excitation.period_s": 100.0,
                      "impact.force": [0.0, 200.0, 0.0], "impact.duration_s": 0.05, "joint_states_decimation": 1}
        app = SimulatorNode(harness.node("simulator_node", parameters, files=()))
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {"robot": "canadarm", "tool": False},
                                                files=()))
        probe = Probe(harness.node("probe"), {"/link_deflections": ARRAY, "/joint_states": JS, "/tf": TF,
                                              "/modal/frequencies": ARRAY}, latched=["/modal/frequencies"])
        harness.spin(60.0, lambda: app.state == "finished" and len(probe.messages["/link_deflections"]) >= 100
                     and probe.last("/modal/frequencies") is not None)
    deflections = np.array([as_array(m.data) for m in probe.messages["/link_deflections"]])
    assert deflections.shape[1] == 3 * 2
    assert np.max(np.abs(deflections)) > 1e-5  # the impact bends the arm
    # tf: the deformed end frame of link 1 sits at its undeformed tip (6, 0, 0) plus its deflection along y
    tips = [e for m in probe.messages["/tf"] for e in m.transforms if e.child_frame_id == "link1/deformed_tip"]
    assert tips and all(e.header.frame_id == "link1" for e in tips)
    assert max(abs(e.transform.translation.y) for e in tips) > 1e-5
    assert all(abs(e.transform.translation.x - 6.0) < 1e-9 for e in tips)
    # the monitor: the closed-loop modes of the link layer at the pose it received
    expected = flexible_link_modes(robot, chain_from_robot(robot), monitor.computed).frequencies_hz
    np.testing.assert_allclose(as_array(probe.last("/modal/frequencies").data), expected, rtol=1e-9)
    assert expected.size >= 3 + 6  # 9 coordinates; heavily damped joint modes may split into real pairs
