"""Pose-scheduled input shaping: a joint reference convolved with shapers tuned to the modes where the robot is.

Steps (:func:`shape_reference`):

1. Schedule times s_k every ``schedule_step_s`` over the reference [t_0, t_f] and the time shaping adds after it
   (default: 50 ms, or a sixteenth of the reference's duration when that is longer: the pose, and with it the
   modes, changes on the time scale of the motion; on the Canadarm's 8 s move of ``test/test_shaping_canadarm.py``
   the shaped reference with 0.5 s steps is within 4e-8 rad of the one with 0.1 s steps, at a fifth of the modal
   analyses). Between them the shaper's amplitudes and delays are quintic splines
   (:class:`~flexrobot_ros.dynamics.shaped_trajectory.ShapedTrajectory`), so the modal analyses (one per s_k and
   pass, most of the cost) can be sparse: on the Scompi move of ``bench/input_shaping.py`` (ZVD), 50 ms instead of
   20 ms moves the motor references q_m of the flexible feedforward by at most 4e-7 rad and the motor torques by
   at most 4e-5 of their largest change during the move, with 2.4x fewer modal analyses (32 against 76; 20 ms
   against 10 ms: 2e-9 rad, 7e-7; ``test/test_shaping_schedule.py`` checks 50 ms against 10 ms).
2. The dominant closed-loop modes (:func:`~flexrobot_ros.modal.dominant_modes.dominant_modes`: frequency, damping
   ratio, participation at the tool) at the pose the robot is at s_k: first the reference's own pose x(s_k), then,
   once, the pose of the reference shaped with those modes, y(s_k) (the shaped motion lags the reference by about
   half the shaper's length).
3. Per mode the shaper kind (``zv``, ``zvd``, ``ei``, or ``auto``: the shortest whose residual vibration stays at
   or below the tolerance over f (1 +- frequency_error) at every s_k;
   :func:`~flexrobot_ros.dynamics.input_shaping.choose_kinds`), the multi-mode shaper at each s_k (convolution of
   the single-mode ones) and the shaped reference y(t) = sum_i a_i(t) x(t - tau_i(t))
   (:class:`~flexrobot_ros.dynamics.shaped_trajectory.ShapedTrajectory`).

The inverse dynamics of the shaped reference (:func:`flexrobot_ros.dynamics.feedforward`) then gives the motor
references and torques as for any trajectory. Joint-space shaping only: the tool path between the reference's
poses changes (each joint is shaped alike, so a rest-to-rest joint move keeps its straight joint-space path).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.dynamics.input_shaping import (DEFAULT_FREQUENCY_ERROR, DEFAULT_TOLERANCE, SHAPERS, choose_kinds,
                                                  design_shaper)
from flexrobot_ros.dynamics.shaped_trajectory import ShapedTrajectory
from flexrobot_ros.dynamics.trajectory import Trajectory
from flexrobot_ros.errors import ModalError, ShapingError
from flexrobot_ros.modal.dominant_modes import DominantModes, dominant_modes
from flexrobot_ros.model import FlexibleRobot

#: Largest number of schedule times (modal analyses per pass); longer references get a coarser step.
MAX_SCHEDULE_TIMES = 200
#: Default schedule step [s], and the number of steps over the reference's duration when that gives a longer one.
SCHEDULE_STEP_S = 0.05
SCHEDULE_STEPS_PER_MOVE = 16


@dataclass(frozen=True)
class ScheduledShaping:
    """A shaped reference and how it was made: ``trajectory`` (the reference itself for 'none'), ``shaper`` the
    requested kind, ``kinds`` the single-mode shaper of each mode, ``modes`` the dominant modes at the schedule
    times ``schedule_times`` [s] (None for 'none'), ``added_time_s`` [s] the move time shaping adds,
    ``frequency_error`` and ``tolerance`` (fractions) of the design."""

    trajectory: Trajectory
    shaper: str
    kinds: tuple[str, ...]
    modes: DominantModes | None
    schedule_times: np.ndarray
    added_time_s: float
    frequency_error: float
    tolerance: float

    def summary(self) -> dict[str, Any]:
        """JSON-ready: shaper, kinds, added time [s], and per mode its rank and frequency [Hz], damping ratio and
        participation at the end of the motion."""
        out: dict[str, Any] = {"shaper": self.shaper, "kinds": list(self.kinds), "added_time_s": self.added_time_s,
                               "frequency_error": self.frequency_error, "tolerance": self.tolerance, "modes": []}
        if self.modes is not None:
            out["modes"] = [{"rank": int(r) + 1, "frequency_hz": float(f), "damping_ratio": float(z),
                             "participation": float(p), "kind": k}
                            for r, f, z, p, k in zip(self.modes.ranks, self.modes.frequencies_hz[-1],
                                                     self.modes.damping_ratios[-1], self.modes.participation[-1],
                                                     self.kinds)]
        return out


def shape_reference(robot: FlexibleRobot, reference: Trajectory, shaper: str = "zvd", *,
                    frequency_error: float = DEFAULT_FREQUENCY_ERROR, tolerance: float = DEFAULT_TOLERANCE,
                    frame: str | None = None, min_participation: float = 0.05, max_modes: int = 4,
                    schedule_step_s: float | None = None, kp: Any = None, kd: Any = None) -> ScheduledShaping:
    """``reference`` shaped for the dominant modes of ``robot`` along it (module docstring).

    Args:
        shaper: 'none', 'zv', 'zvd', 'ei' or 'auto' (:data:`~flexrobot_ros.dynamics.input_shaping.SHAPERS`).
        frequency_error: relative frequency error 'auto' is robust to (0.1: +-10 %).
        tolerance: EI's vibration tolerance and 'auto''s limit (fraction, 0.05: 5 %).
        frame, min_participation, max_modes, kp, kd: the mode selection of
            :func:`~flexrobot_ros.modal.dominant_modes.dominant_modes`.
        schedule_step_s: spacing [s] of the schedule times (at most :data:`MAX_SCHEDULE_TIMES` of them); None: the
            longer of :data:`SCHEDULE_STEP_S` and the reference's duration / :data:`SCHEDULE_STEPS_PER_MOVE`.

    Raises:
        ShapingError: an unknown shaper, bad options, modes that cannot be shaped for or followed.
    """
    if shaper not in SHAPERS:
        raise ShapingError(f"shaper: {shaper!r}; expected one of {SHAPERS}")
    if reference.n_joints != robot.n:
        raise ShapingError(f"reference: {reference.n_joints} joints; robot {robot.name!r} has {robot.n} "
                           f"({', '.join(robot.joint_names)})")
    if schedule_step_s is None:
        schedule_step_s = max(SCHEDULE_STEP_S, (reference.end_time - reference.start_time) / SCHEDULE_STEPS_PER_MOVE)
    step = float(schedule_step_s)
    if not (np.isfinite(step) and step > 0.0):
        raise ShapingError(f"schedule step: {schedule_step_s!r} s; expected a positive duration")
    choose_kinds(shaper, [], [], frequency_error=frequency_error, tolerance=tolerance)  # checks the options
    if shaper == "none":
        return ScheduledShaping(reference, shaper, (), None, np.zeros(0), 0.0, frequency_error, tolerance)

    def modes_at(times: np.ndarray, path: Trajectory) -> DominantModes:
        poses = path.evaluate(np.clip(times, path.start_time, path.end_time)).q
        try:
            return dominant_modes(robot, poses, frame=frame, min_participation=min_participation,
                                  max_modes=max_modes, kp=kp, kd=kd)
        except ModalError as error:
            raise ShapingError(f"shaper {shaper!r}: {error}") from None

    def shaped(times: np.ndarray, modes: DominantModes) -> tuple[ShapedTrajectory, tuple[str, ...]]:
        kinds = choose_kinds(shaper, modes.frequencies_hz, modes.damping_ratios, frequency_error=frequency_error,
                             tolerance=tolerance)
        shapers = [design_shaper(kinds, f, z, tolerance) for f, z in zip(modes.frequencies_hz, modes.damping_ratios)]
        return ShapedTrajectory(reference, times, shapers), kinds

    times = _schedule(reference.start_time, reference.end_time, step)
    first, _ = shaped(times, modes_at(times, reference))  # tuned where the reference is
    times = _schedule(reference.start_time, first.end_time, step)
    modes = modes_at(times, first)  # tuned where the shaped motion is
    trajectory, kinds = shaped(times, modes)
    return ScheduledShaping(trajectory, shaper, kinds, modes, times, trajectory.added_time_s, frequency_error,
                            tolerance)


def _schedule(start: float, end: float, step: float) -> np.ndarray:
    count = min(MAX_SCHEDULE_TIMES, max(2, int(np.ceil((end - start) / step)) + 1))
    return np.linspace(start, end, count)


__all__ = ["MAX_SCHEDULE_TIMES", "SCHEDULE_STEP_S", "SCHEDULE_STEPS_PER_MOVE", "ScheduledShaping", "shape_reference"]
