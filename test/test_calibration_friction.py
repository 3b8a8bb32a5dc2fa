"""Calibration that never invents (issue 37 item 5), on the identification core with simulated records.

The issue: self-calibrating the shipped LWR4 (stiffnesses scaled 0.77-1.21 in the true YAML) reported success with
k1 47 % low and pushed it, because the motor Coulomb friction (tanh width 0.01 rad/s) holds the motors after the
blow and the free-motor model does not; asking the KR90 for its unobservable d_fm made the observable d_f look
undetermined. Here the "robot" is the package's simulator (smoothed Coulomb friction as the YAML says) running a
true YAML with seeded stiffness factors in [0.77, 1.21], held at each pose by PD + gravity compensation, struck
with 50 N (LWR4) or 500 N (KR90) in a seeded direction, its motor encoders recorded for 2 s at 1 kHz after a
seeded delay with seeded encoder noise, and SSI-cov gives the modes. References: the truth itself, closed forms of
the friction linearization, the simulator plant's own Jacobian, and the true model's modes.

Stated tolerances of an accepted calibration: every identified stiffness within 3 % of the truth, every identified
link damping within 3 of its reported standard deviations; a parameter kept at its nominal value is named with
the reason. Every run is accepted with such values or refused with nothing applied.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.integrate import quad

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification import identify_joint_parameters, modal_data_from_model
from flexrobot_ros.identification.affine_model import Residuals
from flexrobot_ros.identification.calibration import CalibrationOptions, calibrate
from flexrobot_ros.identification.flexibility_update import write_identified_yaml
from flexrobot_ros.identification.identifiability import data_sensitivity
from flexrobot_ros.identification.matching import match_modes, model_shape
from flexrobot_ros.identification.modal_data import MeasuredMode, PoseModes
from flexrobot_ros.identification.motor_friction import pose_linearization, pose_modes, record_friction
from flexrobot_ros.model import load_robot
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.oma import identify_modes
from flexrobot_ros.simulation import FixedStepIntegration, PDGravityCompensation, RectangularPulse, Simulation
from flexrobot_ros.simulation.integrators import ClosedLoop

POSES = {"lwr4": [[0.0, 0.5, 0.0, -1.2, 0.0, 0.6, 0.0], [0.3, 0.9, 0.4, -0.6, 0.5, -0.8, 0.4],
                  [-0.4, -0.7, -0.3, 1.3, -0.6, 1.0, -0.5], [0.8, 1.3, -0.8, -1.6, 0.9, 0.4, 1.0]],
         "kr90": [[0.0, 0.96, -1.754], [0.0, 1.51, -1.754], [0.0, 1.134, -2.487], [0.5, 1.2, -2.0]]}
#: Blow [N] (LWR4: the simulator node's default impact.force magnitude) and encoder noise [rad] per robot.
BLOW = {"lwr4": 50.0, "kr90": 500.0}
NOISE = {"lwr4": 5e-8, "kr90": 1e-9}
SEEDS = (1, 2, 3)
K_TOLERANCE = 0.03


def true_robot(name: str, seed: int, folder, link_damping: bool = False):
    """The shipped robot with its stiffnesses scaled by U[0.77, 1.21] (seeded; with ``link_damping`` its d_f by
    U[0.7, 1.3] too), written as a true YAML as --true-yaml takes it and loaded back; and the nominal robot."""
    nominal = load_robot(name)
    rng = np.random.default_rng(seed)
    k = nominal.stiffness * rng.uniform(0.77, 1.21, nominal.n)
    d = nominal.link_damping * (rng.uniform(0.7, 1.3, nominal.n) if link_damping else 1.0)
    path = write_identified_yaml(nominal, {j: {"stiffness": k[i], "link_damping": d[i]}
                                           for i, j in enumerate(nominal.joint_names)},
                                 folder / f"{name}_true_{seed}.yaml", f"seeded truth {seed}", by="the test")
    return load_robot(path), nominal


class SimulatedCell:
    """The calibration cell on an in-process simulation of ``truth`` (module docstring); ``blow`` [N] along
    ``direction`` (a unit vector, world axes; None: seeded)."""

    def __init__(self, truth, seed: int, blow: float, noise: float, direction=None) -> None:
        self.truth, self.rng, self.blow, self.noise = truth, np.random.default_rng(1000 + seed), blow, noise
        self.direction = direction

    def move_to(self, pose):
        self.simulation = Simulation(self.truth, PDGravityCompensation.create(self.truth, pose), rate=1000.0,
                                     fixed=FixedStepIntegration(1))
        return self.simulation.state[:self.truth.n]

    def excite(self):
        angle = self.rng.uniform(0.0, 2.0 * np.pi)
        force = self.blow * (np.array([np.cos(angle), np.sin(angle), self.rng.uniform(-0.5, 0.5)])
                             if self.direction is None else np.asarray(self.direction, dtype=float))
        t0 = self.simulation.t + 0.001
        self.simulation.apply(RectangularPulse("tool0", (*force, 0.0, 0.0, 0.0), t0, t0 + 0.006))

    def measure_modes(self):
        self.simulation.advance(self.rng.uniform(0.0, 0.02))
        record = self.simulation.advance(2.0)
        self.velocities = record.qd_m
        q_m = record.q_m + self.rng.normal(0.0, self.noise, record.q_m.shape)
        result = identify_modes(q_m - q_m.mean(axis=0), 1000.0, "ssi-cov")   # as calibration_node
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if m.frequency_hz > 0 and 0.0 <= m.damping_ratio < 1.0]

    def motor_velocities(self):
        return self.velocities


class HeldModelCell:
    """Exact "measurements": the modes below 500 Hz of ``truth`` with its motors at rest inside the friction band
    (equivalent damping f_c / w on every motor), motor-side shapes; zero motor velocities."""

    def __init__(self, truth) -> None:
        self.truth = truth

    def move_to(self, pose):
        self.pose = np.asarray(pose, dtype=float)
        return self.pose

    def excite(self):
        pass

    def measure_modes(self):
        modes = pose_modes(self.truth, self.pose, self.truth.motor_coulomb / self.truth.coulomb_width)
        shapes = model_shape(modes, "motor")
        keep = np.flatnonzero(~modes.overdamped & (modes.frequencies_hz < 500.0) & (modes.damping_ratios < 0.5))
        return [MeasuredMode(modes.frequencies_hz[k], modes.damping_ratios[k], shapes[k]) for k in keep]

    def motor_velocities(self):
        return np.zeros((10, self.truth.n))


def check_run(result, truth, nominal) -> str:
    """Right values or a refusal (module docstring); returns 'accepted' or 'refused'."""
    if not result.accepted:
        assert result.refusal and result.robot is nominal and result.identified == {}, result.text()
        return "refused"
    values = {p.name: p for p in result.identification.parameters}
    asked = {p.name for p in result.identification.parameters} | set(result.kept)
    for j, joint in enumerate(truth.joint_names):
        if f"k.{joint}" in values:
            assert abs(values[f"k.{joint}"].value / truth.stiffness[j] - 1.0) <= K_TOLERANCE, result.text()
        if f"d_f.{joint}" in values:
            p = values[f"d_f.{joint}"]
            assert abs(p.value - truth.link_damping[j]) <= 3.0 * p.std, result.text()
    for name in asked - set(values):
        assert result.kept[name], name
    kept_k = [j for j, joint in enumerate(truth.joint_names) if f"k.{joint}" in result.kept]
    np.testing.assert_array_equal(result.robot.stiffness[kept_k], nominal.stiffness[kept_k])
    return "accepted"


def test_equivalent_damping_closed_forms():
    """d_eq = (f_c / w) mean(1 - tanh^2(v / w)) over the record: at a constant velocity its closed form; over
    Gaussian motion (sigma = 20 w, 200,000 samples) the Gaussian expectation (quadrature) within 4 standard errors
    of a sample mean, that expectation within 1 % of the sign-friction limit f_c sqrt(2 / pi) / sigma (Price's
    theorem); the regimes by the share of the record inside the band."""
    robot = load_robot("lwr4")
    w, f_c = robot.coulomb_width, robot.motor_coulomb
    constant = record_friction(robot, np.full((50, robot.n), 0.5 * w))
    np.testing.assert_allclose(constant.equivalent_damping, f_c / w / np.cosh(0.5) ** 2, rtol=1e-12)
    sigma, samples = 20.0 * w, 200_000
    gaussian = record_friction(robot, np.random.default_rng(7).normal(0.0, sigma, (samples, robot.n)))
    moments = [quad(lambda v: np.exp(-0.5 * (v / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
                    * (1.0 - np.tanh(v / w) ** 2) ** p,
                    -10.0 * sigma, 10.0 * sigma, points=[0.0], limit=200)[0] for p in (1, 2)]
    expected = moments[0] * f_c / w
    standard_error = np.sqrt((moments[1] - moments[0] ** 2) / samples) * f_c / w   # of a mean over the samples
    np.testing.assert_array_less(np.abs(gaussian.equivalent_damping - expected), 4.0 * standard_error)
    np.testing.assert_allclose(expected, f_c * np.sqrt(2 / np.pi) / sigma, rtol=0.01)
    assert {gaussian.regime(j) for j in range(robot.n)} == {"sliding"}  # 4 % of N(0, 20 w) lies inside w
    held = record_friction(robot, np.full((50, robot.n), 0.5 * w))
    assert {held.regime(j) for j in range(robot.n)} == {"held"} and held.nonlinear == ()
    partly = record_friction(robot, np.repeat([[0.5 * w], [50.0 * w]], 25, axis=0) * np.ones(robot.n))
    assert {partly.regime(j) for j in range(robot.n)} == {"partly held"} and len(partly.nonlinear) == robot.n
    np.testing.assert_allclose(partly.window_damping[0], f_c / w / np.cosh(0.5) ** 2, rtol=1e-12)  # first quarter
    assert "excite less" in partly.why_nonlinear() and "joint1 (partly held: 50 % of the record" in \
        partly.why_nonlinear()
    kr90 = load_robot("kr90")
    weak = record_friction(kr90, np.full((50, kr90.n), 20.0 * kr90.coulomb_width))
    assert {weak.regime(j) for j in range(kr90.n)} == {"negligible"}  # 1.2 N m against kd = 1.2e6 N m s/rad


def test_friction_linearization_is_the_simulators_own_jacobian():
    """The held-pose model with d_eq = f_c / w on the motors (the friction's slope at rest) has the eigenvalues of
    the simulator's closed loop linearized at rest with its friction slope (ClosedLoop.jacobian: the plant's
    analytic Jacobian, pinocchio's ABA derivatives), to 1e-8; the free-motor model (seed 000 eqs. 3.9-3.12, d_fm
    only) misses them by more than 5 %."""
    robot = load_robot("lwr4")
    q = np.array(POSES["lwr4"][1])
    simulation = Simulation(robot, PDGravityCompensation.create(robot, q), rate=1000.0)
    jacobian = ClosedLoop(simulation.plant, simulation.controller).jacobian(0.0, simulation.state)
    size = 4 * robot.n
    plant = np.linalg.eigvals(jacobian[:size, :size])
    plant = np.sort_complex(plant[plant.imag > 0])
    held = pose_linearization(robot, q, robot.motor_coulomb / robot.coulomb_width)
    model = np.linalg.eigvals(held.state_matrix())
    model = np.sort_complex(model[model.imag > 0])
    assert model.size == plant.size == 7
    np.testing.assert_allclose(model, plant, rtol=1e-8)
    free = modal_analysis(robot, q)
    oscillating = free.frequencies_hz[~free.overdamped & (free.damping_ratios < 0.5)]
    nearest = np.min(np.abs(oscillating[:, None] / (np.abs(plant) / (2 * np.pi))[None, :] - 1.0), axis=0)
    assert np.max(nearest) > 0.05


def test_held_motors_record_against_both_models(tmp_path):
    """A simulated LWR4 record (truth seed 1, 50 N blow): the motors stay inside the friction band throughout;
    every mode SSI-cov finds is within 0.4 damping points of the friction-linearized true model and in frequency
    within 0.1 %, the two close 2.7 / 2.9 Hz modes (five cycles in the 2 s record) within 0.3 %, except the odd
    harmonics of the tanh (3x and 5x a lightly damped mode, same damping ratio), which no model mode pairs. The
    free-motor true model pairs fewer of them and misses the ones both pair by more than 1 %, ten times the
    friction-linearized model's worst."""
    truth, _ = true_robot("lwr4", 1, tmp_path)
    q = np.array(POSES["lwr4"][0])
    simulation = Simulation(truth, PDGravityCompensation.create(truth, q), rate=1000.0, fixed=FixedStepIntegration(1))
    simulation.apply(RectangularPulse("tool0", (0.0, 50.0, 0.0, 0.0, 0.0, 0.0), 0.001, 0.007))
    record = simulation.advance(2.0)
    friction = record_friction(truth, record.qd_m)
    assert {friction.regime(j) for j in range(truth.n)} == {"held"}
    oma = identify_modes(record.q_m - record.q_m.mean(axis=0), 1000.0, "ssi-cov")
    measured = PoseModes(q, tuple(MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape))
                                  for m in oma.modes if 0.0 <= m.damping_ratio < 1.0))
    match = match_modes(pose_modes(truth, q, friction.equivalent_damping), measured, damping_tolerance=0.2)
    paired = match.model_mode >= 0
    assert paired.sum() >= 5
    np.testing.assert_array_less(np.abs(match.frequency_error[paired]), 3e-3)
    above = paired & (match.measured_frequency_hz > 5.0)
    np.testing.assert_array_less(np.abs(match.frequency_error[above]), 1e-3)
    np.testing.assert_array_less(np.abs(match.measured_damping_ratio - match.model_damping_ratio)[paired], 4e-3)
    for k in np.flatnonzero(~paired):   # an odd harmonic of a paired mode
        f, z = match.measured_frequency_hz[k], match.measured_damping_ratio[k]
        assert any(abs(f / (m * base) - 1.0) < 0.005 and abs(z - zb) < 0.3 * zb
                   for base, zb in zip(match.measured_frequency_hz[paired], match.measured_damping_ratio[paired])
                   for m in (3, 5)), (f, z)
    free = match_modes(modal_analysis(truth, q), measured)
    both = paired & (free.model_mode >= 0)
    assert free.matched.sum() < paired.sum()          # the low modes find no free-motor partner (28-100 % damped)
    worst_free = np.max(np.abs(free.frequency_error[both]))
    assert worst_free > 0.01 and worst_free > 10.0 * np.max(np.abs(match.frequency_error[both]))


