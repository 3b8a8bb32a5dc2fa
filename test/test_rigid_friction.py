"""Unbiased friction and honest standard deviations in the rigid-body identification (issue 37, item 2).

The record: the shipped kr90 with Coulomb friction raised to 120, 180, 90 N m on the motor side (the issue's case,
F_c.joint2 = 180 N m), along the stored optimized excitation (test/data/kr90_excitation.json, one 10 s period at
1 kHz): q_m and tau_m of the elastic-joint model's exact solution along the link trajectory (the flexible-joint
inverse dynamics, thesis eqs. 4.7-4.10, which test_rigid_identification's
test_joint_deflection_inverts_the_feedforward checks against the rigid model written out). Its truth is the YAML:
F_c,i = link_coulomb + motor_coulomb, and the other base parameters those of the shipped URDF and YAML. The closed
loop simulation of the shipped kr90 (small Coulomb terms) is checked at the same cutoffs in
test_rigid_identification.py::test_elasticity_bias_kr90.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.signal
import scipy.stats

from flexrobot_ros.dynamics.feedforward import feedforward
from flexrobot_ros.dynamics.trajectory import TrajectorySamples
from flexrobot_ros.identification.base_parameters import base_parameters, true_base_parameters
from flexrobot_ros.identification.excitation import FourierTrajectory
from flexrobot_ros.identification.parallel_filter import ParallelFilter
from flexrobot_ros.identification.rigid_body import RigidRecord, identify_rigid_body
from flexrobot_ros.identification.rigid_regressor import regressor
from flexrobot_ros.model import load_robot

EXCITATION = Path(__file__).parent / "data" / "kr90_excitation.json"
#: Motor-side Coulomb friction of the record [N m] (the shipped kr90 has 1.2, 1.4, 0.9).
COULOMB = (120.0, 180.0, 90.0)
CUTOFFS_HZ = (2.0, 5.0, 10.0, 20.0)
#: Torque noise of the standard-deviation study: standard deviation, fraction of each joint's peak torque.
TORQUE_NOISE = 0.01
DRAWS = 20


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    shipped = load_robot("kr90")
    text = Path(shipped.yaml_path).read_text()
    for old, new in zip(("motor_coulomb: 1.2", "motor_coulomb: 1.4", "motor_coulomb: 0.9"), COULOMB):
        assert text.count(old) == 1
        text = text.replace(old, f"motor_coulomb: {new}")
    text = text.replace("urdf: ../urdf/kr90.urdf", f"urdf: {shipped.urdf_path}")
    path = tmp_path_factory.mktemp("friction") / "kr90_coulomb.yaml"
    path.write_text(text)
    robot = load_robot(path)
    np.testing.assert_array_equal(robot.motor_coulomb, COULOMB)
    return robot


@pytest.fixture(scope="module")
def base(robot):
    return base_parameters(robot)


@pytest.fixture(scope="module")
def record(robot) -> RigidRecord:
    """Noise-free motor positions and torques of the elastic kr90 along the stored excitation, 1 kHz."""
    stored = json.loads(EXCITATION.read_text())["trajectory"]
    trajectory = FourierTrajectory(stored["frequency_hz"], np.array(stored["a"]), np.array(stored["b"]),
                                   np.array(stored["q0"]))
    t = np.arange(0.0, trajectory.period, 1e-3)
    samples = TrajectorySamples(t, *trajectory.evaluate(t), trajectory.derivative(t, 3),
                                trajectory.derivative(t, 4))
    motor = feedforward(robot, samples, "ejnea", check_limits=False)
    return RigidRecord(t, motor.q_m, motor.tau_m, "kr90 Coulomb 120/180/90 N m")


def coulomb_columns(base) -> list[int]:
    return [k for k, name in enumerate(base.base_names()) if name.startswith("F_c.")]


def test_coulomb_friction_is_unbiased_at_any_cutoff(robot, base, record) -> None:
    """Issue 37 acceptance: F_c within 2 % of the truth at 2, 5, 10 and 20 Hz (measured: within 0.001 %, 120.00 /
    180.00 / 90.00 N m at every cutoff), and every other base parameter within 0.5 % (largest 0.037 %, I_yz.link3
    = 1 kg m^2): the regressor and the torques pass through the same low-pass.

    Why: the same record with the torques filtered and the friction column not (written out here: positions and
    torques through scipy's zero-phase Butterworth at 5 Hz, the regressor at the filtered states, LS on rows at 2
    per cutoff period, the joint deflection ignored) gives F_c 108, 170, 85 N m: 5-10 % low, the issue's bias."""
    truth = true_base_parameters(robot, base)
    coulomb = coulomb_columns(base)
    np.testing.assert_array_equal(truth[coulomb], COULOMB)
    for cutoff in CUTOFFS_HZ:
        result = identify_rigid_body(robot, record, cutoff_hz=cutoff, base=base)
        print(f"{cutoff:g} Hz: F_c {np.round(result.beta[coulomb], 3).tolist()} N m; largest error of any base "
              f"parameter {100 * np.max(np.abs(result.beta - truth) / np.abs(truth)):.3g} %")
        np.testing.assert_allclose(result.beta[coulomb], COULOMB, rtol=0.02, atol=0)
        np.testing.assert_allclose(result.beta, truth, rtol=0.005, atol=0)

    # the torques alone filtered, on the same record
    rate, cutoff = 1000.0, 5.0
    sos = scipy.signal.butter(4, cutoff, fs=rate, output="sos")
    low_pass = lambda x: scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=600)  # noqa: E731
    q = low_pass(record.q)
    qd = np.gradient(q, 1 / rate, axis=0)
    qdd = np.gradient(qd, 1 / rate, axis=0)
    keep = np.arange(200, len(record.t) - 200, 100)
    a = base.columns(regressor(robot, q[keep], qd[keep], qdd[keep]))
    beta = np.linalg.lstsq(a, low_pass(record.tau)[keep].ravel(), rcond=None)[0]
    print(f"torques alone filtered at 5 Hz: F_c {np.round(beta[coulomb], 2).tolist()} N m")
    assert np.all(beta[coulomb] < 0.96 * np.array(COULOMB))


