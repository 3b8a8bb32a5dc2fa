"""Discretized-DAE optimization over the whole trajectory (seed 002, section 10.1, eqs. 25-26): the inverse dynamics
of a non-minimum-phase extended flexible-joint robot.

The k-step BDF residuals of all N steps are stacked, G(y) = [F(t_i, x_i, x_{i-1}, .., x_{i-k})]_{i=1..N} with
y = [x_1 .. x_N] (eq. 26), and solved for the whole trajectory at once, so the torque may act before the motion
(the reference starts at t = Delta t > 0, the pre-actuation interval) and after it. Two forms (CasADi + IPOPT, exact
derivatives):

* ``form='nls'``: min ||G(y)||^2 + rho ||y - y_rest||^2 (the paper's NLS, with G "extended with y" to bound the
  solution; rho small), history x_{1-k} .. x_0 = the rest state of section 9.1; solved by sparse Gauss-Newton
  (CasADi's sparse Jacobian of G, scipy's sparse LU of the normal equations);
* ``form='nco'``: min ||y - y_rest||^2 subject to G(y) = 0 (the paper's NCO). With an unstable zero the exact
  solution from an exact rest history is the unbounded causal one, so here the k history values are unknowns too
  (their deviation from rest is penalized like y's): the bounded solution starts from a state e^(-lambda Delta t)
  close to rest (lambda the unstable zero).

Sizes: N nx unknowns in y (the paper's 151 x 12 = 1812 for h = 2 ms, k = 6 and the index-1 system of eq. 19).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import casadi as cs
import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from flexrobot_ros.dynamics.dae.bdf import bdf_coefficients
from flexrobot_ros.dynamics.dae.bdf_inverse import DaeSolution
from flexrobot_ros.dynamics.dae.inverse_dae import SYSTEMS, DaeError, InverseDae

FORMS = ("nls", "nco")


@dataclass(frozen=True)
class ProblemSize:
    """Unknowns and equations of an optimization problem, beside the paper's numbers (None where it has none)."""

    unknowns: int
    equations: int
    paper_unknowns: int | None = None
    paper_equations: int | None = None
    seconds: float = float("nan")

    def __str__(self) -> str:
        paper = (f" (paper: {self.paper_unknowns} unknowns, {self.paper_equations} equations)"
                 if self.paper_unknowns is not None else "")
        return f"{self.unknowns} unknowns, {self.equations} equations{paper}, solved in {self.seconds:.2f} s"


