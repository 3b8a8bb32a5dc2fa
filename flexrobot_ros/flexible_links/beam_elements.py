"""Cubic Hermite (Euler-Bernoulli) beam finite elements and a clamped beam meshed with them.

API (stable; used by the link model here and by seed 004's finite-element links)::

    hermite_shape_functions(s, element_length, derivative=0) -> (len(s), 4)
        N_k(s) for the element nodal coordinates [w_1, theta_1, w_2, theta_2] at s in [0, element_length] [m]
    element_mass(rho, element_length) -> (4, 4)        consistent mass, rho [kg/m]
    element_stiffness(EI, element_length) -> (4, 4)    bending stiffness, EI [N m^2]
    ClampedBeamMesh(length, elements)                   a ModeShapeFamily (same protocol as mode_shapes):
        .length, .elements, .count = 2 * elements      nodal coordinates [w_1, theta_1, ..., w_N, theta_N]
                                                        (node 0, the clamp, removed; w [m], theta [rad] = dw/dx)
        .node_positions -> (elements + 1,)
        .evaluate(x, derivative=0) -> (len(x), count)  global shape functions (k = 0..3)
        .mass(rho, tip_mass=0, tip_inertia=0) -> (count, count)
        .stiffness(EI) -> (count, count)
        .tip_deflection_row / .tip_slope_row -> (count,)  w(l) and w'(l) as rows acting on the nodal vector
        .frequencies_rad_s(EI, rho, tip_mass=0, tip_inertia=0) -> (count,) ascending
    clamped_beam_frequencies(EI, rho, length, elements, tip_mass=0, tip_inertia=0) -> (2 * elements,) [rad/s]

Element (length h, s in [0, h], w(s) = N(s) [w_1, theta_1, w_2, theta_2]^T)::

    N_1 = 1 - 3 r^2 + 2 r^3,  N_2 = h (r - 2 r^2 + r^3),  N_3 = 3 r^2 - 2 r^3,  N_4 = h (r^3 - r^2),  r = s / h
    M_e = rho h / 420 [[156, 22h, 54, -13h], [22h, 4h^2, 13h, -3h^2], [54, 13h, 156, -22h], [-13h, -3h^2, -22h, 4h^2]]
    K_e = EI / h^3 [[12, 6h, -12, 6h], [6h, 4h^2, -6h, 2h^2], [-12, -6h, 12, -6h], [6h, 2h^2, -6h, 4h^2]]

A tip mass m_p [kg] and rotary inertia J_p [kg m^2] add to the last node's w and theta diagonal entries.
The consistent-mass Rayleigh-Ritz frequencies converge to the exact ones from above as the mesh is refined.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from flexrobot_ros.errors import ModelError


def hermite_shape_functions(s: np.ndarray, element_length: float, derivative: int = 0) -> np.ndarray:
    """d^k N / ds^k (len(s), 4) of the cubic Hermite element at local positions ``s`` [m], k in 0..3."""
    h = float(element_length)
    r = np.atleast_1d(np.asarray(s, dtype=float)) / h
    one = np.ones_like(r)
    if derivative == 0:
        columns = [1 - 3 * r**2 + 2 * r**3, h * (r - 2 * r**2 + r**3), 3 * r**2 - 2 * r**3, h * (r**3 - r**2)]
    elif derivative == 1:
        columns = [(-6 * r + 6 * r**2) / h, 1 - 4 * r + 3 * r**2, (6 * r - 6 * r**2) / h, 3 * r**2 - 2 * r]
    elif derivative == 2:
        columns = [(-6 + 12 * r) / h**2, (-4 + 6 * r) / h, (6 - 12 * r) / h**2, (6 * r - 2) / h]
    elif derivative == 3:
        columns = [12 / h**3 * one, 6 / h**2 * one, -12 / h**3 * one, 6 / h**2 * one]
    else:
        raise ValueError(f"derivative must be 0..3, got {derivative}")
    return np.stack(columns, axis=-1)


def element_mass(rho: float, element_length: float) -> np.ndarray:
    """Consistent mass matrix (4, 4) of a uniform element, rho [kg/m], length [m]."""
    h = float(element_length)
    return rho * h / 420.0 * np.array([
        [156.0, 22 * h, 54.0, -13 * h],
        [22 * h, 4 * h * h, 13 * h, -3 * h * h],
        [54.0, 13 * h, 156.0, -22 * h],
        [-13 * h, -3 * h * h, -22 * h, 4 * h * h],
    ])


def element_stiffness(EI: float, element_length: float) -> np.ndarray:
    """Bending stiffness matrix (4, 4) of a uniform element, EI [N m^2], length [m]."""
    h = float(element_length)
    return EI / h**3 * np.array([
        [12.0, 6 * h, -12.0, 6 * h],
        [6 * h, 4 * h * h, -6 * h, 2 * h * h],
        [-12.0, -6 * h, 12.0, -6 * h],
        [6 * h, 2 * h * h, -6 * h, 4 * h * h],
    ])


class ClampedBeamMesh:
    """A beam of ``length`` [m] clamped at x = 0, split into ``elements`` equal cubic Hermite elements."""

    def __init__(self, length: float, elements: int):
        if not (length > 0.0 and math.isfinite(length)):
            raise ModelError(f"beam mesh: length must be a positive number of metres, got {length!r}")
        if int(elements) != elements or elements < 1:
            raise ModelError(f"beam mesh: number of elements must be an integer >= 1, got {elements!r}")
        self.length = float(length)
        self.elements = int(elements)
        self.count = 2 * self.elements
        self.element_length = self.length / self.elements

    @property
    def node_positions(self) -> np.ndarray:
        """x [m] of the nodes 0 (clamp) .. elements (tip)."""
        return np.linspace(0.0, self.length, self.elements + 1)

    def _assemble(self, element: np.ndarray) -> np.ndarray:
        full = np.zeros((self.count + 2, self.count + 2))
        for e in range(self.elements):
            full[2 * e:2 * e + 4, 2 * e:2 * e + 4] += element
        return full[2:, 2:]

    def mass(self, rho: float, tip_mass: float = 0.0, tip_inertia: float = 0.0) -> np.ndarray:
        """Consistent mass matrix (count, count) [kg, kg m, kg m^2 entries] with optional tip mass/inertia."""
        matrix = self._assemble(element_mass(rho, self.element_length))
        matrix[-2, -2] += tip_mass
        matrix[-1, -1] += tip_inertia
        return matrix

    def stiffness(self, EI: float) -> np.ndarray:
        """Bending stiffness matrix (count, count)."""
        return self._assemble(element_stiffness(EI, self.element_length))

    def evaluate(self, x: np.ndarray, derivative: int = 0) -> np.ndarray:
        """Global shape functions d^k phi / dx^k (len(x), count) at ``x`` [m] in [0, length]."""
        xs = np.atleast_1d(np.asarray(x, dtype=float))
        index = np.clip((xs / self.element_length).astype(int), 0, self.elements - 1)
        local = hermite_shape_functions(xs - index * self.element_length, self.element_length, derivative)
        out = np.zeros((xs.size + 0, self.count + 2))
        rows = np.arange(xs.size)
        for k in range(4):
            out[rows, 2 * index + k] = local[:, k]
        return out[:, 2:]

    @property
    def tip_deflection_row(self) -> np.ndarray:
        """w(l) = row @ nodal vector."""
        row = np.zeros(self.count)
        row[-2] = 1.0
        return row

    @property
    def tip_slope_row(self) -> np.ndarray:
        """w'(l) = row @ nodal vector."""
        row = np.zeros(self.count)
        row[-1] = 1.0
        return row

    def frequencies_rad_s(self, EI: float, rho: float, tip_mass: float = 0.0, tip_inertia: float = 0.0) -> np.ndarray:
        """Circular natural frequencies (count,) [rad/s], ascending."""
        values = scipy.linalg.eigh(self.stiffness(EI), self.mass(rho, tip_mass, tip_inertia), eigvals_only=True)
        return np.sqrt(np.clip(values, 0.0, None))


def clamped_beam_frequencies(EI: float, rho: float, length: float, elements: int, tip_mass: float = 0.0,
                             tip_inertia: float = 0.0) -> np.ndarray:
    """Finite-element natural frequencies [rad/s] of a clamped beam with an optional tip mass and inertia."""
    return ClampedBeamMesh(length, elements).frequencies_rad_s(EI, rho, tip_mass, tip_inertia)


__all__ = ["ClampedBeamMesh", "clamped_beam_frequencies", "element_mass", "element_stiffness",
           "hermite_shape_functions"]
