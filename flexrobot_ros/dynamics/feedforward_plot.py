"""Figure of a feedforward result (matplotlib, imported lazily, Agg backend)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from flexrobot_ros.dynamics.feedforward_result import FeedforwardResult


def plot_feedforward(result: FeedforwardResult, path: str | Path, transmission: np.ndarray | None = None) -> Path:
    """Four panels against time: link positions q, joint deflections q_m - W q, link torques tau, motor torques
    tau_m (one line per joint). ``transmission`` is W (n,), 1 when omitted. Returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = np.ones(result.q.shape[1]) if transmission is None else np.asarray(transmission, dtype=float)
    panels = (
        (result.q, "link position q [rad | m]"),
        ((result.q_m - w * result.q) * 1e3, "deflection q_m - W q [mrad]"),
        (result.tau, "link torque tau [N m | N]"),
        (result.tau_m, "motor torque tau_m [N m]"),
    )
    figure, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    for ax, (values, label) in zip(axes.ravel(), panels):
        for j, name in enumerate(result.joint_names):
            ax.plot(result.t, values[:, j], lw=1.2, label=name)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("time [s]")
    axes[0, 0].legend(fontsize=8, ncol=2)
    figure.suptitle(f"feedforward ({result.method}), {len(result.t)} samples")
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
