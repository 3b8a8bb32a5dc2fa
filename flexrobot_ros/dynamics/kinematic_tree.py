"""The kinematic and inertial description of a kinematic tree of 1-DoF joints, read from a pinocchio ``Model``.

Both inverse-dynamics algorithms (:mod:`.ejnea` numeric, :mod:`.sdrnea` symbolic) work on this description rather
than on pinocchio's ``Data``, so they see the same joint frames, axes and inertias pinocchio's ``rnea`` uses.

Topology (pinocchio's ``model.parents``): joint ``i`` (0-based here, pinocchio's joint ``i + 1``) moves body ``i``
relative to the body of its parent joint ``parents[i]``, or relative to the base when ``parents[i] == -1``. Joints
are in pinocchio's order, which is topological (``parents[i] < i``), so a forward pass over ``i = 0..n-1`` meets
every parent before its children and a backward pass over ``i = n-1..0`` every child before its parent. A serial
chain is the tree with ``parents[i] == i - 1``; a robot whose unmodelled branches are locked (grippers, a head
beside an arm) is a tree, and so are several chains on one base (a forest: several joints with parent -1).

Frames (pinocchio's convention): joint ``i`` has a frame attached to its child body. At ``q_i = 0`` it sits at the
placement ``(R0_i, p0_i)`` in the parent joint's frame (``model.jointPlacements``); a revolute joint then rotates it
by ``q_i`` about ``axis_i`` (unit vector in the joint frame), a prismatic joint translates it by ``q_i`` along
``axis_i``. Body inertias (``model.inertias``) are expressed in the joint frame: mass [kg], centre of mass [m],
rotational inertia about the centre of mass [kg·m²].
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError

#: pinocchio joint models accepted, mapped to their joint type.
_JOINT_TYPES = {
    "JointModelRX": "revolute",
    "JointModelRY": "revolute",
    "JointModelRZ": "revolute",
    "JointModelRevoluteUnaligned": "revolute",
    "JointModelPX": "prismatic",
    "JointModelPY": "prismatic",
    "JointModelPZ": "prismatic",
    "JointModelPrismaticUnaligned": "prismatic",
}


@dataclass(frozen=True)
class TorqueDerivatives:
    """Link-side joint torques and their time derivatives, each (samples, n).

    tau [N·m or N] = M(q) qdd + C(q, qd) qd + g(q) (+ armature qdd), dtau = d tau / dt, ddtau = d² tau / dt².
    """

    tau: np.ndarray
    dtau: np.ndarray
    ddtau: np.ndarray


@dataclass(frozen=True)
class KinematicTree:
    """A tree of ``n`` one-DoF revolute/prismatic joints (arrays in SI units; module docstring for the topology).

    Attributes:
        joint_names: pinocchio joint names, in pinocchio's (topological) order.
        parents: (n,) int, the index of each joint's parent joint, -1 for a joint on the base.
        revolute: (n,) bool, True for revolute and False for prismatic joints.
        axis: (n, 3) unit joint axes in the joint frames.
        rotation: (n, 3, 3) rotations R0 of the joint frames at q = 0 relative to the parent joint frame.
        translation: (n, 3) origins p0 [m] of the joint frames at q = 0 in the parent joint frame.
        mass: (n,) body masses [kg].
        com: (n, 3) centres of mass [m] in the joint frames.
        inertia: (n, 3, 3) rotational inertias [kg·m²] about the centres of mass, joint-frame axes.
        armature: (n,) pinocchio armature [kg·m² or kg], added as ``armature * qdd`` like ``pin.rnea``.
        gravity: (3,) gravity acceleration [m/s²] in the base frame.
    """

    joint_names: tuple[str, ...]
    parents: np.ndarray
    revolute: np.ndarray
    axis: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    armature: np.ndarray
    gravity: np.ndarray

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    def children(self, i: int) -> tuple[int, ...]:
        """The joints whose parent is joint ``i`` (-1: the joints on the base), in order."""
        return tuple(int(j) for j in np.flatnonzero(self.parents == i))

    @classmethod
    def from_model(cls, model: pin.Model) -> "KinematicTree":
        """Read a kinematic tree from a pinocchio model; raise :class:`ModelError` for anything else.

        Accepted: every joint a revolute or prismatic one-DoF joint (RX/RY/RZ/RevoluteUnaligned,
        PX/PY/PZ/PrismaticUnaligned); pinocchio adds a joint only to the universe or an earlier joint, so the order
        is topological.
        """
        n = model.njoints - 1
        if n < 1:
            raise ModelError(f"model {model.name!r}: no joints; expected a tree of revolute/prismatic joints")
        names = tuple(model.names[1:])
        parents = np.array([model.parents[i] - 1 for i in range(1, n + 1)], dtype=int)
        revolute = np.zeros(n, dtype=bool)
        axis = np.zeros((n, 3))
        rotation = np.zeros((n, 3, 3))
        translation = np.zeros((n, 3))
        mass = np.zeros(n)
        com = np.zeros((n, 3))
        inertia = np.zeros((n, 3, 3))
        for i in range(1, n + 1):
            joint = model.joints[i]
            kind = _JOINT_TYPES.get(joint.shortname())
            if kind is None:
                raise ModelError(
                    f"model {model.name!r}: joint {names[i - 1]!r} is a {joint.shortname()}; expected a one-DoF "
                    f"revolute or prismatic joint ({', '.join(sorted(_JOINT_TYPES))})")
            # motion subspace S [linear; angular] in the joint frame: the joint's column of its own LOCAL Jacobian
            # (pinocchio 2.x has no JointModel.createData/calc)
            local = pin.computeJointJacobian(model, model.createData(), pin.neutral(model), i)
            subspace = np.asarray(local)[:, joint.idx_v]
            revolute[i - 1] = kind == "revolute"
            axis[i - 1] = subspace[3:] if revolute[i - 1] else subspace[:3]
            placement = model.jointPlacements[i]
            rotation[i - 1] = placement.rotation
            translation[i - 1] = placement.translation
            body = model.inertias[i]
            mass[i - 1] = body.mass
            com[i - 1] = body.lever
            inertia[i - 1] = body.inertia
        if model.nq != n or model.nv != n:
            raise ModelError(f"model {model.name!r}: nq = {model.nq}, nv = {model.nv}; expected both = {n}")
        armature = getattr(model, "armature", np.zeros(n))  # pinocchio 2.x models have no armature
        arrays = dict(revolute=revolute, axis=axis, rotation=rotation, translation=translation, mass=mass, com=com,
                      inertia=inertia, armature=np.array(armature, dtype=float),
                      gravity=np.array(model.gravity.linear, dtype=float))
        for name, value in arrays.items():
            if name != "revolute" and not np.all(np.isfinite(value)):
                raise ModelError(f"model {model.name!r}: non-finite {name} in the pinocchio model")
            value.setflags(write=False)
        parents.setflags(write=False)
        return cls(joint_names=names, parents=parents, **arrays)

    def digest(self) -> str:
        """sha256 over every number of the tree (exact, via ``float.hex``): the cache key of generated code."""
        h = hashlib.sha256()
        h.update(repr(self.joint_names).encode())
        for name in ("parents", "revolute", "axis", "rotation", "translation", "mass", "com", "inertia", "armature",
                     "gravity"):
            h.update(name.encode())
            h.update(" ".join(float(x).hex() for x in np.asarray(getattr(self, name), dtype=float).ravel()).encode())
        return h.hexdigest()
