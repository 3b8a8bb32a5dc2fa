"""``flexrobot bringup`` as a user runs it (a separate process on loopback, the nodes as its child processes).

- simulation, scripted (``--duration 6 --real-time-factor 2``), on the standalone runtime and on rclpy
  (``FLEXROBOT_RUNTIME=rclpy``: the nodes and the bring-up's own node on rclpy): at both poses (configurations 8 and 20 of seed 000
  section 2.4.2) at least 9 of the monitor's 12 modes are matched by the OMA node within 0.1 Hz and 0.5 damping
  points (the acceptance of issue 8, Table 2.5's kind of agreement); the move between them, through the
  feedforward and simulator nodes, is tracked within 2e-6 rad (the bound proven for the core in
  test_simulation_inputs.py); every node stops cleanly; the plots are PNG files; the bag has every encoder sample
  (and the summary says no gap in it) and the summary gives the simulator's achieved real-time factor.
- a starter file of ``flexrobot init`` (the Panda of example-robot-data), scripted: poses within the joint limits,
  the move tracked, the lightly damped modes matched.
- Ctrl-C in a free run stops every node cleanly and still prints the summary.
- hardware, against a simulator standing in for the robot (its topics under /robot, remapped with --encoders and
  --joint-states): the OMA node and the monitor run on the robot's streams and agree on the modes.
"""
from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time

import pytest

import runtime_peer as peer
from flexrobot_ros.runtime.bags import bag_info
from node_harness import Q8, Harness, Probe, node_processes

PNG = b"\x89PNG\r\n\x1a\n"


def bringup(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "flexrobot_ros.cli", "bringup", *arguments]


#: The bring-up's environment per runtime: the standalone one on the loopback configuration; rclpy (Fast DDS) with
#: discovery on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE, which the bag's standalone-runtime recorder honours too).
RUNTIMES = {"dds": {}, "rclpy": {"FLEXROBOT_RUNTIME": "rclpy", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}}


