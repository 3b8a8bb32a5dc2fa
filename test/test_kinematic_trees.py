"""Robots that are trees (issue 36, item 3): elastic joints on rigid links work on a kinematic tree as pinocchio
does; a flexible link on a tree is refused at load time in one line.

Trees from vendor URDFs (example-robot-data, the test extra): TIAGo with its torso (prismatic), arm and head
elastic and everything else locked (the arm and the head both branch off the torso), and the Panda with its two
prismatic fingers elastic (both branch off joint 7); random trees of revolute and prismatic joints, one of them a
forest (several joints on the base). Expected values are pinocchio's, computed here: ``pin.rnea`` (tau),
``pin.computeRNEADerivatives`` (dtau = dtau/dq qd + dtau/dv qdd + M q'''), 8th-order central differences of
``pin.rnea`` along smooth trajectories (dtau, ddtau), ``pin.crba``, ``pin.aba``, ``pin.nonLinearEffects`` and
``pin.computeGeneralizedGravityDerivatives`` (the closed-loop linearization of seed 000 eqs. 2.8-2.12, its modes by
eqs. 2.13-2.18, written out below).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward, spline_through_waypoints
from flexrobot_ros.dynamics.codegen import load_sdrnea
from flexrobot_ros.dynamics.dae.tool_axes import default_tool_axes
from flexrobot_ros.dynamics.ejnea import Ejnea
from flexrobot_ros.dynamics.feedforward import rigid_feedforward
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.denoc import forward_dynamics
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.inertia_matrix import generalized_inertia
from flexrobot_ros.flexible_links.inverse_dynamics import inverse_dynamics
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics
from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from vendor_robots import ROBOTS

TIAGO = ROBOTS / "tiago_description" / "robots" / "tiago.urdf"
PANDA = ROBOTS / "panda_description" / "urdf" / "panda.urdf"
#: Elastic-joint parameters of every joint (a prismatic one adds its transmission radius [m]).
JOINT = {"stiffness": 2.0e4, "rotor_inertia": 1.0e-5, "gear_ratio": 100, "link_damping": 1.0, "motor_damping": 0.05}
PRISMATIC = {**JOINT, "transmission_radius": 0.01}
TIAGO_ELASTIC = ["torso_lift_joint", *(f"arm_{i}_joint" for i in range(1, 8)), "head_1_joint", "head_2_joint"]
PANDA_ELASTIC = [*(f"panda_joint{i}" for i in range(1, 8)), "panda_finger_joint1", "panda_finger_joint2"]
#: Weights of the 8th-order central differences of the first and second derivative (step h).
FIRST = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])
SECOND = np.array([-1 / 560, 8 / 315, -1 / 5, 8 / 5, -205 / 72, 8 / 5, -1 / 5, 8 / 315, -1 / 560])

def tiago_yaml(folder: Path) -> Path:
    """TIAGo: torso, arm and head elastic; the hand's joints and the wheels locked at 0."""
    movable = pin.buildModelFromUrdf(str(TIAGO)).names[1:]
    document = {"robot": "tiago", "urdf": str(TIAGO), "tool_frame": "arm_tool_link",
                "locked_joints": {name: 0.0 for name in movable if name not in TIAGO_ELASTIC},
                "controller": {"kp": 2000.0, "kd": 20.0},
                "joints": {name: dict(PRISMATIC if name == "torso_lift_joint" else JOINT) for name in TIAGO_ELASTIC}}
    path = folder / "tiago.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def panda_yaml(folder: Path) -> Path:
    """The Panda with its seven joints and its two prismatic fingers elastic."""
    document = {"robot": "panda", "urdf": str(PANDA), "tool_frame": "panda_hand",
                "controller": {"kp": 2000.0, "kd": 20.0},
                "joints": {name: dict(PRISMATIC if "finger" in name else JOINT) for name in PANDA_ELASTIC}}
    path = folder / "panda.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture(scope="module")
def vendor_trees(tmp_path_factory):
    if not (TIAGO.is_file() and PANDA.is_file()):
        pytest.skip("needs example-robot-data (the test extra)")
    folder = tmp_path_factory.mktemp("trees")
    return {"tiago": load_robot(tiago_yaml(folder)), "panda": load_robot(panda_yaml(folder))}


