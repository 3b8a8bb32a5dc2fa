"""Tool-space targets of feedforward_node on robots with flexible links (issue 25), on the standalone runtime,
against the core's tool-space entry (:func:`flexrobot_ros.dynamics.feedforward` with a tool reference, the entry of
``flexrobot feedforward --line``), and a waypoint tool trajectory checked in the simulator.

Robot flexarm2 (config/flexarm2.yaml): planar two-link arm, both 0.5 m links flexible, rigid joints under the shipped
PD (K_P = 20 N m/rad, K_D = 2 N m s/rad); its tip is non-minimum phase (unstable zeros near +123 and +174 rad/s,
test/test_tool_space_feedforward.py), so the general model's whole-trajectory optimization runs with 0.05 s of
pre-actuation.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from flexrobot_ros.dynamics import feedforward, predicted_deformation, spline_through_waypoints, tool_feedforward
from flexrobot_ros.dynamics.dae.reference import CartesianLine, ToolTrajectory
from flexrobot_ros.dynamics.dae.tool_space_feedforward import tool_space_feedforward
from flexrobot_ros.dynamics.feedforward import tool_space_feedforward_result
from flexrobot_ros.errors import RuntimeLayerError, TrajectoryError
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_trajectory
from flexrobot_ros.nodes.feedforward_node import FeedforwardNode
from flexrobot_ros.runtime.messages import as_array, time_message, time_seconds
from flexrobot_ros.runtime.names import PREDICTED_DEFLECTIONS_TOPIC
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from node_harness import Harness, Probe, states

JT, JS = "trajectory_msgs/msg/JointTrajectory", "sensor_msgs/msg/JointState"
DIAGNOSTICS = "diagnostic_msgs/msg/DiagnosticArray"
DEFLECTIONS = "/" + PREDICTED_DEFLECTIONS_TOPIC
#: A short straight tool move [m] in 0.3 s (two waypoints at rest: the spline is the degree-9 rest-to-rest profile,
#: a CartesianLine of continuity 4), from the start of test_tool_space_feedforward.py's line, elbow up.
START, END, DURATION_S, RATE_HZ = [0.6, 0.3], [0.5, 0.4], 0.3, 250.0
START_JOINTS = [-0.37, 1.67]
#: A waypoint tool trajectory [m] (times [s]) from START to the end of test_tool_space_feedforward.py's line.
WAYPOINT_TIMES = [0.0, 0.25, 0.5, 0.8]
WAYPOINTS = [[0.6, 0.3], [0.56, 0.42], [0.47, 0.5], [0.4, 0.6]]


@pytest.fixture(scope="module")
def robot():
    return load_robot("flexarm2")


def assert_close(values, reference, what, tolerance=1e-9):
    """``values`` equal ``reference`` to ``tolerance`` of the reference's peak (the relative error is printed)."""
    assert values.shape == reference.shape, what
    error = np.abs(values - reference).max() / max(np.abs(reference).max(), 1e-12)
    print(f"{what}: max |node - core| = {error:.2e} of the peak {np.abs(reference).max():.4g}")
    assert error <= tolerance, what


def test_flexarm2_tool_move_equals_the_core_line_with_deflections_and_zeros(robot):
    """target_space 'tool' (method 'auto' = 'dae'), x, y waypoints of a 0.3 s straight move at 250 Hz: the node's
    motor_trajectory (times, q_m, qd_m, tau_m) equals feedforward(robot, CartesianLine(..., continuity=4), 'dae') to
    1e-9 of each peak (qdd_m to 1e-8: the BDF derivative of the optimization's iterate, which stops within ~5e-10
    of its peak: the core alone from two start guesses differs by that much); predicted_deflections streams the
    core's eta and tip deflections (1e-9 of the peak); the diagnostics name the optimization and the unstable
    zeros."""
    with Harness() as harness:
        FeedforwardNode(harness.node("feedforward_node", {
            "robot": "flexarm2", "tool": False, "target_space": "tool", "tool_space.start_joints": START_JOINTS,
            "output_rate_hz": RATE_HZ}, files=()))
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_trajectory": JT, DEFLECTIONS: JS, "/diagnostics": DIAGNOSTICS})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        assert harness.spin(10.0, lambda: publisher.get_subscription_count() > 0)
        types = probe_node.types
        publisher.publish(joint_trajectory(types, time_message(types, probe_node.now() + 0.2), ["x", "y"],
                                           np.array([0.0, DURATION_S]), np.array([START, END])))
        assert harness.spin(60.0, lambda: probe.last("/motor_trajectory") is not None)
        count = len(probe.last("/motor_trajectory").points)
        harness.spin(20.0, lambda: len(probe.messages[DEFLECTIONS]) >= count)

        def solver_reported():
            last = probe.last("/diagnostics")
            return last is not None and any(v.key == "tool-space solver" for v in last.status[0].values)
        assert harness.spin(5.0, solver_reported)
    core = feedforward(robot, CartesianLine(START, END, 0.0, DURATION_S, continuity=4), "dae", rate_hz=RATE_HZ)
    assert core.solver == "optimization" and core.unstable_zeros.size == 22  # 2 per pose, 11 poses
    published = probe.last("/motor_trajectory")
    np.testing.assert_allclose([time_seconds(p.time_from_start) for p in published.points], core.t, atol=1e-9)
    for field, reference, tolerance in (("positions", core.q_m, 1e-9), ("velocities", core.qd_m, 1e-9),
                                        ("accelerations", core.qdd_m, 1e-8), ("effort", core.tau_m, 1e-9)):
        assert_close(np.array([as_array(getattr(p, field)) for p in published.points]), reference, field, tolerance)
    expected = predicted_deformation(robot, core)
    deflections = probe.messages[DEFLECTIONS]
    assert list(deflections[0].name) == list(expected) == ["eta.0", "eta.1", "deflection.link1.y",
                                                           "deflection.link2.y"]
    values = states(deflections)[1]
    assert len(values) == core.t.size
    for k, name in enumerate(expected):
        assert_close(values[:, k], expected[name], name)
    assert np.abs(expected["deflection.link1.y"]).max() > 1e-3  # m: the move bends the links
    report = {v.key: v.value for v in probe.last("/diagnostics").status[0].values}
    assert report["tool-space solver"] == "optimization" and report["unstable zeros"] == "22"
    status = probe.last("/diagnostics").status[0]
    assert report["tool-space converged"] == "True" and status.level == type(status).OK
    assert "non-minimum phase" in report["tool-space zeros"] and report["slowest unstable zero [rad/s]"] == "123.1+0j"


