"""Live parameters of the standalone runtime: ``Node.set_parameters`` / ``on_parameters_set`` in-process, and the
rcl_interfaces parameter services and ``/parameter_events`` on the wire, called with the package's own DDS types
exactly as ``ros2 param`` calls them (rcl_interfaces/srv/*, ros2cli's ros2param/api).

Expected values come from the declarations written here and from rcl_interfaces' definitions (ParameterType
constants, SetParametersResult), never from the code under test.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

import runtime_peer as peer
from flexrobot_ros.errors import FlexrobotError
from flexrobot_ros.runtime import ParameterSpec, create_node
from flexrobot_ros.runtime.dds_backend import DdsNode
from flexrobot_ros.runtime.parameter_services import list_parameters

SPECS = [
    ParameterSpec("gain", 2.0, "output / input [-]", range=(0.0, 10.0)),
    ParameterSpec("order", 4, "model order [-]", range=(2, 20), step=2),
    ParameterSpec("method", "ejnea", "feedforward method", choices=("ejnea", "sdrnea")),
    ParameterSpec("robot", "scompi", "robot model", read_only=True),
    ParameterSpec("weights", [1.0, 2.0], "weights [-]", range=(0.0, 5.0)),
    ParameterSpec("enabled", True, "on/off"),
]


@pytest.fixture(scope="module")
def in_process():
    with peer.loopback_in_process():
        yield


@pytest.fixture
def node(in_process):
    node = create_node("param_check", namespace="/live", backend="dds")
    node.declare_parameters(SPECS)
    yield node
    node.destroy()


def test_set_parameters_validates_runs_callbacks_and_stores(node):
    """A valid set reaches every callback once with validated values (lists as tuples) and is stored."""
    seen = []
    node.on_parameters_set(seen.append)
    assert node.set_parameters({"gain": 3.5, "weights": [0.5, 4.0]}) == (True, "")
    assert seen == [{"gain": 3.5, "weights": (0.5, 4.0)}]
    assert node.parameters["gain"] == 3.5 and node.parameters["weights"] == (0.5, 4.0)


@pytest.mark.parametrize("values, reason", [
    ({"gain": 12.0}, "outside the range [0.0, 10.0]"),
    ({"gain": 1}, "expected double"),                       # ROS 2 types statically: 1 is an integer
    ({"gain": float("nan")}, "finite"),
    ({"order": 5}, "step"),                                 # 2 + k*2 only
    ({"method": "rnea"}, "not one of ['ejnea', 'sdrnea']"),
    ({"robot": "lwr4"}, "parameter 'robot' cannot be set because it is read-only"),  # rclcpp's wording
    ({"nonexistent": 1.0}, "not declared by /live/param_check"),
    ({"gain": 3.0, "order": 3}, "step"),                    # all or nothing: the valid gain is not applied either
])
def test_invalid_values_are_refused_before_any_callback_and_leave_the_old_ones(node, values, reason):
    before = dict(node.parameters)
    calls = []
    node.on_parameters_set(calls.append)
    successful, why = node.set_parameters(values)
    assert not successful and reason in why
    assert calls == [] and node.parameters == before


def test_a_callback_refusal_leaves_every_parameter_as_it_was(node):
    """The first callback accepts, the second raises FlexrobotError: nothing is stored, the reason is its message."""
    accepted = []

    def refuse(values):
        if values.get("enabled") is False:
            raise FlexrobotError("cannot disable while moving")

    node.on_parameters_set(accepted.append)
    node.on_parameters_set(refuse)
    before = dict(node.parameters)
    assert node.set_parameters({"gain": 4.0, "enabled": False}) == (False, "cannot disable while moving")
    assert node.parameters == before
    assert node.set_parameters({"gain": 4.0}) == (True, "")
    assert node.parameters["gain"] == 4.0 and accepted[-1] == {"gain": 4.0}


def test_a_bug_in_a_callback_refuses_the_change_instead_of_raising(node):
    node.on_parameters_set(lambda values: 1 / 0)
    successful, why = node.set_parameters({"gain": 1.5})
    assert not successful and "ZeroDivisionError" in why
    assert node.parameters["gain"] == 2.0


# ------------------------------------------------------------------------------------------------------------------
# On the wire: a standalone node in another process, called as `ros2 param` calls it
# ------------------------------------------------------------------------------------------------------------------

#: The served node: SPECS above plus a callback that refuses to disable while "moving" (a node-side refusal).
SERVER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {test_dir!r})
    from test_runtime_parameter_services import SPECS
    from flexrobot_ros.errors import FlexrobotError
    from flexrobot_ros.runtime import create_node

    node = create_node("param_server", namespace="/live", backend="dds")
    node.declare_parameters(SPECS)

    def refuse(values):
        if values.get("enabled") is False:
            raise FlexrobotError("cannot disable while moving")

    node.on_parameters_set(refuse)
    print("ready", flush=True)
    node.spin(60.0)
""")

