"""Stabilization diagram: the poles of every model order, checked for physical meaning and stability.

A pole is *physical* when it passes the filters of :class:`StabilizationCriteria` (damping ratio in
``(damping_min, damping_max]``, frequency in ``[fmin_hz, fmax_hz]``, modal phase collinearity at least
``mpc_min``; only oscillating poles reach this stage, one per complex-conjugate pair, see
:mod:`~flexrobot_ros.oma.poles`). It is *stable* when the closest physical pole of the previous evaluated order
has nearly the same frequency, damping ratio and mode shape (the single-mode validation criteria of Reynders
et al. 2012 that the thesis applies, seed 000 section 2.4.3; the MAC between consecutive orders is the
thesis' OMAC).

Defaults (the usual values in the OMA literature and in pyOMA2/koma):

==================  =======  =====================================================================
criterion           default  meaning
==================  =======  =====================================================================
frequency_tol       0.01     ``|f - f_prev| / f_prev`` at most 1 %
damping_tol         0.05     ``|zeta - zeta_prev| / zeta_prev`` at most 5 %
mac_min             0.95     MAC with the previous order's pole at least 0.95
damping_min         0.0      damping ratio strictly above 0 (unstable poles are not modes)
damping_max         0.40     at most 40 % (the thesis' highly damped Scompi modes reach 27 %)
fmin_hz, fmax_hz    0, None  band; ``None`` means 0.45 fs (below the Nyquist frequency)
mpc_min             0.0      off: robots under PD control have complex (non-proportional) modes
==================  =======  =====================================================================
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from flexrobot_ros.oma.poles import PoleSet, mac_rows, mpc

__all__ = ["StabilizationCriteria", "StabilizationDiagram", "stabilization_diagram"]


@dataclass(frozen=True)
class StabilizationCriteria:
    """Thresholds of the physical-pole filters and of the stability checks (see the module table)."""

    frequency_tol: float = 0.01
    damping_tol: float = 0.05
    mac_min: float = 0.95
    damping_min: float = 0.0
    damping_max: float = 0.40
    fmin_hz: float = 0.0
    fmax_hz: float | None = None
    mpc_min: float = 0.0

    def band(self, fs_hz: float) -> tuple[float, float]:
        """Frequency band [Hz] the filters accept at sampling rate ``fs_hz``."""
        return self.fmin_hz, (0.45 * fs_hz if self.fmax_hz is None else self.fmax_hz)


@dataclass(frozen=True)
class StabilizationDiagram:
    """All poles of all evaluated orders, flattened, with their filter and stability flags.

    Per pole (P,): ``order``, ``poles`` (complex, rad/s), ``frequencies_hz``, ``damping_ratios`` (fractions),
    ``shapes`` (P, channels), ``mpc``, ``physical``, ``stable_frequency``, ``stable_damping``,
    ``stable_shape``. ``orders`` lists the evaluated model orders; ``fs_hz`` the sampling rate.
    """

    orders: np.ndarray
    order: np.ndarray
    poles: np.ndarray
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    shapes: np.ndarray
    mpc: np.ndarray
    physical: np.ndarray
    stable_frequency: np.ndarray
    stable_damping: np.ndarray
    stable_shape: np.ndarray
    fs_hz: float
    criteria: StabilizationCriteria = field(default_factory=StabilizationCriteria)

    @property
    def stable(self) -> np.ndarray:
        """Physical poles stable in frequency, damping and shape (the green poles of thesis Fig. 2.8)."""
        return self.physical & self.stable_frequency & self.stable_damping & self.stable_shape

    def __len__(self) -> int:
        return len(self.order)


def stabilization_diagram(pole_sets: Sequence[PoleSet], fs_hz: float,
                          criteria: StabilizationCriteria | None = None) -> StabilizationDiagram:
    """Flag every pole of ``pole_sets`` (one per order, ascending) as physical and/or stable."""
    criteria = StabilizationCriteria() if criteria is None else criteria
    fmin, fmax = criteria.band(fs_hz)
    channels = pole_sets[0].shapes.shape[1] if pole_sets else 0
    parts = {k: [] for k in ("order", "poles", "f", "z", "shapes", "mpc", "phys", "sf", "sd", "ss")}
    prev = None
    for ps in pole_sets:
        k = len(ps)
        m = mpc(ps.shapes) if k else np.zeros(0)
        phys = ((ps.damping_ratios > criteria.damping_min) & (ps.damping_ratios <= criteria.damping_max)
                & (ps.frequencies_hz >= fmin) & (ps.frequencies_hz <= fmax) & (m >= criteria.mpc_min))
        sf = np.zeros(k, dtype=bool)
        sd = np.zeros(k, dtype=bool)
        ss = np.zeros(k, dtype=bool)
        if prev is not None and k and prev[0].size:
            pf, pz, pshape = prev
            rel_f = np.abs(ps.frequencies_hz[:, None] - pf[None, :]) / pf[None, :]
            j = np.argmin(rel_f, axis=1)
            sf = rel_f[np.arange(k), j] <= criteria.frequency_tol
            with np.errstate(divide="ignore", invalid="ignore"):
                sd = np.abs(ps.damping_ratios - pz[j]) <= criteria.damping_tol * np.abs(pz[j])
            ss = mac_rows(ps.shapes, pshape[j]) >= criteria.mac_min
        parts["order"].append(np.full(k, ps.order))
        parts["poles"].append(ps.poles)
        parts["f"].append(ps.frequencies_hz)
        parts["z"].append(ps.damping_ratios)
        parts["shapes"].append(ps.shapes.reshape(k, channels))
        parts["mpc"].append(m)
        parts["phys"].append(phys)
        parts["sf"].append(sf)
        parts["sd"].append(sd)
        parts["ss"].append(ss)
        prev = (ps.frequencies_hz[phys], ps.damping_ratios[phys], ps.shapes[phys])

    def cat(key, dtype, shape=(0,)):
        return np.concatenate(parts[key]) if parts[key] else np.zeros(shape, dtype=dtype)

    return StabilizationDiagram(
        orders=np.array([ps.order for ps in pole_sets], dtype=int),
        order=cat("order", int),
        poles=cat("poles", complex),
        frequencies_hz=cat("f", float),
        damping_ratios=cat("z", float),
        shapes=cat("shapes", complex, (0, channels)),
        mpc=cat("mpc", float),
        physical=cat("phys", bool),
        stable_frequency=cat("sf", bool),
        stable_damping=cat("sd", bool),
        stable_shape=cat("ss", bool),
        fs_hz=float(fs_hz),
        criteria=criteria,
    )
