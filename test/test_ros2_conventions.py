"""ROS 2 conventions of the nodes on rclpy, checked with an rclpy node written in this test (issue 35, item 6).

simulator_node, modal_monitor_node, oma_node and feedforward_node run as processes on the rclpy back end (ROS 2
Jazzy from PyPI, or a sourced ROS 2) in a namespace and ROS domain of their own; the simulator's and the monitor's
``joint_states`` are remapped to ``link_states``; the three others run with ``use_sim_time`` true and the simulator
at half real time, publishing its URDF on the latched ``robot_description``. What is checked, against what ROS 2
itself defines:

- namespaces and remapping: every topic of the nodes lies in the namespace (``/clock`` and the absolute
  ``/parameter_events``, ``/rosout`` excepted), the remapped ``link_states`` carries the link states and no one
  publishes ``joint_states``; the monitor computes modes from ``link_states``;
- QoS: every publisher's offered QoS is compatible with rclpy's default subscription (reliable, volatile, keep-last
  10; ``rclpy.qos.qos_check_compatible``), and a default-QoS subscription of the test gets the streams, the modes and
  the diagnostics;
- latched ``robot_description``: a transient-local subscription made seconds after the simulator started gets the
  URDF text, byte for byte the robot's URDF file;
- ``use_sim_time``: while the simulation is paused (``~/run`` false, so ``/clock`` stands still), the monitor's and
  the OMA node's diagnostics (wall-clock timers) are stamped with the last ``/clock`` time exactly, seconds behind the
  wall clock, and the monitor's republishing of its modes (``publish_rate_hz``, a timer on ROS time) stops.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runtime_peer import run_domain

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import (DurabilityPolicy, LivelinessPolicy, QoSCompatibility, QoSProfile,  # noqa: E402
                       ReliabilityPolicy, qos_check_compatible)
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "scompi_simulation.yaml"
NAMESPACE = f"/conventions_{os.getpid()}"
SIM_TIME = ["-p", "use_sim_time:=true"]
NODES = {
    "simulator_node": ["-p", "real_time_factor:=0.5", "-p", "publish_robot_description:=true",
                       "-r", "joint_states:=link_states"],
    "modal_monitor_node": [*SIM_TIME, "-r", "joint_states:=link_states"],
    "oma_node": SIM_TIME,
    "feedforward_node": SIM_TIME,
}
#: Topics of the run a default-QoS subscription must get (relative to the namespace unless absolute).
#: The monitor's diagnostics count of its republish timer (ROS time).
REPUBLISHED = "republished (publish_rate_hz)"
STREAMS = {"motor_states": JointState, "link_states": JointState, "diagnostics": DiagnosticArray,
           "modal/frequencies": Float64MultiArray, "modal/damping": Float64MultiArray, "/clock": Clock}


def seconds(stamp) -> int:
    """A builtin_interfaces/Time as integer nanoseconds."""
    return stamp.sec * 10**9 + stamp.nanosec


class Observer:
    """The test's rclpy node: default-QoS subscriptions of :data:`STREAMS`, spun in a thread."""

    def __init__(self) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=run_domain())
        self.node = rclpy.create_node("conventions_test", namespace=NAMESPACE, context=self.context)
        self.received: dict[str, list] = {topic: [] for topic in STREAMS}
        self.lock = threading.Lock()
        for topic, message_type in STREAMS.items():
            self.node.create_subscription(message_type, topic, self._keep(topic), 10)  # rclpy's default QoS
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._spinner = threading.Thread(target=self._spin, daemon=True)
        self._spinner.start()

    def _keep(self, topic: str):
        def keep(msg) -> None:
            with self.lock:
                self.received[topic].append(msg)
        return keep

    def _spin(self) -> None:
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def diagnostics_of(self, node: str) -> list[tuple[int, dict[str, str]]]:
        """(stamp [ns], values) of each diagnostics message of ``node``, in arrival order."""
        with self.lock:
            messages = list(self.received["diagnostics"])
        return [(seconds(msg.header.stamp), {kv.key: kv.value for kv in status.values})
                for msg in messages for status in msg.status if status.name.split(":")[0].endswith("/" + node)]

    def last_clock(self) -> int:
        with self.lock:
            return seconds(self.received["/clock"][-1].clock)

    def close(self) -> None:
        self._stop.set()
        self._spinner.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def call(observer: Observer, name: str, request, timeout: float = 30.0):
    client = observer.node.create_client(SetBool, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout), f"service {name} not available"
        future = client.call_async(request)
        assert wait(future.done, timeout), f"no response from {name}"
        return future.result()
    finally:
        observer.node.destroy_client(client)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logs = tmp_path_factory.mktemp("conventions")
    env = {**os.environ, "FLEXROBOT_RUNTIME": "rclpy", "ROS_DOMAIN_ID": str(run_domain()), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONFAULTHANDLER": "1"}  # SIGABRT (a node that does not stop) prints every thread's stack in its log
    observer = Observer()
    processes = {}
    result: dict = {}
    try:
        for name, arguments in NODES.items():
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", f"flexrobot_ros.nodes.{name}", "--ros-args", "-r", f"__ns:={NAMESPACE}",
                 "--params-file", str(PARAMS), *arguments], cwd=REPO, env=env,
                stdout=(logs / f"{name}.log").open("w"), stderr=subprocess.STDOUT)

        def computed() -> bool:
            assert all(p.poll() is None for p in processes.values()), \
                {n: (logs / f"{n}.log").read_text()[-2000:] for n, p in processes.items() if p.poll() is not None}
            monitor = observer.diagnostics_of("modal_monitor_node")
            on_clock = all(observer.diagnostics_of(node) and observer.diagnostics_of(node)[-1][0] > 0
                           for node in ("modal_monitor_node", "oma_node", "feedforward_node"))  # /clock received
            return on_clock and float(monitor[-1][1].get("computations", "0")) >= 1 and \
                all(observer.received[topic] for topic in STREAMS)
        assert wait(computed, 120.0), (str({topic: len(v) for topic, v in observer.received.items()}),
                                       str(observer.diagnostics_of("modal_monitor_node")[-1:]))

        # latched robot_description: a late transient-local subscription
        description: list[str] = []
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        observer.node.create_subscription(String, "robot_description", lambda msg: description.append(msg.data),
                                          latched)
        wait(lambda: bool(description), 30.0)
        result["robot_description"] = description

        # the graph: topics, their publishers' QoS
        graph = {}
        for topic, types in observer.node.get_topic_names_and_types():
            graph[topic] = (types, [info.qos_profile for info in observer.node.get_publishers_info_by_topic(topic)])
        result["graph"] = graph

        # use_sim_time: pause, let the wall-clock diagnostics timers fire, resume
        simulator = f"{NAMESPACE}/simulator_node"
        assert call(observer, f"{simulator}/run", SetBool.Request(data=False)).success
        time.sleep(0.5)  # samples and clocks already on their way
        paused_clock = observer.last_clock()
        counts = {node: len(observer.diagnostics_of(node)) for node in ("modal_monitor_node", "oma_node")}
        assert wait(lambda: all(len(observer.diagnostics_of(n)) >= c + 3 for n, c in counts.items()), 30.0)
        result["simulator diagnostics"] = observer.diagnostics_of("simulator_node")[-1][1]
        result["paused"] = {"clock": paused_clock, "clock after": observer.last_clock(), "wall": time.time_ns(),
                            **{node: observer.diagnostics_of(node)[counts[node] + 1:] for node in counts}}
        assert call(observer, f"{simulator}/run", SetBool.Request(data=True)).success
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.send_signal(2)
        for name, process in processes.items():
            try:
                result[f"exit {name}"] = process.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                result[f"exit {name}"] = "no exit within 30 s of SIGINT"
                process.send_signal(6)  # SIGABRT: faulthandler writes the stacks into the log
                try:
                    process.wait(timeout=10.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        observer.close()
    result["logs"] = {name: (logs / f"{name}.log").read_text() for name in NODES}
    return result


def test_topics_lie_in_the_namespace_and_remapping_moves_the_link_states(run):
    graph = run["graph"]
    ours = {topic for topic in graph if not topic.startswith(NAMESPACE + "/")}
    assert ours <= {"/clock", "/parameter_events", "/rosout", "/flexrobot/bringup_parameters"}, ours  # absolute ones
    assert graph[f"{NAMESPACE}/link_states"][0] == ["sensor_msgs/msg/JointState"]
    assert not graph.get(f"{NAMESPACE}/joint_states", ([], []))[1], "someone publishes the unremapped joint_states"


def test_every_publisher_is_compatible_with_rclpy_default_qos_and_delivers(run):
    default = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE,
                         liveliness=LivelinessPolicy.AUTOMATIC)  # rclpy's default, as rmw resolves it
    for topic, (_, offered) in run["graph"].items():
        for profile in offered:
            compatibility, reason = qos_check_compatible(profile, default)
            assert compatibility == QoSCompatibility.OK, (topic, profile, reason)
    # the fixture waited until the default-QoS subscriptions of STREAMS got messages (it fails otherwise)


