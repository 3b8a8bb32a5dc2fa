"""PNG figures of milling stability (matplotlib imported lazily, as :mod:`flexrobot_ros.modal.plots`).

* :func:`plot_lobes` - the lobes k = 0..K and the stability limit, critical depth [mm] over spindle speed [rpm];
* :func:`plot_depth_map` - the minimum critical depth [mm] over a joint grid (deg) and at the tool-tip positions
  (horizontal distance from the base z axis and height, [m]).
Every function writes the file and returns its path.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.modal.lobe_envelope import StabilityLimit
from flexrobot_ros.modal.plots import _pyplot, _save
from flexrobot_ros.modal.stability_lobes import StabilityLobes


def plot_lobes(lobes: StabilityLobes, limit: StabilityLimit, path: str | Path, title: str = "") -> Path:
    """Each lobe (thin, through the lobes' chatter frequencies), the stability limit ``limit`` (thick: stable below
    it, solved at each of its speeds) and a_lim,min (dashed), depths in mm, over the speeds of ``limit`` [rpm]."""
    plt = _pyplot()
    speeds, envelope = limit.spindle_speeds_rpm, limit.critical_depths_m
    figure, axis = plt.subplots(figsize=(9, 5))
    for k in lobes.lobe_numbers:
        for branch in range(2):
            axis.plot(lobes.spindle_speeds_rpm[k, :, branch], 1e3 * lobes.critical_depths_m[:, branch], lw=0.6,
                      color="0.6")
    axis.plot(speeds, 1e3 * np.where(np.isfinite(envelope), envelope, np.nan), lw=2.0, color="C0",
              label="stability limit (lower envelope)")
    axis.axhline(1e3 * lobes.minimum_depth_m, ls="--", color="C3",
                 label=f"a_lim,min = {1e3 * lobes.minimum_depth_m:.4g} mm "
                       f"(chatter at {lobes.minimum_chatter_frequency_hz:.4g} Hz)")
    finite = envelope[np.isfinite(envelope)]
    top = 4.0 * lobes.minimum_depth_m if finite.size == 0 else min(finite.max(), 6.0 * lobes.minimum_depth_m)
    axis.set_xlim(speeds.min(), speeds.max())
    axis.set_ylim(0.0, 1e3 * 1.05 * top)
    axis.set_xlabel("spindle speed [rpm]")
    axis.set_ylabel("axial depth of cut [mm]")
    axis.grid(True, alpha=0.3)
    axis.legend(loc="upper left", fontsize=8)
    axis.set_title(title, fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


def plot_depth_map(result: Any, path: str | Path, title: str = "") -> Path:
    """a_lim,min [mm] of a :class:`~flexrobot_ros.modal.stability_map.CriticalDepthMap`: over the joint grid
    (when it is one) and at the tool-tip positions."""
    plt = _pyplot()
    grid = result.grid_joints is not None
    depths_mm = 1e3 * np.where(np.isfinite(result.minimum_depths_m), result.minimum_depths_m, np.nan)
    figure, axes = plt.subplots(1, 2 if grid else 1, figsize=(12 if grid else 6.5, 5), squeeze=False)
    if grid:
        shape = (result.grid_values_a.size, result.grid_values_b.size)
        axis = axes[0, 0]
        mesh = axis.pcolormesh(np.degrees(result.grid_values_a), np.degrees(result.grid_values_b),
                               depths_mm.reshape(shape).T, shading="auto", cmap="viridis")
        figure.colorbar(mesh, ax=axis, label="a_lim,min [mm]")
        axis.set_xlabel(f"{result.grid_joints[0]} [deg]")
        axis.set_ylabel(f"{result.grid_joints[1]} [deg]")
        axis.set_title("minimum critical depth over the joint grid", fontsize=9)
    axis = axes[0, -1]
    radial = np.hypot(result.tool_positions_m[:, 0], result.tool_positions_m[:, 1])
    points = axis.scatter(radial, result.tool_positions_m[:, 2], c=depths_mm, s=18, cmap="viridis")
    figure.colorbar(points, ax=axis, label="a_lim,min [mm]")
    best = int(np.nanargmax(depths_mm))
    axis.plot(radial[best], result.tool_positions_m[best, 2], marker="*", ms=14, color="C3", ls="none",
              label=f"best: {depths_mm[best]:.3g} mm at q = {np.round(np.degrees(result.poses[best]), 1).tolist()} deg")
    axis.set_xlabel("tool tip: horizontal distance from the base z axis [m]")
    axis.set_ylabel("tool tip: height z_0 [m]")
    axis.set_aspect("equal", adjustable="datalim")
    axis.legend(loc="best", fontsize=7)
    axis.set_title("minimum critical depth at the tool-tip positions", fontsize=9)
    if title:
        figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


__all__ = ["plot_lobes", "plot_depth_map"]
