"""Standalone nodes in the ROS 2 graph: the ``ros_discovery_info`` a standalone process publishes, read on the wire.

A plain cyclonedds participant in this process plays the part of a ROS 2 tool: it decodes ``ros_discovery_info``
with the package's generated ``rmw_dds_common/msg/ParticipantEntitiesInfo`` and compares it with what DDS discovery
itself reports about the serving process (the DCPSPublication / DCPSSubscription built-in topics: each endpoint's
GUID, topic and participant), which is where rmw_cyclonedds takes endpoint GIDs from (``rmw_node.cpp``,
``convert_guid_to_gid``). Expected topic names follow the ROS 2 conventions (``rt/``, ``rq/...Request``,
``rr/...Reply``, private services under ``/namespace/node/``); the expected type hash is the one ROS 2 Jazzy's
rosidl generated (``share/rmw_dds_common/msg/ParticipantEntitiesInfo.json`` of a Jazzy install).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

import runtime_peer as peer
from flexrobot_ros.runtime.dds_backend import DdsNode, endpoint_qos
from flexrobot_ros.runtime.graph import DISCOVERY_TOPIC, DISCOVERY_TYPE, QOS_DISCOVERY
from flexrobot_ros.runtime.messages import dds_message_types

#: RIHS01 of rmw_dds_common/msg/ParticipantEntitiesInfo in ROS 2 Jazzy (rosidl's generated .json).
JAZZY_HASH = "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e"

#: Two nodes in one process (one participant): /flex/talker with a publisher, a subscription, two services and a
#: client; /listener with a subscription. ~/add_topic creates a publisher, ~/drop_listener destroys /listener.
SERVER = textwrap.dedent("""
    from flexrobot_ros.runtime import create_node

    talker = create_node("talker", namespace="/flex", backend="dds")
    listener = create_node("listener", backend="dds")
    String, Trigger = talker.types.std_msgs.msg.String, talker.types.std_srvs.srv.Trigger
    talker.create_publisher(String, "chatter")
    talker.create_subscription(String, "/cmd", lambda msg: None)
    talker.create_client(Trigger, "/other/srv")
    listener.create_subscription(String, "/flex/chatter", lambda msg: None)
    keep = []

    def add_topic(request, response):
        keep.append(talker.create_publisher(String, "late"))
        response.success = True
        return response

    def drop_listener(request, response):
        listener.destroy()
        response.success = True
        return response

    talker.create_service(Trigger, "~/add_topic", add_topic)
    talker.create_service(Trigger, "~/drop_listener", drop_listener)
    print("ready", flush=True)
    talker.spin(60.0)
""")

PARAMETER_SERVICES = ("describe_parameters", "get_parameters", "get_parameter_types", "list_parameters",
                      "set_parameters", "set_parameters_atomically")


def services(node, names):
    """(request topics, reply topics) of the services ``node/name``."""
    return {f"rq{node}/{n}Request" for n in names}, {f"rr{node}/{n}Reply" for n in names}


TALKER_REQUESTS, TALKER_REPLIES = services("/flex/talker", PARAMETER_SERVICES + ("add_topic", "drop_listener"))
LISTENER_REQUESTS, LISTENER_REPLIES = services("/listener", PARAMETER_SERVICES)
EXPECTED = {  # (namespace, name): (reader topics, writer topics)
    ("/flex", "talker"): ({"rt/cmd", "rr/other/srvReply"} | TALKER_REQUESTS,
                          {"rt/flex/chatter", "rt/parameter_events", "rq/other/srvRequest"} | TALKER_REPLIES),
    ("/", "listener"): ({"rt/flex/chatter"} | LISTENER_REQUESTS, {"rt/parameter_events"} | LISTENER_REPLIES),
}


class Observer:
    """A bare DDS participant watching ros_discovery_info and the DCPS built-in topics."""

    def __init__(self):
        from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication, BuiltinTopicDcpsSubscription
        from cyclonedds.core import Policy, Qos
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        self.participant = DomainParticipant(peer.run_domain())
        cls = dds_message_types("jazzy").get(DISCOVERY_TYPE)
        qos = endpoint_qos(QOS_DISCOVERY, DISCOVERY_TYPE, "jazzy", reader=True)
        qos += Qos(Policy.History.KeepAll)
        self.info = DataReader(self.participant, Topic(self.participant, DISCOVERY_TOPIC, cls), qos)
        self.publications = BuiltinDataReader(self.participant, BuiltinTopicDcpsPublication)
        self.subscriptions = BuiltinDataReader(self.participant, BuiltinTopicDcpsSubscription)
        self.latest = {}  # participant gid -> newest ParticipantEntitiesInfo
        self.writers, self.readers = {}, {}  # endpoint GUID bytes -> DCPS sample

    def poll(self):
        for sample in self.info.take(N=1000):
            if hasattr(sample, "node_entities_info_seq"):
                self.latest[bytes(sample.gid.data)] = sample
        for reader, table in ((self.publications, self.writers), (self.subscriptions, self.readers)):
            for sample in reader.take(N=1000):
                if hasattr(sample, "topic_name"):
                    table[sample.key.bytes] = sample

    def wait(self, predicate, timeout=20.0):
        """Poll until ``predicate(info)`` holds for some participant's newest info; that info."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.poll()
            for info in self.latest.values():
                if predicate(info):
                    time.sleep(0.3)  # let discovery of the last endpoints catch up
                    self.poll()
                    return self.latest[bytes(info.gid.data)]
            time.sleep(0.05)
        raise AssertionError(f"no matching ros_discovery_info within {timeout} s: {list(self.latest.values())}")


