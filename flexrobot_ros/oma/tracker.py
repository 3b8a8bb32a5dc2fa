"""Online mode tracking: a sliding window over streamed samples, re-identified at a fixed rate.

:class:`ModeTracker` is fed samples one at a time or in chunks (as the OMA node receives them), keeps the last
``window_s`` seconds in a ring buffer, and every ``update_period_s`` runs the batch identification
(:func:`~flexrobot_ros.oma.identify.identify_modes`, SSI-cov by default: its cost depends on the window length
only through the covariances, so an update costs a bounded, measured time, :attr:`TrackerUpdate.elapsed_s`).
Modes keep an identity across updates: the modes of a new identification are assigned to the tracked ones by
minimum cost (Hungarian algorithm) on relative frequency distance and 1 - MAC, within the gates
``frequency_tol`` and ``mac_min``; unmatched new modes get a new id, tracked modes unseen for more than
``max_missed`` updates are retired.

Timestamps must increase. A short sampling gap (at most ``max_bridged_samples`` missing samples, what a few
dropped messages of a loaded network leave) is bridged by linear interpolation and counted
(:attr:`ModeTracker.bridged_samples`); a longer gap (interval above ``gap_factor / fs`` that is not bridged) or a
non-finite sample empties the window with a :class:`~flexrobot_ros.oma.signals.SignalWarning`.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.optimize

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.identify import OmaResult, identify_modes
from flexrobot_ros.oma.poles import mac_matrix
from flexrobot_ros.oma.selection import SelectionOptions
from flexrobot_ros.oma.signals import SignalWarning
from flexrobot_ros.oma.stabilization import StabilizationCriteria

__all__ = ["TrackerOptions", "TrackedMode", "TrackerUpdate", "ModeTracker"]


@dataclass(frozen=True)
class TrackerOptions:
    """Settings of :class:`ModeTracker`.

    ``window_s`` sliding window [s]; ``update_period_s`` time between identifications [s];
    ``method``/``orders``/``block_rows``/``criteria``/``selection`` as in
    :func:`~flexrobot_ros.oma.identify.identify_modes`; ``frequency_tol`` (relative) and ``mac_min``: gates
    for keeping a mode's identity; ``max_missed``: updates a mode may be missing before it is retired;
    ``gap_factor``: sampling intervals above ``gap_factor / fs`` are gaps; ``max_bridged_samples``: gaps of at
    most this many missing samples are filled by linear interpolation instead of restarting the window (0: never).
    """

    window_s: float = 10.0
    update_period_s: float = 1.0
    method: str = "ssi-cov"
    orders: str = "2:60:2"
    block_rows: int | None = None
    criteria: StabilizationCriteria | None = None
    selection: SelectionOptions | None = None
    frequency_tol: float = 0.05
    mac_min: float = 0.7
    max_missed: int = 5
    gap_factor: float = 1.5
    max_bridged_samples: int = 5


@dataclass(frozen=True)
class TrackedMode:
    """A mode with a stable identity ``id``: latest ``frequency_hz``, ``damping_ratio``, ``shape``
    (channels,), their spread over model orders, ``first_seen_s``/``last_seen_s`` (stream time [s]) and
    ``updates`` (identifications in which it was found)."""

    id: int
    frequency_hz: float
    damping_ratio: float
    shape: np.ndarray
    frequency_std_hz: float
    damping_std: float
    confidence: float
    first_seen_s: float
    last_seen_s: float
    updates: int
    missed: int = 0


@dataclass(frozen=True)
class TrackerUpdate:
    """Result of one re-identification: stream ``time_s`` [s] of the newest sample, the ``modes`` identified in
    this window with their identities (by frequency; tracked modes missed this time are not listed, see
    :attr:`ModeTracker.modes`), ids that appeared (``new_ids``) or were retired (``lost_ids``), the batch
    ``result`` on the window, and ``elapsed_s`` wall time of the update."""

    time_s: float
    modes: tuple[TrackedMode, ...]
    new_ids: tuple[int, ...]
    lost_ids: tuple[int, ...]
    result: OmaResult
    elapsed_s: float


@dataclass
class _Buffer:
    data: np.ndarray
    count: int = 0      # samples written since the last reset
    head: int = 0       # next write position

    def window(self) -> np.ndarray:
        n = min(self.count, len(self.data))
        if n < len(self.data):
            return self.data[:n].copy()
        return np.concatenate([self.data[self.head:], self.data[:self.head]])


class ModeTracker:
    """Streaming OMA over ``channels`` (names) sampled at ``fs_hz`` [Hz]; see the module docstring."""

    def __init__(self, fs_hz: float, channels, options: TrackerOptions | None = None):
        if not (np.isfinite(fs_hz) and fs_hz > 0):
            raise SignalError(f"tracker: sampling rate must be a positive number of Hz, got {fs_hz}")
        self.fs_hz = float(fs_hz)
        self.channels = tuple(str(c) for c in channels)
        self.options = TrackerOptions() if options is None else options
        n = int(round(self.options.window_s * self.fs_hz))
        if n < 10:
            raise SignalError(f"tracker: window of {self.options.window_s} s at {self.fs_hz} Hz holds {n} samples")
        self._buffer = _Buffer(np.zeros((n, len(self.channels))))
        self._last_t: float | None = None
        self._last_update_t: float | None = None
        self._modes: dict[int, TrackedMode] = {}
        self._next_id = 1
        self.bridged_samples = 0
        """Samples filled in by linear interpolation across short gaps since construction."""

    @property
    def modes(self) -> tuple[TrackedMode, ...]:
        """Tracked modes (by frequency), including those missed by the last few updates (``missed`` > 0)."""
        return tuple(sorted(self._modes.values(), key=lambda m: m.frequency_hz))

    @property
    def window_fill(self) -> float:
        """Fraction of the window holding samples (identification starts when it is 1)."""
        return min(self._buffer.count / len(self._buffer.data), 1.0)

    def set_options(self, options: TrackerOptions) -> None:
        """New settings from the next sample (or :meth:`update`) on. A new ``window_s`` keeps the newest samples
        that fit (a longer window fills up before the next scheduled update); tracked identities and the update
        schedule (``update_period_s`` after the last update) are kept."""
        n = int(round(options.window_s * self.fs_hz))
        if n < 10:
            raise SignalError(f"tracker: window of {options.window_s} s at {self.fs_hz} Hz holds {n} samples")
        if n != len(self._buffer.data):
            kept = self._buffer.window()[-n:]
            self._buffer = _Buffer(np.zeros((n, len(self.channels))))
            self._buffer.data[:len(kept)] = kept
            self._buffer.count, self._buffer.head = len(kept), len(kept) % n
        self.options = options

    def reset(self) -> None:
        """Empty the window (tracked identities are kept)."""
        self._buffer.count = 0
        self._buffer.head = 0
        self._last_t = None

    def push(self, t, samples) -> list[TrackerUpdate]:
        """Append samples: ``t`` scalar or (k,) [s], ``samples`` (channels,) or (k, channels).

        Returns the updates triggered by these samples. An update runs right after the sample at which it falls
        due, so the results do not depend on how the stream is chunked.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        x = np.asarray(samples, dtype=float).reshape(len(t), -1)
        if x.shape[1] != len(self.channels):
            raise SignalError(f"tracker: samples have {x.shape[1]} channels, expected {len(self.channels)} "
                              f"({', '.join(self.channels)})")
        bad = ~np.isfinite(t) | ~np.all(np.isfinite(x), axis=1)
        dt_max = self.options.gap_factor / self.fs_hz
        updates: list[TrackerUpdate] = []
        pos = 0
        while pos < len(t):
            prev = t[pos] - 1.0 / self.fs_hz if self._last_t is None else self._last_t
            steps = np.diff(np.concatenate([[prev], t[pos:]]))
            wrong = bad[pos:] | ~(steps > 0) | (steps > dt_max)
            run = int(np.argmax(wrong)) if wrong.any() else len(t) - pos
            if run < len(t) - pos and not bad[pos + run] and steps[run] <= 0:
                raise SignalError(f"tracker: timestamps must increase; got {t[pos + run]:.9g} s after "
                                  f"{(t[pos + run - 1] if run else prev):.9g} s")
            updates += self._append(t[pos:pos + run], x[pos:pos + run])
            pos += run
            if pos < len(t) and not bad[pos] and self._bridge(t[pos], x[pos], updates):
                continue
            if pos < len(t):
                what = "a non-finite sample" if bad[pos] else f"a gap of {1e3 * steps[run]:.4g} ms"
                warnings.warn(f"tracker: {what} at t = {t[pos]:.6g} s; window restarted", SignalWarning,
                              stacklevel=2)
                self.reset()
                if bad[pos]:
                    pos += 1
        return updates

    def _bridge(self, t_next: float, x_next: np.ndarray, updates: list[TrackerUpdate]) -> bool:
        """Fill a short gap before the sample (t_next, x_next) by linear interpolation from the newest sample in
        the window; False (nothing written) when the gap is too long or the window is empty."""
        if self._last_t is None or self._buffer.count == 0:
            return False
        step = t_next - self._last_t
        missing = int(round(step * self.fs_hz)) - 1
        if not 1 <= missing <= self.options.max_bridged_samples:
            return False
        previous = self._buffer.data[(self._buffer.head - 1) % len(self._buffer.data)].copy()
        fraction = np.arange(1, missing + 1) / (missing + 1)
        updates += self._append(self._last_t + fraction * step, previous + fraction[:, None] * (x_next - previous))
        self.bridged_samples += missing
        return True

    def _append(self, t: np.ndarray, x: np.ndarray) -> list[TrackerUpdate]:
        """Write a clean run of samples, running each update right after the sample where it falls due."""
        updates = []
        size = len(self._buffer.data)
        while len(t):
            if self._buffer.count < size:
                take = min(size - self._buffer.count, len(t))
                self._write(t[:take], x[:take])
                t, x = t[take:], x[take:]
                if self._buffer.count >= size and self._due() <= self._last_t:
                    updates.append(self._scheduled_update())
                continue
            k = int(np.searchsorted(t, self._due(), side="left"))
            if k >= len(t):
                self._write(t, x)
                break
            self._write(t[:k + 1], x[:k + 1])
            t, x = t[k + 1:], x[k + 1:]
            updates.append(self._scheduled_update())
        return updates

    def _due(self) -> float:
        """Stream time from which the next update is due."""
        if self._last_update_t is None:
            return -np.inf
        return self._last_update_t + self.options.update_period_s - 0.5 / self.fs_hz

    def _scheduled_update(self) -> TrackerUpdate:
        self._last_update_t = self._last_t
        return self.update()

    def _write(self, t: np.ndarray, x: np.ndarray) -> None:
        if len(t) == 0:
            return
        self._last_t = float(t[-1])
        buf = self._buffer
        n = len(buf.data)
        if len(x) >= n:
            buf.data[:] = x[-n:]
            buf.head = 0
        else:
            end = buf.head + len(x)
            if end <= n:
                buf.data[buf.head:end] = x
            else:
                first = n - buf.head
                buf.data[buf.head:] = x[:first]
                buf.data[:end - n] = x[first:]
            buf.head = end % n
        buf.count += len(x)

    def update(self, now: float | None = None) -> TrackerUpdate:
        """Identify the modes of the current window and update the tracked identities."""
        start = time.perf_counter()
        o = self.options
        window = self._buffer.window()
        result = identify_modes(window - window.mean(axis=0), self.fs_hz, o.method, o.orders, self.channels,
                                o.criteria, o.selection, o.block_rows)
        now = self._last_t if now is None else now
        new_ids, lost_ids = self._assign(result, now)
        seen = tuple(m for m in self.modes if m.missed == 0)
        return TrackerUpdate(float(now), seen, tuple(new_ids), tuple(lost_ids), result, time.perf_counter() - start)

    def _assign(self, result: OmaResult, now: float) -> tuple[list[int], list[int]]:
        o = self.options
        old = list(self._modes.values())
        new = list(result.modes)
        matched_old: set[int] = set()
        matched_new: set[int] = set()
        if old and new:
            f_old = np.array([m.frequency_hz for m in old])
            f_new = np.array([m.frequency_hz for m in new])
            rel = np.abs(f_new[None, :] - f_old[:, None]) / f_old[:, None]
            macs = mac_matrix(np.array([m.shape for m in old]), np.array([m.shape for m in new]))
            ok = (rel <= o.frequency_tol) & (macs >= o.mac_min)
            cost = np.where(ok, rel / o.frequency_tol + (1.0 - macs) / max(1.0 - o.mac_min, 1e-9), 1e6)
            rows, cols = scipy.optimize.linear_sum_assignment(cost)
            for r, c in zip(rows, cols):
                if ok[r, c]:
                    prev, mode = old[r], new[c]
                    self._modes[prev.id] = TrackedMode(
                        prev.id, mode.frequency_hz, mode.damping_ratio, mode.shape, mode.frequency_std_hz,
                        mode.damping_std, mode.confidence, prev.first_seen_s, now, prev.updates + 1, 0)
                    matched_old.add(r)
                    matched_new.add(c)
        lost = []
        for r, prev in enumerate(old):
            if r in matched_old:
                continue
            if prev.missed + 1 > o.max_missed:
                del self._modes[prev.id]
                lost.append(prev.id)
            else:
                self._modes[prev.id] = replace(prev, missed=prev.missed + 1)
        created = []
        for c, mode in enumerate(new):
            if c in matched_new:
                continue
            ident = self._next_id
            self._next_id += 1
            self._modes[ident] = TrackedMode(ident, mode.frequency_hz, mode.damping_ratio, mode.shape,
                                             mode.frequency_std_hz, mode.damping_std, mode.confidence, now, now, 1)
            created.append(ident)
        return created, lost
