"""Compiled forward dynamics of a flexible-link chain, for real-time simulation.

The Python recursion (:mod:`.denoc`) costs about half a millisecond per call on the Canadarm; the simulator's fixed
step needs one call per sample. This module generates C for ``y_ddot = I(y)^-1 (tau - h(y, y_dot))`` from the
CasADi Lagrangian of :mod:`.lagrangian` (the same model: equal to the recursion to round-off, see
test_flexible_links_dynamics.py), compiles it once with the system C compiler (``-O1``; about 20 s for the
Canadarm) and caches the library in the package's code cache (``$FLEXROBOT_CACHE`` or ``~/.cache/flexrobot_ros``)
under a sha256 of the generated function. Calls go through the bound-buffer entry point of
:mod:`flexrobot_ros.dynamics.codegen` (a few microseconds of overhead). Without a compiler, CasADi's own evaluation
is used (slower, same numbers).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

from flexrobot_ros.dynamics.codegen import _WRAPPER, CFLAGS, _bound_library, cache_dir
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.lagrangian import lagrangian_dynamics


class CompiledForwardDynamics:
    """``fd(y, y_dot, tau) -> y_ddot`` (size,) of ``chain``, compiled C when a compiler is available."""

    def __init__(self, chain: FlexibleLinkChain, points_per_beam: int = 16):
        self.size = n = chain.size
        reference = lagrangian_dynamics(chain, points_per_beam)
        y, y_dot, tau = (ca.SX.sym(name, n) for name in ("y", "yd", "tau"))
        x = ca.vertcat(y, y_dot, tau)
        accelerations = ca.solve(reference.inertia(y), tau - reference.bias(y, y_dot))
        self.function = ca.Function("flexible_fd", [x], [accelerations])
        key = hashlib.sha256(self.function.serialize().encode() + ca.__version__.encode()
                             + " ".join(CFLAGS).encode()).hexdigest()[:24]
        self.library = self._library(cache_dir() / f"flexible_fd_{key}")
        self._bound = _bound_library(self.library, 3 * n, n) if self.library is not None else None

    def _library(self, stem: Path) -> Path | None:
        library = stem.with_suffix(".so")
        if library.exists():
            return library
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            warnings.warn("no C compiler: flexible-link dynamics fall back to CasADi's evaluation", RuntimeWarning,
                          stacklevel=3)
            return None
        function = self.function
        stem.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=stem.parent) as tmp:
            source = Path(tmp) / f"{stem.name}.c"
            generator = ca.CodeGenerator(source.name, {"with_header": False})
            generator.add(function)
            generator.generate(tmp + os.sep)
            source.write_text(source.read_text() + _WRAPPER.format(
                name=function.name(), sz_arg=max(function.sz_arg(), 1), sz_res=max(function.sz_res(), 1),
                sz_iw=max(function.sz_iw(), 1), sz_w=max(function.sz_w(), 1), n_in=3 * self.size, n_out=self.size))
            target = Path(tmp) / "lib.so"
            process = subprocess.run([compiler, *CFLAGS, "-o", str(target), str(source), "-lm"], capture_output=True,
                                     text=True)
            if process.returncode != 0 or not target.exists():
                warnings.warn(f"compiling the flexible-link dynamics failed: {process.stderr.strip()[:300]}; falling "
                              "back to CasADi's evaluation", RuntimeWarning, stacklevel=3)
                return None
            os.replace(target, library)
        return library

    def __call__(self, y: np.ndarray, y_dot: np.ndarray, tau: np.ndarray) -> np.ndarray:
        n = self.size
        if self._bound is None:
            return np.array(self.function(np.concatenate([y, y_dot, tau]))).ravel()
        lib, x, out, lock = self._bound
        with lock:
            x[:n], x[n:2 * n], x[2 * n:] = y, y_dot, tau
            if lib.ff_eval_bound():
                raise FloatingPointError("compiled flexible-link dynamics failed")
            return out.copy()


__all__ = ["CompiledForwardDynamics"]
