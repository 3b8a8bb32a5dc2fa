"""From identified base parameters back to a robot description: standard parameters, URDF and flexibility YAML.

Base parameters beta (r,) fix only r combinations of the p standard parameters phi (beta = K phi,
:mod:`.base_parameters`). Two ways to choose phi:

* :func:`standard_from_base`: the smallest change of the robot's own phi_ref that reproduces beta,
  phi = phi_ref + K^+ (beta - K phi_ref) (K^+ the pseudo-inverse), rotor inertias that are lumped into a link's
  base parameter kept at the YAML's values; not necessarily physical.
* :func:`physically_consistent`: phi minimizing (K phi - beta)^T Sigma^-1 (K phi - beta) + lambda ||S (phi -
  phi_ref)||^2 (Sigma the LS covariance of beta, S = 1 / max(|phi_ref|, 1e-3), lambda = 1e-6 pulls only the
  directions the data leave free towards phi_ref) over physically consistent links: each link's pseudo-inertia
  J = [[Sigma_2, h], [h^T, m]] (Sigma_2 = tr(I)/2 1 - I about the frame origin, h = m c) is written J = U U^T with U
  upper triangular with a positive diagonal (the log-Cholesky parametrization of Rucker & Wensing 2022), which
  makes m > 0 and the principal moments about the CoM positive and satisfy the triangle inequalities; rotor
  inertias and friction are bounded below by 0 (torque offsets, when identified, are free). Solved with
  ``scipy.optimize.least_squares``.

Export (:func:`write_identified_robot`), a URDF and a flexibility YAML beside each other:

* URDF: a copy of the robot's URDF (a xacro as it expanded, the text of ``robot_description``) with the
  ``<inertial>`` of each movable joint's child link (CoM, mass, inertia about the CoM, rpy 0) set to the identified
  inertia of that joint's body minus what else pinocchio merged into the body: links below it on fixed joints,
  the bodies of locked joints (``locked_joints``, pinocchio's reduced model) and the tool when the robot was loaded
  with it - the robot's merged inertia minus the URDF link's own, both in the joint frame. Writing the merged
  inertia into the link would count those bodies twice.
* YAML: a copy of the flexibility YAML, edited as text (:mod:`.flexibility_update`). Elastic joints:
  ``rotor_inertia = B / N^2`` when B > 0 (else the YAML's value is kept, with a warning: the schema needs a positive
  rotor inertia), ``motor_damping = F_v - link_damping`` and ``motor_coulomb = F_c - link_coulomb``: the YAML's
  link-side friction (from modal identification) is never changed, the excess goes to the motor side; when the
  identified total is below the link side, the motor side is 0 and a warning gives both values. Joints declared
  ``rigid: true`` have no motor side: ``link_damping = F_v``, ``link_coulomb = F_c``; an identified armature of a
  rigid joint that is a base parameter of its own is reported (more than 3 standard deviations from 0), never
  written. ``urdf:`` points at the new URDF; ``xacro_args`` are dropped (the URDF is expanded).
* Physical consistency of every written link: a mass > 0 is required (else the export is refused: use the
  physically consistent fit, ``--physical``); principal moments about the CoM that are negative or break the
  triangle inequality are written with a warning naming the link (the shipped kr90's link 2 is an equivalent
  inertia of that kind: principal moments -350.5, -317.8, -18.2 kg m^2).
* Nothing invalid on disk: both files are written into a temporary directory beside the output, loaded back as a
  robot (with the tool when the identified robot had it) and checked (link inertias of the loaded robot equal the
  identified ones, the joint fields are those written), and only then moved into place; on any error the
  temporary directory is removed and the previous files are untouched.

Every changed value and every warning is returned (:class:`ExportedRobot`) and written into the YAML's header
comment.
"""
from __future__ import annotations

import datetime
import os
import shutil
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import scipy.optimize
import yaml

