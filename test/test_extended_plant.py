"""The extended flexible-joint robot (seed 002 eq. 1) as the composed model's plant (ElasticRobotPlant on a model
without beams: pinocchio's path) against independent checks: its Jacobian against central
differences of its derivative; energy balance E(t) - E(0) = work_in - dissipated in a simulation; with the extra
elasticities removed and D_g = 0 it is the flexible-joint plant (thesis eq. 2.1) exactly; Simulation picks it for
robots with an extended model."""
from __future__ import annotations

import dataclasses

import numpy as np

from flexrobot_ros.model.extended_model import rigid_extended
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import AccurateIntegration, FlexibleJointPlant, Simulation, TorqueInput


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


def test_without_extras_and_transmission_damping_it_is_the_flexible_joint_plant() -> None:
    """ne = 0, D_g = 0: the same xdot as FlexibleJointPlant (thesis eq. 2.1) for scompi-like friction on kr90_3dof."""
    robot = load_robot("kr90_3dof")
    rigid = dataclasses.replace(robot, extended=rigid_extended(robot, 0.0))
    extended, flexible = ElasticRobotPlant(rigid), FlexibleJointPlant(robot)
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = _random_state(flexible, rng)
        tau = rng.normal(size=3) * 1e3
        np.testing.assert_allclose(extended.derivative(x, tau), flexible.derivative(x, tau), rtol=1e-12, atol=1e-9)


def test_divergence_in_an_elastic_block_is_reported_by_name() -> None:
    """A state bound hit by an extra elastic coordinate names it (q_e[joint3]) instead of failing."""
    import pytest

    from flexrobot_ros.errors import SimulationError

    robot = load_robot("moberg5")
    sim = Simulation(robot, TorqueInput(robot, [0.0, 0.0]), q0=[0.0, 0.0], q_m0=[0.0, 0.0], max_position=0.05)
    sim._x[sim.plant.layout["qd_e"]] = 5.0  # a knock on the tool body: it swings ~0.1 rad, past the bound
    with pytest.raises(SimulationError, match=r"q_e\[joint3\]"):
        sim.advance(0.2)
