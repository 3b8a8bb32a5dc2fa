"""Closed-loop modes of a flexible-joint robot at a pose: eigenvalues of the state matrix (seed 000 eqs. 2.13-2.18).

Conventions (shared by :mod:`flexrobot_ros.modal.maps`):

* One *mode* per complex-conjugate eigenvalue pair (reported with its positive imaginary part), and one mode per
  real eigenvalue (over-damped motion; not paired, not dropped). For n joints and no real eigenvalues there are
  exactly 2n modes.
* ``frequencies_hz`` = |lambda| / (2 pi) (undamped natural frequency, eq. 2.16), ``damping_ratios`` =
  -Re(lambda) / |lambda| as fractions (eq. 2.17): 1 for a decaying real eigenvalue, negative when unstable.
  Modes are sorted by frequency, ties by damping ratio.
* ``mode_shapes[:, k]`` is the first 2n entries ``u_k`` of the eigenvector (eq. 2.18), state order
  ``[q; q_m]``, normalized so that its largest-magnitude entry equals exactly 1 (real, phase 0).
* Stability (seed 000 section 2.3.2): *stable* when every eigenvalue has Re(lambda) < -tol, *unstable* when one has
  Re(lambda) > tol, *marginal* otherwise; ``tol = 1e-9 * max|lambda|``. ``offending_eigenvalues`` lists the
  eigenvalues with Re(lambda) >= -tol.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.linearization import LinearizedModel, linearize
from flexrobot_ros.model import FlexibleRobot

#: Relative tolerance on Re(lambda) / max|lambda| separating stable, marginal and unstable eigenvalues.
STABILITY_TOLERANCE = 1e-9
#: Relative tolerance on |Im(lambda)| / max|lambda| below which an eigenvalue counts as real (over-damped).
REAL_TOLERANCE = 1e-11


@dataclass(frozen=True)
class ModalResult:
    """Modes of the linearized closed loop at one set point (see the module docstring for conventions).

    ``frequencies_hz`` (modes,) [Hz]; ``damping_ratios`` (modes,) fractions; ``eigenvalues`` (modes,) complex
    [1/s]; ``mode_shapes`` (2n, modes) complex, state order [q; q_m]; ``overdamped`` (modes,) bool (real
    eigenvalue); ``stable``; ``verdict`` 'stable' | 'unstable' | 'marginal'; ``offending_eigenvalues`` complex
    eigenvalues with Re >= -tol (empty when stable); ``linearized`` the model the modes come from.
    """

    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    eigenvalues: np.ndarray
    mode_shapes: np.ndarray
    overdamped: np.ndarray
    stable: bool
    verdict: str
    offending_eigenvalues: np.ndarray
    linearized: LinearizedModel

    @property
    def n_modes(self) -> int:
        return int(self.frequencies_hz.shape[0])

    def to_dict(self) -> dict:
        """JSON-ready summary (damping ratios as fractions, eigenvalues as [re, im] pairs)."""
        return {
            "frequencies_hz": self.frequencies_hz.tolist(),
            "damping_ratios": self.damping_ratios.tolist(),
            "eigenvalues": [[float(v.real), float(v.imag)] for v in self.eigenvalues],
            "overdamped": self.overdamped.tolist(),
            "stable": self.stable,
            "verdict": self.verdict,
            "offending_eigenvalues": [[float(v.real), float(v.imag)] for v in self.offending_eigenvalues],
            "q": self.linearized.q.tolist(),
            "q_m": self.linearized.q_m.tolist(),
        }


def stability_verdict(eigenvalues: np.ndarray) -> tuple[str, np.ndarray]:
    """``(verdict, offending eigenvalues)`` of a full spectrum (see the module docstring)."""
    scale = float(np.max(np.abs(eigenvalues))) if eigenvalues.size else 0.0
    tol = STABILITY_TOLERANCE * max(scale, 1e-300)
    offending = eigenvalues[eigenvalues.real >= -tol]
    if np.any(eigenvalues.real > tol):
        return "unstable", offending
    return ("marginal" if offending.size else "stable"), offending


def select_modes(eigenvalues: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices into a real matrix's spectrum: one per conjugate pair (Im > 0) and each real eigenvalue, sorted by
    |lambda| then damping; also the mask of real ones among the selected."""
    scale = max(float(np.max(np.abs(eigenvalues))), 1e-300)
    is_real = np.abs(eigenvalues.imag) <= REAL_TOLERANCE * scale
    chosen = np.flatnonzero(is_real | (eigenvalues.imag > 0))
    magnitude = np.abs(eigenvalues[chosen])
    ratio = -eigenvalues[chosen].real / np.where(magnitude > 0, magnitude, 1.0)
    order = np.lexsort((ratio, magnitude))
    return chosen[order], is_real[chosen[order]]