def test_lwr4_over_seeds(tmp_path):
    """The issue's case (LWR4, k x U[0.77, 1.21] in the true YAML, default 'k,d_f'), 3 seeds of truth, blow
    direction, record delay and encoder noise: every run accepted with right values or refused; at least 2 of 3
    accepted. The truth's d_f is 0: kept at nominal (at its bound) or within 3 standard deviations of 0."""
    outcomes = []
    for seed in SEEDS:
        truth, nominal = true_robot("lwr4", seed, tmp_path)
        result = calibrate(nominal, POSES["lwr4"], SimulatedCell(truth, seed, BLOW["lwr4"], NOISE["lwr4"]))
        assert all(f is not None and not f.nonlinear for f in result.friction)  # held: modelled, nothing left out
        outcomes.append(check_run(result, truth, nominal))
        print(f"seed {seed}: {outcomes[-1]}; k errors [%]: "
              f"{np.round(100 * (result.robot.stiffness / truth.stiffness - 1), 2).tolist()}; kept {list(result.kept)}")
    assert outcomes.count("accepted") >= 2, outcomes


def test_kr90_unobservable_motor_damping_over_seeds(tmp_path):
    """KR90 asked for 'k,d_f,d_fm' (the issue's case), k x U[0.77, 1.21] and d_f x U[0.7, 1.3] in the true YAML, 3
    seeds (encoder noise 1 % of the motor signal: kp = 1e9 leaves the motors 1e-7 rad of motion): its motors are
    held by kp = 1e9 and their modes (160-180 Hz, 60-70 % damped) are not measured, so every
    d_fm is kept at its nominal value as not determined, and every d_f is identified (not kept) within 3 standard
    deviations, every k within 3 %, in every accepted run; at least 2 of 3 accepted."""
    outcomes = []
    for seed in SEEDS:
        truth, nominal = true_robot("kr90", seed, tmp_path, link_damping=True)
        result = calibrate(nominal, POSES["kr90"], SimulatedCell(truth, seed, BLOW["kr90"], NOISE["kr90"]),
                           CalibrationOptions(parameters="k,d_f,d_fm"))
        outcomes.append(check_run(result, truth, nominal))
        if outcomes[-1] == "accepted":
            assert sorted(result.kept) == ["d_fm.joint1", "d_fm.joint2", "d_fm.joint3"], result.text()
            assert all("not determined" in why or "not observable" in why for why in result.kept.values())
            assert [p.name for p in result.identification.parameters if p.kind == "d_f"] == [
                "d_f.joint1", "d_f.joint2", "d_f.joint3"]
            np.testing.assert_array_equal(result.robot.motor_damping, nominal.motor_damping)
        print(f"seed {seed}: {outcomes[-1]}; d_f errors [%]: "
              f"{np.round(100 * (result.robot.link_damping / truth.link_damping - 1), 1).tolist()}")
    assert outcomes.count("accepted") >= 2, outcomes


