"""k-step backward differentiation formulas with constant step (seed 002, eq. 20).

``x'(t_i) ~ D_h x_i = (1/h) sum_{l=0..k} alpha_l x_{i-l}`` with the coefficients of the derivative of the
interpolating polynomial through t_i, .., t_{i-k}: ``alpha_0 = sum_{j=1..k} 1/j``, ``alpha_l = (-1)^l C(k, l) / l``
(k = 1: [1, -1]; k = 3: [11/6, -3, 3/2, -1/3]). Zero-stable for 1 <= k <= 6.
"""
from __future__ import annotations

from math import comb

import numpy as np

from flexrobot_ros.errors import TrajectoryError

MAX_ORDER = 6


def bdf_coefficients(k: int) -> np.ndarray:
    """alpha_0 .. alpha_k of the k-step BDF (k = 1..6); a TrajectoryError otherwise."""
    if isinstance(k, bool) or int(k) != k or not 1 <= k <= MAX_ORDER:
        raise TrajectoryError(f"BDF order k = {k!r}: expected an integer 1..{MAX_ORDER} (BDF is unstable above 6)")
    k = int(k)
    alpha = np.empty(k + 1)
    alpha[0] = sum(1.0 / j for j in range(1, k + 1))
    for l in range(1, k + 1):
        alpha[l] = (-1) ** l * comb(k, l) / l
    return alpha


def bdf_extrapolation(k: int) -> np.ndarray:
    """Weights c_1..c_k of the order-k polynomial extrapolation x_i ~ sum c_l x_{i-l} (a Newton predictor)."""
    return np.array([(-1) ** (l + 1) * comb(k, l) for l in range(1, k + 1)], dtype=float)