def test_waypoint_tool_trajectory_reaches_each_waypoint_in_the_simulator(robot):
    """Four tool waypoints [m] (free interior velocities, the node's spline), BDF step 4 ms: the model's deformed
    tip is on the spline at every step after the first (1e-9 m); the torque and motor references with the shipped
    PD in the simulator (ElasticRobotPlant at 500 Hz, its own integration; tip from the DeNOC placement) put the
    deformed tip within 0.5 mm of each waypoint at its time (after the 0.05 s pre-actuation)."""
    trajectory = ToolTrajectory(spline_through_waypoints(WAYPOINT_TIMES, np.array(WAYPOINTS)))
    solved = tool_space_feedforward(robot, trajectory, h=4e-3, q_g_guess=START_JOINTS)
    assert solved.solver == "optimization" and solved.reference.t0 == pytest.approx(0.05)
    assert solved.solution.output_error()[1:].max() < 1e-9
    result = tool_space_feedforward_result(robot, solved)
    plant = ElasticRobotPlant(robot)
    controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
    t0 = solved.reference.t0
    out = Simulation(plant, controller, q0=result.q[0], rate=500.0).run(t0 + WAYPOINT_TIMES[-1] + 0.01)
    frame = plant.model.frame_id(robot.tool_frame)
    for time_s, point in zip(WAYPOINT_TIMES, WAYPOINTS):
        k = int(np.argmin(np.abs(out.t - (t0 + time_s))))
        assert abs(out.t[k] - (t0 + time_s)) < 1e-9
        tip = plant.model.frame_placement(plant.coordinates(out.states[k])[0], frame).translation[:2]
        error = float(np.linalg.norm(tip - point))
        print(f"waypoint {point} m at {time_s} s: deformed tip {1e3 * error:.3f} mm away")
        assert error <= 0.5e-3


def test_tool_space_honours_check_limits(robot):
    """The general solver's joints are checked against the URDF limits: with joint2's upper limit lowered to 1 rad
    (the move's elbow is near 1.67 rad) tool_feedforward (the node's call, through feedforward's tool-space entry)
    refuses naming the joint; with check_limits False it returns."""
    tight = dataclasses.replace(robot, upper_limits=np.array([3.1416, 1.0]))
    path = spline_through_waypoints([0.0, DURATION_S], np.array([START, END]))
    with pytest.raises(TrajectoryError, match="joint 'joint2'.*above the upper limit 1 rad"):
        tool_feedforward(tight, path, start_joints=START_JOINTS, rate_hz=RATE_HZ)
    free = tool_feedforward(tight, path, start_joints=START_JOINTS, rate_hz=RATE_HZ, check_limits=False)
    assert free.q[:, 1].max() > 1.0


@pytest.mark.parametrize("parameters, message", [
    ({"method": "prescribed"}, r"parameter 'target_space'.*method 'prescribed' inverts joint-space targets only"),
    ({"shaper": "zv"}, r"parameter 'shaper'.*target_space 'tool' it must be 'none'"),
    ({"tool_space.start_joints": [0.0, 1.0, 0.0]}, r"parameter 'tool_space.start_joints'.*needs 2 link positions"),
])
def test_bad_tool_space_combinations_are_refused_naming_the_parameter(parameters, message):
    with Harness() as harness:
        node = harness.node("feedforward_node", {"robot": "flexarm2", "tool": False, "target_space": "tool",
                                                 "tool_space.start_joints": START_JOINTS, **parameters}, files=())
        with pytest.raises(RuntimeLayerError, match=message):
            FeedforwardNode(node)
