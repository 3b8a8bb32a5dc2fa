"""The extended flexible-joint robot (seed 002 eq. 1) as the composed model's plant (ElasticRobotPlant on a model
without beams: pinocchio's path) against independent checks: its Jacobian against central
differences of its derivative; energy balance E(t) - E(0) = work_in - dissipated in a simulation; with the extra
elasticities removed and D_g = 0 it is the flexible-joint robot (thesis eq. 2.1, written in the test) exactly;
Simulation picks it for robots with an extended model and for the plain flexible-joint robots."""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin

from flexrobot_ros.model.extended_model import rigid_extended
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import AccurateIntegration, Simulation, TorqueInput


def _random_state(plant, rng):
    x = np.zeros(plant.layout.size)
    x[plant.layout["positions"]] = rng.uniform(-0.5, 0.5, plant.layout["positions"].stop)
    v = plant.layout["velocities"]
    x[v] = rng.uniform(-2, 2, v.stop - v.start)
    return x


def test_layout_has_the_common_blocks_and_named_elastic_blocks() -> None:
    plant = ElasticRobotPlant(load_robot("kr90_3dof"))
    lay = plant.layout
    assert (lay["q"], lay["q_m"], lay["q_e"]) == (slice(0, 3), slice(3, 6), slice(6, 12))
    assert (lay["qd"], lay["qd_m"], lay["qd_e"]) == (slice(12, 15), slice(15, 18), slice(18, 24))
    assert lay["positions"] == slice(0, 12) and lay["velocities"] == slice(12, 24) and lay.size == 26


def test_jacobian_matches_central_differences() -> None:
    """d(xdot)/dx of kr90_3dof (Coulomb friction on, gravity on) and moberg5 against central differences, with a
    PD-like torque law Jacobian."""
    rng = np.random.default_rng(3)
    for name in ("kr90_3dof", "moberg5"):
        plant = ElasticRobotPlant(load_robot(name))
        x = _random_state(plant, rng)
        tau = rng.normal(size=plant.n) * 100
        dtau = np.zeros((plant.n, plant.layout.size))
        dtau[:, plant.layout["q_m"]] = -np.diag(rng.uniform(1, 10, plant.n))
        jac = plant.jacobian(x, tau, dtau)
        numeric = np.zeros_like(jac)
        for j in range(plant.layout.size):
            e = np.zeros_like(x)
            e[j] = 1e-6 * max(1.0, abs(x[j]))
            f = lambda y: plant.derivative(y, tau + dtau @ (y - x))  # noqa: E731
            numeric[:, j] = (f(x + e) - f(x - e)) / (2 * e[j])
        scale = np.abs(numeric).max(axis=1, keepdims=True) + 1.0
        np.testing.assert_allclose(jac / scale, numeric / scale, atol=2e-6)


def test_energy_balance_in_simulation() -> None:
    """moberg5 driven by a torque chirp: E - E(0) = work_in - dissipated to 1e-6 of the work."""
    robot = load_robot("moberg5")
    controller = TorqueInput(robot, lambda t: np.array([2e3 * np.sin(30 * t * t), -1e3 * np.cos(20 * t)]))
    sim = Simulation(robot, controller, q0=[0.2, 0.9], q_m0=[0.2, 0.9], mode="accurate",
                     accurate=AccurateIntegration(method="Radau", rtol=1e-11, atol=1e-12))
    assert isinstance(sim.plant, ElasticRobotPlant)
    sim.run(0.5)
    energy = sim.energy()
    assert abs(energy.work_in) > 10.0
    assert abs(energy.balance_residual(0.0)) < 1e-6 * abs(energy.work_in)


