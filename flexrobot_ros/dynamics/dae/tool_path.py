"""The tool path of a joint trajectory as a tool-space reference: theta(t) = the rigid robot's tool position along
q(t) (the URDF, pinocchio), so that the tool-space inverse makes the *deformed* tool trace the path the joint
trajectory (a waypoint file, a poly9 move) traces with rigid links.

::

    theta = Gamma(q),    theta' = J(q) qd,    theta'' = J(q) qdd + Jdot qd         (J the ``axes`` rows of the frame
                                                                                   Jacobian, world frame)

at joint time ``t - t0 + trajectory.start_time``; before the motion and after it the path rests at its ends. The
continuity is the joint trajectory's (:class:`~flexrobot_ros.dynamics.dae.reference.JointReference`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.dae.reference import ShiftedTrajectoryReference
from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics
from flexrobot_ros.dynamics.trajectory import Trajectory
from flexrobot_ros.errors import TrajectoryError


@dataclass(frozen=True)
class ToolPath(ShiftedTrajectoryReference):
    """theta(t) [m] of ``kinematics`` (the tool-frame coordinates it controls) along ``trajectory``, its motion
    starting at ``t0`` [s] (module docstring)."""

    kinematics: ToolInverseKinematics
    trajectory: Trajectory
    t0: float = 0.0

    def __post_init__(self) -> None:
        if self.trajectory.n_joints != self.kinematics.robot.n:
            raise TrajectoryError(f"trajectory has {self.trajectory.n_joints} joints; robot "
                                  f"{self.kinematics.robot.name} has {self.kinematics.robot.n}")
        super().__post_init__()

    @property
    def dimension(self) -> int:
        return len(self.kinematics.axes)

    def evaluate(self, t: Any, order: int = 2) -> list[np.ndarray]:
        """[theta, theta', theta''] up to ``order`` (<= 2) at times t [s], each (samples, dimension)."""
        if order > 2:
            raise TrajectoryError(f"a tool path gives derivatives up to 2, {order} asked")
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, qd, qdd = self.trajectory_values(t, 2)
        kinematics = self.kinematics
        out = np.zeros((3, t.size, self.dimension))
        zero = np.zeros(kinematics.model.nv)
        for i in range(t.size):
            out[0, i], jacobian = kinematics.position(q[i])
            pin.forwardKinematics(kinematics.model, kinematics.data, q[i], qd[i], zero)
            drift = pin.getFrameClassicalAcceleration(kinematics.model, kinematics.data, kinematics.frame,
                                                      pin.LOCAL_WORLD_ALIGNED).linear[kinematics.rows]
            out[1, i], out[2, i] = jacobian @ qd[i], jacobian @ qdd[i] + drift
        return [out[k] for k in range(order + 1)]


__all__ = ["ToolPath"]
