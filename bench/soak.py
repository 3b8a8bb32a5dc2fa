"""Soak test (issue 12, item 1): ``python bench/soak.py [MINUTES] [--png soak.png]`` (default 10 minutes).

Runs the standalone simulation bring-up of the Scompi (simulator, feedforward, modal monitor and OMA nodes as
processes, config/scompi_simulation.yaml, loopback DDS (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) in a domain of its
own) and, beside it, a 1 kHz JointState stream between two more processes, for MINUTES. Every 10 s it records: encoder samples received from the simulator and
stream samples received, lost ones (gaps in the simulator's 1 ms stamps, gaps in the stream's indices; reliable QoS,
goal 0), one-way latency percentiles of the stream (send stamp to receive, same clock), resident memory and CPU of
every process, and the OMA node's completed identifications. It prints a table, the start/end figures, a PNG of the
curves, and the headline on its last line. Memory growth is measured after a one-minute warm-up.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from flexrobot_ros.runtime import create_node  # noqa: E402
from flexrobot_ros.runtime.messages import time_seconds  # noqa: E402
from flexrobot_ros.runtime.processes import Launcher, NodeLaunch  # noqa: E402

#: The 1 kHz stream's publisher: JointState with position[0] = index and the send time as stamp, reliable, depth 1000.
STREAM = """
import signal, sys, time
from flexrobot_ros.runtime import QosProfile, create_node
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
from flexrobot_ros.runtime.messages import float_sequence
node = create_node("soak_stream")
js = node.types.sensor_msgs.msg.JointState
pub = node.create_publisher(js, "/soak_stream", QosProfile(depth=1000))
while not pub.get_subscription_count():
    time.sleep(0.05)
time.sleep(0.5)
start, i = time.monotonic(), 0
end = start + float(sys.argv[1])
while time.monotonic() < end:
    msg = js(name=[f"j{k}" for k in range(6)], position=float_sequence([i, 0, 0, 0, 0, 0]),
             velocity=float_sequence([0.0] * 6), effort=float_sequence([0.0] * 6))
    msg.header.stamp = node.stamp()
    pub.publish(msg)
    i += 1
    delay = start + i * 1e-3 - time.monotonic()
    if delay > 0:
        time.sleep(delay)
