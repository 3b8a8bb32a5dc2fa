"""Nothing lost at 1 kHz on rclpy (issue 35): every sample of the simulator's streams reaches rclpy subscribers.

Each case starts ``simulator_node`` as a process on the rclpy back end (``FLEXROBOT_RUNTIME=rclpy``) in a namespace
and ROS domain of its own, paused (``autostart: false``), and subscribes here, with rclpy, to ``motor_states`` and
``joint_states`` (both 1 kHz: ``joint_states_decimation: 1``) with the simulator's own stream QoS (reliable,
keep-last 10,000). Once the simulator's writers have matched these readers (its diagnostics count them), ``~/run``
starts a run of ``duration_s`` simulated seconds; the run must arrive whole: exactly ``duration_s * rate_hz``
stamps per stream, from the first sample on, each 1 ms after the previous one. The same holds idle and under six
busy loops (``while True: pass`` processes the test starts and kills): on a machine too busy to keep real time the
simulation slows down instead, and says so. The loaded case with ``real_time_factor: 100`` (a pace no machine of
this project's kind reaches: about 10 at best idle) makes the slow-down certain whatever the machine's load, and
checks that it is reported (overruns, time behind schedule, the achieved factor, one log line) while every sample
still arrives. Nothing here bounds wall time: a run only has to finish within a generous timeout.

oma_node (``motor_states``) and modal_monitor_node (``joint_states``, 1 kHz here) are rclpy subscribers of ours:
their diagnostics must count every sample the simulator published (oma_node without a window restart or a bridged
gap), idle and under six busy loops.

Skipped where rclpy is not installed (ROS 2 only; ``scripts/test-ros2`` runs it and refuses skips).
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from runtime_peer import run_domain

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "scompi_simulation.yaml"
RATE_HZ = 1000
STEP_NS = 1_000_000
#: Stamps are float64 epoch seconds (resolution 238 ns) turned into sec/nanosec: consecutive ones lie 1 ms apart to
#: within twice that.
STAMP_TOLERANCE_NS = 512
BUSY_LOOPS = 6
#: Each busy loop also ends by itself after this long [s], should the test die without killing it.
BUSY_LOOP = "import time\nend = time.monotonic() + 120.0\nwhile time.monotonic() < end:\n    pass\n"
#: The simulator's stream QoS (runtime.qos.QOS_STREAM): reliable, volatile, keep-last 10,000.
STREAM_QOS = QoSProfile(depth=10_000, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def domain() -> int:
    """The ROS domain of this test (runtime_peer.run_domain: its work unit's range, apart from concurrent runs)."""
    return run_domain()


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """``count`` processes spinning ``while True: pass`` for the duration of the block."""
    processes = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]
    try:
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


