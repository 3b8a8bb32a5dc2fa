"""Standalone runtime: ROS 2 nodes on the ``cyclonedds`` wheel, following rmw_cyclonedds_cpp's wire conventions.

What a ROS 2 (Jazzy, rmw_cyclonedds_cpp) graph sees of a node running here:

- topic ``/a/b`` is the DDS topic ``rt/a/b``; service ``/s`` is the pair ``rq/sRequest`` / ``rr/sReply``;
- type ``pkg/msg/Name`` is the DDS type ``pkg::msg::dds_::Name_``, a final struct written as plain CDR (XCDR1);
  service samples start with rmw_cyclonedds' request header (``uint64`` client guid, ``int64`` sequence number);
- endpoint QoS is the rclpy profile asked for, plus USER_DATA ``typehash=RIHS01_<hex>;`` (Jazzy; computed with
  rosbags from the type description, the service's own description for service endpoints);
- the participant's USER_DATA is ``enclave=/;``, as rmw_cyclonedds sets it;
- the participant publishes ``ros_discovery_info`` (its nodes and their endpoint GIDs, :mod:`.graph`), and each node
  serves the rcl_interfaces parameter services and publishes ``/parameter_events`` (:mod:`.parameter_services`), so
  ``ros2 node``, ``ros2 topic info -v`` and ``ros2 param`` see standalone nodes as rclpy ones;
- ``ROS_DOMAIN_ID`` selects the domain; ``ROS_AUTOMATIC_DISCOVERY_RANGE`` (``LOCALHOST``, ``OFF``, ``SUBNET``,
  ``SYSTEM_DEFAULT``), the older ``ROS_LOCALHOST_ONLY=1`` and ``ROS_STATIC_PEERS`` are turned into a Cyclone
  configuration fragment appended to ``$CYCLONEDDS_URI`` as rmw_cyclonedds does.

One process holds one :class:`DdsContext` (one DDS participant, as rclpy's context). Each :class:`DdsNode` runs its
callbacks in the thread that spins it (single-threaded, like rclpy's default executor). Samples are taken as raw
CDR and decoded one by one, so an undecodable sample or an invalid sample (dispose/unregister notification) is
counted and skipped, never raised into the node.

This module uses two functions of the cyclonedds C layer (``ddspy_take``, ``ddspy_write``) to move raw CDR: that
is what makes per-sample error handling and byte-exact bag record/play possible.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.core import DDSException, InstanceState, SampleState, ViewState

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime.graph import DISCOVERY_TOPIC, DISCOVERY_TYPE, QOS_DISCOVERY, ParticipantEntities, gid
from flexrobot_ros.runtime.messages import (dds_message_types, default_distro, message_fields, type_hash,
                                            type_name_of)
from flexrobot_ros.runtime.names import (Remapping, fully_qualified_node_name, normalize_namespace, resolve_name,
                                         validate_node_name)
from flexrobot_ros.runtime.node import Node
from flexrobot_ros.runtime.parameter_services import ParameterServer
from flexrobot_ros.runtime.params import ParameterSpec, parameters_for_node, validate_parameter
from flexrobot_ros.runtime.parent_watch import ParentWatch
from flexrobot_ros.runtime.qos import QOS_DEFAULT, QOS_SERVICES, QosProfile
from flexrobot_ros.runtime.time_source import (CLOCK_TOPIC, QOS_CLOCK, USE_SIM_TIME, USE_SIM_TIME_SPEC, SteadyClock,
                                               TimeSource)
from flexrobot_ros.runtime.vendors import cross_vendor_error, vendor_of

_MASK_64 = (1 << 64) - 1
#: Sample mask of a take: every sample, read or not, of any view and instance state.
_ANY_SAMPLE = int(SampleState.Any | ViewState.Any | InstanceState.Any)


# --------------------------------------------------------------------------------------------------------------
# Discovery configuration and the per-process context
# --------------------------------------------------------------------------------------------------------------

def discovery_range(environ: dict[str, str] | None = None) -> str:
    """``LOCALHOST``, ``OFF``, ``SUBNET`` or ``SYSTEM_DEFAULT`` from ROS 2's environment variables.

    ``ROS_AUTOMATIC_DISCOVERY_RANGE`` wins; otherwise ``ROS_LOCALHOST_ONLY=1`` (Humble) means ``LOCALHOST``.

    Raises:
        RuntimeLayerError: an unknown range.
    """
    env = os.environ if environ is None else environ
    value = env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "").strip().upper()
    if not value:
        return "LOCALHOST" if env.get("ROS_LOCALHOST_ONLY", "").strip() == "1" else "SYSTEM_DEFAULT"
    if value not in ("LOCALHOST", "OFF", "SUBNET", "SYSTEM_DEFAULT"):
        raise RuntimeLayerError(f"ROS_AUTOMATIC_DISCOVERY_RANGE={value!r}: expected LOCALHOST, OFF, SUBNET or "
                                "SYSTEM_DEFAULT")
    return value


def discovery_config(environ: dict[str, str] | None = None) -> str | None:
    """Cyclone configuration for the discovery settings, appended to ``$CYCLONEDDS_URI``; None when there is
    nothing to add (then Cyclone reads ``$CYCLONEDDS_URI`` itself)."""
    env = os.environ if environ is None else environ
    scope = discovery_range(env)
    peers = [p.strip() for p in env.get("ROS_STATIC_PEERS", "").split(";") if p.strip()]
    general, discovery = "", ""
    if scope in ("LOCALHOST", "OFF"):
        general = ("<General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces>"
                   "<AllowMulticast>false</AllowMulticast></General>")
        if scope == "LOCALHOST":
            peers = ["localhost", *peers]
    if peers:
        discovery = ("<Discovery><ParticipantIndex>auto</ParticipantIndex>"
                     "<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers>"
                     + "".join(f"<Peer address=\"{p}\"/>" for p in peers) + "</Peers></Discovery>")
    elif scope == "OFF":
        discovery = "<Discovery><ParticipantIndex>none</ParticipantIndex></Discovery>"
    if not general and not discovery:
        return None
    # rmw_cyclonedds writes "${CYCLONEDDS_URI}${CYCLONEDDS_URI:+,}<fragment>"; the Domain constructor of the Python
    # binding does not expand variables (it would open a file named "${CYCLONEDDS_URI}..."), so expand it here.
    user = env.get("CYCLONEDDS_URI", "").strip()
    return f"{user}{',' if user else ''}<CycloneDDS><Domain id=\"any\">{general}{discovery}</Domain></CycloneDDS>"


def domain_id(environ: dict[str, str] | None = None) -> int:
    """``ROS_DOMAIN_ID`` (default 0).

    Raises:
        RuntimeLayerError: not an integer in 0..232.
    """
    env = os.environ if environ is None else environ
    text = env.get("ROS_DOMAIN_ID", "").strip() or "0"
    if not text.isdigit() or int(text) > 232:
        raise RuntimeLayerError(f"ROS_DOMAIN_ID={text!r}: expected an integer in 0..232")
    return int(text)


def _delete(entity: Any) -> None:
    """Delete a cyclonedds entity now rather than at garbage collection."""
    if entity._entities.pop(entity._ref, None) is not None:
        entity._delete(entity._ref)


class DdsContext:
    """The process's DDS participant, its publisher and subscriber, and the topics created so far."""

    def __init__(self) -> None:
        from cyclonedds.core import Policy, Qos
        from cyclonedds.domain import Domain, DomainParticipant
        from cyclonedds.pub import Publisher
        from cyclonedds.sub import Subscriber

        self.domain_id = domain_id()
        config = discovery_config()
        self._domain = Domain(self.domain_id, config) if config else None
        self.participant = DomainParticipant(self.domain_id, qos=Qos(Policy.Userdata(data=b"enclave=/;")))
        self.publisher = Publisher(self.participant)
        self.subscriber = Subscriber(self.participant)
        self._topics: dict[tuple[str, type], Any] = {}
        self._lock = threading.Lock()
        self.entities = ParticipantEntities(gid(self.participant))
        self._discovery: tuple[Any, Any] | None = None  # (writer, message types) of ros_discovery_info
        self._discovery_lock = threading.Lock()

    def topic(self, name: str, cls: type) -> Any:
        """The DDS topic ``name`` of sample type ``cls`` (created once)."""
        from cyclonedds.topic import Topic

        with self._lock:
            key = (name, cls)
            if key not in self._topics:
                self._topics[key] = Topic(self.participant, name, cls)
            return self._topics[key]

    def add_node(self, node: DdsNode) -> None:
        """Announce a node on ``ros_discovery_info`` (see :mod:`.graph`)."""
        self.entities.add_node(id(node), node.namespace, node.name)
        self.announce(node.distro)

    def add_endpoints(self, node: DdsNode, readers: Sequence[Any] = (), writers: Sequence[Any] = ()) -> None:
        """Announce DDS readers / writers as the node's endpoints."""
        self.entities.add_endpoints(id(node), [gid(r) for r in readers], [gid(w) for w in writers])
        self.announce(node.distro)

    def remove_node(self, node: DdsNode) -> None:
        """Withdraw a node and its endpoints from ``ros_discovery_info``."""
        if self.entities.remove_node(id(node)):
            self.announce(node.distro)

    def announce(self, distro: str) -> None:
        """Write the participant's current ``ParticipantEntitiesInfo`` (the writer is made on first use)."""
        from cyclonedds.pub import DataWriter

        with self._discovery_lock:
            if self._discovery is None:
                types = dds_message_types(distro)
                cls = types.get(DISCOVERY_TYPE)
                writer = DataWriter(self.publisher, self.topic(DISCOVERY_TOPIC, cls),
                                    endpoint_qos(QOS_DISCOVERY, DISCOVERY_TYPE, distro, reader=False))
                self._discovery = writer, types
            writer, types = self._discovery
            writer.write(self.entities.message(types))

    def close(self) -> None:
        """Delete the participant and everything in it."""
        self._topics.clear()
        _delete(self.participant)


