"""The ``extra_elasticities`` of a flexibility YAML: non-actuated elastic degrees of freedom (seed 002, section 2).

An extended flexible-joint robot (Moberg & Hanssen, eq. 1) is a serial chain of rigid bodies joined by actuated
elastic joints (motor, gear spring K_g, damper D_g; the ``joints`` section of the YAML) and by non-actuated
spring-damper pairs ``tau_e = -K_e q_e - D_e qd_e`` (eq. 1c) that model bearing, foundation, tool or link-root
compliance. Each list entry of ``extra_elasticities`` is one such pair, in one of two places::

    extra_elasticities:
      - joint: joint3        # a movable URDF joint that is NOT listed under `joints`: it becomes a non-actuated
        stiffness: 1.0e+5    # elastic joint (axis and type from the URDF); K_e [N m/rad | N/m]
        damping: 250.0       # D_e [N m s/rad | N s/m], >= 0
      - joint: joint1        # an actuated joint (listed under `joints`): a new elastic DOF is inserted at its frame,
        axis: x              # before its own motion; axis x | y | z | [ax, ay, az] in that frame
        type: revolute       # revolute (default, rotation about axis) or prismatic (translation along it)
        stiffness: 6.1e+6
        damping: 40.0
        name: joint1_rx      # optional name of the elastic coordinate (default <joint>_r<axis> / <joint>_p<axis>)
        side: before         # before (default: axis fixed in the parent link, at q = 0) or after the joint's own
                             # motion (axis fixed in the joint's own link, e.g. a bearing tilt of frame O_i)
        label: O_1           # optional free text (e.g. the paper's name of the frame)

The elastic coordinates rest at q_e = 0 (the URDF pose). Entries are validated here (structure and values);
:mod:`.extended_model` matches them against the URDF.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.schema import non_negative
from flexrobot_ros.yaml_files import finite

ENTRY_KEYS = frozenset({"joint", "axis", "type", "stiffness", "damping", "name", "label", "side"})
SIDES = ("before", "after")
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
TYPES = ("revolute", "prismatic")


@dataclass(frozen=True)
class ElasticitySpec:
    """One validated non-actuated spring-damper pair.

    ``joint`` the URDF joint it belongs to; ``axis`` (3,) unit vector in that joint's frame, or None when the
    entry names a non-actuated URDF joint (axis from the URDF); ``kind`` 'revolute' | 'prismatic' (None: from the
    URDF); ``stiffness`` K_e [N m/rad | N/m] > 0; ``damping`` D_e [N m s/rad | N s/m] >= 0; ``name`` of the
    elastic coordinate; ``where`` the YAML location for messages.
    """

    joint: str
    axis: np.ndarray | None
    kind: str | None
    stiffness: float
    damping: float
    name: str | None
    label: str
    where: str
    side: str = "before"


def _axis(value: Any, where: str) -> tuple[np.ndarray, str]:
    if isinstance(value, str):
        if value not in AXES:
            raise ModelError(f"{where}.axis: expected x, y, z or a 3-vector, got {value!r}")
        return np.array(AXES[value]), value
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ModelError(f"{where}.axis: expected x, y, z or a 3-vector, got {value!r}")
    axis = np.array([finite(v, f"{where}.axis[{k}]") for k, v in enumerate(value)])
    norm = float(np.linalg.norm(axis))
    if norm < 1e-9:
        raise ModelError(f"{where}.axis: expected a non-zero vector, got {list(value)}")
    return axis / norm, "u"


def parse_elasticities(entries: Sequence[Any], source: str) -> list[ElasticitySpec]:
    """Validate every ``extra_elasticities`` entry (structure and values; names are checked against the URDF
    later). Raises ModelError naming the file, the entry and the field."""
    if not isinstance(entries, (list, tuple)):
        raise ModelError(f"{source}: extra_elasticities: expected a list of entries")
    specs = []
    for index, entry in enumerate(entries):
        where = f"{source}: extra_elasticities[{index}]"
        if not isinstance(entry, Mapping):
            raise ModelError(f"{where}: expected a mapping with joint, stiffness, damping, got {entry!r}")
        unknown = sorted(set(map(str, entry)) - ENTRY_KEYS)
        if unknown:
            raise ModelError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(ENTRY_KEYS)}")
        joint = entry.get("joint")
        if not isinstance(joint, str) or not joint:
            raise ModelError(f"{where}.joint: expected the name of a URDF joint, got {joint!r}")
        where = f"{where} (joint {joint})"
        if "stiffness" not in entry:
            raise ModelError(f"{where}.stiffness: missing (N m/rad or N/m, > 0)")
        stiffness = finite(entry["stiffness"], f"{where}.stiffness")
        if stiffness <= 0.0:
            raise ModelError(f"{where}.stiffness: expected a positive stiffness (N m/rad or N/m), got {stiffness!r}; "
                             "remove the entry for a rigid direction")
        damping = non_negative(entry.get("damping", 0.0), f"{where}.damping")
        kind = entry.get("type")
        if kind is not None and kind not in TYPES:
            raise ModelError(f"{where}.type: expected one of {TYPES}, got {kind!r}")
        axis = None
        suffix = ""
        if "axis" in entry:
            axis, suffix = _axis(entry["axis"], where)
            kind = kind or "revolute"
        elif kind is not None:
            raise ModelError(f"{where}.type: given without an axis; 'type' and 'axis' describe an inserted elastic "
                             "DOF (a non-actuated URDF joint takes both from the URDF)")
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name):
            raise ModelError(f"{where}.name: expected a non-empty string, got {name!r}")
        if name is None and axis is not None:
            name = f"{joint}_{kind[0]}{suffix}" if suffix != "u" else f"{joint}_{kind[0]}{index}"
        side = entry.get("side", "before")
        if side not in SIDES:
            raise ModelError(f"{where}.side: expected one of {SIDES}, got {side!r}")
        if axis is None and "side" in entry:
            raise ModelError(f"{where}.side: only for an elastic DOF inserted with an 'axis'")
        label = entry.get("label", "")
        if not isinstance(label, str):
            raise ModelError(f"{where}.label: expected text, got {label!r}")
        specs.append(ElasticitySpec(joint=joint, axis=axis, kind=kind, stiffness=stiffness, damping=damping,
                                    name=name, label=label, where=where, side=side))
    names = [s.name for s in specs if s.name is not None]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ModelError(f"{source}: extra_elasticities: duplicate elastic coordinate name(s) {duplicates}")
    urdf_joints = [s.joint for s in specs if s.axis is None]
    twice = sorted({n for n in urdf_joints if urdf_joints.count(n) > 1})
    if twice:
        raise ModelError(f"{source}: extra_elasticities: URDF joint(s) {twice} listed more than once")
    return specs


def spring_damping(joints: Mapping[str, Mapping[str, Any]], names: Sequence[str], source: str) -> np.ndarray:
    """Transmission (spring) damping D_g [N m s/rad] per actuated joint (``joints.<name>.spring_damping``, default
    0): the damper in parallel with the gear spring, acting on W qd - qd_m (seed 002 eq. 1b)."""
    return np.array([non_negative(joints[name].get("spring_damping", 0.0),
                                  f"{source}: joints.{name}.spring_damping") for name in names])
