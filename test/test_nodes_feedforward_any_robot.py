"""feedforward_node for every shipped robot (issue 25), on the standalone runtime, against the core the command line
runs:

- Canadarm (three flexible links, rigid joints; method 'auto' = 'prescribed', the command line's default): the
  node's motor_trajectory equals :func:`flexrobot_ros.dynamics.feedforward` (the entry of ``flexrobot feedforward``)
  for the spline through the received waypoints to 1e-9 of each quantity's peak, and predicted_deflections streams
  the core's elastic coordinates eta and tip deflections at the torque streams' stamps.
- Moberg 5 with ``target_space: tool``: the node's torques equal seed 002's inverse DAE of the core
  (:func:`flexrobot_ros.dynamics.dae.dae_feedforward.dae_feedforward`, tool output) to 1e-9, and the predicted joint
  deflections are its q_m - W q.
- mixed4 (composed model, method 'auto' = 'prescribed'): the node equals the core and predicts q_e.joint4.
- Bad target-space parameters and unsupported robots/methods in tool space are refused naming the parameter (the
  Canadarm: a planar arm with 3 actuators, redundant for the tool point).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.dynamics import feedforward, predicted_deformation, trajectory_from_joint_trajectory
from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward, feedforward_result
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_trajectory
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime.messages import as_array, time_message, time_seconds
from flexrobot_ros.runtime.names import PREDICTED_DEFLECTIONS_TOPIC
from node_harness import Harness, Probe, states

JT, JS = "trajectory_msgs/msg/JointTrajectory", "sensor_msgs/msg/JointState"
DEFLECTIONS = "/" + PREDICTED_DEFLECTIONS_TOPIC
#: Moberg 5 tool-space move: 0.2 m along x at z = -1.2 m in 0.2 s (rest to rest: two waypoints give the poly9
#: profile), from the start of test_dae_bdf.py's line, with its elbow (q_g_guess of that test).
TOOL_START, TOOL_END, START_JOINTS = [-1.1, -1.2], [-0.9, -1.2], [-0.4335, 2.3005]


def run_node(parameters, names, times, positions, rate_hz, velocities=None, accelerations=None):
    """The node with ``parameters`` (no parameter file) fed one JointTrajectory of ``names``; returns the message
    sent and the probe after the streams ended."""
    with Harness() as harness:
        FeedforwardNode(harness.node("feedforward_node", {"output_rate_hz": rate_hz, **parameters}, files=()))
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_trajectory": JT, "/motor_torque": JS, DEFLECTIONS: JS})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        assert harness.spin(10.0, lambda: publisher.get_subscription_count() > 0)
        types = probe_node.types
        msg = joint_trajectory(types, time_message(types, probe_node.now() + 0.2), names, np.asarray(times),
                               np.asarray(positions), velocities, accelerations)
        publisher.publish(msg)
        assert harness.spin(60.0, lambda: probe.last("/motor_trajectory") is not None)
        count = len(probe.last("/motor_trajectory").points)
        harness.spin(20.0, lambda: len(probe.messages[DEFLECTIONS]) >= count)
    return msg, probe


def trajectory_values(msg, field):
    return np.array([as_array(getattr(point, field)) for point in msg.points])


def assert_close(values, reference, what):
    """``values`` equal ``reference`` to 1e-9 of the reference's peak (the relative error is printed)."""
    assert values.shape == reference.shape, what
    error = np.abs(values - reference).max() / max(np.abs(reference).max(), 1e-12)
    print(f"{what}: max |node - core| = {error:.2e} of the peak {np.abs(reference).max():.4g}")
    assert error <= 1e-9, what