_context: DdsContext | None = None
_context_lock = threading.Lock()


def context() -> DdsContext:
    """The process's DDS context (created on first use)."""
    global _context
    with _context_lock:
        if _context is None:
            _context = DdsContext()
        return _context


def shutdown() -> None:
    """Delete the process's DDS participant (nodes must not be used afterwards)."""
    global _context
    with _context_lock:
        if _context is not None:
            _context.close()
            _context = None


def endpoint_qos(profile: QosProfile, typename: str | None, distro: str, *, reader: bool) -> Any:
    """cyclonedds QoS of a ROS 2 profile, with XCDR1 data representation and the Jazzy ``typehash`` USER_DATA."""
    from cyclonedds.core import Policy, Qos
    from cyclonedds.util import duration

    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=1)) if profile.reliability == "reliable"
        else Policy.Reliability.BestEffort,
        Policy.Durability.TransientLocal if profile.durability == "transient_local" else Policy.Durability.Volatile,
        Policy.History.KeepLast(profile.depth) if profile.history == "keep_last" else Policy.History.KeepAll,
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if profile.history == "keep_all" and reader:
        policies.append(Policy.ResourceLimits(max_samples=-1, max_instances=-1, max_samples_per_instance=-1))
    digest = type_hash(typename, distro) if typename else None
    if digest:
        policies.append(Policy.Userdata(data=f"typehash={digest};".encode()))
    return Qos(*policies)


