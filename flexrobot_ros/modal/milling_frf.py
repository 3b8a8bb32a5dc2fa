"""The 2 x 2 tool-tip receptance in the feed plane of a milling cut: from the robot at a pose or from modal data.

Machining frame (as :mod:`flexrobot_ros.modal.stability_lobes`): z = the tool axis, pointing from the tool tip
into the spindle; x = the feed direction (perpendicular to z); y = z cross x. Both directions are given in the
robot's base (world) axes, as the workpiece is fixed in the world: e.g. a vertical spindle over a horizontal table
has ``tool_axis = (0, 0, 1)`` for a base with z up. With R = [x y z] (3 x 3, columns in base axes) and the
translational block H_t (3 x 3, [m/N], base axes) of the receptance at the tool frame
(:func:`flexrobot_ros.modal.frf.receptance_matrix`), the machining-frame receptance is R^T H_t R and the feed-plane
FRF is its upper-left 2 x 2 block ``[[Phi_xx, Phi_xy], [Phi_yx, Phi_yy]]``, cross terms included: the robot's
compliance couples the feed and normal directions (seed 001, section 1: the cross terms matter for robots).
The tool tip is the origin of the robot's tool frame; a cutter sticking out of it is modelled by a tool frame at
its tip (the flexibility YAML's ``tool_frame``) or by ``tip_offset``.

Without a robot model the feed-plane FRF comes from the structure's modes (:class:`ModalFeedPlaneFRF`) or from a
measurement (:class:`MeasuredFeedPlaneFRF`); :mod:`flexrobot_ros.modal.milling_frf_files` reads both from files.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.frf import frame_jacobian, receptance_matrix, require_elastic_joints
from flexrobot_ros.modal.held_modes import linearize
from flexrobot_ros.modal.linearization import LinearizedModel, frame_index, scratch_data
from flexrobot_ros.model import FlexibleRobot


def _unit(vector: Any, what: str) -> np.ndarray:
    values = np.asarray(vector, dtype=float).ravel()
    if values.shape != (3,) or not np.all(np.isfinite(values)) or np.linalg.norm(values) == 0:
        raise ModalError(f"milling: {what}: expected a non-zero finite 3-vector in base axes, got {values.tolist()}")
    return values / np.linalg.norm(values)


def machining_frame(tool_axis: Any, feed_direction: Any) -> np.ndarray:
    """R (3, 3): columns x (feed), y = z cross x, z (tool axis) in base axes; the two inputs must be
    perpendicular within 1e-6 (cosine)."""
    z = _unit(tool_axis, "tool axis")
    x = _unit(feed_direction, "feed direction")
    if abs(x @ z) > 1e-6:
        raise ModalError(f"milling: the feed direction {x.round(6).tolist()} must be perpendicular to the tool axis "
                         f"{z.round(6).tolist()} (the angle between them is {np.degrees(np.arccos(x @ z)):.3f} deg)")
    x = x - (x @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


@dataclass(frozen=True)
class RobotFeedPlaneFRF:
    """Callable ``frf(frequencies_hz (F,)) -> (F, 2, 2)`` [m/N]: the receptance of the linearized closed loop
    ``linearized`` at the tool tip (translational Jacobian ``jacobian`` (3, n), base axes) in the feed plane of
    the machining frame ``rotation`` (3, 3); ``position`` (3,) [m] the tool tip in base axes."""

    linearized: LinearizedModel
    jacobian: np.ndarray
    rotation: np.ndarray
    position: np.ndarray

    def __call__(self, frequencies_hz: np.ndarray) -> np.ndarray:
        feed_plane = self.rotation[:, :2].T @ self.jacobian  # (2, n): x/y displacement per joint rate
        return receptance_matrix(self.linearized, feed_plane, frequencies_hz)


def robot_feed_plane_frf(robot: FlexibleRobot, q_d: Any, tool_axis: Any = (0.0, 0.0, 1.0),
                         feed_direction: Any = (1.0, 0.0, 0.0), frame: str | None = None, tip_offset: Any = None,
                         kp: Any = None, kd: Any = None, linearized: LinearizedModel | None = None
                         ) -> RobotFeedPlaneFRF:
    """The feed-plane receptance of ``robot`` held at ``q_d`` (gains ``kp``, ``kd`` as in
    :func:`~flexrobot_ros.modal.linearize`, or an already ``linearized`` model at q_d) at the origin of ``frame``
    (default the tool frame) moved by ``tip_offset`` (3,) [m] in that frame's axes, for the machining frame of
    ``tool_axis`` and ``feed_direction`` (base axes). Elastic joints on rigid links only (a ModalError otherwise:
    :func:`~flexrobot_ros.modal.frf.require_elastic_joints`)."""
    require_elastic_joints(robot, "the tool-tip receptance")
    rotation = machining_frame(tool_axis, feed_direction)
    if linearized is None:
        linearized = linearize(robot, q_d, kp=kp, kd=kd)
    q = linearized.q
    jacobian = frame_jacobian(robot, q, frame, "world")  # rows [v; w] at the frame origin, base axes
    data = scratch_data(robot)
    pin.framesForwardKinematics(robot.model, data, q)
    placement = data.oMf[frame_index(robot, frame)]
    position = np.array(placement.translation)
    translational = jacobian[:3].copy()
    if tip_offset is not None:
        offset = np.asarray(tip_offset, dtype=float).ravel()
        if offset.shape != (3,) or not np.all(np.isfinite(offset)):
            raise ModalError(f"milling: tip offset: expected a finite 3-vector [m] in the tool frame's axes, got "
                             f"{offset.tolist()}")
        lever = np.array(placement.rotation) @ offset  # base axes
        translational -= pin.skew(lever) @ jacobian[3:]  # v_tip = v + w x r
        position = position + lever
    return RobotFeedPlaneFRF(linearized=linearized, jacobian=translational, rotation=rotation, position=position)


@dataclass(frozen=True)
class ModalFeedPlaneFRF:
    """Callable ``frf(frequencies_hz (F,)) -> (F, 2, 2)`` [m/N] of a structure given by its modes:
    Phi(w) = sum_r u_r u_r^T / (w_r^2 - w^2 + 2 i zeta_r w_r w), with ``natural_frequencies_hz`` (m,) [Hz],
    ``damping_ratios`` (m,) fractions and mass-normalized mode shapes ``mode_shapes`` (2, m) [1/sqrt(kg)] in the
    machining frame's x/y (a mode along x alone has shape (1/sqrt(m_x), 0))."""

    natural_frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    mode_shapes: np.ndarray

    def __post_init__(self) -> None:
        frequencies = np.asarray(self.natural_frequencies_hz, dtype=float).ravel()
        zeta = np.asarray(self.damping_ratios, dtype=float).ravel()
        shapes = np.asarray(self.mode_shapes, dtype=float)
        if frequencies.size == 0 or zeta.shape != frequencies.shape or shapes.shape != (2, frequencies.size):
            raise ModalError(f"milling: modal FRF: expected m natural frequencies, m damping ratios and (2, m) mode "
                             f"shapes, got {frequencies.size}, {zeta.size} and {shapes.shape}")
        if not (np.all(frequencies > 0) and np.all(zeta >= 0) and np.all(np.isfinite(shapes))):
            raise ModalError("milling: modal FRF: natural frequencies must be positive [Hz], damping ratios >= 0 "
                             "and mode shapes finite")
        object.__setattr__(self, "natural_frequencies_hz", frequencies)
        object.__setattr__(self, "damping_ratios", zeta)
        object.__setattr__(self, "mode_shapes", shapes)

    def __call__(self, frequencies_hz: np.ndarray) -> np.ndarray:
        omega = 2.0 * np.pi * np.atleast_1d(np.asarray(frequencies_hz, dtype=float))[:, None]
        omega_r = 2.0 * np.pi * self.natural_frequencies_hz[None, :]
        factor = 1.0 / (omega_r**2 - omega**2 + 2j * self.damping_ratios * omega_r * omega)  # (F, m)
        return np.einsum("fr,ir,jr->fij", factor, self.mode_shapes, self.mode_shapes)


