"""The rest state of the plant under a motor-torque law frozen at one instant: where a run that starts at rest stays at
rest until the law's inputs change (e.g. a feedforward file's first sample).

Unknowns: the coordinates y of :class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot` (joints, motors of
the elastic joints, extra elasticities, beams). At rest (every rate zero) its equations reduce to::

    F(y) = h(y, 0) + f_el(y) - S u(y) = 0,       u(y) = law.motor_torque(t, q(y), 0, q_m(y), 0)  [N m | N]

gravity and the springs (joint springs, extra springs, beam strain) against the law's torque on the actuated rows
(S: the input map; q_m(y) the encoders, a rigid joint's its joint). Newton's method from the static equilibrium at
``q_guess`` (:meth:`ElasticRobot.static_equilibrium`: the springs and beams carrying gravity with the joints at
``q_guess``), slope ``dF/dy = K(y) + S diag(kp) dq_m/dy`` with K = d(h + f_el)/dy at rest
(:meth:`ElasticRobot.rest_force`: pinocchio's gravity derivatives, CasADi's exact ones with beams) and the law's own
slope d u / d q_m = -kp that every controller declares (its torque depends on the motor positions and rates; the
residual at the solution is evaluated with the law itself). When the law holds the static equilibrium at
``q_guess`` already (a feedforward computed on this model, a law without gravity to carry) no step is taken.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import ModelError, SimulationError

#: Newton iterations at most, and the residual accepted [of the largest force on the rows, N m | N].
ITERATIONS, RESIDUAL = 50, 1e-10


def law_equilibrium(plant: Any, law: Any, t: float, q_guess: Any) -> np.ndarray:
    """The rest state (plant layout, :meth:`ElasticRobotPlant.rest_state`) of ``plant`` under ``law`` at time ``t``
    [s] nearest the link positions ``q_guess`` (n,) [rad | m] (module docstring).

    Raises:
        SimulationError: naming the robot, when no rest state is found (e.g. a joint with kp = 0 whose torque does
            not balance gravity and the springs: nothing holds it).
    """
    model, robot = plant.model, plant.robot
    try:
        y = model.static_equilibrium(robot.check_q(q_guess, "q_guess"))
    except ModelError as error:
        raise SimulationError(f"robot {robot.name}: {error}") from None
    selection = np.zeros((robot.n, model.size))  # d q_m / d y: the motor coordinate of an elastic joint, else q
    selection[np.arange(robot.n), model.q_index] = 1.0
    selection[model.elastic_joints] = 0.0
    selection[model.elastic_joints, model.motor_index] = 1.0
    zero = np.zeros(robot.n)

    def residual(y: np.ndarray) -> tuple[np.ndarray, float]:
        q, q_m = model.joint_positions(y), model.motor_positions(y)
        applied = model.input_map @ np.asarray(law.motor_torque(t, q, zero, q_m, zero), dtype=float)
        rest = model.bias(y, np.zeros(model.size)) + model.elastic_force(y)
        return rest - applied, max(1.0, float(np.abs(applied).max()), float(np.abs(rest).max()))

    force, scale = residual(y)
    for _ in range(ITERATIONS):
        if np.abs(force).max() <= RESIDUAL * scale:
            return plant.rest_state(y)
        slope = model.rest_force(y)[1] + model.input_map @ (np.asarray(law.kp, dtype=float)[:, None] * selection)
        step = np.linalg.lstsq(slope, -force, rcond=None)[0]
        y = y + step
        force, scale = residual(y)
    worst = int(np.argmax(np.abs(force)))
    raise SimulationError(f"robot {robot.name}: no rest state of the {type(law).__name__} law at t = {t:g} s near "
                          f"q = {np.asarray(q_guess).tolist()}: {np.abs(force).max():.3g} N m left unbalanced on "
                          f"coordinate {worst} after {ITERATIONS} Newton steps (a joint with kp = 0 is held by "
                          "nothing but its feedforward torque)")


__all__ = ["law_equilibrium"]
