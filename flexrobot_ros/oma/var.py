"""Vector autoregressive (VAR) identification: the thesis' OMA method (seed 000, section 2.4.3).

The output ``y_k`` (channels,) is modelled as ``y_k = c + A_1 y_{k-1} + ... + A_p y_{k-p} + e_k`` with white
innovations ``e_k``; the constant ``c`` absorbs a set point, so free-decay records need no detrending. The
poles are the eigenvalues of the block companion matrix ``[[A_1 ... A_p], [I 0 ...], ...]`` and the mode shape of
pole ``mu`` is the null vector of the matrix polynomial ``mu^p I - sum_i A_i mu^(p-i)`` (the top block of the
companion eigenvector), so the large companion eigenvectors are never formed.

All orders come from one factorization: the regressor of order ``p`` is the first ``1 + m p`` columns of the
regressor of the largest order ``p_max`` (same rows, ``k = p_max .. N-1``), so a single QR of
``[regressor(p_max) | Y]`` gives every order's least-squares solution by a triangular solve on the leading
block of ``R`` (Vu et al. 2011's order-updating idea). Channels are scaled before the fit (a common factor by
default, see :func:`~flexrobot_ros.oma.signals.channel_scales`; poles do not change); shapes are returned in
the original units.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.poles import PoleSet, oscillating, pole_set
from flexrobot_ros.oma.signals import channel_scales, data_precision

#: Relative accuracy (of each channel's std) below which a residual is not taken as a misfit: the linear model of a
#: physical response is not more exact than that (weak nonlinearity, integration error of a simulated record).
MODEL_ACCURACY = 1e-6

__all__ = ["MODEL_ACCURACY", "VarModel", "transient_onset", "var_models", "var_pole_set", "var_poles",
           "var_min_samples"]


@dataclass(frozen=True)
class VarModel:
    """A fitted VAR(p) model on scaled channels (``y / scale``): ``coefficients`` (p, m, m) = ``A_1 .. A_p``,
    ``intercept`` (m,), ``residual_covariance`` (m, m) of the innovations, ``scale`` (m,) channel factors,
    ``excluded_rows``: equations dropped as outliers (see :func:`var_models`)."""

    order: int
    coefficients: np.ndarray
    intercept: np.ndarray
    residual_covariance: np.ndarray
    scale: np.ndarray
    excluded_rows: int = 0

    def companion(self) -> np.ndarray:
        """Block companion (state) matrix (m p, m p) of the model."""
        p, m, _ = self.coefficients.shape
        comp = np.zeros((m * p, m * p))
        comp[:m] = np.concatenate(list(self.coefficients), axis=1)
        if p > 1:
            comp[m:, :-m] = np.eye(m * (p - 1))
        return comp


def var_min_samples(max_order: int, channels: int, intercept: bool = True) -> int:
    """Fewest samples a VAR fit up to ``max_order`` lags on ``channels`` channels accepts.

    The least-squares problem has ``1 + m p`` unknowns per channel and ``N - p`` equations; two equations per
    unknown is the minimum accepted (the estimate is still poor there; ten or more is comfortable).
    """
    return max_order + 2 * (int(intercept) + channels * max_order + channels)


def _check(data: np.ndarray, orders: Sequence[int], intercept: bool) -> tuple[np.ndarray, list[int]]:
    y = np.asarray(data, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2:
        raise SignalError(f"VAR: data must be (samples, channels), got shape {np.shape(data)}")
    orders = sorted({int(p) for p in orders})
    if not orders or orders[0] < 1:
        raise SignalError(f"VAR: model orders must be >= 1, got {orders}")
    if not np.all(np.isfinite(y)):
        raise SignalError("VAR: data contain non-finite values")
    n, m = y.shape
    need = var_min_samples(orders[-1], m, intercept)
    if n < need:
        raise SignalError(
            f"VAR: too few samples for model order {orders[-1]} with {m} channels: got {n}, need at least "
            f"{need} (lower the maximum order or give a longer record)")
    return y, orders


def transient_onset(y: np.ndarray, quiet: int = 10, level: float = 1e-3) -> int | None:
    """Sample where a response starts from rest, or None when the record does not start at rest.

    The record starts at rest when its first ``quiet`` samples stay within ``level`` of the largest deviation
    from the first sample (all channels); the onset is the last sample before the deviation exceeds that level.
    """
    dev = np.max(np.abs(y - y[0]), axis=1)
    peak = dev.max()
    if peak == 0:
        return None
    above = np.flatnonzero(dev > level * peak)
    if len(above) == 0 or above[0] < quiet:
        return None
    return int(above[0]) - 1


def var_models(data: np.ndarray, orders: Sequence[int], intercept: bool = True, outlier_sigma: float | None = 10.0,
               noise_floor: np.ndarray | float = 0.0, scaling: str = "common",
               excitation_samples: int = 50) -> list[VarModel]:
    """Least-squares :class:`VarModel` of each order in ``orders`` (returned ascending), from one QR.

    ``data`` (samples, channels). Equations (time rows ``k = p_max .. N-1``) whose residual exceeds
    ``outlier_sigma`` standard deviations in any channel are left out: this is where the VAR model does not hold,
    i.e. the forced part of an impact (the force is an input an output-only model does not know), spikes and
    glitches. They are found at the largest order (robust scale 1.4826 MAD, refit up to three times), and for each
    lower order the rows that fit that order's model are put back by a QR update, since the contamination left by
    an impact lasts as many samples as the order. The scale is bounded below by what the data's own precision
    gives a residual of the fitted model: the per-channel error std ``e`` = max(``noise_floor``, stored precision
    of ``data`` / sqrt 3 (:func:`~flexrobot_ros.oma.signals.data_precision`)) propagated through the equation,
    ``sqrt(e_c^2 + sum_i sum_j A_i[c, j]^2 e_j^2)``, and by :data:`MODEL_ACCURACY` (1e-6) of the channel's std,
    the accuracy of a linear model of a physical (weakly nonlinear, or numerically integrated) response; no
    level of measurement noise is assumed. The test is centred on the residuals' median: on a noise-free record
    the few rows a force contaminates shift every residual of the first fit by a common offset far above the
    rounding scale, which must not make every row an outlier.

    Noise-free data of a system with ``n`` states make the regressor rank deficient in float64 (rank ``n + 1`` of
    ``1 + m p`` columns), and the triangular solve then returns coefficients with rounding amplified by
    ``1 / r_min`` (up to 1e6-1e7 on noise-free Scompi records): the poles are still right, and the residual floor
    above grows with those coefficients, so the outlier test stays lenient there. (A truncated-SVD minimum-norm
    solve was tried: it gives the same modes at 3.5 times the CPU time on such records.)

    A record that starts at rest (an impact test with a pre-trigger, :func:`transient_onset`) starts with the rows
    from the onset to ``excitation_samples`` samples (the longest expected force pulse) plus the largest order after
    it left out, since a high-order model absorbs the forced response; they come back order by order where they fit.
    On stationary Gaussian data nothing is left out. ``outlier_sigma=None`` disables all this. ``scaling`` as in
    :func:`~flexrobot_ros.oma.signals.channel_scales`. Raises :class:`SignalError` on non-finite data or too few
    samples.
    """
    y, orders = _check(data, orders, intercept)
    n, m = y.shape
    mean = y.mean(axis=0)
    scale = channel_scales(y, scaling, "VAR")
    precision = data_precision(y)
    y = (y - mean) / scale
    error = np.maximum(np.broadcast_to(np.asarray(noise_floor, dtype=float), (m,)), precision / np.sqrt(3.0)) / scale
    model_floor = MODEL_ACCURACY * y.std(axis=0)
    pmax = orders[-1]
    rows = n - pmax
    c0 = int(intercept)
    X = np.empty((rows, c0 + m * pmax + m))
    if intercept:
        X[:, 0] = 1.0
    for i in range(1, pmax + 1):
        X[:, c0 + m * (i - 1):c0 + m * i] = y[pmax - i:n - i]
    X[:, -m:] = y[pmax:]
    qmax = c0 + m * pmax
    allowed = np.ones(rows, dtype=bool)
    onset = transient_onset(y) if outlier_sigma is not None else None
    if onset is not None:
        # an impact from rest: its forced response cannot be told from the free one by residuals at a high
        # order (the model absorbs it), so the rows after the onset start out excluded and come back below
        # where they fit a lower order's model fitted without them
        target = np.arange(pmax, n)
        allowed = ~((target > onset) & (target <= onset + excitation_samples + pmax))
    keep = allowed.copy()
    R = _r_factor(X[keep])
    column_error = np.concatenate([np.zeros(c0), np.tile(error, pmax)])
    for _ in range(3 if outlier_sigma is not None else 0):
        theta = scipy.linalg.solve_triangular(R[:qmax, :qmax], R[:qmax, -m:], check_finite=False)
        resid = X[:, -m:] - X[:, :qmax] @ theta
        # robust location and scale: a noise-free record's residuals are rounding, and the few rows a force
        # contaminates shift all of them by a common offset that is far above that scale
        center = np.median(resid[keep], axis=0)
        dev = np.abs(resid - center)
        sigma = np.maximum(1.4826 * np.median(dev[keep], axis=0),
                           np.maximum(_residual_floor(theta, error, column_error), model_floor))
        new_keep = allowed & ~np.any(dev > outlier_sigma * sigma, axis=1)
        if np.array_equal(new_keep, keep):
            break
        keep = new_keep
        if keep.sum() < X.shape[1]:
            raise SignalError(
                f"VAR: only {keep.sum()} of {rows} equations fit the model within {outlier_sigma} sigma "
                f"at order {pmax}; the record is not a linear response (lower the order or check the data)")
        R = _r_factor(X[keep])
    out_rows = np.flatnonzero(~keep)
    n_rows = int(keep.sum())
    # R over columns [regressors of the current order | Y], updated while the order decreases
    models = []
    q_cur = qmax
    for p in sorted(orders, reverse=True):
        q = c0 + m * p
        if q < q_cur:
            R = _drop_columns(R, q, q_cur, m)
            q_cur = q
        theta, resid_cov = _solve(R, q, m, n_rows)
        if len(out_rows) and outlier_sigma is not None:
            cols = np.r_[0:q, X.shape[1] - m:X.shape[1]]
            Z = X[np.ix_(out_rows, cols)]
            e = Z[:, q:] - Z[:, :q] @ theta
            sigma = np.maximum(np.sqrt(np.diag(resid_cov)),
                               np.maximum(_residual_floor(theta, error, column_error[:q]), model_floor))
            fits = ~np.any(np.abs(e) > outlier_sigma * sigma, axis=1)
            if fits.any():
                R = _r_factor(np.vstack([R, Z[fits]]))
                out_rows = out_rows[~fits]
                n_rows += int(fits.sum())
                theta, resid_cov = _solve(R, q, m, n_rows)
        models.append(VarModel(
            order=p,
            coefficients=theta[c0:].reshape(p, m, m).transpose(0, 2, 1),  # A_i = theta_i^T
            intercept=theta[0] if intercept else np.zeros(m),
            residual_covariance=resid_cov,
            scale=scale,
            excluded_rows=len(out_rows),
        ))
    return models[::-1]


def _residual_floor(theta: np.ndarray, error: np.ndarray, column_error: np.ndarray) -> np.ndarray:
    """Std (m,) of the residual that errors of std ``error`` (m,) in the data leave in the equations of the model
    ``theta`` (q, m): ``sqrt(e_c^2 + sum_k theta[k, c]^2 e_col(k)^2)``."""
    return np.sqrt(error**2 + (column_error[:theta.shape[0], None] ** 2 * theta**2).sum(axis=0))


def _solve(R: np.ndarray, q: int, m: int, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares coefficients (q, m) and residual covariance (m, m) from ``R`` of ``[X_q | Y]``."""
    theta = scipy.linalg.solve_triangular(R[:q, :q], R[:q, q:q + m], check_finite=False)
    resid = R[q:, q:q + m]
    return theta, resid.T @ resid / max(n_rows - q, 1)


