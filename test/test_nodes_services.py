"""The services, end to end (simulator_node and oma_node as processes, standalone runtime on loopback):
~/apply_impact, ~/identify and ~/save_modal_data at three poses reached with ~/set_point (configurations 8, 20 and
32 of seed 000 section 2.4.2, Scompi + tool), then ~/identify_joint_parameters.

The OMA node's robot is a flexibility YAML whose joint stiffness is 20-30 % off Table 2.1 (the factors of the
identification tests); the simulator runs the true Scompi. Acceptance: the updated YAML written by the node holds
k1-k5 within 2 % of Table 2.1 (k = 25, 120, 120, 57, 29 kN m/rad), the acceptance of issue 7 for OMA data; k6
moves only the ~850 Hz mode OMA cannot see (Table 2.5) and is left out (config/scompi_simulation.yaml).
"""
from __future__ import annotations

import io

import numpy as np
import pytest
import yaml

from flexrobot_ros.identification import read_modal_data
from flexrobot_ros.model import load_robot
from flexrobot_ros.runtime.messages import time_seconds
from node_harness import REPO, TABLE_2_1_K, Harness, Probe, node_processes

OFF_K = np.array([1.3, 0.75, 1.2, 0.8, 1.25, 0.7])
POSES = np.array([[0.0, -0.3739991254273563, 1.9447954522222528, 0.0, -1.9447954522222528, 0.0],
                  [0.0, -0.11754258227716913, 1.6883389090720655, 0.299199300341885, -1.6883389090720655, 0.0],
                  [0.0, 0.1389139608730181, 1.4318823659218785, 0.5983986006837702, -1.4318823659218785, 0.0]])


def wrong_yaml(folder):
    """config/scompi.yaml with the stiffness scaled by OFF_K (and the URDF by absolute path)."""
    document = yaml.safe_load((REPO / "config" / "scompi.yaml").read_text())
    document["urdf"] = str(REPO / "urdf" / "scompi.urdf")
    for i, joint in enumerate(sorted(document["joints"])):
        document["joints"][joint]["stiffness"] = float(TABLE_2_1_K[i] * OFF_K[i])
    path = folder / "scompi_wrong_k.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    folder = tmp_path_factory.mktemp("services")
    output = io.StringIO()
    responses: dict[str, list] = {}
    with Harness() as harness:
        node = harness.node("probe")
        probe = Probe(node, {"/joint_states": "sensor_msgs/msg/JointState",
                             "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"})
        srv = node.types.std_srvs.srv
        clients = {name: node.create_client(srv.Trigger, f"/{name}") for name in (
            "simulator_node/apply_impact", "simulator_node/set_point", "oma_node/identify",
            "oma_node/save_modal_data", "oma_node/identify_joint_parameters")}
        run = node.create_client(srv.SetBool, "/simulator_node/run")

        def call(name):
            response = harness.call(clients[name], srv.Trigger.Request(), timeout=120.0)
            responses.setdefault(name, []).append(response)
            history = "\n".join(f"{k}: {[r.message for r in v]}" for k, v in responses.items())
            assert response.success, f"{name}: {response.message}\n{history}\n{output.getvalue()[-3000:]}"
            return response

        def sim_time():
            origin = probe.diagnostics("simulator_node").get("stamp at t = 0 [s]")
            last = probe.last("/joint_states")
            return -1.0 if not origin or last is None else time_seconds(last.header.stamp) - float(origin)

        def wait_oma_caught_up():  # every encoder sample published before the pause has reached the OMA node
            target = time_seconds(probe.last("/joint_states").header.stamp)
            assert harness.spin(60.0, lambda: float(probe.diagnostics("oma_node").get("last sample stamp [s]") or 0)
                                >= target - 1e-5), "the OMA node fell behind the encoder stream"

        def wait_paused(t_end):
            assert harness.spin(60.0, lambda: probe.diagnostics("simulator_node").get("state") == "paused" and
                                float(probe.diagnostics("simulator_node")["simulated time [s]"]) >= t_end - 1e-3), \
                "the simulator did not pause at the end of the impact record"

        def wait_sim(seconds):
            target = sim_time() + seconds
            assert harness.spin(60.0, lambda: sim_time() >= target), "the simulation stalled"

        launcher = node_processes({
            "simulator_node": {"excitation.type": "none", "real_time_factor": 2.0, "set_point_move_s": 1.0,
                               "impact.record_s": 2.95},   # the simulator pauses 2.95 s after each impact
            "oma_node": {"robot": str(wrong_yaml(folder)), "tool": True, "window_s": 3.0, "update_period_s": 100.0,
                         "output_directory": str(folder), "modal_data_file": "modal_data.yaml",
                         "identified_yaml": str(folder / "identified.yaml")}}, output)
        with launcher:
            assert harness.spin(90.0, lambda: all(c.service_is_ready() for c in [run, *clients.values()])
                                and sim_time() > 0.2  # and the OMA node's encoder subscription has matched:
                                and probe.count("oma_node", "samples received") > 100), output.getvalue()
            for pose in range(3):
                if pose:
                    call("simulator_node/set_point")
                    wait_sim(1.0 + 0.5)            # the 1 s move and half a second of settling
                end = float(call("simulator_node/apply_impact").message.split("pausing at t = ")[1].split(" s")[0])
                wait_paused(end)                  # the 3 s window: 50 ms before the impact to 2.95 s after
                wait_oma_caught_up()
                call("oma_node/identify")
                call("oma_node/save_modal_data")
                harness.call(run, srv.SetBool.Request(data=True))
            call("oma_node/identify_joint_parameters")
            results = launcher.shutdown()
    return {"folder": folder, "responses": responses, "results": results, "output": output.getvalue()}


