"""simulator_node and modal_monitor_node with the Canadarm (flexible links, rigid joints) on the standalone runtime:
the node publishes link_deflections (links x [w_y, w_z]) that an impact excites and the deformed link ends on tf,
and the monitor's modes are the
link-layer linearization's at the pose it received (closed loop, link modes included)."""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.simulator_node import SimulatorNode
from flexrobot_ros.runtime.messages import as_array
from node_harness import Harness, Probe

ARRAY, JS, TF = "std_msgs/msg/Float64MultiArray", "sensor_msgs/msg/JointState", "tf2_msgs/msg/TFMessage"
MARKERS = "visualization_msgs/msg/MarkerArray"
POSE = [0.4, -1.1, 0.7]


def test_canadarm_nodes():
    robot = load_robot("canadarm")
    with Harness() as harness:
        parameters = {"robot": "canadarm", "tool": False, "set_point": POSE, "set_points": [], "rate_hz": 200.0,
                      "duration_s": 0.5, "real_time_factor": 2.0, "autostart": True,
                      "excitation.type": "impacts", "excitation.first_s": 0.1, "excitation.period_s": 100.0,
                      "impact.force": [0.0, 200.0, 0.0], "impact.duration_s": 0.05, "joint_states_decimation": 1,
                      "link_shapes_rate_hz": 50.0}
        app = SimulatorNode(harness.node("simulator_node", parameters, files=()))
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {"robot": "canadarm", "tool": False},
                                                files=()))
        probe = Probe(harness.node("probe"), {"/link_deflections": ARRAY, "/joint_states": JS, "/tf": TF,
                                              "/modal/frequencies": ARRAY, "/link_shapes": MARKERS}, latched=["/modal/frequencies"])
        harness.spin(60.0, lambda: app.state == "finished" and len(probe.messages["/link_deflections"]) >= 100
                     and len(probe.messages["/link_shapes"]) >= 20
                     and probe.last("/modal/frequencies") is not None)
    deflections = np.array([as_array(m.data) for m in probe.messages["/link_deflections"]])
    assert deflections.shape[1] == 3 * 2
    assert np.max(np.abs(deflections)) > 1e-5  # the impact bends the arm
    # tf: the deformed end frame of link 1 sits at its undeformed tip (6, 0, 0) plus its deflection along y
    tips = [e for m in probe.messages["/tf"] for e in m.transforms if e.child_frame_id == "link1/deformed_tip"]
    assert tips and all(e.header.frame_id == "link1" for e in tips)
    assert max(abs(e.transform.translation.y) for e in tips) > 1e-5
    assert all(abs(e.transform.translation.x - 6.0) < 1e-9 for e in tips)
    # link_shapes: one 16-point line strip per flexible link in its own frame, from the clamped root (the link origin)
    # to the deformed tip: the tip point is the deformed_tip frame's origin on tf at the same stamp (tip deflection
    # matrix, seed 003 eq. 10) and the tip deflection published on link_deflections
    shapes = probe.messages["/link_shapes"]
    assert len(shapes) >= 20 and all(len(m.markers) == 3 for m in shapes)
    tip_at = {(e.header.stamp.sec, e.header.stamp.nanosec, e.child_frame_id): e.transform.translation
              for m in probe.messages["/tf"] for e in m.transforms if e.child_frame_id.endswith("/deformed_tip")}
    published = deflections.reshape(-1, 3, 2)
    matched, bent = 0, 0.0
    for m in shapes:
        for k, (marker, link, length) in enumerate(zip(m.markers, ("link1", "link2", "link3"), (6.0, 7.0, 2.0))):
            assert marker.header.frame_id == link and marker.type == 4  # LINE_STRIP
            points = np.array([[p.x, p.y, p.z] for p in marker.points])
            assert points.shape == (16, 3)
            np.testing.assert_allclose(points[0], 0.0, atol=1e-12)
            np.testing.assert_allclose(points[:, 0], np.linspace(0.0, length, 16), atol=1e-12)  # inextensible
            assert np.min(np.abs(published[:, k, 0] - points[-1, 1])) < 1e-12
            tip = tip_at.get((marker.header.stamp.sec, marker.header.stamp.nanosec, f"{link}/deformed_tip"))
            if tip is not None:
                np.testing.assert_allclose([tip.x, tip.y, tip.z], points[-1], atol=1e-12)
                matched += 1
            bent = max(bent, float(np.max(np.abs(points[:, 1]))))
    assert matched >= 3 * 5 and bent > 1e-5
    # the monitor: the closed-loop modes of the composed model at the pose it received
    expected = elastic_robot_modes(ElasticRobot(robot), monitor.computed).frequencies_hz
    np.testing.assert_allclose(as_array(probe.last("/modal/frequencies").data), expected, rtol=1e-9)
    assert expected.size >= 3 + 6  # 9 coordinates; heavily damped joint modes may split into real pairs


