"""Standalone DDS runtime across processes on loopback: topics, services, latching, robustness, a 1 kHz stream.

Every check runs real processes (``runtime_peer.py``) on a loopback-only Cyclone configuration and a ROS domain
private to this test run. Expected values are the messages the sending side built; on the receiving side the same
bytes are also decoded by rosbags' CDR deserializer, an implementation independent of the generated classes.
"""
from __future__ import annotations

import textwrap
import threading
import time

import numpy as np
import pytest
from cyclonedds.pub import DataWriter

import runtime_peer as peer
from flexrobot_ros.errors import SignalError
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_STREAM, create_node
from flexrobot_ros.runtime.dds_backend import TAKE_BATCH, endpoint_qos
from flexrobot_ros.runtime.messages import as_array, dds_message_types, message_to_dict


@pytest.fixture(scope="module")
def in_process():
    with peer.loopback_in_process():
        yield


def test_six_message_types_cross_processes_intact():
    """JointState, Float64MultiArray, JointTrajectory, DiagnosticArray, MarkerArray and TFMessage published by one
    process arrive in another equal to what was sent, decoded both by the generated classes and by rosbags."""
    env = peer.loopback_env()
    echo = peer.start("echo", "--count", "3", "--timeout", "15", env=env)
    publisher = peer.start("publish", "--count", "3", "--rate", "20", "--wait", "10", env=env)
    peer.result(publisher, 30)
    seen = peer.result(echo, 30)
    types = dds_message_types("jazzy")
    for typename in peer.TYPES:
        expected = [message_to_dict(peer.sample(types, typename, i)) for i in range(3)]
        assert seen["seen"][typename] == expected, typename
        assert seen["rosbags"][typename] == expected, typename


def test_latched_topic_reaches_a_late_subscriber():
    """A transient-local sample published before the subscriber exists is delivered when it joins."""
    env = peer.loopback_env()
    publisher = peer.start("publish", "--types", "std_msgs/msg/Float64MultiArray", "--count", "1", "--wait", "0",
                           "--latched", "--linger", "6", env=env)
    time.sleep(2.0)  # the sample is written (no subscriber exists yet) well before the subscriber starts
    echo = peer.start("echo", "--types", "std_msgs/msg/Float64MultiArray", "--count", "1", "--latched",
                      "--timeout", "8", env=env)
    seen = peer.result(echo, 20)["seen"]["std_msgs/msg/Float64MultiArray"]
    peer.result(publisher, 20)
    assert seen == [message_to_dict(peer.sample(dds_message_types("jazzy"), "std_msgs/msg/Float64MultiArray", 0))]


def test_trigger_and_setbool_services_across_processes(in_process):
    """std_srvs Trigger (relative name in namespace /robot) and SetBool (private ~/enable) served by another
    process; replies are matched to requests by the client guid and sequence number."""
    server = peer.start("serve", "--duration", "8", env=peer.loopback_env())
    node = create_node("test_client")
    trigger = node.create_client(node.types.std_srvs.srv.Trigger, "/robot/trigger")
    enable = node.create_client(node.types.std_srvs.srv.SetBool, "/robot/peer_server/enable")
    other = node.create_client(node.types.std_srvs.srv.SetBool, "/robot/peer_server/enable")
    assert trigger.wait_for_service(10) and enable.wait_for_service(10) and other.wait_for_service(10)

    first = node.call(trigger, trigger.srv_type.Request(), 5)
    second = node.call(trigger, trigger.srv_type.Request(), 5)
    assert (first.success, first.message, second.message) == (True, "triggered 1", "triggered 2")

    # A forged reply for another client, and a stale one for this client, wait in the reply queue before the
    # real one: the client must skip both.
    wire = trigger.srv_type.wire_response
    writer = DataWriter(node.context.publisher, node.context.topic("rr/robot/triggerReply", wire),
                        endpoint_qos(QOS_DEFAULT, "std_srvs/srv/Trigger", "jazzy", reader=False))
    time.sleep(0.5)
    writer.write(wire(client_guid=(trigger.guid + 1) % 2**64, sequence_number=3, success=False, message="forged"))
    writer.write(wire(client_guid=trigger.guid, sequence_number=1, success=False, message="stale"))
    time.sleep(0.2)
    third = node.call(trigger, trigger.srv_type.Request(), 5)
    assert (third.success, third.message) == (True, "triggered 3")
    assert trigger.ignored_replies >= 2

    # Two clients of one service call at once: each gets the answer to its own request.
    futures = [enable.call_async(enable.srv_type.Request(data=True), 5),
               other.call_async(other.srv_type.Request(data=False), 5)]
    answers = [f.result(10).message for f in futures]
    assert answers == ["enabled=True", "enabled=False"]
    assert enable.ignored_replies + other.ignored_replies >= 1  # each saw the other's reply and dropped it
    # the server's state after two concurrent requests is whichever it served last; one more call settles it
    assert node.call(enable, enable.srv_type.Request(data=False), 5).message == "enabled=False"
    node.destroy()
    assert peer.result(server, 20) == {"calls": 3, "enabled": False}


