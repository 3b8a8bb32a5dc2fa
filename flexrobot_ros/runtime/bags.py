"""rosbag2 recording, playback, summary and reading with rosbags: bags ``ros2 bag info/play`` accept.

- :func:`record` subscribes (on the standalone runtime) to the topics asked for, or to every ROS topic it
  discovers, and writes each sample's CDR bytes unchanged with its receive time, as ``ros2 bag record`` does;
  storage ``sqlite3`` or ``mcap``; the offered QoS of the publishers is stored so latched topics replay latched.
- :func:`play` republishes a bag's samples byte for byte with their original spacing, scaled by ``rate``.
- :func:`bag_info` summarises a bag (topics, types, counts, duration); :func:`read_bag` yields its messages
  deserialized by rosbags (``msg.position`` etc., numeric arrays as numpy arrays) for offline analysis;
  :func:`header_stamps` gives the header stamps of a type's topics as integer nanoseconds, read straight from the
  CDR bytes (no deserialization: a 40,000-sample stream reads in a fraction of a second).
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import messages
from flexrobot_ros.runtime.bag_recovery import Checkpointer, is_open
from flexrobot_ros.runtime.qos import QosProfile

#: Storage back ends rosbag2 (and rosbags) provide.
STORAGES = ("sqlite3", "mcap")
#: rosbag2 metadata version written (Jazzy's).
BAG_VERSION = 9
_INFINITE = (9223372036, 854775807)  # rmw's "infinite" duration as rosbag2 writes it


@dataclass(frozen=True)
class TopicSummary:
    """One topic of a bag: name, ROS 2 type, message count, serialization format."""

    name: str
    msgtype: str
    count: int
    serialization_format: str


@dataclass(frozen=True)
class BagInfo:
    """Summary of a bag, as ``ros2 bag info`` shows it. Times in ns since the epoch, duration in s."""

    path: Path
    storage: str
    start_ns: int
    end_ns: int
    duration_s: float
    message_count: int
    topics: tuple[TopicSummary, ...]
    #: False for a bag whose recorder stopped without closing it (killed, power lost): the counts are those of its
    #: last checkpoint; :func:`~flexrobot_ros.runtime.bag_recovery.repair` finalizes it.
    closed: bool = True

    def counts(self) -> dict[str, int]:
        """{topic: message count}."""
        return {t.name: t.count for t in self.topics}


@dataclass(frozen=True)
class BagMessage:
    """One message read from a bag: topic, receive time [ns since the epoch], type, message (rosbags class)."""

    topic: str
    timestamp_ns: int
    msgtype: str
    message: Any


def _open_reader(path: str | Path) -> Any:
    from rosbags.rosbag2 import Reader
    from rosbags.rosbag2.errors import ReaderError

    path = Path(path)
    try:
        reader = Reader(path)
        reader.open()
    except (ReaderError, OSError, UnicodeDecodeError) as error:
        hint = ""
        if path.is_dir() and (any(path.glob("*.db3")) or any(path.glob("*.mcap"))):
            hint = f"; if its recorder was killed, `flexrobot bag repair {path}` recovers what it holds"
        reason = " ".join(str(error).split())  # one line: rosbags quotes multi-line YAML errors
        raise RuntimeLayerError(f"bag {path}: cannot be opened as a rosbag2 bag ({reason}){hint}") from error
    return reader


def _storage_of(path: Path) -> str:
    """``storage_identifier`` of a bag's metadata.yaml (``sqlite3`` or ``mcap``)."""
    import yaml

    metadata = yaml.safe_load((path / "metadata.yaml").read_text())
    return str(metadata["rosbag2_bagfile_information"]["storage_identifier"])


def bag_info(path: str | Path) -> BagInfo:
    """Summary of the bag at ``path`` (a rosbag2 directory).

    Raises:
        RuntimeLayerError: not a readable rosbag2 bag.
    """
    reader = _open_reader(path)
    try:
        counts: dict[tuple[str, str, str], int] = {}
        for connection in reader.connections:
            key = (connection.topic, connection.msgtype, connection.ext.serialization_format)
            counts[key] = counts.get(key, 0) + connection.msgcount
        topics = tuple(TopicSummary(name, msgtype, count, fmt) for (name, msgtype, fmt), count in sorted(counts.items()))
        start, end = (reader.start_time, reader.end_time) if reader.message_count else (0, 0)
        return BagInfo(Path(path), _storage_of(Path(path)), start, end, (end - start) * 1e-9, reader.message_count,
                       topics, not is_open(path))
    finally:
        reader.close()


def _seconds(stamp_ns: int) -> str:
    """Integer nanoseconds as exact decimal seconds [s] (float64 epoch seconds resolve only 238 ns)."""
    sign = "-" if stamp_ns < 0 else ""
    sec, nsec = divmod(abs(int(stamp_ns)), 10**9)
    return f"{sign}{sec}.{nsec:09d}"


