"""Rigid-body identification with optimal excitation (seed 001 section 2: eqs. 5-12, Tables 1-2, Appendix B,
Table A1) on the shipped kr90.

References written here, independent of the code under test: Appendix B's regressor and Table A1 (reused from
test_kr90.py, which checks that they equal pinocchio's torques to 1e-7 N m), Table 1's limits and Table 2's
workspace with the Craig forward kinematics of test_kr90.py, the Fourier series' derivatives by central
differences, the motor torques of the rigid model as pinocchio's RNEA plus B qdd + F_v qd + F_c tanh(qd / v_c)
written out here, and the truth of the simulated experiment (the robot's URDF and YAML parameters).

FIGAROH (the reference base-parameter / excitation toolbox) is not installed on this machine, so its cond(A) is
not compared; the random Fourier trajectory with the same limits is the baseline.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics.feedforward import feedforward
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility
from flexrobot_ros.dynamics.trajectory import TrajectorySamples, load_trajectory
from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.base_parameters import base_parameters, true_base_parameters
from flexrobot_ros.identification.excitation import (KR90_WORKSPACE, ExcitationLimits, FourierTrajectory,
                                                     design_excitation, observation_condition, write_trajectory)
from flexrobot_ros.identification.joint_deflection import link_positions, motor_side_difference
from flexrobot_ros.identification.rigid_body import (DEFLECTION_COMPENSATED, ELASTICITY_IGNORED, LINK_ENCODERS,
                                                     RigidRecord, condition_record, identify_rigid_body)
from flexrobot_ros.identification.rigid_export import physically_consistent, write_identified_robot
from flexrobot_ros.identification.rigid_regressor import regressor
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import Simulation
from flexrobot_ros.simulation.controllers import FeedforwardPD
from flexrobot_ros.simulation.sensors import MotorEncoder
from flexrobot_ros.timeseries import write_timeseries
from test_kr90 import Q_LOWER, Q_UPPER, appendix_b_regressor, base_parameters_without_rotors, craig_frames

TABLE_1_QD = np.array([1.83, 1.76, 1.87])  # rad/s
TABLE_1_QDD = 8.0  # rad/s^2
TABLE_2_LOW, TABLE_2_HIGH = np.array([-1.5, -1.6, 0.5]), np.array([2.6, 1.4, 2.5])  # m
TOOL_IN_O3 = np.array([1.615, -0.041, 0.0, 1.0])  # tool0 in Craig frame O_3 (test_kr90.py)
#: Excitation of the kr90 tests: seed 001's 5 harmonics at 0.1 Hz (section 2.3). At 0.2 Hz the elasticity bias,
#: which grows as the square of the frequency (the deflection tau/K is differentiated twice), takes I_xy.link2 and
#: mc_y.link3 5.6 % and 13 % off with relative standard deviations of 1.3 % and 6 %.
FREQUENCY_HZ = 0.1
#: kr90_3dof's consistency test (no simulation, no elasticity): half the period.
FREQUENCY_3DOF_HZ = 0.2
#: Simulated length of the validation trajectory [s] (half its period).
VALIDATION_S = 5.0
#: Servo of the simulated experiment: motor PD about the feedforward's q_m (config/kr90.yaml's kp = 1e9 stands for
#: held rotors in the modal model; a tracking drive is softer).
SERVO_KP, SERVO_KD = 1.0e6, 3.0e4  # N m/rad, N m s/rad
ENCODER_COUNTS = 2**12  # counts per motor revolution: one count = 2 pi / (4096 N_i) = 5.3e-6 rad (N_1 = 290)
TORQUE_NOISE = 0.01  # standard deviation, fraction of each joint's peak motor torque


@pytest.fixture(scope="module")
def kr90():
    return load_robot("kr90")


@pytest.fixture(scope="module")
def base(kr90):
    return base_parameters(kr90)


@pytest.fixture(scope="module")
def design(kr90, base):
    limits = ExcitationLimits.of_robot(kr90, TABLE_1_QDD, KR90_WORKSPACE)
    return design_excitation(kr90, limits, frequency_hz=FREQUENCY_HZ, starts=2, seed=0, base=base)


#: The identification tests' excitation: the optimized and the median random trajectory of :func:`design`, stored
#: (test/data/kr90_excitation.json, with OpenBLAS's default kernel: cond(A) 37.1). SLSQP's path over an
#: ill-conditioned objective, and so the local optimum it reaches, depends on the BLAS kernel's rounding: with
#: OPENBLAS_CORETYPE=Haswell the same call ends at cond(A) 44.7 on another start, and the identification figures
#: of the docstrings below are those of the stored trajectory. test_optimized_excitation_kr90 checks the optimizer.
EXCITATION = Path(__file__).parent / "data" / "kr90_excitation.json"


@pytest.fixture(scope="module")
def excitation() -> SimpleNamespace:
    """``trajectory`` (optimized) and ``random_trajectory`` of :data:`EXCITATION`."""
    stored = json.loads(EXCITATION.read_text())
    return SimpleNamespace(**{key: FourierTrajectory(stored[key]["frequency_hz"], np.array(stored[key]["a"]),
                                                     np.array(stored[key]["b"]), np.array(stored[key]["q0"]))
                              for key in ("trajectory", "random_trajectory")})


def rigid_motor_torque(robot, q, qd, qdd) -> np.ndarray:
    """Eq. 4 written out: RNEA + B qdd + (D + D_m) qd + (f_c + f_cm) tanh(qd / v_c), (samples, n) [N m] (sgn(qd)
    smoothed as the package's friction law, v_c the YAML's coulomb_width)."""
    data = robot.create_data()
    link = np.array([pin.rnea(robot.model, data, *state) for state in zip(q, qd, qdd)])
    return (link + robot.motor_inertia * qdd + (robot.link_damping + robot.motor_damping) * qd
            + (robot.link_coulomb + robot.motor_coulomb) * np.tanh(qd / robot.coulomb_width))


# --- (a) Appendix B / Table A1 ---------------------------------------------------------------------------------------
def test_base_parameters_span_table_a1(kr90, base) -> None:
    """Seed 001 Appendix B: the package's base parameters of the KR90 links (QR with column pivoting of pinocchio's
    joint-torque regressor) are 15, as Table A1's pi_1..pi_15 (the paper's rotor columns pi_16..18 model rotor
    gyroscopic coupling, which kr90 leaves out; its 22 base parameters are these 15, the rotor inertia of joint 3,
    the only one not lumped into a link parameter, and 6 friction terms). At 50 random states in Table 1's ranges
    the package's base columns and Appendix B's columns span the same space (rank 15 each and together), so
    Y_A T = Y_b for a 15 x 15 T, and T maps the package's base parameters of kr90 onto Table A1 (minus the rotor
    spin terms, as test_kr90 does) to 1e-6 of the largest. The base regressor times the base parameters gives the
    RNEA torques to 1e-7 N m."""
    assert base.count == 22
    link_columns = [k for k, i in enumerate(base.independent) if i < 30]
    assert len(link_columns) == 15
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(Q_LOWER, Q_UPPER, (50, 3)), rng.uniform(-1.8, 1.8, (50, 3)), rng.uniform(-8, 8, (50, 3))
    y_a = np.vstack([appendix_b_regressor(*state) for state in zip(q, qd, qdd)])
    full = regressor(kr90, q, qd, qdd)
    y_b = base.columns(full)[:, link_columns]
    rank = lambda m: np.linalg.matrix_rank(m, tol=1e-9 * np.abs(m).max())  # noqa: E731
    assert rank(y_a) == rank(y_b) == rank(np.hstack([y_a, y_b])) == 15
    transform = np.linalg.lstsq(y_a, y_b, rcond=None)[0]
    np.testing.assert_allclose(y_a @ transform, y_b, rtol=0, atol=1e-9 * np.abs(y_b).max())
    phi_links = np.concatenate([np.asarray(kr90.model.inertias[j].toDynamicParameters()) for j in (1, 2, 3)])
    beta_links = base.base_map[link_columns, :30] @ phi_links
    table = base_parameters_without_rotors()
    np.testing.assert_allclose(transform @ beta_links, table, rtol=0, atol=1e-6 * np.abs(table).max())
    beta = true_base_parameters(kr90, base)
    data = kr90.create_data()
    rnea = np.concatenate([pin.rnea(kr90.model, data, *state) for state in zip(q, np.zeros_like(qd), qdd)])
    torques = base.columns(regressor(kr90, q, np.zeros_like(qd), qdd)) @ beta
    friction_free = rnea + np.tile(kr90.motor_inertia, 50) * qdd.ravel()
    np.testing.assert_allclose(torques, friction_free, rtol=0, atol=1e-7)


# --- (c) excitation --------------------------------------------------------------------------------------------------
def test_fourier_derivatives_are_those_of_the_series() -> None:
    """Eqs. 8-10: qd and qdd of the closed form equal central differences of q (step 1e-4 s, error ~h^2)."""
    rng = np.random.default_rng(3)
    trajectory = FourierTrajectory(0.1, rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), np.array([0.3, -0.2]))
    t, h = np.linspace(0.0, 10.0, 37), 1e-4
    q_plus, q_minus = trajectory.derivative(t + h, 0), trajectory.derivative(t - h, 0)
    q, qd, qdd = trajectory.evaluate(t)
    np.testing.assert_allclose(qd, (q_plus - q_minus) / (2 * h), rtol=0, atol=1e-7)
    np.testing.assert_allclose(qdd, (q_plus - 2 * q + q_minus) / h**2, rtol=0, atol=1e-4)


def test_optimized_excitation_kr90(kr90, base, design, tmp_path) -> None:
    """Eqs. 11-12 with Tables 1-2 at 0.1 Hz: the optimized trajectory's cond(A) (2 starts: 37, 44.7 with OpenBLAS's
    Haswell kernel, which takes SLSQP to another optimum; seed 001 reports 28
    on average) is at least 10x below that of a random Fourier trajectory with the same limits (the median of 20
    random feasible ones: 6400; the best of them: 600). At 1000 samples per period it respects Table 1
    (positions, velocities, 8 rad/s^2) and its tool0 stays in Table 2's box (forward kinematics written in
    test_kr90.py). The trajectory file (waypoints of the feedforward) reproduces the series to 1e-6 rad, starts and
    ends at rest, and gives the same cond(A) within 1 %. The flexibility margin: the lowest closed-loop frequency
    over the poses (8.3 Hz) is at least 5 times the highest harmonic (0.5 Hz: margin 16.6) and equals
    modal_analysis at the first pose or below."""
    print(f"cond(A): optimized {design.condition:.4g}, random Fourier {design.random_condition:.4g} (median), "
          f"{design.random_best_condition:.4g} (best); lowest "
          f"natural frequency {design.lowest_frequency_hz:.4g} Hz, margin {design.margin:.3g}")
    assert design.condition * 10 <= design.random_condition
    trajectory = design.trajectory
    t = np.linspace(0.0, trajectory.period, 1001)
    q, qd, qdd = trajectory.evaluate(t)
    assert np.all(q >= Q_LOWER - 1e-9) and np.all(q <= Q_UPPER + 1e-9)
    assert np.all(np.abs(qd) <= TABLE_1_QD + 1e-6) and np.all(np.abs(qdd) <= TABLE_1_QDD + 1e-6)
    tool = np.array([(craig_frames(pose)[2] @ TOOL_IN_O3)[:3] for pose in q])
    assert np.all(tool >= TABLE_2_LOW - 1e-6) and np.all(tool <= TABLE_2_HIGH + 1e-6)
    path = write_trajectory(tmp_path / "excitation.yaml", trajectory)
    samples = load_trajectory(path).evaluate(t)
    np.testing.assert_allclose(samples.q, q, rtol=0, atol=1e-6)
    np.testing.assert_allclose(samples.qd[[0, -1]], 0.0, atol=1e-12)
    spline_condition = np.linalg.cond(base.columns(regressor(kr90, samples.q[:-1], samples.qd[:-1],
                                                             samples.qdd[:-1])))
    assert spline_condition == pytest.approx(observation_condition(kr90, base, trajectory, 1000), rel=0.01)
    assert observation_condition(kr90, base, trajectory) < design.random_condition / 10
    assert design.margin >= 5.0
    assert design.lowest_frequency_hz <= modal_analysis(kr90, q[0]).frequencies_hz[0] + 1e-9


# --- (b) simulated experiment ----------------------------------------------------------------------------------------
def simulate(robot, trajectory, tmp_path, name, seed, duration):
    """The elastic kr90 tracking ``trajectory`` in the simulator: motor PD about the feedforward's q_m, quantized
    motor encoders; returns (output, motor encoder positions, motor torques with 1 % noise)."""
    path = write_trajectory(tmp_path / f"{name}.yaml", trajectory)
    reference = feedforward(robot, load_trajectory(path), "ejnea", rate_hz=1000.0, check_limits=False)
    controller = FeedforwardPD(robot, reference.tau_m, reference.q_m, reference.qd_m, times=reference.t,
                               kp=SERVO_KP, kd=SERVO_KD)
    simulation = Simulation(robot, controller, q0=reference.q[0], q_m0=reference.q_m[0], rate=1000.0,
                            sensors=[MotorEncoder(counts_per_rev=ENCODER_COUNTS)], seed=seed)
    out = simulation.run(duration)
    encoders = np.column_stack([out.sensors[f"motor_encoder.{joint}"] for joint in robot.joint_names])
    rng = np.random.default_rng(seed)
    noisy = out.tau_m + TORQUE_NOISE * np.abs(out.tau_m).max(axis=0) * rng.standard_normal(out.tau_m.shape)
    return out, encoders, noisy


@pytest.fixture(scope="module")
def experiment(kr90, excitation, tmp_path_factory):
    directory = tmp_path_factory.mktemp("rigid")
    return {"fit": simulate(kr90, excitation.trajectory, directory, "excitation", 1, excitation.trajectory.period),
            "validation": simulate(kr90, excitation.random_trajectory, directory, "validation", 2, VALIDATION_S),
            "directory": directory}


def test_simulated_identification_kr90(kr90, base, experiment) -> None:
    """Issue 27 acceptance: the shipped kr90 (elastic joints, Table 3 K and D) follows the optimized excitation
    (one 10 s period) in the simulator under a motor PD about the feedforward's q_m; motor encoders of 4096 counts
    per motor revolution (5.3e-6 rad on joint 1), 1 % torque noise. Identified from the motor positions and
    torques (5 Hz zero-phase low-pass, central differences, link positions q_m - (tau_m - motor-side terms) / K
    through the YAML, regressor and torques through the same low-pass, weighted LS), every base parameter whose
    relative standard deviation is below 10 % lies within 5 % of the truth (15 of 22 here, the largest error 1.0 %,
    F_v.joint3; 3.1 % with the torques alone filtered, before issue 37), and the base parameters predict the torques
    of the validation trajectory (5 s of the median random Fourier one, not used for the fit) within 2 % RMS of its
    peak (0.021 %, 0.023 %, 0.022 %; 0.23 %, 0.12 %, 0.05 % before).

    Without the compensation (motor positions as link positions) the same record fails the 5 % line on
    mc_y.link3 (M_3 C_y3 = -2.7 kg m, 26 N m of gravity torque against 12600 N m peaks: -6.6 % at relative std
    4.3 %; before issue 37 also I_xy.link3, -53 % at 9.4 %).
    How often the 5 % line holds over 20 torque-noise realizations added to this same simulated run (not asserted;
    the paper's four-trajectory case is in bench/rigid_identification.py): 16/20 with the compensation, 9/20
    without (10/20 and 1/20 before issue 37). The failures left with the compensation are noise, not bias: over
    those realizations (estimate - truth) / std has an RMS of 0.83-1.32 (median 1.07) over the link
    parameters."""
    out, encoders, noisy = experiment["fit"]
    truth = true_base_parameters(kr90, base)
    result = identify_rigid_body(kr90, RigidRecord(out.t, encoders, noisy), cutoff_hz=5.0, base=base)
    assert result.link_side == DEFLECTION_COMPENSATED
    error = np.abs(result.beta - truth) / np.abs(truth)
    rel_std = result.relative_std
    for name, value, expected, rel_error, std in zip(base.base_names(), result.beta, truth, error, rel_std):
        print(f"{name:<18}{value:>12.5g}{expected:>12.5g} |error| {100 * rel_error:8.3f} %  rel. std "
              f"{100 * std:8.3f} %")
    well_determined = rel_std < 0.10
    beyond = [name for name, ok, e in zip(base.base_names(), well_determined, error) if ok and e > 0.05]
    print(f"{well_determined.sum()} base parameters with relative std < 10 %; beyond 5 % of the truth: {beyond}")
    assert well_determined.sum() >= 15
    assert not beyond, f"base parameters with relative std < 10 % beyond 5 % of the truth: {beyond}"

    out_v, encoders_v, noisy_v = experiment["validation"]
    record = result.conditioned(RigidRecord(out_v.t, encoders_v, noisy_v))
    predicted = result.predict(kr90, record)
    reference = condition_record(RigidRecord(out_v.t, out_v.q_m, out_v.tau_m), 5.0).measured_torques()
    rms = np.sqrt(np.mean((predicted - reference) ** 2, axis=0))
    print("validation rms / peak [%]:", 100 * rms / np.abs(reference).max(axis=0))
    assert np.all(rms <= 0.02 * np.abs(reference).max(axis=0))


def test_elasticity_bias_kr90(kr90, base, experiment) -> None:
    """How far the joint elasticity biases the identification: the fit record noise-free and unquantized (the
    simulator's q_m and tau_m), so that the model error is the only error. Ignoring the elasticity (rigid model at
    the motor positions) the parameters the noisy experiment determines to < 10 % are off by up to 6.5 %
    (mc_y.link3; mc_x.link2 -3.4 %, I_xy.link2 2.7 %; beyond them I_xz.link3 38 %, I_yz.link3 65 %); with the
    deflection compensated through the YAML's K and motor-side terms by at most 1.1 % (F_v.joint3; every inertial
    parameter within 0.2 %, I_xy.link3 -0.08 %), the same as with the simulator's link positions as link encoders.
    The Coulomb
    terms (1.2, 1.4, 0.9 N m against torques up to 12600 N m) are within 2 % of the truth at every cutoff from 2 to
    20 Hz, compensated and with link encoders (issue 37; largest 1.4 %, F_c.joint1 at 2 Hz; with the torques
    alone filtered they were 4-12 % off at 5 Hz and 15-163 % at 2 and 20 Hz). The estimated link positions equal the
    simulator's to 1 % of the largest deflection (2.5 mrad on joint 2)."""
    out = experiment["fit"][0]
    truth = true_base_parameters(kr90, base)
    noisy = identify_rigid_body(kr90, RigidRecord(out.t, *experiment["fit"][1:]), cutoff_hz=5.0, base=base)
    well_determined = noisy.relative_std < 0.10
    exact = RigidRecord(out.t, out.q_m, out.tau_m)
    biases = {}
    for label, record, elasticity in (("ignored", exact, False), ("compensated", exact, True),
                                      ("link encoders", RigidRecord(out.t, out.q_m, out.tau_m, q_link=out.q), True)):
        fit = identify_rigid_body(kr90, record, cutoff_hz=5.0, base=base, elasticity=elasticity)
        biases[label] = (fit.beta - truth) / np.abs(truth)
    print(f"{'elasticity bias [%]':<18}" + "".join(f"{label:>15}" for label in biases))
    for k, name in enumerate(base.base_names()):
        print(f"{name:<18}" + "".join(f"{100 * bias[k]:>15.3f}" for bias in biases.values()))
    assert np.abs(biases["ignored"][well_determined]).max() > 0.05
    assert np.abs(biases["compensated"][well_determined]).max() <= 0.02
    assert np.abs(biases["link encoders"][well_determined]).max() <= 0.02
    coulomb = [k for k, name in enumerate(base.base_names()) if name.startswith("F_c.")]
    np.testing.assert_allclose(truth[coulomb], kr90.link_coulomb + kr90.motor_coulomb, rtol=1e-12)
    for cutoff in (2.0, 5.0, 10.0, 20.0):
        for record in (exact, RigidRecord(out.t, out.q_m, out.tau_m, q_link=out.q)):
            fit = identify_rigid_body(kr90, record, cutoff_hz=cutoff, base=base)
            print(f"{cutoff:g} Hz, {fit.link_side[:14]}: F_c {np.round(fit.beta[coulomb], 4).tolist()} N m")
            np.testing.assert_allclose(fit.beta[coulomb], truth[coulomb], rtol=0.02, atol=0)
    flexibility = JointFlexibility.from_robot(kr90)
    estimated = condition_record(exact, 5.0, flexibility)
    encoders = condition_record(RigidRecord(out.t, out.q_m, out.tau_m, q_link=out.q), 5.0, flexibility)
    deflection = np.abs(out.q_m - out.q).max()
    np.testing.assert_allclose(estimated.q, encoders.q, rtol=0, atol=0.01 * deflection)


