"""World placement of a frame of a flexible-link robot that follows the deformed links.

A frame on link i is carried by B_i, the link's body frame after the joint (world axes and origin); a frame sitting
at a beam's undeformed tip also takes the tip's elastic motion (seed 003 eq. 10: the tip displacement and rotation
of the assumed modes or finite elements). A sliding beam's frames come from the CasADi Lagrangian, whose placements
already follow its deformed tip.
"""
from __future__ import annotations

from typing import Any, Callable

import casadi as ca
import numpy as np
import pinocchio as pin

from flexrobot_ros.flexible_links.beam_link import tip_rotation_expression


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


def deformed_frame_position_expression(model: pin.Model, chain: Any, frame_id: int, z: ca.SX,
                                       placements: ca.SX) -> ca.SX:
    """CasADi expression of the world position (3,) [m] of frame ``frame_id`` at chain coordinates ``z``: the
    symbolic twin of :func:`deformed_frame_placement`'s translation, for exact derivatives.

    ``placements`` the chain Lagrangian's body frames at ``z`` (12 numbers per body, [R column-major, p] of B_i,
    world; :attr:`~flexrobot_ros.flexible_links.lagrangian.LagrangianDynamics.placements`). A frame at a beam's
    undeformed tip follows the tip: ``B_i * tip * D(eta) * tip^-1 * frame`` with D the tip displacement (in the tip
    frame's axes) and rotation about z then y by the tip slopes (seed 003 eq. 10, the Lagrangian's convention)."""
    frame = model.frames[frame_id]
    parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
    if parent == 0:
        return ca.SX(ca.DM(frame.placement.translation.reshape(3, 1)))
    i = parent - 1
    R = ca.reshape(placements[12 * i:12 * i + 9], 3, 3)
    p = placements[12 * i + 9:12 * i + 12]
    body = chain.bodies[i]
    if body.beam is not None and body.sliding is None:
        beam = body.beam
        tip = beam.undeformed_tip()
        if np.linalg.norm(tip.translation - frame.placement.translation) < 1e-9 * max(1.0, beam.length):
            eta = z[chain.n + body.eta.start:chain.n + body.eta.stop]
            a = ca.dot(ca.DM(beam.tip_slope_y), eta)
            b = -ca.dot(ca.DM(beam.tip_slope_z), eta)
            offset = (tip.inverse() * frame.placement).translation.reshape(3, 1)
            local = ca.DM(beam.tip_deflection) @ eta + tip_rotation_expression(a, b) @ ca.DM(offset)
            return p + R @ (ca.DM(tip.translation.reshape(3, 1)) + ca.DM(tip.rotation) @ local)
    return p + R @ ca.DM(frame.placement.translation.reshape(3, 1))
