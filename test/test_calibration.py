"""Self-calibration procedure (flexrobot_ros.identification.calibration, issue 26) driven in-process.

The "robot" is the simulator running a true Scompi whose joint stiffnesses differ from the shipped YAML (Table 2.1,
seed 000) by seeded factors in [0.8, 1.2] and link damping by [0.7, 1.3]; the calibration starts from the shipped
YAML. Each pose: the simulated robot is brought to rest at the pose under PD + gravity compensation, struck on the
tool flange and its motor encoders recorded for 2 s at 1 kHz; the modes come from SSI-cov. The blow is seed 000
section 2.4.3's 50 N along y0 for 6 ms, landing 0.1 m above the flange centre (x0 is up) instead of on the wrist axis:
the moment 0.1 m x 50 N = 5 N m about z0 (3.7-4.5 N m about axis 6 at every pose) excites joint 6's 13.1 Hz motor
mode, whose damping carries d_f6; a blow through the wrist axis leaves that mode unexcited (OMA then finds it with a
shape of noise, MAC 0.03-0.65 with the model) and d_f6, which sets joint 6's tracking error, undetermined. The
references are the true parameters themselves and the modal analysis of the true
robot (which reproduces seed 000 Table 2.5's analytical columns, test_modal_tables.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.errors import CalibrationError
from flexrobot_ros.identification.calibration import CalibrationOptions, calibrate
from flexrobot_ros.identification.modal_data import MeasuredMode
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.oma import identify_modes
from flexrobot_ros.simulation import (FeedforwardPD, FixedStepIntegration, PDGravityCompensation, RectangularPulse,
                                     Simulation)
from flexrobot_ros.simulation.impact_experiment import thesis_configuration

CALIBRATION_POSES = [thesis_configuration(i) for i in (1, 12, 25, 38, 50)] + [[0.1, 0.3, 1.2, 0.8, -1.2, 0.5]]
VALIDATION_POSES = [thesis_configuration(i) for i in (5, 30)] + [[-0.1, -0.2, 1.6, 0.4, -1.6, -0.3]]
RECORD_S = 2.0
#: The calibration's impact [N, N m], world axes at tool0: 50 N along y0 struck 0.1 m along x0 from the flange centre.
IMPACT = (0.0, 50.0, 0.0, 0.0, 0.0, 5.0)


def true_robot(seed: int = 26):
    """The shipped Scompi with k scaled by U[0.8, 1.2] and d_f by U[0.7, 1.3] (seeded), and the nominal one."""
    nominal = load_robot("scompi")
    rng = np.random.default_rng(seed)
    k_factor, d_factor = rng.uniform(0.8, 1.2, nominal.n), rng.uniform(0.7, 1.3, nominal.n)
    return nominal.with_parameters(stiffness=nominal.stiffness * k_factor,
                                   link_damping=nominal.link_damping * d_factor), nominal


class SimulatedCell:
    """The calibration cell on an in-process simulation of ``robot``; ``fail_at`` makes that move (0-based) fail."""

    def __init__(self, robot, fail_at: int | None = None) -> None:
        self.robot, self.fail_at, self.moves = robot, fail_at, 0
        self.simulation = None

    def move_to(self, pose):
        if self.moves == self.fail_at:
            raise CalibrationError("the robot did not report the pose within 0.001 rad after 30 s")
        self.moves += 1
        self.simulation = Simulation(self.robot, PDGravityCompensation.create(self.robot, pose), rate=1000.0,
                                     fixed=FixedStepIntegration(1))
        return self.simulation.state[:self.robot.n]

    def excite(self):
        t0 = self.simulation.t + 0.001
        self.simulation.apply(RectangularPulse("tool0", IMPACT, t0, t0 + 0.006))

    def measure_modes(self):
        q_m = self.simulation.advance(RECORD_S).q_m
        result = identify_modes(q_m - q_m.mean(axis=0), 1000.0, "ssi-cov")
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if 0.0 <= m.damping_ratio < 1.0]


@pytest.fixture(scope="module")
def calibrated():
    truth, nominal = true_robot()
    messages = []
    result = calibrate(nominal, CALIBRATION_POSES, SimulatedCell(truth), CalibrationOptions(), messages.append)
    return truth, nominal, result, messages


def test_identified_stiffness_within_two_percent(calibrated):
    """Issue 26 acceptance (core): every stiffness the modes determine is within 2 % of the truth; the one they do
    not (k6: it moves only the ~850 Hz, 80 %-damped wrist mode above the 500 Hz Nyquist limit, seed 000 Table 2.5)
    is reported and kept at its nominal value."""
    truth, nominal, result, _ = calibrated
    assert result.failure is None and len(result.data.poses) == 6
    assert "k.joint6" in result.kept
    assert result.robot.stiffness[5] == nominal.stiffness[5]
    error = result.robot.stiffness[:5] / truth.stiffness[:5] - 1.0
    assert np.max(np.abs(error)) < 0.02, error
    assert np.max(np.abs(nominal.stiffness[:5] / truth.stiffness[:5] - 1.0)) > 0.05  # there was something to fix


def test_wrist_link_damping_identified_from_the_motor_mode(calibrated):
    """d_f6 is determined by the damping of joint 6's 13.1 Hz motor mode (seed 000 Table 2.5 mode 5, excited by the
    blow's moment about the wrist axis): within 2 % of the truth; d_f1 (the track's), which no measured mode
    determines, is reported and kept at nominal."""
    truth, nominal, result, _ = calibrated
    assert "d_f.joint6" not in result.kept and "d_f.joint1" in result.kept
    assert abs(result.robot.link_damping[5] / truth.link_damping[5] - 1.0) < 0.02
    assert abs(nominal.link_damping[5] / truth.link_damping[5] - 1.0) > 0.05  # there was something to fix


def tracking_error(truth, model) -> float:
    """Worst link tracking error max |q - q_d| [rad | m] over the joints and the move + 0.5 s: the true robot under
    the motor PD (shipped gains) with ``model``'s feedforward (EJNEA, 1 kHz) of a 1.5 s ninth-order rest-to-rest
    move (seed 000 eq. 4.30) from validation pose 3 (every joint moves 0.2-0.6 rad or m)."""
    start, end = np.asarray(VALIDATION_POSES[2]), np.array([0.1, 0.3, 1.1, 0.0, -1.1, 0.3])
    path = Poly9Trajectory(start, end, 1.5)
    plan = feedforward(model, path, "ejnea", rate_hz=1000.0)
    hold = PDGravityCompensation.create(truth, start)
    simulation = Simulation(truth, hold, rate=1000.0, fixed=FixedStepIntegration(1))
    simulation.set_controller(FeedforwardPD(truth, plan.tau_m, plan.q_m, plan.qd_m, plan.t, hold.kp, hold.kd))
    output = simulation.advance(2.0)
    return float(np.abs(output.q - path.evaluate(np.clip(output.t, 0.0, 1.5)).q).max())


def test_feedforward_tracking_error_five_times_smaller(calibrated):
    """Issue 26 acceptance (core, in-process): the calibrated model's feedforward tracks at least 5x better than the
    nominal one on the true robot; the true model's own error is the floor (integration, 1 kHz references)."""
    truth, nominal, result, _ = calibrated
    before, after, floor = (tracking_error(truth, model) for model in (nominal, result.robot, truth))
    print(f"tracking max |q - q_d|: {before:.3e} nominal, {after:.3e} calibrated, {floor:.3e} true model")
    assert before > 5.0 * after


