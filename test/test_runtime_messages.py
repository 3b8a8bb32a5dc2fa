"""Generated message classes and ROS 2 wire conventions, checked against rosbags' independent CDR serializer,
the rmw_cyclonedds request header layout, and type hashes ROS 2 Jazzy prints."""
from __future__ import annotations

import array
import struct

import numpy as np
import pytest

import runtime_peer as peer
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import messages
from flexrobot_ros.runtime.messages import (as_array, dds_message_types, dds_type_name, float_sequence, multiarray,
                                            multiarray_to_numpy, ros_type_name, time_message, time_seconds)


@pytest.fixture(scope="module")
def types():
    return dds_message_types("jazzy")


@pytest.mark.parametrize("typename", peer.TYPES)
def test_generated_classes_write_the_bytes_rosbags_writes(types, typename):
    """For populated samples of the six node types, the generated class's CDR equals rosbags' serialization of
    the same message (header 00 01 00 00: plain little-endian CDR, i.e. XCDR1 of a final struct)."""
    store = messages.typestore("jazzy")
    built = peer.sample(types, typename, 5)
    ours = built.serialize()
    assert ours[:4] == b"\x00\x01\x00\x00"
    theirs = bytes(store.serialize_cdr(store.deserialize_cdr(ours, typename), typename))
    assert ours == theirs
    assert messages.message_to_dict(type(built).deserialize(theirs)) == messages.message_to_dict(built)


def test_type_names_follow_rmw_cyclonedds(types):
    """ROS type pkg/msg/Name <-> DDS type pkg::msg::dds_::Name_, nested types included."""
    assert types.sensor_msgs.msg.JointState.__idl_typename__ == "sensor_msgs::msg::dds_::JointState_"
    assert types.std_msgs.msg.Header.__idl_typename__ == "std_msgs::msg::dds_::Header_"
    assert types.builtin_interfaces.msg.Time.__idl_typename__ == "builtin_interfaces::msg::dds_::Time_"
    assert types.std_srvs.srv.Trigger.wire_request.__idl_typename__ == "std_srvs::srv::dds_::Trigger_Request_"
    assert types.std_srvs.srv.SetBool.wire_response.__idl_typename__ == "std_srvs::srv::dds_::SetBool_Response_"
    assert dds_type_name("tf2_msgs/msg/TFMessage") == "tf2_msgs::msg::dds_::TFMessage_"
    assert ros_type_name("tf2_msgs::msg::dds_::TFMessage_") == "tf2_msgs/msg/TFMessage"
    assert ros_type_name("DCPSParticipant") is None


def test_service_samples_carry_the_rmw_cyclonedds_request_header(types):
    """Request/reply samples: uint64 client guid, int64 sequence number, then the fields; an empty request has
    one dummy uint8 (layout of rmw_cyclonedds' cdds_request_header_t, little-endian CDR)."""
    trigger, set_bool = types.std_srvs.srv.Trigger, types.std_srvs.srv.SetBool
    guid = 0xFEDCBA9876543210  # above 2**63: must survive as unsigned
    assert trigger.wire_request(client_guid=guid, sequence_number=7).serialize() == \
        b"\x00\x01\x00\x00" + struct.pack("<Qqb", guid, 7, 0)
    assert set_bool.wire_request(client_guid=1, sequence_number=-2, data=True).serialize() == \
        b"\x00\x01\x00\x00" + struct.pack("<Qq?", 1, -2, True)
    reply = trigger.wire_response(client_guid=guid, sequence_number=7, success=True, message="ok")
    assert reply.serialize() == b"\x00\x01\x00\x00" + struct.pack("<Qq?3xI3s", guid, 7, True, 3, b"ok\x00")
    assert trigger.Request().structure_needs_at_least_one_member == 0
    assert (trigger.Response().success, trigger.Response().message) == (False, "")


def test_type_hashes_match_ros2_jazzy():
    """JointState's RIHS01 is the hash ``ros2 topic info -v /joint_states`` prints on Jazzy (public output);
    Humble has no type hashes."""
    assert messages.type_hash("sensor_msgs/msg/JointState") == \
        "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e"
    assert messages.type_hash("std_srvs/srv/Trigger").startswith("RIHS01_")
    assert messages.type_hash("sensor_msgs/msg/JointState", "humble") is None


