"""colcon build of a clean checkout, the install space through ament_index, and a node run from it on rclpy.

The tracked files of this checkout (``git ls-files``: no virtual environment, caches or build output) are copied to
``<tmp>/ws/src/flexrobot_ros`` and built there with this Python's colcon (``colcon build --packages-select
flexrobot_ros``, a copying install: no ``--symlink-install``). The build must be clean: nothing on its stderr (a
setuptools warning, a missing data file). Then, in this environment with ``install/local_setup.bash`` sourced on
top (with the PyPI wheels that is the workspace alone: no underlay), as a ROS 2 user has it after sourcing it:

- ament_index_python finds the package (its ``packages`` resource marker, prefix and share directory), and the
  executables ``ros2 run flexrobot_ros ...`` would find (the executable files under ``<prefix>/lib/flexrobot_ros``,
  ros2pkg's rule) are exactly setup.py's console scripts;
- every tracked file of ``launch/``, ``config/`` and ``urdf/`` and package.xml is installed in the share directory,
  unchanged; the package imports from the install space and reads its robot files from the install's share
  directory (not from the checkout nor from a pip-installed copy in the same Python);
- ``lib/flexrobot_ros/simulator_node`` started from a directory outside the checkout with FLEXROBOT_RUNTIME=rclpy
  and the installed ``config/simulation.yaml``, in a namespace and ROS domain of its own (runtime_peer.run_domain:
  a process test), publishes ``motor_states``, ``joint_states`` and ``/clock``, received here by an rclpy
  subscriber, and stops cleanly on SIGINT.

Skipped, naming what is missing, where colcon (colcon-common-extensions), ament_package (ros-jazzy-ament-package)
or rclpy and ament_index_python (ros-jazzy-rclpy) are not installed in this Python. The build takes about 3 s and the
whole file about 15 s here (the simulator's generated C cached; a first run compiles it).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runtime_peer import run_domain

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "flexrobot_ros"
#: Python modules this file needs and the PyPI distribution that provides each.
NEEDS = {"colcon_core": "colcon-common-extensions", "colcon_ros": "colcon-common-extensions",
         "ament_package": "ros-jazzy-ament-package", "rclpy": "ros-jazzy-rclpy",
         "ament_index_python": "ros-jazzy-rclpy"}
MISSING = sorted({dist for module, dist in NEEDS.items() if importlib.util.find_spec(module) is None})
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"needs colcon and ROS 2 Python packages in {sys.executable}: "
                                f"pip install {' '.join(MISSING)}")
#: Folders whose tracked files the package installs in its share directory.
SHARE_FOLDERS = ("launch", "config", "urdf")
#: What the workspace environment reports, run with the interpreter of the installed scripts.
INSPECT = """
import json, os, sys
from ament_index_python import get_resource, get_resources
from ament_index_python.packages import get_package_prefix, get_package_share_directory
import flexrobot_ros
from flexrobot_ros.model.loader import share_directory
prefix = get_package_prefix("flexrobot_ros")
lib = os.path.join(prefix, "lib", "flexrobot_ros")
executables = sorted(os.path.relpath(os.path.join(d, f), lib) for d, _, files in os.walk(lib) for f in files
                     if os.access(os.path.join(d, f), os.X_OK))
print(json.dumps({"ament_prefix_path": os.environ.get("AMENT_PREFIX_PATH"), "packages": get_resources("packages"),
                  "marker": get_resource("packages", "flexrobot_ros")[1], "prefix": prefix,
                  "share": get_package_share_directory("flexrobot_ros"), "executables": executables,
                  "module": flexrobot_ros.__file__, "robot_files": str(share_directory()), "sys_prefix": sys.prefix}))
