"""Parameters, parameter files, name resolution, ``--ros-args`` and discovery settings of the runtime.

Expected name resolutions are the examples of the ROS 2 design article "Topic and Service name mapping to DDS"
and rcl's rules (node ``my_node`` in namespace ``/my_ns``).
"""
from __future__ import annotations

import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import dds_backend
from flexrobot_ros.runtime.names import Remapping, expand_name, parse_ros_arguments, resolve_name
from flexrobot_ros.runtime.params import ParameterSpec, parameters_for_node, validate_parameter


@pytest.mark.parametrize("name, expanded", [
    ("ping", "/my_ns/ping"), ("/ping", "/ping"), ("~", "/my_ns/my_node"), ("~/ping", "/my_ns/my_node/ping"),
    ("a/b/ping", "/my_ns/a/b/ping"),
])
def test_name_expansion(name, expanded):
    assert expand_name(name, "my_node", "/my_ns") == expanded


@pytest.mark.parametrize("name", ["", "a//b", "a/", "2ping", "pi ng", "~ping"])
def test_invalid_names_are_refused(name):
    with pytest.raises(RuntimeLayerError, match="invalid"):
        expand_name(name, "my_node", "/my_ns")


def test_remapping_matches_expanded_names_first_rule_wins():
    rules = [Remapping("ping", "/pong"), Remapping("~/x", "y"), Remapping("ping", "/other"),
             Remapping("z", "/w", node="someone_else")]
    assert resolve_name("/my_ns/ping", "my_node", "/my_ns", rules) == "/pong"
    assert resolve_name("~/x", "my_node", "/my_ns", rules) == "/my_ns/y"
    assert resolve_name("z", "my_node", "/my_ns", rules) == "/my_ns/z"


def test_ros_arguments_are_parsed_like_rcl(tmp_path):
    args = parse_ros_arguments(["positional", "--ros-args", "-r", "__node:=renamed", "-r", "__ns:=/ns",
                                "--params-file", "a.yaml", "-p", "rate_hz:=500.0", "-p", "gains:=[1.0, 2.0]",
                                "-r", "joint_states:=/robot/joint_states", "--log-level", "debug", "--", "tail"])
    assert (args.node_name, args.namespace, args.parameter_files, args.log_level) == ("renamed", "/ns", ["a.yaml"],
                                                                                     "debug")
    assert args.parameters == {"rate_hz": 500.0, "gains": [1.0, 2.0]}
    assert args.remappings == [Remapping("joint_states", "/robot/joint_states")]
    assert args.remaining == ["positional", "tail"]
    with pytest.raises(RuntimeLayerError, match="needs a value"):
        parse_ros_arguments(["--ros-args", "-p"])
    with pytest.raises(RuntimeLayerError, match="name:=value"):
        parse_ros_arguments(["--ros-args", "-p", "rate_hz"])


def test_parameter_file_sections_wildcards_and_nesting(tmp_path):
    first = tmp_path / "first.yaml"
    first.write_text("/**:\n  ros__parameters:\n    a: 1\n    b: x\n"
                     "robot:\n  oma_node:\n    ros__parameters:\n      a: 2\n      ssi:\n        order: 40\n"
                     "/robot/*:\n  ros__parameters:\n    c: true\n")
    second = tmp_path / "second.yaml"
    second.write_text("oma_node:\n  ros__parameters:\n    b: y\n")
    assert parameters_for_node([first], "/robot/oma_node") == {
        "a": (2, f"{first} [/robot/oma_node]"), "b": ("x", f"{first} [/**]"), "c": (True, f"{first} [/robot/*]"),
        "ssi.order": (40, f"{first} [/robot/oma_node]")}
    assert {k: v for k, (v, _) in parameters_for_node([first, second], "/oma_node").items()} == {"a": 1, "b": "y"}
    broken = tmp_path / "broken.yaml"
    broken.write_text("oma_node:\n  ros__parameters: [1, 2]\n")
    with pytest.raises(RuntimeLayerError, match="broken.yaml"):
        parameters_for_node([broken], "/oma_node")
    with pytest.raises(RuntimeLayerError, match="cannot be read"):
        parameters_for_node([tmp_path / "missing.yaml"], "/oma_node")


