"""Issue 12, item 5: JSON keys are the same across commands.

Quoted failures covered here: "``feedforward --json`` omits qd, qdd, q3, q4 that the CSV has"; "``info --json``
says ``name`` and ``tool: null|{...}`` where every other command says ``robot`` and a boolean ``tool``".
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.timeseries import read_timeseries


def run_json(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_feedforward_json_has_every_csv_quantity(tmp_path, capsys):
    """Every ``<quantity>.<joint>`` column of the CSV is in the JSON as a (samples x joints) array with the same
    values; qd, qdd, q3 and q4 are the time derivatives of q (central differences, closed-form poly9 check)."""
    spec = tmp_path / "move.yaml"
    spec.write_text("profile: poly9\nduration: 1.0\nq0: [0, 0]\nqf: [1.0, -0.5]\n")
    out = tmp_path / "ff.csv"
    doc = run_json(capsys, ["feedforward", "planar_2r", "--trajectory", str(spec), "--method", "ejnea",
                            "--out", str(out)])
    t, columns = read_timeseries(out)
    quantities = sorted({name.split(".")[0] for name in columns})
    assert {"qd", "qdd", "q3", "q4"} <= set(quantities) <= set(doc)
    for quantity in quantities:
        csv = np.column_stack([columns[f"{quantity}.{j}"] for j in doc["joint_names"]])
        np.testing.assert_allclose(np.array(doc[quantity]), csv, rtol=1e-12, atol=1e-12, err_msg=quantity)
    dt = t[1] - t[0]
    for lower, higher in (("q", "qd"), ("qd", "qdd"), ("qdd", "q3"), ("q3", "q4")):
        derivative = np.gradient(np.array(doc[lower]), dt, axis=0)[2:-2]
        scale = np.abs(doc[higher]).max()
        assert np.abs(derivative - np.array(doc[higher])[2:-2]).max() < 1e-3 * scale, higher


def test_robot_and_boolean_tool_keys_in_every_command(tmp_path, capsys):
    """``robot`` (the name) and a boolean ``tool`` in info, modal, simulate and feedforward JSON (modal-map: per
    map); info keeps the payload's description under ``tool_payload``."""
    info = run_json(capsys, ["info", "scompi", "--tool"])
    assert info["robot"] == "scompi" and info["tool"] is True and "name" not in info
    assert info["tool_payload"]["mass"] == pytest.approx(4.0)  # seed 000: 4 kg grinding tool
    bare = run_json(capsys, ["info", "scompi"])
    assert bare["tool"] is False and bare["tool_payload"] is None
    docs = [
        run_json(capsys, ["modal", "scompi", "--tool", "--q", "0,-0.374,1.9448,0,-1.9448,0"]),
        run_json(capsys, ["simulate", "scompi", "--tool", "--duration", "0.02", "--out", str(tmp_path / "s.csv")]),
    ]
    spec = tmp_path / "move.yaml"
    spec.write_text("profile: poly9\nduration: 0.2\nq0: [0, 0]\nqf: [0.1, 0.1]\n")
    ff = run_json(capsys, ["feedforward", "planar_2r", "--trajectory", str(spec), "--method", "ejnea", "--out",
                           str(tmp_path / "f.csv")])
    maps = run_json(capsys, ["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--count", "2", "--out",
                             str(tmp_path / "m.npz")])["maps"]
    for doc in docs:
        assert doc["robot"] == "scompi" and doc["tool"] is True
    assert ff["robot"] == "planar_2r" and ff["tool"] is False
    assert maps[0]["robot"] == "planar_2r" and maps[0]["tool"] is False
