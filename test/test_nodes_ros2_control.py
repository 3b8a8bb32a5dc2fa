"""feedforward_node's outputs for ros2_control (issue 23), on the standalone runtime, in this process.

- ``ros2_control.output: joint_trajectory``: a trajectory_msgs/JointTrajectory on
  ``/joint_trajectory_controller/joint_trajectory`` (DDS type and RIHS01 hash of Jazzy's), joints in the order of
  ``ros2_control.joints``, positions/velocities/accelerations = the motor reference, effort = tau_m - W^-1 g(q) with
  ``drive_compensates: gravity``, where g(q) is pinocchio's ``computeGeneralizedGravity`` called here and tau_m the
  core's EJNEA feedforward (independent numeric recursion; thesis Fig. 4.11: 4e-14 N m from SDRNEA).
- A joint_trajectory_controller-shaped consumer written here interpolates the effort linearly between the points
  (as the README says the controller does) and recovers the torque of a 20 kHz EJNEA reference within 1 % of each
  joint's peak at the 50 Hz point rate, and within the bound the node reports in its diagnostics.
- ``ros2_control.positions: link`` (node in namespace /link): the points' positions are the link spline's.
- ``ros2_control.output: commands``: std_msgs/Float64MultiArray on ``/cmd/effort_controller/commands`` at
  ``output_rate_hz`` (100 Hz: 101 messages over the 1 s move), the motor torque in the controller's joint order.
- Bad ``ros2_control.joints`` / controller names are refused at start-up naming the parameter.
"""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward, trajectory_from_joint_trajectory
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_trajectory
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime.messages import as_array, time_message, time_seconds
from flexrobot_ros.runtime.qos import QOS_STREAM
from node_harness import Q8, Harness, Probe, published_type_hashes

JT, FMA = "trajectory_msgs/msg/JointTrajectory", "std_msgs/msg/Float64MultiArray"
DIAG = "diagnostic_msgs/msg/DiagnosticArray"
#: The move of test_nodes_feedforward.py: 5 cm on joint 1 and 0.3 rad on joints 2-6 in 1 s from configuration 8.
MOVE = np.array([0.05, 0.3, -0.3, 0.3, 0.3, 0.3])
JOINTS = [f"joint{i}" for i in range(1, 7)]
#: The controller's joint order (a permutation, to check the reordering).
CONTROLLER_JOINTS = ["joint6", "joint5", "joint4", "joint3", "joint2", "joint1"]
ORDER = [JOINTS.index(j) for j in CONTROLLER_JOINTS]
JTC_RATE_HZ, COMMANDS_RATE_HZ = 50.0, 100.0


def desired(types, stamp_s):
    """11 waypoints (q, qd, qdd) of the poly9 move."""
    points = Poly9Trajectory(Q8, Q8 + MOVE, 1.0).evaluate(np.linspace(0.0, 1.0, 11))
    return joint_trajectory(types, time_message(types, stamp_s), JOINTS, points.t, points.q, points.qd, points.qdd)


def gravity_at_motor(robot, q):
    """W^-1 g(q) [N m] per sample: pinocchio's computeGeneralizedGravity through the transmission W."""
    data = robot.model.createData()
    return np.array([pin.computeGeneralizedGravity(robot.model, data, qk) for qk in q]) / robot.transmission


@pytest.fixture(scope="module")
def received():
    arrivals = []
    with Harness() as harness:
        jtc_node = harness.node("feedforward_node", {
            "ros2_control.output": "joint_trajectory", "drive_compensates": "gravity",
            "ros2_control.joints": CONTROLLER_JOINTS, "output_rate_hz": JTC_RATE_HZ, "stream_torques": False})
        FeedforwardNode(jtc_node)
        cmd_node = harness.node("feedforward_node", {
            "ros2_control.output": "commands", "ros2_control.controller": "effort_controller",
            "ros2_control.joints": CONTROLLER_JOINTS, "output_rate_hz": COMMANDS_RATE_HZ, "stream_torques": False},
            namespace="cmd")
        FeedforwardNode(cmd_node)
        link_node = harness.node("feedforward_node", {
            "ros2_control.output": "joint_trajectory", "ros2_control.positions": "link", "output_rate_hz": JTC_RATE_HZ,
            "stream_torques": False, "method": "ejnea"}, namespace="link")
        FeedforwardNode(link_node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/joint_trajectory_controller/joint_trajectory": JT, "/diagnostics": DIAG,
                                   "/link/joint_trajectory_controller/joint_trajectory": JT})
        probe_node.create_subscription(probe_node.types.get(FMA), "/cmd/effort_controller/commands",
                                       lambda msg: arrivals.append((time.monotonic(), msg)), QOS_STREAM.keeping_all())
        publishers = [probe_node.create_publisher(probe_node.types.get(JT), topic)
                      for topic in ("/desired_trajectory", "/cmd/desired_trajectory", "/link/desired_trajectory")]
        assert harness.spin(10.0, lambda: all(p.get_subscription_count() > 0 for p in publishers))
        sent = desired(probe_node.types, probe_node.now() + 0.3)
        for publisher in publishers:
            publisher.publish(sent)
        harness.spin(15.0, lambda: len(arrivals) >= 101)
        harness.spin(1.5)
        hashes = published_type_hashes(["rt/joint_trajectory_controller/joint_trajectory",
                                        "rt/cmd/effort_controller/commands"])
    return {"probe": probe, "sent": sent, "arrivals": arrivals, "hashes": hashes}


