"""The onset of an impulsive excitation in a record: where a free-decay record for OMA should start.

A record started before a blow holds, ahead of the free decay, whatever the structure did before it; SSI-cov then
spends model order on that and misses modes. It happens whenever the recorder cannot know the instant of the blow:
a self-calibration asks the simulator (or a hammer operator) to strike, and the blow lands when the request
arrives, later than the record's start by the message latency. On the LWR4 held by its motor friction, a record
starting 0.3 s before the blow missed the 2.70 and 2.86 Hz modes that the record starting at the blow gives
(test_oma_onset.py); the 0.3 s before held the slow creep of the motors towards their set point.

The blow is the sample where the record's second difference (the acceleration, up to dt^2), normalized per channel
by that channel's largest, first reaches ``LEVEL`` of its peak; it counts as a blow only when that peak stands
``CLEAR_RATIO`` times above the median of the normalized second difference before it (a smooth creep or ambient
motion has no such edge: then there is no onset and the record is used as it is)::

    s_k = max_channels |y_(k+1) - 2 y_k + y_(k-1)| / max_k |...|,    peak p = argmax s,
    onset = first k <= p with s_k >= LEVEL s_p       if s_p >= CLEAR_RATIO median(s_0..s_(p-1))
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.errors import SignalError

#: Fraction of the peak second difference at which the blow has started.
LEVEL = 0.1
#: The peak must stand this many times above the median before it to count as a blow.
CLEAR_RATIO = 20.0
#: Fewest samples before the peak for the median to mean anything.
MIN_LEAD = 10


def impulse_onset(data: np.ndarray) -> int | None:
    """Index of the first sample of the blow in ``data`` (samples, channels), or None when the record shows no
    clear blow (module docstring); a 1-D array is one channel. Raises SignalError for fewer than 3 samples or a
    non-finite value."""
    y = np.asarray(data, dtype=float)
    y = y[:, None] if y.ndim == 1 else y
    if y.ndim != 2 or y.shape[0] < 3:
        raise SignalError(f"impulse onset: expected (samples, channels) with 3 or more samples, got {np.shape(data)}")
    if not np.all(np.isfinite(y)):
        raise SignalError("impulse onset: the record holds a non-finite value")
    second = np.abs(np.diff(y, n=2, axis=0))
    largest = second.max(axis=0)
    moving = largest > 0.0
    if not np.any(moving):
        return None
    s = np.max(second[:, moving] / largest[moving], axis=1)
    peak = int(np.argmax(s))
    if peak < MIN_LEAD or s[peak] < CLEAR_RATIO * np.median(s[:peak]):
        return None
    return int(np.flatnonzero(s[:peak + 1] >= LEVEL * s[peak])[0]) + 1   # s_k is centred on sample k + 1


__all__ = ["CLEAR_RATIO", "LEVEL", "MIN_LEAD", "impulse_onset"]