def _drop_columns(R: np.ndarray, q: int, q_cur: int, m: int) -> np.ndarray:
    """R factor of ``[X_q | Y]`` from the R factor of ``[X_q_cur | Y]`` (the last ``m`` columns are Y)."""
    out = np.zeros((q + m, q + m))
    out[:q, :q] = R[:q, :q]
    out[:q, q:] = R[:q, q_cur:q_cur + m]
    tail = R[q:, q_cur:q_cur + m]
    out[q:, q:] = _r_factor(tail) if tail.shape[0] >= m else np.vstack([tail, np.zeros((m - tail.shape[0], m))])
    return out


def _r_factor(X: np.ndarray) -> np.ndarray:
    """Square upper-triangular factor R of ``X = Q R`` (economic; X has at least as many rows as columns)."""
    R = scipy.linalg.qr(X, mode="r", check_finite=False)[0]
    return R[:X.shape[1]]


def _shapes(model: VarModel, mu: np.ndarray) -> np.ndarray:
    """Null vectors of ``mu^p I - sum A_i mu^(p-i)`` for each eigenvalue (k,), rescaled to data units."""
    p, m, _ = model.coefficients.shape
    if len(mu) == 0:
        return np.zeros((0, m), dtype=complex)
    # Horner: P <- P mu - A_i; magnitudes stay bounded for |mu| <= 1 and the null space is scale invariant
    P = np.broadcast_to(np.eye(m, dtype=complex), (len(mu), m, m)).copy()
    for i in range(p):
        P = P * mu[:, None, None] - model.coefficients[i]
    _, _, vh = np.linalg.svd(P)
    phi = np.conj(vh[:, -1, :])
    return phi * model.scale


