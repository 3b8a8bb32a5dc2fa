"""rosbag2 record / play / info / read on the standalone runtime, checked with rosbags as the independent reader.

Counts are checked against what the publishing process sent; types against the ROS 2 Jazzy definitions and
their RIHS01 hashes; playback timing against the timestamps written into a bag by rosbags' own writer.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import runtime_peer as peer
from flexrobot_ros import cli
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import bags, create_node
from flexrobot_ros.runtime.messages import dds_message_types, float_sequence, message_to_dict, typestore

COUNT = 20

#: A separate process that reads a bag with nothing but rosbags and reports types, hashes and counts.
ROSBAGS_READER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    out = {}
    with AnyReader([Path(sys.argv[1])], default_typestore=store) as reader:
        for c in reader.connections:
            out[c.topic] = {"type": c.msgtype, "count": c.msgcount, "hash": store.hash_rihs01(c.msgtype),
                            "stored_hash": c.digest}
        decoded = sum(1 for c, t, raw in reader.messages() if reader.deserialize(raw, c.msgtype) is not None)
    print(json.dumps({"topics": out, "decoded": decoded}))
""")


@pytest.fixture(scope="module")
def in_process():
    with peer.loopback_in_process():
        yield


def _publish_six_types(env: dict[str, str]) -> subprocess.Popen:
    return peer.start("publish", "--count", str(COUNT), "--rate", "50", "--wait", "15", "--linger", "1.0", env=env)


