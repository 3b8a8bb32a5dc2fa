"""Standard Denavit-Hartenberg tables to URDF.

A DH table describes a serial chain link by link (Denavit & Hartenberg 1955, standard convention as in the thesis,
Table 2.2): frame ``i`` is reached from frame ``i-1`` by ``Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``. For a revolute
joint the variable adds to ``theta_i`` (``theta_i = q_i + theta_offset``), for a prismatic joint it adds to ``d_i``.

The URDF generated here follows that exactly: joint ``i`` moves about (along) ``z_{i-1}``, so the URDF link ``i``
frame is DH frame ``i-1`` moved by the joint variable only; the constant part ``Rz(theta_0) Tz(d_0) Tx(a) Rx(alpha)``
becomes the origin of joint ``i+1`` and of a fixed frame ``frame_i`` (the DH frame ``O_i`` of the papers). Link
masses, centres of mass and inertia tensors are given in DH frame ``i`` (as in the papers' tables) and are placed
by composing them with that constant transform. Names: ``base_link`` (= frame_0), links ``link1..linkn``, joints
``joint1..jointn``, fixed frames ``frame_0..frame_n`` and ``tool0`` (frame_n, optionally offset by a tool flange
transform).

Tables in the modified (Craig, Khalil) convention are accepted with ``convention: modified``: row ``i`` then holds
``alpha_{i-1}, a_{i-1}, theta_i, d_i`` and frame ``i`` is reached by ``Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``;
joint ``i`` moves about ``z_i`` and the URDF link ``i`` frame *is* DH frame ``i``.

The spec format (YAML or dict)::

    name: scompi
    convention: standard            # or modified (Craig); default standard
    links:                          # one entry per joint/link, base to tip
      - type: prismatic             # or revolute
        theta: 1.5707963267948966   # rad, constant part (offset for revolute joints)
        d: 0.0                      # m, constant part (offset for prismatic joints)
        a: 0.0                      # m
        alpha: 0.0                  # rad
        mass: 19.0                  # kg
        com: [0.021, 0.031, -0.226] # m, in DH frame i
        inertia: [ixx, ixy, ixz, iyy, iyz, izz]  # kg m^2, about the CoM, DH frame i axes
        limits: {lower: -1, upper: 1, velocity: 1, effort: 100}   # optional
    tool_flange: {xyz: [0, 0, 0], rpy: [0, 0, 0]}  # optional: tool0 relative to frame_n
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence
from xml.sax.saxutils import escape

import numpy as np
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.yaml_files import finite

_JOINT_TYPES = ("revolute", "prismatic")


@dataclass(frozen=True)
class DHLink:
    """One row of a standard DH table with the link's inertial parameters (SI units, DH frame i)."""

    type: str
    theta: float = 0.0
    d: float = 0.0
    a: float = 0.0
    alpha: float = 0.0
    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    limits: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class DHRobot:
    """A serial chain given by a standard DH table."""

    name: str
    links: tuple[DHLink, ...]
    tool_flange: np.ndarray = field(default_factory=lambda: np.eye(4))
    convention: str = "standard"