def test_malformed_and_invalid_samples_never_stop_a_node(in_process):
    """Samples that do not decode (a joint name that is not UTF-8) are dropped and counted, a callback rejecting
    NaN (as nodes do, with a FlexrobotError) is logged once and counted, the writer's disappearance (an invalid
    sample) is filtered, and a valid message sent after all that is still delivered."""
    node = create_node("robust_listener")
    received = []

    def on_state(msg):
        if not np.isfinite(as_array(msg.position)).all():
            raise SignalError(f"joint_states: non-finite position {list(msg.position)}")
        received.append(msg.header.stamp.nanosec)

    node.create_subscription(node.types.sensor_msgs.msg.JointState, "joint_states", on_state)
    sender = peer.start("malformed", "--linger", "1.0", env=peer.loopback_env())
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and sender.poll() is None:
        node.spin_once(0.05)
    node.spin(1.0)  # let the writer's unregistration arrive
    peer.result(sender, 10)
    undecodable = [c for c in node.input_errors if "undecodable" in c]
    rejected = [c for c in node.input_errors if "non-finite" in c]
    sent = peer.sample(node.types, "sensor_msgs/msg/JointState", 7)
    assert received == [sent.header.stamp.nanosec]  # the valid sample, number 7
    assert len(undecodable) == 1 and node.input_errors[undecodable[0]] == 2
    assert len(rejected) == 1 and node.input_errors[rejected[0]] == 1
    assert node.invalid_samples >= 1
    node.destroy()


def test_1khz_joint_state_stream_loses_nothing_10s():
    """10 000 JointStates at 1 kHz with the simulator's reliable QoS (QOS_STREAM) and a keep-all listener, as the bag
    recorder subscribes, all arrive, in order (the 60 s figure: test_runtime_dds_soak.py)."""
    peer.stream_loses_nothing(10.0, 25.0)


def test_timer_and_subscription_share_one_spinning_thread(in_process):
    """Timer callbacks keep their period while a subscription is served in the same spin (10 Hz for 1 s)."""
    node = create_node("timer_node")
    ticks = []
    node.create_timer(0.1, lambda: ticks.append(time.monotonic()))
    stop = threading.Timer(1.05, node.request_stop)
    stop.start()
    node.spin(5.0)
    node.destroy()
    assert 9 <= len(ticks) <= 11


def test_timers_run_between_the_batches_of_readers_behind_their_streams(in_process):
    """Two readers each 600 samples behind, a callback of 1 ms per sample, a 50 ms timer: the timer runs after every
    batch a reader takes (at most TAKE_BATCH = 256 callbacks, 0.256 s, between ticks), not only once all readers
    had their turn (512 callbacks in a row), as a bag's checkpoint timer needs under load. The timer is due after
    each batch whatever the machine's load: a batch sleeps five of its periods."""
    node = create_node("backlogged_node")
    events: list[str] = []
    qos = QOS_STREAM.keeping_all()

    def on_sample(topic):
        def callback(msg):
            time.sleep(0.001)
            events.append(topic)
        return callback

    publishers = []
    for topic in ("backlog_a", "backlog_b"):
        node.create_subscription(node.types.std_msgs.msg.Float64, topic, on_sample(topic), qos)
        publishers.append(node.create_publisher(node.types.std_msgs.msg.Float64, topic, qos))
    for publisher in publishers:
        for i in range(600):
            publisher.publish(node.types.std_msgs.msg.Float64(data=float(i)))
    node.create_wall_timer(0.05, lambda: events.append("tick"))
    deadline = time.monotonic() + 60
    while events.count("backlog_a") + events.count("backlog_b") < 1200 and time.monotonic() < deadline:
        node.spin_once(0.05)
    node.destroy()
    assert events.count("backlog_a") == events.count("backlog_b") == 600
    runs = [len(run) for run in "".join("t" if e == "tick" else "s" for e in events).split("t")]
    assert max(runs) <= TAKE_BATCH, runs


def test_the_documented_example_node_works(in_process):
    """The example in ``flexrobot_ros.runtime``'s docstring, run as written: parameters, scaled re-publication,
    latched info, private service."""
    import flexrobot_ros.runtime as runtime

    code = runtime.__doc__.split("::\n", 1)[1].split("\nChoosing the back end")[0]
    namespace: dict = {}
    exec(textwrap.dedent(code), namespace)
    app_node = create_node("echo_node", namespace="/doc", parameters={"gain": 3.0})
    app = namespace["EchoNode"](app_node)
    probe = create_node("probe")
    joint_state, string = probe.types.sensor_msgs.msg.JointState, probe.types.std_msgs.msg.String
    scaled, info = [], []
    probe.create_subscription(joint_state, "/doc/scaled_states", scaled.append)
    probe.create_subscription(string, "/doc/echo_node/info", lambda m: info.append(m.data), runtime.QOS_LATCHED)
    publisher = probe.create_publisher(joint_state, "/doc/joint_states")
    client = probe.create_client(probe.types.std_srvs.srv.Trigger, "/doc/echo_node/reset")
    spinner = threading.Thread(target=app_node.spin, args=(10.0,), daemon=True)
    spinner.start()
    assert client.wait_for_service(5)
    while publisher.get_subscription_count() == 0:
        probe.spin_once(0.01)
    publisher.publish(joint_state(name=["a", "b"], position=[1.0, -2.0]))
    deadline = time.monotonic() + 5
    while (not scaled or not info) and time.monotonic() < deadline:
        probe.spin_once(0.05)
    response = probe.call(client, client.srv_type.Request(), 5)
    app_node.request_stop()
    spinner.join(5)
    assert list(scaled[0].position) == [3.0, -6.0] and scaled[0].header.frame_id == "base_link"
    assert info == ["gain 3.0"] and (response.success, response.message) == (True, "reset")
    assert app.gain == 3.0
    app_node.destroy()
    probe.destroy()
