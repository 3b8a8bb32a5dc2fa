"""The one linearization of any loaded robot held at a pose by its joint PD law, and its modes: the entry
``flexrobot modal``, the modal monitor node, the modal maps and the calibrations call, whatever the robot's model:

* elastic joints on rigid links, with extra elasticities or gear dampers (seed 002), alone or with flexible links or
  rigid joints, and Coulomb friction with flexible links or rigid joints: the composed model
  (:func:`~flexrobot_ros.modal.elastic_robot_linearization.linearize_elastic_robot`, coordinates
  :func:`~flexrobot_ros.modal.elastic_robot_linearization.elastic_robot_coordinates`), whose fast path for elastic
  joints alone (:func:`~flexrobot_ros.flexible_links.elastic_robot.elastic_joints_only`: the Scompi, LWR4, KR90,
  planar 2R) is seed 000's analytic evaluation (:func:`~flexrobot_ros.modal.linearization.linearize`, eqs. 2.3,
  2.9-2.12, coordinates [q; q_m], the only one with a constant external wrench);
* flexible links and rigid joints otherwise (seeds 003/004): the link layer
  (:func:`~flexrobot_ros.modal.flexible_link_linearization.linearize_flexible_links`, coordinates
  ``[q, eta, q_m of the elastic joints]``, or seed 004's decoupling law with ``decoupling``).

The result is a :class:`~flexrobot_ros.modal.linearization.LinearizedModel` (one pose) or
:class:`~flexrobot_ros.modal.linearization.LinearizedBatch` (P poses). The flexible-link chain and the composed model
are built once per robot object and kept while the robot lives (a calibration evaluates the same robots at many
poses); elastic joints alone need neither.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot, elastic_joints_only
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_coordinates, linearize_elastic_robot
from flexrobot_ros.modal.flexible_link_linearization import linearize_decoupled, linearize_flexible_links
from flexrobot_ros.modal.linearization import (LinearizedBatch, LinearizedModel, gain_array, linearize,
                                               linearize_batch, pose_array)
from flexrobot_ros.modal.modes import ModalResult, modes_of
from flexrobot_ros.model import FlexibleRobot

_CHAINS: "weakref.WeakKeyDictionary[FlexibleRobot, FlexibleLinkChain]" = weakref.WeakKeyDictionary()
_COMPOSED: "weakref.WeakKeyDictionary[FlexibleRobot, dict[tuple, ElasticRobot]]" = weakref.WeakKeyDictionary()


def has_link_layer(robot: FlexibleRobot) -> bool:
    """Whether ``robot``'s modes come from the flexible-link linearization (flexible links or rigid joints, without
    extra elasticities, gear dampers or Coulomb friction)."""
    coulomb = bool(np.any(robot.link_coulomb) or np.any(robot.motor_coulomb))
    return getattr(robot, "extended", None) is None and bool(robot.flexible_links or robot.rigid_joints) \
        and not coulomb


def robot_chain(robot: FlexibleRobot) -> FlexibleLinkChain:
    """The flexible-link chain of ``robot`` (built on first use, then cached for the robot object)."""
    chain = _CHAINS.get(robot)
    if chain is None:
        chain = _CHAINS[robot] = chain_from_robot(robot)
    return chain


def composed_model(robot: FlexibleRobot, method: str | None = None, modes: int | None = None,
                   elements: int | None = None) -> ElasticRobot:
    """The composed model of ``robot`` with every flexible link's discretization overridden by ``method``,
    ``modes``, ``elements`` (None: the YAML's), built on first use, then cached for the robot object."""
    models = _COMPOSED.get(robot)
    if models is None:
        models = _COMPOSED[robot] = {}
    key = (method, modes, elements)
    if key not in models:
        models[key] = ElasticRobot(robot, method=method, modes=modes, elements=elements)
    return models[key]


def _no_wrench(robot: FlexibleRobot, wrench: Any) -> None:
    if wrench is not None and np.any(np.asarray(wrench, dtype=float)):
        raise ModalError(f"robot {robot.name}: wrench: the stiffness of a constant external wrench (seed 000 eq. "
                         "2.12) is evaluated for elastic joints on rigid links only; this robot has extra "
                         "elasticities, gear dampers, flexible links or rigid joints")


def held_linearization(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                       frame: str | None = None, locked_joints: bool = False, method: str | None = None,
                       modes: int | None = None, elements: int | None = None,
                       decoupling: tuple[Any, Any] | None = None) -> LinearizedModel:
    """M_bar, D_bar, K_bar of ``robot`` held at ``q_d`` (n,) [rad | m] by motor PD + gravity compensation (``kp``
    [N m/rad], ``kd`` [N m s/rad], default the robot's gains), about the static equilibrium (module docstring).

    ``wrench``/``frame``: a constant world-axes wrench [N, N m] at a frame's origin (elastic joints alone);
    ``locked_joints``: the modes of the non-actuated coordinates with joints and motors braked (extra elasticities,
    flexible links); ``method``/``modes``/``elements``: every flexible link's discretization; ``decoupling`` (G_p,
    G_v): seed 004's decoupling law instead of the PD (rigid joints, link layer). A ModalError names what does not
    apply to the robot."""
    if has_link_layer(robot):
        _no_wrench(robot, wrench)
        chain = robot_chain(robot) if method is None and modes is None and elements is None else \
            chain_from_robot(robot, method=method, modes=modes, elements=elements)
        if decoupling is not None:
            return linearize_decoupled(robot, chain, q_d, *decoupling)
        return linearize_flexible_links(robot, chain, q_d, kp=kp, kd=kd, locked_joints=locked_joints)
    if decoupling is not None:
        raise ModalError(f"robot {robot.name}: decoupling control (seed 004) needs flexible links and rigid joints "
                         "without extra elasticities")
    if elastic_joints_only(robot) and not locked_joints:  # the composed model's fast path (module docstring)
        return linearize(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame)
    _no_wrench(robot, wrench)
    return linearize_elastic_robot(composed_model(robot, method, modes, elements), q_d, kp=kp, kd=kd,
                                   locked_joints=locked_joints)


def held_linearization_batch(robot: FlexibleRobot, poses: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                             frame: str | None = None) -> LinearizedBatch:
    """:func:`held_linearization` at P poses (P, n); ``kp``/``kd`` scalar, (n,) or per pose (P, n). Elastic joints
    alone: seed 000's vectorized assembly (:func:`~flexrobot_ros.modal.linearization.linearize_batch`); other
    robots pose by pose, stacked."""
    if elastic_joints_only(robot):
        return linearize_batch(robot, poses, kp=kp, kd=kd, wrench=wrench, frame=frame)
    q = pose_array(robot, poses)
    count = q.shape[0]
    kp = gain_array(robot, robot.kp if kp is None else kp, count, "kp")
    kd = gain_array(robot, robot.kd if kd is None else kd, count, "kd")
    each = [held_linearization(robot, q[i], kp=kp[i], kd=kd[i], wrench=wrench, frame=frame) for i in range(count)]
    return LinearizedBatch(**{name: np.stack([getattr(model, name) for model in each])
                              for name in ("q", "q_m", "M_bar", "D_bar", "K_bar", "K_G")},
                           kp=np.array(kp), kd=np.array(kd))


def held_modes(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, **options: Any) -> ModalResult:
    """Modes of :func:`held_linearization` (same arguments): frequencies [Hz] ascending, damping ratios as
    fractions, mode shapes over :func:`held_coordinates`."""
    return modes_of(held_linearization(robot, q_d, kp=kp, kd=kd, **options))


def held_coordinates(robot: FlexibleRobot, locked_joints: bool = False, model: ElasticRobot | None = None
                     ) -> list[str]:
    """Labels of :func:`held_linearization`'s coordinates (the rows of a mode shape): ``q.<joint>``, ``q_e.<name>``,
    ``eta.<k>``, ``q_m.<elastic joint>`` (elastic joints alone: the q then the q_m of every joint; ``model``: a
    composed model built with other discretizations)."""
    names = robot.joint_names
    if has_link_layer(robot):
        chain = robot_chain(robot)
        links = [f"eta.{k}" for k in range(chain.m)]
        if locked_joints:
            return links
        return [f"q.{j}" for j in names] + links + [f"q_m.{j}" for j in names if j not in robot.rigid_joints]
    if elastic_joints_only(robot) and not locked_joints:
        return [f"{side}.{joint}" for side in ("q", "q_m") for joint in names]
    model = model or composed_model(robot)
    labels = np.array(elastic_robot_coordinates(model))
    if locked_joints:
        labels = labels[np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)]
    return labels.tolist()


__all__ = ["composed_model", "has_link_layer", "held_coordinates", "held_linearization", "held_linearization_batch",
           "held_modes", "robot_chain"]
