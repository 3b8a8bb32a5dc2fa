"""Modal assurance criterion (MAC) between two sets of (complex) mode shapes.

``MAC_jk = |phi_a,j^H phi_b,k|^2 / ((phi_a,j^H phi_a,j) (phi_b,k^H phi_b,k))``, 1 for shapes equal up to a complex
scale factor, 0 for orthogonal shapes. Mode shapes are columns: ``(entries, modes)``, e.g.
``ModalResult.mode_shapes`` (2n, modes) or its first n rows (link side only).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError


def mac(shapes_a: Any, shapes_b: Any | None = None) -> np.ndarray:
    """MAC matrix (modes_a, modes_b) between the columns of two shape sets; ``shapes_b=None`` gives the auto-MAC."""
    a = np.asarray(shapes_a)
    b = a if shapes_b is None else np.asarray(shapes_b)
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ModalError(f"mac: expected two (entries, modes) arrays with the same number of entries, got shapes "
                         f"{a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ModalError("mac: mode shapes contain non-finite entries")
    norm_a = np.einsum("ij,ij->j", a.conj(), a).real
    norm_b = np.einsum("ij,ij->j", b.conj(), b).real
    if np.any(norm_a == 0) or np.any(norm_b == 0):
        raise ModalError("mac: a mode shape is identically zero")
    return np.abs(a.conj().T @ b) ** 2 / np.outer(norm_a, norm_b)


__all__ = ["mac"]
