"""What a ``flexrobot simulate`` run tracked, for its closing line and its JSON summary.

A set-point run (the motor PD holding ``--set-point``) reports max |q_m - q_m^d| [rad] from that set point. A run
along a trajectory (``--open-loop FILE``, ``--controller decoupling --trajectory FILE``, ``--feedforward FILE``) reports
the largest link-side error max |q - q_d(t)| from the trajectory (held at its final pose after its end), in rad over
the revolute joints and in m over the prismatic ones. Robots with flexible links also report their largest tip deflection [m].
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from flexrobot_ros.dynamics.trajectory import Trajectory
    from flexrobot_ros.model import FlexibleRobot
    from flexrobot_ros.simulation.simulation import SimulationOutput


def held(trajectory: Trajectory) -> Callable[[np.ndarray], np.ndarray]:
    """The link positions [rad | m] (len(times), n) of ``trajectory`` at times [s], held at its ends."""
    return lambda times: trajectory.evaluate(np.clip(times, trajectory.start_time, trajectory.end_time)).q


def tracking(robot: FlexibleRobot, output: SimulationOutput, q_m_d: np.ndarray,
             reference: Callable[[np.ndarray], np.ndarray] | None) -> dict[str, Any]:
    """The summary fields: ``max_motor_deviation_rad`` (set point, ``reference`` None) or ``max_trajectory_error_rad``
    and, with prismatic joints, ``max_trajectory_error_m`` from ``reference``, the link positions [rad | m]
    (len(times), n) at times [s] (e.g. :func:`held`); ``max_tip_deflection_m`` and ``max_tip_deflection_link`` for
    flexible links."""
    out: dict[str, Any] = {}
    if reference is None:
        out["max_motor_deviation_rad"] = float(np.abs(output.q_m - q_m_d).max())
    else:
        error = np.abs(output.q - reference(output.t)).max(axis=0)
        for kind, unit in (("revolute", "rad"), ("prismatic", "m")):
            joints = [i for i, joint in enumerate(robot.joint_types) if joint == kind]
            if joints:
                out[f"max_trajectory_error_{unit}"] = float(error[joints].max())
    links = getattr(output.plant, "deflection_links", ())
    if links:
        magnitude = np.linalg.norm(output.plant.tip_deflections(output.states), axis=2).max(axis=0)
        worst = int(np.argmax(magnitude))
        out["max_tip_deflection_m"] = float(magnitude[worst])
        out["max_tip_deflection_link"] = links[worst][0]
    return out


def describe(fields: dict[str, Any]) -> str:
    """The fields of :func:`tracking` as text with units, e.g. ``max |q - q_d(t)| = 0.0012 rad along the
    trajectory; max tip deflection 16.1 mm (link2)``."""
    parts = []
    if "max_motor_deviation_rad" in fields:
        parts.append(f"max |q_m - q_m^d| = {fields['max_motor_deviation_rad']:.3g} rad from the set point")
    errors = [f"{fields[key]:.3g} {unit}" for key, unit in (("max_trajectory_error_rad", "rad"),
                                                            ("max_trajectory_error_m", "m")) if key in fields]
    if errors:
        parts.append(f"max |q - q_d(t)| = {', '.join(errors)} along the trajectory")
    if "max_tip_deflection_m" in fields:
        parts.append(f"max tip deflection {1e3 * fields['max_tip_deflection_m']:.3g} mm "
                     f"({fields['max_tip_deflection_link']})")
    return "; ".join(parts)
