"""The standalone bring-up recording under CPU starvation (issue 23): ``python bench/bringup_load.py [--duration S]
[--loops N]`` (default 60 simulated seconds, 6 busy loops).

Runs ``flexrobot bringup simulation scompi --record DIR --duration S --json`` (the command a user types: the four
nodes as processes, the scripted experiment, the bag recorder) twice in one run: first as the reference on the
machine as it is, then with N busy loops (``python -c 'while True: pass'``, not niced: load 8-10 on 2 cores with 6)
that this script starts before and stops after. For each run it prints, per JointState stream of the bag, the samples
the simulator published (its diagnostics), the samples recorded and the difference (lost), the gaps the bag shows
(header stamps), the /clock messages recorded, the achieved real-time factor, overruns and simulated seconds behind
schedule from the bring-up summary, the wall time and the 1-minute load average. The headline is the last line.
Goal: 0 lost samples with the loops (a slow machine slows the simulation down instead of dropping samples).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from flexrobot_ros.runtime.bags import bag_info, header_stamps  # noqa: E402

STREAMS = ("/motor_states", "/joint_states")


def simulator_diagnostics(summary: dict) -> dict:
    """The newest diagnostics values of simulator_node in the bring-up summary."""
    return next((values for name, values in summary["diagnostics"].items() if name.endswith("simulator_node")), {})


def run(duration_s: float, loops: int, directory: Path) -> dict:
    """One bring-up with ``loops`` busy loops beside it; what it published, recorded and lost."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(loops)]
    bag = directory / f"run_{loops}_loops"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    started = time.monotonic()
    try:
        time.sleep(2.0 if loops else 0.0)  # the load is there before the nodes start
        load = os.getloadavg()[0]
        done = subprocess.run([sys.executable, "-m", "flexrobot_ros.cli", "bringup", "simulation", "scompi",
                               "--record", str(bag), "--duration", f"{duration_s:g}", "--json"],
                              env=env, capture_output=True, text=True, timeout=3600)
        load = max(load, os.getloadavg()[0])
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"bringup exited {done.returncode}:\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    diagnostics = simulator_diagnostics(summary)
    counts = bag_info(bag).counts()
    stamps = header_stamps(bag)
    streams = {}
    for topic in STREAMS:
        published = int(diagnostics.get(f"published {topic.strip('/')}", 0))
        recorded = counts.get(topic, 0)
        gaps = next((g for g in summary["bag"]["gaps"] if g["topic"] == topic), {"gaps": [], "missing": 0})
        streams[topic] = {"published": published, "recorded": recorded, "lost": published - recorded,
                          "gaps": len(gaps["gaps"]), "missing_in_gaps": gaps["missing"],
                          "stamped": len(stamps.get(topic, ()))}
    pace = summary["simulator"] or {}
    return {"loops": loops, "streams": streams, "clock": counts.get("/clock", 0),
            "published_clock": int(diagnostics.get("published clock", 0)),
            "rtf": pace.get("real_time_factor_achieved", float("nan")), "overruns": pace.get("overruns", -1),
            "behind_s": pace.get("behind_schedule_s", float("nan")), "wall_s": wall, "load": load,
            "stopped": summary["stopped"]}


def describe(result: dict) -> list[str]:
    lines = [f"{result['loops']} busy loops: stopped {result['stopped']}, wall time {result['wall_s']:.1f} s, "
             f"1-minute load average {result['load']:.1f}"]
    for topic, s in result["streams"].items():
        lines.append(f"  {topic}: {s['published']} samples published, {s['recorded']} recorded, {s['lost']} lost; "
                     f"{s['gaps']} gaps ({s['missing_in_gaps']} samples missing in them)")
    lines.append(f"  /clock: {result['published_clock']} messages published, {result['clock']} recorded")
    lines.append(f"  simulator: real-time factor {result['rtf']:.3f} achieved of 1 requested, {result['overruns']} "
                 f"overruns, {result['behind_s']:.3f} s of simulated time behind schedule")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="simulated seconds of the bring-up [s]")
    parser.add_argument("--loops", type=int, default=6, help="busy loops of the loaded run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bringup_load_") as tmp:
        reference = run(args.duration, 0, Path(tmp))
        print("\n".join(["reference (no busy loop started by the bench):", *describe(reference)]), flush=True)
        loaded = run(args.duration, args.loops, Path(tmp))
        print("\n".join(["loaded:", *describe(loaded)]), flush=True)
    motor = loaded["streams"]["/motor_states"]
    print(f"bringup_load: {args.loops} busy loops (load {loaded['load']:.1f}): /motor_states {motor['lost']} of "
          f"{motor['published']} samples lost, {motor['gaps']} gaps; real-time factor {loaded['rtf']:.2f} "
          f"(reference {reference['rtf']:.2f}), {loaded['overruns']} overruns; wall time {loaded['wall_s']:.0f} s "
          f"(reference {reference['wall_s']:.0f} s, ratio {loaded['wall_s'] / reference['wall_s']:.2f})")


if __name__ == "__main__":
    main()
