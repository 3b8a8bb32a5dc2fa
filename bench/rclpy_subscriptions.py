"""CPU per message of an rclpy subscription of the runtime, against rclpy's executor taking one message per wait.

One process, two rclpy contexts (two DDS participants, as two processes would have): a publisher sends a burst of
``--messages`` 6-joint sensor_msgs/JointState messages (reliable, keep-last as deep as the burst) to a node of the
runtime's rclpy back end (``RclpyNode``: parameter services, a 10 ms and a 1 s timer, as the nodes have) while
nothing spins it; then the node is spun (``SingleThreadedExecutor.spin_once``, as ``rclpy_backend.spin`` does)
until every message has been handled, and the process CPU time and wall time of that drain are divided by the
message count. Two subscriptions of that node on two topics take turns:

- reference: ``rclpy.node.Node.create_subscription`` with the runtime's guarded callback, what the back end did
  before: rclpy's executor builds and waits on a wait set of all the node's entities for every message;
- runtime: ``RclpyNode.create_subscription``: each callback also takes the messages waiting behind it (at most
  ``rclpy_backend.TAKE_BATCH``) with the call rclpy's executor makes per message.

At 1 kHz, X us per message is X / 10 % of one core. Usage: python bench/rclpy_subscriptions.py [--messages 5000]
[--rounds 3]; ROS_DOMAIN_ID (default 47) keeps it apart from other runs. The last line is the headline.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=5000, help="messages per burst")
    parser.add_argument("--rounds", type=int, default=3, help="bursts per subscription (alternating)")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", "47")

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from flexrobot_ros.runtime import QOS_STREAM, create_node
    from flexrobot_ros.runtime.rclpy_backend import TAKE_BATCH, qos_profile

    node = create_node("bench_subscriber", backend="rclpy")
    node.create_wall_timer(0.01, lambda: None)
    node.create_wall_timer(1.0, lambda: None)
    qos = QOS_STREAM.with_depth(max(args.messages, 1))
    counts = {"reference": 0, "runtime": 0}

    def counter(kind: str):
        def count(_msg: JointState) -> None:
            counts[kind] += 1
        return count

    node.ros_node.create_subscription(JointState, "bench_reference", node.guard(counter("reference"), "reference"),
                                      qos_profile(qos))
    node.create_subscription(JointState, "bench_runtime", counter("runtime"), qos)
    executor = SingleThreadedExecutor(context=node.ros_node.context)
    executor.add_node(node.ros_node)

    context = rclpy.Context()
    rclpy.init(context=context)
    source = rclpy.create_node("bench_publisher", context=context)
    publishers = {kind: source.create_publisher(JointState, f"bench_{kind}", qos_profile(qos)) for kind in counts}
    deadline = time.monotonic() + 30.0
    while any(p.get_subscription_count() < 1 for p in publishers.values()):
        assert time.monotonic() < deadline, "the subscriptions were not matched within 30 s"
        time.sleep(0.05)
    msg = JointState(name=[f"joint{k}" for k in range(1, 7)], position=[0.1] * 6, velocity=[0.2] * 6,
                     effort=[0.3] * 6)
    results: dict[str, list[tuple[float, float]]] = {kind: [] for kind in counts}
    for _ in range(args.rounds):
        for kind, publisher in publishers.items():  # alternate, so that other load on the machine hits both alike
            counts[kind] = 0
            for k in range(args.messages):
                msg.header.stamp.nanosec = k
                publisher.publish(msg)
            time.sleep(1.0)  # delivered into the reader's history meanwhile
            cpu, wall = time.process_time(), time.perf_counter()
            while counts[kind] < args.messages:
                executor.spin_once(timeout_sec=1.0)
            results[kind].append((time.process_time() - cpu, time.perf_counter() - wall))
    executor.shutdown(timeout_sec=0.0)
    source.destroy_node()
    rclpy.try_shutdown(context=context)
    node.destroy()
    rclpy.try_shutdown()

    per = {kind: (1e6 * sum(c for c, _ in runs) / (args.rounds * args.messages),
                  1e6 * sum(w for _, w in runs) / (args.rounds * args.messages)) for kind, runs in results.items()}
    print(f"machine: {os.cpu_count()} cores; "
          f"{args.rounds} x {args.messages} JointState per subscription; TAKE_BATCH {TAKE_BATCH}")
    for kind, (cpu_us, wall_us) in per.items():
        print(f"{kind:>9}: {cpu_us:6.1f} us CPU, {wall_us:6.1f} us wall per message "
              f"({cpu_us / 10:.1f} % of one core at 1 kHz)")
    ratio = per["runtime"][0] / per["reference"][0]
    print(f"rclpy subscription: {per['runtime'][0]:.1f} us CPU per message = {ratio:.2f} x rclpy's executor taking "
          f"one per wait ({per['reference'][0]:.1f} us), wall {per['runtime'][1]:.1f} vs {per['reference'][1]:.1f} us")


if __name__ == "__main__":
    main()
