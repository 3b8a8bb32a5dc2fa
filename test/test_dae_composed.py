"""The DAE inverse dynamics' functions (:mod:`flexrobot_ros.dynamics.dae.symbolic`), composed from the robot's
:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot` (issue 24), equal the formulas of seed 002 eq. 1 as
the package wrote them before the composition: written out below, independently of the code under test, on
pinocchio's ``rnea`` and frame kinematics of the extended model plus the spring, damper and friction terms

    link:  rnea(q_a, v_a, a_a) + S_g^T (W K (W q_g - q_m) + W D_g (W v_g - v_m) + D v_g + f_c tanh(v_g / v_c))
           + S_e^T (K_e q_e + D_e v_e)                                                          (eq. 1a-c, 17a-b)
    motor: B a_m + D_m v_m + f_cm tanh(v_m / v_c) - K (W q_g - q_m) - D_g (W v_g - v_m)          (eq. 1d)
    output: the tool frame's origin (base frame) along ``tool_axes``, or q_g                     (eq. 2)

at 20 random states of moberg5, moberg5_nmp (one extra elasticity each), kr90_3dof (six extra elasticities, gravity,
motor Coulomb friction; link Coulomb friction and gear dampers added here so that every term is non-zero) and SCOMPI
(a gear ratio W = 17.5 on joint 1, link-space output), to 1e-10 relative. The link rows also equal the rows of the
composed model's own CasADi residual (its Lagrangian, :class:`ElasticRobotFunctions`), from which the chain term of
the DAE's rows differs only in how it is evaluated (symbolic RNEA).
"""
from __future__ import annotations

import dataclasses

import casadi as cs
import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.dynamics.dae.symbolic import symbolic_model
from flexrobot_ros.errors import ModelError
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.extended_model import extended_model, rigid_extended

RTOL = 1e-10


def kr90_all_terms():
    """kr90_3dof with link Coulomb friction and gear dampers, so that no term of eq. 1 is zero."""
    robot = load_robot("kr90_3dof")
    robot = dataclasses.replace(robot, link_coulomb=np.array([3.0, 2.0, 1.0]))
    return dataclasses.replace(robot, extended=dataclasses.replace(robot.extended,
                                                                   spring_damping=np.array([40.0, 30.0, 20.0])))


CASES = {
    "moberg5": lambda: (load_robot("moberg5"), "tool"),
    "moberg5_nmp": lambda: (load_robot("moberg5_nmp"), "tool"),
    "kr90_3dof": lambda: (kr90_all_terms(), "tool"),
    "scompi": lambda: (load_robot("scompi"), "joints"),
}


def old_formulas(robot, ext, output, axes, q, v, a, q_m, v_m, a_m):
    """Seed 002 eq. 1 and 2 written out (module docstring): (link residual (na,), tau_m (n,), Gamma (n,))."""
    model, data = ext.model, ext.model.createData()
    act, el = list(ext.actuated_index), list(ext.elastic_index)
    w, k, width = robot.transmission, robot.stiffness, robot.coulomb_width
    spring = k * (w * q[act] - q_m)
    damper = ext.spring_damping * (w * v[act] - v_m)
    link = np.array(pin.rnea(model, data, q, v, a))
    link[act] += (w * spring + w * damper + robot.link_damping * v[act]
                  + robot.link_coulomb * np.tanh(v[act] / width))
    link[el] += ext.elastic_stiffness * q[el] + ext.elastic_damping * v[el]
    motor = (robot.motor_inertia * a_m + robot.motor_damping * v_m + robot.motor_coulomb * np.tanh(v_m / width)
             - spring - damper)
    if output == "joints":
        return link, motor, q[act]
    pin.framesForwardKinematics(model, data, q)
    point = data.oMf[model.getFrameId(robot.tool_frame)].translation
    return link, motor, np.array([point["xyz".index(axis)] for axis in axes])