def frequencies_and_damping(eigenvalues: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Natural frequencies [Hz] and damping ratios (fractions) of eigenvalues (eqs. 2.16-2.17); lambda = 0 gives
    f = 0 and zeta = 0."""
    omega = np.abs(eigenvalues)
    zeta = np.where(omega > 0, -eigenvalues.real / np.where(omega > 0, omega, 1.0), 0.0)
    return omega / (2.0 * np.pi), zeta


def normalize_shapes(shapes: np.ndarray) -> np.ndarray:
    """Scale each column (last-but-one axis holds entries) so its largest-magnitude entry is exactly 1."""
    index = np.argmax(np.abs(shapes), axis=-2)
    peak = np.take_along_axis(shapes, index[..., None, :], axis=-2)
    return shapes / np.where(peak == 0, 1.0, peak)


def modes_of(linearized: LinearizedModel) -> ModalResult:
    """Modes of an already linearized closed loop (see :func:`modal_analysis`)."""
    a = linearized.state_matrix()
    if not np.all(np.isfinite(a)):
        raise ModalError(f"state matrix at q = {linearized.q.tolist()} has non-finite entries")
    try:
        eigenvalues, vectors = np.linalg.eig(a)
    except np.linalg.LinAlgError as error:
        raise ModalError(f"eigenvalue problem at q = {linearized.q.tolist()} did not converge: {error}") from None
    if not (np.all(np.isfinite(eigenvalues)) and np.all(np.isfinite(vectors))):
        raise ModalError(f"eigenvalue problem at q = {linearized.q.tolist()} gave non-finite eigenvalues")
    verdict, offending = stability_verdict(eigenvalues)
    index, real = select_modes(eigenvalues)
    chosen = eigenvalues[index]
    chosen = np.where(real, chosen.real + 0j, chosen)
    frequencies, damping = frequencies_and_damping(chosen)
    shapes = normalize_shapes(vectors[: 2 * linearized.n, index])
    shapes = np.where(real[None, :], shapes.real + 0j, shapes)
    return ModalResult(frequencies_hz=frequencies, damping_ratios=damping, eigenvalues=chosen,
                       mode_shapes=shapes, overdamped=real, stable=verdict == "stable", verdict=verdict,
                       offending_eigenvalues=offending, linearized=linearized)


def modal_analysis(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                   frame: str | None = None) -> ModalResult:
    """Frequencies, damping ratios, complex mode shapes and stability of ``robot`` held at ``q_d`` by PD control.

    Seed 000 steps 1-5 of section 2.3.2: linearize (:func:`flexrobot_ros.modal.linearization.linearize`, same
    arguments), build the state matrix (eq. 2.14), solve its eigenvalue problem (eq. 2.13) and extract modal
    parameters (eqs. 2.16-2.18). Raises :class:`ModalError` on bad input (wrong length, non-finite, unknown frame,
    singular mass matrix); destabilizing gains give ``verdict == 'unstable'``.
    """
    return modes_of(linearize(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame))


__all__ = ["ModalResult", "modal_analysis", "modes_of", "stability_verdict", "select_modes",
           "frequencies_and_damping", "normalize_shapes", "STABILITY_TOLERANCE", "REAL_TOLERANCE"]
