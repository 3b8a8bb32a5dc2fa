"""Issue 36, item 7 d: ``flexrobot bringup simulation <flexibility YAML>`` on the four vendor robots of
vendor_cases.py (example-robot-data's Panda, UR10, Kinova j2s6s200, TIAGo), as a user runs it (a separate process on
loopback, the four nodes as its children, test_bringup.py's way): at both holds of the scripted experiment the OMA
node's modes match at least 70 % of the monitor's modes below the encoders' Nyquist limit (500 Hz at 1 kHz) within
0.1 Hz and 0.5 damping points, the bring-up's own tolerances (seed 000 Table 2.5's kind of agreement).

The parameter file is the shipped generic one (config/simulation.yaml, what ``bringup simulation`` reads for a robot
without a file of its own) with the robot's poses A and B as the simulator's ``set_point`` and ``set_points``, and an
impact that is not along one axis: 30 N with components along all three world axes plus a 7.5 N m moment (a blow off
the tool axis). The thesis' 50 N along y0 alone leaves wrist joints nearly still on these arms (at pose A the Kinova's
joint 6 moves 0.01 mrad peak to peak after it and the UR10's wrist 3 0.004 mrad, against 8.8 and 1.3 mrad after this
wrench), so their modes are hardly in the record.

``--duration 6`` at a real-time factor of 2 (what the simulator keeps up on a 7-axis arm), as the Scompi's bring-up
test: at 6 s repeated runs matched, per pose, Panda 13-14 of 14, UR10 10-11 of 11, Kinova 10-11 of 11, TIAGo 12 of 14;
at 4 s (OMA windows of 1.35 s) the Panda's and the UR10's pose B fell to 10 of 14 and 8 of 11, the margin gone. The
wall time, 12-17 s per robot on a 2-core machine, is mostly the nodes' start and stop; the 6 simulated seconds cost 3.
The poses avoid very pose-sensitive modes: at the first Kinova pose tried ((0.3, 2.6, 1.6, 1.0, 2.8, 0.5) rad) its 134 Hz mode moves
0.3 Hz per mrad, and the monitor, which follows the pose within 1 mrad while the impact's vibration decays, missed the
0.1 Hz tolerance there in some runs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

import runtime_peer as peer
from flexrobot_ros.model.loader import share_directory
from vendor_cases import ROBOTS
from vendor_robots import vendor_folder

FOLDER = vendor_folder()
pytestmark = pytest.mark.skipif(FOLDER is None, reason="example-robot-data is not installed (pip install .[test])")

#: The impact wrench [N, N m] in world axes at the tool frame, 6 ms long (the generic file's duration).
IMPACT = [10.0, -20.0, 20.0, 2.0, -4.0, 6.0]
DURATION_S, REAL_TIME_FACTOR = 6.0, 2.0
#: The acceptance: matched monitor modes per monitor mode below the Nyquist limit, at each pose.
MATCHED_FRACTION = 0.7


def parameter_file(name: str, directory) -> str:
    """config/simulation.yaml with the robot's poses A, B and the impact of the module docstring."""
    document = yaml.safe_load((share_directory() / "config" / "simulation.yaml").read_text())
    simulator = document["simulator_node"]["ros__parameters"]
    simulator.update(set_point=list(ROBOTS[name].pose_a), set_points=list(ROBOTS[name].pose_b))
    simulator["impact"]["force"] = IMPACT
    path = directory / f"{name}_simulation.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_bringup_matches_70_percent_of_the_observable_modes(name, tmp_path):
    robot = ROBOTS[name]
    flexibility = robot.write_yaml(FOLDER, tmp_path)
    completed = subprocess.run(
        [sys.executable, "-m", "flexrobot_ros.cli", "bringup", "simulation", str(flexibility), "--params",
         parameter_file(name, tmp_path), "--duration", str(DURATION_S), "--real-time-factor", str(REAL_TIME_FACTOR),
         "--json"], env=peer.loopback_env(), capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-4000:]
    summary = json.loads(completed.stdout)
    assert summary["stopped"] == "finished" and summary["robot"] == name and summary["nyquist_hz"] == 500.0
    assert {n["name"]: (n["returncode"], n["stopped_by"]) for n in summary["nodes"]} == {
        node: (0, "sigint") for node in ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node")}
    n = len(robot.pose_a)
    lines = []
    for phase, pose in zip(summary["phases"], (robot.pose_a, robot.pose_b)):
        np.testing.assert_allclose(phase["q"], pose, rtol=0, atol=1e-12)
        assert len(phase["modes"]) == 2 * n
        observable = sum(f < 500.0 for f in phase["monitor"]["frequencies_hz"])
        assert phase["observable"] == observable
        lines.append(f"{name} {phase['name']}: {phase['matched']} of {observable} modes below 500 Hz matched")
        assert phase["matched"] >= MATCHED_FRACTION * observable, (phase["modes"], completed.stderr[-3000:])
    assert [phase["name"] for phase in summary["phases"]] == ["pose A", "pose B"]
    tracking = summary["tracking"]
    assert tracking["samples"] > 300  # the move from A to B (1.5 s of link states at 250 Hz) happened
    print("; ".join(lines) + f"; move max |q - q_d| {tracking['max_error']:.2e} rad; wall "
          f"{summary['wall_time_s']:.1f} s")