def test_partly_held_motors_are_left_out_and_refused(tmp_path):
    """A 200 N blow along y0 on the LWR4 makes some motors slide for 10-60 % of the record (joints 1 and 3 at the
    first pose, 1 and 6 at the second): their friction's damping changes along the decaying response and no linear
    model holds it. Both poses are left out, saying which motors and advising a smaller blow, and the calibration is
    refused with nothing applied."""
    truth, nominal = true_robot("lwr4", 1, tmp_path)
    result = calibrate(nominal, POSES["lwr4"][:2], SimulatedCell(truth, 1, 200.0, 0.0, direction=(0.0, 1.0, 0.0)))
    assert sorted(result.left_out) == [0, 1] and not result.accepted and result.robot is nominal
    assert all("holds its motor only part of the time" in why and "excite less" in why
               for why in result.left_out.values())
    assert "left out (their motor friction)" in result.refusal[0]
    assert "pose 1 left out: " in result.text()


SUBSETS = [",".join(c) for r in (1, 2, 3) for c in itertools.combinations(("k", "d_f", "d_fm"), r)]


@pytest.mark.parametrize("name", ["lwr4", "kr90"])
def test_every_subset_on_exact_modes(name, tmp_path):
    """Every subset of k, d_f, d_fm asked, on exact modes of the truth (k x U[0.77, 1.21], d_f x U[0.7, 1.3]) with
    its motors at rest inside the friction band: accepted with right values (as stated; here exact data) and the
    parameters the modes do not determine kept at nominal with the reason, or refused with nothing applied when
    what is left at nominal cannot reproduce the modes. With k asked, the result is accepted and every k is
    identified within 0.1 %; asking d_fm on top spoils nothing (the same k and d_f to 1e-6 as without it)."""
    truth, nominal = true_robot(name, 5, tmp_path, link_damping=True)
    results = {}
    for subset in SUBSETS:
        result = calibrate(nominal, POSES[name], HeldModelCell(truth), CalibrationOptions(parameters=subset, starts=2))
        check_run(result, truth, nominal)
        results[subset] = result
        if "k" in subset.split(","):
            assert result.accepted, (subset, result.text())
            np.testing.assert_allclose(result.robot.stiffness, truth.stiffness, rtol=1e-3)
    for with_fm, without in (("k,d_fm", "k"), ("k,d_f,d_fm", "k,d_f")):
        np.testing.assert_allclose(results[with_fm].robot.stiffness, results[without].robot.stiffness, rtol=1e-6)
        np.testing.assert_allclose(results[with_fm].robot.link_damping, results[without].robot.link_damping,
                                   rtol=1e-6)


