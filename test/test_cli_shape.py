"""``flexrobot shape`` (issue 26 part 2, measure -> recommend -> report).

The printed and JSON residual vibrations are checked against the Singer-Seering closed forms written out here
(V = exp(-zeta w t_N) sqrt(C^2 + S^2), C, S the sums over the impulses of A_i exp(zeta w t_i) cos / sin(w_d t_i),
with the ZV and ZVD amplitudes from K = exp(-zeta pi / sqrt(1 - zeta^2)) and the undamped EI closed form), several
modes against the product of the single-mode factors (the convolution's transform is the product of its factors'),
and the recommendation against the shortest shaper whose worst vibration over the band, found here on a dense grid,
stays within the tolerance. Modes come from a modal-data YAML, from the JSON ``flexrobot oma --json`` prints for the
closed-form record of ``cli_cases``, and from the model (against ``flexrobot modal``'s frequencies).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from cli_cases import DAMPING, FREQUENCIES_HZ, POSE, write_record
from flexrobot_ros.cli import main


def closed_form_v(amplitudes, times, f, zeta):
    """Residual vibration [%] of impulses on a mode of f [Hz] (array) and damping zeta, written out."""
    w = 2 * np.pi * np.asarray(f, dtype=float)[..., None]
    wd = w * np.sqrt(1 - zeta**2)
    a, t = np.asarray(amplitudes), np.asarray(times)
    c = np.sum(a * np.exp(zeta * w * t) * np.cos(wd * t), axis=-1)
    s = np.sum(a * np.exp(zeta * w * t) * np.sin(wd * t), axis=-1)
    return 100 * np.exp(-zeta * w[..., 0] * t.max()) * np.sqrt(c**2 + s**2)


def closed_form_shaper(kind, f, zeta, tolerance=0.05):
    """(amplitudes, times [s]) of ZV and ZVD (any damping) and EI (undamped only)."""
    k = np.exp(-zeta * np.pi / np.sqrt(1 - zeta**2))
    half = 0.5 / (f * np.sqrt(1 - zeta**2))
    if kind == "zv":
        return np.array([1, k]) / (1 + k), np.array([0, half])
    if kind == "zvd":
        return np.array([1, 2 * k, k * k]) / (1 + k) ** 2, np.array([0, half, 2 * half])
    assert kind == "ei" and zeta == 0
    v = tolerance
    return np.array([(1 + v) / 4, (1 - v) / 2, (1 + v) / 4]), np.array([0, half, 2 * half])


def write_modes(path, modes, poses=1):
    lines = ["robot: test", "poses:"]
    for p in range(poses):
        lines.append(f"  - q: [0.0, {0.1 * p}]")
        lines.append("    modes:" + (" []" if not modes else ""))
        lines += [f"      - {{frequency_hz: {f}, damping_ratio: {z}}}" for f, z in modes]
    path.write_text("\n".join(lines) + "\n")
    return path


def shape_json(capsys, *argv):
    assert main(["shape", *argv, "--json"]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert captured.err == ""  # --json: stdout is the JSON alone
    return json.loads(captured.out)


@pytest.mark.parametrize("zeta, kinds", [(0.05, ("zv", "zvd")), (0.0, ("zv", "zvd", "ei"))])
def test_single_mode_numbers_equal_the_closed_forms(tmp_path, capsys, zeta, kinds):
    f, error = 4.0, 0.1
    doc = shape_json(capsys, "--modal-data", str(write_modes(tmp_path / "m.yaml", [(f, zeta)])),
                     "--frequency-error", str(error))
    assert [c["name"] for c in doc["candidates"]] == ["zv", "zvd", "ei"]
    band = f * np.linspace(1 - error, 1 + error, 20001)
    for kind in kinds:
        a, t = closed_form_shaper(kind, f, zeta)
        item = next(c for c in doc["candidates"] if c["name"] == kind)
        mode = item["modes"][0]
        np.testing.assert_allclose(item["impulses"]["amplitudes"], a, rtol=1e-10)
        assert item["added_delay_s"] == pytest.approx(t[-1], rel=1e-12)
        expected = closed_form_v(a, t, [f * (1 - error), f, f * (1 + error)], zeta)
        got = [mode[f"residual_vibration_{key}_percent"] for key in ("low", "nominal", "high")]
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
        # worst over the band: ZV and ZVD grow away from f (the band edges), undamped EI peaks at f (its hump)
        assert mode["residual_vibration_worst_percent"] == pytest.approx(closed_form_v(a, t, band, zeta).max(),
                                                                         rel=1e-7, abs=1e-9)
    if zeta == 0:
        ei = next(c for c in doc["candidates"] if c["name"] == "ei")["modes"][0]
        assert ei["residual_vibration_nominal_percent"] == pytest.approx(5.0, rel=1e-9)


@pytest.mark.parametrize("error, expected", [(0.02, "zv"), (0.1, "zvd"), (0.2, "ei")])
def test_recommendation_is_the_shortest_shaper_within_the_tolerance(tmp_path, capsys, error, expected):
    """One mode at 4 Hz, 5 % damping, tolerance 5 %: worst V of ZV and ZVD over f (1 +- E) on a dense grid of the
    closed forms; the shortest within 5 % is recommended (EI, the widest band, when neither is)."""
    f, zeta = 4.0, 0.05
    band = f * np.linspace(1 - error, 1 + error, 20001)
    worst = {kind: closed_form_v(*closed_form_shaper(kind, f, zeta), band, zeta).max() for kind in ("zv", "zvd")}
    within = [kind for kind in ("zv", "zvd") if worst[kind] <= 5.0]  # listed shortest first: T/2, T
    assert (within[0] if within else "ei") == expected
    doc = shape_json(capsys, "--modal-data", str(write_modes(tmp_path / "m.yaml", [(f, zeta)])),
                     "--frequency-error", str(error))
    assert doc["recommended"] == expected
    meets = {c["name"]: c["meets_tolerance"] for c in doc["candidates"]}
    assert meets["zv"] == (worst["zv"] <= 5.0) and meets["zvd"] == (worst["zvd"] <= 5.0)


def test_oma_json_and_modal_data_give_the_multi_mode_product(tmp_path, capsys):
    """Measure -> recommend: OMA of the closed-form record (12 Hz at 2 %, 40 Hz at 5 %), as JSON and as modal data;
    the ZV candidate convolves both modes: its V at each mode is the product of the two single-mode ZV factors'."""
    record = write_record(tmp_path / "decay.csv")
    assert main(["oma", str(record), "--modal-data", str(tmp_path / "modes.yaml"), "--pose",
                 ",".join(map(str, POSE)), "--json"]) == 0
    (tmp_path / "oma.json").write_text(capsys.readouterr().out)
    from_json = shape_json(capsys, "--modal-data", str(tmp_path / "oma.json"))
    from_yaml = shape_json(capsys, "--modal-data", str(tmp_path / "modes.yaml"))
    measured = [(m["frequency_hz"], m["damping_ratio"]) for m in from_json["modes"]]
    assert measured == [(m["frequency_hz"], m["damping_ratio"]) for m in from_yaml["modes"]]
    np.testing.assert_allclose([m[0] for m in measured], FREQUENCIES_HZ, rtol=2e-3)
    np.testing.assert_allclose([m[1] for m in measured], DAMPING, atol=3e-3)
    assert from_yaml["candidates"] == from_json["candidates"]
    zv = next(c for c in from_json["candidates"] if c["name"] == "zv")
    assert len(zv["impulses"]["amplitudes"]) == 4
    factors = [closed_form_shaper("zv", fk, zk) for fk, zk in measured]
    for (f, zeta), mode in zip(measured, zv["modes"]):
        at = np.array([0.9 * f, f, 1.1 * f])
        product = np.prod([closed_form_v(a, t, at, zeta) / 100 for a, t in factors], axis=0) * 100
        np.testing.assert_allclose([mode[f"residual_vibration_{k}_percent"] for k in ("low", "nominal", "high")],
                                   product, rtol=1e-9, atol=1e-12)
    assert zv["added_delay_s"] == pytest.approx(sum(t[-1] for _, t in factors), rel=1e-12)