"""


def console_scripts() -> list[str]:
    """Names of setup.py's console scripts."""
    tree = ast.parse((REPO / "setup.py").read_text())
    (call,) = [node for node in ast.walk(tree)
               if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup"]
    (entry_points,) = [kw.value for kw in call.keywords if kw.arg == "entry_points"]
    return sorted(entry.split("=")[0].strip() for entry in ast.literal_eval(entry_points)["console_scripts"])


def tracked_files() -> list[str]:
    """Paths (relative to the checkout) of the files git tracks, as they are in the working tree."""
    if shutil.which("git") is None:
        pytest.fail("git is not on PATH: it lists the checkout's tracked files for the clean workspace")
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True)
    assert listed.returncode == 0, f"{REPO} is not a git checkout: {listed.stderr.strip()}"
    return [path for path in listed.stdout.split("\0") if path and (REPO / path).is_file()]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict:
    """The workspace built once: its root, the build's seconds, stderr and console output, the sourced environment
    and what that environment reports (:data:`INSPECT`)."""
    root = tmp_path_factory.mktemp("colcon") / "ws"
    source = root / "src" / PACKAGE
    for path in tracked_files():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, source / path)
    # this environment (the ROS 2 that provides rclpy: the PyPI wheels, or a sourced /opt/ros underlay), with
    # bytecode compiled as a colcon install does (else setuptools warns that byte-compiling is disabled) and no
    # colcon defaults (a user's --symlink-install, say, from $COLCON_HOME)
    base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    base["COLCON_HOME"] = str(root.parent / "colcon_home")
    colcon = Path(sys.executable).with_name("colcon")
    assert colcon.is_file(), f"{colcon} is missing: colcon-common-extensions installs it beside {sys.executable}"
    start = time.monotonic()
    built = subprocess.run([str(colcon), "build", "--packages-select", PACKAGE], cwd=root, env=base,
                           capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - start
    assert built.returncode == 0, f"colcon build failed:\n{built.stdout}\n{built.stderr}"
    stderr = (root / "log" / "latest_build" / PACKAGE / "stderr.log").read_text()
    sourced = subprocess.run(["bash", "-c", 'source install/local_setup.bash && env -0'], cwd=root, env=base,
                             capture_output=True, text=True, check=True)
    env = dict(item.split("=", 1) for item in sourced.stdout.split("\0") if "=" in item)
    run = root.parent / "run"  # outside the checkout and the workspace's source
    run.mkdir()
    interpreter = (root / "install" / PACKAGE / "lib" / PACKAGE / "simulator_node").read_text().splitlines()[0]
    assert interpreter.startswith("#!"), interpreter
    inspected = subprocess.run([interpreter[2:], "-c", INSPECT], cwd=run, env=env, capture_output=True, text=True)
    assert inspected.returncode == 0, f"the workspace environment cannot import the package:\n{inspected.stderr}"
    return {"root": root, "seconds": seconds, "stderr": stderr, "output": built.stdout, "env": env, "run": run,
            "report": json.loads(inspected.stdout)}


def test_colcon_build_of_a_clean_checkout_is_clean(workspace):
    """colcon build succeeds with nothing on the package's stderr, copying (no symlinks into the checkout)."""
    assert workspace["stderr"] == "", f"colcon build wrote to stderr:\n{workspace['stderr']}"
    assert "stderr output" not in workspace["output"], workspace["output"]
    install = workspace["root"] / "install" / PACKAGE
    links = [path for path in install.rglob("*") if path.is_symlink()]
    assert links == [], f"symlinks in a copying install: {links[:5]}"
    print(f"colcon build: {workspace['seconds']:.1f} s")


def test_the_install_space_through_ament_index(workspace):
    """The workspace comes first in the index (alone with the PyPI wheels: no underlay), the package is in it with
    its marker; ros2 run's executables are setup.py's console scripts, run by the Python colcon ran in (this one);
    the package, and the robot files it reads, come from the install space."""
    report, install = workspace["report"], workspace["root"] / "install" / PACKAGE
    assert report["ament_prefix_path"].split(os.pathsep)[0] == str(install)
    assert report["packages"][PACKAGE] == str(install)
    assert report["marker"] == str(install)
    assert report["prefix"] == str(install)
    assert report["share"] == str(install / "share" / PACKAGE)
    assert report["executables"] == console_scripts()
    assert Path(report["module"]).is_relative_to(install / "lib"), report["module"]
    assert report["robot_files"] == report["share"]
    assert report["sys_prefix"] == sys.prefix
    shebangs = {(install / "lib" / PACKAGE / name).read_text().splitlines()[0] for name in report["executables"]}
    assert len(shebangs) == 1, shebangs


def test_share_files_are_installed(workspace):
    """Every tracked launch/config/urdf file and package.xml is in the share directory, unchanged."""
    share = Path(workspace["report"]["share"])
    expected = [path for path in tracked_files() if path.split("/")[0] in SHARE_FOLDERS] + ["package.xml"]
    assert {folder for folder in SHARE_FOLDERS if any(path.startswith(folder + "/") for path in expected)} \
        == set(SHARE_FOLDERS)
    missing = [path for path in expected if not (share / path).is_file()]
    assert missing == [], f"not installed in {share}: {missing}"
    changed = [path for path in expected if (share / path).read_bytes() != (REPO / path).read_bytes()]
    assert changed == [], changed


class Receiver:
    """This process's rclpy node: counts and keeps the last samples of ``<ns>/motor_states``, ``<ns>/joint_states``
    and ``/clock``."""

    def __init__(self, namespace: str) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=run_domain())
        self.node = rclpy.create_node("colcon_test_receiver", namespace=namespace, context=self.context)
        self.received: dict[str, list] = {"motor_states": [], "joint_states": [], "/clock": []}
        for topic, kind in (("motor_states", JointState), ("joint_states", JointState), ("/clock", Clock)):
            self.node.create_subscription(kind, topic, self.received[topic].append, 1000)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._spinner = threading.Thread(target=self._spin, daemon=True)
        self._spinner.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def counts(self) -> dict[str, int]:
        return {topic: len(samples) for topic, samples in self.received.items()}

    def close(self) -> None:
        self._stop.set()
        self._spinner.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)