def test_a_refusal_names_the_nodes_setting(tmp_path):
    """KR90 asked for d_fm only: no parameter is determined by the measured modes; the refusal names the setting
    the node reads (identification.parameters), not the CLI's --params."""
    truth, nominal = true_robot("kr90", 2, tmp_path)
    result = calibrate(nominal, POSES["kr90"], HeldModelCell(truth), CalibrationOptions(parameters="d_fm", starts=2))
    assert not result.accepted and result.identification is None
    assert result.refusal == ("no parameter of 'd_fm' (identification.parameters) is determined by the measured "
                              "modes",)
    assert set(result.kept) == {"d_fm.joint1", "d_fm.joint2", "d_fm.joint3"}


class LinearResiduals(Residuals):
    """Residuals with a fixed Jacobian (rows: Re, Im of 2 modes; columns: 3 parameters, the last one moving
    nothing) and unit data Jacobians (d residual / d frequency = 1 per Hz on Re, d / d damping = 1 on Im)."""

    def __init__(self) -> None:
        self.eigenvalues = np.zeros(2, dtype=complex)

    def jacobian(self, p):
        return np.array([[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])

    def data_jacobian(self, p):
        return np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])


def test_a_parameter_in_the_null_space_has_an_infinite_standard_deviation():
    """The data sensitivity of a parameter that moves no residual is unobservable (std inf, not the 0 of a
    minimum-norm solution); the others keep their closed forms: dp_1 = -dRe_1 / 2 = -df_1 / 2 (std 0.5 x 1 % of
    10 Hz), dp_2 = -dIm_1 / 4 = -dzeta_1 / 4 (std 0.25 x 0.02)."""
    sensitivity = data_sensitivity(LinearResiduals(), np.ones(3), np.ones(3, dtype=bool), np.array([10.0, 20.0]),
                                   0.01, 0.02)
    assert sensitivity.unobservable.tolist() == [False, False, True]
    np.testing.assert_allclose(sensitivity.std[:2], [0.5 * 0.01 * 10.0, 0.25 * 0.02], rtol=1e-12)
    assert np.isinf(sensitivity.std[2]) and sensitivity.null_weight[2] == pytest.approx(1.0)


def test_the_counting_refusal_names_the_callers_setting():
    """Too few measured eigenvalues for the unknowns (seed 000 eq. 3.32): ``flexrobot identify`` is told to ask
    fewer with --params, calibration_node with identification.parameters."""
    robot = load_robot("kr90")
    data = modal_data_from_model(robot, POSES["kr90"][:2], mode_indices=[0])
    with pytest.raises(IdentificationError, match=r"identify fewer parameters \(--params\)"):
        identify_joint_parameters(robot, data, "k,d_f")
    with pytest.raises(IdentificationError, match=r"identify fewer parameters \(identification\.parameters\)"):
        identify_joint_parameters(robot, data, "k,d_f", parameters_setting="identification.parameters")
