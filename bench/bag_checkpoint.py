"""What a crash-safe bag checkpoint costs: ``python bench/bag_checkpoint.py [--topics 26] [--rounds 40]``.

A recorder checkpoints every 0.25 s (:class:`~flexrobot_ros.runtime.bag_recovery.Checkpointer`): it commits (sqlite3)
or closes the pending chunk (MCAP) and rewrites ``metadata.yaml``. This bench builds a bag with as many topics as a
recording bring-up has (26 by default: JointStates at 1 kHz and the rest), writes a quarter second of the 1 kHz
streams between checkpoints and times, per storage, the median checkpoint and the median ``metadata.yaml`` text in it.
The reference, measured in the same run, is the same metadata dumped the way rosbags' ``Writer.close`` dumps it
(ruamel's safe dumper), which the checkpoints used before. The headline (last line) is the sqlite3 checkpoint against
that reference and the share of one core that four checkpoints a second take.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from flexrobot_ros.runtime import QOS_STREAM, messages  # noqa: E402
from flexrobot_ros.runtime.bag_recovery import Checkpointer, _metadata_text  # noqa: E402
from flexrobot_ros.runtime.bags import _rosbags_qos  # noqa: E402

STREAMS = 4  # topics at 1 kHz in a bring-up (joint_states, motor_states, dynamic_joint_states, clock)


def _median_s(call, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(storage: str, topics: int, rounds: int, directory: Path) -> dict[str, float]:
    """Median seconds of one checkpoint, of its metadata text, and of the ruamel reference, for one storage."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from ruamel.yaml import YAML

    store = messages.typestore("jazzy")
    state = store.types["sensor_msgs/msg/JointState"]
    data = store.serialize_cdr(state(header=store.types["std_msgs/msg/Header"](
        stamp=store.types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""),
        name=[f"joint_{i}" for i in range(6)], position=np.zeros(6), velocity=np.zeros(6), effort=np.zeros(6)),
        state.__msgtype__)
    writer = Writer(directory / storage, version=9,
                    storage_plugin=StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3)
    writer.open()
    connections = [writer.add_connection(f"/topic_{i}", state.__msgtype__, typestore=store,
                                         offered_qos_profiles=[_rosbags_qos(QOS_STREAM)]) for i in range(topics)]
    checkpointer = Checkpointer(writer)
    stamp = 1_000_000_000

    def quarter_second_then_checkpoint() -> None:
        nonlocal stamp
        for _ in range(250):
            stamp += 1_000_000
            for connection in connections[:STREAMS]:
                writer.write(connection, stamp, data)
        start = time.perf_counter()
        checkpointer.checkpoint()
        checkpoints.append(time.perf_counter() - start)

    def text() -> str:
        return _metadata_text(storage, "x", writer.connections, writer.counts, writer.min_timestamp,
                              writer.max_timestamp, 9, {"flexrobot.recording": "open"})

    metadata = yaml.safe_load(text())

    def ruamel() -> None:
        dumper = YAML(typ="safe")
        dumper.default_flow_style = False
        dumper.dump(metadata, StringIO())

    checkpoints: list[float] = []
    for _ in range(rounds):
        quarter_second_then_checkpoint()
    result = {"checkpoint": statistics.median(checkpoints), "metadata": _median_s(text, rounds),
              "ruamel": _median_s(ruamel, rounds)}
    checkpointer.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=26, help="topics in the bag (a recording bring-up: 26)")
    parser.add_argument("--rounds", type=int, default=40, help="checkpoints timed per storage")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        results = {storage: run(storage, args.topics, args.rounds, Path(directory)) for storage in ("sqlite3", "mcap")}
    for storage, r in results.items():
        print(f"{storage:7s}: checkpoint {r['checkpoint'] * 1e3:6.2f} ms (its metadata.yaml text "
              f"{r['metadata'] * 1e3:5.2f} ms); ruamel reference dump of the same metadata {r['ruamel'] * 1e3:6.2f} ms")
    r = results["sqlite3"]
    print(f"bag checkpoint, {args.topics} topics, sqlite3: {r['checkpoint'] * 1e3:.2f} ms, "
          f"{r['ruamel'] / r['checkpoint']:.1f}x shorter than ruamel's dump of its metadata alone "
          f"({r['ruamel'] * 1e3:.2f} ms); 4 checkpoints/s take {4 * r['checkpoint'] * 100:.1f} % of a core")


if __name__ == "__main__":
    main()
