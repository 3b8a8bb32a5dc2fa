"""Flexible-link robots in the simulator: the Canadarm's forced run (seed 003 section 7.1, rigid-model torques of
eq. 44, open loop) in fixed and accurate mode, energy balance, deflection columns; a mixed robot (elastic joint,
rigid joint, flexible link) holds its pose."""
import math

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.simulation import AccurateIntegration, Simulation
from flexrobot_ros.simulation.controllers import TorqueInput
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller

K44, T44 = np.array([0.075, 0.05, 0.1]), np.array([10.0, 5.0, 5.0])


def rigid_torque(robot):
    model = robot.model.copy()
    data = model.createData()

    def tau(t):
        s = math.pi * t / T44
        q, qd, qdd = K44 * (t - T44 / math.pi * np.sin(s)), K44 * (1 - np.cos(s)), K44 * math.pi / T44 * np.sin(s)
        return pin.rnea(model, data, q, qd, qdd).copy()
    return tau


def test_canadarm_forced_run_fixed_vs_accurate():
    """0.5 s of the forced run: the fixed-step (real-time) mode follows the accurate mode (the integrator's
    lagged-Jacobian error, a few 1e-3 of the deflection), the accurate energy balance closes to 1e-9 of the energy,
    and the deflection.<link>.y columns are the beams' tip deflections. Both runs on the plant's compiled path
    (generated C of the CasADi Lagrangian, equal to the Python DeNOC recursion to 1e-9:
    test_compiled_plant_equals_python_plant below, test_flexible_links_dynamics.py); energy and outputs are the
    plant's Python ones either way."""
    robot = load_robot("canadarm")
    plant = ElasticRobotPlant(robot, compiled=True)
    controller = TorqueInput(robot, rigid_torque(robot))
    fixed = Simulation(plant, controller, q0=np.zeros(3), rate=100).run(0.5)
    accurate = Simulation(plant, controller, q0=np.zeros(3), rate=100, mode="accurate",
                          accurate=AccurateIntegration("DOP853", 1e-9, 1e-11)).run(0.5)
    assert isinstance(fixed.plant, ElasticRobotPlant)
    columns_fixed, columns_accurate = fixed.columns(), accurate.columns()
    names = [f"deflection.{link}.y" for link in ("link1", "link2", "link3")]
    scale = max(np.max(np.abs(columns_accurate[name])) for name in names)
    for name in names:
        assert np.max(np.abs(columns_fixed[name] - columns_accurate[name])) < 5e-3 * scale
    np.testing.assert_allclose(fixed.q, accurate.q, atol=5e-3 * np.max(np.abs(accurate.q)))
    energy = accurate.energy()
    assert np.max(np.abs(energy.balance_residual(energy.total[0]))) < 1e-9 * np.max(energy.total)
    assert np.max(energy.work_in) > 0.1
    tip = accurate.plant.tip_deflections(accurate.states[-1:])[0, 0, 0]
    assert tip == pytest.approx(columns_accurate["deflection.link1.y"][-1])


