"""Compare input shapers for measured or predicted modes and recommend one (measure -> recommend -> report).

For modes j = 1..m (natural frequency f_j [Hz], damping ratio zeta_j) and a relative frequency error E, each
candidate shaper is the multi-mode convolution (:func:`~flexrobot_ros.dynamics.input_shaping.design_shaper`) of one
single-mode shaper per mode: all ZV, all ZVD, all EI, and, when it differs from these, the per-mode choice of
``auto`` (:func:`~flexrobot_ros.dynamics.input_shaping.choose_kinds`: per mode the shortest of ZV, ZVD, EI whose
residual vibration stays within the tolerance over f_j (1 +- E), EI when none does). With one mode the candidates
are ZV, ZVD and EI. Per candidate and mode: the residual vibration V [%]
(:mod:`~flexrobot_ros.dynamics.residual_vibration`, 100 % = the unshaped command's) of the whole convolved shaper at
f_j (1 - E), f_j and f_j (1 + E), and its largest value over the band f_j (1 +- E) (the same frequency grid as
``auto``), and the added delay: the time of the last impulse [s]. The recommendation is the ``auto`` choice.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.dynamics.input_shaping import (CANDIDATES, DEFAULT_FREQUENCY_ERROR, DEFAULT_TOLERANCE, Shaper,
                                                  choose_kinds, design_shaper)
from flexrobot_ros.errors import ShapingError


@dataclass(frozen=True)
class CandidateShaper:
    """One candidate: ``name`` ('zv', 'zvd', 'ei', or the kinds joined by '+' for a per-mode mix), the single-mode
    ``kinds`` per mode, the convolved ``shaper``; per mode (modes,) the residual vibration [%] at f (1 - E)
    (``low_percent``), f (``nominal_percent``), f (1 + E) (``high_percent``) and the largest over the band
    (``worst_percent``)."""

    name: str
    kinds: tuple[str, ...]
    shaper: Shaper
    low_percent: np.ndarray
    nominal_percent: np.ndarray
    high_percent: np.ndarray
    worst_percent: np.ndarray

    @property
    def added_delay_s(self) -> float:
        """Time of the last impulse [s]: what the shaper adds to a move."""
        return self.shaper.duration_s


@dataclass(frozen=True)
class ShaperComparison:
    """Candidates for the modes ``frequencies_hz`` [Hz], ``damping_ratios`` (fractions), each (modes,), at the
    relative ``frequency_error`` and vibration ``tolerance`` (fractions); ``recommended`` the name of the ``auto``
    choice among ``candidates``."""

    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    frequency_error: float
    tolerance: float
    candidates: tuple[CandidateShaper, ...]
    recommended: str

    def candidate(self, name: str) -> CandidateShaper:
        """The candidate called ``name``."""
        for candidate in self.candidates:
            if candidate.name == name:
                return candidate
        raise ShapingError(f"shaper comparison: no candidate {name!r}; expected one of "
                           f"{[c.name for c in self.candidates]}")


def compare_shapers(frequencies_hz: Any, damping_ratios: Any, *, frequency_error: float = DEFAULT_FREQUENCY_ERROR,
                    tolerance: float = DEFAULT_TOLERANCE) -> ShaperComparison:
    """The candidates for these modes and the recommendation (module docstring).

    Raises:
        ShapingError: no modes, mismatched arrays, a bad mode, frequency error or tolerance.
    """
    f = np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
    zeta = np.atleast_1d(np.asarray(damping_ratios, dtype=float))
    if f.ndim != 1 or f.size == 0 or f.shape != zeta.shape:
        raise ShapingError(f"modes: {f.size} frequencies and {zeta.size} damping ratios; expected at least one mode "
                           "and one damping ratio per frequency")
    chosen = choose_kinds("auto", f, zeta, frequency_error=frequency_error, tolerance=tolerance)
    kind_sets = [(kind,) * f.size for kind in CANDIDATES]
    if chosen not in kind_sets:
        kind_sets.append(chosen)
    error = float(frequency_error)
    candidates = []
    for kinds in kind_sets:
        shaper = design_shaper(kinds, f, zeta, tolerance)
        rows = np.array([[shaper.residual_vibration(fj * (1.0 - error), zj), shaper.residual_vibration(fj, zj),
                          shaper.residual_vibration(fj * (1.0 + error), zj), shaper.worst_vibration(fj, zj, error)]
                         for fj, zj in zip(f, zeta)])
        name = kinds[0] if len(set(kinds)) == 1 else "+".join(kinds)
        candidates.append(CandidateShaper(name, kinds, shaper, *rows.T))
    recommended = next(c.name for c in candidates if c.kinds == chosen)
    return ShaperComparison(f, zeta, error, float(tolerance), tuple(candidates), recommended)


__all__ = ["CandidateShaper", "ShaperComparison", "compare_shapers"]