def test_joint_deflection_inverts_the_feedforward(kr90, excitation) -> None:
    """The flexible-joint feedforward (dynamics.flexible_joint, thesis eqs. 4.7-4.10) maps a link trajectory to
    q_m, qd_m, qdd_m, tau_m; link_positions recovers the link positions from those to 1e-12 rad, and the motor torque
    equals the rigid model at the link state written out here (RNEA + B qdd + (D + D_m) qd + (D_c + D_cm)
    tanh(qd / v_c)) plus motor_side_difference to 1e-6 N m."""
    t = np.linspace(0.0, excitation.trajectory.period, 401)
    samples = TrajectorySamples(t, *excitation.trajectory.evaluate(t), excitation.trajectory.derivative(t, 3),
                                excitation.trajectory.derivative(t, 4))
    ff = feedforward(kr90, samples, "ejnea", check_limits=False)
    flexibility = JointFlexibility.from_robot(kr90)
    np.testing.assert_allclose(link_positions(flexibility, ff.q_m, ff.qd_m, ff.qdd_m, ff.tau_m), ff.q, rtol=0,
                               atol=1e-12)
    data = kr90.create_data()
    rigid = (np.array([pin.rnea(kr90.model, data, *state) for state in zip(ff.q, ff.qd, ff.qdd)])
             + kr90.motor_inertia * ff.qdd + (kr90.link_damping + kr90.motor_damping) * ff.qd
             + (kr90.link_coulomb + kr90.motor_coulomb) * np.tanh(ff.qd / kr90.coulomb_width))
    difference = motor_side_difference(flexibility, ff.qd, ff.qdd, ff.qd_m, ff.qdd_m)
    assert np.abs(difference).max() > 1.0
    np.testing.assert_allclose(rigid + difference, ff.tau_m, rtol=0, atol=1e-6)


