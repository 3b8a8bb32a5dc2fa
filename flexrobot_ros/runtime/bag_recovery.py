"""Crash-safe rosbag2 recording: checkpoints while a bag is written, and repair of a bag whose recorder died.

rosbags' ``Writer`` keeps a sqlite3 bag in one open transaction and an MCAP bag's last megabyte in memory, and writes
``metadata.yaml`` only when it is closed: a recorder killed by SIGKILL or a power cut would leave an empty database or
an MCAP file without its footer, and no ``metadata.yaml``, so nothing could be read. :class:`Checkpointer`, run every
quarter second by :class:`~flexrobot_ros.runtime.bags.BagRecorder`, makes everything received so far durable and readable:

* sqlite3: commits the open transaction (sqlite's rollback journal keeps the file consistent at any instant);
* MCAP: closes the pending chunk, writes a DataEnd record and a footer without summary section after it, and flushes;
  the next checkpoint overwrites that footer. Readers (rosbags, ``ros2 bag``) scan such a file record by record;
* ``metadata.yaml``: rewritten atomically (temporary file + rename) with the counts so far and
  ``custom_data: {flexrobot.recording: open}``; closing the bag writes the final metadata without that mark.

A bag whose recorder was killed therefore opens with rosbags, ``ros2 bag`` and ``flexrobot bag`` as it was at the last
checkpoint, unless the kill fell inside the few milliseconds a checkpoint takes to write an MCAP chunk. :func:`repair`
(``flexrobot bag repair``) finishes any bag that was not closed: it rolls back a half-written sqlite transaction,
truncates a torn MCAP tail to the last complete record and closes the file, counts what the storage holds and
rewrites ``metadata.yaml`` exactly; its :class:`RepairReport` says what was kept and what was lost.
"""
from __future__ import annotations

import contextlib
import datetime
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from flexrobot_ros.errors import RuntimeLayerError

#: ``custom_data`` key of a bag still being recorded (absent once the bag is closed or repaired).
OPEN_MARK = "flexrobot.recording"
_MCAP_MAGIC = b"\x89MCAP0\r\n"
_OP_FOOTER, _OP_CHUNK, _OP_DATA_END = 0x02, 0x06, 0x0F


def _metadata_text(storage_identifier: str, file_name: str, connections: Sequence[Any], counts: dict[int, int],
                   start_ns: int, end_ns: int, version: int, custom_data: dict[str, str] | None) -> str:
    """``metadata.yaml`` with the fields and values rosbags' ``Writer.close`` writes (rosbag2 version ``version``,
    no compression), emitted by :class:`_MetadataDumper`."""
    from rosbags.rosbag2.metadata import dump_qos_v8, dump_qos_v9

    count = sum(counts.get(c.id, 0) for c in connections)
    start = start_ns if count else 0
    duration = max(0, end_ns - start_ns) if count else 0
    dump_qos = dump_qos_v9 if version >= 9 else dump_qos_v8
    info = {
        "version": version,
        "storage_identifier": storage_identifier,
        "relative_file_paths": [file_name],
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": c.topic, "type": c.msgtype,
                                "serialization_format": c.ext.serialization_format,
                                "offered_qos_profiles": dump_qos(c.ext.offered_qos_profiles),
                                "type_description_hash": c.digest},
             "message_count": counts.get(c.id, 0)}
            for c in connections
        ],
        "compression_format": "",
        "compression_mode": "",
        "files": [{"path": file_name, "starting_time": {"nanoseconds_since_epoch": start},
                   "duration": {"nanoseconds": duration}, "message_count": count}],
        "custom_data": custom_data or None,
        "ros_distro": "rosbags",
    }
    return yaml.dump({"rosbag2_bagfile_information": info}, Dumper=_MetadataDumper, default_flow_style=False,
                     sort_keys=False)