def test_mixed_robot_holds_pose(tmp_path):
    """planar_2r with an elastic joint 1, a rigid joint 2 and a flexible link 2 under gravity, held by PD +
    gravity compensation at a pose: it stays there (static sag only), and the energy balance closes."""
    document = yaml.safe_load((share_directory() / "config" / "planar_2r.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / "planar_2r.urdf")
    document["joints"]["joint2"] = {"rigid": True, "link_damping": 0.5}
    document["flexible_links"] = {"link2": {"EI": 2.0e+3, "modes": 2, "tip_frame": "tool0", "damping_ratio": 0.02}}
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(document))
    robot = load_robot(path)
    q_d = np.array([0.3, -0.6])
    simulation = Simulation(robot, hold_controller(ElasticRobotPlant(robot), q_d), q0=q_d, rate=200,
                            mode="accurate", accurate=AccurateIntegration("DOP853", 1e-9, 1e-11))
    output = simulation.run(0.3)
    assert np.max(np.abs(output.q - q_d)) < 2e-3
    energy = output.energy()
    assert np.max(np.abs(energy.balance_residual(energy.total[0]))) < 1e-8 * max(1.0, np.max(np.abs(energy.total)))


#: Issue 13: recursive q'' = reference q'' to 1e-10 relative, also with flexible joints (measured worst: 5e-14).
RTOL = 1e-10


def test_compiled_plant_equals_python_plant(tmp_path, monkeypatch):
    """Issue 13 real-time path: the compiled plant (its whole state derivative as one generated-C function of the
    CasADi Lagrangian) equals the Python plant (recursive DeNOC, joint and motor equations, power terms) on the mixed
    robot of the next test (elastic joint, rigid joint with damping, damped spatial flexible link with a tip mass),
    with and without an external wrench at the deformed tip, at 10 random states (1e-9 relative)."""
    monkeypatch.setenv("FLEXROBOT_CACHE", str(tmp_path))
    robot = load_robot(mixed_robot(tmp_path))
    python, compiled = ElasticRobotPlant(robot, path="numeric"), ElasticRobotPlant(robot, compiled=True)
    assert list(tmp_path.glob("elastic_robot_plant_*.so")), "no library compiled into the code cache"
    n, m, layout = python.n, python.m, python.layout
    wrench = [(robot.frame_id("tool0"), np.array([3.0, -2.0, 5.0, 0.4, -0.1, 0.2]))]
    rng = np.random.default_rng(11)
    for _ in range(10):
        x = python.state(rng.uniform(-2, 2, n), rng.uniform(-2, 2, n), rng.normal(size=n), rng.normal(size=n))
        x[layout["eta"]] = 0.05 * rng.normal(size=m)
        x[layout["eta_dot"]] = rng.normal(size=m)
        x[-2:] = rng.normal(size=2)
        tau_m = rng.normal(size=n) * 30
        for wrenches in ((), wrench):
            expected = python.derivative(x, tau_m, wrenches)
            got = compiled.derivative(x, tau_m, wrenches)
            assert np.max(np.abs(got - expected)) < 1e-9 * np.max(np.abs(expected)), wrenches


def mixed_robot(tmp_path):
    """planar_2r with joint 2 rigid and damped, and link 2 a damped spatial beam with a tip mass (a YAML path)."""
    document = yaml.safe_load((share_directory() / "config" / "planar_2r.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / "planar_2r.urdf")
    document["joints"]["joint2"] = {"rigid": True, "link_damping": 0.5}
    document["flexible_links"] = {"link2": {"EI": {"y": 2.0e+3, "z": 3.0e+3}, "modes": 2, "tip_frame": "tool0",
                                            "tip_mass": 0.5, "damping_ratio": 0.03}}
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_plant_with_elastic_joint_equals_lagrangian_reference(tmp_path):
    """A robot mixing an elastic joint (seed 000 eq. 2.1), a rigid joint, a rigid link and a spatial flexible link:
    the plant's accelerations (recursive DeNOC on the link side, motor equations) equal the CasADi Lagrangian's
    with the same joint terms, at 20 random states (RTOL)."""
    from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

    robot = load_robot(mixed_robot(tmp_path))
    plant = ElasticRobotPlant(robot, path="numeric")
    reference = lagrangian_dynamics(plant.chain, points_per_beam=16)
    n, m, layout = plant.n, plant.m, plant.layout
    k, w, d = robot.stiffness[0], robot.transmission[0], robot.link_damping
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = plant.state(rng.uniform(-2, 2, n), rng.uniform(-2, 2, n), rng.normal(size=n), rng.normal(size=n))
        x[layout["eta"]] = 0.05 * rng.normal(size=m)
        x[layout["eta_dot"]] = rng.normal(size=m)
        tau_m = rng.normal(size=n) * 30
        xdot = plant.derivative(x, tau_m)
        y = np.concatenate([x[layout["q"]], x[layout["eta"]]])
        y_dot = np.concatenate([x[layout["qd"]], x[layout["eta_dot"]]])
        q_m, qd_m = x[layout["q_m"]], x[layout["qd_m"]]
        spring = k * (w * y[0] - q_m[0])
        tau = np.zeros(n + m)
        tau[0] = -w * spring - d[0] * y_dot[0]
        tau[1] = tau_m[1] - d[1] * y_dot[1]
        expected = reference.forward_dynamics(y, y_dot, tau)
        got = np.concatenate([xdot[layout["qd"]], xdot[layout["eta_dot"]]])
        assert np.max(np.abs(got - expected)) < RTOL * np.max(np.abs(expected))
        motor = (tau_m[0] + spring - robot.motor_damping[0] * qd_m[0]) / robot.motor_inertia[0]
        assert xdot[layout["qd_m"]][0] == pytest.approx(motor, rel=1e-12)
        assert xdot[layout["qd_m"]][1] == pytest.approx(got[1], rel=1e-12)  # rigid joint: motor = joint


def test_linearization_equals_plant_jacobian(tmp_path):
    """The monitor's closed-loop linearization (link layer, with an elastic joint, a rigid joint, a flexible link and
    gravity) has the eigenvalues of the simulator plant's own state Jacobian at the held equilibrium (the static sag
    of the beam included) under the same PD law."""
    import scipy.linalg

    from flexrobot_ros.flexible_links.inverse_dynamics import bias_forces
    from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes

    document = yaml.safe_load((share_directory() / "config" / "planar_2r.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / "planar_2r.urdf")
    document["joints"]["joint2"] = {"rigid": True, "link_damping": 0.5}
    document["flexible_links"] = {"link2": {"EI": 2.0e+3, "modes": 2, "tip_frame": "tool0", "damping_ratio": 0.02}}
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(document))
    robot = load_robot(path)
    plant = ElasticRobotPlant(robot)
    chain, n, layout = plant.chain, plant.n, plant.layout
    q_d = np.array([0.3, -0.6])
    modes = elastic_robot_modes(plant.model, q_d)
    eta = plant.model.static_equilibrium(q_d)[plant.model.eta]
    h = bias_forces(chain, np.concatenate([q_d, eta]), np.zeros(chain.size))[:n]
    k, w = robot.stiffness[0], robot.transmission[0]
    x = plant.state(q_d, [w * q_d[0] + h[0] / (k * w), q_d[1]])
    x[layout["eta"]] = eta
    q_m_d = x[layout["q_m"]]
    kp, kd = robot.kp, robot.kd
    feedforward = np.array([k * (q_m_d[0] - w * q_d[0]), h[1]])

    def torque(state):
        return feedforward + kp * (q_m_d - state[layout["q_m"]]) - kd * state[layout["qd_m"]]

    assert np.max(np.abs(plant.derivative(x, torque(x))[layout["velocities"]])) < 1e-8  # an equilibrium
    dtau = np.zeros((n, layout.size))
    dtau[:, layout["q_m"]] = -np.diag(kp)
    dtau[:, layout["qd_m"]] = -np.diag(kd)
    jacobian = plant.jacobian(x, torque(x), dtau)
    mechanical = layout.mechanical  # (the rigid joint's motor mirror q_m = q only adds non-oscillatory eigenvalues)
    spectrum = scipy.linalg.eigvals(jacobian[mechanical, mechanical])
    expected = np.sort_complex(np.concatenate([modes.eigenvalues, np.conj(modes.eigenvalues[~modes.overdamped])]))
    oscillatory = np.sort_complex(spectrum[np.abs(spectrum.imag) > 1e-6])
    np.testing.assert_allclose(np.sort(np.abs(oscillatory)),
                               np.sort(np.abs(expected[np.abs(expected.imag) > 1e-6])), rtol=1e-5)
