"""Seed 004 (Theodore & Ghosal) sections 2.1-2.2 and 4.4: a flexible link on a prismatic joint, the beam sliding
through its hub (eqs. 6, 18-22), discretized by finite elements of length d / N (section 2.1.2), on the RRP robot."""
import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.integrate import solve_ivp
from scipy.linalg import eigh

from flexrobot_ros.errors import ModelError, SimulationError
from flexrobot_ros.flexible_links.clamped_mass import (ClampedMassParameters, PrismaticLinkRoots, TipBody,
                                                     frequency_roots)
from flexrobot_ros.flexible_links.beam_elements import hermite_shape_functions
from flexrobot_ros.flexible_links.compiled_dynamics import CompiledForwardDynamics
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

EI, RHO_A, M_P, L0 = 1165.4916, 0.331, 0.0828, 1.3  # seed 004 Table 3
LINK3 = {"EI": {"y": EI, "z": EI}, "mass_per_length": RHO_A, "method": "finite_elements", "elements": 2,
         "length": L0, "tip_mass": M_P}


def rrp_yaml(tmp_path, link2: bool = True, **link3) -> str:
    document = yaml.safe_load((share_directory() / "config" / "rrp.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / "rrp.urdf")
    if not link2:
        del document["flexible_links"]["link2"]
    document["flexible_links"]["link3"] = {**LINK3, **link3}
    path = tmp_path / "rrp_sliding.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    return load_robot(rrp_yaml(tmp_path_factory.mktemp("rrp")), tool=True)


def test_model_size_is_section_4_4s(robot):
    """Seed 004 section 4.4: the spatial RRP with links 2 and 3 flexible, two elements per link and plane, has
    4 m n_f + n = 19 second-order equations."""
    assert chain_from_robot(robot).size == 4 * 2 * 2 + 3
    assert chain_from_robot(robot, elements=1).size == 4 * 1 * 2 + 3


@pytest.mark.parametrize("d, expected", [(0.3, (1103.47, 10900.87)), (1.0, (146.96, 1067.55))])
def test_locked_sliding_link_frequencies_with_the_payload(robot, d, expected):
    """Seed 004 section 4.2's example (link 3, tip mass m_p = 0.0828 kg): the two-element model's frequencies at free
    length d = 0.3 m and 1.0 m are 1103.47, 10900.87 and 146.96, 1067.55 rad/s (1e-4 relative): the sliding link's
    stiffness and mass at the current d (element length d / 2), every joint locked, both planes alike."""
    chain = chain_from_robot(robot)
    dynamics = lagrangian_dynamics(chain)
    y = np.r_[0.3, 0.5, d, np.zeros(chain.m)]
    rows = chain.n + np.arange(8, 16)  # link 3's nodal coordinates (after link 2's 8)
    mass = np.array(dynamics.inertia(y))[np.ix_(rows, rows)]
    step = 1e-6
    stiffness = np.column_stack([(np.array(dynamics.bias(y + step * e, np.zeros(chain.size))).ravel()
                                  - np.array(dynamics.bias(y - step * e, np.zeros(chain.size))).ravel())[rows]
                                 / (2 * step) for e in np.eye(chain.size)[rows]])
    omega = np.sqrt(eigh(stiffness, mass, eigvals_only=True))
    np.testing.assert_allclose(omega[[0, 2]], expected, rtol=1e-4)
    np.testing.assert_allclose(omega[[1, 3]], expected, rtol=1e-4)  # the other plane


def test_zero_deflection_kinematics_is_the_dh_product(robot):
    """Seed 004 eqs. 3-4 with E = I: zero elastic coordinates put the tool (the sliding beam's tip) where the rigid DH
    chain (pinocchio on urdf/rrp.urdf) puts it, to 1e-14, at random joint coordinates."""
    plant = ElasticRobotPlant(robot)
    rigid = load_robot("rrp", tool=True)
    data = rigid.model.createData()
    tool = robot.frame_id("tool0")
    for q in np.random.default_rng(4).uniform([-3, -1.5, 0.25], [3, 1.5, 1.15], (10, 3)):
        placement = plant.model.frame_placement(plant.model.coordinates(q), tool)
        pin.framesForwardKinematics(rigid.model, data, q)
        assert np.abs(placement.translation - data.oMf[tool].translation).max() < 1e-14
        assert np.abs(placement.rotation - data.oMf[tool].rotation).max() < 1e-14


def beam_kinetic_energy(robot, y, y_dot, points=4000):
    """Independent check (test-local): the sliding beam's kinetic energy from material points. Each point is labelled
    by its distance s from the tip; its world position uses pinocchio's joint-2 frame, the joint-3 placement and the
    Hermite shape functions of beam_elements at xi = d - s; its velocity is a central difference along (y, y_dot)
    at fixed s; 1/2 int rho |v|^2 by the midpoint rule, plus the tip mass."""
    model, data = robot.model, robot.model.createData()
    placement = model.jointPlacements[3]

    def position(yy, s):
        pin.forwardKinematics(model, data, yy[:3])
        hub = data.oMi[2] * placement
        d = yy[2]
        xi = d - s
        local = np.array([0.0, 0.0, xi])
        if xi > 0:
            h = d / 2
            element = min(int(xi / h), 1)
            shapes = hermite_shape_functions(np.array([xi - element * h]), h)[0]
            for plane, axis in ((0, 0), (1, 1)):  # beam y = joint x, beam z = joint y
                nodal = np.r_[np.zeros(2), yy[3 + 4 * plane:3 + 4 * plane + 4]]
                local[axis] += shapes @ nodal[2 * element:2 * element + 4]
        return hub.act(local)

    eps = 1e-6
    s_grid = (np.arange(points) + 0.5) * L0 / points
    energy = 0.0
    for s in s_grid:
        v = (position(y + eps * y_dot, s) - position(y - eps * y_dot, s)) / (2 * eps)
        energy += 0.5 * RHO_A * (L0 / points) * v @ v
    v_tip = (position(y + eps * y_dot, 0.0) - position(y - eps * y_dot, 0.0)) / (2 * eps)
    return energy + 0.5 * M_P * v_tip @ v_tip


def test_material_derivative_kinetic_energy(tmp_path):
    """Seed 004 eqs. 19-22: the sliding link's kinetic energy counts every material point with its material velocity
    (the beam slides: d_dot along the axis plus d_dot dw/dxi). Against the test-local material-point sum (beam_kinetic_
    energy) plus pinocchio's kinetic energy of links 1 and 2, at random states (1e-6 relative: the midpoint rule)."""
    robot = load_robot(rrp_yaml(tmp_path, link2=False), tool=True)
    chain = chain_from_robot(robot)
    dynamics = lagrangian_dynamics(chain)
    rigid = robot.model.copy()
    rigid.inertias[3] = pin.Inertia.Zero()
    data = rigid.createData()
    rng = np.random.default_rng(6)
    for _ in range(3):
        y = np.r_[rng.uniform(-1, 1, 2), rng.uniform(0.3, 1.1), 0.01 * rng.normal(size=chain.m)]
        y_dot = rng.normal(size=chain.size)
        ours = float(np.array(dynamics.energy(y, y_dot)).ravel()[0])
        expected = pin.computeKineticEnergy(rigid, data, y[:3], y_dot[:3]) + beam_kinetic_energy(robot, y, y_dot)
        assert ours == pytest.approx(expected, rel=1e-6)


@pytest.mark.slow
def test_energy_is_conserved_while_the_beam_slides(robot):
    """Seed 004 section 2.2 (Lagrange's equations of T and V): no control, gravity or damping, the joints free and the
    prismatic joint sliding (d from 0.6 m outwards), beams deflected: T + V constant to 1e-8 relative over 1 s
    (DOP853, rtol 1e-11; one element per link and plane keeps the highest frequency integrable; measured 1.4e-10).
    The ~1.5e5 evaluations of the Lagrangian's forward dynamics run as its generated C (CompiledForwardDynamics, the
    same CasADi expressions; equal to CasADi's evaluation at the start state here): the energy is the Lagrangian's."""
    chain = chain_from_robot(robot, elements=1)
    size = chain.size
    dynamics = lagrangian_dynamics(chain, points_per_beam=24)
    forward = CompiledForwardDynamics(chain, points_per_beam=24)
    x0 = np.zeros(2 * size)
    x0[:3], x0[size:size + 3] = [0.3, 0.5, 0.6], [0.2, -0.2, 0.1]
    x0[3:size] = 1e-3 * np.random.default_rng(0).normal(size=chain.m)
    zero = np.zeros(size)
    np.testing.assert_allclose(forward(x0[:size], x0[size:], zero),
                               np.ravel(dynamics.forward_dynamics(x0[:size], x0[size:], zero)), rtol=1e-9, atol=1e-9)
    solution = solve_ivp(lambda t, x: np.r_[x[size:], forward(x[:size], x[size:], zero)],
                         (0.0, 1.0), x0, method="DOP853", rtol=1e-11, atol=1e-13, t_eval=np.linspace(0.0, 1.0, 11))
    assert solution.success
    energy = np.array([np.sum(np.array(dynamics.energy(x[:size], x[size:]))) for x in solution.y.T])
    assert np.abs(energy - energy[0]).max() < 1e-8 * energy[0]
    assert solution.y[2].max() > 0.7  # it did slide


def test_bad_sliding_link_input_names_the_field(tmp_path):
    """A sliding link needs its total length, at least the joint's travel, and finite elements or the clamped-mass
    assumed modes (ModelError naming the file, link and field)."""
    document = yaml.safe_load(open(rrp_yaml(tmp_path)).read())
    for change, field in (({"length": None}, "length"), ({"length": 1.0}, "length"),
                          ({"method": "assumed_modes", "elements": None, "modes": 2, "family": "clamped_free"},
                           "family"),
                          ({"hub_inertia": 0.1}, "hub_inertia")):
        entry = {k: v for k, v in {**LINK3, **change}.items() if v is not None}
        document["flexible_links"]["link3"] = entry
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(document))
        with pytest.raises(ModelError, match=rf"flexible_links\.link3\.{field}"):
            chain_from_robot(load_robot(path))


AMM = {"method": "assumed_modes", "family": "clamped_mass", "modes": 2, "elements": None}


@pytest.fixture(scope="module")
def amm(tmp_path_factory):
    document = yaml.safe_load(open(rrp_yaml(tmp_path_factory.mktemp("amm"))).read())
    document["flexible_links"]["link3"] = {k: v for k, v in {**LINK3, **AMM}.items() if v is not None}
    path = tmp_path_factory.mktemp("amm2") / "rrp_amm.yaml"
    path.write_text(yaml.safe_dump(document))
    robot = load_robot(path, tool=True)
    chain = chain_from_robot(robot, method="assumed_modes", modes=2)
    return robot, chain, lagrangian_dynamics(chain)


def test_assumed_modes_model_size(amm):
    """Seed 004 section 4.4: two assumed modes per flexible link and plane: 2 m n_f + n = 11 equations."""
    assert amm[1].size == 2 * 2 * 2 + 3


@pytest.mark.parametrize("d, expected", [(0.3, (1103.45, 10807.82)), (1.0, (146.94, 1059.24))])
def test_assumed_modes_are_the_exact_clamped_mass_modes(amm, d, expected):
    """Seed 004 section 4.2 (eq. 38 with M = m_p / (rho A d)): the clamped-mass assumed modes of the sliding link give
    the exact frequencies 1103.45, 10807.82 rad/s at d = 0.3 m and 146.94, 1059.24 rad/s at 1.0 m (1e-4), below the
    two-element values of test_locked_sliding_link_frequencies_with_the_payload."""
    _, chain, dynamics = amm
    y = np.r_[0.3, 0.5, d, np.zeros(chain.m)]
    rows = chain.n + np.arange(4, 8)  # link 3 after link 2's four modes
    mass = np.array(dynamics.inertia(y))[np.ix_(rows, rows)]
    step = 1e-6
    stiffness = np.column_stack([(np.array(dynamics.bias(y + step * e, np.zeros(chain.size))).ravel()
                                  - np.array(dynamics.bias(y - step * e, np.zeros(chain.size))).ravel())[rows]
                                 / (2 * step) for e in np.eye(chain.size)[rows]])
    omega = np.sqrt(eigh(stiffness, mass, eigvals_only=True))
    np.testing.assert_allclose(omega[[0, 2]], expected, rtol=1e-4)


def test_time_varying_roots_equal_the_root_solve_and_eqs_45_47(amm):
    """Seed 004 section 4.2: the roots beta_i(d) inside the model equal a root solve of eq. 38 at every d (1e-10),
    and their rate is eq. 45 with eqs. 46-47 (m_p, not m_p^2: ERRATA.md), dbeta/dt = f1/f2 dd/dt (1e-7)."""
    import casadi as ca

    _, chain, _ = amm
    sliding = chain.sliding[0].sliding
    d = ca.SX.sym("d")
    roots = ca.vertcat(*sliding.roots(d))
    function = ca.Function("roots", [d], [roots, ca.jacobian(roots, d)])
    tracker = PrismaticLinkRoots(count=2, mass_per_length=RHO_A, tip=TipBody(mass=M_P))
    for length in (0.3, 0.45, 0.65, 0.8, 1.0, 1.15):
        beta, rate = (np.array(v).ravel() for v in function(length))
        direct = frequency_roots(2, ClampedMassParameters(M=M_P / (RHO_A * length)))
        np.testing.assert_allclose(beta, direct, atol=1e-10)
        np.testing.assert_allclose(rate, tracker.rate(direct, length, 1.0), rtol=1e-7)


@pytest.mark.slow
def test_rrp_closed_loop_with_both_links_flexible(robot):
    """Seed 004 section 5 (Figs. 5-8) with links 2 and 3 flexible (two elements per plane, 19 equations): decoupling
    control along the cycloids (link 3 sliding out from 0.3 to 1.0 m), the LQR loop from 0.5 s: the end-effector
    error peaks at millimetres during the motion (measured 22 mm; link 3's tip deflects by up to 4 mm) and is below
    0.1 mm from t = 1 s (measured 0.007 mm; at 1 kHz: 250 Hz steps are too coarse for link 3's stiff elements)."""
    from test_decoupling_control import end_effector_error

    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.simulation import Simulation
    from flexrobot_ros.simulation.decoupling_control import DecouplingControl

    plant = ElasticRobotPlant(robot)
    control = DecouplingControl(plant, load_trajectory(share_directory() / "config" / "rrp_trajectory.yaml"))
    output = Simulation(plant, control, q0=control.q_d, rate=1000.0).run(1.1)
    error = end_effector_error(robot, plant, control, output)
    assert 1e-3 < error[output.t <= 0.5].max() < 0.05
    assert error[output.t >= 1.0].max() < 1e-4
    assert np.abs(plant.tip_deflections(output.states)[:, 1]).max() > 1e-3  # link 3 does bend


def roots_robot(tmp_path, roots: str):
    """The RRP with link 2 rigid and link 3 on two clamped-mass assumed modes per plane, ``roots: <roots>``."""
    document = yaml.safe_load(open(rrp_yaml(tmp_path, link2=False)).read())
    document["flexible_links"]["link3"] = {k: v for k, v in {**LINK3, **AMM, "roots": roots}.items() if v is not None}
    path = tmp_path / f"rrp_roots_{roots}.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_robot(path, tool=True)


def test_integrated_roots_give_the_explicit_roots_dynamics(tmp_path):
    """Seed 004 section 4.2, `roots: integrated`: the roots beta of eq. 38 enter the Lagrangian as symbols whose rates
    are eqs. 45-47 (m_p erratum); with beta on the root curve its inertia matrix, bias forces and Coriolis matrix are
    those of the explicit roots (functions of d) to 1e-12 relative, at random states; its rates equal the
    clamped-mass layer's eq. 40 (flexible_links.clamped_mass.PrismaticLinkRoots.rate) to 1e-9."""
    explicit = lagrangian_dynamics(chain_from_robot(roots_robot(tmp_path, "explicit")))
    integrated = lagrangian_dynamics(chain_from_robot(roots_robot(tmp_path, "integrated")))
    assert (explicit.roots, integrated.roots) == (0, 2)
    reference = PrismaticLinkRoots(2, RHO_A, TipBody(mass=M_P))
    rng = np.random.default_rng(11)
    for _ in range(4):
        y = np.r_[rng.uniform(-1, 1, 2), rng.uniform(0.3, 1.1), 0.01 * rng.normal(size=4)]
        y_dot = rng.normal(size=7)
        beta = np.array(integrated.explicit_roots(y)).ravel()
        np.testing.assert_allclose(beta, reference.roots(y[2]), atol=1e-10)
        for name, args in (("inertia", (y,)), ("bias", (y, y_dot)), ("coriolis", (y, y_dot))):
            ours, theirs = (np.array(getattr(integrated, name)(*args, beta)),
                            np.array(getattr(explicit, name)(*args)))
            assert np.abs(ours - theirs).max() <= 1e-12 * np.abs(theirs).max(), name
        np.testing.assert_allclose(np.array(integrated.root_rates(y, y_dot, beta)).ravel(),
                                   reference.rate(beta, y[2], y_dot[2]), rtol=1e-9)


@pytest.mark.slow
def test_integrated_roots_follow_the_root_solve_along_a_motion(tmp_path):
    """The plant with `roots: integrated` carries beta as states (block ``beta``, started on eq. 38's roots): joints
    free under constant torques, the beam sliding out from 0.6 to 0.75 m in 0.1 s (DOP853, 1e-10): the positions
    equal the explicit-roots plant's (1e-9), the beta states a root solve at each d (1e-9), T + V = work (1e-9
    relative); the CSV gets beta columns; the compiled plant refuses them, and `roots` is refused on a revolute
    link (ModelError naming the field)."""
    runs = {}
    for roots in ("explicit", "integrated"):
        plant = ElasticRobotPlant(roots_robot(tmp_path, roots))
        x0 = plant.state([0.2, 0.3, 0.6], [0.2, 0.3, 0.6], qd=[1.0, -0.5, 0.5])
        tau = np.array([0.5, -0.3, 3.0])
        solution = solve_ivp(lambda t, x: plant.derivative(x, tau), (0.0, 0.1), x0, method="DOP853", rtol=1e-10,
                             atol=1e-12, t_eval=np.linspace(0.0, 0.1, 6))
        runs[roots] = (plant, solution.y.T)
    (explicit, xe), (integrated, xi) = runs["explicit"], runs["integrated"]
    positions, eta = explicit.layout["positions"], explicit.layout["eta"]
    assert integrated.layout["beta"] == slice(20, 22)  # after [q, q_m, eta, qd, qd_m, eta_dot] (2 x (3 + 3 + 4))
    assert xi[-1, 2] > 0.72 and np.abs(xe[:, eta]).max() > 5e-5  # it slides and bends
    np.testing.assert_allclose(xi[:, positions], xe[:, positions], atol=1e-9)
    reference = PrismaticLinkRoots(2, RHO_A, TipBody(mass=M_P))
    np.testing.assert_allclose(xi[:, integrated.layout["beta"]], [reference.roots(d) for d in xi[:, 2]], atol=1e-9)
    start, end = integrated.energy(xi[0]), integrated.energy(xi[-1])
    assert abs(end.total - start.total - (end.work_in - end.dissipated)) < 1e-9 * end.total
    columns = integrated.extra_columns(xi)
    np.testing.assert_array_equal(columns["beta.link3.2"], xi[:, integrated.layout["beta"].start + 1])
    with pytest.raises(SimulationError, match="roots: integrated"):
        ElasticRobotPlant(roots_robot(tmp_path, "integrated"), compiled=True)
    document = yaml.safe_load(open(rrp_yaml(tmp_path)).read())
    document["flexible_links"]["link2"]["roots"] = "integrated"
    path = tmp_path / "bad_roots.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ModelError, match=r"flexible_links\.link2\.roots: only for a link on a prismatic joint"):
        chain_from_robot(load_robot(path))


def test_a_sliding_link_needs_a_positive_free_length(tmp_path, capsys):
    """The shipped RRP held at joint 3 = 0 (the CLI's default initial pose) would have a beam of zero free length:
    `flexrobot simulate` and `flexrobot modal` refuse it in one line naming the joint, the value and the joint
    limits (status 2), before any work (the joint-limit check of every command, issue 22); the plant refuses a
    free length outside (0, l0] itself."""
    from flexrobot_ros.cli import main

    assert main(["simulate", "rrp", "--tool", "--duration", "0.01", "--out", str(tmp_path / "out.csv")]) == 2
    assert ("--q0 (default: zeros): joint 'joint3': q = 0 m is below the lower limit 0.2 m (robot 'rrp'); expected "
            "positions within [0.2, 1.2] m") in capsys.readouterr().err
    assert main(["modal", "rrp", "--tool", "--q", "0.1,0.2,-0.1"]) == 2
    assert "--q: joint 'joint3': q = -0.1 m is below the lower limit 0.2 m" in capsys.readouterr().err
    chain = chain_from_robot(load_robot("rrp", tool=True))
    with pytest.raises(ModelError, match=r"joint3 = 0 m: the sliding link link3's free length must lie in "
                                         r"\(0, 1\.3\] m \(joint limits \[0\.2, 1\.2\] m\)"):
        chain.check_free_lengths(np.zeros(3))
