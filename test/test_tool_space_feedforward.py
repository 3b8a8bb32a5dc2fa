"""Tool-space feedforward of the general model (issue 25): the motor torques that move the *deformed* tool of a
robot with flexible links along a straight line, by seed 002's DAE methods (zeros along the path -> the
whole-trajectory optimization for the non-minimum-phase tip), checked in the simulator against the rigid baseline.

Robot flexarm2 (config/flexarm2.yaml): a horizontal planar two-link arm, both 0.5 m links flexible (EI = 20 N m^2,
one clamped-free mode each, 1 % damping), rigid joints under the shipped PD K_P = 20 N m/rad, K_D = 2 N m s/rad.
Line: tool0 from (0.6, 0.3) to (0.4, 0.6) m in 0.6 s, rest to rest (seed 002 eq. 24's degree-11 profile); BDF step
4 ms, order 3. Independent checks: the deformed tool position against the DeNOC placement
(:meth:`ElasticRobot.frame_placement`, numeric), the zeros against a finite-difference linearization of the
numeric forward dynamics (the Rosenbrock matrix loses rank at a zero), the torques through the simulator
(:class:`ElasticRobotPlant`, its own integration) with the tip from the numeric placement.
"""
from __future__ import annotations

import json

import casadi as cs
import numpy as np
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import feedforward
from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward
from flexrobot_ros.dynamics.dae.reference import CartesianLine, tool_line_from_dict
from flexrobot_ros.dynamics.dae.tool_space_feedforward import tool_space_feedforward
from flexrobot_ros.dynamics.feedforward import tool_space_feedforward_result
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.errors import TrajectoryError
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from flexrobot_ros.timeseries import read_timeseries

START, END, DURATION_S = [0.6, 0.3], [0.4, 0.6], 0.6
STEP_S, ORDER = 4e-3, 3
#: Simulator rate [Hz] and the time simulated after each file's motion [s].
RATE_HZ, AFTER_S = 500.0, 0.5


@pytest.fixture(scope="module")
def robot():
    return load_robot("flexarm2")


@pytest.fixture(scope="module")
def solved(robot):
    return tool_space_feedforward(robot, CartesianLine(START, END, 0.0, DURATION_S), h=STEP_S, k=ORDER)


@pytest.fixture(scope="module")
def plant(robot):
    return ElasticRobotPlant(robot)


def _tip_errors(robot, plant, result, line) -> tuple[float, float]:
    """The feedforward ``result`` + shipped PD in the simulator from its first pose: the largest distance [m] of
    the deformed tool from the timed line during the motion [t0, t0 + T], and from the line's end over AFTER_S after
    it (the residual vibration)."""
    controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
    np.testing.assert_array_equal(controller.kp, [20.0, 20.0])  # the shipped gains
    end = line.t0 + line.duration
    out = Simulation(plant, controller, q0=result.q[0], rate=RATE_HZ).run(end + AFTER_S)
    frame = plant.model.frame_id(robot.tool_frame)
    tips = np.array([plant.model.frame_placement(plant.coordinates(x)[0], frame).translation[:2]
                     for x in out.states])
    error = np.linalg.norm(tips - line.evaluate(out.t, 0)[0], axis=1)
    during = (out.t >= line.t0) & (out.t <= end)
    return float(error[during].max()), float(error[out.t > end].max())


def test_deformed_tool_position_is_the_recursive_placement(robot, solved):
    """The CasADi tool position the DAE constrains (ElasticRobotFunctions.frame_position) equals the numeric DeNOC
    placement of the deformed tip to 1e-14 m at random deformed states."""
    model, dae = solved.model, solved.solution.dae
    frame = model.frame_id(robot.tool_frame)
    rng = np.random.default_rng(25)
    for y in rng.normal(scale=0.3, size=(5, model.size)):
        np.testing.assert_allclose(np.array(dae.output(y)).ravel(), model.frame_placement(y, frame).translation[:2],
                                   rtol=0, atol=1e-14)


