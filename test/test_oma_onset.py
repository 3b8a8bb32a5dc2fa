"""The onset of a blow in a record (flexrobot_ros.oma.onset), which calibration_node starts its OMA record at.

References: closed forms (a free decay starting at a known sample behind a creep), and the LWR4 simulator: a record
starting 0.3 s before a 50 N blow against the same record starting at the blow.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.errors import SignalError
from flexrobot_ros.model import load_robot
from flexrobot_ros.oma import identify_modes
from flexrobot_ros.oma.onset import impulse_onset
from flexrobot_ros.simulation import (FeedforwardPD, FixedStepIntegration, PDGravityCompensation, RectangularPulse,
                                     Simulation)


def creep_then_decay(start: int, samples: int = 2000, fs: float = 1000.0) -> np.ndarray:
    """Two channels: an exponential creep (time constant 1.2 s, 1e-4 rad) throughout, plus from sample ``start`` on
    free decays at 13 Hz (1 %) and 2.8 Hz (3 %) of 5e-5 rad, zero at ``start`` itself."""
    t = np.arange(samples) / fs
    creep = 1e-4 * np.exp(-t / 1.2)
    tau = np.clip(t - start / fs, 0.0, None)
    decay = np.stack([np.exp(-0.01 * 2 * np.pi * 13 * tau) * np.sin(2 * np.pi * 13 * tau),
                      np.exp(-0.03 * 2 * np.pi * 2.8 * tau) * np.sin(2 * np.pi * 2.8 * tau)], axis=1)
    return creep[:, None] * np.array([1.0, -0.7]) + 5e-5 * decay


@pytest.mark.parametrize("start", [37, 300, 1200])
def test_the_first_sample_of_a_free_decay_behind_a_creep(start):
    """The decay starts at ``start`` (its first nonzero sample is start + 1; the second difference centred on
    ``start`` is the first to jump): found exactly, whatever the creep before it."""
    assert impulse_onset(creep_then_decay(start)) == start


def test_no_blow_no_onset():
    """Smooth motion (a creep, or ambient-like steady oscillation from the first sample), a blow in the first
    MIN_LEAD samples and a still record have no onset: the record is then used as it is."""
    t = np.arange(2000) / 1000.0
    assert impulse_onset(1e-4 * np.exp(-t / 1.2)) is None
    assert impulse_onset(np.stack([np.sin(2 * np.pi * 3 * t), np.cos(2 * np.pi * 7 * t)], axis=1)) is None
    assert impulse_onset(creep_then_decay(5)) is None
    assert impulse_onset(np.zeros((100, 3))) is None


def test_bad_records_are_refused():
    with pytest.raises(SignalError, match="3 or more samples"):
        impulse_onset(np.zeros((2, 3)))
    record = creep_then_decay(300)
    record[5, 1] = np.nan
    with pytest.raises(SignalError, match="non-finite"):
        impulse_onset(record)


def test_a_record_started_early_hides_the_lwr4s_lowest_modes():
    """The shipped LWR4 moved to a pose as the simulator node moves it (a 2 s ninth-order path with the EJNEA
    feedforward, then held by PD + gravity compensation; its motors then creep to their set point against their
    Coulomb friction), 1 s after the move a 2.3 s record, struck with 50 N along y0 0.3 s into it: the onset is
    the pulse's first sample (within one); SSI-cov on 2 s from there finds the two lowest modes (below 3.5 Hz), on
    the first 2 s of the record neither."""
    robot = load_robot("lwr4")
    start, q = np.zeros(7), np.array([0.0, 0.5, 0.0, -1.2, 0.0, 0.6, 0.0])
    hold = PDGravityCompensation.create(robot, start)
    simulation = Simulation(robot, hold, rate=1000.0, fixed=FixedStepIntegration(1))
    motion = feedforward(robot, Poly9Trajectory(start, q, 2.0), "ejnea", rate_hz=1000.0)
    hold = hold.with_set_point(q)
    simulation.set_controller(FeedforwardPD(robot, motion.tau_m, motion.q_m, motion.qd_m, motion.t, hold.kp, hold.kd))
    simulation.advance(float(motion.t[-1]))
    simulation.set_controller(hold)
    simulation.advance(1.0)
    before = simulation.advance(0.3)
    t0 = simulation.t + 0.001
    simulation.apply(RectangularPulse("tool0", (0.0, 50.0, 0.0, 0.0, 0.0, 0.0), t0, t0 + 0.006))
    after = simulation.advance(2.0)
    record = np.vstack([before.q_m, after.q_m])
    onset = impulse_onset(record)
    pulse = int(np.searchsorted(np.concatenate([before.t, after.t]), t0 - 1e-9))
    assert onset is not None and abs(onset - pulse) <= 1, (onset, pulse)

    def low_modes(window: np.ndarray) -> int:
        modes = identify_modes(window - window.mean(axis=0), 1000.0, "ssi-cov").modes   # as calibration_node
        return sum(m.frequency_hz < 3.5 for m in modes)

    assert low_modes(record[onset:onset + 2000]) == 2
    assert low_modes(record[:2000]) == 0
