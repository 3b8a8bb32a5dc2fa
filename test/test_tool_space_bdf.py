"""The general model's tool-space inverse on a minimum-phase output (issue 25): an elastic-joint arm with rigid
links, whose tool has no finite zeros, takes the initial-value BDF (:mod:`flexrobot_ros.dynamics.dae.
elastic_robot_bdf`), and its motor torques agree with the extended model's DAE inverse
(:func:`~flexrobot_ros.dynamics.dae.dae_feedforward.dae_feedforward`: an independent implementation, SDRNEA's
symbolic RNEA and the index-2 system of seed 002 eq. 18, where the general model uses the chain Lagrangian and the
index-3 position constraint).

planar_2r (config/planar_2r.yaml, thesis section 3.5.1: K = 2000, 1600 N m/rad, gravity in the plane); line from the
tool at q = (-0.8, 1.2) rad to the tool at q = (-0.4, 1.0) rad in 0.5 s, k = 3, h = 2 ms.
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward
from flexrobot_ros.dynamics.dae.reference import CartesianLine
from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics
from flexrobot_ros.dynamics.dae.tool_space_feedforward import tool_space_feedforward
from flexrobot_ros.model import load_robot


def test_minimum_phase_tool_takes_the_bdf_and_agrees_with_the_extended_model_dae():
    """Solver 'bdf' chosen from the zeros (none finite: 'minimum phase'), the model's tool on the line at every step
    (1e-9 m), and tau_m within 2e-3 of the peak torque of the extended model's BDF solution (the O(h^3) difference of
    two index formulations; measured 8.6e-4)."""
    robot = load_robot("planar_2r")
    kinematics = ToolInverseKinematics(robot, ("x", "y"))
    start, end = (kinematics.position(np.array(q))[0] for q in ([-0.8, 1.2], [-0.4, 1.0]))
    line = CartesianLine(start, end, 0.0, 0.5)
    general = tool_space_feedforward(robot, line, h=0.002, k=3, q_g_guess=[-0.8, 1.2])
    assert general.solver == "bdf" and general.minimum_phase and "minimum phase" in general.reason
    assert not general.solution.diverged
    assert general.solution.output_error().max() < 1e-9
    extended = dae_feedforward(robot, line, h=0.002, k=3, q_g_guess=[-0.8, 1.2], t_end=general.solution.t[-1])
    assert extended.solver == "bdf"
    np.testing.assert_allclose(general.solution.t, extended.solution.t, rtol=0, atol=1e-12)
    peak = np.abs(extended.solution.tau_m).max()
    np.testing.assert_allclose(general.solution.u, extended.solution.tau_m, rtol=0, atol=2e-3 * peak)