#: Samples a subscription takes per ``spin_once`` (then the node's timers, services and other readers have a turn).
TAKE_BATCH = 256


def _take_raw(reader: Any, count: int = TAKE_BATCH) -> list[tuple[bytes, Any]]:
    """Up to ``count`` samples as (raw CDR with encapsulation header, SampleInfo), invalid ones included. (Called
    for every reader at every wake-up of a node: the C call alone, 0.6 us when empty.)"""
    result = ddspy_take(reader._ref, _ANY_SAMPLE, count)
    if isinstance(result, int):
        raise DDSException(result, "while taking samples")
    return result


# --------------------------------------------------------------------------------------------------------------
# Entities
# --------------------------------------------------------------------------------------------------------------

class DdsPublisher:
    """Publisher on ``rt/<topic>``; ``publish(msg)`` checks the message type and reports serialization errors."""

    def __init__(self, node: DdsNode, cls: type, topic: str, qos: QosProfile) -> None:
        from cyclonedds.pub import DataWriter

        self.topic_name = topic
        self.msg_type = cls
        self.typename = type_name_of(cls)
        ctx = node.context
        self._writer = DataWriter(ctx.publisher, ctx.topic("rt" + topic, cls),
                                  endpoint_qos(qos, self.typename, node.distro, reader=False))
        ctx.add_endpoints(node, writers=[self._writer])

    def publish(self, msg: Any) -> None:
        """Send one message.

        Raises:
            RuntimeLayerError: ``msg`` is not of the publisher's type, or a field holds a value its type cannot
                take (the message names the topic and the field).
        """
        if type(msg) is not self.msg_type:
            raise RuntimeLayerError(f"topic {self.topic_name}: expected a {self.typename} message, got "
                                    f"{type(msg).__name__}")
        try:
            self._writer.write(msg)
        except Exception as error:
            detail = f"{error}: {error.__cause__}" if error.__cause__ else str(error)
            raise RuntimeLayerError(f"topic {self.topic_name}: cannot serialize {self.typename}: {detail}") from error

    def publish_raw(self, data: bytes) -> None:
        """Send one already serialized sample (CDR with its 4-byte encapsulation header), e.g. from a bag."""
        padded = bytes(data).ljust((len(data) + 3) & ~3, b"\0")
        if ddspy_write(self._writer._ref, padded) < 0:
            raise RuntimeLayerError(f"topic {self.topic_name}: the DDS writer refused a raw sample")

    def get_subscription_count(self) -> int:
        """Number of subscriptions matched with this publisher."""
        return len(self._writer.get_matched_subscriptions())

    def wait_for_acks(self, timeout_sec: float) -> bool:
        """Wait until reliable subscribers acknowledged everything sent; False on timeout."""
        from cyclonedds.util import duration

        try:
            return bool(self._writer.wait_for_acks(duration(seconds=timeout_sec)))
        except (DDSException, AttributeError):  # cyclonedds 11 raises AttributeError on its timeout path
            return False

    def destroy(self) -> None:
        _delete(self._writer)


