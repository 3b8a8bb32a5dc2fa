"""Zero dynamics of the extended flexible-joint model linearized along a path (seed 002, sections 4, 9.2, 10).

At a state z = (q_a, q_m, v_a, v_m) the model (eq. 1, input tau_m, output Gamma of eq. 2) is linearized,
``dz = A z + B u, y = C z``, and its invariant (transmission) zeros are the finite generalized eigenvalues s of the
Rosenbrock pencil ``[[A, B], [C, 0]] - s [[I, 0], [0, 0]]``. All zeros in the open left half-plane: minimum phase,
the initial-value BDF inverse is bounded (section 9); a zero in the right half-plane: non-minimum phase, the inverse
must be non-causal (section 10: optimization over the whole trajectory with pre-actuation). The poles (eig A)
give the eigenfrequencies of the free (torque-driven) robot; its rigid-body poles at s = 0 are left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np
import scipy.linalg

from flexrobot_ros.dynamics.dae.symbolic import SymbolicExtendedModel

#: Poles with |s| below this [rad/s] are rigid-body poles (free motors), not eigenfrequencies.
RIGID_POLE = 1e-3
#: Generalized eigenvalues beyond this [rad/s] are the pencil's infinite ones.
INFINITE = 1e9


@dataclass(frozen=True)
class ZeroAnalysis:
    """Zeros and poles [rad/s] at one state; ``minimum_phase`` when every zero has Re < 0."""

    zeros: np.ndarray
    poles: np.ndarray

    @property
    def minimum_phase(self) -> bool:
        return bool(np.all(self.zeros.real < 0.0))

    @property
    def unstable_zeros(self) -> np.ndarray:
        return self.zeros[self.zeros.real >= 0.0]

    @property
    def eigenfrequencies_hz(self) -> np.ndarray:
        """Undamped natural frequencies |s| / 2 pi [Hz] of the flexible modes (one per complex pair), ascending."""
        flexible = self.poles[(np.abs(self.poles) > RIGID_POLE) & (self.poles.imag >= 0.0)]
        return np.sort(np.abs(flexible)) / (2 * np.pi)


class ZeroDynamics:
    """Linearizations of one robot's extended model (a :class:`SymbolicExtendedModel`): ``analyze(z)``."""

    def __init__(self, model: SymbolicExtendedModel, inertia: Any, motor_extra: Any = None):
        na, n = model.na, model.n
        z, u = cs.SX.sym("z", 2 * na + 2 * n), cs.SX.sym("u", n)
        q, qm, v, vm = z[:na], z[na:na + n], z[na + n:2 * na + n], z[2 * na + n:]
        a = cs.SX.sym("a", na)
        r = model.link_residual(q, v, a, qm, vm)
        mass = cs.jacobian(r, a)
        acc = -cs.solve(mass, cs.substitute(r, a, cs.SX.zeros(na)))
        a_m = (u - model.motor_torque(q, v, qm, vm, cs.SX.zeros(n))) / cs.DM(np.asarray(inertia, dtype=float))
        f = cs.vertcat(v, vm, acc, a_m)
        y = model.output(q)
        self.size, self.n = 2 * na + 2 * n, n
        self._abc = cs.Function("abc", [z, u], [cs.jacobian(f, z), cs.jacobian(f, u), cs.jacobian(y, z)])

    def analyze(self, z: Any, u: Any = None) -> ZeroAnalysis:
        """Zeros and poles at state z (layout q_a, q_m, v_a, v_m) and input u (default 0) [rad/s]."""
        u = np.zeros(self.n) if u is None else np.asarray(u, dtype=float)
        return invariant_zeros(*(np.array(m) for m in self._abc(np.asarray(z, dtype=float), u)))


def invariant_zeros(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> ZeroAnalysis:
    """Invariant zeros and poles (eig A) [rad/s] of ``dz = A z + B u, y = C z`` with as many outputs as inputs.

    With a uniform relative degree r (C A^k B = 0 for k < r - 1, D = C A^(r-1) B nonsingular) the zeros are the
    eigenvalues of the zero dynamics, ``A - B D^-1 C A^r`` on its invariant subspace ker [C; C A; ..; C A^(r-1)]
    (Isidori, Nonlinear Control Systems, section 4.3; the position output of a robot with rigid joints has r = 2):
    exactly size - r n of them, where the Rosenbrock pencil's infinite eigenvalues, Jordan chains of length r,
    come out of QZ as finite spurious ones up to ~eps^(1/r) (|s| ~ 1e8 rad/s seen on flexarm2). Otherwise the
    finite generalized eigenvalues of the pencil (module docstring) below :data:`INFINITE`.
    """
    size, n = a.shape[0], b.shape[1]
    poles = np.sort_complex(np.linalg.eigvals(a))
    rows, power = c, c
    scale = np.linalg.norm(c) * np.linalg.norm(b)
    for r in range(1, size // n + 1):
        coupling = power @ b
        if np.linalg.norm(coupling) <= 1e-12 * scale * np.linalg.norm(a) ** (r - 1):
            power = power @ a
            rows = np.vstack([rows, power])
            continue
        if np.linalg.cond(coupling) > 1e8:
            break   # no uniform relative degree: the pencil
        closed = a - b @ np.linalg.solve(coupling, power @ a)
        basis = scipy.linalg.null_space(rows)
        zeros = np.linalg.eigvals(basis.T @ closed @ basis) if basis.size else np.zeros(0, dtype=complex)
        return ZeroAnalysis(zeros=np.sort_complex(zeros), poles=poles)
    pencil = np.block([[a, b], [c, np.zeros((n, n))]])
    weight = np.zeros_like(pencil)
    weight[:size, :size] = np.eye(size)
    values = scipy.linalg.eigvals(pencil, weight)
    zeros = values[np.isfinite(values) & (np.abs(values) < INFINITE)]
    return ZeroAnalysis(zeros=np.sort_complex(zeros), poles=poles)


def describe_zeros(analyses: list[ZeroAnalysis], where: str) -> str:
    """'non-minimum phase: zero at ... in the right half-plane' (the unstable zero nearest the imaginary axis) or
    'minimum phase {where} (slowest zero Re = ...)' for the analyses of one or more states."""
    unstable = np.concatenate([a.unstable_zeros for a in analyses]) if analyses else np.zeros(0)
    if unstable.size:
        worst = unstable[np.argmin(unstable.real)]
        return (f"non-minimum phase: zero at {worst.real:+.4g}{worst.imag:+.4g}j rad/s "
                f"({abs(worst) / (2 * np.pi):.3g} Hz) in the right half-plane")
    slowest = max((a.zeros.real.max() for a in analyses if a.zeros.size), default=-np.inf)
    return f"minimum phase {where} (slowest zero Re = {slowest:.4g} rad/s)"


def zero_dynamics(robot: Any, model: SymbolicExtendedModel) -> ZeroDynamics:
    """The linearizer of ``robot``'s extended model (motor inertia from the robot)."""
    return ZeroDynamics(model, robot.motor_inertia)
