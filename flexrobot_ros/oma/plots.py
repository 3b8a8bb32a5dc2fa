"""Figures of an OMA run: stabilization diagram with the selected modes, and the output spectrum beside it.

matplotlib is imported lazily with the Agg backend, so the core never needs a display.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from flexrobot_ros.oma.identify import OmaResult

__all__ = ["singular_value_spectrum", "plot_stabilization"]


def singular_value_spectrum(data: np.ndarray, fs_hz: float, segment: int | None = None):
    """Singular values of the output cross-spectral density matrix (Welch, Hann window, 50 % overlap).

    ``data`` (samples, channels). Returns ``(frequencies_hz (nf,), singular_values (nf, channels))``; the first
    singular value peaks at every mode (frequency domain decomposition).
    """
    y = np.asarray(data, dtype=float)
    y = y - y.mean(axis=0)
    n, m = y.shape
    seg = int(segment or min(n, max(256, 2 ** int(np.ceil(np.log2(fs_hz * 2.0))))))
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


def plot_stabilization(result: OmaResult, path: str | Path, data: np.ndarray | None = None,
                       title: str | None = None) -> Path:
    """Write a PNG: stabilization diagram (frequency vs model order; physical poles grey, stable poles green,
    selected modes red with their frequency) and, when ``data`` (samples, channels) is given, the singular
    values of its cross-spectral density beside it. Returns the path."""
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
    last_x, row = -np.inf, 0
    for mode in result.modes:
        ax.axvline(mode.frequency_hz, color="tab:red", lw=0.8, ls="--")
        # labels closer than 2 % of the axis are staggered upwards so they stay readable
        row = row + 1 if mode.frequency_hz - last_x < 0.02 * (fmax - fmin) and row < 3 else 0
        last_x = mode.frequency_hz
        ax.text(mode.frequency_hz, 1.005 + 0.06 * row, f"{mode.frequency_hz:.2f}", rotation=90, ha="center",
                va="bottom", fontsize=7, color="tab:red", transform=ax.get_xaxis_transform())
    ax.set_xlim(fmin, fmax)
    ax.set_xlabel("frequency [Hz]")
    ax.set_ylabel(f"model order ({'lags' if result.method == 'var' else 'states'})")
    ax.set_title(title or f"stabilization diagram, {result.method}: {len(result.modes)} modes", pad=52)
    ax.legend(loc="lower right", fontsize=8)
    if data is not None:
        ax2 = axes[0, 1]
        freqs, sv = singular_value_spectrum(data, result.fs_hz)
        band = (freqs >= fmin) & (freqs <= fmax)
        for k in range(min(sv.shape[1], 3)):
            ax2.semilogy(freqs[band], sv[band, k], lw=1.0 if k == 0 else 0.7, label=f"singular value {k + 1}")
        for mode in result.modes:
            ax2.axvline(mode.frequency_hz, color="tab:red", lw=0.8, ls="--")
        ax2.set_xlim(fmin, fmax)
        ax2.set_xlabel("frequency [Hz]")
        ax2.set_ylabel("cross-spectral density singular values [unit^2/Hz]")
        ax2.set_title("output spectrum", pad=52)
        ax2.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