def environment(runtime: str) -> dict[str, str]:
    env = peer.loopback_env(**RUNTIMES[runtime])
    if runtime == "rclpy":
        del env["CYCLONEDDS_URI"]  # the range setting configures the recorder's Cyclone
    return env


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_scripted_simulation(tmp_path, runtime):
    completed = subprocess.run(bringup("simulation", "scompi", "--duration", "6", "--real-time-factor",
                                       "2", "--json", "--plot-dir", str(tmp_path / "plots"), "--record",
                                       str(tmp_path / "bag")),
                               env=environment(runtime), capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 0, completed.stderr[-4000:]
    summary = json.loads(completed.stdout)
    assert summary["stopped"] == "finished" and summary["robot"] == "scompi" and summary["tool"] is True
    assert [phase["name"] for phase in summary["phases"]] == ["pose A", "pose B"]
    for phase in summary["phases"]:
        assert len(phase["modes"]) == 12
        assert phase["matched"] >= 9, (phase["name"], phase["modes"])
    tracking = summary["tracking"]
    assert tracking["samples"] > 200 and tracking["max_error"] < 2e-6, tracking
    assert {n["name"]: (n["returncode"], n["stopped_by"]) for n in summary["nodes"]} == {
        name: (0, "sigint") for name in ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node")}
    assert sorted(p.split("/")[-1] for p in summary["plots"]) == ["bringup_modes.png", "bringup_timeline.png",
                                                                  "bringup_tracking.png"]
    for path in summary["plots"]:
        with open(path, "rb") as handle:
            assert handle.read(8) == PNG
    counts = bag_info(tmp_path / "bag").counts()
    assert counts["/motor_states"] == 6000
    # issue 23: the summary says the bag's 1 kHz stream has no gap, and the simulator's pace
    gaps = {g["topic"]: g for g in summary["bag"]["gaps"]}
    assert gaps["/motor_states"]["samples"] == 6000 and gaps["/motor_states"]["missing"] == 0
    pace = summary["simulator"]
    assert pace["real_time_factor_requested"] == 2.0 and pace["overruns"] >= 0 and pace["behind_schedule_s"] >= 0
    assert 0 < pace["real_time_factor_achieved"] <= 2.0 * 1.05 and pace["running_wall_time_s"] < summary["wall_time_s"]
    assert counts["/desired_trajectory"] == 1 and counts["/motor_trajectory"] == 1
    assert counts["/oma/frequencies"] >= 2 and counts["/modal/frequencies"] >= 2


def test_bringup_of_a_starter_file(tmp_path):
    """The README's "Your robot in ten minutes": ``flexrobot init`` on the Panda of example-robot-data, then the
    scripted bring-up on that file. Pose A is q0 (0 clipped into the limits: joint 4's are [-3.0718, -0.0698] rad),
    pose B 0.2 rad away on joints 1-3; the feedforward node accepts the move (both poses within the limits) and the
    simulator tracks it; the OMA node matches the lightly damped monitor modes at both poses (8 of 14 in the
    README's run; the 16-28 % damped ones it does not resolve)."""
    from vendor_robots import panda_urdf

    yaml_path = tmp_path / "panda.yaml"
    env = peer.loopback_env()
    done = subprocess.run([sys.executable, "-m", "flexrobot_ros.cli", "init", str(panda_urdf()), "--out",
                           str(yaml_path)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    completed = subprocess.run(bringup("simulation", str(yaml_path), "--duration", "5", "--real-time-factor", "2",
                                       "--json"), env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-4000:]
    summary = json.loads(completed.stdout)
    assert summary["stopped"] == "finished" and summary["robot"] == "panda"
    poses = {phase["name"]: phase for phase in summary["phases"]}
    assert poses["pose A"]["q"] == pytest.approx([0, 0, 0, -0.0698, 0, 0, 0], abs=1e-12)
    assert poses["pose B"]["q"] == pytest.approx([0.2, 0.2, 0.2, -0.0698, 0, 0, 0], abs=1e-12)
    for phase in poses.values():
        assert len(phase["modes"]) == 14 and phase["matched"] >= 6, (phase["name"], phase["modes"])
    tracking = summary["tracking"]
    assert tracking["samples"] > 200 and tracking["max_error"] < 1e-3, tracking
    assert "above the upper limit" not in completed.stderr and "below the lower limit" not in completed.stderr
    assert all(n["returncode"] == 0 for n in summary["nodes"])


def test_ctrl_c_stops_every_node_and_prints_the_summary():
    process = subprocess.Popen(bringup("simulation", "scompi"), env=peer.loopback_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    timer = threading.Timer(180.0, process.kill)  # never hang the suite, whatever happens
    timer.start()
    try:
        for line in process.stderr:
            lines.append(line)
            if "nodes up" in line:
                break
        time.sleep(3.0)                           # let the simulation run a little
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
    # issue 22: Ctrl-C exits 130 as every command does (the README's promise; it was 0), after the summary
    assert process.returncode == 130, "".join(lines) + stderr
    assert "stopped: stopped" in stdout
    for name in ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node"):
        assert f"{name} exit 0 (sigint)" in stdout
    assert "latest:" in stdout and "monitor modes matched" in stdout


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_a_node_that_exits_during_start_up_is_not_counted_up(tmp_path, runtime):
    """A simulator refused at start-up (a parameter of the wrong type: exit 2): the bring-up says which node
    exited, counts only the nodes that run ("3 of 4 nodes up" never follows), stops the others cleanly and exits 1,
    instead of "4 nodes up" and a 60 s wait for the dead simulator's services (issue 35, rclpy)."""
    import yaml

    from flexrobot_ros.model.loader import share_directory

    document = yaml.safe_load((share_directory() / "config" / "scompi_simulation.yaml").read_text())
    document["simulator_node"]["ros__parameters"]["substeps"] = "many"
    params = tmp_path / "bad_simulator.yaml"
    params.write_text(yaml.safe_dump(document))
    completed = subprocess.run(bringup("simulation", "scompi", "--duration", "6", "--params", str(params)),
                               env=environment(runtime), capture_output=True, text=True, timeout=180)
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert "flexrobot bringup: simulator_node exited during start-up" in completed.stderr
    assert "nodes up" not in completed.stderr, completed.stderr[-3000:]
    assert "simulator_node exit 2 (exited)" in completed.stdout
    for name in ("feedforward_node", "modal_monitor_node", "oma_node"):
        assert f"{name} exit 0 (sigint)" in completed.stdout, completed.stdout


def test_self_calibration_on_rclpy():
    """``FLEXROBOT_RUNTIME=rclpy flexrobot bringup simulation scompi --calibrate --json``: the calibration node on
    rclpy moves the simulated robot through its poses, records every 1 kHz encoder sample (a lost one refuses the
    pose), and fits the joint stiffnesses of the robot the simulator runs (here the nominal one: the truth is the
    YAML's) within 0.5 %, pushed to the monitor and the feedforward node; every node exits 0."""
    from flexrobot_ros.model import load_robot

    completed = subprocess.run(bringup("simulation", "scompi", "--calibrate", "--json"), env=environment("rclpy"),
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    summary = json.loads(completed.stdout)
    report = summary["calibration"]
    assert report["success"] is True and report["failure"] is None, (report["failure"], completed.stderr[-3000:])
    assert report["pushed"] == {"/modal_monitor_node": [True, ""], "/feedforward_node": [True, ""]}
    nominal = dict(zip(load_robot("scompi").joint_names, load_robot("scompi").stiffness))
    stiffness = {p["joint"]: p["value"] for p in report["parameters"] if p["kind"] == "k"}
    assert len(stiffness) >= 4, report["parameters"]
    for joint, value in stiffness.items():
        assert abs(value - nominal[joint]) <= 0.005 * nominal[joint], (joint, value, nominal[joint])
    assert all(node["returncode"] == 0 for node in summary["nodes"]), summary["nodes"]


def test_hardware_bringup_on_a_robots_topics():
    """The 'robot' is a simulator in namespace /robot at configuration 8 (impacts every 3 s; its parameter-file
    section is for /simulator_node, so the set point is given explicitly) that has streamed 5 s of encoder samples;
    the bring-up's nodes listen to /robot/motor_states and /robot/joint_states. After the robot has streamed 7 s more
    (7,000 samples counted from the bring-up's 'nodes up': a loaded machine slows the simulated robot, so a wall-clock
    deadline would give the OMA node less data) Ctrl-C stops it; its summary has the monitor's modes at the robot's
    pose and the OMA node's, at least 6 agreeing (the OMA window is not aligned with the impacts here, unlike the
    scripted run)."""
    output = io.StringIO()
    with Harness() as harness:
        robot = node_processes({"simulator_node": {"__namespace": "/robot", "set_point": Q8.tolist()}}, output)
        probe = Probe(harness.node("probe"), {"/robot/motor_states": "sensor_msgs/msg/JointState"})
        streamed = lambda: len(probe.messages["/robot/motor_states"])  # noqa: E731
        with robot:  # 5 s of the robot's encoder stream first
            assert harness.spin(120.0, lambda: streamed() >= 5000), output.getvalue()
            process = subprocess.Popen(bringup("hardware", "scompi", "--tool", "--encoders", "/robot/motor_states",
                                               "--joint-states", "/robot/joint_states", "--json"),
                                       env=peer.loopback_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
            lines: list[str] = []
            up = threading.Event()

            def read_stderr() -> None:
                for line in process.stderr:
                    lines.append(line)
                    if "nodes up" in line:
                        up.set()

            reader = threading.Thread(target=read_stderr, daemon=True)
            reader.start()
            timer = threading.Timer(300.0, process.kill)  # never hang the suite, whatever happens
            timer.start()
            try:
                assert harness.spin(120.0, up.is_set), "".join(lines)
                start = streamed()
                assert harness.spin(180.0, lambda: streamed() >= start + 7000), "".join(lines)
                process.send_signal(signal.SIGINT)
                stdout = process.stdout.read()
                process.wait(timeout=60)
                reader.join(timeout=10)
            finally:
                timer.cancel()
                if process.poll() is None:
                    process.kill()
    assert process.returncode == 130, "".join(lines)[-4000:]
    summary = json.loads(stdout)
    assert summary["kind"] == "hardware" and summary["stopped"] == "stopped"
    (phase,) = summary["phases"]
    assert phase["name"] == "latest" and len(phase["modes"]) == 12
    assert phase["matched"] >= 6, phase["modes"]
    assert sorted(n["name"] for n in summary["nodes"]) == ["feedforward_node", "modal_monitor_node", "oma_node"]
