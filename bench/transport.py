"""Standalone transport benchmark: JointState between two processes on loopback.

Measures, in one run:
  1. round trip (ping -> echo -> pong) of a 6-joint JointState through the flexrobot runtime (generated classes,
     guarded callbacks, per-sample decoding), and the same round trip with bare cyclonedds (a hand-written
     JointState-shaped IdlStruct, DataReader/DataWriter/WaitSet) as the reference;
  2. a 1 kHz JointState stream through the runtime: one-way latency (median, p99), throughput, losses, and the
     CPU use of the publishing and the subscribing process.

Usage: python bench/transport.py [--seconds 5] [--round-trips 1000] [--rounds 3]
The last line printed is the headline figure.
"""
# No `from __future__ import annotations` here: cyclonedds resolves the field annotations of the reference IdlStruct
# types below at run time and cannot parse them back from strings such as "sequence[str]".
import argparse
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, int32, sequence, uint32

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LOOPBACK = ('<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface address="127.0.0.1"/>'
            "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto"
            '</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers>'
            '<Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>')
NAMES = [f"joint_{k}" for k in range(6)]


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[int(0.99 * (len(ordered) - 1))]


# ------------------------------------------------------------------------------------------------------------
# bare cyclonedds reference
# ------------------------------------------------------------------------------------------------------------

@dataclass
class Time(IdlStruct, typename="bench::Time"):
    """Reference types for bare cyclonedds, shaped like builtin_interfaces/Time, std_msgs/Header, JointState."""

    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Header(IdlStruct, typename="bench::Header"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class RawJointState(IdlStruct, typename="bench::JointState"):
    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


def _raw_endpoints(read_topic: str, write_topic: str):
    from cyclonedds.core import Policy, Qos, ReadCondition, SampleState, ViewState, InstanceState, WaitSet
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    joint_state = RawJointState
    participant = DomainParticipant(int(os.environ["ROS_DOMAIN_ID"]))
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
    reader = DataReader(participant, Topic(participant, read_topic, joint_state), qos)
    writer = DataWriter(participant, Topic(participant, write_topic, joint_state), qos)
    waitset = WaitSet(participant)
    waitset.attach(ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any))
    return joint_state, reader, writer, waitset


def role_raw_echo(args: argparse.Namespace) -> dict:
    _, reader, writer, waitset = _raw_endpoints("raw_ping", "raw_pong")
    deadline, echoed = time.monotonic() + args.timeout, 0
    while echoed < args.round_trips and time.monotonic() < deadline:
        waitset.wait(100_000_000)
        for sample in reader.take(64):
            writer.write(sample)
            echoed += 1
    return {"echoed": echoed}


def role_raw_ping(args: argparse.Namespace) -> dict:
    joint_state, reader, writer, waitset = _raw_endpoints("raw_pong", "raw_ping")
    _wait(lambda: writer.get_matched_subscriptions() and reader.get_matched_publications())
    rtts = []
    for i in range(args.round_trips):
        sent = time.perf_counter()
        writer.write(joint_state(name=NAMES, position=[float(i)] + [0.1] * 5, velocity=[0.0] * 6,
                                 effort=[0.0] * 6))
        got = []
        while not got:
            waitset.wait(1_000_000_000)
            got = reader.take(1)
        rtts.append(time.perf_counter() - sent)
    return {"rtts": rtts}


# ------------------------------------------------------------------------------------------------------------
# the flexrobot runtime
# ------------------------------------------------------------------------------------------------------------

def _wait(condition, timeout: float = 15.0, settle: float = 0.3) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(settle)


def role_echo(args: argparse.Namespace) -> dict:
    from flexrobot_ros.runtime import create_node

    node = create_node("bench_echo")
    joint_state = node.types.sensor_msgs.msg.JointState
    pong = node.create_publisher(joint_state, "pong")
    count = [0]

    def on_ping(msg) -> None:
        pong.publish(msg)
        count[0] += 1

    node.create_subscription(joint_state, "ping", on_ping)
    deadline = time.monotonic() + args.timeout
    while count[0] < args.round_trips and time.monotonic() < deadline:
        node.spin_once(0.1)
    node.destroy()
    return {"echoed": count[0]}


def role_ping(args: argparse.Namespace) -> dict:
    from flexrobot_ros.runtime import create_node
    from flexrobot_ros.runtime.messages import float_sequence

    node = create_node("bench_ping")
    joint_state = node.types.sensor_msgs.msg.JointState
    ping = node.create_publisher(joint_state, "ping")
    got = []
    subscription = node.create_subscription(joint_state, "pong", got.append)
    _wait(lambda: ping.get_subscription_count() and subscription.get_publisher_count())
    rtts = []
    for i in range(args.round_trips):
        sent = time.perf_counter()
        msg = joint_state(name=NAMES, position=float_sequence([i, 0.1, 0.2, 0.3, 0.4, 0.5]),
                          velocity=float_sequence([0.0] * 6), effort=float_sequence([0.0] * 6))
        msg.header.stamp = node.stamp()
        ping.publish(msg)
        while len(got) <= i:
            node.spin_once(1.0)
        rtts.append(time.perf_counter() - sent)
    node.destroy()
    return {"rtts": rtts}


