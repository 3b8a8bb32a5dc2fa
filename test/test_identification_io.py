"""Identification input and output: refusals of bad or insufficient modal data (with messages naming file, pose,
mode and field), mode matching by frequency and MAC, the text-preserving flexibility-YAML update, and the
``flexrobot identify`` command end to end. Data come from the modal core at the planar 2R robot's YAML values
(seed 000 section 3.5.1), so the exact identification answer is that YAML."""
from __future__ import annotations

import difflib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification import (
    MeasuredMode, ModalData, PoseModes, identify_joint_parameters, match_modes, modal_data_from_model,
    parse_modal_data, read_modal_data, write_modal_data)
from flexrobot_ros.identification.flexibility_update import write_identified_yaml, yaml_float
from flexrobot_ros.identification.parameters import parse_bounds, parse_parameters
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot

POSES = np.array([[1.474, 1.765], [0.133, 1.947], [2.193, 0.839], [0.667, 0.501], [2.24, 2.208]])  # Table 3.1


@pytest.fixture(scope="module")
def robot():
    return load_robot("planar_2r")


@pytest.fixture(scope="module")
def data(robot):
    return modal_data_from_model(robot, POSES, (0, 3), shapes="motor", source="2R model")


def document(data: ModalData) -> dict:
    return yaml.safe_load(yaml.safe_dump(data.to_document()))


# ---------------------------------------------------------------- refusals
def test_one_pose_is_refused(robot, data):
    """All four modes at one pose (8 real equations for 2 unknowns) are still refused: the pose-independent
    parameters are separated by how the modes change with the pose."""
    one = modal_data_from_model(robot, POSES[:1], range(4), source="one pose")
    with pytest.raises(IdentificationError, match="one pose.*two or more distinct poses"):
        identify_joint_parameters(robot, one, "k")
    repeated = ModalData((data.poses[0], PoseModes(data.poses[0].q.copy(), data.poses[0].modes)), source="same q")
    with pytest.raises(IdentificationError, match="one pose|eq. 3.32"):
        identify_joint_parameters(robot, repeated, "k")


def test_fewer_eigenvalues_than_unknowns_is_refused(robot, data):
    """Eq. 3.32: 5 poses x 1 mode = 5 eigenvalues for 6 unknowns; the message names the unknowns."""
    few = ModalData(tuple(PoseModes(p.q, p.modes[:1]) for p in data.poses), source="five modes")
    with pytest.raises(IdentificationError, match=r"5 distinct measured eigenvalue.*6 unknown.*k\.joint1"):
        identify_joint_parameters(robot, few)


@pytest.mark.parametrize("field,value,message", [
    ("frequency_hz", float("nan"), "expected a finite number"),
    ("frequency_hz", -2.0, "frequency > 0"),
    ("damping_ratio", float("inf"), "expected a finite number"),
    ("damping_ratio", 12.03, "fractions: 0.05 means 5 %"),
    ("damping_ratio", "0.1", "expected a number"),
])
def test_bad_mode_values_are_refused(data, field, value, message):
    """Non-finite, negative, percent-instead-of-fraction and non-numeric values: the error names the file, pose,
    mode and field."""
    doc = document(data)
    doc["poses"][2]["modes"][1][field] = value
    with pytest.raises(IdentificationError, match=rf"modes\.yaml: poses\[2\]\.modes\[1\]\.{field}: .*{message}"):
        parse_modal_data(doc, "modes.yaml")


