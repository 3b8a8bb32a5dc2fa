"""The beams of a robot's ``flexible_links`` (validated by :mod:`flexrobot_ros.model.flexible_link_specs`) built on
its URDF model: link lengths and beam frames from the geometry, default masses per length from the URDF inertias,
clamped-mass tip bodies from the bodies beyond a link, sliding beams on prismatic joints, hub inertias, and the
:class:`~flexrobot_ros.flexible_links.flexible_chain.FlexibleLinkChain` of a loaded robot.

The beam frame: origin at the link's joint frame, x towards the beam's end, z the joint axis made orthogonal to x
(so y lies in the plane of motion of a planar arm). The flexible link's inertia is the beam's (plus hub and tip mass);
the URDF inertial only supplies the default mass per length.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.beam_link import BeamLink, beam_frame
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain, motion_subspace
from flexrobot_ros.flexible_links.sliding_beam import SlidingBeam
from flexrobot_ros.model.flexible_link_specs import FAMILIES, BeamSpec, DistalPose


def _distal_tip(model: pin.Model, joint: int, pose: DistalPose, length: float, rho: float, rotation: np.ndarray,
                where: str, sliding: Mapping[str, SlidingBeam]) -> tuple[Any, Any]:
    """Seed 004 eq. 12's (M, J, D) per bending plane (beam y, beam z) of the link on ``joint`` from everything beyond
    it frozen at ``pose``, seen at the link's end (length along the beam axis ``rotation[:, 0]`` from the joint
    frame): the rigid inertias of its subtree, a sliding beam (keyed by joint name in ``sliding``) as the dynamics
    has it, undeflected with its tip mass (the payload belongs to the robot: the same with or without a tool)."""
    from flexrobot_ros.flexible_links.clamped_mass import ClampedMassParameters, tip_body_from_model

    q = pin.neutral(model)
    for name, value in pose.items():
        if not model.existJointName(name):
            raise ModelError(f"{where}.distal.{name}: unknown joint; joints: {list(model.names)[1:]}")
        q[model.joints[model.getJointId(name)].idx_q] = value
    tip = pin.SE3(np.eye(3), length * rotation[:, 0])
    inertias = {model.getJointId(name): beam.undeformed_inertia() for name, beam in sliding.items()}
    return tuple(ClampedMassParameters.from_tip_body(
        tip_body_from_model(model, joint, q, tip, rotation[:, 0], rotation[:, k], source=where, inertias=inertias),
        rho, length, where) for k in (1, 2))


def link_joints(model: pin.Model) -> dict[str, int]:
    """URDF link name -> index of the movable joint that carries it (the first BODY frame at each joint)."""
    out: dict[str, int] = {}
    for frame in model.frames:
        parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
        if frame.type == pin.FrameType.BODY and parent > 0 and parent not in out.values() \
                and frame.placement.isIdentity():
            out[frame.name] = parent
    return out


def build_beams(model: pin.Model, specs: Mapping[str, BeamSpec], source: str, method: str | None = None,
                modes: int | None = None, elements: int | None = None,
                sliding: Mapping[str, SlidingBeam] | None = None) -> dict[str, BeamLink]:
    """The beams of ``specs`` on ``model`` keyed by joint name; ``method``/``modes``/``elements`` override every
    link's discretization (the CLI's --link-model, --link-modes, --link-elements); ``sliding``
    (:func:`build_sliding_beams`) are the sliding beams a ``tip: {distal: ..}`` sees as the dynamics has them."""
    joints = link_joints(model)
    beams: dict[str, BeamLink] = {}
    for link, spec in specs.items():
        where = f"{source}: flexible_links.{link}"
        if link not in joints:
            raise ModelError(f"{where}: no movable joint carries a link {link!r}; links: {sorted(joints)}")
        j = joints[link]
        if is_prismatic(model, j):
            continue  # a sliding beam: build_sliding_beams
        if spec.roots != "explicit":
            raise ModelError(f"{where}.roots: only for a link on a prismatic joint (its roots follow the free "
                             f"length); {model.names[j]} is revolute")
        if modes is not None and not 1 <= modes <= FAMILIES[spec.family]:
            raise ModelError(f"{where}: --link-modes {modes}: the {spec.family} family supports "
                             f"1..{FAMILIES[spec.family]}")
        end = None
        if spec.tip_frame is not None:
            if not model.existFrame(spec.tip_frame):
                raise ModelError(f"{where}.tip_frame: unknown frame {spec.tip_frame!r}")
            frame = model.frames[model.getFrameId(spec.tip_frame)]
            parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
            if parent != j:
                raise ModelError(f"{where}.tip_frame: frame {spec.tip_frame!r} is not on link {link!r}")
            end = frame.placement.translation
        elif j + 1 < model.njoints and model.parents[j + 1] == j:
            end = model.jointPlacements[j + 1].translation
        axis_up = np.array([0.0, 0.0, 1.0])
        if end is not None and np.linalg.norm(end) > 1e-9:
            direction, length_geometry = end / np.linalg.norm(end), float(np.linalg.norm(end))
        else:
            direction, length_geometry = np.array([1.0, 0.0, 0.0]), None
        length = spec.length if spec.length is not None else length_geometry
        if length is None:
            raise ModelError(f"{where}.length: missing; the link has no child joint or tip_frame to take it from")
        if spec.length is not None and length_geometry is not None and abs(length - length_geometry) > 1e-9 * length:
            raise ModelError(f"{where}.length: {length} m disagrees with the URDF distance {length_geometry} m "
                             "to the link's end")
        rho = spec.mass_per_length
        if rho is None:
            mass = model.inertias[j].mass
            if mass <= 0:
                raise ModelError(f"{where}.mass_per_length: missing and the URDF link has no mass")
            rho = mass / length
        subspace = motion_subspace(model, j)
        if np.linalg.norm(subspace[3:]) > 1e-12:
            axis_up = subspace[3:]
        rotation = beam_frame(direction, axis_up)
        if isinstance(spec.tip, DistalPose):
            spec = dataclasses.replace(spec, tip=_distal_tip(model, j, spec.tip, length, rho, rotation,
                                                             f"{where}.tip", sliding or {}))
        beams[model.names[j]] = BeamLink.from_spec(spec, length, rho, rotation, np.zeros(3), modes=modes,
                                                   elements=elements, method=method)
    return beams


def is_prismatic(model: pin.Model, joint: int) -> bool:
    """Whether pinocchio joint ``joint`` translates (no angular part in its motion subspace)."""
    return bool(np.linalg.norm(motion_subspace(model, joint)[3:]) < 1e-12)


def build_sliding_beams(model: pin.Model, specs: Mapping[str, BeamSpec], source: str, method: str | None = None,
                        modes: int | None = None, elements: int | None = None) -> dict[str, SlidingBeam]:
    """The sliding beams (flexible links on prismatic joints, seed 004 eqs. 18-22) of ``specs``, keyed by joint name.

    ``length`` is the beam's total length l0 (required; at least the joint's upper limit, so that part of the beam
    stays in the hub); finite elements (their length follows the joint, d / N) or assumed modes of the clamped_mass
    family (the payload's eigenfunctions, roots following d; also what ``method='assumed_modes'`` selects for a
    link the YAML gives finite elements); the URDF link's mass (and a tool on it) is replaced by the beam
    (``mass_per_length``, default URDF mass / l0) and its ``tip_mass``."""
    joints = link_joints(model)
    out: dict[str, SlidingBeam] = {}
    for link, spec in specs.items():
        j = joints.get(link)
        if j is None or not is_prismatic(model, j):
            continue
        where = f"{source}: flexible_links.{link}"
        kind = method or spec.method
        overridden = method == "assumed_modes" and spec.method != "assumed_modes"  # the only family that applies
        if kind == "assumed_modes" and spec.family != "clamped_mass" and not overridden:
            raise ModelError(f"{where}.family: a link on prismatic joint {model.names[j]} slides through its hub: "
                             "its assumed modes are the clamped-mass eigenfunctions with the payload (family: "
                             f"clamped_mass), got {spec.family}")
        if spec.length is None:
            raise ModelError(f"{where}.length: missing; a sliding link needs its total beam length l0 [m]")
        upper = float(model.upperPositionLimit[model.joints[j].idx_q])
        if np.isfinite(upper) and upper > spec.length:
            raise ModelError(f"{where}.length: {spec.length} m is shorter than joint {model.names[j]}'s upper limit "
                             f"{upper} m (the free length); part of the beam must stay in the hub")
        for field, value in (("tip_frame", spec.tip_frame), ("hub_inertia", spec.hub_inertia or None),
                             ("damping_ratio", spec.damping_ratio or None)):
            if value is not None:
                raise ModelError(f"{where}.{field}: not available for a sliding link (prismatic joint "
                                 f"{model.names[j]})")
        rho = spec.mass_per_length
        if rho is None:
            if model.inertias[j].mass <= 0:
                raise ModelError(f"{where}.mass_per_length: missing and the URDF link has no mass")
            rho = model.inertias[j].mass / spec.length
        axis = motion_subspace(model, j)[:3]
        axis = axis / np.linalg.norm(axis)
        side = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        y = side - (side @ axis) * axis  # beam y: the joint frame's x made orthogonal to the axis (z: axis x y)
        y /= np.linalg.norm(y)
        rotation = np.column_stack([axis, y, np.cross(axis, y)])
        lower = float(model.lowerPositionLimit[model.joints[j].idx_q])
        if kind == "assumed_modes" and not (np.isfinite(upper) and 0 < lower < upper):
            raise ModelError(f"{where}: assumed modes on a sliding link need joint {model.names[j]}'s limits "
                             f"(0 < lower < upper, the range of the free length), got [{lower}, {upper}]")
        count = (modes or spec.modes or 2) if kind == "assumed_modes" else 0
        out[model.names[j]] = SlidingBeam(link, spec.length, rho, spec.EI_y, spec.EI_z, spec.tip_mass,
                                          (elements or spec.elements or 2) if not count else 1, rotation,
                                          modes=count, travel=(lower, upper),
                                          roots_state=count > 0 and spec.roots == "integrated")
    return out


def hub_inertias(model: pin.Model, specs: Mapping[str, BeamSpec]) -> dict[str, pin.Inertia]:
    """Rigid hub inertias (about each flexible link's joint axis, at its root) keyed by joint name."""
    joints = link_joints(model)
    out = {}
    for link, spec in specs.items():
        j = joints[link]
        if is_prismatic(model, j):
            continue
        axis = motion_subspace(model, j)[3:]
        out[model.names[j]] = pin.Inertia(0.0, np.zeros(3), spec.hub_inertia * np.outer(axis, axis))
    return out


def chain_from_robot(robot: Any, method: str | None = None, modes: int | None = None,
                     elements: int | None = None) -> FlexibleLinkChain:
    """The flexible-link chain of a loaded FlexibleRobot (its pinocchio model, gravity and ``flexible_links``);
    ``method``/``modes``/``elements`` override every flexible link's discretization."""
    source = str(robot.yaml_path or robot.name)
    specs = robot.flexible_links
    sliding = build_sliding_beams(robot.model, specs, source, method=method, modes=modes, elements=elements)
    beams = build_beams(robot.model, specs, source, method=method, modes=modes, elements=elements, sliding=sliding)
    return FlexibleLinkChain(robot.model, beams, gravity=np.asarray(robot.gravity, dtype=float),
                             hubs=hub_inertias(robot.model, specs), sliding=sliding)


__all__ = ["build_beams", "build_sliding_beams", "chain_from_robot", "hub_inertias", "is_prismatic", "link_joints"]
