"""The real ros2 CLI and rclpy's graph against a standalone node.

A standalone (dds back end) node and the same node on rclpy run side by side, declaring the same parameters; the
ros2 CLI of the sourced ROS 2 (``ros2 node list/info``, ``ros2 topic info -v``, ``ros2 param
list/get/set/describe/dump``, without the daemon) must see the standalone node by name and treat its parameters
exactly as the rclpy node's; those tests skip, naming it, where there is no ``ros2`` command (ros2cli is not on
PyPI: ``scripts/test-ros2`` runs them on a ROS 2 install). rclpy's own graph (``get_node_names_and_namespaces``, the
endpoints by node) must list the standalone node and its topics whatever the rclpy's DDS vendor. Runs in a ROS domain
of its own (``runtime_peer.run_domain``) on loopback.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

import runtime_peer as peer

pytestmark = pytest.mark.skipif(importlib.util.find_spec("rclpy") is None,
                                reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")
needs_ros2_cli = pytest.mark.skipif(shutil.which("ros2") is None, reason="needs the ros2 command (ros2cli, not on "
                                    "PyPI): scripts/test-ros2 runs it on a ROS 2 install")

#: One node with parameters of each kind the nodes declare, a publisher, a subscription and a service.
NODE = textwrap.dedent("""
    import sys
    from flexrobot_ros.runtime import ParameterSpec, create_node, spin

    node = create_node(sys.argv[1], namespace="/flex", backend=sys.argv[2])
    node.declare_parameters([
        ParameterSpec("gain", 2.0, "controller gain [-]", range=(0.0, 10.0)),
        ParameterSpec("oma.order", 4, "model order [-]", range=(2, 20), step=2),
        ParameterSpec("robot", "scompi", "robot model", read_only=True),
        ParameterSpec("method", "ejnea", "feedforward method", choices=("ejnea", "sdrnea")),
        ParameterSpec("weights", [1.0, 2.0], "weights [-]", range=(0.0, 5.0)),
    ])
    node.create_publisher(node.types.std_msgs.msg.String, "chatter")
    node.create_subscription(node.types.std_msgs.msg.String, "/cmd", lambda msg: None)
    node.create_service(node.types.std_srvs.srv.Trigger, "~/reset", lambda request, response: response)
    print("ready", flush=True)
    spin(node, 120.0)
