"""Gains of seed 004's decoupling control (eqs. 32-34): the diagonal joint-loop gains G_p [1/s^2] and G_v [1/s] of
e_ddot + G_v e_dot + G_p e = 0, checked once for the simulator's controller
(:class:`flexrobot_ros.simulation.decoupling_control.DecouplingControl`) and the closed-loop modes
(:func:`flexrobot_ros.modal.elastic_robot_linearization.linearize_decoupled`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import SimulationError

#: Default joint-loop gains of the decoupling law: G_p [1/s^2], G_v [1/s] (a critically damped 20 rad/s loop;
#: the paper gives none).
DEFAULT_GP, DEFAULT_GV = 400.0, 40.0


def decoupling_gains(value: Any, n: int, default: float, what: str) -> np.ndarray:
    """The diagonal gains G_p or G_v (n,) of ``value``: None (``default``), one value or n, positive and finite
    (SimulationError naming ``what`` otherwise)."""
    array = np.full(n, default) if value is None else np.asarray(value, dtype=float).reshape(-1)
    if array.size == 1:
        array = np.full(n, array[0])
    if array.shape != (n,) or not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise SimulationError(f"decoupling control: {what} must be one or {n} positive finite gains, got {value!r}")
    return array
