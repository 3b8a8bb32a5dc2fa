"""Feedforward of flexible-joint robots (flexrobot_ros.dynamics.feedforward, flexible_joint) and its CLI.

References: thesis (seed 000) section 4.5 (LWR4, T = 3 s, q_0, q_f; EJNEA vs SDRNEA motor torques agree to
< 4e-14 N·m in Fig. 4.11); the rest conditions of eqs. 4.7 and 4.10 (at t = 0 and T: tau_m = g(q) and
q_m = q + K^-1 g(q), with pinocchio's computeGeneralizedGravity as the reference); the link and motor equations of
the model (eqs. 4.1-4.2 with W, README) evaluated with pinocchio's rnea; finite differences of q_m and qd_m; the
rigid-joint limit K -> infinity (eq. 4.5); closed-loop tracking in the simulator (issue 5 acceptance: >= 100x smaller
error than a rigid-model feedforward).
"""
from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics.feedforward import compiled_feedforward, feedforward, rigid_feedforward
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory, spline_through_waypoints
from flexrobot_ros.errors import TrajectoryError
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.timeseries import read_timeseries

PI = np.pi
Q0 = np.array([-PI / 4, -PI / 4, PI / 4, PI / 4, -PI / 4, -2 * PI / 3, PI / 4])  # thesis section 4.5.3
QF = np.array([5 * PI / 6, 2 * PI / 3, -5 * PI / 6, -2 * PI / 3, 3 * PI / 4, PI / 2, -3 * PI / 4])




@pytest.fixture(scope="module")
def lwr4():
    return load_robot("lwr4")


@pytest.fixture(scope="module")
def lwr4_results(lwr4):
    """The thesis' LWR4 case at 1 kHz by both methods (the thesis trajectory exceeds the KUKA speed limits)."""
    trajectory = Poly9Trajectory(Q0, QF, 3.0)
    with pytest.warns(RuntimeWarning, match="exceeds the velocity limit"):
        sdrnea = feedforward(lwr4, trajectory, "sdrnea", rate_hz=1000.0)
    with pytest.warns(RuntimeWarning):
        ejnea = feedforward(lwr4, trajectory, "ejnea", rate_hz=1000.0)
    return sdrnea, ejnea


def test_lwr4_ejnea_and_sdrnea_motor_torques_agree(lwr4_results):
    """Thesis Fig. 4.11: EJNEA and SDRNEA motor torques agree; required here within 1e-10 N·m at all 3001 samples."""
    sdrnea, ejnea = lwr4_results
    assert sdrnea.t.size == 3001
    deviation = np.abs(sdrnea.tau_m - ejnea.tau_m).max()
    print(f"LWR4 max |tau_m(EJNEA) - tau_m(SDRNEA)| = {deviation:.2e} N m (thesis: < 4e-14 N m)")
    assert deviation <= 1e-10
    for name in ("tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m"):
        a, b = getattr(sdrnea, name), getattr(ejnea, name)
        assert np.abs(a - b).max() <= 1e-9 * max(1.0, np.abs(a).max()), name


def test_lwr4_at_rest_motor_torque_is_gravity(lwr4, lwr4_results):
    """At t = 0 and T (rest, zero jerk and snap): tau_m = g(q) and q_m = q + K^-1 g(q) (eqs. 4.7, 4.10)."""
    sdrnea, _ = lwr4_results
    data = lwr4.create_data()
    for k in (0, -1):
        gravity = pin.computeGeneralizedGravity(lwr4.model, data, sdrnea.q[k])
        np.testing.assert_allclose(sdrnea.tau_m[k], gravity, rtol=0, atol=1e-9)
        np.testing.assert_allclose(sdrnea.q_m[k], sdrnea.q[k] + gravity / lwr4.stiffness, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sdrnea.q[-1], QF, atol=1e-12)


