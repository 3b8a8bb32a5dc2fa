"""The linearized closed loop as an affine function of the unknown joint parameters, and the measured eigenvalues.

``M_bar`` (eq. 3.10) does not depend on k, d_f, d_fm; ``D_bar`` and ``K_bar`` (eqs. 3.11-3.12) are affine in them
with rank-one terms::

    D_bar(p) = D_bar_0 + sum_j d_j e e^T      (e = e_i for d_f,i; e = e_(n+i) for d_fm,i)
    K_bar(p) = K_bar_0 + sum_j k_j v v^T      (v = W_ii e_i - e_(n+i): the K W^2, -K W, -K W, K blocks)

``D_bar_0``, ``K_bar_0`` come from :func:`flexrobot_ros.modal.linearize` (seed 000's
linearization for these robots) at the robot's YAML values with the
unknowns' terms removed, so K_G, K_P, K_D and any wrench terms are the modal core's. Residual classes
(:mod:`.characteristic_determinant`, :mod:`.eigenvalue_residuals`) build on :class:`Residuals`, which holds the
measured eigenvalues (eq. 3.24) and counts evaluations; all are picklable (plain arrays) for worker processes.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from flexrobot_ros.identification.parameters import JointParameter
from flexrobot_ros.modal import LinearizedModel


class AffineModel:
    """``M_bar`` (poses, 2n, 2n), ``D_bar(p)``, ``K_bar(p)`` at the poses of ``linearized`` (one per pose, at the
    nominal values ``nominal`` (P,) of the unknowns ``parameters``); ``transmission`` W_ii (n,)."""

    def __init__(self, linearized: Sequence[LinearizedModel], parameters: Sequence[JointParameter],
                 nominal: np.ndarray, transmission: np.ndarray) -> None:
        n = linearized[0].n
        m = 2 * n
        self.n = n
        self.is_damping = np.array([p.is_damping for p in parameters])
        vectors = np.zeros((len(parameters), m))
        for j, p in enumerate(parameters):
            if p.kind == "k":
                vectors[j, p.joint] = transmission[p.joint]
                vectors[j, n + p.joint] = -1.0
            else:
                vectors[j, p.joint if p.kind == "d_f" else n + p.joint] = 1.0
        self.vectors = vectors                                           # (P, m): e or v of each unknown
        self.outer = np.einsum("ja,jb->jab", vectors, vectors)           # (P, m, m)
        nominal = np.asarray(nominal, dtype=float)
        self.mass = np.array([lin.M_bar for lin in linearized])
        self.damping_base = np.array([lin.D_bar for lin in linearized]) - np.einsum(
            "j,jab->ab", np.where(self.is_damping, nominal, 0.0), self.outer)[None]
        self.stiffness_base = np.array([lin.K_bar for lin in linearized]) - np.einsum(
            "j,jab->ab", np.where(self.is_damping, 0.0, nominal), self.outer)[None]

    @property
    def n_parameters(self) -> int:
        return int(self.vectors.shape[0])

    def damping(self, p: np.ndarray) -> np.ndarray:
        """``D_bar(p)`` per pose, (poses, 2n, 2n)."""
        return self.damping_base + np.einsum("j,jab->ab", np.where(self.is_damping, p, 0.0), self.outer)[None]

    def stiffness(self, p: np.ndarray) -> np.ndarray:
        """``K_bar(p)`` per pose, (poses, 2n, 2n)."""
        return self.stiffness_base + np.einsum("j,jab->ab", np.where(self.is_damping, 0.0, p), self.outer)[None]


class Residuals:
    """Base of the residual classes: the affine model and the measured eigenvalues ``lambda = omega (-zeta +
    j sqrt(1 - zeta^2))`` (one complex array per pose). Subclasses provide ``_values(p)`` (2N,), ``jacobian(p)``
    (2N, P) and ``data_jacobian(p)`` (N, 2, 2) with rows (Re, Im), columns (frequency [Hz], damping ratio).
    Residual order: ``[Re r_1, Im r_1, Re r_2, Im r_2, ...]`` over the modes, pose by pose."""

    def __init__(self, model: AffineModel, eigenvalues: Sequence[np.ndarray]) -> None:
        self.model = model
        self.n_parameters = model.n_parameters
        self.is_damping = model.is_damping
        self.pose_of_mode = np.concatenate([np.full(len(lam), i) for i, lam in enumerate(eigenvalues)])
        self.eigenvalues = np.concatenate([np.asarray(lam, dtype=complex) for lam in eigenvalues])
        self.omega = np.abs(self.eigenvalues)
        self.zeta = -self.eigenvalues.real / self.omega
        self.n_evaluations = 0
        self.n_jacobians = 0

    @property
    def n_modes(self) -> int:
        """Number of measured eigenvalues N (eq. 3.25)."""
        return int(self.eigenvalues.size)

    def _values(self, p: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def residuals(self, p: np.ndarray) -> np.ndarray:
        """Real residual vector (2N,) (counted in ``n_evaluations``)."""
        self.n_evaluations += 1
        return self._values(p)

    def objective(self, p: np.ndarray) -> float:
        """Sum of squared residuals (for the determinant residuals: F of seed 000 eq. 3.28)."""
        return float(np.sum(self._values(p) ** 2))

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def data_jacobian(self, p: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def _stack(values: np.ndarray) -> np.ndarray:
        """Complex (N, ...) -> real (2N, ...) with Re and Im of each mode on consecutive rows."""
        return np.stack([values.real, values.imag], axis=1).reshape((2 * values.shape[0],) + values.shape[1:])


__all__ = ["AffineModel", "Residuals"]
