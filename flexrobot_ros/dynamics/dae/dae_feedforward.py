"""The ``dae`` feedforward method: motor references and torques of an extended flexible-joint robot from a
tool-space (:class:`~flexrobot_ros.dynamics.dae.reference.CartesianLine`) or link-space reference (seed 002).

The solver is chosen from the zero dynamics (section 10): the model is linearized at points of the rigid path
(q_e = 0, q_m = W q_g, at rest) and its invariant zeros computed (:mod:`flexrobot_ros.dynamics.dae.
zero_dynamics`). All zeros in the left half-plane (minimum phase): the causal initial-value k-step BDF
(:mod:`.bdf_inverse`); a zero in the right half-plane: the non-causal discretized-DAE optimization over the whole
trajectory (:mod:`.bdf_optimization`), which needs a pre-actuation interval before the motion (the reference's
start time, at least ``PRE_ACTUATION_TIME_CONSTANTS`` / Re(zero)) and a post-actuation one after it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.dynamics.dae.bdf_inverse import ELASTIC_BOUND, DaeSolution, solve_bdf
from flexrobot_ros.dynamics.dae.bdf_optimization import ProblemSize, solve_bdf_optimization
from flexrobot_ros.dynamics.dae.fourier_optimization import rigid_path
from flexrobot_ros.dynamics.dae.inverse_dae import DaeError, InverseDae
from flexrobot_ros.dynamics.dae.reference import CartesianLine, ToolTrajectory, as_reference
from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics, default_guess
from flexrobot_ros.dynamics.feedforward_result import FeedforwardResult
from flexrobot_ros.dynamics.dae.zero_dynamics import ZeroAnalysis, describe_zeros, zero_dynamics

SOLVERS = ("auto", "bdf", "optimization")
#: Seed 002 section 10.2: "a suitable Delta t ... seems to be 2-3 times the time constants of the slowest NMP zero".
PRE_ACTUATION_TIME_CONSTANTS = 2.0


@dataclass(frozen=True)
class DaeFeedforward:
    """Result of :func:`dae_feedforward`: ``solution`` (t, states, tau_m), the ``solver`` used and ``reason``,
    ``zeros`` the zero analyses along the rigid path, ``size`` for optimizations."""

    solution: DaeSolution
    solver: str
    reason: str
    zeros: list[ZeroAnalysis] = field(default_factory=list)
    size: ProblemSize | None = None

    @property
    def minimum_phase(self) -> bool:
        return all(z.minimum_phase for z in self.zeros)


def path_zeros(dae: InverseDae, times: Sequence[float], q_g_guess: Any) -> list[ZeroAnalysis]:
    """Zeros of the model linearized at rest on the rigid path at ``times`` (q_e = 0, q_m = W q_g)."""
    model, robot = dae.model, dae.robot
    q_g = rigid_path(dae, np.asarray(times, dtype=float), q_g_guess)
    linearizer = zero_dynamics(robot, model)
    out = []
    for q in q_g:
        z = np.zeros(2 * model.na + 2 * robot.n)
        z[list(model.ext.actuated_index)] = q
        z[model.na:model.na + robot.n] = robot.transmission * q
        out.append(linearizer.analyze(z))
    return out


def solution_zeros(solution: DaeSolution, every: int = 10) -> list[ZeroAnalysis]:
    """Zeros of the model linearized along a solved trajectory (every ``every``-th sample, with its torque)."""
    dae = solution.dae
    linearizer = zero_dynamics(dae.robot, dae.model)
    return [linearizer.analyze(dae.layout.linear_state(x), u)
            for x, u in zip(solution.x[::every], solution.tau_m[::every])]


def dae_feedforward(robot: Any, reference: Any, *, solver: str = "auto", h: float = 1e-3, k: int = 6,
                    system: int | None = None, t_end: float | None = None, q_g_guess: Any = None,
                    output: str | None = None, tool_axes: Sequence[str] | None = None, form: str = "nco",
                    path_points: int = 11, elastic_bound: float = ELASTIC_BOUND) -> DaeFeedforward:
    """Solve the inverse dynamics of ``robot``'s extended model along ``reference`` (module docstring).

    ``reference`` a CartesianLine or ToolTrajectory (tool space, ``output='tool'``) or a link-space
    Trajectory/JointReference (``output='joints'``); ``solver`` 'auto' (from the zeros), 'bdf' or 'optimization'; BDF
    order ``k`` and step ``h`` [s]; ``system`` 3, 2 or 1 (eqs. 17-19; default 2 for BDF, 1 for the optimization);
    ``t_end`` [s] (default: the motion end plus its start time, at least 0.1 s); ``q_g_guess`` actuated link positions
    near the start (default the reference itself for link-space references, the rigid robot's inverse kinematics of the
    start from :func:`~flexrobot_ros.dynamics.dae.tool_inverse_kinematics.default_guess` for tool-space ones);
    ``elastic_bound`` [rad | m] where the BDF solve stops (:func:`~flexrobot_ros.dynamics.dae.bdf_inverse.solve_bdf`).
    """
    if solver not in SOLVERS:
        raise DaeError(f"solver {solver!r}: expected one of {SOLVERS}")
    reference = as_reference(reference)
    output = output or ("tool" if isinstance(reference, (CartesianLine, ToolTrajectory)) else "joints")
    start, motion_end = _span(reference)
    t_end = t_end if t_end is not None else motion_end + max(start, 0.1)
    probe = InverseDae(robot, reference, system or 2, output, tool_axes)
    if q_g_guess is None and output == "joints":
        q_g_guess = reference.evaluate(np.array([start]), 0)[0][0]
    elif q_g_guess is None:
        q_g_guess = ToolInverseKinematics(robot, probe.model.tool_axes).solve(
            reference.evaluate(np.array([start]), 0)[0][0], default_guess(robot))
    zeros = path_zeros(probe, np.linspace(start, motion_end, path_points), q_g_guess)
    reason = describe_zeros(zeros, f"at all {len(zeros)} path points")
    minimum_phase = all(z.minimum_phase for z in zeros)
    chosen = solver if solver != "auto" else ("bdf" if minimum_phase else "optimization")
    reason = f"{reason}: {'initial-value BDF' if chosen == 'bdf' else 'discretized-DAE optimization'}" + (
        " (chosen automatically)" if solver == "auto" else " (requested)")
    if chosen == "bdf":
        dae = probe if (system or 2) == probe.system else InverseDae(robot, reference, system, output, tool_axes,
                                                                      symbolic=probe.model)
        solution = solve_bdf(dae, t_end, h, k, t0=start, q_g_guess=q_g_guess, elastic_bound=elastic_bound)
        if solution.diverged:
            reason += f"; the BDF solve stopped: {solution.message}"
        return DaeFeedforward(solution=solution, solver="bdf", reason=reason, zeros=zeros)
    unstable = np.concatenate([z.unstable_zeros for z in zeros]) if zeros else np.zeros(0)
    if unstable.size:
        needed = PRE_ACTUATION_TIME_CONSTANTS / unstable.real.min() if unstable.real.min() > 0 else np.inf
        if start < needed:
            raise DaeError(f"the reference starts at t = {start:.4g} s; the unstable zero at "
                           f"{unstable.real.min():.4g} rad/s needs a pre-actuation interval of at least {needed:.4g} s "
                           "(2 time constants, seed 002 section 10.2): start the motion later")
    dae = InverseDae(robot, reference, system or 1, output, tool_axes, symbolic=probe.model)
    steps = int(round(t_end / h))
    solution, size = solve_bdf_optimization(dae, steps, h, k, form, q_g_guess=q_g_guess)
    return DaeFeedforward(solution=solution, solver=f"optimization ({form})", reason=reason, zeros=zeros, size=size)


def feedforward_result(robot: Any, result: DaeFeedforward) -> FeedforwardResult:
    """The :class:`~flexrobot_ros.dynamics.feedforward_result.FeedforwardResult` of a dae solution (method 'dae'): q, qd,
    qdd the actuated link trajectory (qdd and the jerk/snap q3, q4 by differences of the BDF solution), tau the
    gear torque K (q_m - W q) + D_g (qd_m - W qd) (link side, its derivatives by differences), q_m, qd_m, qdd_m (the
    BDF derivative of qd_m that tau_m is computed with, not a second-order difference) and tau_m; the solver, its
    reason and the unstable zeros [rad/s] along the path."""
    s = result.solution
    ext = s.dae.model.ext
    t, q, qd = s.t, s.q_g, s.v_a[:, ext.actuated_index]
    grad = lambda y: np.gradient(y, t, axis=0)  # noqa: E731
    qdd = grad(qd)
    w = robot.transmission
    tau = robot.stiffness * (s.q_m - w * q) + ext.spring_damping * (s.v_m - w * qd)
    dtau = grad(tau)
    return FeedforwardResult(t=t, q=q, qd=qd, qdd=qdd, q3=grad(qdd), q4=grad(grad(qdd)), tau=tau, dtau=dtau,
                             ddtau=grad(dtau), q_m=s.q_m, qd_m=s.v_m, qdd_m=s.a_m, tau_m=s.tau_m,
                             joint_names=tuple(robot.joint_names), method="dae", solver=result.solver,
                             solver_reason=result.reason, unstable_zeros=(
                                 np.concatenate([z.unstable_zeros for z in result.zeros]) if result.zeros
                                 else np.zeros(0, dtype=complex)), converged=not s.diverged)


def _span(reference: Any) -> tuple[float, float]:
    if isinstance(reference, (CartesianLine, ToolTrajectory)):
        return reference.t0, reference.t0 + reference.duration
    trajectory = getattr(reference, "trajectory", None)
    if trajectory is not None:
        return float(trajectory.start_time), float(trajectory.end_time)
    raise DaeError(f"reference {type(reference).__name__}: cannot tell its start and end times")
