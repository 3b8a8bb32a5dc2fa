"""Eigenvalue residuals: the model's eigenvalue matched to each measured one, minus the measured one.

An alternative to the scaled determinants of seed 000 eq. 3.31 (not in the thesis; the classical modal residual
of model updating, Friswell & Mottershead 1995). For each measured eigenvalue ``lambda_hat`` at pose i::

    r = (lambda_i,match(p) - lambda_hat) / |lambda_hat|          (complex; Re ~ -damping-ratio error,
                                                                Im ~ relative frequency error)

where ``lambda_i,match`` is the model eigenvalue assigned to it at that pose (Hungarian assignment on
``|lambda - lambda_hat| / |lambda_hat|``, redone at every evaluation). Why: ``det(lambda_hat^2 M + lambda_hat D + K)``
is ``det(M)`` times the product of ``(lambda_hat - lambda_j)`` over *all* model eigenvalues, so the determinant
objective also falls when an unmeasured eigenvalue (e.g. a stiff wrist joint's 850 Hz mode) is pulled toward the
measured band; with widely spread modes (the Scompi) this creates spurious minima that the eigenvalue residual
does not have. Its derivative is the eigenvalue sensitivity of the quadratic problem with symmetric matrices
(left = right eigenvector u)::

    d lambda / d p_j = - u^T (lambda dD/dp_j + dK/dp_j) u / u^T (2 lambda M_bar + D_bar) u

The eigenvalues come from the batched first-order state matrices (eq. 2.14) of all poses.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from flexrobot_ros.identification.affine_model import AffineModel, Residuals


class EigenvalueResiduals(Residuals):
    """Relative eigenvalue errors of the matched model modes (see the module docstring)."""

    def __init__(self, model: AffineModel, eigenvalues: Sequence[np.ndarray]) -> None:
        super().__init__(model, eigenvalues)
        self.inverse_mass = np.linalg.inv(model.mass)
        self.modes_per_pose = [np.flatnonzero(self.pose_of_mode == i) for i in range(model.mass.shape[0])]
        self._cache_key: bytes | None = None
        self._cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def matched(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(model eigenvalue (N,), its eigenvector u (N, 2n), D_bar(p) per pose) matched to each measured mode."""
        key = np.asarray(p, dtype=float).tobytes()
        if key != self._cache_key:
            m = self.model.mass.shape[-1]                            # 2n, or n + m + e with links
            damping = self.model.damping(p)
            stiffness = self.model.stiffness(p)
            poses = damping.shape[0]
            state = np.zeros((poses, 2 * m, 2 * m))
            state[:, :m, m:] = np.eye(m)
            state[:, m:, :m] = -self.inverse_mass @ stiffness
            state[:, m:, m:] = -self.inverse_mass @ damping
            values, vectors = np.linalg.eig(state)
            lam = np.empty(self.n_modes, dtype=complex)
            shapes = np.empty((self.n_modes, m), dtype=complex)
            for i, modes in enumerate(self.modes_per_pose):
                scale = np.abs(values[i]).max()
                candidates = np.flatnonzero(values[i].imag >= -1e-12 * scale)
                measured = self.eigenvalues[modes]
                cost = np.abs(measured[:, None] - values[i][candidates][None, :]) / np.abs(measured)[:, None]
                rows, cols = linear_sum_assignment(cost)
                lam[modes[rows]] = values[i][candidates[cols]]
                shapes[modes[rows]] = vectors[i][:m, candidates[cols]].T
            self._cache_key, self._cache = key, (lam, shapes, damping)
        return self._cache

    def _values(self, p: np.ndarray) -> np.ndarray:
        lam = self.matched(p)[0]
        return self._stack((lam - self.eigenvalues) / self.omega)

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """d residuals / d p, (2N, P): first-order eigenvalue sensitivities of the matched modes."""
        self.n_jacobians += 1
        lam, shapes, damping = self.matched(p)
        pose = self.pose_of_mode
        tangent = (2.0 * lam[:, None, None] * self.model.mass[pose] + damping[pose])
        denominator = np.einsum("ka,kab,kb->k", shapes, tangent, shapes)
        projection = (shapes @ self.model.vectors.T) ** 2                               # (N, P): (v_j^T u)^2
        coefficient = np.where(self.is_damping[None, :], lam[:, None], 1.0)
        d_lambda = -coefficient * projection / denominator[:, None]
        return self._stack(d_lambda / self.omega[:, None])

    def data_jacobian(self, p: np.ndarray) -> np.ndarray:
        """d residuals / d measured data, (N, 2, 2): rows (Re, Im), columns (frequency [Hz], damping ratio).
        With ``lambda_hat = omega mu(zeta)``: dr/domega = -mu/omega - r/omega, dr/dzeta = -dmu/dzeta."""
        lam = self.matched(p)[0]
        mu = self.eigenvalues / self.omega
        residual = (lam - self.eigenvalues) / self.omega
        by_frequency = 2.0 * np.pi * (-mu - residual) / self.omega
        by_damping = 1.0 + 1j * self.zeta / np.sqrt(1.0 - self.zeta**2)
        out = np.empty((self.n_modes, 2, 2))
        out[:, 0, 0], out[:, 1, 0] = by_frequency.real, by_frequency.imag
        out[:, 0, 1], out[:, 1, 1] = by_damping.real, by_damping.imag
        return out


__all__ = ["EigenvalueResiduals"]