def test_validation_poses_frequencies_within_one_percent(calibrated):
    """At 3 poses not used for calibration, every oscillating mode of the true robot below the 500 Hz Nyquist limit
    is predicted by the calibrated model within 1 % (paired by frequency and MAC); the nominal model was further."""
    truth, nominal, result, _ = calibrated
    worst_before, worst_after = 0.0, 0.0
    for q in VALIDATION_POSES:
        reference = modal_analysis(truth, np.asarray(q))
        keep = (reference.frequencies_hz < 500.0) & ~reference.overdamped
        for model, slot in ((nominal, 0), (result.robot, 1)):
            predicted = modal_analysis(model, np.asarray(q))
            error = np.abs(predicted.frequencies_hz[keep] / reference.frequencies_hz[keep] - 1.0)
            if slot:
                worst_after = max(worst_after, float(error.max()))
            else:
                worst_before = max(worst_before, float(error.max()))
    assert worst_after < 0.01, worst_after
    assert worst_before > 0.03, worst_before


def test_report_pairs_measured_with_predicted_modes(calibrated):
    """The before/after table: each measured mode paired with the nominal and calibrated model; after calibration
    the paired lightly damped modes (zeta < 5 %, the ones that carry the joint stiffness) agree within 0.1 %."""
    _, _, result, messages = calibrated
    light = [m for m in result.modes if m.after_mode >= 0 and m.measured_damping_ratio < 0.05]
    assert len(light) >= 4 * 6
    assert max(abs(m.after_error) for m in light) < 1e-3
    assert max(abs(m.before_error) for m in light) > 0.02
    assert any(message.startswith("pose 6/6: ") for message in messages)
    text = result.text()
    assert "k.joint6: kept at its nominal value" in text and "f before [Hz]" in text


def test_failure_at_a_pose_keeps_what_was_measured():
    """A move that fails at pose 4 ends the sweep: the failure names pose 4 and its target, the 3 poses measured
    before it are kept and identified."""
    truth, nominal = true_robot()
    result = calibrate(nominal, CALIBRATION_POSES, SimulatedCell(truth, fail_at=3))
    assert result.failure is not None and result.failure.pose == 3 and result.failure.step == "move"
    assert "pose 4 (q = " in result.failure.describe() and "within 0.001 rad" in result.failure.describe()
    assert len(result.data.poses) == 3
    np.testing.assert_allclose(result.data.poses[2].q, CALIBRATION_POSES[2], atol=1e-12)
    assert result.identification is not None
