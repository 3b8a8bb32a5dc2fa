"""Assumed-mode shape functions of a beam link: the clamped-free (cantilever) family.

API (stable; the clamped-mass family of seed 004 in :mod:`.clamped_mass` follows the same protocol)::

    cantilever_roots(count) -> (count,)            roots lambda_j of 1 + cos(lambda) cosh(lambda) = 0
    ClampedFreeModes(length, count)                 a ModeShapeFamily:
        .length [m], .count, .roots (count,)
        .evaluate(x, derivative=0) -> (len(x), count)   d^k phi_j / dx^k at x [m] (0 <= x <= length), k = 0..3
        .frequencies_rad_s(EI, rho) -> (count,)          exact cantilever circular frequencies [rad/s]
    eq43_shape(xi, root, printed=False) -> s(xi)    seed 003 eq. 43 as corrected (printed=True: the misprint)

Shapes (x along the beam from the clamp, xi = x / l, zeta = lambda xi)::

    phi_j(x) = cosh(zeta) - cos(zeta) - sigma_j (sinh(zeta) - sin(zeta)),
    sigma_j  = (cosh(lambda_j) + cos(lambda_j)) / (sinh(lambda_j) + sin(lambda_j))

normalized so that (1/l) int_0^l phi_j^2 dx = 1 (then |phi_j(l)| = 2). They satisfy phi(0) = phi'(0) = 0 (clamped)
and phi''(l) = phi'''(l) = 0 (free). Seed 003 eq. 43 (corrected, docs/errata.md: the signs in the shape must be minus)
is ``(sin z - sinh z) - s (cos z - cosh z)`` with ``s = (sin l + sinh l) / (cos l + cosh l)``, which equals
``s * phi`` (the same shape, scaled by s = 1/sigma). The hyperbolic terms are evaluated in exponential form so the
shapes stay accurate for high modes (no cancellation of cosh against sinh).
"""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np
from scipy.optimize import brentq

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.flexible_link_specs import MAX_CLAMPED_FREE_MODES

class ModeShapeFamily(Protocol):
    """A set of ``count`` shape functions over a beam of ``length`` [m], clamped at x = 0."""

    length: float
    count: int

    def evaluate(self, x: np.ndarray, derivative: int = 0) -> np.ndarray:
        """d^k phi_j / dx^k (len(x), count) at positions ``x`` [m] along the beam."""
        ...


def cantilever_roots(count: int) -> np.ndarray:
    """The first ``count`` roots of 1 + cos(l) cosh(l) = 0 (clamped-free beam), to machine precision.

    Solved as cos(l) + 1/cosh(l) = 0, which has exactly one root in each interval ((j-1) pi, j pi).
    """
    if count < 0:
        raise ModelError(f"cantilever_roots: count must be >= 0, got {count}")

    def residual(value: float) -> float:
        return math.cos(value) + 1.0 / math.cosh(value) if value < 700.0 else math.cos(value)

    return np.array([brentq(residual, (j - 1) * math.pi, j * math.pi, xtol=1e-15, rtol=4 * np.finfo(float).eps,
                            maxiter=200) for j in range(1, count + 1)])


def _hyperbolic_parts(root: float) -> tuple[float, float, float]:
    """sigma, and the coefficients (A, B) with cosh(z) - sigma sinh(z) = A exp(z - root) + B exp(-z)."""
    e = math.exp(-root)
    s, c = math.sin(root), math.cos(root)
    # sinh(l) + sin(l) = exp(l)/2 (1 - e^2 + 2 e sin l); 1 - sigma = (sin l - cos l - e) / (sinh l + sin l)
    denominator = 1.0 - e * e + 2.0 * e * s
    one_minus_sigma_scaled = 2.0 * (s - c - e) / denominator  # (1 - sigma) exp(l)
    sigma = 1.0 - one_minus_sigma_scaled * e
    return sigma, 0.5 * one_minus_sigma_scaled, 0.5 * (1.0 + sigma)


class ClampedFreeModes:
    """Clamped-free (cantilever) eigenfunctions of a uniform Euler-Bernoulli beam, unit mean-square normalized."""

    def __init__(self, length: float, count: int):
        if not (length > 0.0 and math.isfinite(length)):
            raise ModelError(f"clamped-free modes: length must be a positive number of metres, got {length!r}")
        if not 0 <= count <= MAX_CLAMPED_FREE_MODES:
            raise ModelError(f"clamped-free modes: number of modes must be 0..{MAX_CLAMPED_FREE_MODES}, got {count}")
        self.length = float(length)
        self.count = int(count)
        self.roots = cantilever_roots(count)
        parts = [_hyperbolic_parts(r) for r in self.roots]
        self.sigma = np.array([p[0] for p in parts])
        self._a = np.array([p[1] for p in parts])
        self._b = np.array([p[2] for p in parts])

    def evaluate(self, x: np.ndarray, derivative: int = 0) -> np.ndarray:
        """d^k phi_j / dx^k at ``x`` [m] (len(x), count), k = ``derivative`` in 0..3 (units m^-k)."""
        if derivative not in (0, 1, 2, 3):
            raise ValueError(f"derivative must be 0..3, got {derivative}")
        xi = np.atleast_1d(np.asarray(x, dtype=float))[:, None] / self.length
        lam = self.roots[None, :]
        zeta = lam * xi
        k = derivative
        # H = cosh z - sigma sinh z = A e^(z - l) + B e^(-z);  H^(k) = A e^(z - l) + (-1)^k B e^(-z)
        hyper = self._a * np.exp(zeta - lam) + (-1.0) ** k * self._b * np.exp(-zeta)
        # T = -cos z + sigma sin z;  T^(k) = -cos(z + k pi/2) + sigma sin(z + k pi/2)
        trig = -np.cos(zeta + k * math.pi / 2) + self.sigma * np.sin(zeta + k * math.pi / 2)
        return (lam / self.length) ** k * (hyper + trig)

    def frequencies_rad_s(self, EI: float, rho: float) -> np.ndarray:
        """Cantilever circular frequencies lambda_j^2 sqrt(EI / (rho l^4)) [rad/s] (EI [N m^2], rho [kg/m])."""
        return self.roots**2 * math.sqrt(EI / (rho * self.length**4))


def eq43_shape(xi: np.ndarray, root: float, printed: bool = False) -> np.ndarray:
    """Seed 003 eq. 43 at zeta = root * xi: corrected (minus signs in the shape) or, ``printed=True``, as printed.

    Corrected: (sin z - sinh z) - s (cos z - cosh z); printed: (sin z + sinh z) - s (cos z + cosh z); both with
    s = (sin l + sinh l) / (cos l + cosh l). The printed form gives s(0) = -2 s, not 0 (docs/errata.md,
    the DeNOC paper).
    """
    zeta = root * np.asarray(xi, dtype=float)
    s = (math.sin(root) + math.sinh(root)) / (math.cos(root) + math.cosh(root))
    sign = 1.0 if printed else -1.0
    return (np.sin(zeta) + sign * np.sinh(zeta)) - s * (np.cos(zeta) + sign * np.cosh(zeta))


__all__ = ["ClampedFreeModes", "MAX_CLAMPED_FREE_MODES", "ModeShapeFamily", "cantilever_roots", "eq43_shape"]
