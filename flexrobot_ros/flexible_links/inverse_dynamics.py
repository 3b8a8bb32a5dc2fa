"""Inverse dynamics of a flexible-link chain: generalized forces for given accelerations (recursive, O(n)).

Seed 003 eqs. 21-29: outward ``t_dot_i = A_{i,i-1} t_dot_{i-1} + P_i q_ddot_i + c_i`` from the base acceleration
``[-g; 0]``, body wrenches ``w_i = M_i t_dot_i + gamma_i`` (strain and modal damping in gamma's elastic rows), inward
``W_i = w_i + sum_c A_{c,i}^T W_c`` over the children c of body i (i+1 on a serial chain; i-1 is the parent,
:attr:`FlexibleLinkChain.parents`) and ``tau_i = P_i^T W_i``. The result, in the chain's coordinate order
``[theta (n), eta (m)]``, is ``I(y) y_ddot + h(y, y_dot)``; its elastic rows vanish on a motion the beams can
actually perform freely. With zero accelerations it is the bias h that the forward dynamics subtracts.
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.flexible_links.flexible_chain import ChainState, FlexibleLinkChain


def body_accelerations(chain: FlexibleLinkChain, state: ChainState, y_ddot: np.ndarray) -> list[np.ndarray]:
    """t_dot_i for every body (6 + m_i,)."""
    theta_dd, eta_dd = chain.split(y_ddot)
    out: list[np.ndarray] = []
    for i, body in enumerate(chain.bodies):
        k = chain.parents[i]
        acc = state.A[i] @ (state.base_acceleration if k < 0 else out[k]) + state.c[i]
        acc[:6] += body.motion_subspace * theta_dd[i]
        acc[6:] += eta_dd[i]
        out.append(acc)
    return out


def generalized_forces(chain: FlexibleLinkChain, state: ChainState, y_ddot: np.ndarray) -> np.ndarray:
    """tau (size,) = I y_ddot + h for a pass ``state`` of :meth:`FlexibleLinkChain.propagate`."""
    accelerations = body_accelerations(chain, state, y_ddot)
    tau = np.zeros(chain.size)
    children: list[np.ndarray | None] = [None] * chain.n  # sum of A_{c,i}^T W_c over the children c of body i
    for i in range(chain.n - 1, -1, -1):
        body = chain.bodies[i]
        wrench = state.M[i] @ accelerations[i] + state.gamma[i]
        if children[i] is not None:
            wrench = wrench + children[i]
        tau[i] = body.motion_subspace @ wrench[:6]
        tau[chain.n + body.eta.start:chain.n + body.eta.stop] = wrench[6:]
        k = chain.parents[i]
        if k >= 0:
            passed = state.A[i].T @ wrench
            children[k] = passed if children[k] is None else children[k] + passed
    return tau


def inverse_dynamics(chain: FlexibleLinkChain, y: np.ndarray, y_dot: np.ndarray, y_ddot: np.ndarray) -> np.ndarray:
    """Generalized forces (size,) [N m | N for joints, N for elastic rows] that produce ``y_ddot``."""
    return generalized_forces(chain, chain.propagate(y, y_dot), np.asarray(y_ddot, dtype=float))


def bias_forces(chain: FlexibleLinkChain, y: np.ndarray, y_dot: np.ndarray) -> np.ndarray:
    """h(y, y_dot) (size,): Coriolis/centrifugal, gravity, strain and damping forces (inverse dynamics at rest)."""
    return inverse_dynamics(chain, y, y_dot, np.zeros(chain.size))


__all__ = ["bias_forces", "body_accelerations", "generalized_forces", "inverse_dynamics"]
