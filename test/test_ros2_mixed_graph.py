"""Mixed graphs: standalone (Cyclone DDS) and rclpy (Fast DDS) nodes in one ROS graph (deliverable 5).

Topics interoperate across the two DDS vendors (the wire conventions of :mod:`flexrobot_ros.runtime.
dds_backend`); services and parameters do not (Fast DDS carries the request id outside the payload, Cyclone inside
it), so a client whose server is on the other vendor fails at once with an error saying so
(:mod:`flexrobot_ros.runtime.vendors`). Cases, each a few node processes in a namespace of its own:

- streams, both ways: simulator_node on one runtime feeding modal_monitor_node and oma_node on the other, with
  ``config/scompi_simulation.yaml``; the receiving nodes count the streams in their ``/diagnostics`` and publish
  their results (the monitor's modes, the OMA node's identified frequencies). The diagnostics are collected by an
  rclpy (Fast DDS) node in this process, so the standalone nodes' diagnostics cross the vendors too.
- services, both ways: a standalone simulator's ``~/run`` called through an rclpy node of the runtime
  (``create_client``, ``wait_for_service``, ``call``, ``call_async``) and an rclpy simulator's ``~/run`` and its
  parameters (``remote_parameters``) from a standalone node: each fails within a second of discovery with a
  RuntimeLayerError naming both runtimes and how to run both on one.

Discovery: the standalone processes use the loopback-only Cyclone configuration of the other DDS tests
(``runtime_peer.LOOPBACK_CONFIG``: unicast to 127.0.0.1, no multicast); the rclpy processes
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (Fast DDS on loopback). Cyclone's unicast discovery reaches Fast DDS's
participant ports on 127.0.0.1 (the same port formula), and each side then learns the other's locators, so both
find each other without multicast. Skipped where rclpy is not installed.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

import runtime_peer as peer

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

from rclpy_peer import DiagnosticsWatcher  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "scompi_simulation.yaml"
#: The simulator's impacts keep the OMA node's window busy; the monitor computes the modes of the held pose.
RECEIVERS = ("modal_monitor_node", "oma_node")


def environment(runtime: str) -> dict[str, str]:
    """A node process's environment on ``runtime`` (``dds`` or ``rclpy``): this run's ROS domain, loopback discovery
    (Cyclone's unicast configuration, or Fast DDS's ``LOCALHOST`` range), one BLAS thread."""
    env = peer.loopback_env(FLEXROBOT_RUNTIME=runtime, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
                            OPENBLAS_NUM_THREADS="1")
    if runtime == "rclpy":
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return env


def start(node: str, runtime: str, namespace: str, log: Path, *extra: str) -> subprocess.Popen:
    """``python -m flexrobot_ros.nodes.<node>`` on ``runtime`` in ``namespace`` with the Scompi simulation file."""
    argv = [sys.executable, "-m", f"flexrobot_ros.nodes.{node}", "--ros-args", "-r", f"__ns:={namespace}",
            "--params-file", str(PARAMS), *extra]
    return subprocess.Popen(argv, cwd=REPO, env=environment(runtime), stdin=subprocess.DEVNULL, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, text=True)


def wait_until(condition: Callable[[], bool], seconds: float, processes: dict[str, subprocess.Popen],
               logs: Path) -> bool:
    """Poll ``condition`` for up to ``seconds``; fail at once, with its output, when a node process ended."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ended = {name: (logs / f"{name}.log").read_text()[-2000:] for name, p in processes.items()
                 if p.poll() is not None}
        assert not ended, f"node processes ended: {ended}"
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def stop(processes: dict[str, subprocess.Popen]) -> dict[str, int]:
    """SIGINT to every process, then their exit codes (killed after 20 s)."""
    for process in processes.values():
        if process.poll() is None:
            process.send_signal(2)
    codes = {}
    for name, process in processes.items():
        try:
            codes[name] = process.wait(timeout=20.0)
        except subprocess.TimeoutExpired:
            process.kill()
            codes[name] = process.wait()
    return codes


