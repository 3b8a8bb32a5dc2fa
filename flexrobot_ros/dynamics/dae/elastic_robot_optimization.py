"""Discretized-DAE optimization over the whole trajectory (seed 002, section 10.1, eqs. 25-26) on the general model:
the tool-space inverse dynamics of a robot whose tool output is non-minimum phase (a flexible link's tip).

The k-step BDF residuals of :class:`~flexrobot_ros.dynamics.dae.elastic_robot_dae.ElasticRobotDae` at
t_i = i h (i = 1..N), ``G = [F(x_i, D_h [y, v]_i, theta(t_i))]``, with ``D_h z_i = (1/h) sum_l alpha_l z_{i-l}``
(eq. 20) and the k history values [y, v]_{1-k} .. [y, v]_0 unknown as well (as the package's ``form='nco'`` on the
extended model: with an unstable zero, an exact rest history would pin the unbounded causal solution), are solved
as the paper's NCO::

    min 1/2 sum_j (w_j - w0_j)^2 / max(|w0_j|, 1)^2    subject to    G(w) = 0

w = [history, x_1 .. x_N], w0 the undeformed robot along the path (inverse kinematics, eta = 0, v = 0, u = 0) with
the consistent rest state as history; w0 is also the first iterate. G = 0 leaves the history free in as many
directions as the zero dynamics (and the BDF's parasitic roots) have; the objective picks the solution that stays
near w0, the bounded one: it starts before the motion (pre-actuation while the reference rests from t = 0 to its
start) and settles after it. Gauss-Newton SQP: each step solves the KKT system ``[[W, J^T], [J, 0]] [dw; lambda] =
[-W (w - w0); -G]`` (W the objective's diagonal, J the exact sparse Jacobian of G assembled from the per-step blocks
dF/dx and dF/d[y', v'] of CasADi, scipy's sparse LU), the constraint curvature left out (G is close to linear
along a path).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from flexrobot_ros.dynamics.dae.bdf import bdf_coefficients
from flexrobot_ros.dynamics.dae.bdf_optimization import ProblemSize
from flexrobot_ros.dynamics.dae.elastic_robot_dae import ElasticRobotDae, ElasticRobotSolution
from flexrobot_ros.dynamics.dae.inverse_dae import DaeError

#: Relative step size [-] below which the SQP iteration has converged, and the round-off floor [-] below which it
#: has converged when the steps stop shrinking (halving), as :func:`~flexrobot_ros.dynamics.dae.inverse_dae.newton`.
TOLERANCE, FLOOR = 1e-12, 1e-6


def solve_elastic_robot_optimization(dae: ElasticRobotDae, steps: int, h: float, k: int = 3,
                                     q_guess: np.ndarray | None = None, max_iterations: int = 20
                                     ) -> tuple[ElasticRobotSolution, ProblemSize]:
    """Solve ``steps`` BDF steps of ``h`` [s] and order ``k`` at once (module docstring); ``q_guess`` the joint
    positions near the start the inverse kinematics starts from. The solution's first sample (t = 0) is the
    history's last value x_0, with the holding torque of the rest state there."""
    if not (np.isfinite(h) and h > 0) or steps < 1:
        raise DaeError(f"step h = {h!r} s and {steps} steps: expected h > 0 and at least one step")
    alpha = bdf_coefficients(k)
    s, nx = dae.size, dae.unknowns
    t = h * np.arange(steps + 1)
    q_path = dae.rigid_path(t, q_guess)
    rest = dae.rest_state(0.0, q_path[0])
    w0 = np.concatenate([np.tile(rest[:2 * s], k)] + [np.r_[dae.model.coordinates(q), np.zeros(s + dae.n)]
                                                       for q in q_path[1:]])
    weight = 1.0 / np.maximum(np.abs(w0), 1.0) ** 2
    system = _StackedSystem(dae, alpha, steps, h, dae.theta(t[1:]))
    begin = time.perf_counter()
    w, status, iterations, previous = w0.copy(), "Maximum_Iterations_Exceeded", 0, np.inf
    for iterations in range(1, max_iterations + 1):
        g, jacobian = system(w)
        kkt = scipy.sparse.bmat([[scipy.sparse.diags(weight), jacobian.T], [jacobian, None]], format="csc")
        try:
            step = scipy.sparse.linalg.splu(kkt).solve(np.concatenate([-weight * (w - w0), -g]))[:w.size]
        except RuntimeError as error:   # SuperLU: "Factor is exactly singular" (iterates blown up to ~1e65)
            status = f"diverged (KKT matrix: {error})"
            break
        if not np.all(np.isfinite(step)):
            status = "diverged"
            break
        w += step
        size = np.abs(step).max() / (1.0 + np.abs(w).max())
        if size <= TOLERANCE or (iterations >= 3 and size <= FLOOR and size > 0.5 * previous):
            status = "Solve_Succeeded"
            break
        previous = size
    seconds = time.perf_counter() - begin
    history = w[:2 * s * k].reshape(k, 2 * s)
    x = w[2 * s * k:].reshape(steps, nx)
    yv = np.vstack([history, x[:, :2 * s]])
    rates = np.array([sum(alpha[l] * yv[k - 1 + i - l] for l in range(k + 1)) / h for i in range(1, steps + 1)])
    solution = ElasticRobotSolution(
        t=t, y=np.vstack([history[-1, :s], x[:, :s]]), v=np.vstack([history[-1, s:], x[:, s:2 * s]]),
        a=np.vstack([np.zeros(s), rates[:, s:]]), u=np.vstack([rest[2 * s:], x[:, 2 * s:]]), dae=dae,
        method=f"bdf{k} optimization over the whole trajectory (h = {h:g} s, {steps} steps)",
        message=f"Gauss-Newton SQP {status} in {iterations} iterations", diverged=status != "Solve_Succeeded")
    return solution, ProblemSize(unknowns=w.size, equations=steps * nx, seconds=seconds)


