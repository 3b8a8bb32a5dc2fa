"""Quality-of-service profiles, named as in rclpy and translated by each back end to its own QoS objects."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from flexrobot_ros.errors import RuntimeLayerError


@dataclass(frozen=True)
class QosProfile:
    """A ROS 2 QoS profile: the subset of policies ROS 2 nodes set.

    Attributes:
        reliability: ``"reliable"`` (resend until acknowledged) or ``"best_effort"``.
        durability: ``"volatile"`` or ``"transient_local"`` (latched: late subscribers get the last ``depth``
            samples).
        history: ``"keep_last"`` (queue of ``depth`` samples per endpoint) or ``"keep_all"``.
        depth: queue length for ``keep_last``; raise it for high-rate streams whose subscriber may stall.
    """

    reliability: str = "reliable"
    durability: str = "volatile"
    history: str = "keep_last"
    depth: int = 10

    def __post_init__(self) -> None:
        allowed = {"reliability": ("reliable", "best_effort"), "durability": ("volatile", "transient_local"),
                   "history": ("keep_last", "keep_all")}
        for field, values in allowed.items():
            if getattr(self, field) not in values:
                raise RuntimeLayerError(f"QoS {field} {getattr(self, field)!r} is not one of {values}")
        if self.depth < 1:
            raise RuntimeLayerError(f"QoS depth must be >= 1, got {self.depth}")

    def with_depth(self, depth: int) -> QosProfile:
        """This profile with another queue depth."""
        return dataclasses.replace(self, depth=depth)

    def keeping_all(self) -> QosProfile:
        """This profile with ``keep_all`` history: a subscription that must not lose a sample while its process is
        slow (a recorder). The middleware's receive thread queues every sample it acknowledges, however long the
        subscriber's callbacks stall; the publisher's history only has to cover the receive thread's own stalls."""
        return dataclasses.replace(self, history="keep_all")


#: rclpy's default for publishers and subscriptions (``QoSProfile(depth=10)``): reliable, volatile, keep-last 10.
QOS_DEFAULT = QosProfile()
#: High-rate state streams (encoders at 1 kHz): reliable, volatile, keep-last 10,000 - ten seconds at 1 kHz
#: that a reliable subscriber may leave unacknowledged (its process starved of CPU) and still receive.
#: A Fast DDS reader (rclpy's default RMW) holds at most 5,000 samples its node has not taken, whatever the depth
#: (Fast DDS's default resource limit max_samples; measured on Jazzy: a subscriber taking nothing while the
#: simulator ran 8 s and stopped got 5,001 motor_states, both with a Fast DDS and with a Cyclone writer): it does
#: not acknowledge the rest, which wait in the writer's history. The ten seconds hold while the publisher runs; a
#: publisher that exits takes what it still holds with it.
QOS_STREAM = QosProfile(depth=10_000)
#: Latched topics (``robot_description``, static maps): reliable, transient-local, keep-last 1.
QOS_LATCHED = QosProfile(durability="transient_local", depth=1)
#: rclpy's ``qos_profile_sensor_data``: best effort, volatile, keep-last 5.
QOS_SENSOR_DATA = QosProfile(reliability="best_effort", depth=5)
#: rclpy's ``qos_profile_services_default``: reliable, volatile, keep-last 10.
QOS_SERVICES = QosProfile()
