"""Batched quadratic eigenvalue problem ``(lambda^2 M_bar + lambda D_bar + K_bar) u = 0`` of the linearized closed loop.

Seed 000 solves it through the state matrix ``A = [[0, I], [-M_bar^-1 K_bar, -M_bar^-1 D_bar]]`` (eq. 2.14). This
module solves the same eigenvalue problem (same 4n eigenvalues, same eigenvectors up to scale) on a first-order
form that is similar to ``A`` but better suited to the Hessenberg QR algorithm: with ``M_bar = L L^T`` and, when
``K_bar`` is symmetric positive definite, ``K_bar = L_K L_K^T`` (Cholesky), the coordinates
``x = [L_K^T u; L^T lambda u]`` give

    lambda x = F x,   F = [[0, G^T], [-G, -L^-1 D_bar L^-T]],   G = L^-1 L_K,

a skew-symmetric matrix plus a symmetric damping block. For lightly damped structures it is nearly normal, and
LAPACK's QR iteration needs markedly fewer sweeps than on ``A`` itself (measured in ``bench/modal.py``). When
``K_bar`` is not symmetric positive definite (destabilizing gains, strong gravity softening, follower loads) the
pose falls back to the mass-normalized state matrix ``[[0, I], [-L^-1 K_bar L^-T, -L^-1 D_bar L^-T]]``.
``u`` is recovered as ``L_K^-T x_1`` (or ``L^-T x_1`` on the fallback).

Mode conventions (selection, sorting, normalization, stability) are documented in
:mod:`flexrobot_ros.modal.modes`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError

#: Relative tolerance on Re(lambda) / max|lambda| separating stable, marginal and unstable eigenvalues.
STABILITY_TOLERANCE = 1e-9
VERDICTS = ("stable", "marginal", "unstable")


@dataclass(frozen=True)
class ModalArrays:
    """Modes of P linearized systems with 2n coordinates each (m = mode columns, see ``mode_count``).

    ``frequencies_hz`` (P, m) [Hz]; ``damping_ratios`` (P, m) fractions; ``eigenvalues`` (P, m) complex [1/s];
    ``overdamped`` (P, m) bool; ``mode_count`` (P,) number of valid columns per row (2n unless some eigenvalues
    are real; the missing columns of shorter rows are NaN); ``mode_shapes`` (P, 2n, m) complex or None;
    ``spectrum`` (P, 4n) complex, all eigenvalues; ``verdict_code`` (P,) int index into :data:`VERDICTS`;
    ``max_real_part`` (P,) [1/s], the largest Re(lambda) (the stability margin, negative when stable).
    """

    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    eigenvalues: np.ndarray
    overdamped: np.ndarray
    mode_count: np.ndarray
    mode_shapes: np.ndarray | None
    spectrum: np.ndarray
    verdict_code: np.ndarray
    max_real_part: np.ndarray


def stability_tolerance(spectrum: np.ndarray) -> np.ndarray:
    """(P,) tolerance on Re(lambda): ``STABILITY_TOLERANCE * max|lambda|`` of each row."""
    return STABILITY_TOLERANCE * np.maximum(np.max(np.abs(spectrum), axis=-1), 1e-300)


def eigenvalue_codes(eigenvalues: np.ndarray, tol: Any) -> np.ndarray:
    """Verdict codes (index into :data:`VERDICTS`) of single eigenvalues [1/s], shaped like ``eigenvalues``:
    0 stable (Re < -tol), 2 unstable (Re > tol), 1 marginal (|Re| <= tol: zero within round-off, an undamped
    mode); ``tol`` [1/s] broadcasts (:func:`stability_tolerance`)."""
    real = np.real(eigenvalues)
    return np.where(real > tol, 2, np.where(real >= -tol, 1, 0))


def classify(spectrum: np.ndarray) -> np.ndarray:
    """(P,) verdict codes (0 stable, 1 marginal, 2 unstable) of full spectra (P, 4n): the worst eigenvalue's."""
    return eigenvalue_codes(spectrum, stability_tolerance(spectrum)[:, None]).max(axis=1)


def _check_finite(name: str, array: np.ndarray) -> None:
    bad = ~np.all(np.isfinite(array.reshape(array.shape[0], -1)), axis=1)
    if np.any(bad):
        raise ModalError(f"{name} has non-finite entries at pose(s) {np.flatnonzero(bad)[:10].tolist()}")


