"""Scaled characteristic determinants of the inverse eigenvalue problem (seed 000 eqs. 3.15-3.31).

For a measured eigenvalue ``lambda = omega (-zeta + j sqrt(1 - zeta^2))`` (eq. 3.24) at pose i, with
``S_i = sqrtm(M_bar_i)`` (eq. 3.15), the residual of eq. 3.31 is::

    r = det( (I lambda^2 + S^-1 D_bar(p) S^-1 lambda + S^-1 K_bar(p) S^-1) / omega )          (complex)

and the thesis objective is ``F(p) = sum |r|^2 = sum Re(r)^2 + Im(r)^2`` (eq. 3.28). ``M_bar`` does not depend on
the unknowns, and ``D_bar``, ``K_bar`` are affine in them with rank-one terms (eqs. 3.10-3.12)::

    D_bar(p) = D_bar_0 + sum_j d_j e e^T,    K_bar(p) = K_bar_0 + sum_j k_j v v^T      (see :mod:`.affine_model`)

so ``S^-1``, the scaled base matrices and the scaled vectors ``S^-1 e``, ``S^-1 v`` are computed once per pose,
and each evaluation is a batch of (2n x 2n) complex determinants. Derivatives are analytic,
``d det(A) = tr(adj(A) dA)``; the adjugate stays well defined where ``A`` is singular (at the solution, by
design).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from flexrobot_ros.identification.affine_model import AffineModel, Residuals


def inverse_sqrtm(m_bar: np.ndarray) -> np.ndarray:
    """``S^-1`` with ``S = sqrtm(M_bar)`` the symmetric positive definite square root (eq. 3.15)."""
    values, vectors = np.linalg.eigh(0.5 * (m_bar + m_bar.T))
    return (vectors / np.sqrt(values)) @ vectors.T


def adjugate_and_determinant(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adjugates (..., m, m) and determinants (...) of square matrices, exact also for singular ones.

    With ``A = U diag(s) V^H``: ``adj(A) = det(U) det(V^H) V diag(prod_(j != i) s_j) U^H``.
    """
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,))
    left = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    phase = np.linalg.det(u) * np.linalg.det(vh)
    v = np.conj(np.swapaxes(vh, -1, -2))
    uh = np.conj(np.swapaxes(u, -1, -2))
    adjugate = phase[..., None, None] * np.einsum("...ab,...b,...bc->...ac", v, left * right, uh)
    return adjugate, phase * np.prod(s, axis=-1)