def test_identify_rigid_command_and_export(kr90, experiment, tmp_path, capsys) -> None:
    """``flexrobot identify-rigid kr90 REC.csv --validate VAL.csv --out X.yaml --json --plot-dir``: the JSON has
    the base parameters with units, expressions and standard deviations, the validation error below 2 % of the
    peak, and the written YAML + URDF load as a robot whose rigid motor torques (RNEA written out here) equal the
    identified model's on the validation record to 1e-6 of the peak (the export reproduces the base parameters)."""
    for key in ("fit", "validation"):
        out, encoders, noisy = experiment[key]
        columns = {f"q_m.{joint}": encoders[:, j] for j, joint in enumerate(kr90.joint_names)}
        columns.update({f"tau_m.{joint}": noisy[:, j] for j, joint in enumerate(kr90.joint_names)})
        write_timeseries(tmp_path / f"{key}.csv", out.t, columns)
    status = main(["identify-rigid", "kr90", str(tmp_path / "fit.csv"), "--validate", str(tmp_path / "validation.csv"),
                   "--out", str(tmp_path / "kr90_rigid.yaml"), "--plot-dir", str(tmp_path / "plots"), "--json"])
    assert status == 0
    summary = json.loads(capsys.readouterr().out)
    assert len(summary["parameters"]) == 22 and summary["parameters"][0]["unit"] == "kg m^2"
    assert max(summary["validation"][0]["rms_over_peak_percent"]) < 2.0
    assert all((tmp_path / "plots" / name).is_file() for name in ("torque_fit.png", "parameters.png"))
    identified = load_robot(tmp_path / "kr90_rigid.yaml")
    assert identified.urdf_path == (tmp_path / "kr90_rigid.urdf").resolve()
    record = condition_record(RigidRecord(experiment["validation"][0].t, experiment["validation"][1],
                                          experiment["validation"][2]), 5.0)
    beta = np.array([p["value"] for p in summary["parameters"]])
    model_torque = (base_parameters(kr90).columns(regressor(kr90, record.q, record.qd, record.qdd)) @ beta)
    exported = rigid_motor_torque(identified, record.q, record.qd, record.qdd).ravel()
    np.testing.assert_allclose(exported, model_torque, rtol=0, atol=1e-6 * np.abs(model_torque).max())


