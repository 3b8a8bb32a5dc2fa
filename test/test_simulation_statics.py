"""Statics of the simulated Scompi under PD + gravity compensation (seed 000 eqs. 2.2, 2.3, 2.21, 2.22).

Eq. 2.22 is the case-2 set point (4 kg tool; ERRATA.md and the lead's check): printed
q_m(0) = [0.0, -0.374, 1.9446, -0.0001, -1.9449, 0.0]. Each entry is tested within max(2e-4 rad, half a unit of
its last printed digit): q_m2 is printed with only 3 decimals (computed -0.374402), hence 5e-4 for it, and the
one-decimal zeros get 0.05 (the computed values are 0 to rounding anyway).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FixedStepIntegration, PDGravityCompensation, Simulation
from flexrobot_ros.simulation.impact_experiment import thesis_configuration

Q8 = thesis_configuration(8)
EQ_2_21 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
EQ_2_22 = np.array([0.0, -0.374, 1.9446, -0.0001, -1.9449, 0.0])
EQ_2_22_DECIMALS = np.array([1, 3, 4, 4, 4, 1])


@pytest.fixture(scope="module", params=[1, 2], ids=["case1", "case2"])
def controller(request):
    return PDGravityCompensation.create(load_robot("scompi", tool=request.param == 2), Q8)


def test_configuration_8_is_eq_2_21():
    """thesis_configuration(8) rounds to the printed q(0) of eq. 2.21 (4 decimals)."""
    np.testing.assert_allclose(Q8, EQ_2_21, atol=5e-5)


def test_motor_set_point_matches_eq_2_22_case_2():
    """q_m^d (eq. 2.3) of case 2 at configuration 8 vs the printed eq. 2.22, entry tolerance as in the module doc."""
    q_m_d = PDGravityCompensation.create(load_robot("scompi", tool=True), Q8).q_m_d
    tolerance = np.maximum(2e-4, 0.5 * 10.0 ** -EQ_2_22_DECIMALS)
    assert np.all(np.abs(q_m_d - EQ_2_22) <= tolerance), (q_m_d, EQ_2_22)
    # all but q_m2 meet the plain 2e-4 of the issue
    assert np.all(np.abs(np.delete(q_m_d - EQ_2_22, 1)) <= 2e-4)


@pytest.mark.parametrize("mode", ["accurate", "fixed"])
def test_robot_started_at_set_point_stays_put_for_5_s(controller, mode):
    """Started at rest at (q^d, q_m^d) the robot does not move: drift < 1e-9 rad (m for q_1) over 5 s."""
    simulation = Simulation(controller.robot, controller, rate=100.0, mode=mode)
    output = simulation.run(5.0)
    assert np.abs(output.q - controller.q_d).max() < 1e-9
    assert np.abs(output.q_m - controller.q_m_d).max() < 1e-9
    assert np.abs(output.qd).max() < 1e-9 and np.abs(output.qd_m).max() < 1e-9


def test_simulated_rest_position_is_the_set_point_of_eq_2_3(controller):
    """Released from undeflected springs (q_m = W q^d) the closed loop settles, by simulation only, at the set
    point of eq. 2.3: the motor offset that carries gravity is found dynamically, not from the formula."""
    robot = controller.robot
    simulation = Simulation(robot, controller, q0=controller.q_d, q_m0=robot.transmission * controller.q_d,
                            rate=50.0, mode="fixed", fixed=FixedStepIntegration(substeps=20))
    final = simulation.run(6.0)
    np.testing.assert_allclose(final.q_m[-1], controller.q_m_d, atol=1e-8)
    np.testing.assert_allclose(final.q[-1], controller.q_d, atol=1e-8)