def format_info(info: BagInfo) -> str:
    """The summary as text (files, storage, duration, start/end, count, then one line per topic)."""
    width = max((len(t.name) for t in info.topics), default=0)
    lines = [f"Files:             {info.path}", f"Storage id:        {info.storage}",
             f"Duration:          {info.duration_s:.3f}s",
             f"Start:             {_seconds(info.start_ns)}", f"End:               {_seconds(info.end_ns)}",
             f"Messages:          {info.message_count}", "Topic information:"]
    lines += [f"  Topic: {t.name:<{width}} | Type: {t.msgtype} | Count: {t.count} | "
              f"Serialization Format: {t.serialization_format}" for t in info.topics]
    if not info.closed:
        lines.append(f"Not closed: the recorder stopped without closing this bag; it reads as of its last checkpoint "
                     f"(`flexrobot bag repair {info.path}` finalizes it)")
    return "\n".join(lines)


def read_bag(path: str | Path, topics: Sequence[str] | None = None, distro: str | None = None
             ) -> Iterator[BagMessage]:
    """Messages of a bag in time order, deserialized by rosbags (definitions from the bag, else ``distro``'s).

    Raises:
        RuntimeLayerError: not a readable bag, or a topic asked for is not in it.
    """
    from rosbags.highlevel import AnyReader

    _open_reader(path).close()  # clear error for a path that is no bag
    with AnyReader([Path(path)], default_typestore=messages.typestore(distro or messages.default_distro())) as reader:
        available = {c.topic for c in reader.connections}
        missing = sorted(set(topics or ()) - available)
        if missing:
            raise RuntimeLayerError(f"bag {path}: no topic {missing}; it has {sorted(available)}")
        connections = [c for c in reader.connections if topics is None or c.topic in topics]
        for connection, timestamp, data in reader.messages(connections=connections):
            yield BagMessage(connection.topic, timestamp, connection.msgtype,
                             reader.deserialize(data, connection.msgtype))


def header_stamps(path: str | Path, msgtype: str = "sensor_msgs/msg/JointState") -> dict[str, np.ndarray]:
    """{topic: header stamps [ns, int64] in bag order} of the topics of type ``msgtype`` (a type whose first field
    is a std_msgs/Header), read from the first 12 bytes of each CDR sample (encapsulation, ``int32 sec``,
    ``uint32 nanosec``).

    Raises:
        RuntimeLayerError: not a readable bag, or a sample too short to hold a header.
    """
    reader = _open_reader(path)
    try:
        connections = [c for c in reader.connections if c.msgtype == msgtype]
        stamps: dict[str, list[int]] = {c.topic: [] for c in connections}
        for connection, _, data in reader.messages(connections=connections):
            if len(data) < 12:
                raise RuntimeLayerError(f"bag {path}: a {msgtype} sample on {connection.topic} has {len(data)} "
                                        "bytes; a header stamp needs 12")
            sec, nanosec = struct.unpack_from("<iI" if data[1] & 1 else ">iI", data, 4)  # CDR_LE / CDR_BE
            stamps[connection.topic].append(sec * 1_000_000_000 + nanosec)
        return {topic: np.array(values, dtype=np.int64) for topic, values in sorted(stamps.items())}
    finally:
        reader.close()


# --------------------------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------------------------

def _rosbags_qos(profile: QosProfile) -> Any:
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    infinite = QosTime(*_INFINITE)
    return Qos(QosHistory.KEEP_LAST if profile.history == "keep_last" else QosHistory.KEEP_ALL, profile.depth,
               QosReliability.RELIABLE if profile.reliability == "reliable" else QosReliability.BEST_EFFORT,
               QosDurability.TRANSIENT_LOCAL if profile.durability == "transient_local" else QosDurability.VOLATILE,
               infinite, infinite, QosLiveliness.AUTOMATIC, infinite, False)


def _profile_of(dds_qos: Any) -> QosProfile:
    """The ROS profile of a discovered publication's QoS (reliability, durability, history depth)."""
    from cyclonedds.core import Policy

    reliable = dds_qos[Policy.Reliability] is None or isinstance(dds_qos[Policy.Reliability],
                                                                   Policy.Reliability.Reliable)
    latched = dds_qos[Policy.Durability] == Policy.Durability.TransientLocal
    history = dds_qos[Policy.History]
    depth = history.depth if isinstance(history, Policy.History.KeepLast) else 1
    return QosProfile("reliable" if reliable else "best_effort", "transient_local" if latched else "volatile",
                      "keep_last", max(1, depth))


