"""The extended flexible-joint model (seed 002, eq. 1) built on pinocchio: the URDF chain plus non-actuated elastic
joints, with one pinocchio ``Model`` holding every rigid body.

The :class:`~flexrobot_ros.model.FlexibleRobot` keeps its meaning: ``robot.model`` has one coordinate per actuated
elastic joint (nq = n), with non-actuated URDF joints locked at q_e = 0 (pinocchio ``buildReducedModel``: the rigid
limit K_e -> infinity). The extended model is :attr:`ExtendedModel.model`, with na = n + ne coordinates in chain
order: the actuated joints (``actuated_index`` into q_a) and the elastic ones (``elastic_index``). An elastic DOF
inserted at an actuated joint is a massless joint between the parent body and that joint's own motion, at the
joint's placement (``extra_elasticities`` entries with an ``axis``, see :mod:`.elasticities`).

Equations (seed 002 eq. 1 with this package's transmission ``W`` and friction; q_g = q_a[actuated_index],
q_e = q_a[elastic_index])::

    M(q_a) qdd_a + c(q_a, qd_a) + g(q_a) = S_g^T tau_g + S_e^T tau_e (+ J^T w)
    tau_g = W K (q_m - W q_g) + W D_g (qd_m - W qd_g) - D qd_g - f_c tanh(qd_g / v_c)        (1b, link friction)
    tau_e = -K_e q_e - D_e qd_e                                                              (1c)
    B qdd_m + D_m qd_m + f_cm tanh(qd_m / v_c) + K (q_m - W q_g) + D_g (qd_m - W qd_g) = tau_m (1d)

``D_g`` is the transmission (spring) damping ``joints.<name>.spring_damping`` of the YAML (seed 002's d of the
actuated joints); ``D``, ``D_m`` the absolute link and motor damping of the flexible-joint model.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.elasticities import ElasticitySpec, parse_elasticities, spring_damping
from flexrobot_ros.model.tool import merge_tool

_JOINT_KIND = {
    "JointModelRX": "revolute", "JointModelRY": "revolute", "JointModelRZ": "revolute",
    "JointModelRevoluteUnaligned": "revolute",
    "JointModelPX": "prismatic", "JointModelPY": "prismatic", "JointModelPZ": "prismatic",
    "JointModelPrismaticUnaligned": "prismatic",
}
#: Position range given to inserted elastic joints [rad | m] (deflections are small; only used by limit checks).
ELASTIC_RANGE = 1.0


def _readonly(values: Any, dtype: Any = float) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class ExtendedModel:
    """The extended model of a robot: pinocchio ``model`` (nq = nv = na = n + ne, chain order), index maps and the
    parameters of the non-actuated spring-dampers.

    ``actuated_index`` (n,) positions of the robot's elastic joints (``robot.joint_names`` order) in q_a;
    ``elastic_index`` (ne,) positions of the non-actuated elastic coordinates ``elastic_names`` (types
    ``elastic_types``) with stiffness K_e and damping D_e (``elastic_stiffness``, ``elastic_damping``, SI);
    ``spring_damping`` (n,) D_g of the actuated transmissions [N m s/rad]; ``specs`` the validated YAML entries.
    """

    model: pin.Model
    actuated_index: np.ndarray
    elastic_index: np.ndarray
    elastic_names: tuple[str, ...]
    elastic_types: tuple[str, ...]
    elastic_stiffness: np.ndarray
    elastic_damping: np.ndarray
    spring_damping: np.ndarray
    specs: tuple[ElasticitySpec, ...] = ()

    @property
    def na(self) -> int:
        """Number of link-side coordinates n + ne."""
        return int(self.model.nq)

    @property
    def ne(self) -> int:
        """Number of non-actuated elastic coordinates."""
        return len(self.elastic_names)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the q_a coordinates in chain order."""
        return tuple(self.model.names[1:])

    def full_q(self, q_g: Any, q_e: Any = None) -> np.ndarray:
        """q_a (..., na) from the actuated link positions q_g (..., n) and elastic coordinates q_e (..., ne)."""
        q_g = np.asarray(q_g, dtype=float)
        out = np.zeros(q_g.shape[:-1] + (self.na,))
        out[..., self.actuated_index] = q_g
        if q_e is not None:
            out[..., self.elastic_index] = q_e
        return out

    def create_data(self) -> pin.Data:
        return self.model.createData()

    def digest(self) -> str:
        """sha256 of the extended model's kinematics, inertias and spring-damper parameters."""
        h = hashlib.sha256()
        for j in range(1, self.model.njoints):
            h.update(np.asarray(self.model.jointPlacements[j].homogeneous).tobytes())
            h.update(self.model.joints[j].shortname().encode())
            h.update(np.asarray(self.model.inertias[j].toDynamicParameters()).tobytes())
        for array in (self.actuated_index, self.elastic_index, self.elastic_stiffness, self.elastic_damping,
                      self.spring_damping):
            h.update(np.ascontiguousarray(array).tobytes())
        return h.hexdigest()


