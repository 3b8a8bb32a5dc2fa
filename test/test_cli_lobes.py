"""``flexrobot lobes`` (issue 27): the command's JSON against the library it adapts, computed along another path,
and its errors.

The map's entry at the lobes' own pose comes from the batched linearization (``linearize_batch``) while the lobes
come from ``modal_analysis``: the two minimum critical depths must agree. The envelope of the JSON never goes below
the minimum critical depth and touches it at the lobe minima's speeds within the envelope's resolution.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from flexrobot_ros.cli import main

MILLING = "0,55*pi/180,-100.5*pi/180"  # config/kr90.yaml's milling posture
ARGS = ["lobes", "kr90", "--q", MILLING, "--teeth", "2", "--cutting-coefficients", "7.96e8,0.212",
        "--radial-immersion", "0.5"]


def run_json(capsys, *extra: str) -> dict:
    assert main([*ARGS, *extra, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def test_lobes_json_map_and_plots(capsys, tmp_path):
    q2, q3 = np.radians(55.0), np.radians(-100.5)
    report = run_json(capsys, "--spindle-speed-range", "100:1000", "--grid", f"joint2:{q2 - 0.2}:{q2}:2",
                      "--grid", f"joint3:{q3}:{q3 + 0.2}:2", "--plot-dir", str(tmp_path / "plots"))
    minimum = report["minimum_critical_depth_m"]
    envelope = np.array([np.inf if a is None else a for a in report["envelope"]["critical_depth_m"]])
    assert envelope.min() >= minimum * (1 - 1e-9)
    assert report["spindle_speed_range_rpm"] == [100.0, 1000.0]
    inside = [lobe for lobe in report["lobe_minima"] if 100 <= lobe["spindle_speed_rpm"] <= 1000]
    assert inside, report["lobe_minima"]
    speeds = np.array(report["envelope"]["spindle_speed_rpm"])
    for lobe in inside:
        near = np.abs(speeds - lobe["spindle_speed_rpm"]) < 2 * (speeds[1] - speeds[0])
        assert envelope[near].min() == pytest.approx(minimum, rel=0.02)
    item = report["map"]
    assert item["points"] == 4 and item["grid_joints"] == ["joint2", "joint3"]
    at_q = [i for i, pose in enumerate(item["poses"]) if np.allclose(pose, report["q"])]
    assert len(at_q) == 1
    assert item["minimum_critical_depth_m"][at_q[0]] == pytest.approx(minimum, rel=1e-9)
    assert item["tool_tip_position_m"][at_q[0]] == pytest.approx(report["tool_tip_position_m"], abs=1e-12)
    for name in ("lobes.png", "critical_depth_map.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 10_000


def test_lobes_text_has_units(capsys):
    assert main([*ARGS, "--feed-direction", "1,1,0"]) == 0
    out = capsys.readouterr().out
    assert "mm" in out and "Hz" in out and "rpm" in out


@pytest.mark.parametrize("extra, message", [
    (["--cutting-coefficients", "796,0.2"], "--cutting-coefficients: K_t = 796 N/m^2"),
    (["--radial-immersion", "1.5"], "radial immersion a_e/D"),
    (["--feed-direction", "0,0,1"], "perpendicular to the tool axis"),
    (["--spindle-speed-range", "1000:100"], "--spindle-speed-range"),
    (["--grid", "joint2:0.3:1:3"], "--grid: give exactly two axes"),
    (["--teeth", "0"], "teeth"),
])
def test_lobes_errors_name_the_option(capsys, extra, message):
    assert main([*ARGS, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
