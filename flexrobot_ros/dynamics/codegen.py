"""Compiled SDRNEA: C code generation, a per-robot cache and fast calls through ctypes.

:func:`load_sdrnea` returns a :class:`CompiledSdrnea` for a kinematic tree (and optional joint flexibility). The
first call for a given model generates the CasADi function (:mod:`.sdrnea`), emits C, compiles it with the
system C compiler (``$CC`` or ``cc``/``gcc``, ``-O1 -shared -fPIC``) and stores ``.c``, ``.so``, the serialized
CasADi function and a JSON sidecar (operation counts, sizes) in the cache directory ``$FLEXROBOT_CACHE`` or
``~/.cache/flexrobot_ros``, under a name keyed by a sha256 of every model number, the generator version, the
CasADi version and the compiler flags. Later calls (in any process) load the shared library directly.

Calls: the generated C file gets the two extra entry points of :mod:`flexrobot_ros.compiled_code`,
``ff_eval_bound()`` (one sample between bound buffers, about 1 µs per call from Python) and ``ff_batch(x, y,
count)``, a C loop over samples. Without a
working compiler, CasADi's own evaluation is used instead (slower, same numbers) and a warning says so.
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

import casadi as cs
import numpy as np
import pinocchio as pin

from flexrobot_ros.cache import cache_dir
from flexrobot_ros.compiled_code import CFLAGS, bound_library, compile_library
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility
from flexrobot_ros.dynamics.sdrnea import (GENERATOR_VERSION, OperationCounts, output_names, pack_inputs,
                                          sdrnea_function)
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree, TorqueDerivatives

_LOADED: dict[str, "CompiledSdrnea"] = {}
_LOCK = threading.RLock()


def cache_key(tree: KinematicTree, flexibility: JointFlexibility | None) -> str:
    """sha256 naming the generated code of this model."""
    import hashlib

    h = hashlib.sha256()
    for part in (GENERATOR_VERSION, cs.__version__, " ".join(CFLAGS), tree.digest(),
                 flexibility.digest() if flexibility is not None else "rigid"):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


class CompiledSdrnea:
    """SDRNEA for one model: packed x = [q, qd, qdd, q3, q4] (5n) -> y = [tau, dtau, ddtau(, q_m, ...)].

    Attributes: ``n``, ``outputs`` (names of the n-long output blocks), ``operations`` (:class:`OperationCounts`
    of tau, dtau, ddtau and, when flexible, the whole function in ``operations_total``), ``backend`` ('c' or
    'casadi'), ``library`` (path of the shared library, or None).
    """

    def __init__(self, n: int, outputs: tuple[str, ...], operations: OperationCounts,
                 operations_total: OperationCounts, function: cs.Function, library: Path | None):
        self.n = n
        self.outputs = outputs
        self.operations = operations
        self.operations_total = operations_total
        self.function = function
        self.library = library
        self.backend = "c" if library is not None else "casadi"
        self.n_in, self.n_out = 5 * n, len(outputs) * n
        if library is not None:
            self._lib, self._x, self._y, self._lock = bound_library(library, self.n_in, self.n_out)
            self._eval_bound = self._lib.ff_eval_bound
            self._batch = self._lib.ff_batch

    def evaluate_packed(self, x: np.ndarray) -> np.ndarray:
        """One sample: y (n_out,) from the packed x (5n,). The fastest single-sample call from Python."""
        if self.backend == "c":
            with self._lock:
                self._x[:] = x
                self._eval_bound()
                return self._y.copy()
        return np.asarray(self.function(x), dtype=float).ravel()

    def evaluate_batch(self, x: np.ndarray) -> np.ndarray:
        """Many samples: y (samples, n_out) from packed x (samples, 5n), in one C loop (or a CasADi map)."""
        x = np.ascontiguousarray(x, dtype=float)
        if x.ndim != 2 or x.shape[1] != self.n_in:
            raise ValueError(f"x: shape {x.shape}; expected (samples, {self.n_in})")
        y = np.empty((x.shape[0], self.n_out))
        if x.shape[0] == 0:
            return y
        if self.backend == "c":
            if self._batch(x.ctypes.data, y.ctypes.data, x.shape[0]):
                raise RuntimeError("generated SDRNEA code failed")
            return y
        return np.asarray(self.function.map(x.shape[0])(x.T), dtype=float).T.reshape(x.shape[0], self.n_out)

    def evaluate(self, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> dict[str, np.ndarray]:
        """Named outputs (samples, n) (or (n,) for one sample) from joint arrays (samples, n) or (n,)."""
        x, single = pack_inputs(self.n, q, qd, qdd, q3, q4)
        y = self.evaluate_batch(x)
        if single:
            y = y[0]
        return {name: y[..., k * self.n:(k + 1) * self.n] for k, name in enumerate(self.outputs)}


def load_sdrnea(tree: KinematicTree, flexibility: JointFlexibility | None = None, *,
                compile: bool = True, directory: Path | str | None = None) -> CompiledSdrnea:
    """The compiled (cached) SDRNEA of a kinematic tree; ``compile=False`` forces CasADi's own evaluation."""
    if flexibility is not None and flexibility.n != tree.n:
        raise ValueError(f"flexibility has {flexibility.n} joints; the tree has {tree.n}")
    key = cache_key(tree, flexibility)
    folder = Path(directory) if directory is not None else cache_dir()
    stem = folder / f"sdrnea_{key[:24]}"
    memo = f"{stem}|{compile}"
    with _LOCK:
        if memo in _LOADED:
            return _LOADED[memo]
        result = _load_or_build(tree, flexibility, stem, compile)
        _LOADED[memo] = result
        return result