def _check_with_rosbags(path) -> None:
    out = subprocess.run([sys.executable, "-c", ROSBAGS_READER, str(path)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    seen = json.loads(out)
    # recording every topic includes /parameter_events (every ROS 2 node publishes it; rosbag2's -a records it too)
    events = seen["topics"].pop("/parameter_events", {"count": 0})
    seen["decoded"] -= events["count"]
    expected_topics = {"/test_" + t.rsplit("/", 1)[1].lower(): t for t in peer.TYPES}
    assert {topic: v["type"] for topic, v in seen["topics"].items()} == expected_topics
    assert all(v["count"] == COUNT for v in seen["topics"].values()), seen["topics"]
    assert all(v["stored_hash"] == v["hash"] for v in seen["topics"].values())  # Jazzy type hashes in the bag
    assert seen["decoded"] == COUNT * len(peer.TYPES)


def test_record_sqlite3_every_published_message_readable_by_rosbags(in_process, tmp_path):
    """The in-process recorder catches all 20 messages of each of the six types a peer publishes (sqlite3)."""
    node = create_node("recorder")
    recorder = bags.BagRecorder(node, tmp_path / "bag", [f"test_{t.rsplit('/', 1)[1].lower()}" for t in peer.TYPES],
                                storage="sqlite3")
    publisher = _publish_six_types(peer.loopback_env())
    deadline = time.monotonic() + 30
    while publisher.poll() is None and time.monotonic() < deadline:
        node.spin_once(0.05)
    node.spin(0.5)
    sent = peer.result(publisher, 10)
    info = recorder.close()
    node.destroy()
    assert sent["published"] == COUNT
    assert info.storage == "sqlite3" and info.counts() == recorder.counts
    _check_with_rosbags(tmp_path / "bag")


def test_cli_record_mcap_and_info(tmp_path):
    """``flexrobot bag record -a -s mcap --duration`` in its own process, then ``flexrobot bag info`` prints each
    topic with its type and the publisher's count."""
    env = peer.loopback_env()
    recorder = subprocess.Popen([sys.executable, "-m", "flexrobot_ros.cli", "bag", "record", "-a", "-s", "mcap",
                                 "-o", str(tmp_path / "bag"), "--duration", "6"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    peer.result(_publish_six_types(env), 30)
    out, err = recorder.communicate(timeout=30)
    assert recorder.returncode == 0, err
    _check_with_rosbags(tmp_path / "bag")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(["bag", "info", str(tmp_path / "bag")]) == 0
    text = printed.getvalue()
    # the recorder's own node announces its parameters (use_sim_time) on /parameter_events, as rclpy's does
    events = re.search(r"Topic: /parameter_events +\| Type: rcl_interfaces/msg/ParameterEvent \| Count: (\d+) ", text)
    assert "Storage id:        mcap" in text
    assert f"Messages:          {COUNT * 6 + (int(events.group(1)) if events else 0)}" in text
    for typename in peer.TYPES:
        topic = "/test_" + typename.rsplit("/", 1)[1].lower()
        assert any(topic in line and typename in line and f"Count: {COUNT} " in line + " "
                   for line in text.splitlines()), (topic, text)


def _write_bag(path, spacing_s: float, count: int, storage) -> list[bytes]:
    """A JointState bag written by rosbags' Writer: sample i at 1e9 + i * spacing, position = [i, 2i]."""
    from rosbags.rosbag2 import Writer

    store = typestore("jazzy")
    joint_state = store.types["sensor_msgs/msg/JointState"]
    header, time_ = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    raws = []
    with Writer(path, version=9, storage_plugin=storage) as writer:
        connection = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
        for i in range(count):
            msg = joint_state(header(time_(sec=i, nanosec=0), "base"), ["a", "b"], np.array([i, 2.0 * i]),
                              np.array([], float), np.array([], float))
            raw = bytes(store.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
            raws.append(raw)
            writer.write(connection, 1_000_000_000 + int(i * spacing_s * 1e9), raw)
    return raws


def test_play_keeps_original_timing_scaled_by_rate(in_process, tmp_path):
    """20 samples spaced 50 ms in the bag, played at rate 2: they arrive 25 ms apart (0.475 s in all), byte for
    byte as stored."""
    from rosbags.rosbag2 import StoragePlugin

    raws = _write_bag(tmp_path / "bag", 0.05, COUNT, StoragePlugin.SQLITE3)
    node = create_node("play_listener")
    arrivals: list[tuple[float, bytes]] = []
    node.create_raw_subscription("sensor_msgs/msg/JointState", "/joint_states",
                                 lambda data, _: arrivals.append((time.monotonic(), bytes(data))))
    player = subprocess.Popen([sys.executable, "-m", "flexrobot_ros.cli", "bag", "play", str(tmp_path / "bag"),
                               "--rate", "2", "--wait", "10"], env=peer.loopback_env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while player.poll() is None and time.monotonic() < deadline:
        node.spin_once(0.002)
    node.spin(0.3)
    node.destroy()
    out, err = player.communicate(timeout=10)
    assert player.returncode == 0, err
    assert f"played {COUNT} messages" in out
    assert [raw[:len(expected)] for (_, raw), expected in zip(arrivals, raws)] == raws
    times = np.array([t for t, _ in arrivals])
    assert abs((times[-1] - times[0]) - 0.475) < 0.05  # 19 gaps of 25 ms
    assert np.median(np.diff(times)) == pytest.approx(0.025, abs=0.005)


def test_read_bag_yields_topic_time_message(tmp_path):
    """The reader the OMA CLI uses yields (topic, receive time, deserialized message) in time order (MCAP)."""
    from rosbags.rosbag2 import StoragePlugin

    _write_bag(tmp_path / "bag", 0.01, 5, StoragePlugin.MCAP)
    read = list(bags.read_bag(tmp_path / "bag"))
    assert [m.topic for m in read] == ["/joint_states"] * 5
    assert [m.timestamp_ns for m in read] == [1_000_000_000 + i * 10_000_000 for i in range(5)]
    assert [list(m.message.position) for m in read] == [[i, 2.0 * i] for i in range(5)]
    with pytest.raises(RuntimeLayerError, match="no topic"):
        list(bags.read_bag(tmp_path / "bag", topics=["/missing"]))
    with pytest.raises(RuntimeLayerError, match="cannot be opened"):
        bags.bag_info(tmp_path / "nothing_here")


def test_recorded_bytes_decode_to_the_message_sent():
    """What the recorder stores (the CDR the writer sent) decodes with rosbags to the message built on the
    generated classes: the message the bag holds is the message that was published."""
    types = dds_message_types("jazzy")
    store = typestore("jazzy")
    for typename in peer.TYPES:
        built = peer.sample(types, typename, 3)
        assert message_to_dict(store.deserialize_cdr(built.serialize(), typename)) == message_to_dict(built)
    # float_sequence keeps full float64 precision through the bytes
    state = types.sensor_msgs.msg.JointState(position=float_sequence([np.pi, -1e-300]))
    assert list(store.deserialize_cdr(state.serialize(), "sensor_msgs/msg/JointState").position) == [np.pi, -1e-300]


def test_info_prints_epoch_stamps_to_the_nanosecond():
    """Issue 22: start/end were printed from float64 epoch seconds (238 ns resolution in 2026): a bag starting at
    1795730000.123456789 s printed 1795730000.123456717; the integer nanoseconds are printed exactly."""
    info = bags.BagInfo(Path("run"), "sqlite3", 1_795_730_000_123_456_789, 1_795_730_003_000_000_001, 2.876543212,
                        3, ())
    text = bags.format_info(info)
    assert "Start:             1795730000.123456789" in text
    assert "End:               1795730003.000000001" in text