def random_tree(parents: list[int], seed: int) -> pin.Model:
    """Joints 1..n with the given pinocchio parents (0: the base; in depth-first order, every subtree's joints
    consecutive, as pinocchio's algorithms expect and its URDF parser builds), random 1-DoF revolute/prismatic joints
    (aligned and unaligned), placements, bodies and gravity."""
    rng = np.random.default_rng(seed)
    model = pin.Model()
    model.name = f"tree{len(parents)}_{seed}"
    for i, parent in enumerate(parents):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint = [pin.JointModelRX(), pin.JointModelRY(), pin.JointModelRZ(), pin.JointModelRevoluteUnaligned(axis),
                 pin.JointModelPX(), pin.JointModelPY(), pin.JointModelPZ(),
                 pin.JointModelPrismaticUnaligned(axis)][rng.integers(8)]
        placement = pin.SE3(pin.Quaternion(*rng.normal(size=4)).normalized().matrix(), rng.uniform(-0.4, 0.4, 3))
        j = model.addJoint(parent, joint, placement, f"joint{i + 1}")
        a = rng.normal(size=(3, 3))
        model.appendBodyToJoint(j, pin.Inertia(rng.uniform(0.5, 5.0), rng.uniform(-0.2, 0.2, 3),
                                               a @ a.T * 0.05 + 0.01 * np.eye(3)), pin.SE3.Identity())
    model.gravity.linear = rng.normal(size=3) * 5.0
    return model


#: pinocchio parents of the random trees: two branches off joint 2 and a third off the base (a forest); three
#: branches off joint 1, two of them branching again.
RANDOM_TREES = [random_tree([0, 1, 2, 3, 2, 5, 0, 7], seed=1), random_tree([0, 1, 2, 2, 4, 1, 6, 6, 1], seed=2)]


def tree_cases(vendor_trees) -> list[tuple[str, pin.Model, np.ndarray, np.ndarray]]:
    """(name, model, lower, upper position bounds [rad | m] of the states drawn) of every tree tested."""
    cases = [(m.name, m, np.full(m.nq, -1.0), np.full(m.nq, 1.0)) for m in RANDOM_TREES]
    for name, robot in vendor_trees.items():
        cases.append((name, robot.model, robot.lower_limits, robot.upper_limits))
    return cases


