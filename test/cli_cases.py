"""Small inputs shared by the ``test_cli_*`` files: a two-mode free decay in closed form written like the
simulator's output, and a helper that runs the installed ``flexrobot`` script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from flexrobot_ros.timeseries import write_timeseries

#: Closed-form record: modes at 12 Hz (2 % damping) and 40 Hz (5 %) on six motor channels, 1 kHz, 3 s.
FREQUENCIES_HZ = (12.0, 40.0)
DAMPING = (0.02, 0.05)
SHAPES = np.array([[1.0, 0.5, -0.3, 0.2, 0.1, -0.4], [0.3, -1.0, 0.6, 0.2, -0.2, 0.5]])
POSE = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])


def free_decay(fs_hz: float = 1000.0, duration_s: float = 3.0, noise: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """(t, y): y (samples, 6) = sum over modes of shape * exp(-zeta w t) sin(w_d t), plus fixed-seed noise."""
    t = np.arange(int(fs_hz * duration_s)) / fs_hz
    y = np.zeros((t.size, 6))
    for f, zeta, shape in zip(FREQUENCIES_HZ, DAMPING, SHAPES):
        w = 2 * np.pi * f
        y += np.outer(np.exp(-zeta * w * t) * np.sin(w * np.sqrt(1 - zeta**2) * t), shape)
    return t, y + noise * np.random.default_rng(0).standard_normal(y.shape)


def write_record(path: Path) -> Path:
    """The free decay as a simulator CSV: q_m.joint1..6 around POSE and constant link positions q.joint1..6."""
    t, y = free_decay()
    columns = {f"q_m.joint{i + 1}": POSE[i] + 1e-3 * y[:, i] for i in range(6)}
    columns.update({f"q.joint{i + 1}": np.full(t.size, POSE[i]) for i in range(6)})
    return write_timeseries(path, t, columns)


def flexrobot_script() -> Path:
    """The installed console script beside this interpreter (subprocess tests use the installed copy)."""
    return Path(sys.executable).with_name("flexrobot")


def run_shell(command: str, cwd: Path, timeout: float = 300.0) -> subprocess.CompletedProcess:
    """``command`` in bash with the interpreter's bin directory first on PATH."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
