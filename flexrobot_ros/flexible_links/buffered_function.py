"""Evaluation of a CasADi Function on numpy arrays through buffers bound once (CasADi's ``Function.buffer()``).

A plain call ``f(y, y_dot)`` converts every numpy input to a DM and every DM output back to numpy; on the
Lagrangian of the RRP with a sliding link (inertia 11 x 11 and bias, about 27,000 instructions together) that
conversion cost as much as CasADi's evaluation itself. Here the inputs are copied into numpy arrays whose memory
CasADi reads, the outputs are written by CasADi into numpy arrays, and one call evaluates: the same instructions on
the same values, so the results equal a plain call's bit for bit (``bench/flexible_links.py`` measures both).

Outputs must be dense (``ca.densify``); matrices come back as numpy arrays of their shape (CasADi stores them
column-major; the returned arrays are copies, free to modify). Calls from several threads are serialised.
"""
from __future__ import annotations

import threading

import casadi as ca
import numpy as np


class BufferedFunction:
    """``evaluate(*inputs) -> tuple of outputs`` of a CasADi Function with dense outputs, numpy in and out."""

    def __init__(self, function: ca.Function):
        for k in range(function.n_out()):
            if not function.sparsity_out(k).is_dense():
                raise ValueError(f"CasADi function {function.name()}: output {function.name_out(k)} is sparse; "
                                 "expected dense outputs (ca.densify)")
        self.function = function
        self._inputs = [np.zeros(function.numel_in(k)) for k in range(function.n_in())]
        self._outputs = [np.zeros(function.numel_out(k)) for k in range(function.n_out())]
        self._shapes = [function.size_out(k) for k in range(function.n_out())]
        self._buffer, self._trigger = function.buffer()
        for k, array in enumerate(self._inputs):
            self._buffer.set_arg(k, memoryview(array))
        for k, array in enumerate(self._outputs):
            self._buffer.set_res(k, memoryview(array))
        self._lock = threading.Lock()

    def __call__(self, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """The outputs (each of its CasADi shape; (k, 1) vectors as (k,)) at ``inputs`` (each (numel,) or its shape,
        column-major)."""
        if len(inputs) != len(self._inputs):
            raise TypeError(f"CasADi function {self.function.name()}: {len(self._inputs)} inputs expected, got "
                            f"{len(inputs)}")
        with self._lock:
            for buffer, value in zip(self._inputs, inputs):
                buffer[:] = np.ravel(value, order="F")
            self._trigger()
            if self._buffer.ret():
                raise FloatingPointError(f"CasADi function {self.function.name()} failed (status "
                                         f"{self._buffer.ret()})")
            return tuple(out.copy() if shape[1] == 1 else out.reshape(shape, order="F").copy()
                         for out, shape in zip(self._outputs, self._shapes))


__all__ = ["BufferedFunction"]