def test_simulator_node_from_the_install_space_publishes_its_streams(workspace):
    """lib/flexrobot_ros/simulator_node on rclpy with the installed simulation.yaml: motor_states, joint_states
    (every 4th sample) and /clock arrive; SIGINT ends it with exit code 0 and no traceback."""
    install, share = workspace["root"] / "install" / PACKAGE, Path(workspace["report"]["share"])
    namespace = f"/colcon_{os.getpid()}"
    env = {**workspace["env"], "FLEXROBOT_RUNTIME": "rclpy", "ROS_DOMAIN_ID": str(run_domain()),
           "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    log = workspace["run"] / "simulator_node.log"
    receiver = Receiver(namespace)
    node = None
    try:
        with log.open("w") as out:
            node = subprocess.Popen([str(install / "lib" / PACKAGE / "simulator_node"), "--ros-args",
                                     "-r", f"__ns:={namespace}",
                                     "--params-file", str(share / "config" / "simulation.yaml")],
                                    cwd=workspace["run"], env=env, stdout=out, stderr=subprocess.STDOUT)
        wanted = {"motor_states": 200, "joint_states": 50, "/clock": 20}
        deadline = time.monotonic() + 120.0  # start-up compiles the robot's generated C on a fresh machine
        while time.monotonic() < deadline and any(receiver.counts()[t] < n for t, n in wanted.items()):
            assert node.poll() is None, f"simulator_node ended (code {node.returncode}):\n{log.read_text()[-3000:]}"
            time.sleep(0.1)
        counts = receiver.counts()
        assert all(counts[t] >= n for t, n in wanted.items()), \
            f"received {counts} within 120 s, wanted {wanted}:\n{log.read_text()[-3000:]}"
        motor, link = receiver.received["motor_states"][-1], receiver.received["joint_states"][-1]
        assert list(motor.name) == list(link.name) == [f"joint{i}" for i in range(1, 7)]  # the Scompi's joints
        assert len(motor.position) == len(link.position) == 6
        clock = [c.clock.sec + 1e-9 * c.clock.nanosec for c in receiver.received["/clock"]]
        assert all(b > a for a, b in zip(clock, clock[1:])), "/clock does not advance"
        node.send_signal(signal.SIGINT)
        code = node.wait(timeout=30.0)
        text = log.read_text()
        assert code == 0 and "Traceback" not in text, f"exit code {code}:\n{text[-3000:]}"
    finally:
        if node is not None and node.poll() is None:
            node.kill()
            node.wait()
        receiver.close()
