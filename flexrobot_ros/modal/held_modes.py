"""The closed-loop modes of any loaded robot held at a pose by its joint PD law, with the linearization its model
needs (the choice ``flexrobot modal`` makes): flexible joints (seed 000 chapter 2,
:func:`~flexrobot_ros.modal.modes.modal_analysis`), flexible links and rigid joints (seeds 003/004,
:func:`~flexrobot_ros.modal.flexible_link_linearization.flexible_link_modes`, coordinates
``[q, eta, q_m of the elastic joints]``), extra elasticities or gear dampers (seed 002), alone or with flexible
links or rigid joints: the composed model (:func:`~flexrobot_ros.modal.elastic_robot_linearization.
elastic_robot_modes`, coordinates :func:`~flexrobot_ros.modal.elastic_robot_linearization.
elastic_robot_coordinates`).

The flexible-link chain (or composed model) is built once per robot object and kept while the robot lives (a
calibration evaluates the same robots at many poses).
"""
from __future__ import annotations

import weakref
from typing import Any

from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.modal.flexible_link_linearization import flexible_link_modes
from flexrobot_ros.modal.modes import ModalResult, modal_analysis
from flexrobot_ros.model import FlexibleRobot

_CHAINS: "weakref.WeakKeyDictionary[FlexibleRobot, FlexibleLinkChain]" = weakref.WeakKeyDictionary()
_COMPOSED: "weakref.WeakKeyDictionary[FlexibleRobot, ElasticRobot]" = weakref.WeakKeyDictionary()


def has_link_layer(robot: FlexibleRobot) -> bool:
    """Whether ``robot``'s modes come from the flexible-link linearization (flexible links or rigid joints, no extra
    elasticities)."""
    return getattr(robot, "extended", None) is None and bool(robot.flexible_links or robot.rigid_joints)


def robot_chain(robot: FlexibleRobot) -> FlexibleLinkChain:
    """The flexible-link chain of ``robot`` (built on first use, then cached for the robot object)."""
    chain = _CHAINS.get(robot)
    if chain is None:
        chain = _CHAINS[robot] = chain_from_robot(robot)
    return chain


def held_modes(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None) -> ModalResult:
    """Modes of ``robot`` held at ``q_d`` (n,) [rad | m] by motor PD + gravity compensation (``kp`` [N m/rad],
    ``kd`` [N m s/rad], default the robot's gains): frequencies [Hz] ascending, damping ratios as fractions, mode
    shapes over the linearization's coordinates (module docstring)."""
    if getattr(robot, "extended", None) is not None:
        model = _COMPOSED.get(robot)
        if model is None:
            model = _COMPOSED[robot] = ElasticRobot(robot)
        return elastic_robot_modes(model, q_d, kp=kp, kd=kd)
    if has_link_layer(robot):
        return flexible_link_modes(robot, robot_chain(robot), q_d, kp=kp, kd=kd)
    return modal_analysis(robot, q_d, kp=kp, kd=kd)


__all__ = ["has_link_layer", "held_modes", "robot_chain"]