def test_zeros_along_the_line_are_non_minimum_phase_and_make_the_optimization_run(robot, solved):
    """The tip output is non-minimum phase at every path pose (a flexible link's tip), so the optimization over the
    whole trajectory ran, the reason names the zero; each reported unstable zero z makes the Rosenbrock matrix
    [[A - z I, B], [C, 0]] of an independent linearization (central differences of the numeric forward dynamics
    and of the DeNOC tip placement) singular: its smallest singular value there is below 1e-4 of the smallest at
    0.5, 0.9, 1.1 and 2 z."""
    assert solved.solver == "optimization" and not solved.minimum_phase
    assert "non-minimum phase" in solved.reason and "optimization" in solved.reason
    assert all(z.unstable_zeros.size == 2 for z in solved.zeros)   # one per flexible mode at every pose
    model = solved.model
    q = solved.solution.dae.rigid_path(solved.path_times[5:6])[0]
    y0, s, n = model.static_equilibrium(q), model.size, model.n
    frame = model.frame_id(robot.tool_frame)
    step = 1e-6
    A, B, C = np.zeros((2 * s, 2 * s)), np.zeros((2 * s, n)), np.zeros((n, 2 * s))
    A[:s, s:] = np.eye(s)
    for j in range(2 * s + n):
        plus, minus = [np.r_[y0, np.zeros(s + n)] for _ in range(2)]
        plus[j] += step
        minus[j] -= step
        a = [model.forward_dynamics(x[:s], x[s:2 * s], x[2 * s:]) for x in (plus, minus)]
        column = (a[0] - a[1]) / (2 * step)
        if j < 2 * s:
            A[s:, j] = column
        else:
            B[s:, j - 2 * s] = column
        if j < s:
            C[:, j] = (model.frame_placement(plus[:s], frame).translation[:2]
                       - model.frame_placement(minus[:s], frame).translation[:2]) / (2 * step)
    def smallest_singular_value(value: complex) -> float:
        rosenbrock = np.block([[A - value * np.eye(2 * s), B], [C, np.zeros((n, n))]])
        return float(np.linalg.svd(rosenbrock, compute_uv=False)[-1])

    for z in solved.zeros[5].unstable_zeros:
        at_zero, away = smallest_singular_value(z), min(smallest_singular_value(f * z) for f in (0.5, 0.9, 1.1, 2.0))
        print(f"zero {z:.4g} rad/s: smallest singular value {at_zero:.3g} there, >= {away:.3g} at 0.5-2x")
        assert at_zero < 1e-4 * away


def test_deformed_tip_follows_the_line_and_stops_20x_calmer_than_the_rigid_baseline(robot, solved, plant):
    """Acceptance (issue 25, tool space, rest to rest): the optimization's torque with the shipped PD keeps the
    deformed tip within 0.5 mm of the line during the motion; the residual tip vibration over 0.5 s after the motion
    is at least 20x smaller than with the rigid baseline (pinocchio inverse kinematics and dynamics of the rigid
    robot along the same line, motor reference = link reference) under the same PD."""
    line = solved.reference
    result = tool_space_feedforward_result(robot, solved)
    assert result.method == "dae" and set(result.deflections) == {"deflection.link1.y", "deflection.link2.y"}
    assert solved.solution.output_error()[1:].max() < 1e-9   # the model's tip on the line at every BDF step
    rigid = feedforward(robot, line, "rigid", rate_hz=1.0 / STEP_S)
    dae_during, dae_after = _tip_errors(robot, plant, result, line)
    rigid_during, rigid_after = _tip_errors(robot, plant, rigid, line)
    print(f"tip error during the motion: dae {1e3 * dae_during:.4f} mm, rigid {1e3 * rigid_during:.3f} mm; "
          f"residual vibration after it: dae {1e3 * dae_after:.4f} mm, rigid {1e3 * rigid_after:.3f} mm "
          f"({rigid_after / dae_after:.0f}x)")
    assert dae_during <= 0.5e-3
    assert rigid_after >= 20.0 * dae_after
    assert rigid_during > 5e-3    # the baseline misses the line by millimetres: the check can tell them apart


