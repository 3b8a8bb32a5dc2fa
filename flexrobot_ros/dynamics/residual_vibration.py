"""Residual vibration of an impulse sequence applied to a damped second-order mode (Singer & Seering 1990).

A mode of natural frequency omega [rad/s] and damping ratio zeta (0 <= zeta < 1) driven by impulses of amplitudes
A_i at times t_i (t_1 = 0 <= ... <= t_N [s]) vibrates after t_N with the amplitude of a single unit impulse at
t = 0 times::

    V(omega, zeta) = exp(-zeta omega t_N) sqrt(C^2 + S^2)
    C = sum_i A_i exp(zeta omega t_i) cos(omega_d t_i),   S = sum_i A_i exp(zeta omega t_i) sin(omega_d t_i)

with omega_d = omega sqrt(1 - zeta^2) the damped frequency. V is reported in percent (100 V): 100 % is the
vibration of the unshaped command, 0 % none. For impulses with positive amplitudes summing to 1, V <= 100 %.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import ShapingError


def residual_vibration(amplitudes: Any, times_s: Any, frequency_hz: Any, damping_ratio: float) -> np.ndarray:
    """Residual vibration [%] (module docstring) of the impulses ``amplitudes`` (N,) at ``times_s`` (N,) [s] on a
    mode of natural frequency ``frequency_hz`` [Hz] (scalar or array, evaluated elementwise) and damping ratio
    ``damping_ratio`` (fraction, 0 <= zeta < 1). Returns an array of the shape of ``frequency_hz``.

    Raises:
        ShapingError: mismatched or non-finite impulses, a negative time, a non-positive frequency or a damping
            ratio outside [0, 1).
    """
    a = np.asarray(amplitudes, dtype=float)
    t = np.asarray(times_s, dtype=float)
    if a.ndim != 1 or a.shape != t.shape or a.size == 0 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(t))):
        raise ShapingError(f"impulses: amplitudes {a.shape} and times {t.shape}; expected two equal-length 1-D "
                           "arrays of finite values")
    if np.any(t < 0.0):
        raise ShapingError(f"impulse times: {t.tolist()} s; expected times >= 0")
    f = np.asarray(frequency_hz, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f <= 0.0):
        raise ShapingError(f"frequency: {np.ravel(f)[:5].tolist()} Hz; expected positive finite frequencies")
    zeta = float(damping_ratio)
    if not (0.0 <= zeta < 1.0):
        raise ShapingError(f"damping ratio: {zeta!r}; expected 0 <= zeta < 1 (an oscillating mode)")
    omega = 2.0 * np.pi * f[..., None]
    decay = zeta * omega * (t - t.max())  # exp(zeta omega (t_i - t_N)) <= 1: no overflow for long sequences
    phase = omega * np.sqrt(1.0 - zeta * zeta) * t
    c = np.sum(a * np.exp(decay) * np.cos(phase), axis=-1)
    s = np.sum(a * np.exp(decay) * np.sin(phase), axis=-1)
    return 100.0 * np.hypot(c, s)


__all__ = ["residual_vibration"]
