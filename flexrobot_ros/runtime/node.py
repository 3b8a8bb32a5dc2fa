"""The node interface both back ends implement (see the package docstring for how nodes use it)."""
from __future__ import annotations

import abc
import collections
import functools
import threading
import time
import traceback
from typing import Any, Callable, Mapping, Sequence

from flexrobot_ros.errors import FlexrobotError
from flexrobot_ros.runtime.messages import MessageTypes, time_message
from flexrobot_ros.runtime.params import ParameterSpec, validate_update
from flexrobot_ros.runtime.qos import QOS_DEFAULT, QOS_LATCHED, QosProfile
from flexrobot_ros.runtime.time_source import USE_SIM_TIME

#: Parameters every node declares through the runtime itself (rclpy's TimeSource; the DDS back end likewise).
RUNTIME_PARAMETERS = (USE_SIM_TIME,)
#: Longest time [s] :meth:`Node.wait_for_message` runs the node's callbacks before it looks at the stop request again.
WAIT_POLL_S = 0.1


class StopRequested(Exception):
    """A stop (SIGINT, SIGTERM, ``rclpy.shutdown()``) arrived while the node waited during start-up
    (:meth:`Node.wait_for_message`); :func:`~flexrobot_ros.runtime.run_node` then ends cleanly (exit code 0)."""


