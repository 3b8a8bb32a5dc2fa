"""Sensor models sampled at the simulation's output rate: encoders, joint torque sensors, tool accelerometer.

Each sensor turns the true states at the output samples into named columns (``<sensor name>.<joint or axis>``,
e.g. ``motor_encoder.joint2``) with its own random generator (spawned from the simulation seed, so results do not
depend on how the run is split into chunks). Noise is zero-mean Gaussian with standard deviation ``noise_std`` in
the measured quantity's unit, added before quantization (a reading jitters by whole counts).

Resolutions:

* :class:`MotorEncoder`: ``counts_per_rev`` counts per revolution of the encoder shaft. On the rotor
  (``on_rotor=True``, usual for servo motors) one count is ``2 pi / (counts_per_rev N_i)`` of the motor angle after
  the gear ``q_m``; on the gear output it is ``2 pi / counts_per_rev``.
* :class:`LinkEncoder`: ``counts_per_rev`` counts per revolution of the joint; for a prismatic (rack-and-pinion)
  joint per revolution of the pinion of radius r_i, i.e. one count is ``2 pi r_i / counts_per_rev`` metres.
* :class:`JointTorqueSensor`: the spring torque ``K (W q - q_m)`` [N m], optional ``resolution`` [N m].
* :class:`ToolAccelerometer`: classical linear acceleration of a frame's origin [m/s^2] in world axes; with
  ``include_gravity`` the reading is the specific force ``a - g`` (what an accelerometer measures), still in
  world axes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from flexrobot_ros.errors import SimulationError


def _quantize(values: np.ndarray, resolution: np.ndarray | float | None) -> np.ndarray:
    if resolution is None:
        return values
    return np.round(values / resolution) * resolution


def _check_noise(noise_std: float, what: str) -> None:
    if not (math.isfinite(noise_std) and noise_std >= 0):
        raise SimulationError(f"{what}: noise_std must be finite and >= 0, got {noise_std}")


def _check_counts(counts: float | None, what: str) -> None:
    if counts is not None and not (math.isfinite(counts) and counts > 0):
        raise SimulationError(f"{what}: counts_per_rev must be > 0 (or None for no quantization), got {counts}")


@dataclass(frozen=True)
class MotorEncoder:
    """Motor positions after the gear ``q_m`` [rad], quantized and noisy (see the module docstring)."""

    counts_per_rev: float | None = None
    noise_std: float = 0.0
    on_rotor: bool = True
    name: str = "motor_encoder"

    def __post_init__(self):
        _check_counts(self.counts_per_rev, self.name)
        _check_noise(self.noise_std, self.name)

    def measure(self, t: np.ndarray, states: np.ndarray, loop: Any, rng: np.random.Generator
                ) -> dict[str, np.ndarray]:
        plant = loop.plant
        ratio = plant.robot.gear_ratio if self.on_rotor else np.ones(plant.n)
        return _encoder_columns(self, plant, states[:, plant.layout["q_m"]], ratio, rng)


@dataclass(frozen=True)
class LinkEncoder:
    """Link positions ``q`` [rad | m], quantized and noisy (see the module docstring)."""

    counts_per_rev: float | None = None
    noise_std: float = 0.0
    name: str = "link_encoder"

    def __post_init__(self):
        _check_counts(self.counts_per_rev, self.name)
        _check_noise(self.noise_std, self.name)

    def measure(self, t, states, loop, rng):
        plant = loop.plant
        return _encoder_columns(self, plant, states[:, plant.layout["q"]], plant.robot.transmission, rng)


@dataclass(frozen=True)
class JointTorqueSensor:
    """Elastic joint torques ``K (W q - q_m)`` [N m], noisy and optionally quantized to ``resolution`` [N m]."""

    noise_std: float = 0.0
    resolution: float | None = None
    name: str = "joint_torque"

    def __post_init__(self):
        _check_noise(self.noise_std, self.name)
        if self.resolution is not None and not (math.isfinite(self.resolution) and self.resolution > 0):
            raise SimulationError(f"{self.name}: resolution must be > 0 N m (or None), got {self.resolution}")

    def measure(self, t, states, loop, rng):
        plant = loop.plant
        layout = plant.layout
        values = plant.elastic_torque(states[:, layout["q"]], states[:, layout["q_m"]])
        return _columns(self.name, plant.joint_names, _quantize(_add_noise(values, self.noise_std, rng),
                                                               self.resolution))


@dataclass(frozen=True)
class ToolAccelerometer:
    """Linear acceleration [m/s^2] of the origin of ``frame`` (default the robot's tool frame), world axes."""

    frame: str | None = None
    noise_std: float = 0.0
    include_gravity: bool = False
    name: str = "tool_acceleration"

    def __post_init__(self):
        _check_noise(self.noise_std, self.name)

    def measure(self, t, states, loop, rng):
        plant = loop.plant
        frame_id = plant.frame_id(self.frame or plant.robot.tool_frame)
        values = np.empty((len(t), 3))
        for k, (time, x) in enumerate(zip(t, states)):
            values[k] = plant.frame_acceleration(x, loop.derivative(float(time), x), frame_id)
        if self.include_gravity:
            values -= plant.robot.gravity
        return _columns(self.name, ("x", "y", "z"), _add_noise(values, self.noise_std, rng))


def _add_noise(values: np.ndarray, noise_std: float, rng: np.random.Generator) -> np.ndarray:
    """``values`` plus zero-mean Gaussian noise of standard deviation ``noise_std`` (no draw when it is 0)."""
    return values + noise_std * rng.standard_normal(values.shape) if noise_std else values


def _encoder_columns(encoder: MotorEncoder | LinkEncoder, plant: Any, values: np.ndarray, counts_ratio: Any,
                     rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Noisy ``values`` quantized to one count, ``2 pi / (counts_per_rev * counts_ratio)`` (none without counts)."""
    resolution = None
    if encoder.counts_per_rev is not None:
        resolution = 2 * np.pi / (encoder.counts_per_rev * counts_ratio)
    return _columns(encoder.name, plant.joint_names, _quantize(_add_noise(values, encoder.noise_std, rng), resolution))


def _columns(name: str, labels: tuple[str, ...], values: np.ndarray) -> dict[str, np.ndarray]:
    return {f"{name}.{label}": values[:, i] for i, label in enumerate(labels)}


Sensor = MotorEncoder | LinkEncoder | JointTorqueSensor | ToolAccelerometer

__all__ = ["JointTorqueSensor", "LinkEncoder", "MotorEncoder", "Sensor", "ToolAccelerometer"]
