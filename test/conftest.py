"""Fixtures shared by several test files (each module-scoped: built once per test file that uses it), and the
grouping of tests for parallel runs.

The robot fixtures import the model lazily, so test files that never load a robot (OMA, runtime) do not import
pinocchio through this file.

Parallel runs (``pytest -n 3 --dist loadgroup``, as ``scripts/test`` does with pytest-xdist): the tests of one file stay
on one worker, so module fixtures are built once. The process tests (files that start DDS participants, rclpy nodes or
node processes: they import the loopback helpers ``runtime_peer`` or ``node_harness``) are shared among
:data:`PROCESS_UNITS` units ``dds-0``, ``dds-1``, balanced by their reference seconds: the files of one unit run one
after another on one worker, in a ROS domain range of the unit's own (``$FLEXROBOT_TEST_UNIT``, read by
``runtime_peer.run_domain``), so two units' nodes never share a domain and the machine runs at most that many of them
beside the CPU-bound files. A process test file that names its own ``WORK_UNIT`` (the one-minute 1 kHz stream, which
waits on real time at a quarter of a core) is a unit of its own with a domain range of its own, and must lose nothing
while the others run. Each worker runs BLAS on one thread (so do the processes it starts): two workers with two BLAS
threads each oversubscribe two cores. The work units are handed out longest first (the seconds each file took in a
reference run, ``test/unit_seconds.json``; ``pytest --store-unit-seconds`` rewrites it): a worker that draws a long
file near the end would finish alone.
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

#: A test file that imports one of these loopback helpers starts DDS participants, rclpy nodes or node processes: a
#: process test.
DDS_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:runtime_peer|node_harness)\b", re.MULTILINE)


#: A test file's own work unit: ``WORK_UNIT = "name"`` at module level.
OWN_UNIT = re.compile(r'^WORK_UNIT = "([\w-]+)"', re.MULTILINE)

#: Work units the process tests are shared among (``dds-0``, ``dds-1``, ...): so many run beside each other, each unit
#: in a ROS domain range of its own (runtime_peer.run_domain), its files one after another.
PROCESS_UNITS = 2

TEST_DIR = Path(__file__).parent


@functools.lru_cache(maxsize=None)
def _text(test_file: str) -> str:
    try:
        return (TEST_DIR.parent / test_file).read_text(encoding="utf-8")
    except OSError:
        return ""


def clock_key(test_file: str) -> str:
    """What the reference run's seconds are stored under: a file's own ``WORK_UNIT``, else the file itself."""
    own = OWN_UNIT.search(_text(test_file))
    return own.group(1) if own else test_file


@functools.lru_cache(maxsize=None)
def process_units() -> dict[str, str]:
    """{process test file: its work unit}: the files (those importing runtime_peer or node_harness, without a
    ``WORK_UNIT`` of their own) shared among :data:`PROCESS_UNITS` units, longest first onto the unit with the fewest
    seconds so far (the reference run's seconds; a file without any counts 0 s and goes by name)."""
    files = sorted(f"test/{path.name}" for path in TEST_DIR.glob("test_*.py")
                   if DDS_IMPORT.search(_text(f"test/{path.name}")) and not OWN_UNIT.search(_text(f"test/{path.name}")))
    seconds = unit_seconds()
    load = [0.0] * PROCESS_UNITS
    units = {}
    for test_file in sorted(files, key=lambda f: -seconds.get(f, 0.0)):
        index = min(range(PROCESS_UNITS), key=lambda i: load[i])
        units[test_file] = f"dds-{index}"
        load[index] += seconds.get(test_file, 0.0) or 1e-3
    return units


@functools.lru_cache(maxsize=None)
def work_unit(test_file: str) -> str:
    """xdist work unit of a test file (path relative to the rootdir): its ``WORK_UNIT`` (a process test that waits on
    real time at little CPU and has a ROS domain range of its own, so it runs beside the others), one of the process
    units ``dds-<k>`` (:func:`process_units`), or the file itself."""
    own = OWN_UNIT.search(_text(test_file))
    return own.group(1) if own else process_units().get(test_file, test_file)


def unit_of(nodeid: str) -> str:
    """Work unit of a test (its node id)."""
    return work_unit(nodeid.split("::", 1)[0])


#: Seconds each test file (or own work unit) took in a reference run (setup, call and teardown of its tests): the
#: order units start in, and how the process tests are shared among their units.
UNIT_SECONDS = Path(__file__).parent / "unit_seconds.json"


def pytest_addoption(parser):
    parser.addoption("--store-unit-seconds", action="store_true",
                     help=f"write the seconds each test file took in this run to {UNIT_SECONDS.name} (the longest "
                          "work units start first in later parallel runs)")


@functools.lru_cache(maxsize=None)
def unit_seconds() -> dict[str, float]:
    """The reference run's seconds per test file or own work unit (none: every one 0 s, xdist's order stays)."""
    try:
        return json.loads(UNIT_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@functools.lru_cache(maxsize=None)
def seconds_of_unit(unit: str) -> float:
    """Reference seconds of a work unit: the sum over its files."""
    stored = unit_seconds()
    if unit in stored:
        return stored[unit]
    return sum(stored.get(f, 0.0) for f, u in process_units().items() if u == unit)


def pytest_collection_modifyitems(config, items):
    """On an xdist worker (whose collection order the scheduler follows): the longest work units first; the tests of
    a unit keep their order. A plain ``pytest`` keeps file order."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=lambda item: -seconds_of_unit(unit_of(item.nodeid)))


@functools.lru_cache(maxsize=None)
def slot_of(test_file: str) -> int:
    """Position of a process test file among the files of its unit (by name; 0 for any other file)."""
    unit = process_units().get(test_file)
    return sorted(f for f, u in process_units().items() if u == unit).index(test_file) if unit else 0


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The test's work unit and its file's slot in the unit in ``$FLEXROBOT_TEST_UNIT`` and ``$FLEXROBOT_TEST_SLOT``
    (before its fixtures): runtime_peer.run_domain picks the ROS domain from them, for this process and the nodes it
    starts: one domain per file, so a node or participant a file leaves behind for a moment (a simulator's absolute
    /clock, participants taking the low participant indices) never reaches the next file's nodes."""
    test_file = item.nodeid.split("::", 1)[0]
    os.environ["FLEXROBOT_TEST_UNIT"] = unit_of(item.nodeid)
    os.environ["FLEXROBOT_TEST_SLOT"] = str(slot_of(test_file))


class UnitClock:
    """Adds up the seconds of each test file's (or own work unit's) test phases as their reports arrive
    (``--store-unit-seconds``; in the controlling process, which gets every worker's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report):
        self.seconds[clock_key(report.nodeid.split("::", 1)[0])] += report.duration

    def pytest_sessionfinish(self, session, exitstatus):
        if self.seconds:
            ordered = dict(sorted(((key, round(s, 1)) for key, s in self.seconds.items()), key=lambda kv: -kv[1]))
            UNIT_SECONDS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


#: Environment of a worker and of the processes it starts: one BLAS/OpenMP thread.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def pytest_configure(config):
    """Discovery on this machine only (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` unless set), Fast DDS's profile for
    mixed graphs (``FASTDDS_DEFAULT_PROFILES_FILE`` unless set). On an xdist worker:
    BLAS on one thread, in this process (already loaded libraries included) and its children. With
    ``--store-unit-seconds``: the unit clock."""
    # rclpy's Fast DDS and the standalone runtime discover on this machine only (the standalone runtime's loopback
    # tests set their own configuration; test_runtime_discovery_scope sets the variable itself)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    # Fast DDS 3 (Kilted) with type propagation off, so rclpy and standalone nodes match
    # (config/fastdds_mixed_graph.xml; Fast DDS 2 ignores the property)
    os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(TEST_DIR.parent / "config" / "fastdds_mixed_graph.xml"))
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
