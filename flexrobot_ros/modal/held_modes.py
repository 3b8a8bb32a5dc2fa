"""The one linearization and modal analysis of any loaded robot held at a pose by its joint PD law (or seed 004's
decoupling law): :func:`linearize`, :func:`linearize_batch` and :func:`modal_analysis`, exported by
:mod:`flexrobot_ros.modal`, called by ``flexrobot modal``, ``flexrobot modal-map``, the modal monitor node, the maps,
the identification and the calibrations, whatever the robot's model.

Every robot is linearized through the composed model (:func:`~flexrobot_ros.modal.elastic_robot_linearization.
linearize_elastic_robot`, coordinates :func:`modal_coordinates`: ``[q, q_e, eta, q_m of the elastic joints]``):
flexible links, rigid joints, extra elasticities, gear dampers (seeds 002-004), trees and locked joints (pinocchio's
reduced model) included. Its fast path for elastic joints alone
(:func:`~flexrobot_ros.flexible_links.elastic_robot.elastic_joints_only`: the Scompi, LWR4, KR90, planar 2R) is seed
000's analytic evaluation (:func:`~flexrobot_ros.modal.linearization.linearize_elastic_joints`, eqs. 2.3, 2.9-2.12,
coordinates [q; q_m], the only one with a constant external wrench): the same matrices as the composed model's to
1e-12 of their largest entry (test/test_held_linearization.py), the same frequencies and damping ratios to 1e-9
relative (test/test_modal_entry.py, every shipped robot at two poses).

The result is a :class:`~flexrobot_ros.modal.linearization.LinearizedModel` (one pose) or
:class:`~flexrobot_ros.modal.linearization.LinearizedBatch` (P poses), or the
:class:`~flexrobot_ros.modal.modes.ModalResult` of its modes. The composed model is built once per robot object and
discretization and kept while the robot lives (a calibration evaluates the same robots at many poses); elastic
joints alone need none.

Former names, kept one release with a DeprecationWarning: ``held_linearization`` (now :func:`linearize`),
``held_linearization_batch`` (:func:`linearize_batch`), ``held_modes`` (:func:`modal_analysis`),
``held_coordinates`` (:func:`modal_coordinates`).
"""
from __future__ import annotations

import functools
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot, elastic_joints_only
from flexrobot_ros.modal.elastic_robot_linearization import (elastic_robot_coordinates, linearize_decoupled,
                                                             linearize_elastic_robot)
from flexrobot_ros.modal.linearization import (LinearizedBatch, LinearizedModel, gain_array, joint_vector,
                                               linearize_elastic_joints, linearize_elastic_joints_batch, pose_array)
from flexrobot_ros.modal.modes import ModalResult, modes_of
from flexrobot_ros.model import FlexibleRobot

_COMPOSED: "weakref.WeakKeyDictionary[FlexibleRobot, dict[tuple, ElasticRobot]]" = weakref.WeakKeyDictionary()


def has_link_layer(robot: FlexibleRobot) -> bool:
    """Whether ``robot`` has flexible links or rigid joints and no extra elasticities (its links, not its joints'
    k, d_f, d_fm, are what a calibration identifies)."""
    return getattr(robot, "extended", None) is None and bool(robot.flexible_links or robot.rigid_joints)


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


def linearize(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
              frame: str | None = None, locked_joints: bool = False, method: str | None = None,
              modes: int | None = None, elements: int | None = None,
              decoupling: tuple[Any, Any] | None = None) -> LinearizedModel:
    """M_bar, D_bar, K_bar of ``robot`` held at ``q_d`` (n,) [rad | m] by motor PD + gravity compensation (``kp``
    [N m/rad], ``kd`` [N m s/rad], default the robot's gains), about the static equilibrium (module docstring).

    ``wrench``/``frame``: a constant world-axes wrench [N, N m] at a frame's origin (elastic joints alone);
    ``locked_joints``: the modes of the non-actuated coordinates with joints and motors braked (extra elasticities,
    flexible links); ``method``/``modes``/``elements``: every flexible link's discretization; ``decoupling`` (G_p,
    G_v): seed 004's decoupling law instead of the PD (rigid joints, no extra elasticities). A ModalError names what
    does not apply to the robot."""
    if elastic_joints_only(robot) and not locked_joints and decoupling is None:  # the fast path (module docstring)
        return linearize_elastic_joints(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame)
    _no_wrench(robot, wrench)
    model = composed_model(robot, method, modes, elements)
    if decoupling is not None:
        return linearize_decoupled(model, q_d, *decoupling)
    kp = None if kp is None else joint_vector(robot, kp, "kp")
    kd = None if kd is None else joint_vector(robot, kd, "kd")
    return linearize_elastic_robot(model, q_d, kp=kp, kd=kd, locked_joints=locked_joints)


