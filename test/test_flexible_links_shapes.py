"""Shape functions of the link layer: clamped-free assumed modes (seed 003 eq. 43) and cubic Hermite elements."""
import math

import numpy as np
import pytest

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.beam_elements import (ClampedBeamMesh, clamped_beam_frequencies, element_mass,
                                                        element_stiffness, hermite_shape_functions)
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes, cantilever_roots, eq43_shape

# Issue 13 acceptance: roots of 1 + cos(l) cosh(l) = 0 (classical cantilever values, e.g. Blevins Table 8-1).
CANTILEVER_ROOTS = [1.875104069, 4.694091133, 7.854757438, 10.995540735]
# Seed 003 Table 2: (length a_i [m], mass m_i [kg]), EI = 1e5 N m^2; clamped-free frequencies of issue 13 [Hz].
CANADARM_LINKS = [(6.0, 140.0, (1.0176, 6.3772)), (7.0, 85.0, (1.0364, 6.4948)), (2.0, 95.0, (6.4190, 40.2269))]


def test_cantilever_roots_to_1e9():
    roots = cantilever_roots(4)
    np.testing.assert_allclose(roots, CANTILEVER_ROOTS, rtol=0, atol=1e-9)
    many = cantilever_roots(30)
    assert np.all(np.abs(1 + np.cos(many[:6]) * np.cosh(many[:6])) < 1e-9 * np.cosh(many[:6]))
    np.testing.assert_allclose(many[10:], (np.arange(11, 31) - 0.5) * math.pi, atol=1e-9)


@pytest.mark.parametrize("count", [4, 12, 30])
def test_clamped_free_boundary_conditions(count):
    """phi(0) = phi'(0) = 0, phi''(l) = phi'''(l) = 0 relative to the size of each derivative (1e-10)."""
    length = 2.7
    modes = ClampedFreeModes(length, count)
    for k, at in ((0, 0.0), (1, 0.0), (2, length), (3, length)):
        scale = (modes.roots / length) ** k * 2.0
        assert np.max(np.abs(modes.evaluate([at], k)[0]) / scale) < 1e-10, (k, at)
    s, w = np.polynomial.legendre.leggauss(200)
    phi = modes.evaluate((s + 1) * length / 2)
    gram = (phi.T * w / 2) @ phi
    np.testing.assert_allclose(gram, np.eye(count), atol=1e-10)  # orthonormal in the mean-square sense
    np.testing.assert_allclose(np.abs(modes.evaluate([length])[0]), 2.0, rtol=1e-10)


def test_derivatives_match_finite_differences():
    modes = ClampedFreeModes(1.3, 6)
    x = np.linspace(0.1, 1.2, 7)
    h = 1e-5
    for k in (1, 2, 3):
        numeric = (modes.evaluate(x + h, k - 1) - modes.evaluate(x - h, k - 1)) / (2 * h)
        exact = modes.evaluate(x, k)
        assert np.max(np.abs(numeric - exact)) < 1e-6 * np.max(np.abs(exact))


def test_eq43_printed_sign_erratum():
    """ERRATA.md seed 003: eq. 43 as printed gives s(0) = -2 sigma_1 (not clamped); the minus signs fix it, and the
    corrected shape is the cantilever eigenfunction times sigma = (sin l + sinh l)/(cos l + cosh l)."""
    lam = cantilever_roots(1)[0]
    sigma = (math.sin(lam) + math.sinh(lam)) / (math.cos(lam) + math.cosh(lam))
    assert eq43_shape(0.0, lam, printed=True) == pytest.approx(-2 * sigma, rel=1e-12)
    assert abs(eq43_shape(0.0, lam)) < 1e-12
    xi = np.linspace(0, 1, 11)
    np.testing.assert_allclose(eq43_shape(xi, lam), sigma * ClampedFreeModes(1.0, 1).evaluate(xi)[:, 0], atol=1e-12)


@pytest.mark.parametrize("length, mass, expected_hz", CANADARM_LINKS)
def test_canadarm_single_link_closed_form(length, mass, expected_hz):
    """Issue 13 / seed 003 Table 2: clamped-free link frequencies lambda^2 sqrt(EI/(rho l^4)) (4 decimals given)."""
    hz = ClampedFreeModes(length, 2).frequencies_rad_s(1e5, mass / length) / (2 * math.pi)
    np.testing.assert_allclose(hz, expected_hz, atol=5.1e-5)


@pytest.mark.parametrize("length, mass, expected_hz", CANADARM_LINKS)
def test_fem_converges_from_above(length, mass, expected_hz):
    exact = ClampedFreeModes(length, 2).frequencies_rad_s(1e5, mass / length)
    previous = None
    for elements in (1, 2, 4, 8, 16, 32):
        fem = clamped_beam_frequencies(1e5, mass / length, length, elements)[:2] if elements > 1 else None
        if fem is None:
            continue
        assert np.all(fem >= exact * (1 - 1e-12))
        if previous is not None:
            assert np.all(fem <= previous)
        previous = fem
    np.testing.assert_allclose(previous, exact, rtol=2e-6)


def test_hermite_element_closed_forms():
    """Shape functions interpolate nodal values/slopes; M_e and K_e equal the integrals of N N^T and N'' N''^T."""
    h = 0.7
    N0, N1 = hermite_shape_functions([0.0, h], h), hermite_shape_functions([0.0, h], h, 1)
    np.testing.assert_allclose(N0, [[1, 0, 0, 0], [0, 0, 1, 0]], atol=1e-15)
    np.testing.assert_allclose(N1, [[0, 1, 0, 0], [0, 0, 0, 1]], atol=1e-15)
    s, w = np.polynomial.legendre.leggauss(6)
    s, w = (s + 1) * h / 2, w * h / 2
    N, B = hermite_shape_functions(s, h), hermite_shape_functions(s, h, 2)
    np.testing.assert_allclose((N.T * w) @ N * 2.5, element_mass(2.5, h), rtol=1e-13)
    np.testing.assert_allclose((B.T * w) @ B * 3.0, element_stiffness(3.0, h), rtol=1e-13)


def test_mesh_shape_functions_and_tip_rows():
    mesh = ClampedBeamMesh(3.0, 3)
    nodal = np.random.default_rng(1).normal(size=mesh.count)
    np.testing.assert_allclose(mesh.evaluate([3.0])[0] @ nodal, mesh.tip_deflection_row @ nodal)
    np.testing.assert_allclose(mesh.evaluate([3.0], 1)[0] @ nodal, mesh.tip_slope_row @ nodal)
    np.testing.assert_allclose(mesh.evaluate([0.0])[0], 0.0)
    nodes = mesh.evaluate(mesh.node_positions[1:])
    np.testing.assert_allclose(nodes @ nodal, nodal[0::2], atol=1e-14)


def test_bad_input_names_the_problem():
    with pytest.raises(ModelError, match="length"):
        ClampedFreeModes(0.0, 2)
    with pytest.raises(ModelError, match="modes"):
        ClampedFreeModes(1.0, 99)
    with pytest.raises(ModelError, match="elements"):
        ClampedBeamMesh(1.0, 0)
