"""The flexibility YAML: schema and validation.

A flexibility file names a URDF and gives, for every movable joint of it, the elastic-joint parameters of the
reduced (Spong) model of seed 000, eq. 2.1::

    robot: scompi                     # a name for messages and caches
    summary: Scompi grinding robot ...  # one line: what the robot is and where its data come from
    description: free text (cite your sources here)
    urdf: ../urdf/scompi.urdf         # relative to this file, absolute, package://<package>/..., a .xacro file,
                                      # or robot_description (the nodes read the latched topic)
    xacro_args: {arm_id: fr3}         # optional: the xacro's arguments (name: value), for a .xacro urdf
    locked_joints: {finger1: 0.04}    # optional: movable URDF joints held at a position [rad | m] (grippers,
                                      # wheels, the parts of a tree not modelled; pinocchio's reduced model).
                                      # What is left may be a tree (an arm and a head on one torso)
    gravity: [-9.81, 0.0, 0.0]        # m/s^2 in the base frame
    tool_frame: tool0                 # end-effector frame: default point for impacts, wrenches, FRFs
    coulomb_width: 1.0e-3             # rad/s (m/s): Coulomb friction is f_c tanh(v / coulomb_width)
    joints:                           # every movable URDF joint that is not locked, by name, nothing else
                                      # (continuous joints are revolute joints without position limits)
      joint1:
        stiffness: 25000.0            # k [N m/rad] per rad of the motor-side angle q_m (also for prismatic joints)
        link_damping: 2.73            # d_f [N s/m] (prismatic) or [N m s/rad] (revolute), link side
        link_coulomb: 0.0             # [N] or [N m], link side
        motor_damping: 9.46e-4        # d_fm [N m s/rad], motor side after the gear
        motor_coulomb: 0.0            # [N m], motor side after the gear
        gear_ratio: 51                # N [-]
        rotor_inertia: 1.71e-4        # I_r [kg m^2]: B = N^2 I_r ...
        # reflected_inertia: 0.44     # ... or B [kg m^2] directly (then rotor_inertia must be absent)
        transmission_radius: 0.057    # r [m] of the rack/ball screw; prismatic joints only (W = 1/r)
        spring_damping: 0.0           # D_g [N m s/rad] parallel to the spring (extended model, seed 002 eq. 1b)
      joint2: {rigid: true}           # a rigid joint (no joint elasticity, no motor model): allowed with
                                      # flexible links; optional link_damping, link_coulomb
    controller:                       # default motor-side PD gains: a number for all joints or a list of n
      kp: 15000.0                     # [N m/rad]
      kd: 52.0                        # [N m s/rad]
    tool:                             # optional payload, added when the robot is loaded with tool=True
      mass: 4.0                       # kg
      frame: tool0                    # frame it is attached to
      com: [0.0, 0.0, 0.0]            # m, in that frame
      inertia: [0, 0, 0, 0, 0, 0]     # ixx ixy ixz iyy iyz izz [kg m^2] about the CoM, frame axes
    flexible_links: {}                # beam links, see flexrobot_ros.model.flexible_link_specs (a serial chain
                                      # only: a tree, once locked_joints are held, is refused)
    extra_elasticities: []            # non-actuated elastic DOFs: flexrobot_ros/model/elasticities.py
    coupled_transmissions:            # optional: motors that drive several joints (industrial wrists)
      - joints: [joint5, joint6]      # rigid joints (rigid: true), each in one coupling at most
        matrix: [[1.0, 0.0],          # G: motor positions after the gear q_m = G q over these joints [rad | m],
                 [-1.0, 1.0]]         # row i the motor named after joints[i]; square, invertible

Coupled transmissions: motor i of a coupling turns with ``q_m,i = sum_j G_ij q_j`` (the fourth row of a KUKA wrist:
the motor of joint 6 also turns with joint 5), so by virtual work the motor torques ``tau_m`` and the joint torques
``tau`` they produce are ``tau = G^T tau_m``. :attr:`FlexibleRobot.coupling` is G over all joints (the identity
outside the couplings). The rigid-body identification (``flexrobot identify-rigid``) reads records of motor positions
and motor torques through it and fits each motor's rotor inertia and friction in motor coordinates
(:mod:`flexrobot_ros.identification.rigid_regressor`); everywhere else the coupled joints are rigid joints driven by
their joint torques ``tau`` (the simulator, the feedforward and the modal analysis have no motor model for rigid
joints), so G changes nothing there.

Every error names the file, the field (and joint) and what was expected; nothing partial is ever returned.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.flexible_link_specs import parse_flexible_links
from flexrobot_ros.yaml_files import finite

TOP_KEYS = frozenset(
    {"robot", "summary", "description", "urdf", "gravity", "tool_frame", "coulomb_width", "joints", "controller",
     "tool", "flexible_links", "extra_elasticities", "locked_joints", "xacro_args", "coupled_transmissions"}
)
REQUIRED_TOP_KEYS = ("urdf", "joints")
JOINT_KEYS = frozenset(
    {"stiffness", "link_damping", "link_coulomb", "motor_damping", "motor_coulomb", "gear_ratio", "rotor_inertia",
     "reflected_inertia", "transmission_radius", "spring_damping", "rigid"}
)
RIGID_JOINT_KEYS = frozenset({"rigid", "link_damping", "link_coulomb"})
TOOL_KEYS = frozenset({"mass", "frame", "com", "inertia"})
COUPLING_KEYS = frozenset({"joints", "matrix"})
#: Largest condition number of a coupling matrix G (its inverse transpose maps joint torques to motor torques).
COUPLING_CONDITION = 1.0e8
CONTROLLER_KEYS = frozenset({"kp", "kd"})
FLEXIBLE_LINK_METHODS = ("assumed_modes", "finite_elements")
#: Longest ``summary`` line [characters].
SUMMARY_LENGTH = 120


@dataclass(frozen=True)
class JointSpec:
    """Validated elastic-joint parameters of one joint (units as in the module docstring)."""

    stiffness: float  # inf for a rigid joint
    link_damping: float
    link_coulomb: float
    motor_damping: float
    motor_coulomb: float
    gear_ratio: float
    rotor_inertia: float  # NaN when the reflected inertia was given
    motor_inertia: float  # B_ii = N^2 I_r
    transmission_radius: float  # 1.0 for revolute joints


@dataclass(frozen=True)
class ToolSpec:
    """Validated tool/payload: mass [kg], CoM [m] and inertia [kg m^2] about the CoM in ``frame``'s axes."""

    mass: float
    frame: str
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class CouplingSpec:
    """One validated coupled transmission: the ``joints`` it couples and ``matrix`` G (len(joints) square),
    q_m[joints] = G q[joints] (module docstring)."""

    joints: tuple[str, ...]
    matrix: np.ndarray


