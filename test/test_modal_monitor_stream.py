"""modal_monitor_node streams its modes (issue 11): a volatile subscriber that joins while the robot holds still
(``ros2 topic echo``, rqt_plot, PlotJuggler, launch_testing_ros' WaitForTopics) receives the current modes.

In this process on the standalone runtime: the monitor computes the modes of configuration 8 (seed 000 eq. 2.21)
once; a volatile subscription created afterwards then receives ``modal/frequencies`` and ``modal/markers`` every
1/``publish_rate_hz`` s, equal to the latched messages of that one computation (no recomputation), the markers
re-stamped; with ``publish_rate_hz: 0`` it receives nothing (only changes are published, latched).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.nodes.convert import joint_state
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED
from flexrobot_ros.runtime.messages import as_array, time_seconds
from node_harness import Q8, Harness

JOINTS = [f"joint{i}" for i in range(1, 7)]


def late_volatile_subscriber(rate_hz: float, listen_s: float) -> dict:
    """Monitor at ``rate_hz``; one pose; then a volatile subscriber listens for ``listen_s`` seconds."""
    with Harness() as harness:
        monitor_node = harness.node("modal_monitor_node", {"publish_rate_hz": rate_hz})
        monitor = ModalMonitorNode(monitor_node)
        peer = harness.node("peer")
        types = peer.types
        latched = []
        peer.create_subscription(types.std_msgs.msg.Float64MultiArray, "/modal/frequencies", latched.append,
                                 QOS_LATCHED)
        states = peer.create_publisher(types.sensor_msgs.msg.JointState, "/joint_states")
        assert harness.spin(10.0, lambda: states.get_subscription_count() > 0)
        states.publish(joint_state(types, peer.stamp(), JOINTS, Q8))
        assert harness.spin(10.0, lambda: bool(latched)), "no modes computed"
        late = harness.node("late")
        received = {"frequencies": [], "markers": []}
        late.create_subscription(types.std_msgs.msg.Float64MultiArray, "/modal/frequencies",
                                 received["frequencies"].append, QOS_DEFAULT)
        late.create_subscription(types.visualization_msgs.msg.MarkerArray, "/modal/markers",
                                 received["markers"].append, QOS_DEFAULT)
        harness.spin(listen_s, lambda: len(received["markers"]) >= 3 and len(received["frequencies"]) >= 3)
        return {"latched": latched, "received": received, "computations": monitor.computations,
                "republished": monitor.republished}


def test_late_volatile_subscriber_gets_the_current_modes():
    run = late_volatile_subscriber(5.0, 10.0)
    frequencies, markers = run["received"]["frequencies"], run["received"]["markers"]
    assert len(frequencies) >= 3 and len(markers) >= 3, run["received"]
    assert run["computations"] == 1                                   # the robot held still: one computation
    for msg in frequencies:
        np.testing.assert_array_equal(as_array(msg.data), as_array(run["latched"][0].data))
    stamps = [time_seconds(msg.markers[0].header.stamp) for msg in markers]
    assert all(b > a for a, b in zip(stamps, stamps[1:])), stamps    # re-stamped on each republish
    assert [m.ns for m in markers[-1].markers][:2] == ["rest", "mode_1"]


@pytest.mark.parametrize("rate_hz", [0.0])
def test_no_republishing_when_the_rate_is_zero(rate_hz):
    """publish_rate_hz 0: only changes are published (latched), so a volatile late subscriber hears nothing."""
    run = late_volatile_subscriber(rate_hz, 1.5)
    assert run["received"] == {"frequencies": [], "markers": []} and run["republished"] == 0
