"""The closed-loop modes of any loaded robot held at a pose by its joint PD law, with the linearization its model
needs (the choice ``flexrobot modal`` makes): flexible joints on rigid links (seed 000 chapter 2,
:func:`~flexrobot_ros.modal.modes.modal_analysis`), and every other robot (flexible links, rigid joints, extra
elasticities or gear dampers, seeds 002-004) through the composed model
(:func:`~flexrobot_ros.modal.elastic_robot_linearization.elastic_robot_modes`, coordinates
:func:`~flexrobot_ros.modal.elastic_robot_linearization.elastic_robot_coordinates`: ``[q, eta, q_m of the elastic
joints]`` without extra elasticities).

The composed model is built once per robot object and kept while the robot lives (a calibration evaluates the same
robots at many poses).
"""
from __future__ import annotations

import weakref
from typing import Any

from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.modal.modes import ModalResult, modal_analysis
from flexrobot_ros.model import FlexibleRobot

_COMPOSED: "weakref.WeakKeyDictionary[FlexibleRobot, ElasticRobot]" = weakref.WeakKeyDictionary()


def has_link_layer(robot: FlexibleRobot) -> bool:
    """Whether ``robot`` has flexible links or rigid joints and no extra elasticities (its links, not its joints'
    k, d_f, d_fm, are what a calibration identifies)."""
    return getattr(robot, "extended", None) is None and bool(robot.flexible_links or robot.rigid_joints)


def robot_model(robot: FlexibleRobot) -> ElasticRobot:
    """The composed model of ``robot`` (built on first use, then cached for the robot object)."""
    model = _COMPOSED.get(robot)
    if model is None:
        model = _COMPOSED[robot] = ElasticRobot(robot)
    return model


def held_modes(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None) -> ModalResult:
    """Modes of ``robot`` held at ``q_d`` (n,) [rad | m] by motor PD + gravity compensation (``kp`` [N m/rad],
    ``kd`` [N m s/rad], default the robot's gains): frequencies [Hz] ascending, damping ratios as fractions, mode
    shapes over the linearization's coordinates (module docstring)."""
    if getattr(robot, "extended", None) is not None or has_link_layer(robot):
        return elastic_robot_modes(robot_model(robot), q_d, kp=kp, kd=kd)
    return modal_analysis(robot, q_d, kp=kp, kd=kd)


__all__ = ["has_link_layer", "held_modes", "robot_model"]
