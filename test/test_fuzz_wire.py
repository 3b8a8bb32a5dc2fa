"""Wire-level fuzzing, fixed-seed CI subset (issue 12, item 2; the full campaign is ``bench/fuzz_wire.py``).

The four nodes run as processes (the simulator streaming at 1 kHz); malformed samples of every kind in
:mod:`wire_fuzz` go through real DDS to every topic a node subscribes to, and undecodable requests to every service
it serves (its own and the six parameter services). Acceptance: no node dies; each rejection is counted per cause in its diagnostics; valid traffic goes on
being taken (the simulator's own encoder stream by the OMA node, then a valid pose, trajectory and service call
sent by the test); resident memory stays bounded.
"""
from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest

import wire_fuzz
from flexrobot_ros.nodes.convert import joint_state, joint_trajectory
from flexrobot_ros.runtime.messages import float_sequence
from node_harness import Q8, Harness, Probe, node_processes

JS, JT, FA, DIAG = ("sensor_msgs/msg/JointState", "trajectory_msgs/msg/JointTrajectory",
                    "std_msgs/msg/Float64MultiArray", "diagnostic_msgs/msg/DiagnosticArray")
JOINTS = [f"joint{i}" for i in range(1, 7)]
#: node: (its subscribed topics and their types, its services (Trigger unless SetBool)).
TARGETS = {
    "simulator_node": ({"/set_point": JS, "/motor_trajectory": JT, "/motor_torque_command": FA},
                       ("/simulator_node/apply_impact", "/simulator_node/reset", "/simulator_node/set_point",
                        "/simulator_node/run")),
    "feedforward_node": ({"/desired_trajectory": JT}, ()),
    "modal_monitor_node": ({"/joint_states": JS}, ("/modal_monitor_node/map",)),
    "oma_node": ({"/motor_states": JS, "/joint_states": JS},
                 ("/oma_node/identify", "/oma_node/reset", "/oma_node/save_modal_data",
                  "/oma_node/identify_joint_parameters")),
}
#: samples per topic and requests per service (bench/fuzz_wire.py raises them through the environment), seed.
#: The parameter services every node serves (rcl_interfaces), fuzzed like the node's own services.
PARAMETER_SERVICES = {"list_parameters": "ListParameters", "get_parameters": "GetParameters",
                      "set_parameters": "SetParameters", "set_parameters_atomically": "SetParametersAtomically",
                      "describe_parameters": "DescribeParameters", "get_parameter_types": "GetParameterTypes"}
PER_TOPIC = int(os.environ.get("FLEXROBOT_FUZZ_SAMPLES", 150))
PER_SERVICE = int(os.environ.get("FLEXROBOT_FUZZ_REQUESTS", 20))
SEED = int(os.environ.get("FLEXROBOT_FUZZ_SEED", 12))


def makers(types, node):
    """Builders of a valid sample per type (Scompi joints), and a valid sample of another type per type."""
    def state():
        return joint_state(types, node.stamp(), JOINTS, np.asarray(Q8))

    def trajectory():
        q = np.array([Q8, Q8 + 0.01, Q8 + 0.02])
        return joint_trajectory(types, node.stamp(0.0), JOINTS, np.array([0.0, 0.5, 1.0]), q, effort=np.zeros_like(q))

    def array():
        return types.std_msgs.msg.Float64MultiArray(data=float_sequence(np.zeros(6)))
    build = {JS: state, JT: trajectory, FA: array}
    other = {JS: bytes(array().serialize()), JT: bytes(state().serialize()), FA: bytes(trajectory().serialize())}
    return build, other


def campaign(harness, node, per_topic: int, per_service: int, seed: int) -> dict[str, int]:
    """Send the malformed samples and requests; {kind: samples the DDS writers accepted}."""
    from cyclonedds._clayer import ddspy_write

    types = node.types
    build, other = makers(types, node)
    publishers, sent = {}, {}
    for topics, _ in TARGETS.values():
        for topic, typename in topics.items():
            publishers.setdefault(topic, (node.create_publisher(types.get(typename), topic), typename))
    clients = [node.create_client(types.std_srvs.srv.SetBool if name.endswith("/run") else types.std_srvs.srv.Trigger,
                                  name) for _, services in TARGETS.values() for name in services]
    clients += [node.create_client(types.get(f"rcl_interfaces/srv/{kind}"), f"/{name}/{service}")
                for name in TARGETS for service, kind in PARAMETER_SERVICES.items()]
    assert harness.spin(60.0, lambda: all(p.get_subscription_count() for p, _ in publishers.values())
                        and all(c.service_is_ready() for c in clients))
    for k, (topic, (publisher, typename)) in enumerate(sorted(publishers.items())):
        stream = wire_fuzz.malformed(types, build[typename], other[typename], per_topic, seed + k, node.now())
        for i, (kind, data) in enumerate(stream):
            try:
                publisher.publish_raw(data)
                sent[kind] = sent.get(kind, 0) + 1
            except Exception:  # the DDS writer refused the bytes: nothing went on the wire
                sent["refused by the writer: " + kind] = sent.get("refused by the writer: " + kind, 0) + 1
            if i % 10 == 9:
                harness.spin(0.002)
    for k, client in enumerate(clients):
        for kind, data in wire_fuzz.service_garbage(per_service, seed + 100 + k):
            padded = data.ljust((len(data) + 3) & ~3, b"\0")
            sent["request: " + kind] = sent.get("request: " + kind, 0) + (ddspy_write(client._writer._ref, padded) >= 0)
        harness.spin(0.01)
    return sent


