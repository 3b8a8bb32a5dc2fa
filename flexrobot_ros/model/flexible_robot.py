"""FlexibleRobot: a rigid link-side model (URDF, pinocchio) plus the elastic-joint parameters (flexibility YAML).

The reduced flexible-joint model of seed 000 (eq. 2.1, Spong's assumption of large gear ratios)::

    M(q) qdd + C(q, qd) qd + g(q) + D qd + K W (W q - q_m) = J^T(q) w_ext
    B qdd_m + D_m qd_m - K (W q - q_m) = tau_m

``q`` are link-side joint positions (rad, or m for prismatic joints), ``q_m`` motor positions after the gear (rad),
``W = diag(1/r_i)`` turns a prismatic joint's translation into the motor-side angle (``r_i`` the rack radius; 1 for
revolute joints), ``K`` the joint stiffness per rad of motor angle, ``B = diag(N_i^2 I_r,i)`` the reflected rotor
inertia. The rigid part (``M``, ``C``, ``g``, Jacobians) is pinocchio's, computed on :attr:`FlexibleRobot.model`,
whose ``armature`` stays zero for elastic joints: the rotor inertia ``B`` lives on the motor side only.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.extended_model import attach_extended, check_composable, lock_urdf_elasticities
from flexrobot_ros.model.locked_joints import lock_joints
from flexrobot_ros.model.schema import FlexibilitySpec, ToolSpec, gains, joint_spec
from flexrobot_ros.model.tool import merge_tool
from flexrobot_ros.model.topology import first_branch

_JOINT_TYPES = {
    "JointModelRX": "revolute", "JointModelRY": "revolute", "JointModelRZ": "revolute",
    "JointModelRevoluteUnaligned": "revolute",
    "JointModelPX": "prismatic", "JointModelPY": "prismatic", "JointModelPZ": "prismatic",
    "JointModelPrismaticUnaligned": "prismatic",
}

#: Position-limit tolerance [rad or m]: poses and trajectories that touch a limit (the thesis' LWR4 case) pass.
LIMIT_TOLERANCE = 1e-9

#: Per-joint parameter arrays that :meth:`FlexibleRobot.with_parameters` may replace.
JOINT_ARRAYS = ("stiffness", "link_damping", "link_coulomb", "motor_damping", "motor_coulomb", "gear_ratio",
                "rotor_inertia", "motor_inertia", "transmission", "kp", "kd")
#: Flexible-link fields that :meth:`FlexibleRobot.with_link_parameters` may replace -> BeamSpec attribute.
LINK_FIELDS = {"EI": "EI_y", "EI.y": "EI_y", "EI.z": "EI_z", "damping_ratio": "damping_ratio"}
_POSITIVE = ("stiffness", "gear_ratio", "motor_inertia", "transmission")

Tool = ToolSpec


def _readonly(values: Any) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class FlexibleRobot:
    """A robot with elastic joints. Build it with :func:`flexrobot_ros.model.load_robot`.

    All arrays have one entry per elastic joint in pinocchio's joint order (``joint_names``), SI units:
    ``stiffness`` k [N m/rad of motor angle]; ``link_damping`` d_f [N s/m | N m s/rad]; ``link_coulomb`` [N | N m];
    ``motor_damping`` d_fm [N m s/rad]; ``motor_coulomb`` [N m]; ``gear_ratio`` N; ``rotor_inertia`` I_r [kg m^2]
    (NaN when only the reflected value was given); ``motor_inertia`` B_ii [kg m^2]; ``transmission`` W_ii [1/m | 1];
    ``kp`` [N m/rad], ``kd`` [N m s/rad] default motor-side PD gains. ``gravity`` [m/s^2] is in the base frame.
    ``flexible_links`` maps URDF link names to validated beam specs (:mod:`flexrobot_ros.flexible_links`);
    ``rigid_joints`` names the joints declared ``rigid: true`` (their stiffness is inf, motor inertia 0).
    ``urdf_xml`` is the URDF text the model was built from (a xacro file expanded, the ``robot_description``
    topic's text), ``urdf_path`` its file (None when it came from the topic); ``locked_joints`` maps the URDF
    joints held at a position to that position [rad | m] (:mod:`.locked_joints`; not in ``joint_names``);
    ``continuous_joints`` names the joints that are continuous in the URDF (revolute, limits -inf/+inf here).
    """

    name: str
    model: pin.Model
    urdf_path: Path | None
    yaml_path: Path | None
    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    stiffness: np.ndarray
    link_damping: np.ndarray
    link_coulomb: np.ndarray
    motor_damping: np.ndarray
    motor_coulomb: np.ndarray
    gear_ratio: np.ndarray
    rotor_inertia: np.ndarray
    motor_inertia: np.ndarray
    transmission: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    gravity: np.ndarray
    tool: ToolSpec | None
    tool_frame: str
    coulomb_width: float
    lower_limits: np.ndarray
    upper_limits: np.ndarray
    velocity_limits: np.ndarray
    effort_limits: np.ndarray
    flexible_links: dict[str, Any] = field(default_factory=dict)
    extra_elasticities: list[Any] = field(default_factory=list)
    rigid_joints: tuple[str, ...] = ()
    #: The extended flexible-joint model (flexrobot_ros.model.extended_model.ExtendedModel) when the YAML has
    #: extra_elasticities or spring_damping, else None; ``model`` stays the actuated-joint model (nq = n).
    extended: Any = None
    urdf_xml: str = ""
    locked_joints: Mapping[str, float] = field(default_factory=dict)
    continuous_joints: tuple[str, ...] = ()

    # ------------------------------------------------------------------ derived quantities
    @property
    def urdf_source(self) -> str:
        """Where the URDF came from, for messages: its file, or the ``robot_description`` topic."""
        return str(self.urdf_path) if self.urdf_path is not None else "the robot_description topic"

    @property
    def n(self) -> int:
        """Number of elastic joints (= pinocchio's nq = nv)."""
        return len(self.joint_names)

    @property
    def K(self) -> np.ndarray:
        """Joint stiffness matrix diag(k) [N m/rad]."""
        return np.diag(self.stiffness)

    @property
    def D(self) -> np.ndarray:
        """Link-side viscous damping matrix diag(d_f)."""
        return np.diag(self.link_damping)

    @property
    def D_m(self) -> np.ndarray:
        """Motor-side viscous damping matrix diag(d_fm) [N m s/rad]."""
        return np.diag(self.motor_damping)

    @property
    def B(self) -> np.ndarray:
        """Reflected motor inertia matrix diag(N^2 I_r) [kg m^2]."""
        return np.diag(self.motor_inertia)

    @property
    def W(self) -> np.ndarray:
        """Transmission matrix diag(1/r) of seed 000 eq. A I-14 (1 for revolute joints)."""
        return np.diag(self.transmission)

    @property
    def is_serial_chain(self) -> bool:
        """True when every joint's parent is the previous joint (a chain, not a tree: :mod:`.topology`)."""
        return first_branch(self.model) is None

    @property
    def default_pose(self) -> np.ndarray:
        """Zeros clipped to the URDF position limits (n,) [rad | m]: the pose held when no set point is given (the
        simulator node, the scripted bring-up). A vendor robot's zero pose may lie outside its limits (the Franka
        Panda's joint 4 range is [-3.07, -0.07] rad)."""
        return np.clip(np.zeros(self.n), self.lower_limits, self.upper_limits)

    @property
    def total_mass(self) -> float:
        """Total mass of the links and the selected tool [kg]."""
        return float(sum(inertia.mass for inertia in self.model.inertias))

    def create_data(self) -> pin.Data:
        """Fresh pinocchio scratch space for :attr:`model` (one per thread)."""
        return self.model.createData()

    def frame_id(self, name: str) -> int:
        """Index of the pinocchio frame ``name``; a ModelError lists the known frames when it does not exist."""
        if not self.model.existFrame(name):
            known = [f.name for f in self.model.frames if f.name != "universe"]
            raise ModelError(f"robot {self.name}: unknown frame {name!r}; known frames: {known}")
        return self.model.getFrameId(name)

    def check_q(self, q: Any, what: str = "q") -> np.ndarray:
        """``q`` as a finite float vector of length n, or a ModelError naming ``what``."""
        array = np.asarray(q, dtype=float) if not isinstance(q, str) else None
        if array is None or array.shape != (self.n,):
            shape = None if array is None else array.shape
            raise ModelError(f"robot {self.name}: {what}: expected {self.n} values for joints "
                             f"{list(self.joint_names)}, got shape {shape}")
        if not np.all(np.isfinite(array)):
            bad = [self.joint_names[i] for i in np.flatnonzero(~np.isfinite(array))]
            raise ModelError(f"robot {self.name}: {what}: non-finite value(s) at joint(s) {bad}")
        return array

    def limit_violation(self, q: Any, t: Any = None) -> str | None:
        """The first position outside the URDF joint limits (with :data:`LIMIT_TOLERANCE`), described with the
        joint, the value, the limit and the range expected; None when every position is inside.

        ``q``: one pose (n,) or samples (samples, n) [rad | m]; ``t``: their times [s] (named in the message).
        """
        q = np.atleast_2d(np.asarray(q, dtype=float))
        lower, upper = np.asarray(self.lower_limits), np.asarray(self.upper_limits)
        for j, joint in enumerate(self.joint_names):
            unit = angle_or_length(self.joint_types[j])
            for bad, limit, word in ((q[:, j] < lower[j] - LIMIT_TOLERANCE, lower[j], "below the lower"),
                                     (q[:, j] > upper[j] + LIMIT_TOLERANCE, upper[j], "above the upper")):
                if np.any(bad):
                    k = int(np.flatnonzero(bad)[0])
                    when = "" if t is None else f" at t = {np.asarray(t)[k]:.6g} s"
                    return (f"joint {joint!r}: q = {q[k, j]:.6g} {unit}{when} is {word} limit {limit:.6g} {unit} "
                            f"(robot {self.name!r}); expected positions within [{lower[j]:.6g}, {upper[j]:.6g}] "
                            f"{unit}")
        return None

    def joint_index(self, name: str) -> int:
        """Position of joint ``name`` in the joint arrays; a ModelError lists the joints otherwise."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise ModelError(f"robot {self.name}: unknown joint {name!r}; joints are {list(self.joint_names)}") from None

    def with_parameters(self, **arrays: Any) -> "FlexibleRobot":
        """A copy with some per-joint arrays replaced (names in :data:`JOINT_ARRAYS`), validated like a load.

        Replacing ``rotor_inertia`` or ``gear_ratio`` recomputes ``motor_inertia`` unless it is given too.
        """
        unknown = sorted(set(arrays) - set(JOINT_ARRAYS))
        if unknown:
            raise ModelError(f"robot {self.name}: cannot replace {unknown}; replaceable: {list(JOINT_ARRAYS)}")
        changes: dict[str, np.ndarray] = {}
        for key, value in arrays.items():
            array = np.asarray(value, dtype=float)
            if array.ndim == 0:
                array = np.full(self.n, float(array))
            if array.shape != (self.n,):
                raise ModelError(f"robot {self.name}: {key}: expected {self.n} values, got shape {array.shape}")
            if not np.all(np.isfinite(array)):
                raise ModelError(f"robot {self.name}: {key}: non-finite values {array.tolist()}")
            floor_ok = np.all(array > 0) if key in _POSITIVE else np.all(array >= 0)
            if not floor_ok:
                raise ModelError(f"robot {self.name}: {key}: expected {'> 0' if key in _POSITIVE else '>= 0'}, "
                                 f"got {array.tolist()}")
            changes[key] = _readonly(array)
        if ("rotor_inertia" in changes or "gear_ratio" in changes) and "motor_inertia" not in changes:
            rotor = changes.get("rotor_inertia", self.rotor_inertia)
            ratio = changes.get("gear_ratio", self.gear_ratio)
            if np.any(np.isnan(rotor)):
                raise ModelError(f"robot {self.name}: rotor_inertia unknown (reflected inertia given); "
                                 "replace motor_inertia instead")
            changes["motor_inertia"] = _readonly(ratio**2 * rotor)
        return dataclasses.replace(self, **changes)

    def with_link_parameters(self, links: Mapping[str, Mapping[str, float]]) -> "FlexibleRobot":
        """A copy with some flexible links' beam parameters replaced, ``links[link][field]``: ``EI`` [N m^2] of a
        planar link, ``EI.y`` / ``EI.z`` of a link bending both ways, ``damping_ratio`` (fraction in [0, 1)).
        Raises ModelError naming the link and field for an unknown link or field or an invalid value."""
        specs = dict(self.flexible_links)
        for link, fields in links.items():
            if link not in specs:
                raise ModelError(f"robot {self.name}: no flexible link {link!r}; flexible links: {sorted(specs)}")
            spec, changes = specs[link], {}
            for name, value in fields.items():
                value = float(value)
                allowed = (["EI"] if spec.EI_z is None else ["EI.y", "EI.z"]) + ["damping_ratio"]
                if name not in allowed:
                    raise ModelError(f"robot {self.name}: flexible_links.{link}: cannot replace {name!r}; "
                                     f"replaceable: {allowed}")
                target = LINK_FIELDS[name]
                ok = 0.0 <= value < 1.0 if target == "damping_ratio" else value > 0.0
                if not (np.isfinite(value) and ok):
                    raise ModelError(f"robot {self.name}: flexible_links.{link}.{name}: expected "
                                     f"{'a fraction in [0, 1)' if target == 'damping_ratio' else '> 0 N m^2'}, "
                                     f"got {value!r}")
                changes[target] = value
            specs[link] = dataclasses.replace(spec, **changes)
        return dataclasses.replace(self, flexible_links=specs)

    def config_hash(self) -> str:
        """SHA-256 of everything that defines the dynamics (URDF inertias and kinematics, tool, parameters)."""
        digest = hashlib.sha256()
        for j in range(1, self.model.njoints):
            digest.update(np.asarray(self.model.jointPlacements[j].homogeneous).tobytes())
            digest.update(self.model.joints[j].shortname().encode())
            digest.update(np.asarray(self.model.inertias[j].toDynamicParameters()).tobytes())
        for key in JOINT_ARRAYS:
            digest.update(np.ascontiguousarray(getattr(self, key)).tobytes())
        digest.update(self.gravity.tobytes())
        digest.update(repr(self.coulomb_width).encode())
        digest.update(repr(sorted(self.flexible_links.items())).encode())
        if self.extended is not None:
            digest.update(self.extended.digest().encode())
        return digest.hexdigest()


def _joint_type(model: pin.Model, joint_id: int, source: str) -> str:
    shortname = model.joints[joint_id].shortname()
    kind = _JOINT_TYPES.get(shortname)
    if kind is None:
        raise ModelError(f"{source}: joint {model.names[joint_id]!r} is {shortname}; only 1-DoF revolute, continuous "
                         "and prismatic joints can be elastic; lock it (locked_joints) or make it fixed")
    return kind


def build_robot(spec: FlexibilitySpec, model: pin.Model, urdf_path: Path | None, yaml_path: Path | None,
                with_tool: bool, urdf_xml: str = "", continuous_joints: tuple[str, ...] = (),
                urdf_origin: str = "the robot_description topic") -> FlexibleRobot:
    """Match a validated flexibility spec against a parsed URDF model (:func:`.urdf_source.urdf_model`: continuous
    joints already revolute) and assemble the robot (all-or-nothing): the ``locked_joints`` are held first, then
    the non-actuated URDF elasticities; every joint left must be described under ``joints``. ``urdf_origin`` names
    where a URDF without a file came from, in error messages."""
    source = str(yaml_path) if yaml_path else spec.robot
    urdf_name = urdf_path.name if urdf_path is not None else f"the URDF from {urdf_origin}"
    model = lock_joints(model, spec.locked_joints, source)
    full_model, model = model, lock_urdf_elasticities(spec, model, source)
    joint_names = tuple(model.names[1:])
    unknown = [name for name in spec.joints if name not in joint_names]
    if unknown:
        raise ModelError(f"{source}: joints: unknown joint(s) {unknown}; the movable joints of {urdf_name} that are "
                         f"not locked are {list(joint_names)}")
    missing = [name for name in joint_names if name not in spec.joints]
    if missing:
        raise ModelError(f"{source}: joints: missing joint(s) {missing}; every movable joint of {urdf_name} needs "
                         "stiffness and motor parameters (joints), or a position to be held at (locked_joints)")
    joint_types = tuple(_joint_type(model, j, source) for j in range(1, model.njoints))
    branch = first_branch(model)
    if spec.flexible_links and branch is not None:
        link = next(iter(spec.flexible_links))
        held = " with its locked joints held" if spec.locked_joints else ""
        raise ModelError(f"{source}: flexible_links.{link}: flexible links need a serial chain; {urdf_name}{held} is "
                         f"a tree: {branch}; lock the branch that is not modelled (locked_joints) or make the link "
                         "rigid")
    specs = [joint_spec(spec.joints[name], kind, f"{source}: joints.{name}")
             for name, kind in zip(joint_names, joint_types)]
    n = len(joint_names)
    kp = gains(spec.kp, n, joint_names, f"{source}: controller.kp", 0.0)
    kd = gains(spec.kd, n, joint_names, f"{source}: controller.kd", 0.0)
    model = model.copy()  # pin 2.x has no Model(Model) constructor
    model.gravity = pin.Motion(np.asarray(spec.gravity, dtype=float), np.zeros(3))
    model.armature = np.zeros(model.nv)
    tool_frame = spec.tool_frame or model.frames[-1].name
    if not model.existFrame(tool_frame):
        raise ModelError(f"{source}: tool_frame: unknown frame {tool_frame!r} in {urdf_name}")
    if with_tool:
        if spec.tool is None:
            raise ModelError(f"{source}: a tool was requested but the file has no 'tool' section")
        merge_tool(model, spec.tool, source)
    column = lambda attribute: _readonly([getattr(s, attribute) for s in specs])  # noqa: E731
    robot = FlexibleRobot(
        name=spec.robot,
        model=model,
        urdf_path=urdf_path,
        yaml_path=yaml_path,
        joint_names=joint_names,
        joint_types=joint_types,
        stiffness=column("stiffness"),
        link_damping=column("link_damping"),
        link_coulomb=column("link_coulomb"),
        motor_damping=column("motor_damping"),
        motor_coulomb=column("motor_coulomb"),
        gear_ratio=column("gear_ratio"),
        rotor_inertia=column("rotor_inertia"),
        motor_inertia=column("motor_inertia"),
        transmission=_readonly([1.0 / s.transmission_radius for s in specs]),
        kp=_readonly(kp),
        kd=_readonly(kd),
        gravity=_readonly(spec.gravity),
        tool=spec.tool if with_tool else None,
        tool_frame=tool_frame,
        coulomb_width=spec.coulomb_width,
        lower_limits=_readonly(model.lowerPositionLimit),
        upper_limits=_readonly(model.upperPositionLimit),
        velocity_limits=_readonly(model.velocityLimit),
        effort_limits=_readonly(model.effortLimit),
        flexible_links=spec.flexible_links,
        extra_elasticities=spec.extra_elasticities,
        rigid_joints=tuple(name for name, s in zip(joint_names, specs) if s.stiffness == float("inf")),
        urdf_xml=urdf_xml,
        locked_joints=dict(spec.locked_joints),
        continuous_joints=tuple(name for name in continuous_joints if name in joint_names),
    )
    robot = attach_extended(robot, spec, full_model, source)
    check_composable(robot, source)
    return robot


def angle_or_length(kind: str) -> str:
    """Unit of a joint coordinate: 'rad' for revolute, 'm' for prismatic joints."""
    return "m" if kind == "prismatic" else "rad"


def torque_or_force(kind: str) -> str:
    """Unit of a link-side joint torque: 'N m' for revolute, 'N' for prismatic joints."""
    return "N" if kind == "prismatic" else "N m"


def link_damping_unit(kind: str) -> str:
    """Unit of the link-side viscous friction d_f: 'N m s/rad' for revolute, 'N s/m' for prismatic joints."""
    return "N s/m" if kind == "prismatic" else "N m s/rad"


__all__ = ["FlexibleRobot", "Tool", "build_robot", "JOINT_ARRAYS", "LINK_FIELDS", "LIMIT_TOLERANCE", "angle_or_length",
           "torque_or_force", "link_damping_unit"]
