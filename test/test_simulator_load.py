"""Issue 23, item 2: under CPU starvation the simulator slows down instead of dropping samples, and says so.

The test loads the machine itself: four busy-loop processes (each ends by itself after 120 s, and is killed when
the test ends) on top of a real-time factor of 100, which no machine of this project's kind reaches with a 6-joint
robot publishing two 1 kHz streams (about 10 at best idle, several ms per 100 samples). So the
outcome does not depend on how idle or busy the machine is otherwise: whatever the pace achieved, the probe must
receive every one of the 1500 samples of a 1.5 s run, stamps exactly 1 ms apart, and the simulator must report an
achieved real-time factor below the requested 100 with overruns > 0 and bookkeeping that adds up (checked against
the wall-clock time measured here, not against the node's own clock).
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from flexrobot_ros.nodes.simulator_node import MAX_CATCH_UP_S, SimulatorNode
from node_harness import Harness, LogRecords, Probe

JS, DIAG = "sensor_msgs/msg/JointState", "diagnostic_msgs/msg/DiagnosticArray"
BUSY_LOOP = "import time\nend = time.monotonic() + 120.0\nwhile time.monotonic() < end:\n    pass\n"
REQUESTED = 100.0
DURATION_S = 1.5
RATE_HZ = 1000.0


def test_a_starved_simulation_slows_down_and_publishes_every_sample():
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(4)]
    try:
        with Harness() as harness:
            node = harness.node("simulator_node", {"duration_s": DURATION_S, "real_time_factor": REQUESTED,
                                                   "autostart": False, "excitation.type": "impacts"})
            logs = LogRecords("/simulator_node")
            app = SimulatorNode(node)
            probe_node = harness.node("probe")
            probe = Probe(probe_node, {"/motor_states": JS, "/joint_states": JS, "/diagnostics": DIAG})
            srv = probe_node.types.std_srvs.srv
            run = probe_node.create_client(srv.SetBool, "/simulator_node/run")
            harness.spin(1.0)
            started = time.monotonic()
            assert harness.call(run, srv.SetBool.Request(data=True)).success
            assert harness.spin(120.0, lambda: app.state == "finished"), app.state
            wall_s = time.monotonic() - started
            harness.spin(120.0, lambda: probe.diagnostics("simulator_node").get("state") == "finished"
                         and len(probe.messages["/motor_states"]) >= int(DURATION_S * RATE_HZ))
            harness.spin(0.5)
            logs.close()
    finally:
        for process in busy:
            process.kill()
            process.wait()

    expected = int(DURATION_S * RATE_HZ)
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in probe.messages["/motor_states"]]
    assert len(stamps) == expected                               # 0 lost
    # none skipped: 1 ms apart, to the 238 ns resolution of the float64 epoch seconds the stamps are made from
    assert max(abs(b - a - 1_000_000) for a, b in zip(stamps, stamps[1:])) <= 512
    decimation = app.p["joint_states_decimation"]  # the shipped parameter file's (4)
    assert len(probe.messages["/joint_states"]) == expected // decimation
    values = probe.diagnostics("simulator_node")
    assert values["state"] == "finished"
    assert int(values["published motor_states"]) == expected
    assert int(values["published joint_states"]) == expected // decimation
    overruns, behind_s = int(values["overruns"]), float(values["behind schedule [s]"])
    achieved, running_s = float(values["real-time factor (achieved, running)"]), float(values["running wall time [s]"])
    assert overruns > 0 and achieved < REQUESTED
    # each overrun gave up more than one sample of the schedule
    assert behind_s >= overruns / RATE_HZ
    # the node's running time lies within the wall time measured here (it starts after the ~/run call arrives and
    # counts to the tick that finished, to within one 10 ms timer period)
    assert 0 < running_s <= wall_s + 0.011
    assert achieved == pytest.approx(DURATION_S / running_s, rel=1e-3)
    assert achieved >= DURATION_S / wall_s * (1 - 1e-3) - 1e-3
    # the schedule advanced REQUESTED x the running time: the simulated time, what was given up, and at most one
    # catch-up window still pending
    assert DURATION_S + behind_s <= REQUESTED * running_s + MAX_CATCH_UP_S + 1e-9
    assert any("behind its real-time schedule" in text for text in logs.warnings())
