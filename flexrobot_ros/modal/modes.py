"""Closed-loop modes of a linearized robot at a pose: eigenvalues of the state matrix (seed 000 eqs. 2.13-2.18).

:func:`modes_of` takes any linearization; the entry for a robot and a pose is
:func:`flexrobot_ros.modal.modal_analysis` (:mod:`flexrobot_ros.modal.held_modes`).

Conventions (shared by :mod:`flexrobot_ros.modal.maps`):

* One *mode* per complex-conjugate eigenvalue pair (reported with its positive imaginary part), and one mode per
  real eigenvalue (over-damped motion; not paired, not dropped). For N coordinates (2n for n elastic joints on
  rigid links) and no real eigenvalues there are exactly N modes.
* ``frequencies_hz`` = |lambda| / (2 pi) (undamped natural frequency, eq. 2.16), ``damping_ratios`` =
  -Re(lambda) / |lambda| as fractions (eq. 2.17): 1 for a decaying real eigenvalue, negative when unstable.
  Modes are sorted by frequency, ties by damping ratio. A real eigenvalue is one LAPACK returns with zero imaginary
  part.
* ``mode_shapes[:, k]`` is the first N entries ``u_k`` of the eigenvector (eq. 2.18), over the linearization's
  coordinates (:func:`flexrobot_ros.modal.modal_coordinates`: ``[q; q_m]`` for elastic joints alone), normalized
  so that its largest-magnitude entry equals exactly 1 (real, phase 0).
* Stability (seed 000 section 2.3.2): *stable* when every eigenvalue has Re(lambda) < -tol, *unstable* when one has
  Re(lambda) > tol, *marginal* otherwise; ``tol = 1e-9 * max|lambda|``. ``offending_eigenvalues`` lists the
  eigenvalues with Re(lambda) >= -tol.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal.eigenproblem import VERDICTS, classify, solve_modes, stability_tolerance
from flexrobot_ros.modal.linearization import LinearizedModel, linearize_elastic_joints
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class ModalResult:
    """Modes of the linearized closed loop at one set point (see the module docstring for conventions).

    ``frequencies_hz`` (modes,) [Hz]; ``damping_ratios`` (modes,) fractions; ``eigenvalues`` (modes,) complex
    [1/s]; ``mode_shapes`` (N, modes) complex over the linearization's N coordinates (module docstring);
    ``overdamped`` (modes,) bool (real eigenvalue); ``stable``; ``verdict`` 'stable' | 'unstable' | 'marginal';
    ``offending_eigenvalues`` complex eigenvalues with Re >= -tol (empty when stable); ``linearized`` the model the
    modes come from.
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


def stability_verdict(spectrum: np.ndarray) -> tuple[str, np.ndarray]:
    """``(verdict, offending eigenvalues)`` of one full spectrum (2N,) (see the module docstring)."""
    spectrum = np.asarray(spectrum, dtype=complex).reshape(1, -1)
    code = int(classify(spectrum)[0])
    offending = spectrum[0][spectrum[0].real >= -stability_tolerance(spectrum)[0]]
    return VERDICTS[code], offending


def modes_of(linearized: LinearizedModel) -> ModalResult:
    """Modes of an already linearized closed loop (module docstring)."""
    arrays = solve_modes(linearized.M_bar[None], linearized.D_bar[None], linearized.K_bar[None], shapes=True)
    count = int(arrays.mode_count[0])
    verdict, offending = stability_verdict(arrays.spectrum[0])
    return ModalResult(frequencies_hz=arrays.frequencies_hz[0, :count],
                       damping_ratios=arrays.damping_ratios[0, :count], eigenvalues=arrays.eigenvalues[0, :count],
                       mode_shapes=arrays.mode_shapes[0, :, :count],
                       overdamped=arrays.overdamped[0, :count], stable=verdict == "stable", verdict=verdict,
                       offending_eigenvalues=offending, linearized=linearized)


def _former_modal_analysis(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                           frame: str | None = None) -> ModalResult:
    """The former ``modal_analysis`` of this module: seed 000's modes of elastic joints on rigid links (the numbers
    it gave), a ModalError naming the entry for the other robots (whose extra elasticities, gear dampers, flexible
    links or rigid joints it dropped or failed on)."""
    if not elastic_joints_only(robot):
        raise ModalError(f"robot {robot.name}: {__name__}.modal_analysis (deprecated) evaluates elastic joints on "
                         "rigid links only; use flexrobot_ros.modal.modal_analysis, which serves any robot")
    return modes_of(linearize_elastic_joints(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame))


def __getattr__(name: str) -> Any:
    """The former home of ``modal_analysis``, kept one release with a DeprecationWarning
    (:func:`_former_modal_analysis`); the entry is :func:`flexrobot_ros.modal.modal_analysis`."""
    if name == "modal_analysis":
        warnings.warn(f"{__name__}.modal_analysis is deprecated and goes in the next release: use "
                      "flexrobot_ros.modal.modal_analysis (any robot)", DeprecationWarning, stacklevel=2)
        return _former_modal_analysis
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ModalResult", "modes_of", "stability_verdict"]