def inside(lower: np.ndarray, upper: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Positions at ``fractions`` of the way from ``lower`` to ``upper``."""
    return lower + fractions * (upper - lower)


def rnea_derivatives_along(model: pin.Model, trajectory, t: np.ndarray, h: float = 2e-3):
    """(tau, dtau, ddtau) (samples, n) along ``trajectory`` at times ``t``: pin.rnea and its 8th-order central
    differences in time (step h [s])."""
    data = model.createData()

    def tau_at(times):
        s = trajectory.evaluate(times)
        return np.array([pin.rnea(model, data, s.q[k], s.qd[k], s.qdd[k]) for k in range(len(times))])
    taus = [tau_at(t + (k - 4) * h) for k in range(9)]
    return taus[4], sum(c * x for c, x in zip(FIRST, taus)) / h, sum(c * x for c, x in zip(SECOND, taus)) / h ** 2


def test_the_vendor_robots_are_trees(vendor_trees):
    """What the tests below exercise is a tree: TIAGo's head branches off the torso beside the arm, the Panda's
    second finger off joint 7 beside the first."""
    tiago, panda = KinematicTree.from_model(vendor_trees["tiago"].model), \
        KinematicTree.from_model(vendor_trees["panda"].model)
    assert tiago.joint_names == tuple(TIAGO_ELASTIC) and panda.joint_names == tuple(PANDA_ELASTIC)
    assert tiago.children(0) == (1, 8) and tiago.parents[9] == 8
    assert panda.children(6) == (7, 8)
    assert not vendor_trees["tiago"].is_serial_chain and not vendor_trees["panda"].is_serial_chain
    assert KinematicTree.from_model(RANDOM_TREES[0]).children(-1) == (0, 6)  # a forest: two joints on the base


def test_ejnea_and_sdrnea_torques_equal_pinocchio_on_trees(vendor_trees):
    """tau of EJNEA and of the compiled SDRNEA equal pin.rnea, and dtau equals pinocchio's analytic derivatives,
    to 1e-10 of each sample's largest value, at random states (positions within the joint limits)."""
    rng = np.random.default_rng(36)
    for name, model, lower, upper in tree_cases(vendor_trees):
        n, data = model.nq, model.createData()
        q = inside(lower, upper, rng.uniform(0.05, 0.95, size=(20, n)))
        qd, qdd, q3, q4 = (rng.uniform(-2.0, 2.0, size=(20, n)) for _ in range(4))
        tree = KinematicTree.from_model(model)
        outputs = {"ejnea": Ejnea(tree)(q, qd, qdd, q3, q4),
                   "sdrnea": load_sdrnea(tree).evaluate(q, qd, qdd, q3, q4)}
        for k in range(20):
            tau = pin.rnea(model, data, q[k], qd[k], qdd[k])
            pin.computeRNEADerivatives(model, data, q[k], qd[k], qdd[k])
            mass = np.triu(data.M) + np.triu(data.M, 1).T
            dtau = data.dtau_dq @ qd[k] + data.dtau_dv @ qdd[k] + mass @ q3[k]
            for method, out in outputs.items():
                out = out if isinstance(out, dict) else {"tau": out.tau, "dtau": out.dtau}
                assert np.abs(out["tau"][k] - tau).max() <= 1e-10 * np.abs(tau).max(), (name, method, k)
                assert np.abs(out["dtau"][k] - dtau).max() <= 1e-10 * np.abs(dtau).max(), (name, method, k)


def test_ejnea_and_sdrnea_time_derivatives_equal_finite_differences_on_trees(vendor_trees):
    """dtau and ddtau of EJNEA and SDRNEA equal 8th-order central differences (h = 2 ms) of pin.rnea along a
    degree-9 spline through random poses within the limits: to 1e-9 (dtau) and 1e-8 (ddtau) of the largest value
    along the trajectory (test_ejnea's bounds for chains)."""
    rng = np.random.default_rng(37)
    times = np.array([0.0, 0.6, 1.1, 1.9, 2.5])
    t = np.linspace(0.1, 2.4, 24)
    for name, model, lower, upper in tree_cases(vendor_trees):
        trajectory = spline_through_waypoints(times, inside(lower, upper, rng.uniform(0.2, 0.8, (5, model.nq))),
                                              degree=9)
        _, d1, d2 = rnea_derivatives_along(model, trajectory, t)
        s = trajectory.evaluate(t)
        tree = KinematicTree.from_model(model)
        ej = Ejnea(tree)(s.q, s.qd, s.qdd, s.q3, s.q4)
        sd = load_sdrnea(tree).evaluate(s.q, s.qd, s.qdd, s.q3, s.q4)
        for method, dtau, ddtau in (("ejnea", ej.dtau, ej.ddtau), ("sdrnea", sd["dtau"], sd["ddtau"])):
            assert np.abs(dtau - d1).max() <= 1e-9 * np.abs(d1).max(), (name, method)
            assert np.abs(ddtau - d2).max() <= 1e-8 * np.abs(d2).max(), (name, method)


def test_feedforward_front_door_on_a_tree(vendor_trees):
    """feedforward(tiago, trajectory): methods 'sdrnea' (the default) and 'ejnea' agree to 1e-12, and the motor side
    is thesis eqs. 4.7-4.10 on pinocchio's torques (written out here with the TIAGo's W, K, B, D, D_m):
    q_m = W q + (W K)^-1 (tau + D qd), qd_m = W qd + (W K)^-1 (dtau + D qdd), qdd_m = W qdd + (W K)^-1 (ddtau
    + D q'''), tau_m = B qdd_m + D_m qd_m + W^-1 (tau + D qd), tau from pin.rnea, dtau from its analytic
    derivatives, ddtau by 8th-order differences (so qdd_m and tau_m to 1e-8 of their largest value, the others to
    1e-10)."""
    robot = vendor_trees["tiago"]
    q0, qf = inside(robot.lower_limits, robot.upper_limits, 0.4), inside(robot.lower_limits, robot.upper_limits, 0.6)
    trajectory = Poly9Trajectory(q0, qf, 4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # within the velocity limits (the torso's 0.07 m/s)
        result = feedforward(robot, trajectory, rate_hz=200.0)
        ejnea = feedforward(robot, trajectory, "ejnea", rate_hz=200.0)
    assert result.method == "sdrnea"
    for field in ("tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m", "tau_m"):
        a, b = getattr(result, field), getattr(ejnea, field)
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max(), field
    rows = np.arange(20, 781, 80)  # samples away from the ends (the differences reach +-8 ms)
    t = result.t[rows]
    tau, _, ddtau = rnea_derivatives_along(robot.model, trajectory, t)
    model, data = robot.model, robot.create_data()
    s = trajectory.evaluate(t)
    dtau = np.empty_like(tau)
    for k in range(len(t)):
        pin.computeRNEADerivatives(model, data, s.q[k], s.qd[k], s.qdd[k])
        mass = np.triu(data.M) + np.triu(data.M, 1).T
        dtau[k] = data.dtau_dq @ s.qd[k] + data.dtau_dv @ s.qdd[k] + mass @ s.q3[k]
    w, k_w = robot.transmission, robot.stiffness * robot.transmission
    d, d_m, b = robot.link_damping, robot.motor_damping, robot.motor_inertia
    expected = {"q_m": w * s.q + (tau + d * s.qd) / k_w, "qd_m": w * s.qd + (dtau + d * s.qdd) / k_w,
                "qdd_m": w * s.qdd + (ddtau + d * s.q3) / k_w}
    expected["tau_m"] = b * expected["qdd_m"] + d_m * expected["qd_m"] + (tau + d * s.qd) / w
    for field, value in expected.items():
        tolerance = 1e-8 if field in ("qdd_m", "tau_m") else 1e-10
        assert np.abs(getattr(result, field)[rows] - value).max() <= tolerance * np.abs(value).max(), field


@pytest.mark.parametrize("name", ["tiago", "panda"])
def test_modal_analysis_on_a_tree_equals_an_independent_linearization(vendor_trees, name):
    """Closed-loop modes at a pose within the limits (the YAML's motor PD): modal_analysis equals the
    eigenvalues of seed 000 eqs. 2.8-2.14 built here from pinocchio: M_bar = [[M(q), 0], [0, B]] (pin.crba),
    D_bar = [[D, 0], [0, D_m + K_D]], K_bar = [[K_G + K W^2, -K W], [-K W, K + K_P]] with K_G = dg/dq
    (pin.computeGeneralizedGravityDerivatives); frequencies |lambda| / 2 pi (eq. 2.16) to 1e-6 relative, damping
    ratios -Re(lambda) / |lambda| (eq. 2.17) to 1e-6."""
    robot = vendor_trees[name]
    q = inside(robot.lower_limits, robot.upper_limits, np.linspace(0.35, 0.65, robot.n))
    model, data = robot.model, robot.create_data()
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    gravity_stiffness = np.array(pin.computeGeneralizedGravityDerivatives(model, data, q))
    n, w, k = robot.n, np.diag(robot.transmission), np.diag(robot.stiffness)
    zero = np.zeros((n, n))
    m_bar = np.block([[mass, zero], [zero, np.diag(robot.motor_inertia)]])
    d_bar = np.block([[np.diag(robot.link_damping), zero], [zero, np.diag(robot.motor_damping + robot.kd)]])
    k_bar = np.block([[gravity_stiffness + k @ w @ w, -k @ w], [-k @ w, k + np.diag(robot.kp)]])
    state = np.block([[np.zeros((2 * n, 2 * n)), np.eye(2 * n)],
                      [-np.linalg.solve(m_bar, k_bar), -np.linalg.solve(m_bar, d_bar)]])
    eigenvalues = np.linalg.eigvals(state)
    eigenvalues = eigenvalues[eigenvalues.imag >= 0.0]  # one per conjugate pair (no real ones at these gains)
    order = np.argsort(np.abs(eigenvalues))
    frequencies, damping = np.abs(eigenvalues[order]) / (2 * np.pi), -eigenvalues[order].real / np.abs(
        eigenvalues[order])
    assert len(frequencies) == 2 * n
    result = modal_analysis(robot, q)
    assert result.stable
    np.testing.assert_allclose(result.frequencies_hz, frequencies, rtol=1e-6, atol=0)
    np.testing.assert_allclose(result.damping_ratios, damping, rtol=0, atol=1e-6)


def test_simulated_tree_tracks_with_the_feedforward_far_better_than_rigid(vendor_trees):
    """The Panda with elastic fingers in the simulator (the pinocchio plant, exponential Euler at 1 kHz), its motor
    PD about the feedforward's q_m, qd_m plus tau_m (FeedforwardPD, 1 kHz samples), from rest at q_d(0) with the
    springs carrying gravity: the links follow q_d(t) with a maximum error >= 100x smaller than under the rigid-model
    feedforward (thesis eq. 4.5; test_feedforward's acceptance for chains) and below 1e-4 rad | m. Measured when
    written: 4.7e-7 against 2.1e-3 rad (4,400 times smaller)."""
    robot = vendor_trees["panda"]
    lower, upper = robot.lower_limits, robot.upper_limits
    trajectory = Poly9Trajectory(inside(lower, upper, 0.45), inside(lower, upper, 0.55), 1.5)
    flexible = feedforward(robot, trajectory, rate_hz=1000.0)
    errors = {}
    for label, result in (("flexible", flexible), ("rigid", rigid_feedforward(robot, trajectory, rate_hz=1000.0))):
        controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
        output = Simulation(robot, controller, q0=flexible.q[0], q_m0=flexible.q_m[0], rate=1000.0,
                            mode="fixed").run(trajectory.duration)
        np.testing.assert_allclose(output.t, flexible.t, rtol=0, atol=1e-12)
        errors[label] = np.abs(output.q - flexible.q).max()
    print(f"panda (tree): max |q - q_d| with flexible feedforward {errors['flexible']:.2e}, with rigid feedforward "
          f"{errors['rigid']:.2e} (ratio {errors['rigid'] / errors['flexible']:.0f})")
    assert errors["rigid"] >= 100.0 * errors["flexible"]
    assert errors["flexible"] < 1e-4


def test_the_rigid_link_recursions_of_the_composed_model_on_a_tree(vendor_trees):
    """The composed model's own recursions (robots with rigid joints or extra elasticities use them) on the TIAGo
    tree, against pinocchio at a random state: the composite-body inertia = pin.crba, the recursive inverse dynamics
    = pin.rnea, DeNOC's forward dynamics = pin.aba, the CasADi Lagrangian's inertia and bias = pin.crba and
    pin.nonLinearEffects (all to 1e-12 of the largest entry); and the simulator's numeric plant (those recursions)
    gives the pinocchio plant's state derivative (to 1e-12)."""
    robot = vendor_trees["tiago"]
    model, data = robot.model, robot.create_data()
    rng = np.random.default_rng(38)
    q = inside(robot.lower_limits, robot.upper_limits, rng.uniform(0.1, 0.9, robot.n))
    v, a, tau = (rng.normal(size=robot.n) for _ in range(3))
    chain = FlexibleLinkChain(model, {})
    assert chain.parents == (-1, 0, 1, 2, 3, 4, 5, 6, 0, 8)
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    lagrangian = lagrangian_dynamics(chain)
    inertia, bias = lagrangian.inertia_and_bias(q, v)
    pairs = [(generalized_inertia(chain, chain.propagate(q, v)), mass), (inertia, mass),
             (inverse_dynamics(chain, q, v, a), pin.rnea(model, data, q, v, a)),
             (forward_dynamics(chain, q, v, tau), pin.aba(model, data, q, v, tau)),
             (bias, pin.nonLinearEffects(model, data, q, v))]
    for k, (value, expected) in enumerate(pairs):
        assert np.abs(value - expected).max() <= 1e-12 * np.abs(expected).max(), k
    plants = {path: ElasticRobotPlant(robot, path=path) for path in ("pinocchio", "numeric")}
    x = plants["pinocchio"].state(q, robot.transmission * q + 1e-3 * rng.normal(size=robot.n), qd=v,
                                  qd_m=rng.normal(size=robot.n))
    torque = rng.normal(size=robot.n)
    expected = plants["pinocchio"].derivative(x, torque)
    assert np.abs(plants["numeric"].derivative(x, torque) - expected).max() <= 1e-12 * np.abs(expected).max()


FORK_URDF = """<?xml version="1.0"?>
<robot name="fork">
  <link name="base"/>
  <link name="link1"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="link2"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="link3"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="joint1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
  <joint name="joint2" type="revolute"><parent link="link1"/><child link="link2"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
  <joint name="joint3" type="revolute"><parent link="link1"/><child link="link3"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
</robot>
"""
FORK_JOINT = "{stiffness: 1000.0, motor_damping: 0.1, reflected_inertia: 0.5}"


def test_a_flexible_link_on_a_tree_is_refused_in_one_line(tmp_path):
    """A flexible link on a robot whose joints 2 and 3 both hang on joint 1: load_robot refuses it in one line
    naming the YAML, the flexible link and the joint where the tree branches; with joint 3 locked (the branch not
    modelled) the same link loads, on a serial chain."""
    (tmp_path / "fork.urdf").write_text(FORK_URDF)
    link = "flexible_links:\n  link2: {EI: 2000.0, length: 0.5, mass_per_length: 2.0}\n"
    path = tmp_path / "fork.yaml"
    path.write_text(f"robot: fork\nurdf: fork.urdf\ngravity: [0, 0, -9.81]\n{link}"
                    f"joints:\n  joint1: {FORK_JOINT}\n  joint2: {FORK_JOINT}\n  joint3: {FORK_JOINT}\n")
    with pytest.raises(ModelError) as error:
        load_robot(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: flexible_links.link2: flexible links need a serial chain; fork.urdf is a "
                              "tree: joint 'joint3' branches off 'joint1' beside 'joint2'")
    path.write_text(f"robot: fork\nurdf: fork.urdf\ngravity: [0, 0, -9.81]\n{link}locked_joints: {{joint3: 0.0}}\n"
                    f"joints:\n  joint1: {FORK_JOINT}\n  joint2: {FORK_JOINT}\n")
    robot = load_robot(path)
    assert robot.is_serial_chain and list(robot.flexible_links) == ["link2"]


def test_elastic_joints_on_a_small_tree_without_flexible_links_load_and_invert(tmp_path):
    """The same fork with all three joints elastic (no flexible link) loads, and its feedforward link torques
    (methods 'sdrnea' and 'ejnea') equal pin.rnea along the trajectory to 1e-10 of the largest."""
    (tmp_path / "fork.urdf").write_text(FORK_URDF)
    path = tmp_path / "fork.yaml"
    path.write_text(f"robot: fork\nurdf: fork.urdf\ngravity: [0, 0, -9.81]\ntool_frame: link2\n"
                    f"joints:\n  joint1: {FORK_JOINT}\n  joint2: {FORK_JOINT}\n  joint3: {FORK_JOINT}\n")
    robot = load_robot(path)
    assert not robot.is_serial_chain
    trajectory = Poly9Trajectory(np.zeros(3), np.array([0.4, -0.3, 0.5]), 1.0)
    data = robot.create_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the move is within the limits
        results = [feedforward(robot, trajectory, method, rate_hz=50.0) for method in ("sdrnea", "ejnea")]
    for result in results:
        expected = np.array([pin.rnea(robot.model, data, *x) for x in zip(result.q, result.qd, result.qdd)])
        assert np.abs(result.tau - expected).max() <= 1e-10 * np.abs(expected).max(), result.method


def test_tool_axes_compose_each_joint_rotation_from_its_parent(tmp_path):
    """default_tool_axes on a tree: joint 2 is turned by rpy (pi/2, 0, 0) and rotates about its y axis, which is the
    base z axis; joint 3 hangs on joint 1, not on joint 2, and rotates about z. All three axes are the base z axis,
    so the fork is a planar arm with 3 actuators, refused (composing joint 2's rotation into joint 3's axis, as
    along a chain, would put joint 3's axis on -y and take x, y, z)."""
    urdf = FORK_URDF.replace('<origin xyz="0 0 0.2"/>\n    <axis xyz="0 0 1"/>',
                             '<origin xyz="0 0 0.2" rpy="1.5707963267948966 0 0"/>\n    <axis xyz="0 1 0"/>')
    assert urdf != FORK_URDF
    (tmp_path / "fork.urdf").write_text(urdf)
    path = tmp_path / "fork.yaml"
    path.write_text(f"robot: fork\nurdf: fork.urdf\ngravity: [0, 0, -9.81]\ntool_frame: link2\n"
                    f"joints:\n  joint1: {FORK_JOINT}\n  joint2: {FORK_JOINT}\n  joint3: {FORK_JOINT}\n")
    with pytest.raises(ModelError, match="a planar arm with 3 actuators .revolute joints about the base z axis"):
        default_tool_axes(load_robot(path))