class DdsSubscription:
    """Subscription on ``rt/<topic>``. ``raw=True`` hands ``callback(cdr_bytes, receive_time_ns)`` the undecoded
    sample instead (bag recording)."""

    def __init__(self, node: DdsNode, cls: type, topic: str, callback: Callable[..., Any], qos: QosProfile,
                 raw: bool = False) -> None:
        from cyclonedds.core import ReadCondition
        from cyclonedds.sub import DataReader

        self.topic_name = topic
        self.msg_type = cls
        self.typename = type_name_of(cls)
        self._node, self._callback, self._raw = node, callback, raw
        ctx = node.context
        self._reader = DataReader(ctx.subscriber, ctx.topic("rt" + topic, cls),
                                  endpoint_qos(qos, self.typename, node.distro, reader=True))
        self.condition = ReadCondition(self._reader, _ANY_SAMPLE)
        ctx.add_endpoints(node, readers=[self._reader])

    def get_publisher_count(self) -> int:
        """Number of publishers matched with this subscription."""
        return len(self._reader.get_matched_publications())

    def take_and_dispatch(self) -> int:
        """Take one batch of samples (at most :data:`TAKE_BATCH`) and call the callback for the valid, decodable
        ones; count the others. What is left keeps the reader's condition triggered, so the next ``spin_once``
        returns at once and takes the next batch: the node's timers, services and other readers take turns with a
        stream that arrives faster than the callbacks handle it (taking until the reader was empty, one
        ``spin_once`` of a starved process ran for a minute while 1 kHz samples kept coming)."""
        return self._dispatch(_take_raw(self._reader, TAKE_BATCH))

    def drain(self) -> int:
        """Take and dispatch every sample the reader holds now (a bag about to close writes them all)."""
        handled = 0
        while True:
            batch = _take_raw(self._reader, TAKE_BATCH)
            handled += self._dispatch(batch)
            if len(batch) < TAKE_BATCH:
                return handled

    def _dispatch(self, batch: list[tuple[bytes, Any]]) -> int:
        handled = 0
        for data, info in batch:
            if not info.valid_data:  # dispose/unregister notifications carry no message
                self._node.invalid_samples += 1
                continue
            if self._raw:
                self._callback(data, time.time_ns())
                handled += 1
                continue
            try:
                msg = self.msg_type.deserialize(data)
            except Exception as error:
                self._node.report_input_error(f"{self.topic_name}: undecodable sample",
                                              f"topic {self.topic_name}: dropped a sample that does not decode "
                                              f"as {self.typename} ({type(error).__name__}: {error})")
                continue
            self._callback(msg)
            handled += 1
        return handled

    def destroy(self) -> None:
        _delete(self.condition)
        _delete(self._reader)


def _fields(message: Any) -> dict[str, Any]:
    return {name: getattr(message, name) for name in message_fields(message)}


class DdsService:
    """Service server on ``rq/<name>Request`` -> ``rr/<name>Reply``; the reply echoes the request header."""

    def __init__(self, node: DdsNode, srv_type: Any, name: str, callback: Callable[[Any, Any], Any]) -> None:
        from cyclonedds.core import ReadCondition
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader

        self.srv_name = name
        self.srv_type = srv_type
        self._node, self._callback = node, callback
        ctx, typename = node.context, srv_type.__srvtype__
        self._reader = DataReader(ctx.subscriber, ctx.topic(f"rq{name}Request", srv_type.wire_request),
                                  endpoint_qos(QOS_SERVICES, typename, node.distro, reader=True))
        self._writer = DataWriter(ctx.publisher, ctx.topic(f"rr{name}Reply", srv_type.wire_response),
                                  endpoint_qos(QOS_SERVICES, typename, node.distro, reader=False))
        self.condition = ReadCondition(self._reader, _ANY_SAMPLE)
        ctx.add_endpoints(node, readers=[self._reader], writers=[self._writer])
        self._request_fields = [f for f in message_fields(srv_type.Request())]

    def take_and_dispatch(self) -> int:
        """Answer every pending request."""
        handled = 0
        for data, info in _take_raw(self._reader):
            if not info.valid_data:
                self._node.invalid_samples += 1
                continue
            try:
                wire = self.srv_type.wire_request.deserialize(data)
            except Exception as error:
                self._node.report_input_error(f"{self.srv_name}: undecodable request",
                                              f"service {self.srv_name}: dropped an undecodable request "
                                              f"({type(error).__name__}: {error})")
                continue
            request = self.srv_type.Request(**{f: getattr(wire, f) for f in self._request_fields})
            response = self._callback(request, self.srv_type.Response())
            if not isinstance(response, self.srv_type.Response):
                response = self.srv_type.Response()
            self._wait_for_reply_reader()
            self._writer.write(self.srv_type.wire_response(client_guid=wire.client_guid,
                                                           sequence_number=wire.sequence_number,
                                                           **_fields(response)))
            handled += 1
        return handled

    def _wait_for_reply_reader(self, timeout_sec: float = 1.0) -> None:
        """A request can arrive before our reply writer has discovered the client's reply reader; wait briefly."""
        deadline = time.monotonic() + timeout_sec
        while not self._writer.get_matched_subscriptions() and time.monotonic() < deadline:
            time.sleep(0.005)

    def destroy(self) -> None:
        _delete(self.condition)
        _delete(self._reader)
        _delete(self._writer)


