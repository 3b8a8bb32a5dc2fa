"""The inverse dynamics of the extended flexible-joint model as a DAE (seed 002, sections 4 and 7).

Unknowns per time (X of section 4, in this package's coordinates): q_a (na = n + ne link-side coordinates, chain
order), q_m (n), v_a = qd_a, v_m = qd_m, and for the index-1 system the dummy derivative a_g = X^_4 (n) of the
actuated link velocities. The motor torque balance (eq. 1d) is left out (it would raise the index by one) and gives
tau_m afterwards. Systems (F(t, x, x') = 0, equations in this order):

* ``system=3`` eq. 17: link dynamics (na), x'_{q_a} = v_a (na), x'_{q_m} = v_m (n), s_0 (Gamma(q_a) - theta) (n)
* ``system=2`` eq. 18: as 17 without x'_{q_g} = v_g, plus s_1 (Gamma' - theta') (n)
* ``system=1`` eq. 19: as 18 with a_g in place of x'_{v_g} in the link dynamics, plus s_2 (Gamma'' - theta'') (n)

``s_l`` scale the l-times differentiated algebraic equations: 1, or (1/h)^(3 - l) with ``scaled=True`` (section 9.2).
Structural index (section 7): 3 when every actuated transmission has damping D_g > 0; with D_g = 0 at some joint
the motor position there becomes algebraic and the index rises to 4 (section 9.2: "the index increases one step if
the damping is zero"). The reference must have at least nu_0 = index + 1 continuous derivatives (section 9.1;
nu_0 is the index of eq. 7, the problem with the motor equation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import casadi as cs
import numpy as np

from flexrobot_ros.dynamics.dae.reference import as_reference
from flexrobot_ros.dynamics.dae.symbolic import SymbolicExtendedModel, symbolic_model
from flexrobot_ros.errors import TrajectoryError
from flexrobot_ros.model.extended_model import ExtendedModel

SYSTEMS = {3: "eq. 17 (index 3)", 2: "eq. 18 (index 2)", 1: "eq. 19 (index 1)"}


class DaeError(TrajectoryError):
    """The DAE inverse dynamics cannot be set up or solved (message says where and why)."""


@dataclass(frozen=True)
class Layout:
    """Index ranges of the DAE unknowns x."""

    q_a: slice
    q_m: slice
    v_a: slice
    v_m: slice
    a_g: slice
    size: int

    def linear_state(self, x: np.ndarray) -> np.ndarray:
        """The state [q_a, q_m, v_a, v_m] of ``x`` in the layout of :class:`~flexrobot_ros.dynamics.dae.
        zero_dynamics.ZeroDynamics`."""
        return np.concatenate([x[self.q_a], x[self.q_m], x[self.v_a], x[self.v_m]])


def newton(function: Any, x0: np.ndarray, tol: float = 1e-10, max_iterations: int = 30,
           floor: float = 1e-6) -> tuple[np.ndarray, int]:
    """Solve function(x) -> (residual, jacobian) = 0 from x0 (full Newton steps); raises DaeError on failure.

    Converged when a step is below ``tol`` (relative to 1 + |x|), or when the steps stop shrinking (at least
    halving) below ``floor``: the round-off floor of an ill-conditioned Jacobian (eq. 22 for small h)."""
    x = np.array(x0, dtype=float)
    previous = np.inf
    for iteration in range(1, max_iterations + 1):
        r, jac = function(x)
        try:
            dx = np.linalg.solve(np.asarray(jac), -np.asarray(r).ravel())
        except np.linalg.LinAlgError:
            raise DaeError("Newton: singular Jacobian") from None
        x += dx
        if not np.all(np.isfinite(x)):
            raise DaeError("Newton: non-finite iterate")
        step = np.abs(dx).max() / (1.0 + np.abs(x).max())
        if step <= tol or (iteration >= 3 and step <= floor and step > 0.5 * previous):
            return x, iteration
        previous = step
    raise DaeError(f"Newton: no convergence in {max_iterations} iterations (last step {np.abs(dx).max():.3g})")


class InverseDae:
    """The residual of one inverse-dynamics DAE system of ``robot`` for ``reference`` (see the module docstring).

    ``output`` 'tool' (tool-point coordinates ``tool_axes``, reference a CartesianLine) or 'joints' (link-space
    reference q_g(t)); ``ext`` overrides ``robot.extended`` (e.g. :func:`~flexrobot_ros.model.extended_model.
    rigid_extended`).
    """

    def __init__(self, robot: Any, reference: Any, system: int = 3, output: str = "tool",
                 tool_axes: Sequence[str] | None = None, ext: ExtendedModel | None = None,
                 symbolic: SymbolicExtendedModel | None = None):
        if system not in SYSTEMS:
            raise DaeError(f"system {system!r}: expected 3 (eq. 17), 2 (eq. 18) or 1 (eq. 19)")
        self.robot, self.system = robot, system
        self.model = symbolic or symbolic_model(robot, output, tool_axes, ext)
        self.reference = as_reference(reference)
        n, na = robot.n, self.model.na
        if self.reference.dimension != n:
            raise DaeError(f"reference has {self.reference.dimension} coordinates; robot {robot.name} has {n} "
                           f"actuators (outputs {self.model.tool_axes or 'q_g'})")
        extra = n if system == 1 else 0
        self.layout = Layout(q_a=slice(0, na), q_m=slice(na, na + n), v_a=slice(na + n, 2 * na + n),
                             v_m=slice(2 * na + n, 2 * na + 2 * n), a_g=slice(2 * na + 2 * n, 2 * na + 2 * n + extra),
                             size=2 * na + 2 * n + extra)
        self.index, self.index_reason = self._structural_index()
        if self.reference.continuity < self.index + 1:
            raise DaeError(
                f"reference is only C^{self.reference.continuity} (continuous derivatives up to order "
                f"{self.reference.continuity}); the inverse dynamics of robot {robot.name} has differential index "
                f"{self.index + 1} with the motor equation (nu_0 of seed 002 section 9.1; {self.index_reason}), so the "
                f"reference needs {self.index + 1} continuous derivatives (e.g. CartesianLine continuity >= "
                f"{self.index + 1})")
        self._build()

    # ------------------------------------------------------------------ structure
    def _structural_index(self) -> tuple[int, str]:
        ext = self.model.ext
        undamped = [name for name, d in zip(self.robot.joint_names, ext.spring_damping) if d <= 0.0]
        if undamped:
            return 4, (f"zero transmission damping (spring_damping) at {undamped}: q_m is algebraic there and the "
                       "index rises from 3 to 4")
        return 3, "transmission damping D_g > 0 at every actuated joint"

    def _build(self) -> None:
        m, lay, n = self.model, self.layout, self.robot.n
        ext = m.ext
        act, el = list(ext.actuated_index), list(ext.elastic_index)
        x, xd = cs.SX.sym("x", lay.size), cs.SX.sym("xd", lay.size)
        ref = cs.SX.sym("ref", 3 * n)
        scale = cs.SX.sym("scale", 3)
        q, qm, v, vm = x[lay.q_a], x[lay.q_m], x[lay.v_a], x[lay.v_m]
        acc = xd[lay.v_a]
        if self.system == 1:
            acc = cs.SX(acc)
            acc[act] = x[lay.a_g]
        rows = [m.link_residual(q, v, acc, qm, vm)]
        kinematic = list(range(m.na)) if self.system == 3 else el
        if kinematic:
            rows.append(xd[lay.q_a][kinematic] - v[kinematic])
        rows.append(xd[lay.q_m] - vm)
        gamma = m.output(q)
        rows.append(scale[0] * (gamma - ref[:n]))
        if self.system <= 2:
            gamma_d = cs.jtimes(gamma, q, v)
            rows.append(scale[1] * (gamma_d - ref[n:2 * n]))
        if self.system == 1:
            gamma_dd = cs.jtimes(gamma_d, cs.vertcat(q, v), cs.vertcat(v, acc))
            rows.append(scale[2] * (gamma_dd - ref[2 * n:]))
        residual = cs.vertcat(*rows)
        if residual.numel() != lay.size:
            raise DaeError(f"internal: {residual.numel()} equations for {lay.size} unknowns")
        c = cs.SX.sym("c")  # alpha_0 / h: d x' / d x_i of the BDF
        jac = cs.jacobian(residual, x) + c * cs.jacobian(residual, xd)
        self.residual = cs.Function("F", [x, xd, ref, scale], [residual])
        self.newton_system = cs.Function("F_newton", [x, xd, ref, scale, c], [residual, jac])
        self.structure = cs.Function("F_structure", [x, xd, ref, scale],
                                     [cs.jacobian(residual, x), cs.jacobian(residual, xd)])
        u = m.motor_torque(q, v, qm, vm, xd[lay.v_m])
        self.torque = cs.Function("tau_m", [x, xd], [u])
        self.gamma = cs.Function("gamma", [q], [gamma])

    def scales(self, h: float, scaled: bool) -> np.ndarray:
        """(s_0, s_1, s_2): (1/h)^(3 - l) with scaling, ones without."""
        return np.array([h ** -3, h ** -2, h ** -1]) if scaled else np.ones(3)

    def reference_vector(self, t: float) -> np.ndarray:
        values = self.reference.evaluate(np.array([t]), 2)
        return np.concatenate([v[0] for v in values])

    # ------------------------------------------------------------------ consistent initial conditions
    def rest_state(self, t0: float = 0.0, q_g_guess: Any = None) -> np.ndarray:
        """Consistent initial conditions (section 9.1): at rest at t0 (all rates zero), the static equilibrium
        link_residual(q_a, 0, 0, q_m, 0) = 0 with Gamma(q_a) = theta(t0), solved by Newton from q_g_guess (actuated
        link positions; the elastic ones start at 0, q_m at W q_g)."""
        m, lay, n = self.model, self.layout, self.robot.n
        ext = m.ext
        theta0 = self.reference.evaluate(np.array([t0]), 0)[0][0]
        guess = np.zeros(m.na + n)
        q_g = np.zeros(n) if q_g_guess is None else np.asarray(q_g_guess, dtype=float)
        if q_g.shape != (n,):
            raise DaeError(f"q_g_guess: expected {n} values for {list(self.robot.joint_names)}, got {q_g.shape}")
        guess[list(ext.actuated_index)] = q_g
        guess[m.na:] = self.robot.transmission * q_g
        z = cs.SX.sym("z", m.na + n)
        zero = cs.SX.zeros(m.na)
        r = cs.vertcat(m.link_residual(z[:m.na], zero, zero, z[m.na:], cs.SX.zeros(n)), m.output(z[:m.na]) - theta0)
        fun = cs.Function("static", [z], [r, cs.jacobian(r, z)])
        try:
            solution, _ = newton(lambda y: tuple(np.array(a) for a in fun(y)), guess, tol=1e-13, max_iterations=50)
        except DaeError as error:
            raise DaeError(f"robot {self.robot.name}: no consistent initial state at theta(t0) = {theta0.tolist()} "
                           f"from q_g_guess {q_g.tolist()}: {error}") from None
        solution = np.array(solution).ravel()
        x0 = np.zeros(lay.size)
        x0[lay.q_a] = solution[:m.na]
        x0[lay.q_m] = solution[m.na:]
        return x0

    def rank_deficiency(self, x: np.ndarray, h: float) -> int:
        """Rank deficiency of dF/d(highest derivatives) at x (section 7.3): the columns of the algebraic unknowns
        (x) and of the differentiated ones (x'), chosen per unknown as the paper's [X1, X2', X3', X4, X5', X6, X^4]
        for eq. 19. Zero for an index-1 system (eq. 19 with damping)."""
        fx, fxd = (np.array(a) for a in self.structure(x, np.zeros_like(x), self.reference_vector(0.0),
                                                         self.scales(h, False)))
        lay, ext = self.layout, self.model.ext
        differential = np.zeros(lay.size, dtype=bool)
        differential[[lay.q_a.start + int(i) for i in ext.elastic_index]] = True  # X2 = q_e
        differential[lay.q_m] = True                                             # X3 = q_m
        differential[[lay.v_a.start + int(i) for i in ext.elastic_index]] = True  # X5 = v_e
        columns = np.where(differential[None, :], fxd, fx)
        return lay.size - int(np.linalg.matrix_rank(columns))
