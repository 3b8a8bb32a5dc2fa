"""Exceptions of flexrobot_ros.

Every error raised on bad input is one of these types, and its message names the file, field, joint or topic,
the value seen and the value expected.
"""
from __future__ import annotations


class FlexrobotError(Exception):
    """Base class of every error this package raises on purpose."""


class ModelError(FlexrobotError):
    """A robot description (URDF, flexibility YAML, DH table) is malformed or inconsistent."""


class TrajectoryError(FlexrobotError):
    """A trajectory is malformed, not smooth enough, or violates the robot's limits."""


class RestError(TrajectoryError):
    """A rest-to-rest motion whose feedforward cannot end at rest: the deformation it leaves never dies out with the
    model's damping, or needs a longer post-actuation than allowed; ``hold_needed_s`` [s] the post-actuation it
    would need (inf: never)."""

    def __init__(self, message: str, hold_needed_s: float = float("inf")):
        super().__init__(message)
        self.hold_needed_s = hold_needed_s


class ModalError(FlexrobotError):
    """A modal computation cannot be carried out at the requested pose or gains."""


class ShapingError(FlexrobotError):
    """An input shaper cannot be designed for the given modes or options (frequency, damping ratio, tolerance)."""


class SimulationError(FlexrobotError):
    """A simulation input is invalid or the simulated state left the finite range."""


class IdentificationError(FlexrobotError):
    """Identification data are insufficient, inconsistent or non-finite."""


class SignalError(FlexrobotError):
    """A measured signal is unusable for operational modal analysis (too short, constant, non-finite, ...)."""


class RuntimeLayerError(FlexrobotError):
    """The ROS 2 / DDS runtime layer cannot honour a request (unknown topic type, bad message, ...)."""


class CalibrationError(IdentificationError):
    """A self-calibration step (move, excitation, mode measurement at a pose) failed; the message names the pose."""
