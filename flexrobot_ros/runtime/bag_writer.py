"""Write sampled joint data as sensor_msgs/msg/JointState topics into a rosbag2 bag (``ros2 bag info/play`` accept it).

:func:`write_joint_state_bag` turns arrays (samples, joints) into one JointState message per sample and topic,
serialized to CDR by the rosbags typestore of the ROS 2 distribution (Jazzy by default) and written with rosbags'
rosbag2 ``Writer`` (metadata version 9, storage ``sqlite3`` or ``mcap``, message definitions and RIHS01 type hashes
stored, offered QoS reliable / volatile / keep-last 10 as rclpy's default publisher).

Time base: ``header.stamp`` of sample k is ``t[k]`` seconds rounded to the nanosecond, and its bag (receive) time
is the same instant. Simulated times start at 0, so the bag starts at the epoch (1970-01-01); a real epoch offset
is deliberately not added: as float seconds, epoch times carry only about 0.24 µs resolution, which would jitter
a 1 kHz record enough to be resampled by readers.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import messages

#: Storage back ends of rosbag2 that rosbags writes.
STORAGES = ("sqlite3", "mcap")
#: rosbag2 metadata version written (Jazzy's).
BAG_VERSION = 9
_INFINITE = (9223372036, 854775807)  # rmw's "infinite" duration as rosbag2 writes it


@dataclass(frozen=True)
class JointStateSeries:
    """One JointState topic: ``position`` (samples, joints) [rad | m], optional ``velocity`` [rad/s | m/s] and
    ``effort`` [N m | N] of the same shape (an omitted field is written as an empty array, as ROS allows)."""

    topic: str
    position: np.ndarray
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None


def _default_qos():
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    infinite = QosTime(*_INFINITE)
    return Qos(QosHistory.KEEP_LAST, 10, QosReliability.RELIABLE, QosDurability.VOLATILE, infinite, infinite,
               QosLiveliness.AUTOMATIC, infinite, False)


def _checked_fields(path: Path, series: JointStateSeries, shape: tuple[int, int]) -> list[np.ndarray | None]:
    fields = []
    for name in ("position", "velocity", "effort"):
        values = getattr(series, name)
        if values is None:
            fields.append(None)
            continue
        array = np.asarray(values, dtype=np.float64)
        if array.shape != shape:
            raise RuntimeLayerError(f"bag {path}: topic {series.topic}: {name} must have shape (samples, joints) = "
                                    f"{shape}, got {array.shape}")
        fields.append(np.ascontiguousarray(array))
    return fields


def write_joint_state_bag(path: str | Path, t: np.ndarray, joint_names: Sequence[str],
                          series: Sequence[JointStateSeries], *, storage: str = "sqlite3",
                          distro: str = "jazzy") -> Path:
    """Write one JointState message per sample ``t[k]`` [s] and topic into a new rosbag2 bag directory ``path``.

    Messages are written in time order (for each sample, the topics in the order given); ``header.stamp`` and
    the bag time of sample k are both ``t[k]`` (see the module docstring); ``header.frame_id`` is empty and
    ``name`` is ``joint_names``.

    Raises:
        RuntimeLayerError: ``path`` exists or cannot be created, unknown ``storage``, times not finite,
            negative or decreasing, arrays of the wrong shape, no or duplicate topics.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.errors import WriterError

    path = Path(path)
    if storage not in STORAGES:
        raise RuntimeLayerError(f"bag {path}: storage {storage!r} is not one of {STORAGES}")
    if path.exists():
        raise RuntimeLayerError(f"bag {path}: already exists; rosbag2 bags are new directories (remove it or "
                                f"choose another path)")
    times = np.asarray(t, dtype=float)
    if times.ndim != 1 or times.size == 0:
        raise RuntimeLayerError(f"bag {path}: t must be a non-empty 1-D array of times [s], got shape {times.shape}")
    if not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) < 0):
        raise RuntimeLayerError(f"bag {path}: times must be finite, >= 0 s and non-decreasing")
    names = [str(name) for name in joint_names]
    if not series:
        raise RuntimeLayerError(f"bag {path}: no topic to write")
    topics = [s.topic for s in series]
    if len(set(topics)) != len(topics):
        raise RuntimeLayerError(f"bag {path}: duplicate topics {topics}")
    shape = (times.size, len(names))
    fields = [_checked_fields(path, s, shape) for s in series]

    store = messages.typestore(distro)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    empty = np.zeros(0, dtype=np.float64)
    stamps_ns = np.round(times * 1e9).astype(np.int64)

    writer = Writer(path, version=BAG_VERSION,
                    storage_plugin=StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3)
    try:
        writer.open()
    except WriterError as error:
        raise RuntimeLayerError(f"bag {path}: cannot be created ({error})") from error
    try:
        connections = [writer.add_connection(s.topic, JointState.__msgtype__, typestore=store,
                                             serialization_format="cdr", offered_qos_profiles=[_default_qos()])
                       for s in series]
        for k, stamp_ns in enumerate(stamps_ns.tolist()):
            header = Header(stamp=Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000),
                            frame_id="")
            for connection, (position, velocity, effort) in zip(connections, fields):
                message = JointState(header=header, name=names,
                                     position=position[k] if position is not None else empty,
                                     velocity=velocity[k] if velocity is not None else empty,
                                     effort=effort[k] if effort is not None else empty)
                writer.write(connection, stamp_ns, store.serialize_cdr(message, JointState.__msgtype__))
    finally:
        writer.close()
    return path


__all__ = ["JointStateSeries", "STORAGES", "write_joint_state_bag"]