@dataclass(frozen=True)
class FlexibilitySpec:
    """Validated content of a flexibility YAML, before it is matched against the URDF."""

    robot: str
    urdf: str
    gravity: np.ndarray
    tool_frame: str | None
    coulomb_width: float
    joints: dict[str, dict[str, Any]]
    kp: Any
    kd: Any
    tool: ToolSpec | None
    flexible_links: dict[str, Any]
    extra_elasticities: list[Any]
    summary: str = ""  # one line (``flexrobot info --list``)
    locked_joints: dict[str, float] = field(default_factory=dict)  # joint -> position [rad | m]
    xacro_args: dict[str, str] = field(default_factory=dict)
    coupled_transmissions: tuple[CouplingSpec, ...] = ()


def positive(value: Any, where: str) -> float:
    number = finite(value, where)
    if number <= 0.0:
        raise ModelError(f"{where}: expected a positive number, got {number!r}")
    return number


def non_negative(value: Any, where: str) -> float:
    number = finite(value, where)
    if number < 0.0:
        raise ModelError(f"{where}: expected a number >= 0, got {number!r}")
    return number


def vector(value: Any, length: int, where: str) -> np.ndarray:
    """A finite float vector of exactly ``length`` entries, or a ModelError naming ``where``."""
    if not isinstance(value, (list, tuple)):
        raise ModelError(f"{where}: expected a list of {length} numbers, got {value!r}")
    if len(value) != length:
        raise ModelError(f"{where}: expected {length} entries, got {len(value)}")
    return np.array([finite(v, f"{where}[{k}]") for k, v in enumerate(value)])