def test_canadarm_node_equals_the_core_and_predicts_the_deflections():
    """The first second of seed 003 eq. 44 (waypoints of config/canadarm_trajectory.yaml every 0.1 s) at 50 Hz:
    51 points equal to the core's q_m, qd_m, qdd_m, tau_m to 1e-9 of their peak; predicted_deflections carries the
    core's eta (6 elastic coordinates, two modes per link) and tip deflections [m] (1e-9 of the peak) at the stamps
    of motor_torque; no joint deflections (the Canadarm's joints are rigid)."""
    from flexrobot_ros.dynamics import load_trajectory
    from flexrobot_ros.model.loader import share_directory

    robot = load_robot("canadarm")
    eq44 = load_trajectory(share_directory() / "config" / "canadarm_trajectory.yaml")
    times = np.linspace(0.0, 1.0, 11)
    points = eq44.evaluate(times)
    msg, probe = run_node({"robot": "canadarm", "tool": False}, list(robot.joint_names), times, points.q, 50.0,
                          points.qd, points.qdd)
    core = feedforward(robot, trajectory_from_joint_trajectory(msg, robot.joint_names), None, rate_hz=50.0)
    assert core.method == "prescribed" and core.t.size == 51
    published = probe.last("/motor_trajectory")
    for field, reference in (("positions", core.q_m), ("velocities", core.qd_m), ("accelerations", core.qdd_m),
                             ("effort", core.tau_m)):
        assert_close(trajectory_values(published, field), reference, field)
    deflections = probe.messages[DEFLECTIONS]
    assert len(deflections) == 51
    names = list(deflections[0].name)
    expected = {**{f"eta.{k}": core.eta[:, k] for k in range(6)}, **core.deflections}
    assert names == list(expected) and len(core.deflections) == 3
    stamps, values, _, _ = states(deflections)
    np.testing.assert_allclose(stamps, states(probe.messages["/motor_torque"])[0], atol=1e-9)
    for k, name in enumerate(names):
        assert_close(values[:, k], expected[name], name)
    assert np.abs(values[:, 6:]).max() > 1e-4  # the motion bends the links (tip deflections [m])



def test_composed_robot_node_equals_the_core_and_predicts_its_extra_coordinate():
    """mixed4 (the composed model: a rigid joint, elastic joints with gear dampers and Coulomb friction, the extra
    elasticity joint4, link 2 a beam), method 'auto' = 'prescribed': a 0.4 s rest-to-rest move (two waypoints) at
    100 Hz gives the core's q_m and tau_m to 1e-9 of their peak, and predicted_deflections carries the elastic
    joints' q_m - W q, the beam's eta, q_e.joint4 [rad] and the tip deflections [m], as the core predicts them."""
    robot = load_robot("mixed4")
    start, end = np.array([0.2, 0.4, -0.6]), np.array([0.4, 0.6, -0.8])
    msg, probe = run_node({"robot": "mixed4", "tool": False}, list(robot.joint_names), [0.0, 0.4],
                          np.stack([start, end]), 100.0)
    core = feedforward(robot, trajectory_from_joint_trajectory(msg, robot.joint_names), None, rate_hz=100.0)
    assert core.method == "prescribed"
    published = probe.last("/motor_trajectory")
    for field, reference in (("positions", core.q_m), ("effort", core.tau_m)):
        assert_close(trajectory_values(published, field), reference, field)
    deflections = probe.messages[DEFLECTIONS]
    names = list(deflections[0].name)
    expected = predicted_deformation(robot, core)
    assert names == list(expected) and "q_e.joint4" in names and "joint_deflection.joint1" not in names
    values = states(deflections)[1]
    for k, name in enumerate(names):
        assert_close(values[:, k], expected[name][:len(values)], name)
    assert np.abs(expected["q_e.joint4"]).max() > 1e-4  # rad: the move swings the wrist spring

