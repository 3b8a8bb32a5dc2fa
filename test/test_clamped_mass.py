"""Clamped-mass assumed modes (seed 004 eqs. 9-13, 38, 40-47): roots, eigenfunctions, derivatives, moving roots.

Reference numbers are the paper's (printed to 6 decimals, so compared to 1e-6), closed forms (cantilever,
clamped-pinned, clamped-guided limits), the paper's equations written out literally in this file, scipy's
quadrature, finite differences and a finite-element model of the beam with its tip body written in this file.
The solver's own accuracy is checked independently of it: the printed frequency equation changes sign across
[beta - 1e-10, beta + 1e-10] at every root it returns.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad, simpson, solve_ivp
from scipy.optimize import brentq

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.clamped_mass import (
    ClampedMassModes, ClampedMassParameters, PrismaticLinkRoots, TipBody, eigenvalue_count,
    frequency_equation, frequency_equation_derivatives, frequency_roots, tip_body_from_distal)
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes, cantilever_roots


def printed_eq38(b: float, M: float, J: float, D: float) -> float:
    """Seed 004 eq. 38 exactly as printed (no scaling), the reference for every check below."""
    c, s, ch, sh = math.cos(b), math.sin(b), math.cosh(b), math.sinh(b)
    return ((1 + ch * c) - M * b * (ch * s - sh * c) - J * b ** 3 * (ch * s + sh * c) + M * J * b ** 4 * (1 - ch * c)
            - D ** 2 * b ** 4 * (1 - ch * c) - 2 * D * b ** 2 * sh * s)


def assert_bracketed_roots(roots: np.ndarray, M: float, J: float, D: float, width: float = 1e-10) -> None:
    """Each root lies within ``width`` of a sign change of the printed eq. 38 (the solver's accuracy, shown
    without trusting the solver)."""
    for b in roots:
        lo, hi = printed_eq38(b - width, M, J, D), printed_eq38(b + width, M, J, D)
        assert lo * hi <= 0.0, f"no sign change of eq. 38 within {width} of beta = {b!r} (M={M}, J={J}, D={D})"


# ---------------------------------------------------------------------------------------------------------------
# Roots of eq. 38

PAPER_ROOTS = [  # seed 004 section 4.2 / issue 14 acceptance, 6 decimals as printed
    ("M = 1", dict(M=1.0), [1.247917, 4.031139, 7.134132]),
    ("M = 0.2", dict(M=0.2), [1.616400, 4.267062]),
    ("M = 10", dict(M=10.0), [0.735782, 3.938466]),
    ("J = 0.1", dict(J=0.1), [1.577071, 2.648238, 5.528627]),
]


@pytest.mark.parametrize("label, kwargs, expected", PAPER_ROOTS, ids=[p[0] for p in PAPER_ROOTS])
def test_eq38_roots_match_printed_values(label, kwargs, expected):
    """Eq. 38 roots equal the printed 6-decimal values (|error| <= 5e-7, the rounding) and are themselves
    accurate to 1e-10 (sign change of the printed equation across each root)."""
    params = ClampedMassParameters(**kwargs)
    roots = frequency_roots(len(expected), params)
    assert np.max(np.abs(roots - expected)) <= 5e-7 + 1e-12, (label, roots)
    assert_bracketed_roots(roots, params.M, params.J, params.D)


def test_no_tip_body_is_the_cantilever():
    """M = J = D = 0: roots of 1 + cos b cosh b = 0 (1.875104069, 4.694091133, 7.854757438, 10.995540735) to 1e-9."""
    roots = frequency_roots(4)
    np.testing.assert_allclose(roots, [1.875104069, 4.694091133, 7.854757438, 10.995540735], atol=1e-9, rtol=0)
    assert np.max(np.abs(1 + np.cos(roots) * np.cosh(roots)) / np.cosh(roots)) < 1e-14


def test_no_tip_body_equals_the_clamped_free_family_of_mode_shapes():
    """M = J = D = 0 reduces to the clamped-free family of :mod:`flexible_links.mode_shapes` (the link layer's
    cantilever functions, implemented separately): same roots, shapes, signs and slopes (k = 0..3) and frequencies."""
    length, count = 1.3, 6
    clamped_mass = ClampedMassModes(length, count)
    clamped_free = ClampedFreeModes(length, count)
    np.testing.assert_allclose(clamped_mass.roots, cantilever_roots(count), rtol=0, atol=1e-13)
    x = np.linspace(0.0, length, 27)
    for k in range(4):
        scale = (clamped_mass.roots / length) ** k
        np.testing.assert_allclose(clamped_mass.evaluate(x, k) / scale, clamped_free.evaluate(x, k) / scale,
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(clamped_mass.frequencies_rad_s(1165.4916, 0.331),
                               clamped_free.frequencies_rad_s(1165.4916, 0.331), rtol=1e-14)


def _closed_form_roots(function, count: int, start: float) -> np.ndarray:
    """The first ``count`` roots of a limit frequency equation, one per interval (start + k pi, start + (k + 1/2) pi)
    for k = 0, 1, ... (tan b = +-tanh b has exactly one root in each)."""
    return np.array([brentq(function, start + k * math.pi + 1e-9, start + (k + 0.5) * math.pi - 1e-9, xtol=1e-15)
                     for k in range(count)])


def test_large_tip_mass_tends_to_clamped_pinned():
    """M -> inf: the first root -> (3 / M)^(1/4) (a mass on a massless cantilever, 3 EI / l^3) and the others ->
    the clamped-pinned roots of tan b = tanh b; the second root -> 3.926602 (issue 14 / seed 004)."""
    pinned = _closed_form_roots(lambda b: math.sin(b) - math.tanh(b) * math.cos(b), 4, start=math.pi)
    assert abs(pinned[0] - 3.926602) < 5e-7
    previous_error = math.inf
    for M in (1e2, 1e4, 1e6, 1e9):
        roots = frequency_roots(5, ClampedMassParameters(M=M))
        assert np.all(np.diff(roots) > 0.5), roots  # no duplicate, none missed between
        assert abs(roots[0] / (3.0 / (M + 33.0 / 140.0)) ** 0.25 - 1.0) < 1e-3
        error = np.max(np.abs(roots[1:] - pinned))
        assert error < previous_error
        previous_error = error
        assert_bracketed_roots(roots[1:], M, 0.0, 0.0, width=1e-9)
    assert abs(frequency_roots(2, ClampedMassParameters(M=1e9))[1] - 3.926602) < 5e-7


def test_large_rotary_inertia_tends_to_clamped_guided():
    """J -> inf (M = 0): the first root -> 0 and the others -> the roots of tan b = -tanh b (clamped end,
    slope-restrained free end)."""
    guided = _closed_form_roots(lambda b: math.sin(b) + math.tanh(b) * math.cos(b), 3, start=0.5 * math.pi)
    roots = frequency_roots(4, ClampedMassParameters(J=1e8))
    assert roots[0] < 0.02
    np.testing.assert_allclose(roots[1:], guided, atol=1e-6, rtol=0)


RANDOM_TIPS = [(0.0, 0.0, 0.0), (3.0, 0.5, 1.2), (3.0, 0.5, -1.2), (0.05, 2.0, 0.3), (50.0, 1e-3, -0.2),
               (1e3, 10.0, 99.0), (0.7, 0.02, 0.0), (0.0, 5.0, 0.0)]


@pytest.mark.parametrize("M, J, D", RANDOM_TIPS)
def test_roots_equal_a_dense_sign_scan(M, J, D):
    """The first 8 roots (any D, both signs) equal the sign changes of the printed eq. 38 on a 2e-5 grid, and the
    Wittrick-Williams count agrees with the scan at 60 points across it (no missed or duplicated root)."""
    grid = np.linspace(2e-5, 30.0, 1_500_001)
    c, s, th, se = np.cos(grid), np.sin(grid), np.tanh(grid), 1 / np.cosh(grid)
    f = ((se + c) - M * grid * (s - th * c) - J * grid ** 3 * (s + th * c) + (M * J - D * D) * grid ** 4 * (se - c)
         - 2 * D * grid ** 2 * th * s)  # eq. 38 / cosh(beta), written out here
    changes = np.nonzero(np.sign(f[:-1]) != np.sign(f[1:]))[0]
    params = ClampedMassParameters(M, J, D)
    roots = frequency_roots(8, params)
    np.testing.assert_allclose(roots, grid[changes[:8]], atol=2.1e-5, rtol=0)
    for i in np.linspace(0, len(grid) - 1, 60).astype(int):
        assert eigenvalue_count(float(grid[i]), params) == np.count_nonzero(changes < i)
    assert_bracketed_roots(roots, M, J, D)


# ---------------------------------------------------------------------------------------------------------------
# Eigenfunctions: boundary conditions, normalization, eq. 9 as printed

@pytest.mark.parametrize("M, J, D", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.1, 0.0), (3.0, 0.5, 1.2),
                                     (3.0, 0.5, -1.2), (1e4, 2.0, 100.0)])
def test_eigenfunction_boundary_conditions(M, J, D):
    """psi(0) = psi'(0) = 0; tip shear psi'''(1) = -b^4 (M psi(1) + D psi'(1)) and moment psi''(1) = b^4 (D psi(1)
    + J psi'(1)) (the conditions behind eqs. 10-11) to 1e-10 relative to b^3; psi'''' = b^4 psi inside."""
    params = ClampedMassParameters(M, J, D)
    modes = ClampedMassModes(1.0, 10, params)
    b = modes.roots
    at0 = [modes.shapes([0.0], k)[0] for k in range(4)]
    at1 = [modes.shapes([1.0], k)[0] for k in range(4)]
    assert np.max(np.abs(at0[0])) < 1e-12 and np.max(np.abs(at0[1] / b)) < 1e-12
    shear = at1[3] + b ** 4 * (M * at1[0] + D * at1[1])
    moment = at1[2] - b ** 4 * (D * at1[0] + J * at1[1])
    # relative to b^3 (the size of the third derivative of a unit-norm mode), or to the balanced terms when the
    # tip body makes them larger (M = 1e4: b^4 M psi(1) ~ 1e10 b^3 for the high modes)
    shear_scale = np.maximum(b ** 3, b ** 4 * (M * np.abs(at1[0]) + abs(D) * np.abs(at1[1])))
    moment_scale = np.maximum(b ** 3, b ** 4 * (abs(D) * np.abs(at1[0]) + J * np.abs(at1[1])))
    assert np.max(np.abs(shear) / shear_scale) < 1e-10, shear / shear_scale
    assert np.max(np.abs(moment) / moment_scale) < 1e-10, moment / moment_scale
    eta = np.linspace(0.0, 1.0, 11)
    residual = modes.shapes(eta, 4) - b ** 4 * modes.shapes(eta)
    assert np.max(np.abs(residual) / b ** 4) < 1e-10


@pytest.mark.parametrize("M, J, D", [(0.0, 0.0, 0.0), (1.0, 0.1, -0.2), (10.0, 0.0, 0.0)])
def test_eigenfunctions_are_eq9_normalized_by_eq13(M, J, D):
    """The shapes equal eq. 9 with nu of eq. 10 written out here, and int_0^1 psi^2 = 1 (eq. 13, scipy quad)."""
    params = ClampedMassParameters(M, J, D)
    modes = ClampedMassModes(1.0, 6, params)
    for i, b in enumerate(modes.roots):
        c, s, ch, sh = math.cos(b), math.sin(b), math.cosh(b), math.sinh(b)
        nu = ((s - sh + M * b * (c - ch) - D * b ** 2 * (s + sh))
              / (c + ch - M * b * (s - sh) - D * b ** 2 * (c - ch)))
        assert abs(modes.nu[i] - nu) < 1e-9 * max(1.0, abs(nu))
        eta = np.linspace(0.0, 1.0, 7)
        eq9 = modes.C[i] * (np.cos(b * eta) - np.cosh(b * eta) + nu * (np.sin(b * eta) - np.sinh(b * eta)))
        # eq. 9 as printed cancels cosh against sinh: it is good to ~1e-15 cosh(beta), the stable form to 1e-15
        np.testing.assert_allclose(modes.shapes(eta)[:, i], eq9, atol=1e-14 * math.cosh(b), rtol=0)
        norm, _ = quad(lambda x: float(modes.shapes([x])[0, i]) ** 2, 0.0, 1.0, epsabs=1e-14, epsrel=1e-13,
                       limit=200)
        assert abs(norm - 1.0) < 1e-11
        assert modes.shapes([0.0], 2)[0, i] > 0.0  # documented sign: positive root curvature


def test_shapes_stay_finite_and_normalized_for_high_modes():
    """40 modes (beta up to ~125, cosh ~ 1e54): no overflow or cancellation; eq. 13 by Simpson on 4001 points."""
    modes = ClampedMassModes(1.0, 40, ClampedMassParameters(M=2.0, J=0.3, D=0.5))
    eta = np.linspace(0.0, 1.0, 4001)
    values = modes.shapes(eta)
    assert np.all(np.isfinite(values))
    np.testing.assert_allclose(simpson(values ** 2, x=eta, axis=0), 1.0, atol=1e-6)


def test_shape_derivatives_equal_finite_differences():
    """d psi / d eta and the higher derivatives equal central differences of the next lower one (1e-6)."""
    modes = ClampedMassModes(1.0, 4, ClampedMassParameters(M=0.8, J=0.05, D=0.1))
    eta, h = np.linspace(0.1, 0.9, 9), 1e-5
    for k in range(1, 5):
        fd = (modes.shapes(eta + h, k - 1) - modes.shapes(eta - h, k - 1)) / (2 * h)
        scale = modes.roots ** k
        assert np.max(np.abs(modes.shapes(eta, k) - fd) / scale) < 1e-6


def test_roots_equal_a_finite_element_model_with_the_tip_body():
    """Independent physics check of eqs. 11-12 (and of the sign of D): a 60-element cubic Hermite model of the
    beam, written here, with the rigid tip body [[M_L, M_DL], [M_DL, J_L]] added at the tip (deflection, slope)
    gives the same first 3 frequencies (1e-7 relative)."""
    rho_a, ei, length = 0.331, 1165.4916, 1.0
    tip = tip_body_from_distal([0.2, 0.05], [[0.1, 0.0, 0.02], [-0.05, 0.0, 0.0]],
                               [np.diag([1e-4, 2e-4, 3e-4]), np.zeros((3, 3))], beam_axis=[1, 0, 0],
                               deflection_axis=[0, 0, 1])
    n = 60
    h = length / n
    ke = ei / h ** 3 * np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                                 [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]])
    me = rho_a * h / 420 * np.array([[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h],
                                     [54, 13 * h, 156, -22 * h], [-13 * h, -3 * h * h, -22 * h, 4 * h * h]])
    K, Mm = np.zeros((2 * n + 2,) * 2), np.zeros((2 * n + 2,) * 2)
    for e in range(n):
        K[2 * e:2 * e + 4, 2 * e:2 * e + 4] += ke
        Mm[2 * e:2 * e + 4, 2 * e:2 * e + 4] += me
    Mm[-2:, -2:] += [[tip.mass, tip.first_moment], [tip.first_moment, tip.inertia]]
    omega_fem = np.sqrt(scipy.linalg.eigh(K[2:, 2:], Mm[2:, 2:], eigvals_only=True)[:3])
    params = ClampedMassParameters.from_tip_body(tip, rho_a, length)
    assert params.D != 0.0 and params.J != 0.0
    omega = ClampedMassModes(length, 3, params).frequencies_rad_s(ei, rho_a)
    np.testing.assert_allclose(omega_fem, omega, rtol=1e-7)
    flipped = ClampedMassParameters(params.M, params.J, -params.D)  # the wrong sign of D is visibly wrong
    omega_flipped = ClampedMassModes(length, 3, flipped).frequencies_rad_s(ei, rho_a)
    assert np.max(np.abs(omega_flipped / omega_fem - 1.0)) > 1e-3


# ---------------------------------------------------------------------------------------------------------------
# Tip body from the distal bodies (eq. 12)

def test_tip_body_of_point_mass_and_rod():
    """A point mass at the tip: M_L = m, M_DL = J_L = 0.  A uniform thin rod of mass m and length L continuing
    the beam: M_DL = m L / 2, J_L = m L^2 / 3 (about the tip).  A rod across the beam (along the deflection):
    M_DL = 0, J_L = m L^2 / 12 (centred on the tip)."""
    point = tip_body_from_distal([0.0828], [[0.0, 0.0, 0.0]], [np.zeros((3, 3))], [0, 0, 1], [1, 0, 0])
    assert point == TipBody(mass=0.0828, first_moment=0.0, inertia=0.0)
    m, L = 0.4, 0.6
    rod = tip_body_from_distal([m], [[L / 2, 0, 0]], [np.diag([0.0, m * L ** 2 / 12, m * L ** 2 / 12])],
                               [1, 0, 0], [0, 1, 0])
    assert rod.mass == pytest.approx(m) and rod.first_moment == pytest.approx(m * L / 2)
    assert rod.inertia == pytest.approx(m * L ** 2 / 3, rel=1e-14)
    across = tip_body_from_distal([m], [[0, 0, 0]], [np.diag([m * L ** 2 / 12, 0.0, m * L ** 2 / 12])],
                                  [1, 0, 0], [0, 1, 0])
    assert across.first_moment == 0.0 and across.inertia == pytest.approx(m * L ** 2 / 12, rel=1e-14)
    params = ClampedMassParameters.from_tip_body(rod, mass_per_length=0.331, length=1.0)
    assert (params.M, params.J, params.D) == pytest.approx((m / 0.331, m * L ** 2 / 3 / 0.331, m * L / 2 / 0.331))
    # a payload on the rotation axis, placed with round-off (1e-17 m along the beam): still admissible (M J >= D^2)
    on_axis = tip_body_from_distal([m], [[1e-17, 0.0, 0.7]], [np.zeros((3, 3))], [1, 0, 0], [0, 1, 0])
    assert abs(on_axis.first_moment) < 1e-16 and abs(on_axis.inertia) < 1e-30
    ClampedMassParameters.from_tip_body(on_axis, mass_per_length=0.331, length=1.0)  # no ModelError


def test_bad_input_is_a_model_error_naming_the_field():
    with pytest.raises(ModelError, match="first moment"):
        frequency_roots(2, ClampedMassParameters(M=1.0, J=0.01, D=0.5), source="link2")
    with pytest.raises(ModelError, match="link2: tip mass M"):
        frequency_roots(2, ClampedMassParameters(M=-1.0), source="link2")
    with pytest.raises(ModelError, match="mass_per_length"):
        ClampedMassParameters.from_tip_body(TipBody(1.0), 0.0, 1.0)
    with pytest.raises(ModelError, match="length"):
        ClampedMassParameters.from_tip_body(TipBody(1.0), 0.3, -1.0)
    with pytest.raises(ModelError, match="root method"):
        PrismaticLinkRoots(2, 0.331, TipBody(0.0828), method="table")
    with pytest.raises(ModelError, match="orthogonal"):
        tip_body_from_distal([1.0], [[0, 0, 0]], [np.zeros((3, 3))], [1, 0, 0], [1, 1, 0])


# ---------------------------------------------------------------------------------------------------------------
# Derivatives of eq. 38 (eqs. 41-44)

def test_eqs_41_to_44_equal_central_differences():
    """df/dbeta (eq. 44), df/dM (41), df/dJ (42), df/dD (43) equal central differences of the printed eq. 38 at 200
    random (beta, M, J, D) to 1e-7, relative to max(|derivative|, cosh beta) (cosh beta is f's own scale)."""
    rng = np.random.default_rng(14)
    worst = 0.0
    for _ in range(200):
        b, M, J, D = rng.uniform(0.2, 12.0), rng.uniform(0, 10), rng.uniform(0, 2), rng.uniform(-2, 2)
        d = frequency_equation_derivatives(b, M, J, D)
        assert float(frequency_equation(b, M, J, D)) == pytest.approx(printed_eq38(b, M, J, D), rel=1e-12,
                                                                       abs=1e-12 * math.cosh(b))
        for value, x, step in ((d.d_beta, 0, 1e-6 * b), (d.d_M, 1, 1e-5), (d.d_J, 2, 1e-5), (d.d_D, 3, 1e-5)):
            args_hi, args_lo = [b, M, J, D], [b, M, J, D]
            args_hi[x] += step
            args_lo[x] -= step
            fd = (printed_eq38(*args_hi) - printed_eq38(*args_lo)) / (2 * step)
            error = abs(float(value) - fd) / max(abs(float(value)), math.cosh(b))
            worst = max(worst, error)
    assert worst < 1e-7, worst


# ---------------------------------------------------------------------------------------------------------------
# Time-varying roots of the prismatic link 3 (eqs. 40, 45-47)

RHO_A3, M_P = 0.331, 0.0828  # seed 004 Table 3: link 3 mass per length (0.4303 kg / 1.3 m), payload
T_MOVE, L0, L1 = 0.5, 0.3, 1.0  # section 5: d3 from 0.3 to 1.0 m in 0.5 s


def cycloid(t: float) -> tuple[float, float]:
    """Rest-to-rest cycloid l(t), l'(t) (zero velocity and acceleration at both ends), seed 004 section 5."""
    tau = t / T_MOVE
    return (L0 + (L1 - L0) * (tau - math.sin(2 * math.pi * tau) / (2 * math.pi)),
            (L1 - L0) / T_MOVE * (1 - math.cos(2 * math.pi * tau)))


def eqs_45_47(beta: np.ndarray, l3: float, l3_dot: float, printed_misprint: bool = False) -> np.ndarray:
    """d beta/dt of eqs. 45-47 written out, with m_p (corrected, ERRATA.md) or the printed m_p^2 in eq. 47."""
    b = np.asarray(beta, dtype=float)
    sh, ch, s, c = np.sinh(b), np.cosh(b), np.sin(b), np.cos(b)
    f1 = M_P / (RHO_A3 * l3 ** 2) * b * (sh * c - ch * s)
    first = (M_P ** 2 if printed_misprint else M_P) / (RHO_A3 * l3)
    f2 = (1 + first) * (sh * c - ch * s) - 2 * M_P / (RHO_A3 * l3) * b * sh * s
    return f1 / f2 * l3_dot


def integrate_roots(rate, beta0: np.ndarray) -> object:
    return solve_ivp(lambda t, b: rate(b, *cycloid(t)), (0.0, T_MOVE), beta0, method="DOP853", rtol=1e-12,
                     atol=1e-13, dense_output=True)


def test_prismatic_link3_roots_by_differential_form_eqs_45_47():
    """Link 3 with m_p = 0.0828 kg, rho A = 0.331 kg/m, l from 0.3 to 1.0 m by a cycloid in 0.5 s: the roots
    integrated by eq. 40 (= eqs. 45-47, m_p erratum) are beta(0) = 1.293678, 4.048742; at l = 0.65 m 1.481241,
    4.150550; at l = 1.0 m 1.573631, 4.225002 (printed, 1e-6) and within 1e-8 of a direct root solve."""
    link3 = PrismaticLinkRoots(count=2, mass_per_length=RHO_A3, tip=TipBody(mass=M_P), method="differential")
    assert link3.state_size == 2
    beta0 = link3.roots(L0)
    np.testing.assert_allclose(beta0, [1.293678, 4.048742], atol=1e-6, rtol=0)
    for t in (0.05, 0.2, 0.4):  # the module's eq. 40 is eqs. 45-47 written out
        beta = link3.roots(cycloid(t)[0])
        np.testing.assert_allclose(link3.rate(beta, *cycloid(t)), eqs_45_47(beta, *cycloid(t)), rtol=1e-12)
    solution = integrate_roots(link3.rate, beta0)
    assert solution.success
    t_half = 0.25  # the cycloid passes l = 0.65 m at half time
    assert cycloid(t_half)[0] == pytest.approx(0.65, abs=1e-15)
    for t, printed in ((t_half, [1.481241, 4.150550]), (T_MOVE, [1.573631, 4.225002])):
        integrated = solution.sol(t)
        direct = link3.roots(cycloid(t)[0])
        np.testing.assert_allclose(integrated, printed, atol=1e-6, rtol=0)
        np.testing.assert_allclose(integrated, direct, atol=1e-8, rtol=0)
        assert_bracketed_roots(direct, M_P / (RHO_A3 * cycloid(t)[0]), 0.0, 0.0)


def test_printed_eq47_m_p_squared_is_the_erratum():
    """ERRATA.md (seed 004 eq. 47: m_p^2 must read m_p): integrating the printed eq. 47 drifts off the roots and
    ends at beta_1 = 1.63027 at l = 1.0 m instead of the root 1.573631."""
    beta0 = frequency_roots(2, ClampedMassParameters(M=M_P / (RHO_A3 * L0)))
    misprinted = integrate_roots(lambda b, l, ld: eqs_45_47(b, l, ld, printed_misprint=True), beta0)
    assert misprinted.y[0, -1] == pytest.approx(1.63027, abs=5e-6)
    assert abs(misprinted.y[0, -1] - 1.573631) > 0.05


def test_prismatic_link_root_solve_per_step_equals_differential_form():
    """method "solve" (a root solve per step from the previous roots) follows the same roots as "differential",
    here with a tip body that also has rotary inertia and first moment (the general eq. 40)."""
    tip = TipBody(mass=0.1, first_moment=0.01, inertia=0.002)
    differential = PrismaticLinkRoots(3, RHO_A3, tip, method="differential")
    solve = PrismaticLinkRoots(3, RHO_A3, tip, method="solve")
    assert solve.state_size == 0
    solution = integrate_roots(differential.rate, differential.roots(L0))
    beta = solve.roots(L0)
    for t in np.linspace(0.0, T_MOVE, 26)[1:]:
        beta = solve.roots(cycloid(t)[0], previous=beta)
        np.testing.assert_allclose(beta, solution.sol(t), atol=1e-8, rtol=0)
    modes = differential.modes(L1, beta=solution.sol(T_MOVE))
    np.testing.assert_allclose(modes.shapes(np.linspace(0, 1, 5)), solve.modes(L1).shapes(np.linspace(0, 1, 5)),
                               atol=1e-7)


def test_tip_mass_and_rotary_inertia_against_exudyn():
    """Independent engine (GUIDE: cross-check with Exudyn): a clamped Exudyn ObjectBeamGeometricallyExact2D beam
    (EI = 1165.4916 N m^2, rho A = 0.331 kg/m, l = 1 m; axial and shear stiffness 1e10 N so it is
    Euler-Bernoulli to ~1e-7) with an ObjectRigidBody2D of 0.2 kg and 0.01 kg m^2 on its end node.  Its first three
    frequencies converge from above like h^2 and, Richardson-extrapolated from 64 and 128 elements, equal the
    clamped-mass ones.  Recorded (exudyn 1.13.6): relative errors 2.2e-5, 1.9e-4, 7.6e-4 at 64 elements and
    5.3e-6, 4.7e-5, 1.9e-4 at 128; extrapolated -2.9e-7, -6.3e-7, -2.8e-6."""
    exu = pytest.importorskip("exudyn")
    from exudyn.itemInterface import NodeRigidBody2D, ObjectBeamGeometricallyExact2D, ObjectRigidBody2D

    ei, rho_a, length, tip = 1165.4916, 0.331, 1.0, TipBody(mass=0.2, inertia=0.01)

    def exudyn_frequencies(elements: int) -> np.ndarray:
        system = exu.SystemContainer()
        mbs = system.AddSystem()
        nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[i * length / elements, 0.0, 0.0]))
                 for i in range(elements + 1)]
        for i in range(elements):
            mbs.AddObject(ObjectBeamGeometricallyExact2D(
                nodeNumbers=[nodes[i], nodes[i + 1]], length=length / elements, massPerLength=rho_a,
                crossSectionInertia=0.0, bendingStiffness=ei, axialStiffness=1e10, shearStiffness=1e10))
        mbs.AddObject(ObjectRigidBody2D(nodeNumber=nodes[-1], mass=tip.mass, inertia=tip.inertia))
        mbs.Assemble()
        values, _ = mbs.ComputeODE2Eigenvalues(constrainedCoordinates=[0, 1, 2], useSparseSolver=True,
                                               numberOfEigenvalues=5, convert2Frequencies=True)
        return 2 * math.pi * np.sort(np.asarray(values))[:3]

    params = ClampedMassParameters.from_tip_body(tip, rho_a, length)
    exact = ClampedMassModes(length, 3, params).frequencies_rad_s(ei, rho_a)
    coarse, fine = exudyn_frequencies(64), exudyn_frequencies(128)
    assert np.all(coarse > fine) and np.all(fine > exact)
    np.testing.assert_allclose((coarse / exact - 1) / (fine / exact - 1), 4.0, rtol=0.1)  # h^2
    extrapolated = fine + (fine - coarse) / 3
    assert np.all(np.abs(extrapolated / exact - 1) < [1e-6, 3e-6, 1e-5]), extrapolated / exact - 1


@pytest.mark.parametrize("length", [0.3, 1.0])
def test_clamped_mass_modes_in_the_link_layer_are_exact_for_the_tip_mass(length):
    """The family plugs into the link layer (:class:`flexible_links.beam_link.BeamLink`, ModeShapeFamily protocol):
    for link 3 with its payload as the layer's tip mass, two clamped-mass modes diagonalize the layer's modal mass
    (orthogonality including the tip mass) and give the exact frequencies (1e-12), where two clamped-free modes
    overestimate them (Rayleigh-Ritz; 0.06-1.8 % here): why seed 004 uses the clamped-mass family."""
    from flexrobot_ros.flexible_links.beam_link import BeamLink

    ei, rho_a, m_p = 1165.4916, 0.331, 0.0828
    params = ClampedMassParameters.from_tip_body(TipBody(mass=m_p), rho_a, length)
    clamped_mass = ClampedMassModes(length, 2, params)
    link = BeamLink("link3", length, rho_a, ei, None, clamped_mass, None, np.eye(3), np.zeros(3), tip_mass=m_p)
    exact = clamped_mass.frequencies_rad_s(ei, rho_a)
    np.testing.assert_allclose(link.clamped_frequencies_rad_s(), exact, rtol=1e-12)
    assert abs(link.M_ff[0, 1]) < 1e-12 * link.M_ff[0, 0]
    cantilever = BeamLink("link3", length, rho_a, ei, None, ClampedFreeModes(length, 2), None, np.eye(3),
                          np.zeros(3), tip_mass=m_p)
    overestimate = cantilever.clamped_frequencies_rad_s() / exact - 1
    assert np.all(overestimate > 5e-4) and overestimate[1] > 1e-2


@settings(max_examples=60, deadline=None)
@given(log_m=st.floats(-3.0, 4.0), log_j=st.floats(-4.0, 3.0), rho=st.floats(-1.0, 1.0),
       no_m=st.booleans(), no_j=st.booleans())
def test_roots_interlace_and_fall_as_the_tip_body_grows(log_m, log_j, rho, no_m, no_j):
    """Independent bounds on the first 8 roots for any admissible tip body (Rayleigh's theorems): fixing the tip's
    deflection and slope (2 constraints) gives the clamped-clamped roots g_i of cos b cosh b = 1, so
    beta_i <= g_i <= beta_(i+2); adding inertia at the tip lowers every root (beta_i(M) <= cantilever root, and
    beta_i falls when M grows).  The Wittrick-Williams count sits at i - 1 just below beta_i and at i just above."""
    M = 0.0 if no_m else 10.0 ** log_m
    J = 0.0 if no_j else 10.0 ** log_j
    params = ClampedMassParameters(M, J, rho * math.sqrt(M * J))
    roots = frequency_roots(8, params)
    g = np.array([brentq(lambda b: math.cos(b) - 2 * math.exp(-b) / (1 + math.exp(-2 * b)),
                         (k + 0.5) * math.pi - 0.1, (k + 0.5) * math.pi + 0.1, xtol=1e-15) for k in range(1, 9)])
    assert np.all(np.diff(roots) > 0)
    assert np.all(roots <= g + 1e-12) and np.all(roots[2:] >= g[:-2] - 1e-12)
    assert np.all(roots <= frequency_roots(8) + 1e-12)
    heavier = frequency_roots(8, ClampedMassParameters(2 * M + 0.1, J, params.D))
    assert np.all(heavier <= roots + 1e-12)
    for i, b in enumerate(roots):
        assert eigenvalue_count(b * (1 - 1e-9), params) == i and eigenvalue_count(b * (1 + 1e-9), params) == i + 1