def _cholesky_rows(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors of the symmetric positive definite rows and a mask of the rows that are."""
    try:
        return np.linalg.cholesky(matrices), np.ones(matrices.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    symmetric = 0.5 * (matrices + np.swapaxes(matrices, -1, -2))
    ok = np.linalg.eigvalsh(symmetric)[:, 0] > 0
    factors = np.zeros_like(matrices)
    if np.any(ok):
        try:
            factors[ok] = np.linalg.cholesky(matrices[ok])
        except np.linalg.LinAlgError:  # borderline rows: retry one by one
            for i in np.flatnonzero(ok):
                try:
                    factors[i] = np.linalg.cholesky(matrices[i])
                except np.linalg.LinAlgError:
                    ok[i] = False
    return factors, ok


def mass_factor(m_bar: np.ndarray) -> np.ndarray:
    """Batched Cholesky factors of M_bar (P, 2n, 2n); ModalError naming the poses where it is singular."""
    factor, ok = _cholesky_rows(m_bar)
    if ok.all():
        diagonal = np.diagonal(factor, axis1=1, axis2=2)
        ok = diagonal.min(axis=1) > 1e-9 * diagonal.max(axis=1)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        raise ModalError(f"mass matrix M_bar is singular or not positive definite at pose(s) {bad[:10].tolist()} "
                         "(check link masses/inertias and motor inertias)")
    return factor


def _inverse_mass_factor(m_bar: np.ndarray) -> np.ndarray:
    """L^-1 for M_bar = L L^T (P, 2n, 2n); uses the block structure diag(M(q), B) with B diagonal when present."""
    size = m_bar.shape[1]
    half = size // 2
    motor = np.diagonal(m_bar[:, half:, half:], axis1=1, axis2=2)
    structured = size % 2 == 0 and not np.any(m_bar[:, :half, half:]) and \
        np.count_nonzero(m_bar[:, half:, half:]) == np.count_nonzero(motor) and np.all(motor > 0)
    if not structured:
        return np.linalg.inv(mass_factor(m_bar))
    l_inv = np.zeros_like(m_bar)
    l_inv[:, :half, :half] = np.linalg.inv(mass_factor(m_bar[:, :half, :half]))
    index = np.arange(half, size)
    l_inv[:, index, index] = 1.0 / np.sqrt(motor)
    return l_inv


def first_order_form(m_bar: np.ndarray, d_bar: np.ndarray, k_bar: np.ndarray, transform: bool = True
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """The first-order matrices F (P, 4n, 4n) of the module docstring and (when ``transform``) the maps
    T (P, 2n, 2n) with u = T x_1.

    F's rows and columns are stored in reverse order (``x[::-1]``), a permutation similarity that LAPACK's QR
    iteration converges on slightly faster for these matrices; eigenvectors must be reversed back.
    """
    count, size = m_bar.shape[0], m_bar.shape[1]
    l_inv = _inverse_mass_factor(m_bar)
    d_diag = np.diagonal(d_bar, axis1=1, axis2=2)
    if np.count_nonzero(d_bar) == np.count_nonzero(d_diag) and np.all(d_diag >= 0):
        scaled = l_inv * np.sqrt(d_diag)[:, None, :]
        d_tilde = scaled @ np.swapaxes(scaled, 1, 2)
    else:
        d_tilde = l_inv @ d_bar @ np.swapaxes(l_inv, 1, 2)
    k_factor, definite = _cholesky_rows(k_bar)
    asymmetry = np.abs(k_bar - np.swapaxes(k_bar, 1, 2)).max(axis=(1, 2))
    definite &= asymmetry <= 1e-12 * np.abs(k_bar).max(axis=(1, 2))
    f = np.empty((count, 2 * size, 2 * size))
    f[:, :size, :size] = 0.0
    f[:, size:, size:] = -d_tilde
    maps = np.empty((count, size, size)) if transform else None
    if definite.all():
        g = l_inv @ k_factor
        f[:, :size, size:] = np.swapaxes(g, 1, 2)
        f[:, size:, :size] = -g
        if transform:
            maps = np.swapaxes(np.linalg.inv(k_factor), 1, 2)
    else:
        if np.any(definite):
            g = l_inv[definite] @ k_factor[definite]
            f[definite, :size, size:] = np.swapaxes(g, 1, 2)
            f[definite, size:, :size] = -g
            if transform:
                maps[definite] = np.swapaxes(np.linalg.inv(k_factor[definite]), 1, 2)
        general = ~definite
        l_inv_t = np.swapaxes(l_inv[general], 1, 2)
        f[general, :size, size:] = np.eye(size)
        f[general, size:, :size] = -(l_inv[general] @ k_bar[general] @ l_inv_t)
        if transform:
            maps[general] = l_inv_t
    return np.ascontiguousarray(f[:, ::-1, ::-1]), maps


def select_modes(spectrum: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column indices (P, m) into each spectrum row picking one eigenvalue per conjugate pair (Im > 0) and every
    real eigenvalue, sorted by |lambda| then damping ratio; the valid mask (P, m) and the real mask (P, m)."""
    real = spectrum.imag == 0
    keep = real | (spectrum.imag > 0)
    magnitude = np.abs(spectrum)
    ratio = -spectrum.real / np.where(magnitude > 0, magnitude, 1.0)
    order = np.lexsort((ratio, magnitude, ~keep), axis=-1)
    width = int(keep.sum(axis=1).max())
    index = order[:, :width]
    valid = np.take_along_axis(keep, index, axis=1)
    return index, valid, np.take_along_axis(real, index, axis=1) & valid


def normalize_shapes(shapes: np.ndarray) -> np.ndarray:
    """Scale every mode shape (entries along axis -2) so that its largest-magnitude entry is exactly 1."""
    index = np.argmax(np.abs(shapes), axis=-2)
    peak = np.take_along_axis(shapes, index[..., None, :], axis=-2)
    return shapes / np.where(peak == 0, 1.0, peak)


def solve_modes(m_bar: np.ndarray, d_bar: np.ndarray, k_bar: np.ndarray, shapes: bool = False) -> ModalArrays:
    """Modes of P systems ``M_bar zdd + D_bar zd + K_bar z = 0`` given as (P, 2n, 2n) arrays (one LAPACK call).

    ``M_bar`` must be symmetric positive definite (ModalError naming the poses otherwise); ``D_bar`` and
    ``K_bar`` may be anything finite. ``shapes=True`` also computes the mode shapes (P, 2n, m).
    """
    m_bar, d_bar, k_bar = (np.asarray(a, dtype=float) for a in (m_bar, d_bar, k_bar))
    square = m_bar.ndim == 3 and m_bar.shape[1] == m_bar.shape[2]
    if not square or d_bar.shape != m_bar.shape or k_bar.shape != m_bar.shape:
        raise ModalError(f"M_bar, D_bar, K_bar: expected three (P, 2n, 2n) arrays of one shape, got "
                         f"{m_bar.shape}, {d_bar.shape}, {k_bar.shape}")
    for name, array in (("M_bar", m_bar), ("D_bar", d_bar), ("K_bar", k_bar)):
        _check_finite(name, array)
    size = m_bar.shape[1]
    f, transform = first_order_form(m_bar, d_bar, k_bar, transform=shapes)
    try:
        if shapes:
            spectrum, vectors = np.linalg.eig(f)
        else:
            spectrum, vectors = np.linalg.eigvals(f), None
    except np.linalg.LinAlgError as error:
        raise ModalError(f"the eigenvalue problem did not converge: {error}") from None
    spectrum = np.asarray(spectrum, dtype=complex)
    if not np.all(np.isfinite(spectrum)):
        raise ModalError("the eigenvalue problem gave non-finite eigenvalues")
    index, valid, real = select_modes(spectrum)
    chosen = np.take_along_axis(spectrum, index, axis=1)
    chosen = np.where(real, chosen.real + 0j, chosen)
    omega = np.abs(chosen)
    zeta = np.where(omega > 0, -chosen.real / np.where(omega > 0, omega, 1.0), 0.0)
    nan = np.nan
    mode_shapes = None
    if shapes:
        x1 = np.take_along_axis(vectors[:, : -size - 1 : -1, :], index[:, None, :], axis=2)  # F is reversed
        u = normalize_shapes(transform @ x1)
        u = np.where(real[:, None, :], u.real + 0j, u)
        mode_shapes = np.where(valid[:, None, :], u, nan)
    return ModalArrays(
        frequencies_hz=np.where(valid, omega / (2.0 * np.pi), nan),
        damping_ratios=np.where(valid, zeta, nan),
        eigenvalues=np.where(valid, chosen, nan),
        overdamped=real,
        mode_count=valid.sum(axis=1),
        mode_shapes=mode_shapes,
        spectrum=spectrum,
        verdict_code=classify(spectrum),
        max_real_part=spectrum.real.max(axis=1),
    )


__all__ = ["ModalArrays", "solve_modes", "first_order_form", "select_modes", "normalize_shapes", "classify",
           "eigenvalue_codes",
           "stability_tolerance", "mass_factor", "STABILITY_TOLERANCE", "VERDICTS"]