def test_impacts_excite_the_robot_and_oma_finds_the_modes(session):
    """Each ~/apply_impact answers with the configured pulse; each ~/identify after it finds at least 8 modes."""
    for response in session["responses"]["simulator_node/apply_impact"]:
        assert "[0.0, 50.0, 0.0] at tool0 for 6 ms" in response.message
    for response in session["responses"]["oma_node/identify"]:
        assert int(response.message.split(" modes")[0]) >= 8, response.message


def test_modal_data_saved_at_three_poses(session):
    """The modal-data file (identification format) holds the three poses the simulator was moved to (1e-4) with the
    modes identified there, shapes in motor coordinates (6 encoder channels)."""
    data = read_modal_data(session["folder"] / "modal_data.yaml")
    assert data.shape_coordinates == "motor" and data.robot == "scompi"
    assert len(data.poses) == 3
    for saved, expected in zip(data.poses, POSES):
        np.testing.assert_allclose(saved.q, expected, atol=1e-4)
        assert len(saved.modes) >= 8
        assert all(mode.shape is not None and mode.shape.shape == (6,) for mode in saved.modes)
    assert [r.message.split(": pose ")[1].split(" ")[0] for r in
            session["responses"]["oma_node/save_modal_data"]] == ["1", "2", "3"]


def test_identified_yaml_has_the_true_stiffness(session):
    """The YAML written by ~/identify_joint_parameters loads as a robot whose k1-k5 are within 2 % of Table 2.1,
    from a starting YAML 20-30 % off; the other parameters are the starting YAML's."""
    message = session["responses"]["oma_node/identify_joint_parameters"][0].message
    path = session["folder"] / "identified.yaml"
    assert str(path) in message
    identified = load_robot(path, tool=True)
    error = identified.stiffness / TABLE_2_1_K - 1.0
    print(f"k relative errors: {np.round(error, 4).tolist()}")
    assert np.all(np.abs(error[:5]) < 0.02), error
    assert identified.stiffness[5] == pytest.approx(TABLE_2_1_K[5] * OFF_K[5])   # not identified: unchanged
    start = load_robot(session["folder"] / "scompi_wrong_k.yaml", tool=True)
    np.testing.assert_array_equal(identified.link_damping, start.link_damping)
    assert {r.name: r.returncode for r in session["results"]} == {"simulator_node": 0, "oma_node": 0}