#: A process that generates JointState and reads two type hashes, then says whether rosbags built its typestore.
DEFINITIONS_PROBE = """
import json, sys
from flexrobot_ros.runtime import messages
messages.dds_message_types("jazzy").sensor_msgs.msg.JointState()
messages.dds_message_types("humble").std_srvs.srv.Trigger.Request()
hashes = [messages.type_hash("sensor_msgs/msg/JointState"), messages.type_hash("std_srvs/srv/Trigger"),
          messages.type_hash("sensor_msgs/msg/JointState", "humble")]
print(json.dumps({"typestore": "rosbags.typesys.stores.ros2_jazzy" in sys.modules, "hashes": hashes}))
"""


def test_type_definitions_are_cached_and_equal_the_typestores(tmp_path):
    """The definitions the generated classes and type hashes use come from the typestore the first time and from
    the cache file after: the same field definitions and hashes as rosbags' typestore computes in this process
    (JSON-normalized: lists for tuples), and a second process never builds the typestore. A damaged file is
    rebuilt."""
    import json
    import subprocess
    import sys

    def probe() -> dict:
        run = subprocess.run([sys.executable, "-c", DEFINITIONS_PROBE], env=peer.loopback_env(
            FLEXROBOT_CACHE=str(tmp_path)), capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    store = messages.typestore("jazzy")
    expected = [store.hash_rihs01("sensor_msgs/msg/JointState"), store.hash_rihs01("std_srvs/srv/Trigger"), None]
    first = probe()
    assert first == {"typestore": True, "hashes": expected}
    files = sorted(tmp_path.glob("ros_types_*.json"))
    assert [f.name.split("_")[2] for f in files] == ["humble", "jazzy"]
    cached = json.loads(files[1].read_text())
    assert cached["fielddefs"] == json.loads(json.dumps(store.fielddefs))
    assert cached["hashes"]["sensor_msgs/msg/JointState"] == expected[0]
    assert json.loads(files[0].read_text())["hashes"] == {}
    assert probe() == {"typestore": False, "hashes": expected}
    files[1].write_text("{damaged")
    assert probe() == {"typestore": True, "hashes": expected}
    assert json.loads(files[1].read_text())["hashes"]["std_srvs/srv/Trigger"] == expected[1]


def test_constants_and_defaults_match_the_definitions(types):
    marker, status = types.visualization_msgs.msg.Marker, types.diagnostic_msgs.msg.DiagnosticStatus
    assert (marker.ARROW, marker.SPHERE, marker.LINE_STRIP, marker.DELETEALL) == (0, 2, 4, 3)
    assert (status.OK, status.WARN, status.ERROR, status.STALE) == (0, 1, 2, 3)
    imu = types.sensor_msgs.msg.Imu()
    assert imu.orientation_covariance == [0.0] * 9  # fixed float64[9]
    assert types.sensor_msgs.msg.JointState().position == []


def test_humble_definitions_generate_too():
    humble = dds_message_types("humble")
    assert humble.sensor_msgs.msg.JointState().serialize()[:4] == b"\x00\x01\x00\x00"
    assert humble.std_srvs.srv.Trigger.Response(success=True).success is True


def test_conversion_helpers(types):
    """float_sequence -> array('d') accepted by both back ends; multiarray keeps shape and labels; stamps."""
    values = float_sequence(np.array([1.5, -2.0]))
    assert isinstance(values, array.array) and values.typecode == "d" and list(values) == [1.5, -2.0]
    assert as_array([1, 2]).dtype == np.float64 and as_array(values).tolist() == [1.5, -2.0]
    shapes = np.arange(12.0).reshape(3, 4)
    msg = multiarray(types, shapes, ("mode", "joint"))
    assert [(d.label, d.size, d.stride) for d in msg.layout.dim] == [("mode", 3, 12), ("joint", 4, 4)]
    back, labels = multiarray_to_numpy(type(msg).deserialize(msg.serialize()))
    assert labels == ("mode", "joint") and np.array_equal(back, shapes)
    stamp = time_message(types, 12.25)
    assert (stamp.sec, stamp.nanosec) == (12, 250_000_000) and time_seconds(stamp) == 12.25
    with pytest.raises(RuntimeLayerError, match="one-dimensional"):
        float_sequence(shapes)
    with pytest.raises(RuntimeLayerError, match="labels"):
        multiarray(types, shapes, ("mode",))


def test_unknown_types_and_bad_values_give_clear_errors(types):
    with pytest.raises(RuntimeLayerError, match="not among the ROS 2 jazzy definitions"):
        types.my_msgs.msg.Thing
    with pytest.raises(RuntimeLayerError, match="standalone runtime knows"):
        types.example_interfaces.srv.AddTwoInts
    with pytest.raises(RuntimeLayerError, match="package/msg/Name"):
        types.get("JointState")
    with pytest.raises(RuntimeLayerError, match="not supported"):
        messages.typestore("noetic")
