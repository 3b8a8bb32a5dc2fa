"""Issue 36, item 8: every table the commands print stays aligned whatever the joint names' length.

Quoted failure covered here: ``flexrobot info`` printed "panda_joint1revolute" (a 12-character name column). The
tables are made by one formatter (flexrobot_ros/text_table.py: each column as wide as its widest entry); checked
here on its own against lines written out by hand, then on the commands' output for a robot whose two joints have
40-character names: ``init``, ``info``, ``feedforward``, ``identify`` (the identification report) and the bring-up's
calibration summary. A table is aligned when, in its title line and every row, each cell (text runs separated by two
or more spaces) starts (left-aligned column) or ends (right-aligned column) at the same character in every line.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.commands.bringup_calibration import format_calibration
from flexrobot_ros.text_table import Column, table

LONG = ("shoulder_pitch_joint_of_the_left_arm_0001", "elbow_flexion_joint_of_the_left_arm_00002")


def test_columns_are_as_wide_as_their_widest_entry():
    lines = table([Column("joint", align="<"), Column("K", "N m/rad"), Column("note", align="<")],
                  [["j1", "2.5e+04", "x"], ["a_long_joint_name", "800"]], indent="  ")
    assert lines == ["  joint                      K  note",
                     "                     [N m/rad]",
                     "  j1                   2.5e+04  x",
                     "  a_long_joint_name        800"]
    with pytest.raises(ValueError, match="3 cells for 2 columns"):
        table([Column("a"), Column("b")], [["1", "2", "3"]])


def cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each text run separated by two or more spaces."""
    return [match.span() for match in re.finditer(r"\S+(?: \S+)*", line)]


def assert_aligned(lines: list[str]) -> None:
    """The title line and rows ``lines`` of one table have the same cells, each column starting or ending at one
    character."""
    spans = [cells(line) for line in lines]
    assert len({len(s) for s in spans}) == 1, "\n".join(lines)
    for k in range(len(spans[0])):
        starts, ends = {s[k][0] for s in spans}, {s[k][1] for s in spans}
        assert len(starts) == 1 or len(ends) == 1, f"column {k + 1} is ragged:\n" + "\n".join(lines)


def rows_of(text: str, title: str, count: int) -> list[str]:
    """The title line starting with ``title`` (after indentation) and the ``count`` rows that name a LONG joint."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(title))
    rows = [line for line in lines[start + 1:] if any(name in line for name in LONG)][:count]
    assert len(rows) == count, text
    return [lines[start]] + rows


@pytest.fixture(scope="module")
def long_names(tmp_path_factory) -> Path:
    """A two-joint arm whose joints have 40-character names, its flexibility YAML written by flexrobot init."""
    folder = tmp_path_factory.mktemp("long")
    link = ("<link name='{0}'><inertial><origin xyz='0.2 0 0'/><mass value='{1}'/>"
            "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.02' iyz='0' izz='0.02'/></inertial></link>")
    joint = ("<joint name='{0}' type='revolute'><parent link='{1}'/><child link='{2}'/><origin xyz='{3} 0 0'/>"
             "<axis xyz='0 1 0'/><limit lower='-2' upper='2' effort='100' velocity='2'/></joint>")
    (folder / "long.urdf").write_text(
        "<robot name='long'><link name='base'/>" + link.format("upper", 3.0) + link.format("fore", 2.0)
        + joint.format(LONG[0], "base", "upper", 0) + joint.format(LONG[1], "upper", "fore", 0.4) + "</robot>")
    assert main(["init", str(folder / "long.urdf"), "--out", str(folder / "long.yaml")]) == 0
    return folder


def test_init_and_info_tables(long_names, capsys):
    capsys.readouterr()
    assert main(["init", str(long_names / "long.urdf"), "--out", str(long_names / "again.yaml")]) == 0
    assert_aligned(rows_of(capsys.readouterr().out, "joint ", 2))
    assert main(["info", str(long_names / "long.yaml")]) == 0
    out = capsys.readouterr().out
    assert_aligned(rows_of(out, "joint ", 2))
    assert f"{LONG[0]}  revolute" in out  # the quoted "panda_joint1revolute"


def test_feedforward_table(long_names, capsys, tmp_path):
    move = tmp_path / "move.yaml"
    move.write_text("profile: poly9\nduration: 0.5\nq0: [0, 0.3]\nqf: [0.4, -0.2]\n")
    assert main(["feedforward", str(long_names / "long.yaml"), "--trajectory", str(move), "--method", "ejnea",
                 "--out", str(tmp_path / "ff.csv")]) == 0
    assert_aligned(rows_of(capsys.readouterr().out, "joint ", 2))


def test_identification_report_table(long_names, capsys, tmp_path):
    from flexrobot_ros.identification.modal_data import modal_data_from_model, write_modal_data
    from flexrobot_ros.model import load_robot

    robot = load_robot(long_names / "long.yaml")
    write_modal_data(tmp_path / "modes.yaml", modal_data_from_model(robot, [[0.1, 0.5], [0.8, -0.6], [-0.4, 1.2]]))
    assert main(["identify", str(long_names / "long.yaml"), "--modal-data", str(tmp_path / "modes.yaml"),
                 "--params", "k", "--starts", "2", "--out", str(tmp_path / "identified.yaml")]) == 0
    assert_aligned(rows_of(capsys.readouterr().out, "parameter ", 2))


def test_calibration_summary_table():
    report = {"success": True, "poses_measured": 3,
              "parameters": [{"name": f"k.{name}", "nominal": 1.2e5, "value": 1.08e5, "std": 443.0,
                              "unit": "N m/rad"} for name in LONG]}
    assert_aligned(rows_of("\n".join(format_calibration(report)), "parameter ", 2))