class BagRecorder:
    """Records ROS topics into a rosbag2 bag from a standalone-runtime node (spin the node to record).

    Args:
        node: a :class:`~flexrobot_ros.runtime.dds_backend.DdsNode` (its spin thread does the writing).
        path: bag directory to create (must not exist).
        topics: ROS topic names to record; None records every topic discovered.
        storage: ``sqlite3`` or ``mcap``.
        checkpoint_s: period [s] of the checkpoints that keep the bag readable if the recorder is killed
            (:mod:`~flexrobot_ros.runtime.bag_recovery`): at most this much recording is lost.
    """

    def __init__(self, node: Any, path: str | Path, topics: Sequence[str] | None = None, storage: str = "sqlite3",
                 checkpoint_s: float = 0.25) -> None:
        from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.rosbag2.errors import WriterError

        if storage not in STORAGES:
            raise RuntimeLayerError(f"bag storage {storage!r} is not one of {STORAGES}")
        self.path = Path(path)
        self._node = node
        self._wanted = None if topics is None else {node.resolve_name(t) for t in topics}
        self._store = messages.typestore(node.distro)
        try:
            self._writer = Writer(self.path, version=BAG_VERSION,
                                  storage_plugin=StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3)
            self._writer.open()
        except WriterError as error:
            raise RuntimeLayerError(f"bag {self.path}: cannot be created ({error})") from error
        self._checkpointer = Checkpointer(self._writer)
        self.counts: dict[str, int] = {}
        self._connections: dict[str, Any] = {}
        self._subscriptions: list[Any] = []  # the raw readers, drained when the bag closes
        self._publications = BuiltinDataReader(node.context.participant, BuiltinTopicDcpsPublication)
        self._timer = node.create_wall_timer(0.1, self.discover)
        self._checkpoints = node.create_wall_timer(checkpoint_s, self._checkpointer.checkpoint)
        self.discover()
        self._checkpointer.checkpoint()

    def discover(self) -> None:
        """Subscribe to newly discovered publications of the wanted topics."""
        for endpoint in self._publications.take(256):
            if not (getattr(endpoint, "topic_name", None) or "").startswith("rt/"):  # also skips disposals
                continue
            topic, typename = endpoint.topic_name[2:], messages.ros_type_name(endpoint.type_name)
            if topic in self._connections or (self._wanted is not None and topic not in self._wanted):
                continue
            if typename is None or typename not in self._store.fielddefs:
                self._node.log_once(f"bag type {endpoint.type_name}", f"not recording {topic}: type "
                                    f"{endpoint.type_name} is not among the ROS 2 {self._node.distro} definitions")
                continue
            self._subscribe(topic, typename, _profile_of(endpoint.qos))

    def _subscribe(self, topic: str, typename: str, offered: QosProfile) -> None:
        connection = self._writer.add_connection(topic, typename, typestore=self._store, serialization_format="cdr",
                                                 offered_qos_profiles=[_rosbags_qos(offered)])
        self._connections[topic] = connection
        self.counts[topic] = 0

        def write(data: bytes, receive_ns: int) -> None:
            self._writer.write(connection, receive_ns, bytes(data))
            self.counts[topic] += 1

        # keep-all: every acknowledged sample waits for this node's spin thread, however long bag writing or a busy
        # machine stalls it (with a keep-last queue, 1 kHz samples beyond its depth were overwritten)
        self._subscriptions.append(self._node.create_raw_subscription(typename, topic, write, offered.keeping_all()))
        self._node.logger.info(f"recording {topic} ({typename})")

    def close(self) -> BagInfo:
        """Write what the readers still hold (a spin takes one batch per reader: the samples a busy process has not
        taken yet), finish the bag (writes metadata.yaml) and return its summary."""
        for subscription in self._subscriptions:
            subscription.drain()
        self._timer.cancel()
        self._checkpoints.cancel()
        self._checkpointer.close()
        return bag_info(self.path)


