"""``flexrobot oma`` on real measured data: the Heritage Court Tower (Vancouver) ambient records, 40 Hz, setups 1
(6 channels) and 3 (8 channels), headerless matrices of 13,108 rows (README of the data set).

The data set is third-party and lives outside the repository, in ``../shared/data/htc`` beside the checkout
(or the folder named by ``$FLEXROBOT_HTC_DATA``); these tests skip, saying where they looked, when it is absent.

Reference: the six modes of the building below 6 Hz identified in the IMAC XIX (2001) Heritage Court Tower
benchmark (Ventura, Brincker et al.; frequency domain decomposition), to 0.01 Hz: 1.23, 1.29, 1.45, 3.86, 4.26
and 5.37 Hz. The data set's README names the benchmark but lists no frequencies.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from flexrobot_ros.cli import main

REFERENCE_HZ = np.array([1.23, 1.29, 1.45, 3.86, 4.26, 5.37])
FS_HZ = 40.0
DATA = Path(os.environ.get("FLEXROBOT_HTC_DATA") or Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
            / "htc")


def _record(setup: int) -> Path:
    path = DATA / f"dherita{setup}.asc"
    if not path.is_file():
        pytest.skip(f"Heritage Court Tower data absent: no {path} (set FLEXROBOT_HTC_DATA to its folder)")
    return path


def _oma(capsys, *args: str) -> dict:
    assert main(["oma", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _matched(frequencies_hz, tolerance: float = 0.01) -> list[float]:
    """The reference frequencies with an identified frequency within ``tolerance`` (relative)."""
    f = np.asarray(frequencies_hz)
    return [float(r) for r in REFERENCE_HZ if f.size and np.min(np.abs(f - r)) <= tolerance * r]


@pytest.mark.parametrize("setup", [1, 3])
def test_default_options_find_the_building_modes(setup, capsys):
    """Default options (only the sampling rate of the headerless file): at least 5 of the 6 reference modes below
    6 Hz within 1 % (before issue 22 the default VAR over 2:40 lags found 2 of 6 in setup 1 and 1 of 6 in setup 3,
    and reported 9.27, 9.33 and 6.37 Hz instead)."""
    doc = _oma(capsys, str(_record(setup)), "--fs", str(FS_HZ))
    assert doc["fs_hz"] == FS_HZ
    assert len(doc["channels"]) == (6 if setup == 1 else 8)
    found = _matched(doc["frequencies_hz"])
    assert len(found) >= 5, (found, doc["frequencies_hz"])


def test_var_with_a_short_lag_window_says_so(capsys):
    """VAR over 2:40 lags at 40 Hz spans 1 s, 1.2 periods of the 1.23 Hz mode: it misses modes (2 of 6 found) and
    the output says why and what to raise; over 2:120 lags (3 s, 3.7 periods) it finds them and says nothing."""
    path = str(_record(1))
    short = _oma(capsys, path, "--fs", str(FS_HZ), "--method", "var", "--orders", "2:40")
    assert len(_matched(short["frequencies_hz"])) <= 3
    warning = [n for n in short["notes"] if "lag window" in n]
    assert len(warning) == 1 and "--orders 2:" in warning[0], short["notes"]


def test_band_concentrates_the_fit_on_it(capsys):
    """``--band 6`` decimates the 40 Hz record by 2 to 20 Hz (a note says so) and the fit holds the band: the
    modes reported are the building's six below 6 Hz, each within 1 % (before issue 22 --band only hid the poles
    above it and the fit still spanned 0-20 Hz)."""
    for setup in (1, 3):
        doc = _oma(capsys, str(_record(setup)), "--fs", str(FS_HZ), "--band", "6")
        assert doc["fs_hz"] == 20.0
        assert any("decimated by 2 to 20 Hz for the band up to 6 Hz" in note for note in doc["notes"]), doc["notes"]
        assert len(_matched(doc["frequencies_hz"])) == 6, doc["frequencies_hz"]
        assert max(doc["frequencies_hz"]) <= 6.0


def _prepared(setup: int):
    from flexrobot_ros.oma.signals import prepare, read_signals

    return prepare(read_signals(_record(setup), fs_hz=FS_HZ))


def test_spectrum_parts_the_three_close_low_modes():
    """The spectrum of --plot over the plotted band (0-10.7 Hz here) has lines fine enough to show 1.23, 1.29 and
    1.45 Hz as three peaks of the first singular value (before issue 22: 256-sample segments, 0.16 Hz lines, one
    hump from 1.1 to 1.6 Hz)."""
    import scipy.signal

    from flexrobot_ros.oma.plots import singular_value_spectrum

    sig = _prepared(1)
    f, sv = singular_value_spectrum(sig.data, sig.fs_hz, band_hz=10.7)
    assert f[1] <= 0.02
    low = (f > 1.1) & (f < 1.6)
    peaks, _ = scipy.signal.find_peaks(np.log(sv[low, 0]), prominence=0.3)  # 35 % above the dips beside
    found = f[low][peaks]
    for reference in REFERENCE_HZ[:3]:
        assert np.min(np.abs(found - reference)) <= 0.03, (reference, found)


def test_stabilization_labels_do_not_overlap():
    """Mode labels of the stabilization diagram (setup 3: 1.23, 1.29 and 1.46 Hz within 0.23 Hz on a 10.7 Hz axis)
    overlap neither each other nor the titles (before issue 22 the 1.23 and 1.29 Hz labels overprinted)."""
    import matplotlib.pyplot as plt

    from flexrobot_ros.oma.identify import identify_modes
    from flexrobot_ros.oma.plots import stabilization_figure

    sig = _prepared(3)
    result = identify_modes(sig.data, sig.fs_hz, channels=sig.channels, noise_floor=sig.noise_floor)
    fig = stabilization_figure(result, sig.data, "dherita3.asc")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        labels = [t.get_window_extent(renderer) for t in ax.texts]
        assert len(labels) == len(result.modes) >= 6
        titles = [a.title.get_window_extent(renderer) for a in fig.axes]
        for i, box in enumerate(labels):
            assert not any(box.overlaps(other) for other in labels[i + 1:] + titles), ax.texts[i].get_text()
            assert box.y1 <= fig.bbox.y1  # inside the figure
    finally:
        plt.close(fig)
