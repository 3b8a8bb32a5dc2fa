"""Dynamics of flexible-link chains: DeNOC recursion (seed 003 section 5) vs references, rigid limit, eq. 44 torques.

References: the assembled inertia matrix + Cholesky (seed 003 section 7.2, eq. 32), the Lagrangian differentiated
by CasADi (independent of every recursion), and pinocchio (rigid limit).
"""
import math

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.flexible_links.beam_elements import ClampedBeamMesh
from flexrobot_ros.flexible_links.beam_link import BeamLink, beam_frame
from flexrobot_ros.flexible_links.denoc import forward_dynamics
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.inertia_matrix import forward_dynamics_cholesky, generalized_inertia
from flexrobot_ros.flexible_links.inverse_dynamics import bias_forces, inverse_dynamics
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes
from flexrobot_ros.model import load_robot

# Seed 003 eq. 44 and section 7.1.
K44 = np.array([0.075, 0.05, 0.1])
T44 = np.array([10.0, 5.0, 5.0])


def eq44(t):
    s = np.sin(math.pi * t / T44)
    return K44 * (t - T44 / math.pi * s), K44 * (1 - np.cos(math.pi * t / T44)), K44 * math.pi / T44 * np.sin(
        math.pi * t / T44)


@pytest.fixture(scope="module")
def canadarm():
    return chain_from_robot(load_robot("canadarm"))


def random_spatial_chain(seed: int, links: int = 5) -> FlexibleLinkChain:
    """A spatial serial chain with random joint axes (revolute and prismatic), placements and inertias; links
    alternate rigid / flexible (assumed modes or finite elements, planar or two bending directions, tip masses)."""
    rng = np.random.default_rng(seed)
    model = pin.Model()
    parent = 0
    beams = {}
    for i in range(links):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        prismatic = i == 2
        joint = pin.JointModelPrismaticUnaligned(axis) if prismatic else pin.JointModelRevoluteUnaligned(axis)
        rotation = pin.rpy.rpyToMatrix(*rng.uniform(-math.pi, math.pi, 3))
        placement = pin.SE3(rotation, rng.uniform(-0.5, 0.5, 3) + (np.array([0.8, 0, 0]) if i else 0))
        name = f"joint{i + 1}"
        j = model.addJoint(parent, joint, placement, name)
        inertia = pin.Inertia.Random()
        model.appendBodyToJoint(j, inertia, pin.SE3.Identity())
        parent = j
    model.gravity = pin.Motion(rng.normal(size=3) * 3.0, np.zeros(3))
    for i in (k for k in (0, 1, 3) if k < links):
        name = f"joint{i + 1}"
        length = 0.6 + 0.4 * rng.random()
        direction = rng.normal(size=3)
        rotation = beam_frame(direction, rng.normal(size=3))
        if i == 1:
            family_y, family_z = ClampedBeamMesh(length, 2), ClampedBeamMesh(length, 2)
        else:
            family_y, family_z = ClampedFreeModes(length, 2), (ClampedFreeModes(length, 1) if i == 0 else None)
        beams[name] = BeamLink(name, length, 2.0 + rng.random(), 300.0, 500.0 if family_z else None, family_y,
                               family_z, rotation, rng.uniform(-0.1, 0.1, 3), tip_mass=0.3 * i,
                               damping_ratio=0.02)
    hubs = {"joint2": pin.Inertia.Random()}
    return FlexibleLinkChain(model, beams, hubs=hubs)


def random_state(chain, rng, scale=0.05):
    y = np.concatenate([rng.uniform(-math.pi, math.pi, chain.n), rng.normal(size=chain.m) * scale])
    return y, rng.normal(size=chain.size), np.concatenate([rng.normal(size=chain.n) * 50, np.zeros(chain.m)])