class Subscriber:
    """This process's rclpy node: the stamps [ns] of every sample of ``topics`` and the nodes' diagnostics."""

    def __init__(self, namespace: str, topics: tuple[str, ...]) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain())
        self.node = rclpy.create_node("streams_test", namespace=namespace, context=self.context)
        self.stamps: dict[str, list[int]] = {topic: [] for topic in topics}
        self.status: dict[str, dict[str, str]] = {}
        for topic in topics:
            self.node.create_subscription(JointState, topic, self._on_sample(topic), STREAM_QOS)
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 100)
        self.run_client = self.node.create_client(SetBool, "simulator_node/run")
        self._stop = threading.Event()
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on_sample(self, topic: str) -> Callable[[JointState], None]:
        stamps = self.stamps[topic]

        def record(msg: JointState) -> None:
            stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
        return record

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self.status[status.name.split(":")[0].rsplit("/", 1)[-1]] = {kv.key: kv.value for kv in status.values}

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def value(self, node: str, key: str, default: str = "") -> str:
        return self.status.get(node, {}).get(key, default)

    def wait(self, what: str, condition: Callable[[], bool], timeout_s: float,
             processes: dict[str, subprocess.Popen], logs: Path) -> None:
        """Wait until ``condition()`` holds; fail naming ``what`` (with the node logs) on timeout or a node's exit."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            ended = {name: logs.joinpath(f"{name}.log").read_text()[-3000:] for name, process in processes.items()
                     if process.poll() is not None}
            assert not ended, f"node exited while waiting for {what}: {ended}"
            assert time.monotonic() < deadline, f"no {what} within {timeout_s} s; diagnostics: {self.status}"
            time.sleep(0.05)

    def run(self) -> None:
        """``~/run`` (true) of the simulator, answered within 10 s."""
        assert self.run_client.wait_for_service(timeout_sec=10.0), "simulator_node/run not available"
        done = threading.Event()
        future = self.run_client.call_async(SetBool.Request(data=True))
        future.add_done_callback(lambda _: done.set())
        assert done.wait(10.0), "simulator_node/run did not answer within 10 s"
        assert future.result().success, future.result().message

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def start(node: str, namespace: str, logs: Path, *arguments: str) -> subprocess.Popen:
    """``node`` as a process on rclpy in ``namespace`` with the shipped parameter file (its ``/**`` section: in a
    namespace the node sections do not match) and ``-p``/``-r`` ``arguments``."""
    argv = [sys.executable, "-m", f"flexrobot_ros.nodes.{node}", "--ros-args", "-r", f"__ns:={namespace}",
            "--params-file", str(PARAMS), *arguments]
    env = {**os.environ, "FLEXROBOT_RUNTIME": "rclpy", "ROS_DOMAIN_ID": str(domain()), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=logs.joinpath(f"{node}.log").open("w"),
                            stderr=subprocess.STDOUT)


def simulator_arguments(duration_s: float, real_time_factor: float) -> list[str]:
    """A paused simulator running ``duration_s`` simulated seconds once started, both streams at 1 kHz."""
    values = {"autostart": "false", "duration_s": duration_s, "real_time_factor": real_time_factor,
              "rate_hz": float(RATE_HZ), "joint_states_decimation": 1, "excitation.type": "impacts"}
    return [item for name, value in values.items() for item in ("-p", f"{name}:={value}")]


def stop(processes: dict[str, subprocess.Popen]) -> None:
    """SIGINT to every node still running, then wait (kill after 20 s)."""
    for process in processes.values():
        if process.poll() is None:
            process.send_signal(2)
    for process in processes.values():
        try:
            process.wait(timeout=20.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def assert_complete(stamps: list[int], expected: int, topic: str) -> None:
    """``expected`` samples, none missing, none twice, in order, each 1 ms after the previous one."""
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    off = [(i, step) for i, step in enumerate(steps) if abs(step - STEP_NS) > STAMP_TOLERANCE_NS]
    assert not off, (f"{topic}: {len(off)} of {len(steps)} steps are not 1 ms (first: sample {off[0][0]}, "
                     f"{off[0][1]} ns), {len(stamps)} of {expected} samples")
    assert len(stamps) == expected, f"{topic}: {len(stamps)} of {expected} samples"


#: The topics of the simulator each of our subscriber nodes reads.
READS = {"oma_node": ("motor_states", "joint_states"), "modal_monitor_node": ("joint_states",)}


def run_simulation(tmp_path: Path, case: str, busy: int, duration_s: float, real_time_factor: float,
                   extra_nodes: dict[str, list[str]] | None = None) -> tuple[Subscriber, Path]:
    """Start the simulator (and ``extra_nodes``: {node: arguments}, nodes of :data:`READS`) paused, wait until
    every reader of ``motor_states`` and ``joint_states`` is matched, run ``duration_s`` under ``busy`` busy loops
    and wait until the simulator has finished and every sample it published arrived here (and at the extra nodes,
    by their diagnostics' ``samples received``). Returns the subscriber (closed) and the simulator's log."""
    namespace = f"/streams_{os.getpid()}_{case}"
    subscriber = Subscriber(namespace, ("motor_states", "joint_states"))
    expected = int(round(duration_s * RATE_HZ))
    processes: dict[str, subprocess.Popen] = {}
    extra_nodes = extra_nodes or {}
    readers = {topic: 1 + sum(topic in READS[node] for node in extra_nodes) for topic in subscriber.stamps}
    try:
        processes["simulator_node"] = start("simulator_node", namespace, tmp_path,
                                            *simulator_arguments(duration_s, real_time_factor))
        for node, arguments in extra_nodes.items():
            processes[node] = start(node, namespace, tmp_path, *arguments)

        def matched() -> bool:
            return all(int(subscriber.value("simulator_node", f"{topic} subscribers", "0")) >= count
                       for topic, count in readers.items())
        subscriber.wait("matched readers", matched, 90.0, processes, tmp_path)
        with busy_loops(busy):
            subscriber.run()
            subscriber.wait("finished run", lambda: subscriber.value("simulator_node", "state") == "finished",
                            120.0, processes, tmp_path)
            subscriber.wait("every sample", lambda: all(len(s) >= expected for s in subscriber.stamps.values()),
                            60.0, processes, tmp_path)
        for node in extra_nodes:
            subscriber.wait(f"every sample at {node}",
                            lambda: int(subscriber.value(node, "samples received", "0")) >= expected,
                            60.0, processes, tmp_path)
        time.sleep(0.5)  # anything beyond the run would arrive now
    finally:
        stop(processes)
        subscriber.close()
    for topic, stamps in subscriber.stamps.items():
        assert_complete(stamps, expected, topic)
    values = subscriber.status["simulator_node"]
    assert int(values["published motor_states"]) == expected
    assert int(values["published joint_states"]) == expected
    return subscriber, tmp_path / "simulator_node.log"


@pytest.mark.parametrize("busy", [0, BUSY_LOOPS], ids=["idle", "six_busy_loops"])
def test_every_1khz_sample_reaches_an_rclpy_subscriber(busy, tmp_path):
    run_simulation(tmp_path, f"complete{busy}", busy, duration_s=4.0, real_time_factor=1.0)


def test_a_simulation_that_cannot_keep_up_slows_down_says_so_and_loses_nothing(tmp_path):
    requested, duration_s = 100.0, 1.5
    subscriber, log = run_simulation(tmp_path, "load", BUSY_LOOPS, duration_s=duration_s,
                                     real_time_factor=requested)
    values = subscriber.status["simulator_node"]
    overruns, behind_s = int(values["overruns"]), float(values["behind schedule [s]"])
    achieved = float(values["real-time factor (achieved, running)"])
    assert overruns > 0 and behind_s >= overruns / RATE_HZ, values
    assert 0 < achieved < requested, values
    assert "behind its real-time schedule" in log.read_text()


@pytest.mark.parametrize("busy", [0, BUSY_LOOPS], ids=["idle", "six_busy_loops"])
def test_oma_node_and_modal_monitor_receive_every_sample(busy, tmp_path):
    subscriber, _ = run_simulation(tmp_path, f"nodes{busy}", busy, duration_s=4.0, real_time_factor=1.0,
                                   extra_nodes={"oma_node": ["-p", "sample_rate_hz:=1000.0"],
                                                "modal_monitor_node": []})
    published = subscriber.status["simulator_node"]
    oma, monitor = subscriber.status["oma_node"], subscriber.status["modal_monitor_node"]
    assert int(oma["samples received"]) == int(published["published motor_states"])
    assert int(oma["window restarts (gaps)"]) == 0 and int(oma["samples bridged (short gaps)"]) == 0, oma
    assert int(monitor["samples received"]) == int(published["published joint_states"])
    assert int(monitor["computations"]) >= 1, monitor