class _StackedSystem:
    """G(w) and its sparse Jacobian (module docstring): per-step blocks from ``dae.jacobians`` mapped over the
    steps, placed at index arrays computed once."""

    def __init__(self, dae: ElasticRobotDae, alpha: np.ndarray, steps: int, h: float, theta: np.ndarray):
        s, nx, k = dae.size, dae.unknowns, len(alpha) - 1
        self.dae, self.alpha, self.steps, self.h, self.s, self.nx, self.k = dae, alpha, steps, h, s, nx, k
        self.theta = theta.T
        self.map = dae.jacobians.map(steps)
        step = np.arange(steps)
        rows = step[:, None, None] * nx + np.arange(nx)[None, :, None]          # (N, nx, 1)
        own = 2 * s * k + step[:, None, None] * nx + np.arange(nx)[None, None, :]
        blocks = [np.broadcast_arrays(rows, own)]
        for l in range(1, k + 1):                                                 # [y, v] of x_{i-l} or history
            j = step - l                                                          # 0-based state index of x_{i-l}
            start = np.where(j >= 0, 2 * s * k + j * nx, (j + k) * 2 * s)
            cols = start[:, None, None] + np.arange(2 * s)[None, None, :]
            blocks.append(np.broadcast_arrays(rows, cols))
        self.rows = np.concatenate([r.ravel() for r, _ in blocks])
        self.cols = np.concatenate([c.ravel() for _, c in blocks])
        self.shape = (steps * nx, 2 * s * k + steps * nx)

    def __call__(self, w: np.ndarray) -> tuple[np.ndarray, scipy.sparse.csc_matrix]:
        s, nx, k, h, alpha, steps = self.s, self.nx, self.k, self.h, self.alpha, self.steps
        x = w[2 * s * k:].reshape(steps, nx)
        yv = np.vstack([w[:2 * s * k].reshape(k, 2 * s), x[:, :2 * s]])
        derivative = sum(alpha[l] * yv[k - l:k - l + steps] for l in range(k + 1)) / h
        g, j_x, j_xd = (np.array(a) for a in self.map(x.T, derivative.T, self.theta, h))
        j_x = j_x.reshape(nx, steps, nx).transpose(1, 0, 2).copy()
        j_xd = j_xd.reshape(nx, steps, 2 * s).transpose(1, 0, 2)
        j_x[:, :, :2 * s] += alpha[0] / h * j_xd
        values = np.concatenate([j_x.ravel()] + [(alpha[l] / h * j_xd).ravel() for l in range(1, k + 1)])
        jacobian = scipy.sparse.csc_matrix((values, (self.rows, self.cols)), shape=self.shape)
        return g.T.ravel(), jacobian


__all__ = ["FLOOR", "TOLERANCE", "solve_elastic_robot_optimization"]