@pytest.mark.parametrize("simulator, receivers", [("dds", "rclpy"), ("rclpy", "dds")],
                         ids=["dds_simulator_to_rclpy_nodes", "rclpy_simulator_to_dds_nodes"])
def test_streams_cross_the_vendors(simulator, receivers, tmp_path):
    """The simulator's 1 kHz motor_states and its joint_states reach the monitor and OMA node on the other vendor:
    the OMA node counts at least 2,000 samples and then 1,500 more with no gap, the monitor computes the modes of the
    pose, and both publish their results (counted in their diagnostics, collected across the vendors too)."""
    namespace = f"/mixed_{os.getpid()}_{simulator}"
    collector = DiagnosticsWatcher(namespace, "mixed_graph_collector")
    processes: dict[str, subprocess.Popen] = {}
    started = time.monotonic()
    try:
        processes["simulator_node"] = start("simulator_node", simulator, namespace, tmp_path / "simulator_node.log")
        for node in RECEIVERS:
            processes[node] = start(node, receivers, namespace, tmp_path / f"{node}.log",
                                    *(["-p", "window_s:=1.5", "-p", "orders:='2:30'"] if node == "oma_node" else []))

        def done() -> bool:
            return (collector.count("oma_node", "samples received") >= 2000
                    and collector.count("oma_node", "published oma/frequencies") >= 1
                    and collector.count("modal_monitor_node", "computations") >= 1
                    and collector.count("modal_monitor_node", "published modal/frequencies") >= 1)

        ok = wait_until(done, 90.0, processes, tmp_path)
        elapsed = time.monotonic() - started
        status = {name: dict(values) for name, values in collector.status.items()}
        samples = collector.count("oma_node", "samples received")
        steady = ok and wait_until(lambda: collector.count("oma_node", "samples received") >= samples + 1500, 30.0,
                                   processes, tmp_path)
        later = dict(collector.status.get("oma_node", {}))
    finally:
        codes = stop(processes)
        collector.close()
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in processes}
    assert ok, f"not received across the vendors within 90 s: {status}\n" + "\n".join(
        f"--- {name}\n{text[-1500:]}" for name, text in logs.items())
    oma, monitor, sim = status["oma_node"], status["modal_monitor_node"], status["simulator_node"]
    print(f"{simulator} simulator -> {receivers} nodes in {elapsed:.1f} s: simulator published "
          f"{sim['published motor_states']} motor_states, {sim['published joint_states']} joint_states; OMA received "
          f"{oma['samples received']} (gaps {oma['window restarts (gaps)']}), identified {oma['frequencies [Hz]']}; "
          f"monitor: {monitor['computations']} computations, verdict {monitor.get('verdict')}")
    # steady state: no gap in 1,500 more samples. At the start, a Cyclone reader joining a Fast DDS writer's 1 kHz
    # stream mid-way gets the first 127 samples and then nothing for about 0.6 s, until the writer's first heartbeat
    # (5 of 6 late joins measured; Cyclone to Fast DDS and either to itself: none): one window restart at most.
    assert steady and later["window restarts (gaps)"] == oma["window restarts (gaps)"] in ("0", "1"), (oma, later)
    assert codes == {name: 0 for name in processes}, {name: logs[name][-2000:] for name in processes}
    for name, text in logs.items():
        assert "Traceback" not in text, f"{name}:\n{text[-3000:]}"


