"""The rclpy back end: a thin adapter from the runtime's :class:`~flexrobot_ros.runtime.node.Node` to rclpy.

Everything here is a direct call of the rclpy API of ROS 2 Humble (rclpy 3.3, Python 3.10) and Jazzy (rclpy 7.1,
Python 3.12); entities returned are rclpy's own. Every rclpy name this file uses is listed, with the rclpy source it
was checked against, in ``test/test_runtime_rclpy.py``, which parses this file and refuses any other name. Importing
this module imports rclpy. These places are less obvious than a one-line call:

- Logging: rclpy's ``RcutilsLogger.log`` keeps one context per *call site* (caller's function, file, line and
  instruction) and raises ``ValueError('Logger severity cannot be changed between calls.')`` when one call site
  logs at two severities (``rclpy/impl/rcutils_logger.py``). :meth:`Node.log_once` logs warnings and errors from
  one line, so :attr:`RclpyNode.logger` is a :class:`RosLogger` whose methods are one call site per severity.
- Parameters: declared with a ``ParameterDescriptor`` (type, description, ``floating_point_range`` /
  ``integer_range`` for scalar doubles / integers, read-only; choices and element-wise ranges of arrays in
  ``additional_constraints``, which is all rcl_interfaces offers for them). rclpy applies ``--params-file`` and
  ``-p`` values while declaring and refuses a value of another type (``InvalidParameterTypeException``: ``1`` for a
  double) or outside the range (``InvalidParameterValueException``); both become a
  :class:`~flexrobot_ros.errors.RuntimeLayerError` naming the parameter and node, as on the DDS back end. An empty
  list default cannot type a parameter, so such parameters are declared with their ``Parameter.Type``.
- Service calls: ``rclpy.spin_until_future_complete`` spins the global executor and then removes the node from it,
  and from inside one of the node's callbacks it would re-enter the executor that has to deliver the response.
  Clients are :class:`RclpyClient`, whose ``call_async(request, timeout_sec)`` returns a
  ``concurrent.futures.Future`` as the standalone client's does (a timer fails it after the timeout).
  :meth:`RclpyNode.call` refuses to run inside a callback of a node being spun (use ``call_async`` with
  ``future.add_done_callback``), waits on the future while another thread spins the node, and spins the node itself
  (:meth:`RclpyNode.spin_once`, an executor of the node's own) only when nothing else does.
- Servers on another DDS vendor: a standalone (Cyclone DDS) server matches an rclpy client on Fast DDS but never
  understands its requests (:mod:`.vendors`). :class:`RclpyClient` tells the vendors of the servers from the GIDs of
  the request readers and reply writers in the ROS graph (``get_subscriptions_info_by_topic`` /
  ``get_publishers_info_by_topic`` with ``no_mangle=True`` on the DDS names ``rq/<service>Request`` /
  ``rr/<service>Reply``; ``TopicEndpointInfo.endpoint_gid``, 16 bytes in Jazzy, 24 in Humble, the GUID first in
  both) and raises a RuntimeLayerError saying so instead of waiting.
- Subscriptions: rclpy's executor builds and waits on a wait set of every entity of the node (the parameter
  services, timers, ...) for each message it hands to a callback: 93-147 us of CPU per 6-joint JointState on this
  project's 2-core machine (Jazzy and Kilted alike), 9-15 % of a core for a 1 kHz stream, so a starved process fell
  behind its streams. Each subscription callback here therefore also takes the messages waiting behind the first
  with the call the executor itself makes (:func:`take_message`), at most :data:`TAKE_BATCH`: 16-22 us per message,
  0.15-0.17 x (``bench/rclpy_subscriptions.py``).
- Shutdown: rclpy's own signal handlers (``SignalHandlerOptions.ALL``) shut every context down from a signal
  thread and then let Python raise ``KeyboardInterrupt`` in the main thread wherever it happens to be: inside the
  C++ conversion of a message being taken (``RuntimeError: Unable to convert call argument '0' to Python object``
  from ``Subscription.take_message`` under a 1 kHz stream) or while the executor builds its wait set on the
  context just shut down (``RCLError: failed to initialize wait set: the given context is not valid``); either
  ends the node with a traceback and exit code 1. :func:`run` therefore initializes rclpy with
  ``SignalHandlerOptions.NO`` and installs SIGINT/SIGTERM handlers that only set a stop flag: the spin loop of
  :func:`spin` (an executor of its own, ``spin_once`` at most 0.1 s) sees it between two callbacks, and the
  application's ``close()``, ``destroy_node`` and the context shutdown then run in order in the main thread.
  ``rclpy.shutdown()`` from another thread ends the loop through ``Context.on_shutdown``; an exception the
  executor raises because the context went down under it (the wait-set race above) ends it too. A stop that has
  not ended the process :data:`STOP_REPORT_S` after the signal prints every thread's stack on stderr (``faulthandler``),
  so a hang in a callback or in the middleware's teardown says where it is.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import faulthandler
import functools
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import (InvalidHandle, InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node as RosNode
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from flexrobot_ros.errors import FlexrobotError, RuntimeLayerError
from flexrobot_ros.runtime.messages import rclpy_message_types
from flexrobot_ros.runtime.names import Remapping
from flexrobot_ros.runtime.node import Node, StopRequested
from flexrobot_ros.runtime.parent_watch import ParentWatch
from flexrobot_ros.runtime.parameter_services import build_descriptor
from flexrobot_ros.runtime.params import ParameterSpec, validate_parameter, validate_update
from flexrobot_ros.runtime.qos import QOS_DEFAULT, QosProfile
from flexrobot_ros.runtime.vendors import cross_vendor_error, vendor_of

#: runtime parameter type -> rclpy ``Parameter.Type`` (its ``.value`` is the rcl_interfaces ParameterType constant).
PARAMETER_TYPES = {
    "bool": Parameter.Type.BOOL,
    "integer": Parameter.Type.INTEGER,
    "double": Parameter.Type.DOUBLE,
    "string": Parameter.Type.STRING,
    "bool_array": Parameter.Type.BOOL_ARRAY,
    "integer_array": Parameter.Type.INTEGER_ARRAY,
    "double_array": Parameter.Type.DOUBLE_ARRAY,
    "string_array": Parameter.Type.STRING_ARRAY,
}

#: Where parameter values come from on this back end (for error messages).
ROS_PARAMETERS = "the ROS parameters (--params-file / -p)"

#: Messages one subscription callback handles at most before the executor waits again (then the node's timers,
#: services and other subscriptions have a turn), as the standalone runtime's ``dds_backend.TAKE_BATCH``.
TAKE_BATCH = 256


def take_message(subscription: Any) -> Any | None:
    """The next message waiting on an rclpy subscription, None when none is (or the subscription was destroyed
    meanwhile): the call rclpy's own executor makes per message (``Executor._take_subscription``, and
    ``rclpy.wait_for_message``: ``sub.handle.take_message(sub.msg_type, sub.raw)`` in Humble, Jazzy and Kilted),
    without building a wait set for it."""
    try:
        with subscription.handle:
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
    except InvalidHandle:
        return None
    return None if taken is None else taken[0]


def qos_profile(profile: QosProfile) -> QoSProfile:
    """rclpy ``QoSProfile`` of a runtime profile."""
    return QoSProfile(
        reliability=ReliabilityPolicy.RELIABLE if profile.reliability == "reliable" else ReliabilityPolicy.BEST_EFFORT,
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if profile.durability == "transient_local"
                    else DurabilityPolicy.VOLATILE),
        history=HistoryPolicy.KEEP_LAST if profile.history == "keep_last" else HistoryPolicy.KEEP_ALL,
        depth=profile.depth,
    )


def parameter_descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """``rcl_interfaces/ParameterDescriptor`` of a declaration (shown by ``ros2 param describe``), built as the
    standalone runtime builds it (:func:`~flexrobot_ros.runtime.parameter_services.build_descriptor`)."""
    return build_descriptor(spec, PARAMETER_TYPES[spec.type].value, ParameterDescriptor, FloatingPointRange,
                            IntegerRange)


def init(argv: Sequence[str] | None = None) -> None:
    """``rclpy.init`` once per process (``argv`` may hold ``--ros-args``; ignored once rclpy is initialized)."""
    if not rclpy.ok():
        rclpy.init(args=list(argv) if argv is not None else None)


class RosLogger:
    """The rclpy node logger with one call site per severity (see the module docstring for why)."""

    def __init__(self, logger: Any) -> None:
        self._logger = logger

    def debug(self, message: str) -> None:
        self._logger.debug(message)

    def info(self, message: str) -> None:
        self._logger.info(message)

    def warning(self, message: str) -> None:
        self._logger.warning(message)

    def error(self, message: str) -> None:
        self._logger.error(message)


class RclpyNode(Node):
    """A :class:`~flexrobot_ros.runtime.node.Node` backed by ``rclpy.node.Node`` (available as ``ros_node``).

    Args:
        parameter_files: ROS 2 parameter files, passed to rcl as ``--params-file`` node arguments.
        parameter_overrides: values that win over the files, typed by the declarations (as on the DDS back end).
        remappings: ``-r`` node arguments.
        stop: the node's stop flag (:meth:`request_stop`, :attr:`stop_requested`; :func:`run` gives its signal
            handlers' flag); default a flag of its own.
    """

    backend = "rclpy"

    def __init__(self, name: str, *, namespace: str | None = None, parameter_files: Sequence[str] = (),
                 parameter_overrides: dict[str, Any] | None = None, remappings: Sequence[Remapping] = (),
                 stop: threading.Event | None = None) -> None:
        super().__init__()
        #: Set by :meth:`request_stop`; :func:`spin` ends when it is set.
        self.stop_event = stop if stop is not None else threading.Event()
        init()
        args: list[str] = []
        for path in parameter_files:
            args += ["--params-file", str(path)]
        for rule in remappings:
            args += ["-r", f"{rule.node + ':' if rule.node else ''}{rule.source}:={rule.target}"]
        self.ros_node = RosNode(name, namespace=namespace, cli_args=["--ros-args", *args] if args else None)
        self.types = rclpy_message_types()
        self._overrides = dict(parameter_overrides or {})
        self._logger = RosLogger(self.ros_node.get_logger())
        self._spin_thread: int | None = None
        self._executor: SingleThreadedExecutor | None = None  # spin_once's
        self.ros_node.add_on_set_parameters_callback(self._on_ros_set_parameters)

    @property
    def name(self) -> str:
        return self.ros_node.get_name()

    @property
    def namespace(self) -> str:
        return self.ros_node.get_namespace()

    def resolve_name(self, name: str) -> str:
        return self.ros_node.resolve_topic_name(name)

    @property
    def logger(self) -> RosLogger:
        return self._logger

    def now(self) -> float:
        return self.ros_node.get_clock().now().nanoseconds * 1e-9

    @property
    def use_sim_time(self) -> bool:
        return bool(self.ros_node.get_parameter("use_sim_time").value)

    def stamp(self, seconds: float | None = None) -> Any:
        if seconds is None:
            return self.ros_node.get_clock().now().to_msg()
        return super().stamp(seconds)

    def _declare(self, specs: list[ParameterSpec]) -> dict[str, Any]:
        values = {}
        for spec in specs:
            source, ignore_override, value = ROS_PARAMETERS, False, spec.default
            if spec.name in self._overrides:
                source, ignore_override = "the parameter overrides", True
                value = validate_parameter(spec, self._overrides[spec.name], source, self.fully_qualified_name)
            initial = list(value) if spec.type.endswith("_array") else value
            try:
                self.ros_node.declare_parameter(spec.name, PARAMETER_TYPES[spec.type] if initial == [] else initial,
                                                parameter_descriptor(spec), ignore_override)
                declared = self.ros_node.get_parameter(spec.name).value
            except ParameterUninitializedException:  # declared by type (empty default) and no file set it
                declared = initial
            except InvalidParameterTypeException as error:
                hint = (" (ROS 2 types parameters statically: write 1.0, not 1)"
                        if spec.type.startswith("double") and "INTEGER" in str(error) else "")
                raise RuntimeLayerError(f"parameter {spec.name!r} of {self.fully_qualified_name} from {source}: "
                                        f"expected {spec.type}: {error}{hint}") from error
            except InvalidParameterValueException as error:
                raise RuntimeLayerError(f"parameter {spec.name!r} of {self.fully_qualified_name} from {source}: "
                                        f"{error}") from error
            if spec.type.endswith("_array"):  # rclpy holds arrays as lists or array.array
                declared = list(declared)
            values[spec.name] = validate_parameter(spec, declared, source, self.fully_qualified_name)
        return values

    def set_parameters(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        """:meth:`Node.set_parameters` through rclpy (``set_parameters_atomically``), so rclpy stores the values and
        publishes the parameter event; validation and callbacks run in :meth:`_on_ros_set_parameters`."""
        try:
            validate_update(self._specs, values, self.fully_qualified_name)  # rclpy raises for undeclared names
        except FlexrobotError as error:
            return False, str(error)
        result = self.ros_node.set_parameters_atomically([Parameter(name, value=list(v) if isinstance(v, tuple) else v)
                                                          for name, v in values.items()])
        return bool(result.successful), str(result.reason)

    def _on_ros_set_parameters(self, parameters: list[Any]) -> SetParametersResult:
        """rclpy's on-set-parameters callback: ``ros2 param set`` gets the same validation and
        :meth:`~Node.on_parameters_set` callbacks as :meth:`Node.set_parameters`. Other parameters pass: those being
        declared (declaration validates them) and rclpy's own (``use_sim_time``)."""
        values = {}
        for parameter in parameters:
            spec = self._specs.get(parameter.name)
            if spec is not None:
                value = parameter.value
                values[parameter.name] = list(value) if spec.type.endswith("_array") and value is not None else value
        if not values:
            return SetParametersResult(successful=True)
        successful, reason = self._apply_parameters(values)
        return SetParametersResult(successful=successful, reason=reason)

    def guard(self, callback: Callable[..., Any], where: str) -> Callable[..., Any]:
        """:meth:`Node.guard`, except that a callback failing because ``rclpy.shutdown()`` ran in another thread
        meanwhile (``RCLError: Failed to publish: publisher's context is invalid``) ends quietly: the node is
        stopping, not broken."""
        context = self.ros_node.context

        @functools.wraps(callback)
        def unless_shut_down(*args: Any) -> Any:
            try:
                return callback(*args)
            except Exception:
                if context.ok():
                    raise
                return None

        return super().guard(unless_shut_down, where)

    def create_publisher(self, msg_type: type, topic: str, qos: QosProfile = QOS_DEFAULT) -> Any:
        return self.ros_node.create_publisher(msg_type, topic, qos_profile(qos))

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            qos: QosProfile = QOS_DEFAULT) -> Any:
        """An rclpy subscription whose callback, once the executor has handed it a message, also takes and handles
        the messages waiting behind it, up to :data:`TAKE_BATCH` (see the module docstring: a 1 kHz stream
        costs about a sixth of the CPU that one wait set per message costs)."""
        where = f"subscription {topic}"
        guarded = self.guard(callback, where)
        subscription: Any = None

        def batch(msg: Any) -> None:
            guarded(msg)
            for _ in range(TAKE_BATCH - 1):
                waiting = take_message(subscription)
                if waiting is None:
                    return
                guarded(waiting)

        subscription = self.ros_node.create_subscription(msg_type, topic, self.guard(batch, where), qos_profile(qos))
        return subscription

    def destroy_subscription(self, subscription: Any) -> None:
        self.ros_node.destroy_subscription(subscription)

    def create_service(self, srv_type: Any, name: str, callback: Callable[[Any, Any], Any]) -> Any:
        guarded = self.guard(callback, f"service {name}")

        def answer(request: Any, response: Any) -> Any:
            result = guarded(request, response)
            return result if result is not None else srv_type.Response()

        return self.ros_node.create_service(srv_type, name, answer)

    def create_client(self, srv_type: Any, name: str) -> RclpyClient:
        return RclpyClient(self, self.ros_node.create_client(srv_type, name))

    def call(self, service_client: RclpyClient, request: Any, timeout_sec: float = 5.0) -> Any:
        spinner = self._spin_thread
        if spinner == threading.get_ident():
            raise RuntimeLayerError(
                f"service {service_client.srv_name}: node.call() inside a callback of {self.fully_qualified_name} "
                "would block the executor that has to deliver the response; use client.call_async(request) and "
                "future.add_done_callback(...)")
        future = service_client.call_async(request, timeout_sec)
        while not future.done():
            if spinner is None:  # nothing spins this node: spin it here until the response arrives
                self.spin_once(SERVICE_POLL_S)
            else:  # another thread spins the node and completes the future
                concurrent.futures.wait([future], SERVICE_POLL_S)
            if not future.done():
                service_client.check_servers()  # a server on another vendor discovered meanwhile
        return future.result()

    def spin_once(self, timeout_sec: float = 0.1) -> None:
        """Run this node's callbacks in the calling thread for ``timeout_sec`` [s] (every one that becomes ready
        meanwhile), on an executor of the node's own: for a command that interleaves its work with the node's
        callbacks (``flexrobot bringup``), as :meth:`DdsNode.spin_once` does there. Not while :func:`spin` runs."""
        if self._executor is None:
            self._executor = SingleThreadedExecutor(context=self.ros_node.context)
            self._executor.add_node(self.ros_node)
        executor = self._executor
        deadline = time.monotonic() + timeout_sec
        with self.spinning():
            while True:
                executor.spin_once(timeout_sec=max(0.0, deadline - time.monotonic()))
                if time.monotonic() >= deadline:
                    return

    def request_stop(self) -> None:
        self.stop_event.set()

    @property
    def stop_requested(self) -> bool:
        """Whether :attr:`stop_event` is set (:meth:`request_stop`; SIGINT, SIGTERM under :func:`run`) or the
        node's context was shut down."""
        context = self.ros_node.context
        return self.stop_event.is_set() or not context.ok()

    def create_timer(self, period_sec: float, callback: Callable[[], None]) -> Any:
        return self.ros_node.create_timer(period_sec, self.guard(callback, "timer"))

    def create_wall_timer(self, period_sec: float, callback: Callable[[], None]) -> Any:
        return self.ros_node.create_timer(period_sec, self.guard(callback, "timer"),
                                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def destroy(self) -> None:
        if self._executor is not None:
            executor, self._executor = self._executor, None
            executor.remove_node(self.ros_node)
            executor.shutdown(timeout_sec=0.0)
        self.ros_node.destroy_node()

    @contextlib.contextmanager
    def spinning(self) -> Iterator[None]:
        """Mark the calling thread as the one spinning this node (callbacks run in it) while in the block."""
        self._spin_thread = threading.get_ident()
        try:
            yield
        finally:
            self._spin_thread = None


#: Longest time [s] a wait for a service looks at the graph again (a server on another DDS vendor ends it).
SERVICE_POLL_S = 0.1


class RclpyClient:
    """An rclpy service client (``ros_client``) with the standalone runtime's interface: ``srv_name``,
    ``service_is_ready()``, ``wait_for_service(timeout_sec)`` and ``call_async(request, timeout_sec)`` (a
    ``concurrent.futures.Future``); it refuses, at once, a service whose servers are all on another DDS vendor (see
    the module docstring) instead of waiting out a timeout."""

    def __init__(self, node: RclpyNode, ros_client: Any) -> None:
        self.node = node
        self.ros_client = ros_client
        self.srv_name = ros_client.srv_name
        self._request_topic, self._reply_topic = f"rq{self.srv_name}Request", f"rr{self.srv_name}Reply"
        self._vendor: bytes | None = None

    def own_vendor(self) -> bytes | None:
        """DDS vendor id of this node (from the GID of this client's request writer); None until the graph has it."""
        if self._vendor is None:
            for endpoint in self.node.ros_node.get_publishers_info_by_topic(self._request_topic, no_mangle=True):
                if endpoint.node_name == self.node.name and endpoint.node_namespace == self.node.namespace:
                    self._vendor = vendor_of(endpoint.endpoint_gid)
        return self._vendor

    def server_vendors(self) -> set[bytes]:
        """DDS vendor ids of the servers in the graph (of their request readers and reply writers)."""
        ros_node = self.node.ros_node
        endpoints = [*ros_node.get_subscriptions_info_by_topic(self._request_topic, no_mangle=True),
                     *ros_node.get_publishers_info_by_topic(self._reply_topic, no_mangle=True)]
        return {vendor_of(endpoint.endpoint_gid) for endpoint in endpoints}

    def check_servers(self) -> None:
        """Raise when every server in the graph is on another DDS vendor than this node.

        Raises:
            RuntimeLayerError: names the service, both runtimes and how to run both on one.
        """
        own = self.own_vendor()
        error = None if own is None else cross_vendor_error(self.srv_name, self.server_vendors(), own, "rclpy")
        if error is not None:
            raise error

    def service_is_ready(self) -> bool:
        """rclpy's ``service_is_ready`` after :meth:`check_servers` (which raises for another vendor's server)."""
        self.check_servers()
        return bool(self.ros_client.service_is_ready())

    def wait_for_service(self, timeout_sec: float | None = None) -> bool:
        """Wait until :meth:`service_is_ready` (forever when ``timeout_sec`` is None, while the context is up); its
        final value.

        Raises:
            RuntimeLayerError: a server on another DDS vendor was found (:meth:`check_servers`).
        """
        deadline = None if timeout_sec is None else time.monotonic() + timeout_sec
        while not self.service_is_ready():
            if not self.node.ros_node.context.ok() or (deadline is not None and time.monotonic() >= deadline):
                return False
            time.sleep(SERVICE_POLL_S if deadline is None else max(0.0, min(SERVICE_POLL_S,
                                                                            deadline - time.monotonic())))
        return True

    def call_async(self, request: Any, timeout_sec: float = 30.0) -> concurrent.futures.Future:
        """Send ``request``; the future completes with the response (while the node is spun) or fails with a
        RuntimeLayerError after ``timeout_sec`` [s], the pending request then dropped.

        Raises:
            RuntimeLayerError: at once, when the servers in the graph are all on another DDS vendor.
        """
        self.check_servers()
        result: concurrent.futures.Future = concurrent.futures.Future()
        future = self.ros_client.call_async(request)

        def settle(outcome: Callable[[Any], None], value: Any) -> None:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # the other one came first
                outcome(value)

        def answered(_: Any) -> None:
            try:
                response = future.result()
            except Exception as error:  # noqa: BLE001 - handed to the caller through the future
                settle(result.set_exception, error)
            else:
                settle(result.set_result, response)

        def expire() -> None:
            if not result.done():
                self.ros_client.remove_pending_request(future)
                settle(result.set_exception, RuntimeLayerError(
                    f"service {self.srv_name}: no response within {timeout_sec:g} s"))

        future.add_done_callback(answered)
        timer = threading.Timer(timeout_sec, expire)
        timer.daemon = True
        timer.start()
        result.add_done_callback(lambda _: timer.cancel())
        return result


#: Longest time [s] the spin loop waits before it looks at the stop flag again.
STOP_POLL_S = 0.1
#: Time [s] after a stop signal at which a process still running prints every thread's stack on stderr.
STOP_REPORT_S = 20.0


def spin(node: RclpyNode, duration_sec: float | None = None, stop: threading.Event | None = None,
         parent: ParentWatch | None = None) -> str:
    """Run the node's callbacks in this thread until ``stop`` (default: the node's :attr:`~RclpyNode.stop_event`,
    :meth:`~RclpyNode.request_stop`) is set, the node's context is shut down, ``duration_sec`` has passed (default:
    no limit) or the ``parent`` process has died. Returns why it ended: ``"stop"``, ``"shutdown"``, ``"duration"``
    or ``"parent"``.

    The node gets an executor of its own for the call; each ``spin_once`` waits at most :data:`STOP_POLL_S`.
    ``rclpy.shutdown()`` from another thread wakes the executor (every executor registers ``Context.on_shutdown``)
    and ends the loop, also when the executor fails because the context went down while it built its wait set.
    """
    context = node.ros_node.context
    stop = stop if stop is not None else node.stop_event
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node.ros_node)
    deadline = None if duration_sec is None else time.monotonic() + duration_sec
    try:
        with node.spinning():
            while True:
                if stop.is_set():
                    return "stop"
                if not context.ok():
                    return "shutdown"
                if parent is not None and parent.parent_gone():
                    return "parent"
                timeout = STOP_POLL_S if deadline is None else min(STOP_POLL_S, deadline - time.monotonic())
                if timeout <= 0.0:
                    return "duration"
                try:
                    executor.spin_once(timeout_sec=timeout)
                except ExternalShutdownException:
                    return "shutdown"
                except Exception:
                    if context.ok():
                        raise  # not a shutdown: a real failure of the executor
                    return "shutdown"  # the context went down under the executor (RCLError on the wait set)
    finally:
        executor.remove_node(node.ros_node)
        executor.shutdown(timeout_sec=0.0)


