"""Scaled characteristic determinants of the inverse eigenvalue problem (seed 000 eqs. 3.15-3.31).

For a measured eigenvalue ``lambda = omega (-zeta + j sqrt(1 - zeta^2))`` (eq. 3.24) at pose i, with
``S_i = sqrtm(M_bar_i)`` (eq. 3.15), the residual of eq. 3.31 is::

    r = det( (I lambda^2 + S^-1 D_bar(p) S^-1 lambda + S^-1 K_bar(p) S^-1) / omega )          (complex)

and the thesis objective is ``F(p) = sum |r|^2 = sum Re(r)^2 + Im(r)^2`` (eq. 3.28). ``M_bar`` does not depend on
the unknowns, and ``D_bar``, ``K_bar`` are affine in them with rank-one terms (eqs. 3.10-3.12)::

    D_bar(p) = D_bar_0 + sum_j d_j e e^T      (e = e_i for d_f,i; e = e_(n+i) for d_fm,i)
    K_bar(p) = K_bar_0 + sum_j k_j v v^T      (v = W_ii e_i - e_(n+i): K W^2, -K W, -K W, K blocks)

so everything but the unknowns is computed once per pose (from :func:`flexrobot_ros.modal.linearize` at the
robot's YAML parameters, which therefore also supplies K_G, K_P, K_D and any wrench terms), and each evaluation is
a batch of (2n x 2n) complex determinants. Derivatives are analytic, ``d det(A) = tr(adj(A) dA)``; the
adjugate stays well defined where ``A`` is singular (at the solution, by design).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from flexrobot_ros.identification.parameters import JointParameter
from flexrobot_ros.modal import LinearizedModel


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


class CharacteristicDeterminant:
    """Residuals of seed 000 eq. 3.31 (Re and Im per measured mode) as a function of the unknowns ``p`` (P,).

    ``linearized`` (one per pose) at the nominal parameters ``nominal`` (P,), ``eigenvalues`` (one complex array
    per pose, eq. 3.24, Im > 0), ``parameters`` the unknowns, ``transmission`` W_ii (n,). Residual vector order:
    ``[Re r_1, Im r_1, Re r_2, Im r_2, ...]`` over the modes, pose by pose. Picklable (plain arrays), so starts can
    run in worker processes.
    """

    def __init__(self, linearized: Sequence[LinearizedModel], eigenvalues: Sequence[np.ndarray],
                 parameters: Sequence[JointParameter], nominal: np.ndarray, transmission: np.ndarray) -> None:
        n = linearized[0].n
        m = 2 * n
        count = len(parameters)
        self.n_parameters = count
        self.is_damping = np.array([p.is_damping for p in parameters])
        inverse_roots, directions, c_base, k_base = [], [], [], []
        for lin in linearized:
            s_inv = inverse_sqrtm(lin.M_bar)
            vectors = np.zeros((count, m))
            for j, p in enumerate(parameters):
                if p.kind == "k":
                    vectors[j, p.joint] = transmission[p.joint]
                    vectors[j, n + p.joint] = -1.0
                else:
                    vectors[j, p.joint if p.kind == "d_f" else n + p.joint] = 1.0
            outer = np.einsum("ja,jb->jab", vectors, vectors)
            d0 = lin.D_bar - np.einsum("j,jab->ab", np.where(self.is_damping, nominal, 0.0), outer)
            k0 = lin.K_bar - np.einsum("j,jab->ab", np.where(self.is_damping, 0.0, nominal), outer)
            inverse_roots.append(s_inv)
            directions.append(vectors @ s_inv)          # rows x_j = S^-1 v_j (S^-1 is symmetric)
            c_base.append(s_inv @ d0 @ s_inv)
            k_base.append(s_inv @ k0 @ s_inv)
        self.inverse_roots = np.array(inverse_roots)      # (poses, m, m)
        self.directions = np.array(directions)            # (poses, P, m)
        self.damping_base = np.array(c_base)              # (poses, m, m), scaled D_bar without the unknowns
        self.stiffness_base = np.array(k_base)            # (poses, m, m), scaled K_bar without the unknowns
        self.pose_of_mode = np.concatenate([np.full(len(lam), i) for i, lam in enumerate(eigenvalues)])
        self.eigenvalues = np.concatenate([np.asarray(lam, dtype=complex) for lam in eigenvalues])
        self.omega = np.abs(self.eigenvalues)
        self.zeta = -self.eigenvalues.real / self.omega
        self.n_evaluations = 0
        self.n_jacobians = 0
        self._cache_key: bytes | None = None
        self._cache_a: np.ndarray | None = None

    @property
    def n_modes(self) -> int:
        """Number of measured eigenvalues N (eq. 3.25)."""
        return int(self.eigenvalues.size)

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
            a = (lam**2 * eye + lam * damping[self.pose_of_mode] + stiffness[self.pose_of_mode]) / self.omega[:, None,
                                                                                                                None]
            self._cache_key, self._cache_a = key, a
        return self._cache_a

    def determinants(self, p: np.ndarray) -> np.ndarray:
        """Complex residuals ``|A_k(p)|`` of eq. 3.31, (N,)."""
        return np.linalg.det(self.matrices(p))

    def residuals(self, p: np.ndarray) -> np.ndarray:
        """Real residual vector (2N,): Re and Im of each determinant (eq. 3.28's terms)."""
        self.n_evaluations += 1
        det = self.determinants(p)
        return np.column_stack([det.real, det.imag]).ravel()

    def objective(self, p: np.ndarray) -> float:
        """F(p) of seed 000 eq. 3.28."""
        det = self.determinants(p)
        return float(np.sum(det.real**2 + det.imag**2))

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
        g = coefficient * quadratic
        return np.stack([g.real, g.imag], axis=1).reshape(2 * self.n_modes, self.n_parameters)

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