print(i, flush=True)
"""


def proc_stats(pid: int) -> tuple[float, float]:
    """(resident memory [MB], CPU time user + system [s]) of a process."""
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return rss, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("minutes", type=float, nargs="?", default=10.0)
    parser.add_argument("--png", default="soak.png")
    args = parser.parse_args()
    duration = 60.0 * args.minutes
    # loopback only, in a domain of its own: the runtime's own localhost discovery range (as rmw_cyclonedds)
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", FLEXROBOT_RUNTIME="dds",
               ROS_DOMAIN_ID=str(random.randint(150, 220)), PYTHONPATH=str(REPO))
    env.pop("CYCLONEDDS_URI", None)
    os.environ.pop("CYCLONEDDS_URI", None)
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "FLEXROBOT_RUNTIME", "ROS_DOMAIN_ID")})
    params = str(REPO / "config" / "scompi_simulation.yaml")
    launches = [NodeLaunch(name, module=f"flexrobot_ros.nodes.{name}", parameter_files=(params,))
                for name in ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node")]
    launches.append(NodeLaunch("soak_stream", command=(sys.executable, "-c", STREAM, str(duration + 30.0))))
    node = create_node("soak_probe")
    from flexrobot_ros.runtime import QosProfile

    received = {"encoders": [], "stream": []}
    node.create_subscription(node.types.sensor_msgs.msg.JointState, "/motor_states",
                             lambda m: received["encoders"].append(time_seconds(m.header.stamp)),
                             QosProfile(depth=1000))
    node.create_subscription(node.types.sensor_msgs.msg.JointState, "/soak_stream",
                             lambda m: received["stream"].append((int(m.position[0]), time_seconds(m.header.stamp),
                                                                  time.time())), QosProfile(depth=1000))
    identifications = {"value": 0}

    def on_diagnostics(msg) -> None:
        for status in msg.status:
            if status.name.split(":")[0].endswith("/oma_node"):
                values = {kv.key: kv.value for kv in status.values}
                identifications["value"] = int(values.get("identifications", identifications["value"]))
    node.create_subscription(node.types.diagnostic_msgs.msg.DiagnosticArray, "/diagnostics", on_diagnostics)
    log = io.StringIO()
    rows = []
    with Launcher(launches, env=env, output=log) as launcher:
        deadline = time.monotonic() + 120
        while not (received["encoders"] and received["stream"]) and time.monotonic() < deadline:
            node.spin(0.2)
        if not (received["encoders"] and received["stream"]):
            sys.exit("no encoder samples or stream samples within 120 s:\n" + log.getvalue()[-3000:])
        pids = {name: p.pid for name, p in launcher._processes.items()}
        start = time.monotonic()
        next_row = start
        cursor = {"encoders": 0, "stream": 0}
        last_stamp, last_index = received["encoders"][0], received["stream"][0][0]
        totals = {"encoders": 0, "encoders lost": 0, "stream": 0, "stream lost": 0}
        print(f"soak: {args.minutes:g} min, domain {env['ROS_DOMAIN_ID']}, processes {sorted(pids)}", flush=True)
        while time.monotonic() < start + duration:
            node.spin(max(0.0, next_row - time.monotonic()))
            if time.monotonic() < next_row:
                continue
            next_row += 10.0
            stamps = np.array(received["encoders"][cursor["encoders"]:])
            stream = received["stream"][cursor["stream"]:]
            cursor = {"encoders": len(received["encoders"]), "stream": len(received["stream"])}
            steps = np.diff(np.concatenate([[last_stamp], stamps])) if stamps.size else np.array([])
            lost_enc = int(np.sum(np.maximum(np.round(steps / 1e-3) - 1, 0))) if steps.size else 0
            indices = np.array([last_index] + [s[0] for s in stream])
            lost_stream = int(np.sum(np.maximum(np.diff(indices) - 1, 0)))
            latency = np.array([s[2] - s[1] for s in stream]) * 1e3
            if stamps.size:
                last_stamp = stamps[-1]
            if stream:
                last_index = stream[-1][0]
            totals["encoders"] += stamps.size
            totals["encoders lost"] += lost_enc
            totals["stream"] += len(stream)
            totals["stream lost"] += lost_stream
            stats = {name: proc_stats(pid) for name, pid in pids.items() if launcher._processes[name].poll() is None}
            row = {"t": time.monotonic() - start, "encoders": int(stamps.size), "encoders lost": lost_enc,
                   "stream": len(stream), "stream lost": lost_stream,
                   "p50": float(np.percentile(latency, 50)) if latency.size else np.nan,
                   "p99": float(np.percentile(latency, 99)) if latency.size else np.nan,
                   "max": float(latency.max()) if latency.size else np.nan,
                   "identifications": identifications["value"], "stats": stats}
            rows.append(row)
            print(f"t = {row['t']:6.0f} s  encoders {row['encoders']:6d} (lost {lost_enc})  stream {row['stream']:6d} "
                  f"(lost {lost_stream})  latency p50 {row['p50']:.2f} p99 {row['p99']:.2f} max {row['max']:.1f} ms  "
                  f"identifications {row['identifications']}  RSS "
                  + " ".join(f"{n.split('_')[0]} {s[0]:.0f}" for n, s in stats.items()) + " MB", flush=True)
        exited = launcher.exited()
        results = {r.name: r.returncode for r in launcher.shutdown()}
    node.destroy()
    if len(rows) < 3:
        sys.exit("soak too short for figures (needs at least 30 s)")
    warm = next((r for r in rows if r["t"] >= min(60.0, rows[-1]["t"] / 2)), rows[1])
    end = rows[-1]
    print("process             RSS start -> after warm-up -> end [MB]   growth after warm-up   CPU [% of a core]")
    growth = {}
    for name in pids:
        if name not in end["stats"]:
            print(f"{name:<20} exited early")
            continue
        rss0, rssw, rss1 = rows[0]["stats"][name][0], warm["stats"][name][0], end["stats"][name][0]
        cpu = 100 * (end["stats"][name][1] - rows[0]["stats"][name][1]) / (end["t"] - rows[0]["t"])
        growth[name] = 100 * (rss1 - rssw) / rssw
        print(f"{name:<20} {rss0:7.1f} -> {rssw:7.1f} -> {rss1:7.1f}   {growth[name]:+6.2f} %   {cpu:6.1f}")
    lat = np.array([[r["p50"], r["p99"], r["max"]] for r in rows])
    print(f"exit codes {results}; exited during the run: {exited or 'none'}")
    print(f"encoders: {totals['encoders']} samples, {totals['encoders lost']} lost; stream: {totals['stream']} samples, "
          f"{totals['stream lost']} lost; OMA identifications: {end['identifications']}")
    _plot(rows, pids, args.png)
    print(f"plot: {args.png}")
    print(f"soak {end['t'] / 60:.1f} min: {totals['encoders lost'] + totals['stream lost']} of "
          f"{totals['encoders'] + totals['stream']} samples lost, latency p50 {np.nanmedian(lat[:, 0]):.2f} ms / "
          f"p99 {np.nanmax(lat[:, 1]):.2f} ms (worst 10 s window), largest memory growth after warm-up "
          f"{max(growth.values()):+.2f} %, {end['identifications']} OMA identifications")


def _plot(rows, pids, png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.array([r["t"] for r in rows]) / 60
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    axes[0, 0].plot(t, [r["encoders"] / 10 for r in rows], label="encoders from the simulator")
    axes[0, 0].plot(t, [r["stream"] / 10 for r in rows], label="1 kHz stream")
    axes[0, 0].plot(t, [(r["encoders lost"] + r["stream lost"]) / 10 for r in rows], label="lost")
    axes[0, 0].set_ylabel("samples per second")
    axes[0, 1].plot(t, [r["p50"] for r in rows], label="p50")
    axes[0, 1].plot(t, [r["p99"] for r in rows], label="p99")
    axes[0, 1].plot(t, [r["max"] for r in rows], label="max")
    axes[0, 1].set_ylabel("stream latency [ms]")
    axes[0, 1].set_yscale("log")
    for name in pids:
        axes[1, 0].plot(t, [r["stats"].get(name, (np.nan, 0))[0] for r in rows], label=name)
    axes[1, 0].set_ylabel("resident memory [MB]")
    axes[1, 1].plot(t, [r["identifications"] for r in rows])
    axes[1, 1].set_ylabel("OMA identifications")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time [min]")
    fig.suptitle("flexrobot_ros soak: standalone Scompi bring-up + 1 kHz JointState stream")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