class BackgroundRecorder:
    """A :class:`BagRecorder` on a standalone-runtime node of its own, in a thread of its own (which creates, spins
    and closes it: sqlite3 connections stay in their thread): records the topics of nodes on either runtime (topics
    interoperate across the two DDS vendors, and the recorder only listens), for a process whose own node is an
    rclpy one (``FLEXROBOT_RUNTIME=rclpy flexrobot bringup --record``; rosbag2 itself is not on PyPI). Arguments as
    :class:`BagRecorder`'s; ``counts`` are its counts.

    Raises:
        RuntimeLayerError: as :class:`BagRecorder` (the bag cannot be created, an unknown storage).
    """

    def __init__(self, path: str | Path, topics: Sequence[str] | None = None, storage: str = "sqlite3",
                 namespace: str | None = None) -> None:
        import threading

        from flexrobot_ros.runtime import dds_backend

        self._node = dds_backend.DdsNode("flexrobot_bag_recorder", namespace=namespace,
                                         start_parameter_services=False)
        self._outcome: dict[str, Any] = {}
        ready = threading.Event()

        def run() -> None:
            try:
                recorder = BagRecorder(self._node, path, topics, storage)
            except BaseException as error:  # noqa: BLE001 - raised again in the constructing thread
                self._outcome["error"] = error
                ready.set()
                return
            self.counts = recorder.counts
            ready.set()
            self._node.spin()
            try:
                self._outcome["info"] = recorder.close()
            except BaseException as error:  # noqa: BLE001 - raised again by close()
                self._outcome["error"] = error

        self._thread = threading.Thread(target=run, name="bag recorder", daemon=True)
        self._thread.start()
        ready.wait()
        if "error" in self._outcome:
            self._thread.join()
            self._node.destroy()
            raise self._outcome["error"]

    def close(self) -> BagInfo:
        """Stop the recording thread, which then closes the bag (what the readers still hold is written); its
        summary."""
        self._node.request_stop()
        self._thread.join()
        self._node.destroy()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["info"]


def record(path: str | Path, topics: Sequence[str] | None = None, *, storage: str = "sqlite3",
           duration_s: float | None = None, node: Any = None) -> BagInfo:
    """Record until ``duration_s`` has passed or SIGINT/SIGTERM, then close the bag and summarise it."""
    from flexrobot_ros.runtime import dds_backend

    own = node is None
    node = node or dds_backend.DdsNode("flexrobot_bag_recorder")
    restore = dds_backend.install_stop_signals(node) if own else None
    recorder = BagRecorder(node, path, topics, storage)
    try:
        node.spin(duration_s)
    finally:
        info = recorder.close()
        if own:
            node.destroy()
        if restore:
            restore()
    return info


# --------------------------------------------------------------------------------------------------------------
# Playback
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlayReport:
    """What :func:`play` did: messages sent per topic and the wall-clock time the playback took [s]."""

    counts: Mapping[str, int]
    elapsed_s: float


def _profile_from_bag(connection: Any) -> QosProfile:
    from rosbags.interfaces import QosDurability, QosReliability

    profiles = list(getattr(connection.ext, "offered_qos_profiles", []) or [])
    if not profiles:
        return QosProfile(depth=1000)
    first = profiles[0]
    return QosProfile("best_effort" if first.reliability == QosReliability.BEST_EFFORT else "reliable",
                      "transient_local" if first.durability == QosDurability.TRANSIENT_LOCAL else "volatile",
                      "keep_last", max(1000, int(first.depth or 1)))


def play(path: str | Path, *, rate: float = 1.0, topics: Sequence[str] | None = None,
         wait_for_subscribers_s: float = 0.0, node: Any = None) -> PlayReport:
    """Republish a bag with its original timing scaled by ``rate`` (2.0 plays twice as fast).

    Args:
        wait_for_subscribers_s: before starting, wait up to this long until every topic has a subscriber.

    Raises:
        RuntimeLayerError: not a bag, ``rate`` not positive, or a topic asked for is not in it.
    """
    from flexrobot_ros.runtime import dds_backend

    if not rate > 0:
        raise RuntimeLayerError(f"play rate must be > 0, got {rate}")
    reader = _open_reader(path)
    own = node is None
    node = node or dds_backend.DdsNode("flexrobot_bag_player")
    try:
        available = {c.topic for c in reader.connections}
        missing = sorted(set(topics or ()) - available)
        if missing:
            raise RuntimeLayerError(f"bag {path}: no topic {missing}; it has {sorted(available)}")
        connections = [c for c in reader.connections if topics is None or c.topic in topics]
        publishers = {}
        for connection in connections:
            if connection.topic not in publishers:
                publishers[connection.topic] = node.create_raw_publisher(connection.msgtype, connection.topic,
                                                                         _profile_from_bag(connection))
        deadline = time.monotonic() + wait_for_subscribers_s
        while time.monotonic() < deadline and not all(p.get_subscription_count() for p in publishers.values()):
            time.sleep(0.01)
        if wait_for_subscribers_s:
            time.sleep(0.2)  # discovery completes on the subscribers' side too
        counts = dict.fromkeys(publishers, 0)
        start_wall, start_bag = time.monotonic(), None
        for connection, timestamp, data in reader.messages(connections=connections):
            start_bag = timestamp if start_bag is None else start_bag
            delay = start_wall + (timestamp - start_bag) * 1e-9 / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            publishers[connection.topic].publish_raw(data)
            counts[connection.topic] += 1
        elapsed = time.monotonic() - start_wall
        for publisher in publishers.values():
            publisher.wait_for_acks(2.0)
        return PlayReport(counts, elapsed)
    finally:
        reader.close()
        if own:
            node.destroy()
