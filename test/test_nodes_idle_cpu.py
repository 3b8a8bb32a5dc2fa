"""Issue 23: an idle node costs almost no CPU.

The feedforward node used about 21 % of a core with no trajectory (its torque-stream timer fired at
``output_rate_hz``, 250 Hz, with nothing to stream): the timer now runs only while a trajectory plays. The nodes
that wait for input (feedforward, modal monitor, OMA) are started as processes with the shipped Scompi parameter
file and no other node; each one's CPU time (utime + stime of /proc/<pid>/stat, which counts only that process's
own work, however busy the rest of the machine is) over 5 s must stay below 2 % of one core, the issue's target
(measured after the change: 0.2 %, 0.2 % and 0.4 %, one clock tick being 0.2 % here; the feedforward node before
it: 4.2 % on the standalone runtime, 21 % under rclpy).
"""
from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import pytest

from node_harness import node_processes

#: Node name -> the line it logs when its constructor is done (it then only waits for input).
READY = {"feedforward_node": "feedforward for ", "modal_monitor_node": "modes of ", "oma_node": "OMA ("}
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` [s] (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_S


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_idle_nodes_use_under_2_percent_of_a_core():
    output = io.StringIO()
    specs = {name: {} for name in READY}
    specs["feedforward_node"] = {"method": "ejnea"}  # no code generation at start-up; idle cost does not depend on it
    with node_processes(specs, output=output) as launcher:
        deadline = time.monotonic() + 120.0  # start-up (imports, model loading), however slow the machine
        while not all(any(line.startswith(f"[{name}] ") and text in line for line in output.getvalue().splitlines())
                      for name, text in READY.items()):
            assert time.monotonic() < deadline and not launcher.exited(), output.getvalue()
            time.sleep(0.1)
        time.sleep(1.0)  # discovery and the first diagnostics settle
        pids = launcher.pids()
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        start = time.monotonic()
        time.sleep(5.0)
        after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        elapsed_s = time.monotonic() - start
    load = {name: 100.0 * (after[name] - before[name]) / elapsed_s for name in pids}
    print("idle CPU over %.1f s: %s" % (elapsed_s, ", ".join(f"{n} {v:.1f} % of a core" for n, v in load.items())))
    assert all(value < 2.0 for value in load.values()), load
