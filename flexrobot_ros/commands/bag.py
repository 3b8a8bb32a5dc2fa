"""``flexrobot bag record|play|info|repair``: rosbag2 bags on the standalone runtime (files ``ros2 bag`` accepts)."""
from __future__ import annotations

import argparse
import datetime
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexrobot_ros.commands.arguments import CommandError, output_directory
from flexrobot_ros.runtime import bags


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``bag`` and its ``record``, ``play``, ``info`` and ``repair`` actions."""
    parser = subparsers.add_parser("bag", help="record, play and summarise rosbag2 bags (standalone runtime)",
                                   description="Record, play, summarise and repair rosbag2 bags on the "
                                   "standalone runtime (files that 'ros2 bag' accepts).")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    rec = actions.add_parser("record", help="record topics into a bag until Ctrl-C or --duration")
    rec.add_argument("topics", nargs="*", help="topics to record (default with -a: every topic discovered)")
    rec.add_argument("-a", "--all", action="store_true", help="record every topic discovered")
    rec.add_argument("-o", "--output", help="bag directory to create (default rosbag2_<date>-<time>)")
    rec.add_argument("-s", "--storage", choices=bags.STORAGES, default="sqlite3", help="storage (default sqlite3)")
    rec.add_argument("--duration", type=float, help="stop after this many seconds")
    rec.add_argument("--json", action="store_true", help="print the recorded bag's summary as JSON")
    rec.set_defaults(func=_record)

    ply = actions.add_parser("play", help="republish a bag with its original timing")
    ply.add_argument("bag", help="bag directory (or its .db3/.mcap file)")
    ply.add_argument("-r", "--rate", type=float, default=1.0, help="playback speed factor (default 1.0)")
    ply.add_argument("--topics", nargs="+", help="only these topics")
    ply.add_argument("--wait", type=float, default=0.0, help="wait up to this many seconds for subscribers first")
    ply.add_argument("--json", action="store_true", help="print the messages played per topic as JSON")
    ply.set_defaults(func=_play)

    inf = actions.add_parser("info", help="print a bag's topics, types, counts, duration and the gaps in its "
                                          "JointState streams")
    inf.add_argument("bag", help="bag directory (or its .db3/.mcap file)")
    inf.add_argument("--json", action="store_true", help="machine-readable output")
    inf.set_defaults(func=_info)

    rep = actions.add_parser("repair", help="finish a bag whose recorder was killed (keep what it holds, say what "
                                            "was lost)")
    rep.add_argument("bag", help="bag directory")
    rep.add_argument("--json", action="store_true", help="machine-readable output")
    rep.set_defaults(func=_repair)


def bag_directory(path: str) -> str:
    """The bag directory of ``path``: the path itself, or the directory of a bag's ``.db3``/``.mcap`` file (as
    ``flexrobot oma`` accepts either)."""
    given = Path(path)
    if not given.exists():
        raise CommandError(f"bag {path}: no such file or directory")
    if given.is_file():
        if given.suffix.lower() in (".db3", ".mcap") and (given.parent / "metadata.yaml").is_file():
            return str(given.parent)
        raise CommandError(f"bag {path}: not a rosbag2 bag (give the bag directory, which holds metadata.yaml)")
    return path


#: A header stamp step above this many nominal periods (the median step) is a gap.
GAP_FACTOR = 1.5
#: Gaps listed by name per topic in the text output (all of them in JSON).
GAPS_SHOWN = 10


@dataclass(frozen=True)
class StreamGaps:
    """Samples missing from one stamped stream, judged from its header stamps.

    ``period_s`` is the nominal period [s] (the median stamp step); each gap is ``(at_s, missing)``: the stamp of the
    last sample before the gap [s from the stream's first stamp] and the number of samples missing there
    (step / period rounded, minus one).
    """

    topic: str
    samples: int
    period_s: float
    gaps: tuple[tuple[float, int], ...]

    @property
    def missing(self) -> int:
        """Samples missing in all gaps."""
        return sum(missing for _, missing in self.gaps)

    def as_dict(self) -> dict:
        """JSON-ready: topic, samples, period_s, missing, gaps [{"at_s", "missing"}]."""
        return {"topic": self.topic, "samples": self.samples, "period_s": self.period_s, "missing": self.missing,
                "gaps": [{"at_s": at, "missing": missing} for at, missing in self.gaps]}

    @classmethod
    def from_dict(cls, data: dict) -> StreamGaps:
        """The inverse of :meth:`as_dict`."""
        return cls(data["topic"], data["samples"], data["period_s"],
                   tuple((gap["at_s"], gap["missing"]) for gap in data["gaps"]))

    def describe(self) -> str:
        """One line: the topic and its gaps (or none), with units."""
        head = f"{self.topic}: {self.samples} samples, period {1e3 * self.period_s:.3f} ms"
        if not self.gaps:
            return f"{head}, no gaps"
        shown = ", ".join(f"{missing} at {at:.3f} s" for at, missing in self.gaps[:GAPS_SHOWN])
        more = f", ... {len(self.gaps) - GAPS_SHOWN} more gaps" if len(self.gaps) > GAPS_SHOWN else ""
        return f"{head}, {self.missing} samples missing in {len(self.gaps)} gaps (missing at s from the first " \
               f"stamp: {shown}{more})"


def stream_gaps(topic: str, stamps_ns: np.ndarray) -> StreamGaps | None:
    """The gaps of a stream with header stamps ``stamps_ns`` [ns] (None below 3 samples: no nominal period)."""
    from flexrobot_ros.oma.signals import find_gaps

    if len(stamps_ns) < 3:
        return None
    t = (stamps_ns - stamps_ns[0]) * 1e-9  # exact to the ns for 104 days of record
    period = float(np.median(np.diff(t)))
    gaps = tuple((before, int(round((after - before) / period)) - 1)
                 for _, before, after in find_gaps(t, GAP_FACTOR)) if period > 0 else ()
    return StreamGaps(topic, len(stamps_ns), period, gaps)


def bag_gaps(path: str | Path) -> list[StreamGaps]:
    """The gaps of every sensor_msgs/JointState topic of a bag (those with 3 samples or more)."""
    found = (stream_gaps(topic, stamps) for topic, stamps in bags.header_stamps(path).items())
    return [gaps for gaps in found if gaps is not None]


def format_gaps(gaps: list[StreamGaps]) -> str:
    """The gap lines of ``flexrobot bag info`` (empty without JointState topics)."""
    if not gaps:
        return ""
    return "\n".join([f"Gaps in header stamps (a step above {GAP_FACTOR:g} periods):"]
                     + [f"  {g.describe()}" for g in gaps])


def info_dict(info: bags.BagInfo, gaps: list[StreamGaps] | None = None) -> dict:
    """A bag summary as JSON-ready data (with ``gaps`` per JointState topic when given)."""
    result = {"path": str(info.path), "storage": info.storage, "duration_s": info.duration_s,
              "start_ns": info.start_ns, "end_ns": info.end_ns, "message_count": info.message_count,
              "closed": info.closed, "topics": [{"name": t.name, "type": t.msgtype, "count": t.count,
                          "serialization_format": t.serialization_format} for t in info.topics]}
    if gaps is not None:
        result["gaps"] = [g.as_dict() for g in gaps]
    return result


def _record(args: argparse.Namespace) -> int:
    if not args.topics and not args.all:
        raise CommandError("give topics to record, or -a for all")
    output = args.output or datetime.datetime.now().strftime("rosbag2_%Y_%m_%d-%H_%M_%S")
    if Path(output).exists():
        raise CommandError(f"-o {output}: already exists; a bag is written to a new directory")
    output_directory(Path(output).parent, "-o", output)
    info = bags.record(output, None if args.all else args.topics, storage=args.storage, duration_s=args.duration)
    print(json.dumps(info_dict(info)) if args.json else bags.format_info(info))
    return 0


def _play(args: argparse.Namespace) -> int:
    report = bags.play(bag_directory(args.bag), rate=args.rate, topics=args.topics, wait_for_subscribers_s=args.wait)
    total = sum(report.counts.values())
    if args.json:
        print(json.dumps({"bag": args.bag, "messages": total, "topics": dict(report.counts),
                          "elapsed_s": report.elapsed_s}))
    else:
        print(f"played {total} messages on {len(report.counts)} topics in {report.elapsed_s:.3f} s")
    return 0


def _info(args: argparse.Namespace) -> int:
    path = bag_directory(args.bag)
    info, gaps = bags.bag_info(path), bag_gaps(path)
    print(json.dumps(info_dict(info, gaps)) if args.json else "\n".join(
        text for text in (bags.format_info(info), format_gaps(gaps)) if text))
    return 0


def _repair(args: argparse.Namespace) -> int:
    from flexrobot_ros.runtime.bag_recovery import repair

    report = repair(bag_directory(args.bag))
    if args.json:
        print(json.dumps({"path": str(report.path), "storage": report.storage, "was_open": report.was_open,
                          "message_count": report.messages, "counts": report.counts, "end_ns": report.end_ns,
                          "dropped_bytes": report.dropped_bytes, "rolled_back": report.rolled_back}))
    else:
        print(report.summary())
    return 0
