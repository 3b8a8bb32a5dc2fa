"""rigid_identification_node on the standalone runtime (issue 27: "a service on the node that records").

The shipped kr90 (elastic joints) follows an optimized excitation (5 harmonics at 0.2 Hz, one 5 s period) in the
simulator (motor PD about the feedforward's q_m, 4096-count motor encoders, 1 % torque noise, as in
test_rigid_identification.py); its motor positions and torques are published on /motor_states and its link
positions on /joint_states at 1 kHz, through DDS into the node in this process. ``~/identify_rigid`` gives the base
parameters that the core (identify_rigid_body on the same samples, computed here) gives, to 1e-3 of their standard
deviations (the node only buffers and resamples), and writes the JSON report, the flexibility YAML and the URDF
into its output directory; a second call keeps the previous files as backups; with ``link_side: joint_states`` the
link encoders are used; ``~/reset`` empties the buffer.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from flexrobot_ros.identification.excitation import KR90_WORKSPACE, ExcitationLimits, design_excitation
from flexrobot_ros.identification.rigid_body import (DEFLECTION_COMPENSATED, LINK_ENCODERS, RigidRecord,
                                                     identify_rigid_body)
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.convert import joint_state
from flexrobot_ros.nodes.rigid_identification_node import RigidIdentificationNode
from flexrobot_ros.runtime.messages import time_message
from node_harness import Harness
from test_rigid_identification import TABLE_1_QDD, simulate

#: Stamp of the first sample [s] (small, so that the float stamps keep ns resolution).
T0 = 100.0


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    robot = load_robot("kr90")
    limits = ExcitationLimits.of_robot(robot, TABLE_1_QDD, KR90_WORKSPACE)
    design = design_excitation(robot, limits, frequency_hz=0.2, starts=1, seed=1)
    directory = tmp_path_factory.mktemp("rigid_node")
    out, encoders, noisy = simulate(robot, design.trajectory, directory, "excitation", 3, design.trajectory.period)
    output = directory / "output"
    with Harness() as harness:
        app = RigidIdentificationNode(harness.node("rigid_identification_node", {
            "robot": "kr90", "output_directory": str(output)}, files=()))
        probe = harness.node("probe")
        types = probe.types
        motor = probe.create_publisher(types.sensor_msgs.msg.JointState, "/motor_states")
        link = probe.create_publisher(types.sensor_msgs.msg.JointState, "/joint_states")
        trigger = types.std_srvs.srv.Trigger
        identify = probe.create_client(trigger, "/rigid_identification_node/identify_rigid")
        reset = probe.create_client(trigger, "/rigid_identification_node/reset")
        assert harness.spin(10.0, lambda: motor.get_subscription_count() > 0 and link.get_subscription_count() > 0)
        for k, t in enumerate(out.t):
            stamp = time_message(types, T0 + t)
            motor.publish(joint_state(types, stamp, robot.joint_names, encoders[k], effort=noisy[k]))
            link.publish(joint_state(types, stamp, robot.joint_names, out.q[k]))
            if k % 20 == 19:
                harness.spin(0.002)
        assert harness.spin(60.0, lambda: len(app.motor) == len(out.t) and len(app.link) == len(out.t)), \
            (len(app.motor), len(app.link))
        first = harness.call(identify, trigger.Request())
        report = json.loads((output / "rigid_identification.json").read_text())
        second = harness.call(identify, trigger.Request())
        refused = app.node.set_parameters({"link_side": "link encoders"})
        accepted = app.node.set_parameters({"link_side": "joint_states"})
        encoders_side = harness.call(identify, trigger.Request())
        link_report = json.loads((output / "rigid_identification.json").read_text())
        emptied = harness.call(reset, trigger.Request())
        empty = harness.call(identify, trigger.Request())
    core = identify_rigid_body(robot, RigidRecord(out.t, encoders, noisy), cutoff_hz=5.0)
    core_link = identify_rigid_body(robot, RigidRecord(out.t, encoders, noisy, q_link=out.q), cutoff_hz=5.0)
    return {"first": first, "second": second, "emptied": emptied, "empty": empty, "report": report, "core": core,
            "output": output, "refused": refused, "accepted": accepted, "encoders_side": encoders_side,
            "link_report": link_report, "core_link": core_link}


def test_identify_rigid_service_equals_the_core(recorded):
    """The report's base parameters equal the core's on the same samples to 1e-3 of their standard deviations; the
    link side is the deflection through the YAML (the node's default)."""
    assert recorded["first"].success, recorded["first"].message
    report, core = recorded["report"], recorded["core"]
    values = np.array([entry["value"] for entry in report["parameters"]])
    assert [entry["name"] for entry in report["parameters"]] == core.base.base_names()
    assert np.all(np.abs(values - core.beta) <= 1e-3 * core.std)
    assert report["link_side"] == DEFLECTION_COMPENSATED
    assert report["samples_used"] == core.rows


def test_identify_rigid_writes_the_robot_and_keeps_the_previous_files(recorded):
    """The YAML + URDF load as a robot; the second call renames the first call's three files to .1.bak."""
    output = recorded["output"]
    identified = load_robot(output / "rigid_identified.yaml")
    assert identified.urdf_path == (output / "rigid_identified.urdf").resolve()
    assert recorded["second"].success and "kept as rigid_identified.yaml.1.bak" in recorded["second"].message
    for name in ("rigid_identification.json", "rigid_identified.yaml", "rigid_identified.urdf"):
        assert (output / f"{name}.1.bak").is_file(), name


def test_reset_empties_the_buffer(recorded):
    """After ~/reset the service refuses, naming the topic."""
    assert recorded["emptied"].success
    assert not recorded["empty"].success and "/motor_states" in recorded["empty"].message


def test_link_side_from_joint_states(recorded):
    """``link_side: joint_states`` (set while the node runs; an unknown value is refused): the link encoders of
    /joint_states, resampled at the motor stamps, give the core's result with the same link positions to 1e-3 of
    the standard deviations."""
    assert not recorded["refused"][0] and "link_side" in recorded["refused"][1] and recorded["accepted"][0]
    assert recorded["encoders_side"].success, recorded["encoders_side"].message
    report, core = recorded["link_report"], recorded["core_link"]
    assert report["link_side"] == LINK_ENCODERS
    values = np.array([entry["value"] for entry in report["parameters"]])
    assert np.all(np.abs(values - core.beta) <= 1e-3 * core.std)
