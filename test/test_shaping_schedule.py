"""The sparse schedule of modal analyses of pose-scheduled shaping (default 50 ms, issue 26 part 2 bench) against a
fine one (10 ms, where the shaped reference has converged: 10 ms and 20 ms agree to 2e-9 rad in q_m): the flexible
feedforward of the shaped Scompi move (EJNEA) differs by at most 1e-6 rad in the motor references and 1e-4 of the
motor torques' largest change during the move, the tolerance stated in flexrobot_ros/shaping/pose_scheduled.py."""
import numpy as np
import pytest

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.model import load_robot
from flexrobot_ros.shaping import shape_reference

Q0 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
QF = np.array([0.1, -0.1, 1.6, 0.3, -1.6, 0.3])


@pytest.mark.parametrize("shaper", ["zvd", "ei"])
def test_default_schedule_agrees_with_a_fine_one(shaper):
    robot = load_robot("scompi", tool=True)
    move = Poly9Trajectory(Q0, QF, 0.5)
    fine = shape_reference(robot, move, shaper, schedule_step_s=0.01)
    default = shape_reference(robot, move, shaper)
    assert default.schedule_times.size * 4 < fine.schedule_times.size  # the point: fewer modal analyses
    assert default.added_time_s == pytest.approx(fine.added_time_s, abs=1e-9)
    a, b = (feedforward(robot, s.trajectory, "ejnea", rate_hz=1000.0) for s in (default, fine))
    assert a.t.shape == b.t.shape
    assert np.abs(a.q_m - b.q_m).max() <= 1e-6
    assert np.abs(a.tau_m - b.tau_m).max() <= 1e-4 * np.abs(b.tau_m - b.tau_m[-1]).max()