def random_state(rng, robot, ext):
    """(q_a, v_a, a_a, q_m, v_m, a_m): joints over their range, elastic coordinates and spring deflections small."""
    q = rng.uniform(-0.2, 0.2, ext.na)
    q[list(ext.actuated_index)] = rng.uniform(-np.pi, np.pi, robot.n)
    q_m = robot.transmission * q[list(ext.actuated_index)] + rng.uniform(-0.05, 0.05, robot.n)
    return (q, rng.uniform(-2.0, 2.0, ext.na), rng.uniform(-20.0, 20.0, ext.na), q_m,
            rng.uniform(-2.0, 2.0, robot.n), rng.uniform(-20.0, 20.0, robot.n))


def close(value, expected) -> None:
    np.testing.assert_allclose(value, expected, rtol=RTOL, atol=RTOL * np.abs(expected).max())


@pytest.mark.parametrize("name", list(CASES))
def test_composed_functions_equal_seed_002_eq_1(name: str) -> None:
    robot, output = CASES[name]()
    model = symbolic_model(robot, output)
    ext = extended_model(robot)
    rng = np.random.default_rng(24)
    for _ in range(20):
        q, v, a, q_m, v_m, a_m = random_state(rng, robot, ext)
        link, motor, gamma = old_formulas(robot, ext, output, model.tool_axes, q, v, a, q_m, v_m, a_m)
        close(np.array(model.link_residual(q, v, a, q_m, v_m)).ravel(), link)
        close(np.array(model.motor_torque(q, v, q_m, v_m, a_m)).ravel(), motor)
        close(np.array(model.output(q)).ravel(), gamma)


@pytest.mark.parametrize("name", ["moberg5", "kr90_3dof"])
def test_link_rows_are_the_composed_residual(name: str) -> None:
    """link_residual = the first na rows of ElasticRobotFunctions.residual at y = [q_a; q_m] (u = 0, f = 0,
    Coulomb on); motor_torque = its motor rows at u = 0."""
    robot, output = CASES[name]()
    model = symbolic_model(robot, output)
    functions, na, size = model.composed.functions, model.na, model.composed.size
    residual = cs.Function("r", [functions.y, functions.y_dot, functions.a, functions.u, functions.f, functions.c],
                           [functions.residual])
    rng = np.random.default_rng(5)
    for _ in range(20):
        q, v, a, q_m, v_m, a_m = random_state(rng, robot, model.ext)
        rows = np.array(residual(np.r_[q, q_m], np.r_[v, v_m], np.r_[a, a_m], np.zeros(robot.n), np.zeros(size),
                                 1.0)).ravel()
        close(np.array(model.link_residual(q, v, a, q_m, v_m)).ravel(), rows[:na])
        close(np.array(model.motor_torque(q, v, q_m, v_m, a_m)).ravel(), rows[na:])


def test_extended_model_override() -> None:
    """``ext`` (the DAE's override: no extra elasticity, other gear dampers) reaches the composed model."""
    robot = load_robot("moberg5")
    ext = rigid_extended(robot, [70.0, 90.0])
    model = symbolic_model(robot, "joints", ext=ext)
    assert model.na == 2 and model.composed.na == 2
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, v, a, q_m, v_m, a_m = random_state(rng, robot, ext)
        link, motor, gamma = old_formulas(robot, ext, "joints", (), q, v, a, q_m, v_m, a_m)
        close(np.array(model.link_residual(q, v, a, q_m, v_m)).ravel(), link)
        close(np.array(model.motor_torque(q, v, q_m, v_m, a_m)).ravel(), motor)
        close(np.array(model.output(q)).ravel(), gamma)


@pytest.mark.parametrize("name, words", [("canadarm", "flexible links"), ("mixed4", "flexible links")])
def test_robots_beyond_seed_002_are_refused(name: str, words: str) -> None:
    with pytest.raises(ModelError, match=f"robot {name}: .*{words}.*tool_space_feedforward"):
        symbolic_model(load_robot(name))
