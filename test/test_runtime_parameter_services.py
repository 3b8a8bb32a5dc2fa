"""Live parameters of the standalone runtime: ``Node.set_parameters`` / ``on_parameters_set`` in-process, and the
rcl_interfaces parameter services and ``/parameter_events`` on the wire, called with the package's own DDS types
exactly as ``ros2 param`` calls them (rcl_interfaces/srv/*, ros2cli's ros2param/api).

Expected values come from the declarations written here and from rcl_interfaces' definitions (ParameterType
constants, SetParametersResult), never from the code under test.
"""
from __future__ import annotations

import pytest

import runtime_peer as peer
from flexrobot_ros.errors import FlexrobotError
from flexrobot_ros.runtime import ParameterSpec, create_node

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
