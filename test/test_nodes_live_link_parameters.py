"""Live flexible-link parameters (issue 26): ``model.link_EI`` and ``model.link_damping_ratio`` on the modal monitor
and the feedforward node, standalone runtime (nodes and probe in this process, loopback DDS).

The Canadarm of seed 003 (three beams, EI = 1e5 N m^2 each in config/canadarm.yaml, rigid joints held by the YAML's
PD gains) at the first pose of its point-to-point move (q0 of config/canadarm.yaml). The values set are those the
calibration node pushes for a calibrated robot (:func:`flexrobot_ros.nodes.live_model.model_values` of the robot
with every link's EI x 1.15, the factor of test/test_link_calibration.py). References: the core's modal analysis
(:func:`flexrobot_ros.modal.modal_analysis`, the dispatch of ``flexrobot modal``) and its prescribed
feedforward of ``with_link_parameters(EI x 1.15)``, the same functions on the same robot, hence 1e-9. The change
must matter: EI x 1.15 moves the lowest link mode by 7 % and the feedforward's motor torque by 23 % of its peak on
this move. Refused: a wrong count, EI = 0, a damping ratio of 1, link values on the Scompi (no flexible links).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.dynamics import feedforward, trajectory_from_joint_trajectory
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_trajectory
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.nodes.live_model import model_values
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.runtime.messages import as_array, float_sequence, time_message
from node_harness import REPO, Harness, Probe

JS, JT, FA = "sensor_msgs/msg/JointState", "trajectory_msgs/msg/JointTrajectory", "std_msgs/msg/Float64MultiArray"
#: config/canadarm.yaml's q0 [rad], and a 1 s poly9 move from it (0.3 rad per joint), inverted at 50 Hz.
POSE = np.array([0.0, 0.6, -0.8])
MOVE = np.array([0.3, -0.3, 0.3])
RATE_HZ = 50.0
EI_FACTOR = 1.15
#: The shipped YAMLs by path (a robot name makes load_robot parse every shipped YAML to list them: 1-2 s of CPU).
CANADARM, SCOMPI = str(REPO / "config" / "canadarm.yaml"), str(REPO / "config" / "scompi.yaml")


def desired(types, stamp_s):
    """The desired trajectory: 6 waypoints (q, qd, qdd) of the poly9 move from POSE."""
    points = Poly9Trajectory(POSE, POSE + MOVE, 1.0).evaluate(np.linspace(0.0, 1.0, 6))
    return joint_trajectory(types, time_message(types, stamp_s), ["joint1", "joint2", "joint3"], points.t, points.q,
                            points.qd, points.qdd)


@pytest.fixture(scope="module")
def run():
    nominal = load_robot(CANADARM)
    stiffer = nominal.with_link_parameters({link: {"EI": EI_FACTOR * spec.EI_y}
                                            for link, spec in nominal.flexible_links.items()})
    values = model_values(stiffer, joints=False)
    with Harness() as harness:
        monitor_node = harness.node("modal_monitor_node", {"robot": CANADARM}, files=())
        monitor = ModalMonitorNode(monitor_node)
        ff_node = harness.node("feedforward_node", {"robot": CANADARM, "output_rate_hz": RATE_HZ,
                                                    "stream_torques": False}, files=())
        ff = FeedforwardNode(ff_node)
        scompi_node = harness.node("modal_monitor_node", {"robot": SCOMPI}, files=(), namespace="scompi")
        ModalMonitorNode(scompi_node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/modal/frequencies": FA, "/modal/damping": FA, "/motor_trajectory": JT},
                      latched=["/modal/frequencies", "/modal/damping"])
        types = probe_node.types
        states = probe_node.create_publisher(types.sensor_msgs.msg.JointState, "/joint_states")
        trajectories = probe_node.create_publisher(types.get(JT), "/desired_trajectory")
        assert harness.spin(10.0, lambda: states.get_subscription_count() >= 1
                            and trajectories.get_subscription_count() >= 1)
        msg = types.sensor_msgs.msg.JointState(name=["joint1", "joint2", "joint3"], position=float_sequence(POSE))
        msg.header.stamp = probe_node.stamp()
        states.publish(msg)
        assert harness.spin(10.0, lambda: monitor.computations == 1 and probe.last("/modal/frequencies") is not None)
        before = probe.array("/modal/frequencies")
        refusals = {label: target.set_parameters(change) for label, (target, change) in {
            "count": (monitor_node, {"model.link_EI": values["model.link_EI"][:2]}),
            "zero EI": (ff_node, {"model.link_EI": [1e5, 0.0, 1e5]}),
            "damping 1": (monitor_node, {"model.link_damping_ratio": [0.0, 1.0, 0.0]}),
            "no links": (scompi_node, {"model.link_EI": [1e5]}),
        }.items()}
        unchanged = (monitor.robot, ff.robot, monitor.computations)
        published = len(probe.messages["/modal/frequencies"])
        accepted = {"monitor": monitor_node.set_parameters(values), "feedforward": ff_node.set_parameters(values)}
        assert harness.spin(10.0, lambda: monitor.computations == 2
                            and len(probe.messages["/modal/frequencies"]) > published)
        sent = desired(types, probe_node.now() + 0.2)
        trajectories.publish(sent)
        assert harness.spin(30.0, lambda: len(probe.messages["/motor_trajectory"]) == 1)
    return {"nominal": nominal, "stiffer": stiffer, "values": values, "before": before, "refusals": refusals,
            "unchanged": unchanged, "nodes": (monitor.robot, ff.robot), "accepted": accepted, "probe": probe,
            "sent": sent, "parameters": dict(monitor_node.parameters)}


def test_the_monitor_streams_the_modes_of_the_robot_with_the_new_EI(run):
    """After model.link_EI = 1.15 x 1e5 N m^2: frequencies and damping of modal_analysis(robot with those EI) at the pose
    to 1e-9; before it, the nominal robot's (and they differ by more than 5 %)."""
    assert run["accepted"]["monitor"] == (True, "")
    assert run["parameters"]["model.link_EI"] == tuple(EI_FACTOR * 1e5 for _ in range(3))
    expected, nominal = modal_analysis(run["stiffer"], POSE), modal_analysis(run["nominal"], POSE)
    np.testing.assert_allclose(run["before"], nominal.frequencies_hz, rtol=1e-9)
    np.testing.assert_allclose(run["probe"].array("/modal/frequencies"), expected.frequencies_hz, rtol=1e-9)
    np.testing.assert_allclose(run["probe"].array("/modal/damping"), expected.damping_ratios, rtol=1e-9, atol=1e-12)
    assert np.abs(expected.frequencies_hz[2] / nominal.frequencies_hz[2] - 1.0) > 0.05


