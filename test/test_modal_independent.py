"""Independent checks of the modal-analysis core (no thesis numbers involved).

* M_bar, D_bar, K_bar (and the equilibrium q_m^d) against central finite differences of the full nonlinear
  closed-loop dynamics Gamma of seed 000 eq. 2.4, written here with pinocchio's RNEA (external wrench through
  RNEA's ``fext``, not through Jacobians), at random poses of every shipped robot whose model eq. 2.4 is (elastic
  joints on rigid links), with and without a wrench.
* The eigenvalues against scipy's eigenvalues of the state matrix of eq. 2.14, and the quadratic eigenvalue
  problem's residual (also of the robots with extra elasticities); batched results against single-pose results.
* A one-joint flexible robot (revolute and rack-and-pinion prismatic) against its closed-form two-mass results:
  undamped frequencies, characteristic quartic, receptance.
* Receptance against the static compliance and the modal expansion; MAC properties.
"""
from __future__ import annotations

import textwrap
import zlib

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal import linearize, linearize_batch, modal_analysis, motor_set_point
from flexrobot_ros.modal.eigenproblem import solve_modes
from flexrobot_ros.modal.frf import receptance
from flexrobot_ros.modal.mac import mac
from flexrobot_ros.modal.participation import modal_participation
from flexrobot_ros.modal.undamped import undamped_modes
from flexrobot_ros.model import load_robot, shipped_robots


def _variants():
    out = []
    for name in shipped_robots():
        robot = load_robot(name)
        if robot.flexible_links or robot.rigid_joints:  # not seed 000's model: see test_flexible_links_modes.py
            continue
        out.append((name, False))
        try:
            load_robot(name, tool=True)
            out.append((name, True))
        except ModelError:
            pass
    return out


VARIANTS = _variants()
#: The variants whose model is seed 000's eq. 2.4 (no extra elasticities or gear dampers either).
JOINT_MODEL_VARIANTS = [(name, tool) for name, tool in VARIANTS if elastic_joints_only(load_robot(name))]


def random_pose(robot, rng):
    low = np.maximum(robot.lower_limits, -np.pi)
    high = np.minimum(robot.upper_limits, np.pi)
    prismatic = np.array([kind == "prismatic" for kind in robot.joint_types])
    low = np.where(prismatic, np.maximum(low, -0.3), low)
    high = np.where(prismatic, np.minimum(high, 0.3), high)
    return rng.uniform(low, high)


