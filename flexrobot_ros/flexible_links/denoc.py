"""Recursive forward dynamics of a flexible-link chain: the DeNOC U D U^T algorithm of seed 003 section 5.

With the chain's quantities of :mod:`.flexible_chain` (A_{i,i-1}, P_i, body inertias M_i) and
phi = tau - h(y, y_dot) (h from the recursive inverse dynamics at zero acceleration, including the +gamma term
missing in the printed eq. 33), the generalized inertia I = U D U^T is never formed:

* backward, i = n..1 (eqs. 36-38, A_{i,i+1} -> A_{i+1,i}; on a tree the sums over the children c of body i,
  c = i+1 on a serial chain, :attr:`~.flexible_chain.FlexibleLinkChain.parents`): articulated flexible body
  ``M^_i = M_i + A_{i+1,i}^T M-_{i+1} A_{i+1,i}``, ``Psi^_i = M^_i P_i``, ``I^_i = P_i^T Psi^_i``,
  ``Psi_i = Psi^_i I^_i^{-1}``, ``M-_i = M^_i - Psi^_i Psi_i^T``; step A (eq. 39, eta_i -> eta-bar_i):
  ``eta-bar_i = A_{i+1,i}^T eta_{i+1}``, ``phi^_i = phi_i - P_i^T eta-bar_i``, ``eta_i = Psi_i phi^_i + eta-bar_i``;
  step B (eq. 40): ``phi~_i = I^_i^{-1} phi^_i``;
* forward, i = 1..n (eqs. 41-42; i-1 the parent): ``mu-bar_i = A_{i,i-1} mu_{i-1}``,
  ``q_ddot_i = phi~_i - Psi_i^T mu-bar_i``, ``mu_i = P_i q_ddot_i + mu-bar_i``.

Cost O(n) in the number of links and O(m^3) per link in its elastic coordinates (the (1+m_i) blocks I^_i).
"""
from __future__ import annotations

import numpy as np

from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.inverse_dynamics import generalized_forces


def forward_dynamics(chain: FlexibleLinkChain, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """y_ddot (size,) for generalized forces ``tau`` (size,), by the recursive DeNOC algorithm."""
    state = chain.propagate(y, y_dot)
    phi = np.asarray(tau, dtype=float) - generalized_forces(chain, state, np.zeros(chain.size))
    n = chain.n
    psi_list: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    phi_tilde: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    m_hat_list = list(state.M)  # M^_i, completed by the children before body i is reached
    eta_bar_list: list[np.ndarray | None] = [None] * n  # eta-bar_i: sum of A_{c,i}^T eta_c over the children c
    for i in range(n - 1, -1, -1):
        body = chain.bodies[i]
        m_hat = m_hat_list[i]
        psi_hat = np.empty((6 + body.m, 1 + body.m))
        psi_hat[:, 0] = m_hat[:, :6] @ body.motion_subspace
        psi_hat[:, 1:] = m_hat[:, 6:]
        i_hat = np.empty((1 + body.m, 1 + body.m))
        i_hat[0] = body.motion_subspace @ psi_hat[:6]
        i_hat[1:] = psi_hat[6:]
        i_hat_inv = np.linalg.inv(i_hat)                                        # (1 + m_i) block, SPD
        psi = psi_hat @ i_hat_inv                                                # Psi^ I^^-1
        m_bar = m_hat - psi_hat @ psi.T
        rows = chain.block_indices(i)
        phi_hat = phi[rows].copy()
        eta_bar = np.zeros(6 + body.m) if eta_bar_list[i] is None else eta_bar_list[i]
        phi_hat[0] -= body.motion_subspace @ eta_bar[:6]
        phi_hat[1:] -= eta_bar[6:]
        eta = psi @ phi_hat + eta_bar
        phi_tilde[i] = i_hat_inv @ phi_hat
        psi_list[i] = psi
        k = chain.parents[i]
        if k >= 0:
            m_hat_list[k] = m_hat_list[k] + state.A[i].T @ m_bar @ state.A[i]
            passed = state.A[i].T @ eta
            eta_bar_list[k] = passed if eta_bar_list[k] is None else eta_bar_list[k] + passed
    y_ddot = np.zeros(chain.size)
    mu: list[np.ndarray] = []
    for i, body in enumerate(chain.bodies):
        k = chain.parents[i]
        mu_bar = np.zeros(6 + body.m) if k < 0 else state.A[i] @ mu[k]
        q_ddot = phi_tilde[i] - psi_list[i].T @ mu_bar
        y_ddot[chain.block_indices(i)] = q_ddot
        mu_i = mu_bar.copy()
        mu_i[:6] += body.motion_subspace * q_ddot[0]
        mu_i[6:] += q_ddot[1:]
        mu.append(mu_i)
    return y_ddot


__all__ = ["forward_dynamics"]