def test_text_report_units_plot_and_model_modes(tmp_path, capsys):
    """The model's modes at the thesis' configuration 8 (Scompi with tool) are among 'flexrobot modal''s; every
    number of the text report has its unit; the plot is written and named on stderr and stdout."""
    q = "0,-0.374,1.9448,0,-1.9448,0"
    doc = shape_json(capsys, "scompi", "--tool", "--q", q)
    assert main(["modal", "scompi", "--tool", "--q", q, "--json"]) == 0
    modal = json.loads(capsys.readouterr().out)["frequencies_hz"]
    for mode in doc["modes"]:
        assert np.abs(np.array(modal) - mode["frequency_hz"]).min() < 1e-9 * mode["frequency_hz"]
        assert mode["participation"] >= 0.05
    assert main(["shape", "scompi", "--tool", "--q", q, "--plot-dir", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    plot = tmp_path / "out" / "shaper_sensitivity.png"
    assert plot.stat().st_size > 10_000 and f"wrote sensitivity plot {plot}" in captured.err
    row = r"\s+(zv|zvd|ei)?\s+(\d+\s+[\d.]+ s\s+)?\d+\s+[\d.]+ Hz"
    rows = [line for line in captured.out.splitlines() if re.match(row, line)]
    assert len(rows) == 3 * len(doc["modes"])
    for line in rows:
        assert len(re.findall(r"[\d.]+ %", line)) == 4, line
    assert f"recommended: {doc['recommended']}" in captured.out


@pytest.mark.parametrize("argv, message", [
    (["--modal-data", "{tmp}/missing.yaml"], "--modal-data {tmp}/missing.yaml: no such file"),
    (["--modal-data", "{tmp}/empty.json"], "--modal-data {tmp}/empty.json: the OMA result has no modes"),
    (["--modal-data", "{tmp}/empty.yaml"], "poses[0].modes: expected a non-empty list of modes"),
    (["--modal-data", "{tmp}/two.yaml"], "2 poses; choose one with --pose-number K"),
    (["--modal-data", "{tmp}/two.yaml", "--pose-number", "3"],
     "--pose-number: 3; --modal-data {tmp}/two.yaml has poses 1..2"),
    (["--modal-data", "{tmp}/two.yaml", "--pose-number", "1", "--measured-modes", "5"], "--measured-modes: 5"),
    (["--modal-data", "{tmp}/two.yaml", "--pose-number", "1", "--frequency-error", "-0.1"],
     "--frequency-error: -0.1; expected a fraction 0 <= x < 1"),
    (["--modal-data", "{tmp}/two.yaml", "--pose-number", "1", "--tolerance", "0"],
     "--tolerance: 0.0; expected a fraction"),
    ([], "give ROBOT --q Q (the model's modes) or --modal-data FILE (measured), not neither"),
    (["scompi"], "--q: the pose of scompi's modes is required with ROBOT"),
    (["scompi", "--q", "0,0,0,0,0,0", "--modal-data", "{tmp}/two.yaml"], "not both"),
])
def test_bad_input_names_the_argument(tmp_path, capsys, argv, message):
    (tmp_path / "empty.json").write_text(json.dumps({"frequencies_hz": [], "damping_ratios": []}))
    write_modes(tmp_path / "empty.yaml", [])
    write_modes(tmp_path / "two.yaml", [(3.0, 0.02), (9.0, 0.05)], poses=2)
    assert main(["shape", *[a.format(tmp=tmp_path) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flexrobot shape: error:") and message.format(tmp=tmp_path) in err, err