def solve_bdf_optimization(dae: InverseDae, steps: int, h: float, k: int = 6, form: str = "nco",
                           scaled: bool | None = None, rho: float = 1e-10, q_g_guess=None, max_iterations: int = 200,
                           tol: float = 1e-10) -> tuple[DaeSolution, ProblemSize]:
    """Solve ``steps`` BDF steps t_i = i h (i = 1..steps) at once (module docstring). Returns the solution (its
    first sample is the history x_0 at t = 0) and the problem size.

    ``scaled`` (default: True for 'nco', False for 'nls'): the (1/h)^(3-l) scaling of the algebraic rows helps
    IPOPT's constraint Jacobian but would weight the least-squares sum by up to h^-6, swamping the dynamics rows."""
    if form not in FORMS:
        raise DaeError(f"form {form!r}: expected one of {FORMS}")
    alpha = bdf_coefficients(k)
    lay = dae.layout
    nx = lay.size
    x_rest = dae.rest_state(0.0, q_g_guess)
    t = h * np.arange(1, steps + 1)
    refs = np.array([dae.reference_vector(ti) for ti in t]).T  # (3n, N)
    scaled = (form == "nco") if scaled is None else scaled
    scale = dae.scales(h, scaled)
    y = cs.MX.sym("y", nx * steps)
    Y = cs.reshape(y, nx, steps)
    if form == "nco":
        z = cs.MX.sym("history", nx * k)
        history = cs.reshape(z, nx, k)  # x_{1-k} .. x_0
        unknowns = cs.vertcat(z, y)
    else:
        history = cs.repmat(cs.DM(x_rest), 1, k)
        unknowns = y
    full = cs.horzcat(history, Y)  # columns x_{1-k} .. x_N
    xdot = sum(alpha[l] * full[:, k - l:k - l + steps] for l in range(k + 1)) / h
    residual = dae.residual.map(steps)(Y, xdot, cs.DM(refs), cs.DM(scale))
    g = cs.reshape(residual, -1, 1)
    rest = np.tile(x_rest, unknowns.numel() // nx)
    deviation = unknowns - cs.DM(rest)
    weight = 1.0 / np.maximum(np.abs(rest), 1.0)
    start = time.perf_counter()
    if form == "nls":
        values, status = _gauss_newton(cs.Function("G", [unknowns], [g, cs.jacobian(g, unknowns)]), rest,
                                       rho * weight**2, max_iterations)
        solver_name = "Gauss-Newton"
    else:
        problem = {"x": unknowns, "f": 0.5 * cs.sumsqr(deviation * cs.DM(weight)), "g": g}
        options = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes",
                   "ipopt.max_iter": max_iterations, "ipopt.tol": tol}
        solver = cs.nlpsol("bdf_optimization", "ipopt", problem, options)
        out = solver(x0=rest, lbg=0.0, ubg=0.0)
        status = solver.stats()["return_status"]
        values = np.array(out["x"]).ravel()
        solver_name = "IPOPT"
    seconds = time.perf_counter() - start
    states = values.reshape(-1, nx)
    x_all = np.vstack([x_rest[None, :], states]) if form == "nls" else states[k - 1:]
    full_values = np.vstack([np.tile(x_rest, (k, 1)), states]) if form == "nls" else states
    xdots = np.zeros((steps + 1, nx))
    for i in range(steps):
        xdots[i + 1] = sum(alpha[l] * full_values[k + i - l] for l in range(k + 1)) / h
    tau = np.array([np.array(dae.torque(xi, xd)).ravel() for xi, xd in zip(x_all, xdots)])
    g_value = np.array(cs.Function("g", [unknowns], [g])(values)).ravel()
    ok = status in ("Solve_Succeeded", "Solved_To_Acceptable_Level")
    message = (f"{solver_name} {status}; max |G| = {np.abs(g_value).max():.3g}" + ("" if ok else " (not converged)"))
    solution = DaeSolution(t=np.concatenate([[0.0], t]), x=x_all, tau_m=tau, dae=dae,
                           method=f"bdf{k} optimization ({form}) on {SYSTEMS[dae.system]}", k=k, h=h, scaled=scaled,
                           newton_iterations=np.zeros(0, dtype=int), condition=np.zeros(0), diverged=not ok,
                           message=message, xdot=xdots)
    size = ProblemSize(unknowns=unknowns.numel(), equations=g.numel(), paper_unknowns=1812 if dae.system == 1 else None,
                       paper_equations=1812 if dae.system == 1 else None, seconds=seconds)
    return solution, size


def _gauss_newton(function: cs.Function, y0: np.ndarray, regularization: np.ndarray,
                  max_iterations: int) -> tuple[np.ndarray, str]:
    """min 1/2 ||G(y)||^2 + 1/2 sum r_j (y_j - y0_j)^2 by Gauss-Newton with sparse normal equations; stops when the
    cost has not decreased for three steps (the round-off floor of the normal equations); returns the best iterate."""
    y = np.array(y0, dtype=float)
    reg = scipy.sparse.diags(regularization)

    def cost(g: np.ndarray, y: np.ndarray) -> float:
        return 0.5 * (g @ g + (regularization * (y - y0)) @ (y - y0))

    g, jac = function(y)
    g = np.array(g).ravel()
    best, best_cost, stalled = y, cost(g, y), 0
    for _ in range(max_iterations):
        matrix = _sparse(jac)
        normal = (matrix.T @ matrix + reg).tocsc()
        y = y + scipy.sparse.linalg.spsolve(normal, -(matrix.T @ g + regularization * (y - y0)))
        if not np.all(np.isfinite(y)):
            return best, "diverged"
        g, jac = function(y)
        g = np.array(g).ravel()
        current = cost(g, y)
        if current < (1.0 - 1e-9) * best_cost:
            best, best_cost, stalled = y, current, 0
        else:
            stalled += 1
            if stalled == 3:  # three steps without progress: at the round-off floor
                return best, "Solve_Succeeded"
    return best, "Maximum_Iterations_Exceeded"


def _sparse(matrix: cs.DM) -> scipy.sparse.csc_matrix:
    """CasADi DM (sparse) as scipy CSC."""
    sparsity = matrix.sparsity()
    rows, cols = sparsity.get_triplet()
    return scipy.sparse.csc_matrix((np.array(matrix.nonzeros()), (rows, cols)), shape=matrix.shape)
