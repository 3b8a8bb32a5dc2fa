"""Peer processes for the runtime tests (run as ``python runtime_peer.py ROLE ...``), and shared test helpers.

Each role is a small node written against ``flexrobot_ros.runtime`` on the dds back end and prints one JSON
line with what it saw on stdout, so the tests can check it from the parent process.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: Loopback-only Cyclone configuration (lo has no multicast here: unicast discovery on 127.0.0.1).
LOOPBACK_CONFIG = (
    '<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>'
    "<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
    '<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers>'
    "</Discovery></Domain></CycloneDDS>"
)

#: The message types the tests exchange, with a builder of a populated sample for index i.
TYPES = ("sensor_msgs/msg/JointState", "std_msgs/msg/Float64MultiArray", "trajectory_msgs/msg/JointTrajectory",
         "diagnostic_msgs/msg/DiagnosticArray", "visualization_msgs/msg/MarkerArray", "tf2_msgs/msg/TFMessage")


def run_domain(separate: bool = False) -> int:
    """The ROS domain of this test process and its peers (rclpy and standalone alike): distinct between the process
    units running beside each other (test/conftest.py sets ``$FLEXROBOT_TEST_UNIT``: ``dds-0`` uses 101-154, ``dds-1``
    156-209), between the files of a unit (``$FLEXROBOT_TEST_SLOT``, two domains apart: the next one up is free for
    test_runtime_discovery_scope.py's second domain) and, by the process id, between concurrent test runs on one
    machine. ``separate``: for a test file that is a work unit of its own (``WORK_UNIT``), a domain of a range of its
    own (212-231)."""
    if separate:
        return 212 + os.getpid() % 20
    unit = os.environ.get("FLEXROBOT_TEST_UNIT", "")
    index = int(unit[4:]) if unit.startswith("dds-") and unit[4:].isdigit() else 0
    slot = int(os.environ.get("FLEXROBOT_TEST_SLOT", "0") or 0)
    return 101 + 55 * index + (os.getpid() + 2 * slot) % 54


def loopback_env(separate: bool = False, **extra: str) -> dict[str, str]:
    """Environment for a peer: loopback-only Cyclone, this test run's ROS domain (:func:`run_domain`), the repo on
    PYTHONPATH."""
    env = dict(os.environ)
    env.update({"CYCLONEDDS_URI": LOOPBACK_CONFIG, "FLEXROBOT_RUNTIME": "dds",
                "ROS_DOMAIN_ID": str(run_domain(separate)),
                "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)})
    env.pop("ROS_AUTOMATIC_DISCOVERY_RANGE", None)
    env.pop("ROS_LOCALHOST_ONLY", None)
    env.update(extra)
    return env


@contextlib.contextmanager
def loopback_in_process() -> Iterator[None]:
    """This process on the loopback configuration and run domain (for in-process nodes); DDS context reset after."""
    from flexrobot_ros.runtime import dds_backend

    keys = ("CYCLONEDDS_URI", "FLEXROBOT_RUNTIME", "ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE",
            "ROS_LOCALHOST_ONLY")
    saved = {k: os.environ.get(k) for k in keys}
    dds_backend.shutdown()
    os.environ.update({k: v for k, v in loopback_env().items() if k in keys})
    for key in keys[3:]:
        os.environ.pop(key, None)
    try:
        yield
    finally:
        dds_backend.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start(role: str, *args: str, env: dict[str, str]) -> subprocess.Popen:
    """Start ``runtime_peer.py ROLE ARGS`` with ``env``; stdout is a pipe (its last line is JSON)."""
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), role, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(process: subprocess.Popen, timeout: float) -> dict[str, Any]:
    """The JSON line a peer printed last; kills it (and fails) when it overruns ``timeout``."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"peer overran {timeout} s; stderr:\n{err[-3000:]}")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert process.returncode == 0 and lines, f"peer failed ({process.returncode}); stderr:\n{err[-3000:]}"
    return json.loads(lines[-1])


def stream_loses_nothing(seconds: float, timeout: float, separate: bool = False) -> None:
    """A talker process publishes ``seconds`` x 1000 JointStates at 1 kHz (the simulator's reliable QoS), a listener
    process (keep-all, as the bag recorder) gets them all, in order, within ``timeout`` [s]; prints the latency."""
    count = int(seconds * 1000)
    env = loopback_env(separate)
    listener = start("stream", "--count", str(count), "--timeout", str(timeout), env=env)
    talker = start("stream_publish", "--count", str(count), "--rate", "1000", env=env)
    sent = result(talker, timeout + 20)
    got = result(listener, timeout + 20)
    assert got["indices"] == list(range(count)), f"lost {count - len(got['indices'])} of {count}"
    print(f"1 kHz stream: {count} sent in {sent['elapsed']:.2f} s, all received in order; latency median "
          f"{got['latency_median'] * 1e3:.3f} ms, p99 {got['latency_p99'] * 1e3:.3f} ms")


def sample(types: Any, typename: str, i: int) -> Any:
    """A populated message of ``typename`` whose values depend on the index ``i`` (nested types, arrays,
    sequences, strings, constants, stamps)."""
    from flexrobot_ros.runtime.messages import float_sequence, multiarray, time_message

    m = types.get(typename)
    stamp = time_message(types, 1700000000.0 + i * 1e-3)
    g, v, s = types.geometry_msgs.msg, types.visualization_msgs.msg, types.std_msgs.msg
    if typename == "sensor_msgs/msg/JointState":
        out = m(name=[f"joint_{k}" for k in range(6)], position=float_sequence([i + 0.1 * k for k in range(6)]),
                velocity=float_sequence([-0.5 * k for k in range(6)]), effort=float_sequence([]))
        out.header.stamp, out.header.frame_id = stamp, "base_link"
        return out
    if typename == "std_msgs/msg/Float64MultiArray":
        return multiarray(types, [[i, 1.5], [math.pi, -2.0], [0.25, 1e-9]], ("mode", "joint"))
    if typename == "trajectory_msgs/msg/JointTrajectory":
        t = types.trajectory_msgs.msg
        points = [t.JointTrajectoryPoint(positions=float_sequence([0.1 * k, i]), velocities=float_sequence([1, 2]),
                                         accelerations=float_sequence([3, 4]), effort=float_sequence([5.5, -6]),
                                         time_from_start=types.builtin_interfaces.msg.Duration(sec=k, nanosec=5))
                  for k in range(3)]
        out = m(joint_names=["a1", "a2"], points=points)
        out.header.stamp = stamp
        return out
    if typename == "diagnostic_msgs/msg/DiagnosticArray":
        d = types.diagnostic_msgs.msg
        status = d.DiagnosticStatus(level=d.DiagnosticStatus.WARN, name="oma", message=f"tick {i}",
                                    hardware_id="scompi", values=[d.KeyValue(key="modes", value="9")])
        return m(header=s.Header(stamp=stamp, frame_id=""), status=[status])
    if typename == "visualization_msgs/msg/MarkerArray":
        marker = v.Marker(ns="mode_shapes", id=i, type=v.Marker.LINE_STRIP, action=v.Marker.ADD,
                          points=[g.Point(x=0.1 * k, y=-1.0, z=float(i)) for k in range(4)],
                          color=s.ColorRGBA(r=1.0, g=0.5, b=0.0, a=1.0))
        marker.header.frame_id, marker.scale.x, marker.pose.orientation.w = "world", 0.01, 1.0
        return m(markers=[marker])
    if typename == "tf2_msgs/msg/TFMessage":
        tf = g.TransformStamped(child_frame_id=f"link_{i % 7}")
        tf.header.stamp, tf.header.frame_id = stamp, "world"
        tf.transform.translation.x, tf.transform.rotation.w = 0.5 * i, 1.0
        return m(transforms=[tf])
    raise ValueError(typename)


# ------------------------------------------------------------------------------------------------------------
# Roles
# ------------------------------------------------------------------------------------------------------------

def _wait_matched(publisher: Any, timeout: float, settle: float = 0.3) -> bool:
    """Wait for a subscriber, then let discovery settle on the subscriber's side too."""
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(settle)
    return publisher.get_subscription_count() > 0


def role_publish(args: argparse.Namespace) -> dict[str, Any]:
    """Publish ``count`` samples of each type in ``types`` at ``rate`` Hz after subscribers match."""
    from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, create_node

    node = create_node("peer_publisher")
    qos = QOS_LATCHED if args.latched else QOS_DEFAULT
    publishers = {t: node.create_publisher(node.types.get(t), args.topic_prefix + t.rsplit("/", 1)[1].lower(), qos)
                  for t in args.types}
    if args.wait:
        for publisher in publishers.values():
            _wait_matched(publisher, args.wait)
    period = 1.0 / args.rate
    start = time.monotonic()
    for i in range(args.count):
        for typename, publisher in publishers.items():
            publisher.publish(sample(node.types, typename, i))
        delay = start + (i + 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    elapsed = time.monotonic() - start
    time.sleep(args.linger)
    node.destroy()
    return {"published": args.count, "elapsed": elapsed}


def role_echo(args: argparse.Namespace) -> dict[str, Any]:
    """Subscribe to each type; record every message as plain data, and decode the same bytes with rosbags."""
    from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, create_node
    from flexrobot_ros.runtime.messages import message_to_dict, typestore

    node = create_node("peer_echo")
    qos = QOS_LATCHED if args.latched else QOS_DEFAULT
    store = typestore("jazzy")
    seen: dict[str, list[Any]] = {t: [] for t in args.types}
    rosbags_seen: dict[str, list[Any]] = {t: [] for t in args.types}
    for typename in args.types:
        topic = args.topic_prefix + typename.rsplit("/", 1)[1].lower()
        node.create_subscription(node.types.get(typename), topic,
                                 lambda msg, t=typename: seen[t].append(message_to_dict(msg)), qos)
        node.create_raw_subscription(typename, topic, lambda data, _, t=typename: rosbags_seen[t].append(
            message_to_dict(store.deserialize_cdr(bytes(data), t))), qos)
    deadline = time.monotonic() + args.timeout
    received = [*seen.values(), *rosbags_seen.values()]
    while time.monotonic() < deadline and min(len(v) for v in received) < args.count:
        node.spin_once(0.05)  # the typed and the raw reader are two DDS readers: each gets every sample on its own
    node.destroy()
    return {"seen": seen, "rosbags": rosbags_seen}


def role_stream(args: argparse.Namespace) -> dict[str, Any]:
    """Receive a JointState stream, recording the index carried in position[0] and the one-way latency; keep-all
    history, as the bag recorder subscribes (a listener stalled by a loaded machine loses nothing)."""
    from flexrobot_ros.runtime import QOS_STREAM, create_node
    from flexrobot_ros.runtime.messages import time_seconds

    node = create_node("peer_stream")
    indices: list[int] = []
    latencies: list[float] = []

    def on_state(msg: Any) -> None:
        latencies.append(time.time() - time_seconds(msg.header.stamp))
        indices.append(int(msg.position[0]))

    node.create_subscription(node.types.sensor_msgs.msg.JointState, "stream", on_state, QOS_STREAM.keeping_all())
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and len(indices) < args.count:
        node.spin_once(0.05)
    cpu = time.process_time()
    node.destroy()
    latencies.sort()
    return {"indices": indices, "latency_median": latencies[len(latencies) // 2] if latencies else None,
            "latency_p99": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None, "cpu_s": cpu}


def role_stream_publish(args: argparse.Namespace) -> dict[str, Any]:
    """Publish ``count`` JointStates at ``rate`` Hz, position[0] = index, header.stamp = send time, with the QoS of
    the simulator's state streams (``QOS_STREAM``)."""
    from flexrobot_ros.runtime import QOS_STREAM, create_node
    from flexrobot_ros.runtime.messages import float_sequence

    node = create_node("peer_stream_publisher")
    joint_state = node.types.sensor_msgs.msg.JointState
    publisher = node.create_publisher(joint_state, "stream", QOS_STREAM)
    if not _wait_matched(publisher, args.wait):
        return {"error": "no subscriber"}
    names = [f"joint_{k}" for k in range(6)]
    period, start = 1.0 / args.rate, time.monotonic()
    for i in range(args.count):
        msg = joint_state(name=names, position=float_sequence([i, 0.1, 0.2, 0.3, 0.4, 0.5]),
                          velocity=float_sequence([0.0] * 6), effort=float_sequence([0.0] * 6))
        msg.header.stamp = node.stamp()
        publisher.publish(msg)
        delay = start + (i + 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    elapsed = time.monotonic() - start
    time.sleep(args.linger)
    cpu = time.process_time()
    node.destroy()
    return {"published": args.count, "elapsed": elapsed, "cpu_s": cpu}


def role_serve(args: argparse.Namespace) -> dict[str, Any]:
    """Serve std_srvs Trigger on ``trigger`` and SetBool on ``~/enable``; spin for ``duration`` seconds."""
    from flexrobot_ros.runtime import create_node, spin

    node = create_node("peer_server", namespace="/robot")
    state = {"calls": 0, "enabled": False}

    def on_trigger(request: Any, response: Any) -> Any:
        state["calls"] += 1
        response.success, response.message = True, f"triggered {state['calls']}"
        return response

    def on_enable(request: Any, response: Any) -> Any:
        state["enabled"] = request.data
        response.success, response.message = True, f"enabled={request.data}"
        return response

    node.create_service(node.types.std_srvs.srv.Trigger, "trigger", on_trigger)
    node.create_service(node.types.std_srvs.srv.SetBool, "~/enable", on_enable)
    print("ready", flush=True)
    spin(node, args.duration)
    node.destroy()
    return state


def role_malformed(args: argparse.Namespace) -> dict[str, Any]:
    """Send on ``joint_states``: two samples whose joint name is not UTF-8 (Cyclone's own CDR check passes them,
    decoding to Python fails, as with a C++ peer sending raw bytes), one with a NaN position (decodes; the node's
    callback rejects it), then a valid one; then exit, which reaches the reader as an invalid sample."""
    from flexrobot_ros.runtime import create_node

    node = create_node("peer_malformed")
    joint_state = node.types.sensor_msgs.msg.JointState
    publisher = node.create_publisher(joint_state, "joint_states")
    _wait_matched(publisher, args.wait)
    valid = sample(node.types, "sensor_msgs/msg/JointState", 7).serialize()
    not_utf8 = valid.replace(b"joint_3", b"\xff\xfe\xfdnt_3")
    publisher.publish_raw(not_utf8)
    publisher.publish_raw(not_utf8)
    nan_state = sample(node.types, "sensor_msgs/msg/JointState", 8)
    nan_state.position[2] = float("nan")
    publisher.publish(nan_state)
    publisher.publish_raw(valid)
    time.sleep(args.linger)
    node.destroy()
    return {"sent": 4}


class ParamNode:
    """A node written once against the runtime API: declared parameters, a latched report of them on
    ``~/params``, and a ``close()`` that leaves a marker file (proof of a clean shutdown)."""

    def __init__(self, node: Any) -> None:
        from flexrobot_ros.runtime import QOS_LATCHED, ParameterSpec

        self.node = node
        values = node.declare_parameters([
            ParameterSpec("rate_hz", 100.0, "publishing rate [Hz]", range=(1.0, 10000.0)),
            ParameterSpec("robot", "planar_2r", "shipped robot", choices=("scompi", "planar_2r", "lwr4", "kr90")),
            ParameterSpec("gains", [1.0, 2.0], "PD gains [N*m/rad]"),
            ParameterSpec("excitation.period_s", 1.0, "impact period [s]", range=(0.1, 60.0)),
        ])
        report = {"parameters": values, "fqn": node.fully_qualified_name,
                  "joint_states": node.resolve_name("joint_states")}
        self.publisher = node.create_publisher(node.types.std_msgs.msg.String, "~/params", QOS_LATCHED)
        self.publisher.publish(node.types.std_msgs.msg.String(data=json.dumps(report)))
        Path(os.environ["PEER_MARKER_DIR"], f"{node.name}.started").write_text("started")

    def close(self) -> None:
        Path(os.environ["PEER_MARKER_DIR"], f"{self.node.name}.closed").write_text("closed")


def main() -> None:
    if sys.argv[1] == "param_node":  # a node main(): everything after the role is its ROS command line
        from flexrobot_ros.runtime import run_node

        wait_for = os.environ.get("PEER_WAIT_FOR")  # start only once that node is up (ordering in tests)
        deadline = time.monotonic() + 30.0
        while wait_for and not Path(wait_for).exists() and time.monotonic() < deadline:
            time.sleep(0.05)

        sys.exit(run_node(ParamNode, "param_node", sys.argv[2:]))
    parser = argparse.ArgumentParser()
    parser.add_argument("role")
    parser.add_argument("--types", nargs="*", default=list(TYPES))
    parser.add_argument("--topic-prefix", default="test_")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--wait", type=float, default=10.0)
    parser.add_argument("--linger", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--latched", action="store_true")
    args = parser.parse_args()
    roles = {"publish": role_publish, "echo": role_echo, "stream": role_stream, "stream_publish": role_stream_publish,
             "serve": role_serve, "malformed": role_malformed}
    print(json.dumps(roles[args.role](args)), flush=True)


if __name__ == "__main__":
    main()