def test_ros_types_and_jazzy_type_hashes(received):
    """The writers are typed trajectory_msgs::msg::dds_::JointTrajectory_ and std_msgs::msg::dds_::Float64MultiArray_
    and carry the RIHS01 hash rosbags computes from its Jazzy typestore (the REP 2011 algorithm, outside this
    package; no char fields, so no rosidl difference)."""
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    for topic, typename in (("rt/joint_trajectory_controller/joint_trajectory", JT),
                            ("rt/cmd/effort_controller/commands", FMA)):
        package, kind, name = typename.split("/")
        assert received["hashes"][topic] == (f"{package}::{kind}::dds_::{name}_",
                                             f"typehash={store.hash_rihs01(typename)};".encode())


def test_joint_trajectory_points_subtract_exactly_the_gravity_torque(received):
    """51 points at 50 Hz in the controller's joint order; positions/velocities/accelerations = motor reference,
    effort = tau_m - W^-1 g(q) to 1e-9 of the peak torque."""
    robot = load_robot("scompi", tool=True)
    msg = received["probe"].last("/joint_trajectory_controller/joint_trajectory")
    assert msg is not None and list(msg.joint_names) == CONTROLLER_JOINTS
    expected = feedforward(robot, trajectory_from_joint_trajectory(received["sent"], JOINTS), "ejnea",
                           rate_hz=JTC_RATE_HZ)
    assert len(msg.points) == len(expected.t) == 51
    t = np.array([time_seconds(p.time_from_start) for p in msg.points])
    np.testing.assert_allclose(t, np.arange(51) / JTC_RATE_HZ, atol=1e-9)
    gravity = gravity_at_motor(robot, expected.q)
    assert np.abs(gravity).max() > 10.0  # the pose is loaded: the subtraction is visible
    for field, reference in (("positions", expected.q_m), ("velocities", expected.qd_m),
                             ("accelerations", expected.qdd_m), ("effort", expected.tau_m - gravity)):
        values = np.array([as_array(getattr(p, field)) for p in msg.points])
        reference = reference[:, ORDER]
        assert np.abs(values - reference).max() <= 1e-9 * np.abs(reference).max(), field


def test_link_positions_on_request(received):
    """``ros2_control.positions: link``: positions/velocities/accelerations are the link spline through the
    waypoints (robot's joint order, ``drive_compensates: none``: effort = tau_m), to 1e-9 of each peak."""
    robot = load_robot("scompi", tool=True)
    msg = received["probe"].last("/link/joint_trajectory_controller/joint_trajectory")
    assert msg is not None and list(msg.joint_names) == JOINTS
    path = trajectory_from_joint_trajectory(received["sent"], JOINTS)
    t = np.arange(51) / JTC_RATE_HZ
    spline = path.evaluate(t)
    tau_m = feedforward(robot, path, "ejnea", rate_hz=JTC_RATE_HZ).tau_m
    for field, reference in (("positions", spline.q), ("velocities", spline.qd), ("accelerations", spline.qdd),
                             ("effort", tau_m)):
        values = np.array([as_array(getattr(p, field)) for p in msg.points])
        assert np.abs(values - reference).max() <= 1e-9 * np.abs(reference).max(), field


def jtc_effort(msg, t):
    """The effort a joint_trajectory_controller commands at times ``t`` [s from start]: linear interpolation
    between the two points around each time (held at the last point after the end)."""
    times = np.array([time_seconds(p.time_from_start) for p in msg.points])
    effort = np.array([as_array(p.effort) for p in msg.points])
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    fraction = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
    return effort[k] + fraction * (effort[k + 1] - effort[k])


