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

Export: the link inertias go into a copy of the URDF (``<inertial>`` of each joint's child link: CoM, mass, inertia
about the CoM, rpy 0), and the joint terms into a copy of the flexibility YAML
(:func:`flexrobot_ros.identification.flexibility_update.updated_yaml_text`): ``rotor_inertia = B / N^2``,
``motor_damping = F_v - link_damping`` and
``motor_coulomb = F_c - link_coulomb`` (the YAML's link-side friction, from modal identification, is kept; when the
identified total is below it, the link side takes the total and the motor side 0). The written pair is loaded back
and its standard parameters checked against phi.
"""
from __future__ import annotations

import datetime
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import scipy.optimize

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


def write_identified_urdf(robot: Any, phi: np.ndarray, out: str | Path) -> Path:
    """Copy of ``robot``'s URDF with the link inertias of phi (p,) (see the module docstring)."""
    tree = ElementTree.ElementTree(ElementTree.fromstring(robot.urdf_xml))  # a xacro file as it expanded
    links = {element.get("name"): element for element in tree.getroot().iter("link")}
    for i in range(robot.n):
        name = child_link(robot, i + 1)
        inertia = pin.Inertia.FromDynamicParameters(np.asarray(phi[10 * i:10 * i + 10], dtype=float))
        if not inertia.mass > 0.0:
            raise IdentificationError(f"link {name}: identified mass {inertia.mass:.6g} kg is not positive; use the "
                                      "physically consistent fit (--physical) to export a URDF")
        element = links.get(name)
        if element is None:
            raise IdentificationError(f"{robot.urdf_source}: no link {name!r} to write the inertia of joint "
                                      f"{robot.joint_names[i]} into")
        for old in element.findall("inertial"):
            element.remove(old)
        inertial = ElementTree.SubElement(element, "inertial")
        com, tensor = inertia.lever, inertia.inertia
        ElementTree.SubElement(inertial, "origin", xyz=" ".join(repr(float(v)) for v in com), rpy="0 0 0")
        ElementTree.SubElement(inertial, "mass", value=repr(float(inertia.mass)))
        ElementTree.SubElement(inertial, "inertia", **{
            key: repr(float(tensor[a, b])) for key, (a, b) in
            (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)), ("izz", (2, 2)))})
    out = Path(out)
    tree.write(out, encoding="unicode", xml_declaration=True)
    return out


def joint_fields(robot: Any, result: RigidIdentification, phi: np.ndarray) -> dict[str, dict[str, float]]:
    """``{joint: {field: value}}`` for the flexibility YAML (module docstring)."""
    n, fields = robot.n, {}
    for i, joint in enumerate(robot.joint_names):
        armature, viscous, coulomb = phi[10 * n + 3 * i:10 * n + 3 * i + 3]
        entry = {"rotor_inertia": float(armature / robot.gear_ratio[i] ** 2)}
        for total, link_field, motor_field in ((viscous, "link_damping", "motor_damping"),
                                               (coulomb, "link_coulomb", "motor_coulomb")):
            link = float(getattr(robot, link_field)[i])
            entry[motor_field] = max(float(total) - link, 0.0)
            if total < link:
                entry[link_field] = max(float(total), 0.0)
        fields[joint] = entry
    return fields


def write_identified_robot(robot: Any, result: RigidIdentification, phi: np.ndarray, out_yaml: str | Path,
                           description: str) -> tuple[Path, Path]:
    """Write ``<out_yaml>`` (copy of the flexibility YAML) and ``<out_yaml stem>.urdf`` beside it; returns both."""
    from flexrobot_ros.model import load_robot

    if robot.yaml_path is None:
        raise IdentificationError(f"robot {robot.name}: no flexibility YAML to copy (built in memory)")
    out_yaml = Path(out_yaml)
    out_urdf = write_identified_urdf(robot, phi, out_yaml.with_suffix(".urdf"))
    fields = joint_fields(robot, result, phi)
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    lines = [f"{date}: rigid-body parameters identified by 'flexrobot identify-rigid'", *description.splitlines(),
             f"link inertias: {out_urdf.name}"]
    lines += [f"  {joint}.{name}: {yaml_float(value)}" for joint, entry in fields.items()
              for name, value in entry.items()]
    urdf_reference = os.path.relpath(out_urdf.resolve(), out_yaml.resolve().parent)
    text = updated_yaml_text(Path(robot.yaml_path).read_text(), str(robot.yaml_path), fields, "\n".join(lines),
                             urdf_reference)
    out_yaml.write_text(text)
    try:
        written = load_robot(out_yaml)
    except ModelError as error:
        raise IdentificationError(f"{out_yaml}: the identified values do not make a valid robot: {error}") from error
    got = standard_parameters(written)[:10 * robot.n]
    if not np.allclose(got, phi[:10 * robot.n], rtol=1e-9, atol=1e-9 * np.abs(phi).max()):
        raise IdentificationError(f"{out_urdf}: the written link inertias do not load back to the identified ones")
    return out_yaml, out_urdf


__all__ = ["standard_from_base", "physically_consistent", "write_identified_urdf", "joint_fields",
           "write_identified_robot", "PRIOR_WEIGHT", "LOG_LIMIT", "MAX_EVALUATIONS"]