@pytest.mark.slow
def test_malformed_samples_on_every_input_leave_every_node_working(tmp_path):
    output = io.StringIO()
    with Harness() as harness:
        node = harness.node("fuzzer")
        probe = Probe(node, {"/diagnostics": DIAG, "/motor_trajectory": JT})
        out = {"output_directory": str(tmp_path)}  # fuzzed requests may run ~/map: files go there, not the checkout
        launcher = node_processes({"simulator_node": {"real_time_factor": 1.0}, "feedforward_node": {},
                                   "modal_monitor_node": out, "oma_node": out}, output)
        with launcher:
            assert harness.spin(90.0, lambda: all(probe.diagnostics(n) for n in TARGETS)), output.getvalue()
            assert harness.spin(30.0, lambda: probe.count("oma_node", "samples received") > 500), output.getvalue()
            pids = {name: process.pid for name, process in launcher._processes.items()}
            rss_before = {name: wire_fuzz.rss_bytes(pid) for name, pid in pids.items()}

            sent = campaign(harness, node, PER_TOPIC, PER_SERVICE, SEED)
            harness.spin(3.0)
            assert launcher.exited() == [], output.getvalue()[-3000:]
            rss_after = {name: wire_fuzz.rss_bytes(pid) for name, pid in pids.items()}
            errors = {name: {k: int(v) for k, v in probe.diagnostics(name).items() if k.startswith("input errors")}
                      for name in TARGETS}

            # valid traffic afterwards: the simulator (reset), its stream into the OMA node, a pose for the monitor,
            # a trajectory for the feedforward node
            reset = harness.call(node.create_client(node.types.std_srvs.srv.Trigger, "/simulator_node/reset"),
                                 node.types.std_srvs.srv.Trigger.Request())
            samples = probe.count("oma_node", "samples received")
            computations = probe.count("modal_monitor_node", "computations")
            published = len(probe.messages["/motor_trajectory"])
            pose = node.create_publisher(node.types.sensor_msgs.msg.JointState, "/joint_states")
            desired = node.create_publisher(node.types.trajectory_msgs.msg.JointTrajectory, "/desired_trajectory")
            harness.spin(0.2)
            desired.publish(joint_trajectory(node.types, node.stamp(0.0), JOINTS, np.array([0.0, 0.5, 1.0]),
                                             np.array([Q8, Q8 + 0.01, Q8 + 0.02])))
            pose.publish(joint_state(node.types, node.stamp(node.now() + 3600.0), JOINTS, np.asarray(Q8) + 0.05))
            assert harness.spin(30.0, lambda: probe.count("oma_node", "samples received") > samples + 1000
                                and probe.count("modal_monitor_node", "computations") > computations
                                and len(probe.messages["/motor_trajectory"]) > published), (
                probe.diagnostics("oma_node"), probe.diagnostics("modal_monitor_node"), output.getvalue()[-3000:])
            results = {r.name: r.returncode for r in launcher.shutdown()}
    total = sum(sent.values())
    print("FUZZ_RESULT " + json.dumps({"sent": sent, "rejections": errors, "exit codes": results,
                                       "rss_growth_mb": {n: round((rss_after[n] - rss_before[n]) / 2**20, 1)
                                                         for n in pids}}))
    assert reset.success
    assert results == dict.fromkeys(TARGETS, 0), output.getvalue()[-3000:]
    assert total >= 6 * PER_TOPIC
    for name, (topics, _) in TARGETS.items():  # every subscribed topic of every node counted rejections
        for topic in topics:
            assert any(key.startswith(f"input errors: {topic}:") and value > 0 for key, value in errors[name].items()), \
                (name, topic, errors[name])
    for name in TARGETS:  # bounded memory: the huge-array samples (8 MB each) are not kept
        assert rss_after[name] - rss_before[name] < 64 * 2**20, (name, rss_before[name], rss_after[name])
