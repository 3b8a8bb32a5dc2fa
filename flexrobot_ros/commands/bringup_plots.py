"""PNG figures of a ``flexrobot bringup`` run (matplotlib, Agg backend, imported lazily).

- ``bringup_modes.png``: per summarised pose, the monitor's natural frequencies and damping ratios beside the OMA
  node's (matched pairs joined);
- ``bringup_timeline.png``: the monitor's frequencies while the robot moves, the OMA identifications as points,
  and the link positions, against simulated time;
- ``bringup_tracking.png`` (when a move was tracked): the link tracking error q - q_d of every joint.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_bringup(directory: Path, summary: dict[str, Any], series: dict[str, list[tuple[float, list[float]]]],
                 states: Sequence[tuple[float, np.ndarray]], tracking: dict[str, Any] | None,
                 joint_names: Sequence[str]) -> list[Path]:
    """Write the figures into ``directory`` (created) and return their paths."""
    plt = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    origin = states[0][0] if states else 0.0
    paths = []

    phases = [p for p in summary["phases"] if p["modes"]]
    if phases:
        figure, axes = plt.subplots(2, len(phases), figsize=(6 * len(phases), 7), squeeze=False)
        for column, phase in enumerate(phases):
            rows = phase["modes"]
            index = np.arange(1, len(rows) + 1)
            for axis, key, scale, label in ((axes[0, column], "hz", 1.0, "natural frequency [Hz]"),
                                            (axes[1, column], "damping", 100.0, "damping ratio [%]")):
                monitor = np.array([r[f"monitor_{key}"] for r in rows]) * scale
                oma = np.array([np.nan if r[f"oma_{key}"] is None or not r["matched"] else r[f"oma_{key}"]
                                for r in rows], dtype=float) * scale
                axis.plot(index, monitor, "o", mfc="none", ms=9, label="modal monitor (model)")
                axis.plot(index, oma, "x", ms=8, mew=2, label="OMA node (identified)")
                axis.set_ylabel(label)
                axis.set_xlabel("mode")
                axis.grid(True, which="both", alpha=0.3)
            axes[0, column].set_yscale("log")
            axes[0, column].set_title(f"{phase['name']}: {phase['matched']} of {phase.get('observable', len(rows))} modes matched")
            axes[0, column].legend(fontsize=8)
        figure.suptitle(f"{summary['robot']}{' + tool' if summary['tool'] else ''}: monitor vs OMA "
                        "(matched within 0.1 Hz and 0.5 points)")
        figure.tight_layout()
        paths.append(_save(plt, figure, directory / "bringup_modes.png"))

    if states:
        figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
        for topic, style, label in (("modal/frequencies", "-", "monitor"), ("oma/frequencies", "x", "OMA")):
            points = [(t - origin, values) for t, values in series.get(topic, []) if np.isfinite(t)]
            if not points:
                continue
            if style == "-":
                width = max(len(v) for _, v in points)
                end = states[-1][0] - origin if states else points[-1][0]
                times = np.array([t for t, _ in points] + [max(end, points[-1][0])])
                values = np.array([v + [np.nan] * (width - len(v)) for _, v in points + points[-1:]])
                top.step(times, values, where="post", lw=1)
                top.plot([], [], "-", color="grey", label=label)
            else:
                for t, v in points:
                    top.plot(np.full(len(v), t), v, "kx", ms=5)
                top.plot([], [], "kx", label=label)
        top.set_yscale("log")
        top.set_ylabel("natural frequency [Hz]")
        top.legend(fontsize=8)
        top.grid(True, which="both", alpha=0.3)
        t = np.array([s for s, _ in states]) - origin
        q = np.array([v for _, v in states])
        for j, name in enumerate(joint_names):
            bottom.plot(t, q[:, j], label=name)
        bottom.set_xlabel("simulated time [s]" if summary["kind"] == "simulation" else "time [s]")
        bottom.set_ylabel("link position [rad | m]")
        bottom.legend(fontsize=8, ncol=3)
        bottom.grid(True, alpha=0.3)
        figure.tight_layout()
        paths.append(_save(plt, figure, directory / "bringup_timeline.png"))

    if tracking:
        figure, axis = plt.subplots(figsize=(10, 4))
        error = np.array(tracking["error"])
        for j, name in enumerate(joint_names):
            axis.plot(tracking["t"], error[:, j], label=name)
        axis.set_xlabel("time from the start of the move [s]")
        axis.set_ylabel("q - q_d [rad | m]")
        axis.set_title(f"feedforward + motor PD tracking: max |q - q_d| = {tracking['max_error']:.2e} "
                       f"{tracking['unit']}")
        axis.legend(fontsize=8, ncol=3)
        axis.grid(True, alpha=0.3)
        figure.tight_layout()
        paths.append(_save(plt, figure, directory / "bringup_tracking.png"))
    return paths


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
