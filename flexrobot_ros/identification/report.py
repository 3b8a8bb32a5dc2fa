"""Reports of a joint-parameter identification: readable text, JSON, and a PNG of measured vs predicted modes.

The figure has three panels: natural frequencies and damping ratios per pose (measured: open circles, predicted
by the identified model: crosses, one colour per model mode in frequency order), and the objective reached by
every start in increasing order (the distribution of local minima, like seed 000 Fig. 3.2).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.joint_parameters import IdentificationResult
from flexrobot_ros.text_table import Column, table


def text_report(result: IdentificationResult) -> str:
    """Multi-line summary: estimate with uncertainty, objective, identifiability, local minima, mode fit."""
    ident = result.identifiability
    lines = [
        f"Joint-parameter identification of {result.robot.name} from {result.source}",
        f"  {ident.n_eigenvalues} measured eigenvalues at {ident.n_poses} poses, {ident.n_unknowns} unknowns "
        f"(seed 000 eq. 3.32: {'satisfied' if ident.counting_ok else 'NOT satisfied'})",
        f"  objective F (eq. 3.28): {result.objective:.4g} at the estimate, {result.objective_nominal:.4g} at "
        "the YAML values" + ("" if result.residual == "determinant" else
                             f"; minimized: {result.residual} residuals, {result.minimized_objective:.4g}"),
        f"  fit: rms relative eigenvalue error {result.eigenvalue_rms:.3g} (about the rms relative frequency and "
        "damping-ratio errors)",
        f"  {len(result.starts)} starts, {len(result.minima)} distinct local minima, best reached by "
        f"{result.minima[0].count}; {result.evaluations} residual + {result.jacobians} Jacobian evaluations, "
        f"{result.wall_time_s:.2f} s on {result.workers} process(es)",
        "",
    ]
    lines += table([Column("parameter", align="<"), Column("YAML"), Column("identified"), Column("std"),
                    Column("per +1pp zeta"), Column("per +1% f"), Column("unit", align="<"), Column("", align="<")],
                   [[p.name, f"{p.nominal:.6g}", f"{p.value:.8g}", f"{p.std:.3g}", f"{p.damping_bias:.3g}",
                     f"{p.frequency_bias:.3g}", p.unit, "(at bound)" if p.at_bound else ""]
                    for p in result.parameters], indent="  ")
    sens = result.sensitivity
    lines += [
        f"  std: first-order propagation of {100 * sens.frequency_std:g} % frequency and "
        f"{100 * sens.damping_std:g} percentage-point damping uncertainty per mode",
        "",
        f"  Jacobian (columns scaled by parameter magnitude): rank {ident.rank}/{ident.n_unknowns}, condition "
        f"{ident.condition_number:.3g}, singular values " + " ".join(f"{s:.2e}" for s in ident.singular_values),
        "  least determined combination: " + ", ".join(
            f"{name} {value:+.2f}" for name, value in sorted(ident.weakest_direction.items(),
                                                           key=lambda item: -abs(item[1])) if abs(value) > 0.05),
        "",
        "  local minima (best first): " + "; ".join(
            f"{'F' if result.residual == 'determinant' else 'objective'} = {m.objective:.4g}, eigenvalue rms "
            f"{m.eigenvalue_rms:.2g} x{m.count}" for m in result.minima[:6])
        + (" ..." if len(result.minima) > 6 else ""),
        "",
        f"  {'pose':>4}{'mode':>5}{'f meas [Hz]':>13}{'f pred [Hz]':>13}{'zeta meas %':>13}{'zeta pred %':>13}"
        f"{'MAC':>7}",
    ]
    for c in result.comparisons:
        mac = f"{c.mac:7.3f}" if np.isfinite(c.mac) else f"{'-':>7}"
        lines.append(f"  {c.pose + 1:>4}{c.mode + 1:>5}{c.measured_frequency_hz:>13.5g}{c.predicted_frequency_hz:>13.5g}"
                     f"{100 * c.measured_damping_ratio:>13.4g}{100 * c.predicted_damping_ratio:>13.4g}{mac}")
    if result.warnings:
        lines += ["", "  warnings:"] + [f"  - {w}" for w in result.warnings]
    return "\n".join(lines)


def write_json(result: IdentificationResult, path: str | Path) -> Path:
    """Write :meth:`IdentificationResult.to_dict` as JSON."""
    path = Path(path)
    try:
        path.write_text(json.dumps(result.to_dict(), indent=2))
    except OSError as error:
        raise IdentificationError(f"{path}: cannot write the JSON report: {error}") from error
    return path


def plot_identification(result: IdentificationResult, path: str | Path) -> Path:
    """PNG: measured vs predicted frequencies and damping ratios per pose, and the local minima of all starts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    figure, axes = plt.subplots(1, 3, figsize=(15, 5.2))
    comparisons = result.comparisons
    colours = plt.get_cmap("tab20")
    handles = []
    for k in sorted({c.model_mode for c in comparisons}):
        chosen = [c for c in comparisons if c.model_mode == k]
        pose = np.array([c.pose for c in chosen]) + 1
        colour = colours(k % 20) if k >= 0 else "k"
        handles.append(Line2D([], [], color=colour, marker="s", linestyle="none",
                              label=f"mode {k + 1}" if k >= 0 else "unmatched"))
        for ax, measured, predicted, scale in (
                (axes[0], [c.measured_frequency_hz for c in chosen], [c.predicted_frequency_hz for c in chosen], 1),
                (axes[1], [c.measured_damping_ratio for c in chosen], [c.predicted_damping_ratio for c in chosen],
                 100)):
            ax.plot(pose, scale * np.asarray(measured), "o", mfc="none", ms=8, color=colour)
            ax.plot(pose, scale * np.asarray(predicted), "x", color=colour)
    frequencies = [c.measured_frequency_hz for c in comparisons]
    if frequencies and max(frequencies) > 10 * min(frequencies):
        axes[0].set_yscale("log")
    axes[0].set(xlabel="pose", ylabel="natural frequency [Hz]", title="frequencies: o measured, x identified model")
    axes[1].set(xlabel="pose", ylabel="damping ratio [%]", title="damping ratios: o measured, x identified model")
    objective = np.sort([s.objective for s in result.starts])
    axes[2].semilogy(np.arange(1, objective.size + 1), np.maximum(objective, 1e-300), ".")
    label = "F at the local minimum (eq. 3.28)" if result.residual == "determinant" else \
        f"sum of squared {result.residual} residuals"
    axes[2].set(xlabel="start (sorted by objective)", ylabel=label,
                title=f"{len(result.minima)} local minima from {objective.size} starts")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.legend(handles=handles, loc="lower center", ncol=min(len(handles), 12), fontsize=8, frameon=False)
    figure.suptitle(f"{result.robot.name}: identification from {Path(result.source).name} ({result.residual} "
                    f"residuals), F = {result.objective:.3g}, eigenvalue rms {result.eigenvalue_rms:.2g}")
    figure.tight_layout(rect=(0, 0.07, 1, 1))
    try:
        figure.savefig(path, dpi=110)
    except OSError as error:
        raise IdentificationError(f"{path}: cannot write the plot: {error}") from error
    finally:
        plt.close(figure)
    return path


__all__ = ["text_report", "write_json", "plot_identification"]