from flexrobot_ros.errors import IdentificationError, ModelError
from flexrobot_ros.identification.flexibility_update import updated_yaml_text, yaml_float
from flexrobot_ros.identification.rigid_body import RigidIdentification
from flexrobot_ros.identification.rigid_regressor import child_link, standard_parameters

#: Weight of the pull towards the reference parameters in :func:`physically_consistent`.
PRIOR_WEIGHT = 1e-6
#: Bound on the log-Cholesky diagonal (exp(30) ~ 1e13 m sqrt(kg): far beyond any robot, keeps exp finite).
LOG_LIMIT = 30.0
#: Residual evaluations allowed to the consistent fit (its Jacobian is by finite differences, 13 n + 1 per step).
MAX_EVALUATIONS = 400


def standard_from_base(robot: Any, result: RigidIdentification) -> np.ndarray:
    """phi (p,) closest to ``robot``'s own parameters that reproduces the identified beta exactly; rotor inertias
    lumped into a link base parameter (not base parameters on their own) keep the robot's values."""
    k, reference = result.base.base_map, standard_parameters(robot, offsets=result.torque_offset)
    fixed = [10 * robot.n + 3 * i for i in range(robot.n) if 10 * robot.n + 3 * i not in _alone(result)]
    free = np.setdiff1d(np.arange(k.shape[1]), fixed)
    phi = reference.copy()
    phi[free] += np.linalg.pinv(k[:, free]) @ (result.beta - k @ reference)
    return phi


def _alone(result: RigidIdentification) -> set[int]:
    """Standard parameters that are base parameters on their own (a base-map row with one non-zero entry)."""
    return {int(i) for i, row in zip(result.base.independent, result.base.base_map) if np.count_nonzero(row) == 1}


