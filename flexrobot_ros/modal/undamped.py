"""Undamped (conservative) modes of the linearized closed loop: ``(K_bar - omega^2 M_bar) phi = 0``.

The damping matrix ``D_bar`` (joint, motor and derivative-gain damping) is dropped; seed 000 plots these undamped
natural frequencies in Fig. 2.3's sense of "frequency". When ``K_bar`` is symmetric (gravity only, or wrenches
without follower effects) the problem is a symmetric-definite generalized eigenproblem (real modes,
``Phi^T M_bar Phi = I``); otherwise the general eigenproblem of ``M_bar^-1 K_bar`` is solved and the real parts kept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.linearization import LinearizedModel, cholesky_mass


@dataclass(frozen=True)
class UndampedModes:
    """Conservative modes at one set point, sorted by ``omega_squared``.

    ``omega_squared`` (2n,) [rad^2/s^2] (negative = statically unstable direction); ``frequencies_hz`` (2n,)
    = sqrt(max(omega^2, 0)) / (2 pi); ``mode_shapes`` (2n, 2n) real, state order [q; q_m], mass-normalized
    (``Phi^T M_bar Phi = I``) when ``symmetric``; ``statically_stable`` True when every omega^2 > 0.
    """

    omega_squared: np.ndarray
    frequencies_hz: np.ndarray
    mode_shapes: np.ndarray
    symmetric: bool
    statically_stable: bool


def undamped_modes(linearized: LinearizedModel) -> UndampedModes:
    """Undamped modes of a linearized closed loop (see the module docstring)."""
    m_bar, k_bar = linearized.M_bar, linearized.K_bar
    cholesky_mass(m_bar, linearized.q)
    scale = float(np.abs(k_bar).max()) or 1.0
    symmetric = bool(np.abs(k_bar - k_bar.T).max() <= 1e-12 * scale)
    if symmetric:
        omega_squared, shapes = scipy.linalg.eigh(0.5 * (k_bar + k_bar.T), m_bar)
    else:
        omega_squared, shapes = scipy.linalg.eig(k_bar, m_bar)
        if np.abs(omega_squared.imag).max() > 1e-9 * np.abs(omega_squared).max():
            raise ModalError(f"undamped modes at q = {linearized.q.tolist()}: K_bar is non-symmetric enough to give "
                             "complex omega^2 (follower load); use the damped modal_analysis instead")
        order = np.argsort(omega_squared.real)
        omega_squared, shapes = omega_squared.real[order], shapes.real[:, order]
        shapes = shapes / np.sqrt(np.einsum("ik,ij,jk->k", shapes, m_bar, shapes))
    frequencies = np.sqrt(np.clip(omega_squared, 0.0, None)) / (2.0 * np.pi)
    return UndampedModes(omega_squared=omega_squared, frequencies_hz=frequencies, mode_shapes=shapes,
                         symmetric=symmetric, statically_stable=bool(np.all(omega_squared > 0)))


__all__ = ["UndampedModes", "undamped_modes"]