def dh_transform(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Homogeneous transform ``Rz(theta) Tz(d) Tx(a) Rx(alpha)`` (standard DH), 4x4."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array(
        [
            [ct, -st * ca, st * sa, a * ct],
            [st, ct * ca, -ct * sa, a * st],
            [0.0, sa, ca, d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def modified_dh_transform(alpha: float, a: float, theta: float, d: float) -> np.ndarray:
    """Homogeneous transform ``Rx(alpha) Tx(a) Rz(theta) Tz(d)`` (modified/Craig DH), 4x4."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array(
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def link_transform(robot: DHRobot, link: DHLink, qi: float) -> np.ndarray:
    """Transform from DH frame i-1 to DH frame i at joint position ``qi`` (rad or m), in the robot's convention."""
    theta = link.theta + (qi if link.type == "revolute" else 0.0)
    d = link.d + (qi if link.type == "prismatic" else 0.0)
    if robot.convention == "modified":
        return modified_dh_transform(link.alpha, link.a, theta, d)
    return dh_transform(theta, d, link.a, link.alpha)




def _vector(value: Any, length: int, where: str) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise ModelError(f"{where}: expected a list of {length} numbers, got {value!r}")
    return tuple(finite(v, f"{where}[{k}]") for k, v in enumerate(value))


def _rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def parse_dh_spec(spec: Mapping[str, Any], source: str = "DH spec") -> DHRobot:
    """Validate a DH spec (see the module docstring) and return it as a :class:`DHRobot`."""
    if not isinstance(spec, Mapping):
        raise ModelError(f"{source}: expected a mapping with 'name' and 'links'")
    unknown = set(spec) - {"name", "links", "tool_flange", "convention"}
    if unknown:
        raise ModelError(f"{source}: unknown keys {sorted(unknown)}; expected name, convention, links, tool_flange")
    convention = spec.get("convention", "standard")
    if convention not in ("standard", "modified"):
        raise ModelError(f"{source}: convention: expected 'standard' or 'modified' (Craig), got {convention!r}")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{source}: 'name' must be a non-empty string")
    rows = spec.get("links")
    if not isinstance(rows, list) or not rows:
        raise ModelError(f"{source}: 'links' must be a non-empty list")
    links = []
    allowed = {"type", "theta", "d", "a", "alpha", "mass", "com", "inertia", "limits"}
    for i, row in enumerate(rows, start=1):
        where = f"{source}: links[{i - 1}] (joint{i})"
        if not isinstance(row, Mapping):
            raise ModelError(f"{where}: expected a mapping")
        extra = set(row) - allowed
        if extra:
            raise ModelError(f"{where}: unknown keys {sorted(extra)}; expected {sorted(allowed)}")
        if row.get("type") not in _JOINT_TYPES:
            raise ModelError(f"{where}.type: expected one of {_JOINT_TYPES}, got {row.get('type')!r}")
        mass = finite(row.get("mass", 0.0), f"{where}.mass")
        if mass < 0:
            raise ModelError(f"{where}.mass: expected >= 0 kg, got {mass}")
        limits = row.get("limits", {}) or {}
        if not isinstance(limits, Mapping) or set(limits) - {"lower", "upper", "velocity", "effort"}:
            raise ModelError(f"{where}.limits: expected a mapping of lower, upper, velocity, effort")
        links.append(
            DHLink(
                type=row["type"],
                theta=finite(row.get("theta", 0.0), f"{where}.theta"),
                d=finite(row.get("d", 0.0), f"{where}.d"),
                a=finite(row.get("a", 0.0), f"{where}.a"),
                alpha=finite(row.get("alpha", 0.0), f"{where}.alpha"),
                mass=mass,
                com=_vector(row.get("com", [0.0, 0.0, 0.0]), 3, f"{where}.com"),  # type: ignore[arg-type]
                inertia=_vector(row.get("inertia", [0.0] * 6), 6, f"{where}.inertia"),  # type: ignore[arg-type]
                limits={k: finite(v, f"{where}.limits.{k}") for k, v in limits.items()},
            )
        )
    flange = np.eye(4)
    if "tool_flange" in spec:
        tf = spec["tool_flange"]
        if not isinstance(tf, Mapping) or set(tf) - {"xyz", "rpy"}:
            raise ModelError(f"{source}: tool_flange must be a mapping with xyz and rpy")
        flange[:3, 3] = _vector(tf.get("xyz", [0, 0, 0]), 3, f"{source}: tool_flange.xyz")
        flange[:3, :3] = _rpy_matrix(_vector(tf.get("rpy", [0, 0, 0]), 3, f"{source}: tool_flange.rpy"))
    return DHRobot(name=name, links=tuple(links), tool_flange=flange, convention=convention)


def load_dh_spec(path: str | Path) -> DHRobot:
    """Read a DH spec YAML file (see the module docstring)."""
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ModelError(f"{path}: cannot read DH spec: {error}") from error
    return parse_dh_spec(spec, source=str(path))


def _rpy(rotation: np.ndarray) -> tuple[float, float, float]:
    """Roll-pitch-yaw (URDF convention, R = Rz(y) Ry(p) Rx(r)) of a rotation matrix."""
    pitch = math.atan2(-rotation[2, 0], math.hypot(rotation[0, 0], rotation[1, 0]))
    if abs(math.cos(pitch)) < 1e-12:  # gimbal lock: put everything in yaw
        return 0.0, pitch, math.atan2(-rotation[0, 1], rotation[1, 1])
    return (
        math.atan2(rotation[2, 1], rotation[2, 2]),
        pitch,
        math.atan2(rotation[1, 0], rotation[0, 0]),
    )


def _origin(transform: np.ndarray) -> str:
    xyz = " ".join(_num(v) for v in _clean(transform[:3, 3]))
    rpy = " ".join(_num(v) for v in _clean(np.array(_rpy(transform[:3, :3]))))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def _num(value: float) -> str:
    """Shortest text that reads back as the same float."""
    return repr(float(value))


def _clean(values: np.ndarray) -> np.ndarray:
    """Round away floating-point dust (|v| < 1e-15) so the URDF reads cleanly."""
    out = np.array(values, dtype=float)
    out[np.abs(out) < 1e-15] = 0.0
    return out


def _joint_and_frame_placements(robot: DHRobot) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per link: (joint origin in the parent URDF link, DH frame i in the URDF link i frame), at q = 0.

    Standard DH: the joint sits at frame i-1 (the previous link's constant part), frame i = Rz Tz Tx Rx of the
    constants. Modified DH: the joint origin is the whole row at q = 0 and the URDF link frame is frame i.
    """
    placements, previous = [], np.eye(4)
    for link in robot.links:
        constant = link_transform(robot, link, 0.0)
        if robot.convention == "modified":
            placements.append((constant, np.eye(4)))
        else:
            placements.append((previous, constant))
            previous = constant
    return placements


def dh_to_urdf(robot: DHRobot, header: str = "") -> str:
    """URDF text of a DH robot (see the module docstring for frames and names).

    ``header`` is put in an XML comment at the top (cite the source tables there).
    """
    out = ['<?xml version="1.0"?>']
    if header:
        out.append("<!--\n" + escape(header.strip()).replace("--", "- -") + "\n-->")
    out.append(f'<robot name="{escape(robot.name)}">')
    out.append('  <link name="base_link"/>')
    out.append('  <link name="frame_0"/>')
    out.append('  <joint name="frame_0_joint" type="fixed"><parent link="base_link"/><child link="frame_0"/>'
               '<origin xyz="0 0 0" rpy="0 0 0"/></joint>')
    parent = "base_link"
    for i, (link, (joint_origin, fixed)) in enumerate(zip(robot.links, _joint_and_frame_placements(robot)), start=1):
        out.append(f'  <link name="link{i}">')
        if link.mass > 0 or any(link.inertia):
            com = fixed @ np.array([*link.com, 1.0])
            placement = np.eye(4)
            placement[:3, :3] = fixed[:3, :3]
            placement[:3, 3] = com[:3]
            ixx, ixy, ixz, iyy, iyz, izz = (_num(v) for v in link.inertia)
            out.append(f"    <inertial>{_origin(placement)}<mass value=\"{_num(link.mass)}\"/>"
                       f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
                       "</inertial>")
        out.append("  </link>")
        lim = link.limits
        default_range = math.pi if link.type == "revolute" else 1.0
        limit = (f'<limit lower="{_num(lim.get("lower", -default_range))}" upper="{_num(lim.get("upper", default_range))}"'
                 f' velocity="{_num(lim.get("velocity", 10.0))}" effort="{_num(lim.get("effort", 1000.0))}"/>')
        out.append(f'  <joint name="joint{i}" type="{link.type}"><parent link="{parent}"/><child link="link{i}"/>'
                   f'{_origin(joint_origin)}<axis xyz="0 0 1"/>{limit}</joint>')
        out.append(f'  <link name="frame_{i}"/>')
        out.append(f'  <joint name="frame_{i}_joint" type="fixed"><parent link="link{i}"/><child link="frame_{i}"/>'
                   f"{_origin(fixed)}</joint>")
        parent = f"link{i}"
    n = len(robot.links)
    out.append('  <link name="tool0"/>')
    out.append(f'  <joint name="tool0_joint" type="fixed"><parent link="frame_{n}"/><child link="tool0"/>'
               f"{_origin(robot.tool_flange)}</joint>")
    out.append("</robot>")
    return "\n".join(out) + "\n"