def lock_urdf_elasticities(spec: Any, model: pin.Model, source: str) -> pin.Model:
    """``model`` with the non-actuated elastic URDF joints of ``spec.extra_elasticities`` locked at 0 (the model
    whose coordinates are the actuated joints), after checking every entry's joint name against the URDF."""
    if not spec.extra_elasticities:
        return model
    specs = parse_elasticities(spec.extra_elasticities, source)
    movable = list(model.names[1:])
    lock = []
    for s in specs:
        if s.joint not in movable:
            raise ModelError(f"{s.where}: unknown joint {s.joint!r}; movable URDF joints are {movable}")
        if s.axis is None:
            if s.joint in spec.joints:
                raise ModelError(f"{s.where}: joint {s.joint!r} is actuated (listed under joints); give an 'axis' to "
                                 "insert an elastic DOF at its frame, or remove it from joints to make it a "
                                 "non-actuated elastic joint")
            lock.append(model.getJointId(s.joint))
        elif s.joint not in spec.joints:
            raise ModelError(f"{s.where}: an elastic DOF with an 'axis' is inserted at an actuated joint; "
                             f"{s.joint!r} is not listed under joints")
    if not lock:
        return model
    return pin.buildReducedModel(model, sorted(lock), pin.neutral(model))


def _inserted_joint(s: ElasticitySpec) -> pin.JointModel:
    axis = np.asarray(s.axis, dtype=float)
    aligned = {0: "X", 1: "Y", 2: "Z"}
    k = int(np.argmax(np.abs(axis)))
    if np.isclose(abs(axis[k]), 1.0, atol=1e-12) and axis[k] > 0:
        return getattr(pin, f"JointModel{'R' if s.kind == 'revolute' else 'P'}{aligned[k]}")()
    if s.kind == "revolute":
        return pin.JointModelRevoluteUnaligned(axis)
    return pin.JointModelPrismaticUnaligned(axis)


def _add_frame(model: pin.Model, frame: pin.Frame) -> None:
    try:
        model.addFrame(frame, False)  # inertia already in the copied joint inertias
    except TypeError:  # pin 2.x has no append_inertia argument
        model.addFrame(frame)


def extended_pinocchio_model(full: pin.Model, specs: list[ElasticitySpec], source: str) -> pin.Model:
    """A copy of the URDF model ``full`` with a massless elastic joint inserted at the frame of every actuated
    joint named by an entry with an ``axis`` (in list order; ``side`` 'before' the joint's own motion, or 'after'
    it, between the joint and its body). Frames keep their names, order and placements."""
    inserted: dict[str, list[ElasticitySpec]] = {}
    for s in specs:
        if s.axis is not None:
            inserted.setdefault(s.joint, []).append(s)
    ext = pin.Model()
    ext.name = full.name
    ext.gravity = full.gravity
    new_id = {0: 0}
    lower, upper, velocity, effort = [], [], [], []

    def add_elastic(parent: int, s: ElasticitySpec, placement: pin.SE3) -> int:
        if ext.existJointName(s.name) or full.existJointName(s.name):
            raise ModelError(f"{s.where}.name: {s.name!r} is already a joint name")
        lower.append(-ELASTIC_RANGE)
        upper.append(ELASTIC_RANGE)
        velocity.append(np.inf)
        effort.append(np.inf)
        return ext.addJoint(parent, _inserted_joint(s), placement, s.name)

    for j in range(1, full.njoints):
        parent = new_id[full.parents[j]]
        placement = full.jointPlacements[j]
        here = inserted.get(full.names[j], [])
        for s in (s for s in here if s.side == "before"):
            parent = add_elastic(parent, s, placement)
            placement = pin.SE3.Identity()
        iq = full.idx_qs[j]
        joint = ext.addJoint(parent, full.joints[j], placement, full.names[j])
        lower.append(full.lowerPositionLimit[iq])
        upper.append(full.upperPositionLimit[iq])
        velocity.append(full.velocityLimit[full.idx_vs[j]])
        effort.append(full.effortLimit[full.idx_vs[j]])
        for s in (s for s in here if s.side == "after"):
            joint = add_elastic(joint, s, pin.SE3.Identity())
        ext.appendBodyToJoint(joint, full.inertias[j], pin.SE3.Identity())
        new_id[j] = joint
    for frame in list(full.frames)[1:]:
        copy = pin.Frame(frame)
        if hasattr(copy, "parentJoint"):
            copy.parentJoint = new_id[frame.parentJoint]
        else:  # pin 2.x
            copy.parent = new_id[frame.parent]
        _add_frame(ext, copy)
    for s in specs:
        if s.axis is not None:
            joint = ext.getJointId(s.name)
            _add_frame(ext, pin.Frame(s.name, joint, 0, pin.SE3.Identity(), pin.FrameType.JOINT))
    ext.lowerPositionLimit = np.array(lower)
    ext.upperPositionLimit = np.array(upper)
    ext.velocityLimit = np.array(velocity)
    ext.effortLimit = np.array(effort)
    ext.armature = np.zeros(ext.nv)
    return ext


