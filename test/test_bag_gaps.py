"""Issue 23, item 1: gaps in the 1 kHz JointState streams of a bag, from their header stamps, reported by
``flexrobot bag info`` (text and JSON) and the bring-up summary.

The bags are written here with rosbags' own Writer, so the samples missing (and where) are known by construction:
a 1 kHz stream of 3000 stamps with samples 1000-1002 and 2500 left out misses 3 samples after the stamp at
0.999 s and 1 after 2.499 s (seconds from the first stamp); a clean stream misses none.
"""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from flexrobot_ros import cli
from flexrobot_ros.commands.bag import StreamGaps, bag_gaps, stream_gaps
from flexrobot_ros.commands.bringup import format_summary
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import bags
from flexrobot_ros.runtime.messages import typestore

#: First stamp of the streams [ns]: an epoch time in 2026 with a nanosecond part (stamps are kept as integers).
T0_NS = 1_795_730_000_123_456_789
PERIOD_NS = 1_000_000  # 1 kHz
LEFT_OUT = {1000, 1001, 1002, 2500}


def write_bag(path, indices: dict[str, list[int]], storage: str = "sqlite3") -> None:
    """A bag with one sensor_msgs/JointState topic per entry, sample k stamped T0 + k ms (received at the same
    time), plus a String topic (no header: not checked for gaps)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    store = typestore("jazzy")
    joint_state, string = store.types["sensor_msgs/msg/JointState"], store.types["std_msgs/msg/String"]
    header, time_ = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        text = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        writer.write(text, T0_NS, bytes(store.serialize_cdr(string("hello"), "std_msgs/msg/String")))
        for topic, ks in indices.items():
            connection = writer.add_connection(topic, "sensor_msgs/msg/JointState", typestore=store)
            for k in ks:
                stamp = T0_NS + k * PERIOD_NS
                msg = joint_state(header(time_(sec=stamp // 10**9, nanosec=stamp % 10**9), ""), ["a"],
                                  np.array([0.001 * k]), np.array([0.0]), np.array([0.0]))
                writer.write(connection, stamp, bytes(store.serialize_cdr(msg, "sensor_msgs/msg/JointState")))


def streams() -> dict[str, list[int]]:
    return {"/motor_states": [k for k in range(3000) if k not in LEFT_OUT], "/joint_states": list(range(3000))}


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_header_stamps_are_exact_integer_nanoseconds(tmp_path, storage):
    write_bag(tmp_path / "bag", {"/joint_states": [0, 1, 7]}, storage)
    stamps = bags.header_stamps(tmp_path / "bag")
    assert list(stamps) == ["/joint_states"]   # the String topic has no header
    assert stamps["/joint_states"].tolist() == [T0_NS, T0_NS + PERIOD_NS, T0_NS + 7 * PERIOD_NS]


def test_bag_info_text_names_missing_samples_and_where(tmp_path):
    write_bag(tmp_path / "bag", streams())
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(["bag", "info", str(tmp_path / "bag")]) == 0
    lines = printed.getvalue().splitlines()
    motor = next(line for line in lines if line.strip().startswith("/motor_states:"))
    assert "2996 samples, period 1.000 ms" in motor
    assert "4 samples missing in 2 gaps" in motor and "3 at 0.999 s" in motor and "1 at 2.499 s" in motor
    clean = next(line for line in lines if line.strip().startswith("/joint_states:"))
    assert clean.strip() == "/joint_states: 3000 samples, period 1.000 ms, no gaps"
    assert not any(line.strip().startswith("/chatter:") for line in lines)


def test_bag_info_json_lists_every_gap(tmp_path):
    write_bag(tmp_path / "bag", streams(), "mcap")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main(["bag", "info", str(tmp_path / "bag"), "--json"]) == 0
    gaps = {g["topic"]: g for g in json.loads(printed.getvalue())["gaps"]}
    assert set(gaps) == {"/motor_states", "/joint_states"}
    assert gaps["/joint_states"]["missing"] == 0 and gaps["/joint_states"]["gaps"] == []
    motor = gaps["/motor_states"]
    assert motor["samples"] == 2996 and motor["missing"] == 4
    assert motor["period_s"] == pytest.approx(1e-3, abs=1e-12)
    assert [g["missing"] for g in motor["gaps"]] == [3, 1]
    assert [g["at_s"] for g in motor["gaps"]] == [pytest.approx(0.999, abs=1e-9), pytest.approx(2.499, abs=1e-9)]


def test_many_gaps_are_counted_in_full_and_listed_in_part():
    """Every fifth sample left out of the first 150 of a 1 kHz stream: 30 single-sample gaps; the text names the
    first 10 and says how many more, the count covers all 30."""
    ks = [k for k in range(200) if not (k % 5 == 2 and k < 150)]  # 30 single gaps at k = 2, 7, ..., 147
    gaps = stream_gaps("/x", np.array([T0_NS + k * PERIOD_NS for k in ks], dtype=np.int64))
    assert gaps.missing == 30 and len(gaps.gaps) == 30
    assert gaps.gaps[0] == (pytest.approx(0.001, abs=1e-9), 1)
    assert "30 samples missing in 30 gaps" in gaps.describe() and "... 20 more gaps" in gaps.describe()
    assert stream_gaps("/x", np.array([T0_NS, T0_NS + 1], dtype=np.int64)) is None  # no nominal period


def test_bringup_summary_reports_the_bag_gaps(tmp_path):
    """The bring-up summary's bag entry carries the gaps (JSON) and the text says them per topic."""
    write_bag(tmp_path / "bag", streams())
    found = bag_gaps(tmp_path / "bag")
    assert StreamGaps.from_dict(found[1].as_dict()) == found[1]
    summary = {"kind": "simulation", "robot": "scompi", "tool": True, "stopped": "finished", "wall_time_s": 12.0,
               "phases": [], "tracking": None, "nodes": [], "plots": [],
               "bag": {"path": str(tmp_path / "bag"), "messages": 5997, "topics": {},
                       "gaps": [g.as_dict() for g in found]}}
    text = format_summary(json.loads(json.dumps(summary)))
    assert "/motor_states: 2996 samples, period 1.000 ms, 4 samples missing in 2 gaps" in text
    assert "/joint_states: 3000 samples, period 1.000 ms, no gaps" in text


def test_no_bag_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeLayerError, match="cannot be opened"):
        bags.header_stamps(tmp_path / "missing")
