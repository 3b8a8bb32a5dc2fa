"""Fixtures shared by several test files (each module-scoped: built once per test file that uses it).

The robot fixtures import the model lazily, so test files that never load a robot (OMA, runtime) do not import
pinocchio through this file.
"""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def cache_directory(tmp_path_factory):
    """Generated code goes to one directory per test session (compiled once per model and session); test files
    that compile SDRNEA code use it for all their tests with ``pytestmark = pytest.mark.usefixtures(...)``."""
    folder = tmp_path_factory.getbasetemp() / "flexrobot_cache"
    previous = os.environ.get("FLEXROBOT_CACHE")
    os.environ["FLEXROBOT_CACHE"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("FLEXROBOT_CACHE", None)
    else:
        os.environ["FLEXROBOT_CACHE"] = previous


@pytest.fixture(scope="module")
def scompi():
    """The shipped Scompi (seed 000), without its tool."""
    from flexrobot_ros.model import load_robot

    return load_robot("scompi")


@pytest.fixture(scope="module")
def scompi_tool():
    """The shipped Scompi with its grinding tool (thesis Table 2.5 case 2)."""
    from flexrobot_ros.model import load_robot

    return load_robot("scompi", tool=True)


@pytest.fixture(scope="module")
def planar():
    """The shipped planar 2R robot (thesis Table 3.1)."""
    from flexrobot_ros.model import load_robot

    return load_robot("planar_2r")


@pytest.fixture(scope="session")
def rrp_link2(tmp_path_factory):
    """Seed 004's RRP (config/rrp.yaml, with the tool) with link 3 rigid and link 2's assumed modes clamped-free
    (the YAML without link 3 and without link 2's clamped-mass family): link 2 clamped at joint 2 carrying rigid
    bodies, 7 (AMM) or 11 (FEM) equations. The control-law tests use it where the sliding link 3 only costs time."""
    import yaml

    from flexrobot_ros.model import load_robot
    from flexrobot_ros.model.loader import share_directory

    document = yaml.safe_load((share_directory() / "config" / "rrp.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / "rrp.urdf")
    del document["flexible_links"]["link3"]
    for key in ("family", "tip"):
        del document["flexible_links"]["link2"][key]
    path = tmp_path_factory.mktemp("rrp") / "rrp_link2.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_robot(path, tool=True)
