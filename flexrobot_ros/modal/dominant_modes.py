"""The dominant closed-loop modes along a sequence of poses, by their participation at a frame.

At each pose q_k: the modes of the robot held there by its PD (:func:`~flexrobot_ros.modal.modal_analysis`,
the linearization its model needs) and their participation at ``frame`` (the tool frame by default;
:mod:`~flexrobot_ros.modal.participation`: each mode's share of the frame's peak translational compliance, fractions
summing to 1). Elastic joints on rigid links: coordinates [q; q_m]; flexible links or rigid joints:
[theta; eta; q_m] (the composed model's), the tool weighed through the beams' coordinates too
(:func:`~flexrobot_ros.modal.flexible_link_jacobian.flexible_link_frame_jacobian`), so link modes count. Robots with
extra elasticities are refused (their modes have no participation yet).

Only oscillating modes (0 <= zeta < 1) count. The modes are those oscillating at the first pose, listed by
frequency (``ranks``: 0 the lowest there); each is followed from one pose to the next by its eigenvalue, the
assignment of the previous pose's eigenvalues to the oscillating ones at the next that minimizes the sum of relative
distances |lambda - lambda'| / |lambda| (so a mode keeps its identity where frequencies cross or where another mode
turns over-damped, as heavily damped modes of flexible-link robots do between poses). A mode with no oscillating
partner at some pose is lost from there on. Selected are the modes followed at every pose whose participation
reaches ``min_participation`` at one pose at least, at most ``max_modes`` of them (the largest participation anywhere
first), reported in frequency order at the first pose.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.optimize import linear_sum_assignment

from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.modal.flexible_link_jacobian import flexible_link_frame_jacobian
from flexrobot_ros.modal.held_modes import composed_model, has_link_layer, modal_analysis
from flexrobot_ros.modal.modes import ModalResult
from flexrobot_ros.modal.participation import modal_participation
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class DominantModes:
    """The selected modes along the poses: ``ranks`` (modes,) rank among the oscillating modes at the first pose by
    frequency (0: lowest); ``frequencies_hz``, ``damping_ratios`` (fractions), ``participation`` (fractions) each
    (poses, modes); ``poses`` (poses, n) [rad | m]; ``frame`` the frame of the participation."""

    ranks: np.ndarray
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    participation: np.ndarray
    poses: np.ndarray
    frame: str


def dominant_modes(robot: FlexibleRobot, poses: Any, *, frame: str | None = None, min_participation: float = 0.05,
                   max_modes: int = 4, kp: Any = None, kd: Any = None) -> DominantModes:
    """The dominant modes of ``robot`` along ``poses`` (poses, n) (module docstring); gains ``kp``, ``kd`` default
    to the robot's.

    Raises:
        ModalError: bad poses, thresholds or gains; a robot with extra elasticities; a pose where the closed loop is
            not stable; a mode reaching ``min_participation`` that cannot be followed to every pose; no mode reaching
            ``min_participation``.
    """
    q = np.atleast_2d(np.asarray(poses, dtype=float))
    if q.ndim != 2 or q.shape[1] != robot.n or q.shape[0] == 0:
        raise ModalError(f"poses: shape {q.shape}; expected (poses, {robot.n}) for joints {list(robot.joint_names)}")
    if not (0.0 < min_participation <= 1.0) or int(max_modes) < 1:
        raise ModalError(f"dominant modes: min_participation {min_participation!r} (expected 0 < p <= 1) and "
                         f"max_modes {max_modes!r} (expected >= 1)")
    analysis = _pose_analysis(robot, frame, kp, kd)
    frequencies, damping, participation, eigenvalues = [], [], [], None
    for k, pose in enumerate(q):
        result, shares = analysis(pose)
        if not result.stable:
            raise ModalError(f"robot {robot.name}: the closed loop is {result.verdict} at pose {k} "
                             f"(q = {np.round(pose, 4).tolist()}); no mode to shape for")
        oscillating = np.flatnonzero((~result.overdamped) & (result.damping_ratios < 1.0))
        if eigenvalues is None:
            order = oscillating
        else:
            order = _follow(eigenvalues, result.eigenvalues[oscillating], oscillating)
        eigenvalues = np.where(order >= 0, result.eigenvalues[np.maximum(order, 0)], np.nan)
        found = order >= 0
        frequencies.append(np.where(found, result.frequencies_hz[np.maximum(order, 0)], np.nan))
        damping.append(np.where(found, result.damping_ratios[np.maximum(order, 0)], np.nan))
        participation.append(np.where(found, shares[np.maximum(order, 0)], np.nan))
    frequencies, damping, participation = np.array(frequencies), np.array(damping), np.array(participation)
    peak = np.nanmax(participation, axis=0, initial=0.0)
    followed = ~np.isnan(frequencies).any(axis=0)
    lost = np.flatnonzero((peak >= min_participation) & ~followed)
    if lost.size:
        j = int(lost[0])
        k = int(np.flatnonzero(np.isnan(frequencies[:, j]))[0])
        raise ModalError(f"robot {robot.name}: mode {j + 1} ({frequencies[0, j]:.4g} Hz at pose 0, participation up "
                         f"to {peak[j]:.3g}) has no oscillating partner at pose {k} (q = "
                         f"{np.round(q[k], 4).tolist()}); it cannot be followed along these poses")
    candidates = np.flatnonzero((peak >= min_participation) & followed)
    if candidates.size == 0:
        raise ModalError(f"robot {robot.name}: no mode reaches a participation of {min_participation:g} at frame "
                         f"{frame or robot.tool_frame!r} (largest {peak.max(initial=0.0):.3g})")
    ranks = np.sort(candidates[np.argsort(peak[candidates])[::-1][:int(max_modes)]])
    return DominantModes(ranks=ranks, frequencies_hz=frequencies[:, ranks], damping_ratios=damping[:, ranks],
                         participation=participation[:, ranks], poses=q, frame=frame or robot.tool_frame)


def _follow(previous: np.ndarray, current: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Per followed mode, the index (into the pose's modes) of its eigenvalue among ``current`` (those at
    ``indices``), -1 where lost (module docstring); ``previous`` (followed modes,) complex, NaN where lost before."""
    order = np.full(previous.size, -1)
    alive = np.flatnonzero(~np.isnan(previous))
    if alive.size and current.size:
        cost = np.abs(previous[alive, None] - current[None, :]) / np.abs(previous[alive, None])
        rows, cols = linear_sum_assignment(cost)
        order[alive[rows]] = indices[cols]
    return order


