"""The scaled characteristic determinants of seed 000 eq. 3.31 and their analytic derivatives, checked against
independent computations: the modal core's linearization of a robot copy with the parameters replaced, scipy's
sqrtm, the determinant identity det(S^-1 Q S^-1 / w) = det(Q) / (det(M_bar) w^2n), cofactor adjugates and
central finite differences. The Scompi (prismatic joint 1, W_11 = 1/0.057) checks the K W structure of eq. 3.12.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from flexrobot_ros.identification.affine_model import AffineModel
from flexrobot_ros.identification.eigenvalue_residuals import EigenvalueResiduals
from flexrobot_ros.identification.characteristic_determinant import (
    CharacteristicDeterminant, adjugate_and_determinant)
from flexrobot_ros.identification.parameters import parse_parameters
from flexrobot_ros.modal import linearize, modal_analysis

SCOMPI_POSES = np.array([[0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0],          # configuration 8, eq. 2.21
                         [0.05, 0.3, 1.2, 0.5, -1.2, 0.4]])
PLANAR_POSES = np.array([[1.474, 1.765], [0.133, 1.947], [2.193, 0.839]])   # Table 3.1, configurations 1-3


def central_differences(problem, p):
    """d residuals / d p by central differences, step 1e-4 max(p_j, 1) (an absolute floor for parameters ~ 1e-3)."""
    columns = []
    for j in range(p.size):
        h = 1e-4 * max(p[j], 1.0)
        up, down = p.copy(), p.copy()
        up[j] += h
        down[j] -= h
        columns.append((problem.residuals(up) - problem.residuals(down)) / (2 * h))
    return np.column_stack(columns)


def with_values(robot, parameters, values):
    fields = {name: np.array(getattr(robot, name)) for name in ("stiffness", "link_damping", "motor_damping")}
    for p, v in zip(parameters, values):
        fields[p.field][p.joint] = v
    return robot.with_parameters(**fields)


def build(robot, poses, selection, modes):
    """Problem with each pose's modes ``modes`` (indices) computed by the modal core at the YAML values."""
    parameters = parse_parameters(robot, selection)
    nominal = np.array([p.value_in(robot) for p in parameters])
    eigenvalues = [modal_analysis(robot, q).eigenvalues[list(modes)] for q in poses]
    model = AffineModel([linearize(robot, q) for q in poses], parameters, nominal, robot.transmission)
    problem = CharacteristicDeterminant(model, eigenvalues)
    return problem, parameters, nominal, eigenvalues


def test_scaled_matrices_equal_linearization_of_robot_copy(scompi):
    """S^-1 D_bar(p) S^-1 and S^-1 K_bar(p) S^-1 assembled from the affine form equal those of
    linearize(robot.with_parameters(p)) with scipy's sqrtm, for all 18 Scompi parameters at random values."""
    problem, parameters, nominal, _ = build(scompi, SCOMPI_POSES, "k,d_f,d_fm", range(3))
    values = nominal * np.random.default_rng(4).uniform(0.3, 3.0, nominal.size)
    damping, stiffness = problem.scaled_matrices(values)
    copy = with_values(scompi, parameters, values)
    for i, q in enumerate(SCOMPI_POSES):
        lin = linearize(copy, q)
        s_inv = np.linalg.inv(scipy.linalg.sqrtm(lin.M_bar).real)
        np.testing.assert_allclose(damping[i], s_inv @ lin.D_bar @ s_inv, rtol=1e-9,
                                   atol=1e-9 * np.abs(damping[i]).max())
        np.testing.assert_allclose(stiffness[i], s_inv @ lin.K_bar @ s_inv, rtol=1e-9,
                                   atol=1e-9 * np.abs(stiffness[i]).max())


@pytest.mark.parametrize("name", ["planar", "scompi"])
def test_determinants_equal_unscaled_identity(name, request):
    """|A| of eq. 3.31 equals det(lambda^2 M_bar + lambda D_bar + K_bar) / (det(M_bar) omega^2n), computed from the
    modal core's linearization of a robot copy (no square root involved)."""
    robot = request.getfixturevalue(name)
    poses = PLANAR_POSES if name == "planar" else SCOMPI_POSES
    problem, parameters, nominal, eigenvalues = build(robot, poses, "k,d_f,d_fm", (0, 1))
    values = nominal * np.random.default_rng(5).uniform(0.5, 2.0, nominal.size)
    got = problem.determinants(values)
    copy = with_values(robot, parameters, values)
    expected = []
    for q, lams in zip(poses, eigenvalues):
        lin = linearize(copy, q)
        for lam in lams:
            q_matrix = lam**2 * lin.M_bar + lam * lin.D_bar + lin.K_bar
            expected.append(np.linalg.det(q_matrix) / (np.linalg.det(lin.M_bar) * abs(lam) ** (2 * robot.n)))
    np.testing.assert_allclose(got, expected, rtol=1e-8)


