"""ROS time of a standalone node: the system clock, or the simulated time of ``/clock`` with ``use_sim_time``.

What rclpy's ``TimeSource`` (``rclpy/time_source.py``) and rcl's ROS clock do, for the standalone runtime:

- every node declares the bool parameter ``use_sim_time`` (default false) itself, before the node's own
  parameters; parameter files (``/**: {ros__parameters: {use_sim_time: true}}``), ``-p use_sim_time:=true`` and
  ``ros2 param set`` at run time turn it on or off;
- while it is true the node subscribes ``/clock`` (rosgraph_msgs/Clock, best effort, keep-last 1, as rclpy) and its
  ROS time is the newest ``clock`` received, integer nanoseconds; before the first message it is zero (rclpy's
  "time not initialized");
- while it is false the ROS time is the system clock (ns since the epoch).

Timers: a node timer (``create_timer``) runs on the ROS clock: under sim time it fires when ``/clock`` passes its due
time, skipping missed periods and keeping its phase (rcl's ``rcl_timer_call``), so a timer of period T fires once per
T of simulated time whatever the pace of the simulation, and never while ``/clock`` stands still. Without sim time it
runs on the monotonic clock, as before (immune to system clock steps). When ``use_sim_time`` changes, each timer
keeps the time it had left on the new clock (rcl's ``ROS_TIME_ACTIVATED`` / ``DEACTIVATED`` jump handling).
``create_wall_timer`` timers (rclcpp's name) always run on the monotonic clock: diagnostics and pacing that must go
on while a simulation is paused.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from flexrobot_ros.runtime.params import ParameterSpec
from flexrobot_ros.runtime.qos import QosProfile

#: The parameter every node declares (rclpy: ``rclpy.time_source.USE_SIM_TIME_NAME``).
USE_SIM_TIME = "use_sim_time"
USE_SIM_TIME_SPEC = ParameterSpec(USE_SIM_TIME, False, "take the node's time (stamps, timers) from /clock "
                                  "(rosgraph_msgs/Clock) instead of the system clock; zero until the first /clock")
#: ``/clock`` topic and the QoS rclpy's TimeSource subscribes it with (best effort, keep-last 1).
CLOCK_TOPIC = "/clock"
QOS_CLOCK = QosProfile(reliability="best_effort", depth=1)


class SteadyClock:
    """The monotonic clock [ns] of wall timers (never simulated, never stepped)."""

    steady = True

    @staticmethod
    def now_ns() -> int:
        return time.monotonic_ns()


class RosClock:
    """A node's ROS clock for its timers [ns]: simulated time from ``/clock`` while ``use_sim_time`` is on, else the
    monotonic clock (``steady`` says which; a steady clock lets the executor sleep until a timer is due)."""

    def __init__(self, source: TimeSource) -> None:
        self._source = source

    @property
    def steady(self) -> bool:
        return not self._source.active

    def now_ns(self) -> int:
        return self._source.now_ns() if self._source.active else time.monotonic_ns()


class TimeSource:
    """``use_sim_time`` and ``/clock`` of one standalone node.

    Args:
        subscribe: ``subscribe(callback)`` creates the node's ``/clock`` subscription (message type, topic and QoS
            are the caller's: rosgraph_msgs/Clock, :data:`CLOCK_TOPIC`, :data:`QOS_CLOCK`) and returns it.
        unsubscribe: ``unsubscribe(subscription)`` destroys it.
    """

    def __init__(self, subscribe: Callable[[Callable[[Any], None]], Any], unsubscribe: Callable[[Any], None]) -> None:
        self._subscribe, self._unsubscribe = subscribe, unsubscribe
        self._subscription: Any = None
        self._clock_ns = 0
        self._lock = threading.Lock()
        self.active = False
        self.clock = RosClock(self)

    def set_active(self, active: bool) -> None:
        """Follow ``/clock`` (True) or the system clock (False); subscribes or unsubscribes ``/clock``."""
        active = bool(active)
        if active == self.active:
            return
        self.active = active
        if active and self._subscription is None:
            self._subscription = self._subscribe(self._on_clock)
        elif not active and self._subscription is not None:
            self._unsubscribe(self._subscription)
            self._subscription = None

    def now_ns(self) -> int:
        """ROS time [ns]: the newest ``/clock`` (0 before the first) while active, else the system clock."""
        if not self.active:
            return time.time_ns()
        with self._lock:
            return self._clock_ns

    def _on_clock(self, msg: Any) -> None:
        with self._lock:
            self._clock_ns = int(msg.clock.sec) * 1_000_000_000 + int(msg.clock.nanosec)