#: rcl_interfaces/msg/ParameterType constants (rcl_interfaces/msg/ParameterType.msg).
NOT_SET, BOOL, INTEGER, DOUBLE, STRING, DOUBLE_ARRAY = 0, 1, 2, 3, 4, 8


class ParamClient:
    """What ros2cli's ros2param/api does: one client per service of the node, requests built from rcl_interfaces."""

    def __init__(self, node, target):
        self.node, self.srv, self.msg = node, node.types.rcl_interfaces.srv, node.types.rcl_interfaces.msg
        self.clients = {name: node.create_client(getattr(self.srv, kind), f"{target}/{name}") for name, kind in (
            ("list_parameters", "ListParameters"), ("get_parameters", "GetParameters"),
            ("get_parameter_types", "GetParameterTypes"), ("describe_parameters", "DescribeParameters"),
            ("set_parameters", "SetParameters"), ("set_parameters_atomically", "SetParametersAtomically"))}
        for name, client in self.clients.items():
            assert client.wait_for_service(20.0), f"{target}/{name} not found"

    def call(self, name, **fields):
        kind = {"list_parameters": "ListParameters", "get_parameters": "GetParameters",
                "get_parameter_types": "GetParameterTypes", "describe_parameters": "DescribeParameters",
                "set_parameters": "SetParameters", "set_parameters_atomically": "SetParametersAtomically"}[name]
        return self.node.call(self.clients[name], getattr(self.srv, kind).Request(**fields), timeout_sec=10.0)

    def value(self, **kwargs):
        return self.msg.ParameterValue(**kwargs)

    def parameter(self, name, **kwargs):
        return self.msg.Parameter(name=name, value=self.value(**kwargs))

    def get(self, *names):
        return self.call("get_parameters", names=list(names)).values


@pytest.fixture(scope="module")
def served(in_process):
    env = peer.loopback_env()
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(test_dir=str(peer.REPO / "test"))], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready", server.stderr.read()
        client_node = DdsNode("param_client", start_parameter_services=False)
        events = []
        client_node.create_subscription(client_node.types.rcl_interfaces.msg.ParameterEvent, "/parameter_events",
                                        events.append)
        client = ParamClient(client_node, "/live/param_server")
        spinner = threading.Thread(target=client_node.spin, daemon=True)
        spinner.start()
        yield client, events
        client_node.request_stop()
        spinner.join(5)
        client_node.destroy()
    finally:
        server.kill()
        server.communicate()


