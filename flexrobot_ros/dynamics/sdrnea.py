"""SDRNEA: symbolic recursive Newton-Euler differentiated by the chain rule (thesis ch. 4, Algorithms 1 and 2).

The robot's numeric parameters are substituted while the expressions are built (CasADi SX), so zero and unit
parameters fold away (a DH robot's zero offsets, axis-aligned joints, symmetric inertias cost nothing).

* **SRNEA** (Algorithm 1): the forward recursion computes the angular velocities ``omega_i``, then the angular
  accelerations ``omegadot_i``, then the linear accelerations ``a_i`` of the joint-frame origins, each from its
  parent joint's (gravity enters as the base's ``a_0 = -g``); the backward recursion computes the inertial forces
  ``f_c,i``, the forces ``f_i`` and moments ``n_i`` acting on link i (its own plus those its child joints transmit:
  one child on a serial chain, any number on a tree, :mod:`.kinematic_tree`), and ``tau_i``. Every saved quantity
  (``SaveExpressions``) is replaced by a new intermediate symbol ``s_k`` (``ReplaceExpressions``), so each
  definition ``s_k = f_k(q, qd, qdd, s_1..s_k-1)`` is short. Frames are pinocchio's joint frames, so the same code
  covers DH and URDF robots and revolute and prismatic joints.
* **DRNEA** (Algorithm 2): the first and second time derivatives of every ``s_k`` follow by the chain rule
  (eqs. 4.19-4.24), ``u_k = df_k/dq* . qdot* + sum_j df_k/ds_j u_j``, computed as a forward directional derivative
  of each short definition, with the structural shortcut of eq. 4.20: the derivative of an ``omega`` symbol is
  the matching ``omegadot`` symbol (a body-frame component derivative of omega equals omegadot).
* The definitions are then substituted into one another (SX keeps shared nodes), common subexpressions are merged
  (``casadi.cse``) and the result is one CasADi ``Function`` ``x -> y`` with the packed input
  ``x = [q, qd, qdd, q''', q'''']`` (5n) and the packed output ``y = [tau, dtau, ddtau]`` (3n), extended by
  ``[q_m, qd_m, qdd_m, tau_m]`` (7n in all) when joint flexibility parameters are given (:mod:`.flexible_joint`).

:func:`operation_counts` counts the generated operations the way the thesis reports them (additions/subtractions,
multiplications, trigonometric functions). Compilation, caching and fast calls live in :mod:`.codegen` (with
:func:`~.codegen.sdrnea`, the compiled evaluation).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Sequence

import casadi as cs
import numpy as np

from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, motor_side
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.errors import TrajectoryError

#: Bumped whenever the generated expressions change (part of the cache key).
GENERATOR_VERSION = "sdrnea-1"
#: Output blocks of the generated function, each n long, in order.
RIGID_OUTPUTS = ("tau", "dtau", "ddtau")
MOTOR_OUTPUTS = ("q_m", "qd_m", "qdd_m", "tau_m")
#: Geometric and inertial constants closer than this to 0 or +-1 are taken as exactly 0 or +-1 (round-off of
#: cos(pi/2) and the like in URDF placements), so that they fold out of the generated code.
SNAP_TOLERANCE = 1e-14

Vector = list  # three SX scalars


def _snap(values: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=float)
    out[np.abs(out) < SNAP_TOLERANCE] = 0.0
    out[np.abs(out - 1.0) < SNAP_TOLERANCE] = 1.0
    out[np.abs(out + 1.0) < SNAP_TOLERANCE] = -1.0
    return out


def _matvec(matrix: np.ndarray, x: Vector) -> Vector:
    """matrix @ x for a constant 3x3 matrix, skipping zero and unit factors."""
    out = []
    for row in matrix:
        acc = cs.SX(0)
        for c, xi in zip(row, x):
            if c == 0.0:
                continue
            acc = acc + (xi if c == 1.0 else -xi if c == -1.0 else c * xi)
        out.append(acc)
    return out


def _cross(a: Vector, b: Vector) -> Vector:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _add(*vectors: Vector) -> Vector:
    return [sum(components[1:], components[0]) for components in zip(*vectors)]


def _scale(c: Any, x: Vector) -> Vector:
    return [c * xi for xi in x]


class _JointRotation:
    """Rotation of joint frame i relative to its parent, R = R0 exp(hat(axis) q), applied to SX vectors."""

    def __init__(self, rotation: np.ndarray, axis: np.ndarray, revolute: bool, q: cs.SX):
        self.r0 = rotation
        self.axis = axis
        self.revolute = revolute
        if revolute:
            self.cos, self.sin = cs.cos(q), cs.sin(q)

    def _exp(self, x: Vector, sign: float) -> Vector:
        """exp(sign * hat(axis) q) x, written out for axis-aligned axes (Rodrigues' formula otherwise)."""
        if not self.revolute:
            return x
        c, s = self.cos, sign * self.sin
        aligned = np.flatnonzero(self.axis)
        if aligned.size == 1:
            k = int(aligned[0])
            i, j = (k + 1) % 3, (k + 2) % 3
            s = s * self.axis[k]  # axis = +-e_k
            out = list(x)
            out[i] = c * x[i] - s * x[j]
            out[j] = s * x[i] + c * x[j]
            return out
        ax = _cross(list(self.axis), x)
        dot = sum((a * xi for a, xi in zip(self.axis, x) if a != 0.0), cs.SX(0))
        return [c * xi + s * axi + (1 - c) * dot * a for xi, axi, a in zip(x, ax, self.axis)]

    def to_child(self, x: Vector) -> Vector:
        """R^T x."""
        return self._exp(_matvec(self.r0.T, x), -1.0)

    def to_parent(self, x: Vector) -> Vector:
        """R x."""
        return _matvec(self.r0, self._exp(x, 1.0))


class _Sequence:
    """Intermediate symbols s_k and their definitions (SaveExpressions / ReplaceExpressions of Algorithm 1)."""

    def __init__(self) -> None:
        self.symbols: list[cs.SX] = []
        self.definitions: list[cs.SX] = []
        self.index: dict[str, int] = {}  # symbol name -> k

    def save(self, expressions: Vector, prefix: str) -> Vector:
        out = []
        for component, expression in zip("xyz", expressions):
            expression = cs.SX(expression)
            if expression.is_constant() or expression.is_symbolic():
                out.append(expression)  # nothing to replace
                continue
            symbol = cs.SX.sym(f"{prefix}{component}")
            self.index[symbol.name()] = len(self.symbols)
            self.symbols.append(symbol)
            self.definitions.append(expression)
            out.append(symbol)
        return out


@dataclass(frozen=True)
class OperationCounts:
    """Operations in a generated function, counted like Maple's ``codegen[cost]`` in the thesis."""

    additions: int        # additions, subtractions, negations
    multiplications: int  # multiplications, divisions, squares
    trigonometric: int    # sin, cos
    other: int            # anything else (tanh of the friction model, ...)

    @classmethod
    def of(cls, function: cs.Function) -> "OperationCounts":
        add = {cs.OP_ADD, cs.OP_SUB, cs.OP_NEG}
        mul = {cs.OP_MUL, cs.OP_DIV, cs.OP_SQ, cs.OP_TWICE, cs.OP_INV}
        trig = {cs.OP_SIN, cs.OP_COS, cs.OP_TAN}
        free = {cs.OP_CONST, cs.OP_INPUT, cs.OP_OUTPUT, cs.OP_PARAMETER, cs.OP_ASSIGN}
        counts = dict(additions=0, multiplications=0, trigonometric=0, other=0)
        for k in range(function.n_instructions()):
            op = function.instruction_id(k)
            if op in add:
                counts["additions"] += 1
            elif op in mul:
                counts["multiplications"] += 1
            elif op in trig:
                counts["trigonometric"] += 1
            elif op not in free:
                counts["other"] += 1
        return cls(**counts)


def symbolic_rnea(tree: KinematicTree, q: Sequence[cs.SX], qd: Sequence[cs.SX], qdd: Sequence[cs.SX]
                  ) -> tuple[_Sequence, list[cs.SX], dict[int, cs.SX]]:
    """Algorithm 1 (SRNEA): the intermediate sequence, tau_1..tau_n, and the omega -> omegadot symbol map."""
    n = tree.n
    seq = _Sequence()
    rotation = [_JointRotation(_snap(tree.rotation[i]), _snap(tree.axis[i]), bool(tree.revolute[i]), q[i])
                for i in range(n)]
    axis = [_snap(tree.axis[i]) for i in range(n)]
    p0 = [_snap(tree.translation[i]) for i in range(n)]
    axis_in_parent = [_snap(tree.rotation[i]) @ axis[i] for i in range(n)]

    def origin(i: int) -> Vector:
        """Position of joint frame i's origin in its parent's frame."""
        p = [cs.SX(x) for x in p0[i]]
        if not tree.revolute[i]:
            p = _add(p, _scale(q[i], [cs.SX(x) for x in axis_in_parent[i]]))
        return p

    zero = [cs.SX(0)] * 3
    parents = [int(p) for p in tree.parents]
    omega, omegadot, acc = [], [], []
    for i in range(n):  # angular velocities
        w = rotation[i].to_child(zero if parents[i] < 0 else omega[parents[i]])
        if tree.revolute[i]:
            w = _add(w, _scale(qd[i], list(axis[i])))
        omega.append(seq.save(w, f"w{i + 1}"))
    for i in range(n):  # angular accelerations
        wd = rotation[i].to_child(zero if parents[i] < 0 else omegadot[parents[i]])
        if tree.revolute[i]:
            wd = _add(wd, _scale(qdd[i], list(axis[i])), _scale(qd[i], _cross(omega[i], list(axis[i]))))
        omegadot.append(seq.save(wd, f"wd{i + 1}"))
    base_acc = [cs.SX(-x) for x in _snap(tree.gravity)]
    for i in range(n):  # linear accelerations of the joint-frame origins
        p = origin(i)
        if parents[i] < 0:
            parent_acc, parent_w, parent_wd = base_acc, zero, zero
        else:
            parent_acc, parent_w, parent_wd = acc[parents[i]], omega[parents[i]], omegadot[parents[i]]
        a = _add(parent_acc, _cross(parent_wd, p), _cross(parent_w, _cross(parent_w, p)))
        a = rotation[i].to_child(a)
        if not tree.revolute[i]:
            a = _add(a, _scale(qdd[i], list(axis[i])), _scale(2 * qd[i], _cross(omega[i], list(axis[i]))))
        acc.append(seq.save(a, f"a{i + 1}"))
    tau: list[cs.SX] = [cs.SX(0)] * n
    forces: list[Vector] = [zero] * n
    moments: list[Vector] = [zero] * n
    for i in reversed(range(n)):  # backward recursion: every child before its parent
        m = float(tree.mass[i])
        c = _snap(tree.com[i])
        inertia_origin = _snap(tree.inertia[i] + m * (c @ c * np.eye(3) - np.outer(c, c)))
        cv = [cs.SX(x) for x in c]
        w, wd, a = omega[i], omegadot[i], acc[i]
        fc = seq.save(_scale(m, _add(a, _cross(wd, cv), _cross(w, _cross(w, cv)))), f"fc{i + 1}")
        moment = _add(_matvec(inertia_origin, wd), _cross(w, _matvec(inertia_origin, w)),
                      _scale(m, _cross(cv, a)))
        force = fc
        for child in tree.children(i):
            transmitted = rotation[child].to_parent(forces[child])
            force = _add(force, transmitted)
            moment = _add(moment, rotation[child].to_parent(moments[child]), _cross(origin(child), transmitted))
        forces[i] = seq.save(force, f"f{i + 1}")
        moments[i] = seq.save(moment, f"n{i + 1}")
        projected = moments[i] if tree.revolute[i] else forces[i]
        t = sum((ai * pi for ai, pi in zip(axis[i], projected) if ai != 0.0), cs.SX(0))
        if tree.armature[i] != 0.0:
            t = t + float(tree.armature[i]) * qdd[i]
        tau[i] = t
    tau = [seq.save([t, 0, 0], f"tau{i + 1}")[0] for i, t in enumerate(tau)]
    omega_to_omegadot: dict[int, cs.SX] = {}
    for i, w in enumerate(omega):
        for component in range(3):
            if w[component].is_symbolic() and w[component].name() in seq.index:
                omega_to_omegadot[seq.index[w[component].name()]] = omegadot[i][component]
    return seq, tau, omega_to_omegadot


def sdrnea_function(tree: KinematicTree, flexibility: JointFlexibility | None = None,
                    name: str = "sdrnea") -> cs.Function:
    """The CasADi function x = [q, qd, qdd, q3, q4] (5n) -> y = [tau, dtau, ddtau(, q_m, qd_m, qdd_m, tau_m)]."""
    n = tree.n
    x = cs.SX.sym("x", 5 * n)
    q, qd, qdd, q3, q4 = ([x[k * n + i] for i in range(n)] for k in range(5))
    seq, tau, omega_map = symbolic_rnea(tree, q, qd, qdd)
    s = seq.symbols
    state = cs.vertcat(*q, *qd, *qdd)
    state_rate = cs.vertcat(*qd, *qdd, *q3)
    # Algorithm 2, first derivative: u_k = d s_k / dt
    u_seed, u_symbols, u_index = [], [], []
    for k, symbol in enumerate(s):
        if k in omega_map:  # eq. 4.20: d omega / dt = omegadot
            u_seed.append(cs.SX(omega_map[k]))
        else:
            u = cs.SX.sym(f"u_{symbol.name()}")
            u_symbols.append(u)
            u_index.append(k)
            u_seed.append(u)
    definitions = cs.vertcat(*[seq.definitions[k] for k in u_index])
    u_definitions = cs.jtimes(definitions, cs.vertcat(state, *s), cs.vertcat(state_rate, *u_seed))
    # second derivative: v_k = d u_k / dt
    v_symbols = [cs.SX.sym(f"v_{s[k].name()}") for k in u_index]
    v_of = dict(zip((u.name() for u in u_symbols), v_symbols))
    v_seed = [v_of[u.name()] for u in u_symbols]
    v_definitions = cs.jtimes(u_definitions, cs.vertcat(state, *q3, *s, *u_symbols),
                              cs.vertcat(state_rate, *q4, *u_seed, *v_seed))
    tau_v = cs.vertcat(*tau)
    dtau = cs.jtimes(tau_v, cs.vertcat(state, *s), cs.vertcat(state_rate, *u_seed))
    ddtau = cs.jtimes(dtau, cs.vertcat(state, *q3, *s, *u_symbols), cs.vertcat(state_rate, *q4, *u_seed, *v_seed))
    outputs = [tau_v, dtau, ddtau]
    if flexibility is not None:
        params = SimpleNamespace(**{field: cs.DM(np.asarray(getattr(flexibility, field), dtype=float))
                                    for field in JointFlexibility.__dataclass_fields__})
        motor = motor_side(params, cs.vertcat(*q), cs.vertcat(*qd), cs.vertcat(*qdd), cs.vertcat(*q3),
                           tau_v, dtau, ddtau, tanh=cs.tanh)
        outputs += [motor.q_m, motor.qd_m, motor.qdd_m, motor.tau_m]
    symbols = [*s, *u_symbols, *v_symbols]
    values = [*seq.definitions, *cs.vertsplit(u_definitions), *cs.vertsplit(v_definitions)]
    _, resolved = cs.substitute_inplace(symbols, values, [cs.vertcat(*outputs)], False)
    y = cs.cse(resolved[0])
    return cs.Function(name, [x], [y], ["x"], ["y"])


def output_names(flexible: bool) -> tuple[str, ...]:
    """Names of the n-long blocks of the generated function's output."""
    return RIGID_OUTPUTS + (MOTOR_OUTPUTS if flexible else ())


def pack_inputs(n: int, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> tuple[np.ndarray, bool]:
    """(samples, 5n) C-contiguous packed inputs and whether a single (n,) sample was given."""
    arrays = [np.asarray(v, dtype=float) for v in (q, qd, qdd, q3, q4)]
    single = arrays[0].ndim == 1
    arrays = [np.atleast_2d(v) for v in arrays]
    for field, v in zip(("q", "qd", "qdd", "q3", "q4"), arrays):
        if v.ndim != 2 or v.shape != arrays[0].shape or v.shape[1] != n:
            raise TrajectoryError(f"{field}: shape {v.shape}; expected (samples, {n}) like q")
    return np.ascontiguousarray(np.concatenate(arrays, axis=1)), single
