"""A starter flexibility YAML for any URDF (``flexrobot init``): the chain from a base link to a tip link elastic,
every other movable joint locked, every number a placeholder marked as such, chosen by the rule of
:mod:`.placeholder_rule` so that the file loads and its closed loop is stable with sensible modes.

The chain and its default ends: :mod:`.kinematic_tree` (base: the URDF's root link; tip: the end of the longest
chain of movable joints, stopping where the longest branches tie, as at a gripper's fingers).

Start pose q0 [rad | m]: every joint at 0 clipped into its URDF limits (continuous joints: 0). The locked joints are
held at their q0 (``locked_joints``); the elastic joints' q0 is where the driven inertias ``M_ii`` (pinocchio's CRBA
of the model with the locked joints held) are taken, and the pose to give ``flexrobot modal --q`` first.
"""
from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pinocchio as pin
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.kinematic_tree import KinematicTree
from flexrobot_ros.model.locked_joints import lock_joints
from flexrobot_ros.model.placeholder_rule import RULE, SOURCES, Placeholders, placeholders
from flexrobot_ros.model.urdf_source import urdf_model

#: Smallest link-side inertia an elastic joint may drive [kg m^2 | kg]: below it the joint moves (almost) nothing.
SMALLEST_DRIVEN_INERTIA = 1e-9
#: Pinocchio's one-coordinate prismatic joints (the others with one coordinate are revolute).
PRISMATIC = ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismatic")
#: Width of the YAML's header comment [characters].
WIDTH = 118


@dataclass(frozen=True)
class StarterJoint:
    """One movable joint of the starter file: ``kind`` 'revolute' | 'prismatic' (a continuous URDF joint is
    revolute with ``continuous`` set), limits and start position [rad | m]; for an elastic joint the inertia it
    drives ``driven_inertia`` [kg m^2 | kg] at q0 and its ``placeholders``, else None."""

    name: str
    kind: str
    continuous: bool
    lower: float
    upper: float
    start: float
    driven_inertia: float | None = None
    placeholders: Placeholders | None = None

    @property
    def unit(self) -> str:
        """Unit of the joint coordinate: 'rad' or 'm'."""
        return "m" if self.kind == "prismatic" else "rad"

    @property
    def limits(self) -> str:
        """The URDF limits as text with the unit ('continuous (no position limits)' for a continuous joint)."""
        if self.continuous:
            return "continuous (no position limits)"
        return f"limits [{self.lower:.6g}, {self.upper:.6g}] {self.unit}"


@dataclass(frozen=True)
class StarterFile:
    """The starter YAML ``text`` and what it holds: the ``elastic`` joints (base to tip) and the ``locked`` ones,
    the chain's ends and whether each was given (``base_given``, ``tip_given``) or chosen, the links hanging from
    the tip through fixed joints (other candidate tool frames)."""

    robot: str
    base: str
    tip: str
    base_given: bool
    tip_given: bool
    elastic: tuple[StarterJoint, ...]
    locked: tuple[StarterJoint, ...]
    frames_below_tip: tuple[str, ...]
    text: str = ""

    @property
    def start_pose(self) -> np.ndarray:
        """q0 of the elastic joints [rad | m], base to tip."""
        return np.array([joint.start for joint in self.elastic])


def start_position(lower: float, upper: float) -> float:
    """0 clipped into [lower, upper] [rad | m]: the lock position, and the elastic joints' start pose."""
    return float(np.clip(0.0, lower, upper))


