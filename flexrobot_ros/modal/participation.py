"""Modal participation at a robot frame: how much each closed-loop mode contributes to the frame's compliance.

Modal expansion of the receptance (:mod:`flexrobot_ros.modal.frf`) over the 4n eigenvalues of the quadratic
eigenvalue problem ``T(lambda) = lambda^2 M_bar + lambda D_bar + K_bar``::

    H(omega) = sum_k [ R_k / (i omega - lambda_k) + conj(R_k) / (i omega - conj(lambda_k)) ]   (complex modes)
             + sum_k   R_k / (i omega - lambda_k)                                              (real eigenvalues)
    R_k = J_z u_k w_k^T J_z^T / (w_k^T (2 lambda_k M_bar + D_bar) u_k)

with ``u_k`` the right and ``w_k`` the left eigenvector (``w_k^T T(lambda_k) = 0``; equal to ``u_k`` when
``K_bar`` is symmetric). A mode's *peak compliance* is the height of its own term at resonance,
``||R_k[:3, :3]||_2 / |Re lambda_k|`` [m/N] (translation per force, 2-norm over directions), and its
*participation* that peak divided by the sum over all modes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal.frf import frame_jacobian
from flexrobot_ros.modal.modes import ModalResult
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class ModalParticipation:
    """Per mode (same order as the :class:`ModalResult`): ``frame_shapes`` (modes, 6) complex frame motion
    ``J u_k`` of the normalized mode shape [m | rad per unit shape]; ``residues`` (modes, 6, 6) complex
    ``R_k``; ``peak_compliance`` (modes,) [m/N]; ``participation`` (modes,) fractions summing to 1."""

    frame_shapes: np.ndarray
    residues: np.ndarray
    peak_compliance: np.ndarray
    participation: np.ndarray
    frame: str
    axes: str

    def receptance(self, frequencies_hz: Any, eigenvalues: np.ndarray, overdamped: np.ndarray) -> np.ndarray:
        """(F, 6, 6) receptance rebuilt from the modal expansion (module docstring) at ``frequencies_hz``."""
        s = 2j * np.pi * np.atleast_1d(np.asarray(frequencies_hz, dtype=float))[:, None, None, None]
        lam = eigenvalues[None, :, None, None]
        terms = self.residues[None] / (s - lam)
        conjugate = np.conj(self.residues)[None] / (s - np.conj(lam))
        terms = terms + np.where(overdamped[None, :, None, None], 0.0, conjugate)
        return terms.sum(axis=1)


def left_eigenvector(t_matrix: np.ndarray) -> np.ndarray:
    """Null vector ``w`` of ``T^T`` (``w^T T = 0``), from the SVD."""
    _, _, vh = np.linalg.svd(t_matrix.T)
    return vh[-1].conj()


def modal_participation(robot: FlexibleRobot, result: ModalResult, frame: str | None = None,
                        axes: str = "world", jacobian: np.ndarray | None = None) -> ModalParticipation:
    """Participation of each mode of ``result`` at ``frame`` (default ``robot.tool_frame``), see module docstring.

    ``jacobian`` (6, coordinates) is ``J_z``, the frame's motion [m | rad] per unit of each coordinate of the
    linearization (in ``axes``); by default the rigid-link frame Jacobian over q and zero over q_m (the [q; q_m]
    coordinates of :func:`~flexrobot_ros.modal.modal_analysis` for elastic joints alone; a ModalError for the other
    robots). Robots with flexible links pass
    :func:`~flexrobot_ros.modal.flexible_link_jacobian.flexible_link_frame_jacobian` (their tool also moves with the
    beams' coordinates)."""
    lin = result.linearized
    if jacobian is None:
        if not elastic_joints_only(robot) or lin.M_bar.shape[0] != 2 * lin.n:
            raise ModalError(f"robot {robot.name}: its modes run over the composed model's {lin.M_bar.shape[0]} "
                             "coordinates, not [q; q_m]: pass jacobian, the frame's Jacobian over them")
        j_z = np.zeros((6, 2 * lin.n))
        j_z[:, :lin.n] = frame_jacobian(robot, lin.q, frame, axes)
    else:
        j_z = np.asarray(jacobian, dtype=float)
        if j_z.shape != (6, lin.M_bar.shape[0]):
            raise ModalError(f"jacobian: shape {j_z.shape}; expected (6, {lin.M_bar.shape[0]}), one column per "
                             "coordinate of the linearization")
    residues = np.empty((result.n_modes, 6, 6), dtype=complex)
    for k, (lam, u) in enumerate(zip(result.eigenvalues, result.mode_shapes.T)):
        t_matrix = lam**2 * lin.M_bar + lam * lin.D_bar + lin.K_bar
        w = u if np.allclose(lin.K_bar, lin.K_bar.T, rtol=0, atol=1e-12 * np.abs(lin.K_bar).max()) \
            else left_eigenvector(t_matrix)
        scale = w @ (2.0 * lam * lin.M_bar + lin.D_bar) @ u
        if scale == 0 or not np.isfinite(scale):
            raise ModalError(f"mode {k + 1} at q = {lin.q.tolist()} is defective (repeated eigenvalue without a "
                             "full set of eigenvectors); its residue is undefined")
        residues[k] = np.outer(j_z @ u, j_z @ w) / scale
    damping = np.abs(result.eigenvalues.real)
    peak = np.linalg.norm(residues[:, :3, :3], ord=2, axis=(1, 2)) / np.where(damping > 0, damping, np.inf)
    total = peak.sum()
    return ModalParticipation(frame_shapes=(j_z @ result.mode_shapes).T, residues=residues, peak_compliance=peak,
                              participation=peak / total if total > 0 else np.zeros_like(peak),
                              frame=frame or robot.tool_frame, axes=axes)


__all__ = ["ModalParticipation", "modal_participation", "left_eigenvector"]
