"""``flexrobot lobes`` (issues 27 and 37): the command's JSON against the library it adapts, computed along another
path, against closed forms, and its errors.

The map's entry at the lobes' own pose comes from the batched linearization (``linearize_batch``) while the lobes
come from ``modal_analysis``: the two minimum critical depths must agree. The envelope of the JSON never goes below
the minimum critical depth and touches it at the lobe minima's speeds within the envelope's resolution. Without a
robot: ``--modes`` (a single-DOF structure against the closed form of a_lim,min) and ``--frf`` (the FRF a robot run
wrote in its JSON, read back as CSV), and the one-line errors of bad files.
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
    inside = report["lobe_minima"]  # only the lobes whose minimum lies in the range (k = 0, 1, 2 here)
    assert [lobe["k"] for lobe in inside] == [0, 1, 2], inside
    assert all(100 <= lobe["spindle_speed_rpm"] <= 1000 for lobe in inside)
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


CUT = ["--teeth", "2", "--cutting-coefficients", "7.96e8,0.212", "--radial-immersion", "0.5"]
FRF_HEADER = "frequency_hz,xx_re,xx_im,xy_re,xy_im,yx_re,yx_im,yy_re,yy_im"


def run_source_json(capsys, *args: str) -> dict:
    assert main(["lobes", *args, *CUT, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def test_modes_yaml_single_dof_is_the_closed_form(capsys, tmp_path):
    """One mode along x (k = 2e7 N/m, zeta = 0.02, 500 Hz; y rigid), half-immersion down-milling with two teeth:
    alpha_xx > 0 there, so a_lim,min = 2 pi / (N K_t alpha_xx Re[G]_max) with Re[G]_max = 1/(4 k zeta (1 - zeta))
    (Altintas, Manufacturing Automation, section 3.4), alpha_xx = 1/2 [cos 2phi - 2 K_r phi + K_r sin 2phi] over
    pi/2..pi. The same mode given mass-normalized (u = w_n/sqrt(k) along x) writes the same FRF."""
    k, zeta, fn, kr = 2.0e7, 0.02, 500.0, 0.212
    stiffness = tmp_path / "stiffness.yaml"
    stiffness.write_text(f"modes:\n  - {{frequency_hz: {fn}, damping_ratio: {zeta}, shape: [1.0, 0.0], "
                         f"stiffness_n_per_m: {k:.6e}}}\n")
    normalized = tmp_path / "normalized.yaml"
    normalized.write_text(f"modes:\n  - {{frequency_hz: {fn}, damping_ratio: {zeta}, "
                          f"shape: [{float(2 * np.pi * fn / np.sqrt(k))!r}, 0.0]}}\n")
    report = run_source_json(capsys, "--modes", str(stiffness))

    def primitive(phi: float) -> float:
        return 0.5 * (np.cos(2 * phi) - 2 * kr * phi + kr * np.sin(2 * phi))

    alpha_xx = primitive(np.pi) - primitive(np.pi / 2)
    assert alpha_xx > 0
    closed_form = 2 * np.pi / (2 * 7.96e8 * alpha_xx / (4 * k * zeta * (1 - zeta)))
    assert report["source"] == "modes" and report["modes_file"] == str(stiffness)
    assert report["minimum_critical_depth_m"] == pytest.approx(closed_form, rel=1e-9)
    assert report["minimum_chatter_frequency_hz"] == pytest.approx(fn * np.sqrt(1 - 2 * zeta), rel=1e-6)
    other = run_source_json(capsys, "--modes", str(normalized))
    for column in FRF_HEADER.split(","):
        np.testing.assert_allclose(other["frf"][column], report["frf"][column], rtol=1e-12, atol=1e-22)


def test_frf_written_by_json_reads_back_as_csv(capsys, tmp_path):
    """The FRF a robot run writes (the feed-plane receptance at the lobes' chatter frequencies, the CSV's columns)
    read back with --frf: the same a_lim,min to 1e-12 (its chatter frequency is one of the rows, where the linear
    interpolation is the FRF itself) and the same lobe minima; between the rows the limit differs by the FRF's linear
    interpolation (measured -0.07..+1.3 %, asserted within 2 %); the FRF of the CSV run is the file's, row for row."""
    robot = run_json(capsys, "--spindle-speed-range", "100:1000")
    assert robot["frf_sampling"] == "the lobes' chatter frequencies"
    path = tmp_path / "kr90_frf.csv"
    columns = FRF_HEADER.split(",")
    path.write_text("# written by flexrobot lobes kr90 --json\n" + FRF_HEADER + "\n" + "\n".join(
        ",".join(repr(value) for value in row) for row in zip(*(robot["frf"][c] for c in columns))) + "\n")
    measured = run_source_json(capsys, "--frf", str(path), "--spindle-speed-range", "100:1000")
    assert measured["source"] == "frf" and "robot" not in measured
    assert measured["minimum_critical_depth_m"] == pytest.approx(robot["minimum_critical_depth_m"], rel=1e-12)
    assert [m["k"] for m in measured["lobe_minima"]] == [m["k"] for m in robot["lobe_minima"]]
    for column in columns:
        assert measured["frf"][column] == robot["frf"][column]
    ratio = (np.array(measured["envelope"]["critical_depth_m"]) / np.array(robot["envelope"]["critical_depth_m"]))
    assert np.abs(ratio - 1).max() < 0.02


def write_frf(path, rows: list[str], header: str = FRF_HEADER) -> str:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return str(path)