class CharacteristicDeterminant(Residuals):
    """Residuals of seed 000 eq. 3.31 (Re and Im of the scaled determinant per measured mode) of the unknowns p.

    ``model``: the affine linearized closed loop; ``eigenvalues``: the measured eigenvalues, one complex array per
    pose (eq. 3.24, Im > 0). ``objective(p)`` is F of eq. 3.28.
    """

    def __init__(self, model: AffineModel, eigenvalues: Sequence[np.ndarray]) -> None:
        super().__init__(model, eigenvalues)
        self.inverse_roots = np.array([inverse_sqrtm(m_bar) for m_bar in model.mass])        # (poses, m, m)
        # rows x_j = S^-1 v_j per pose (S^-1 is symmetric)
        self.directions = np.einsum("ja,iab->ijb", model.vectors, self.inverse_roots)       # (poses, P, m)
        scale = lambda matrices: self.inverse_roots @ matrices @ self.inverse_roots  # noqa: E731
        self.damping_base = scale(model.damping_base)       # scaled D_bar without the unknowns
        self.stiffness_base = scale(model.stiffness_base)   # scaled K_bar without the unknowns
        self._cache_key: bytes | None = None
        self._cache_a: np.ndarray | None = None

    def scaled_matrices(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``S^-1 D_bar(p) S^-1`` and ``S^-1 K_bar(p) S^-1`` per pose, (poses, 2n, 2n) each."""
        p = np.asarray(p, dtype=float)
        outer = np.einsum("ija,ijb->ijab", self.directions, self.directions)
        damping = self.damping_base + np.einsum("j,ijab->iab", np.where(self.is_damping, p, 0.0), outer)
        stiffness = self.stiffness_base + np.einsum("j,ijab->iab", np.where(self.is_damping, 0.0, p), outer)
        return damping, stiffness

    def matrices(self, p: np.ndarray) -> np.ndarray:
        """The scaled polynomial matrices ``A_k(p)`` of eq. 3.31, (N, 2n, 2n) complex."""
        key = np.asarray(p, dtype=float).tobytes()
        if key != self._cache_key:
            damping, stiffness = self.scaled_matrices(p)
            lam = self.eigenvalues[:, None, None]
            eye = np.eye(damping.shape[-1])
            a = (lam**2 * eye + lam * damping[self.pose_of_mode] + stiffness[self.pose_of_mode])
            self._cache_key, self._cache_a = key, a / self.omega[:, None, None]
        return self._cache_a

    def determinants(self, p: np.ndarray) -> np.ndarray:
        """Complex residuals ``|A_k(p)|`` of eq. 3.31, (N,)."""
        return np.linalg.det(self.matrices(p))

    def _values(self, p: np.ndarray) -> np.ndarray:
        return self._stack(self.determinants(p))

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """d residuals / d p, (2N, P), analytic: ``d|A|/dp_j = c_j x_j^T adj(A) x_j`` with ``c_j = lambda/omega``
        for a damping and ``1/omega`` for a stiffness.

        ``adj(A) x = det(A) A^-1 x`` from one LU factorization (LAPACK getrf, shared by ``det`` and ``solve``; the
        adjugate is a polynomial in A, so the backward-stable factorization gives it accurately also near a
        singular A). Modes where A is exactly singular fall back to the SVD form of
        :func:`adjugate_and_determinant`.
        """
        self.n_jacobians += 1
        a = self.matrices(p)
        x = self.directions[self.pose_of_mode]                         # (N, P, m)
        with np.errstate(all="ignore"):
            try:
                solved = np.linalg.solve(a, np.swapaxes(x, 1, 2).astype(complex))   # (N, m, P)
                quadratic = np.linalg.det(a)[:, None] * np.einsum("kja,kaj->kj", x, solved)
            except np.linalg.LinAlgError:
                quadratic = np.full(x.shape[:2], np.nan, dtype=complex)
        singular = ~np.all(np.isfinite(quadratic), axis=1)
        if np.any(singular):
            adjugate, _ = adjugate_and_determinant(a[singular])
            quadratic[singular] = np.einsum("kja,kab,kjb->kj", x[singular], adjugate, x[singular])
        coefficient = np.where(self.is_damping[None, :], self.eigenvalues[:, None], 1.0) / self.omega[:, None]
        return self._stack(coefficient * quadratic)

    def data_jacobian(self, p: np.ndarray) -> np.ndarray:
        """d residuals / d measured data, (N, 2, 2): for each mode, rows (Re, Im), columns (frequency [Hz],
        damping ratio [fraction]). With ``mu = lambda/omega``, ``A = omega mu^2 I + mu C + K/omega``."""
        a = self.matrices(p)
        adjugate, _ = adjugate_and_determinant(a)
        damping, stiffness = self.scaled_matrices(p)
        c, k = damping[self.pose_of_mode], stiffness[self.pose_of_mode]
        omega = self.omega[:, None, None]
        mu = (self.eigenvalues / self.omega)[:, None, None]
        eye = np.eye(a.shape[-1])
        d_omega = mu**2 * eye - k / omega**2
        d_mu = (-1.0 - 1j * self.zeta / np.sqrt(1.0 - self.zeta**2))[:, None, None]
        d_zeta = d_mu * (2.0 * omega * mu * eye + c)
        by_frequency = 2.0 * np.pi * np.einsum("kab,kba->k", adjugate, d_omega)
        by_damping = np.einsum("kab,kba->k", adjugate, d_zeta)
        out = np.empty((self.n_modes, 2, 2))
        out[:, 0, 0], out[:, 1, 0] = by_frequency.real, by_frequency.imag
        out[:, 0, 1], out[:, 1, 1] = by_damping.real, by_damping.imag
        return out


__all__ = ["CharacteristicDeterminant", "inverse_sqrtm", "adjugate_and_determinant"]
