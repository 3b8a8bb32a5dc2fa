"""The generalized inertia matrix of a flexible-link chain (composite bodies, seed 003 eq. 32) and the
non-recursive forward dynamics that factorizes it (Cholesky), the paper's section 7.2 reference.

``I_ij = P_i^T M~_i A_{i,j} P_j`` for j = i and its ancestors, with the composite flexible body ``M~_i = M_i +
sum_c A_{c,i}^T M~_c A_{c,i}`` over the children c of body i (seed 003 eq. 32 with the erratum A_{i,i+1} ->
A_{i+1,i}; c = i+1 on a serial chain) and ``A_{i,j} = A_{i,i-1} ... A_{j+1,j}`` along the path from j to i (i-1 the
parent, :attr:`~.flexible_chain.FlexibleLinkChain.parents`); blocks of bodies on different branches are zero.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from flexrobot_ros.flexible_links.flexible_chain import ChainState, FlexibleLinkChain
from flexrobot_ros.flexible_links.inverse_dynamics import generalized_forces


def _P(chain: FlexibleLinkChain, i: int) -> np.ndarray:
    body = chain.bodies[i]
    P = np.zeros((6 + body.m, 1 + body.m))
    P[:6, 0] = body.motion_subspace
    P[6:, 1:] = np.eye(body.m)
    return P


def generalized_inertia(chain: FlexibleLinkChain, state: ChainState) -> np.ndarray:
    """I (size, size), symmetric positive definite, in the chain's coordinate order [theta, eta]."""
    composite = list(state.M)
    for i in range(chain.n - 1, -1, -1):  # every child is complete before its parent takes it
        k = chain.parents[i]
        if k >= 0:
            composite[k] = composite[k] + state.A[i].T @ composite[i] @ state.A[i]
    inertia = np.zeros((chain.size, chain.size))
    for i in range(chain.n):
        rows = chain.block_indices(i)
        B = _P(chain, i).T @ composite[i]
        j = i
        while j >= 0:  # body i and its ancestors
            cols = chain.block_indices(j)
            block = B @ _P(chain, j)
            inertia[np.ix_(rows, cols)] = block
            inertia[np.ix_(cols, rows)] = block.T
            if chain.parents[j] >= 0:
                B = B @ state.A[j]
            j = chain.parents[j]
    return inertia


def forward_dynamics_cholesky(chain: FlexibleLinkChain, y: np.ndarray, y_dot: np.ndarray,
                              tau: np.ndarray) -> np.ndarray:
    """y_ddot (size,) from the assembled inertia matrix, factorized by Cholesky; ``tau`` (size,) generalized
    forces (joint torques in the first n entries, usually zeros on the elastic rows)."""
    state = chain.propagate(y, y_dot)
    h = generalized_forces(chain, state, np.zeros(chain.size))
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(generalized_inertia(chain, state)), tau - h)


__all__ = ["forward_dynamics_cholesky", "generalized_inertia"]
