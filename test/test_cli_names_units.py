"""Issue 22, items 1 and 2: every printed number has its unit, and one option name has one meaning.

Quoted failures covered here: "the feedforward table, ``flexrobot info`` columns d_f/d_fm/Kp/Kd and the demo's
'max |q - q_d|' lack units; /modal topics carry damping as a fraction where the CLI prints percent" and "``--modes``
means plotted mode indices in modal-map and assumed modes per direction in modal/simulate; ``--method`` has three
meanings; ``--plot`` vs ``--plots``; the robot is positional everywhere but ``bringup --robot``".

The renamed options keep their old spelling (one deprecation line on stderr); the README's table under "One name,
one meaning" records the mapping, checked here against the parsers.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flexrobot_ros.cli import build_parser, main
from flexrobot_ros.commands import bringup

ROOT = Path(__file__).resolve().parents[1]


def test_feedforward_table_gives_every_value_its_unit(tmp_path, capsys):
    """Scompi: joint 1 is prismatic (link force in N), the others revolute (N m); motor torques in N m and the
    spring deflection q_m - W q in rad for every joint."""
    move = tmp_path / "move.yaml"
    move.write_text("profile: poly9\nduration: 0.5\nq0: [0, 0, 0, 0, 0, 0]\nqf: [0.05, 0.2, 0.1, 0.1, 0.1, 0.1]\n")
    assert main(["feedforward", "scompi", "--trajectory", str(move), "--method", "ejnea",
                 "--out", str(tmp_path / "ff.csv")]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("joint")}
    number = r"\s+[-+0-9.e]+"
    assert re.fullmatch(rf"joint1{number} N {number} N m{number} rad", rows["joint1"]), rows["joint1"]
    for joint in ("joint2", "joint6"):
        assert re.fullmatch(rf"{joint}{number} N m{number} N m{number} rad", rows[joint]), rows[joint]


def test_info_columns_carry_units(capsys):
    """Each column of `flexrobot info` has its unit right below its name (same right edge); the prismatic
    joint's W and d_f units are named below the table."""
    assert main(["info", "scompi"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("joint "))
    names, units = lines[header], lines[header + 1]
    expected = {"K": "[N m/rad]", "B": "[kg m^2]", "N": "[-]", "W": "[-]", "d_f": "[N m s/rad]",
                "d_fm": "[N m s/rad]", "Kp": "[N m/rad]", "Kd": "[N m s/rad]"}
    for name, unit in expected.items():
        end = re.search(rf"\s{name}(\s|$)", names).start() + 1 + len(name)
        assert units[end - len(unit):end] == unit, (name, units)
    assert "prismatic joint1: W [rad/m]" in lines[-1] and "d_f [N s/m]" in lines[-1]


def test_bringup_tracking_error_has_its_unit():
    """The demo's summary line: max |q - q_d| in the unit of the joint where it occurs (m for a prismatic one)."""
    summary = {"kind": "simulation", "robot": "scompi", "tool": False, "stopped": "finished", "wall_time_s": 1.0,
               "phases": [], "tracking": {"max_error": 2.5e-4, "joint": "joint1", "unit": "m", "rms_error": 1e-4,
                                          "samples": 10},
               "nodes": [], "bag": None, "plots": []}
    line = next(line for line in bringup.format_summary(summary).splitlines() if "q_d" in line)
    assert "max |q - q_d| = 2.500e-04 m (joint1)" in line
    assert "RMS over all joints 1.000e-04 (rad for revolute, m for prismatic joints)" in line


@pytest.mark.parametrize("topic", ["modal/damping", "oma/damping"])
def test_damping_topics_state_fractions_in_readme_and_node_docs(topic):
    """The topics carry damping ratios as fractions (the CLI prints %): the README's node table and the node's
    docstring say so; the frequency topics say Hz."""
    readme = (ROOT / "README.md").read_text()
    node = "modal_monitor_node" if topic.startswith("modal") else "oma_node"
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{node}`"))
    assert re.search(rf"`{topic}` \(damping ratios as fractions, 0\.02 = 2 %\)", row), row
    assert re.search(rf"`{topic.replace('damping', 'frequencies')}` \(\[Hz\]", row), row
    doc = (ROOT / "flexrobot_ros" / "nodes" / f"{node}.py").read_text()
    assert re.search(rf"``{topic}`` \(std_msgs/Float64MultiArray, damping ratios as fractions", doc)


def parse(argv: list[str]):
    return build_parser(argv[0]).parse_args(argv)


#: (old spelling argv, new spelling argv, attribute, value, new spelling named in the warning)
RENAMED = [
    (["modal-map", "scompi", "--thesis-path", "--out", "m.npz", "--modes", "1,2"],
     ["modal-map", "scompi", "--thesis-path", "--out", "m.npz", "--plot-modes", "1,2"], "plot_modes", "1,2",
     "--plot-modes"),
    (["modal", "canadarm", "--q", "0,0,0", "--modes", "3"], ["modal", "canadarm", "--q", "0,0,0", "--link-modes", "3"],
     "modes", 3, "--link-modes"),
    (["simulate", "canadarm", "--out", "x.csv", "--elements", "4"],
     ["simulate", "canadarm", "--out", "x.csv", "--link-elements", "4"], "elements", 4, "--link-elements"),
    (["simulate", "scompi", "--out", "x.csv", "--mode", "accurate", "--method", "Radau"],
     ["simulate", "scompi", "--out", "x.csv", "--mode", "accurate", "--solver", "Radau"], "solver", "Radau",
     "--solver"),
    (["bringup", "simulation", "--plots", "out"], ["bringup", "simulation", "--plot-dir", "out"], "plot_dir",
     Path("out"), "--plot-dir"),
]


@pytest.mark.parametrize("old, new, attribute, value, replacement", RENAMED, ids=[r[0][0] + r[0][-2] for r in RENAMED])
def test_old_spelling_still_works_and_says_it_is_deprecated(old, new, attribute, value, replacement, capsys):
    assert getattr(parse(new), attribute) == value
    assert capsys.readouterr().err == ""
    assert getattr(parse(old), attribute) == value
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{old[-2]} is deprecated; use {replacement}" in err, err


def test_bringup_robot_is_positional_and_the_old_option_still_works(capsys):
    """`flexrobot bringup simulation planar_2r` like every other command; `--robot planar_2r` still works (one
    deprecation line); naming two different robots is refused; no robot means scompi."""
    assert bringup.robot_argument(parse(["bringup", "simulation", "planar_2r"])) == "planar_2r"
    assert capsys.readouterr().err == ""
    assert bringup.robot_argument(parse(["bringup", "simulation", "--robot", "planar_2r"])) == "planar_2r"
    assert "--robot is deprecated; use the robot as a positional argument" in capsys.readouterr().err
    assert bringup.robot_argument(parse(["bringup", "hardware"])) == "scompi"
    with pytest.raises(Exception, match="name the robot once"):
        bringup.robot_argument(parse(["bringup", "simulation", "lwr4", "--robot", "planar_2r"]))


def test_an_old_spelling_runs_end_to_end(tmp_path, capsys):
    """`modal canadarm --modes 1` (old) prints the deprecation and gives the same modes as `--link-modes 1`."""
    argv = ["modal", "canadarm", "--q", "0.4,-1.1,0.7", "--locked-joints", "--json"]
    assert main([*argv, "--link-modes", "1"]) == 0
    new = capsys.readouterr()
    assert main([*argv, "--modes", "1"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "--modes is deprecated; use --link-modes" in old.err


def test_readme_mapping_table_matches_the_parsers():
    """Every row of the README's renaming table: the old spelling is a deprecated option of each command named,
    pointing at the new spelling."""
    from flexrobot_ros.commands.arguments import DeprecatedOption

    readme = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `(--[a-z-]+)[^|]*\| `([^`]+)`[^|]*\| (.+) \|$", readme, flags=re.M)
    assert len(rows) == 6, rows
    for old, new, commands in rows:
        for command in re.findall(r"`([a-z-]+)`", commands):
            subparsers = build_parser(command)._subparsers._group_actions[0]
            action = subparsers.choices[command]._option_string_actions[old]
            assert isinstance(action, DeprecatedOption), (command, old)
            expected = "positional" if new == "ROBOT" else new.split()[0]
            assert expected in action.replacement, (command, old, action.replacement)
