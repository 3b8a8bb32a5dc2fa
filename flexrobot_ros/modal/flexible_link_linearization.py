"""Linearized dynamics of a robot with flexible links about a held pose: closed-loop and locked-joint modes.

Coordinates ``z = [theta (n), eta (m), q_m (elastic joints)]``: the chain's joint and elastic coordinates
(:mod:`flexrobot_ros.flexible_links.flexible_chain`), then the motor angles of the joints that are elastic in the
flexibility YAML.
About the static equilibrium ``y* = [theta_d, eta*]`` (eta* the beams' static deflection under gravity, zero
without gravity)::

    M_bar = blockdiag(I(y*), B_e)
    K_bar = dh/dy (y*, 0) + joint terms,   D_bar = dh/dy_dot (y*, 0) + joint terms

``h`` the chain's bias forces (strain, gravity, modal damping; central differences of the recursive inverse
dynamics, or of the Lagrangian for a chain with a sliding beam: :mod:`flexrobot_ros.flexible_links.chain_dynamics`).
Joint terms: a rigid joint held by the PD law ``tau = K_P (theta_d - theta) - K_D theta_dot`` adds K_P, K_D and its
link damping on its own row; an elastic joint (seed 000 eq. 2.11) adds ``k W^2`` on theta,
``-k W`` coupling, ``k + K_P`` and ``D_m + K_D`` on its motor, its link damping on theta.

``locked_joints=True`` keeps only eta: the structural modes of the arm with every joint braked (a clamped frame),
what a hammer test on a braked robot measures.

The result is :class:`~flexrobot_ros.modal.modes.ModalResult` (same ``frequencies_hz``,
``damping_ratios`` conventions); its ``linearized.q`` is theta_d, ``linearized.q_m`` the motor set points.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.control.decoupling_gains import DEFAULT_GP, DEFAULT_GV, decoupling_gains
from flexrobot_ros.errors import ModalError, ModelError
from flexrobot_ros.flexible_links.chain_dynamics import chain_dynamics
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.modal.linearization import LinearizedModel
from flexrobot_ros.modal.modes import ModalResult, modes_of


def static_deflection(chain: FlexibleLinkChain, theta: np.ndarray, iterations: int = 20) -> np.ndarray:
    """eta* (m,) with the elastic rows of h(theta, eta*, 0) zero (the beams' sag under gravity), by Newton steps."""
    try:
        chain.check_free_lengths(theta)
    except ModelError as error:
        raise ModalError(str(error)) from None
    eta = np.zeros(chain.m)
    if chain.m == 0:
        return eta
    rows = slice(chain.n, chain.size)
    dynamics = chain_dynamics(chain)
    for _ in range(iterations):
        y = np.concatenate([theta, eta])
        residual = dynamics.bias(y, np.zeros(chain.size))[rows]
        if not np.any(residual):  # at equilibrium already (no gravity: the undeformed beams)
            break
        jacobian = _jacobian(chain, y, np.zeros(chain.size), wrt_velocity=False)[rows, rows]
        step = np.linalg.solve(jacobian, -residual)
        eta = eta + step
        if np.max(np.abs(step)) < 1e-14 * max(1.0, np.max(np.abs(eta))):
            break
    return eta


def _jacobian(chain: FlexibleLinkChain, y: np.ndarray, y_dot: np.ndarray, wrt_velocity: bool) -> np.ndarray:
    """dh/dy or dh/dy_dot (size, size) by central differences (step scaled to each coordinate)."""
    out = np.zeros((chain.size, chain.size))
    bias = chain_dynamics(chain).bias
    for k in range(chain.size):
        step = 1e-6
        plus, minus = (y.copy(), y.copy()) if not wrt_velocity else (y_dot.copy(), y_dot.copy())
        plus[k] += step
        minus[k] -= step
        if wrt_velocity:
            out[:, k] = (bias(y, plus) - bias(y, minus)) / (2 * step)
        else:
            out[:, k] = (bias(plus, y_dot) - bias(minus, y_dot)) / (2 * step)
    return out


def _held_pose(robot: Any, chain: FlexibleLinkChain, q_d: Any) -> tuple[np.ndarray, ...]:
    """(theta, I, dh/dy, dh/dy_dot) of the chain at rest at ``q_d`` (n,), beams at their static deflection."""
    theta = np.asarray(q_d, dtype=float)
    if theta.shape != (chain.n,) or not np.all(np.isfinite(theta)):
        raise ModalError(f"robot {robot.name}: q: expected {chain.n} finite values for joints "
                         f"{list(chain.joint_names)}, got {np.asarray(q_d).tolist()}")
    y = np.concatenate([theta, static_deflection(chain, theta)])
    zero = np.zeros(chain.size)
    return (theta, chain_dynamics(chain).inertia(y), _jacobian(chain, y, zero, wrt_velocity=False),
            _jacobian(chain, y, zero, wrt_velocity=True))


def linearize_flexible_links(robot: Any, chain: FlexibleLinkChain, q_d: Any, kp: Any = None, kd: Any = None,
                             locked_joints: bool = False) -> LinearizedModel:
    """M_bar, D_bar, K_bar of the robot held at ``q_d`` (n,) (see the module docstring)."""
    theta, inertia, stiffness, damping = _held_pose(robot, chain, q_d)
    if locked_joints:
        rows = slice(chain.n, chain.size)
        if chain.m == 0:
            raise ModalError(f"robot {robot.name}: --locked-joints needs flexible links (this robot has none)")
        return LinearizedModel(q=theta, q_m=np.zeros(0), M_bar=inertia[rows, rows], D_bar=damping[rows, rows],
                               K_bar=stiffness[rows, rows], K_G=np.zeros((0, 0)))
    n = chain.n
    rigid = [name in robot.rigid_joints for name in chain.joint_names]
    elastic = [i for i in range(n) if not rigid[i]]
    kp = robot.kp if kp is None else np.broadcast_to(np.asarray(kp, dtype=float), (n,))
    kd = robot.kd if kd is None else np.broadcast_to(np.asarray(kd, dtype=float), (n,))
    size = chain.size + len(elastic)
    M, D, K = (np.zeros((size, size)) for _ in range(3))
    M[:chain.size, :chain.size] = inertia
    D[:chain.size, :chain.size] = damping
    K[:chain.size, :chain.size] = stiffness
    for i in range(n):
        D[i, i] += robot.link_damping[i]
        if rigid[i]:
            K[i, i] += kp[i]
            D[i, i] += kd[i]
    q_m = np.zeros(len(elastic))
    for e, i in enumerate(elastic):
        r = chain.size + e
        k, w = robot.stiffness[i], robot.transmission[i]
        M[r, r] = robot.motor_inertia[i]
        K[i, i] += k * w * w
        K[i, r] = K[r, i] = -k * w
        K[r, r] = k + kp[i]
        D[r, r] = robot.motor_damping[i] + kd[i]
        q_m[e] = w * theta[i]
    return LinearizedModel(q=theta, q_m=q_m, M_bar=M, D_bar=D, K_bar=K, K_G=stiffness[:n, :n])


def linearize_decoupled(robot: Any, chain: FlexibleLinkChain, q_d: Any, gp: Any, gv: Any) -> LinearizedModel:
    """M_bar, D_bar, K_bar of the robot held at ``q_d`` (n,) by seed 004's decoupling law (eqs. 31-33, exact model):
    eqs. 35-36 linearized about the pose at rest, coordinates z = [e = q_r - q_d (n), q_f - eta* (m)]::

        e_ddot + G_v e_dot + G_p e = 0                                        (eq. 34)
        M_ff q_f_ddot + dh_f/dy_dot z_dot + dh_f/dy z - M_rf^T (G_p e + G_v e_dot) = 0      (eq. 36)

    (u = -G_p e - G_v e_dot in eq. 36)

    so ``M_bar = blockdiag(I, M_ff)`` (symmetric positive definite). The system is block triangular: its
    eigenvalues are the joint loop's (s^2 + G_v s + G_p = 0, per joint) and the beams' with every joint locked,
    which the mode shapes' q rows tell apart (zero on the beam modes). ``gp`` [1/s^2], ``gv`` [1/s]: n positive
    gains, one, or None for the defaults (:func:`~flexrobot_ros.control.decoupling_gains.decoupling_gains`).
    Every joint must be rigid (``rigid: true``; the law of seed 004 drives the joints directly)."""
    elastic = [name for name in chain.joint_names if name not in robot.rigid_joints]
    if elastic:
        raise ModalError(f"robot {robot.name}: decoupling control (seed 004) needs rigid joints; joint(s) {elastic} "
                         "are elastic")
    n, size = chain.n, chain.size
    gp, gv = decoupling_gains(gp, n, DEFAULT_GP, "gp"), decoupling_gains(gv, n, DEFAULT_GV, "gv")
    theta, inertia, stiffness, damping = _held_pose(robot, chain, q_d)
    beams = slice(n, size)
    coupling = inertia[:n, beams].T                                   # M_rf^T (m, n)
    M, D, K = np.zeros((size, size)), np.zeros((size, size)), np.zeros((size, size))
    M[:n, :n], M[beams, beams] = np.eye(n), inertia[beams, beams]
    D[:n, :n], K[:n, :n] = np.diag(gv), np.diag(gp)
    D[beams], K[beams] = damping[beams], stiffness[beams]
    D[beams, :n] -= coupling * gv
    K[beams, :n] -= coupling * gp
    return LinearizedModel(q=theta, q_m=np.zeros(0), M_bar=M, D_bar=D, K_bar=K, K_G=stiffness[:n, :n])


def flexible_link_modes(robot: Any, chain: FlexibleLinkChain, q_d: Any, kp: Any = None, kd: Any = None,
                        locked_joints: bool = False, decoupling: tuple[Any, Any] | None = None) -> ModalResult:
    """Modes (frequencies ascending, damping ratios as fractions) of the linearized flexible-link robot: held by the
    PD law (``kp``, ``kd``), with every joint locked, or, ``decoupling=(G_p, G_v)``, by seed 004's decoupling law
    (:func:`linearize_decoupled`)."""
    if decoupling is not None:
        return modes_of(linearize_decoupled(robot, chain, q_d, *decoupling))
    return modes_of(linearize_flexible_links(robot, chain, q_d, kp=kp, kd=kd, locked_joints=locked_joints))


__all__ = ["flexible_link_modes", "linearize_decoupled", "linearize_flexible_links", "static_deflection"]