def var_pole_set(model: VarModel, fs_hz: float) -> PoleSet:
    """Oscillating poles (one per conjugate pair), frequencies, damping ratios and shapes of one VAR model."""
    mu = scipy.linalg.eigvals(model.companion(), overwrite_a=True, check_finite=False)
    mu = mu[oscillating(mu)]
    return pole_set(model.order, mu, _shapes(model, mu), fs_hz)


def var_poles(data: np.ndarray, fs_hz: float, orders: Sequence[int], intercept: bool = True,
              outlier_sigma: float | None = 10.0, noise_floor: np.ndarray | float = 0.0, scaling: str = "common",
              excitation_s: float = 0.05, progress: Callable[[int, int], None] | None = None) -> list[PoleSet]:
    """Poles, frequencies, damping ratios and mode shapes of the VAR models of every order in ``orders``.

    ``data`` (samples, channels) sampled uniformly at ``fs_hz`` [Hz]. Returns one :class:`PoleSet` per order
    (ascending) holding the oscillating poles (one per conjugate pair). ``outlier_sigma`` and ``noise_floor``
    and ``scaling`` as in :func:`var_models`. ``progress(done, total)`` is called after each order.
    """
    models = var_models(data, orders, intercept, outlier_sigma, noise_floor, scaling,
                        max(int(round(excitation_s * fs_hz)), 1))
    out = []
    for k, model in enumerate(models):
        out.append(var_pole_set(model, fs_hz))
        if progress is not None:
            progress(k + 1, len(models))
    return out