class Node(abc.ABC):
    """A ROS 2 node as the flexrobot nodes see it, on rclpy or on the standalone DDS runtime.

    Entities returned by the ``create_*`` methods have rclpy's method names on both back ends:
    publishers ``publish(msg)``, ``topic_name``, ``get_subscription_count()``; subscriptions ``topic_name``;
    clients ``wait_for_service(timeout_sec)``, ``call_async(request)``; timers ``cancel()``, ``reset()`` (restarts
    a cancelled timer).

    Callbacks (subscriptions, services, timers) are *guarded*: an exception does not stop the node. A
    :class:`~flexrobot_ros.errors.FlexrobotError` (bad input: wrong joint names, NaN, ...) is logged as a warning
    once per cause; any other exception is logged with its traceback once per cause. Every occurrence is counted in
    :attr:`input_errors` ({cause: count}) so the node can report it in its diagnostics. A service whose callback
    raises answers with the default response.
    """

    #: ``"rclpy"`` or ``"dds"``.
    backend: str
    #: Message and service classes of this back end: ``node.types.sensor_msgs.msg.JointState``.
    types: MessageTypes

    def __init__(self) -> None:
        self.input_errors: collections.Counter[str] = collections.Counter()
        self._logged_causes: set[str] = set()
        self._lock = threading.Lock()
        self._parameters: dict[str, Any] = {}
        self._specs: dict[str, ParameterSpec] = {}
        self._parameter_callbacks: list[Callable[[dict[str, Any]], None]] = []
        self._parameter_lock = threading.RLock()

    # --- identity -------------------------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Node name (after ``__node:=`` remapping)."""

    @property
    @abc.abstractmethod
    def namespace(self) -> str:
        """Node namespace, ``/`` for the root."""

    @property
    def fully_qualified_name(self) -> str:
        """``/namespace/name``."""
        return f"{self.namespace.rstrip('/')}/{self.name}"

    @abc.abstractmethod
    def resolve_name(self, name: str) -> str:
        """Absolute topic/service name ``name`` resolves to (namespace, ``~/``, remapping)."""

    # --- parameters -----------------------------------------------------------------------------------------
    def declare_parameters(self, specs: Sequence[ParameterSpec]) -> dict[str, Any]:
        """Declare the node's parameters and return their values ({name: value}, lists as tuples).

        Values come from parameter files and ``-p`` overrides, else the defaults; each is validated (type, range,
        step, choices, finiteness).

        Raises:
            RuntimeLayerError: a value is invalid; the message names the parameter, where it came from, the value
                and what was expected.
        """
        specs = list(specs)
        values = self._declare(specs)
        with self._parameter_lock:
            self._parameters.update(values)
            self._specs.update((spec.name, spec) for spec in specs)
        return values

    @property
    def parameters(self) -> Mapping[str, Any]:
        """Values of the parameters declared so far (current values, after any accepted set)."""
        with self._parameter_lock:
            return dict(self._parameters)

    @property
    def parameter_specs(self) -> Mapping[str, ParameterSpec]:
        """Declarations of the parameters declared so far ({name: spec}, in declaration order)."""
        return dict(self._specs)

    def on_parameters_set(self, callback: Callable[[dict[str, Any]], None]) -> None:
        """Register ``callback({name: new value})``, run when parameters are set after start-up.

        The values it receives are already validated against their declarations (type, range, step, choices,
        finiteness; read-only and undeclared parameters are refused before any callback), lists as tuples. The
        callback applies them or raises :class:`~flexrobot_ros.errors.FlexrobotError` (its message is the reason
        the set request reports); a refusal by any callback leaves every parameter as it was (all or nothing for
        one request). Callbacks run in the order registered, in the thread that handles the request. The runtime's
        own parameters (``use_sim_time``) are applied by the runtime and never reach them, as on rclpy.
        """
        self._parameter_callbacks.append(callback)

    def set_parameters(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        """Set parameters after start-up, all or nothing: validate, run the :meth:`on_parameters_set` callbacks,
        store, and announce the change (``/parameter_events``).

        This is the path of ``ros2 param set`` on both back ends, and the way to change parameters in-process.

        Returns:
            (successful, reason): reason says why the values were refused ("" on success), as rcl_interfaces'
            ``SetParametersResult`` does.
        """
        return self._apply_parameters(values)

    def _apply_parameters(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        """Validate ``values``, run the callbacks and store the values (no announcement); (successful, reason)."""
        with self._parameter_lock:
            try:
                accepted = validate_update(self._specs, values, self.fully_qualified_name)
                own = {name: value for name, value in accepted.items() if name not in RUNTIME_PARAMETERS}
                for callback in self._parameter_callbacks if own else ():
                    callback(dict(own))
            except FlexrobotError as error:
                return False, str(error)
            except Exception as error:  # a bug in a callback refuses the change instead of half-applying it
                self.log_once(f"parameter callback: {type(error).__name__}: {error}",
                              f"parameter callback: unexpected {type(error).__name__}: {error}\n"
                              f"{traceback.format_exc()}", level="error")
                return False, f"unexpected {type(error).__name__} while applying the parameters: {error}"
            self._parameters.update(accepted)
        return True, ""

    @abc.abstractmethod
    def _declare(self, specs: list[ParameterSpec]) -> dict[str, Any]:
        """Back-end part of :meth:`declare_parameters`."""

    # --- communication --------------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_publisher(self, msg_type: type, topic: str, qos: QosProfile = QOS_DEFAULT) -> Any:
        """Publisher of ``msg_type`` on ``topic`` (relative names resolve in the node's namespace)."""

    @abc.abstractmethod
    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            qos: QosProfile = QOS_DEFAULT) -> Any:
        """Subscription calling ``callback(msg)`` (guarded) for each message received."""

    @abc.abstractmethod
    def destroy_subscription(self, subscription: Any) -> None:
        """Stop receiving on ``subscription`` (from :meth:`create_subscription`) and delete it."""

    def wait_for_message(self, msg_type: type, topic: str, timeout_sec: float, qos: QosProfile = QOS_LATCHED) -> Any:
        """The first message on ``topic`` within ``timeout_sec`` [s], None when none came: for start-up, before the
        node spins (the URDF on ``robot_description``). The node's other callbacks (parameter services, ...) run
        meanwhile; the subscription is deleted before it returns. With :data:`QOS_LATCHED` (the default) a latched
        topic's last message arrives whether it was published before or after the call.

        Raises:
            StopRequested: a stop arrived meanwhile (:attr:`stop_requested`).
        """
        received: list[Any] = []
        subscription = self.create_subscription(msg_type, topic, received.append, qos)
        deadline = time.monotonic() + timeout_sec
        try:
            while not received:
                if self.stop_requested:
                    raise StopRequested(f"stopped while waiting for {self.resolve_name(topic)}")
                left = deadline - time.monotonic()
                if left <= 0.0:
                    return None
                self.spin_once(min(left, WAIT_POLL_S))
        finally:
            self.destroy_subscription(subscription)
        return received[0]

    @abc.abstractmethod
    def create_service(self, srv_type: type, name: str, callback: Callable[[Any, Any], Any]) -> Any:
        """Service calling ``callback(request, response) -> response`` (guarded) for each request."""

    @abc.abstractmethod
    def create_client(self, srv_type: type, name: str) -> Any:
        """Client of service ``name``: ``srv_name``, ``service_is_ready()``, ``wait_for_service(timeout_sec)``,
        ``call_async(request)``.

        Services do not interoperate across DDS vendors (:mod:`.vendors`): where every server of ``name`` found is on
        another vendor (an rclpy node on Fast DDS seen from the standalone runtime, or the reverse), these methods and
        :meth:`call` raise a RuntimeLayerError saying so and how to run both on one runtime, as soon as the server is
        discovered, instead of waiting out a timeout."""

    @abc.abstractmethod
    def call(self, client: Any, request: Any, timeout_sec: float = 5.0) -> Any:
        """Blocking service call, for code running *outside* this node's callbacks (command line, tests).

        Raises:
            RuntimeLayerError: no response within ``timeout_sec``, or the server is on another DDS vendor (see
                :meth:`create_client`).
        """

    @abc.abstractmethod
    def create_timer(self, period_sec: float, callback: Callable[[], None]) -> Any:
        """Timer calling ``callback()`` (guarded) every ``period_sec`` seconds of the node's clock: ROS time, which
        with ``use_sim_time`` is the simulated time of ``/clock`` (no ``/clock``, no calls)."""

    @abc.abstractmethod
    def create_wall_timer(self, period_sec: float, callback: Callable[[], None]) -> Any:
        """Timer calling ``callback()`` (guarded) every ``period_sec`` seconds of the steady (wall) clock, also under
        ``use_sim_time`` (rclcpp's ``create_wall_timer``): diagnostics, and pacing that goes on while a simulation is
        paused."""

    # --- time and logging -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def now(self) -> float:
        """Current time of the node's clock [s] (wall clock since the epoch, or ``/clock`` with sim time)."""

    @property
    @abc.abstractmethod
    def use_sim_time(self) -> bool:
        """Whether the node's time follows ``/clock`` (its ``use_sim_time`` parameter)."""

    def stamp(self, seconds: float | None = None) -> Any:
        """``builtin_interfaces/Time`` of ``seconds`` (default: :meth:`now`) for message headers."""
        return time_message(self.types, self.now() if seconds is None else seconds)

    @property
    @abc.abstractmethod
    def logger(self) -> Any:
        """Logger with ``debug``, ``info``, ``warning``, ``error`` methods taking one string."""

    def log_once(self, cause: str, message: str, level: str = "warning") -> bool:
        """Log ``message`` the first time ``cause`` is seen; True when it was logged now."""
        with self._lock:
            if cause in self._logged_causes:
                return False
            self._logged_causes.add(cause)
        getattr(self.logger, level)(message)
        return True

    def report_input_error(self, cause: str, message: str) -> None:
        """Count one occurrence of an input problem and log it the first time its cause appears."""
        with self._lock:
            self.input_errors[cause] += 1
        self.log_once(cause, f"{message} (logged once; further occurrences are counted)")

    def guard(self, callback: Callable[..., Any], where: str) -> Callable[..., Any]:
        """``callback`` wrapped so that exceptions are counted and logged once per cause instead of raised."""

        @functools.wraps(callback)
        def guarded(*args: Any) -> Any:
            try:
                return callback(*args)
            except FlexrobotError as error:
                self.report_input_error(f"{where}: {type(error).__name__}: {error}", f"{where}: {error}")
            except Exception as error:  # a bug in a callback must not take the node down: log it loudly once
                cause = f"{where}: {type(error).__name__}: {error}"
                with self._lock:
                    self.input_errors[cause] += 1
                self.log_once(cause, f"{where}: unexpected {type(error).__name__}: {error}\n"
                                     f"{traceback.format_exc()}", level="error")
            return None

        return guarded

    # --- executing and lifetime -----------------------------------------------------------------------------
    @abc.abstractmethod
    def spin_once(self, timeout_sec: float = 0.1) -> None:
        """Run the node's callbacks that become ready within ``timeout_sec`` [s], in the calling thread (a command
        or a start-up wait interleaving its work with the node's callbacks; not while the node is spun)."""

    @abc.abstractmethod
    def request_stop(self) -> None:
        """Ask the node to stop: :func:`~flexrobot_ros.runtime.spin` returns, a start-up wait ends (safe from signal
        handlers and other threads; ``run_node``'s SIGINT/SIGTERM handlers call it)."""

    @property
    @abc.abstractmethod
    def stop_requested(self) -> bool:
        """Whether the node was asked to stop (:meth:`request_stop`), or the back end was shut down."""

    @abc.abstractmethod
    def destroy(self) -> None:
        """Release the node's entities (publishers, subscriptions, ...)."""
