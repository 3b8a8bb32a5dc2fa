"""The link model: a discretized Euler-Bernoulli beam attached to a link frame, and what the dynamics needs of it.

Frames. The beam lies in its *beam frame* (origin at the clamp, x along the neutral axis, y and z the bending
directions), placed in the link's body frame B (pinocchio's joint frame of the link) by ``placement``. A material
point at arc length x in [0, l] is, in B coordinates::

    r(x, eta) = p_beam + R_beam (x e_x + S(x) eta),    S(x) = [[0 ... 0], [phi_y(x)^T, 0], [0, phi_z(x)^T]]

``eta = [eta_y (m_y), eta_z (m_z)]`` are the link's elastic coordinates: modal amplitudes [m] (assumed modes) or
nodal deflections/slopes [m, rad] (finite elements) of the deflections u_y, u_z along beam y and z. A planar beam has
m_z = 0. Axial and torsional deformation and the rotary inertia of the cross section are neglected (seed 003 section
2); the foreshortening term of eq. 1b (centrifugal stiffening) is not modelled.

Mass. The beam's line density rho [kg/m] plus an optional tip point mass m_p at x = l; an optional rigid hub
(pinocchio Inertia in B) is added by the chain. Every inertia integral is a sum over a point set (Gauss-Legendre
points with weights rho w, and the tip mass), exact for finite elements and to round-off for assumed modes.

Generalized inertia of the flexible body (seed 003 eqs. 22-24, in B coordinates, twist t = [v; omega; eta_dot],
pinocchio's [linear; angular] order)::

    M(eta) = [[m 1, -[c]x, A_psi], [[c]x, J, K_r], [A_psi^T, K_r^T, M_ff]]
    c = int rho r,  J = int rho [r]x^T [r]x,  A_psi = int rho Psi,  K_r = int rho [r]x Psi,  M_ff = int rho Psi^T Psi

with Psi = R_beam S. The velocity terms gamma follow from the inertial acceleration of a material point,
``a = a_O + omega_dot x r + omega x (omega x r) + 2 omega x u_dot + u_ddot`` (a_O = v_dot + omega x v, the classical
acceleration of B's origin): the Coriolis term carries the factor 2 missing in the printed eq. 24b (docs/errata.md).

Tip kinematics (seed 003 eqs. 10-11, corrected): the deformed tip frame is the undeformed one displaced by
``delta = (0, phi_y(l) eta_y, phi_z(l) eta_z)`` and rotated by ``R_tip = Rz(a) Ry(b)`` with ``a = phi_y'(l) eta_y``
(slope of the y deflection turns the tip about z) and ``b = -phi_z'(l) eta_z``; for a planar link this is the exact
in-plane rotation by the tip slope, and the angular velocity of the tip follows from R_tip exactly (no
small-angle inconsistency between kinematics and dynamics).
"""
from __future__ import annotations

import math

import casadi as cs
import numpy as np
import pinocchio as pin
import scipy.linalg

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.beam_elements import ClampedBeamMesh
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes, ModeShapeFamily
from flexrobot_ros.model.flexible_link_specs import LINK_MODELS, BeamSpec

