"""use_sim_time on the standalone runtime (issue 23), against a plain DDS writer of /clock in the test.

What rclpy does (rclpy/time_source.py, rcl's ROS clock and timers), and so what is expected here:
- every node declares the bool parameter ``use_sim_time`` (default false); files, ``-p`` and set requests set it;
- with it true, the node's time is the newest rosgraph_msgs/Clock on ``/clock`` - zero before the first - so
  stamps made with it carry the writer's time exactly, not the wall clock;
- node timers run on that time: no /clock, no calls; a timer of period T fires once per T of simulated time
  (missed periods skipped), wall timers go on meanwhile.
The test writer advances /clock one step at a time and waits until the node has seen each step, so the counts do not
depend on how fast this (shared, loaded) machine spins the nodes.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime import create_node
from flexrobot_ros.runtime.messages import time_seconds
from node_harness import Harness, Probe
from test_nodes_feedforward import desired

CLOCK, JT, JS = "rosgraph_msgs/msg/Clock", "trajectory_msgs/msg/JointTrajectory", "sensor_msgs/msg/JointState"
DIAG = "diagnostic_msgs/msg/DiagnosticArray"
#: rcl_interfaces/msg/ParameterType.PARAMETER_BOOL
BOOL = 1
#: /clock origin of the tests [ns]: 1000 s, far from any wall-clock time
ORIGIN_NS = 1000 * 10**9


class ClockWriter:
    """A plain publisher of /clock in the test; ``set(ns)`` publishes a time and waits until ``node`` has it."""

    def __init__(self, harness: Harness, node) -> None:
        self.harness, self.node = harness, node
        writer = harness.node("clock_writer", files=())
        self.types = writer.types
        self.publisher = writer.create_publisher(writer.types.get(CLOCK), "/clock")
        assert harness.spin(20.0, lambda: self.publisher.get_subscription_count() > 0), "/clock not matched"

    def set(self, ns: int) -> None:
        sec, nanosec = divmod(ns, 10**9)
        msg = self.types.get(CLOCK)(clock=self.types.builtin_interfaces.msg.Time(sec=sec, nanosec=nanosec))
        for _ in range(100):  # best effort: publish again until the node has it
            self.publisher.publish(msg)
            if self.harness.spin(0.2, lambda: self.node.stamp() == msg.clock):
                return
        raise AssertionError(f"the node never saw /clock = {ns} ns")


def test_stamps_and_timers_follow_the_clock_writer():
    with Harness() as harness:
        node = harness.node("sim_timed", {"use_sim_time": True}, files=())
        ticks, wall_ticks = [], []
        node.create_timer(0.01, lambda: ticks.append(node.now()))          # 100 Hz of simulated time
        node.create_wall_timer(0.1, lambda: wall_ticks.append(time.monotonic()))
        clock = ClockWriter(harness, node)

        harness.spin(1.0)   # no /clock yet: time zero, as rclpy's ROS clock before its first message
        assert node.now() == 0.0 and (node.stamp().sec, node.stamp().nanosec) == (0, 0)
        assert ticks == [] and len(wall_ticks) >= 1    # wall timers go on

        clock.set(ORIGIN_NS)   # a jump to 1000 s: stamps are exactly that, not wall time
        assert (node.stamp().sec, node.stamp().nanosec) == (1000, 0) and node.now() == 1000.0
        harness.spin(0.3)
        before = len(ticks)    # the overdue timer fired once for the jump, missed periods skipped
        assert before == 1

        for k in range(1, 1001):   # 1 s of simulated time in 1 ms steps
            clock.set(ORIGIN_NS + k * 10**6)
        harness.spin(0.3)
        assert abs((len(ticks) - before) - 100) <= 1, len(ticks) - before
        assert all(1000.0 <= t <= 1001.0 for t in ticks)
        stood = len(ticks)
        harness.spin(1.0)      # /clock stands still: no more calls
        assert len(ticks) == stood


def test_feedforward_node_stamps_and_streams_in_simulated_time():
    """A real node: with use_sim_time the feedforward node stamps a zero-stamped trajectory with the /clock time and
    streams its 1 kHz torque samples as /clock advances (0.5 s of /clock: samples 0..500), none while it stands
    still; its diagnostics go on in wall time."""
    with Harness() as harness:
        node = harness.node("feedforward_node", {"use_sim_time": True, "method": "ejnea"})
        FeedforwardNode(node)
        probe_node = harness.node("probe", files=())
        probe = Probe(probe_node, {"/motor_trajectory": JT, "/motor_torque": JS, "/diagnostics": DIAG})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        clock = ClockWriter(harness, node)
        assert harness.spin(20.0, lambda: publisher.get_subscription_count() > 0)
        clock.set(ORIGIN_NS)
        publisher.publish(desired(probe_node.types, 0.0))   # stamp zero: "now" for the node
        assert harness.spin(30.0, lambda: probe.messages["/motor_trajectory"])
        stamp = probe.last("/motor_trajectory").header.stamp
        assert (stamp.sec, stamp.nanosec) == (1000, 0)
        harness.spin(0.5)
        assert probe.messages["/motor_torque"] == []     # the stream timer is due one period on: /clock has not moved

        for k in range(1, 51):     # 0.5 s in 10 ms steps
            clock.set(ORIGIN_NS + k * 10**7)
        harness.spin(1.0, lambda: len(probe.messages["/motor_torque"]) >= 501)
        diagnostics = len(probe.messages["/diagnostics"])
        harness.spin(1.5)          # /clock stands still
        stamps = np.array([time_seconds(m.header.stamp) for m in probe.messages["/motor_torque"]])
        assert abs(len(stamps) - 501) <= 1   # t = 0 .. 0.5 s at 1 kHz
        np.testing.assert_allclose(stamps - 1000.0, np.arange(len(stamps)) * 1e-3, atol=1e-6)
        assert len(probe.messages["/diagnostics"]) > diagnostics


def test_use_sim_time_from_files_command_line_and_set_requests(tmp_path):
    with Harness() as harness:
        node = harness.node("plain", files=())
        assert node.parameters["use_sim_time"] is False and abs(node.now() - time.time()) < 5.0

        params = tmp_path / "params.yaml"
        params.write_text("/**:\n  ros__parameters:\n    use_sim_time: true\n")
        assert harness.node("from_file", files=(params,)).use_sim_time
        from_cli = create_node("from_cli", argv=["--ros-args", "-p", "use_sim_time:=true"], backend="dds")
        harness.nodes.append(from_cli)
        assert from_cli.use_sim_time and from_cli.parameters["use_sim_time"] is True

        wrong = tmp_path / "wrong.yaml"
        wrong.write_text("/**:\n  ros__parameters:\n    use_sim_time: 1\n")
        with pytest.raises(RuntimeLayerError, match=r"parameter 'use_sim_time' from .*wrong.yaml.*expected bool"):
            harness.node("wrong", files=(wrong,))

        # the parameter services: listed and typed as rclpy's own parameter, switched off by a set request
        client = harness.node("param_client", files=())
        srv = client.types.rcl_interfaces.srv
        names = harness.call(client.create_client(srv.ListParameters, "/from_file/list_parameters"),
                             srv.ListParameters.Request()).result.names
        assert "use_sim_time" in names
        types = harness.call(client.create_client(srv.GetParameterTypes, "/from_file/get_parameter_types"),
                             srv.GetParameterTypes.Request(names=["use_sim_time"])).types
        assert list(types) == [BOOL]
        value = client.types.rcl_interfaces.msg.ParameterValue(type=BOOL, bool_value=False)
        result = harness.call(client.create_client(srv.SetParameters, "/from_file/set_parameters"),
                              srv.SetParameters.Request(parameters=[client.types.rcl_interfaces.msg.Parameter(
                                  name="use_sim_time", value=value)])).results
        assert [r.successful for r in result] == [True]
        from_file = harness.nodes[1]
        assert not from_file.use_sim_time and abs(from_file.now() - time.time()) < 5.0
