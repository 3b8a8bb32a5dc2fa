"""Issue 22, item 3: ``flexrobot info --list`` says what each shipped robot is, not only its name.

Quoted failure covered here: "``flexrobot info --list`` prints bare names: add one line per robot (what it is,
which paper, DOF, flexible parts), taken from data ... --json gives the same". The summary is the ``summary`` field
of each shipped flexibility YAML (validated by the model's schema: one line); joints and flexible parts come from the
same YAML. Expected parts below are the papers' robots (Canadarm: three beam links, seed 003 Table 2; RRP: links 2
and 3, seed 004; KR90 3-DOF: six transverse springs, seed 001 Table 6; Scompi: six elastic joints, thesis ch. 2).
"""
from __future__ import annotations

import json

import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.model import share_directory, shipped_robots

#: Robot -> what its line must say besides its summary.
PARTS = {"canadarm": "3 joints (3 rigid); flexible links link1, link2, link3",
         "rrp": "3 joints (3 rigid); flexible links link2, link3",
         "kr90_3dof": "3 joints (3 elastic); 6 extra elasticities",
         "moberg5": "2 joints (2 elastic); 1 extra elasticity",
         "scompi": "6 joints (6 elastic)",
         "lwr4": "7 joints (7 elastic)"}


def yaml_summary(name: str) -> str:
    return yaml.safe_load((share_directory() / "config" / f"{name}.yaml").read_text())["summary"]


def test_every_shipped_robot_has_a_one_line_summary_naming_its_source():
    names = shipped_robots()
    assert len(names) >= 9
    for name in names:
        summary = yaml_summary(name)
        assert isinstance(summary, str) and 20 <= len(summary) <= 120 and "\n" not in summary, name
        assert "seed" not in summary and "``" not in summary, summary


def test_list_prints_one_line_per_robot_with_summary_and_parts(capsys):
    assert main(["info", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(shipped_robots())
    for line in lines:
        name = line.split()[0]
        assert yaml_summary(name) in line, line
        if name in PARTS:
            assert line.endswith(PARTS[name]), line


def test_list_json_gives_the_same(capsys):
    assert main(["info", "--list", "--json"]) == 0
    robots = {item["robot"]: item for item in json.loads(capsys.readouterr().out)["robots"]}
    assert list(robots) == list(shipped_robots())
    for name, item in robots.items():
        assert item["summary"] == yaml_summary(name)
    assert robots["canadarm"]["flexible_links"] == ["link1", "link2", "link3"]
    assert robots["canadarm"]["rigid_joints"] == ["joint1", "joint2", "joint3"]
    assert robots["kr90_3dof"]["extra_elasticities"] == 6
    assert robots["scompi"]["elastic_joints"] == [f"joint{k}" for k in range(1, 7)]
