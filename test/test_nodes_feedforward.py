"""feedforward_node: a desired link trajectory in, the motor reference trajectory and torque streams out, and end to
end through the simulator.

- In this process: the node's motor_trajectory (SDRNEA, the generated-code method it runs by default) equals the
  EJNEA feedforward of the core (flexrobot_ros.dynamics.feedforward, the independent numeric recursion; thesis
  Fig. 4.11 shows the two agree to 4e-14 N m) for the spline through the received waypoints; the motor_torque and
  link_torque streams carry the same samples at header.stamp + t.
- As processes (feedforward_node -> simulator_node): the simulated links follow the desired trajectory within 2e-6
  rad (m), the bound the simulator's own test proves for the core feedforward + motor PD on this move
  (test_simulation_inputs.py: a 0.3 rad / 5 cm poly9 move in 1 s with references at 1 kHz).
"""
from __future__ import annotations

import io

import numpy as np
import pytest

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward, trajectory_from_joint_trajectory
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_trajectory
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime.messages import as_array, time_seconds
from node_harness import Q8, Harness, Probe, node_processes, states

JT, JS = "trajectory_msgs/msg/JointTrajectory", "sensor_msgs/msg/JointState"
DIAG = "diagnostic_msgs/msg/DiagnosticArray"
#: The move of test_simulation_inputs.py: 5 cm on joint 1 and 0.3 rad on joints 2-6 in 1 s.
MOVE = np.array([0.05, 0.3, -0.3, 0.3, 0.3, 0.3])
#: Simulated time [s] at which the end-to-end move starts: the 1.5 s of wall time before it leave the desired
#: trajectory time to cross two nodes on a loaded machine (else the simulator counts a late reference).
START = 2.0


def desired(types, stamp_s, start_time=0.0):
    """The desired trajectory: 11 waypoints (q, qd, qdd) of the poly9 move from configuration 8."""
    path = Poly9Trajectory(Q8, Q8 + MOVE, 1.0, start_time=start_time)
    points = path.evaluate(np.linspace(start_time, start_time + 1.0, 11))
    from flexrobot_ros.runtime.messages import time_message

    return joint_trajectory(types, time_message(types, stamp_s), [f"joint{i}" for i in range(1, 7)],
                            points.t, points.q, points.qd, points.qdd)


@pytest.fixture(scope="module")
def in_process():
    with Harness() as harness:
        node = harness.node("feedforward_node")
        app = FeedforwardNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_trajectory": JT, "/motor_torque": JS, "/link_torque": JS,
                                   "/diagnostics": DIAG})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        harness.spin(5.0, lambda: publisher.get_subscription_count() > 0)
        msg = desired(probe_node.types, probe_node.now() + 0.3)
        publisher.publish(msg)
        harness.spin(10.0, lambda: len(probe.messages["/link_torque"]) >= 1001)
        harness.spin(1.2)
    return {"app": app, "probe": probe, "sent": msg}


def test_motor_trajectory_equals_the_core_ejnea_feedforward(in_process):
    """1001 points at 1 kHz with the input's stamp; q_m, qd_m, qdd_m, tau_m equal EJNEA's to 1e-9 (relative to each
    quantity's largest value)."""
    robot = load_robot("scompi", tool=True)
    msg = in_process["probe"].last("/motor_trajectory")
    assert time_seconds(msg.header.stamp) == pytest.approx(time_seconds(in_process["sent"].header.stamp), abs=1e-9)
    expected = feedforward(robot, trajectory_from_joint_trajectory(in_process["sent"], robot.joint_names), "ejnea",
                           rate_hz=1000.0)
    assert list(msg.joint_names) == list(robot.joint_names) and len(msg.points) == len(expected.t) == 1001
    t = np.array([time_seconds(p.time_from_start) for p in msg.points])
    np.testing.assert_allclose(t, expected.t, atol=1e-9)
    for field, reference in (("positions", expected.q_m), ("velocities", expected.qd_m),
                             ("accelerations", expected.qdd_m), ("effort", expected.tau_m)):
        values = np.array([as_array(getattr(p, field)) for p in msg.points])
        assert np.abs(values - reference).max() <= 1e-9 * np.abs(reference).max(), field


