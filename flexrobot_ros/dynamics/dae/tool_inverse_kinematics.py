"""Inverse kinematics of the rigid robot (the URDF, pinocchio) along a tool-space reference: the joint path a
tool-space inverse starts from, the poses its zeros are computed at, and the link reference of the rigid baseline.

The controlled outputs are ``axes`` (n of x, y, z) of the tool frame's origin, world frame [m]. At one target the
joint positions come from damped least squares (Levenberg-Marquardt: ``dq = J^T (J J^T + (1e-6 + |e|^2) I)^-1 e``)
from a start pose, then Newton steps to round-off; along a path each sample starts from the previous one (the
branch, e.g. the elbow, of the start pose is kept). Rates and accelerations are exact::

    qd = J^-1 theta',      qdd = J^-1 (theta'' - Jdot qd)         (J the (n, n) rows ``axes`` of the frame Jacobian)

with ``Jdot qd`` pinocchio's classical acceleration of the frame at zero joint acceleration.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.dae.inverse_dae import DaeError
from flexrobot_ros.dynamics.dae.tool_axes import AXIS_INDEX
from flexrobot_ros.dynamics.trajectory import TrajectorySamples

#: Converged when the tool is this close to its target [m].
POSITION_TOLERANCE = 1e-12


class ToolInverseKinematics:
    """Inverse kinematics of ``robot``'s rigid model for the tool-frame coordinates ``axes`` (module docstring)."""

    def __init__(self, robot: Any, axes: Sequence[str]):
        self.robot, self.axes = robot, tuple(axes)
        self.rows = [AXIS_INDEX[a] for a in self.axes]
        self.model, self.data = robot.model, robot.model.createData()
        self.frame = robot.frame_id(robot.tool_frame)

    def position(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Gamma (n,) [m], dGamma/dq (n, n)) at joint positions q."""
        pin.framesForwardKinematics(self.model, self.data, q)
        jacobian = pin.computeFrameJacobian(self.model, self.data, q, self.frame, pin.LOCAL_WORLD_ALIGNED)
        return self.data.oMf[self.frame].translation[self.rows].copy(), jacobian[self.rows, :]

    def solve(self, target: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Joint positions (n,) with the tool at ``target`` [m], from ``start`` (module docstring)."""
        q = np.array(start, dtype=float)
        for _ in range(200):
            gamma, jacobian = self.position(q)
            error = target - gamma
            if np.abs(error).max() < POSITION_TOLERANCE:
                return q
            if np.abs(error).max() < 1e-8:          # Newton near the solution
                q = q + np.linalg.solve(jacobian, error)
                continue
            damping = 1e-6 + float(error @ error)
            q = q + jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + damping * np.eye(len(error)), error)
        raise DaeError(f"robot {self.robot.name}: no joint positions put the tool {self.robot.tool_frame} at "
                       f"{np.round(target, 6).tolist()} m ({list(self.axes)}) from {np.round(start, 4).tolist()}: "
                       "outside the workspace, or at a singular pose")

    def path(self, reference: Any, t: np.ndarray, start: np.ndarray | None = None) -> TrajectorySamples:
        """Joint samples along ``reference`` (``evaluate(t, 2)``: positions, rates, accelerations [m, m/s, m/s^2])
        at times t [s]; q, qd, qdd exact (module docstring), the jerk q3 and snap q4 by central differences of qdd
        (:func:`numpy.gradient`; the rigid inverse dynamics' tau uses neither)."""
        if reference.dimension != len(self.axes):
            raise DaeError(f"robot {self.robot.name}: the tool reference has {reference.dimension} coordinates; "
                           f"{len(self.axes)} expected (tool axes {list(self.axes)})")
        t = np.asarray(t, dtype=float)
        theta, rate, acceleration = reference.evaluate(t, 2)
        q = default_guess(self.robot) if start is None else np.asarray(start, dtype=float)
        if q.shape != (self.robot.n,):
            raise DaeError(f"q_g_guess: expected {self.robot.n} values for {list(self.robot.joint_names)}, got "
                           f"{np.asarray(start).tolist()}")
        out = np.zeros((t.size, 3, self.robot.n))
        zero = np.zeros(self.model.nv)
        for i in range(t.size):
            q = self.solve(theta[i], q)
            _, jacobian = self.position(q)
            qd = np.linalg.solve(jacobian, rate[i])
            pin.forwardKinematics(self.model, self.data, q, qd, zero)
            drift = pin.getFrameClassicalAcceleration(self.model, self.data, self.frame,
                                                      pin.LOCAL_WORLD_ALIGNED).linear[self.rows]
            out[i] = q, qd, np.linalg.solve(jacobian, acceleration[i] - drift)
        q, qd, qdd = out[:, 0], out[:, 1], out[:, 2]
        q3 = np.gradient(qdd, t, axis=0) if t.size > 1 else np.zeros_like(qdd)
        q4 = np.gradient(q3, t, axis=0) if t.size > 1 else np.zeros_like(qdd)
        return TrajectorySamples(t=t, q=q, qd=qd, qdd=qdd, q3=q3, q4=q4)


def default_guess(robot: Any) -> np.ndarray:
    """The inverse kinematics' start when none is given: every joint 0.5 (rad | m) from the middle of its URDF
    range towards the upper limit (at most half-way there; 0.5 where the range is unbounded), away from the
    stretched-out singularity of serial arms."""
    lower = np.asarray(robot.model.lowerPositionLimit, dtype=float)[:robot.n]
    upper = np.asarray(robot.model.upperPositionLimit, dtype=float)[:robot.n]
    bounded = np.isfinite(lower) & np.isfinite(upper) & (upper - lower < 1e10)
    middle = np.where(bounded, 0.5 * (lower + upper), 0.0)
    return np.where(bounded, np.minimum(middle + 0.5, 0.5 * (middle + upper)), 0.5)


__all__ = ["POSITION_TOLERANCE", "ToolInverseKinematics", "default_guess"]
