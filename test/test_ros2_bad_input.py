"""Bad input to nodes on rclpy (and the standalone runtime where it is cheap), as processes (issue 35):

- a message type the node cannot import (modal_monitor_node / oma_node with ``state_input: dynamic_joint_states``
  where control_msgs is not installed, as with rclpy from PyPI): exit 2 and one line on stderr naming the package,
  what to install and the standalone runtime, which has the definition;
- a parameter of the wrong type (``-p max_rate_hz:=abc``, ``-p rate_hz:=abc``, an integer for a double): exit 2 and
  one line naming the node, the parameter and the expected type (the ``write 1.0`` hint only for an integer);
- a remap to a topic nobody publishes: the OMA node's silent-input warning (:mod:`flexrobot_ros.nodes.silent_input`)
  names the remapped topic, and the node stops cleanly;
- bad nodes joining a running graph lose nothing of it: a standalone simulator's stream to an rclpy OMA node and to a
  standalone bag recorder goes on without a gap while the bad nodes start and fail, and the OMA node's latched
  results stay.

Existing coverage not repeated here: the standalone runtime's silent-input warning (test_nodes_silent_input.py), an
invalid value on the standalone runtime (test_nodes_robustness.py), rclpy's integer-for-double refusal in-process
(test_runtime_rclpy.py). Skipped where rclpy is not installed.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import runtime_peer as peer

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from rclpy_peer import DiagnosticsWatcher  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "scompi_simulation.yaml"


def environment(runtime: str) -> dict[str, str]:
    """A node process's environment on ``runtime``: this run's ROS domain on loopback (Cyclone's unicast
    configuration, or Fast DDS's ``LOCALHOST`` range), one BLAS thread."""
    env = peer.loopback_env(FLEXROBOT_RUNTIME=runtime, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
                            OPENBLAS_NUM_THREADS="1")
    if runtime == "rclpy":
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return env


def argv(node: str, namespace: str, *ros_args: str) -> list[str]:
    return [sys.executable, "-m", f"flexrobot_ros.nodes.{node}", "--ros-args", "-r", f"__ns:={namespace}", *ros_args]


def failed_start(node: str, runtime: str, *ros_args: str) -> str:
    """The one stderr line of a node that must refuse to start (exit status 2)."""
    namespace = f"/bad_{os.getpid()}"
    completed = subprocess.run(argv(node, namespace, *ros_args), cwd=REPO, env=environment(runtime),
                               capture_output=True, text=True, timeout=120)
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    assert completed.returncode == 2, (completed.returncode, completed.stderr[-3000:])
    assert len(lines) == 1 and lines[0].startswith(f"{node}: error: "), completed.stderr
    return lines[0]


@pytest.mark.skipif(importlib.util.find_spec("control_msgs") is not None, reason="control_msgs is installed here")
@pytest.mark.parametrize("node", ["modal_monitor_node", "oma_node"])
def test_a_message_type_that_is_not_installed_is_one_line_naming_the_package(node):
    line = failed_start(node, "rclpy", "-p", "state_input:=dynamic_joint_states")
    print(line)
    assert "control_msgs/msg/DynamicJointState" in line and "package control_msgs" in line, line
    assert "install ros-<distro>-control-msgs" in line and "FLEXROBOT_RUNTIME=dds" in line, line


@pytest.mark.parametrize("runtime, node, argument, expected", [
    ("rclpy", "modal_monitor_node", "max_rate_hz:=abc", "expected double"),
    ("dds", "modal_monitor_node", "max_rate_hz:=abc", "expected double"),
    ("rclpy", "modal_monitor_node", "state_input:=3.0", "expected string"),
    ("rclpy", "simulator_node", "rate_hz:=abc", "expected double"),
    ("rclpy", "oma_node", "window_s:=3", "expected double"),
    ("dds", "oma_node", "window_s:=3", "expected double"),
])
def test_a_parameter_of_the_wrong_type_is_one_line_naming_node_parameter_and_type(runtime, node, argument, expected):
    line = failed_start(node, runtime, "-p", argument)
    print(f"{runtime}: {line}")
    name = argument.split(":=")[0]
    assert f"parameter {name!r} of /bad_{os.getpid()}/{node}" in line and expected in line, line
    assert ("write 1.0, not 1" in line) == argument.endswith(":=3"), line  # the hint only for an integer


def test_a_remap_to_a_silent_topic_is_named_by_the_silent_input_warning(tmp_path):
    """oma_node on rclpy with ``-r motor_states:=/nobody_publishes_this``: one warning naming that topic after
    ``silent_warning_s``; SIGINT then stops it cleanly."""
    log = tmp_path / "oma_node.log"
    process = subprocess.Popen(argv("oma_node", f"/bad_{os.getpid()}", "-r", "motor_states:=/nobody_publishes_this",
                                    "-p", "silent_warning_s:=1.0"),
                               cwd=REPO, env=environment("rclpy"), stdout=log.open("w"), stderr=subprocess.STDOUT,
                               text=True)
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and "no samples received" not in log.read_text() and process.poll() is None:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=20.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = log.read_text()
    warnings = [line for line in output.splitlines() if "no samples received" in line]
    assert warnings and "no samples received on /nobody_publishes_this 1 s after start" in warnings[0], output
    assert len(warnings) == 1 and code == 0 and "Traceback" not in output, output


class Watcher(DiagnosticsWatcher):
    """This process's rclpy node: ``<ns>/diagnostics`` and the OMA node's latched ``<ns>/oma/frequencies``."""

    def __init__(self, namespace: str, name: str = "bad_input_watcher") -> None:
        super().__init__(namespace, name)
        self.frequencies: list[list[float]] = []
        self.node.create_subscription(Float64MultiArray, "oma/frequencies",
                                      lambda msg: self.frequencies.append(list(msg.data)),
                                      QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))