def relative(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_recursive_equals_cholesky_canadarm(canadarm):
    """Issue 13: recursive DeNOC q'' = assembled-inertia + Cholesky q'' to 1e-10 at 20+ random states."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(25):
        y, yd, tau = random_state(canadarm, rng)
        worst = max(worst, relative(forward_dynamics(canadarm, y, yd, tau),
                                    forward_dynamics_cholesky(canadarm, y, yd, tau)))
    assert worst < 1e-10, worst


def test_recursive_equals_cholesky_random_spatial_chain():
    worst = 0.0
    for seed in range(4):
        chain = random_spatial_chain(seed)
        rng = np.random.default_rng(seed)
        for _ in range(6):
            y, yd, tau = random_state(chain, rng)
            worst = max(worst, relative(forward_dynamics(chain, y, yd, tau),
                                        forward_dynamics_cholesky(chain, y, yd, tau)))
            inertia = generalized_inertia(chain, chain.propagate(y, yd))
            np.testing.assert_allclose(inertia, inertia.T, atol=1e-12 * np.max(np.abs(inertia)))
            assert np.min(np.linalg.eigvalsh(inertia)) > 0
    assert worst < 1e-10, worst


def test_lagrangian_reference_and_skew_symmetry():
    """The recursive inertia matrix, bias forces and q'' equal the CasADi Lagrangian's (independent), and
    I_dot - 2 C is skew-symmetric with C from automatic differentiation and I_dot from the recursive inertia
    (central differences along y_dot): this fails if the Coriolis factor 2 of eq. 24b is dropped."""
    chain = random_spatial_chain(11, links=4)
    reference = lagrangian_dynamics(chain, points_per_beam=16)
    rng = np.random.default_rng(5)
    for _ in range(3):
        y, yd, tau = random_state(chain, rng, scale=0.2)
        state = chain.propagate(y, yd)
        inertia = generalized_inertia(chain, state)
        np.testing.assert_allclose(inertia, np.array(reference.inertia(y)), atol=1e-10 * np.max(np.abs(inertia)))
        h = bias_forces(chain, y, yd)
        np.testing.assert_allclose(h, np.array(reference.bias(y, yd)).ravel(), atol=1e-9 * np.max(np.abs(h)))
        assert relative(forward_dynamics(chain, y, yd, tau), reference.forward_dynamics(y, yd, tau)) < 1e-9
        step = 1e-6
        plus = generalized_inertia(chain, chain.propagate(y + step * yd, yd))
        minus = generalized_inertia(chain, chain.propagate(y - step * yd, yd))
        inertia_dot = (plus - minus) / (2 * step)
        skew = inertia_dot - 2 * np.array(reference.coriolis(y, yd))
        assert np.max(np.abs(skew + skew.T)) < 1e-6 * np.max(np.abs(inertia_dot))


def test_rigid_limit_equals_pinocchio_aba(canadarm):
    """Issue 13: with the modes removed, forward dynamics = pinocchio's ABA to 1e-10 (Canadarm with gravity added,
    and a random spatial chain whose links are all rigid)."""
    robot = load_robot("canadarm")
    model = robot.model.copy()
    model.gravity = pin.Motion(np.array([0.3, -9.81, 0.0]), np.zeros(3))
    no_modes = FlexibleLinkChain(model, {name: BeamLink(name, b.beam.length, b.beam.rho, 1e5, None,
                                                        ClampedFreeModes(b.beam.length, 0), None, np.eye(3),
                                                        np.zeros(3)) for name, b in zip(canadarm.joint_names,
                                                                                       canadarm.bodies)})
    spatial = random_spatial_chain(2)
    spatial_rigid = FlexibleLinkChain(spatial.model, {})
    rng = np.random.default_rng(8)
    for chain, pin_model in ((no_modes, model), (spatial_rigid, spatial.model)):
        data = pin_model.createData()
        for _ in range(10):
            q, v, tau = rng.normal(size=(3, chain.n))
            expected = pin.aba(pin_model, data, q, v, tau)
            assert relative(forward_dynamics(chain, q, v, tau), expected) < 1e-10
            assert relative(inverse_dynamics(chain, q, v, expected), tau) < 1e-10


@pytest.mark.parametrize("t, expected", [(2.5, [986.3922, 514.0993, 55.6461]), (5.0, [525.2367, 289.6976, 38.5112])])
def test_canadarm_rigid_torques_eq44(t, expected):
    """Issue 13 / seed 003 section 7.1: rigid-model torques along eq. 44 (uniform rods I_c = m a^2/12, g = 0), from
    the chain's inverse dynamics with the beams' modes removed (the beams become the uniform rods), 1e-4 rel."""
    robot = load_robot("canadarm")
    chain = FlexibleLinkChain(robot.model, {
        f"joint{i + 1}": BeamLink("l", a, m / a, 1e5, None, ClampedFreeModes(a, 0), None, np.eye(3), np.zeros(3))
        for i, (a, m) in enumerate([(6.0, 140.0), (7.0, 85.0), (2.0, 95.0)])}, gravity=np.zeros(3))
    q, qd, qdd = eq44(t)
    np.testing.assert_allclose(inverse_dynamics(chain, q, qd, qdd), expected, rtol=1e-4)


def test_canadarm_energy_balance_and_momentum():
    """Issue 13 energy acceptance, on a short horizon (the Python recursion costs ~1 ms per call and the coupled
    Canadarm's fastest mode is ~165 Hz, so 10 s at 1e-10 tolerance is a bench-length run: bench/flexible_links.py
    section 5 measures 9.1e-8 over 10 s from this state, whose modal energy is large; the full 10 s line is
    test_canadarm_energy_constant_over_10_s): joint 1 free (zero
    torque), joints 2 and 3 driven; no damping, no gravity. The energy balance H(t) - H(0) = int tau . theta_dot dt
    and the generalized momentum of joint 1 (the angular momentum about its axis) hold to the integrator's
    tolerance; with tau = 0 as well, T + V stays constant. A missing Coriolis factor 2 in eq. 24b breaks both."""
    from scipy.integrate import solve_ivp

    chain = chain_from_robot(load_robot("canadarm"))
    n, size = chain.n, chain.size

    def torque(t, forced):
        return np.array([0.0, 300.0 * math.sin(7.0 * t), -80.0 * math.cos(11.0 * t)]) if forced else np.zeros(3)

    def rhs(t, x, forced):
        y, yd = x[:size], x[size:2 * size]
        tau = np.concatenate([torque(t, forced), np.zeros(chain.m)])
        return np.concatenate([yd, forward_dynamics(chain, y, yd, tau), [tau[:n] @ yd[:n]]])

    x0 = np.zeros(2 * size + 1)
    x0[:n] = [0.3, -0.4, 0.8]
    x0[n:size] = 0.02
    x0[size:size + n] = [0.1, -0.2, 0.3]
    for forced in (False, True):
        solution = solve_ivp(rhs, (0.0, 0.1), x0, method="DOP853", rtol=1e-11, atol=1e-13, args=(forced,),
                             t_eval=np.linspace(0.0, 0.1, 5))
        assert solution.success
        states = solution.y.T
        energy = np.array([sum(chain.energy(x[:size], x[size:2 * size])) for x in states])
        balance = energy - energy[0] - states[:, -1]
        assert np.max(np.abs(balance)) < 1e-8 * energy[0], (forced, balance)
        momentum = [(generalized_inertia(chain, chain.propagate(x[:size], x[size:2 * size])) @ x[size:2 * size])[0]
                    for x in states]
        assert np.max(np.abs(np.array(momentum) - momentum[0])) < 1e-8 * np.max(np.abs(momentum)), momentum


def test_compiled_dynamics_equal_recursive(tmp_path, monkeypatch):
    """The generated-C forward dynamics (simulator's real-time path) equal the recursive DeNOC algorithm (1e-9)."""
    from flexrobot_ros.flexible_links.compiled_dynamics import CompiledForwardDynamics

    monkeypatch.setenv("FLEXROBOT_CACHE", str(tmp_path))
    chain = random_spatial_chain(4, links=1)  # one spatial beam (2 + 1 modes): a small function compiles fast
    compiled = CompiledForwardDynamics(chain, points_per_beam=16)
    assert list(tmp_path.glob("flexible_fd_*.so")), "no library compiled into the code cache"
    rng = np.random.default_rng(1)
    for _ in range(5):
        y, yd, tau = random_state(chain, rng, scale=0.2)
        assert relative(compiled(y, yd, tau), forward_dynamics(chain, y, yd, tau)) < 1e-9


@pytest.mark.slow
def test_canadarm_energy_constant_over_10_s():
    """Issue 13 energy acceptance line, full length: no damping, no gravity, zero torque (joints free), the shipped
    Canadarm (seed 003 Table 2, two clamped-free modes per link), 10 s accurate integration (DOP853, rtol 1e-10): T + V
    constant to 1e-8 relative. The arm starts undeformed with the joints spinning, so the link modes are excited by
    the motion itself (centrifugal and Coriolis coupling). Integrated with the compiled Lagrangian of the same model
    (the Python recursion would take ~2.5 min for the 3e5 evaluations; the compiled model is checked against the
    recursion along the run here, and at random states in test_compiled_dynamics_equal_recursive); energy from the
    link layer (chain.energy). Compiles once per model (~20 s, cached in the package's code cache)."""
    from scipy.integrate import solve_ivp

    from flexrobot_ros.flexible_links.compiled_dynamics import CompiledForwardDynamics

    chain = chain_from_robot(load_robot("canadarm"))
    n, size = chain.n, chain.size
    fd, tau = CompiledForwardDynamics(chain), np.zeros(size)
    x0 = np.zeros(2 * size)
    x0[:n], x0[size:size + n] = [0.3, -0.4, 0.8], [0.5, -1.0, 1.5]
    solution = solve_ivp(lambda t, x: np.concatenate([x[size:], fd(x[:size], x[size:], tau)]), (0.0, 10.0), x0,
                         method="DOP853", rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 10.0, 201))
    assert solution.success
    states = solution.y.T
    parts = np.array([chain.energy(x[:size], x[size:]) for x in states])  # kinetic, strain, gravity (0)
    energy = parts.sum(axis=1)
    assert np.max(np.abs(energy - energy[0])) < 1e-8 * energy[0], np.max(np.abs(energy - energy[0])) / energy[0]
    # the beams do vibrate: modal coordinates ~1e-2, strain energy up to ~1e-3 of the total (measured 0.75 / 540 J)
    assert np.max(np.abs(states[:, n:size])) > 5e-3 and np.max(parts[:, 1]) > 5e-4 * energy[0]
    for x in states[::50]:  # the same model: the compiled Lagrangian integrates the beams with 16 Gauss points
        y, yd = x[:size], x[size:]  # per beam, the link layer with its own rule (measured 1.1e-9 at the start)
        assert relative(fd(y, yd, tau), forward_dynamics(chain, y, yd, tau)) < 1e-8