class DdsClient:
    """Service client. ``guid`` is the request writer's instance handle (as rmw_cyclonedds uses it); replies with
    another guid or sequence number are ignored.

    A server on another DDS implementation (an rclpy node on Fast DDS) matches the client's endpoints but never
    answers (:mod:`.vendors`): :meth:`service_is_ready`, :meth:`wait_for_service`, :meth:`call` and
    :meth:`call_async` raise a RuntimeLayerError saying so as soon as the servers discovered are all on another
    vendor (a call also while it waits), instead of waiting out their timeouts."""

    def __init__(self, node: DdsNode, srv_type: Any, name: str) -> None:
        from cyclonedds.core import ReadCondition, WaitSet
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader

        self.srv_name = name
        self.srv_type = srv_type
        ctx, typename = node.context, srv_type.__srvtype__
        self._writer = DataWriter(ctx.publisher, ctx.topic(f"rq{name}Request", srv_type.wire_request),
                                  endpoint_qos(QOS_SERVICES, typename, node.distro, reader=False))
        self._reader = DataReader(ctx.subscriber, ctx.topic(f"rr{name}Reply", srv_type.wire_response),
                                  endpoint_qos(QOS_SERVICES, typename, node.distro, reader=True))
        self.guid = self._writer.get_instance_handle() & _MASK_64
        self._vendor = vendor_of(gid(ctx.participant))
        ctx.add_endpoints(node, readers=[self._reader], writers=[self._writer])
        self._condition = ReadCondition(self._reader, _ANY_SAMPLE)
        self._waitset = WaitSet(ctx.participant)
        self._waitset.attach(self._condition)
        self._sequence = itertools.count(1)
        self._call_lock = threading.Lock()
        self._response_fields = message_fields(srv_type.Response())
        self.ignored_replies = 0

    def server_vendors(self) -> set[bytes]:
        """DDS vendor ids of the servers matched so far (of their request readers and reply writers)."""
        vendors = set()
        writer, reader = self._writer, self._reader
        for describe, handles in ((writer.get_matched_subscription_data, writer.get_matched_subscriptions()),
                                  (reader.get_matched_publication_data, reader.get_matched_publications())):
            for handle in handles:
                try:
                    endpoint = describe(handle)
                except DDSException:  # unmatched since the handles were listed
                    continue
                if endpoint is not None:
                    vendors.add(vendor_of(endpoint.key.bytes))
        return vendors

    def check_servers(self) -> None:
        """Raise when every server matched so far is on another DDS vendor (see the class docstring).

        Raises:
            RuntimeLayerError: names the service, both runtimes and how to run both on one.
        """
        error = cross_vendor_error(self.srv_name, self.server_vendors(), self._vendor, "dds")
        if error is not None:
            raise error

    def service_is_ready(self) -> bool:
        """True when a server's request reader and reply writer are both matched.

        Raises:
            RuntimeLayerError: the servers matched are all on another DDS vendor (:meth:`check_servers`).
        """
        self.check_servers()
        return bool(self._writer.get_matched_subscriptions()) and bool(self._reader.get_matched_publications())

    def wait_for_service(self, timeout_sec: float | None = None) -> bool:
        """Wait until :meth:`service_is_ready` (forever when ``timeout_sec`` is None); its final value.

        Raises:
            RuntimeLayerError: a server on another DDS vendor was found (:meth:`check_servers`).
        """
        deadline = None if timeout_sec is None else time.monotonic() + timeout_sec
        while not self.service_is_ready():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def call(self, request: Any, timeout_sec: float = 5.0) -> Any:
        """Send ``request`` and wait for its response.

        Raises:
            RuntimeLayerError: wrong request type, no response within ``timeout_sec``, or the server is on another
                DDS vendor (:meth:`check_servers`, also while waiting).
        """
        if type(request) is not self.srv_type.Request:
            raise RuntimeLayerError(f"service {self.srv_name}: expected a {self.srv_type.__srvtype__} request, got "
                                    f"{type(request).__name__}")
        self.check_servers()
        with self._call_lock:
            sequence = next(self._sequence)
            self._writer.write(self.srv_type.wire_request(client_guid=self.guid, sequence_number=sequence,
                                                          **_fields(request)))
            deadline = time.monotonic() + timeout_sec
            while True:
                for data, info in _take_raw(self._reader):
                    if not info.valid_data:
                        continue
                    try:
                        wire = self.srv_type.wire_response.deserialize(data)
                    except Exception:
                        self.ignored_replies += 1
                        continue
                    if (wire.client_guid & _MASK_64) != self.guid or wire.sequence_number != sequence:
                        self.ignored_replies += 1  # another client's reply, or a stale one of ours
                        continue
                    return self.srv_type.Response(**{f: getattr(wire, f) for f in self._response_fields})
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeLayerError(f"service {self.srv_name}: no response within {timeout_sec} s")
                self.check_servers()  # a server discovered meanwhile
                self._waitset.wait(int(min(remaining, 0.1) * 1e9))

    def call_async(self, request: Any, timeout_sec: float = 30.0) -> concurrent.futures.Future:
        """:meth:`call` in a background thread; the future's ``result()`` is the response.

        Raises:
            RuntimeLayerError: at once, when the servers matched so far are all on another DDS vendor.
        """
        self.check_servers()
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(self.call(request, timeout_sec))
            except BaseException as error:
                future.set_exception(error)

        threading.Thread(target=run, name=f"call {self.srv_name}", daemon=True).start()
        return future

    def destroy(self) -> None:
        self._waitset.detach(self._condition)
        _delete(self._condition)
        _delete(self._reader)
        _delete(self._writer)


