"""Figures of an OMA run: stabilization diagram with the selected modes, and the output spectrum beside it.

matplotlib is imported lazily with the Agg backend, so the core never needs a display.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from flexrobot_ros.oma.identify import OmaResult

__all__ = ["SPECTRUM_LINES", "spectrum_segment", "singular_value_spectrum", "stabilization_figure",
           "plot_stabilization"]

#: Spectral lines across the plotted band: 0.02 Hz over a 10 Hz band, which parts modes 5 % apart near 1 Hz
#: (the Heritage Court Tower's 1.23, 1.29 and 1.45 Hz merged into one hump with 0.16 Hz lines).
SPECTRUM_LINES = 500
#: Welch segments at least (50 % overlap), so the averaged spectrum stays smooth on short records.
MIN_SEGMENTS = 8


def spectrum_segment(fs_hz: float, band_hz: float, samples: int) -> int:
    """Welch segment length (a power of two, samples) that resolves ``band_hz`` [Hz] into about
    :data:`SPECTRUM_LINES` lines at ``fs_hz`` [Hz], shortened so that ``samples`` give at least
    :data:`MIN_SEGMENTS` half-overlapping segments (at least 64 samples, at most the record)."""
    seg = 2 ** int(np.ceil(np.log2(SPECTRUM_LINES * fs_hz / band_hz)))
    longest = max(2 * samples // (MIN_SEGMENTS + 1), 64)
    while seg > longest and seg > 64:
        seg //= 2
    return min(seg, samples)


def singular_value_spectrum(data: np.ndarray, fs_hz: float, segment: int | None = None,
                            band_hz: float | None = None):
    """Singular values of the output cross-spectral density matrix (Welch, Hann window, 50 % overlap).

    ``data`` (samples, channels); ``segment`` samples per Welch segment, by default :func:`spectrum_segment` of
    ``band_hz`` [Hz] (default the Nyquist frequency). Returns ``(frequencies_hz (nf,), singular_values (nf,
    channels))``; the first singular value peaks at every mode (frequency domain decomposition).
    """
    y = np.asarray(data, dtype=float)
    y = y - y.mean(axis=0)
    n, m = y.shape
    seg = int(segment or spectrum_segment(fs_hz, band_hz or 0.5 * fs_hz, n))
    seg = min(seg, n)
    step = max(seg // 2, 1)
    starts = range(0, n - seg + 1, step)
    win = np.hanning(seg)[:, None]
    spec = np.zeros((seg // 2 + 1, m, m), dtype=complex)
    for s in starts:
        X = np.fft.rfft(y[s:s + seg] * win, axis=0)
        spec += X[:, :, None] * np.conj(X[:, None, :])
    spec /= max(len(starts), 1) * fs_hz * np.sum(win**2)
    sv = np.linalg.svd(spec, compute_uv=False)
    return np.fft.rfftfreq(seg, 1.0 / fs_hz), sv


def _mode_labels(fig, ax, frequencies_hz: np.ndarray) -> int:
    """Frequency labels [Hz] above ``ax``, one per mode, each in the lowest row where it overlaps no other label
    (closely spaced modes stack instead of overprinting). Returns the number of rows used."""
    renderer = fig.canvas.get_renderer()
    rows: list[list] = []
    for f in frequencies_hz:
        for row, boxes in enumerate(rows + [[]]):
            text = ax.text(f, 1.01, f"{f:.2f}", ha="center", va="bottom", fontsize=7, color="tab:red",
                           transform=ax.get_xaxis_transform())
            text.set_y(1.01 + row * 0.045)
            box = text.get_window_extent(renderer).expanded(1.1, 1.0)
            if not any(box.overlaps(other) for other in boxes):
                if row == len(rows):
                    rows.append([])
                rows[row].append(box)
                break
            text.remove()
    return len(rows)


def stabilization_figure(result: OmaResult, data: np.ndarray | None = None, title: str | None = None):
    """The matplotlib figure of :func:`plot_stabilization` (closed by the caller)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = result.diagram
    fmin, fmax = d.criteria.band(result.fs_hz)
    fmax = min(fmax, 1.15 * max(result.frequencies_hz.max(initial=0.0), 1e-9)) if len(result.modes) else fmax
    ncols = 2 if data is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(7.5 * ncols, 5.5), squeeze=False)
    ax = axes[0, 0]
    phys = d.physical & ~d.stable
    ax.plot(d.frequencies_hz[phys], d.order[phys], ".", color="0.7", ms=2.5, label="physical pole")
    ax.plot(d.frequencies_hz[d.stable], d.order[d.stable], ".", color="tab:green", ms=3.5,
            label="stable (f, damping, MAC)")
    for mode in result.modes:
        ax.axvline(mode.frequency_hz, color="tab:red", lw=0.8, ls="--")
    ax.set_xlim(fmin, fmax)
    ax.set_xlabel("frequency [Hz]")
    ax.set_ylabel(f"model order ({'lags' if result.method == 'var' else 'states'})")
    ax.legend(loc="lower right", fontsize=8)
    if data is not None:
        ax2 = axes[0, 1]
        freqs, sv = singular_value_spectrum(data, result.fs_hz, band_hz=fmax - fmin)
        band = (freqs >= fmin) & (freqs <= fmax)
        for k in range(min(sv.shape[1], 3)):
            ax2.semilogy(freqs[band], sv[band, k], lw=1.0 if k == 0 else 0.7, label=f"singular value {k + 1}")
        for mode in result.modes:
            ax2.axvline(mode.frequency_hz, color="tab:red", lw=0.8, ls="--")
        ax2.set_xlim(fmin, fmax)
        ax2.set_xlabel("frequency [Hz]")
        ax2.set_ylabel("cross-spectral density singular values [unit^2/Hz]")
        ax2.legend(loc="upper right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.93))  # room above for the labels, placed on the final axes
    rows = _mode_labels(fig, ax, result.frequencies_hz)
    pad = 8 + 12 * rows  # points: the title above the label rows
    ax.set_title(title or f"stabilization diagram, {result.method}: {len(result.modes)} modes", pad=pad)
    if data is not None:
        axes[0, 1].set_title(f"output spectrum ({freqs[1]:.3g} Hz lines)", pad=pad)
    top = 1.0 - (pad + 16) / (72.0 * fig.get_figheight())
    fig.subplots_adjust(top=min(top, fig.subplotpars.top))
    return fig


def plot_stabilization(result: OmaResult, path: str | Path, data: np.ndarray | None = None,
                       title: str | None = None) -> Path:
    """Write a PNG: stabilization diagram (frequency vs model order; physical poles grey, stable poles green,
    selected modes red with their frequency) and, when ``data`` (samples, channels) is given, the singular
    values of its cross-spectral density beside it (lines fine enough for the plotted band,
    :func:`spectrum_segment`). Returns the path."""
    import matplotlib.pyplot as plt

    fig = stabilization_figure(result, data, title)
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
