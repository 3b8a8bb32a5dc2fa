"""Self-calibration of flexible links (issue 26): the Canadarm of seed 003 (Table 2: three 6/7/2 m beams, EI = 1e5
N m^2, two clamped-free assumed modes each, rigid joints held by the YAML's PD gains K_P = 2e4 N m/rad, K_D = 2e3
N m s/rad) built "as is" with every link's bending stiffness 15 % above the shipped YAML's (a true YAML written by
the package's own writer); the calibration starts from the shipped YAML.

Each pose: the simulated true arm held at the pose is struck at its tip (300 N along y0 for 20 ms) and its joint
encoders (motor_states: for a rigid joint the joint angle) are recorded for 16 s at 100 Hz; SSI-cov with state
orders 2..60 (3 channels, at most 8 oscillating modes below the 50 Hz Nyquist limit). Measured on these records and
on ones starting 0.26-0.5 s before the blow, as the calibration node's do, with 0-1e-6 rad of encoder noise: 8 s
records with orders 2..40 found no mode at all when the record started 0.26 s early, orders up to 100 fit the
noise-free records with spurious poles at 7-11 Hz (one took the 2.80 Hz mode's place in the pairing); 16 s with
2..60 found the 2.7-4.7 Hz link modes every time and no spurious one. The lowest mode, a 0.11-0.14 Hz joint mode
of the 15 m arm on K_P, has a 7-9 s period. The simulator is the Python recursion, not the compiled plant: compiling
the true arm's generated C costs 10-35 s per EI value, more than the whole test; 3 x 16 s of records cost about 8 s
of CPU.

The references are the true YAML's values themselves and the modal analysis of the true model (the flexible-link
linearization, which the simulator's free decay reproduces within 0.5 %: test_flexible_links_closed_loop.py).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from flexrobot_ros.errors import IdentificationError, ModelError
from flexrobot_ros.identification.calibration import CalibrationOptions, calibrate
from flexrobot_ros.identification.flexibility_update import write_identified_yaml
from flexrobot_ros.identification.link_identification import identify_link_parameters
from flexrobot_ros.identification.modal_data import MeasuredMode, ModalData, PoseModes, model_shape
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.output_files import keep_previous
from flexrobot_ros.oma import identify_modes
from flexrobot_ros.simulation import RectangularPulse, Simulation
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller

LINKS = ("link1", "link2", "link3")
EI_FACTOR = 1.15
RATE_HZ = 100.0
RECORD_S = 16.0
ORDERS = "2:60"
CALIBRATION_POSES = [[0.4, -1.1, 0.7], [0.0, 1.5, 1.5], [1.0, -1.2, 0.8]]
VALIDATION_POSES = [[-0.5, 0.8, -1.0], [0.2, 2.0, -0.6]]
#: The blow [N], world axes at tool0 (the arm's tip), and its length [s].
IMPACT, IMPACT_S = (0.0, 300.0, 0.0), 0.02


class SimulatedArm:
    """The calibration cell on an in-process simulation of ``robot`` (module docstring)."""

    def __init__(self, robot) -> None:
        self.plant = ElasticRobotPlant(robot)
        self.simulation = None

    def move_to(self, pose):
        self.simulation = Simulation(self.plant, hold_controller(self.plant, pose), q0=pose, rate=RATE_HZ)
        return self.simulation.state[:self.plant.n]

    def excite(self):
        t0 = self.simulation.t + 1.0 / RATE_HZ
        self.simulation.apply(RectangularPulse("tool0", IMPACT, t0, t0 + IMPACT_S))

    def measure_modes(self):
        q_m = self.simulation.advance(RECORD_S).q_m
        result = identify_modes(q_m - q_m.mean(axis=0), RATE_HZ, "ssi-cov", ORDERS)
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if m.frequency_hz > 0 and 0.0 <= m.damping_ratio < 1.0]


def frequency_errors(reference, model, below_hz: float) -> np.ndarray:
    """f_model / f_reference - 1 of every oscillating mode of ``reference`` below ``below_hz`` and under 90 %
    damping, each paired with a distinct oscillating mode of ``model`` by the nearest eigenvalue (Hungarian,
    relative distance). Left out: modes within 10 % of critical damping, whose "frequency" is no vibration (the true
    arm's 25.8 Hz, 99.7 %-damped mode at calibration pose 2 is overdamped in the nominal model)."""
    keep = np.flatnonzero(~reference.overdamped & (reference.frequencies_hz < below_hz)
                          & (reference.damping_ratios < 0.9))
    candidates = np.flatnonzero(~model.overdamped)
    lam, mu = reference.eigenvalues[keep], model.eigenvalues[candidates]
    rows, cols = linear_sum_assignment(np.abs(lam[:, None] - mu[None, :]) / np.abs(lam)[:, None])
    assert len(rows) == len(keep)
    return model.frequencies_hz[candidates[cols]] / reference.frequencies_hz[keep[rows]] - 1.0


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    nominal = load_robot("canadarm")
    folder = tmp_path_factory.mktemp("as_built")
    true_yaml = write_identified_yaml(nominal, {}, folder / "canadarm_as_built.yaml",
                                      f"as built: every link's EI x {EI_FACTOR}", by="test_link_calibration",
                                      links={link: {"EI": EI_FACTOR * 1e5} for link in LINKS})
    truth = load_robot(true_yaml)
    messages: list[str] = []
    result = calibrate(nominal, CALIBRATION_POSES, SimulatedArm(truth),
                       CalibrationOptions(parameters="EI", starts=1), messages.append)
    return truth, nominal, result, messages


def test_link_modes_within_one_percent_after_calibration(calibrated):
    """Issue 26 acceptance: "Canadarm with link bending stiffness 15 % off: the link modes within 1 % after
    calibration". At the 3 calibration poses and 2 others, every oscillating mode of the true arm below the 50 Hz
    Nyquist limit (joint-dominated ones included) is predicted by the calibrated model within 1 % (measured:
    0.07 %); the nominal model was up to 7.9 % off on the link modes (f ~ sqrt(EI): sqrt(1.15) - 1 = 7.2 % for a
    beam alone)."""
    truth, nominal, result, _ = calibrated
    worst = {"before": 0.0, "after": 0.0}
    for q in CALIBRATION_POSES + VALIDATION_POSES:
        reference = modal_analysis(truth, np.asarray(q))
        for name, model in (("before", nominal), ("after", result.robot)):
            errors = frequency_errors(reference, modal_analysis(model, np.asarray(q)), 0.5 * RATE_HZ)
            worst[name] = max(worst[name], float(np.abs(errors).max()))
    print(f"worst mode frequency error at 5 poses: {100 * worst['before']:.2f} % before, "
          f"{100 * worst['after']:.3f} % after calibration")
    assert worst["after"] < 0.01, worst
    assert worst["before"] > 0.05, worst


def test_identified_bending_stiffness_within_one_percent(calibrated):
    """Every link's EI is determined (sensitivity matrix of full rank 3, none kept) and identified within 1 % of the
    true 1.15e5 N m^2 (measured: 0.12 %)."""
    truth, nominal, result, messages = calibrated
    assert result.failure is None and len(result.data.poses) == 3 and not result.kept
    report = result.identification.identifiability
    assert report.rank == 3 and report.full_rank
    identified = np.array([result.robot.flexible_links[link].EI_y for link in LINKS])
    expected = np.array([truth.flexible_links[link].EI_y for link in LINKS])
    np.testing.assert_allclose(expected, EI_FACTOR * 1e5, rtol=1e-12)
    error = identified / expected - 1.0
    print("EI error [%]: " + ", ".join(f"{100 * e:+.3f}" for e in error)
          + f"; condition number {report.condition_number:.3g}")
    assert np.max(np.abs(error)) < 0.01, error
    assert [p.name for p in result.identification.parameters] == [f"EI.{link}" for link in LINKS]
    assert all(p.unit == "N m^2" and p.std > 0 for p in result.identification.parameters)
    assert any(message.startswith("pose 3/3: ") for message in messages)
    assert "EI.link1" in result.text() and "f before [Hz]" in result.text()


def test_calibrated_yaml_keeps_the_old_one(calibrated, tmp_path):
    """The calibrated YAML (as calibration_node writes it: the file it replaces renamed <name>.1.bak) holds the
    identified EI with a header naming the old values, loads back to them, and keeps the rest of the text."""
    _, nominal, result, _ = calibrated
    out = tmp_path / "calibrated.yaml"
    out.write_text("previous calibration\n")
    kept = keep_previous(out)
    write_identified_yaml(nominal, result.identified, out, "self-calibration at 3 poses", by="calibration_node",
                          links=result.identified_links)
    assert (tmp_path / "calibrated.yaml.1.bak").read_text() == "previous calibration\n" and ".1.bak" in kept
    text = out.read_text()
    assert "link parameters identified by calibration_node" in text
    assert "flexible_links.link1.EI: " in text and "(was 100000.0)" in text
    assert "method: assumed_modes, modes: 2, family: clamped_free, tip_frame: tool0" in text
    written = load_robot(out)
    for link in LINKS:
        assert written.flexible_links[link].EI_y == pytest.approx(result.robot.flexible_links[link].EI_y,
                                                                  rel=1e-9)
    assert written.flexible_links["link1"].damping_ratio == 0.0


class ModelModes:
    """A calibration cell whose "measurements" are the modes of ``robot`` (no simulation, no OMA): oscillating
    modes below ``below_hz`` with damping ratios under 0.5, joint-side shapes."""

    def __init__(self, robot, below_hz: float) -> None:
        self.robot, self.below_hz, self.pose = robot, below_hz, None

    def move_to(self, pose):
        self.pose = np.asarray(pose, dtype=float)
        return self.pose

    def excite(self):
        pass

    def measure_modes(self):
        modes = modal_analysis(self.robot, self.pose)
        shapes = model_shape(modes, "motor")
        keep = np.flatnonzero(~modes.overdamped & (modes.frequencies_hz < self.below_hz)
                              & (modes.damping_ratios < 0.5))
        return [MeasuredMode(modes.frequencies_hz[k], modes.damping_ratios[k], shapes[k]) for k in keep]


def test_link_damping_identified_where_observable():
    """EI and damping ratio of every link (truth: EI x 1.15, zeta 0.03 on each link; nominal zeta 0) from exact modal
    data at the 3 calibration poses: with the modes below 50 Hz every parameter is determined and identified
    exactly; with those below 10 Hz only (encoders sampled at 20 Hz), link 3's modes (13.5 Hz and above) are gone
    and its damping ratio is not determined (standard deviation above half its value for 0.5 % frequency and 0.5
    damping-point uncertainty): reported, kept at its nominal value, and the rest identified without it."""
    nominal = load_robot("canadarm")
    truth = nominal.with_link_parameters({link: {"EI": EI_FACTOR * 1e5, "damping_ratio": 0.03} for link in LINKS})
    options = CalibrationOptions(parameters="EI,zeta", starts=1)
    full = calibrate(nominal, CALIBRATION_POSES, ModelModes(truth, 50.0), options)
    assert not full.kept
    for link in LINKS:
        assert full.robot.flexible_links[link].EI_y == pytest.approx(EI_FACTOR * 1e5, rel=1e-6)
        assert full.robot.flexible_links[link].damping_ratio == pytest.approx(0.03, rel=1e-5)
    low = calibrate(nominal, CALIBRATION_POSES, ModelModes(truth, 10.0), options)
    assert list(low.kept) == ["zeta.link3"] and "not determined" in low.kept["zeta.link3"]
    assert low.robot.flexible_links["link3"].damping_ratio == 0.0
    assert [p.name for p in low.identification.parameters] == ["EI.link1", "EI.link2", "EI.link3", "zeta.link1",
                                                                 "zeta.link2"]
    assert low.robot.flexible_links["link1"].damping_ratio == pytest.approx(0.03, rel=0.05)
    assert "zeta.link3: kept at its nominal value" in low.text()


def test_bad_requests_are_refused_by_name():
    """Mixed joint and link parameters, joint parameters on a robot with flexible links (before anything moves), an
    unknown link, and bad replacement values are refused with messages naming them."""
    nominal = load_robot("canadarm")
    with pytest.raises(IdentificationError, match="separate runs"):
        calibrate(nominal, CALIBRATION_POSES, ModelModes(nominal, 50.0), CalibrationOptions(parameters="k,EI"))
    with pytest.raises(IdentificationError, match="has flexible links or rigid joints: calibrate its links' EI"):
        calibrate(nominal, CALIBRATION_POSES, ModelModes(nominal, 50.0), CalibrationOptions(parameters="k"))
    data = ModalData((PoseModes(np.zeros(3), (MeasuredMode(1.0, 0.1),)),), "motor", "test", "canadarm")
    with pytest.raises(IdentificationError, match="unknown flexible link 'link7'"):
        identify_link_parameters(nominal, data, "EI:link7")
    with pytest.raises(IdentificationError, match="has no flexible links"):
        identify_link_parameters(load_robot("scompi"), data, "EI")
    with pytest.raises(ModelError, match=r"flexible_links.link2.EI: expected > 0"):
        nominal.with_link_parameters({"link2": {"EI": -1.0}})
    with pytest.raises(ModelError, match=r"cannot replace 'EI.z'"):
        nominal.with_link_parameters({"link2": {"EI.z": 1.0}})
