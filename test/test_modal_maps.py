"""Modal maps (paths, grids, gain sweeps, payload), their NPZ file format, plots and the two CLI commands.

Reference values come from single-pose modal_analysis (checked against the thesis in test_modal_tables.py) and
from the grid construction of seed 000 Appendix II.
"""
from __future__ import annotations

import json

import numpy as np

from flexrobot_ros.cli import main
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.modal.maps import (appendix_ii_grid, gain_map, grid_map, load_map, modal_map, path_map, save_map,
                                      thesis_configurations)
from flexrobot_ros.modal.plots import map_title, plot_grid, plot_map, plot_mode_shapes
from flexrobot_ros.model import load_robot

Q8 = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_map_rows_equal_single_pose_results_for_any_chunking(scompi):
    """Chunk size does not change results; every row equals modal_analysis at that pose; progress is reported."""
    poses = thesis_configurations(23)
    calls = []
    small = modal_map(scompi, poses, chunk=5, shapes=True, progress=lambda done, total: calls.append((done, total)))
    large = modal_map(scompi, poses, shapes=True)
    assert calls == [(5, 23), (10, 23), (15, 23), (20, 23), (23, 23)]
    assert np.array_equal(small.frequencies_hz, large.frequencies_hz)
    for row in (0, 11, 22):
        single = modal_analysis(scompi, poses[row])
        assert np.allclose(large.frequencies_hz[row], single.frequencies_hz, rtol=1e-12)
        assert np.allclose(large.damping_ratios[row], single.damping_ratios, rtol=1e-10, atol=1e-13)
        assert np.allclose(large.mode_shapes[row], single.mode_shapes, atol=1e-9)
        assert np.allclose(large.q_m[row], single.linearized.q_m)


def test_path_map_and_npz_round_trip(scompi, tmp_path):
    """A path map's coordinate is the configuration number; save_map/load_map round-trips every field."""
    result = path_map(scompi, thesis_configurations(50)[0], thesis_configurations(50)[-1], count=50, shapes=True)
    assert np.allclose(result.q, thesis_configurations(50)) and result.coordinate.tolist() == list(range(1, 51))
    loaded = load_map(save_map(tmp_path / "path.npz", result))
    for name in ("coordinate", "q", "q_m", "kp", "kd", "frequencies_hz", "damping_ratios", "eigenvalues",
                 "overdamped", "mode_count", "verdict", "max_real_part", "mode_shapes"):
        assert np.array_equal(getattr(loaded, name), getattr(result, name)), name
    assert (loaded.robot, loaded.tool, loaded.kind, loaded.joint_names) == \
        (result.robot, result.tool, "path", result.joint_names)
    assert loaded.grid_shape is None


def test_appendix_ii_grid(planar, tmp_path):
    """Appendix II: q1_i = i pi/p (i = 0..2p), q2_j = j pi/p (j = 0..p); the grid map carries its axes, poses are
    in C order and each equals a single-pose analysis; the grid survives the NPZ round trip and plots."""
    values_a, values_b = appendix_ii_grid(6)
    assert values_a.size == 13 and values_b.size == 7
    assert np.allclose(values_a[[0, -1]], [0.0, 2 * np.pi]) and np.allclose(values_b[[0, -1]], [0.0, np.pi])
    result = grid_map(planar, [0.0, 0.0], ("joint1", "joint2"), values_a, values_b)
    assert result.grid_shape == (13, 7) and result.frequencies_hz.shape == (91, 4)
    assert np.allclose(result.q[8], [values_a[1], values_b[1]])
    assert np.allclose(result.frequencies_hz[8], modal_analysis(planar, [values_a[1], values_b[1]]).frequencies_hz)
    loaded = load_map(save_map(tmp_path / "grid.npz", result))
    assert loaded.grid_shape == (13, 7) and loaded.grid_joints == ("joint1", "joint2")
    png = plot_grid(loaded, tmp_path / "grid.png", mode=3)
    assert png.read_bytes()[:8] == PNG_SIGNATURE