def test_bad_nodes_joining_a_running_graph_lose_nothing_of_it(tmp_path):
    """A standalone simulator streams motor_states to an rclpy OMA node and to a standalone bag recorder (``flexrobot
    bag record``); then a monitor that cannot import its input type, and monitors with a wrongly typed parameter
    (rclpy and standalone) join the graph. The bad starts fail in one line each; the OMA node's stream has no gap and
    its sample count goes on growing, its latched frequencies still reach a late subscriber, and the bag holds the
    stream without a gap (header stamps 1 ms apart from the first to the last)."""
    from flexrobot_ros.runtime.bags import header_stamps

    namespace = f"/bad_graph_{os.getpid()}"
    watcher = Watcher(namespace)
    bag = tmp_path / "bag"
    logs = {name: tmp_path / f"{name}.log" for name in ("simulator_node", "oma_node", "recorder")}
    commands = {
        "simulator_node": (argv("simulator_node", namespace, "--params-file", str(PARAMS)), "dds"),
        "oma_node": (argv("oma_node", namespace, "--params-file", str(PARAMS), "-p", "window_s:=1.5",
                          "-p", "orders:='2:30'"), "rclpy"),
        "recorder": ([sys.executable, "-m", "flexrobot_ros.cli", "bag", "record", "-o", str(bag),
                      f"{namespace}/motor_states"], "dds")}
    processes = {name: subprocess.Popen(command, cwd=REPO, env=environment(runtime), stdout=logs[name].open("w"),
                                        stderr=subprocess.STDOUT, text=True)
                 for name, (command, runtime) in commands.items()}
    latched: list[list[float]] = []
    try:
        deadline = time.monotonic() + 90.0
        while time.monotonic() < deadline and watcher.count("oma_node", "published oma/frequencies") < 1:
            assert all(p.poll() is None for p in processes.values()), {n: logs[n].read_text()[-2000:] for n in logs}
            time.sleep(0.1)
        before = watcher.count("oma_node", "samples received")
        assert before > 0, watcher.status
        bad = [("rclpy", "modal_monitor_node", ["-p", "state_input:=dynamic_joint_states"]),
               ("rclpy", "modal_monitor_node", ["-p", "max_rate_hz:=abc"]),
               ("dds", "modal_monitor_node", ["-p", "max_rate_hz:=abc"])]
        if importlib.util.find_spec("control_msgs") is not None:
            bad = bad[1:]
        results = [subprocess.run(argv(node, namespace, *args), cwd=REPO, env=environment(runtime),
                                  capture_output=True, text=True, timeout=120) for runtime, node, args in bad]
        for result in results:
            assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        late = Watcher(namespace, "bad_input_late_watcher")  # joins after the bad nodes: gets the latched results
        try:
            deadline = time.monotonic() + 20.0
            while time.monotonic() < deadline and not late.frequencies:
                time.sleep(0.1)
            latched = list(late.frequencies)
        finally:
            late.close()
        time.sleep(2.0)  # two more diagnostics of the OMA node
        after = watcher.count("oma_node", "samples received")
        gaps = watcher.status["oma_node"]["window restarts (gaps)"]
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGINT)
        codes = {name: process.wait(timeout=30.0) for name, process in processes.items()}
        watcher.close()
    stamps = header_stamps(bag).get(f"{namespace}/motor_states", [])
    steps = stamps[1:] - stamps[:-1] if len(stamps) > 1 else np.zeros(1, dtype=np.int64)
    print(f"OMA samples received {before:.0f} -> {after:.0f} while {len(bad)} bad nodes failed; gaps {gaps}; "
          f"latched frequencies to a late subscriber: {latched[-1] if latched else None}; bag: {len(stamps)} "
          f"motor_states, stamp steps {steps.min()}..{steps.max()} ns")
    assert after > before + 500 and gaps == "0", watcher.status
    assert latched and len(latched[-1]) >= 4, latched
    # 1 ms of simulated time apart (to the float rounding of the stamps: +-1 us), none missing
    assert len(stamps) > after - before and abs(steps - 1_000_000).max() < 1_000, (len(stamps), steps.min(),
                                                                                  steps.max())
    assert codes == {"simulator_node": 0, "oma_node": 0, "recorder": 0}, {n: logs[n].read_text()[-2000:] for n in logs}
