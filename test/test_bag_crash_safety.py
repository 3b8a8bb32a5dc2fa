"""Crash-safe recording (issue 12, item 3): SIGKILL the recorder in the middle of a 1 kHz JointState stream.

The bag (sqlite3 and MCAP) must open with ``flexrobot bag`` and with rosbags (read in a separate process, as the
independent reader) and hold every sample, without a gap, up to at most the last second before the kill;
``flexrobot bag repair`` then finalizes it and reports what it kept. A torn MCAP tail (a kill inside a checkpoint's
write) is cut at the last complete record.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import runtime_peer as peer
from flexrobot_ros import cli
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import bag_recovery, bags

#: rosbags alone, in its own process: per message, position[0] (the publisher's index) and the receive time [ns].
ROSBAGS_INDICES = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore
    with AnyReader([Path(sys.argv[1])], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        rows = [(int(reader.deserialize(raw, c.msgtype).position[0]), t) for c, t, raw in reader.messages()]
    print(json.dumps(rows))
""")


def _rosbags_rows(path) -> list[tuple[int, int]]:
    out = subprocess.run([sys.executable, "-c", ROSBAGS_INDICES, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return [tuple(row) for row in json.loads(out.stdout)]


def _metadata_count(path) -> int:
    info = bag_recovery._metadata_info(path)
    return int(info["message_count"]) if info else 0


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_sigkilled_recorder_leaves_a_readable_bag_up_to_the_last_second(tmp_path, storage):
    env = peer.loopback_env()
    bag = tmp_path / "bag"
    recorder = subprocess.Popen([sys.executable, "-m", "flexrobot_ros.cli", "bag", "record", "/stream", "-s", storage,
                                 "-o", str(bag)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    publisher = peer.start("stream_publish", "--count", "20000", "--rate", "1000",
                           "--wait", "30", "--linger", "0.1", env=env)
    try:
        deadline = time.monotonic() + 60
        while _metadata_count(bag) < 2500:  # 2.5 s of the stream checkpointed: kill in mid-run
            assert time.monotonic() < deadline and recorder.poll() is None and publisher.poll() is None, \
                recorder.stderr.read() if recorder.poll() is not None else "stream did not reach the bag in 60 s"
            time.sleep(0.05)
        time.sleep(0.37)  # off the checkpoint grid
        killed_ns = time.time_ns()
        recorder.send_signal(signal.SIGKILL)
        recorder.wait(10)
    finally:
        publisher.kill()
        publisher.communicate()
        if recorder.poll() is None:
            recorder.kill()
    assert recorder.returncode == -signal.SIGKILL

    try:  # opens as it is, unless the kill fell inside the few ms a checkpoint writes an MCAP chunk
        info = bags.bag_info(bag)
    except RuntimeLayerError as error:
        assert storage == "mcap" and "flexrobot bag repair" in str(error), error
        info = None
    if info is not None:
        assert not info.closed and info.message_count >= 2500
        assert "Not closed" in bags.format_info(info)
        rows = _rosbags_rows(bag)
        indices = [i for i, _ in rows]
        assert indices == list(range(indices[0], indices[0] + len(indices))), "a gap in the recorded stream"
        assert rows[-1][1] >= killed_ns - 1_000_000_000, (killed_ns - rows[-1][1]) / 1e9

    report = bag_recovery.repair(bag)
    assert "kept" in report.summary() and report.was_open and report.storage == storage and report.counts == {"/stream": report.messages}
    rows = _rosbags_rows(bag)
    indices = [i for i, _ in rows]
    assert len(rows) == report.messages and indices == list(range(indices[0], indices[0] + len(indices)))
    assert rows[-1][1] == report.end_ns >= killed_ns - 1_000_000_000
    info = bags.bag_info(bag)
    assert info.closed and info.message_count == report.messages and info.counts() == {"/stream": report.messages}
    assert not bag_recovery.repair(bag).was_open  # idempotent: a finished bag is left alone


def _mcap_bag(path, count: int) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    string = store.types["std_msgs/msg/String"]
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connection = writer.add_connection("/chatter", string.__msgtype__, typestore=store)
    checkpointer = bag_recovery.Checkpointer(writer)
    for i in range(count):
        writer.write(connection, 1_000_000_000 + i, store.serialize_cdr(string(data=f"m{i}"), string.__msgtype__))
        if i % 10 == 9:
            checkpointer.checkpoint()
    writer.storage.bio.flush()  # "killed" here: 5 messages in the pending chunk are never written


def test_torn_mcap_tail_is_cut_at_the_last_complete_record(tmp_path):
    """An MCAP file cut in the middle of a chunk (as by a kill inside a checkpoint): repair keeps the complete
    chunks (the first 30 of 35 messages) and says how many bytes it dropped."""
    _mcap_bag(tmp_path / "bag", 35)
    file = tmp_path / "bag" / "bag.mcap"
    data = file.read_bytes()
    assert bags.bag_info(tmp_path / "bag").message_count == 30  # readable at its last checkpoint as it is
    offset, last_chunk = 8, 0
    while offset < len(data) - 37 - 13:  # the records up to the DataEnd of the last checkpoint
        op, length = struct.unpack_from("<BQ", data, offset)
        last_chunk = offset if op == 0x06 else last_chunk
        offset += 9 + length
    file.write_bytes(data[:last_chunk + 60])  # cut inside the last chunk
    with pytest.raises(RuntimeLayerError, match="flexrobot bag repair"):
        bags.bag_info(tmp_path / "bag")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(["bag", "repair", str(tmp_path / "bag"), "--json"]) == 0
    report = json.loads(printed.getvalue())
    assert report["was_open"] and report["message_count"] == 20 and report["dropped_bytes"] > 0
    assert [m.message.data for m in bags.read_bag(tmp_path / "bag")] == [f"m{i}" for i in range(20)]


def test_repair_refuses_a_directory_without_a_bag(tmp_path):
    with pytest.raises(RuntimeLayerError, match="one .db3 or .mcap file"):
        bag_recovery.repair(tmp_path)


def _node_children(pid: int) -> list[int]:
    """Node processes (``python -m flexrobot_ros.nodes.<node>``) whose parent is ``pid`` (Linux /proc); other
    children, such as a compiler the bring-up may run, are not nodes."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"flexrobot_ros.nodes." in command:
                out.append(int(entry.name))
    return out


@pytest.mark.slow
def test_sigkilled_bringup_leaves_a_readable_bag_and_no_orphan_nodes(tmp_path):
    """``flexrobot bringup simulation --record`` killed with SIGKILL mid-run: its bag reads up to less than a second
    before the kill, and the four node processes it started stop too (the kernel kills them when it dies)."""
    bag = tmp_path / "bag"
    bringup = subprocess.Popen([sys.executable, "-m", "flexrobot_ros.cli", "bringup", "simulation", "--duration",
                                "600", "--record", str(bag)], env=peer.loopback_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while _metadata_count(bag) < 5000:  # every topic of a running bring-up, a few seconds of it
            assert time.monotonic() < deadline and bringup.poll() is None, \
                bringup.stdout.read() if bringup.poll() is not None else "bring-up recorded nothing in 120 s"
            time.sleep(0.1)
        nodes = _node_children(bringup.pid)
        assert len(nodes) == 4, nodes
        time.sleep(0.3)
        killed_ns = time.time_ns()
        bringup.send_signal(signal.SIGKILL)
        bringup.wait(10)
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{pid}").exists() and "Z" not in (Path(f"/proc/{pid}/stat").read_text().split()[2:3])
                  for pid in nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        orphans = [pid for pid in nodes if Path(f"/proc/{pid}").exists()
                   and (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z")]
    finally:
        if bringup.poll() is None:
            bringup.kill()
        for pid in [pid for pid in locals().get("nodes", []) if Path(f"/proc/{pid}").exists()]:
            os.kill(pid, signal.SIGKILL)  # a failed run must not leave nodes talking in the next tests' domain
    assert orphans == [], "node processes outlived the killed bring-up"
    report = bag_recovery.repair(bag)
    assert report.was_open and report.counts.get("/motor_states", 0) > 1000
    assert report.end_ns >= killed_ns - 1_000_000_000, (killed_ns - report.end_ns) / 1e9