def _check_keys(mapping: Any, allowed: frozenset[str], where: str) -> Mapping[str, Any]:
    if not isinstance(mapping, Mapping):
        raise ModelError(f"{where}: expected a mapping, got {type(mapping).__name__}")
    for key in mapping:
        if not isinstance(key, str):
            raise ModelError(f"{where}: keys must be strings, got {key!r}")
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    return mapping


def parse_flexibility(document: Any, source: str) -> FlexibilitySpec:
    """Validate the structure and values of a flexibility document (joints are matched to the URDF later)."""
    top = _check_keys(document, TOP_KEYS, source)
    for key in REQUIRED_TOP_KEYS:
        if key not in top:
            raise ModelError(f"{source}: missing required field '{key}'")
    urdf = top["urdf"]
    if not isinstance(urdf, str) or not urdf.strip():
        raise ModelError(f"{source}: urdf: expected a path string, got {urdf!r}")
    robot = top.get("robot", "robot")
    if not isinstance(robot, str) or not robot:
        raise ModelError(f"{source}: robot: expected a non-empty name, got {robot!r}")
    if not isinstance(top.get("description", ""), str):
        raise ModelError(f"{source}: description: expected text")
    summary = top.get("summary", "")
    if not isinstance(summary, str) or "\n" in summary.strip() or len(summary) > SUMMARY_LENGTH:
        raise ModelError(f"{source}: summary: expected one line of text of at most {SUMMARY_LENGTH} characters "
                         f"(what the robot is, where its data come from), got {summary!r}")
    gravity = vector(top.get("gravity", [0.0, 0.0, -9.81]), 3, f"{source}: gravity")
    tool_frame = top.get("tool_frame")
    if tool_frame is not None and (not isinstance(tool_frame, str) or not tool_frame):
        raise ModelError(f"{source}: tool_frame: expected a frame name, got {tool_frame!r}")
    coulomb_width = positive(top.get("coulomb_width", 1.0e-3), f"{source}: coulomb_width")

    joints_raw = top["joints"]
    if not isinstance(joints_raw, Mapping) or not joints_raw:
        raise ModelError(f"{source}: joints: expected a mapping from joint name to parameters")
    joints: dict[str, dict[str, Any]] = {}
    for name, params in joints_raw.items():
        where = f"{source}: joints.{name}"
        if not isinstance(name, str):
            raise ModelError(f"{source}: joints: joint names must be strings, got {name!r}")
        joints[name] = dict(_check_keys(params, JOINT_KEYS, where))

    controller = _check_keys(top.get("controller", {}) or {}, CONTROLLER_KEYS, f"{source}: controller")
    tool = None
    if top.get("tool") is not None:
        raw = _check_keys(top["tool"], TOOL_KEYS, f"{source}: tool")
        frame = raw.get("frame", tool_frame)
        if not isinstance(frame, str) or not frame:
            raise ModelError(f"{source}: tool.frame: expected a frame name, got {frame!r}")
        inertia6 = vector(raw.get("inertia", [0.0] * 6), 6, f"{source}: tool.inertia")
        ixx, ixy, ixz, iyy, iyz, izz = inertia6
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if np.min(np.linalg.eigvalsh(inertia)) < -1e-12:
            raise ModelError(f"{source}: tool.inertia: expected a positive semi-definite tensor, got {inertia6.tolist()}")
        if "mass" not in raw:
            raise ModelError(f"{source}: tool.mass: missing (kg)")
        tool = ToolSpec(
            mass=positive(raw["mass"], f"{source}: tool.mass"),
            frame=frame,
            com=vector(raw.get("com", [0.0, 0.0, 0.0]), 3, f"{source}: tool.com"),
            inertia=inertia,
        )
    flexible_links = parse_flexible_links(top.get("flexible_links"), source)
    extra = top.get("extra_elasticities", []) or []
    if not isinstance(extra, list):
        raise ModelError(f"{source}: extra_elasticities: expected a list")
    locked = top.get("locked_joints", {}) or {}
    if not isinstance(locked, Mapping):
        raise ModelError(f"{source}: locked_joints: expected a mapping from joint name to position [rad | m], "
                         f"got {locked!r}")
    locked_joints = {}
    for name, position in locked.items():
        if not isinstance(name, str):
            raise ModelError(f"{source}: locked_joints: joint names must be strings, got {name!r}")
        if name in joints:
            raise ModelError(f"{source}: locked_joints.{name}: the joint is also described under joints; a joint "
                             "is either elastic (joints) or held at a position (locked_joints)")
        locked_joints[name] = finite(position, f"{source}: locked_joints.{name} (position [rad | m])")
    arguments = top.get("xacro_args", {}) or {}
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
        raise ModelError(f"{source}: xacro_args: expected a mapping from argument name to value, got {arguments!r}")
    for key, value in arguments.items():
        if not isinstance(value, (str, int, float, bool)):
            raise ModelError(f"{source}: xacro_args.{key}: expected a text or number, got {value!r}")
    xacro_args = {key: (str(value).lower() if isinstance(value, bool) else str(value))
                  for key, value in arguments.items()}
    if xacro_args and not urdf.endswith(".xacro"):
        raise ModelError(f"{source}: xacro_args: given, but urdf {urdf!r} is not a .xacro file")
    couplings = parse_coupled_transmissions(top.get("coupled_transmissions"), joints, locked_joints, source)
    return FlexibilitySpec(
        robot=robot, urdf=urdf, gravity=gravity, tool_frame=tool_frame, coulomb_width=coulomb_width,
        joints=joints, kp=controller.get("kp"), kd=controller.get("kd"), tool=tool,
        flexible_links=dict(flexible_links), extra_elasticities=list(extra), summary=summary.strip(),
        locked_joints=locked_joints, xacro_args=xacro_args, coupled_transmissions=couplings,
    )