def test_standard_deviations_match_the_spread_over_noise_draws(robot, base, record) -> None:
    """Issue 37: 20 draws of white torque noise (1 % of each joint's peak: 88, 102, 34 N m) on the record, 5 Hz (the
    default cutoff). The printed standard deviation of each base parameter against the standard deviation of its
    20 estimates: pooled over the 22 parameters (1 / sqrt(mean(spread^2 / printed^2))) 0.917 and median 0.93 (the
    issue's band 0.7-1.4); each parameter within the 99.9 % band of a 20-sample standard deviation (chi
    distribution, 19 degrees of freedom: 0.66-1.88; measured 0.72-1.32); the estimates scatter about the truth as
    the standard deviations say (RMS of (estimate - truth) / std over draws and parameters 1.07).

    Without the filter's noise correlation kappa = 1.113 (parallel_filter) the pooled ratio is 0.87; kept at full
    rate (no decimation) the standard deviations would be 10.5x too small."""
    rng = np.random.default_rng(37)
    peak = np.abs(record.tau).max(axis=0)
    estimates, printed = [], []
    for _ in range(DRAWS):
        noise = TORQUE_NOISE * peak * rng.standard_normal(record.tau.shape)
        noisy = RigidRecord(record.t, record.q, record.tau + noise)
        result = identify_rigid_body(robot, noisy, cutoff_hz=5.0, base=base)
        estimates.append(result.beta)
        printed.append(result.std)
    estimates, printed = np.array(estimates), np.array(printed)
    spread = estimates.std(axis=0, ddof=1)
    ratio = printed.mean(axis=0) / spread
    pooled = 1.0 / np.sqrt(np.mean(1.0 / ratio**2))
    truth = true_base_parameters(robot, base)
    z = np.sqrt(np.mean(((estimates - truth) / printed) ** 2))
    for name, value in zip(base.base_names(), ratio):
        print(f"{name:<18} printed / spread {value:6.3f}")
    print(f"pooled {pooled:.3f}, median {np.median(ratio):.3f}, RMS (estimate - truth) / std {z:.3f}")
    assert 0.7 <= pooled <= 1.4 and 0.7 <= np.median(ratio) <= 1.4
    dof = DRAWS - 1
    low, high = (np.sqrt(dof / scipy.stats.chi2.ppf(p, dof)) for p in (0.9995, 0.0005))
    assert np.all((ratio >= low) & (ratio <= high)), (low, high, ratio)
    assert 0.7 <= z <= 1.4


def test_noise_correlation_equals_the_aliased_spectrum() -> None:
    """kappa = sum_l rho(l D) of the parallel filter (computed from its impulse response) against the frequency
    domain written here: the rows sample L-filtered white noise every D decimated samples, so sum_l c(l D) = (1 / D)
    sum_m P(m f_s / D) with P = |H_b|^4 the spectrum of the forward-backward Butterworth (``sosfreqz``), and
    c(0) = mean of P over [0, f_s), both at the decimated rate (L runs there). 1.113 at 2 rows per cutoff period
    (5 Hz at 1 kHz: decimated to 100 Hz, rows at 10 Hz), 1.159 at 20 Hz (decimated to 500 Hz, rows at 41.7 Hz),
    1.369 at 100 Hz and 20 Hz (no decimation, rows at 50 Hz)."""
    for cutoff, rate, expected in ((5.0, 1000.0, 1.113), (20.0, 1000.0, 1.159), (20.0, 100.0, 1.369)):
        parallel = ParallelFilter.design(cutoff, rate, 100_000)
        d, blocks = parallel.decimation, parallel.block_rate_hz         # L runs on block means (white for white noise)
        _, aliases = scipy.signal.sosfreqz(parallel.sos, worN=np.arange(d) * blocks / d, fs=blocks)
        _, dense = scipy.signal.sosfreqz(parallel.sos, worN=200_000, whole=True, fs=blocks)
        kappa = np.mean(np.abs(aliases) ** 4) / np.mean(np.abs(dense) ** 4)
        print(f"{cutoff:g} Hz at {rate:g} Hz, blocks of {parallel.block}, D = {d}: kappa "
              f"{parallel.noise_correlation():.5f}, spectrum {kappa:.5f}")
        assert parallel.noise_correlation() == pytest.approx(kappa, rel=1e-4)
        assert kappa == pytest.approx(expected, abs=1e-3)