def attach_extended(robot: Any, spec: Any, full: pin.Model, source: str) -> Any:
    """``robot`` with its :class:`ExtendedModel` (``robot.extended``) when the YAML has extra elasticities or
    transmission damping; the robot unchanged otherwise. With flexible links or rigid joints as well, only the
    elastic-robot model (:mod:`flexrobot_ros.flexible_links.elastic_robot`) composes them; the older per-family
    stacks refuse such a robot."""
    damping = spring_damping(spec.joints, robot.joint_names, source)
    if not spec.extra_elasticities and not np.any(damping):
        return robot
    specs = parse_elasticities(spec.extra_elasticities, source)
    ext = extended_pinocchio_model(full, specs, source)
    ext.gravity = robot.model.gravity
    if robot.tool is not None:
        merge_tool(ext, robot.tool, source)
    return dataclasses.replace(robot, extended=_assemble(robot, ext, specs, damping, source))


def check_composable(robot: Any, source: str) -> None:
    """Refuse, at load time and in one line, a robot that only the elastic-robot model simulates (flexible links or
    rigid joints together with extra elasticities, transmission damping or Coulomb friction) but which that model
    does not compose yet: a sliding beam's ``roots: integrated``, or an extra elasticity inserted with
    ``side: after`` at the joint that carries a flexible link.

    Raises:
        ModelError: naming the file, the field and the supported alternative.
    """
    coulomb = bool(np.any(robot.link_coulomb) or np.any(robot.motor_coulomb))
    if not (robot.flexible_links or robot.rigid_joints) or (robot.extended is None and not coulomb):
        return
    for link, link_spec in robot.flexible_links.items():
        if link_spec.roots == "integrated":
            raise ModelError(f"{source}: flexible_links.{link}.roots: integrated roots are not composed with extra "
                             "elasticities, transmission damping or Coulomb friction yet; use roots: explicit (the "
                             "same dynamics)")
    if robot.extended is None:
        return
    ext = robot.extended.model
    after = {s.name for s in robot.extended.specs if s.axis is not None and s.side == "after"}
    for link in robot.flexible_links:
        frame = ext.frames[ext.getFrameId(link)] if ext.existFrame(link) else None
        parent = None if frame is None else frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
        if parent is not None and ext.names[parent] in after:
            raise ModelError(f"{source}: flexible_links.{link}: an extra elasticity with side: after at the joint "
                             "of a flexible link is not composed with it yet; use side: before")


def _assemble(robot: Any, ext: pin.Model, specs: list[ElasticitySpec], damping: np.ndarray,
              source: str) -> ExtendedModel:
    names, kinds = [], []
    for s in specs:
        name = s.name if s.axis is not None else s.joint
        joint = ext.getJointId(name)
        kind = _JOINT_KIND.get(ext.joints[joint].shortname())
        if kind is None:
            raise ModelError(f"{s.where}: joint {name!r} is {ext.joints[joint].shortname()}; only 1-DoF revolute "
                             "and prismatic joints can be elastic")
        names.append(name)
        kinds.append(kind)
    index = lambda name: int(ext.idx_qs[ext.getJointId(name)])  # noqa: E731
    return ExtendedModel(
        model=ext,
        actuated_index=_readonly([index(name) for name in robot.joint_names], int),
        elastic_index=_readonly([index(name) for name in names], int),
        elastic_names=tuple(names), elastic_types=tuple(kinds),
        elastic_stiffness=_readonly([s.stiffness for s in specs]),
        elastic_damping=_readonly([s.damping for s in specs]),
        spring_damping=_readonly(damping), specs=tuple(specs))


def rigid_extended(robot: Any, spring_damping_values: Any = None) -> ExtendedModel:
    """The extended model with every extra elasticity removed (K_e -> infinity): ``robot.model`` itself, ne = 0;
    transmission damping from ``robot.extended`` (or ``spring_damping_values``, default 0)."""
    if spring_damping_values is None:
        spring_damping_values = robot.extended.spring_damping if robot.extended is not None else np.zeros(robot.n)
    return ExtendedModel(model=robot.model, actuated_index=_readonly(np.arange(robot.n), int),
                         elastic_index=_readonly([], int), elastic_names=(), elastic_types=(),
                         elastic_stiffness=_readonly([]), elastic_damping=_readonly([]),
                         spring_damping=_readonly(np.broadcast_to(spring_damping_values, (robot.n,))))


def without_extra_elasticities(robot: Any) -> Any:
    """A copy of ``robot`` whose extended model has no non-actuated elastic DOF (K_e -> infinity)."""
    return dataclasses.replace(robot, extended=rigid_extended(robot))


def extended_model(robot: Any) -> ExtendedModel:
    """``robot.extended``, or the flexible-joint robot seen as an extended model with ne = 0."""
    ext = getattr(robot, "extended", None)
    return ext if ext is not None else rigid_extended(robot)
