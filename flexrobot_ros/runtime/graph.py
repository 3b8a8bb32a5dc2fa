"""What a standalone process tells ROS 2 graph tools about its nodes: the ``ros_discovery_info`` message.

DDS discovery shows participants, readers and writers, but not ROS nodes. Every ROS 2 process publishes, per DDS
participant, one ``rmw_dds_common/msg/ParticipantEntitiesInfo`` on the DDS topic ``ros_discovery_info`` (no ``rt/``
prefix): the participant's GID and, for each node it holds, the node's namespace and name and the GIDs of the node's
readers and writers. ``ros2 node list/info`` and ``ros2 topic info -v`` name nodes from it (rmw_dds_common's
``GraphCache::update_participant_entities``); an endpoint whose GID no node lists shows as ``_NODE_NAME_UNKNOWN_``.

Conventions followed (rmw_cyclonedds_cpp, Jazzy, ``rmw_node.cpp``): a GID is the entity's 16-byte DDS GUID (GUID
prefix then entity id, as ``dds_get_guid`` gives it), copied into ``Gid.data`` and zero-padded to its length (16 in
Jazzy, 24 in Humble); the writer is reliable, transient-local, keep-last 1, and a new message (the whole participant)
is written whenever a node or an endpoint is added or removed. A service lists its request reader and reply writer
under its node, a client its request writer and reply reader.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterable

from flexrobot_ros.runtime.qos import QosProfile

#: DDS topic name (ROS 2 internal topics are not prefixed with ``rt``).
DISCOVERY_TOPIC = "ros_discovery_info"
#: Type of its samples.
DISCOVERY_TYPE = "rmw_dds_common/msg/ParticipantEntitiesInfo"
#: QoS of the ``ros_discovery_info`` writer (rmw_cyclonedds: reliable, transient local, keep last 1).
QOS_DISCOVERY = QosProfile(reliability="reliable", durability="transient_local", depth=1)


def gid(entity: Any) -> bytes:
    """The 16-byte DDS GUID of a cyclonedds entity (participant, reader, writer): its ROS 2 GID."""
    return entity.guid.bytes


@dataclass
class NodeEntities:
    """One node's entry: namespace, name, and the GIDs of its readers and writers (in creation order)."""

    namespace: str
    name: str
    readers: dict[bytes, None] = field(default_factory=dict)
    writers: dict[bytes, None] = field(default_factory=dict)


class ParticipantEntities:
    """The nodes of one DDS participant and their endpoints, as ``ParticipantEntitiesInfo`` messages.

    Keys identify nodes (two nodes may share a name, as in ROS 2). Thread-safe.
    """

    def __init__(self, participant_gid: bytes) -> None:
        self.participant_gid = bytes(participant_gid)
        self._nodes: dict[Any, NodeEntities] = {}
        self._lock = threading.Lock()

    def add_node(self, key: Any, namespace: str, name: str) -> None:
        with self._lock:
            self._nodes[key] = NodeEntities(namespace, name)

    def remove_node(self, key: Any) -> bool:
        """Forget a node; True when it was known."""
        with self._lock:
            return self._nodes.pop(key, None) is not None

    def add_endpoints(self, key: Any, readers: Iterable[bytes] = (), writers: Iterable[bytes] = ()) -> None:
        with self._lock:
            node = self._nodes.get(key)
            if node is None:  # an entity made after its node was destroyed: nothing to announce it under
                return
            node.readers.update((bytes(g), None) for g in readers)
            node.writers.update((bytes(g), None) for g in writers)

    def remove_endpoints(self, key: Any, readers: Iterable[bytes] = (), writers: Iterable[bytes] = ()) -> None:
        with self._lock:
            node = self._nodes.get(key)
            if node is not None:
                for g in readers:
                    node.readers.pop(bytes(g), None)
                for g in writers:
                    node.writers.pop(bytes(g), None)

    def message(self, types: Any) -> Any:
        """The ``ParticipantEntitiesInfo`` of the current state, built with the message classes ``types``."""
        msg = types.rmw_dds_common.msg
        size = len(msg.Gid().data)

        def as_gid(value: bytes) -> Any:
            return msg.Gid(data=list(value.ljust(size, b"\0")[:size]))

        with self._lock:
            nodes = [msg.NodeEntitiesInfo(node_namespace=n.namespace, node_name=n.name,
                                          reader_gid_seq=[as_gid(g) for g in n.readers],
                                          writer_gid_seq=[as_gid(g) for g in n.writers])
                     for n in self._nodes.values()]
        return msg.ParticipantEntitiesInfo(gid=as_gid(self.participant_gid), node_entities_info_seq=nodes)
