"""Signals from the sensor_msgs/JointState topics of a rosbag2 bag (sqlite3 or MCAP), read with rosbags.

:func:`flexrobot_ros.oma.signals.read_signals` imports this module the first time it is given a bag (a directory,
a ``.db3`` or a ``.mcap`` file), so ``read_signals("run1")`` works without the ``flexrobot`` command. Channels are
named ``<topic>.<field>.<joint>`` (``motor_states.position.joint2``); time is the header stamp (the bag's
receive time when the stamp is zero), in seconds from the first message's stamp: stamps are read as integer
nanoseconds and the first one is subtracted before they become float64 seconds (float64 seconds since the epoch
resolve only 238 ns, which made a 1 kHz bag 1000.07 Hz and jittered). Only rosbags is used (no ROS 2, no DDS
runtime).
"""
from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.signals import Signals, register_reader

#: Message type read from a bag.
JOINT_STATE = "sensor_msgs/msg/JointState"
#: File suffixes (and ``"/"`` for a bag directory) this reader is registered for.
BAG_SUFFIXES = ("/", ".mcap", ".db3")


def _typestore() -> Any:
    """The typestore for bags that carry no message definitions: ``$ROS_DISTRO``'s (humble or jazzy)."""
    from rosbags.typesys import Stores, get_typestore

    humble = os.environ.get("ROS_DISTRO", "").strip().lower() == "humble"
    return get_typestore(Stores.ROS2_HUMBLE if humble else Stores.ROS2_JAZZY)


def _joint_states(path: Path) -> Iterator[tuple[str, int, Any]]:
    """(topic, receive time [ns], message) of every JointState message, in time order."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.rosbag2.errors import ReaderError

    try:
        with AnyReader([path], default_typestore=_typestore()) as reader:
            connections = [c for c in reader.connections if c.msgtype == JOINT_STATE]
            for connection, timestamp, data in reader.messages(connections=connections):
                yield connection.topic, timestamp, reader.deserialize(data, connection.msgtype)
    except (AnyReaderError, ReaderError, OSError, UnicodeDecodeError) as error:
        raise SignalError(f"{path}: cannot be read as a rosbag2 bag ({' '.join(str(error).split())})") from None


def read_joint_state_bag(path: str | Path, channels: Sequence[str] | None = None) -> Signals:
    """Signals from the JointState topics of a rosbag2 bag (header stamp, else bag time; [s] from the first).

    With ``channels`` (names or globs) only the topics that hold a matching channel are read. Several topics are
    joined into one record when their stamps are identical (a simulator writes ``motor_states`` and
    ``joint_states`` together); topics on different time bases are refused with the advice to select one.
    """
    path = Path(path)
    stamps: dict[str, list[int]] = {}
    rows: dict[str, list[np.ndarray]] = {}
    names: dict[str, list[str]] = {}
    for topic, timestamp_ns, m in _joint_states(path):
        stamp_ns = int(m.header.stamp.sec) * 10**9 + int(m.header.stamp.nanosec)
        joints = list(m.name)
        fields = [(f, np.asarray(getattr(m, f), dtype=float)) for f in ("position", "velocity", "effort")]
        fields = [(f, v) for f, v in fields if len(v) == len(joints)]
        labels = [f"{topic.strip('/').replace('/', '.')}.{f}.{j}" for f, _ in fields for j in joints]
        if topic not in names:
            names[topic] = labels
        elif labels != names[topic]:
            raise SignalError(f"{path}: topic {topic}: joint names or fields change between messages")
        stamps.setdefault(topic, []).append(stamp_ns if stamp_ns > 0 else int(timestamp_ns))
        rows.setdefault(topic, []).append(np.concatenate([v for _, v in fields]))
    if not rows:
        raise SignalError(f"{path}: no {JOINT_STATE} messages in the bag")
    topics = sorted(rows)
    if channels:
        topics = [t for t in topics if any(fnmatch.fnmatchcase(label, pattern)
                                           for label in names[t] for pattern in channels)]
        if not topics:
            available = [label for t in sorted(rows) for label in names[t][:1]]
            raise SignalError(f"{path}: no JointState channel matches {list(channels)}; channels look like "
                              f"{available} (<topic>.<field>.<joint>)")
    times_ns = np.array(stamps[topics[0]], dtype=np.int64)
    for topic in topics[1:]:
        other = np.array(stamps[topic], dtype=np.int64)
        if other.shape != times_ns.shape or np.any(other != times_ns):
            raise SignalError(f"{path}: JointState topics {', '.join(topics)} are on different time bases; "
                              "select the channels of one topic with --channels (e.g. 'motor_states.position.*')")
    data = np.hstack([np.array(rows[topic]) for topic in topics])
    labels = tuple(label for topic in topics for label in names[topic])
    return Signals((times_ns - times_ns[0]) * 1e-9, data, labels, f"{path} {', '.join(topics)}")


register_reader(BAG_SUFFIXES, read_joint_state_bag)

__all__ = ["read_joint_state_bag", "BAG_SUFFIXES", "JOINT_STATE"]