def test_simulator_node_decoupling_controller_moves_the_rrp():
    """The simulator node's ``controller: decoupling`` (seed 004 section 3): a set-point move of the RRP (links 2
    flexible, rigid joints) is tracked by the decoupling law along a 0.5 s path, then the LQR loop holds the target:
    the joints arrive (1e-4) and the link-2 tip vibration decays below 0.1 mm by 1 s after the move."""
    target = [1.5, 0.7, 0.9]
    with Harness() as harness:
        parameters = {"robot": "rrp", "tool": True, "set_point": [0.0, 0.0, 0.3], "set_points": target,
                      "set_point_move_s": 0.5, "controller": "decoupling", "rate_hz": 250.0, "duration_s": 1.6,
                      "real_time_factor": 100.0, "autostart": False, "excitation.type": "none",
                      "joint_states_decimation": 1}
        app = SimulatorNode(harness.node("simulator_node", parameters, files=()))
        node = harness.node("probe")
        probe = Probe(node, {"/link_deflections": ARRAY, "/joint_states": JS})
        trigger, run = node.types.std_srvs.srv.Trigger, node.types.std_srvs.srv.SetBool
        assert harness.call(node.create_client(trigger, "/simulator_node/set_point"), trigger.Request()).success
        assert app.mode == "decoupling"
        assert harness.call(node.create_client(run, "/simulator_node/run"), run.Request(data=True)).success
        harness.spin(120.0, lambda: app.state == "finished" and len(probe.messages["/joint_states"]) >= 390)
    positions = np.array([as_array(m.position) for m in probe.messages["/joint_states"]])
    np.testing.assert_allclose(positions[-1], target, atol=1e-4)
    deflections = np.array([as_array(m.data) for m in probe.messages["/link_deflections"]])
    assert np.abs(deflections).max() > 1e-3          # the move bends link 2
    assert np.abs(deflections[-60:]).max() < 1e-4    # the last 0.24 s: below 0.1 mm


def test_modal_monitor_streams_the_decoupled_closed_loop_along_the_motion():
    """Seed 004 Figs. 9-10 on the monitor (``controller: decoupling``, the shipped RRP with links 2 and 3 flexible):
    fed the joint states of the section 5 motion, it streams the decoupling law's closed-loop modes at each pose.
    At the start (at rest) they are the joint loop's poles, sqrt(G_p) = 20 rad/s (eq. 34), and the beams' modes with
    every joint locked (eq. 36 with u = 0; `locked_joints`, 1e-6); along the motion the beams' frequencies are within
    5 % of the eigenvalues of the moving, deflected closed loop (``eigenvalues_along_motion``: the simulation under
    the controller and the full closed-loop Jacobian, measured <= 4.2 %), and link 3's fall as it slides out. A robot
    the law does not fit gets a clear error naming the parameter."""
    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.errors import RuntimeLayerError
    from flexrobot_ros.model.loader import share_directory
    from flexrobot_ros.nodes.convert import joint_state
    from flexrobot_ros.simulation.decoupling_control import DecouplingControl, eigenvalues_along_motion
    from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

    robot = load_robot("rrp", tool=True)
    trajectory = load_trajectory(share_directory() / "config" / "rrp_trajectory.yaml")
    times = [0.0, 0.1, 0.25]
    streamed = []
    with Harness() as harness:
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {
            "robot": "rrp", "tool": True, "controller": "decoupling", "threshold": 0.0, "max_rate_hz": 100.0,
            "publish_rate_hz": 0.0}, files=()))
        node = harness.node("probe")
        probe = Probe(node, {"/modal/frequencies": ARRAY, "/modal/damping": ARRAY},
                      latched=["/modal/frequencies", "/modal/damping"])
        publisher = node.create_publisher(node.types.sensor_msgs.msg.JointState, "/joint_states")
        harness.spin(5.0, lambda: publisher.get_subscription_count() > 0)
        for k, t in enumerate(times):
            pose = trajectory.evaluate(t).q[0]
            publisher.publish(joint_state(node.types, node.stamp(1e9 + 1e8 * k), robot.joint_names, pose))
            assert harness.spin(60.0, lambda: monitor.computed is not None and np.allclose(monitor.computed, pose)
                                and len(probe.messages["/modal/damping"]) == k + 1)
            streamed.append((as_array(probe.last("/modal/frequencies").data),
                             as_array(probe.last("/modal/damping").data)))
    frequencies, damping = streamed[0]
    locked = elastic_robot_modes(ElasticRobot(robot), trajectory.evaluate(0.0).q[0],
                                 locked_joints=True).frequencies_hz
    np.testing.assert_allclose(frequencies[damping < 0.5], locked, rtol=1e-6)
    np.testing.assert_allclose(frequencies[damping >= 0.5], 20.0 / (2 * np.pi), rtol=1e-6)
    plant = ElasticRobotPlant(robot)
    _, eigenvalues = eigenvalues_along_motion(plant, DecouplingControl(plant, trajectory), times[1:])
    for (frequencies, damping), values in zip(streamed[1:], eigenvalues):
        moving = values[(values.imag > 1e-6) & (-values.real < 0.5 * np.abs(values))]
        moving = np.sort(np.abs(moving)) / (2 * np.pi)
        beams = frequencies[damping < 0.5]
        assert beams.shape == moving.shape == locked.shape
        np.testing.assert_allclose(beams, moving, rtol=0.05)
    assert streamed[2][0][streamed[2][1] < 0.5][3] < 0.5 * locked[3]  # link 3 slid out (0.3 -> 0.65 m): 150 -> 61 Hz
    with Harness() as harness, pytest.raises(RuntimeLayerError, match="'controller': decoupling .* planar_2r"):
        ModalMonitorNode(harness.node("modal_monitor_node", {"robot": "planar_2r", "controller": "decoupling"},
                                      files=()))