def test_torque_streams(in_process):
    """motor_torque (q_m, qd_m, tau_m) and link_torque (q, qd, tau) stream every sample once, stamped
    header.stamp + t, values of the published trajectory; the diagnostics count them."""
    probe, app = in_process["probe"], in_process["app"]
    start = time_seconds(in_process["sent"].header.stamp)
    trajectory = probe.last("/motor_trajectory")
    for topic in ("/motor_torque", "/link_torque"):
        stamps, position, _, effort = states(probe.messages[topic])
        assert len(stamps) == 1001
        np.testing.assert_allclose(stamps - start, np.arange(1001) / 1000.0, atol=1e-6)
        if topic == "/motor_torque":
            np.testing.assert_allclose(position, [as_array(p.positions) for p in trajectory.points], atol=1e-12)
            np.testing.assert_allclose(effort, [as_array(p.effort) for p in trajectory.points], atol=1e-9)
        else:
            np.testing.assert_allclose(position[[0, -1]], [Q8, Q8 + MOVE], atol=1e-12)
    values = probe.diagnostics("feedforward_node")
    assert values["method"] == "sdrnea" and int(values["published motor_torque"]) == 1001
    assert app.compute_s < 5.0


def test_link_trajectory_follows_end_to_end():
    """desired_trajectory -> feedforward_node -> motor_trajectory -> simulator_node -> joint_states: the link
    positions (250 Hz) follow the desired spline within 2e-6 during the move and hold its end afterwards."""
    output = io.StringIO()
    with Harness() as harness:
        node = harness.node("probe")
        probe = Probe(node, {"/joint_states": JS, "/diagnostics": DIAG})
        publisher = node.create_publisher(node.types.get(JT), "/desired_trajectory")
        run = node.create_client(node.types.std_srvs.srv.SetBool, "/simulator_node/run")
        launcher = node_processes({
            "feedforward_node": {},
            "simulator_node": {"excitation.type": "none", "autostart": False, "duration_s": START + 1.5,
                               "real_time_factor": 1.5}}, output)
        with launcher:
            assert harness.spin(90.0, lambda: run.service_is_ready() and publisher.get_subscription_count() > 0 and
                                probe.count("feedforward_node", "motor_trajectory subscribers") > 0), \
                output.getvalue()   # both hops of desired -> feedforward -> simulator matched
            assert harness.call(run, node.types.std_srvs.srv.SetBool.Request(data=True)).success
            harness.spin(5.0, lambda: bool(probe.diagnostics("simulator_node").get("stamp at t = 0 [s]")))
            origin = float(probe.diagnostics("simulator_node")["stamp at t = 0 [s]"])
            msg = desired(node.types, origin + START)                # the move starts at simulated t = START
            publisher.publish(msg)
            harness.spin(60.0, lambda: probe.diagnostics("simulator_node").get("state") == "finished")
            harness.spin(1.2)
            values = probe.diagnostics("simulator_node")
            results = launcher.shutdown()
    assert values["late references"] == "0", output.getvalue()
    assert {r.name: r.returncode for r in results} == {"feedforward_node": 0, "simulator_node": 0}
    stamps, q, _, _ = states(probe.messages["/joint_states"])
    t = stamps - (origin + START)
    spline = trajectory_from_joint_trajectory(msg, [f"joint{i}" for i in range(1, 7)])
    during = (t >= 0.0) & (t <= 1.0)
    error = np.abs(q[during] - spline.evaluate(t[during]).q).max()
    print(f"max |q - q_d| during the move: {error:.3e} over {during.sum()} samples")
    assert during.sum() >= 245 and error < 2e-6
    after = t > 1.0
    assert np.abs(q[after] - (Q8 + MOVE)).max() < 2e-6
    before = t < 0.0
    assert np.abs(q[before] - Q8).max() < 1e-12
