"""Base parameters by QR decomposition with column pivoting (Gautier 1990; as FIGAROH does it).

The regressor Y of :mod:`.rigid_regressor` is stacked at random states W = [Y(q_k, qd_k, qdd_k)]_k. Columns that
are zero at every state (parameters that never act) are dropped; the rest are decomposed W P = Q R with column
pivoting (``scipy.linalg.qr(pivoting=True)``). The rank r is the number of |R_ii| above ``tolerance`` |R_00|; the
first r pivoted columns are the independent ones (W_1), the others (W_2) satisfy W_2 = W_1 R_1^-1 R_2 with
R = [[R_1, R_2], [0, 0]]. Hence Y phi = Y_1 beta with the base parameters::

    beta = phi_1 + R_1^-1 R_2 phi_2 = K phi        (K: r x p, the "base map")

``beta`` is the minimal set that determines the torques (seed 001 eq. 5, Appendix A: 18 for the KR90 with its
rotor couplings); each is one independent standard parameter plus a linear combination of dependent ones, which
:meth:`BaseParameters.expressions` prints. Coefficients below ``1e-10`` times the largest are set to zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.rigid_regressor import (parameter_names, parameter_units, regressor,
                                                          standard_parameters)

#: Relative threshold on |R_ii| for the rank, and on the base map's coefficients.
TOLERANCE = 1e-10


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a robot: ``independent`` (r,) indices of the standard parameters kept as base
    columns, ``base_map`` K (r, p) with beta = K phi, ``names``/``units`` (p,) of the standard parameters."""

    independent: np.ndarray
    base_map: np.ndarray
    names: tuple[str, ...]
    units: tuple[str, ...]

    @property
    def count(self) -> int:
        """Number of base parameters r."""
        return len(self.independent)

    def base_names(self) -> list[str]:
        """Each base parameter named after its independent standard parameter."""
        return [self.names[i] for i in self.independent]

    def base_units(self) -> list[str]:
        return [self.units[i] for i in self.independent]

    def of(self, phi: np.ndarray) -> np.ndarray:
        """beta = K phi (r,) of standard parameters phi (p,)."""
        return self.base_map @ np.asarray(phi, dtype=float)

    def columns(self, y: np.ndarray) -> np.ndarray:
        """The base regressor Y_1 (rows, r): the independent columns of a full regressor ``y`` (rows, p)."""
        return y[:, self.independent]

    def expressions(self, digits: int = 6) -> list[str]:
        """``beta_k = name + c name + ...`` for every base parameter (the dependent parts spelled out)."""
        out = []
        for k, row in enumerate(self.base_map):
            terms = [self.names[self.independent[k]]]
            for j in np.flatnonzero(row):
                if j != self.independent[k]:
                    sign = "-" if row[j] < 0 else "+"
                    terms.append(f"{sign} {abs(row[j]):.{digits}g} {self.names[j]}")
            out.append(" ".join(terms))
        return out


def base_parameters(robot, samples: int = 200, seed: int = 0, joints: Sequence[int] | None = None,
                    offsets: bool = False) -> BaseParameters:
    """Base parameters of ``robot`` from its regressor at ``samples`` random states: q uniform within the URDF
    limits, qd and qdd uniform in +-1 (rad/s, rad/s^2) (any generic states give the same structure).

    ``joints``: indices of the joints whose torque rows are fitted (default all: a parameter that acts only on the
    other joints' torques is then no base parameter); ``offsets``: the standard parameters include a torque offset
    per joint (:func:`.rigid_regressor.regressor`)."""
    rng = np.random.default_rng(seed)
    n = robot.n
    lower = np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -np.pi)
    upper = np.where(np.isfinite(robot.upper_limits), robot.upper_limits, np.pi)
    q = rng.uniform(lower, upper, (samples, n))
    w = regressor(robot, q, rng.uniform(-1, 1, (samples, n)), rng.uniform(-1, 1, (samples, n)), offsets=offsets)
    if joints is not None:
        w = w.reshape(samples, n, -1)[:, list(joints)].reshape(-1, w.shape[1])
    return base_parameters_of(w, parameter_names(robot, offsets), parameter_units(robot, offsets))


def base_parameters_of(w: np.ndarray, names: list[str], units: list[str]) -> BaseParameters:
    """:class:`BaseParameters` of a stacked regressor ``w`` (rows, p) whose columns are named ``names``."""
    w = np.asarray(w, dtype=float)
    scale = np.abs(w).max()
    if not np.isfinite(scale) or scale == 0.0:
        raise IdentificationError("regressor: no finite non-zero entry; no parameter acts on the torques")
    active = np.flatnonzero(np.linalg.norm(w, axis=0) > TOLERANCE * scale * np.sqrt(w.shape[0]))
    _, r, pivots = scipy.linalg.qr(w[:, active], mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    rank = int(np.sum(diagonal > TOLERANCE * diagonal[0]))
    if w.shape[0] < w.shape[1]:
        raise IdentificationError(f"regressor: {w.shape[0]} rows for {w.shape[1]} parameters; stack more samples")
    r1, r2 = r[:rank, :rank], r[:rank, rank:]
    combination = scipy.linalg.solve_triangular(r1, r2)
    combination[np.abs(combination) < TOLERANCE * max(1.0, np.abs(combination).max(initial=0.0))] = 0.0
    independent = active[pivots[:rank]]
    order = np.argsort(independent)                      # base parameters in standard-parameter order
    base_map = np.zeros((rank, w.shape[1]))
    base_map[np.arange(rank), independent] = 1.0
    base_map[:, active[pivots[rank:]]] = combination
    return BaseParameters(independent=independent[order], base_map=base_map[order], names=tuple(names),
                          units=tuple(units))


def true_base_parameters(robot, base: BaseParameters) -> np.ndarray:
    """beta of ``robot``'s own standard parameters (its URDF, rotor inertias and friction)."""
    return base.of(standard_parameters(robot))


__all__ = ["BaseParameters", "base_parameters", "base_parameters_of", "true_base_parameters", "TOLERANCE"]
