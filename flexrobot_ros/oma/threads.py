"""Run small dense linear algebra single-threaded.

The matrices of OMA (companion matrices up to 600 x 600, Toeplitz SVDs, QR of a few thousand rows) are too small
for a multi-threaded BLAS to pay off, and on a machine whose cores are busy the threads of OpenBLAS wait for each
other: eigenvalues of a 240 x 240 companion matrix took 7x longer with two threads than with one on a loaded
2-core machine. :func:`single_threaded_blas` limits BLAS to one thread while OMA runs, through ``threadpoolctl``
when it is installed (otherwise it changes nothing). The library scan is done once (about 1 ms).
"""
from __future__ import annotations

import contextlib
import functools

__all__ = ["single_threaded_blas"]


@functools.lru_cache(maxsize=1)
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def single_threaded_blas():
    """Context manager limiting BLAS/LAPACK to one thread (no-op without ``threadpoolctl``)."""
    controller = _controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