def test_parameter_validation_like_rclpy():
    rate = ParameterSpec("rate_hz", 100.0, "rate [Hz]", range=(1.0, 1000.0))
    assert rate.type == "double" and validate_parameter(rate, 250.0, "f.yaml") == 250.0
    with pytest.raises(RuntimeLayerError, match=r"rate_hz.*f.yaml.*write 1.0, not 1"):
        validate_parameter(rate, 250, "f.yaml")
    with pytest.raises(RuntimeLayerError, match="outside the range"):
        validate_parameter(rate, 1e4, "f.yaml")
    with pytest.raises(RuntimeLayerError, match="finite"):
        validate_parameter(rate, float("nan"), "f.yaml")
    method = ParameterSpec("method", "sdrnea", "inverse dynamics", choices=("sdrnea", "ejnea"))
    with pytest.raises(RuntimeLayerError, match=r"'rnea' is not one of \['sdrnea', 'ejnea'\]"):
        validate_parameter(method, "rnea", "-p")
    stepped = ParameterSpec("order", 20, "model order", range=(10, 100), step=10)
    assert stepped.type == "integer" and validate_parameter(stepped, 40, "x") == 40
    with pytest.raises(RuntimeLayerError, match="step"):
        validate_parameter(stepped, 45, "x")
    with pytest.raises(RuntimeLayerError, match="expected integer"):
        validate_parameter(stepped, True, "x")
    gains = ParameterSpec("gains", [], "gains", type="double_array")
    assert validate_parameter(gains, [1.0, 2.5], "x") == (1.0, 2.5)
    with pytest.raises(RuntimeLayerError, match="expected a list"):
        validate_parameter(gains, 1.0, "x")
    with pytest.raises(RuntimeLayerError, match="cannot infer"):
        ParameterSpec("empty", [], "no type")
    with pytest.raises(RuntimeLayerError, match="its declared default"):
        ParameterSpec("bad", 5.0, "default outside its range", range=(0.0, 1.0))


def test_discovery_settings_follow_ros2_environment():
    """ROS_AUTOMATIC_DISCOVERY_RANGE / ROS_LOCALHOST_ONLY / ROS_STATIC_PEERS -> Cyclone configuration appended to
    $CYCLONEDDS_URI (as rmw_cyclonedds does), ROS_DOMAIN_ID -> domain."""
    assert dds_backend.discovery_config({}) is None
    local = dds_backend.discovery_config({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"})
    assert local.startswith("<CycloneDDS>")  # appended to $CYCLONEDDS_URI, expanded here (Domain() would not)
    assert dds_backend.discovery_config({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
                                         "CYCLONEDDS_URI": "file:///etc/my.xml"}) == "file:///etc/my.xml," + local
    assert '<NetworkInterface address="127.0.0.1"/>' in local and '<Peer address="localhost"/>' in local
    assert "<AllowMulticast>false</AllowMulticast>" in local
    assert dds_backend.discovery_config({"ROS_LOCALHOST_ONLY": "1"}) == local
    off = dds_backend.discovery_config({"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"})
    assert "<ParticipantIndex>none</ParticipantIndex>" in off and "Peer" not in off
    peers = dds_backend.discovery_config({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",
                                          "ROS_STATIC_PEERS": "10.0.0.2;robot.local"})
    assert '<Peer address="10.0.0.2"/><Peer address="robot.local"/>' in peers and "Interfaces" not in peers
    with pytest.raises(RuntimeLayerError, match="ROS_AUTOMATIC_DISCOVERY_RANGE"):
        dds_backend.discovery_range({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LAN"})
    assert dds_backend.domain_id({"ROS_DOMAIN_ID": "42"}) == 42 and dds_backend.domain_id({}) == 0
    with pytest.raises(RuntimeLayerError, match="0..232"):
        dds_backend.domain_id({"ROS_DOMAIN_ID": "300"})