def role_stream_sub(args: argparse.Namespace) -> dict:
    from flexrobot_ros.runtime import QosProfile, create_node
    from flexrobot_ros.runtime.messages import time_seconds

    node = create_node("bench_stream_sub")
    latencies, indices = [], []

    def on_state(msg) -> None:
        latencies.append(time.time() - time_seconds(msg.header.stamp))
        indices.append(int(msg.position[0]))

    node.create_subscription(node.types.sensor_msgs.msg.JointState, "stream", on_state, QosProfile(depth=100))
    count = int(args.seconds * 1000)
    deadline = time.monotonic() + args.seconds + args.timeout
    started = None
    while len(indices) < count and time.monotonic() < deadline:
        node.spin_once(0.1)
        if indices and started is None:
            started, cpu0 = time.monotonic(), time.process_time()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu0
    node.destroy()
    return {"latencies": latencies, "received": len(indices), "distinct": len(set(indices)), "wall": wall,
            "cpu": cpu}


def role_stream_pub(args: argparse.Namespace) -> dict:
    from flexrobot_ros.runtime import QosProfile, create_node
    from flexrobot_ros.runtime.messages import float_sequence

    node = create_node("bench_stream_pub")
    joint_state = node.types.sensor_msgs.msg.JointState
    publisher = node.create_publisher(joint_state, "stream", QosProfile(depth=100))
    _wait(publisher.get_subscription_count)
    count = int(args.seconds * 1000)
    start, cpu0 = time.monotonic(), time.process_time()
    for i in range(count):
        msg = joint_state(name=NAMES, position=float_sequence([i, 0.1, 0.2, 0.3, 0.4, 0.5]),
                          velocity=float_sequence([0.0] * 6), effort=float_sequence([0.0] * 6))
        msg.header.stamp = node.stamp()
        publisher.publish(msg)
        delay = start + (i + 1) * 1e-3 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    wall, cpu = time.monotonic() - start, time.process_time() - cpu0
    time.sleep(0.5)
    node.destroy()
    return {"sent": count, "wall": wall, "cpu": cpu}


# ------------------------------------------------------------------------------------------------------------

ROLES = {"raw_echo": role_raw_echo, "raw_ping": role_raw_ping, "echo": role_echo, "ping": role_ping,
         "stream_sub": role_stream_sub, "stream_pub": role_stream_pub}


@dataclass
class Pair:
    """Two role processes run together; their JSON results."""

    first: str
    second: str
    results: list[dict] = field(default_factory=list)

    def run(self, args: argparse.Namespace, env: dict[str, str]) -> list[dict]:
        common = ["--round-trips", str(args.round_trips), "--seconds", str(args.seconds), "--timeout",
                  str(args.timeout)]
        processes = [subprocess.Popen([sys.executable, __file__, "--role", role, *common], env=env,
                                      stdout=subprocess.PIPE, text=True) for role in (self.first, self.second)]
        self.results = [json.loads(p.communicate(timeout=args.timeout + args.seconds + 60)[0].splitlines()[-1])
                        for p in processes]
        return self.results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of the 1 kHz stream [s]")
    parser.add_argument("--round-trips", type=int, default=1000, help="round trips per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of reference and runtime")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        print(json.dumps(ROLES[args.role](args)), flush=True)
        return

    env = dict(os.environ, CYCLONEDDS_URI=LOOPBACK, ROS_DOMAIN_ID=str(random.randint(120, 220)),
               FLEXROBOT_RUNTIME="dds", PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    cores = os.cpu_count()
    print(f"machine: {cores} cores; loopback, ROS domain {env['ROS_DOMAIN_ID']}; JointState with 6 joints")

    raw, ours = [], []
    for _ in range(args.rounds):  # alternate, so that load from other work on the machine hits both alike
        raw += Pair("raw_echo", "raw_ping").run(args, env)[1]["rtts"]
        ours += Pair("echo", "ping").run(args, env)[1]["rtts"]
    raw_median, raw_p99 = _percentiles(raw)
    our_median, our_p99 = _percentiles(ours)
    ratio = our_median / raw_median
    print(f"round trip, bare cyclonedds (reference): median {raw_median * 1e3:.3f} ms, p99 {raw_p99 * 1e3:.3f} ms "
          f"({len(raw)} round trips)")
    print(f"round trip, flexrobot runtime:           median {our_median * 1e3:.3f} ms, p99 {our_p99 * 1e3:.3f} ms "
          f"= {ratio:.2f} x the reference")

    sub, pub = Pair("stream_sub", "stream_pub").run(args, env)
    median, p99 = _percentiles(sub["latencies"])
    lost = pub["sent"] - sub["distinct"]
    throughput = sub["received"] / sub["wall"]
    print(f"1 kHz stream for {args.seconds:g} s: {sub['received']} of {pub['sent']} received ({lost} lost), "
          f"throughput {throughput:.0f} msg/s; one-way latency median {median * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms")
    print(f"CPU at 1 kHz: publisher {100 * pub['cpu'] / pub['wall']:.0f} % of one core, subscriber "
          f"{100 * sub['cpu'] / sub['wall']:.0f} % of one core ({cores} cores)")
    print(f"transport: JointState at 1 kHz, one-way latency median {median * 1e3:.2f} ms (p99 {p99 * 1e3:.2f} ms), "
          f"{lost} lost, {throughput:.0f} msg/s; round trip {our_median * 1e3:.2f} ms = {ratio:.2f} x bare cyclonedds "
          f"({raw_median * 1e3:.2f} ms) on {cores} cores")


if __name__ == "__main__":
    main()