@dataclass(frozen=True)
class MeasuredFeedPlaneFRF:
    """Callable ``frf(frequencies_hz (F,)) -> (F, 2, 2)`` [m/N] of a receptance known at ``frequencies_hz`` (M,)
    [Hz] (strictly increasing, >= 0) as ``values`` (M, 2, 2) complex [m/N] in the machining frame's x/y (entry
    [i, j]: displacement i per force j, e.g. [0, 1] = Phi_xy), e.g. measured by a hammer test: linear in the real
    and imaginary parts between the given frequencies. A frequency outside [first, last] is refused (nothing is
    extrapolated)."""

    frequencies_hz: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        frequencies = np.asarray(self.frequencies_hz, dtype=float).ravel()
        values = np.asarray(self.values, dtype=complex)
        if frequencies.size < 2 or values.shape != (frequencies.size, 2, 2):
            raise ModalError(f"milling: measured FRF: expected M >= 2 frequencies and (M, 2, 2) receptances, got "
                             f"{frequencies.size} and {values.shape}")
        if not (np.all(np.isfinite(frequencies)) and frequencies[0] >= 0 and np.all(np.diff(frequencies) > 0)):
            raise ModalError("milling: measured FRF: frequencies must be finite, >= 0 Hz and strictly increasing")
        if not np.all(np.isfinite(values)):
            raise ModalError("milling: measured FRF: receptances must be finite")
        object.__setattr__(self, "frequencies_hz", frequencies)
        object.__setattr__(self, "values", values)

    def __call__(self, frequencies_hz: np.ndarray) -> np.ndarray:
        frequencies = np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
        low, high = self.frequencies_hz[0], self.frequencies_hz[-1]
        if frequencies.size and (frequencies.min() < low or frequencies.max() > high):
            raise ModalError(f"milling: measured FRF: {frequencies.min():g}..{frequencies.max():g} Hz asked, the "
                             f"measurement covers {low:g}..{high:g} Hz")
        out = np.empty((frequencies.size, 2, 2), dtype=complex)
        for i in range(2):
            for j in range(2):
                entry = self.values[:, i, j]
                out[:, i, j] = (np.interp(frequencies, self.frequencies_hz, entry.real)
                                + 1j * np.interp(frequencies, self.frequencies_hz, entry.imag))
        return out


__all__ = ["machining_frame", "RobotFeedPlaneFRF", "robot_feed_plane_frf", "ModalFeedPlaneFRF",
           "MeasuredFeedPlaneFRF"]
