"""PNG of the sensitivity curves of a :class:`~flexrobot_ros.shaping.shaper_comparison.ShaperComparison`
(matplotlib imported lazily, as :mod:`flexrobot_ros.modal.plots`): per mode one panel of residual vibration [%]
over the frequency ratio f / f_j (0.5 .. 1.5), one curve per candidate (the whole convolved shaper, on mode j's
damping), with the band 1 +- E shaded and the tolerance dashed."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from flexrobot_ros.modal.plots import _pyplot, _save
from flexrobot_ros.shaping.shaper_comparison import ShaperComparison

#: Frequency ratios f / f_j of the curves.
RATIOS = np.linspace(0.5, 1.5, 801)


def plot_sensitivity(comparison: ShaperComparison, path: str | Path, title: str = "",
                     mode_numbers: Sequence[int] | None = None) -> Path:
    """Write the sensitivity curves (module docstring) to ``path`` and return it; ``mode_numbers`` label the panels
    (default 1, 2, ...), three panels a row."""
    plt = _pyplot()
    modes = comparison.frequencies_hz.size
    numbers = list(range(1, modes + 1)) if mode_numbers is None else [int(k) for k in mode_numbers]
    columns, rows = min(modes, 3), -(-modes // 3)
    figure, axes = plt.subplots(rows, columns, figsize=(5.5 * columns + 0.5, 4.2 * rows), squeeze=False,
                                sharey=True)
    for axis in axes.ravel()[modes:]:
        axis.set_visible(False)
    error = comparison.frequency_error
    for j, axis in enumerate(axes.ravel()[:modes]):
        f, zeta = comparison.frequencies_hz[j], comparison.damping_ratios[j]
        for k, candidate in enumerate(comparison.candidates):
            best = candidate.name == comparison.recommended
            axis.plot(RATIOS, candidate.shaper.residual_vibration(f * RATIOS, zeta), color=f"C{k}",
                      lw=2.2 if best else 1.2,
                      label=f"{candidate.name} (+{candidate.added_delay_s:.3f} s)" + (", recommended" if best else ""))
        if error > 0.0:
            axis.axvspan(1.0 - error, 1.0 + error, color="0.85", zorder=0, label=f"f (1 +- {error:g})")
        axis.axhline(100.0 * comparison.tolerance, ls="--", color="0.3", lw=0.8,
                     label=f"tolerance {100 * comparison.tolerance:g} %")
        axis.set_xlim(RATIOS[0], RATIOS[-1])
        axis.set_ylim(0.0, 100.0)
        axis.set_xlabel(f"f / f_{numbers[j]} [-]  (mode {numbers[j]}: {f:.4g} Hz, zeta = {100 * zeta:.3g} %)")
        axis.grid(True, alpha=0.3)
        if j % columns == 0:
            axis.set_ylabel("residual vibration [%]")
        if j == 0:
            axis.legend(loc="upper center", fontsize=7)
    if title:
        figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


__all__ = ["RATIOS", "plot_sensitivity"]