def test_zeros_are_the_finite_ones_at_every_pose_of_a_waypoint_path(robot):
    """The tool output of flexarm2 has relative degree 2 (rigid joints): 2 s - 2 n = 4 finite zeros at every pose
    (two per flexible mode), no more. On the rigid path of a two-waypoint ToolTrajectory from the elbow (-0.37, 1.67)
    rad the Rosenbrock pencil's QZ once returned its infinite eigenvalues as a spurious pair 9.2 +- 4.0e8j rad/s
    (Jordan chains at infinity), which capped the pre-actuation at the motion's duration; now each pose has 4 zeros,
    two unstable (the 123.1 and 174.2 rad/s of the line above), and each makes the Rosenbrock matrix [[A - z I, B],
    [C, 0]] singular (smallest singular value below 1e-9 of the largest)."""
    from flexrobot_ros.dynamics import spline_through_waypoints
    from flexrobot_ros.dynamics.dae.elastic_robot_dae import ElasticRobotDae
    from flexrobot_ros.dynamics.dae.reference import ToolTrajectory
    from flexrobot_ros.dynamics.dae.tool_path_zeros import path_tool_zeros
    from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot

    model = ElasticRobot(robot)
    dae = ElasticRobotDae(model, ToolTrajectory(spline_through_waypoints([0.0, 0.3], np.array([START, [0.5, 0.4]]))))
    poses = dae.rigid_path(np.linspace(0.0, 0.3, 11), [-0.37, 1.67])
    s, n = model.size, model.n
    for q, analysis in zip(poses, path_tool_zeros(dae, poses)):
        assert analysis.zeros.size == 2 * s - 2 * n and analysis.unstable_zeros.size == 2
        np.testing.assert_allclose(np.sort(analysis.unstable_zeros.real), [123.1, 174.2], atol=0.5)
        y = model.static_equilibrium(q)
        _, a_y, a_v, a_u = model.functions.acceleration_jacobian(y, np.zeros(s), model.holding_torque(y),
                                                                 np.zeros(s), 0.0)
        A = np.block([[np.zeros((s, s)), np.eye(s)], [np.array(a_y), np.array(a_v)]])
        B = np.vstack([np.zeros((s, n)), np.array(a_u)])
        C = np.hstack([np.array(dae.output_jacobian(y)), np.zeros((n, s))])
        for z in analysis.zeros:
            values = np.linalg.svd(np.block([[A - z * np.eye(2 * s), B], [C, np.zeros((n, n))]]), compute_uv=False)
            assert values[-1] < 1e-9 * values[0]


def test_tool_space_dae_needs_no_q_g_guess_and_keeps_the_given_one(robot):
    """feedforward(robot, CartesianLine, 'dae') on moberg5 (elastic joints, extra elasticity) without q_g_guess: the
    rigid inverse kinematics of the start picks the start pose; the torques equal dae_feedforward's with the
    hand-given guess of test_dae_optimization (same line, h = 3 ms, k = 3) to 1e-9 of their peak."""
    moberg5 = load_robot("moberg5")
    line = CartesianLine([-1.1, -1.2], [1.1, -1.2], 0.0, 0.3)
    given = dae_feedforward(moberg5, line, q_g_guess=[-0.4335, 2.3005], h=0.003, k=3).solution
    result = feedforward(moberg5, line, "dae", rate_hz=1.0 / 0.003, order=3)
    np.testing.assert_allclose(result.tau_m, given.tau_m, rtol=0, atol=1e-9 * np.abs(given.tau_m).max())


