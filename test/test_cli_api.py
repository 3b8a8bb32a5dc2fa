"""Issue 12, item 5: the Python API beside the command line.

Quoted failures covered here: "``dynamics.feedforward(robot, "move.yaml")`` refuses a path (load_trajectory exists
but is not documented)"; "``oma.read_signals`` cannot read a bag unless ``flexrobot_ros.commands.oma`` was imported
first".
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.model import load_robot


def test_feedforward_accepts_a_trajectory_path(tmp_path):
    """A path (str or Path) gives the same result as the Poly9Trajectory the YAML describes."""
    path = tmp_path / "move.yaml"
    path.write_text("profile: poly9\nduration: 0.5\nq0: [0, 0]\nqf: [0.4, -0.3]\n")
    robot = load_robot("planar_2r")
    direct = feedforward(robot, Poly9Trajectory(np.zeros(2), np.array([0.4, -0.3]), 0.5), "ejnea", rate_hz=200.0)
    for given in (path, str(path)):
        result = feedforward(robot, given, "ejnea", rate_hz=200.0)
        np.testing.assert_array_equal(result.tau_m, direct.tau_m)
        np.testing.assert_array_equal(result.q_m, direct.q_m)


def test_read_signals_reads_a_bag_in_a_fresh_interpreter(tmp_path):
    """Only flexrobot_ros.oma is imported (not the command module, not the runtime layer): the bag's JointState
    channels come back with the values written."""
    from flexrobot_ros.runtime.bag_writer import JointStateSeries, write_joint_state_bag

    t = np.arange(200) / 1000.0
    position = np.column_stack([np.sin(2 * np.pi * 5 * t), np.cos(2 * np.pi * 5 * t)])
    bag = write_joint_state_bag(tmp_path / "bag", t, ["joint1", "joint2"],
                                [JointStateSeries("/motor_states", position)])
    code = ("import sys, numpy as np\nfrom flexrobot_ros.oma import read_signals\n"
            f"s = read_signals({str(bag)!r}, ['motor_states.position.*'])\n"
            "print(s.channels, s.data.shape, float(s.data[10, 1]), float(s.t[10]))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('flexrobot_ros.commands', 'flexrobot_ros.runtime', "
            "'cyclonedds'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, loaded = done.stdout.strip().splitlines()
    assert first == (f"('motor_states.position.joint1', 'motor_states.position.joint2') (200, 2) "
                     f"{float(position[10, 1])} {float(t[10])}")
    assert loaded == "[]"