def test_the_feedforward_inverts_the_next_trajectory_on_the_new_EI(run):
    """The next motor_trajectory equals the core's prescribed feedforward of the robot with the new EI to 1e-9 of
    each quantity's peak; the nominal robot's torque differs by more than 10 % of the peak."""
    assert run["accepted"]["feedforward"] == (True, "")
    robot = run["stiffer"]
    path = trajectory_from_joint_trajectory(run["sent"], robot.joint_names)
    expected = feedforward(robot, path, "prescribed", rate_hz=RATE_HZ)
    nominal = feedforward(run["nominal"], path, "prescribed", rate_hz=RATE_HZ)
    msg = run["probe"].last("/motor_trajectory")
    assert len(msg.points) == len(expected.t) == 51
    for field, reference in (("positions", expected.q_m), ("velocities", expected.qd_m),
                             ("accelerations", expected.qdd_m), ("effort", expected.tau_m)):
        values = np.array([as_array(getattr(p, field)) for p in msg.points])
        np.testing.assert_allclose(values, reference, rtol=0.0, atol=1e-9 * np.abs(reference).max(), err_msg=field)
    assert np.abs(nominal.tau_m - expected.tau_m).max() > 0.1 * np.abs(expected.tau_m).max()


def test_bad_link_values_are_refused_naming_the_parameter(run):
    """Each refusal names the parameter and what is wrong; nothing changed (same robots, no recomputation)."""
    refusals = run["refusals"]
    assert not any(ok for ok, _ in refusals.values())
    assert "'model.link_EI'" in refusals["count"][1] and "expected 3 values" in refusals["count"][1]
    assert "'model.link_EI'" in refusals["zero EI"][1] and "link2.EI: expected > 0" in refusals["zero EI"][1]
    assert "'model.link_damping_ratio'" in refusals["damping 1"][1] and "[0, 1)" in refusals["damping 1"][1]
    assert "'model.link_EI'" in refusals["no links"][1] and "no flexible links" in refusals["no links"][1]
    monitor_robot, ff_robot, computations = run["unchanged"]
    assert monitor_robot.flexible_links == run["nominal"].flexible_links
    assert ff_robot.flexible_links == run["nominal"].flexible_links and computations == 1


def test_the_calibration_push_values_are_the_calibrated_robots(run):
    """model_values (what the calibration node pushes): EI per link in the YAML's order, damping ratios alike; the
    nodes' robots carry them."""
    assert run["values"] == {"model.link_EI": [EI_FACTOR * 1e5] * 3, "model.link_damping_ratio": [0.0] * 3}
    for robot in run["nodes"]:
        assert {link: spec.EI_y for link, spec in robot.flexible_links.items()} == {
            link: EI_FACTOR * 1e5 for link in ("link1", "link2", "link3")}
