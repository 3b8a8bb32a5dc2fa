"""World placement of a frame of a flexible-link robot that follows the deformed links.

A frame on link i is carried by B_i, the link's body frame after the joint (world axes and origin); a frame sitting
at a beam's undeformed tip also takes the tip's elastic motion (seed 003 eq. 10: the tip displacement and rotation
of the assumed modes or finite elements). A sliding beam's frames come from the CasADi Lagrangian, whose placements
already follow its deformed tip.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pinocchio as pin


def deformed_frame_placement(model: pin.Model, chain: Any, frame_id: int, z: np.ndarray,
                             lagrangian_placements: Callable[[np.ndarray], np.ndarray] | None = None) -> pin.SE3:
    """Placement (world) of frame ``frame_id`` of ``model`` at chain coordinates ``z`` (joints then deformations).

    ``chain`` is the robot's :class:`~flexrobot_ros.flexible_links.flexible_chain.FlexibleLinkChain`;
    ``lagrangian_placements(z)`` (for chains with sliding beams) gives the 12 numbers per body [R column-major, p]
    of every B_i, flat.
    """
    frame = model.frames[frame_id]
    parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
    if parent == 0:
        return frame.placement
    i = parent - 1
    if lagrangian_placements is not None:
        values = np.asarray(lagrangian_placements(z)).ravel()[12 * i:12 * i + 12]
        return pin.SE3(values[:9].reshape(3, 3, order="F"), values[9:]) * frame.placement
    state = chain.propagate(z, np.zeros(chain.size), with_dynamics=False)
    body = chain.bodies[i]
    if body.beam is not None:
        tip = body.beam.undeformed_tip()
        if np.linalg.norm(tip.translation - frame.placement.translation) < 1e-9 * max(1.0, body.beam.length):
            D = body.beam.tip_motion(state.eta[i], np.zeros(body.m))[0]
            return state.placements[i] * tip * D * tip.inverse() * frame.placement
    return state.placements[i] * frame.placement
