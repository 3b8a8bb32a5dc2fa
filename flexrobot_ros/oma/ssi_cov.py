"""Covariance-driven stochastic subspace identification (SSI-cov, Peeters & De Roeck 1999).

Output covariances ``R_k = 1/M sum_{t<M} y_{t+k} y_t^T`` (lags ``k = 1 .. 2i-1``, the same ``M = N - 2i + 1``
time samples for every lag) fill the block Toeplitz matrix ``T = [R_{i+a-b}]_{a,b<i}`` = O_i G_i, whose SVD
``U S V^T`` gives the observability matrix ``O = U_n S_n^(1/2)`` of every model order ``n``. The state matrix
comes from the shift invariance ``O_up A = O_down`` (least squares) and ``C`` is the first block row of ``O``.

Using the same time window for every lag keeps ``R_k = C A^(k-1) G`` exact for free decays too (a decaying
transient is ``y_t = C A^t x_0``), not only for stationary responses, so impact and ambient records are both
handled. One SVD and one QR of ``O_up`` (all ``n_max`` columns) serve every order: the least-squares solution
for the first ``n`` columns is a triangular solve on the leading block. Channels are scaled by a common factor
(or each to unit variance); mode shapes are returned in the original units.

Noise-free data (simulation output) make ``T`` rank deficient: its rank is about the number of states the
record excites, and the singular values beyond it are rounding (of float64, or of the digits the record was
stored with). The columns of ``O`` they give are directions of rounding error, and orders above the rank model
them with poles that are not the system's, nested over the orders (one SVD serves all of them), so some of them
are stable over a third of the orders or more. :func:`numerical_rank` reports the float64 rank; the batch
pipeline uses it to recognize a noise-free record and then keeps such poles apart from the modes (see
:func:`~flexrobot_ros.oma.selection.select_modes`). Repeating the rank's model for the higher orders instead was
tried and rejected: it makes every pole of that one model, spurious ones included, stable in all higher orders.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.poles import PoleSet, oscillating, pole_set
from flexrobot_ros.oma.signals import channel_scales

__all__ = ["covariances", "default_block_rows", "numerical_rank", "ssi_cov_poles",
           "ssi_cov_poles_from_covariances", "ssi_cov_min_samples"]


def default_block_rows(max_order: int, channels: int) -> int:
    """Default number of block rows ``i``: enough rows for ``max_order`` states plus margin, and at least 10.

    The shift-invariance least squares needs ``(i - 1) m >= n_max``; twice that keeps the estimate well
    conditioned.
    """
    return max(10, math.ceil(2 * max_order / channels) + 1)


def ssi_cov_min_samples(block_rows: int) -> int:
    """Fewest samples accepted with ``block_rows``: the covariances must average at least ``4 i`` samples."""
    return 2 * block_rows - 1 + 4 * block_rows


def covariances(y: np.ndarray, max_lag: int) -> np.ndarray:
    """``R_k = 1/M sum_{t<M} y_{t+k} y_t^T`` for ``k = 0 .. max_lag`` with ``M = N - max_lag``: (max_lag+1, m, m)."""
    n, m = y.shape
    M = n - max_lag
    head = y[:M]
    out = np.empty((max_lag + 1, m, m))
    for k in range(max_lag + 1):
        out[k] = y[k:k + M].T @ head
    return out / M


def toeplitz(R: np.ndarray, block_rows: int) -> np.ndarray:
    """Block Toeplitz ``T[a, b] = R_{i + a - b}`` (a, b < i) from covariances ``R`` (lags 0..2i-1): (m i, m i)."""
    i = block_rows
    m = R.shape[1]
    T = np.empty((m * i, m * i))
    for a in range(i):
        for b in range(i):
            T[a * m:(a + 1) * m, b * m:(b + 1) * m] = R[i + a - b]
    return T


def numerical_rank(singular_values: np.ndarray) -> int:
    """Number of states the block Toeplitz matrix determines: its singular values (descending) above the float64
    rounding of the largest, ``eps * size * s_max`` (the rank test of ``numpy.linalg.matrix_rank``)."""
    s = np.asarray(singular_values, dtype=float)
    if len(s) == 0 or s[0] <= 0:
        return 0
    return int(np.sum(s > np.finfo(float).eps * len(s) * s[0]))


def ssi_cov_poles(data: np.ndarray, fs_hz: float, orders: Sequence[int], block_rows: int | None = None,
                  scaling: str = "common", progress: Callable[[int, int], None] | None = None,
                  rank_out: list | None = None) -> list[PoleSet]:
    """Poles, frequencies, damping ratios and mode shapes of the SSI-cov models of every order in ``orders``.

    ``data`` (samples, channels) sampled uniformly at ``fs_hz`` [Hz]; ``orders`` are state dimensions;
    ``block_rows`` is ``i`` (default :func:`default_block_rows`). The mean of each channel is removed (what
    remains of a set point in a free decay is a constant, i.e. one more real state); ``scaling`` as in
    :func:`~flexrobot_ros.oma.signals.channel_scales`. Returns one :class:`PoleSet` per order, ascending.
    ``progress(done, total)`` is called after each order. ``rank_out``: if a list, the float64 rank of the
    Toeplitz matrix (:func:`numerical_rank`) is appended to it.
    """
    y = np.asarray(data, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    orders = _check_orders(orders)
    n_samples, m = y.shape
    i = _block_rows(block_rows, orders[-1], m)
    if not np.all(np.isfinite(y)):
        raise SignalError("SSI-cov: data contain non-finite values")
    need = ssi_cov_min_samples(i)
    if n_samples < need:
        raise SignalError(
            f"SSI-cov: too few samples for {i} block rows (model order {orders[-1]}, {m} channels): got "
            f"{n_samples}, need at least {need}")
    scale = channel_scales(y, scaling, "SSI-cov")
    R = covariances((y - y.mean(axis=0)) / scale, 2 * i - 1)
    return ssi_cov_poles_from_covariances(R, scale, fs_hz, orders, i, progress, rank_out)


def _check_orders(orders: Sequence[int]) -> list[int]:
    orders = sorted({int(n) for n in orders})
    if not orders or orders[0] < 1:
        raise SignalError(f"SSI-cov: model orders must be >= 1, got {orders}")
    return orders


def _block_rows(block_rows: int | None, max_order: int, m: int) -> int:
    i = default_block_rows(max_order, m) if block_rows is None else int(block_rows)
    if (i - 1) * m < max_order:
        raise SignalError(
            f"SSI-cov: {i} block rows with {m} channels support model orders up to {(i - 1) * m}, "
            f"got {max_order} (raise block_rows or lower the maximum order)")
    return i


def ssi_cov_poles_from_covariances(R: np.ndarray, scale: np.ndarray, fs_hz: float, orders: Sequence[int],
                                   block_rows: int,
                                   progress: Callable[[int, int], None] | None = None,
                                   rank_out: list | None = None) -> list[PoleSet]:
    """SSI-cov from covariances ``R`` (lags ``0 .. 2i-1``, (2i, m, m)) of channels scaled by ``scale`` (m,).

    Used directly by the online tracker, which keeps the covariances of its window up to date. ``rank_out``: if
    a list, the float64 rank of the Toeplitz matrix (:func:`numerical_rank`) is appended to it.
    """
    orders = _check_orders(orders)
    m = R.shape[1]
    i = _block_rows(block_rows, orders[-1], m)
    if R.shape[0] < 2 * i:
        raise SignalError(f"SSI-cov: {2 * i} covariance lags needed for {i} block rows, got {R.shape[0]}")
    U, s, _ = scipy.linalg.svd(toeplitz(R, i), full_matrices=False, check_finite=False)
    rank = numerical_rank(s)
    if rank_out is not None:
        rank_out.append(rank)
    nmax = orders[-1]
    O = U[:, :nmax] * np.sqrt(s[:nmax])
    Q, Rq = scipy.linalg.qr(O[:-m], mode="economic", check_finite=False)
    rhs = Q.T @ O[m:]
    scale = np.asarray(scale, dtype=float)
    out = []
    for k, n in enumerate(orders):
        A = scipy.linalg.solve_triangular(Rq[:n, :n], rhs[:n, :n], check_finite=False)
        mu, psi = np.linalg.eig(A)
        keep = oscillating(mu)
        shapes = (O[:m, :n] @ psi[:, keep]).T * scale
        out.append(pole_set(n, mu[keep], shapes, fs_hz))
        if progress is not None:
            progress(k + 1, len(orders))
    return out
