"""Security basics (issue 12, item 6): services write files only inside the node's ``output_directory`` and never
replace a file without saying so."""
from __future__ import annotations

import os

import numpy as np
import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.oma_node import OmaNode
from flexrobot_ros.nodes.output_files import keep_previous, output_path
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