def world_wrench_as_fext(robot, data, q, wrench, frame):
    """The world-axes wrench at ``frame``'s origin as RNEA ``fext`` (spatial forces in each joint's local frame)."""
    pin.forwardKinematics(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    frame_id = robot.model.getFrameId(frame)
    frame = robot.model.frames[frame_id]
    parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent  # pinocchio 3 / 2.x
    origin = data.oMf[frame_id].translation
    force, moment = wrench[:3], wrench[3:]
    at_world_origin = pin.Force(force, moment + np.cross(origin, force))
    fext = [pin.Force.Zero() for _ in range(robot.model.njoints)]
    fext[parent] = data.oMi[parent].actInv(at_world_origin)
    return fext


def closed_loop_gamma(robot, q_d, q_m_d, kp, kd, wrench, frame):
    """Gamma(zdd, zd, z) of seed 000 eq. 2.4 (PD + gravity/wrench feedforward), from pinocchio's RNEA."""
    model, data = robot.model, robot.create_data()
    n, w, k = robot.n, robot.transmission, robot.stiffness

    def link_torque(q, v, a):
        if wrench is None:
            return pin.rnea(model, data, q, v, a).copy()
        return pin.rnea(model, data, q, v, a, world_wrench_as_fext(robot, data, q, wrench, frame)).copy()

    feedforward = link_torque(q_d, np.zeros(n), np.zeros(n)) / w

    def gamma(zdd, zd, z):
        q, q_m, v, v_m, a, a_m = z[:n], z[n:], zd[:n], zd[n:], zdd[:n], zdd[n:]
        spring = k * (w * q - q_m)
        top = link_torque(q, v, a) + robot.link_damping * v + w * spring
        bottom = (robot.motor_inertia * a_m + robot.motor_damping * v_m - spring - feedforward
                  - kp * (q_m_d - q_m) + kd * v_m)
        return np.concatenate([top, bottom])

    return gamma, link_torque


def jacobian_fd(function, x, step):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        columns.append((function(x + e) - function(x - e)) / (2 * step))
    return np.column_stack(columns)


@pytest.mark.parametrize("name,tool", JOINT_MODEL_VARIANTS)
@pytest.mark.parametrize("loaded", [False, True], ids=["gravity", "gravity+wrench"])
def test_linearization_equals_finite_differences_of_eq_2_4(name, tool, loaded):
    """M_bar = dGamma/dzdd, D_bar = dGamma/dzd, K_bar = dGamma/dz at (0, 0, z^d), and Gamma(0, 0, z^d) = 0
    (so q_m^d is eq. 2.3's equilibrium), at 2 random poses and random gains; K_G block to 1e-6 of its size."""
    robot = load_robot(name, tool=tool)
    rng = np.random.default_rng(zlib.crc32(f"{name}{tool}{loaded}".encode()))
    frame = robot.tool_frame
    for _ in range(2):
        q_d = random_pose(robot, rng)
        kp = rng.uniform(0.5, 2.0, robot.n) * np.maximum(robot.kp, 100.0)
        kd = rng.uniform(0.5, 2.0, robot.n) * np.maximum(robot.kd, 1.0)
        wrench = np.concatenate([rng.uniform(-60, 60, 3), rng.uniform(-8, 8, 3)]) if loaded else None
        lin = linearize(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame)
        gamma, link_torque = closed_loop_gamma(robot, q_d, lin.q_m, kp, kd, wrench, frame)
        n = robot.n
        z_d, zero = np.concatenate([q_d, lin.q_m]), np.zeros(2 * n)
        # equilibrium: the motor set point of eq. 2.3 (computed here from RNEA) makes Gamma vanish
        expected_q_m = robot.transmission * q_d + link_torque(q_d, np.zeros(n), np.zeros(n)) / (
            robot.stiffness * robot.transmission)
        assert np.allclose(lin.q_m, expected_q_m, rtol=0, atol=1e-12)
        assert np.allclose(motor_set_point(robot, q_d, wrench=wrench, frame=frame), expected_q_m, rtol=0, atol=1e-12)
        assert np.abs(gamma(zero, zero, z_d)).max() <= 1e-8 * max(1.0, np.abs(robot.stiffness).max())
        m_fd = jacobian_fd(lambda x: gamma(x, zero, z_d), zero, 1e-3)  # Gamma is linear in zdd
        d_fd = jacobian_fd(lambda x: gamma(zero, x, z_d), zero, 1e-6)
        k_fd = jacobian_fd(lambda x: gamma(zero, zero, x), z_d, 1e-4)  # rounding of the big spring terms: 1e-4
        scale = lambda a: max(1.0, np.abs(a).max())  # noqa: E731
        assert np.abs(m_fd - lin.M_bar).max() <= 1e-9 * scale(lin.M_bar)
        assert np.abs(d_fd - lin.D_bar).max() <= 1e-6 * scale(lin.D_bar)
        assert np.abs(k_fd - lin.K_bar).max() <= 1e-6 * scale(lin.K_bar)
        # the gravity/wrench stiffness K_G on its own scale (it is small next to K W^2)
        k_g_fd = k_fd[:n, :n] - np.diag(robot.stiffness * robot.transmission**2)
        assert np.abs(k_g_fd - lin.K_G).max() <= 1e-6 * scale(lin.K_G) + 1e-5


@pytest.mark.parametrize("name,tool", VARIANTS)
def test_eigenvalues_equal_state_matrix_and_qep(name, tool):
    """Eigenvalues = scipy.linalg.eigvals of eq. 2.14's state matrix (one per conjugate pair), and every
    (lambda_k, u_k) solves the quadratic eigenvalue problem (lambda^2 M_bar + lambda D_bar + K_bar) u = 0."""
    robot = load_robot(name, tool=tool)
    rng = np.random.default_rng(7)
    for _ in range(3):
        result = modal_analysis(robot, random_pose(robot, rng))
        lin = result.linearized
        reference = scipy.linalg.eigvals(lin.state_matrix())
        upper = reference[reference.imag >= 0]
        upper = upper[np.argsort(np.abs(upper))]
        assert result.n_modes == upper.size
        ours = result.eigenvalues[np.argsort(np.abs(result.eigenvalues))]
        assert np.abs(ours - upper).max() <= 1e-9 * np.abs(upper).max()
        for lam, u in zip(result.eigenvalues, result.mode_shapes.T):
            t_matrix = lam**2 * lin.M_bar + lam * lin.D_bar + lin.K_bar
            bound = abs(lam) ** 2 * np.linalg.norm(lin.M_bar) + abs(lam) * np.linalg.norm(lin.D_bar) \
                + np.linalg.norm(lin.K_bar)
            assert np.linalg.norm(t_matrix @ u) <= 1e-12 * bound * np.linalg.norm(u)
            assert np.isclose(np.abs(u).max(), 1.0) and np.isclose(u[np.argmax(np.abs(u))], 1.0)
        assert np.allclose(result.frequencies_hz, np.abs(result.eigenvalues) / (2 * np.pi))
        assert np.allclose(result.damping_ratios, -result.eigenvalues.real / np.abs(result.eigenvalues))
        assert np.all(np.diff(result.frequencies_hz) >= 0)


def test_batch_equals_single_pose():
    """linearize_batch / solve_modes over 20 poses equal linearize / modal_analysis pose by pose."""
    robot = load_robot("scompi", tool=True)
    rng = np.random.default_rng(3)
    poses = np.array([random_pose(robot, rng) for _ in range(20)])
    batch = linearize_batch(robot, poses)
    arrays = solve_modes(batch.M_bar, batch.D_bar, batch.K_bar, shapes=True)
    for i, q in enumerate(poses):
        single = modal_analysis(robot, q)
        for field in ("q_m", "M_bar", "D_bar", "K_bar", "K_G"):
            assert np.array_equal(getattr(batch.at(i), field), getattr(single.linearized, field))
        assert np.allclose(arrays.frequencies_hz[i], single.frequencies_hz, rtol=1e-12)
        assert np.allclose(arrays.damping_ratios[i], single.damping_ratios, rtol=1e-10, atol=1e-13)
        assert np.allclose(arrays.mode_shapes[i], single.mode_shapes, atol=1e-9)


ONE_JOINT_URDF = """<?xml version="1.0"?>
<robot name="one_joint">
  <link name="base_link"/>
  <link name="link1">
    <inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="{mass}"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="{izz}"/></inertial>
  </link>
  <joint name="joint1" type="{kind}"><parent link="base_link"/><child link="link1"/>
    <origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" velocity="1" effort="100"/></joint>
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><parent link="link1"/><child link="tip"/>
    <origin xyz="0 0 0" rpy="0 0 0"/></joint>
</robot>
"""


def one_joint_robot(tmp_path, kind, mass, izz, k, b, d, dm, kp, kd, radius=None):
    """A single elastic joint (axis z, gravity along z so g(q) = 0): link inertia izz (revolute) or mass (prismatic)."""
    (tmp_path / "one.urdf").write_text(ONE_JOINT_URDF.format(mass=mass, izz=izz, kind=kind))
    extra = f", transmission_radius: {radius}" if radius else ""
    (tmp_path / "one.yaml").write_text(textwrap.dedent(f"""\
        robot: one_joint
        urdf: one.urdf
        gravity: [0.0, 0.0, -9.81]
        tool_frame: tip
        joints:
          joint1: {{stiffness: {k}, link_damping: {d}, motor_damping: {dm}, reflected_inertia: {b}{extra}}}
        controller: {{kp: {kp}, kd: {kd}}}
        """))
    return load_robot(tmp_path / "one.yaml")


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_one_joint_two_mass_closed_form(tmp_path, kind):
    """One flexible joint = two masses: link J (izz, or m/... for a rack of radius r, W = 1/r) and rotor B,
    spring k between W q and q_m, PD (kp, kd) on the rotor. Closed forms: undamped
    omega^2 = [(k_l/J + (k+kp)/B) +- sqrt((k_l/J + (k+kp)/B)^2 - 4 k_l kp/(J B))]/2 with k_l = k W^2, and the
    damped eigenvalues = roots of det(T(lambda)) = (J l^2 + d l + k_l)(B l^2 + (dm+kd) l + k+kp) - (k W)^2."""
    radius = 0.05 if kind == "prismatic" else None
    inertia, mass = 0.8, 12.0
    k, b, d, dm, kp, kd = 3000.0, 0.4, 1.5, 0.2, 2000.0, 15.0
    robot = one_joint_robot(tmp_path, kind, mass, inertia, k, b, d, dm, kp, kd, radius)
    j = mass if kind == "prismatic" else inertia
    w = 1.0 / radius if radius else 1.0
    k_link = k * w * w
    result = modal_analysis(robot, [0.1])
    polynomial = np.polymul([j, d, k_link], [b, dm + kd, k + kp]) - np.array([0, 0, 0, 0, (k * w) ** 2])
    roots = np.roots(polynomial)
    roots = np.sort_complex(roots[roots.imag >= 0])
    ours = np.sort_complex(result.eigenvalues)
    assert result.stable and np.allclose(ours, roots, rtol=1e-9)
    # undamped closed form
    s = k_link / j + (k + kp) / b
    root = np.sqrt(s * s - 4 * k_link * kp / (j * b))
    omega2 = np.array([s - root, s + root]) / 2
    undamped = undamped_modes(result.linearized)
    assert np.allclose(undamped.omega_squared, omega2, rtol=1e-12)
    assert np.allclose(undamped.mode_shapes.T @ result.linearized.M_bar @ undamped.mode_shapes, np.eye(2), atol=1e-12)
    # with zero damping the damped solver lands on the same frequencies, verdict marginal (Re lambda = 0)
    no_damping = one_joint_robot(tmp_path, kind, mass, inertia, k, b, 0.0, 0.0, kp, 0.0, radius)
    marginal = modal_analysis(no_damping, [0.1])
    assert marginal.verdict == "marginal" and not marginal.stable
    assert np.allclose((2 * np.pi * marginal.frequencies_hz) ** 2, omega2, rtol=1e-10)
    # receptance at the tip: link-side displacement per link-side force/torque, closed form of the two-mass system
    frequencies = np.array([0.0, 3.0, 11.0, 40.0])
    h = receptance(robot, [0.1], frequencies, frame="tip", axes="local")
    lam = 2j * np.pi * frequencies
    expected = (b * lam**2 + (dm + kd) * lam + k + kp) / np.polyval(polynomial, lam)
    entry = h.entry("z", "z") if kind == "prismatic" else h.entry("rz", "rz")
    assert np.allclose(entry, expected, rtol=1e-10)


def test_receptance_static_limit_reciprocity_and_modal_expansion():
    """Scompi config 8: H(0) = J (K_bar^-1)_qq J^T; H is symmetric (reciprocity, symmetric K_bar); the modal
    expansion with the residues of modal_participation rebuilds H; participations sum to 1."""
    robot = load_robot("scompi", tool=True)
    q = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]
    frequencies = np.linspace(0.0, 300.0, 61)
    frf = receptance(robot, q, frequencies)
    lin = frf.linearized
    jacobian = pin.computeFrameJacobian(robot.model, robot.create_data(), lin.q, robot.frame_id("tool0"),
                                        pin.LOCAL_WORLD_ALIGNED)
    static = jacobian @ np.linalg.inv(lin.K_bar)[:6, :6] @ jacobian.T
    assert np.allclose(frf.H[0].real, static, rtol=1e-9, atol=1e-15) and np.abs(frf.H[0].imag).max() < 1e-18
    assert np.allclose(frf.H, np.swapaxes(frf.H, 1, 2), rtol=1e-9, atol=1e-16)
    result = modal_analysis(robot, q)
    participation = modal_participation(robot, result)
    rebuilt = participation.receptance(frequencies, result.eigenvalues, result.overdamped)
    assert np.abs(rebuilt - frf.H).max() <= 1e-9 * np.abs(frf.H).max()
    assert np.isclose(participation.participation.sum(), 1.0)
    # with a follower-free but non-symmetric load (moments), the left eigenvectors make the expansion still exact
    wrench = [10.0, -30.0, 20.0, 3.0, -2.0, 4.0]
    loaded = modal_analysis(robot, q, wrench=wrench)
    frf_loaded = receptance(robot, q, frequencies, wrench=wrench)
    rebuilt = modal_participation(robot, loaded).receptance(frequencies, loaded.eigenvalues, loaded.overdamped)
    assert np.abs(rebuilt - frf_loaded.H).max() <= 1e-9 * np.abs(frf_loaded.H).max()


def test_mac_properties():
    """MAC is 1 for shapes equal up to a complex factor, 0 for orthogonal shapes, and in [0, 1]."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 3)) + 1j * rng.standard_normal((6, 3))
    assert np.allclose(np.diag(mac(a, a * (2.0 - 3.0j))), 1.0)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    assert np.allclose(mac(q), np.eye(6), atol=1e-12)
    values = mac(a, rng.standard_normal((6, 4)))
    assert values.shape == (3, 4) and np.all((values >= 0) & (values <= 1 + 1e-12))
    # the mode shapes of two nearby gains of the Scompi stay the same modes (diagonal MAC close to 1)
    robot = load_robot("scompi")
    q8 = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]
    first, second = modal_analysis(robot, q8, kp=15000), modal_analysis(robot, q8, kp=15200)
    assert np.diag(mac(first.mode_shapes, second.mode_shapes)).min() > 0.95
