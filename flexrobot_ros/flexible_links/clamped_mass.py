"""Clamped-mass assumed modes of an Euler-Bernoulli link, with roots that may change in time (seed 004).

A uniform beam of length ``l`` [m], mass per length ``rho A`` [kg/m] and bending stiffness ``EI`` [N m^2] is
clamped at its proximal (joint) end and carries at its distal end whatever lies beyond it, seen as one rigid body
in the bending plane: mass ``M_L`` [kg], first moment ``M_DL`` [kg m] (mass times the offset of its centre of mass
from the tip along the beam axis) and rotary inertia ``J_L`` [kg m^2] about the bending axis through the tip.
In the normalized coordinate eta = x / l the transverse modes are (seed 004 eqs. 9-13)::

    psi_i(eta) = C_i [cos(beta_i eta) - cosh(beta_i eta) + nu_i (sin(beta_i eta) - sinh(beta_i eta))]   (9)
    nu_i = [s - sh + M b (c - ch) - D b^2 (s + sh)] / [c + ch - M b (s - sh) - D b^2 (c - ch)]           (10)
    f(b, M, J, D) = (1 + ch c) - M b (ch s - sh c) - J b^3 (ch s + sh c) + M J b^4 (1 - ch c)
                    - D^2 b^4 (1 - ch c) - 2 D b^2 sh s = 0                                              (11 = 38)
    M = M_L / (rho A l),   J = J_L / (rho A l^3),   D = M_DL / (rho A l^2)                               (12)
    int_0^1 psi_i^2 d eta = 1                                                                            (13)

(b = beta_i, c = cos b, s = sin b, ch = cosh b, sh = sinh b), with natural frequencies
omega_i = beta_i^2 sqrt(EI / (rho A l^4)) [rad/s].  The boundary conditions behind eqs. 10-11, in eta-derivatives,
are psi(0) = psi'(0) = 0 and, at the tip (shear and moment balance with the tip body),
psi'''(1) = -beta^4 (M psi(1) + D psi'(1)) and psi''(1) = beta^4 (D psi(1) + J psi'(1)).
With M = J = D = 0 the family is the clamped-free (cantilever) one.

Numerics.  cosh and sinh grow like e^beta, so every function is evaluated in a form divided by cosh(beta) (the
frequency equation, its derivatives) or with the growing exponential written as e^(beta (eta - 1)) (the mode
shapes); nothing cancels catastrophically for large beta or large M, J.  The roots are isolated with the
Wittrick-Williams count (the number of eigenvalues below a trial beta is the number of clamped-clamped beam
eigenvalues below it plus the number of negative eigenvalues of the tip's 2x2 dynamic stiffness minus the tip
body's inertia), so no root is missed or counted twice however close the roots come or however large the tip
body is; each isolated root is then polished with Brent's method on the scaled frequency equation.

Time-varying roots (seed 004 section 4.2).  When M, J, D change with the configuration (a prismatic link whose free
length l(t) changes, distal links that move), the roots follow eq. 40,
d beta_i/dt = -(f_M dM/dt + f_J dJ/dt + f_D dD/dt) / f_beta, with the partial derivatives of eqs. 41-44.  For
the paper's prismatic link 3 (tip payload m_p only) it reduces to eqs. 45-47, where the printed m_p^2 in eq. 47
must read m_p (docs/errata.md).  :class:`PrismaticLinkRoots` offers that differential form (the roots become states
integrated with the plant's state) or a root solve per step.  For a revolute link whose distal links move,
:func:`tip_body_from_model` and :func:`tip_body_rate_from_model` give the tip body and its rate from a pinocchio
model at (q, qd), :func:`parameter_rates` turns them into dM/dt, dJ/dt, dD/dt and :func:`roots_rate` into eq. 40.

:class:`ClampedMassModes` follows the link layer's ModeShapeFamily protocol (:mod:`.mode_shapes`: ``length``,
``count``, ``roots``, ``evaluate(x, derivative)``, ``frequencies_rad_s``), so a BeamLink can use it directly.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pinocchio as pin
from scipy.optimize import brentq

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.flexible_link_specs import ClampedMassParameters

ROOT_METHODS = ("differential", "solve")
_XTOL = 1e-14  # absolute tolerance of the polished roots (beta is O(1)..O(100))


# ----------------------------------------------------------------------------------------------------------------
# Tip body and dimensionless parameters (eq. 12)

@dataclass(frozen=True)
class TipBody:
    """What lies beyond a flexible link, seen at its tip in one bending plane.

    mass: M_L [kg]; first_moment: M_DL [kg m], mass times the offset of the centre of mass from the tip along the
    beam axis (positive outward); inertia: J_L [kg m^2] about the bending (rotation) axis through the tip.
    """

    mass: float = 0.0
    first_moment: float = 0.0
    inertia: float = 0.0


def tip_body_from_distal(masses: Sequence[float], coms: Any, inertias: Any, beam_axis: Any,
                         deflection_axis: Any, source: str = "tip body") -> TipBody:
    """The tip body of one bending plane from the rigid bodies beyond the link (frozen in their current pose).

    masses [kg]; coms (k, 3) [m]: centres of mass relative to the link tip; inertias (k, 3, 3) [kg m^2]: about each
    centre of mass; all in one frame (e.g. the link-tip frame).  beam_axis: the undeformed beam direction;
    deflection_axis: the direction of the transverse deflection in this plane (orthogonal to the beam axis).
    A point r of a distal body moves by w (deflection) + theta n x r with n = beam_axis x deflection_axis and
    theta = dw/dx, so its kinetic energy is (M_L w_dot^2 + 2 M_DL w_dot theta_dot + J_L theta_dot^2) / 2 with
    M_L = sum m, M_DL = sum m (c . beam_axis), J_L = n . (sum I_c + m (|c|^2 1 - c c^T)) n.
    """
    m = np.asarray(masses, dtype=float).reshape(-1)
    c = np.asarray(coms, dtype=float).reshape(-1, 3)
    inertia = np.asarray(inertias, dtype=float).reshape(-1, 3, 3)
    if not (len(m) == len(c) == len(inertia)):
        raise ModelError(f"{source}: masses ({len(m)}), coms ({len(c)}) and inertias ({len(inertia)}) must have "
                         "one entry per distal body")
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(c)) and np.all(np.isfinite(inertia))):
        raise ModelError(f"{source}: masses, coms and inertias must be finite")
    if np.any(m < 0.0):
        raise ModelError(f"{source}: masses must be >= 0, got {m.tolist()}")
    a = np.asarray(beam_axis, dtype=float).reshape(3)
    d = np.asarray(deflection_axis, dtype=float).reshape(3)
    if np.linalg.norm(a) == 0.0 or np.linalg.norm(d) == 0.0:
        raise ModelError(f"{source}: beam_axis and deflection_axis must be nonzero vectors")
    a, d = a / np.linalg.norm(a), d / np.linalg.norm(d)
    if abs(a @ d) > 1e-9:
        raise ModelError(f"{source}: deflection_axis {d.tolist()} must be orthogonal to beam_axis {a.tolist()}")
    n = np.cross(a, d)
    tip_inertia = inertia.sum(axis=0) + np.einsum("k,kij->ij", m, (np.einsum("ki,ki->k", c, c)[:, None, None]
                                                                   * np.eye(3) - np.einsum("ki,kj->kij", c, c)))
    mass, first_moment, rotary = float(m.sum()), float(m @ (c @ a)), float(n @ tip_inertia @ n)
    # M_L J_L >= M_DL^2 holds exactly for bodies; keep it through round-off (bodies on the rotation axis, ...)
    if first_moment ** 2 > mass * rotary and first_moment ** 2 - mass * rotary <= 1e-12 * mass * np.trace(tip_inertia):
        rotary = first_moment ** 2 / mass
    return TipBody(mass=mass, first_moment=first_moment, inertia=rotary)


def tip_body_from_model(model: pin.Model, joint: int, q: Any, tip: pin.SE3, beam_axis: Any, deflection_axis: Any,
                        source: str = "tip body", inertias: Mapping[int, pin.Inertia] | None = None) -> TipBody:
    """The tip body of the link carried by joint index ``joint`` of a pinocchio model, at configuration ``q``.

    Everything beyond the link (the rigid inertias of every joint of its subtree but its own, frozen at ``q``; a
    payload the model carries is included) is seen at the link's end ``tip``, the placement of the end in the
    joint's frame; ``beam_axis`` and ``deflection_axis`` are in the ``tip`` frame (see :func:`tip_body_from_distal`).
    ``inertias`` replaces ``model.inertias[k]`` (in joint k's frame) for the joints it names: the bodies as the
    dynamics has them where they differ from the URDF (a sliding beam with its payload).
    It depends on ``q`` when distal joints move (M_DL, J_L) -- seed 004 section 2.1.1.
    """
    if not 0 < joint < model.njoints:
        raise ModelError(f"{source}: joint index {joint} is not a movable joint of the model (1..{model.njoints - 1})")
    data = model.createData()
    pin.forwardKinematics(model, data, np.asarray(q, dtype=float))
    world_tip = data.oMi[joint] * tip
    total = pin.Inertia.Zero()
    inertias = inertias or {}
    for k in list(model.subtrees[joint])[1:]:
        total += world_tip.actInv(data.oMi[k]).act(inertias.get(k, model.inertias[k]))
    return tip_body_from_distal([total.mass], [total.lever], [total.inertia], beam_axis, deflection_axis, source)


def tip_body_rate_from_model(model: pin.Model, joint: int, q: Any, qd: Any, tip: pin.SE3, beam_axis: Any,
                             deflection_axis: Any, source: str = "tip body",
                             inertias: Mapping[int, pin.Inertia] | None = None) -> TipBody:
    """d/dt of :func:`tip_body_from_model` along the joint velocity ``qd``: (dM_L/dt, dM_DL/dt, dJ_L/dt).

    The tip body is a smooth function of q; its derivative along qd is taken by a central difference with a step
    of 1e-6 / |qd| in q (pinocchio's integrate), accurate to ~1e-9 relative.  With :func:`roots_rate` it moves the
    roots of a revolute link whose distal links move (eq. 40).
    """
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    speed = float(np.linalg.norm(qd))
    if speed == 0.0:
        return TipBody(0.0, 0.0, 0.0)
    h = 1e-6 / speed
    ahead = tip_body_from_model(model, joint, pin.integrate(model, q, h * qd), tip, beam_axis, deflection_axis,
                                source, inertias)
    behind = tip_body_from_model(model, joint, pin.integrate(model, q, -h * qd), tip, beam_axis, deflection_axis,
                                 source, inertias)
    return TipBody(mass=(ahead.mass - behind.mass) / (2 * h),
                   first_moment=(ahead.first_moment - behind.first_moment) / (2 * h),
                   inertia=(ahead.inertia - behind.inertia) / (2 * h))


# ----------------------------------------------------------------------------------------------------------------
# Frequency equation and its derivatives (eqs. 38, 41-44)

def _sech(beta: Any) -> np.ndarray:
    """1 / cosh(beta) without overflow for large |beta|."""
    e = np.exp(-np.abs(np.asarray(beta, dtype=float)))
    return 2.0 * e / (1.0 + e * e)


def _scaled_frequency_equation(beta: Any, M: float, J: float, D: float) -> np.ndarray:
    """f(beta, M, J, D) / cosh(beta): the same roots and signs, growing only polynomially."""
    b = np.asarray(beta, dtype=float)
    c, s, th, se = np.cos(b), np.sin(b), np.tanh(b), _sech(b)
    b2 = b * b
    return ((se + c) - M * b * (s - th * c) - J * b2 * b * (s + th * c) + (M * J - D * D) * b2 * b2 * (se - c)
            - 2.0 * D * b2 * th * s)


def frequency_equation(beta: Any, M: float = 0.0, J: float = 0.0, D: float = 0.0) -> np.ndarray:
    """f(beta, M, J, D) of seed 004 eq. 11 (= eq. 38), elementwise over ``beta``."""
    b = np.asarray(beta, dtype=float)
    return _scaled_frequency_equation(b, M, J, D) * np.cosh(b)


@dataclass(frozen=True)
class FrequencyDerivatives:
    """Partial derivatives of f(beta, M, J, D) (seed 004 eqs. 41-44), arrays shaped like beta."""

    d_beta: np.ndarray  # eq. 44
    d_M: np.ndarray  # eq. 41
    d_J: np.ndarray  # eq. 42
    d_D: np.ndarray  # eq. 43


def _scaled_derivatives(beta: Any, M: float, J: float, D: float) -> FrequencyDerivatives:
    """Eqs. 41-44 divided by cosh(beta) (their ratios, as in eq. 40, are unchanged)."""
    b = np.asarray(beta, dtype=float)
    c, s, th, se = np.cos(b), np.sin(b), np.tanh(b), _sech(b)
    b2 = b * b
    e = D * D - M * J
    d_beta = (th * c * (1.0 + M - b2 * (2.0 * D + 3.0 * J) + b2 * b2 * e)
              - s * (1.0 + M + b2 * (2.0 * D + 3.0 * J) + b2 * b2 * e)
              - 2.0 * b2 * b * c * (J - 2.0 * e)
              - 2.0 * b * th * s * (M + 2.0 * D)
              - 4.0 * b2 * b * e * se)
    d_M = b * (th * c - s + b2 * b * J * (se - c))
    d_J = -b2 * b * (th * c + s - b * M * (se - c))
    d_D = -2.0 * b2 * (th * s + b2 * D * (se - c))
    return FrequencyDerivatives(d_beta=d_beta, d_M=d_M, d_J=d_J, d_D=d_D)


def frequency_equation_derivatives(beta: Any, M: float = 0.0, J: float = 0.0, D: float = 0.0) -> FrequencyDerivatives:
    """df/dbeta, df/dM, df/dJ, df/dD of eq. 38 as printed in seed 004 eqs. 44, 41, 42, 43."""
    b = np.asarray(beta, dtype=float)
    scaled, ch = _scaled_derivatives(b, M, J, D), np.cosh(b)
    return FrequencyDerivatives(d_beta=scaled.d_beta * ch, d_M=scaled.d_M * ch, d_J=scaled.d_J * ch,
                                d_D=scaled.d_D * ch)


def parameter_rates(tip: TipBody, tip_rate: TipBody, mass_per_length: float, length: float,
                    length_rate: float = 0.0) -> ClampedMassParameters:
    """dM/dt, dJ/dt, dD/dt of eq. 12 when the tip body changes at ``tip_rate`` (d/dt of its three fields) and the
    free length at ``length_rate`` [m/s] (a prismatic link), as a ClampedMassParameters of rates (not validated)."""
    rel = length_rate / length
    rho_a_l = mass_per_length * length
    return ClampedMassParameters(M=(tip_rate.mass - tip.mass * rel) / rho_a_l,
                                 J=(tip_rate.inertia - 3.0 * tip.inertia * rel) / (rho_a_l * length * length),
                                 D=(tip_rate.first_moment - 2.0 * tip.first_moment * rel) / (rho_a_l * length))


def roots_rate(beta: Any, params: ClampedMassParameters, params_rate: ClampedMassParameters) -> np.ndarray:
    """d beta_i / dt of eq. 40 at roots ``beta`` when M, J, D change at the rates dM/dt, dJ/dt, dD/dt."""
    d = _scaled_derivatives(beta, params.M, params.J, params.D)
    return -(d.d_M * params_rate.M + d.d_J * params_rate.J + d.d_D * params_rate.D) / d.d_beta


# ----------------------------------------------------------------------------------------------------------------
# Root isolation (Wittrick-Williams count) and polishing

def _clamped_clamped_count(beta: float) -> int:
    """Number of roots of cos(b) cosh(b) = 1 in (0, beta): clamped-clamped beam eigenvalues below beta.

    Root k >= 1 lies within about 2 e^-((k + 1/2) pi) of (k + 1/2) pi, where h = cos(b) - sech(b) changes sign
    from (-1)^k to (-1)^(k+1), and is the only root of h in [k pi, (k + 1) pi].
    """
    m = int(math.floor(beta / math.pi))  # beta is within pi/2 of the candidate (m + 1/2) pi
    if m < 1:
        return 0
    h = math.cos(beta) - float(_sech(beta))
    passed = (h > 0.0) == (m % 2 == 1)  # sign of h after root m is (-1)^(m+1)
    return (m - 1) + (1 if passed else 0)


def _tip_dynamic_stiffness(beta: float) -> np.ndarray:
    """2x2 dynamic stiffness (tip deflection, tip slope) -> (shear force, moment) of a clamped beam, / (EI / l^3, ...).

    Dimensionless (EI = l = 1, eta-derivatives): K = [[b^3 (c th + s), -b^2 s th], [-b^2 s th, b (s - c th)]]
    / (sech - c); its static limit is [[12, -6], [-6, 4]].
    """
    if beta < 0.05:  # series about the static limit (the closed form loses ~eps / beta^2 to cancellation)
        return np.array([[12.0, -6.0], [-6.0, 4.0]]) - beta ** 4 * np.array([[13.0 / 35.0, -11.0 / 210.0],
                                                                              [-11.0 / 210.0, 1.0 / 105.0]])
    c, s, th = math.cos(beta), math.sin(beta), math.tanh(beta)
    delta = 2.0 * math.sin(0.5 * beta) ** 2 - (1.0 - float(_sech(beta)))  # sech - cos = (1 - cos) - (1 - sech)
    if delta == 0.0:  # on a clamped-clamped eigenvalue: the stiffness is infinite
        return np.full((2, 2), np.inf)
    k_ww = beta ** 3 * (c * th + s) / delta
    k_wt = -beta * beta * s * th / delta
    k_tt = beta * (s - c * th) / delta
    return np.array([[k_ww, k_wt], [k_wt, k_tt]])


def eigenvalue_count(beta: float, params: ClampedMassParameters) -> int:
    """Number of clamped-mass eigenvalues beta_i < beta (Wittrick-Williams: J0 + s{K(beta) - beta^4 T})."""
    if beta <= 0.0:
        return 0
    k = _tip_dynamic_stiffness(beta)
    if not np.all(np.isfinite(k)):  # exactly on a clamped-clamped eigenvalue: step off it
        return eigenvalue_count(beta * (1.0 + 1e-13), params)
    b4 = beta ** 4
    dyn = k - b4 * np.array([[params.M, params.D], [params.D, params.J]])
    negative = int(np.count_nonzero(np.linalg.eigvalsh(dyn) < 0.0))
    return _clamped_clamped_count(beta) + negative


def _polish(lo: float, hi: float, params: ClampedMassParameters) -> float:
    """The single root in (lo, hi) by Brent's method on the scaled frequency equation."""
    def g(b: float) -> float:
        return float(_scaled_frequency_equation(b, params.M, params.J, params.D))

    g_lo, g_hi = g(lo), g(hi)
    if g_lo == 0.0:
        return lo
    if g_hi == 0.0:
        return hi
    if (g_lo > 0.0) == (g_hi > 0.0):
        # the count flipped within rounding of a root at an end: the root is the end whose value is smaller
        return lo if abs(g_lo) < abs(g_hi) else hi
    return float(brentq(g, lo, hi, xtol=_XTOL, rtol=4.0 * np.finfo(float).eps, maxiter=200))


def frequency_roots(count: int, params: ClampedMassParameters | None = None,
                    source: str = "clamped-mass link") -> np.ndarray:
    """The first ``count`` positive roots beta_1 < beta_2 < ... of eq. 38 (absolute accuracy ~1e-14).

    Every root is isolated in an interval holding exactly one eigenvalue by the Wittrick-Williams count, then
    polished by Brent's method, so none is missed or repeated for any M, J >= 0 and admissible D (M J >= D^2).
    """
    params = params or ClampedMassParameters()
    params.validate(source)
    if not (isinstance(count, (int, np.integer)) and count >= 0):
        raise ModelError(f"{source}: number of modes must be an integer >= 0, got {count!r}")
    count = int(count)
    if count == 0:
        return np.zeros(0)
    hi = (count + 1.0) * math.pi
    while eigenvalue_count(hi, params) < count:
        hi *= 1.5
    roots: list[float] = []
    stack = [(0.0, 0, hi, eigenvalue_count(hi, params))]  # (lo, count below lo, hi, count below hi)
    while stack:
        lo, n_lo, hi_, n_hi = stack.pop()
        if n_hi == n_lo or n_lo >= count:
            continue
        if n_hi - n_lo == 1 or hi_ - lo < 1e-12 * max(1.0, hi_):
            roots.append(_polish(max(lo, 1e-300), hi_, params))
            continue
        mid = 0.5 * (lo + hi_)
        n_mid = eigenvalue_count(mid, params)
        stack.append((mid, n_mid, hi_, n_hi))
        stack.append((lo, n_lo, mid, n_mid))
    return np.sort(np.asarray(roots))[:count]


def refine_roots(previous: Any, params: ClampedMassParameters, source: str = "clamped-mass link") -> np.ndarray:
    """The roots near ``previous`` (the roots of a nearby configuration), checked by the count; global if not.

    For a root solve per integration step: each beta_i is bracketed around its previous value and accepted only
    if the Wittrick-Williams count says the bracket holds the i-th eigenvalue and no other.
    """
    previous = np.asarray(previous, dtype=float).reshape(-1)
    out = np.empty_like(previous)
    for i, b in enumerate(previous):
        gap_below = b - (previous[i - 1] if i > 0 else 0.0)
        gap_above = (previous[i + 1] - b) if i + 1 < len(previous) else gap_below
        half = 0.25 * min(gap_below, gap_above)
        lo, hi = b - half, b + half
        if not (lo > 0.0 and eigenvalue_count(lo, params) == i and eigenvalue_count(hi, params) == i + 1):
            return frequency_roots(len(previous), params, source)
        out[i] = _polish(lo, hi, params)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Eigenfunctions (eqs. 9-10, 13)

def _shape_coefficients(beta: float, params: ClampedMassParameters) -> tuple[float, float, float, float]:
    """(a, b, p, q) with psi / C = a (cos - cosh) + b (sin - sinh) in the scaled form
    a cos + b sin - p e^(beta (eta - 1)) / 2 - q e^(-beta eta) / 2, all O(1) for any beta.

    (a, b) are proportional to (denominator, numerator) of eq. 10 times e^-beta, so b / a = nu;
    p = (a + b) e^beta and q = a - b.
    """
    M, D = params.M, params.D
    c, s = math.cos(beta), math.sin(beta)
    e1, e2 = math.exp(-beta), math.exp(-2.0 * beta)
    bb = beta * beta
    # denominator of eq. 10 times e^-beta
    a = e1 * c + 0.5 * (1.0 + e2) - M * beta * (e1 * s - 0.5 * (1.0 - e2)) - D * bb * (e1 * c - 0.5 * (1.0 + e2))
    # (numerator + denominator) of eq. 10: cosh - sinh = e^-beta, no cancellation
    p = s + c + e1 + M * beta * (c - s - e1) - D * bb * (s + c - e1)
    b = p * e1 - a
    return a, b, p, a - b


class ClampedMassModes:
    """Clamped-mass eigenfunctions of a uniform beam of ``length`` [m]: a ModeShapeFamily (see :mod:`.mode_shapes`).

    ``count`` modes for tip parameters ``params`` (eqs. 9-13), at the roots of eq. 38 or at given ``roots`` (e.g.
    integrated by eq. 40).  Normalization (eq. 13): int_0^1 psi^2 d eta = (1/l) int_0^l phi^2 dx = 1, as the
    clamped-free family.  Signs: positive curvature at the clamp (psi''(0) > 0), as the cantilever functions
    cosh - cos - sigma (sinh - sin) of :class:`.mode_shapes.ClampedFreeModes`; the paper's C_i is then negative.
    Attributes: length [m], count, params, roots (beta_i), nu (eq. 10; inf where its denominator vanishes, the
    shapes stay finite), C (eq. 9).
    """

    def __init__(self, length: float, count: int, params: ClampedMassParameters | None = None,
                 roots: Any = None, source: str = "clamped-mass link"):
        if not (isinstance(length, (int, float, np.floating)) and math.isfinite(length) and length > 0.0):
            raise ModelError(f"{source}: length must be a positive number of metres, got {length!r}")
        self.length = float(length)
        self.params = params or ClampedMassParameters()
        if roots is None:
            self.roots = frequency_roots(count, self.params, source)
        else:
            self.roots = np.asarray(roots, dtype=float).reshape(-1)
            if len(self.roots) != count or not np.all(np.isfinite(self.roots) & (self.roots > 0.0)):
                raise ModelError(f"{source}: expected {count} positive finite roots, got {self.roots.tolist()}")
        self.count = int(count)
        # psi_i = scale_i (a cos + b sin - p e^(beta (eta - 1)) / 2 - q e^(-beta eta) / 2), see _shape_coefficients
        self._coefficients = np.array([_shape_coefficients(float(b), self.params) for b in self.roots]).reshape(-1, 4)
        self._scale = np.ones(self.count)
        # exact to round-off: psi^2 oscillates ~beta / pi times; a 16-point rule per beta / 2 resolves it
        eta, weights = _gauss_legendre(4 + int(self.roots.max() if self.count else 0.0) // 2)
        norm2 = weights @ (self.shapes(eta) ** 2)
        curvature0, jerk0 = self.shapes([0.0], 2)[0], self.shapes([0.0], 3)[0]
        sign = np.where(curvature0 != 0.0, np.sign(curvature0), np.sign(jerk0))
        self._scale = sign / np.sqrt(norm2)

    @property
    def nu(self) -> np.ndarray:
        """nu_i of eq. 10."""
        with np.errstate(divide="ignore"):
            return self._coefficients[:, 1] / self._coefficients[:, 0]

    @property
    def C(self) -> np.ndarray:
        """C_i of eq. 9 (psi_i = C_i [cos - cosh + nu_i (sin - sinh)])."""
        return self._scale * self._coefficients[:, 0]

    def shapes(self, eta: Any, derivative: int = 0) -> np.ndarray:
        """d^k psi_i / d eta^k (len(eta), count) at ``eta`` = x / l in [0, 1], k = ``derivative`` in 0..4."""
        if derivative not in (0, 1, 2, 3, 4):
            raise ValueError(f"derivative must be 0..4, got {derivative!r}")
        eta = np.atleast_1d(np.asarray(eta, dtype=float))[:, None]
        b = self.roots[None, :]
        a, bc, p, q = (self._coefficients[None, :, i] for i in range(4))
        phase = b * eta + 0.5 * math.pi * derivative
        values = (a * np.cos(phase) + bc * np.sin(phase) - 0.5 * p * np.exp(b * (eta - 1.0))
                  - 0.5 * (-1.0) ** derivative * q * np.exp(-b * eta))
        return self._scale * b ** derivative * values

    def evaluate(self, x: Any, derivative: int = 0) -> np.ndarray:
        """d^k phi_i / dx^k (len(x), count) at ``x`` [m] in [0, length] (units m^-k), k in 0..4."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        return self.shapes(x / self.length, derivative) / self.length ** derivative

    def frequencies_rad_s(self, EI: float, rho: float) -> np.ndarray:
        """omega_i = beta_i^2 sqrt(EI / (rho l^4)) [rad/s] for EI [N m^2] and rho = rho A [kg/m]."""
        return self.roots ** 2 * math.sqrt(EI / (rho * self.length ** 4))


_GAUSS_16 = np.polynomial.legendre.leggauss(16)


@functools.lru_cache(maxsize=32)
def _gauss_legendre(segments: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the composite 16-point Gauss-Legendre rule on [0, 1] with ``segments`` equal parts."""
    s, w = _GAUSS_16
    starts = np.arange(segments)[:, None] / segments
    x, weights = (starts + (s + 1.0) / (2 * segments)).ravel(), np.tile(w / (2 * segments), segments)
    x.flags.writeable = weights.flags.writeable = False
    return x, weights


# ----------------------------------------------------------------------------------------------------------------
# Prismatic (sliding) link: roots as functions of the free length l(t)

@dataclass(frozen=True)
class PrismaticLinkRoots:
    """Roots beta_i(l) of a prismatic flexible link whose free length l (the joint variable d) changes in time.

    The part of the beam inside the hub is rigid and the free part of length l carries ``tip`` (seed 004 eqs.
    18-22), so M = M_L / (rho A l), J = J_L / (rho A l^3), D = M_DL / (rho A l^2) vary with l.
    method "differential": the roots are ``count`` extra states of the plant, started at :meth:`roots` (l0) and
    integrated with :meth:`rate` (eq. 40; eqs. 45-47 with the m_p erratum for a point payload).
    method "solve": the plant keeps no root states and calls :meth:`roots` (l, previous) every step.
    """

    count: int
    mass_per_length: float  # rho A [kg/m]
    tip: TipBody = TipBody()
    method: str = "differential"
    source: str = "prismatic link"

    def __post_init__(self) -> None:
        if self.method not in ROOT_METHODS:
            raise ModelError(f"{self.source}: root method must be one of {ROOT_METHODS}, got {self.method!r}")
        if not (isinstance(self.count, (int, np.integer)) and self.count >= 1):
            raise ModelError(f"{self.source}: number of modes must be an integer >= 1, got {self.count!r}")
        self.parameters(1.0)  # validates mass_per_length and the tip body

    @property
    def state_size(self) -> int:
        """Number of root states the plant integrates (count for "differential", 0 for "solve")."""
        return self.count if self.method == "differential" else 0

    def parameters(self, length: float) -> ClampedMassParameters:
        """M, J, D (eq. 12) at free length ``length`` [m]."""
        return ClampedMassParameters.from_tip_body(self.tip, self.mass_per_length, length, self.source)

    def roots(self, length: float, previous: Any = None) -> np.ndarray:
        """The first ``count`` roots at free length ``length`` [m] by a root solve (near ``previous`` if given)."""
        params = self.parameters(length)
        if previous is None:
            return frequency_roots(self.count, params, self.source)
        return refine_roots(previous, params, self.source)

    def rate(self, beta: Any, length: float, length_rate: float) -> np.ndarray:
        """d beta_i/dt (eq. 40) at roots ``beta``, free length ``length`` [m] and its rate [m/s]."""
        rates = parameter_rates(self.tip, TipBody(), self.mass_per_length, length, length_rate)
        return roots_rate(np.asarray(beta, dtype=float), self.parameters(length), rates)

    def modes(self, length: float, beta: Any = None) -> ClampedMassModes:
        """The mode shapes at free length ``length`` [m], at root states ``beta`` or (None) at solved roots."""
        return ClampedMassModes(length, self.count, self.parameters(length), roots=beta, source=self.source)


__all__ = ["ROOT_METHODS", "ClampedMassModes", "ClampedMassParameters", "FrequencyDerivatives", "PrismaticLinkRoots",
           "TipBody", "eigenvalue_count", "frequency_equation", "frequency_equation_derivatives", "frequency_roots",
           "parameter_rates", "refine_roots", "roots_rate", "tip_body_from_distal", "tip_body_from_model",
           "tip_body_rate_from_model"]
