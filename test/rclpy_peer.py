"""The tests' own rclpy node: an rclpy context of its own in the test's ROS domain (runtime_peer.run_domain), a node in
a namespace collecting the nodes' ``<ns>/diagnostics``, spun in a thread. Import it after
``pytest.importorskip("rclpy")``; discovery follows the environment (test/conftest.py: localhost only)."""
from __future__ import annotations

import threading

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor

import runtime_peer as peer


class DiagnosticsWatcher:
    """``status``: {node name: {key: value}} of the newest diagnostics of each node; ``node``: the rclpy node (more
    subscriptions may be added before or after :meth:`start`)."""

    def __init__(self, namespace: str, name: str) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=peer.run_domain())
        self.node = rclpy.create_node(name, namespace=namespace, context=self.context)
        self.status: dict[str, dict[str, str]] = {}
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 100)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self.status[status.name.split(":")[0].rsplit("/", 1)[-1]] = {kv.key: kv.value for kv in status.values}

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def count(self, node: str, key: str) -> float:
        """A numeric diagnostics value of ``node`` (-1 before it reported one)."""
        text = self.status.get(node, {}).get(key)
        return float(text) if text not in (None, "") else -1.0

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
