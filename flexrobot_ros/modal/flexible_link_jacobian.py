"""Frame Jacobian of a robot with flexible links over the coordinates of its linearization.

The closed-loop linearization of :mod:`flexrobot_ros.modal.flexible_link_linearization` uses the coordinates
``z = [theta (n), eta (m), q_m (elastic joints)]`` about the held pose ``y* = [theta_d, eta*]`` (eta* the beams'
static deflection). A frame at a beam's tip moves with the joints and with the beam's elastic coordinates (seed 003
eq. 10, :func:`~flexrobot_ros.flexible_links.deformed_frames.deformed_frame_placement`); the motors move it only
through the joint springs. Its Jacobian::

    J_z = [d x / d theta, d x / d eta, 0]      (6, n + m + elastic joints)

with ``x`` the frame's translation [m] and rotation [rad] in world axes (``axes='world'``, pinocchio's
LOCAL_WORLD_ALIGNED) or in the frame's own axes (``'local'``), by central differences of the deformed placement
(step 1e-7 in each coordinate, rad or modal amplitude; rounding leaves about 1e-8 m per unit coordinate). It is what
:func:`~flexrobot_ros.modal.participation.modal_participation` needs to weigh the link modes at the tool.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.chain_dynamics import chain_dynamics
from flexrobot_ros.flexible_links.deformed_frames import deformed_frame_placement
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.modal.flexible_link_linearization import static_deflection
from flexrobot_ros.modal.linearization import frame_index

#: Central-difference step in each chain coordinate [rad | m | modal amplitude].
STEP = 1e-7


def flexible_link_frame_jacobian(robot: Any, chain: FlexibleLinkChain, q_d: Any, frame: str | None = None,
                                 axes: str = "world") -> np.ndarray:
    """J_z (6, chain.size + elastic joints) of ``frame`` (default ``robot.tool_frame``) at the pose ``q_d`` (n,)
    [rad | m] held with the beams at their static deflection (module docstring); rows [x, y, z, rx, ry, rz]."""
    if axes not in ("world", "local"):
        raise ModalError(f"axes: expected one of ['world', 'local'], got {axes!r}")
    theta = np.asarray(q_d, dtype=float)
    frame_id = frame_index(robot, frame)
    lagrangian = chain_dynamics(chain).lagrangian
    placements = None if lagrangian is None else \
        (lambda z: lagrangian.evaluate("placements", *lagrangian.arguments(z))[0])
    y = np.concatenate([theta, static_deflection(chain, theta)])
    elastic = sum(name not in robot.rigid_joints for name in chain.joint_names)
    jacobian = np.zeros((6, chain.size + elastic))
    for k in range(chain.size):
        plus, minus = y.copy(), y.copy()
        plus[k] += STEP
        minus[k] -= STEP
        a = deformed_frame_placement(robot.model, chain, frame_id, plus, placements)
        b = deformed_frame_placement(robot.model, chain, frame_id, minus, placements)
        jacobian[:3, k] = (a.translation - b.translation) / (2 * STEP)
        jacobian[3:, k] = pin.log3(a.rotation @ b.rotation.T) / (2 * STEP)
    if axes == "local":
        rotation = deformed_frame_placement(robot.model, chain, frame_id, y, placements).rotation.T
        jacobian[:3], jacobian[3:] = rotation @ jacobian[:3], rotation @ jacobian[3:]
    return jacobian


__all__ = ["STEP", "flexible_link_frame_jacobian"]
