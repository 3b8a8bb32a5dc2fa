"""Trajectories with four continuous derivatives (flexrobot_ros.dynamics.trajectory).

References: thesis (seed 000) eqs. 4.29-4.32 for the poly9 profile, whose derivative has the closed form
eta'(s) = 630 s^4 (1 - s)^4 (independent of the polynomial coefficients used by the code); finite differences of
q(t) for every analytic derivative; interpolation conditions for splines.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.interpolate import BSpline

from flexrobot_ros.dynamics.trajectory import (Poly9Trajectory, SplineTrajectory, load_trajectory,
                                               spline_through_waypoints, trajectory_from_dict,
                                               trajectory_from_joint_trajectory)
from flexrobot_ros.errors import TrajectoryError

DERIVS = ("q", "qd", "qdd", "q3", "q4")


def central_derivative(f, t, h):
    """8th-order central difference of f (returns (samples, n)) at times t."""
    c = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])
    return sum(ck * f(t + (k - 4) * h) for k, ck in enumerate(c) if ck) / h


def test_poly9_matches_closed_form_eqs_4_29_to_4_32():
    """eta(0) = 0, eta(1) = 1, eta'(s) = 630 s^4 (1-s)^4 / T, and derivatives 1..4 vanish at both ends."""
    q0, qf, T = np.array([-0.5, 1.0, 0.2]), np.array([1.5, -2.0, 0.2]), 3.0
    traj = Poly9Trajectory(q0, qf, T)
    t = np.linspace(0.0, T, 61)
    s = traj.evaluate(t)
    sbar = t / T
    expected_qd = (qf - q0)[None, :] * (630 * sbar ** 4 * (1 - sbar) ** 4 / T)[:, None]
    np.testing.assert_allclose(s.qd, expected_qd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.q[0], q0, atol=1e-15)
    np.testing.assert_allclose(s.q[-1], qf, atol=1e-13)
    for name in DERIVS[1:]:
        np.testing.assert_allclose(getattr(s, name)[[0, -1]], 0.0, atol=1e-12)
    assert np.all(s.qd[:, 2] == 0.0)  # a joint with q0 == qf stays still


@pytest.mark.parametrize("traj", [
    Poly9Trajectory([0.3, -1.0], [1.2, 0.5], 2.0, start_time=1.0),
    spline_through_waypoints([0.0, 0.4, 1.1, 1.5, 2.3], [[0, 0], [0.5, -0.2], [0.1, 0.7], [0.9, 0.2], [1.0, 1.0]],
                             degree=9),
    spline_through_waypoints([0.0, 0.5, 1.0, 1.8], [[0.0], [0.3], [-0.2], [0.4]], degree=5),
])
def test_analytic_derivatives_equal_finite_differences(traj):
    """Each analytic derivative equals an 8th-order central difference of the one below (rel. 1e-7)."""
    t = np.linspace(traj.start_time + 0.05, traj.end_time - 0.05, 23)
    h = 1e-3
    for lower, upper in zip(DERIVS[:-1], DERIVS[1:]):
        numeric = central_derivative(lambda x: getattr(traj.evaluate(x), lower), t, h)
        exact = getattr(traj.evaluate(t), upper)
        scale = np.abs(exact).max()
        assert np.abs(numeric - exact).max() <= 1e-7 * scale, (lower, upper)


def test_two_waypoint_degree9_spline_is_the_poly9_profile():
    """With rest conditions up to the snap, two waypoints define exactly the eq. 4.30 polynomial."""
    q0, qf = np.array([0.1, -0.7]), np.array([1.4, 0.9])
    poly = Poly9Trajectory(q0, qf, 3.0)
    spline = spline_through_waypoints([0.0, 3.0], [q0, qf])
    t = np.linspace(0, 3, 37)
    a, b = poly.evaluate(t), spline.evaluate(t)
    for name in DERIVS:
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=0,
                                   atol=1e-11 * max(1.0, np.abs(getattr(a, name)).max()))


@pytest.mark.parametrize("degree", [5, 7, 9])
def test_waypoint_spline_interpolates_and_is_c4(degree):
    """Positions, given interior velocities/accelerations and end rest conditions are met; q'''' is continuous."""
    rng = np.random.default_rng(degree)
    times = np.cumsum(rng.uniform(0.3, 0.8, 9))
    positions = rng.normal(size=(9, 3))
    velocities = [None] * 9
    accelerations = [None] * 9
    velocities[3] = np.array([0.5, -1.0, 0.0])
    accelerations[5] = np.array([2.0, 0.0, -3.0])
    traj = spline_through_waypoints(times, positions, velocities, accelerations, degree=degree)
    at = traj.evaluate(times)
    np.testing.assert_allclose(at.q, positions, atol=1e-10)
    np.testing.assert_allclose(at.qd[3], velocities[3], atol=1e-9)
    np.testing.assert_allclose(at.qdd[5], accelerations[5], atol=1e-8)
    rest = (degree - 1) // 2  # derivatives 1..rest vanish at both ends
    for name in DERIVS[1:rest + 1]:
        np.testing.assert_allclose(getattr(at, name)[[0, -1]], 0.0, atol=1e-8)
    knots = np.unique(traj.spline.t[degree + 1:-degree - 1])
    eps = 1e-9
    left, right = traj.evaluate(knots - eps), traj.evaluate(knots + eps)
    scale = np.abs(traj.evaluate(np.linspace(times[0], times[-1], 400)).q4).max()
    assert np.abs(left.q4 - right.q4).max() < 1e-5 * scale  # continuous snap across every knot


