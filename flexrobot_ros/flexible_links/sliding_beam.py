"""A flexible link on a prismatic joint: a beam sliding through its hub (seed 004 sections 2.1-2.2, eqs. 6, 18-22).

Geometry. The joint frame J of the prismatic joint (its placement in the parent body, before the joint's motion)
holds the hub; the joint moves the beam along the unit axis ``a`` by the joint coordinate d [m]. The beam, of total
length l0, has its outer end (tip, payload) at ``d a`` from J and runs back along -a; the part outside the hub,
``xi`` in [0, d] from the hub exit, is a clamped Euler-Bernoulli beam of free length d (seed 004: l_j = d_j), the part
inside, xi in [d - l0, 0], is rigid and undeflected (eq. 19). Deflections ``w_y, w_z`` [m] along the beam-frame axes
``e_y = R_beam[:, 1]``, ``e_z = R_beam[:, 2]`` (beam x = a; for a joint along z these are the joint frame's x and y,
the paper's u and v of eq. 6).

Discretization: finite elements of length d / N (seed 004 section 2.1.2: "l_ji = d_j / n_j"), cubic Hermite (eq. 14),
nodal coordinates per bending plane ``[w_1, theta_1, ..., w_N, theta_N]`` (the clamp node removed; w [m], theta [rad]
= dw/dxi). The link's elastic coordinates are ``eta = [plane y (2N), plane z (2N)]`` (plane z absent for a planar
beam).

Kinetic energy (eqs. 19-22): the velocity of a material point is its material derivative: the point labelled by its
distance s [m] from the tip sits at xi = d - s, so ``r(s) = xi a + w(xi) `` and ``v = d r / dt`` at fixed s carries the
sliding terms d_dot a + d_dot dw/dxi. :meth:`SlidingBeam.position` gives the labelled positions as CasADi
expressions and :meth:`SlidingBeam.quadrature` the points; the Lagrangian of :mod:`.lagrangian` integrates them (4 Gauss points per element, exact; 2 on the
rigid part) and adds the tip mass at s = 0. Strain energy 1/2 sum_e q_e^T K_e(h = d / N) q_e (eq. 23).
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from flexrobot_ros.errors import ModelError


def _hermite(r: ca.SX, h: ca.SX) -> ca.SX:
    """Cubic Hermite shape functions (1, 4) at local coordinate r in [0, 1] of an element of length h (eq. 14)."""
    return ca.horzcat(1 - 3 * r ** 2 + 2 * r ** 3, h * (r - 2 * r ** 2 + r ** 3), 3 * r ** 2 - 2 * r ** 3,
                      h * (r ** 3 - r ** 2))


def _element_stiffness(EI: float, h: ca.SX) -> ca.SX:
    """K_e (4, 4) of a cubic Hermite element of length h [m] (symbolic in h)."""
    return EI / h ** 3 * ca.vertcat(
        ca.horzcat(12, 6 * h, -12, 6 * h), ca.horzcat(6 * h, 4 * h ** 2, -6 * h, 2 * h ** 2),
        ca.horzcat(-12, -6 * h, 12, -6 * h), ca.horzcat(6 * h, 2 * h ** 2, -6 * h, 4 * h ** 2))


@dataclass
class SlidingBeam:
    """A beam sliding through the hub of a prismatic joint (see the module docstring).

    ``axis`` (3,) the joint's unit axis in the joint frame, ``rotation`` (3, 3) the beam frame in the joint frame
    (first column = axis), ``length`` l0 [m] total, ``rho`` [kg/m], ``EI_y`` / ``EI_z`` [N m^2] (``EI_z`` None:
    planar, no z deflection), ``tip_mass`` [kg] at the outer end, ``elements`` N per plane.
    """

    link: str
    length: float
    rho: float
    EI_y: float
    EI_z: float | None
    tip_mass: float
    elements: int
    rotation: np.ndarray

    def __post_init__(self) -> None:
        if not (self.length > 0 and self.rho > 0 and self.EI_y > 0 and self.elements >= 1 and self.tip_mass >= 0):
            raise ModelError(f"sliding link {self.link}: length, mass_per_length, EI must be positive, elements >= 1, "
                             "tip_mass >= 0")
        self.planes = 1 if self.EI_z is None else 2
        self.m_plane = 2 * self.elements
        self.m = self.planes * self.m_plane
        self.axis = np.asarray(self.rotation[:, 0], dtype=float)
        self.mass = self.rho * self.length

    @property
    def stiffnesses(self) -> tuple[float, ...]:
        return (self.EI_y,) if self.EI_z is None else (self.EI_y, self.EI_z)

    def _plane_dofs(self, eta: ca.SX, plane: int, element: int) -> ca.SX:
        """The element's nodal coordinates [w_i, theta_i, w_i+1, theta_i+1] (the clamp node is zero)."""
        base = plane * self.m_plane
        left = ca.SX.zeros(2, 1) if element == 0 else eta[base + 2 * element - 2:base + 2 * element]
        return ca.vertcat(left, eta[base + 2 * element:base + 2 * element + 2])

    def deflection(self, eta: ca.SX, d: ca.SX, element: int, r: ca.SX) -> ca.SX:
        """Deflection vector (3, 1) [m] in the joint frame at local coordinate r in [0, 1] of ``element`` for free
        length d."""
        shapes = _hermite(r, d / self.elements)
        out = ca.SX.zeros(3, 1)
        for plane in range(self.planes):
            w = ca.mtimes(shapes, self._plane_dofs(eta, plane, element))
            out += ca.DM(self.rotation[:, 1 + plane].reshape(3, 1)) * w
        return out

    def quadrature(self, d: ca.SX) -> list[tuple[int | None, ca.SX, ca.SX]]:
        """[(element or None for the rigid part, xi of the point [m], weight [kg])] at free length d: 4 Gauss points
        per element on [0, d], 2 on the rigid part [d - l0, 0], and the tip mass at xi = d (element N - 1)."""
        points = []
        h = d / self.elements
        s4, w4 = np.polynomial.legendre.leggauss(4)
        for e in range(self.elements):
            for sg, wg in zip(s4, w4):
                points.append((e, (e + (sg + 1) / 2) * h, self.rho * h * wg / 2))
        s2, w2 = np.polynomial.legendre.leggauss(2)
        inside = self.length - d
        for sg, wg in zip(s2, w2):
            points.append((None, -inside * (1 - sg) / 2, self.rho * inside * wg / 2))
        if self.tip_mass:
            points.append((self.elements - 1, d, ca.SX(self.tip_mass)))
        return points

    def position(self, eta: ca.SX, d: ca.SX, label: ca.SX, element: int | None) -> ca.SX:
        """Position (3, 1) [m] in the joint frame J of the material point at distance ``label`` from the tip,
        assumed in ``element`` (None: inside the hub)."""
        xi = d - label
        point = ca.DM(self.axis.reshape(3, 1)) * xi
        if element is None:
            return point
        h = d / self.elements
        return point + self.deflection(eta, d, element, xi / h - element)

    def strain_energy(self, eta: ca.SX, d: ca.SX) -> ca.SX:
        """1/2 sum_e q_e^T K_e q_e [J] with elements of length d / N."""
        energy = 0
        h = d / self.elements
        for plane, EI in enumerate(self.stiffnesses):
            K = _element_stiffness(EI, h)
            for e in range(self.elements):
                q = self._plane_dofs(eta, plane, e)
                energy += 0.5 * ca.dot(q, ca.mtimes(K, q))
        return energy

    def tip_rows(self) -> np.ndarray:
        """(planes, m) rows giving the tip deflections w_y, w_z [m] (the last node's w) from eta."""
        rows = np.zeros((self.planes, self.m))
        for plane in range(self.planes):
            rows[plane, plane * self.m_plane + self.m_plane - 2] = 1.0
        return rows

    def tip_slope_rows(self) -> np.ndarray:
        """(planes, m) rows giving the tip slopes dw_y/dxi, dw_z/dxi [rad] from eta."""
        rows = np.zeros((self.planes, self.m))
        for plane in range(self.planes):
            rows[plane, plane * self.m_plane + self.m_plane - 1] = 1.0
        return rows

    def axis_points(self, eta: np.ndarray, d: float, points: int = 16) -> np.ndarray:
        """(points, 3) [m] of the deformed free part in the joint frame, from the hub exit to the tip."""
        h = d / self.elements
        xi = np.linspace(0.0, d, points)
        out = np.outer(xi, self.axis)
        for k, x in enumerate(xi):
            e = min(int(x / h), self.elements - 1)
            r = x / h - e
            N = np.array([1 - 3 * r ** 2 + 2 * r ** 3, h * (r - 2 * r ** 2 + r ** 3), 3 * r ** 2 - 2 * r ** 3,
                          h * (r ** 3 - r ** 2)])
            for plane in range(self.planes):
                base = plane * self.m_plane
                q = np.r_[np.zeros(2) if e == 0 else eta[base + 2 * e - 2:base + 2 * e], eta[base + 2 * e:base + 2 * e + 2]]
                out[k] += self.rotation[:, 1 + plane] * float(N @ q)
        return out


__all__ = ["SlidingBeam"]