def test_gain_sweep_and_payload(scompi, tmp_path):
    """Gain sweep: K_D = 0.425 sqrt(K_P) per row; the payload (4 kg tool) lowers mode 1 at every gain."""
    values = np.linspace(2000, 15000, 5)
    without = gain_map(scompi, Q8, values)
    with_tool = gain_map(load_robot("scompi", tool=True), Q8, values)
    assert np.allclose(without.kd[:, 0], 0.425 * np.sqrt(values)) and np.allclose(without.coordinate, values)
    assert without.kind == "gain" and not without.tool and with_tool.tool
    assert np.all(with_tool.frequencies_hz[:, 0] < without.frequencies_hz[:, 0])
    png = plot_map([without, with_tool], tmp_path / "gain.png", modes=[0, 1], labels=["no tool", "tool"])
    assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 10_000
    # issue 22: one map's title named the robot twice, "scompi (scompi)"
    assert map_title([without], ["scompi"]) == "scompi: gain map, 5 points"
    assert map_title([with_tool], ["scompi + tool"]) == "scompi + tool: gain map, 5 points"
    assert map_title([without, with_tool], ["no tool", "tool"]) == "scompi (no tool / tool): gain map, 5 points"


def test_mode_shape_polar_plot(scompi, tmp_path):
    """Fig. 2.6-style polar plot of modes 1 and 2 for K_P = 12000 and 15000."""
    results = [modal_analysis(scompi, thesis_configurations(50)[0], kp=kp, kd=0.425 * np.sqrt(kp))
               for kp in (12000.0, 15000.0)]
    png = plot_mode_shapes(results, tmp_path / "shapes.png", labels=["K_P 12000", "K_P 15000"])
    assert png.read_bytes()[:8] == PNG_SIGNATURE


def test_cli_modal_json_matches_the_library(capsys):
    """`flexrobot modal scompi --q ... --tool --json` prints the library's numbers (damping as fractions)."""
    assert main(["modal", "scompi", "--q", "0,-0.374,1.9448,0,-1.9448,0", "--tool", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    reference = modal_analysis(load_robot("scompi", tool=True), Q8)
    assert np.allclose(report["frequencies_hz"], reference.frequencies_hz)
    assert np.allclose(report["damping_ratios"], reference.damping_ratios)
    assert report["stable"] is True and report["verdict"] == "stable" and len(report["eigenvalues"]) == 12


def test_cli_modal_table_gains_and_errors(capsys):
    """Table output with per-joint gains and pi expressions; unstable gains print the verdict; a bad pose exits
    with status 2 and a one-line message naming the joints."""
    assert main(["modal", "scompi", "--q", "0,-pi/6,2*pi/3,-pi/18,-2*pi/3,0", "--kp", "2000",
                 "--kd", str(0.425 * np.sqrt(2000))]) == 0
    out = capsys.readouterr().out
    assert "2.3893" in out and "verdict: stable" in out  # f1 of the gain study at K_P = 2000 (thesis: 2.39 Hz)
    assert main(["modal", "scompi", "--q", "0,-0.374,1.9448,0,-1.9448,0", "--undamped", "--participation",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["undamped_frequencies_hz"]) == 12 and report["statically_stable"] is True
    assert abs(sum(report["participation"]) - 1.0) < 1e-12
    assert main(["modal", "scompi", "--q", "0,-0.374,1.9448,0,-1.9448,0", "--kp=-20000"]) == 0
    assert "verdict: unstable" in capsys.readouterr().out
    assert main(["modal", "scompi", "--q", "0,1"]) == 2
    assert "joint1" in capsys.readouterr().err


def test_cli_modal_map_payload_both(tmp_path, capsys):
    """`flexrobot modal-map scompi --thesis-path --payload both` writes two NPZ files and one overlaid PNG whose
    extremes are those of section 2.4.2."""
    out = tmp_path / "sweep.npz"
    assert main(["modal-map", "scompi", "--thesis-path", "--payload", "both", "--out", str(out),
                 "--plot", str(tmp_path / "sweep.png"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["files"] == [str(out), str(tmp_path / "sweep.tool.npz")]
    low = min(m["frequency_range_hz"][0] for m in summary["maps"])
    assert abs(low - 5.13) <= 0.005
    assert load_map(tmp_path / "sweep.tool.npz").tool is True
    assert (tmp_path / "sweep.png").read_bytes()[:8] == PNG_SIGNATURE
    assert main(["modal-map", "scompi", "--grid", "joint2:0:1:3", "--out", str(tmp_path / "g.npz")]) == 2
    assert "two axes" in capsys.readouterr().err
