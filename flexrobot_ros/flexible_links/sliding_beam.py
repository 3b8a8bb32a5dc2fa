"""A flexible link on a prismatic joint: a beam sliding through its hub (seed 004 sections 2.1-2.2, eqs. 6, 18-22).

Geometry. The joint frame J of the prismatic joint (its placement in the parent body, before the joint's motion)
holds the hub; the joint moves the beam along the unit axis ``a`` by the joint coordinate d [m]. The beam, of total
length l0, has its outer end (tip, payload) at ``d a`` from J and runs back along -a; the part outside the hub,
``xi`` in [0, d] from the hub exit, is a clamped Euler-Bernoulli beam of free length d (seed 004: l_j = d_j), the part
inside, xi in [d - l0, 0], is rigid and undeflected (eq. 19). Deflections ``w_y, w_z`` [m] along the beam-frame axes
``e_y = R_beam[:, 1]``, ``e_z = R_beam[:, 2]`` (beam x = a; for a joint along z these are the joint frame's x and y,
the paper's u and v of eq. 6).

Discretization, per bending plane (the link's elastic coordinates ``eta = [plane y, plane z]``, plane z absent for a
planar beam):

* finite elements of length d / N (seed 004 section 2.1.2: "l_ji = d_j / n_j"), cubic Hermite (eq. 14), nodal
  coordinates ``[w_1, theta_1, ..., w_N, theta_N]`` (the clamp node removed; w [m], theta [rad] = dw/dxi);
* assumed modes: the exact clamped-mass eigenfunctions of the free part with the payload (eqs. 9-10, normalized by
  eq. 13 on eta = xi / d), M = m_p / (rho d) (J = D = 0, as the paper's link 3), modal amplitudes [m]. Their roots
  beta_i(d) of eq. 38 change with d (section 4.2). Here they enter the expression graph as an explicit function of d:
  a Chebyshev fit of the root solve over the joint's travel polished by one Newton step of eq. 38, so that the
  Lagrangian's derivatives of beta are those of the implicit function (eqs. 45-47: dbeta/dd = -f_M M'(d) / f_beta)
  to round-off; a root solve at any d and the differential form integrated along a motion give the same roots
  (test_sliding_link.py). With ``roots_state`` (YAML ``roots: integrated``, the paper's way) the roots are instead
  symbols of the Lagrangian (:attr:`SlidingBeam.root_symbols` while it is built) that the plant integrates with
  :meth:`SlidingBeam.root_slopes` (eqs. 45-47); on the root curve both give the same dynamics.

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
import pinocchio as pin

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


def _frequency_equation() -> ca.Function:
    """(beta, M) -> (f, df/dbeta, df/dM) of seed 004 eq. 38 with J = D = 0 (the partials: eqs. 41-42)."""
    beta, M = ca.SX.sym("beta"), ca.SX.sym("M")
    f = 1 + ca.cosh(beta) * ca.cos(beta) - M * beta * (ca.cosh(beta) * ca.sin(beta) - ca.sinh(beta) * ca.cos(beta))
    return ca.Function("eq38", [beta, M], [f, ca.jacobian(f, beta), ca.jacobian(f, M)])


_FREQUENCY_EQUATION = _frequency_equation()


def _eigenfunction(beta: ca.SX, nu: ca.SX, z: ca.SX | float, k: int = 0) -> ca.SX:
    """d^k/dz^k of the unnormalized clamped-mass eigenfunction cos - cosh + nu (sin - sinh) of (beta z) (eq. 9)."""
    c1, c2, s1, s2 = [(ca.cos, ca.cosh, ca.sin, ca.sinh), (lambda a: -ca.sin(a), ca.sinh, ca.cos, ca.cosh),
                      (lambda a: -ca.cos(a), ca.cosh, lambda a: -ca.sin(a), ca.sinh)][k]
    return beta ** k * (c1(beta * z) - c2(beta * z) + nu * (s1(beta * z) - s2(beta * z)))


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
    modes: int = 0                        # > 0: assumed modes (clamped-mass) instead of elements
    travel: tuple[float, float] = (0.0, 0.0)  # the joint's range [m] (the fit of the roots; assumed modes)
    roots_state: bool = False             # assumed modes: the roots are states integrated by eqs. 45-47

    def __post_init__(self) -> None:
        count = self.modes or self.elements
        if not (self.length > 0 and self.rho > 0 and self.EI_y > 0 and count >= 1 and self.tip_mass >= 0):
            raise ModelError(f"sliding link {self.link}: length, mass_per_length, EI must be positive, elements or "
                             "modes >= 1, tip_mass >= 0")
        self.planes = 1 if self.EI_z is None else 2
        self.m_plane = self.modes or 2 * self.elements
        self._roots = self._root_fit() if self.modes else None
        self._functions: dict = {}
        self.root_symbols: list | None = None  # set while a Lagrangian with root states is built (roots_state)
        self.m = self.planes * self.m_plane
        self.axis = np.asarray(self.rotation[:, 0], dtype=float)
        self.mass = self.rho * self.length

    def undeformed_inertia(self) -> pin.Inertia:
        """The undeflected beam and its tip mass as one rigid body, in the frame the joint has moved by d (origin at
        the tip, where the payload sits; the beam runs back along -axis): rho l0 [kg] with its centre of mass at
        -l0/2 axis [m] and m l0^2 / 12 [kg m^2] about the transverse axes, plus ``tip_mass`` at the origin."""
        rod = pin.Inertia(self.mass, -0.5 * self.length * self.axis,
                          self.mass * self.length ** 2 / 12.0 * (np.eye(3) - np.outer(self.axis, self.axis)))
        return rod + pin.Inertia(self.tip_mass, np.zeros(3), np.zeros((3, 3)))

    @property
    def stiffnesses(self) -> tuple[float, ...]:
        return (self.EI_y,) if self.EI_z is None else (self.EI_y, self.EI_z)

    def _plane_dofs(self, eta: ca.SX, plane: int, element: int) -> ca.SX:
        """The element's nodal coordinates [w_i, theta_i, w_i+1, theta_i+1] (the clamp node is zero)."""
        base = plane * self.m_plane
        left = ca.SX.zeros(2, 1) if element == 0 else eta[base + 2 * element - 2:base + 2 * element]
        return ca.vertcat(left, eta[base + 2 * element:base + 2 * element + 2])

    # ------------------------------------------------------------------ assumed modes
    def _root_fit(self) -> list[np.polynomial.Chebyshev]:
        """Chebyshev fits (degree 24) of the first ``modes`` roots of eq. 38 over the joint's travel."""
        from flexrobot_ros.flexible_links.clamped_mass import ClampedMassParameters, frequency_roots

        low, high = self.travel
        if not 0 < low < high:
            raise ModelError(f"sliding link {self.link}: assumed modes need the joint's travel (0 < lower < upper), "
                             f"got {self.travel}")
        d = np.polynomial.chebyshev.chebpts2(64) * (high - low) / 2 + (high + low) / 2
        roots = np.array([frequency_roots(self.modes, ClampedMassParameters(M=self.tip_mass / (self.rho * x)))
                          for x in d])
        return [np.polynomial.Chebyshev.fit(d, roots[:, i], 24, domain=[low, high]) for i in range(self.modes)]

    def roots(self, d: ca.SX) -> list[ca.SX]:
        """beta_i(d) of eq. 38 with M = m_p / (rho d): the fit, polished by one Newton step (see module docstring);
        while :attr:`root_symbols` is set (the roots as states, :attr:`roots_state`), those symbols."""
        if self.root_symbols is not None:
            return list(self.root_symbols)
        return self.explicit_roots(d)

    def explicit_roots(self, d: ca.SX) -> list[ca.SX]:
        """beta_i(d) as explicit functions of the free length d [m] (the fit and one Newton step of eq. 38)."""
        M = self.tip_mass / (self.rho * d)
        out = []
        for fit in self._roots:
            t = (2 * d - fit.domain[0] - fit.domain[1]) / (fit.domain[1] - fit.domain[0])
            b1, b2 = 0, 0  # Clenshaw
            for c in fit.coef[:0:-1]:
                b1, b2 = c + 2 * t * b1 - b2, b1
            beta = fit.coef[0] + t * b1 - b2
            f, slope, _ = _FREQUENCY_EQUATION(beta, M)
            out.append(beta - f / slope)
        return out

    def root_slopes(self, beta: ca.SX, d: ca.SX) -> ca.SX:
        """d beta_i / d d (modes,) [1/m] at roots ``beta`` and free length d: seed 004 eqs. 45-47 (the implicit
        derivative of eq. 38, -f_M dM/dd / f_beta, with M = m_p / (rho d): dM/dd = -m_p / (rho d^2), the m_p
        erratum); times d_dot it is the roots' rate."""
        M = self.tip_mass / (self.rho * d)
        dM = -self.tip_mass / (self.rho * d ** 2)
        slopes = []
        for k in range(self.modes):
            _, f_beta, f_M = _FREQUENCY_EQUATION(beta[k], M)
            slopes.append(-f_M * dM / f_beta)
        return ca.vertcat(*slopes)

    def _mode_constants(self, d: ca.SX) -> list[tuple[ca.SX, ca.SX, ca.SX]]:
        """[(beta_i, nu_i, 1 / sqrt(int_0^1 phi_i^2)) per mode] at free length d (eqs. 10, 13, 38), built once per
        expression d (every material point of a Lagrangian shares them)."""
        cached = self._functions.get("constants")
        if cached is not None and ca.is_equal(cached[0], d, 1) and cached[2] is self.root_symbols:
            return cached[1]
        M = self.tip_mass / (self.rho * d)
        x, w = np.polynomial.legendre.leggauss(16)
        out = []
        for beta in self.roots(d):
            nu = (ca.sin(beta) - ca.sinh(beta) + M * beta * (ca.cos(beta) - ca.cosh(beta))) / \
                (ca.cos(beta) + ca.cosh(beta) - M * beta * (ca.sin(beta) - ca.sinh(beta)))
            norm = sum(wg / 2 * _eigenfunction(beta, nu, (xg + 1) / 2) ** 2 for xg, wg in zip(x, w))
            out.append((beta, nu, 1 / ca.sqrt(norm)))
        self._functions["constants"] = (d, out, self.root_symbols)
        return out

    def mode_shapes(self, d: ca.SX, eta: ca.SX | float, derivative: int = 0) -> ca.SX:
        """(1, modes) clamped-mass eigenfunctions (eqs. 9-10, J = D = 0) or their derivatives d^k/deta^k at the
        normalized coordinate eta = xi / d, normalized by eq. 13 (int_0^1 psi^2 deta = 1, 16 Gauss points)."""
        return ca.horzcat(*(_eigenfunction(beta, nu, eta, derivative) * scale
                            for beta, nu, scale in self._mode_constants(d)))

    def deflection(self, eta: ca.SX, d: ca.SX, element: int, r: ca.SX) -> ca.SX:
        """Deflection vector (3, 1) [m] in the joint frame at local coordinate r in [0, 1] of ``element`` for free
        length d."""
        shapes = self.mode_shapes(d, r) if self.modes else _hermite(r, d / self.elements)
        out = ca.SX.zeros(3, 1)
        for plane in range(self.planes):
            dofs = eta[plane * self.m_plane:(plane + 1) * self.m_plane] if self.modes else \
                self._plane_dofs(eta, plane, element)
            w = ca.mtimes(shapes, dofs)
            out += ca.DM(self.rotation[:, 1 + plane].reshape(3, 1)) * w
        return out

    @property
    def segments(self) -> int:
        """Integration segments of the free part: the elements, or one for assumed modes."""
        return 1 if self.modes else self.elements

    def quadrature(self, d: ca.SX) -> list[tuple[int | None, ca.SX, ca.SX]]:
        """[(segment or None for the rigid part, xi of the point [m], weight [kg])] at free length d: Gauss points on
        [0, d] (4 per element, exact; 16 for the assumed modes), 2 on the rigid part [d - l0, 0] (exact), and the tip
        mass at xi = d (last segment)."""
        points = []
        h = d / self.segments
        s4, w4 = np.polynomial.legendre.leggauss(16 if self.modes else 4)
        for e in range(self.segments):
            for sg, wg in zip(s4, w4):
                points.append((e, (e + (sg + 1) / 2) * h, self.rho * h * wg / 2))
        s2, w2 = np.polynomial.legendre.leggauss(2)
        inside = self.length - d
        for sg, wg in zip(s2, w2):
            points.append((None, -inside * (1 - sg) / 2, self.rho * inside * wg / 2))
        if self.tip_mass:
            points.append((self.segments - 1, d, ca.SX(self.tip_mass)))
        return points

    def position(self, eta: ca.SX, d: ca.SX, label: ca.SX, segment: int | None) -> ca.SX:
        """Position (3, 1) [m] in the joint frame J of the material point at distance ``label`` from the tip,
        in ``segment`` of the free part (None: inside the hub)."""
        xi = d - label
        point = ca.DM(self.axis.reshape(3, 1)) * xi
        if segment is None:
            return point
        h = d / self.segments
        return point + self.deflection(eta, d, segment, xi / h - segment)

    def strain_energy(self, eta: ca.SX, d: ca.SX) -> ca.SX:
        """1/2 EI int_0^d (w'')^2 dxi [J]: element by element (elements of length d / N), or 1/2 EI / d^3
        int_0^1 (psi'' q)^2 deta by 16 Gauss points for the assumed modes."""
        energy = 0
        if self.modes:
            x, w = np.polynomial.legendre.leggauss(16)
            for plane, EI in enumerate(self.stiffnesses):
                q = eta[plane * self.m_plane:(plane + 1) * self.m_plane]
                for xg, wg in zip(x, w):
                    curvature = ca.mtimes(self.mode_shapes(d, (xg + 1) / 2, derivative=2), q)
                    energy += 0.5 * EI / d ** 3 * wg / 2 * curvature ** 2
            return energy
        h = d / self.elements
        for plane, EI in enumerate(self.stiffnesses):
            K = _element_stiffness(EI, h)
            for e in range(self.elements):
                q = self._plane_dofs(eta, plane, e)
                energy += 0.5 * ca.dot(q, ca.mtimes(K, q))
        return energy

    def tip(self, eta: ca.SX, d: ca.SX) -> tuple[ca.SX, ca.SX]:
        """(w (planes,), dw/dxi (planes,)) at the tip [m, rad]: the last node's (w, theta), or psi(1) q and
        psi'(1) q / d."""
        deflections, slopes = [], []
        for plane in range(self.planes):
            q = eta[plane * self.m_plane:(plane + 1) * self.m_plane]
            if self.modes:
                deflections.append(ca.mtimes(self.mode_shapes(d, 1.0), q))
                slopes.append(ca.mtimes(self.mode_shapes(d, 1.0, derivative=1), q) / d)
            else:
                deflections.append(q[-2])
                slopes.append(q[-1])
        return ca.vertcat(*deflections), ca.vertcat(*slopes)

    def tip_values(self, eta: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
        """Numeric :meth:`tip`: (w (planes,), dw/dxi (planes,)) [m, rad] at free length d [m]."""
        if "tip" not in self._functions:
            e, x = ca.SX.sym("eta", self.m), ca.SX.sym("d")
            self._functions["tip"] = ca.Function("tip", [e, x], list(self.tip(e, x)))
        w, slope = self._functions["tip"](eta, d)
        return np.array(w).ravel(), np.array(slope).ravel()

    def axis_points(self, eta: np.ndarray, d: float, points: int = 16) -> np.ndarray:
        """(points, 3) [m] of the deformed free part in the joint frame, from the hub exit to the tip."""
        if "axis" not in self._functions:
            e, x, r = ca.SX.sym("eta", self.m), ca.SX.sym("d"), ca.SX.sym("r")
            self._functions["axis"] = [ca.Function("axis", [e, x, r], [self.deflection(e, x, k, r)])
                                       for k in range(self.segments)]
        h = d / self.segments
        out = []
        for xi in np.linspace(0.0, d, points):
            k = min(int(xi / h), self.segments - 1)
            out.append(xi * self.axis + np.array(self._functions["axis"][k](eta, d, xi / h - k)).ravel())
        return np.array(out)


__all__ = ["SlidingBeam"]