def test_output_function_is_a_casadi_function_of_the_coordinates(solved):
    """The DAE's output and its Jacobian are exact CasADi functions (the Jacobian equals central differences of the
    output to 1e-8 m per unit)."""
    dae = solved.solution.dae
    y = solved.solution.y[len(solved.solution.t) // 2]
    jacobian = np.array(dae.output_jacobian(y))
    step = 1e-6
    for j in range(y.size):
        e = np.zeros(y.size)
        e[j] = step
        column = (np.array(dae.output(y + e)) - np.array(dae.output(y - e))).ravel() / (2 * step)
        np.testing.assert_allclose(jacobian[:, j], column, rtol=0, atol=1e-8)
    assert isinstance(dae.output, cs.Function)


def test_cli_line_reports_the_solver_and_the_zeros(tmp_path, capsys):
    """``flexrobot feedforward flexarm2 --line .. --duration .. --step .. --order .. --json``: method dae, the
    optimization ran for the non-minimum-phase tip (unstable zeros listed [rad/s], Re > 0), the file holds the joint
    columns and the predicted tip deflections; a tool-space --trajectory file gives the --line's rigid baseline."""
    out = tmp_path / "ff.csv"
    assert main(["feedforward", "flexarm2", "--line", "0.6,0.3", "0.4,0.6", "--duration", "0.6", "--step", "0.01",
                 "--order", "2", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "dae" and payload["tool_space"]["solver"] == "optimization"
    assert "non-minimum phase" in payload["tool_space"]["reason"]
    assert payload["tool_space"]["unstable_zeros_rad_s"] and all(
        re > 0 for re, _ in payload["tool_space"]["unstable_zeros_rad_s"])
    _, columns = read_timeseries(out)
    assert {"tau_m.joint1", "q_m.joint2", "deflection.link2.y"} <= set(columns)
    line_file = tmp_path / "line.yaml"
    line_file.write_text("line: {start: [0.6, 0.3], end: [0.4, 0.6], duration: 0.6}\n")
    rigid_line, rigid_file = tmp_path / "rigid_line.csv", tmp_path / "rigid_file.csv"
    assert main(["feedforward", "flexarm2", "--line", "0.6,0.3", "0.4,0.6", "--duration", "0.6", "--method",
                 "rigid", "--rate", "100", "--out", str(rigid_line)]) == 0
    assert main(["feedforward", "flexarm2", "--trajectory", str(line_file), "--method", "rigid", "--rate", "100",
                 "--out", str(rigid_file)]) == 0
    assert "rigid inverse kinematics and dynamics" in capsys.readouterr().out
    a, b = read_timeseries(rigid_line)[1], read_timeseries(rigid_file)[1]
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("arguments, message", [
    (["--line", "0.6,0.3", "0.4,0.6"], "--duration"),
    (["--line", "0.6,0.3", "0.4,0.6,0.1", "--duration", "0.3"], "two points of 2 or 3 coordinates"),
    (["--line", "0.6,0.3", "0.4,0.6", "--duration", "0.6", "--method", "sdrnea"], "--method sdrnea"),
    (["--line", "0.6,0.3", "0.4,0.6", "--duration", "0.3", "--step", "0"], "--step"),
    (["--line", "0.6,0.3,0", "0.4,0.6,0", "--duration", "0.6", "--method", "rigid"],
     "the tool reference has 3 coordinates; 2 expected (tool axes ['x', 'y'])"),
    ([], "either --trajectory FILE or --line"),
])
def test_cli_line_refuses_what_cannot_take_effect(tmp_path, capsys, arguments, message):
    """Bad --line input: exit status 2 and one line naming the option."""
    assert main(["feedforward", "flexarm2", *arguments, "--out", str(tmp_path / "x.csv")]) == 2
    assert message in capsys.readouterr().err


def test_tool_line_file_errors_name_the_field(tmp_path):
    """A tool-space trajectory file with a bad field: the error names the file and the field."""
    with pytest.raises(TrajectoryError, match=r"line.yaml: line.end: expected 2 or 3 numbers"):
        tool_line_from_dict({"line": {"start": [0.6, 0.3], "end": [0.4], "duration": 0.3}}, "line.yaml")
    with pytest.raises(TrajectoryError, match=r"line.yaml: line: unknown keys \['speed'\]"):
        tool_line_from_dict({"line": {"start": [0, 0], "end": [1, 0], "duration": 1, "speed": 2}}, "line.yaml")
