"""Fixtures shared by several test files (each module-scoped: built once per test file that uses it), and the
grouping of tests for parallel runs.

The robot fixtures import the model lazily, so test files that never load a robot (OMA, runtime) do not import
pinocchio through this file.

Parallel runs (``pytest -n 2 --dist loadgroup``, as ``scripts/test`` does with pytest-xdist): the tests of one file stay
on one worker, so module fixtures are built once; every test file that starts DDS participants or node processes (it
imports the loopback helpers ``runtime_peer`` or ``node_harness``) joins the one unit ``dds``, whose tests run one after
another on one worker: their nodes never share a ROS domain or the machine with another DDS test. The exception is a DDS
file that names its own ``WORK_UNIT`` (the one-minute 1 kHz stream, which waits on real time at a quarter of a core): it
runs beside the group in a ROS domain range of its own, and must lose nothing while the group and the CPU-bound files
run. Each worker runs BLAS on one thread (so do the processes it starts): two workers with two BLAS threads each
oversubscribe two cores. The work units are handed out longest first (the seconds each took in a reference run,
``test/unit_seconds.json``; ``pytest --store-unit-seconds`` rewrites it): a worker that draws a long file near the end
would finish alone (the one-minute stream, one test, came last of all by xdist's own order, the number of tests).
Without xdist nothing changes and ``pytest`` runs everything in one process, in file order.

Generated C: the tests use the package's code cache as the user's commands do (``$FLEXROBOT_CACHE`` or
~/.cache/flexrobot_ros; code is keyed by a hash of the CasADi function), so a run reuses what an earlier run or
command compiled, and on a fresh machine each model is compiled once for all the workers and the processes the
tests start (``compile_library`` locks per library: a process that needs a library another is compiling waits).
"""
from __future__ import annotations

import functools
import json
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

#: A test file that imports one of these loopback DDS helpers talks DDS.
DDS_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:runtime_peer|node_harness)\b", re.MULTILINE)


#: A test file's own work unit: ``WORK_UNIT = "name"`` at module level.
OWN_UNIT = re.compile(r'^WORK_UNIT = "([\w-]+)"', re.MULTILINE)


@functools.lru_cache(maxsize=None)
def work_unit(test_file: str) -> str:
    """xdist work unit of a test file (path relative to the rootdir): its ``WORK_UNIT`` (a DDS file that waits on
    real time at little CPU and has a ROS domain range of its own, so it runs beside the DDS group), ``dds``, or
    the file itself."""
    path = Path(__file__).parent.parent / test_file
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return test_file
    own = OWN_UNIT.search(text)
    return own.group(1) if own else "dds" if DDS_IMPORT.search(text) else test_file


def unit_of(nodeid: str) -> str:
    """Work unit of a test (its node id)."""
    return work_unit(nodeid.split("::", 1)[0])


#: Seconds each work unit took in a reference run (setup, call and teardown of its tests): the order units start in.
UNIT_SECONDS = Path(__file__).parent / "unit_seconds.json"


def pytest_addoption(parser):
    parser.addoption("--store-unit-seconds", action="store_true",
                     help=f"write the seconds each work unit took in this run to {UNIT_SECONDS.name} (the longest "
                          "start first in later parallel runs)")


@functools.lru_cache(maxsize=None)
def unit_seconds() -> dict[str, float]:
    """The reference run's seconds per work unit (none: every unit 0 s, xdist's order stays)."""
    try:
        return json.loads(UNIT_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def pytest_collection_modifyitems(config, items):
    """On an xdist worker (whose collection order the scheduler follows): the longest work units first; the tests of
    a unit keep their order. A plain ``pytest`` keeps file order."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        seconds = unit_seconds()
        items.sort(key=lambda item: -seconds.get(unit_of(item.nodeid), 0.0))


class UnitClock:
    """Adds up the seconds of each work unit's test phases as their reports arrive (``--store-unit-seconds``; in
    the controlling process, which gets every worker's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report):
        self.seconds[unit_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session, exitstatus):
        if self.seconds:
            ordered = dict(sorted(((unit, round(s, 1)) for unit, s in self.seconds.items()), key=lambda kv: -kv[1]))
            UNIT_SECONDS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


#: Environment of a worker and of the processes it starts: one BLAS/OpenMP thread.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def pytest_configure(config):
    """On an xdist worker: BLAS on one thread, in this process (already loaded libraries included) and its
    children. With ``--store-unit-seconds``: the unit clock."""
    if config.getoption("store_unit_seconds") and "PYTEST_XDIST_WORKER" not in os.environ:
        config.pluginmanager.register(UnitClock(), "unit-clock")
    if "PYTEST_XDIST_WORKER" in os.environ:
        from threadpoolctl import threadpool_limits

        os.environ.update(ONE_THREAD)
        threadpool_limits(1)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup``: one work unit per test file, and one for all the DDS files, handed out in the
    workers' collection order (longest first, :func:`pytest_collection_modifyitems`). (xdist's own groups
    are set from ``xdist_group`` marks through ``item._nodeid``, which pytest 9.2's nodes no longer read.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the workers' collection order: longest unit first

    class FileOrDdsScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return FileOrDdsScheduling(config, log)


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
