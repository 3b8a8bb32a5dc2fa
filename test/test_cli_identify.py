"""Issue 12, item 5: ``flexrobot identify`` messages and report.

Quoted failures covered here: "the error says only 'all modes come from one pose', not the joint-count mismatch"
(a 6-joint Scompi pose given for the planar_2r); "a spurious VAR mode makes identify refuse, and the message
suggests --match-tolerance but not --drop-unmatched, which works"; "the identify text report counts poses/modes
from 0, its PNG and every other table from 1"; "README and --help contradict each other on when --residual
eigenvalue is robust".
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from flexrobot_ros.cli import build_parser, main
from flexrobot_ros.identification.modal_data import (PoseModes, measured_mode, modal_data_from_model,
                                                     write_modal_data)
from flexrobot_ros.model import load_robot

#: planar_2r poses of seed 000 section 3.5.1's kind (three distinct elbow angles)
POSES = [[0.1, 0.2], [0.8, -0.6], [1.5, 0.4]]
README = Path(__file__).resolve().parents[1] / "README.md"


def test_joint_count_mismatch_is_named(tmp_path, capsys):
    """One 6-joint pose (the README's former modes.yaml) for the 2-joint planar_2r: the message says so, not
    'all modes come from one pose'."""
    scompi = modal_data_from_model(load_robot("scompi"), [[0, -0.374, 1.9448, 0, -1.9448, 0]])
    path = write_modal_data(tmp_path / "modes.yaml", scompi)
    assert main(["identify", "planar_2r", "--modal-data", str(path), "--out", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert "expected 2 joint positions" in err and "got 6" in err and "joint-count mismatch" in err
    assert "one pose" not in err


@pytest.fixture(scope="module")
def spurious(tmp_path_factory) -> Path:
    """Model modes of the planar_2r at three poses plus a spurious 777 Hz mode at the first pose (like a VAR
    artefact)."""
    data = modal_data_from_model(load_robot("planar_2r"), POSES)
    first = data.poses[0]
    noisy = PoseModes(first.q, first.modes + (measured_mode(777.0, 0.01),))
    data = dataclasses.replace(data, poses=(noisy,) + data.poses[1:])
    return write_modal_data(tmp_path_factory.mktemp("identify") / "modes.yaml", data)


def test_unmatched_mode_message_suggests_drop_unmatched_which_works(spurious, tmp_path, capsys):
    assert main(["identify", "planar_2r", "--modal-data", str(spurious), "--params", "k", "--starts", "2",
                 "--out", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert "777 Hz" in err and "--drop-unmatched" in err and "--match-tolerance" in err
    assert main(["identify", "planar_2r", "--modal-data", str(spurious), "--params", "k", "--starts", "2",
                 "--drop-unmatched", "--out", str(tmp_path / "x.yaml")]) == 0
    report = capsys.readouterr().out
    # the model's own modes give back the YAML stiffness (seed 000 section 3.5.1, case 1: exact data)
    robot = load_robot("planar_2r")
    rows = {m.group(1): float(m.group(3)) for m in re.finditer(r"^\s+(k\.\S+)\s+(\S+)\s+(\S+)", report, re.M)}
    assert len(rows) == robot.n
    for k, value in zip(robot.stiffness, rows.values()):
        assert value == pytest.approx(k, rel=1e-6)
    # the comparison table counts poses and modes from 1, like the PNG
    table = report.split("MAC")[1].splitlines()[1:]
    first = [line.split()[:2] for line in table if line.strip()]
    assert first[0] == ["1", "1"] and ["3", "1"] in first and not any(row[0] == "0" for row in first)


def test_readme_and_help_agree_on_the_eigenvalue_residual():
    """When the eigenvalue residual is the more robust choice: with widely spread modes (unmeasured modes far
    from the measured band), as the residual's module docstring derives; README and --help say the same."""
    parser = build_parser("identify")
    sub = next(a for a in parser._actions if a.dest == "command").choices["identify"]
    help_text = " ".join(next(a for a in sub._actions if a.dest == "residual").help.split())
    readme = " ".join(README.read_text().split())
    for text in (help_text, readme):
        assert "widely spread" in text
    assert "close to measured ones" not in readme
