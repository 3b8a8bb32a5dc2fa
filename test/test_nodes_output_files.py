"""Security basics (issue 12, item 6): services write files only inside the node's ``output_directory`` and never
replace a file without saying so."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.oma_node import OmaNode
from flexrobot_ros.nodes.output_files import keep_previous, output_path, run_directory
from node_harness import Q8, Harness


def test_output_path_stays_inside_the_output_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)  # a folder inside that leads outside
    assert output_path(str(out), "modal_data.yaml", "modal_data_file") == (out / "modal_data.yaml").resolve()
    assert output_path(str(out), str(out / "sub" / "a.yaml"), "x") == (out / "sub" / "a.yaml").resolve()
    assert output_path(str(out), ".", "map.directory") == out.resolve()
    for name in ("../escape.yaml", str(tmp_path / "escape.yaml"), "link/escape.yaml", "sub/../../escape.yaml",
                 "/etc/passwd"):
        with pytest.raises(RuntimeLayerError, match="identified_yaml: .* outside the node's output_directory"):
            output_path(str(out), name, "identified_yaml")


def test_keep_previous_renames_and_says_so(tmp_path):
    path = tmp_path / "identified.yaml"
    assert keep_previous(path) == ""
    for k in (1, 2):
        path.write_text(f"version {k}")
        assert keep_previous(path) == f"; the previous identified.yaml was kept as identified.yaml.{k}.bak"
    assert not path.exists()
    assert [(tmp_path / f"identified.yaml.{k}.bak").read_text() for k in (1, 2)] == ["version 1", "version 2"]


def test_services_refuse_paths_outside_the_output_directory(tmp_path):
    """~/map with map.directory '../maps' and ~/identify_joint_parameters with modal_data_file outside: refused with
    a message naming the parameter; nothing is written outside output_directory."""
    out = tmp_path / "out"
    out.mkdir()
    with Harness() as harness:
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {"output_directory": str(out),
                                                                       "map.directory": "../maps"}))
        oma = OmaNode(harness.node("oma_node", {"output_directory": str(out),
                                                "modal_data_file": str(tmp_path / "stolen.yaml")}))
        monitor.computed = np.asarray(Q8)  # as if a pose had arrived
        probe = harness.node("probe")
        trigger = probe.types.std_srvs.srv.Trigger
        responses = {name: harness.call(probe.create_client(trigger, name), trigger.Request())
                     for name in ("/modal_monitor_node/map", "/oma_node/identify_joint_parameters")}
    assert not responses["/modal_monitor_node/map"].success
    assert "map.directory" in responses["/modal_monitor_node/map"].message
    assert not responses["/oma_node/identify_joint_parameters"].success
    assert "modal_data_file" in responses["/oma_node/identify_joint_parameters"].message
    assert sorted(os.listdir(tmp_path)) == ["out"] and os.listdir(out) == []
    assert oma.stamp is None  # nothing else happened to the node


def _run_name(pid: int) -> str:
    """``<start time>_<pid>`` of process ``pid``, the start time as ps reports it (an independent source)."""
    started = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, check=True,
                             env={**os.environ, "LC_ALL": "C"}).stdout.strip()
    return f"{datetime.datetime.strptime(started, '%a %b %d %H:%M:%S %Y'):%Y-%m-%d_%H-%M-%S}_{pid}"


@pytest.mark.skipif(sys.platform != "linux", reason="process start times from /proc")
def test_nodes_of_one_launcher_share_one_run_directory(tmp_path):
    """Issue 23: two processes started by this one (as a launcher starts nodes) get the same run directory,
    $ROS_HOME/flexrobot/<this process's start time>_<its PID>; ROS_HOME unset means ~/.ros."""
    script = "from flexrobot_ros.nodes.output_files import run_directory; print(run_directory())"
    env = {**os.environ, "ROS_HOME": str(tmp_path)}
    seen = {subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           check=True).stdout.strip() for _ in range(2)}
    assert seen == {str(tmp_path / "flexrobot" / _run_name(os.getpid()))}
    assert run_directory({}) == Path("~/.ros").expanduser() / "flexrobot" / _run_name(os.getppid())


@pytest.mark.skipif(sys.platform != "linux", reason="process start times from /proc")
def test_service_output_goes_to_the_run_directory_by_default(tmp_path, monkeypatch):
    """A node with the default (empty) output_directory writes ~/map's files into the run directory, not into the
    directory it was started from."""
    monkeypatch.setenv("ROS_HOME", str(tmp_path / "ros_home"))
    monkeypatch.chdir(tmp_path)
    with Harness() as harness:
        monitor = ModalMonitorNode(harness.node("modal_monitor_node", {"map.points": 2, "map.span": 0.05}))
        monitor.computed = np.asarray(Q8)  # as if a pose had arrived
        probe = harness.node("probe")
        trigger = probe.types.std_srvs.srv.Trigger
        response = harness.call(probe.create_client(trigger, "/modal_monitor_node/map"), trigger.Request())
    assert response.success, response.message
    run = tmp_path / "ros_home" / "flexrobot" / _run_name(os.getppid())  # in-process node: its parent is ours
    assert sorted(p.suffix for p in run.iterdir()) == [".npz", ".png"]
    assert sorted(os.listdir(tmp_path)) == ["ros_home"]
