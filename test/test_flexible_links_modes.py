"""Locked-joint (braked arm) modes of the Canadarm with finite elements vs an independent planar frame model written
here (Euler-Bernoulli beam elements, inextensible members, rigid corners), convergence, and the single-link
clamped-free frequencies of issue 13 through the modal path."""
import math

import numpy as np
import pytest
import scipy.linalg

from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.model import load_robot

LINKS = [(6.0, 140.0), (7.0, 85.0), (2.0, 95.0)]   # seed 003 Table 2 (a_i [m], m_i [kg])
EI = 1.0e5


def planar_frame_frequencies(angles, elements):
    """Natural frequencies [Hz] of the braked planar arm as a 2D frame: nodes carry (u_x, u_y, rotation); members
    are Euler-Bernoulli elements (cubic Hermite bending, consistent mass) whose length cannot change (a linear
    constraint per element), joined rigidly at the joints (shared node), clamped at the base."""
    nodes, members = [np.zeros(2)], []
    heading = 0.0
    for (a, m), angle in zip(LINKS, angles):
        heading += angle
        direction = np.array([math.cos(heading), math.sin(heading)])
        for _ in range(elements):
            start = len(nodes) - 1
            nodes.append(nodes[-1] + direction * a / elements)
            members.append((start, start + 1, direction, a / elements, m / a))
    size = 3 * len(nodes)
    K, M = np.zeros((size, size)), np.zeros((size, size))
    constraints = [np.eye(size)[k] for k in range(3)]                     # clamped base node
    for i, j, (c, s), h, rho in members:
        # local (axial, transverse, rotation) at both ends from global (u_x, u_y, rotation)
        T = np.zeros((6, 6))
        for k in (0, 3):
            T[k:k + 3, k:k + 3] = [[c, s, 0], [-s, c, 0], [0, 0, 1]]
        bend = [1, 2, 4, 5]
        k_local, m_local = np.zeros((6, 6)), np.zeros((6, 6))
        k_local[np.ix_(bend, bend)] = EI / h**3 * np.array(
            [[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h], [-12, -6 * h, 12, -6 * h],
             [6 * h, 2 * h * h, -6 * h, 4 * h * h]])
        m_local[np.ix_(bend, bend)] = rho * h / 420 * np.array(
            [[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h], [54, 13 * h, 156, -22 * h],
             [-13 * h, -3 * h * h, -22 * h, 4 * h * h]])
        m_local[np.ix_([0, 3], [0, 3])] = rho * h / 6 * np.array([[2, 1], [1, 2]])
        dofs = [3 * i, 3 * i + 1, 3 * i + 2, 3 * j, 3 * j + 1, 3 * j + 2]
        K[np.ix_(dofs, dofs)] += T.T @ k_local @ T
        M[np.ix_(dofs, dofs)] += T.T @ m_local @ T
        row = np.zeros(size)
        row[dofs] = T[3] - T[0]                                           # axial elongation = 0
        constraints.append(row)
    Z = scipy.linalg.null_space(np.array(constraints))
    values = scipy.linalg.eigh(Z.T @ K @ Z, Z.T @ M @ Z, eigvals_only=True)
    return np.sqrt(values) / (2 * math.pi)


@pytest.fixture(scope="module")
def canadarm():
    return load_robot("canadarm")


@pytest.mark.parametrize("angles", [(0.0, 0.0, 0.0), (0.4, -1.1, 0.7), (1.2, 2.0, -2.5)])
def test_locked_joint_modes_equal_planar_frame(canadarm, angles):
    """Issue 13: braked Canadarm with finite elements = independent frame model at the same mesh, 1e-8."""
    for elements in (1, 3):
        model = ElasticRobot(canadarm, method="finite_elements", elements=elements)
        result = elastic_robot_modes(model, angles, locked_joints=True)
        frame = planar_frame_frequencies(angles, elements)
        np.testing.assert_allclose(result.frequencies_hz, frame, rtol=1e-8)


def test_locked_joint_modes_converge(canadarm):
    """FEM frequencies fall monotonically with refinement and approach the assumed-modes value from above
    (the AMM with 2 clamped-free modes per link is itself a Ritz model, so only the FEM sequence must converge)."""
    angles = (0.3, 0.9, -0.6)
    previous = None
    for elements in (1, 2, 4, 8):
        model = ElasticRobot(canadarm, method="finite_elements", elements=elements)
        first = elastic_robot_modes(model, angles, locked_joints=True).frequencies_hz[:3]
        if previous is not None:
            assert np.all(first <= previous * (1 + 1e-12))
        previous = first
    fine = planar_frame_frequencies(angles, 16)[:3]
    np.testing.assert_allclose(previous, fine, rtol=2e-3)


