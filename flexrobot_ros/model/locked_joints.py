"""``locked_joints``: movable URDF joints held at a position (grippers, wheels, the branches of a tree that are not
modelled), by pinocchio's reduced model (``pin.buildReducedModel``): the locked joints become fixed joints at the
given positions, their bodies' inertias merge into the parent bodies, every frame stays.

Positions are [rad] for revolute and continuous joints, [m] for prismatic ones, and must lie within the URDF's
position limits (continuous joints have none).
"""
from __future__ import annotations

from typing import Mapping

import pinocchio as pin

from flexrobot_ros.errors import ModelError

#: Tolerance [rad | m] on a lock position at a joint limit.
LOCK_TOLERANCE = 1e-9


def lock_joints(model: pin.Model, locked: Mapping[str, float], source: str) -> pin.Model:
    """``model`` with the joints of ``locked`` (name -> position) fixed at their positions; ``source`` (the
    flexibility YAML) names the field in errors. Every name must be a movable one-coordinate joint of ``model``."""
    if not locked:
        return model
    movable = list(model.names[1:])
    reference = pin.neutral(model)
    ids = []
    for name, position in locked.items():
        where = f"{source}: locked_joints.{name}"
        if name not in movable:
            raise ModelError(f"{where}: no movable joint {name!r} in the URDF; movable joints are {movable}")
        j = model.getJointId(name)
        if model.joints[j].nq != 1:
            raise ModelError(f"{where}: a {model.joints[j].shortname()} joint ({model.joints[j].nq} coordinates) "
                             "cannot be held by one position")
        q = model.idx_qs[j]
        lower, upper = model.lowerPositionLimit[q], model.upperPositionLimit[q]
        if not lower - LOCK_TOLERANCE <= position <= upper + LOCK_TOLERANCE:
            raise ModelError(f"{where}: position {position:.6g} is outside the joint's limits "
                             f"[{lower:.6g}, {upper:.6g}] (rad | m)")
        reference[q] = position
        ids.append(j)
    return pin.buildReducedModel(model, sorted(ids), reference)


__all__ = ["lock_joints", "LOCK_TOLERANCE"]
