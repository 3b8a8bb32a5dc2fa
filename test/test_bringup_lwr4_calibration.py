"""``flexrobot bringup simulation lwr4 --calibrate --true-yaml T`` end to end (issue 37 item 5): the run the issue
made, where the shipped LWR4's motor Coulomb friction holds its motors after the blow and the calibration used to
report k1 47 % low as a success and push it.

The simulator runs a true YAML with the LWR4's stiffnesses scaled by seeded factors in [0.77, 1.21] (seed 1: 0.995,
1.188, 0.833, 1.187, 0.907, 0.956, 1.134); the other nodes run the nominal YAML. The parameter file is the shipped
config/simulation.yaml with four calibration poses, a rest wait before each blow (the simulator's default impact,
50 N along y0 for 6 ms) and real-time factor 2. Every run either succeeds with every identified stiffness within 3 %
of the truth, pushed to both model nodes and written, or is refused with nothing written and nothing pushed. The
repeated-seeds part is on the identification core (test_calibration_friction.py); this is the one bring-up run.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

import runtime_peer as peer
from flexrobot_ros.identification.flexibility_update import write_identified_yaml
from flexrobot_ros.model import load_robot

POSES = [[0.0, 0.5, 0.0, -1.2, 0.0, 0.6, 0.0], [0.3, 0.9, 0.4, -0.6, 0.5, -0.8, 0.4],
         [-0.4, -0.7, -0.3, 1.3, -0.6, 1.0, -0.5], [0.8, 1.3, -0.8, -1.6, 0.9, 0.4, 1.0]]
REPO = Path(__file__).resolve().parents[1]


def test_lwr4_self_calibration_gives_right_values_or_refuses(tmp_path):
    nominal = load_robot("lwr4")
    k_true = nominal.stiffness * np.random.default_rng(1).uniform(0.77, 1.21, nominal.n)
    truth = write_identified_yaml(nominal, {j: {"stiffness": k} for j, k in zip(nominal.joint_names, k_true)},
                                  tmp_path / "as_built.yaml", "seeded truth of test_bringup_lwr4_calibration.py",
                                  by="the test")
    document = yaml.safe_load((REPO / "config" / "simulation.yaml").read_text())
    document["simulator_node"]["ros__parameters"]["real_time_factor"] = 2.0
    document["calibration_node"]["ros__parameters"].update(
        {"poses": [v for pose in POSES for v in pose], "rest": {"hold_s": 1.0, "velocity": 1e-3}})
    params = tmp_path / "lwr4_calibration.yaml"
    params.write_text(yaml.safe_dump(document))
    completed = subprocess.run(
        [sys.executable, "-m", "flexrobot_ros.cli", "bringup", "simulation", "lwr4", "--calibrate", "--true-yaml",
         str(truth), "--params", str(params), "--json"],
        env=peer.loopback_env(ROS_HOME=str(tmp_path / "ros_home")), capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(completed.stdout)["calibration"]
    assert report is not None, completed.stderr[-4000:]
    print(json.dumps({key: report.get(key) for key in ("success", "refusal", "kept_nominal", "poses_left_out")},
                     indent=1))
    if report["success"]:
        assert report["accepted"] and not report["refusal"]
        identified = {p["joint"]: p["value"] for p in report["parameters"] if p["kind"] == "k"}
        assert identified, report["parameters"]
        for joint, value in identified.items():
            truth_k = k_true[nominal.joint_names.index(joint)]
            assert abs(value / truth_k - 1.0) <= 0.03, (joint, value, truth_k)
        assert all(f"k.{j}" in report["kept_nominal"] for j in nominal.joint_names if j not in identified)
        assert report["pushed"] == {"/modal_monitor_node": [True, ""], "/feedforward_node": [True, ""]}
        calibrated = load_robot(report["files"]["calibrated_yaml"])
        np.testing.assert_allclose([calibrated.stiffness[nominal.joint_names.index(j)] for j in identified],
                                   list(identified.values()), rtol=1e-9)
    else:
        assert not report["accepted"] and report["refusal"], report
        assert "calibrated_yaml" not in report["files"] and report["pushed"] == {}
        assert Path(report["files"]["modal_data"]).is_file()    # what was measured is kept