def _pseudo_inertia(link: np.ndarray) -> np.ndarray:
    """J (4, 4) of pinocchio dynamic parameters [m, h, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] (about the origin)."""
    m, h = link[0], link[1:4]
    inertia = np.array([[link[4], link[5], link[7]], [link[5], link[6], link[8]], [link[7], link[8], link[9]]])
    out = np.zeros((4, 4))
    out[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    out[:3, 3] = out[3, :3] = h
    out[3, 3] = m
    return out


def _link_parameters(j: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_pseudo_inertia`."""
    inertia = np.trace(j[:3, :3]) * np.eye(3) - j[:3, :3]
    return np.array([j[3, 3], *j[:3, 3], inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                     inertia[1, 2], inertia[2, 2]])


def _upper_factor(theta: np.ndarray) -> np.ndarray:
    """U (4, 4) upper triangular from 10 numbers: log of the diagonal, then the 6 entries above it."""
    u = np.diag(np.exp(np.clip(theta[:4], -LOG_LIMIT, LOG_LIMIT)))
    u[np.triu_indices(4, 1)] = theta[4:]
    return u


def _theta_of(j: np.ndarray) -> np.ndarray:
    """The 10 numbers of :func:`_upper_factor` for a positive definite J (made so by raising its eigenvalues)."""
    values, vectors = np.linalg.eigh(j)
    floor = 1e-6 * max(values.max(), 1e-9)
    j = (vectors * np.maximum(values, floor)) @ vectors.T
    flip = np.eye(4)[::-1]
    u = flip @ np.linalg.cholesky(flip @ j @ flip) @ flip            # upper factor: J = U U^T
    return np.concatenate([np.log(np.diag(u)), u[np.triu_indices(4, 1)]])


def physically_consistent(robot: Any, result: RigidIdentification) -> tuple[np.ndarray, float]:
    """Physically consistent phi (p,) fitting the identified beta (module docstring) and the Mahalanobis distance
    sqrt((K phi - beta)^T Sigma^-1 (K phi - beta)) it leaves (about sqrt(r) or less when beta is consistent; much
    more when no physical robot has these base parameters, e.g. the shipped kr90, whose link 2 is an equivalent,
    non-physical inertia). At most :data:`MAX_EVALUATIONS` residual evaluations."""
    n, k = robot.n, result.base.base_map
    reference = standard_parameters(robot, offsets=result.torque_offset)
    whiten = np.linalg.cholesky(np.linalg.inv(result.covariance)).T      # W^T W = Sigma^-1
    scale = 1.0 / np.maximum(np.abs(reference), 1e-3)

    def phi_of(x: np.ndarray) -> np.ndarray:
        links = [_link_parameters(_upper_factor(x[10 * i:10 * i + 10]) @ _upper_factor(x[10 * i:10 * i + 10]).T)
                 for i in range(n)]
        return np.concatenate(links + [x[10 * n:]])

    def residual(x: np.ndarray) -> np.ndarray:
        phi = phi_of(x)
        return np.concatenate([whiten @ (k @ phi - result.beta), np.sqrt(PRIOR_WEIGHT) * scale * (phi - reference)])

    start = standard_from_base(robot, result)
    x0 = np.concatenate([_theta_of(_pseudo_inertia(start[10 * i:10 * i + 10])) for i in range(n)]
                        + [np.maximum(start[10 * n:13 * n], 0.0), start[13 * n:]])
    lower = np.concatenate([np.full(10 * n, -np.inf), np.zeros(3 * n), np.full(len(start) - 13 * n, -np.inf)])
    solution = scipy.optimize.least_squares(residual, x0, bounds=(lower, np.inf), x_scale="jac",
                                            max_nfev=MAX_EVALUATIONS)
    phi = phi_of(solution.x)
    return phi, float(np.linalg.norm(whiten @ (k @ phi - result.beta)))


#: An armature of a rigid joint further than this many standard deviations from 0 is reported (it is not written).
ARMATURE_SIGMAS = 3.0
#: Relative tolerance of the triangle inequality and of the sign of principal moments (of the largest moment).
TRIANGLE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ExportedRobot:
    """What :func:`write_identified_robot` wrote: the flexibility ``yaml`` and the ``urdf`` beside it, every value
    it changed (``changes``: "joint1.motor_damping: 5.4 -> 6.7 N m s/rad", "link2: mass 249 -> 250.3 kg, ...") and
    every ``warnings`` line (a value not written as identified, a link that is not a physical body)."""

    yaml: Path
    urdf: Path
    changes: tuple[str, ...]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"files": [str(self.yaml), str(self.urdf)], "changes": list(self.changes),
                "warnings": list(self.warnings)}


def _floats(text: str | None, default: str) -> np.ndarray:
    return np.array([float(v) for v in (text or default).split()])


def urdf_link_inertia(element: ElementTree.Element) -> pin.Inertia:
    """The ``<inertial>`` of a URDF ``<link>`` as a pinocchio inertia in the link frame (zero when absent)."""
    inertial = element.find("inertial")
    if inertial is None:
        return pin.Inertia.Zero()
    origin = inertial.find("origin")
    xyz = _floats(None if origin is None else origin.get("xyz"), "0 0 0")
    rpy = _floats(None if origin is None else origin.get("rpy"), "0 0 0")
    mass = inertial.find("mass")
    tensor = inertial.find("inertia")
    get = (lambda key: 0.0) if tensor is None else (lambda key: float(tensor.get(key, 0.0)))
    about_com = np.array([[get("ixx"), get("ixy"), get("ixz")], [get("ixy"), get("iyy"), get("iyz")],
                          [get("ixz"), get("iyz"), get("izz")]])
    rotation = pin.rpy.rpyToMatrix(*rpy)
    m = 0.0 if mass is None else float(mass.get("value", 0.0))
    if m == 0.0:
        return pin.Inertia.Zero()
    # through the dynamic parameters: pin.Inertia(m, c, I) refuses the non-positive tensors some URDFs hold
    about_origin = rotation @ about_com @ rotation.T + m * (xyz @ xyz * np.eye(3) - np.outer(xyz, xyz))
    return pin.Inertia.FromDynamicParameters(np.array([m, *(m * xyz), about_origin[0, 0], about_origin[0, 1],
                                                       about_origin[1, 1], about_origin[0, 2], about_origin[1, 2],
                                                       about_origin[2, 2]]))


def merged_parts(robot: Any, links: dict[str, ElementTree.Element]) -> np.ndarray:
    """(n, 10) dynamic parameters of what pinocchio merged into each joint's body besides the joint's own URDF
    link (fixed children, locked bodies, the tool), in the joint frame: the robot's inertia of that body minus the
    link's own."""
    out = np.zeros((robot.n, 10))
    for i in range(robot.n):
        name = child_link(robot, i + 1)
        frame = robot.model.frames[robot.model.getFrameId(name, pin.FrameType.BODY)]
        own = frame.placement.act(urdf_link_inertia(links[name]))
        out[i] = (np.asarray(robot.model.inertias[i + 1].toDynamicParameters())
                  - np.asarray(own.toDynamicParameters()))
    return out


def link_warnings(name: str, parameters: np.ndarray) -> list[str]:
    """Why the link ``name`` with dynamic parameters (10,) is not a physical rigid body (empty when it is one)."""
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(parameters, dtype=float))
    principal = np.linalg.eigvalsh(inertia.inertia)
    scale = TRIANGLE_TOLERANCE * max(np.abs(principal).max(), 1e-300)
    moments = ", ".join(f"{v:.6g}" for v in principal)
    if principal.min() < -scale:
        return [f"link {name}: negative principal moment(s) of inertia about the CoM ({moments} kg m^2): not a "
                "physical body (use the physically consistent fit, --physical)"]
    if 2.0 * principal.max() > principal.sum() + scale:
        return [f"link {name}: principal moments of inertia about the CoM ({moments} kg m^2) break the triangle "
                "inequality (the largest exceeds the sum of the other two): not a physical body (use the "
                "physically consistent fit, --physical)"]
    return []


def identified_urdf(robot: Any, phi: np.ndarray) -> tuple[str, list[str], list[str]]:
    """(URDF text, changes, warnings): ``robot``'s URDF with each movable joint's child link set to the identified
    body of phi (p,) minus the parts merged into it (module docstring)."""
    root = ElementTree.fromstring(robot.urdf_xml)       # a xacro file as it expanded, robot_description's text
    links = {element.get("name"): element for element in root.iter("link")}
    for i in range(robot.n):
        if child_link(robot, i + 1) not in links:
            raise IdentificationError(f"{robot.urdf_source}: no link {child_link(robot, i + 1)!r} to write the "
                                      f"inertia of joint {robot.joint_names[i]} into")
    parts = merged_parts(robot, links)
    changes, warnings = [], []
    for i in range(robot.n):
        name = child_link(robot, i + 1)
        element = links[name]
        frame = robot.model.frames[robot.model.getFrameId(name, pin.FrameType.BODY)]
        own = pin.Inertia.FromDynamicParameters(np.asarray(phi[10 * i:10 * i + 10], dtype=float) - parts[i])
        if not own.mass > 0.0:
            merged = ("" if not np.any(parts[i]) else
                      f" ({phi[10 * i]:.6g} kg identified for the body, {parts[i][0]:.6g} kg of it fixed children, "
                      "locked bodies or the tool)")
            raise IdentificationError(f"link {name}: identified mass {own.mass:.6g} kg is not positive{merged}; use "
                                      "the physically consistent fit (--physical) to export a URDF")
        own = frame.placement.actInv(own)                  # the joint frame -> the link frame (identity for a URDF)
        warnings += link_warnings(name, own.toDynamicParameters())
        before = urdf_link_inertia(element)
        changes.append(f"{name}: mass {before.mass:.6g} -> {own.mass:.6g} kg, CoM "
                       f"{np.round(before.lever, 6).tolist()} -> {np.round(own.lever, 6).tolist()} m")
        for old in element.findall("inertial"):
            element.remove(old)
        inertial = ElementTree.SubElement(element, "inertial")
        tensor = own.inertia
        ElementTree.SubElement(inertial, "origin", xyz=" ".join(repr(float(v)) for v in own.lever), rpy="0 0 0")
        ElementTree.SubElement(inertial, "mass", value=repr(float(own.mass)))
        ElementTree.SubElement(inertial, "inertia", **{
            key: repr(float(tensor[a, b])) for key, (a, b) in
            (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)), ("izz", (2, 2)))})
    text = ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
    return text, changes, warnings


def joint_fields(robot: Any, result: RigidIdentification, phi: np.ndarray
                 ) -> tuple[dict[str, dict[str, float]], list[str]]:
    """(``{joint: {field: value}}`` for the flexibility YAML, warnings): the module docstring's rules."""
    n, fields, warnings = robot.n, {}, []
    alone = {int(i): k for k, (i, row) in enumerate(zip(result.base.independent, result.base.base_map))
             if np.count_nonzero(row) == 1}
    for i, joint in enumerate(robot.joint_names):
        armature, viscous, coulomb = (float(v) for v in phi[10 * n + 3 * i:10 * n + 3 * i + 3])
        prismatic = robot.joint_types[i] == "prismatic"
        units = ("N s/m", "N") if prismatic else ("N m s/rad", "N m")
        entry = {}
        if joint in robot.rigid_joints:
            for total, field, symbol, unit in ((viscous, "link_damping", "F_v", units[0]),
                                               (coulomb, "link_coulomb", "F_c", units[1])):
                if total < 0.0:
                    warnings.append(f"joint {joint} (rigid): identified {symbol} {total:.6g} {unit} is negative; "
                                    f"{field} written as 0")
                entry[field] = max(total, 0.0)
            k = alone.get(10 * n + 3 * i)
            if k is not None and abs(armature) > ARMATURE_SIGMAS * result.std[k]:
                warnings.append(f"joint {joint} (rigid): identified armature {armature:.6g} +- {result.std[k]:.3g} "
                                "kg m^2 (a rotor inertia) is not written: a rigid joint has none (describe the "
                                "joint as elastic, with rotor_inertia and gear_ratio, to keep it)")
        else:
            ratio = float(robot.gear_ratio[i])
            if armature > 0.0:
                entry["rotor_inertia"] = armature / ratio**2
            else:
                kept = float(robot.motor_inertia[i]) / ratio**2
                warnings.append(f"joint {joint}: identified armature N^2 I_r = {armature:.6g} kg m^2 is not "
                                f"positive; rotor_inertia kept at {kept:.6g} kg m^2")
            for total, link_field, motor_field, symbol, unit in (
                    (viscous, "link_damping", "motor_damping", "F_v", units[0]),
                    (coulomb, "link_coulomb", "motor_coulomb", "F_c", units[1])):
                link = float(getattr(robot, link_field)[i])
                if total < link:
                    warnings.append(f"joint {joint}: identified {symbol} {total:.6g} {unit} is below the YAML's "
                                    f"{link_field} {link:.6g}; {link_field} kept, {motor_field} set to 0 (the "
                                    f"written robot's total is {link:.6g})")
                entry[motor_field] = max(total - link, 0.0)
        fields[joint] = entry
    return fields, warnings


def joint_value(robot: Any, joint: str, field: str) -> float:
    """The YAML field ``field`` of ``joint`` as ``robot`` holds it (``rotor_inertia`` as B / N^2)."""
    j = robot.joint_names.index(joint)
    if field == "rotor_inertia":
        return float(robot.motor_inertia[j]) / float(robot.gear_ratio[j]) ** 2
    return float(getattr(robot, field)[j])


def _field_unit(robot: Any, joint: str, field: str) -> str:
    prismatic = robot.joint_types[robot.joint_names.index(joint)] == "prismatic"
    if field == "rotor_inertia":
        return "kg m^2"
    if field.endswith("damping"):
        return "N s/m" if prismatic and field == "link_damping" else "N m s/rad"
    return "N" if prismatic and field == "link_coulomb" else "N m"


def write_identified_robot(robot: Any, result: RigidIdentification, phi: np.ndarray, out_yaml: str | Path,
                           description: str) -> ExportedRobot:
    """Write ``<out_yaml>`` (copy of the flexibility YAML) and ``<out_yaml stem>.urdf`` beside it (module
    docstring); nothing is left on disk when this raises."""
    from flexrobot_ros.model import load_robot

    if robot.yaml_path is None:
        raise IdentificationError(f"robot {robot.name}: no flexibility YAML to copy (built in memory)")
    out_yaml = Path(out_yaml)
    out_urdf = out_yaml.with_suffix(".urdf")
    urdf_text, changes, warnings = identified_urdf(robot, phi)
    fields, joint_warnings = joint_fields(robot, result, phi)
    warnings += joint_warnings
    for joint, entry in fields.items():
        for name, value in entry.items():
            was = joint_value(robot, joint, name)
            if not np.isclose(value, was, rtol=1e-9, atol=0.0):
                changes.append(f"{joint}.{name}: {yaml_float(was)} -> {yaml_float(value)} "
                               f"{_field_unit(robot, joint, name)}")
    source = Path(robot.yaml_path)
    text = source.read_text()
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    header = [f"{date}: rigid-body parameters identified by 'flexrobot identify-rigid'", *description.splitlines(),
              f"link inertias: {out_urdf.name} (from {robot.urdf_source})", "changed:",
              *(f"  {line}" for line in changes), *(f"WARNING: {line}" for line in warnings)]
    drop = ("xacro_args",) if "xacro_args" in (yaml.safe_load(text) or {}) else ()
    text = updated_yaml_text(text, str(source), fields, "\n".join(header), out_urdf.name, drop=drop)
    out_yaml.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_yaml.stem}.", dir=out_yaml.parent))
    try:
        (staging / out_urdf.name).write_text(urdf_text)
        (staging / out_yaml.name).write_text(text)
        _check_written(robot, phi, fields, staging / out_yaml.name, load_robot)
        os.replace(staging / out_urdf.name, out_urdf)
        os.replace(staging / out_yaml.name, out_yaml)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportedRobot(out_yaml, out_urdf, tuple(changes), tuple(warnings))


def _check_written(robot: Any, phi: np.ndarray, fields: dict[str, dict[str, float]], path: Path, load: Any) -> None:
    """Load the staged YAML + URDF and compare them with what they must hold (module docstring)."""
    try:
        written = load(path, tool=robot.tool is not None)
    except ModelError as error:
        raise IdentificationError(f"the identified values do not make a valid robot: {error}") from error
    n = robot.n
    got = standard_parameters(written)[:10 * n]
    if not np.allclose(got, phi[:10 * n], rtol=1e-9, atol=1e-9 * np.abs(phi[:10 * n]).max()):
        worst = int(np.argmax(np.abs(got - phi[:10 * n])))
        raise IdentificationError(f"the written URDF does not load back to the identified link inertias (parameter "
                                  f"{worst % 10} of joint {robot.joint_names[worst // 10]}: {got[worst]:.9g} "
                                  f"against {phi[worst]:.9g})")
    for joint, entry in fields.items():
        for name, value in entry.items():
            loaded = joint_value(written, joint, name)
            if not np.isclose(loaded, value, rtol=1e-9, atol=1e-12):
                raise IdentificationError(f"the written {joint}.{name} loads back as {loaded!r}, not {value!r}")


__all__ = ["standard_from_base", "physically_consistent", "identified_urdf", "urdf_link_inertia", "merged_parts",
           "link_warnings", "joint_fields", "joint_value", "write_identified_robot", "ExportedRobot", "PRIOR_WEIGHT",
           "LOG_LIMIT", "MAX_EVALUATIONS", "ARMATURE_SIGMAS", "TRIANGLE_TOLERANCE"]
