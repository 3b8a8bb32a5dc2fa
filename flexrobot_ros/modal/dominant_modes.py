"""The dominant closed-loop modes along a sequence of poses, by their participation at a frame.

At each pose q_k: the modes of the robot held there by its PD (:func:`~flexrobot_ros.modal.modes.modal_analysis`)
and their participation at ``frame`` (the tool frame by default; :mod:`~flexrobot_ros.modal.participation`: each
mode's share of the frame's peak translational compliance, fractions summing to 1). Only oscillating modes
(0 <= zeta < 1) count; a mode is followed along the poses by its rank among them in frequency order (rank 0 the
lowest), so its frequency stays continuous where two modes cross. Selected are the modes whose participation
reaches ``min_participation`` at one pose at least, at most ``max_modes`` of them (the largest participation
anywhere first), reported in frequency order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.modes import modal_analysis
from flexrobot_ros.modal.participation import modal_participation
from flexrobot_ros.model import FlexibleRobot


@dataclass(frozen=True)
class DominantModes:
    """The selected modes along the poses: ``ranks`` (modes,) rank among the oscillating modes by frequency (0:
    lowest); ``frequencies_hz``, ``damping_ratios`` (fractions), ``participation`` (fractions) each (poses, modes);
    ``poses`` (poses, n) [rad | m]; ``frame`` the frame of the participation."""

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
        ModalError: bad poses, thresholds or gains; a pose where the closed loop is not stable; a different number of
            oscillating modes at two poses (the modes cannot be followed); no mode reaching ``min_participation``.
    """
    q = np.atleast_2d(np.asarray(poses, dtype=float))
    if q.ndim != 2 or q.shape[1] != robot.n or q.shape[0] == 0:
        raise ModalError(f"poses: shape {q.shape}; expected (poses, {robot.n}) for joints {list(robot.joint_names)}")
    if not (0.0 < min_participation <= 1.0) or int(max_modes) < 1:
        raise ModalError(f"dominant modes: min_participation {min_participation!r} (expected 0 < p <= 1) and "
                         f"max_modes {max_modes!r} (expected >= 1)")
    frequencies, damping, participation = [], [], []
    for k, pose in enumerate(q):
        result = modal_analysis(robot, pose, kp=kp, kd=kd)
        if not result.stable:
            raise ModalError(f"robot {robot.name}: the closed loop is {result.verdict} at pose {k} "
                             f"(q = {np.round(pose, 4).tolist()}); no mode to shape for")
        shares = modal_participation(robot, result, frame).participation
        oscillating = (~result.overdamped) & (result.damping_ratios < 1.0)
        frequencies.append(result.frequencies_hz[oscillating])
        damping.append(result.damping_ratios[oscillating])
        participation.append(shares[oscillating])
        if len(frequencies[-1]) != len(frequencies[0]):
            raise ModalError(f"robot {robot.name}: {len(frequencies[0])} oscillating modes at pose 0 but "
                             f"{len(frequencies[-1])} at pose {k} (q = {np.round(pose, 4).tolist()}); the modes "
                             "cannot be followed along these poses")
    frequencies, damping, participation = np.array(frequencies), np.array(damping), np.array(participation)
    peak = participation.max(axis=0)
    candidates = np.flatnonzero(peak >= min_participation)
    if candidates.size == 0:
        raise ModalError(f"robot {robot.name}: no mode reaches a participation of {min_participation:g} at frame "
                         f"{frame or robot.tool_frame!r} (largest {peak.max():.3g})")
    ranks = np.sort(candidates[np.argsort(peak[candidates])[::-1][:int(max_modes)]])
    return DominantModes(ranks=ranks, frequencies_hz=frequencies[:, ranks], damping_ratios=damping[:, ranks],
                         participation=participation[:, ranks], poses=q, frame=frame or robot.tool_frame)


__all__ = ["DominantModes", "dominant_modes"]
