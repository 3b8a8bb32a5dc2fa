"""feedforward_node with ``shaper`` (issue 26 part 2): the motor trajectory it publishes is the core feedforward of
the core's shaped reference (flexrobot_ros.shaping.shape_reference, EJNEA here against the node's SDRNEA), lasting
the move time shaping adds longer, which its diagnostics report."""
from __future__ import annotations

import numpy as np

from flexrobot_ros.dynamics import feedforward, trajectory_from_joint_trajectory
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime.messages import as_array, time_seconds
from flexrobot_ros.shaping import shape_reference
from node_harness import Harness, Probe
from test_nodes_feedforward import DIAG, JT, desired


def test_node_shapes_the_trajectory_like_the_core():
    with Harness() as harness:
        node = harness.node("feedforward_node", {"shaper": "zvd", "stream_torques": False})
        app = FeedforwardNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_trajectory": JT, "/diagnostics": DIAG})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        harness.spin(5.0, lambda: publisher.get_subscription_count() > 0)
        sent = desired(probe_node.types, probe_node.now() + 0.3)
        publisher.publish(sent)
        harness.spin(60.0, lambda: len(probe.messages["/motor_trajectory"]) >= 1)
        harness.spin(1.5)
    robot = load_robot("scompi", tool=True)
    shaping = shape_reference(robot, trajectory_from_joint_trajectory(sent, robot.joint_names), "zvd")
    expected = feedforward(robot, shaping.trajectory, "ejnea", rate_hz=1000.0)
    msg = probe.last("/motor_trajectory")
    t = np.array([time_seconds(p.time_from_start) for p in msg.points])
    np.testing.assert_allclose(t, expected.t, atol=1e-9)
    assert 0.2 < shaping.added_time_s and abs(app.added_time_s - shaping.added_time_s) < 1e-12
    for field, reference in (("positions", expected.q_m), ("effort", expected.tau_m)):
        values = np.array([as_array(getattr(p, field)) for p in msg.points])
        assert np.abs(values - reference).max() <= 1e-9 * np.abs(reference).max(), field
    values = {v.key: v.value for status in probe.last("/diagnostics").status for v in status.values}
    assert values["shaper"] == "zvd" and abs(float(values["shaping added time [s]"]) - shaping.added_time_s) < 1e-6
