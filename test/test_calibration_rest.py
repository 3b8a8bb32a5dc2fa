"""The calibration node's rest wait (issue 26): at a reached pose it excites only once every joint velocity of
``joint_states`` has stayed at most ``rest.velocity`` for ``rest.hold_s`` of stream time.

Standalone runtime, the node in this process with ``move: wait``; this test plays the robot: ``joint_states`` at
the pose every 10 ms of stream time (the stamps), joint 2's velocity ringing at 5e-3 rad/s (an arm still swinging
after its move) for the first 0.5 s, then 1e-4 rad/s. With ``rest.velocity`` 1e-3 rad/s and ``rest.hold_s`` 0.2 s
the pose is reached at the first sample stamped 0.2 s after the ringing stopped (0.5 + 0.2 s); a robot ringing
throughout fails at its pose through the calibration procedure (:func:`calibrate`), the report naming the pose, the
parameter and the velocity seen.
"""
from __future__ import annotations

import threading

import numpy as np

from flexrobot_ros.identification.calibration import calibrate
from flexrobot_ros.nodes.calibration_node import CalibrationNode
from flexrobot_ros.runtime.messages import float_sequence, time_message
from node_harness import REPO, Harness

POSE = np.array([0.0, -0.4, 1.9, 0.0, -1.9, 0.0])
NAMES = [f"joint{i}" for i in range(1, 7)]
RINGING_S, STEP_S = 0.5, 0.01
PARAMETERS = {"robot": str(REPO / "config" / "scompi.yaml"), "move": "wait", "settle_s": 0.0, "timeout_s": 5.0,
              "rest.velocity": 1e-3, "rest.hold_s": 0.2, "rest.timeout_s": 2.0}


def play(ringing_s: float, operation) -> tuple[object, float]:
    """Run ``operation(app)`` in a worker (as the node's calibration thread) while joint_states stream the pose;
    return its outcome (value or exception) and the stamp [s] of the last sample the node received."""
    with Harness() as harness:
        node = harness.node("calibration_node", PARAMETERS, files=())
        app = CalibrationNode(node)
        app.settings = dict(app.p)
        probe = harness.node("probe")
        states = probe.create_publisher(probe.types.sensor_msgs.msg.JointState, "/joint_states")
        assert harness.spin(10.0, lambda: states.get_subscription_count() >= 1)
        outcome: list[object] = []
        worker = threading.Thread(target=lambda: outcome.append(_run(operation, app)), daemon=True)
        worker.start()
        k = 0
        while worker.is_alive() and k < 1000:
            velocity = np.zeros(6)
            velocity[1] = 5e-3 * (-1) ** k if k * STEP_S < ringing_s else 1e-4
            msg = probe.types.sensor_msgs.msg.JointState(name=NAMES, position=float_sequence(POSE),
                                                          velocity=float_sequence(velocity))
            msg.header.stamp = time_message(probe.types, k * STEP_S)
            states.publish(msg)
            harness.spin(STEP_S, lambda: not worker.is_alive())
            k += 1
        worker.join(10.0)
        return outcome[0], app.pose_stamp


def _run(operation, app):
    try:
        return operation(app)
    except Exception as error:  # the outcome to check
        return error


def test_the_pose_counts_as_reached_once_the_robot_rests():
    """Not before the stamp 0.7 s (0.2 s of rest after 0.5 s of ringing), at the pose."""
    outcome, _ = play(RINGING_S, lambda app: (app.move_to(POSE), app.pose_stamp))
    assert isinstance(outcome, tuple), outcome
    reached, stamp = outcome
    np.testing.assert_array_equal(reached, POSE)
    assert stamp >= RINGING_S + 0.2 - 1e-9


def test_a_robot_that_keeps_ringing_fails_at_its_pose_naming_the_parameter():
    """Ringing at 5e-3 rad/s throughout: calibrate() stops at pose 1 in the move step after rest.timeout_s."""
    result, _ = play(100.0, lambda app: calibrate(app.robot, [POSE, POSE], app, progress=lambda message: None))
    assert result.identification is None and result.failure is not None
    text = result.failure.describe()
    assert text.startswith("pose 1 (q = ") and "move failed: the robot did not come to rest" in text
    assert "'rest.timeout_s'" in text and "largest joint velocity 0.005 rad/s" in text