def test_bad_files_and_structure_are_refused(tmp_path, data, robot):
    """Missing file, malformed YAML, missing keys, non-finite q, wrong q length."""
    with pytest.raises(IdentificationError, match="cannot read"):
        read_modal_data(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("poses: [q: [1, 2]\n")
    with pytest.raises(IdentificationError, match="malformed YAML"):
        read_modal_data(bad)
    doc = document(data)
    del doc["poses"][0]["modes"][0]["damping_ratio"]
    with pytest.raises(IdentificationError, match=r"poses\[0\]\.modes\[0\]: missing 'damping_ratio'"):
        parse_modal_data(doc, "x.yaml")
    doc = document(data)
    doc["poses"][1]["q"][0] = float("nan")
    with pytest.raises(IdentificationError, match=r"poses\[1\]\.q\[0\]"):
        parse_modal_data(doc, "x.yaml")
    doc = document(data)
    doc["poses"][3]["q"] = [0.1, 0.2, 0.3]
    with pytest.raises(IdentificationError, match=r"poses\[3\]\.q: expected 2 joint positions"):
        identify_joint_parameters(robot, parse_modal_data(doc, "x.yaml"), "k")


def test_unmatched_modes_are_refused(robot, data):
    """A spurious 40 Hz mode (the 2R's modes lie below 16 Hz) is refused, naming pose, mode and frequency, or left
    out with a warning on request (drop_unmatched); more measured modes than model modes leave some unmatched."""
    poses = list(data.poses)
    poses[1] = PoseModes(poses[1].q, poses[1].modes + (MeasuredMode(40.0, 0.02),))
    with pytest.raises(IdentificationError, match=r"poses\[1\]\.modes\[2\]: 40 Hz"):
        identify_joint_parameters(robot, ModalData(tuple(poses), source="spurious"), "k")
    dropped = identify_joint_parameters(robot, ModalData(tuple(poses), source="spurious"), "k", starts=2,
                                        drop_unmatched=True)
    assert "poses[1].modes[2]" in dropped.warnings[0] and "left out" in dropped.warnings[0]
    np.testing.assert_allclose(dropped.robot.stiffness, robot.stiffness, rtol=1e-6)
    too_many = PoseModes(poses[0].q, tuple(MeasuredMode(f, 0.1) for f in (2.8, 5.2, 6.6, 9.4, 9.5)))
    match = match_modes(modal_analysis(robot, too_many.q), too_many)
    assert (match.model_mode >= 0).sum() == 4 and "more measured modes" in " ".join(match.reasons)


def test_bad_parameter_selections_and_bounds(robot):
    with pytest.raises(IdentificationError, match="unknown kind 'kk'"):
        parse_parameters(robot, "kk")
    with pytest.raises(IdentificationError, match="unknown joint 'joint9'"):
        parse_parameters(robot, "k:joint9")
    assert [p.name for p in parse_parameters(robot, "d_fm:joint2,k,d_f:joint1")] == \
        ["k.joint1", "k.joint2", "d_f.joint1", "d_fm.joint2"]
    assert parse_bounds("k=0:5000,d_f:joint1=0:10") == {"k": (0.0, 5000.0), "d_f:joint1": (0.0, 10.0)}
    with pytest.raises(IdentificationError, match="KIND\\[:JOINT\\]=LOW:HIGH"):
        parse_bounds("k=5000")


# ---------------------------------------------------------------- matching
def test_matching_by_frequency_and_mac(robot):
    """Modes listed out of order and with a frequency halfway between model modes 2 and 3: the MAC of the given
    shape (motor coordinates) decides, and the assignment follows the modal core's modes, not the list order."""
    q = POSES[0]
    model = modal_analysis(robot, q)
    shapes = model.mode_shapes[robot.n:]                       # motor-side shapes (encoder channels)
    middle = 0.5 * (model.frequencies_hz[1] + model.frequencies_hz[2])
    measured = PoseModes(q, (MeasuredMode(model.frequencies_hz[3], 0.1, shapes[:, 3]),
                             MeasuredMode(middle, 0.2, shapes[:, 2] * (0.3 - 2j)),
                             MeasuredMode(model.frequencies_hz[0], 0.1, shapes[:, 0])))
    match = match_modes(model, measured)
    assert match.model_mode.tolist() == [3, 2, 0]
    np.testing.assert_allclose(match.mac, 1.0, atol=1e-12)
    measured_wrong = PoseModes(q, (MeasuredMode(middle, 0.2, shapes[:, 1]),))
    assert match_modes(model, measured_wrong).model_mode.tolist() == [1]
    with pytest.raises(IdentificationError, match=r"shape: expected 2 entries \(motor coordinates\), got 4"):
        match_modes(model, PoseModes(q, (MeasuredMode(2.8, 0.1, np.ones(4)),)))


# ---------------------------------------------------------------- YAML output
def test_yaml_float_literals_are_floats_for_pyyaml():
    for value in (2000.0, 1.0e-5, 3.91, 0.0, 123456789.123, 2.5e12):
        text = yaml_float(value)
        assert isinstance(yaml.safe_load(text), float) and abs(yaml.safe_load(text) - value) <= 1e-9 * abs(value)


def test_yaml_update_changes_only_identified_values(tmp_path, robot):
    """Block-style YAML with comments, a joint without link_damping (inserted), a relative URDF path (made absolute,
    as the copy lives in another directory): every other line is byte-identical and the file loads to the new
    values."""
    urdf = Path(robot.urdf_path)
    source_dir = tmp_path / "cell"
    source_dir.mkdir()
    (source_dir / "robot.urdf").write_text(urdf.read_text())
    source = source_dir / "planar.yaml"
    source.write_text(
        "# my planar arm, calibrated 2024\n"
        "robot: planar_2r\n"
        "urdf: robot.urdf   # next to this file\n"
        "gravity: [0.0, -9.81, 0.0]\n"
        "joints:\n"
        "  joint1:\n"
        "    stiffness: 2000.0      # from the datasheet\n"
        "    link_damping: 3.91\n"
        "    motor_damping: 2.04\n"
        "    reflected_inertia: 4.0572\n"
        "  joint2:   # wrist\n"
        "    stiffness: 1600.0\n"
        "    motor_damping: 1.68    # guessed\n"
        "    reflected_inertia: 2.2148\n"
        "controller: {kp: 3600.0, kd: 60.0}\n")
    mine = load_robot(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = write_identified_yaml(mine, {"joint1": {"stiffness": 1987.654321}, "joint2": {"link_damping": 2.5}},
                                out_dir / "identified.yaml", "from test data (10 modes at 5 poses)")
    new = out.read_text().splitlines()
    old = source.read_text().splitlines()
    header = [line for line in new if line.startswith("# ") and line not in old]
    assert any("identified by 'flexrobot identify'" in line for line in header)
    assert any("from test data (10 modes at 5 poses)" in line for line in header)
    assert any("joint1.stiffness: 1987.654321 (was 2000.0)" in line for line in header)
    changed = [line for line in difflib.ndiff(old, new) if line[:2] in ("- ", "+ ") and line[2:] not in header]
    target = (source_dir / "robot.urdf").resolve()
    assert changed == ["- urdf: robot.urdf   # next to this file", f"+ urdf: {target}   # next to this file",
                       "-     stiffness: 2000.0      # from the datasheet",
                       "+     stiffness: 1987.654321      # from the datasheet",
                       "+     link_damping: 2.5"], changed
    loaded = load_robot(out)
    assert loaded.stiffness.tolist() == [1987.654321, 1600.0]
    assert loaded.link_damping.tolist() == [3.91, 2.5]
    assert loaded.motor_damping.tolist() == mine.motor_damping.tolist()
    with pytest.raises(IdentificationError, match="stiffness"):
        write_identified_yaml(mine, {"joint1": {"stiffness": 0.0}}, out_dir / "bad.yaml", "x")


# ---------------------------------------------------------------- command line
@pytest.mark.parametrize("residual", ["determinant", "eigenvalue"])
def test_identify_command_end_to_end(tmp_path, robot, data, capsys, residual):
    """``flexrobot identify planar_2r --modal-data FILE --params k,d_f --residual R --json``: exit 0, JSON with the
    YAML's values (data generated from them), identified YAML + text/JSON reports + PNG written."""
    modes = write_modal_data(tmp_path / "modes.yaml", data)
    out = tmp_path / "planar_identified.yaml"
    code = main(["identify", "planar_2r", "--modal-data", str(modes), "--params", "k,d_f", "--starts", "4",
                 "--residual", residual, "--out", str(out), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(report["identified"]["stiffness"], robot.stiffness, rtol=1e-6)
    np.testing.assert_allclose(report["identified"]["link_damping"], robot.link_damping, rtol=1e-6)
    assert report["identifiability"]["n_eigenvalues"] == 10 and report["residual"] == residual
    for key in ("yaml", "report_txt", "report_json", "plot"):
        assert Path(report["files"][key]).stat().st_size > 0
    assert Path(report["files"]["plot"]).read_bytes()[:4] == b"\x89PNG"
    loaded = load_robot(out)
    np.testing.assert_allclose(loaded.stiffness, robot.stiffness, rtol=1e-6)
    assert "objective F (eq. 3.28)" in Path(report["files"]["report_txt"]).read_text()


def test_identify_command_errors(tmp_path, data, capsys):
    """Bad input gives exit status 2 and a one-line message (no traceback)."""
    doc = document(data)
    doc["poses"] = doc["poses"][:1]
    one = tmp_path / "one.yaml"
    one.write_text(yaml.safe_dump(doc))
    assert main(["identify", "planar_2r", "--modal-data", str(one), "--params", "k",
                 "--out", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert "flexrobot identify: error:" in err and "eq. 3.32" in err and "Traceback" not in err
    assert main(["identify", "planar_2r", "--modal-data", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read modal data" in capsys.readouterr().err
