"""PNG figures of modal results (matplotlib imported lazily with the Agg backend).

* :func:`plot_map` — frequency and damping ratio of every mode versus the map coordinate (configuration number
  for paths, K_P for gain sweeps; seed 000 Figs. 2.3-2.5), one or several maps overlaid (e.g. payload off/on);
* :func:`plot_grid` — one mode's frequency and damping over a 2-D joint grid (seed 000 Figs. A II-1..4);
* :func:`plot_mode_shapes` — polar plots of complex mode shapes, phase vs log10 magnitude (seed 000 Fig. 2.6);
* :func:`plot_receptance` — magnitude of the translational receptance entries (seed 001 Fig. 10).
Every function writes the file and returns its path.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.errors import ModalError


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, path: str | Path) -> Path:
    path = Path(path)
    try:
        figure.savefig(path, dpi=120)
    except OSError as error:
        raise ModalError(f"{path}: cannot write the figure: {error}") from None
    finally:
        _pyplot().close(figure)
    return path


def _modes(selection: Sequence[int] | None, available: int) -> list[int]:
    modes = list(range(available)) if selection is None else [int(m) for m in selection]
    bad = [m for m in modes if not 0 <= m < available]
    if bad:
        raise ModalError(f"modes: mode indices {bad} out of range 0..{available - 1} (0-based)")
    return modes


def plot_map(maps: Any, path: str | Path, modes: Sequence[int] | None = None, labels: Sequence[str] | None = None,
             title: str | None = None) -> Path:
    """Frequency [Hz, log scale] and damping ratio [%] of ``modes`` (0-based, default all) versus each map's
    coordinate; ``maps`` is one :class:`~flexrobot_ros.modal.maps.ModalMap` or a list (drawn solid, dashed, ...)."""
    plt = _pyplot()
    maps = list(maps) if isinstance(maps, (list, tuple)) else [maps]
    labels = list(labels) if labels else [f"{m.robot}{' + tool' if m.tool else ''}" for m in maps]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    styles = ["-", "--", ":", "-."]
    colors = plt.get_cmap("tab20").colors
    for which, (result, label) in enumerate(zip(maps, labels)):
        for mode in _modes(modes, result.frequencies_hz.shape[1]):
            kwargs = {"color": colors[mode % len(colors)], "linestyle": styles[which % len(styles)], "lw": 1.2}
            top.plot(result.coordinate, result.frequencies_hz[:, mode],
                     label=f"mode {mode + 1}" if which == 0 else None, **kwargs)
            bottom.plot(result.coordinate, 100.0 * result.damping_ratios[:, mode], **kwargs)
        if len(maps) > 1:
            top.plot([], [], color="k", linestyle=styles[which % len(styles)], label=label)
    top.set_yscale("log")
    top.set_ylabel("natural frequency [Hz]")
    bottom.set_ylabel("damping ratio [%]")
    bottom.set_xlabel(maps[0].coordinate_label)
    top.legend(fontsize=7, ncol=4)
    for axis in (top, bottom):
        axis.grid(True, which="both", alpha=0.3)
    top.set_title(title or map_title(maps, labels))
    figure.tight_layout()
    return _save(figure, path)


def map_title(maps: Sequence[Any], labels: Sequence[str]) -> str:
    """``scompi + tool: gain map, 27 points``; several maps (or a label other than the robot's own):
    ``scompi (no tool / with tool): gain map, 27 points``."""
    own = [f"{m.robot}{' + tool' if m.tool else ''}" for m in maps]
    head = own[0] if list(labels) == own[:1] else f"{maps[0].robot} ({' / '.join(labels)})"
    return f"{head}: {maps[0].kind} map, {len(maps[0])} points"


def plot_grid(result: Any, path: str | Path, mode: int = 0) -> Path:
    """Frequency and damping ratio of ``mode`` (0-based) over a grid map's two joint axes."""
    if result.grid_shape is None:
        raise ModalError(f"plot_grid: the map is a {result.kind!r} map, not a grid")
    plt = _pyplot()
    _modes([mode], result.frequencies_hz.shape[1])
    shape = result.grid_shape
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for axis, values, label in ((axes[0], result.frequencies_hz[:, mode], "frequency [Hz]"),
                                (axes[1], 100.0 * result.damping_ratios[:, mode], "damping ratio [%]")):
        mesh = axis.pcolormesh(result.grid_values_a, result.grid_values_b, values.reshape(shape).T, shading="auto")
        figure.colorbar(mesh, ax=axis, label=label)
        axis.set_xlabel(result.grid_joints[0])
        axis.set_ylabel(result.grid_joints[1])
        axis.set_title(f"mode {mode + 1}: {label}")
    figure.tight_layout()
    return _save(figure, path)


def plot_mode_shapes(results: Any, path: str | Path, modes: Sequence[int] = (0, 1), entries: int | None = None,
                     labels: Sequence[str] | None = None) -> Path:
    """Polar plots of complex mode shapes (angle = phase, radius = log10 |entry| shifted to be >= 0), one panel per
    mode; ``results`` one or several :class:`~flexrobot_ros.modal.modes.ModalResult` (e.g. two gain sets, as in
    seed 000 Fig. 2.6); ``entries`` = how many leading entries to draw (default n, the link-side joints)."""
    plt = _pyplot()
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    labels = list(labels) if labels else [f"set {i + 1}" for i in range(len(results))]
    count = entries or results[0].linearized.n
    figure = plt.figure(figsize=(4.5 * len(modes), 4.5))
    for column, mode in enumerate(modes):
        axis = figure.add_subplot(1, len(modes), column + 1, projection="polar")
        for which, (result, label) in enumerate(zip(results, labels)):
            _modes([mode], result.n_modes)
            shape = result.mode_shapes[:count, mode]
            radius = np.log10(np.maximum(np.abs(shape), 1e-6)) + 6.0
            for entry, (phase, r) in enumerate(zip(np.angle(shape), radius)):
                axis.plot([phase, phase], [0, r], color=f"C{which}", lw=1.5,
                          label=label if entry == 0 else None)
                axis.annotate(str(entry + 1), (phase, r), fontsize=7)
        axis.set_title(f"mode {mode + 1} ({results[0].frequencies_hz[mode]:.2f} Hz)", fontsize=9)
        axis.set_rlabel_position(90)
        axis.legend(fontsize=7, loc="lower right")
    figure.suptitle("complex mode shapes: phase, log10|u| + 6", fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


def plot_receptance(receptance: Any, path: str | Path) -> Path:
    """|H_ij| [m/N] (log scale) of the 3 x 3 translational receptance versus frequency."""
    plt = _pyplot()
    names = ("x", "y", "z")
    figure, axes = plt.subplots(3, 3, figsize=(10, 8), sharex=True)
    for i in range(3):
        for j in range(3):
            axes[i, j].semilogy(receptance.frequencies_hz, np.abs(receptance.H[:, i, j]), lw=1)
            axes[i, j].set_title(f"H_{names[i]}{names[j]}", fontsize=8)
            axes[i, j].grid(True, which="both", alpha=0.3)
    for j in range(3):
        axes[2, j].set_xlabel("frequency [Hz]")
        axes[j, 0].set_ylabel("|H| [m/N]")
    figure.suptitle(f"receptance at {receptance.frame} ({receptance.axes} axes)", fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


__all__ = ["map_title", "plot_map", "plot_grid", "plot_mode_shapes", "plot_receptance"]