def sdrnea(model: pin.Model | KinematicTree, q: Any, qd: Any, qdd: Any, q3: Any, q4: Any) -> TorqueDerivatives:
    """tau, dtau/dt and d²tau/dt² by SDRNEA with compiled, cached code (:func:`load_sdrnea`)."""
    tree = model if isinstance(model, KinematicTree) else KinematicTree.from_model(model)
    out = load_sdrnea(tree).evaluate(q, qd, qdd, q3, q4)
    return TorqueDerivatives(out["tau"], out["dtau"], out["ddtau"])


def _load_or_build(tree: KinematicTree, flexibility: JointFlexibility | None, stem: Path,
                   compile: bool) -> CompiledSdrnea:
    outputs = output_names(flexibility is not None)
    meta_path, casadi_path, library = (stem.with_suffix(s) for s in (".json", ".casadi", ".so"))
    meta: dict[str, Any] | None = None
    function: cs.Function | None = None
    if meta_path.exists() and casadi_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            function = cs.Function.load(str(casadi_path))
        except (OSError, ValueError, RuntimeError):
            meta = function = None
    if function is None or meta is None:
        function = sdrnea_function(tree, flexibility, name=f"sdrnea_{stem.name[7:19]}")
        rigid = function
        if flexibility is not None:
            x = cs.SX.sym("x", 5 * tree.n)
            rigid = cs.Function("rigid", [x], [function(x)[:3 * tree.n]])
        meta = {"n": tree.n, "outputs": list(outputs), "operations": asdict(OperationCounts.of(rigid)),
                "operations_total": asdict(OperationCounts.of(function)), "name": function.name(),
                "sizes": [int(function.sz_arg()), int(function.sz_res()), int(function.sz_iw()),
                          int(function.sz_w())]}
        stem.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=stem.parent, prefix=casadi_path.name, suffix=".tmp")
        os.close(fd)
        function.save(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, casadi_path)
        _atomic_write(meta_path, json.dumps(meta, indent=1).encode())
    compiled: Path | None = None
    if compile:
        compiled = library if library.exists() else compile_library(
            function, stem, 5 * meta["n"], len(meta["outputs"]) * meta["n"], "SDRNEA code", keep_source=True)
    return CompiledSdrnea(tree.n, outputs, OperationCounts(**meta["operations"]),
                          OperationCounts(**meta["operations_total"]), function, compiled)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
