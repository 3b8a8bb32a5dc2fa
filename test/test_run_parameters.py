"""A recording carries the run's parameters, and the modal monitor warns when a replayed one was made with another
model (issue 23: scompi_simulation.yaml has tool: true, scompi_hardware.yaml tool: false - 7 % off, silently).

On the standalone runtime: the monitor started with the hardware file publishes its parameters latched; a bag
recorded (runtime.bags.BagRecorder, the bring-up's recorder) from a simulator-side document holds them; replaying
that bag (runtime.bags.play) into the monitor makes it log one warning naming 'tool' and both values. The recorded
document is written by the test by hand, its YAML hash computed here with hashlib.
"""
from __future__ import annotations

import hashlib
import threading

import yaml

from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.runtime import QOS_LATCHED
from flexrobot_ros.runtime.bags import BagRecorder, play, read_bag
from node_harness import REPO, Harness, LogRecords, Probe

TOPIC = "/flexrobot/bringup_parameters"
HARDWARE = REPO / "config" / "scompi_hardware.yaml"
SCOMPI_SHA256 = hashlib.sha256((REPO / "config" / "scompi.yaml").read_bytes()).hexdigest()
#: What the simulation's nodes publish (scompi_simulation.yaml: tool true), as a user's recording holds it.
RECORDED = {"node": "/simulator_node", "robot": "scompi", "tool": True,
            "robot_yaml": {"path": "config/scompi.yaml", "sha256": SCOMPI_SHA256}, "parameters": {"rate_hz": 1000.0}}


def tool_warnings(log: LogRecords) -> list[str]:
    return [w for w in log.warnings() if "'tool'" in w]


def test_replayed_bag_with_another_tool_makes_the_monitor_warn_once(tmp_path):
    log = LogRecords("/modal_monitor_node")
    try:
        with Harness() as harness:
            # 1. record what a simulation run publishes (latched, published before the recorder starts)
            sim = harness.node("simulation_side", files=())
            string = sim.types.std_msgs.msg.String
            sim.create_publisher(string, TOPIC, QOS_LATCHED).publish(string(data=yaml.safe_dump(RECORDED)))
            recorder_node = harness.node("recorder", files=())
            recorder = BagRecorder(recorder_node, tmp_path / "run1", [TOPIC])
            assert harness.spin(20.0, lambda: recorder.counts.get(TOPIC, 0) >= 1)
            info = recorder.close()
            assert info.counts()[TOPIC] == 1
            recorded = [yaml.safe_load(m.message.data) for m in read_bag(tmp_path / "run1", [TOPIC])]
            assert recorded == [RECORDED]
            sim.destroy()
            harness.nodes.remove(sim)

            # 2. the hardware-side monitor (tool: false) publishes its own parameters and agrees with itself
            node = harness.node("modal_monitor_node", files=(HARDWARE,))
            ModalMonitorNode(node)
            probe = Probe(harness.node("probe", files=()), {TOPIC: "std_msgs/msg/String"}, latched=[TOPIC])
            assert harness.spin(20.0, lambda: probe.messages[TOPIC])
            own = yaml.safe_load(probe.last(TOPIC).data)
            assert (own["node"], own["robot"], own["tool"]) == ("/modal_monitor_node", "scompi", False)
            assert own["robot_yaml"]["sha256"] == SCOMPI_SHA256 and own["parameters"]["use_sim_time"] is False
            harness.spin(1.0)
            assert tool_warnings(log) == []

            # 3. replay the recording into it: one warning naming the parameter and both values, once
            player = harness.node("player", files=())
            for _ in range(2):
                thread = threading.Thread(target=play, args=(tmp_path / "run1",), kwargs={"node": player,
                                                                                           "wait_for_subscribers_s": 10})
                thread.start()
                harness.spin(20.0, lambda: not thread.is_alive() and tool_warnings(log))
                thread.join(10)
            warnings = tool_warnings(log)
            assert len(warnings) == 1, log.warnings()
            assert "True" in warnings[0] and "False" in warnings[0] and "/simulator_node" in warnings[0]
            assert not [w for w in log.warnings() if "'robot'" in w or "sha256" in w]
    finally:
        log.close()