def test_identify_rigid_link_side_options(kr90, base, experiment, tmp_path, capsys) -> None:
    """``--link-positions 'q.*'`` (the simulator's link positions as link encoders) and ``--rigid`` reach the core:
    the JSON names the link side and its parameters equal identify_rigid_body's with the same choice to 1e-9
    relative; the validation stays within 2 % of the peak."""
    for key in ("fit", "validation"):
        out, encoders, noisy = experiment[key]
        columns = {f"q_m.{joint}": encoders[:, j] for j, joint in enumerate(kr90.joint_names)}
        columns.update({f"q.{joint}": out.q[:, j] for j, joint in enumerate(kr90.joint_names)})
        columns.update({f"tau_m.{joint}": noisy[:, j] for j, joint in enumerate(kr90.joint_names)})
        write_timeseries(tmp_path / f"{key}.npz", out.t, columns)
    out, encoders, noisy = experiment["fit"]
    for options, link_side, record, elasticity in (
            (["--link-positions", "q.*"], LINK_ENCODERS, RigidRecord(out.t, encoders, noisy, q_link=out.q), True),
            (["--rigid"], "motor positions" + ELASTICITY_IGNORED, RigidRecord(out.t, encoders, noisy), False)):
        assert main(["identify-rigid", "kr90", str(tmp_path / "fit.npz"), "--validate",
                     str(tmp_path / "validation.npz"), "--json", *options]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["link_side"] == link_side
        core = identify_rigid_body(kr90, record, cutoff_hz=5.0, base=base, elasticity=elasticity)
        values = np.array([p["value"] for p in summary["parameters"]])
        np.testing.assert_allclose(values, core.beta, rtol=1e-9, atol=0)
        assert max(summary["validation"][0]["rms_over_peak_percent"]) < 2.0


def test_physically_consistent_fit_kr90_3dof(tmp_path) -> None:
    """Physical consistency on kr90_3dof (Table 5: physical links; kr90's link 2 is not, see test_kr90): torques
    of the rigid model written out here (RNEA + rotor + friction) with 1 % noise along a Fourier excitation. The
    consistent fit has positive masses and principal moments about the CoM that satisfy the triangle inequalities,
    reproduces the LS base parameters within about their uncertainty (Mahalanobis distance below 3 sqrt(r)), and the
    exported YAML + URDF give the noise-free torques within 1 % RMS of their peak."""
    robot = load_robot("kr90_3dof")
    base = base_parameters(robot)
    limits = ExcitationLimits.of_robot(robot, TABLE_1_QDD, KR90_WORKSPACE)
    design = design_excitation(robot, limits, frequency_hz=FREQUENCY_3DOF_HZ, starts=1, seed=1, base=base)
    t = np.arange(0.0, design.trajectory.period, 1e-3)
    q, qd, qdd = design.trajectory.evaluate(t)
    tau = rigid_motor_torque(robot, q, qd, qdd)
    tau += 0.01 * np.abs(tau).max(axis=0) * np.random.default_rng(4).standard_normal(tau.shape)
    result = identify_rigid_body(robot, RigidRecord(t, q, tau), cutoff_hz=5.0, base=base)
    phi, distance = physically_consistent(robot, result)
    assert distance < 3 * np.sqrt(base.count)
    for i in range(3):
        inertia = pin.Inertia.FromDynamicParameters(phi[10 * i:10 * i + 10])
        principal = np.linalg.eigvalsh(inertia.inertia)
        assert inertia.mass > 0 and principal.min() > 0 and 2 * principal.max() <= principal.sum() + 1e-9
    assert np.all(phi[30:] >= 0)
    written = write_identified_robot(robot, result, phi, tmp_path / "k3.yaml", "test")
    assert not [line for line in written.warnings if line.startswith("link ")], written.warnings
    exported = rigid_motor_torque(load_robot(written.yaml), q, qd, qdd)
    exact = rigid_motor_torque(robot, q, qd, qdd)
    rms = np.sqrt(np.mean((exported - exact) ** 2, axis=0))
    assert np.all(rms < 0.01 * np.abs(exact).max(axis=0))


def test_bad_input_is_named(kr90, tmp_path, capsys) -> None:
    """Errors name the file, channels, joints or option: a record without torque channels, an inverted workspace
    box, a record too short for the low-pass, a robot with flexible links."""
    t = np.arange(0.0, 2.0, 1e-3)
    write_timeseries(tmp_path / "positions.csv", t, {f"q_m.{joint}": np.sin(t) for joint in kr90.joint_names})
    assert main(["identify-rigid", "kr90", str(tmp_path / "positions.csv")]) == 2
    message = capsys.readouterr().err
    assert "positions.csv" in message and "tau_m.*" in message
    assert main(["excite", "kr90", "--out", str(tmp_path / "x.yaml"), "--workspace", "1,0,0,0,1,1"]) == 2
    assert "--workspace" in capsys.readouterr().err
    short = RigidRecord(t[:300], np.zeros((300, 3)), np.zeros((300, 3)), "short.csv")
    with pytest.raises(IdentificationError, match="short.csv.*too short"):
        identify_rigid_body(kr90, short, cutoff_hz=5.0)
    with pytest.raises(IdentificationError, match="robot rrp: links .* are flexible"):
        identify_rigid_body(load_robot("rrp"), short, cutoff_hz=5.0)
