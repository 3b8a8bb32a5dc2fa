"""Shared helpers of the node tests (not a test module).

- :class:`Harness`: nodes in this process on the standalone DDS runtime, loopback-only, in this test run's own ROS
  domain; one thread spins them all round-robin (as separate processes would run concurrently).
- :class:`Probe`: records every message of the topics it is given.
- :func:`published_type_hashes`: DDS type name and USER_DATA (RIHS01 type hash) of the writers on given topics.
- :func:`node_processes`: the node programs as processes with the shipped Scompi parameter file, through the
  runtime's launcher (the mechanism of ``flexrobot bringup``).
"""
from __future__ import annotations

import io
import logging
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

import runtime_peer as peer
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, create_node
from flexrobot_ros.runtime.messages import as_array, time_seconds
from flexrobot_ros.runtime.processes import Launcher, NodeLaunch

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "scompi_simulation.yaml"
#: Configuration 8 of seed 000 (eq. 2.21; index 7 of the 50-pose sweep of section 2.4.2).
Q8 = np.array([0.0, -0.3739991254273563, 1.9447954522222528, 0.0, -1.9447954522222528, 0.0])
#: Table 2.1 joint stiffness of the Scompi [N m/rad].
TABLE_2_1_K = np.array([25.0, 120.0, 120.0, 57.0, 29.0, 29.0]) * 1000.0


class Harness:
    """Nodes of this process; use as a context manager (loopback DDS configuration, cleaned up after)."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self._context = peer.loopback_in_process()

    def __enter__(self) -> Harness:
        self._context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for node in self.nodes:
            node.destroy()
        self._context.__exit__(*exc)

    def node(self, name: str, parameters: dict[str, Any] | None = None, files: Iterable[Path] = (PARAMS,),
             namespace: str | None = None) -> Any:
        node = create_node(name, namespace=namespace, parameter_files=[str(f) for f in files],
                           parameters=parameters or {}, backend="dds")
        self.nodes.append(node)
        return node

    def spin(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Spin every node for up to ``seconds``; return early (True) once ``until()`` holds. One node waits on its
        DDS wait set (woken by data or its next timer, ``until()`` checked at least every 5 ms); several are polled
        round-robin every 0.5 ms (a node waiting would hold back the others' timers)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if len(self.nodes) == 1:
                self.nodes[0].spin_once(min(left, 0.005))
            else:
                for node in self.nodes:
                    node.spin_once(0.0)
            if until is not None and until():
                return True
            if len(self.nodes) != 1:
                time.sleep(0.0005)
        return until is None or until()

    def call(self, client: Any, request: Any, timeout: float = 60.0) -> Any:
        """A service call answered by a node of this process (keeps spinning while waiting)."""
        assert client.wait_for_service(10.0), f"service {client.srv_name} not available"
        future = client.call_async(request, timeout)
        self.spin(timeout, future.done)
        return future.result(timeout=0)


class Probe:
    """Records the messages of ``topics`` ({topic: type name}); latched topics are subscribed transient-local."""

    def __init__(self, node: Any, topics: dict[str, str], latched: Iterable[str] = (), depth: int = 20000) -> None:
        self.node = node
        self.messages: dict[str, list[Any]] = {topic: [] for topic in topics}
        latched = set(latched)
        for topic, typename in topics.items():
            qos = QOS_LATCHED if topic in latched else QOS_DEFAULT.with_depth(depth)
            node.create_subscription(node.types.get(typename), topic,
                                     lambda msg, topic=topic: self.messages[topic].append(msg), qos)

    def last(self, topic: str) -> Any:
        return self.messages[topic][-1] if self.messages[topic] else None

    def array(self, topic: str) -> np.ndarray | None:
        """``data`` of the newest Float64MultiArray on ``topic``."""
        msg = self.last(topic)
        return None if msg is None else as_array(msg.data)

    def diagnostics(self, node_name: str) -> dict[str, str]:
        """Key/values of the newest status of ``node_name`` on the probe's ``.../diagnostics`` topics."""
        for topic, messages in self.messages.items():
            if not topic.endswith("diagnostics"):
                continue
            for msg in reversed(messages):
                for status in msg.status:
                    if status.name.split(":")[0].endswith("/" + node_name):
                        return {kv.key: kv.value for kv in status.values} | {"__level": status.level,
                                                                             "__message": status.message}
        return {}

    def count(self, node_name: str, key: str) -> int:
        """An integer value of ``node_name``'s newest diagnostics (0 before it reported one)."""
        return int(self.diagnostics(node_name).get(key, 0))


def states(messages: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(stamps [s], position, velocity, effort) arrays of JointState messages."""
    return (np.array([time_seconds(m.header.stamp) for m in messages]),
            np.array([as_array(m.position) for m in messages]), np.array([as_array(m.velocity) for m in messages]),
            np.array([as_array(m.effort) for m in messages]))


def published_type_hashes(topics):
    """{DDS topic: (DDS type name, USER_DATA)} of the writers on ``topics``, from DDS discovery (builtin topic)."""
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    from cyclonedds.core import Policy
    from cyclonedds.domain import DomainParticipant

    participant = DomainParticipant(peer.run_domain())
    reader = BuiltinDataReader(participant, BuiltinTopicDcpsPublication)
    found, deadline = {}, time.monotonic() + 10.0
    while len(found) < len(topics) and time.monotonic() < deadline:
        for sample in reader.take(N=100):
            if getattr(sample, "topic_name", None) in topics:
                found[sample.topic_name] = (sample.type_name, bytes(sample.qos[Policy.Userdata].data))
        time.sleep(0.05)
    return found


class LogRecords(logging.Handler):
    """Captures the log records of the standalone node ``fqn`` (e.g. '/modal_monitor_node')."""

    def __init__(self, fqn: str) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.logger = logging.getLogger(f"flexrobot.{fqn.lstrip('/')}")
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def warnings(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= logging.WARNING]

    def close(self) -> None:
        self.logger.removeHandler(self)
        super().close()


def node_processes(specs: dict[str, dict[str, Any]], output: io.StringIO | None = None,
                   files: Iterable[Path] = (PARAMS,), **options: Any) -> Launcher:
    """A launcher of node programs ``{node name: parameter overrides}`` (node name = module in
    flexrobot_ros.nodes unless the overrides hold ``__module``; ``__namespace``, ``__remap`` also understood)."""
    launches = []
    for name, overrides in specs.items():
        overrides = dict(overrides)
        module, namespace = overrides.pop("__module", name), overrides.pop("__namespace", None)
        remappings = overrides.pop("__remap", {})
        launches.append(NodeLaunch(name, module=f"flexrobot_ros.nodes.{module}", namespace=namespace,
                                   parameter_files=tuple(str(f) for f in files), parameters=overrides,
                                   remappings=remappings))
    return Launcher(launches, env=peer.loopback_env(PYTHONUNBUFFERED="1"),
                    output=output if output is not None else sys.stderr, **options)