def test_residuals_vanish_at_the_generating_parameters(planar):
    """Eigenvalues of the model at the YAML values are roots of eq. 3.17: F there is > 20 orders of magnitude
    below F at a 1 % stiffer joint 1."""
    problem, _, nominal, _ = build(planar, PLANAR_POSES, "k,d_f,d_fm", range(4))
    moved = nominal.copy()
    moved[0] *= 1.01
    assert problem.objective(nominal) < 1e-20 * problem.objective(moved)


@pytest.mark.parametrize("name,selection", [("planar", "k,d_f,d_fm"), ("scompi", "k,d_f:joint2+joint4,d_fm:joint1")])
def test_jacobian_matches_finite_differences(name, selection, request):
    """Analytic d residuals / d p against central differences, step 1e-4 max(p_j, 1) (an absolute floor for the
    Scompi's d_fm ~ 1e-3, which sits beside K_D = 52 in D_bar)."""
    robot = request.getfixturevalue(name)
    poses = PLANAR_POSES if name == "planar" else SCOMPI_POSES
    problem, _, nominal, _ = build(robot, poses, selection, (0, 1, 2))
    p = nominal * np.random.default_rng(6).uniform(0.7, 1.4, nominal.size)
    analytic = problem.jacobian(p)
    numeric = central_differences(problem, p)
    scale = np.abs(numeric).max(axis=0)
    assert np.max(np.abs(analytic - numeric) / scale) < 1e-6


def test_jacobian_at_a_singular_matrix(planar):
    """At the generating parameters every A_k is singular; the Jacobian there equals the SVD/adjugate form."""
    problem, _, nominal, _ = build(planar, PLANAR_POSES, "k,d_f,d_fm", range(4))
    a = problem.matrices(nominal)
    adjugate, _ = adjugate_and_determinant(a)
    x = problem.directions[problem.pose_of_mode]
    coefficient = np.where(problem.is_damping[None, :], problem.eigenvalues[:, None], 1.0) / problem.omega[:, None]
    g = coefficient * np.einsum("kja,kab,kjb->kj", x, adjugate, x)
    expected = np.stack([g.real, g.imag], axis=1).reshape(-1, nominal.size)
    np.testing.assert_allclose(problem.jacobian(nominal), expected, rtol=1e-7, atol=1e-9 * np.abs(expected).max())


def test_data_jacobian_matches_finite_differences(planar):
    """d residuals / d (frequency [Hz], damping ratio) of each mode against central differences of problems
    rebuilt from perturbed measured eigenvalues (eq. 3.24)."""
    problem, parameters, nominal, eigenvalues = build(planar, PLANAR_POSES, "k,d_f,d_fm", (0, 3))
    p = nominal * 1.2
    blocks = problem.data_jacobian(p)
    lin = [linearize(planar, q) for q in PLANAR_POSES]

    def residuals_with(pose, mode, d_frequency, d_zeta):
        lams = [lam.copy() for lam in eigenvalues]
        lam = lams[pose][mode]
        omega = abs(lam) + 2 * np.pi * d_frequency
        zeta = -lam.real / abs(lam) + d_zeta
        lams[pose][mode] = omega * (-zeta + 1j * np.sqrt(1 - zeta**2))
        return CharacteristicDeterminant(AffineModel(lin, parameters, nominal, planar.transmission), lams).residuals(p)

    k = 0
    for pose in range(len(PLANAR_POSES)):
        for mode in range(2):
            for column, (df, dz) in enumerate(((1e-6, 0.0), (0.0, 1e-7))):
                step = df or dz
                numeric = (residuals_with(pose, mode, df, dz) - residuals_with(pose, mode, -df, -dz)) / (2 * step)
                np.testing.assert_allclose(blocks[k, :, column], numeric[2 * k:2 * k + 2], rtol=1e-5)
                others = np.delete(numeric.reshape(-1, 2), k, axis=0)
                assert np.all(others == 0)
            k += 1