def nodes_of(info):
    return {(n.node_namespace, n.node_name): n for n in info.node_entities_info_seq}


@pytest.fixture(scope="module")
def server():
    with peer.loopback_in_process():
        process = subprocess.Popen([sys.executable, "-c", SERVER], env=peer.loopback_env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline().strip() == "ready", process.stderr.read()
            yield Observer()
        finally:
            process.kill()
            process.communicate()


def test_discovery_info_names_the_nodes_and_their_endpoint_gids(server):
    """One ParticipantEntitiesInfo for the process: the participant GID, both nodes with namespace and name, and
    exactly their readers and writers, each GID the DDS GUID of an endpoint of that participant on the expected
    topic."""
    info = server.wait(lambda i: set(nodes_of(i)) == set(EXPECTED))
    participant = bytes(info.gid.data)
    assert len(participant) == 16  # Jazzy: rmw_gid_t and Gid.data are 16 bytes, the whole GUID
    mine = {"writers": {g: s for g, s in server.writers.items() if s.participant_key.bytes == participant},
            "readers": {g: s for g, s in server.readers.items() if s.participant_key.bytes == participant}}
    listed = {"writers": [], "readers": []}
    for key, node in nodes_of(info).items():
        expected_readers, expected_writers = EXPECTED[key]
        for kind, gids, expected in (("readers", node.reader_gid_seq, expected_readers),
                                     ("writers", node.writer_gid_seq, expected_writers)):
            gids = [bytes(g.data) for g in gids]
            assert all(g in mine[kind] for g in gids), f"{key} {kind}: a GID that is no DDS endpoint of the process"
            assert sorted(mine[kind][g].topic_name for g in gids) == sorted(expected), (key, kind)
            listed[kind] += gids
    # every endpoint of the participant belongs to one node, except the ros_discovery_info writer itself
    assert sorted(listed["readers"]) == sorted(mine["readers"])
    assert sorted(set(mine["writers"]) - set(listed["writers"])) == \
        [g for g, s in mine["writers"].items() if s.topic_name == DISCOVERY_TOPIC]
    assert len(listed["writers"]) == len(set(listed["writers"]))


def test_discovery_writer_qos_and_type_hash_are_rmw_cyclonedds(server):
    """Reliable, transient-local, keep-last 1, typed rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_ with
    Jazzy's type hash in USER_DATA."""
    from cyclonedds.core import Policy

    info = server.wait(lambda i: set(nodes_of(i)) == set(EXPECTED))
    (writer,) = [s for s in server.writers.values()
                 if s.topic_name == DISCOVERY_TOPIC and s.participant_key.bytes == bytes(info.gid.data)]
    assert writer.type_name == "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
    assert writer.qos[Policy.Durability] == Policy.Durability.TransientLocal
    assert writer.qos[Policy.History] == Policy.History.KeepLast(1)
    assert isinstance(writer.qos[Policy.Reliability], Policy.Reliability.Reliable)
    assert writer.qos[Policy.Userdata].data == f"typehash={JAZZY_HASH};".encode()


def test_discovery_info_is_rewritten_when_endpoints_and_nodes_change(server):
    """A publisher created later appears under its node; a destroyed node disappears (a new sample each time)."""
    client = DdsNode("graph_client", start_parameter_services=False)
    try:
        Trigger = client.types.std_srvs.srv.Trigger
        for service in ("add_topic", "drop_listener"):
            proxy = client.create_client(Trigger, f"/flex/talker/{service}")
            assert proxy.wait_for_service(20.0)
            assert client.call(proxy, Trigger.Request(), timeout_sec=10.0).success
            if service == "add_topic":
                def has_late(info):
                    talker = nodes_of(info).get(("/flex", "talker"))
                    return talker is not None and any(
                        server.writers.get(bytes(g.data)) is not None
                        and server.writers[bytes(g.data)].topic_name == "rt/flex/late" for g in talker.writer_gid_seq)
                server.wait(has_late)
        info = server.wait(lambda i: ("/flex", "talker") in nodes_of(i) and ("/", "listener") not in nodes_of(i))
        assert list(nodes_of(info)) == [("/flex", "talker")]
    finally:
        client.destroy()


def test_humble_gids_are_the_guid_zero_padded_to_24_bytes():
    """Humble's rmw_dds_common Gid is char[24] (RMW_GID_STORAGE_SIZE 24); rmw_cyclonedds copies the 16-byte GUID
    and leaves the rest zero (rmw_node.cpp convert_guid_to_gid: memset then memcpy)."""
    from flexrobot_ros.runtime.graph import ParticipantEntities

    guid, reader, writer = bytes(range(1, 17)), bytes(range(17, 33)), bytes(range(33, 49))
    entities = ParticipantEntities(guid)
    entities.add_node("k", "/ns", "n")
    entities.add_endpoints("k", readers=[reader], writers=[writer])
    for distro, size in (("humble", 24), ("jazzy", 16)):
        info = entities.message(dds_message_types(distro))
        assert bytes(info.gid.data) == guid + bytes(size - 16)
        (node,) = info.node_entities_info_seq
        assert (node.node_namespace, node.node_name) == ("/ns", "n")
        assert [bytes(g.data) for g in node.reader_gid_seq] == [reader + bytes(size - 16)]
        assert [bytes(g.data) for g in node.writer_gid_seq] == [writer + bytes(size - 16)]
