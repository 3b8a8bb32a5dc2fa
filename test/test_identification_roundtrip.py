"""Scompi round trip through the other cores: the impact experiment of seed 000 section 2.4.3 simulated at several
configurations (flexrobot_ros.simulation, LSODA), modes identified from the motor positions by OMA
(flexrobot_ros.oma, SSI-cov), and the joint stiffness identified from those modes, starting from a flexibility
YAML 20-30 % off. Reference: Table 2.1 (k = 25, 120, 120, 57, 29, 29 kN m/rad).

k1-k5 come back within 2 % (the acceptance of issue 7). k6 cannot: it moves only mode 12 (about 850 Hz, 80 %
damped), which OMA does not find (nor did the thesis' OMA, Table 2.5); the result must say so rather than
return a confident number.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.identification import MeasuredMode, ModalData, PoseModes, identify_joint_parameters
from flexrobot_ros.model import load_robot
from flexrobot_ros.oma.identify import identify_modes
from flexrobot_ros.simulation.impact_experiment import impact_experiment, thesis_configuration

TABLE_2_1_K = np.array([25.0, 120.0, 120.0, 57.0, 29.0, 29.0]) * 1000.0
CONFIGURATIONS = (1, 8, 20, 34, 50)                      # of the 50 of section 2.4.2 (8 is eq. 2.21)
OFF_K = np.array([1.3, 0.75, 1.2, 0.8, 1.25, 0.7])


@pytest.fixture(scope="module")
def oma_data() -> ModalData:
    """Modes identified by SSI-cov (orders 2-60) from 3 s of motor positions at 1 kHz after the 50 N impact."""
    poses = []
    for configuration in CONFIGURATIONS:
        record = impact_experiment(case=1, configuration=configuration)
        result = identify_modes(record.q_m - record.q_m[0], 1000.0, "ssi-cov", "2:60")
        poses.append(PoseModes(thesis_configuration(configuration), tuple(
            MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes)))
    return ModalData(tuple(poses), "motor", "simulated impacts + SSI-cov")


def test_oma_found_the_low_modes(oma_data):
    """Sanity of the input: at least 8 modes per pose, all below 200 Hz (mode 12 at ~850 Hz is not observable)."""
    for pose in oma_data.poses:
        frequencies = [m.frequency_hz for m in pose.modes]
        assert len(frequencies) >= 8 and max(frequencies) < 200.0


@pytest.mark.parametrize("selection", ["k", "k:joint1+joint2+joint3+joint4+joint5"])
def test_stiffness_from_simulated_oma(oma_data, selection):
    """Eigenvalue residuals, 8 seeded starts: k1-k5 within 2 % of Table 2.1 (their standard deviation for 0.5 %
    frequency / 0.5 point damping errors is below 1 %); identifying all six, k6 is flagged (at a bound or with a
    standard deviation above its value), not silently returned."""
    start = load_robot("scompi").with_parameters(stiffness=TABLE_2_1_K * OFF_K)
    result = identify_joint_parameters(start, oma_data, selection, starts=8, seed=0, residual="eigenvalue")
    error = result.robot.stiffness / TABLE_2_1_K - 1
    assert np.all(np.abs(error[:5]) < 0.02), error
    by_name = {p.name: p for p in result.parameters}
    for i in range(1, 6):
        assert by_name[f"k.joint{i}"].std < 0.01 * TABLE_2_1_K[i - 1]
    if "k.joint6" in by_name:
        k6 = by_name["k.joint6"]
        assert k6.at_bound or k6.std > k6.value
        assert any("k.joint6" in warning for warning in result.warnings)
    assert result.eigenvalue_rms < 0.01       # the identified model reproduces the OMA modes to about 1 %


def test_all_six_stiffnesses_with_a_grinding_tool(tmp_path):
    """k6 becomes observable when the tool has inertia about the wrist axis: a 4 kg grinder with its CoM 0.08 m off
    the z_6 axis (0.036 kg m^2 about it) brings the joint-6 mode down from ~850 Hz (80 % damped) to ~142 Hz (13 %),
    where the same impact + SSI-cov finds it. Then all six stiffnesses come back within 2 % of Table 2.1 from a start
    20-30 % off (measured modes that match no model mode at the far-off start are left out, as with raw OMA data)."""
    import shutil

    import yaml

    from flexrobot_ros.model import share_directory
    from flexrobot_ros.simulation.controllers import PDGravityCompensation
    from flexrobot_ros.simulation.excitation import RectangularPulse
    from flexrobot_ros.simulation.impact_experiment import IMPACT_FORCE, IMPACT_WINDOW, RECORD_INTEGRATION
    from flexrobot_ros.simulation.simulation import Simulation

    shutil.copy(share_directory() / "urdf" / "scompi.urdf", tmp_path / "scompi.urdf")
    document = yaml.safe_load((share_directory() / "config" / "scompi.yaml").read_text())
    document["urdf"] = "scompi.urdf"
    document["tool"] = {"mass": 4.0, "frame": "tool0", "com": [0.08, 0.0, 0.10],
                        "inertia": [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}
    (tmp_path / "grinder.yaml").write_text(yaml.safe_dump(document))
    robot = load_robot(tmp_path / "grinder.yaml", tool=True)
    poses = []
    for configuration in CONFIGURATIONS:
        q = thesis_configuration(configuration)
        simulation = Simulation(robot, PDGravityCompensation.create(robot, q), rate=1000.0, mode="accurate",
                                accurate=RECORD_INTEGRATION,
                                excitations=[RectangularPulse("tool0", IMPACT_FORCE, *IMPACT_WINDOW)])
        record = simulation.run(3.0)
        modes = identify_modes(record.q_m - record.q_m[0], 1000.0, "ssi-cov", "2:60").modes
        assert max(m.frequency_hz for m in modes) > 130.0       # the joint-6 mode is in the identified set
        poses.append(PoseModes(q, tuple(MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape))
                                        for m in modes)))
    data = ModalData(tuple(poses), "motor", "simulated impacts with a grinder + SSI-cov")
    start = robot.with_parameters(stiffness=TABLE_2_1_K * OFF_K)
    result = identify_joint_parameters(start, data, "k", starts=8, seed=0, residual="eigenvalue",
                                       drop_unmatched=True)
    error = result.robot.stiffness / TABLE_2_1_K - 1
    assert np.all(np.abs(error) < 0.02), error