def test_adjugate_equals_cofactors():
    """Adjugate from the SVD against the cofactor definition adj(A)_ij = (-1)^(i+j) det(minor_ji), for a random
    complex matrix and a rank-deficient one; determinant against numpy."""
    rng = np.random.default_rng(7)
    full = rng.normal(size=(5, 5)) + 1j * rng.normal(size=(5, 5))
    u, s, vh = np.linalg.svd(full)
    singular = (u * np.r_[s[:-1], 0.0]) @ vh
    for a in (full, singular):
        cofactor = np.empty_like(a)
        for i in range(5):
            for j in range(5):
                minor = np.delete(np.delete(a, j, axis=0), i, axis=1)
                cofactor[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
        adjugate, det = adjugate_and_determinant(a[None])
        np.testing.assert_allclose(adjugate[0], cofactor, atol=1e-10 * np.abs(cofactor).max())
        assert abs(det[0] - np.linalg.det(a)) < 1e-10 * np.prod(s)


def build_eigenvalue(robot, poses, selection, modes):
    parameters = parse_parameters(robot, selection)
    nominal = np.array([p.value_in(robot) for p in parameters])
    eigenvalues = [modal_analysis(robot, q).eigenvalues[list(modes)] for q in poses]
    model = AffineModel([linearize(robot, q) for q in poses], parameters, nominal, robot.transmission)
    return EigenvalueResiduals(model, eigenvalues), parameters, nominal, eigenvalues


def test_eigenvalue_residuals_equal_modal_analysis_of_robot_copy(scompi):
    """Eigenvalue residuals at random parameters equal (lambda - lambda_hat) / |lambda_hat| with lambda the
    eigenvalue of modal_analysis(robot.with_parameters(p)) nearest to each measured one."""
    problem, parameters, nominal, eigenvalues = build_eigenvalue(scompi, SCOMPI_POSES, "k,d_f", (0, 2, 5))
    values = nominal * np.random.default_rng(8).uniform(0.9, 1.1, nominal.size)
    copy = with_values(scompi, parameters, values)
    expected = []
    for q, measured in zip(SCOMPI_POSES, eigenvalues):
        model = modal_analysis(copy, q).eigenvalues
        for lam_hat in measured:
            lam = model[np.argmin(np.abs(model - lam_hat))]
            expected.append((lam - lam_hat) / abs(lam_hat))
    got = problem.residuals(values).reshape(-1, 2)
    np.testing.assert_allclose(got[:, 0] + 1j * got[:, 1], expected, atol=1e-10)
    assert problem.objective(nominal) < 1e-24


def test_eigenvalue_jacobians_match_finite_differences(scompi):
    """Eigenvalue sensitivities d lambda / d p (left = right eigenvector, symmetric matrices) and the data
    derivatives against central differences (step 1e-4 of each parameter)."""
    problem, parameters, nominal, eigenvalues = build_eigenvalue(scompi, SCOMPI_POSES,
                                                                 "k,d_f:joint2+joint5,d_fm:joint1", (0, 1, 6))
    p = nominal * np.random.default_rng(9).uniform(0.8, 1.25, nominal.size)
    analytic = problem.jacobian(p)
    numeric = central_differences(problem, p)
    # compared per relative parameter change (columns times p): k6 and d_f5 barely move these modes
    assert np.max(np.abs(analytic - numeric) * p) < 1e-6 * np.max(np.abs(numeric) * p)
    blocks = problem.data_jacobian(p)
    lams = [lam.copy() for lam in eigenvalues]
    for k, (df, dz) in enumerate(((1e-5, 0.0), (0.0, 1e-7))):
        def residual_with(sign):
            moved = [lam.copy() for lam in lams]
            lam = moved[1][2]
            omega, zeta = abs(lam) + 2 * np.pi * sign * df, -lam.real / abs(lam) + sign * dz
            moved[1][2] = omega * (-zeta + 1j * np.sqrt(1 - zeta**2))
            return EigenvalueResiduals(problem.model, moved).residuals(p)
        numeric = (residual_with(+1) - residual_with(-1)) / (2 * (df or dz))
        np.testing.assert_allclose(blocks[5, :, k], numeric[10:12], rtol=1e-6, atol=1e-9)