def _server_events(events, count, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mine = [e for e in list(events) if e.node == "/live/param_server" and e.changed_parameters]
        if len(mine) >= count:
            return mine
        time.sleep(0.02)
    return [e for e in list(events) if e.node == "/live/param_server" and e.changed_parameters]


def test_list_get_types_and_describe_as_declared(served):
    """ros2 param list/get/describe: names, typed values, ParameterType codes and descriptors of SPECS."""
    client, _ = served
    result = client.call("list_parameters").result
    # use_sim_time: declared by every node itself, as rclpy's TimeSource declares it
    assert sorted(result.names) == sorted([spec.name for spec in SPECS] + ["use_sim_time"])
    assert list(result.prefixes) == []
    gain = client.get("gain")
    assert [(v.type, v.double_value) for v in gain] == [(DOUBLE, 2.0)]
    values = client.get("order", "method", "weights", "enabled", "robot")
    assert [v.type for v in values] == [INTEGER, STRING, DOUBLE_ARRAY, BOOL, STRING]
    assert (values[0].integer_value, values[1].string_value, list(values[2].double_array_value),
            values[3].bool_value, values[4].string_value) == (4, "ejnea", [1.0, 2.0], True, "scompi")
    assert list(client.get("gain", "nonexistent")) == []    # rclpy answers nothing when one name is unknown
    assert list(client.call("get_parameter_types", names=["gain", "order", "weights"]).types) == \
        [DOUBLE, INTEGER, DOUBLE_ARRAY]
    gain_d, order_d, robot_d, method_d, weights_d = client.call(
        "describe_parameters", names=["gain", "order", "robot", "method", "weights"]).descriptors
    assert (gain_d.name, gain_d.type, gain_d.description, gain_d.read_only) == ("gain", DOUBLE, "output / input [-]",
                                                                                False)
    assert [(r.from_value, r.to_value, r.step) for r in gain_d.floating_point_range] == [(0.0, 10.0, 0.0)]
    assert [(r.from_value, r.to_value, r.step) for r in order_d.integer_range] == [(2, 20, 2)]
    assert robot_d.read_only and not method_d.read_only
    assert "['ejnea', 'sdrnea']" in method_d.additional_constraints
    assert "[0.0, 5.0]" in weights_d.additional_constraints and not weights_d.floating_point_range


def test_set_round_trip_and_one_parameter_event_per_change(served):
    """set -> get returns the new value; each accepted set publishes one ParameterEvent naming the node and the
    changed parameter; refused sets publish none and leave the old value."""
    client, events = served
    before = len(_server_events(events, 0, timeout=0))
    results = client.call("set_parameters", parameters=[
        client.parameter("gain", type=DOUBLE, double_value=3.5),
        client.parameter("order", type=INTEGER, integer_value=6)]).results
    assert [(r.successful, r.reason) for r in results] == [(True, ""), (True, "")]
    assert client.get("gain")[0].double_value == 3.5 and client.get("order")[0].integer_value == 6
    changes = _server_events(events, before + 2)[before:]
    assert [[(p.name, p.value.type) for p in e.changed_parameters] for e in changes] == [[("gain", DOUBLE)],
                                                                                        [("order", INTEGER)]]
    assert changes[0].changed_parameters[0].value.double_value == 3.5 and not changes[0].new_parameters

    # refused: out of range, read-only, wrong type, a node callback's refusal; none changes anything
    refused = client.call("set_parameters", parameters=[
        client.parameter("gain", type=DOUBLE, double_value=12.0),
        client.parameter("robot", type=STRING, string_value="lwr4"),
        client.parameter("gain", type=INTEGER, integer_value=3),
        client.parameter("enabled", type=BOOL, bool_value=False)]).results
    assert [r.successful for r in refused] == [False] * 4
    assert "outside the range [0.0, 10.0]" in refused[0].reason
    assert refused[1].reason == "parameter 'robot' cannot be set because it is read-only"
    assert "expected double" in refused[2].reason
    assert refused[3].reason == "cannot disable while moving"
    assert client.get("gain")[0].double_value == 3.5 and client.get("robot")[0].string_value == "scompi"
    assert client.get("enabled")[0].bool_value is True
    time.sleep(0.3)  # a refused set must not publish: give a wrongly published event time to arrive
    assert len(_server_events(events, 0, timeout=0)) == before + 2


def test_set_atomically_is_all_or_nothing(served):
    client, _ = served
    result = client.call("set_parameters_atomically", parameters=[
        client.parameter("method", type=STRING, string_value="sdrnea"),
        client.parameter("weights", type=DOUBLE_ARRAY, double_array_value=[1.0, 9.0])]).result
    assert not result.successful and "9.0 is outside the range [0.0, 5.0]" in result.reason
    assert client.get("method")[0].string_value == "ejnea"
    result = client.call("set_parameters_atomically", parameters=[
        client.parameter("method", type=STRING, string_value="sdrnea"),
        client.parameter("weights", type=DOUBLE_ARRAY, double_array_value=[1.0, 4.5])]).result
    assert (result.successful, result.reason) == (True, "")
    assert [v.string_value for v in client.get("method")] == ["sdrnea"]
    assert list(client.get("weights")[0].double_array_value) == [1.0, 4.5]


@pytest.mark.parametrize("prefixes, depth, names, groups", [
    # rclpy.node.Node.list_parameters (Jazzy) on the names below, worked by hand from its rules
    ([], 0, ["a", "b.c", "b.d.e", "f.g"], ["b", "b.d", "f"]),
    ([], 1, ["a"], []),
    ([], 2, ["a", "b.c", "f.g"], ["b", "f"]),
    (["b"], 0, ["b.c", "b.d.e"], ["b", "b.d"]),
    (["b"], 1, ["b.c"], ["b"]),
    (["a", "f"], 0, ["a", "f.g"], ["f"]),
])
def test_list_parameters_follows_rclpy_prefix_and_depth_rules(prefixes, depth, names, groups):
    assert list_parameters(["a", "b.c", "b.d.e", "f.g"], prefixes, depth) == (names, groups)


#: RIHS01 hashes ROS 2 Jazzy's rosidl generated (share/<package>/<kind>/<Name>.json of a Jazzy install). The services'
#: and Char's depend on rosidl typing `char` as uint8 (rosbags alone types it as char and gets other hashes).
JAZZY_HASHES = {
    "rcl_interfaces/srv/DescribeParameters": "845b484d71eb0673dae682f2e3ba3c4851a65a3dcfb97bddd82c5b57e91e4cff",
    "rcl_interfaces/srv/GetParameterTypes": "da199c878688b3e530bdfe3ca8f74cb9fa0c303101e980a9e8f260e25e1c80ca",
    "rcl_interfaces/srv/GetParameters": "bf9803d5c74cf989a5de3e0c2e99444599a627c7ff75f97b8c05b01003675cbc",
    "rcl_interfaces/srv/ListParameters": "3e6062bfbb27bfb8730d4cef2558221f51a11646d78e7bb30a1e83afac3aad9d",
    "rcl_interfaces/srv/SetParameters": "56eed9a67e169f9cb6c1f987bc88f868c14a8fc9f743a263bc734c154015d7e0",
    "rcl_interfaces/srv/SetParametersAtomically": "0e192ef259c07fc3c07a13191d27002222e65e00ccec653ca05e856f79285fcd",
    "rcl_interfaces/msg/ParameterEvent": "043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
    "std_srvs/srv/Trigger": "eeff2cd6fa5ad9d27cdf4dec64818317839b62f212a91e6b5304b634b2062c5f",
    "std_msgs/msg/Char": "3ad2d04dd29ba19d04b16659afa3ccaedd691914b02a64e82e252f2fa6a586a9",
    "rmw_dds_common/msg/Gid": "ab6f21cfbb0a6dbb837161e1110c2051a2850ed9f9c53944d7115d9bcebedf71",
}


@pytest.mark.parametrize("typename", sorted(JAZZY_HASHES))
def test_type_hashes_are_jazzys(typename):
    from flexrobot_ros.runtime.messages import type_hash

    assert type_hash(typename, "jazzy") == "RIHS01_" + JAZZY_HASHES[typename]