def test_tool_space_on_moberg5_gives_the_dae_torques_of_the_core():
    """target_space 'tool' (method 'auto' = 'dae'): the tool point's x, z waypoints [m] in (the plane of the arm), the motor torques of the
    core's inverse DAE (tool output, BDF step 1 / 500 Hz, elbow START_JOINTS) out, to 1e-9 of their peak; the
    predicted deflections are its q_m - W q per joint."""
    robot = load_robot("moberg5")
    msg, probe = run_node({"robot": "moberg5", "tool": False, "target_space": "tool",
                           "tool_space.start_joints": START_JOINTS}, ["x", "z"], [0.0, 0.2],
                          [TOOL_START, TOOL_END], 500.0)
    solution = dae_feedforward(robot, trajectory_from_joint_trajectory(msg, ["x", "z"]), h=1.0 / 500.0,
                               q_g_guess=START_JOINTS, output="tool", tool_axes=("x", "z"))
    core = feedforward_result(robot, solution)
    published = probe.last("/motor_trajectory")
    np.testing.assert_allclose([time_seconds(p.time_from_start) for p in published.points], core.t, atol=1e-9)
    for field, reference in (("positions", core.q_m), ("effort", core.tau_m)):
        assert_close(trajectory_values(published, field), reference, field)
    assert np.abs(core.tau_m).max() > 100.0  # N m: the move needs torque
    deflections = probe.messages[DEFLECTIONS]
    assert list(deflections[-1].name) == ["joint_deflection.joint1", "joint_deflection.joint2"]
    values = states(deflections)[1]
    reference = core.q_m - robot.transmission * core.q
    assert_close(values, reference[:len(values)], "joint deflections")


@pytest.mark.parametrize("robot, parameters, message", [
    ("moberg5", {"target_space": "cartesian"}, r"parameter 'target_space'.*'joint', 'tool'"),
    ("moberg5", {"target_space": "tool"}, r"parameter 'tool_space.start_joints'.*needs 2 link positions"),
    ("moberg5", {"target_space": "tool", "method": "ejnea", "tool_space.start_joints": START_JOINTS},
     r"parameter 'target_space'.*method 'ejnea' inverts joint-space targets only"),
    ("canadarm", {"target_space": "tool", "tool_space.start_joints": [0.0, 0.0, 0.0]},
     r"parameter 'target_space'.*'canadarm' has 3 actuators.*planar arm with 3 actuators.*target space 'joint'"),
    ("scompi", {"target_space": "tool", "tool_space.start_joints": [0.0] * 6},
     r"parameter 'target_space'.*'scompi' has 6 actuators"),
    ("canadarm", {"method": "sdrnea"}, r"parameter 'method'.*'canadarm'.*method 'prescribed'"),
    ("mixed4", {"method": "sdrnea"}, r"parameter 'method'.*'mixed4'.*method 'prescribed'"),
])
def test_unsupported_target_spaces_and_methods_are_refused_naming_the_parameter(robot, parameters, message):
    with Harness() as harness:
        node = harness.node("feedforward_node", {"robot": robot, "tool": False, **parameters}, files=())
        with pytest.raises(RuntimeLayerError, match=message):
            FeedforwardNode(node)


def test_target_space_changes_live_and_a_bad_change_is_refused():
    """On a running Moberg 5 node: target_space 'tool' without start joints is refused naming them (nothing
    changes); with them in the same request it is accepted; an unknown value is refused naming the parameter."""
    with Harness() as harness:
        node = harness.node("feedforward_node", {"robot": "moberg5", "tool": False, "method": "auto"}, files=())
        app = FeedforwardNode(node)
        alone = node.set_parameters({"target_space": "tool"})
        unchanged = (node.parameters["target_space"], app.tool_axes)
        both = node.set_parameters({"target_space": "tool", "tool_space.start_joints": START_JOINTS})
        bad = node.set_parameters({"target_space": "cartesian"})
    assert not alone[0] and "tool_space.start_joints" in alone[1]
    assert unchanged == ("joint", None)
    assert both == (True, "") and app.tool_axes == ("x", "z")
    assert not bad[0] and "target_space" in bad[1] and node.parameters["target_space"] == "tool"