class DdsTimer:
    """Periodic callback on ``clock`` (a :class:`~.time_source.RosClock` or :class:`~.time_source.SteadyClock`), in
    integer nanoseconds: missed periods are skipped and the phase is kept (rcl's ``rcl_timer_call``); when the clock
    went back more than a period (a replayed or restarted ``/clock``), the next call is one period from the new time."""

    def __init__(self, period_sec: float, callback: Callable[[], Any], clock: Any) -> None:
        if not period_sec > 0:
            raise RuntimeLayerError(f"timer period must be > 0 s, got {period_sec}")
        self.timer_period_ns = max(1, int(round(period_sec * 1e9)))
        self._callback = callback
        self.clock = clock
        self.next_due_ns = clock.now_ns() + self.timer_period_ns
        self.cancelled = False

    def fire_if_due(self) -> bool:
        if self.cancelled:
            return False
        now, period = self.clock.now_ns(), self.timer_period_ns
        if now < self.next_due_ns - period:  # the clock jumped back
            self.next_due_ns = now + period
            return False
        if now < self.next_due_ns:
            return False
        self.next_due_ns += ((now - self.next_due_ns) // period + 1) * period
        self._callback()
        return True

    def wall_time_left(self) -> float | None:
        """Seconds of wall time until the next call, None when the clock is simulated (``/clock`` decides)."""
        return None if self.cancelled or not self.clock.steady else (self.next_due_ns - self.clock.now_ns()) * 1e-9

    def rebase(self, before_ns: int) -> None:
        """Keep the time left after the clock changed (``before_ns``: the old clock's time at the change)."""
        self.next_due_ns = self.clock.now_ns() + (self.next_due_ns - before_ns)

    def cancel(self) -> None:
        self.cancelled = True

    def reset(self) -> None:
        self.cancelled = False
        self.next_due_ns = self.clock.now_ns() + self.timer_period_ns


# --------------------------------------------------------------------------------------------------------------
# Node and executor
# --------------------------------------------------------------------------------------------------------------

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "warning": logging.WARNING,
           "error": logging.ERROR, "fatal": logging.CRITICAL}


class _RosFormatter(logging.Formatter):
    """``[INFO] [1700000000.123456789] [node]: message``, as ROS 2's console output."""

    def format(self, record: logging.LogRecord) -> str:
        level = {"WARNING": "WARN", "CRITICAL": "FATAL"}.get(record.levelname, record.levelname)
        return f"[{level}] [{record.created:.9f}] [{record.name.split('.', 1)[1]}]: {record.getMessage()}"


def _make_logger(name: str, level: str | None) -> logging.Logger:
    logger = logging.getLogger(f"flexrobot.{name}")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_RosFormatter())
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(_LEVELS.get((level or "info").lower(), logging.INFO))
    if not hasattr(logger, "fatal"):
        logger.fatal = logger.critical  # type: ignore[attr-defined]
    return logger