def test_linear_interpolation_of_the_points_recovers_the_torque_within_1_percent(received):
    """Between the 50 Hz points, the interpolated effort differs from the 20 kHz EJNEA torque (tau_m - W^-1 g) by
    at most 1 % of each joint's peak, and by no more than the node's reported bound (+5 % of it)."""
    robot = load_robot("scompi", tool=True)
    msg = received["probe"].last("/joint_trajectory_controller/joint_trajectory")
    fine = feedforward(robot, trajectory_from_joint_trajectory(received["sent"], JOINTS), "ejnea", rate_hz=20000.0)
    truth = (fine.tau_m - gravity_at_motor(robot, fine.q))[:, ORDER]
    error = np.abs(jtc_effort(msg, fine.t) - truth).max(axis=0) / np.abs(truth).max(axis=0)
    reported = float(received["probe"].diagnostics("feedforward_node")["effort interpolation error [% of peak]"])
    print(f"linear interpolation at {JTC_RATE_HZ:g} Hz: {np.round(100 * error, 4).tolist()} % of the peak per joint; "
          f"node's bound {reported:.4g} %")
    assert error.max() < 0.01
    assert 100 * error.max() <= 1.05 * reported


def test_commands_stream_at_the_output_rate(received):
    """101 Float64MultiArray messages (one per 10 ms sample of the 1 s move), spread over 1 s of arrival time,
    each the motor torque tau_m of that sample in the controller's joint order."""
    robot = load_robot("scompi", tool=True)
    arrivals = received["arrivals"]
    expected = feedforward(robot, trajectory_from_joint_trajectory(received["sent"], JOINTS), "ejnea",
                           rate_hz=COMMANDS_RATE_HZ).tau_m[:, ORDER]
    assert len(arrivals) == 101
    span = arrivals[-1][0] - arrivals[0][0]
    print(f"101 commands over {span:.3f} s")
    assert 0.85 <= span <= 1.2
    values = np.array([as_array(msg.data) for _, msg in arrivals])
    assert np.abs(values - expected).max() <= 1e-9 * np.abs(expected).max()


@pytest.mark.parametrize("parameters, message", [
    ({"ros2_control.joints": ["joint1", "joint2"]}, "parameter 'ros2_control.joints'"),
    ({"ros2_control.output": "commands", "ros2_control.controller": "9bad name"},
     "parameter 'ros2_control.controller'"),
])
def test_bad_ros2_control_parameters_are_refused_naming_them(parameters, message):
    with Harness() as harness:
        node = harness.node("feedforward_node", {"method": "ejnea", **parameters})
        with pytest.raises(RuntimeLayerError, match=message):
            FeedforwardNode(node)


def test_a_too_slow_point_rate_is_warned_with_a_rate_that_keeps_1_percent():
    """At 10 Hz the interpolated effort errs by more than 1 %: the node warns and names an output_rate_hz; replaying
    EJNEA torques sampled at that rate (core, 20 kHz reference) keeps the error under 1 % of each joint's peak."""
    import re

    from node_harness import LogRecords

    robot = load_robot("scompi", tool=True)
    log = LogRecords("/feedforward_node")
    try:
        with Harness() as harness:
            node = harness.node("feedforward_node", {"ros2_control.output": "joint_trajectory", "method": "ejnea",
                                                     "output_rate_hz": 10.0, "stream_torques": False})
            FeedforwardNode(node)
            probe_node = harness.node("probe")
            probe = Probe(probe_node, {"/joint_trajectory_controller/joint_trajectory": JT})
            publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
            assert harness.spin(10.0, lambda: publisher.get_subscription_count() > 0)
            sent = desired(probe_node.types, probe_node.now())
            publisher.publish(sent)
            assert harness.spin(10.0, lambda: probe.last("/joint_trajectory_controller/joint_trajectory") is not None)
        warnings = [w for w in log.warnings() if "output_rate_hz >=" in w]
    finally:
        log.close()
    assert len(warnings) == 1, log.warnings()
    print(warnings[0])
    rate = float(re.search(r"output_rate_hz >= (\d+) Hz", warnings[0]).group(1))
    path = trajectory_from_joint_trajectory(sent, JOINTS)
    fine = feedforward(robot, path, "ejnea", rate_hz=20000.0)
    for rate_hz, within in ((10.0, False), (rate, True)):
        t = np.arange(0.0, 1.0 + 1e-9, 1.0 / rate_hz)
        if t[-1] < 1.0 - 1e-9:
            t = np.append(t, 1.0)
        coarse = feedforward(robot, path, "ejnea", t=t)
        replay = np.column_stack([np.interp(fine.t, t, coarse.tau_m[:, j]) for j in range(6)])
        error = (np.abs(replay - fine.tau_m).max(axis=0) / np.abs(fine.tau_m).max(axis=0)).max()
        print(f"{rate_hz:g} Hz: {100 * error:.3f} % of the peak")
        assert (error < 0.01) == within
