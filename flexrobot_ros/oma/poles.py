"""Poles of an identified model at one model order, and the modal quantities computed from them.

Both identification methods (:mod:`~flexrobot_ros.oma.var`, :mod:`~flexrobot_ros.oma.ssi_cov`) return, per
model order, the discrete-time eigenvalues ``mu`` of their state matrix; :func:`pole_set` converts them to
continuous-time poles ``lambda = fs * ln(mu)``, undamped natural frequencies ``|lambda| / 2 pi`` [Hz] and damping
ratios ``-Re(lambda) / |lambda|`` [fraction]. Only one pole of each complex-conjugate pair is kept (positive
imaginary part); real poles (non-oscillating) are dropped, which is the conjugate-pair filter.

Also here: the modal assurance criterion (:func:`mac`) and modal phase collinearity (:func:`mpc`) of complex
mode shapes, and :func:`normalize_shapes`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PoleSet", "pole_set", "mac", "mac_matrix", "mac_rows", "mpc", "normalize_shapes"]


@dataclass(frozen=True)
class PoleSet:
    """The oscillating poles of one identified model (one model order).

    ``order`` is the method's model order (VAR: number of lags; SSI-cov: state dimension). ``poles`` (k,)
    complex continuous-time poles [rad/s], ``frequencies_hz`` (k,), ``damping_ratios`` (k,) fractions,
    ``shapes`` (k, channels) complex mode shapes (unit norm, largest component real positive).
    """

    order: int
    poles: np.ndarray
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    shapes: np.ndarray

    def __len__(self) -> int:
        return len(self.poles)


def continuous_poles(mu: np.ndarray, fs_hz: float) -> np.ndarray:
    """Continuous-time poles ``fs * ln(mu)`` [rad/s] of discrete eigenvalues ``mu`` (sampling rate ``fs_hz``)."""
    mu = np.asarray(mu, dtype=complex)
    with np.errstate(divide="ignore"):
        return np.log(mu) * fs_hz


def oscillating(mu: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Boolean mask of the discrete eigenvalues that are the positive-imaginary member of a conjugate pair."""
    mu = np.asarray(mu)
    return (mu.imag > tol * np.maximum(np.abs(mu), 1.0)) & (np.abs(mu) > 0)


def pole_set(order: int, mu: np.ndarray, shapes: np.ndarray, fs_hz: float) -> PoleSet:
    """Build a :class:`PoleSet` from discrete eigenvalues ``mu`` (k,) and their mode shapes (k, channels).

    Non-oscillating eigenvalues must already be removed (see :func:`oscillating`). Sorted by frequency.
    """
    lam = continuous_poles(mu, fs_hz)
    wn = np.abs(lam)
    f = wn / (2.0 * np.pi)
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = np.where(wn > 0, -lam.real / wn, 1.0)
    idx = np.argsort(f)
    return PoleSet(int(order), lam[idx], f[idx], zeta[idx], normalize_shapes(np.asarray(shapes)[idx]))


def normalize_shapes(shapes: np.ndarray) -> np.ndarray:
    """Shapes (k, channels) scaled to unit norm and rotated so that the largest component is real positive."""
    shapes = np.atleast_2d(np.asarray(shapes, dtype=complex))
    if shapes.shape[0] == 0:
        return shapes
    big = shapes[np.arange(len(shapes)), np.argmax(np.abs(shapes), axis=1)]
    norm = np.linalg.norm(shapes, axis=1)
    scale = np.where(norm > 0, np.conj(big) / np.maximum(np.abs(big), 1e-300) / np.maximum(norm, 1e-300), 1.0)
    return shapes * scale[:, None]


def mac(phi_a: np.ndarray, phi_b: np.ndarray) -> float:
    """Modal assurance criterion ``|a^H b|^2 / ((a^H a)(b^H b))`` of two complex shapes, in [0, 1]."""
    a = np.asarray(phi_a, dtype=complex).ravel()
    b = np.asarray(phi_b, dtype=complex).ravel()
    den = np.real(np.vdot(a, a) * np.vdot(b, b))
    return float(np.abs(np.vdot(a, b)) ** 2 / den) if den > 0 else 0.0


def mac_matrix(shapes_a: np.ndarray, shapes_b: np.ndarray) -> np.ndarray:
    """MAC between every row of ``shapes_a`` (ka, channels) and of ``shapes_b`` (kb, channels): (ka, kb)."""
    a = np.atleast_2d(np.asarray(shapes_a, dtype=complex))
    b = np.atleast_2d(np.asarray(shapes_b, dtype=complex))
    na = np.sum(np.abs(a) ** 2, axis=1)
    nb = np.sum(np.abs(b) ** 2, axis=1)
    den = np.outer(na, nb)
    num = np.abs(np.conj(a) @ b.T) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def mac_rows(shapes_a: np.ndarray, shapes_b: np.ndarray) -> np.ndarray:
    """MAC between row ``k`` of ``shapes_a`` and row ``k`` of ``shapes_b`` (both (k, channels)): (k,)."""
    a = np.atleast_2d(np.asarray(shapes_a, dtype=complex))
    b = np.atleast_2d(np.asarray(shapes_b, dtype=complex))
    den = np.sum(np.abs(a) ** 2, axis=1) * np.sum(np.abs(b) ** 2, axis=1)
    num = np.abs(np.sum(np.conj(a) * b, axis=1)) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def mpc(shapes: np.ndarray) -> np.ndarray:
    """Modal phase collinearity of each shape (k, channels), in [0, 1]; 1 for a real (monophase) mode.

    Eigenvalue form of Pappa's MPC: ``((s1 - s2) / (s1 + s2))^2`` with ``s1 >= s2`` the eigenvalues of the 2x2
    covariance of the real and imaginary parts.
    """
    shapes = np.atleast_2d(np.asarray(shapes, dtype=complex))
    x, y = shapes.real, shapes.imag
    sxx = np.sum(x * x, axis=1)
    syy = np.sum(y * y, axis=1)
    sxy = np.sum(x * y, axis=1)
    tr = sxx + syy
    disc = np.sqrt((sxx - syy) ** 2 + 4.0 * sxy**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tr > 0, (disc / np.where(tr > 0, tr, 1.0)) ** 2, 0.0)
