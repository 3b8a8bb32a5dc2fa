"""External excitations: forces/torques at a frame during a time window (impact hammer, shaker, dead load).

A wrench is ``[f_x, f_y, f_z, m_x, m_y, m_z]`` [N, N m] in world (base) axes acting at the origin of a named
pinocchio frame; three values mean a pure force. Times are absolute simulation times [s].

Each excitation gives its value ``wrench(t)`` and its mean over an interval ``mean(t0, t1)`` (exact), which the
fixed-step integrator uses so that a pulse shorter than a step still delivers its full impulse; ``breakpoints``
are the times where it is not smooth (the accurate integrator stops there).

Seed 000 section 2.4.3: "an impulse force is applied at the end-effector along y_0 with the amplitude 50 N in the
time interval [0.2, 0.2 + 6 dt] s", i.e. ``RectangularPulse("tool0", [0, 50, 0], 0.2, 0.206)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flexrobot_ros.errors import SimulationError


def as_wrench(values: Any, what: str = "wrench") -> np.ndarray:
    """3 force values [N] or 6 wrench values [N, N m] as a finite (6,) wrench, or a SimulationError."""
    array = np.asarray(values, dtype=float).ravel()
    if array.shape == (3,):
        array = np.concatenate([array, np.zeros(3)])
    if array.shape != (6,) or not np.all(np.isfinite(array)):
        raise SimulationError(f"{what}: expected 3 finite force values [N] or 6 wrench values "
                              f"[fx, fy, fz, mx, my, mz] in world axes, got {np.asarray(values).tolist()}")
    return array


def _window(t0: float, t1: float, what: str, open_end: bool = False) -> tuple[float, float]:
    t0, t1 = float(t0), float(t1)
    if not math.isfinite(t0) or t0 < 0 or not (t1 > t0) or (math.isinf(t1) and not open_end) or math.isnan(t1):
        raise SimulationError(f"{what}: time window [{t0}, {t1}] s: expected 0 <= t0 < t1"
                              + ("" if open_end else " < inf"))
    return t0, t1


def _validate(pulse: Any, what: str, open_end: bool = False) -> None:
    """Check and normalize the ``frame``, ``wrench``, ``t0``, ``t1`` fields of a frozen excitation dataclass."""
    if not isinstance(pulse.frame, str) or not pulse.frame:
        raise SimulationError(f"{what}: frame must be a frame name, got {pulse.frame!r}")
    t0, t1 = _window(pulse.t0, pulse.t1, f"{what} at {pulse.frame!r}", open_end)
    object.__setattr__(pulse, "wrench", as_wrench(pulse.wrench, f"{what} at {pulse.frame!r}"))
    object.__setattr__(pulse, "t0", t0)
    object.__setattr__(pulse, "t1", t1)


class _ConstantWrench:
    """``wrench`` during ``[t0, t1)``, zero outside: the value and exact interval mean of a switched constant load."""

    def wrench_at(self, t: float) -> np.ndarray:
        return self.wrench if self.t0 <= t < self.t1 else np.zeros(6)

    def mean(self, a: float, b: float) -> np.ndarray:
        overlap = min(b, self.t1) - max(a, self.t0)
        return self.wrench * (overlap / (b - a)) if overlap > 0 else np.zeros(6)


@dataclass(frozen=True)
class RectangularPulse(_ConstantWrench):
    """Constant wrench ``wrench`` during ``[t0, t1)`` s (the thesis' 'impulse'), zero outside."""

    frame: str
    wrench: np.ndarray
    t0: float
    t1: float

    def __post_init__(self):
        _validate(self, "pulse")

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return (self.t0, self.t1)


@dataclass(frozen=True)
class HalfSinePulse:
    """Half-sine wrench ``wrench * sin(pi (t - t0) / (t1 - t0))`` during ``[t0, t1]``, a smooth hammer impact."""

    frame: str
    wrench: np.ndarray
    t0: float
    t1: float

    def __post_init__(self):
        _validate(self, "half-sine pulse")

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return (self.t0, self.t1)

    def wrench_at(self, t: float) -> np.ndarray:
        if not self.t0 <= t <= self.t1:
            return np.zeros(6)
        return self.wrench * math.sin(math.pi * (t - self.t0) / (self.t1 - self.t0))

    def mean(self, a: float, b: float) -> np.ndarray:
        lo, hi = max(a, self.t0), min(b, self.t1)
        if hi <= lo:
            return np.zeros(6)
        width = self.t1 - self.t0
        integral = width / math.pi * (math.cos(math.pi * (lo - self.t0) / width)
                                      - math.cos(math.pi * (hi - self.t0) / width))
        return self.wrench * (integral / (b - a))


@dataclass(frozen=True)
class StepLoad(_ConstantWrench):
    """Wrench switched on at ``t0`` and held until ``t1`` (default: for ever)."""

    frame: str
    wrench: np.ndarray
    t0: float
    t1: float = math.inf

    def __post_init__(self):
        _validate(self, "step load", open_end=True)

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return (self.t0,) if math.isinf(self.t1) else (self.t0, self.t1)


@dataclass(frozen=True)
class RandomForce:
    """Band-limited Gaussian random wrench during ``[t0, t1]`` (operational excitation for OMA).

    White Gaussian noise drawn at ``sample_rate`` [Hz] from ``numpy.random.default_rng(seed)``, filtered by a
    4th-order zero-phase Butterworth band-pass ``band`` = (f_low, f_high) [Hz] (f_low = 0: low-pass), scaled so that
    each component has the RMS value ``rms`` (6,) [N, N m] (3 values: force only), and interpolated linearly.
    """

    frame: str
    rms: np.ndarray
    band: tuple[float, float]
    t0: float
    t1: float
    seed: int = 0
    sample_rate: float = 0.0
    _times: np.ndarray = field(init=False, repr=False)
    _values: np.ndarray = field(init=False, repr=False)
    _integral: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        from scipy.signal import butter, sosfiltfilt

        what = f"random force at {self.frame!r}"
        rms = as_wrench(self.rms, what)
        t0, t1 = _window(self.t0, self.t1, what)
        low, high = (float(v) for v in self.band)
        rate = float(self.sample_rate) or 10.0 * high
        if not (0 <= low < high < rate / 2) or not math.isfinite(rate):
            raise SimulationError(f"{what}: band {self.band} Hz: expected 0 <= f_low < f_high < sample_rate / 2 = "
                                  f"{rate / 2:g} Hz")
        samples = int(math.ceil((t1 - t0) * rate)) + 1
        if samples < 16:
            raise SimulationError(f"{what}: window [{t0}, {t1}] s holds only {samples} samples at {rate:g} Hz")
        times = t0 + np.arange(samples) / rate
        noise = np.random.default_rng(self.seed).standard_normal((samples, 6))
        sos = butter(4, [low, high] if low > 0 else high, btype="bandpass" if low > 0 else "lowpass", fs=rate,
                     output="sos")
        filtered = sosfiltfilt(sos, noise, axis=0)
        filtered *= rms / np.sqrt(np.mean(filtered**2, axis=0))
        integral = np.concatenate([np.zeros((1, 6)),
                                   np.cumsum(0.5 * (filtered[1:] + filtered[:-1]) * np.diff(times)[:, None], 0)])
        object.__setattr__(self, "rms", rms)
        object.__setattr__(self, "t1", float(times[-1]))
        object.__setattr__(self, "_times", times)
        object.__setattr__(self, "_values", filtered)
        object.__setattr__(self, "_integral", integral)

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return (self.t0, self.t1)

    def wrench_at(self, t: float) -> np.ndarray:
        if not self.t0 <= t <= self.t1:
            return np.zeros(6)
        return np.array([np.interp(t, self._times, self._values[:, k]) for k in range(6)])

    def _cumulative(self, t: float) -> np.ndarray:
        t = min(max(t, self.t0), self.t1)
        i = min(int(np.searchsorted(self._times, t, side="right")) - 1, len(self._times) - 2)
        dt = t - self._times[i]
        slope = (self._values[i + 1] - self._values[i]) / (self._times[i + 1] - self._times[i])
        return self._integral[i] + dt * (self._values[i] + 0.5 * slope * dt)

    def mean(self, a: float, b: float) -> np.ndarray:
        return (self._cumulative(b) - self._cumulative(a)) / (b - a)


Excitation = RectangularPulse | HalfSinePulse | StepLoad | RandomForce

__all__ = ["Excitation", "HalfSinePulse", "RandomForce", "RectangularPulse", "StepLoad", "as_wrench"]
