"""The vendor URDFs of the PyPI package example-robot-data (a test dependency: setup.py's test extra), found from the
installed package, never copied into the repository."""
from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest


def vendor_robots() -> Path:
    """The ``robots`` folder of the installed example-robot-data (the test is skipped without it)."""
    try:
        distribution = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")
    return Path(distribution.locate_file("cmeel.prefix/share/example-robot-data/robots"))


def panda_urdf() -> Path:
    """The Panda: 7 revolute joints and 2 prismatic fingers (a tree)."""
    return vendor_robots() / "panda_description" / "urdf" / "panda.urdf"