def test_late_subscriber_gets_the_latched_robot_description(run):
    import yaml

    from flexrobot_ros.model.loader import share_directory

    urdf = yaml.safe_load((share_directory() / "config" / "scompi.yaml").read_text())["urdf"]
    assert run["robot_description"] == [(share_directory() / "urdf" / Path(urdf).name).read_text()]


def test_use_sim_time_stamps_follow_the_paused_clock(run):
    paused = run["paused"]
    assert paused["clock after"] == paused["clock"], "/clock advanced while paused"
    for node in ("modal_monitor_node", "oma_node"):
        stamps = [stamp for stamp, _ in paused[node]]
        assert stamps and all(stamp == paused["clock"] for stamp in stamps), (node, paused[node], paused["clock"])
    assert paused["wall"] - paused["clock"] > 10**9  # half real time: simulated time is seconds behind the wall
    # the republish timer (ROS time) stands still: the count is the same in every diagnostics message of the pause
    # (the first one after the pause is left out: it may count republications made before it)
    assert len({values[REPUBLISHED] for _, values in paused["modal_monitor_node"]}) == 1, paused["modal_monitor_node"]
    assert len(paused["modal_monitor_node"]) >= 2


def test_outputs_whose_message_package_is_missing_are_off_and_said_so(run):
    """rclpy from PyPI has neither tf2_msgs nor control_msgs: the simulator runs without /tf and
    dynamic_joint_states, logs one line naming each package, and its diagnostics list them under "outputs off";
    where a package is installed, its output is on (published counts)."""
    import importlib.util

    values = run["simulator diagnostics"]
    for topic, package in (("tf", "tf2_msgs"), ("dynamic_joint_states", "control_msgs")):
        missing = importlib.util.find_spec(package) is None
        assert (f"{NAMESPACE}/{topic} ({package} not installed)" in values["outputs off"]) == missing, values
        assert (values[f"published {topic}"] == "off") == missing, values
        logged = [line for line in run["logs"]["simulator_node"].splitlines()
                  if f"{NAMESPACE}/{topic} off" in line and f"ROS 2 package {package}" in line]
        assert len(logged) == (1 if missing else 0), run["logs"]["simulator_node"][-2000:]


def test_the_nodes_stop_cleanly(run):
    for name in NODES:
        assert run[f"exit {name}"] == 0, run["logs"][name][-3000:]
        assert "Traceback" not in run["logs"][name], run["logs"][name][-3000:]