GOOD_ROW = "{f},1e-7,-2e-8,1e-9,0,1e-9,0,1e-7,-2e-8"


@pytest.mark.parametrize("case, message", [
    ("decreasing", "line 4, column frequency_hz: expected frequencies increasing strictly, got 11 Hz after 12 Hz "
                   "(line 3)"),
    ("repeated", "line 3, column frequency_hz: expected frequencies increasing strictly, got 10 Hz after 10 Hz"),
    ("nan", "line 3, column xy_im: expected a finite number [m/N], got 'nan'"),
    ("text", "line 2, column yy_re: expected a finite number [m/N], got 'abc'"),
    ("missing column", "line 1: no column 'yx_im' in the header"),
    ("unknown column", "line 1: unknown column 'coherence'"),
    ("short row", "line 3: expected 9 values (one per header column), got 8"),
    ("negative frequency", "line 2, column frequency_hz: expected a frequency >= 0 Hz, got -1"),
])
def test_bad_frf_file_is_one_line_naming_line_and_column(capsys, tmp_path, case, message):
    rows = [GOOD_ROW.format(f=f) for f in (10, 11, 12, 13)]
    header = FRF_HEADER
    if case == "decreasing":
        rows[2] = GOOD_ROW.format(f=11)
        rows[1] = GOOD_ROW.format(f=12)
    elif case == "repeated":
        rows[1] = GOOD_ROW.format(f=10)
    elif case == "nan":
        rows[1] = "11,1e-7,-2e-8,1e-9,nan,1e-9,0,1e-7,-2e-8"
    elif case == "text":
        rows[0] = "10,1e-7,-2e-8,1e-9,0,1e-9,0,abc,-2e-8"
    elif case == "missing column":
        header = FRF_HEADER.rsplit(",", 3)[0] + ",yy_re,yy_im"
        rows = [row.rsplit(",", 1)[0] for row in rows]
    elif case == "unknown column":
        header, rows = FRF_HEADER + ",coherence", [row + ",0.99" for row in rows]
    elif case == "short row":
        rows[1] = rows[1].rsplit(",", 1)[0]
    elif case == "negative frequency":
        rows[0] = GOOD_ROW.format(f=-1)
    path = write_frf(tmp_path / "bad.csv", rows, header)
    assert main(["lobes", "--frf", path, *CUT]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {message}" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("text, message", [
    ("modes: []", "modes: expected a non-empty list of modes"),
    ("modes:\n  - {frequency_hz: 10.0, shape: [1, 0]}", "modes[0]: missing field 'damping_ratio'"),
    ("modes:\n  - {frequency_hz: 10.0, damping_ratio: 0.0, shape: [1, 0]}",
     "modes[0].damping_ratio: expected a fraction 0 < zeta < 1"),
    ("modes:\n  - {frequency_hz: 10.0, damping_ratio: 0.01, shape: [1, 0, 0]}",
     "modes[0].shape: expected [x, y] (two numbers, machining frame)"),
    ("modes:\n  - {frequency_hz: 10.0, damping_ratio: 0.01, shape: [1, 0], stiffness_n_per_m: -5.0}",
     "modes[0].stiffness_n_per_m: expected a modal stiffness > 0 N/m"),
    ("modes:\n  - {frequency_hz: 10.0, damping_ratio: 0.01, shape: [1, 0], mass: 3.0}",
     "modes[0]: unknown field 'mass'"),
])
def test_bad_modes_file_is_one_line_naming_the_mode_and_field(capsys, tmp_path, text, message):
    path = tmp_path / "modes.yaml"
    path.write_text(text + "\n")
    assert main(["lobes", "--modes", str(path), *CUT]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {message}" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("extra, message", [
    ([], "give one of: a robot (name or flexibility YAML), --frf FILE.csv"),
    (["kr90", "--frf", "x.csv"], "got 2"),
    (["--frf", "x.csv", "--q", "0,0,0"], "--q applies to a robot model"),
    (["--modes", "x.yaml", "--feed-direction", "1,1,0"], "--feed-direction applies to a robot model"),
    (["kr90"], "--q: the pose of the lobes is required with a robot"),
    (["--frf", "/nonexistent/frf.csv"], "/nonexistent/frf.csv: cannot read the FRF file"),
])
def test_lobes_source_errors(capsys, extra, message):
    assert main(["lobes", *extra, *CUT]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_frf_speeds_outside_its_band_are_refused(capsys, tmp_path):
    """A constant real receptance Phi_xx = 1e-7 m/N at 10-13 Hz (y rigid): lambda = alpha_xx Phi_xx is real and
    positive (alpha_xx = 0.667 for this cut), eps = pi, so lobe 0 passes 10 Hz at 120 f / N = 600 rpm (two teeth)
    and 13 Hz at 780 rpm; 100-1000 rpm is refused in one line naming where the file's band ends and the speed."""
    path = write_frf(tmp_path / "flat.csv", [f"{f},1e-7,0,0,0,0,0,0,0" for f in (10, 11, 12, 13)])
    assert main(["lobes", "--frf", path, *CUT, "--spindle-speed-range", "100:1000"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"measured FRF {path} (4 rows, 10-13 Hz): milling: spindle speeds down to 100 rpm: " \
        "lobe 0 passes the lowest chatter frequency searched, 10 Hz, at 600 rpm" in errors[0], errors
    report = run_source_json(capsys, "--frf", path, "--spindle-speed-range", "601:779")
    assert report["spindle_speed_range_rpm"] == [601.0, 779.0]