def test_model_equations_hold_along_the_trajectory():
    """Scompi (prismatic joint 1, W = 1/0.057), with link and motor Coulomb friction added: the link equation
    rnea(q, qd, qdd) + D qd + D_c tanh(qd/v_c) = W K (q_m - W q) and the motor equation
    B qdd_m + D_m qd_m + D_cm tanh(qd_m/v_c) + K (q_m - W q) = tau_m hold to 1e-9 relative, using pin.rnea."""
    robot = load_robot("scompi", tool=True).with_parameters(link_coulomb=np.full(6, 2.0),
                                                            motor_coulomb=np.full(6, 0.3))
    trajectory = spline_through_waypoints([0.0, 1.5, 3.6, 6.0], [[0.0, -0.4, 1.9, 0.0, -1.9, 0.0],
                                                                 [0.1, -0.2, 1.6, 0.3, -1.5, 0.2],
                                                                 [0.05, -0.5, 1.8, -0.2, -1.7, 0.4],
                                                                 [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]])
    result = feedforward(robot, trajectory, rate_hz=200.0)
    data = robot.create_data()
    w, k, width = robot.transmission, robot.stiffness, robot.coulomb_width
    for i in range(0, result.t.size, 7):
        link = (pin.rnea(robot.model, data, result.q[i], result.qd[i], result.qdd[i])
                + robot.link_damping * result.qd[i] + robot.link_coulomb * np.tanh(result.qd[i] / width))
        spring = w * k * (result.q_m[i] - w * result.q[i])
        assert np.abs(link - spring).max() <= 1e-9 * np.abs(link).max()
        motor = (robot.motor_inertia * result.qdd_m[i] + robot.motor_damping * result.qd_m[i]
                 + robot.motor_coulomb * np.tanh(result.qd_m[i] / width) + k * (result.q_m[i] - w * result.q[i]))
        assert np.abs(motor - result.tau_m[i]).max() <= 1e-9 * np.abs(result.tau_m[i]).max()


def test_motor_rates_are_derivatives_of_the_motor_reference():
    """qd_m and qdd_m equal 8th-order central differences of q_m and qd_m (link Coulomb friction included, so the
    differentiated tanh is checked), 1e-6 relative."""
    robot = load_robot("lwr4").with_parameters(link_coulomb=np.full(7, 1.5), link_damping=np.full(7, 0.8))
    trajectory = spline_through_waypoints([0.0, 0.8, 1.5, 2.5], [[0.0] * 7, [0.5, -0.3, 0.2, 0.4, -0.6, 0.3, 0.1],
                                                               [0.2, 0.1, -0.4, 0.9, 0.2, -0.3, 0.5], [0.0] * 7])
    weights = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])
    t = np.linspace(0.2, 2.3, 15)
    h = 2e-4  # small against the Coulomb smoothing time v_c / |qdd| (~ 10 ms here)
    shifted = [feedforward(robot, trajectory, "ejnea", t=t + (j - 4) * h) for j in range(9)]
    center = shifted[4]
    for lower, upper in (("q_m", "qd_m"), ("qd_m", "qdd_m")):
        numeric = sum(c * getattr(r, lower) for c, r in zip(weights, shifted)) / h
        exact = getattr(center, upper)
        assert np.abs(numeric - exact).max() <= 1e-6 * np.abs(exact).max(), upper


def test_stiff_joints_approach_the_rigid_feedforward(lwr4):
    """K -> infinity (1e9 N m/rad): the flexible feedforward tends to the rigid one of eq. 4.5 (to 1e-4 relative)."""
    robot = lwr4.with_parameters(stiffness=np.full(7, 1e9))
    trajectory = Poly9Trajectory(Q0 * 0.3, QF * 0.3, 3.0)
    flexible = feedforward(robot, trajectory, "ejnea", rate_hz=100.0)
    rigid = rigid_feedforward(robot, trajectory, rate_hz=100.0)
    assert np.abs(flexible.tau_m - rigid.tau_m).max() <= 1e-4 * np.abs(rigid.tau_m).max()
    np.testing.assert_allclose(rigid.q_m, rigid.q)
    assert rigid.method == "rigid"


def test_compiled_per_sample_call_matches_batch(lwr4, lwr4_results):
    """The per-sample entry point for control loops returns the batch result's row."""
    sdrnea, _ = lwr4_results
    compiled = compiled_feedforward(lwr4)
    k = 1234
    x = np.concatenate([getattr(sdrnea, name)[k] for name in ("q", "qd", "qdd", "q3", "q4")])
    y = compiled.evaluate_packed(x)
    np.testing.assert_allclose(y[6 * 7:], sdrnea.tau_m[k], rtol=0, atol=1e-12)


@pytest.mark.parametrize("qf, match", [
    (np.array([3.1, 0, 0, 0, 0, 0, 0]), "joint 'joint1': q = 2.97.* at t = 2.28 s is above the upper limit 2.96706"),
    (np.array([0, -2.2, 0, 0, 0, 0, 0]), "joint 'joint2'.*below the lower limit"),
])
def test_joint_limits_exceeded(lwr4, qf, match):
    with pytest.raises(TrajectoryError, match=match):
        feedforward(lwr4, Poly9Trajectory(np.zeros(7), qf, 3.0), rate_hz=100.0)


