"""The link-side dynamics ``I(y) y_ddot + h(y, y_dot) = tau`` of a flexible-link chain, whichever algorithm holds
the chain: the composite-body inertia and recursive bias of seed 003 (:mod:`.inertia_matrix`,
:mod:`.inverse_dynamics`), or, for a chain with a beam sliding through a prismatic joint's hub (seed 004 eqs.
18-22, which the recursion does not model), the CasADi Lagrangian of :mod:`.lagrangian`.

Coordinates ``y = [theta (n), eta (m)]`` in the chain's order; I [kg m^2 | kg m | kg], h and tau [N m | N] per row.

``inertia_and_bias`` remembers its results at the last ``8 size + 16`` states, and the inertia at as many
configurations: a controller that uses the model (the decoupling law of seed 004) and the plant it drives ask for
(I, h) at the same states (at every step, and over each central-difference Jacobian of the closed loop: the
controller's slope, then the plant's columns, 2 (2 size + 2 n) states at most), and the velocity columns of such a
Jacobian change h alone; a second request costs a dictionary lookup and copies, with the very same numbers.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.inertia_matrix import generalized_inertia
from flexrobot_ros.flexible_links.inverse_dynamics import bias_forces, generalized_forces


class ChainDynamics:
    """``inertia(y)``, ``bias(y, y_dot)`` and ``energy(y, y_dot)`` of one chain (numpy in, numpy out)."""

    def __init__(self, chain: FlexibleLinkChain):
        self.chain = chain
        self.lagrangian = None
        if chain.sliding:
            from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

            self.lagrangian = lagrangian_dynamics(chain)
        self._recent: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()   # (y, y_dot[, beta])
        self._recent_inertia: OrderedDict[bytes, np.ndarray] = OrderedDict()                  # (y[, beta])
        self._recent_size = 8 * chain.size + 16
        self._lock = threading.Lock()

    def inertia_and_bias(self, y: np.ndarray, y_dot: np.ndarray,
                         beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(I (size, size), h (size,)) at ``(y, y_dot)`` (new arrays, free to modify)."""
        y, y_dot = np.asarray(y, dtype=float), np.asarray(y_dot, dtype=float)
        configuration = y.tobytes() + (b"" if beta is None else np.asarray(beta, dtype=float).tobytes())
        key = configuration + y_dot.tobytes()
        with self._lock:
            found = self._recent.get(key)
            if found is not None:
                self._recent.move_to_end(key)
                return found[0].copy(), found[1].copy()
            inertia = self._recent_inertia.get(configuration)
        if self.lagrangian is not None:
            if inertia is None:
                inertia, bias = self.lagrangian.inertia_and_bias(y, y_dot, beta)
            else:
                bias = self.bias(y, y_dot, beta)
        else:
            state = self.chain.propagate(y, y_dot)
            if inertia is None:
                inertia = generalized_inertia(self.chain, state)
            bias = generalized_forces(self.chain, state, np.zeros(self.chain.size))
        with self._lock:
            self._remember(self._recent, key, (inertia.copy(), bias.copy()))
            self._remember(self._recent_inertia, configuration, inertia.copy())
        return inertia.copy(), bias

    def _remember(self, recent: OrderedDict, key: bytes, value) -> None:
        recent[key] = value
        recent.move_to_end(key)
        if len(recent) > self._recent_size:
            recent.popitem(last=False)

    def inertia(self, y: np.ndarray, beta: np.ndarray | None = None) -> np.ndarray:
        """I(y) (size, size), symmetric positive definite. ``beta``: root states of sliding beams with
        ``roots_state`` (None: their roots at y's free lengths)."""
        if self.lagrangian is not None:
            return self.lagrangian.evaluate("inertia", *self.lagrangian.arguments(y, beta))[0]
        return generalized_inertia(self.chain, self.chain.propagate(np.asarray(y, dtype=float),
                                                                    np.zeros(self.chain.size)))

    def bias(self, y: np.ndarray, y_dot: np.ndarray, beta: np.ndarray | None = None) -> np.ndarray:
        """h(y, y_dot) (size,): Coriolis/centrifugal, gravity, strain and modal damping forces."""
        if self.lagrangian is not None:
            y, *roots = self.lagrangian.arguments(y, beta)
            return self.lagrangian.evaluate("bias", y, y_dot, *roots)[0]
        return bias_forces(self.chain, y, y_dot)

    def energy(self, y: np.ndarray, y_dot: np.ndarray, beta: np.ndarray | None = None) -> tuple[float, float, float]:
        """(kinetic, strain, gravitational) energy [J]."""
        if self.lagrangian is not None:
            y, *roots = self.lagrangian.arguments(y, beta)
            kinetic, strain, gravity = self.lagrangian.evaluate("energy", y, y_dot, *roots)[0]
            return float(kinetic), float(strain), float(gravity)
        return self.chain.energy(y, y_dot)


_CACHE: "weakref.WeakKeyDictionary[FlexibleLinkChain, ChainDynamics]" = weakref.WeakKeyDictionary()


def chain_dynamics(chain: FlexibleLinkChain) -> ChainDynamics:
    """The :class:`ChainDynamics` of ``chain``, built once per chain (the Lagrangian of a sliding chain takes
    about a second to build)."""
    dynamics = _CACHE.get(chain)
    if dynamics is None:
        dynamics = _CACHE[chain] = ChainDynamics(chain)
    return dynamics


__all__ = ["ChainDynamics", "chain_dynamics"]
