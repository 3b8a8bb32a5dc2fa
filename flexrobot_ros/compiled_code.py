"""Shared library calls of generated C (CasADi code generation, cached in :func:`flexrobot_ros.cache.cache_dir`):
the compiler flags, the wrapper appended to every generated file and the loaded libraries with their bound buffers.

No robot and no physics: :mod:`flexrobot_ros.dynamics.codegen` (SDRNEA) and
:mod:`flexrobot_ros.flexible_links.compiled_dynamics` (flexible-link dynamics) both compile through it, so neither
physics folder imports the other for it.

The wrapper gives a generated function ``name`` two extra entry points: ``ff_eval_bound()``, which evaluates one
sample between buffers whose pointers were bound once with ``ff_bind`` (about 1 µs per call from Python, against
~17 µs through ``casadi.external``, see FACTS), and ``ff_batch(x, y, count)``, a C loop over samples.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import casadi as ca
import numpy as np

#: Compiler flags; -O1 compiles large straight-line functions several times faster than -O2 for similar speed
#: (bench/feedforward.py prints both when asked).
CFLAGS = ("-O1", "-shared", "-fPIC")

WRAPPER = """

/* --- flexrobot_ros wrapper: bound single-sample call and batched loop --- */
static const casadi_real* ff_x = 0;
static casadi_real* ff_y = 0;

CASADI_SYMBOL_EXPORT void ff_bind(const casadi_real* x, casadi_real* y) {{ ff_x = x; ff_y = y; }}

CASADI_SYMBOL_EXPORT int ff_eval_bound(void) {{
  const casadi_real* arg[{sz_arg}];
  casadi_real* res[{sz_res}];
  casadi_int iw[{sz_iw}];
  casadi_real w[{sz_w}];
  arg[0] = ff_x;
  res[0] = ff_y;
  return {name}(arg, res, iw, w, 0);
}}

CASADI_SYMBOL_EXPORT int ff_batch(const casadi_real* x, casadi_real* y, long count) {{
  const casadi_real* arg[{sz_arg}];
  casadi_real* res[{sz_res}];
  casadi_int iw[{sz_iw}];
  casadi_real w[{sz_w}];
  long k;
  for (k = 0; k < count; ++k) {{
    arg[0] = x + k * {n_in};
    res[0] = y + k * {n_out};
    if ({name}(arg, res, iw, w, 0)) return 1;
  }}
  return 0;
}}
"""

_LIBRARIES: dict[str, tuple[ctypes.CDLL, np.ndarray, np.ndarray, Any]] = {}
_LOCK = threading.Lock()


def bound_library(path: Path, n_in: int, n_out: int) -> tuple[ctypes.CDLL, np.ndarray, np.ndarray, Any]:
    """The loaded library with its input (n_in,) and output (n_out,) buffers bound once (``ff_bind``), and the lock
    that guards them.

    The dynamic loader returns one handle per library path, so the bound pointers (static in the C code) are
    shared by everyone who loads it: keep exactly one buffer pair, with its lock, per library.
    """
    key = str(path)
    with _LOCK:
        if key not in _LIBRARIES:
            lib = ctypes.CDLL(key)
            lib.ff_bind.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            lib.ff_bind.restype = None
            lib.ff_eval_bound.argtypes = []
            lib.ff_eval_bound.restype = ctypes.c_int
            lib.ff_batch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
            lib.ff_batch.restype = ctypes.c_int
            x, y = np.zeros(n_in), np.zeros(n_out)
            lib.ff_bind(x.ctypes.data, y.ctypes.data)
            _LIBRARIES[key] = (lib, x, y, threading.Lock())
        return _LIBRARIES[key]


def compile_library(function: ca.Function | Callable[[], ca.Function], stem: Path, n_in: int, n_out: int, what: str,
                    keep_source: bool = False, flags: tuple[str, ...] = CFLAGS) -> Path | None:
    """``stem``.so: ``function`` (one input of ``n_in``, one output of ``n_out`` doubles) generated as C with
    :data:`WRAPPER` and compiled with ``flags`` (written atomically; ``keep_source``: ``stem``.c beside it).
    Processes that ask for the same ``stem`` at once (the nodes of a bring-up, parallel test workers) compile it
    once: each takes an exclusive lock on ``stem``.lock, and the ones after the first find the library built.
    None, with a RuntimeWarning naming ``what``, when there is no C compiler or compiling fails: the caller then
    evaluates with CasADi.

    ``function`` may also be a callable returning the CasADi function: it is then only called when the library has
    to be built (for functions whose preparation, e.g. common-subexpression elimination, costs seconds)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        warnings.warn(f"no C compiler found: {what} falls back to CasADi's evaluation (slower)", RuntimeWarning,
                      stacklevel=3)
        return None
    stem.parent.mkdir(parents=True, exist_ok=True)
    library = stem.with_suffix(".so")
    with open(stem.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # processes that need the same library wait for the one compiling it
        if library.exists():
            return library
        if not isinstance(function, ca.Function):
            function = function()
        return _generate_and_compile(function, stem, n_in, n_out, what, keep_source, compiler, flags)


def _generate_and_compile(function: ca.Function, stem: Path, n_in: int, n_out: int, what: str, keep_source: bool,
                          compiler: str, flags: tuple[str, ...] = CFLAGS) -> Path | None:
    with tempfile.TemporaryDirectory(dir=stem.parent) as tmp:
        source = Path(tmp) / f"{stem.name}.c"
        generator = ca.CodeGenerator(source.name, {"with_header": False})
        generator.add(function)
        generator.generate(tmp + os.sep)
        source.write_text(source.read_text() + WRAPPER.format(
            name=function.name(), sz_arg=max(function.sz_arg(), 1), sz_res=max(function.sz_res(), 1),
            sz_iw=max(function.sz_iw(), 1), sz_w=max(function.sz_w(), 1), n_in=n_in, n_out=n_out))
        target = Path(tmp) / "lib.so"
        try:
            process = subprocess.run([compiler, *flags, "-o", str(target), str(source), "-lm"],
                                     capture_output=True, text=True)
            failure = process.stderr.strip()[:500] if process.returncode != 0 else ""
        except OSError as error:
            failure = str(error)
        if failure or not target.exists():
            warnings.warn(f"compiling {what} failed ({compiler}): {failure or 'no output'}; falling back to "
                          "CasADi's evaluation (slower)", RuntimeWarning, stacklevel=4)
            return None
        if keep_source:
            os.replace(source, stem.with_suffix(".c"))
        library = stem.with_suffix(".so")
        os.replace(target, library)
    return library


__all__ = ["CFLAGS", "WRAPPER", "bound_library", "compile_library"]
