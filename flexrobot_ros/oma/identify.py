"""Batch operational modal analysis: method -> stabilization diagram -> automatic mode selection.

:func:`identify_modes` runs VAR (:mod:`~flexrobot_ros.oma.var`, the thesis' method) or SSI-cov
(:mod:`~flexrobot_ros.oma.ssi_cov`) over a range of model orders on uniformly sampled output signals, builds the
stabilization diagram and selects the modes, returning an :class:`OmaResult`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.selection import Mode, SelectionOptions, select_modes
from flexrobot_ros.oma.stabilization import StabilizationCriteria, StabilizationDiagram, stabilization_diagram
from flexrobot_ros.oma.threads import single_threaded_blas

__all__ = ["DEFAULT_METHOD", "DEFAULT_ORDERS", "METHODS", "MIN_LAG_PERIODS", "OmaResult", "identify_modes",
           "parse_orders", "short_lag_window"]

#: Identification methods by name.
METHODS: tuple[str, ...] = ("var", "ssi-cov")
#: Method used when none is named (the ``flexrobot oma`` command, the OMA node and the tracker). SSI-cov: on the
#: Heritage Court Tower ambient records (40 Hz, 6 and 8 channels) its default orders find the six modes below 6 Hz
#: within 0.8 %, where VAR over 2:40 lags finds two and one of them (test/test_oma_htc.py).
DEFAULT_METHOD = "ssi-cov"
#: A VAR model of p lags holds a mode only when its lag window p / fs spans at least this many periods of it
#: (measured on the Heritage Court Tower records: 1.2 periods of the 1.23 Hz mode found 2 of 6 modes, 2.5
#: periods 5-6 of 6, 3.7 periods 4-6 of 6); below it :func:`identify_modes` adds a note.
MIN_LAG_PERIODS = 3.0


@dataclass(frozen=True)
class OmaResult:
    """Identified modes with the stabilization diagram they come from.

    ``modes`` sorted by frequency; ``method`` ("var" | "ssi-cov"); ``fs_hz`` sampling rate of the analysed
    signals; ``channels`` their names; ``orders`` evaluated model orders; ``elapsed_s`` wall time of the
    identification; ``notes`` remarks on the data or the run (equations dropped, ...); ``uncertain``: pole
    clusters that passed every selection test but consistency (stable in fewer orders than
    ``SelectionOptions.min_confidence`` times the most confident mode, with a damping spread over the orders
    above ``SelectionOptions.max_damping_spread``), sorted by frequency: not modes, listed
    apart. Applied only where SSI-cov finds the covariances rank deficient in float64 (noise-free records): there
    the poles that models above the signal's states give to rounding recur over fewer orders than the modes and
    their damping wanders; elsewhere (VAR, noisy records) ``uncertain`` stays empty.
    """

    modes: tuple[Mode, ...]
    diagram: StabilizationDiagram
    method: str
    fs_hz: float
    channels: tuple[str, ...]
    orders: tuple[int, ...]
    elapsed_s: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    uncertain: tuple[Mode, ...] = field(default_factory=tuple)

    @property
    def frequencies_hz(self) -> np.ndarray:
        """(modes,) undamped natural frequencies [Hz]."""
        return np.array([m.frequency_hz for m in self.modes])

    @property
    def damping_ratios(self) -> np.ndarray:
        """(modes,) damping ratios [fraction]."""
        return np.array([m.damping_ratio for m in self.modes])

    @property
    def shapes(self) -> np.ndarray:
        """(modes, channels) complex mode shapes (unit norm, largest component real positive)."""
        return np.array([m.shape for m in self.modes]).reshape(len(self.modes), len(self.channels))

    def to_dict(self) -> dict:
        """JSON-ready summary: ``frequencies_hz``, ``damping_ratios`` (fractions), shapes as real/imag parts."""
        return {
            "method": self.method,
            "fs_hz": self.fs_hz,
            "channels": list(self.channels),
            "orders": [int(self.orders[0]), int(self.orders[-1])] if self.orders else [],
            "n_orders": len(self.orders),
            "frequencies_hz": self.frequencies_hz.tolist(),
            "damping_ratios": self.damping_ratios.tolist(),
            "shapes_real": self.shapes.real.tolist(),
            "shapes_imag": self.shapes.imag.tolist(),
            "frequency_std_hz": [m.frequency_std_hz for m in self.modes],
            "damping_std": [m.damping_std for m in self.modes],
            "confidence": [m.confidence for m in self.modes],
            "mpc": [m.mpc for m in self.modes],
            "elapsed_s": self.elapsed_s,
            "notes": list(self.notes),
            "uncertain": [{"frequency_hz": m.frequency_hz, "damping_ratio": m.damping_ratio,
                           "confidence": m.confidence, "frequency_std_hz": m.frequency_std_hz,
                           "damping_std": m.damping_std, "mpc": m.mpc} for m in self.uncertain],
        }


def parse_orders(spec: str | Sequence[int]) -> tuple[int, ...]:
    """Model orders from ``"2:100"`` (inclusive), ``"2:100:2"`` (with step), ``"10,20,30"`` or a sequence."""
    if not isinstance(spec, str):
        orders = tuple(sorted({int(p) for p in spec}))
    else:
        try:
            if ":" in spec:
                parts = [int(x) for x in spec.split(":")]
                if len(parts) not in (2, 3):
                    raise ValueError
                step = parts[2] if len(parts) == 3 else 1
                if step < 1:
                    raise ValueError
                orders = tuple(range(parts[0], parts[1] + 1, step))
            else:
                orders = tuple(sorted({int(x) for x in spec.split(",") if x.strip()}))
        except ValueError:
            raise SignalError(f"model orders: cannot read {spec!r}, expected 'first:last[:step]' or 'a,b,c'") from None
    if not orders or orders[0] < 1:
        raise SignalError(f"model orders: need at least one order >= 1, got {spec!r}")
    return orders


#: Default model orders per method: VAR orders are lags (m * p states: 240 for six channels at p = 40), SSI-cov
#: orders are states. The thesis ran VAR over 2..100, which works too but costs 99 companion eigenproblems up to
#: 600 x 600 and, on a weakly nonlinear response, models its combination tones as well.
DEFAULT_ORDERS = {"var": "2:40", "ssi-cov": "2:100"}


def identify_modes(data: np.ndarray, fs_hz: float, method: str = DEFAULT_METHOD,
                   orders: str | Sequence[int] | None = None, channels: Sequence[str] | None = None,
                   criteria: StabilizationCriteria | None = None,
                   selection: SelectionOptions | None = None, block_rows: int | None = None,
                   noise_floor: np.ndarray | float = 0.0, scaling: str = "common",
                   progress: Callable[[int, int], None] | None = None) -> OmaResult:
    """Identify modes from output signals ``data`` (samples, channels) sampled uniformly at ``fs_hz`` [Hz].

    ``method``: ``"var"`` (orders = number of lags) or ``"ssi-cov"`` (orders = state dimension, ``block_rows``
    optional); ``orders`` as in :func:`parse_orders` (default :data:`DEFAULT_ORDERS` of the method); ``criteria`` and
    ``selection`` default to the documented defaults of :mod:`~flexrobot_ros.oma.stabilization` and
    :mod:`~flexrobot_ros.oma.selection`. ``noise_floor`` (data units, per channel or scalar; e.g. the encoder
    quantization step / sqrt(12), or :attr:`~flexrobot_ros.oma.signals.PreparedSignals.noise_floor`, which also
    holds the precision of the stored digits) is the least error the values carry: it bounds the VAR outlier
    test from below; the precision of ``data`` itself (:func:`~flexrobot_ros.oma.signals.data_precision`) is
    always taken into account. ``scaling``: ``"common"`` or
    ``"channel"`` (see :func:`~flexrobot_ros.oma.signals.channel_scales`). ``progress(done, total)`` is called
    after each model order.
    """
    from flexrobot_ros.oma.ssi_cov import ssi_cov_poles  # scipy: imported here, `flexrobot oma --help` needs none
    from flexrobot_ros.oma.var import var_models, var_pole_set

    y = np.asarray(data, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2:
        raise SignalError(f"OMA: data must be (samples, channels), got shape {np.shape(data)}")
    if not (np.isfinite(fs_hz) and fs_hz > 0):
        raise SignalError(f"OMA: sampling rate must be a positive number of Hz, got {fs_hz}")
    names = tuple(channels) if channels is not None else tuple(f"ch{i}" for i in range(y.shape[1]))
    if len(names) != y.shape[1]:
        raise SignalError(f"OMA: {len(names)} channel names for {y.shape[1]} data columns")
    if method not in METHODS:
        raise SignalError(f"OMA: unknown method {method!r}, expected one of {', '.join(METHODS)}")
    order_list = parse_orders(DEFAULT_ORDERS[method] if orders is None else orders)
    start = time.perf_counter()
    notes = []
    with single_threaded_blas():
        if method == "var":
            models = var_models(y, order_list, noise_floor=noise_floor, scaling=scaling,
                                excitation_samples=max(int(round(0.05 * fs_hz)), 1))
            pole_sets = []
            for k, model in enumerate(models):
                pole_sets.append(var_pole_set(model, fs_hz))
                if progress is not None:
                    progress(k + 1, len(models))
            clean = False
            dropped = models[-1].excluded_rows
            if dropped:
                notes.append(f"VAR: {dropped} of {y.shape[0] - order_list[-1]} equations left out at order "
                             f"{order_list[-1]} (they do not fit the model: impact or glitches)")
        elif method == "ssi-cov":
            rank: list[int] = []
            pole_sets = ssi_cov_poles(y, fs_hz, order_list, block_rows=block_rows, scaling=scaling,
                                      progress=progress, rank_out=rank)
            clean = rank[0] < order_list[-1]
            if clean:
                notes.append(f"SSI-cov: the covariances have float64 rank {rank[0]} (noise-free data): poles that "
                             f"recur in few orders with wandering damping are listed apart as uncertain")
        else:
            raise SignalError(f"OMA: unknown method {method!r}, expected one of {', '.join(METHODS)}")
        diagram = stabilization_diagram(pole_sets, fs_hz, criteria)
        uncertain: list[Mode] = []
        selection = SelectionOptions() if selection is None else selection
        if not clean:  # noisy: weak modes are legitimately less consistent over the orders
            selection = replace(selection, min_confidence=0.0)
        modes = select_modes(diagram, selection, uncertain)
    if method == "var":
        fmin_hz = diagram.criteria.fmin_hz
        lowest = [m.frequency_hz for m in modes] + ([fmin_hz] if fmin_hz > 0 else [])
        note = short_lag_window(order_list[-1], fs_hz, min(lowest)) if lowest else None
        if note:
            notes.append(note)
    elapsed = time.perf_counter() - start
    return OmaResult(tuple(modes), diagram, method, float(fs_hz), names, order_list, elapsed, tuple(notes),
                     tuple(uncertain))


def short_lag_window(lags: int, fs_hz: float, lowest_hz: float) -> str | None:
    """A warning when a VAR model of ``lags`` lags at ``fs_hz`` [Hz] spans fewer than :data:`MIN_LAG_PERIODS`
    periods of ``lowest_hz`` [Hz] (the lowest mode found or frequency of interest), else None. Such a model
    misses or misplaces low and closely spaced modes (and reports spurious ones) without any other sign."""
    periods = lags / fs_hz * lowest_hz
    if periods >= MIN_LAG_PERIODS:
        return None
    needed = int(np.ceil(MIN_LAG_PERIODS * fs_hz / lowest_hz))
    return (f"VAR: the longest lag window, {lags} lags = {lags / fs_hz:.3g} s, spans only {periods:.2g} periods of "
            f"{lowest_hz:.4g} Hz (the lowest mode found or --fmin); {MIN_LAG_PERIODS:g} periods are needed to hold "
            f"low and closely spaced modes: raise the orders to {needed} lags (--orders 2:{needed}), narrow the "
            f"band (--band decimates to it) or use ssi-cov")
