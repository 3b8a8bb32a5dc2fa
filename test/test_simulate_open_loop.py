"""``flexrobot simulate --open-loop`` (issue 22, speed): the trajectory is sampled once, vectorized, at the instants
the fixed-step integrator evaluates the controller, instead of evaluating scipy B-splines (all five derivatives) at
every evaluation. The run must stay what it was: these tests compare against the per-call evaluation the command
used before. (Speed itself is measured by bench/flexible_links.py, section 4, CLI line.)"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.cli import main
from flexrobot_ros.commands.simulate import open_loop_controller
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.simulation import FixedStepIntegration, Simulation, TorqueInput
from flexrobot_ros.timeseries import read_timeseries

TRAJECTORY = share_directory() / "config" / "canadarm_trajectory.yaml"


def test_evaluation_times_are_the_instants_the_fixed_step_integrator_asks_for():
    """Every instant at which the integrator calls a time-varying controller (2 substeps, 100 Hz, 0.05 s) is on the
    grid of ``FixedStepIntegration.evaluation_times`` bit for bit, and the grid has no instant it never asks for."""
    robot = load_robot("planar_2r")
    asked: list[float] = []

    def torque(t: float) -> np.ndarray:
        asked.append(t)
        return np.zeros(robot.n)

    fixed = FixedStepIntegration(substeps=2)
    simulation = Simulation(robot, TorqueInput(robot, torque), q0=np.zeros(robot.n), rate=100.0, fixed=fixed)
    asked.clear()  # the constructor's shape check calls the signal at 0 s
    simulation.run(0.05)
    grid = fixed.evaluation_times(100.0, 0.05)
    assert grid.shape == (2 * 10 + 2,) and np.all(np.diff(grid) > 0)
    assert set(asked) == set(grid.tolist())


def test_open_loop_run_is_unchanged_by_sampling_the_trajectory_beforehand(tmp_path):
    """The forced Canadarm (seed 003 section 7.1) through the CLI, 0.3 s at 100 Hz with 2 substeps, against the
    same simulation driven by the per-call evaluation (rnea on the trajectory evaluated at each instant): link and
    motor positions and motor torques agree to 1e-12 (the torques are read at exactly the sampled instants)."""
    out = tmp_path / "canadarm.npz"
    assert main(["simulate", "canadarm", "--open-loop", str(TRAJECTORY), "--duration", "0.3", "--rate", "100",
                 "--substeps", "2", "--out", str(out)]) == 0
    _, columns = read_timeseries(out)
    robot = load_robot("canadarm")
    per_call, trajectory = open_loop_controller(robot, TRAJECTORY)
    q0 = trajectory.evaluate([trajectory.start_time]).q[0]
    reference = Simulation(robot, per_call, q0=q0, rate=100.0, fixed=FixedStepIntegration(substeps=2)).run(0.3)
    for i, name in enumerate(robot.joint_names):
        for label, values in (("q", reference.q), ("q_m", reference.q_m), ("tau_m", reference.tau_m)):
            scale = max(np.abs(values[:, i]).max(), 1e-300)
            np.testing.assert_allclose(columns[f"{label}.{name}"], values[:, i], rtol=0, atol=1e-12 * scale,
                                       err_msg=f"{label}.{name}")
    assert np.abs(reference.tau_m).max() > 1.0  # the run is forced (N m), not trivially zero


def test_open_loop_torques_are_zero_after_the_trajectory_and_exact_on_the_grid():
    """Sampled on a grid reaching past the trajectory's end (10 s), the torques are exactly the per-call values at
    the grid instants, and zero after the end, as before."""
    robot = load_robot("canadarm")
    times = np.array([0.0, 0.05, 2.5, 9.999, 10.0, 10.0005, 11.0])
    sampled, _ = open_loop_controller(robot, TRAJECTORY, times)
    per_call, _ = open_loop_controller(robot, TRAJECTORY)
    for t in times:
        np.testing.assert_array_equal(sampled.tau_m(t), per_call.tau_m(t))
    assert np.all(sampled.tau_m(10.0005) == 0.0) and np.abs(sampled.tau_m(2.5)).max() > 1.0