def starter_yaml(urdf_text: str, source: str, urdf_reference: str, base: str | None = None, tip: str | None = None,
                 xacro_args: Mapping[str, str] | None = None, header: Sequence[str] = ()) -> StarterFile:
    """The starter flexibility YAML of the URDF ``urdf_text`` (``source``: its file, for errors), whose ``urdf:``
    field is ``urdf_reference`` (a .xacro file with ``xacro_args``). ``base`` / ``tip``: the chain's ends
    (defaults: the root link, and :meth:`.KinematicTree.default_tip`); ``header``: comment lines put first.

    Raises ModelError naming the link, joint or file: unknown link, tip not below base, no movable joint between
    them, a multi-coordinate joint (floating, planar), an elastic joint that drives no inertia."""
    tree = KinematicTree(urdf_text, source)
    base_link = tree.root if base is None else tree.check_link(base, "base link")
    tip_link = tree.default_tip(base_link) if tip is None else tree.check_link(tip, "tip link")
    chain = [joint.name for joint in tree.chain(base_link, tip_link) if joint.movable]
    if not chain:
        raise ModelError(f"base link {base_link!r}, tip link {tip_link!r}: no movable joint between them in URDF "
                         f"{source}; nothing would be elastic")
    model, continuous = urdf_model(urdf_text, source)
    joints: dict[str, StarterJoint] = {}
    for j in range(1, model.njoints):
        name, joint = model.names[j], model.joints[j]
        if joint.nq != 1:
            raise ModelError(f"URDF {source}: joint {name!r} is a {joint.shortname()} joint ({joint.nq} coordinates): "
                             "it can be neither elastic nor locked; make it fixed in the URDF")
        q = model.idx_qs[j]
        lower, upper = float(model.lowerPositionLimit[q]), float(model.upperPositionLimit[q])
        kind = "prismatic" if joint.shortname().startswith(PRISMATIC) else "revolute"
        joints[name] = StarterJoint(name, kind, name in continuous, lower, upper, start_position(lower, upper))
    locked = [joint for name, joint in joints.items() if name not in chain]
    reduced = lock_joints(model, {joint.name: joint.start for joint in locked}, f"URDF {source}")
    q0 = np.array([joints[reduced.names[j]].start for j in range(1, reduced.njoints)])
    inertia = pin.crba(reduced, reduced.createData(), q0)
    elastic = []
    for name in chain:
        joint = joints[name]
        v = reduced.idx_vs[reduced.getJointId(name)]
        driven = float(inertia[v, v])
        if not driven > SMALLEST_DRIVEN_INERTIA:
            raise ModelError(f"URDF {source}: joint {name!r} drives no inertia at the start pose (M_ii = {driven:.3g} "
                             f"{'kg' if joint.kind == 'prismatic' else 'kg m^2'}): the links below it are massless; "
                             "end the chain above it (another tip link) or give those links an <inertial>")
        elastic.append(dataclasses.replace(joint, driven_inertia=driven,
                                           placeholders=placeholders(driven, joint.kind == "prismatic")))
    starter = StarterFile(robot=tree.robot_name, base=base_link, tip=tip_link, base_given=base is not None,
                          tip_given=tip is not None, elastic=tuple(elastic), locked=tuple(locked),
                          frames_below_tip=tuple(tree.fixed_frames_below(tip_link)))
    return dataclasses.replace(starter, text=render(starter, urdf_reference, dict(xacro_args or {}), header))


def _yaml(value: object) -> str:
    """One YAML scalar as PyYAML reads it back (names quoted when needed, floats with a '.')."""
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).splitlines()[0]


def _comment(text: str, indent: str = "") -> list[str]:
    """``text`` as comment lines of at most :data:`WIDTH` characters."""
    return textwrap.wrap(text, WIDTH, initial_indent=f"# {indent}", subsequent_indent=f"# {indent}  ",
                         break_on_hyphens=False, break_long_words=False)