def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for 3-vectors (np.cross costs ~20x more on single vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrix [v]x (3, 3)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def tip_rotation_expression(a: cs.SX | float, b: cs.SX | float, left: cs.SX | None = None) -> cs.SX:
    """CasADi twin of the rotation of :meth:`BeamLink.tip_motion`: ``R_tip = Rz(a) Ry(b)`` (3, 3), the deformed tip
    frame's axes in the undeformed tip frame (module docstring, tip kinematics); a [rad] the turn about z (slope of
    w_y), b [rad] the turn about y (minus the slope of w_z). The one rule for the symbolic tip frames of fixed and
    sliding beams (:mod:`.lagrangian`, :mod:`.deformed_frames`).

    ``left`` (3, 3), optional: ``left @ Rz(a) @ Ry(b)`` multiplied left to right (a sliding beam's frame, world
    rotation times beam axes, takes the tip rotation in that order)."""
    Rz = cs.vertcat(cs.horzcat(cs.cos(a), -cs.sin(a), 0), cs.horzcat(cs.sin(a), cs.cos(a), 0), cs.horzcat(0, 0, 1))
    Ry = cs.vertcat(cs.horzcat(cs.cos(b), 0, cs.sin(b)), cs.horzcat(0, 1, 0), cs.horzcat(-cs.sin(b), 0, cs.cos(b)))
    return Rz @ Ry if left is None else left @ Rz @ Ry


def beam_frame(direction: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Rotation (3, 3) of a beam frame whose x axis is ``direction`` and z axis is ``up`` made orthogonal to it
    (the body frame's joint axis for DH-like links; any other axis when ``up`` is parallel to the beam)."""
    x = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    for candidate in (np.asarray(up, dtype=float), np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])):
        z = candidate - x * (x @ candidate)
        if np.linalg.norm(z) > 1e-9:
            z = z / np.linalg.norm(z)
            return np.column_stack([x, np.cross(z, x), z])
    raise ModelError("beam frame: cannot build axes")  # unreachable: one candidate is always off the beam axis


def _quadrature(length: float, family: ModeShapeFamily) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre points x [m] and weights [m] over [0, length]: per element for meshes, composite otherwise."""
    if isinstance(family, ClampedBeamMesh):
        segments, order = family.elements, 5
    else:
        top = float(np.max(getattr(family, "roots", [1.0]), initial=1.0))
        segments, order = max(4, int(math.ceil(top / 2.0))), 16
    s, w = np.polynomial.legendre.leggauss(order)
    h = length / segments
    starts = np.arange(segments)[:, None] * h
    return (starts + (s + 1) * h / 2).ravel(), np.tile(w * h / 2, segments)


class BeamLink:
    """A flexible link's beam, discretized, with every quantity the chain dynamics needs (B coordinates)."""

    def __init__(self, name: str, length: float, rho: float, EI_y: float, EI_z: float | None,
                 family_y: ModeShapeFamily, family_z: ModeShapeFamily | None, rotation: np.ndarray,
                 origin: np.ndarray, tip_mass: float = 0.0, damping_ratio: float = 0.0):
        self.name = name
        self.length, self.rho = float(length), float(rho)
        self.EI_y, self.EI_z = float(EI_y), (None if EI_z is None else float(EI_z))
        self.family_y, self.family_z = family_y, family_z
        self.rotation = np.asarray(rotation, dtype=float)
        self.origin = np.asarray(origin, dtype=float)
        self.tip_mass = float(tip_mass)
        self.damping_ratio = float(damping_ratio)
        self.m_y = family_y.count
        self.m_z = 0 if family_z is None else family_z.count
        self.m = self.m_y + self.m_z
        self._prepare()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_spec(cls, spec: BeamSpec, length: float, rho: float, rotation: np.ndarray, origin: np.ndarray,
                  modes: int | None = None, elements: int | None = None, method: str | None = None) -> "BeamLink":
        """Build from a YAML spec and the geometry; ``method``/``modes``/``elements`` override the spec.

        The clamped_mass family (seed 004 eqs. 9-13, 38) uses the spec's ``tip`` parameters per bending plane, or
        without them the beam's own tip mass, M = tip_mass / (rho l), J = D = 0."""
        method = method or spec.method
        if method == "assumed_modes" and spec.family == "clamped_mass":
            from flexrobot_ros.flexible_links.clamped_mass import ClampedMassModes, ClampedMassParameters

            count = spec.modes if modes is None else modes
            tips = spec.tip or (ClampedMassParameters(M=spec.tip_mass / (rho * length)),) * 2
            families = [ClampedMassModes(length, count, tip, source=f"link {spec.link}") for tip in tips]
            return cls(spec.link, length, rho, spec.EI_y, spec.EI_z, families[0],
                       None if spec.EI_z is None else families[1], rotation, origin, spec.tip_mass,
                       spec.damping_ratio)
        if method == "assumed_modes":
            count = spec.modes if modes is None else modes
            make = lambda: ClampedFreeModes(length, count)  # noqa: E731
        elif method == "finite_elements":
            count = spec.elements if elements is None else elements
            make = lambda: ClampedBeamMesh(length, count)  # noqa: E731
        else:
            raise ModelError(f"link {spec.link}: method: expected one of {LINK_MODELS}, got {method!r}")
        return cls(spec.link, length, rho, spec.EI_y, spec.EI_z, make(), None if spec.EI_z is None else make(),
                   rotation, origin, spec.tip_mass, spec.damping_ratio)

    def _shape_matrix(self, x: np.ndarray, derivative: int = 0) -> np.ndarray:
        """S(x) (len(x), 3, m) in beam axes."""
        out = np.zeros((len(x), 3, self.m))
        out[:, 1, :self.m_y] = self.family_y.evaluate(x, derivative)
        if self.m_z:
            out[:, 2, self.m_y:] = self.family_z.evaluate(x, derivative)
        return out

    def _prepare(self) -> None:
        x, w = _quadrature(self.length, self.family_y)
        weights = np.append(self.rho * w, self.tip_mass)
        x = np.append(x, self.length)
        R, p = self.rotation, self.origin
        r0 = p[None, :] + x[:, None] * R[:, 0][None, :]                          # (Q, 3)
        psi = np.einsum("ab,qbj->qaj", R, self._shape_matrix(x))                   # (Q, 3, m)
        self.mass = float(weights.sum())
        self.c0 = weights @ r0
        self.sigma0 = np.einsum("q,qa,qb->ab", weights, r0, r0)
        self.a_psi = np.einsum("q,qaj->aj", weights, psi)
        self.T1 = np.einsum("q,qa,qbj->abj", weights, r0, psi)                    # int r0_a Psi_bj
        self.W = np.einsum("q,qaj,qbk->ajbk", weights, psi, psi)                   # int Psi_aj Psi_bk
        self.M_ff = np.einsum("ajak->jk", self.W)
        eps = np.zeros((3, 3, 3))
        eps[0, 1, 2] = eps[1, 2, 0] = eps[2, 0, 1] = 1.0
        eps[0, 2, 1] = eps[2, 1, 0] = eps[1, 0, 2] = -1.0
        self.K0 = np.einsum("abc,qb,qck,q->ak", eps, r0, psi, weights)             # int [r0]x Psi
        self.K1 = np.einsum("abc,bjck->ajk", eps, self.W)                           # int Psi_j x Psi_k
        self.stiffness = self._stiffness()
        self.damping = self._modal_damping()
        tip = np.array([self.length])
        s_tip, slope = self._shape_matrix(tip)[0], self._shape_matrix(tip, 1)[0]
        self.tip_deflection = s_tip                                                  # (3, m), beam axes
        self.tip_slope_y = slope[1]                                                  # dw_y/dx (m,)
        self.tip_slope_z = slope[2]                                                  # dw_z/dx (m,)

    def _stiffness(self) -> np.ndarray:
        K = np.zeros((self.m, self.m))
        for family, EI, block in ((self.family_y, self.EI_y, slice(0, self.m_y)),
                                  (self.family_z, self.EI_z, slice(self.m_y, self.m))):
            if family is None or family.count == 0:
                continue
            if isinstance(family, ClampedBeamMesh):
                K[block, block] = family.stiffness(EI)
            else:
                x, w = _quadrature(self.length, family)
                curvature = family.evaluate(x, 2)
                K[block, block] = EI * (curvature.T * w) @ curvature
        return K

    def _modal_damping(self) -> np.ndarray:
        if self.m == 0 or self.damping_ratio == 0.0:
            return np.zeros((self.m, self.m))
        values, vectors = scipy.linalg.eigh(self.stiffness, self.M_ff)
        modal = self.M_ff @ vectors
        return modal @ np.diag(2.0 * self.damping_ratio * np.sqrt(np.clip(values, 0.0, None))) @ modal.T

    # ------------------------------------------------------------------ clamped link
    def clamped_frequencies_rad_s(self) -> np.ndarray:
        """Natural frequencies (m,) [rad/s] of the link clamped at its root, ascending (generalized eigenproblem
        K v = w^2 M_ff v of the discretized beam, tip mass included)."""
        if self.m == 0:
            return np.zeros(0)
        values = scipy.linalg.eigh(self.stiffness, self.M_ff, eigvals_only=True)
        return np.sqrt(np.clip(values, 0.0, None))

    # ------------------------------------------------------------------ configuration-dependent inertia
    def inertia(self, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(M (6+m, 6+m), c (3,), J (3, 3), G (3, 3, m)) at elastic coordinates ``eta``; G[:, :, j] = int rho r
        Psi_j^T is reused by :meth:`velocity_terms`."""
        m = self.m
        c = self.c0 + self.a_psi @ eta
        t1 = self.T1 @ eta
        quadratic = np.einsum("ajbk,j,k->ab", self.W, eta, eta)
        sigma = self.sigma0 + t1 + t1.T + quadratic
        J = np.trace(sigma) * np.eye(3) - sigma
        K_r = self.K0 + np.einsum("ajk,j->ak", self.K1, eta)
        M = np.zeros((6 + m, 6 + m))
        M[:3, :3] = self.mass * np.eye(3)
        M[:3, 3:6] = -skew(c)
        M[3:6, :3] = skew(c)
        M[3:6, 3:6] = J
        M[:3, 6:] = self.a_psi
        M[6:, :3] = self.a_psi.T
        M[3:6, 6:] = K_r
        M[6:, 3:6] = K_r.T
        M[6:, 6:] = self.M_ff
        G = self.T1 + np.einsum("akbj,k->abj", self.W, eta)
        return M, c, J, G

    def velocity_terms(self, v: np.ndarray, omega: np.ndarray, eta: np.ndarray, eta_dot: np.ndarray,
                       c: np.ndarray, J: np.ndarray, G: np.ndarray) -> np.ndarray:
        """gamma (6+m,): convective inertia forces (with the Coriolis factor 2) plus strain K eta and damping."""
        w_v = cross(omega, v)
        u_dot_first = self.a_psi @ eta_dot                                          # int rho u_dot
        f = self.mass * w_v + cross(omega, cross(omega, c)) + 2.0 * cross(omega, u_dot_first)
        H = np.einsum("abj,j->ba", G, eta_dot)                                      # int rho u_dot r^T
        n = cross(c, w_v) + cross(omega, J @ omega) + 2.0 * (omega * np.trace(H) - H @ omega)
        q = (self.a_psi.T @ w_v + np.einsum("a,abj,b->j", omega, G, omega)
             - (omega @ omega) * np.einsum("aaj->j", G)
             + 2.0 * np.einsum("a,akj,k->j", omega, self.K1, eta_dot)
             + self.stiffness @ eta + self.damping @ eta_dot)
        return np.concatenate([f, n, q])

    def kinetic_energy(self, t: np.ndarray, eta: np.ndarray) -> float:
        """1/2 t^T M(eta) t [J] for the body twist t = [v; omega; eta_dot] in B coordinates."""
        return 0.5 * float(t @ self.inertia(eta)[0] @ t)

    def strain_energy(self, eta: np.ndarray) -> float:
        """1/2 eta^T K eta [J] (seed 003 eq. 20b)."""
        return 0.5 * float(eta @ self.stiffness @ eta)

    # ------------------------------------------------------------------ tip frame
    def tip_angles(self, eta: np.ndarray) -> tuple[float, float]:
        """(a, b): rotation of the tip about beam z (slope of w_y) and about beam y (minus slope of w_z) [rad]."""
        return float(self.tip_slope_y @ eta), float(-self.tip_slope_z @ eta)

    def tip_motion(self, eta: np.ndarray, eta_dot: np.ndarray) -> tuple[pin.SE3, np.ndarray, np.ndarray]:
        """Deformation of the tip frame, in beam axes at the undeformed tip.

        Returns (D, G, bias): D the deformed tip frame relative to the undeformed one; G (6, m) maps eta_dot to
        the tip frame's twist relative to the link, in the deformed tip frame ([linear; angular]); bias (6,) is
        dG/dt eta_dot (the relative acceleration at eta_ddot = 0) in the same frame.
        """
        a, b = self.tip_angles(eta)
        ca, sa, cb, sb = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
        Rz = np.array([[ca, -sa, 0.0], [sa, ca, 0.0], [0.0, 0.0, 1.0]])
        Ry = np.array([[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]])
        R = Rz @ Ry
        D = pin.SE3(R, self.tip_deflection @ eta)
        da = self.tip_slope_y
        db = -self.tip_slope_z
        G = np.zeros((6, self.m))
        G[:3] = R.T @ self.tip_deflection
        G[3:] = np.outer([-sb, 0.0, cb], da) + np.outer([0.0, 1.0, 0.0], db)
        adot, bdot = float(da @ eta_dot), float(db @ eta_dot)
        v_rel, w_rel = G[:3] @ eta_dot, G[3:] @ eta_dot
        bias = np.concatenate([-cross(w_rel, v_rel), [-cb * bdot * adot, 0.0, -sb * bdot * adot]])
        return D, G, bias

    def undeformed_tip(self) -> pin.SE3:
        """The undeformed tip frame (beam axes at x = l) in B."""
        return pin.SE3(self.rotation, self.origin + self.length * self.rotation[:, 0])

    def deformed_axis(self, eta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(len(x), 3) [m] points of the deformed beam axis at arc lengths ``x`` in B: origin + R (x e_x + S(x) eta)."""
        x = np.asarray(x, dtype=float)
        local = np.column_stack([x, np.zeros((len(x), 2))]) + self._shape_matrix(x) @ eta
        return self.origin[None, :] + local @ self.rotation.T

    def deflection(self, eta: np.ndarray, x: float | None = None) -> np.ndarray:
        """(w_y, w_z) [m] at arc length ``x`` (default the tip), beam axes."""
        at = self.length if x is None else x
        return self._shape_matrix(np.array([at]))[0, 1:] @ eta


__all__ = ["BeamLink", "BeamSpec", "LINK_MODELS", "beam_frame", "cross", "skew"]
