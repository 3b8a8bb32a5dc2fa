"""Issue 38 item 5: the RRP ships joint PD gains that hold it (config/rrp.yaml had kp = kd = 0, which holds nothing).

The rule in the YAML's comment (critically damped joint loops at w_c = 10 rad/s on each joint's largest inertia over
seed 004's section-5 motion, about a sixth of link 2's first locked-joint mode) is checked against its inputs
computed independently (pinocchio's CRBA of the rigid URDF plus link 2's hub inertia I_2 = 3.2 kg m^2 of the
YAML), the closed loop's modes at the motion's start, middle and end poses against what the rule promises, and the
simulated robot, with gravity turned on, holds a pose it is pushed away from.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import load_trajectory
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.timeseries import read_timeseries

#: The rule's loop frequency [rad/s], link 2's hub inertia [kg m^2] (config/rrp.yaml), seed 004's motion.
OMEGA_C, HUB_2 = 10.0, 3.2
MOTION = share_directory() / "config" / "rrp_trajectory.yaml"


@pytest.fixture(scope="module")
def rrp():
    return load_robot("rrp", tool=True)


def test_the_shipped_gains_follow_the_rule(rrp):
    """kp = J w_c^2, kd = 2 J w_c with J each joint's largest inertia over the motion (pinocchio's CRBA diagonal at
    51 times, joint 2 plus its hub: 0.975, 4.02 kg m^2, 0.513 kg) within the rule's rounding (3 %), and w_c at most a
    sixth of link 2's first locked-joint mode (62.69 rad/s at the start pose, test_rrp_model.py)."""
    data = rrp.model.createData()
    samples = load_trajectory(MOTION).evaluate(np.linspace(0.0, 0.5, 51))
    inertia = np.array([np.diag(pin.crba(rrp.model, data, q)) for q in samples.q]).max(axis=0)
    inertia[1] += HUB_2
    np.testing.assert_allclose(inertia, [0.975, 4.02, 0.513], rtol=2e-3)
    np.testing.assert_allclose(rrp.kp / (inertia * OMEGA_C ** 2), 1.0, atol=0.03)
    np.testing.assert_allclose(rrp.kd / (2 * inertia * OMEGA_C), 1.0, atol=0.03)
    locked = 2 * np.pi * modal_analysis(rrp, samples.q[0], locked_joints=True).frequencies_hz.min()
    assert locked == pytest.approx(62.69, abs=0.01) and OMEGA_C <= locked / 6


@pytest.mark.parametrize("time_s", [0.0, 0.25, 0.5])
def test_the_closed_loop_is_stable_and_its_joint_loops_well_damped(rrp, time_s):
    """Held at the poses of the motion by the shipped PD (closed-loop linearization of the composed model): no mode
    grows (every real part <= 1e-9 |lambda|; the kHz beam modes the joints do not reach keep the beams' zero damping,
    to round-off), the modes below 10 Hz (the joint loops, w_c / 2 pi = 1.6 Hz) have damping ratios >= 0.85, and the
    beam modes between 10 and 60 Hz, which couple to the joints, get 2-15 %. Without gains (the former YAML) the
    joints are held by nothing: zero eigenvalues."""
    pose = load_trajectory(MOTION).evaluate([time_s]).q[0]
    modes = modal_analysis(rrp, pose)
    assert np.all(modes.eigenvalues.real <= 1e-9 * np.abs(modes.eigenvalues))
    low = modes.frequencies_hz < 10.0
    assert low.sum() >= 3 and modes.damping_ratios[low].min() >= 0.85
    coupled = (modes.frequencies_hz >= 10.0) & (modes.frequencies_hz < 60.0)
    assert coupled.any() and np.all((modes.damping_ratios[coupled] > 0.02) & (modes.damping_ratios[coupled] < 0.15))
    free = modal_analysis(rrp, pose, kp=np.zeros(3), kd=np.zeros(3))
    assert not free.stable and np.abs(free.eigenvalues).min() < 1e-6


def test_the_shipped_rrp_holds_a_pose_under_gravity(tmp_path, capsys):
    """config/rrp.yaml with gravity turned on (-9.81 m/s^2 along z, the joint-1 axis: joint 2 and the beams carry
    it), started 0.05 rad / 0.05 m away from the held pose (0.5, 0.3 rad, 0.65 m) at rest: with the shipped gains
    (``flexrobot simulate``, PD + gravity compensation, 1 kHz) every joint is back within 1e-4 of that offset from
    2.5 s on; with kp = kd = 0 nothing pulls it back: it falls until the simulator stops it (exit 2: the state left
    its valid range, the linearized closed loop at the set point unstable)."""
    yaml = (share_directory() / "config" / "rrp.yaml").read_text()
    yaml = yaml.replace("urdf: ../urdf/rrp.urdf", f"urdf: {share_directory() / 'urdf' / 'rrp.urdf'}")
    yaml = yaml.replace("gravity: [0.0, 0.0, 0.0]", "gravity: [0.0, 0.0, -9.81]")
    path = tmp_path / "rrp_gravity.yaml"
    path.write_text(yaml)
    assert list(load_robot(str(path)).gravity) == [0.0, 0.0, -9.81]
    pose, offset = np.array([0.5, 0.3, 0.65]), np.array([0.05, 0.05, -0.05])
    arguments = ["simulate", str(path), "--tool", "--q0", ",".join(map(str, pose + offset)), "--set-point",
                 ",".join(map(str, pose)), "--duration", "3", "--rate", "1000", "--out", str(tmp_path / "run.csv")]
    assert main(arguments) == 0
    t, columns = read_timeseries(tmp_path / "run.csv")
    q = np.column_stack([columns[f"q.joint{i}"] for i in (1, 2, 3)])
    error = np.abs(q - pose)[t >= 2.5].max(axis=0)
    print(f"from 2.5 s on, max |q - q_d| with the shipped gains: {error} [rad, rad, m]")
    assert np.all(error <= 1e-4 * np.abs(offset))
    capsys.readouterr()
    assert main([*arguments, "--kp", "0", "--kd", "0"]) == 2
    message = capsys.readouterr().err
    assert "the simulated state left the valid range" in message
    assert "The linearized closed loop at the set point is unstable" in message