def test_bad_feedforward_inputs(lwr4):
    with pytest.raises(TrajectoryError, match="trajectory has 2 joints; robot 'lwr4' has 7"):
        feedforward(lwr4, Poly9Trajectory([0, 0], [1, 1], 1.0))
    with pytest.raises(TrajectoryError, match="method: 'rnea'"):
        feedforward(lwr4, Poly9Trajectory(np.zeros(7), np.zeros(7), 1.0), method="rnea")


def test_cli_writes_csv_json_and_plot(tmp_path, capsys, lwr4_results):
    """`flexrobot feedforward lwr4 --trajectory FILE --out CSV --plot PNG --json`: the CSV holds the same numbers as
    the API result; JSON has the documented keys with (samples x joints) arrays."""
    spec = tmp_path / "lwr4_thesis.yaml"
    spec.write_text(f"profile: poly9\nduration: 3.0\nq0: {Q0.tolist()}\nqf: {QF.tolist()}\n")
    out, png = tmp_path / "ff.csv", tmp_path / "ff.png"
    code = main(["feedforward", "lwr4", "--trajectory", str(spec), "--rate", "1000", "--out", str(out),
                 "--plot", str(png), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "exceeds the velocity limit" in captured.err
    payload = json.loads(captured.out)
    for key in ("t", "q", "tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m", "tau_m"):
        assert key in payload
    assert np.asarray(payload["tau_m"]).shape == (3001, 7)
    sdrnea, _ = lwr4_results
    t, columns = read_timeseries(out)
    np.testing.assert_array_equal(t, sdrnea.t)
    np.testing.assert_array_equal(columns["tau_m.joint4"], sdrnea.tau_m[:, 3])
    np.testing.assert_array_equal(columns["q_m.joint2"], sdrnea.q_m[:, 1])
    assert png.stat().st_size > 10_000


def test_cli_reports_bad_trajectory_files(tmp_path, capsys):
    spec = tmp_path / "bad.yaml"
    spec.write_text("waypoints: [{t: 0, q: [0, 0, 0, 0, 0, 0, 0]}, {t: 0, q: [1, 0, 0, 0, 0, 0, 0]}]\n")
    code = main(["feedforward", "lwr4", "--trajectory", str(spec), "--out", str(tmp_path / "x.csv")])
    assert code == 2
    assert "bad.yaml" in capsys.readouterr().err


SCOMPI_CONFIG_8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])  # thesis section 2.4.2 (MODEL_API)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*exceeds the velocity limit:RuntimeWarning")
@pytest.mark.parametrize("name, trajectory", [
    ("lwr4", Poly9Trajectory(Q0, QF, 3.0)),
    ("scompi", Poly9Trajectory(SCOMPI_CONFIG_8, SCOMPI_CONFIG_8 + [0.2, 0.5, -0.6, 0.8, 0.7, 1.0], 2.0)),
])
def test_closed_loop_tracking_beats_rigid_feedforward(name, trajectory):
    """Feedforward tau_m with q_m, qd_m as motor-PD references (FeedforwardPD, 1 kHz samples) in the simulator's
    real-time mode (exponential Euler, 1 ms): the link follows q_d with a maximum error >= 100x smaller than with the
    rigid-model feedforward of eq. 4.5. Both runs start at rest at q_d(0) with the springs carrying gravity.
    Measured when written: LWR4 9.6e-6 vs 0.108 rad, Scompi (with tool) 4.1e-7 vs 7.4e-4 rad/m."""
    robot = load_robot(name, tool=name == "scompi")
    flexible = feedforward(robot, trajectory, rate_hz=1000.0)
    errors = {}
    for label, result in (("flexible", flexible), ("rigid", rigid_feedforward(robot, trajectory, rate_hz=1000.0))):
        controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
        simulation = Simulation(robot, controller, q0=flexible.q[0], q_m0=flexible.q_m[0], rate=1000.0,
                                mode="fixed")
        output = simulation.run(trajectory.duration)
        np.testing.assert_allclose(output.t, flexible.t, rtol=0, atol=1e-12)
        errors[label] = np.abs(output.q - flexible.q).max()
    print(f"{name}: max |q - q_d| with flexible feedforward {errors['flexible']:.2e}, with rigid feedforward "
          f"{errors['rigid']:.2e} (ratio {errors['rigid'] / errors['flexible']:.0f})")
    assert errors["rigid"] >= 100.0 * errors["flexible"]
    assert errors["flexible"] < 1e-4
