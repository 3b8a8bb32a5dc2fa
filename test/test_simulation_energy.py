"""Energy checks of the simulator (issue 4 acceptance): conservation without dissipation, balance with it.

References are physical laws, not the code under test: with no damping, friction or control the mechanical energy
(links + rotors kinetic, joint springs, gravity) of seed 000 eqs. A I-11 and A I-13 is conserved; with them,
E(t) - E(0) = work in - dissipated. The plant's building blocks are checked against pinocchio by finite
differences (potential energy gradient = generalized gravity; state Jacobian = finite differences of the
derivative).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from flexrobot_ros.simulation import (AccurateIntegration, ElasticRobotPlant, HalfSinePulse, PDGravityCompensation,
                                      RectangularPulse, Simulation, TorqueInput)
from flexrobot_ros.simulation.impact_experiment import thesis_configuration
from flexrobot_ros.simulation.integrators import ClosedLoop

Q8 = thesis_configuration(8)


def test_conservative_scompi_energy_drift_below_1e_6_over_10_s(scompi_tool):
    """Damping, friction and control off (tau_m = 0): the Scompi falls and swings under gravity for 10 s (joints
    sweep several radians). Accurate mode (LSODA, rtol 1e-7, atol 1e-9): total energy drift < 1e-6 relative to
    |E(0)| and to the peak kinetic energy (issue 4 acceptance)."""
    robot = scompi_tool.with_parameters(link_damping=0.0, motor_damping=0.0)
    assert not np.any(robot.link_coulomb) and not np.any(robot.motor_coulomb)
    simulation = Simulation(robot, TorqueInput(robot, np.zeros(robot.n)), q0=Q8, rate=100.0, mode="accurate",
                            accurate=AccurateIntegration("LSODA", rtol=1e-7, atol=1e-9))
    output = simulation.run(10.0)
    energy = output.energy()
    drift = np.abs(energy.total - energy.total[0]).max()
    assert np.ptp(output.q, axis=0).max() > 1.0  # a large motion, not a rest state
    assert energy.kinetic.max() > 10.0
    assert drift < 1e-6 * abs(energy.total[0])
    assert drift < 1e-6 * energy.kinetic.max()
    assert np.all(energy.dissipated == 0.0) and np.all(energy.work_in == 0.0)


def test_energy_balance_closes_with_damping_friction_control_and_impacts(scompi_tool):
    """Viscous damping (Table 2.1), added Coulomb friction on both sides, PD + gravity compensation driving a
    set-point change, and two impacts (a 6-D wrench pulse at tool0, a half-sine force on link3): E(t) - E(0) =
    work in - dissipated within 1e-4 relative to the largest of |work in|, dissipated, |E - E(0)| (accurate
    mode, default tolerances)."""
    robot = scompi_tool.with_parameters(link_coulomb=[20.0, 2.0, 2.0, 1.0, 0.5, 0.5], motor_coulomb=0.05)
    controller = PDGravityCompensation.create(robot, Q8 + np.array([0.01, 0.05, -0.05, 0.05, 0.05, 0.1]))
    excitations = [RectangularPulse("tool0", [10.0, 50.0, -20.0, 1.0, 2.0, 3.0], 0.2, 0.206),
                   HalfSinePulse("link3", [0.0, 0.0, 30.0], 0.3, 0.31)]
    simulation = Simulation(robot, controller, q0=Q8, rate=500.0, mode="accurate", excitations=excitations)
    energy = simulation.run(0.6).energy()
    residual = np.abs(energy.balance_residual(energy.total[0])).max()
    scale = max(np.abs(energy.work_in).max(), energy.dissipated.max(), np.abs(energy.total - energy.total[0]).max())
    assert energy.dissipated[-1] > 1.0 and abs(energy.work_in[-1]) > 1.0
    assert np.all(np.diff(energy.dissipated) >= -1e-12)  # dissipation never gives energy back
    assert residual < 1e-4 * scale


def test_potential_energy_gradient_is_generalized_gravity(scompi_tool):
    """The gravitational energy the simulator reports (pinocchio) has gradient g(q) (central differences)."""
    plant = ElasticRobotPlant(scompi_tool)
    data = scompi_tool.create_data()
    q = Q8 + np.array([0.05, 0.1, -0.2, 0.3, 0.1, -0.4])
    x = plant.state(q, q)
    gradient = np.empty(6)
    for i in range(6):
        step = np.zeros(plant.layout.size)
        step[i] = 1e-6
        gradient[i] = (plant.energy(x + step).gravitational - plant.energy(x - step).gravitational) / 2e-6
    np.testing.assert_allclose(gradient, pin.computeGeneralizedGravity(scompi_tool.model, data, q), atol=1e-6)


def test_state_jacobian_matches_finite_differences(scompi_tool):
    """The analytic closed-loop Jacobian (ABA derivatives, springs, Coulomb slopes, PD gains, energy rows) equals
    central finite differences of the state derivative at a random state (no wrench acting)."""
    robot = scompi_tool.with_parameters(link_coulomb=[1.0, 2.0, 3.0, 1.0, 1.0, 1.0], motor_coulomb=0.5)
    controller = PDGravityCompensation.create(robot, Q8)
    plant = ElasticRobotPlant(robot)
    loop = ClosedLoop(plant, controller)
    rng = np.random.default_rng(1)
    x = plant.state(controller.q_d, controller.q_m_d) + np.concatenate([rng.normal(size=24) * 0.01, [0.0, 0.0]])
    analytic = loop.jacobian(0.0, x)
    numeric = np.empty_like(analytic)
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = 1e-7
        numeric[:, i] = (loop.derivative(0.0, x + step) - loop.derivative(0.0, x - step)) / 2e-7
    row_scale = np.abs(numeric).max(axis=1, keepdims=True)
    assert np.all(np.abs(analytic - numeric) <= 1e-6 * row_scale + 1e-9)
