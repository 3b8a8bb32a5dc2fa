"""Signal reading and conditioning for OMA: formats, channel selection, timestamps, gaps, quantization,
set-point removal, decimation and the checks on bad input (closed-form signals: sines, ramps)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.signals import (Signals, SignalWarning, find_gaps, prepare, quantization_step, read_signals,
                                       register_reader, readers)
from flexrobot_ros.timeseries import write_timeseries


def _sines(fs=1000.0, n=4000, freqs=(7.0, 31.0)):
    t = np.arange(n) / fs
    return t, np.column_stack([np.sin(2 * np.pi * f * t) for f in freqs])


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_read_simulator_format_and_select_by_glob(tmp_path, suffix):
    """CSV/NPZ with column t and named channels (flexrobot_ros.timeseries) read back exactly; globs select."""
    t, y = _sines()
    path = write_timeseries(tmp_path / f"rec{suffix}", t, {"q.joint1": y[:, 0], "q_m.joint1": y[:, 1],
                                                           "q_m.joint2": 2 * y[:, 1]})
    sig = read_signals(path, ["q_m.*"])
    assert sig.channels == ("q_m.joint1", "q_m.joint2")
    np.testing.assert_array_equal(sig.t, t)
    np.testing.assert_array_equal(sig.data[:, 1], 2 * y[:, 1])
    assert read_signals(path, ["q_m.joint2", "q.joint1"]).channels == ("q_m.joint2", "q.joint1")
    with pytest.raises(SignalError, match=r"no channel matches 'tau\.\*'; channels: q\.joint1, q_m\.joint1"):
        read_signals(path, ["tau.*"])


def test_reader_plug_in(tmp_path):
    """A reader registered for a suffix is used by read_signals (how rosbag2 input plugs in)."""
    path = tmp_path / "x.fake"
    path.write_text("")
    register_reader(".fake", lambda p: Signals(np.arange(5.0), np.ones((5, 1)), ("a",), str(p)))
    try:
        assert read_signals(path).channels == ("a",)
    finally:
        readers_now = readers()
        assert ".fake" in readers_now
    with pytest.raises(SignalError, match=r"no reader for '\.xyz' files"):
        (tmp_path / "y.xyz").write_text("")
        read_signals(tmp_path / "y.xyz")


def test_jittered_timestamps_are_resampled_onto_a_uniform_grid():
    """Timestamps jittered by up to +-20 % of the 1 ms interval: the resampled 7 Hz and 31 Hz sines equal the
    true sines at the uniform grid times within 2e-4 (cubic interpolation of well-sampled signals)."""
    rng = np.random.default_rng(0)
    n, fs = 3000, 1000.0
    t = np.arange(n) / fs + rng.uniform(-0.2, 0.2, n) / fs
    y = np.column_stack([np.sin(2 * np.pi * 7 * t), np.sin(2 * np.pi * 31 * t)])
    prep = prepare(Signals(t, y, ("a", "b")), detrend="none")
    assert prep.resampled
    grid = prep.t0 + np.arange(len(prep.data)) / prep.fs_hz
    truth = np.column_stack([np.sin(2 * np.pi * 7 * grid), np.sin(2 * np.pi * 31 * grid)])
    assert np.max(np.abs(prep.data - truth)) < 2e-4
    assert prep.fs_hz == pytest.approx(fs, rel=0.01)


def test_gaps_are_reported_not_bridged():
    """A 50 ms hole in a 1 kHz record: error naming the gap by default; with on_gap='longest' the longest
    gap-free segment is analysed and a warning says so."""
    t, y = _sines(n=5000)
    keep = (t < 1.0) | (t >= 1.05)
    sig = Signals(t[keep], y[keep], ("a", "b"), "rec.csv")
    assert find_gaps(sig.t) == [(999, pytest.approx(0.999), pytest.approx(1.05))]
    with pytest.raises(SignalError, match=r"rec\.csv: 1 sampling gap\(s\).*0\.999-1\.05 s"):
        prepare(sig)
    with pytest.warns(SignalWarning, match="longest gap-free segment 1.05-4.999 s"):
        prep = prepare(sig, on_gap="longest")
    assert len(prep.data) == 3950 and prep.gaps == ((pytest.approx(0.999), pytest.approx(1.05)),)


def test_bad_timestamps_and_values():
    """Non-monotonic timestamps, non-finite values, constant channels: clear errors or warnings."""
    t, y = _sines(n=200)
    t_bad = t.copy()
    t_bad[50] = t_bad[49]
    with pytest.raises(SignalError, match=r"timestamps must increase strictly; t\[49\] = 0\.049 s"):
        prepare(Signals(t_bad, y, ("a", "b"), "f.csv"))
    y_bad = y.copy()
    y_bad[120, 1] = np.inf
    with pytest.raises(SignalError, match=r"channel 'b' has 1 non-finite value\(s\), first at sample 120 "
                                          r"\(t = 0\.12 s\)"):
        prepare(Signals(t, y_bad, ("a", "b"), "f.csv"))
    y_const = np.column_stack([y[:, 0], np.full(len(t), 0.3)])
    with pytest.warns(SignalWarning, match="constant channel"):
        prep = prepare(Signals(t, y_const, ("a", "b")))
    assert prep.channels == ("a",) and prep.dropped == ("b",)
    with pytest.raises(SignalError, match="every channel is constant"):
        prepare(Signals(t, np.ones((len(t), 2)), ("a", "b")))
    with pytest.raises(SignalError, match="2 samples"):
        prepare(Signals(t[:2], y[:2], ("a", "b")))


def test_band_versus_sampling_rate():
    """A band above the Nyquist frequency is refused; a band close to it gives a warning."""
    t, y = _sines(fs=200.0, n=2000)
    sig = Signals(t, y, ("a", "b"), "slow.csv")
    with pytest.raises(SignalError, match=r"sampling rate 200 Hz is too low for the requested band up to 150 Hz"):
        prepare(sig, band_hz=150.0)
    with pytest.warns(SignalWarning, match="close to the Nyquist"):
        prepare(sig, band_hz=90.0)


def test_decimation_keeps_the_band_and_removes_aliases():
    """Decimating 1 kHz by 4 (anti-alias FIR, zero phase): a 5 Hz sine keeps its amplitude within 1 % and
    phase; a 180 Hz sine (would alias to 70 Hz at 250 Hz sampling) is attenuated by more than 40 dB."""
    fs, n = 1000.0, 8000
    t = np.arange(n) / fs
    low = np.sin(2 * np.pi * 5 * t)
    high = np.sin(2 * np.pi * 180 * t)
    prep = prepare(Signals(t, np.column_stack([low, high]), ("low", "high")), detrend="none", decimate=4)
    assert prep.fs_hz == pytest.approx(250.0, rel=1e-12) and prep.decimation == 4
    mid = slice(100, -100)
    np.testing.assert_allclose(prep.data[mid, 0], low[::4][mid], atol=0.01)
    assert np.max(np.abs(prep.data[mid, 1])) < 0.01


def test_quantization_detected_and_coarse_encoders_flagged():
    """Values on an encoder grid give back the step (and noise floor step/sqrt(12)); a channel moving over a
    few steps only is flagged; unquantized data give NaN."""
    t, y = _sines(n=4000)
    step = 2 * np.pi / 2**14
    fine = np.round(y[:, 0] * 0.05 / step) * step
    coarse = np.round(y[:, 1] * 3 * step / step) * step
    assert quantization_step(fine) == pytest.approx(step, rel=1e-9)
    assert np.isnan(quantization_step(y[:, 0]))
    with pytest.warns(SignalWarning, match=r"channel 'coarse' moves over only 2\.\d+ encoder steps"):
        prep = prepare(Signals(t, np.column_stack([fine, coarse]), ("fine", "coarse")))
    np.testing.assert_allclose(prep.noise_floor, [step / np.sqrt(12), step / np.sqrt(12)])


def test_set_point_removal():
    """A slow 0.2 Hz set-point motion of 0.5 rad under a 1e-4 rad, 30 Hz vibration: subtracting the reference
    leaves the vibration exactly; a 2 Hz zero-phase high-pass leaves it within 2 % (away from the ends)."""
    fs, n = 1000.0, 20000
    t = np.arange(n) / fs
    setpoint = 0.5 * np.sin(2 * np.pi * 0.2 * t)
    vib = 1e-4 * np.sin(2 * np.pi * 30 * t)
    sig = Signals(t, (setpoint + vib)[:, None], ("q_m.joint2",))
    exact = prepare(sig, detrend="none", references={"q_m.joint2": setpoint})
    np.testing.assert_allclose(exact.data[:, 0], vib, atol=1e-15)
    hp = prepare(sig, highpass_hz=2.0)
    mid = slice(2000, -2000)
    assert np.max(np.abs(hp.data[mid, 0] - vib[mid])) < 2e-6
    with pytest.raises(SignalError, match="reference given for unknown channel 'q_m.joint9'"):
        prepare(sig, references={"q_m.joint9": setpoint})


def test_linear_detrend_and_warning_free_clean_input():
    """Clean uniformly sampled data: no warnings, no resampling; linear detrend removes a ramp exactly."""
    t, y = _sines()
    ramp = 3.0 + 2.0 * t
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prep = prepare(Signals(t, y + ramp[:, None], ("a", "b")), detrend="linear")
    assert not prep.resampled and prep.notes == ()
    fit = np.polyfit(t, y, 1)
    np.testing.assert_allclose(prep.data, y - (np.outer(t, fit[0]) + fit[1]), atol=1e-12)


@pytest.mark.parametrize(("fs", "n", "offset_s"), [(40.0, 13108, 0.0), (1000.0, 10000, 0.0), (1000.0, 3000, 100.0),
                                                    (512.0, 2048, 0.0)])
def test_sampling_rate_is_the_rate_not_its_float_rounding(tmp_path, fs, n, offset_s):
    """Stamps k / fs (+ offset) written to CSV with 17 digits and read back give fs exactly (issue 22: 1 kHz
    records reported 999.9999999999991 Hz, HTC's k / 40 gave 39.99999999999091 Hz); nothing is resampled."""
    t = offset_s + np.arange(n) / fs
    path = write_timeseries(tmp_path / "rate.csv", t, {"a": np.sin(2 * np.pi * 0.05 * fs * t)})
    raw = read_signals(path)
    assert 1.0 / np.median(np.diff(raw.t)) != fs or fs == 512.0  # the float interval itself is not exact
    prepared = prepare(raw)
    assert prepared.fs_hz == fs
    assert not prepared.resampled


def test_band_chooses_the_decimation():
    """decimate=None: a 1 kHz record with a band up to 100 Hz is decimated by 4 to 250 Hz (2.5 x the band) and a
    note says so; without a band nothing is decimated; an explicit factor wins."""
    from flexrobot_ros.oma.signals import band_decimation

    t, y = _sines(fs=1000.0, n=8000, freqs=(7.0, 31.0))
    sig = Signals(t, y, ("a", "b"), "fast.csv")
    auto = prepare(sig, band_hz=100.0, decimate=None)
    assert (auto.fs_hz, auto.decimation, len(auto.data)) == (250.0, 4, 2000)
    assert any("decimated by 4 to 250 Hz for the band up to 100 Hz" in note for note in auto.notes)
    assert prepare(sig, decimate=None).fs_hz == 1000.0
    assert prepare(sig, band_hz=100.0, decimate=2).fs_hz == 500.0
    assert band_decimation(40.0, 6.0, 13108) == 2 and band_decimation(1000.0, 450.0, 8000) == 1
    assert band_decimation(1000.0, 1.0, 300) == 10  # at least 30 samples per factor
