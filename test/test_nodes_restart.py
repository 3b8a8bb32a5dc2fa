"""A killed node restarted while the others run rejoins them (issue 12, item 3), with nothing else restarted.

SIGKILL the OMA node and start a new one: its subscriptions match the running simulator again and it takes encoder
samples. SIGKILL the simulator and start a new one: its stamps (wall clock at its start + simulated time) resume after
a gap, so the OMA node restarts its window and goes on. Stamps that jump *back* (a bag replayed again, simulated time
from 0) are a new stream too, not a flood of out-of-order samples (in-process test below). The survivors exit 0 on
SIGINT at the end.
"""
from __future__ import annotations

import io
import signal

import pytest

from node_harness import Harness, Probe, node_processes

JS, DIAG = "sensor_msgs/msg/JointState", "diagnostic_msgs/msg/DiagnosticArray"


@pytest.mark.slow
def test_killed_nodes_restarted_rejoin_the_running_ones():
    output = io.StringIO()
    with Harness() as harness:
        node = harness.node("probe")
        probe = Probe(node, {"/motor_states": JS, "/diagnostics": DIAG})
        first = node_processes({"simulator_node": {"real_time_factor": 1.0}, "oma_node": {},
                                "modal_monitor_node": {}}, output)
        with first:
            assert harness.spin(90.0, lambda: all(probe.diagnostics(n) for n in (
                "simulator_node", "modal_monitor_node", "oma_node"))), output.getvalue()
            # 5 s of samples first: the new OMA node's first report (its own count, from 0) is then below this one's
            assert harness.spin(60.0, lambda: probe.count("oma_node", "samples received") > 5000), output.getvalue()

            first._processes["oma_node"].send_signal(signal.SIGKILL)
            before = probe.count("oma_node", "samples received")
            with node_processes({"oma_node": {}}, output) as second_oma:
                assert harness.spin(90.0, lambda: 0 < probe.count("oma_node", "samples received") < before), \
                    output.getvalue()  # the new OMA node reports (its own count starts at 0) ...
                assert harness.spin(30.0, lambda: probe.count("oma_node", "samples received") > 1000), \
                    output.getvalue()  # ... and takes the running simulator's samples
                assert first.exited() == ["oma_node"]  # the simulator and the monitor were not restarted

                gaps = probe.count("oma_node", "window restarts (gaps)")
                first._processes["simulator_node"].send_signal(signal.SIGKILL)
                with node_processes({"simulator_node": {"real_time_factor": 1.0}}, output) as second_sim:
                    assert harness.spin(90.0, lambda: probe.count("oma_node", "window restarts (gaps)") > gaps), \
                        output.getvalue()  # the new simulator's stamps continue after a gap: a new window
                    taken = probe.count("oma_node", "samples received")
                    assert harness.spin(30.0, lambda: probe.count("oma_node", "samples received") > taken + 1000), \
                        output.getvalue()  # the new simulator's stream is taken, not dropped as out of order
                    assert sorted(first.exited()) == ["oma_node", "simulator_node"]
                    results = [(r.name, r.returncode) for r in second_sim.shutdown() + second_oma.shutdown()]
                assert results == [("simulator_node", 0), ("oma_node", 0)], output.getvalue()
            survivors = {r.name: r.returncode for r in first.shutdown()}
    assert survivors["modal_monitor_node"] == 0, output.getvalue()


def test_stamps_jumping_back_start_a_new_stream():
    """A stream whose stamps jump back by more than STREAM_RESTART_S (a bag replayed again, simulated time from 0):
    the OMA node restarts its window and takes the new samples (none counted as out of order); the monitor takes
    the new poses. A step back of less than that is still an out-of-order message, dropped and counted."""
    from flexrobot_ros.nodes.convert import STREAM_RESTART_S, joint_state
    from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
    from flexrobot_ros.nodes.oma_node import OmaNode
    from node_harness import Q8

    JOINTS = [f"joint{k}" for k in range(1, 7)]  # the Scompi's

    with Harness() as harness:
        oma = OmaNode(harness.node("oma_node", {"window_s": 0.5}))
        monitor = ModalMonitorNode(harness.node("modal_monitor_node"))
        node = harness.node("probe")
        publishers = [node.create_publisher(node.types.sensor_msgs.msg.JointState, topic)
                      for topic in ("/motor_states", "/joint_states")]
        assert harness.spin(10.0, lambda: all(p.get_subscription_count() for p in publishers))
        harness.spin(0.3)
        stamps = [100.0 + 0.001 * k for k in range(20)] + [100.0 + 0.019 - 0.5 * STREAM_RESTART_S] + \
                 [5.0 + 0.001 * k for k in range(20)]
        for stamp in stamps:
            for publisher in publishers:
                publisher.publish(joint_state(node.types, node.stamp(stamp), list(JOINTS), Q8 + stamp * 1e-4))
            harness.spin(0.005)
        assert harness.spin(10.0, lambda: oma.samples == 40 and monitor.stamp == stamps[-1])
        assert oma.stream_restarts == 1 and oma.stamp == stamps[-1]
        assert dict(oma.node.input_errors) == {"/motor_states: out-of-order stamp": 1,
                                               "/joint_states: out-of-order stamp": 1}
        assert dict(monitor.node.input_errors) == {"/joint_states: out-of-order stamp": 1}