class _MetadataDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter where PyYAML has it
    """Plain YAML for rosbag2's readers, without anchors for repeated QoS profiles. libyaml's emitter, not ruamel's
    safe dumper (rosbags' ``Writer.close``): ruamel takes 60 ms to dump a recording bring-up's metadata (26 topics), a
    quarter of a core at four checkpoints a second and 0.5-1 s per checkpoint under six busy loops; a whole
    checkpoint now takes 10 ms (``bench/bag_checkpoint.py``)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader sees the old or the new file, never a mix)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, "utf8")
    tmp.replace(path)


def _mcap_end() -> bytes:
    """A DataEnd record (no CRC) and a footer without summary section, then the closing magic."""
    data_end = struct.pack("<BQI", _OP_DATA_END, 4, 0)
    footer = struct.pack("<BQQQI", _OP_FOOTER, 20, 0, 0, 0)
    return data_end + footer + _MCAP_MAGIC


class Checkpointer:
    """Makes an open rosbags ``Writer`` durable and readable as it is now (see the module docstring).

    Call :meth:`checkpoint` periodically (from the thread that writes), and :meth:`close` instead of the writer's
    ``close()``.
    """

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self._mcap_tail: int | None = None

    @property
    def _storage(self) -> Any:
        return self._writer.storage

    def _rewind_mcap(self) -> None:
        if self._mcap_tail is not None:
            self._storage.bio.seek(self._mcap_tail)
            self._storage.bio.truncate()
            self._mcap_tail = None

    def checkpoint(self) -> None:
        """Commit (sqlite3) or close the pending chunk and re-end the file (MCAP), then rewrite metadata.yaml."""
        writer, storage = self._writer, self._storage
        if hasattr(storage, "conn"):
            storage.conn.commit()
        else:
            self._rewind_mcap()
            if storage.chunk.bio.tell():
                storage.close_chunk()
            self._mcap_tail = storage.bio.tell()
            storage.bio.write(_mcap_end())
            storage.bio.flush()
        _replace(writer.metapath, _metadata_text(
            writer.storage_plugin.name.lower(), storage.path.name, writer.connections, writer.counts,
            writer.min_timestamp, writer.max_timestamp, writer.version, {OPEN_MARK: "open"}))

    def close(self) -> None:
        """Close the bag for good: rosbags writes the summary, footer and final metadata.yaml."""
        if not hasattr(self._storage, "conn"):
            self._rewind_mcap()
        self._writer.close()


@dataclass(frozen=True)
class RepairReport:
    """What :func:`repair` found and did.

    ``was_open``: the bag had not been closed (recorder killed, power lost); ``messages`` now readable, per topic in
    ``counts``; ``end_ns`` the last message's time (0 when empty); ``dropped_bytes`` of a torn MCAP tail (a chunk or
    record cut off by the kill: the messages in it are lost); ``rolled_back``: sqlite3 discarded a half-written
    transaction.
    """

    path: Path
    storage: str
    was_open: bool
    messages: int
    counts: dict[str, int]
    end_ns: int
    dropped_bytes: int
    rolled_back: bool

    def summary(self) -> str:
        """One line for people."""
        if not self.was_open:
            return f"bag {self.path}: closed cleanly, {self.messages} messages; nothing to repair"
        lost = []
        if self.dropped_bytes:
            lost.append(f"dropped a torn tail of {self.dropped_bytes} bytes (the messages in it are lost)")
        if self.rolled_back:
            lost.append("rolled back the transaction open when it stopped (the messages since the last checkpoint)")
        last = datetime.datetime.fromtimestamp(self.end_ns / 1e9, datetime.timezone.utc).isoformat(
            timespec="milliseconds") if self.messages else "-"
        return (f"bag {self.path}: was not closed (recorder stopped without closing it); kept {self.messages} "
                f"messages, the last received at {last}; " + ("; ".join(lost) or "nothing lost after the last "
                                                              "checkpoint"))


def _storage_file(path: Path) -> tuple[str, Path]:
    files = sorted(path.glob("*.db3")) + sorted(path.glob("*.mcap"))
    if not path.is_dir() or len(files) != 1:
        raise RuntimeLayerError(f"bag {path}: expected a rosbag2 directory holding one .db3 or .mcap file, "
                                f"found {[f.name for f in files] if path.is_dir() else 'no directory'}")
    return ("sqlite3" if files[0].suffix == ".db3" else "mcap"), files[0]


def _metadata_info(path: Path) -> dict[str, Any] | None:
    import yaml

    try:
        document = yaml.safe_load((path / "metadata.yaml").read_text())
        return dict(document["rosbag2_bagfile_information"])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None


def is_open(path: str | Path) -> bool:
    """Whether the bag at ``path`` was not closed: no readable metadata.yaml, or one marked as still recording."""
    info = _metadata_info(Path(path))
    return info is None or OPEN_MARK in (info.get("custom_data") or {})


def _repair_mcap(file: Path) -> int:
    """Cut ``file`` after its last complete data record and end it (DataEnd + footer); returns bytes dropped."""
    data = file.read_bytes()
    if not data.startswith(_MCAP_MAGIC):
        raise RuntimeLayerError(f"bag file {file}: not an MCAP file (bad magic)")
    offset, good = len(_MCAP_MAGIC), len(_MCAP_MAGIC)
    while offset + 9 <= len(data):
        op, length = struct.unpack_from("<BQ", data, offset)
        end = offset + 9 + length
        if end > len(data) or op in (_OP_DATA_END, _OP_FOOTER) or op == 0:
            break
        if op == _OP_CHUNK and length < 40:
            break
        offset = good = end
    if data[good:] == _mcap_end():
        return 0  # ends at a checkpoint: already readable
    dropped = len(data) - good
    with file.open("r+b") as stream:
        stream.seek(good)
        stream.truncate()
        stream.write(_mcap_end())
    return dropped


def repair(path: str | Path) -> RepairReport:
    """Finish a bag that was not closed (see the module docstring); a closed bag is left untouched.

    Raises:
        RuntimeLayerError: ``path`` holds no rosbag2 storage file, or a storage file that cannot be read at all.
    """
    from rosbags.rosbag2.errors import ReaderError
    from rosbags.rosbag2.storage_mcap import McapReader
    from rosbags.rosbag2.storage_sqlite3 import Sqlite3Reader

    path = Path(path)
    storage, file = _storage_file(path)
    was_open = is_open(path)
    dropped, rolled_back, span = 0, False, None
    if storage == "sqlite3":
        rolled_back = was_open and file.with_name(file.name + "-journal").exists()
        try:  # a normal (not immutable) open rolls back a hot journal first
            with contextlib.closing(sqlite3.connect(file)) as database:
                span = database.execute("SELECT min(timestamp), max(timestamp) FROM messages").fetchone()
        except sqlite3.DatabaseError as error:
            raise RuntimeLayerError(f"bag file {file}: sqlite cannot read it ({error})") from error
    elif was_open:
        dropped = _repair_mcap(file)
    reader = (Sqlite3Reader if storage == "sqlite3" else McapReader)(file)
    try:
        reader.open()
    except ReaderError as error:
        raise RuntimeLayerError(f"bag file {file}: cannot be read ({error})") from error
    try:
        connections = list(reader.connections)
        counts = {c.id: c.msgcount for c in connections}
        start, end = 0, 0
        if sum(counts.values()):
            start, end = span if span is not None else (reader.metadata.start_time, reader.metadata.end_time - 1)
    finally:
        reader.close()
    if was_open:
        old = _metadata_info(path) or {}
        version = int(old.get("version", 9))
        custom = {k: v for k, v in (old.get("custom_data") or {}).items() if k != OPEN_MARK}
        _replace(path / "metadata.yaml", _metadata_text(storage, file.name, connections, counts, start, end, version,
                                                        custom))
    by_topic: dict[str, int] = {}
    for connection in connections:
        by_topic[connection.topic] = by_topic.get(connection.topic, 0) + counts[connection.id]
    return RepairReport(path, storage, was_open, sum(counts.values()), by_topic, end, dropped, rolled_back)


__all__ = ["Checkpointer", "OPEN_MARK", "RepairReport", "is_open", "repair"]