@pytest.mark.parametrize("link", [0, 1, 2])
def test_single_link_locked_modes_amm(tmp_path, link):
    """Issue 13: one Canadarm link alone, braked: 1.0176 / 6.3772, 1.0364 / 6.4948, 6.4190 / 40.2269 Hz,
    assumed modes = the exact cantilever frequencies to 1e-6."""
    a, m = LINKS[link]
    urdf = tmp_path / "one.urdf"
    urdf.write_text(f"""<robot name="one"><link name="base_link"/>
      <link name="arm"><inertial><origin xyz="{a / 2} 0 0"/><mass value="{m}"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="joint1" type="revolute"><parent link="base_link"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" velocity="1" effort="1"/></joint>
      <link name="tip"/><joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
        <origin xyz="{a} 0 0"/></joint></robot>""")
    path = tmp_path / "one.yaml"
    path.write_text(f"urdf: {urdf}\ngravity: [0.0, 0.0, 0.0]\njoints: {{joint1: {{rigid: true}}}}\n"
                    f"flexible_links: {{arm: {{EI: 1.0e+5, modes: 2, tip_frame: tip}}}}\n")
    robot = load_robot(path)
    result = elastic_robot_modes(ElasticRobot(robot), [0.0], locked_joints=True)
    lam = np.array([1.875104068711961, 4.694091132974175])
    exact = lam**2 * math.sqrt(EI / (m / a * a**4)) / (2 * math.pi)
    np.testing.assert_allclose(result.frequencies_hz, exact, rtol=1e-6)
    np.testing.assert_allclose(result.frequencies_hz, [(1.0176, 6.3772), (1.0364, 6.4948), (6.4190, 40.2269)][link],
                               atol=5.1e-5)


def exudyn_braked_canadarm(angles, elements, penalty):
    """Lowest four frequencies [Hz] of the braked Canadarm in Exudyn 1.13 (FACTS.md recipe): a planar frame of
    ObjectBeamGeometricallyExact2D elements on NodeRigidBody2D nodes, corners shared (includeReferenceRotations
    False keeps the corner angles stress-free), axial and shear stiffness = ``penalty`` [N]."""
    exu = pytest.importorskip("exudyn")
    from exudyn.itemInterface import NodeRigidBody2D, ObjectBeamGeometricallyExact2D

    system = exu.SystemContainer()
    mbs = system.AddSystem()
    points, members, heading = [np.zeros(2)], [], 0.0
    for (a, m), angle in zip(LINKS, angles):
        heading += angle
        direction = np.array([math.cos(heading), math.sin(heading)])
        for _ in range(elements):
            points.append(points[-1] + direction * a / elements)
            members.append((len(points) - 2, len(points) - 1, a / elements, m / a, heading))
    rotations = [members[0][4]] + [member[4] for member in members]
    nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[p[0], p[1], r])) for p, r in zip(points, rotations)]
    for i, j, h, rho, _ in members:
        mbs.AddObject(ObjectBeamGeometricallyExact2D(
            nodeNumbers=[nodes[i], nodes[j]], length=h, massPerLength=rho, crossSectionInertia=0.0,
            bendingStiffness=EI, axialStiffness=penalty, shearStiffness=penalty, includeReferenceRotations=False))
    mbs.Assemble()
    values = mbs.ComputeODE2Eigenvalues(constrainedCoordinates=[0, 1, 2], useSparseSolver=True,
                                        numberOfEigenvalues=4, convert2Frequencies=True)
    return np.array(values[0][:4])


def test_exudyn_cross_check(canadarm):
    """Issue 13: one cross-check against Exudyn (independent engine, shear-deformable geometrically exact beams).
    Exudyn's elements converge at second order in the mesh and its axial/shear penalties at first order in 1/EA:
    extrapolated to EA -> inf (1e8, 1e9 N) and Richardson-extrapolated from 32 and 64 elements per link, pose
    (0.4, -1.1, 0.7) rad. Recorded (2026-11-23): Exudyn 0.16723267, 0.77987067, 2.5926701, 5.2290649 Hz; this
    package (finite elements, 16 per link) 0.16723266, 0.77987072, 2.5926718, 5.2290837 Hz: within 4e-6."""
    angles = (0.4, -1.1, 0.7)

    def infinite_penalty(elements):
        low, high = exudyn_braked_canadarm(angles, elements, 1e8), exudyn_braked_canadarm(angles, elements, 1e9)
        return (1e9 * high - 1e8 * low) / (1e9 - 1e8)

    coarse, fine = infinite_penalty(32), infinite_penalty(64)
    exudyn = fine + (fine - coarse) / 3.0
    model = ElasticRobot(canadarm, method="finite_elements", elements=16)
    ours = elastic_robot_modes(model, angles, locked_joints=True).frequencies_hz[:4]
    np.testing.assert_allclose(ours, exudyn, rtol=2e-5)
