"""simulator_node and modal_monitor_node with mixed4 (issue 24's composed robot: a rigid joint, elastic joints with
Coulomb friction, an extra elasticity and a flexible link) on the standalone runtime: the simulator's joint states
move after an impact, and the monitor's streamed modes equal ``flexrobot modal mixed4 --q <the pose it received>``."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np

from flexrobot_ros.cli import main as flexrobot
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.simulator_node import SimulatorNode
from flexrobot_ros.runtime.messages import as_array
from node_harness import Harness, Probe

ARRAY, JS = "std_msgs/msg/Float64MultiArray", "sensor_msgs/msg/JointState"
POSE = [0.2, 0.4, -0.6]


def test_mixed4_simulator_and_modal_monitor():
    """A 0.3 s run at 200 Hz with a 50 N impact on the tool at 0.05 s (the composed plant, CasADi path); the monitor
    on the simulator's joint_states."""
    with Harness() as harness:
        parameters = {"robot": "mixed4", "tool": False, "set_point": POSE, "set_points": [], "rate_hz": 200.0,
                      "duration_s": 0.3, "real_time_factor": 1.0, "autostart": True,
                      "excitation.type": "impacts", "excitation.first_s": 0.05, "excitation.period_s": 100.0,
                      "impact.force": [0.0, 50.0, 0.0], "impact.duration_s": 0.01, "joint_states_decimation": 1}
        app = SimulatorNode(harness.node("simulator_node", parameters, files=()))
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {"robot": "mixed4", "tool": False,
                                                                       "threshold": 1e-3}, files=()))
        probe = Probe(harness.node("probe"), {"/joint_states": JS, "/modal/frequencies": ARRAY,
                                              "/modal/mode_shapes": ARRAY}, latched=["/modal/frequencies"])
        harness.spin(300.0, lambda: app.state == "finished" and len(probe.messages["/joint_states"]) >= 50
                     and probe.last("/modal/frequencies") is not None and monitor.computed is not None)
    positions = np.array([as_array(m.position) for m in probe.messages["/joint_states"]])
    assert positions.shape[1] == 3
    assert np.max(np.ptp(positions, axis=0)) > 1e-5, np.ptp(positions, axis=0)  # the impact moves the joints
    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        assert flexrobot(["modal", "mixed4", "--q", ",".join(repr(float(v)) for v in monitor.computed), "--json"]) == 0
    expected = json.loads(summary.getvalue())["frequencies_hz"]
    np.testing.assert_allclose(as_array(probe.last("/modal/frequencies").data), expected, rtol=1e-9)
    assert len(expected) >= 10  # 3 joints, q_e, 4 beam amplitudes, 2 motors: 10 coordinates
    shapes = probe.last("/modal/mode_shapes")
    labels = [d.label for d in shapes.layout.dim]
    assert "q_e.joint4" in labels[1] and "eta.0" in labels[1] and "q_m.joint2" in labels[1]
