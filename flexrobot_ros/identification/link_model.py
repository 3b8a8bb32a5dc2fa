"""The linearized closed loop of a flexible-link robot as a function of its links' bending stiffness and damping,
and the eigenvalue residuals of the measured modes with their finite-difference sensitivity.

At a held pose the composed model's linearization (:func:`~flexrobot_ros.modal.elastic_robot_linearization.
linearize_elastic_robot`, coordinates ``z = [q (n), eta (m), q_m (e)]``) is::

    M_bar = M(y*)      K_bar = d(h + f_el)/dy (y*, 0) + K_P      D_bar = d(h + f_d)/dy_dot (y*, 0) + K_D

and the beams enter through their strain ``K_b eta`` (in f_el) and modal damping ``D_b eta_dot`` (in f_d) only (the
Coriolis terms are quadratic in the rates: no part of D_bar at rest). ``K_b`` of each bending plane is proportional to that
plane's EI [N m^2] (assumed modes and finite elements alike); ``D_b = M_ff V diag(2 zeta omega_c) V^T M_ff``
(``K_b V = M_ff V diag(omega_c^2)``, V M_ff-normalized: the clamped link's modes) follows from K_b and the damping
ratio zeta. So, with the beams' blocks of the linearization at the robot's values removed::

    K_bar(p) = K_rest + sum_links E_l K_b,l(EI_l) E_l^T      D_bar(p) = D_rest + sum_links E_l D_b,l(EI_l, zeta_l) E_l^T

(E_l the link's rows of eta in z) - exact while the equilibrium y* does not move: always without gravity (eta* = 0,
the Canadarm of seed 003), and to first order in the sag otherwise; :func:`~flexrobot_ros.identification.
link_identification.identify_link_parameters` re-linearizes at the estimate until it stops moving. M_bar does not
depend on EI or zeta.

The residuals are those of :class:`~flexrobot_ros.identification.eigenvalue_residuals.EigenvalueResiduals`
(relative eigenvalue errors of the matched model modes); their Jacobian (the sensitivity of the measured modes'
eigenvalues to the parameters) is taken by central differences with steps ``SENSITIVITY_STEP`` times each
parameter's scale.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.eigenvalue_residuals import EigenvalueResiduals
from flexrobot_ros.identification.link_parameters import LinkParameter
from flexrobot_ros.identification.motor_friction import friction_damping_matrix
from flexrobot_ros.modal.elastic_robot_linearization import linearize_elastic_robot
from flexrobot_ros.modal.held_modes import composed_model
from flexrobot_ros.model import FlexibleRobot

#: Central-difference step of the sensitivities, relative to each parameter's scale.
SENSITIVITY_STEP = 1e-6


def modal_damping(stiffness: np.ndarray, mass: np.ndarray, zeta: float) -> np.ndarray:
    """``M_ff V diag(2 zeta omega) V^T M_ff`` of a beam with strain stiffness ``stiffness`` and elastic mass
    ``mass`` (m, m): modal damping ratio ``zeta`` on each clamped mode (as :class:`~flexrobot_ros.flexible_links.
    beam_link.BeamLink` builds it)."""
    values, vectors = scipy.linalg.eigh(stiffness, mass)
    modal = mass @ vectors
    return modal @ np.diag(2.0 * zeta * np.sqrt(np.clip(values, 0.0, None))) @ modal.T


class LinkModel:
    """``M_bar`` (poses, s, s), ``D_bar(p)``, ``K_bar(p)`` of ``robot`` held at ``poses`` (each (n,) [rad | m]) by its
    PD law, as functions of the link parameters ``parameters`` (module docstring); ``p`` (P,) in the parameters'
    units (EI [N m^2], zeta fraction); ``friction_damping`` per pose: the record's equivalent motor friction damping
    (n,) [N m s/rad] added on the motor coordinates (:mod:`.motor_friction`), or None."""

    def __init__(self, robot: FlexibleRobot, poses: Sequence[np.ndarray], parameters: Sequence[LinkParameter],
                 friction_damping: Sequence[np.ndarray | None] | None = None):
        model = composed_model(robot)
        chain = model.chain
        linearized = [linearize_elastic_robot(model, q) for q in poses]
        self.parameters = tuple(parameters)
        self.is_damping = np.array([p.is_damping for p in parameters])
        self.mass = np.array([lin.M_bar for lin in linearized])
        beams = {body.beam.name: body for body in chain.bodies if body.beam is not None}
        self.links = []                              # (rows in z, beam, indices of its EI_y, EI_z, zeta in p)
        damping_base = np.array([lin.D_bar for lin in linearized])
        for i, damping in enumerate(friction_damping or ()):
            if damping is not None:
                damping_base[i] += friction_damping_matrix(robot, damping, damping_base.shape[-1])
        stiffness_base = np.array([lin.K_bar for lin in linearized])
        for link in dict.fromkeys(p.link for p in parameters):
            body = beams.get(link)
            if body is None:
                raise IdentificationError(f"robot {robot.name}: flexible link {link!r} is not a beam of its chain")
            rows = np.arange(model.eta.start + body.eta.start, model.eta.start + body.eta.stop)
            index = {(p.kind, p.plane): j for j, p in enumerate(parameters) if p.link == link}
            slots = (index.get(("EI", "y"), index.get(("EI", ""))), index.get(("EI", "z")), index.get(("zeta", "")))
            self.links.append((rows, body.beam, slots))
            block = np.ix_(rows, rows)
            damping_base[(slice(None),) + block] -= body.beam.damping
            stiffness_base[(slice(None),) + block] -= body.beam.stiffness
        self.damping_base, self.stiffness_base = damping_base, stiffness_base

    @property
    def n_parameters(self) -> int:
        return len(self.parameters)

    def _beam(self, beam, slots, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(K_b, D_b) of one beam at the parameters ``p``."""
        scale = np.ones(beam.m)
        for slot, planes, nominal in ((slots[0], slice(0, beam.m_y), beam.EI_y),
                                      (slots[1], slice(beam.m_y, beam.m), beam.EI_z)):
            if slot is not None:
                scale[planes] = p[slot] / nominal
        root = np.sqrt(scale)
        stiffness = beam.stiffness * root[:, None] * root[None, :]   # planes are uncoupled: a block scale each
        zeta = beam.damping_ratio if slots[2] is None else p[slots[2]]
        return stiffness, modal_damping(stiffness, beam.M_ff, zeta)

    def matrices(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(D_bar(p), K_bar(p)) per pose, each (poses, s, s)."""
        damping, stiffness = self.damping_base.copy(), self.stiffness_base.copy()
        for rows, beam, slots in self.links:
            K, D = self._beam(beam, slots, np.asarray(p, dtype=float))
            block = (slice(None),) + np.ix_(rows, rows)
            damping[block] += D
            stiffness[block] += K
        return damping, stiffness

    def damping(self, p: np.ndarray) -> np.ndarray:
        """``D_bar(p)`` per pose, (poses, s, s)."""
        return self.matrices(p)[0]

    def stiffness(self, p: np.ndarray) -> np.ndarray:
        """``K_bar(p)`` per pose, (poses, s, s)."""
        return self.matrices(p)[1]


class LinkEigenvalueResiduals(EigenvalueResiduals):
    """Relative eigenvalue errors of the measured modes against :class:`LinkModel` (module docstring); ``scale`` (P,)
    the parameters' magnitudes for the central-difference steps."""

    def __init__(self, model: LinkModel, eigenvalues: Sequence[np.ndarray], scale: np.ndarray) -> None:
        super().__init__(model, eigenvalues)
        self.steps = SENSITIVITY_STEP * np.asarray(scale, dtype=float)

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """d residuals / d p (2N, P) by central differences (the measured eigenvalues' sensitivity)."""
        self.n_jacobians += 1
        p = np.asarray(p, dtype=float)
        out = np.empty((2 * self.n_modes, p.size))
        for j, step in enumerate(self.steps):
            plus, minus = p.copy(), p.copy()
            plus[j] += step
            minus[j] -= step
            out[:, j] = (self._values(plus) - self._values(minus)) / (2.0 * step)
        return out


__all__ = ["LinkEigenvalueResiduals", "LinkModel", "SENSITIVITY_STEP", "modal_damping"]
