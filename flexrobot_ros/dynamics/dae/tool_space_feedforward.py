"""Tool-space feedforward of any robot the package loads (issue 25): the motor torques that move the *deformed*
tool along a tool path, by seed 002's DAE methods on the general model
(:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`: elastic and rigid joints, extra elasticities,
flexible links).

The method follows from the zeros of the tool output linearized at rest on the rigid path
(:mod:`.tool_path_zeros`, at ``path_points`` poses of the motion): all in the left half-plane (minimum phase), the
initial-value BDF (:mod:`.elastic_robot_bdf`); a zero in the right half-plane (a flexible link's tip), the
discretized-DAE optimization over the whole trajectory (:mod:`.elastic_robot_optimization`). The time axis starts
at rest at t = 0; the motion starts after a pre-actuation interval of ``TIME_CONSTANTS`` time constants of the
slowest unstable zero (1 / min Re z) and the solve ends ``TIME_CONSTANTS`` time constants of the slowest stable zero
after it (at least ``MIN_INTERVAL`` each, at most the motion's duration: zeros on or near the imaginary axis, as
undamped beams give, would ask for unbounded intervals; the reason says so). Seed 002 section 10.2 asks 2-3 time
constants for its tolerance; six leave e^-6 = 0.25 % of the unstable part at the start. A CartesianLine that starts
earlier is moved later (the ``reason`` says by how much). The path is a straight line (CartesianLine), a
waypoint trajectory of tool coordinates (ToolTrajectory) or the rigid tool path of a joint trajectory (ToolPath).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.dynamics.dae.bdf_optimization import ProblemSize
from flexrobot_ros.dynamics.dae.elastic_robot_bdf import solve_elastic_robot_bdf
from flexrobot_ros.dynamics.dae.elastic_robot_dae import ElasticRobotDae, ElasticRobotSolution
from flexrobot_ros.dynamics.dae.elastic_robot_optimization import solve_elastic_robot_optimization
from flexrobot_ros.dynamics.dae.inverse_dae import DaeError
from flexrobot_ros.dynamics.dae.reference import CartesianLine, ToolTrajectory, as_reference
from flexrobot_ros.dynamics.dae.tool_path import ToolPath
from flexrobot_ros.dynamics.dae.tool_path_zeros import path_tool_zeros
from flexrobot_ros.dynamics.dae.zero_dynamics import ZeroAnalysis, describe_zeros
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot

SOLVERS = ("auto", "bdf", "optimization")
#: Pre- and post-actuation intervals in time constants of the slowest unstable / stable zero (module docstring).
TIME_CONSTANTS = 6.0
#: Shortest pre- and post-actuation interval [s].
MIN_INTERVAL = 0.05


@dataclass(frozen=True)
class ToolSpaceFeedforward:
    """Result of :func:`tool_space_feedforward`: the ``solution``, the ``solver`` that ran and why (``reason``),
    the ``zeros`` [rad/s] at the path poses (``path_times`` [s], on the solution's time axis), the problem ``size``
    (optimization), the ElasticRobot ``model`` and the ``reference`` solved (the line, moved later for
    pre-actuation)."""

    solution: ElasticRobotSolution
    solver: str
    reason: str
    model: ElasticRobot
    reference: CartesianLine | ToolPath | ToolTrajectory
    zeros: list[ZeroAnalysis] = field(default_factory=list)
    path_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    size: ProblemSize | None = None

    @property
    def minimum_phase(self) -> bool:
        return all(z.minimum_phase for z in self.zeros)

    def unstable_zeros(self) -> np.ndarray:
        """Right half-plane zeros [rad/s] at every path pose, one array."""
        return np.concatenate([z.unstable_zeros for z in self.zeros]) if self.zeros else np.zeros(0)


def tool_space_feedforward(robot: Any, reference: Any, *, solver: str = "auto", h: float = 2e-3, k: int = 3,
                           q_g_guess: Any = None, tool_axes: Sequence[str] | None = None,
                           link_model: dict[str, Any] | None = None, path_points: int = 11) -> ToolSpaceFeedforward:
    """Solve ``robot``'s tool-space inverse dynamics along ``reference`` (module docstring): a CartesianLine
    (positions [m] of the tool frame's ``tool_axes``), a ToolTrajectory (those positions along a waypoint
    trajectory) or a ToolPath (the rigid tool path of a joint trajectory), with
    BDF step ``h`` [s] and order ``k``. ``solver`` 'auto' (from the zeros), 'bdf' or 'optimization'; ``q_g_guess``
    joint positions near the start that pick the inverse-kinematics branch (default: a ToolPath's first joint
    positions, else :func:`~flexrobot_ros.dynamics.dae.tool_inverse_kinematics.default_guess`); ``link_model``
    ``method``/``modes``/``elements`` overrides of the flexible links' discretization."""
    if solver not in SOLVERS:
        raise DaeError(f"solver {solver!r}: expected one of {SOLVERS}")
    if not (np.isfinite(h) and h > 0):
        raise DaeError(f"step h = {h!r} s: expected > 0")
    reference = as_reference(reference)
    if not isinstance(reference, (CartesianLine, ToolPath, ToolTrajectory)):
        raise DaeError(f"reference {type(reference).__name__}: the tool-space feedforward takes a CartesianLine, a "
                       "ToolTrajectory or a ToolPath")
    if q_g_guess is None and isinstance(reference, ToolPath):
        q_g_guess = reference.trajectory.evaluate(np.array([reference.trajectory.start_time])).q[0]
    model = ElasticRobot(robot, **(link_model or {}))
    probe = ElasticRobotDae(model, reference, tool_axes)
    start, duration = reference.t0, reference.duration
    path_times = np.linspace(start, start + duration, path_points)
    zeros = path_tool_zeros(probe, probe.rigid_path(path_times, q_g_guess))
    unstable = np.concatenate([z.unstable_zeros for z in zeros])
    stable = np.concatenate([z.zeros[z.zeros.real < 0.0] for z in zeros])
    minimum_phase = unstable.size == 0
    chosen = solver if solver != "auto" else ("bdf" if minimum_phase else "optimization")
    reason = describe_zeros(zeros, f"at all {len(zeros)} path poses") + ": " + (
        "initial-value BDF" if chosen == "bdf" else "discretized-DAE optimization over the whole trajectory") + (
        " (chosen automatically)" if solver == "auto" else " (requested)")
    limit = max(duration, MIN_INTERVAL)
    pre = _interval(unstable.real.min(), limit) if unstable.size and chosen != "bdf" else 0.0
    post = _interval(np.abs(stable.real).min(), limit) if stable.size else MIN_INTERVAL
    if unstable.size and chosen != "bdf" and pre == limit or stable.size and post == limit:
        reason += (f"; a zero within {TIME_CONSTANTS / limit:.3g} rad/s of the imaginary axis (lightly damped zero "
                   f"dynamics): the pre- and post-actuation intervals are capped at the motion's duration, "
                   f"{limit:.4g} s, and the zero dynamics do not settle within them")
    if start < pre:
        why = ("the duration" if pre == limit else
               f"{TIME_CONSTANTS:g} time constants of the unstable zero at {unstable.real.min():.4g} rad/s")
        reason += f"; the motion moved from t = {start:.4g} s to {pre:.4g} s (pre-actuation: {why})"
        path_times = path_times + (pre - start)
        reference = dataclasses.replace(reference, t0=pre)
    dae = probe.with_reference(reference)
    steps = int(np.ceil((reference.t0 + duration + post) / h))
    if chosen == "bdf":
        solution = solve_elastic_robot_bdf(dae, steps, h, k, q_g_guess)
        if solution.diverged:
            reason += f"; the BDF solve stopped: {solution.message}"
        return ToolSpaceFeedforward(solution=solution, solver="bdf", reason=reason, model=model, reference=reference,
                                    zeros=zeros, path_times=path_times)
    solution, size = solve_elastic_robot_optimization(dae, steps, h, k, q_g_guess)
    if solution.diverged:
        reason += f"; the optimization did not converge: {solution.message}"
    return ToolSpaceFeedforward(solution=solution, solver="optimization", reason=reason, model=model,
                                reference=reference, zeros=zeros, path_times=path_times, size=size)


def _interval(rate: float, limit: float) -> float:
    """TIME_CONSTANTS / ``rate`` [s] for a zero of real part magnitude ``rate`` [rad/s], within [MIN_INTERVAL,
    ``limit``]."""
    return float(np.clip(TIME_CONSTANTS / rate if rate > 0 else np.inf, MIN_INTERVAL, limit))


__all__ = ["MIN_INTERVAL", "SOLVERS", "TIME_CONSTANTS", "ToolSpaceFeedforward", "tool_space_feedforward"]
