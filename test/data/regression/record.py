"""Write test/data/regression/elastic_model.npz: the regression data of issue 24 (cases in test/regression_cases.py).

Run once, by the code BEFORE the refactor of issue 24 (the data were written on commit e11f85a of main, the tree
before any move of the layering work), from the checkout::

    PYTHONPATH=$PWD:$PWD/test python test/data/regression/record.py

``test/test_regression_elastic_model.py`` checks that the current code reproduces them. Do not re-run it to make
that test pass: the file records what the old code computed.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # test/, for regression_cases
from regression_cases import DATA, ROBOTS, compute  # noqa: E402


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for name in ROBOTS:
        start = time.perf_counter()
        arrays.update(compute(name))
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    np.savez_compressed(DATA, **arrays)
    print(f"wrote {DATA} ({DATA.stat().st_size / 1024:.0f} kB, {len(arrays)} arrays)", file=sys.stderr)


if __name__ == "__main__":
    main()
