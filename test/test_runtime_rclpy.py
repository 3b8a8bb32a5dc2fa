"""Back-end selection (always runs) and the rclpy back end (runs only where ROS 2's rclpy is importable).

The rclpy part uses the same node API as the DDS tests, so where ROS 2 is installed it checks that a node
written once behaves the same on rclpy: parameters with descriptors, latched topics, services, guarded callbacks.
"""
from __future__ import annotations

import importlib.util
import time

import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import ParameterSpec, QOS_LATCHED, backend_name, create_node, message_types

HAVE_RCLPY = importlib.util.find_spec("rclpy") is not None


def test_backend_choice_follows_flexrobot_runtime(monkeypatch):
    """FLEXROBOT_RUNTIME wins; unset means rclpy when importable, else dds; nonsense is refused clearly."""
    monkeypatch.delenv("FLEXROBOT_RUNTIME", raising=False)
    assert backend_name() == ("rclpy" if HAVE_RCLPY else "dds")
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "dds")
    assert backend_name() == "dds"
    assert message_types().backend == "dds"
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "zenoh")
    with pytest.raises(RuntimeLayerError, match="FLEXROBOT_RUNTIME='zenoh'"):
        backend_name()
    monkeypatch.setenv("FLEXROBOT_RUNTIME", "rclpy")
    if HAVE_RCLPY:
        assert backend_name() == "rclpy"
    else:
        with pytest.raises(RuntimeLayerError, match="not importable"):
            backend_name()


@pytest.mark.skipif(not HAVE_RCLPY, reason="rclpy (ROS 2) is not installed here")
def test_rclpy_backend_runs_the_same_node_api(monkeypatch):
    from flexrobot_ros.runtime import rclpy_backend

    monkeypatch.setenv("FLEXROBOT_RUNTIME", "rclpy")
    node = create_node("flexrobot_rclpy_check", namespace="/check", parameters={"rate_hz": 500.0})
    try:
        values = node.declare_parameters([
            ParameterSpec("rate_hz", 100.0, "rate [Hz]", range=(1.0, 1000.0)),
            ParameterSpec("method", "sdrnea", "inverse dynamics", choices=("sdrnea", "ejnea")),
            ParameterSpec("gains", [], "gains", type="double_array"),
        ])
        assert values == {"rate_hz": 500.0, "method": "sdrnea", "gains": ()}
        assert node.resolve_name("~/reset") == "/check/flexrobot_rclpy_check/reset"
        string = node.types.std_msgs.msg.String
        received = []
        publisher = node.create_publisher(string, "latched", QOS_LATCHED)
        publisher.publish(string(data="hello"))
        node.create_subscription(string, "latched", lambda m: received.append(m.data), QOS_LATCHED)

        def on_trigger(request, response):
            response.success, response.message = True, "done"
            return response

        trigger = node.types.std_srvs.srv.Trigger
        node.create_service(trigger, "~/go", on_trigger)
        def reject(msg):
            raise RuntimeLayerError(f"bad input {msg.data!r}")

        node.create_subscription(string, "bad", reject)
        node.create_publisher(string, "bad").publish(string(data="x"))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (not received or not node.input_errors):
            rclpy_backend.spin(node, 0.1)
        assert received == ["hello"] and sum(node.input_errors.values()) == 1
        client = node.create_client(trigger, "~/go")
        assert client.wait_for_service(timeout_sec=5.0)
        assert node.call(client, trigger.Request(), 5.0).message == "done"
    finally:
        node.destroy()
        rclpy_backend.rclpy.try_shutdown()


@pytest.mark.skipif(not HAVE_RCLPY, reason="rclpy (ROS 2) is not installed here")
def test_rclpy_descriptors_carry_types_ranges_and_descriptions():
    from rcl_interfaces.msg import ParameterType

    from flexrobot_ros.runtime.rclpy_backend import parameter_descriptor, qos_profile
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    descriptor = parameter_descriptor(ParameterSpec("rate_hz", 100.0, "rate [Hz]", range=(1.0, 1000.0)))
    assert descriptor.type == ParameterType.PARAMETER_DOUBLE and descriptor.description == "rate [Hz]"
    assert (descriptor.floating_point_range[0].from_value, descriptor.floating_point_range[0].to_value) == (1.0,
                                                                                                            1000.0)
    order = parameter_descriptor(ParameterSpec("order", 20, "model order", range=(10, 100), step=10))
    assert (order.integer_range[0].from_value, order.integer_range[0].step) == (10, 10)
    latched = qos_profile(QOS_LATCHED)
    assert latched.durability == DurabilityPolicy.TRANSIENT_LOCAL and latched.depth == 1
    assert latched.reliability == ReliabilityPolicy.RELIABLE
