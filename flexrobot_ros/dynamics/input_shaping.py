"""Input shapers (Singer & Seering 1990; Singhose, Seering & Singer 1994): impulse sequences that, convolved with a
command, leave no (ZV, ZVD) or little (EI) residual vibration of a damped mode.

For a mode of natural frequency f [Hz] and damping ratio zeta (0 <= zeta < 1), with the damped half period
T_h = 1 / (2 f sqrt(1 - zeta^2)) [s] and K = exp(-zeta pi / sqrt(1 - zeta^2)):

* **ZV** (zero vibration): amplitudes [1, K] / (1 + K) at [0, T_h]. V = 0 at f; duration T_h.
* **ZVD** (zero vibration and derivative): [1, 2K, K^2] / (1 + K)^2 at [0, T_h, 2 T_h]; V and dV/df vanish at f,
  so small frequency errors leave less vibration; duration 2 T_h.
* **EI** (extra insensitive, vibration tolerance V_tol, default 5 %): three positive impulses at [0, t_2, t_3]
  with V(f) = V_tol, dV/df = 0 at f and V = 0 at two frequencies f_l < f < f_h. Undamped, this is the closed form
  [(1 + V_tol)/4, (1 - V_tol)/2, (1 + V_tol)/4] at [0, T_h, 2 T_h]; damped, the seven conditions (sum of amplitudes
  1 and the six above) are solved for A_1..A_3, t_2, t_3, f_l, f_h by Powell's hybrid method (scipy fsolve),
  continued in zeta from that closed form. V stays below V_tol over the widest band of the three (f_l .. f_h:
  +-14 % of f at V_tol = 5 %, zeta = 0).

V(f, zeta) is the residual vibration of :mod:`.residual_vibration` (percent of the unshaped command's).
Several modes: the single-mode shapers are convolved (every product of impulses, times added), so the shaper's V
at each mode is at most that mode's own factor's. ``auto`` takes, per mode, the shortest of ZV, ZVD, EI (ZVD before
EI at equal length) whose V stays at or below the tolerance over f (1 +- frequency_error), and EI when none does.
Durations are in seconds, amplitudes sum to 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
from scipy.optimize import fsolve

from flexrobot_ros.dynamics.residual_vibration import residual_vibration
from flexrobot_ros.dynamics.shaper_names import CANDIDATES, DEFAULT_FREQUENCY_ERROR, DEFAULT_TOLERANCE, SHAPERS
from flexrobot_ros.errors import ShapingError

#: Frequencies per band at which 'auto' evaluates the worst residual vibration.
BAND_POINTS = 201


@dataclass(frozen=True)
class Shaper:
    """An impulse sequence: ``amplitudes`` (N,) summing to 1 at ``times_s`` (N,) [s], first time 0; ``kinds`` the
    single-mode shapers it is the convolution of (one per mode, e.g. ('zvd', 'zv'); empty: the identity)."""

    amplitudes: np.ndarray
    times_s: np.ndarray
    kinds: tuple[str, ...]

    @property
    def duration_s(self) -> float:
        """Time of the last impulse [s]: the time shaping adds to a move."""
        return float(self.times_s.max())

    def residual_vibration(self, frequency_hz: Any, damping_ratio: float) -> np.ndarray:
        """Residual vibration [%] on a mode of ``frequency_hz`` [Hz] (scalar or array) and ``damping_ratio``."""
        return residual_vibration(self.amplitudes, self.times_s, frequency_hz, damping_ratio)

    def worst_vibration(self, frequency_hz: float, damping_ratio: float, frequency_error: float) -> float:
        """Largest residual vibration [%] over ``frequency_hz * (1 +- frequency_error)``."""
        band = frequency_hz * np.linspace(1.0 - frequency_error, 1.0 + frequency_error, BAND_POINTS)
        return float(self.residual_vibration(band, damping_ratio).max())


IDENTITY = Shaper(np.ones(1), np.zeros(1), ())


def _check_mode(frequency_hz: float, damping_ratio: float) -> tuple[float, float]:
    f, zeta = float(frequency_hz), float(damping_ratio)
    if not (np.isfinite(f) and f > 0.0):
        raise ShapingError(f"mode frequency: {frequency_hz!r} Hz; expected a positive finite frequency")
    if not (0.0 <= zeta < 1.0):
        raise ShapingError(f"mode damping ratio: {damping_ratio!r} (at {f:.4g} Hz); expected 0 <= zeta < 1 (an "
                           "oscillating mode)")
    return f, zeta


def _k_and_half_period(frequency_hz: float, damping_ratio: float) -> tuple[float, float]:
    f, zeta = _check_mode(frequency_hz, damping_ratio)
    root = np.sqrt(1.0 - zeta * zeta)
    return float(np.exp(-zeta * np.pi / root)), 1.0 / (2.0 * f * root)


def zv_shaper(frequency_hz: float, damping_ratio: float) -> Shaper:
    """ZV shaper of one mode (module docstring): [1, K] / (1 + K) at [0, T_h]."""
    k, half = _k_and_half_period(frequency_hz, damping_ratio)
    return Shaper(np.array([1.0, k]) / (1.0 + k), np.array([0.0, half]), ("zv",))


def zvd_shaper(frequency_hz: float, damping_ratio: float) -> Shaper:
    """ZVD shaper of one mode (module docstring): [1, 2K, K^2] / (1 + K)^2 at [0, T_h, 2 T_h]."""
    k, half = _k_and_half_period(frequency_hz, damping_ratio)
    return Shaper(np.array([1.0, 2.0 * k, k * k]) / (1.0 + k) ** 2, np.array([0.0, half, 2.0 * half]), ("zvd",))


def ei_shaper(frequency_hz: float, damping_ratio: float, tolerance: float = DEFAULT_TOLERANCE) -> Shaper:
    """EI shaper of one mode with vibration tolerance ``tolerance`` (fraction, 0 < V_tol < 1; module docstring).

    Raises:
        ShapingError: a bad mode or tolerance, or the conditions have no solution with positive impulses.
    """
    f, zeta = _check_mode(frequency_hz, damping_ratio)
    v = float(tolerance)
    if not (0.0 < v < 1.0):
        raise ShapingError(f"vibration tolerance: {tolerance!r}; expected a fraction 0 < V < 1 (0.05 = 5 %)")
    grid = int(np.floor(zeta / _EI_STEP))
    x = _ei_solve(zeta, v, _ei_on_grid(grid, v)) if zeta > grid * _EI_STEP else _ei_on_grid(grid, v)
    if x is None or np.any(x[:3] <= 0.0) or not (0.0 < x[3] < x[4]) or not (x[5] < 1.0 < x[6]):
        raise ShapingError(f"no EI shaper with positive impulses for the mode at {f:.4g} Hz with damping ratio "
                           f"{zeta:.4g} and tolerance {v:.3g}; use ZV or ZVD for this mode")
    return Shaper(x[:3] / x[:3].sum(), np.array([0.0, x[3], x[4]]) / (2.0 * np.pi * f), ("ei",))


#: Damping-ratio step of the continuation that solves the damped EI conditions from the undamped closed form.
_EI_STEP = 0.02


def _ei_conditions(x: np.ndarray, zeta: float, v: float) -> np.ndarray:
    """The seven EI conditions (module docstring) at omega = 1 rad/s for x = [A_1, A_2, A_3, t_2, t_3, w_l, w_h]:
    with p = zeta + i sqrt(1 - zeta^2) and F(w) = sum_i A_i exp(p w t_i), V(w) = exp(-zeta w t_3) |F(w)|."""
    p = complex(zeta, np.sqrt(1.0 - zeta * zeta))
    a, t, (w_low, w_high) = x[:3], np.array([0.0, x[3], x[4]]), x[5:]
    nominal = np.sum(a * np.exp(p * t))
    slope = np.sum(a * p * t * np.exp(p * t))  # dF/dw at w = 1
    low, high = (np.sum(a * np.exp(p * w * t)) for w in (w_low, w_high))
    scale = np.exp(zeta * t[2])
    return np.array([a.sum() - 1.0, abs(nominal) / scale - v,
                     (np.real(np.conj(nominal) * slope) - zeta * t[2] * abs(nominal) ** 2) / scale**2,
                     low.real, low.imag, high.real, high.imag])


def _ei_solve(zeta: float, v: float, guess: np.ndarray | None) -> np.ndarray | None:
    if guess is None:
        return None
    x, _, status, _ = fsolve(_ei_conditions, guess, args=(zeta, v), xtol=1e-13, full_output=True)
    return x if status == 1 and np.abs(_ei_conditions(x, zeta, v)).max() < 1e-9 else None


@lru_cache(maxsize=None)
def _ei_on_grid(step: int, v: float) -> np.ndarray | None:
    """The normalized EI solution at zeta = step * _EI_STEP, by continuation from the undamped closed form."""
    if step == 0:
        theta = np.arccos(-(1.0 - v) / (1.0 + v))  # undamped: V = |A_2 + 2 A_1 cos(w pi)|, zeros where it vanishes
        return np.array([(1 + v) / 4, (1 - v) / 2, (1 + v) / 4, np.pi, 2 * np.pi, theta / np.pi, 2 - theta / np.pi])
    return _ei_solve(step * _EI_STEP, v, _ei_on_grid(step - 1, v))


def convolve(shapers: Sequence[Shaper]) -> Shaper:
    """Convolution of impulse sequences (every product of impulses, times added; coincident impulses kept apart so
    that the impulse order does not depend on the modes' values): amplitudes A_i B_j at t_i + u_j, i major."""
    result = IDENTITY
    for shaper in shapers:
        result = Shaper((result.amplitudes[:, None] * shaper.amplitudes[None, :]).ravel(),
                        (result.times_s[:, None] + shaper.times_s[None, :]).ravel(), result.kinds + shaper.kinds)
    return result


def mode_shaper(kind: str, frequency_hz: float, damping_ratio: float,
                tolerance: float = DEFAULT_TOLERANCE) -> Shaper:
    """The single-mode shaper ``kind`` ('zv', 'zvd' or 'ei') of one mode."""
    if kind == "zv":
        return zv_shaper(frequency_hz, damping_ratio)
    if kind == "zvd":
        return zvd_shaper(frequency_hz, damping_ratio)
    if kind == "ei":
        return ei_shaper(frequency_hz, damping_ratio, tolerance)
    raise ShapingError(f"shaper: {kind!r}; expected one of {CANDIDATES} for a mode")


def choose_kinds(kind: str, frequencies_hz: Any, damping_ratios: Any, *,
                 frequency_error: float = DEFAULT_FREQUENCY_ERROR, tolerance: float = DEFAULT_TOLERANCE
                 ) -> tuple[str, ...]:
    """The single-mode shaper of each mode: ``kind`` itself, or for 'auto' the first of :data:`CANDIDATES` whose
    worst residual vibration over f (1 +- ``frequency_error``) is at most 100 ``tolerance`` % wherever the mode is
    given (``frequencies_hz``, ``damping_ratios``: (modes,) or (poses, modes)), else 'ei'.

    Raises:
        ShapingError: an unknown kind, a bad frequency error or tolerance, or mismatched mode arrays.
    """
    if kind not in SHAPERS:
        raise ShapingError(f"shaper: {kind!r}; expected one of {SHAPERS}")
    f = np.atleast_2d(np.asarray(frequencies_hz, dtype=float))
    zeta = np.atleast_2d(np.asarray(damping_ratios, dtype=float))
    if f.shape != zeta.shape or f.ndim != 2:
        raise ShapingError(f"modes: frequencies {f.shape} and damping ratios {zeta.shape}; expected equal shapes "
                           "(modes,) or (poses, modes)")
    error = float(frequency_error)
    if not (0.0 <= error < 1.0):
        raise ShapingError(f"frequency error: {frequency_error!r}; expected a fraction 0 <= e < 1 (0.1 = +-10 %)")
    if kind == "none":
        return ()
    if kind != "auto":
        return (kind,) * f.shape[1]
    kinds = []
    for j in range(f.shape[1]):
        chosen = "ei"
        for candidate in CANDIDATES:
            worst = max(mode_shaper(candidate, fi, zi, tolerance).worst_vibration(fi, zi, error)
                        for fi, zi in zip(f[:, j], zeta[:, j]))
            if worst <= 100.0 * tolerance * (1.0 + 1e-9):  # EI's hump is the tolerance itself
                chosen = candidate
                break
        kinds.append(chosen)
    return tuple(kinds)


def design_shaper(kinds: Sequence[str], frequencies_hz: Any, damping_ratios: Any,
                  tolerance: float = DEFAULT_TOLERANCE) -> Shaper:
    """Multi-mode shaper: the convolution of ``kinds[j]``'s shaper of mode j (``frequencies_hz`` [Hz] and
    ``damping_ratios``, (modes,)); no modes give the identity (one impulse of 1 at 0 s)."""
    f = np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
    zeta = np.atleast_1d(np.asarray(damping_ratios, dtype=float))
    if len(kinds) != f.size or f.shape != zeta.shape:
        raise ShapingError(f"modes: {len(kinds)} shaper kinds for {f.size} frequencies and {zeta.size} damping "
                           "ratios; expected one of each per mode")
    return convolve([mode_shaper(k, fi, zi, tolerance) for k, fi, zi in zip(kinds, f, zeta)])


__all__ = ["BAND_POINTS", "CANDIDATES", "DEFAULT_FREQUENCY_ERROR", "DEFAULT_TOLERANCE", "IDENTITY", "SHAPERS",
           "Shaper", "choose_kinds", "convolve", "design_shaper", "ei_shaper", "mode_shaper", "zv_shaper",
           "zvd_shaper"]