def install_stop_signals(stop: threading.Event, reasons: list[str]) -> Callable[[], None]:
    """SIGINT and SIGTERM set ``stop`` (and append the signal's name to ``reasons``) instead of raising
    ``KeyboardInterrupt`` or ending the process; returns a function restoring the previous handlers.

    Must be called from the main thread (Python runs signal handlers there only).
    """
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def request_stop(signum: int, _frame: Any) -> None:
        reasons.append(signal.Signals(signum).name)
        stop.set()
        faulthandler.dump_traceback_later(STOP_REPORT_S, exit=False)  # cancelled by restore()

    for sig in previous:
        signal.signal(sig, request_stop)

    def restore() -> None:
        faulthandler.cancel_dump_traceback_later()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def run(factory: Callable[[Node], Any], name: str, argv: Sequence[str]) -> int:
    """``main()`` of a node on rclpy: init (``argv`` holds ``--ros-args``), build, spin until SIGINT, SIGTERM,
    ``rclpy.shutdown()`` or the death of the process that started it (:mod:`.parent_watch`), then in ``finally``
    the application's ``close()``, ``destroy_node`` and the context shutdown, in this order, in the main thread
    (see the module docstring for why rclpy's signal handlers are not used). A signal during start-up stops the
    node as soon as the application is built, or ends a start-up wait (:meth:`Node.wait_for_message`) at once.

    Returns:
        0 after a clean stop, 2 when start-up failed with a FlexrobotError (printed on stderr).
    """
    stop, reasons, parent = threading.Event(), [], ParentWatch()
    restore = install_stop_signals(stop, reasons)
    node, app = None, None
    try:
        rclpy.init(args=list(argv), signal_handler_options=SignalHandlerOptions.NO)
        node = RclpyNode(name, stop=stop)
        app = factory(node)
        ended = spin(node, stop=stop, parent=parent)
        if ended == "parent":
            node.logger.warning(f"stopping: {parent.reason}")
        else:
            why = reasons[0] if reasons else {"shutdown": "rclpy.shutdown()"}.get(ended, ended)
            node.logger.info(f"stopping: {why}")
    except StopRequested as stopped:  # a signal while start-up waited (for robot_description): a clean stop
        node.logger.info(f"stopping: {reasons[0] if reasons else 'rclpy.shutdown()'} ({stopped})")  # type: ignore
    except FlexrobotError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    finally:
        try:
            if app is not None and hasattr(app, "close"):
                app.close()
            if node is not None:
                node.destroy()
            rclpy.try_shutdown()
        finally:
            restore()
            if reasons:  # the interpreter's exit (finalizers of the middleware) is part of the stop too
                faulthandler.dump_traceback_later(STOP_REPORT_S, exit=False)
    return 0