def parse_coupled_transmissions(value: Any, joints: Mapping[str, Any], locked: Mapping[str, float],
                                source: str) -> tuple[CouplingSpec, ...]:
    """Validate ``coupled_transmissions`` (module docstring): a list of ``{joints, matrix}``; every joint described
    under ``joints`` as ``rigid: true`` and in one coupling at most; G square over them, finite, with condition
    number at most :data:`COUPLING_CONDITION`."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ModelError(f"{source}: coupled_transmissions: expected a list of {{joints, matrix}}, got {value!r}")
    out, seen = [], {}
    for k, entry in enumerate(value):
        where = f"{source}: coupled_transmissions[{k}]"
        entry = _check_keys(entry, COUPLING_KEYS, where)
        for key in sorted(COUPLING_KEYS):
            if key not in entry:
                raise ModelError(f"{where}.{key}: missing")
        names = entry["joints"]
        if (not isinstance(names, list) or len(names) < 2 or not all(isinstance(n, str) for n in names)
                or len(set(names)) != len(names)):
            raise ModelError(f"{where}.joints: expected a list of at least 2 different joint names, got {names!r}")
        for name in names:
            if name in locked:
                raise ModelError(f"{where}.joints: {name} is locked (locked_joints); a coupled joint moves")
            if name not in joints:
                raise ModelError(f"{where}.joints: {name} is not described under joints (described: "
                                 f"{sorted(joints)})")
            if joints[name].get("rigid") is not True:
                raise ModelError(f"{where}.joints: {name} is elastic; coupled transmissions join rigid joints "
                                 f"(joints.{name}: {{rigid: true}}): the elastic-joint model has one motor per joint")
            if name in seen:
                raise ModelError(f"{where}.joints: {name} is already coupled in coupled_transmissions[{seen[name]}]")
            seen[name] = k
        rows = entry["matrix"]
        size = len(names)
        if not isinstance(rows, list) or len(rows) != size:
            raise ModelError(f"{where}.matrix: expected {size} rows of {size} numbers (one row per motor of "
                             f"{names}), got {rows!r}")
        matrix = np.array([vector(row, size, f"{where}.matrix[{i}]") for i, row in enumerate(rows)])
        condition = float(np.linalg.cond(matrix))
        if not condition <= COUPLING_CONDITION:
            raise ModelError(f"{where}.matrix: singular or nearly so (condition number {condition:.3g}, at most "
                             f"{COUPLING_CONDITION:.0e}); each motor position must follow from the joint positions "
                             "and back")
        matrix.setflags(write=False)
        out.append(CouplingSpec(joints=tuple(names), matrix=matrix))
    return tuple(out)


def joint_spec(params: Mapping[str, Any], joint_type: str, where: str) -> JointSpec:
    """Validate one joint's parameters against its URDF type ('revolute' or 'prismatic')."""
    if params.get("rigid", False) is not False:
        if params["rigid"] is not True:
            raise ModelError(f"{where}.rigid: expected true or false, got {params['rigid']!r}")
        extra = sorted(set(params) - RIGID_JOINT_KEYS)
        if extra:
            raise ModelError(f"{where}: a rigid joint has no {extra}; allowed: {sorted(RIGID_JOINT_KEYS)}")
        return JointSpec(stiffness=math.inf,
                         link_damping=non_negative(params.get("link_damping", 0.0), f"{where}.link_damping"),
                         link_coulomb=non_negative(params.get("link_coulomb", 0.0), f"{where}.link_coulomb"),
                         motor_damping=0.0, motor_coulomb=0.0, gear_ratio=1.0, rotor_inertia=math.nan,
                         motor_inertia=0.0, transmission_radius=1.0)
    if "stiffness" not in params:
        raise ModelError(f"{where}.stiffness: missing (N m/rad)")
    gear_ratio = positive(params.get("gear_ratio", 1.0), f"{where}.gear_ratio")
    has_rotor, has_reflected = "rotor_inertia" in params, "reflected_inertia" in params
    if has_rotor == has_reflected:
        raise ModelError(f"{where}: give exactly one of rotor_inertia (I_r, kg m^2) or reflected_inertia (B, kg m^2)")
    if has_rotor:
        rotor = positive(params["rotor_inertia"], f"{where}.rotor_inertia")
        motor_inertia = gear_ratio**2 * rotor
    else:
        rotor = math.nan
        motor_inertia = positive(params["reflected_inertia"], f"{where}.reflected_inertia")
    if joint_type == "prismatic":
        if "transmission_radius" not in params:
            raise ModelError(f"{where}.transmission_radius: missing; a prismatic joint needs the radius r [m] "
                             "that turns motor rotation into joint translation (W = 1/r)")
        radius = positive(params["transmission_radius"], f"{where}.transmission_radius")
    else:
        if "transmission_radius" in params:
            raise ModelError(f"{where}.transmission_radius: only prismatic joints have one (this joint is revolute)")
        radius = 1.0
    return JointSpec(
        stiffness=positive(params["stiffness"], f"{where}.stiffness"),
        link_damping=non_negative(params.get("link_damping", 0.0), f"{where}.link_damping"),
        link_coulomb=non_negative(params.get("link_coulomb", 0.0), f"{where}.link_coulomb"),
        motor_damping=non_negative(params.get("motor_damping", 0.0), f"{where}.motor_damping"),
        motor_coulomb=non_negative(params.get("motor_coulomb", 0.0), f"{where}.motor_coulomb"),
        gear_ratio=gear_ratio,
        rotor_inertia=rotor,
        motor_inertia=motor_inertia,
        transmission_radius=radius,
    )


def gains(value: Any, n: int, joint_names: tuple[str, ...], where: str, default: float) -> np.ndarray:
    """Controller gains: one non-negative number for all joints or a list of ``n`` (absent: ``default``)."""
    if value is None:
        return np.full(n, default)
    if isinstance(value, (list, tuple)):
        out = vector(value, n, f"{where} (joints {list(joint_names)})")
        for name, gain in zip(joint_names, out):
            if gain < 0:
                raise ModelError(f"{where}: joint {name}: expected a gain >= 0, got {gain}")
        return out
    return np.full(n, non_negative(value, where))
