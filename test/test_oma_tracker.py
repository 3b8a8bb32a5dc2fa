"""Online tracker: streamed in 10 ms chunks it converges to the batch identification and keeps mode identities;
short gaps (dropped messages) are bridged by linear interpolation, long gaps and bad samples restart the window."""
from __future__ import annotations

import numpy as np
import pytest

from oma_cases import match, white_noise_case
from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma import ModeTracker, SignalWarning, TrackerOptions, identify_modes

FS = 500.0
OPTIONS = TrackerOptions(window_s=20.0, update_period_s=2.0)


@pytest.fixture(scope="module")
def stream():
    """60 s of the 4-DOF chain under white noise at 500 Hz, fed in 10 ms chunks (5 samples)."""
    case = white_noise_case(seed=1, duration_s=60.0, fs_hz=FS)
    tracker = ModeTracker(FS, ["q_m.joint1", "q_m.joint2", "q_m.joint3", "q_m.joint4"], OPTIONS)
    updates = []
    for k in range(0, len(case.y), 5):
        updates += tracker.push(case.t[k:k + 5], case.y[k:k + 5])
    return case, tracker, updates


def test_updates_at_the_configured_rate(stream):
    """The first identification when the 20 s window is full, then one every 2 s: 21 updates in 60 s."""
    _, _, updates = stream
    times = np.array([u.time_s for u in updates])
    assert len(updates) == 21
    assert times[0] == pytest.approx(20.0 - 1 / FS, abs=1e-9)
    np.testing.assert_allclose(np.diff(times), 2.0, atol=1e-9)


def test_converges_to_batch_result(stream):
    """The last update equals the batch identification of the same 20 s window (same data, same method), and the
    tracked modes at the end agree with the batch identification of the whole 60 s record within 1 % in
    frequency and 35 % in damping (the statistical scatter of 20 s against 60 s of data)."""
    case, tracker, updates = stream
    last = updates[-1]
    window = case.y[-int(OPTIONS.window_s * FS):]
    same = identify_modes(window - window.mean(axis=0), FS, OPTIONS.method, OPTIONS.orders)
    np.testing.assert_allclose(last.result.frequencies_hz, same.frequencies_hz, rtol=1e-12)
    np.testing.assert_allclose([m.frequency_hz for m in last.modes], same.frequencies_hz, rtol=1e-12)
    batch = identify_modes(case.y, FS, OPTIONS.method, OPTIONS.orders)
    assert len(batch.modes) == 4
    assert len(tracker.modes) == 4
    f_last = np.array([m.frequency_hz for m in tracker.modes])
    z_last = np.array([m.damping_ratio for m in tracker.modes])
    j = match(batch.frequencies_hz, f_last)
    np.testing.assert_allclose(f_last[j], batch.frequencies_hz, rtol=0.01)
    np.testing.assert_allclose(z_last[j], batch.damping_ratios, rtol=0.35)
    assert sorted(match(batch.frequencies_hz, case.frequencies_hz)) == [0, 1, 2, 3]


def test_mode_identities_are_stable(stream):
    """Every true mode keeps one id over all updates in which it is found (found in at least 75 % of them),
    and no id is ever given to two different true modes."""
    case, _, updates = stream
    ids_of = {k: set() for k in range(4)}
    for update in updates:
        f = np.array([m.frequency_hz for m in update.modes])
        for mode, j in zip(update.modes, match(f, case.frequencies_hz)):
            if abs(mode.frequency_hz / case.frequencies_hz[j] - 1) < 0.02:
                ids_of[j].add(mode.id)
    assert all(len(ids) == 1 for ids in ids_of.values()), ids_of
    assert len(set.union(*ids_of.values())) == 4
    for j, (ident,) in ((j, tuple(ids)) for j, ids in ids_of.items()):
        seen = sum(any(m.id == ident for m in u.modes) for u in updates)
        assert seen >= 0.75 * len(updates), (j, seen)


def test_sample_by_sample_equals_chunks():
    """Pushing one sample at a time gives the same updates as pushing chunks."""
    case = white_noise_case(seed=2, duration_s=4.0, fs_hz=FS)
    options = TrackerOptions(window_s=2.0, update_period_s=1.0, orders="2:20:2")
    one = ModeTracker(FS, ["a", "b", "c", "d"], options)
    many = ModeTracker(FS, ["a", "b", "c", "d"], options)
    u1 = [u for k in range(len(case.y)) for u in one.push(case.t[k], case.y[k])]
    u2 = [u for k in range(0, len(case.y), 37) for u in many.push(case.t[k:k + 37], case.y[k:k + 37])]
    assert [u.time_s for u in u1] == [u.time_s for u in u2] and len(u1) == 3
    for a, b in zip(u1, u2):
        np.testing.assert_array_equal(a.result.frequencies_hz, b.result.frequencies_hz)


def test_gaps_and_bad_samples_restart_the_window():
    """A 100 ms hole or a NaN sample restarts the window with a SignalWarning; decreasing timestamps and a wrong
    channel count are errors."""
    tracker = ModeTracker(100.0, ["a"], TrackerOptions(window_s=1.0, update_period_s=0.5, orders="2:4"))
    t = np.arange(50) / 100.0
    tracker.push(t, np.sin(t)[:, None])
    assert tracker.window_fill == pytest.approx(0.5)
    with pytest.warns(SignalWarning, match="a gap of 100 ms at t = 0.59 s; window restarted"):
        tracker.push(t[-1] + 0.1 + t[:10], np.ones((10, 1)))
    assert tracker.window_fill == pytest.approx(0.1)
    with pytest.warns(SignalWarning, match="a non-finite sample"):
        tracker.push([1.0], [[np.nan]])
    assert tracker.window_fill == 0.0
    with pytest.raises(SignalError, match="timestamps must increase"):
        tracker.push([0.5, 0.4], [[1.0], [2.0]])
    with pytest.raises(SignalError, match="samples have 2 channels, expected 1"):
        tracker.push([5.0], [[1.0, 2.0]])


def test_short_gaps_are_bridged_by_linear_interpolation():
    """Three missing samples (dropped messages) are filled on the straight line between their neighbours and
    counted; the window keeps filling and the next update is on schedule. One more than ``max_bridged_samples``
    missing restarts the window."""
    options = TrackerOptions(window_s=1.0, update_period_s=0.5, orders="2:4", max_bridged_samples=3)
    tracker = ModeTracker(100.0, ["a", "b"], options)
    t = np.arange(100) / 100.0
    x = np.column_stack([np.sin(7 * t), t ** 2])
    keep = np.r_[0:40, 43:100]                   # samples 40, 41, 42 lost
    updates = tracker.push(t[keep], x[keep])
    assert tracker.bridged_samples == 3 and tracker.window_fill == 1.0 and len(updates) == 1
    window = tracker._buffer.window()
    line = x[39] + (x[43] - x[39]) * (np.arange(1, 4) / 4)[:, None]
    np.testing.assert_allclose(window[40:43], line, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(window[keep], x[keep])
    with pytest.warns(SignalWarning, match="a gap of 50 ms at t = 1.04 s; window restarted"):
        tracker.push(t[-1] + 0.05, x[-1])        # four samples missing
    assert tracker.bridged_samples == 3 and tracker.window_fill == pytest.approx(0.01)
