"""Receptance (compliance FRF) of the closed loop at a robot frame, e.g. the tool tip for milling stability (seed 001).

A harmonic wrench ``w e^{i omega t}`` at the origin of ``frame`` enters the link-side equations through
``J^T(q^d)`` (seed 000 eq. 2.1); the frame's small displacement is ``J(q^d) dq``. With the linearized closed loop
(eq. 2.8), the receptance is

    H(omega) = J_z (K_bar - omega^2 M_bar + i omega D_bar)^-1 J_z^T,     J_z = [J(q^d), 0]  (6 x 2n)

in [m/N] (force -> translation), [rad/(N m)] (moment -> rotation) and the mixed units for the cross blocks.
Rows and columns are ``[x, y, z, rx, ry, rz]`` in the base (world) axes (``axes="world"``, pinocchio
LOCAL_WORLD_ALIGNED) or in the frame's own axes (``axes="local"``, e.g. the flange axes of seed 001 Fig. 10).

The closed loop is :func:`flexrobot_ros.modal.linearize`'s; the receptance is evaluated for elastic joints on rigid
links (the Jacobian above over [q; q_m]) and refused in one line for other robots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal.held_modes import linearize
from flexrobot_ros.modal.linearization import LinearizedModel, cholesky_mass, frame_index, scratch_data
from flexrobot_ros.model import FlexibleRobot

_AXES = {"world": pin.LOCAL_WORLD_ALIGNED, "local": pin.LOCAL}
DIRECTIONS = ("x", "y", "z", "rx", "ry", "rz")


@dataclass(frozen=True)
class Receptance:
    """``H`` (F, 6, 6) complex receptance at ``frequencies_hz`` (F,) [Hz], see the module docstring; ``frame`` and
    ``axes`` say where and in which axes; ``linearized`` the model it comes from."""

    frequencies_hz: np.ndarray
    H: np.ndarray
    frame: str
    axes: str
    linearized: LinearizedModel

    def translational(self) -> np.ndarray:
        """(F, 3, 3) force-to-translation block [m/N]."""
        return self.H[:, :3, :3]

    def entry(self, output: str, input: str) -> np.ndarray:
        """(F,) one entry, e.g. ``entry("x", "y")`` = H_xy (displacement x per force y)."""
        return self.H[:, DIRECTIONS.index(output), DIRECTIONS.index(input)]


def require_elastic_joints(robot: FlexibleRobot, what: str) -> None:
    """A ModalError naming ``what`` unless ``robot`` has elastic joints alone on rigid links (module docstring)."""
    if not elastic_joints_only(robot):
        raise ModalError(f"robot {robot.name}: {what} is evaluated for elastic joints on rigid links only (the "
                         "tool Jacobian over [q; q_m]); this robot has extra elasticities, gear dampers, flexible "
                         "links or rigid joints")


def frame_jacobian(robot: FlexibleRobot, q: np.ndarray, frame: str | None, axes: str) -> np.ndarray:
    """The (6, n) geometric Jacobian of ``frame`` (default ``robot.tool_frame``) in ``axes`` ('world'|'local')."""
    if axes not in _AXES:
        raise ModalError(f"axes: expected one of {list(_AXES)}, got {axes!r}")
    frame_id = frame_index(robot, frame)
    jacobian = pin.computeFrameJacobian(robot.model, scratch_data(robot), q, frame_id, _AXES[axes])
    return np.reshape(jacobian, (6, robot.n))  # pinocchio returns a flat (6,) array for one joint


def receptance_matrix(linearized: LinearizedModel, jacobian: np.ndarray, frequencies_hz: Any) -> np.ndarray:
    """``J_z (K_bar - omega^2 M_bar + i omega D_bar)^-1 J_z^T`` (F, 6, 6) for a link-side Jacobian (6, n)."""
    frequencies = np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
    if frequencies.ndim != 1 or frequencies.size == 0 or not np.all(np.isfinite(frequencies)):
        raise ModalError(f"frequencies_hz: expected a non-empty 1-D array of finite values, got shape "
                         f"{frequencies.shape}")
    cholesky_mass(linearized.M_bar, linearized.q)
    n = linearized.n
    j_z = np.zeros((jacobian.shape[0], 2 * n))
    j_z[:, :n] = jacobian
    omega = 2.0 * np.pi * frequencies[:, None, None]
    dynamic = linearized.K_bar - omega**2 * linearized.M_bar + 1j * omega * linearized.D_bar
    try:
        solved = np.linalg.solve(dynamic, np.broadcast_to(j_z.T, (frequencies.size, 2 * n, j_z.shape[0])))
    except np.linalg.LinAlgError:
        raise ModalError(f"receptance at q = {linearized.q.tolist()}: the dynamic stiffness is singular at one of "
                         "the frequencies (an undamped mode or a static instability at 0 Hz)") from None
    return j_z @ solved


def receptance(robot: FlexibleRobot, q_d: Any, frequencies_hz: Any, frame: str | None = None, axes: str = "world",
               kp: Any = None, kd: Any = None, wrench: Any = None, wrench_frame: str | None = None) -> Receptance:
    """Receptance of ``robot`` held at ``q_d`` (gains/preload as in :func:`~flexrobot_ros.modal.linearize`) at
    ``frame`` (default the tool frame) over ``frequencies_hz`` [Hz]; see the module docstring for units and axes."""
    require_elastic_joints(robot, "the receptance")
    linearized = linearize(robot, q_d, kp=kp, kd=kd, wrench=wrench, frame=wrench_frame)
    jacobian = frame_jacobian(robot, linearized.q, frame, axes)
    h = receptance_matrix(linearized, jacobian, frequencies_hz)
    return Receptance(frequencies_hz=np.atleast_1d(np.asarray(frequencies_hz, dtype=float)), H=h,
                      frame=frame or robot.tool_frame, axes=axes, linearized=linearized)


__all__ = ["Receptance", "receptance", "receptance_matrix", "frame_jacobian", "require_elastic_joints", "DIRECTIONS"]