def _pose_analysis(robot: FlexibleRobot, frame: str | None, kp: Any,
                   kd: Any) -> Callable[[np.ndarray], tuple[ModalResult, np.ndarray]]:
    """pose (n,) -> (the modes of the robot held there, :func:`~flexrobot_ros.modal.modal_analysis`, and
    their participation at ``frame``) (module docstring)."""
    if robot.extended is not None:
        raise ModalError(f"robot {robot.name}: extra elasticities {list(robot.extended.elastic_names)}: the "
                         "participation of their modes at a frame is not available yet")
    if not has_link_layer(robot):
        def joint_modes(pose: np.ndarray) -> tuple[ModalResult, np.ndarray]:
            result = modal_analysis(robot, pose, kp=kp, kd=kd)
            return result, modal_participation(robot, result, frame).participation
        return joint_modes
    try:
        model = composed_model(robot)
    except ModelError as error:
        raise ModalError(str(error)) from None

    def link_modes(pose: np.ndarray) -> tuple[ModalResult, np.ndarray]:
        result = modal_analysis(robot, pose, kp=kp, kd=kd)
        jacobian = flexible_link_frame_jacobian(model, pose, frame)
        return result, modal_participation(robot, result, frame, jacobian=jacobian).participation
    return link_modes


__all__ = ["DominantModes", "dominant_modes"]
