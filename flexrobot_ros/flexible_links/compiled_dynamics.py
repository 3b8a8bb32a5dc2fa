"""Compiled flexible-link dynamics, for real-time simulation.

The Python recursion (:mod:`.denoc`) costs about half a millisecond per call on the Canadarm; the simulator's fixed
step needs one call per sample. This module generates C from the CasADi Lagrangian of :mod:`.lagrangian` (the same
model: equal to the recursion to round-off, see test_flexible_links_dynamics.py) after common-subexpression
elimination, compiles it once with the system C compiler (``-O1``; 10-20 s for the Canadarm) and caches the library
in the package's code cache (``$FLEXROBOT_CACHE`` or ``~/.cache/flexrobot_ros``) under a sha256 of the function
before the elimination (which takes seconds, so a cached library costs only the function's serialization). Calls go
through the bound-buffer entry point of :mod:`flexrobot_ros.compiled_code` (a few microseconds of overhead). Without a
compiler, CasADi's own evaluation is used (slower, same numbers).

* :class:`CompiledForwardDynamics`: ``y_ddot = I(y)^-1 (tau - h(y, y_dot))``;
* :func:`compiled_function`: any CasADi function of one vector input to one vector output (the simulator plant
  compiles its whole state derivative with it, :mod:`flexrobot_ros.simulation.elastic_robot_plant`), and
  :func:`compiled_library`, the cached library behind it.

Quadrature: an assumed-modes beam's inertia integrals use Gauss-Legendre points; ``QUADRATURE_POINTS`` (12) per
beam integrate two clamped-free modes to round-off (against the Python recursion's integrals: 3e-13 relative on the
Canadarm, 8.7e-11 with 10 points, 3e-7 with 8); more modes get 4 more points per extra mode.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import casadi as ca
import numpy as np

from flexrobot_ros.cache import cache_dir
from flexrobot_ros.compiled_code import CFLAGS, bound_library, compile_library
from flexrobot_ros.flexible_links.beam_elements import ClampedBeamMesh
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics

QUADRATURE_POINTS = 12


def quadrature_points(chain: FlexibleLinkChain) -> int:
    """Gauss-Legendre points per assumed-modes beam for round-off inertia integrals (see the module docstring)."""
    modes = max([max(body.beam.m_y, body.beam.m_z) for body in chain.bodies
                 if body.beam is not None and not isinstance(body.beam.family_y, ClampedBeamMesh)] + [2])
    return QUADRATURE_POINTS + 4 * (modes - 2)


def with_common_subexpressions(function: ca.Function) -> ca.Function:
    """``function`` (SX) with its common subexpressions eliminated (CasADi >= 3.6; structural: the same operations
    on the same numbers, fewer of them): what this module compiles. Seconds on the Canadarm's plant, so it is only
    done when a library has to be built."""
    cse = getattr(ca, "cse", None)
    if cse is None:
        return function
    inputs = function.sx_in()
    return ca.Function(function.name(), inputs, [cse(output) for output in function.call(inputs)])


def compiled_library(function: ca.Function, n_in: int, n_out: int,
                     flags: tuple[str, ...] = CFLAGS) -> Path | None:
    """Path of the shared library of a one-input (n_in,), one-output (n_out,) CasADi function: generated C of the
    function with its common subexpressions eliminated (:func:`with_common_subexpressions`, only when it has to be
    compiled), compiled once with ``flags`` into the code cache under a sha256 of the function as given, the CasADi
    version and the flags (its symbols are CasADi's, so ``casadi.external(function.name(), path)`` loads it too);
    None without a C compiler or when compiling fails."""
    key = hashlib.sha256(function.serialize().encode() + ca.__version__.encode()
                         + " ".join(flags).encode()).hexdigest()[:24]
    stem = cache_dir() / f"{function.name()}_{key}"
    library = stem.with_suffix(".so")
    if library.exists():
        return library
    return compile_library(lambda: with_common_subexpressions(function), stem, n_in, n_out, function.name(),
                           flags=flags)


def compiled_function(function: ca.Function, n_in: int, n_out: int) -> Callable[[np.ndarray], np.ndarray]:
    """``evaluate(x (n_in,)) -> (n_out,)`` of a one-input, one-output CasADi function, from generated C compiled once
    and cached (:func:`compiled_library`; CasADi's evaluation without a C compiler or when compiling fails)."""
    library = compiled_library(function, n_in, n_out)
    if library is None:
        return lambda x: np.array(function(x)).ravel()
    lib, buffer_in, buffer_out, lock = bound_library(library, n_in, n_out)

    def evaluate(x: np.ndarray) -> np.ndarray:
        with lock:
            buffer_in[:] = x
            if lib.ff_eval_bound():
                raise FloatingPointError(f"compiled {function.name()} failed")
            return buffer_out.copy()
    return evaluate


class CompiledForwardDynamics:
    """``fd(y, y_dot, tau) -> y_ddot`` (size,) of ``chain``, compiled C when a compiler is available."""

    def __init__(self, chain: FlexibleLinkChain, points_per_beam: int | None = None):
        self.size = n = chain.size
        reference = lagrangian_dynamics(chain, points_per_beam or quadrature_points(chain))
        y, y_dot, tau = (ca.SX.sym(name, n) for name in ("y", "yd", "tau"))
        accelerations = ca.solve(reference.inertia(y), tau - reference.bias(y, y_dot))
        self.function = ca.Function("flexible_fd", [ca.vertcat(y, y_dot, tau)],
                                    [accelerations])
        self._evaluate = compiled_function(self.function, 3 * n, n)

    def __call__(self, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return self._evaluate(np.concatenate([y, y_dot, tau]))


__all__ = ["CompiledForwardDynamics", "QUADRATURE_POINTS", "compiled_function", "compiled_library", "quadrature_points",
           "with_common_subexpressions"]
