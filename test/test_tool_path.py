"""The rigid tool path of a joint trajectory as a tool-space reference (issue 25, "the waypoint trajectories that
exist"): :class:`~flexrobot_ros.dynamics.dae.tool_path.ToolPath` and the deformed tool following it.

flexarm2 (config/flexarm2.yaml) with a poly9 move q = (0.3, 1.2) -> (0.7, 0.9) rad in 0.6 s (thesis eqs. 4.29-4.32).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.dynamics.feedforward import tool_path
from flexrobot_ros.errors import TrajectoryError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.model import load_robot

Q0, QF, DURATION_S = [0.3, 1.2], [0.7, 0.9], 0.6


@pytest.fixture(scope="module")
def robot():
    return load_robot("flexarm2")


def _rigid_tool(robot, q: np.ndarray) -> np.ndarray:
    """x, y [m] of tool0 of the URDF's rigid robot at joint positions q (pinocchio forward kinematics)."""
    data = robot.model.createData()
    frame = robot.model.getFrameId("tool0")
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[frame].translation[:2].copy()


def test_tool_path_is_the_rigid_tool_with_exact_derivatives(robot):
    """theta(t) is the rigid tool at q(t - t0) (pinocchio, written here), resting outside the motion; theta' and
    theta'' equal central differences of theta and theta' (step 1e-6 s) to 1e-7 m/s and 1e-6 m/s^2."""
    trajectory = Poly9Trajectory(Q0, QF, DURATION_S)
    path = tool_path(robot, trajectory)
    shifted = type(path)(path.kinematics, trajectory, t0=0.2)
    t = np.linspace(-0.1, 0.9, 11)
    theta, rate, acceleration = shifted.evaluate(t, 2)
    q = trajectory.evaluate(np.clip(t - 0.2, 0.0, DURATION_S)).q
    np.testing.assert_allclose(theta, [_rigid_tool(robot, qi) for qi in q], rtol=0, atol=1e-15)
    step = 1e-6
    np.testing.assert_allclose(rate, (shifted.evaluate(t + step, 0)[0] - shifted.evaluate(t - step, 0)[0]) / (2 * step),
                               rtol=0, atol=1e-7)
    np.testing.assert_allclose(acceleration,
                               (shifted.evaluate(t + step, 1)[1] - shifted.evaluate(t - step, 1)[1]) / (2 * step),
                               rtol=0, atol=1e-6)
    assert shifted.continuity == 4 and shifted.dimension == 2


def test_deformed_tool_follows_the_rigid_tool_path(robot):
    """feedforward(robot, tool_path(...), 'dae') at h = 8 ms: the deformed tool of the solution (the model's
    coordinates through the DeNOC placement) is at the rigid tool of q(t - t0) at every step after the first to
    1e-9 m, and the joints end at q_f (the beams at rest) to 1e-5 rad; rigid-link robots are refused (their links
    following the trajectory put the tool on the path), and so is --tool-path with --line."""
    trajectory = Poly9Trajectory(Q0, QF, DURATION_S)
    result = feedforward(robot, tool_path(robot, trajectory), "dae", rate_hz=125.0)
    assert result.method == "dae"
    moving = np.flatnonzero(np.abs(result.q - result.q[0]).max(axis=1) > 0)
    assert result.t[moving[0]] < 0.06    # pre-actuation: the joints move before the tool (at most 0.05 s)
    model = ElasticRobot(robot)
    frame = model.frame_id("tool0")
    start = 0.05   # the motion's start: the 0.05 s minimum pre-actuation (6 / 123.1 rad/s, the unstable zero, is less)
    q_rigid = trajectory.evaluate(np.clip(result.t - start, 0.0, DURATION_S)).q
    for i in range(1, len(result.t)):
        y = model.coordinates(result.q[i], eta=result.eta[i])
        np.testing.assert_allclose(model.frame_placement(y, frame).translation[:2], _rigid_tool(robot, q_rigid[i]),
                                   rtol=0, atol=1e-9, err_msg=f"t = {result.t[i]}")
    np.testing.assert_allclose(result.q[-1], QF, rtol=0, atol=1e-5)
    with pytest.raises(TrajectoryError, match="rigid links"):
        feedforward(load_robot("planar_2r"), tool_path(load_robot("planar_2r"), Poly9Trajectory(Q0, QF, 0.6)), "dae")
    assert main(["feedforward", "flexarm2", "--line", "0.6,0.3", "0.4,0.6", "--duration", "0.6", "--tool-path",
                 "--out", "x.csv"]) == 2