def linearize_batch(robot: FlexibleRobot, poses: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                    frame: str | None = None) -> LinearizedBatch:
    """:func:`linearize` at P poses (P, n); ``kp``/``kd`` scalar, (n,) or per pose (P, n). Elastic joints alone:
    seed 000's vectorized assembly (:func:`~flexrobot_ros.modal.linearization.linearize_elastic_joints_batch`);
    other robots pose by pose, stacked."""
    if elastic_joints_only(robot):
        return linearize_elastic_joints_batch(robot, poses, kp=kp, kd=kd, wrench=wrench, frame=frame)
    q = pose_array(robot, poses)
    count = q.shape[0]
    kp = gain_array(robot, robot.kp if kp is None else kp, count, "kp")
    kd = gain_array(robot, robot.kd if kd is None else kd, count, "kd")
    each = [linearize(robot, q[i], kp=kp[i], kd=kd[i], wrench=wrench, frame=frame) for i in range(count)]
    return LinearizedBatch(**{name: np.stack([getattr(model, name) for model in each])
                              for name in ("q", "q_m", "M_bar", "D_bar", "K_bar", "K_G")},
                           kp=np.array(kp), kd=np.array(kd))


def modal_analysis(robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
                   frame: str | None = None, locked_joints: bool = False, method: str | None = None,
                   modes: int | None = None, elements: int | None = None,
                   decoupling: tuple[Any, Any] | None = None) -> ModalResult:
    """Frequencies [Hz] ascending, damping ratios (fractions), complex mode shapes over :func:`modal_coordinates`
    and the stability verdict of ``robot`` held at ``q_d`` (n,) [rad | m]: the modes (seed 000 eqs. 2.13-2.18,
    :func:`~flexrobot_ros.modal.modes.modes_of`) of :func:`linearize` (same arguments), for any robot.

    Raises :class:`ModalError` on bad input (wrong length, non-finite, unknown frame, singular mass matrix) and names
    an option the robot does not take; destabilizing gains give ``verdict == 'unstable'``."""
    return modes_of(linearize(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=frame, locked_joints=locked_joints,
                              method=method, modes=modes, elements=elements, decoupling=decoupling))


def modal_coordinates(robot: FlexibleRobot, locked_joints: bool = False, model: ElasticRobot | None = None
                      ) -> list[str]:
    """Labels of :func:`linearize`'s coordinates (the rows of a mode shape): ``q.<joint>``, ``q_e.<name>``,
    ``eta.<k>``, ``q_m.<elastic joint>`` (elastic joints alone: the q then the q_m of every joint; ``model``: a
    composed model built with other discretizations)."""
    names = robot.joint_names
    if elastic_joints_only(robot) and not locked_joints:
        return [f"{side}.{joint}" for side in ("q", "q_m") for joint in names]
    model = model or composed_model(robot)
    labels = np.array(elastic_robot_coordinates(model))
    if locked_joints:
        labels = labels[np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)]
    return labels.tolist()


def _deprecated_alias(old: str, entry: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(entry)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"{__name__}.{old} is deprecated and goes in the next release: use "
                      f"flexrobot_ros.modal.{entry.__name__}", DeprecationWarning, stacklevel=2)
        return entry(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated name of :func:`{entry.__name__}` (module docstring), kept one release."
    return alias


held_linearization = _deprecated_alias("held_linearization", linearize)
held_linearization_batch = _deprecated_alias("held_linearization_batch", linearize_batch)
held_modes = _deprecated_alias("held_modes", modal_analysis)
held_coordinates = _deprecated_alias("held_coordinates", modal_coordinates)

__all__ = ["composed_model", "has_link_layer", "linearize", "linearize_batch", "modal_analysis", "modal_coordinates"]