@pytest.fixture
def client_node(monkeypatch):
    """``make(backend)``: a runtime node of this process on ``backend``, in this run's ROS domain on loopback (as
    :func:`environment`); destroyed and its back end shut down afterwards."""
    from flexrobot_ros.runtime import create_node, shutdown

    made = []

    def make(backend: str):
        for key, value in environment(backend).items():
            if key in ("CYCLONEDDS_URI", "FLEXROBOT_RUNTIME", "ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
                monkeypatch.setenv(key, value)
        if backend == "dds":
            monkeypatch.delenv("ROS_AUTOMATIC_DISCOVERY_RANGE", raising=False)
        shutdown(backend)  # a DDS context made before the environment was set would use the old one
        made.append((create_node(f"mixed_{backend}_client", backend=backend), backend))
        return made[-1][0]

    yield make
    for node, backend in made:
        node.destroy()
        shutdown(backend)


def elapsed(call: Callable[[], object]) -> tuple[float, str]:
    """Seconds until ``call()`` raised the cross-vendor RuntimeLayerError, and its message."""
    from flexrobot_ros.errors import RuntimeLayerError

    start = time.monotonic()
    with pytest.raises(RuntimeLayerError, match="do not interoperate") as error:
        call()
    return time.monotonic() - start, str(error.value)


@pytest.mark.parametrize("server, client", [("dds", "rclpy"), ("rclpy", "dds")],
                         ids=["rclpy_client_of_a_standalone_server", "standalone_client_of_an_rclpy_server"])
def test_service_calls_across_the_vendors_fail_at_once(server, client, client_node, tmp_path):
    """simulator_node on ``server``; a runtime node of this process on the other vendor calls its ``~/run`` and its
    parameter services. ``wait_for_service`` (30 s allowed) ends as soon as the server is discovered, and a fresh
    client's ``call``, ``call_async`` and ``service_is_ready``, and ``get_remote_parameters`` /
    ``set_remote_parameters``, raise within half a second (not after their 30 s timeouts), each naming the service,
    both runtimes and the fix."""
    from flexrobot_ros.runtime.remote_parameters import get_remote_parameters, set_remote_parameters

    namespace = f"/mixed_{os.getpid()}_{server}_server"
    service = f"{namespace}/simulator_node/run"
    processes = {"simulator_node": start("simulator_node", server, namespace, tmp_path / "simulator_node.log")}
    try:
        node = client_node(client)
        set_bool = node.types.std_srvs.srv.SetBool
        discovered, message = elapsed(lambda: node.create_client(set_bool, service).wait_for_service(timeout_sec=30.0))
        runtimes = {"dds": "a standalone (Cyclone DDS) node", "rclpy": "an rclpy (Fast DDS) node"}
        expected = f"service {service} is served by {runtimes[server]} and this is {runtimes[client]}: "
        assert message.startswith(expected), message
        assert "FLEXROBOT_RUNTIME=rclpy" in message and "FLEXROBOT_RUNTIME=dds" in message, message
        times = {"wait_for_service": discovered}
        for what, call in {
            "call": lambda: node.call(node.create_client(set_bool, service), set_bool.Request(data=True), 30.0),
            "call_async": lambda: node.create_client(set_bool, service).call_async(set_bool.Request(data=True)),
            "service_is_ready": lambda: node.create_client(set_bool, service).service_is_ready(),
            "get_remote_parameters": lambda: get_remote_parameters(node, f"{namespace}/simulator_node",
                                                                   ["rate_hz"], 30.0),
            "set_remote_parameters": lambda: set_remote_parameters(node, f"{namespace}/simulator_node",
                                                                   {"kd": 40.0}, 30.0),
        }.items():
            times[what], message = elapsed(call)
            assert runtimes[server] in message and runtimes[client] in message, message
        print(f"{client} client -> {server} server: " + ", ".join(f"{k} {v:.3f} s" for k, v in times.items()))
        assert max(v for k, v in times.items() if k != "wait_for_service") < 0.5, times
        assert discovered < 20.0, times
        assert processes["simulator_node"].poll() is None
    finally:
        codes = stop(processes)
    assert codes == {"simulator_node": 0}, (tmp_path / "simulator_node.log").read_text()[-2000:]