def test_joint_trajectory_message_reordered_to_robot_joints():
    """A JointTrajectory-like message (sec/nanosec stamps, empty velocities) maps onto named joint order."""
    def point(q, sec, nanosec, qd=()):
        return SimpleNamespace(positions=q, velocities=qd, accelerations=(),
                               time_from_start=SimpleNamespace(sec=sec, nanosec=nanosec))
    message = SimpleNamespace(joint_names=["b", "a"], points=[
        point([0.0, 1.0], 0, 0), point([0.5, 1.5], 0, 500_000_000, qd=[0.2, 0.1]), point([1.0, 2.0], 1, 0)])
    traj = trajectory_from_joint_trajectory(message, joint_names=["a", "b"])
    s = traj.evaluate([0.0, 0.5, 1.0])
    np.testing.assert_allclose(s.q, [[1.0, 0.0], [1.5, 0.5], [2.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(s.qd[1], [0.1, 0.2], atol=1e-10)
    with pytest.raises(TrajectoryError, match="'c'"):
        trajectory_from_joint_trajectory(message, joint_names=["a", "c"])


def test_yaml_forms(tmp_path):
    """The two YAML forms of the CLI: poly9 profile and waypoints."""
    path = tmp_path / "poly.yaml"
    path.write_text("profile: poly9\nduration: 2.0\nq0: [0, 1]\nqf: [1, 0]\n")
    traj = load_trajectory(path)
    assert isinstance(traj, Poly9Trajectory) and traj.duration == 2.0
    way = trajectory_from_dict({"waypoints": [{"t": 0, "q": [0, 0]}, {"t": 1, "q": [1, 2], "qd": [0.1, 0.2]},
                                              {"t": 2, "q": [0, 1]}], "degree": 7})
    assert isinstance(way, SplineTrajectory)
    np.testing.assert_allclose(way.evaluate(1.0).qd[0], [0.1, 0.2], atol=1e-10)


@pytest.mark.parametrize("data, match", [
    ({"waypoints": [{"t": 0, "q": [0]}, {"t": 1, "q": [1]}], "degree": 3}, "not differentiable enough"),
    ({"waypoints": [{"t": 0, "q": [0]}, {"t": 1, "q": [float("nan")]}]}, "waypoint 1.*positions.*finite"),
    ({"waypoints": [{"t": 0, "q": [0]}, {"t": 1, "q": [1]}, {"t": 1, "q": [2]}]}, "not after waypoint 1"),
    ({"waypoints": [{"t": 0, "q": [0]}, {"t": float("inf"), "q": [1]}]}, "time inf is not finite"),
    ({"waypoints": [{"t": 0, "q": [0]}]}, "at least 2 waypoints"),
    ({"waypoints": [{"t": 0, "q": [0, 1]}, {"t": 1, "q": [1]}]}, "different numbers of joints"),
    ({"profile": "poly9", "duration": -1.0, "q0": [0], "qf": [1]}, "duration"),
    ({"profile": "poly9", "duration": 1.0, "q0": [0, 1], "qf": [1]}, "qf: 1 joints"),
    ({"profile": "poly9", "duration": 1.0, "q0": [0], "qf": [float("inf")]}, "qf: non-finite"),
    ({"profile": "cubic"}, "expected 'poly9'"),
    ({"points": []}, "'profile'.*'waypoints'"),
])
def test_bad_trajectories_raise_clear_errors(data, match):
    with pytest.raises(TrajectoryError, match=match):
        trajectory_from_dict(data, source="traj.yaml")


def test_bad_input_errors_name_the_file_and_range(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("waypoints: [{t: 0, q: [0]}, {t: 1, q: [.nan]}]\n")
    with pytest.raises(TrajectoryError, match="bad.yaml"):
        load_trajectory(path)
    with pytest.raises(TrajectoryError, match="cannot read"):
        load_trajectory(tmp_path / "missing.yaml")
    traj = Poly9Trajectory([0.0], [1.0], 1.0)
    with pytest.raises(TrajectoryError, match="leaves the trajectory's range"):
        traj.evaluate([0.5, 1.5])
    with pytest.raises(TrajectoryError, match="rate"):
        traj.sample(0.0)


def test_splines_that_are_not_c4_are_rejected():
    """A quartic spline, or a quintic with a double knot, has a discontinuous snap: rejected."""
    knots = np.r_[[0.0] * 5, 0.5, [1.0] * 5]
    with pytest.raises(TrajectoryError, match="degree 4"):
        SplineTrajectory(BSpline(knots, np.ones((6, 1)), 4))
    knots = np.r_[[0.0] * 6, 0.5, 0.5, [1.0] * 6]
    with pytest.raises(TrajectoryError, match="only C\\^3"):
        SplineTrajectory(BSpline(knots, np.ones((8, 2)), 5))


def test_sample_includes_the_end_on_the_grid():
    traj = Poly9Trajectory([0.0], [1.0], 3.0)
    s = traj.sample(1000.0)
    assert s.n_samples == 3001 and s.t[-1] == pytest.approx(3.0, abs=1e-12)