class DdsNode(Node):
    """A node of the standalone runtime (see :class:`~flexrobot_ros.runtime.node.Node` for the interface).

    Args:
        start_parameter_services: serve the parameter services and publish ``/parameter_events`` (rclpy's
            ``start_parameter_services``); tools' helper nodes may leave them out.
    """

    backend = "dds"

    def __init__(self, name: str, *, namespace: str | None = None, parameter_files: Sequence[str] = (),
                 parameter_overrides: dict[str, Any] | None = None, remappings: Sequence[Remapping] = (),
                 log_level: str | None = None, distro: str | None = None,
                 start_parameter_services: bool = True) -> None:
        super().__init__()
        from cyclonedds.core import GuardCondition, WaitSet

        self._name = validate_node_name(name)
        self._namespace = normalize_namespace(namespace)
        self.distro = distro or default_distro()
        self.types = dds_message_types(self.distro)
        self.context = context()
        self._parameter_files = list(parameter_files)
        self._parameter_overrides = dict(parameter_overrides or {})
        self._remappings = list(remappings)
        self._logger = _make_logger(fully_qualified_node_name(self._name, self._namespace).lstrip("/"), log_level)
        self.invalid_samples = 0
        self._subscriptions: list[Any] = []
        self._services: list[DdsService] = []
        self._timers: list[DdsTimer] = []
        self._others: list[Any] = []
        self._waitset = WaitSet(self.context.participant)
        self._wakeup = GuardCondition(self.context.participant)
        self._waitset.attach(self._wakeup)
        self._stop = threading.Event()
        self.context.add_node(self)
        self._parameter_server = ParameterServer(self) if start_parameter_services else None
        self._time = TimeSource(
            lambda callback: self.create_subscription(self.types.rosgraph_msgs.msg.Clock, CLOCK_TOPIC, callback,
                                                      QOS_CLOCK),
            self.destroy_subscription)
        self._declare_use_sim_time()

    # identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def namespace(self) -> str:
        return self._namespace

    def resolve_name(self, name: str) -> str:
        return resolve_name(name, self._name, self._namespace, self._remappings)

    @property
    def logger(self) -> logging.Logger:
        return self._logger

    def now(self) -> float:
        """ROS time [s]: the system clock, or the newest ``/clock`` with ``use_sim_time`` (0 before the first)."""
        return self._time.now_ns() / 1e9

    def stamp(self, seconds: float | None = None) -> Any:
        if seconds is not None:
            return super().stamp(seconds)
        sec, nanosec = divmod(self._time.now_ns(), 1_000_000_000)  # exact: /clock stamps pass through unrounded
        return self.types.builtin_interfaces.msg.Time(sec=sec, nanosec=nanosec)

    @property
    def use_sim_time(self) -> bool:
        """Whether the node's time follows ``/clock``."""
        return self._time.active

    # parameters
    def _given(self) -> dict[str, tuple[Any, str]]:
        """{name: (value, source)} from the parameter files and command-line overrides."""
        given = parameters_for_node(self._parameter_files, self.fully_qualified_name)
        given.update({k: (v, "a command-line override") for k, v in self._parameter_overrides.items()})
        return given

    def _declare_use_sim_time(self) -> None:
        """Declare ``use_sim_time`` first, as rclpy's node does (see :mod:`.time_source`)."""
        value, source = self._given().get(USE_SIM_TIME, (USE_SIM_TIME_SPEC.default, "its declared default"))
        value = validate_parameter(USE_SIM_TIME_SPEC, value, source)
        with self._parameter_lock:
            self._parameters[USE_SIM_TIME] = value
            self._specs[USE_SIM_TIME] = USE_SIM_TIME_SPEC
        self._set_sim_time(value)
        if self._parameter_server is not None:
            self._parameter_server.announce(new={USE_SIM_TIME: value})

    def _set_sim_time(self, active: bool) -> None:
        """Switch the ROS clock; node timers keep the time they had left."""
        timers = [(timer, timer.clock.now_ns()) for timer in self._timers if timer.clock is self._time.clock]
        self._time.set_active(active)
        for timer, before in timers:
            timer.rebase(before)
        self._wakeup.set(True)

    def _declare(self, specs: list[ParameterSpec]) -> dict[str, Any]:
        given = self._given()
        values = {}
        for spec in specs:
            value, source = given.get(spec.name, (spec.default, "its declared default"))
            values[spec.name] = validate_parameter(spec, value, source, self.fully_qualified_name)
        unknown = sorted(set(given) - {s.name for s in specs} - set(self._parameters))
        if unknown:
            self.log_once(f"undeclared {unknown}", f"parameters given but not declared by {self.fully_qualified_name}"
                                                   f" (typos?): {unknown}")
        return values

    def declare_parameters(self, specs: Sequence[ParameterSpec]) -> dict[str, Any]:
        values = super().declare_parameters(specs)
        if self._parameter_server is not None:
            self._parameter_server.announce(new=values)
        return values

    def set_parameters(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        successful, reason = self._apply_parameters(values)
        if successful and USE_SIM_TIME in values:
            self._set_sim_time(self.parameters[USE_SIM_TIME])
        if successful and values and self._parameter_server is not None:
            current = self.parameters
            self._parameter_server.announce(changed={name: current[name] for name in values})
        return successful, reason

    # entities
    def _message_class(self, msg_type: Any) -> type:
        if isinstance(msg_type, str):
            return self.types.get(msg_type)
        return msg_type

    def create_publisher(self, msg_type: type, topic: str, qos: QosProfile = QOS_DEFAULT) -> DdsPublisher:
        publisher = DdsPublisher(self, self._message_class(msg_type), self.resolve_name(topic), qos)
        self._others.append(publisher)
        return publisher

    def create_raw_publisher(self, typename: str, topic: str, qos: QosProfile = QOS_DEFAULT) -> DdsPublisher:
        """Publisher of ``typename`` for already serialized samples (``publish_raw``), e.g. bag playback."""
        return self.create_publisher(self.types.get(typename), topic, qos)

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            qos: QosProfile = QOS_DEFAULT) -> DdsSubscription:
        name = self.resolve_name(topic)
        subscription = DdsSubscription(self, self._message_class(msg_type), name,
                                       self.guard(callback, f"subscription {name}"), qos)
        return self._attach(subscription, self._subscriptions)

    def destroy_subscription(self, subscription: DdsSubscription) -> None:
        """Stop receiving on ``subscription`` and delete it."""
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)
            self._waitset.detach(subscription.condition)
            subscription.destroy()

    def create_raw_subscription(self, typename: str, topic: str, callback: Callable[[bytes, int], None],
                                qos: QosProfile = QOS_DEFAULT) -> DdsSubscription:
        """Subscription handing ``callback(cdr_bytes, receive_time_ns)`` undecoded samples (bag recording)."""
        name = self.resolve_name(topic)
        subscription = DdsSubscription(self, self.types.get(typename), name,
                                       self.guard(callback, f"subscription {name}"), qos, raw=True)
        return self._attach(subscription, self._subscriptions)

    def create_service(self, srv_type: Any, name: str, callback: Callable[[Any, Any], Any]) -> DdsService:
        resolved = self.resolve_name(name)
        service = DdsService(self, self._message_class(srv_type), resolved,
                             self.guard(callback, f"service {resolved}"))
        return self._attach(service, self._services)

    def create_client(self, srv_type: Any, name: str) -> DdsClient:
        client = DdsClient(self, self._message_class(srv_type), self.resolve_name(name))
        self._others.append(client)
        return client

    def call(self, client: DdsClient, request: Any, timeout_sec: float = 5.0) -> Any:
        return client.call(request, timeout_sec)

    def create_timer(self, period_sec: float, callback: Callable[[], None]) -> DdsTimer:
        return self._add_timer(DdsTimer(period_sec, self.guard(callback, "timer"), self._time.clock))

    def create_wall_timer(self, period_sec: float, callback: Callable[[], None]) -> DdsTimer:
        return self._add_timer(DdsTimer(period_sec, self.guard(callback, "timer"), SteadyClock()))

    def _add_timer(self, timer: DdsTimer) -> DdsTimer:
        self._timers.append(timer)
        self._wakeup.set(True)  # the executor recomputes its wait time
        return timer

    def _attach(self, entity: Any, registry: list[Any]) -> Any:
        self._waitset.attach(entity.condition)
        registry.append(entity)
        return entity

    # executor
    def spin_once(self, timeout_sec: float = 0.1) -> None:
        """Wait up to ``timeout_sec`` for data (``/clock`` included) or the next wall-clock timer, then run every
        ready callback. Due timers also run after each subscription's batch, so a timer (a bag's 0.25 s checkpoint)
        waits for one batch of one reader, not for a pass over every reader of a process that is behind its streams."""
        left = [t.wall_time_left() for t in self._timers]
        wait = max(0.0, min([timeout_sec, *(s for s in left if s is not None)]))
        if wait > 0:
            self._waitset.wait(int(wait * 1e9))
        self._wakeup.take()
        for subscription in list(self._subscriptions):
            if subscription.take_and_dispatch():
                self._fire_due_timers()
        for service in list(self._services):
            service.take_and_dispatch()
        self._fire_due_timers()

    def _fire_due_timers(self) -> None:
        for timer in list(self._timers):
            timer.fire_if_due()

    def spin(self, duration_sec: float | None = None, parent: ParentWatch | None = None) -> str:
        """Run callbacks until :meth:`request_stop` (or SIGINT/SIGTERM via ``run_node``), ``duration_sec``, or the
        death of the ``parent`` process (checked at least every 0.1 s). Returns why it ended: ``"stop"``,
        ``"duration"`` or ``"parent"``."""
        deadline = None if duration_sec is None else time.monotonic() + duration_sec
        while not self._stop.is_set():
            if parent is not None and parent.parent_gone():
                return "parent"
            remaining = 0.1 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return "duration"
            self.spin_once(min(remaining, 0.1))
        return "stop"

    def request_stop(self) -> None:
        """Make :meth:`spin` return (safe from signal handlers and other threads)."""
        self._stop.set()
        self._wakeup.set(True)

    @property
    def stop_requested(self) -> bool:
        """Whether :meth:`request_stop` was called (SIGINT/SIGTERM under ``run_node``)."""
        return self._stop.is_set()

    def destroy(self) -> None:
        self.request_stop()
        self.context.remove_node(self)
        for subscription in self._subscriptions + self._services:
            self._waitset.detach(subscription.condition)
        for entity in self._subscriptions + self._services + self._others:
            entity.destroy()
        for timer in self._timers:
            timer.cancel()
        self._subscriptions, self._services, self._others, self._timers = [], [], [], []


def install_stop_signals(node: DdsNode) -> Callable[[], None]:
    """SIGINT and SIGTERM stop ``node``'s spin; returns a function restoring the previous handlers."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: node.request_stop())

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
