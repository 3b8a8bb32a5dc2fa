"""The vendor URDFs of the PyPI package example-robot-data (a test dependency: setup.py's test extra), found from the
installed package, never copied into the repository. The one place the tests and benches look for them."""
from __future__ import annotations

import importlib.metadata
from pathlib import Path


def vendor_folder() -> Path | None:
    """The ``robots`` folder of the installed example-robot-data package (found through its distribution's file
    list, wherever pip installed it), or None when it is not installed."""
    try:
        files = importlib.metadata.distribution("example-robot-data").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    marker = next((f for f in files if f.as_posix().endswith("panda_description/urdf/panda.urdf")), None)
    return None if marker is None else Path(marker.locate()).parents[2]


#: The robots folder, or a path that does not exist when the package is not installed (``is_file()`` of a robot in
#: it is False: module-level ``skipif`` markers use it).
ROBOTS = vendor_folder() or Path("example-robot-data-is-not-installed")


def vendor_robots() -> Path:
    """The ``robots`` folder of the installed example-robot-data (the test is skipped without it)."""
    import pytest  # here, so that the benches import this module without the test tools

    if vendor_folder() is None:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")
    return ROBOTS


def panda_urdf() -> Path:
    """The Panda: 7 revolute joints and 2 prismatic fingers (a tree)."""
    return vendor_robots() / "panda_description" / "urdf" / "panda.urdf"
