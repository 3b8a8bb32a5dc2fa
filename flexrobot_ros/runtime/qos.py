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


#: rclpy's default for publishers and subscriptions (``QoSProfile(depth=10)``): reliable, volatile, keep-last 10.
QOS_DEFAULT = QosProfile()
#: Latched topics (``robot_description``, static maps): reliable, transient-local, keep-last 1.
QOS_LATCHED = QosProfile(durability="transient_local", depth=1)
#: rclpy's ``qos_profile_sensor_data``: best effort, volatile, keep-last 5.
QOS_SENSOR_DATA = QosProfile(reliability="best_effort", depth=5)
#: rclpy's ``qos_profile_services_default``: reliable, volatile, keep-last 10.
QOS_SERVICES = QosProfile()