""")
STANDALONE, RCLPY = "/flex/standalone_check", "/flex/rclpy_check"
#: Parameters every rclpy node declares itself (rclpy/node.py: use_sim_time; Jazzy: start_type_description_service).
RCLPY_OWN = {"use_sim_time", "start_type_description_service"}


@pytest.fixture(scope="module")
def env():
    env = peer.loopback_env()
    env.pop("FLEXROBOT_RUNTIME", None)
    env["ROS_DOMAIN_ID"] = str(peer.run_domain())
    # the standalone node on the loopback configuration, the rclpy one (Fast DDS) discovering on this machine only
    envs = {"dds": env, "rclpy": {**env, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}}
    processes = [subprocess.Popen([sys.executable, "-c", NODE, name.rsplit("/", 1)[1], backend], env=envs[backend],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name, backend in ((STANDALONE, "dds"), (RCLPY, "rclpy"))]
    try:
        for process in processes:
            assert process.stdout.readline().strip() == "ready", process.stderr.read()
        yield envs["rclpy"]  # for the ros2 CLI and rclpy of the tests: Fast DDS as the rclpy node
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def ros2(env, *args, until=None, timeout=60.0):
    """Output of ``ros2 ARGS --no-daemon`` (stdout + stderr); retried while ``until(output)`` is false, for
    discovery to settle."""
    deadline = time.monotonic() + timeout
    while True:
        run = subprocess.run(["ros2", *args, "--no-daemon"], env=env, capture_output=True, text=True, timeout=60)
        output = run.stdout + run.stderr
        if until is None or until(output) or time.monotonic() > deadline:
            return output
        time.sleep(0.5)


@needs_ros2_cli
def test_ros2_node_list_and_info_name_the_standalone_node(env):
    listed = ros2(env, "node", "list", until=lambda out: STANDALONE in out and RCLPY in out).split()
    assert STANDALONE in listed and RCLPY in listed
    info = ros2(env, "node", "info", STANDALONE, until=lambda out: "/flex/chatter" in out)
    sections = {}
    for line in info.splitlines()[1:]:
        if line.startswith("  ") and not line.startswith("    "):
            current = sections.setdefault(line.strip().rstrip(":"), [])
        elif line.strip():
            current.append(line.strip())
    assert sections["Publishers"] == ["/flex/chatter: std_msgs/msg/String",
                                      "/parameter_events: rcl_interfaces/msg/ParameterEvent"]
    assert sections["Subscribers"] == ["/cmd: std_msgs/msg/String"]
    assert sorted(sections["Service Servers"]) == sorted(
        [f"{STANDALONE}/{name}: rcl_interfaces/srv/{kind}" for name, kind in (
            ("describe_parameters", "DescribeParameters"), ("get_parameter_types", "GetParameterTypes"),
            ("get_parameters", "GetParameters"), ("list_parameters", "ListParameters"),
            ("set_parameters", "SetParameters"), ("set_parameters_atomically", "SetParametersAtomically"))]
        + [f"{STANDALONE}/reset: std_srvs/srv/Trigger"])


@needs_ros2_cli
def test_ros2_topic_info_names_the_endpoints_nodes(env):
    info = ros2(env, "topic", "info", "-v", "/flex/chatter", until=lambda out: "Publisher count: 2" in out)
    assert "_NODE_NAME_UNKNOWN_" not in info
    assert info.count("Node name: standalone_check") == 1 and info.count("Node name: rclpy_check") == 1
    assert info.count("Node namespace: /flex") == 2


@needs_ros2_cli
def test_ros2_param_list_describe_and_dump_match_the_rclpy_node(env):
    """Same declarations, same answers: list (less rclpy's own parameters), describe, dump (values)."""
    names = ["gain", "method", "oma.order", "robot", "weights"]
    standalone = ros2(env, "param", "list", STANDALONE, until=lambda out: "gain" in out).split()
    assert standalone == names
    assert [n for n in ros2(env, "param", "list", RCLPY, until=lambda out: "gain" in out).split()
            if n not in RCLPY_OWN] == names
    described = ros2(env, "param", "describe", STANDALONE, *names)
    assert described == ros2(env, "param", "describe", RCLPY, *names)
    assert "Min value: 2\n    Max value: 20\n    Step: 2" in described and "Read only: true" in described
    dumps = [yaml.safe_load(ros2(env, "param", "dump", node))[node]["ros__parameters"] for node in (STANDALONE, RCLPY)]
    assert dumps[0] == {k: v for k, v in dumps[1].items() if k not in RCLPY_OWN} == {
        "gain": 2.0, "method": "ejnea", "oma": {"order": 4}, "robot": "scompi", "weights": [1.0, 2.0]}


@needs_ros2_cli
def test_ros2_param_set_and_get_on_the_standalone_node(env):
    """Accepted sets change what get returns; refused ones (range, read-only, type) say why and change nothing,
    on the standalone node as on the rclpy one."""
    refused = {}
    for node in (STANDALONE, RCLPY):
        assert ros2(env, "param", "set", node, "gain", "3.5").strip() == "Set parameter successful"
        assert ros2(env, "param", "get", node, "gain").strip() == "Double value is: 3.5"
        for name, value in (("gain", "30.0"), ("robot", "lwr4"), ("gain", "3"), ("method", "rnea")):
            refused[node, name, value] = ros2(env, "param", "set", node, name, value).strip()
            assert refused[node, name, value].startswith("Setting parameter failed"), (node, name, value)
        assert ros2(env, "param", "get", node, "gain").strip() == "Double value is: 3.5"
        assert ros2(env, "param", "get", node, "robot").strip() == "String value is: scompi"
    assert refused[STANDALONE, "robot", "lwr4"] == \
        "Setting parameter failed: parameter 'robot' cannot be set because it is read-only"
    assert "outside the range [0.0, 10.0]" in refused[STANDALONE, "gain", "30.0"]
    assert "not one of ['ejnea', 'sdrnea']" in refused[RCLPY, "method", "rnea"]  # our check, through rclpy's hook


#: What rclpy's graph says of the two nodes, in a process of its own (with this test's environment, whatever earlier
#: tests of the worker did to the process's): JSON on stdout.
GRAPH = textwrap.dedent("""
    import json, sys, time
    import rclpy

    rclpy.init()
    node = rclpy.create_node("graph_check")
    wanted, found, names = sys.argv[1:], {}, set()
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        names = {f"{ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces()}
        if set(wanted) <= names:
            found = {full: [dict(query(full.rsplit("/", 1)[1], "/flex")) for query in (
                node.get_publisher_names_and_types_by_node, node.get_subscriber_names_and_types_by_node,
                node.get_service_names_and_types_by_node)] for full in wanted}
            if all("/flex/chatter" in pubs and "/cmd" in subs and f"{full}/reset" in srvs
                   for full, (pubs, subs, srvs) in found.items()):
                break
        time.sleep(0.2)
    print(json.dumps({"names": sorted(names), "found": found}))
    node.destroy_node()
    rclpy.try_shutdown()
""")


def test_rclpy_graph_lists_the_standalone_node_and_its_endpoints(env):
    """rclpy (here Fast DDS from PyPI, or a sourced ROS 2) learns the standalone node from ros_discovery_info: its
    name and namespace, and its publisher, subscription and service by node, as for the rclpy node beside it."""
    run = subprocess.run([sys.executable, "-c", GRAPH, STANDALONE, RCLPY], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    graph = json.loads(run.stdout.strip().splitlines()[-1])
    found = graph["found"]
    assert found, f"rclpy saw {graph['names']} in 60 s, not both {STANDALONE} and {RCLPY}"
    for full in (STANDALONE, RCLPY):
        publishers, subscriptions, services = found[full]
        assert publishers["/flex/chatter"] == ["std_msgs/msg/String"], (full, publishers)
        assert subscriptions["/cmd"] == ["std_msgs/msg/String"], (full, subscriptions)
        assert services[f"{full}/reset"] == ["std_srvs/srv/Trigger"], (full, services)


def test_live_parameter_interface_on_rclpy(monkeypatch):
    """Node.set_parameters / on_parameters_set on the rclpy back end: the same validation and callbacks, values
    stored in rclpy (what `ros2 param get` reads), refusals leave rclpy's value alone."""
    from flexrobot_ros.errors import FlexrobotError
    from flexrobot_ros.runtime import ParameterSpec, create_node

    monkeypatch.setenv("ROS_DOMAIN_ID", str(peer.run_domain()))  # effective unless rclpy is already initialized
    node = create_node("live_rclpy_check", namespace="/flex", backend="rclpy")
    try:
        node.declare_parameters([ParameterSpec("gain", 2.0, "gain [-]", range=(0.0, 10.0)),
                                 ParameterSpec("robot", "scompi", "robot model", read_only=True),
                                 ParameterSpec("weights", [1.0], "weights [-]", range=(0.0, 5.0))])
        seen = []

        def refuse_seven(values):
            if values.get("gain") == 7.0:
                raise FlexrobotError("7 is unlucky")
            seen.append(values)

        node.on_parameters_set(refuse_seven)
        assert node.set_parameters({"gain": 3.0, "weights": [0.5, 4.0]}) == (True, "")
        assert seen == [{"gain": 3.0, "weights": (0.5, 4.0)}]
        assert node.ros_node.get_parameter("gain").value == 3.0 and node.parameters["weights"] == (0.5, 4.0)
        for values, reason in (({"gain": 30.0}, "outside the range"), ({"gain": 7.0}, "7 is unlucky"),
                               ({"robot": "lwr4"}, "cannot be set because it is read-only"),
                               ({"weights": [9.0]}, "outside the range [0.0, 5.0]")):
            successful, why = node.set_parameters(values)
            assert not successful and reason in why, why
        assert node.ros_node.get_parameter("gain").value == 3.0 and node.parameters["gain"] == 3.0
        assert list(node.ros_node.get_parameter("weights").value) == [0.5, 4.0]
    finally:
        node.destroy()