def render(starter: StarterFile, urdf_reference: str, xacro_args: dict[str, str], header: Sequence[str]) -> str:
    """The YAML text of ``starter``: every placeholder marked, the rule and the sources in comments."""
    base = f"{starter.base} ({'given' if starter.base_given else 'the root link'})"
    tip = f"{starter.tip} ({'given' if starter.tip_given else 'the end of the longest chain'})"
    summary = (f"{starter.robot[:40]}: starter file of flexrobot init, {len(starter.elastic)} elastic and "
               f"{len(starter.locked)} locked joints; every value a PLACEHOLDER")
    lines = [line for text in header for line in _comment(text)]
    lines += _comment("Every number marked PLACEHOLDER is a physically plausible guess, NOT a measurement of your "
                      "robot: the file loads and its closed loop is stable with sensible modes, but replace each one "
                      "(sources below) before trusting a simulation, a feedforward or a predicted mode.")
    lines += _comment(f"Elastic: the {len(starter.elastic)} movable joints of the chain from {base} to {tip}. "
                      f"Locked: the {len(starter.locked)} other movable joints, at 0 clipped into their limits.")
    lines += ["# Rule of the placeholders (flexrobot init --help), per elastic joint:"]
    lines += [line for item in RULE for line in _comment(item, "  ")]
    lines += ["# Where the real numbers come from:"]
    lines += [line for key, (_, text) in SOURCES.items() for line in _comment(f"{key}: {text}", "  ")]
    lines += _comment("Start pose q0 of the elastic joints [rad | m] (flexrobot modal FILE --q ...): "
                      + ",".join(f"{joint.start:.6g}" for joint in starter.elastic))
    lines += [f"robot: {_yaml(starter.robot)}", f"summary: {_yaml(summary)}", f"urdf: {_yaml(urdf_reference)}"]
    if xacro_args:
        lines.append("xacro_args: {" + ", ".join(f"{_yaml(k)}: {_yaml(v)}" for k, v in xacro_args.items()) + "}")
    lines += ["gravity: [0.0, 0.0, -9.81]   # m/s^2 in the URDF's root frame: check that its z axis points up",
              f"tool_frame: {_yaml(starter.tip)}   # the tip link"
              + (f"; fixed frames below it: {', '.join(starter.frames_below_tip)}" if starter.frames_below_tip else "")]
    if starter.locked:
        lines.append("locked_joints:   # held at a position [rad | m] (pinocchio's reduced model)")
        entries = [f"{_yaml(joint.name)}: {_yaml(joint.start)}" for joint in starter.locked]
        width = max(len(entry) for entry in entries)
        lines += [f"  {entry:<{width}}   # {joint.kind}, {joint.limits}"
                  for entry, joint in zip(entries, starter.locked)]
    lines.append(f"joints:   # the elastic chain, {starter.base} to {starter.tip}")
    for joint in starter.elastic:
        p = joint.placeholders
        prismatic = joint.kind == "prismatic"
        lines.append(f"  {_yaml(joint.name)}:   # {joint.kind}, {joint.limits}, q0 = {joint.start:.6g} {joint.unit};"
                     f" drives M_ii = {joint.driven_inertia:.4g} {'kg' if prismatic else 'kg m^2'} at q0")
        fields = [("stiffness", p.stiffness, "N m/rad"), ("gear_ratio", p.gear_ratio, "-"),
                  ("rotor_inertia", p.rotor_inertia, "kg m^2"), ("transmission_radius", p.transmission_radius, "m"),
                  ("link_damping", p.link_damping, "N s/m" if prismatic else "N m s/rad"),
                  ("motor_damping", p.motor_damping, "N m s/rad")]
        lines += [f"    {key + ':':<21}{_yaml(value):<11}# PLACEHOLDER [{unit}]: {SOURCES[key][0]}"
                  for key, value, unit in fields if value is not None]
    lines += [f"controller:   # PLACEHOLDER: {SOURCES['controller'][1]}; one value per joint, base to tip",
              f"  kp: [{', '.join(_yaml(joint.placeholders.kp) for joint in starter.elastic)}]   # N m/rad",
              f"  kd: [{', '.join(_yaml(joint.placeholders.kd) for joint in starter.elastic)}]   # N m s/rad"]
    return "\n".join(lines) + "\n"


__all__ = ["starter_yaml", "render", "start_position", "StarterFile", "StarterJoint", "SMALLEST_DRIVEN_INERTIA"]