def _thesis_derivative(robot, x: np.ndarray, tau_m: np.ndarray, frame_id: int, wrench: np.ndarray) -> np.ndarray:
    """xdot of thesis eq. 2.1 with smoothed Coulomb friction and a world-axes wrench at a frame's origin, written
    here with CRBA + RNEA + a linear solve (the plant uses ABA), state [q, q_m, qd, qd_m, dissipated, work_in]."""
    n = robot.n
    q, q_m, qd, qd_m = x[:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:4 * n]
    data = robot.create_data()
    mass = pin.crba(robot.model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    jacobian = pin.computeFrameJacobian(robot.model, data, q, frame_id, pin.LOCAL_WORLD_ALIGNED)
    w, k, width = robot.transmission, robot.stiffness, robot.coulomb_width
    spring = k * (w * q - q_m)
    f_link = robot.link_damping * qd + robot.link_coulomb * np.tanh(qd / width)
    f_motor = robot.motor_damping * qd_m + robot.motor_coulomb * np.tanh(qd_m / width)
    external = jacobian.T @ wrench
    qdd = np.linalg.solve(mass, external - w * spring - f_link - pin.nonLinearEffects(robot.model, data, q, qd))
    qdd_m = (tau_m + spring - f_motor) / robot.motor_inertia
    return np.concatenate([qd, qd_m, qdd, qdd_m, [qd @ f_link + qd_m @ f_motor, tau_m @ qd_m + external @ qd]])


def test_without_extras_and_transmission_damping_it_is_the_flexible_joint_robot() -> None:
    """ne = 0, D_g = 0 (kr90_3dof with its extras removed, the Scompi with Coulomb friction): the plant's
    elastic-joints evaluation gives thesis eq. 2.1's xdot written in the test (CRBA + RNEA + solve, J^T w of a
    wrench on the tool) to 1e-12, and its Coulomb damping block equals the CasADi path's (the chain's Lagrangian)."""
    scompi = load_robot("scompi", tool=True).with_parameters(link_coulomb=[20.0, 2.0, 2.0, 1.0, 0.5, 0.5],
                                                            motor_coulomb=0.05)
    kr90 = load_robot("kr90_3dof")
    rng = np.random.default_rng(5)
    for robot in (dataclasses.replace(kr90, extended=rigid_extended(kr90, 0.0)), scompi):
        plant = ElasticRobotPlant(robot)
        assert plant.joints_only and plant.layout.size == 4 * robot.n + 2
        reference = ElasticRobotPlant(robot, path="casadi")
        frame_id = plant.frame_id(robot.tool_frame or robot.model.frames[-1].name)
        for _ in range(5):
            x = _random_state(plant, rng)
            tau = rng.normal(size=robot.n) * 1e3
            wrench = rng.normal(size=6) * 50.0
            expected = _thesis_derivative(robot, x, tau, frame_id, wrench)
            np.testing.assert_allclose(plant.derivative(x, tau, [(frame_id, wrench)]), expected, rtol=1e-12,
                                       atol=1e-9 * np.abs(expected).max(), err_msg=robot.name)
            if np.any(robot.link_coulomb):
                np.testing.assert_allclose(plant.coulomb_damping(x), reference.coulomb_damping(x), rtol=1e-9,
                                           atol=1e-9 * np.abs(plant.coulomb_damping(x)).max(), err_msg=robot.name)


def test_divergence_in_an_elastic_block_is_reported_by_name() -> None:
    """A state bound hit by an extra elastic coordinate names it (q_e[joint3]) instead of failing."""
    import pytest

    from flexrobot_ros.errors import SimulationError

    robot = load_robot("moberg5")
    sim = Simulation(robot, TorqueInput(robot, [0.0, 0.0]), q0=[0.0, 0.0], q_m0=[0.0, 0.0], max_position=0.05)
    sim._x[sim.plant.layout["qd_e"]] = 5.0  # a knock on the tool body: it swings ~0.1 rad, past the bound
    with pytest.raises(SimulationError, match=r"q_e\[joint3\]"):
        sim.advance(0.2)


def test_simulation_builds_the_one_plant_for_the_plain_flexible_joint_robots() -> None:
    """scompi, planar_2r, lwr4, kr90 (elastic joints on rigid links): Simulation's plant is ElasticRobotPlant with its
    elastic-joints evaluation, state [q, q_m, qd, qd_m, dissipated, work_in] (4 n + 2)."""
    from flexrobot_ros.simulation.simulation import plant_for

    for name in ("scompi", "planar_2r", "lwr4", "kr90"):
        robot = load_robot(name)
        plant = plant_for(robot)
        assert isinstance(plant, ElasticRobotPlant) and plant.joints_only, name
        lay, n = plant.layout, robot.n
        assert (lay.size, lay["q_m"], lay["qd"], lay["work_in"]) == (4 * n + 2, slice(n, 2 * n), slice(2 * n, 3 * n),
                                                                   slice(4 * n + 1, 4 * n + 2)), name
