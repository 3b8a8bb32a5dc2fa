"""EJNEA (flexrobot_ros.dynamics.ejnea): tau, dtau/dt, d²tau/dt² of serial chains, checked against pinocchio
(trees: test_kinematic_trees).

Independent references: ``pin.rnea`` (tau), pinocchio's analytic ``computeRNEADerivatives`` (dtau =
dtau/dq qd + dtau/dv qdd + M q'''), and 8th-order central finite differences of ``pin.rnea`` along smooth
trajectories (dtau, ddtau). Models: pinocchio's sample manipulator, random chains mixing revolute and prismatic,
aligned and unaligned joints with random placements, inertias and gravity, and every shipped robot (Scompi with
its prismatic joint 1, also with the tool; LWR4; ...).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.dynamics.ejnea import Ejnea, ejnea
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory, spline_through_waypoints
from flexrobot_ros.errors import ModelError, TrajectoryError
from flexrobot_ros.model import load_robot, shipped_robots

FIRST = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])
SECOND = np.array([-1 / 560, 8 / 315, -1 / 5, 8 / 5, -205 / 72, 8 / 5, -1 / 5, 8 / 315, -1 / 560])


def random_chain(n: int, seed: int) -> pin.Model:
    """A serial chain of n random 1-DoF joints (revolute/prismatic, aligned/unaligned) with random bodies."""
    rng = np.random.default_rng(seed)
    model = pin.Model()
    model.name = f"random{n}_{seed}"
    parent = 0
    for i in range(n):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint = [pin.JointModelRX(), pin.JointModelRY(), pin.JointModelRZ(), pin.JointModelRevoluteUnaligned(axis),
                 pin.JointModelPX(), pin.JointModelPY(), pin.JointModelPZ(),
                 pin.JointModelPrismaticUnaligned(axis)][i % 8 if seed % 2 else rng.integers(8)]
        rotation = pin.Quaternion(*rng.normal(size=4)).normalized().matrix()
        placement = pin.SE3(rotation, rng.uniform(-0.4, 0.4, 3))
        parent = model.addJoint(parent, joint, placement, f"joint{i + 1}")
        a = rng.normal(size=(3, 3))
        inertia = pin.Inertia(rng.uniform(0.5, 5.0), rng.uniform(-0.2, 0.2, 3), a @ a.T * 0.05 + 0.01 * np.eye(3))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    model.gravity.linear = rng.normal(size=3) * 5.0
    return model


def models():
    sample = pin.buildSampleModelManipulator()
    sample.name = "sample_manipulator"
    tool = load_robot("scompi", tool=True).model
    tool.name = "scompi_with_tool"
    shipped = []
    for name in shipped_robots():  # every shipped robot, whatever is added later
        model = load_robot(name).model
        model.name = name
        shipped.append(model)
    return [sample, random_chain(3, 1), random_chain(8, 3), random_chain(7, 4), tool, *shipped]


MODELS = models()
IDS = [m.name for m in MODELS]


def trajectory_for(model: pin.Model, seed: int = 0):
    """A multi-point degree-9 spline trajectory inside +-1 (rad or m) of zero, with non-trivial snap."""
    rng = np.random.default_rng(seed)
    n = model.nq
    times = np.array([0.0, 0.6, 1.1, 1.9, 2.5])
    return spline_through_waypoints(times, rng.uniform(-1.0, 1.0, size=(5, n)), degree=9)


def rnea_along(model, data, traj, t):
    s = traj.evaluate(t)
    return np.array([pin.rnea(model, data, s.q[k], s.qd[k], s.qdd[k]) for k in range(len(t))])


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_tau_equals_pinocchio_rnea(model):
    """tau equals pin.rnea to 1e-10 relative (per sample, relative to the largest torque of that sample)."""
    rng = np.random.default_rng(7)
    n = model.nq
    q, qd, qdd, q3, q4 = (rng.uniform(-2, 2, size=(50, n)) for _ in range(5))
    out = Ejnea(model)(q, qd, qdd, q3, q4)
    data = model.createData()
    ref = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(50)])
    scale = np.maximum(np.abs(ref).max(axis=1, keepdims=True), 1e-300)
    assert np.all(np.abs(out.tau - ref) <= 1e-10 * scale)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_dtau_equals_pinocchio_analytic_derivatives(model):
    """dtau = dtau/dq qd + dtau/dv qdd + M(q) q''' with pinocchio's computeRNEADerivatives, to 1e-10 relative."""
    rng = np.random.default_rng(8)
    n = model.nq
    q, qd, qdd, q3, q4 = (rng.uniform(-2, 2, size=(20, n)) for _ in range(5))
    out = Ejnea(model)(q, qd, qdd, q3, q4)
    data = model.createData()
    for k in range(20):
        pin.computeRNEADerivatives(model, data, q[k], qd[k], qdd[k])
        mass = np.triu(data.M) + np.triu(data.M, 1).T
        ref = data.dtau_dq @ qd[k] + data.dtau_dv @ qdd[k] + mass @ q3[k]
        assert np.abs(out.dtau[k] - ref).max() <= 1e-10 * np.abs(ref).max()


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_dtau_ddtau_equal_finite_differences_of_rnea(model):
    """dtau, ddtau equal 8th-order central differences (h = 2 ms) of pin.rnea along a trajectory.

    Tolerance: 1e-9 (dtau) and 1e-8 (ddtau) relative to the largest |value| along the trajectory; measured when
    written: at most 3.4e-12 and 1.6e-11 over all models (the difference formulas' truncation and round-off).
    """
    traj = trajectory_for(model)
    data = model.createData()
    t = np.linspace(0.1, 2.4, 24)
    h = 2e-3
    taus = [rnea_along(model, data, traj, t + (k - 4) * h) for k in range(9)]
    d1 = sum(c * x for c, x in zip(FIRST, taus)) / h
    d2 = sum(c * x for c, x in zip(SECOND, taus)) / h ** 2
    s = traj.evaluate(t)
    out = ejnea(model, s.q, s.qd, s.qdd, s.q3, s.q4)
    assert np.abs(out.dtau - d1).max() <= 1e-9 * np.abs(d1).max()
    assert np.abs(out.ddtau - d2).max() <= 1e-8 * np.abs(d2).max()


def test_poly9_lwr4_thesis_trajectory_against_finite_differences():
    """The thesis' LWR4 motion (section 4.5.3, T = 3 s): ddtau equals finite differences of the exact dtau."""
    pi = np.pi
    model = load_robot("lwr4").model
    traj = Poly9Trajectory([-pi / 4, -pi / 4, pi / 4, pi / 4, -pi / 4, -2 * pi / 3, pi / 4],
                           [5 * pi / 6, 2 * pi / 3, -5 * pi / 6, -2 * pi / 3, 3 * pi / 4, pi / 2, -3 * pi / 4], 3.0)
    ej = Ejnea(model)
    t = np.linspace(0.05, 2.95, 30)
    h = 1e-3

    def dtau(x):
        s = traj.evaluate(x)
        return ej(s.q, s.qd, s.qdd, s.q3, s.q4).dtau

    numeric = sum(c * dtau(t + (k - 4) * h) for k, c in enumerate(FIRST)) / h
    s = traj.evaluate(t)
    exact = ej(s.q, s.qd, s.qdd, s.q3, s.q4).ddtau
    assert np.abs(exact - numeric).max() <= 1e-8 * np.abs(exact).max()


def test_single_sample_equals_batch_row():
    model = MODELS[2]
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 4, model.nq))
    batch = ejnea(model, *x)
    one = ejnea(model, *x[:, 2])
    for name in ("tau", "dtau", "ddtau"):
        np.testing.assert_allclose(getattr(one, name), getattr(batch, name)[2], rtol=1e-13, atol=0)


def test_joints_other_than_one_dof_are_rejected():
    """A spherical joint or a free flyer is not a 1-DoF revolute/prismatic joint (trees of those are accepted:
    test_kinematic_trees)."""
    ball = pin.Model()
    ball.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    with pytest.raises(ModelError, match="'ball' is a JointModelSpherical"):
        Ejnea(ball)
    free = pin.buildSampleModelHumanoid()
    with pytest.raises(ModelError, match="JointModelFreeFlyer"):
        Ejnea(free)


def test_wrong_shapes_are_rejected():
    model = MODELS[0]
    with pytest.raises(TrajectoryError, match="qdd: shape"):
        ejnea(model, np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((3, 5)), np.zeros((3, 6)), np.zeros((3, 6)))
