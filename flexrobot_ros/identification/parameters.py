"""The unknowns of the joint-parameter identification: which of k, d_f, d_fm of which joints, and their bounds.

Kinds (seed 000 eqs. 3.3-3.5, 3.26-3.27) and the FlexibleRobot / flexibility-YAML field each one replaces:

=========  =================  =========================================================
kind       field              unit
=========  =================  =========================================================
``k``      ``stiffness``      N m/rad (of the motor-side angle, also for prismatic joints)
``d_f``    ``link_damping``   N m s/rad (revolute) | N s/m (prismatic), link side
``d_fm``   ``motor_damping``  N m s/rad, motor side after the gear
=========  =================  =========================================================

A selection is written ``k,d_f,d_fm`` (every joint) or with joints, ``k,d_f:joint2,d_fm:joint1+joint2``
(:mod:`.parameter_selection`).
The parameter vector is ordered by kind (k, d_f, d_fm), then by joint (pinocchio order).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.parameter_selection import bounds_pair, given_bounds, selection_items
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.model.flexible_robot import link_damping_unit

#: Parameter kind -> FlexibleRobot array / flexibility-YAML joint field.
KIND_FIELDS = {"k": "stiffness", "d_f": "link_damping", "d_fm": "motor_damping"}
_ALIASES = {"k": "k", "stiffness": "k", "d_f": "d_f", "link_damping": "d_f", "d_fm": "d_fm",
            "motor_damping": "d_fm"}
#: Smallest stiffness lower bound, relative to the nominal value: seed 000 eq. 3.29 asks for 0 < k.
STIFFNESS_FLOOR = 1e-9


@dataclass(frozen=True)
class JointParameter:
    """One unknown: ``kind`` ('k' | 'd_f' | 'd_fm') of joint number ``joint`` (pinocchio order) named
    ``joint_name``."""

    kind: str
    joint: int
    joint_name: str

    @property
    def name(self) -> str:
        """Display name, e.g. ``k.joint1``."""
        return f"{self.kind}.{self.joint_name}"

    @property
    def key(self) -> str:
        """Bounds key of this kind at this joint, e.g. ``k:joint1``."""
        return f"{self.kind}:{self.joint_name}"

    @property
    def field(self) -> str:
        """The FlexibleRobot array / YAML joint field this parameter replaces."""
        return KIND_FIELDS[self.kind]

    @property
    def is_damping(self) -> bool:
        return self.kind != "k"

    def unit(self, robot: FlexibleRobot) -> str:
        """SI unit of the parameter for this robot's joint type."""
        if self.kind == "k" or self.kind == "d_fm":
            return "N m/rad" if self.kind == "k" else "N m s/rad"
        return link_damping_unit(robot.joint_types[self.joint])

    def value_in(self, robot: FlexibleRobot) -> float:
        """The parameter's current value in ``robot``."""
        return float(getattr(robot, self.field)[self.joint])


def parse_parameters(robot: FlexibleRobot, selection: str | Sequence[str] = "k,d_f,d_fm") -> tuple[JointParameter, ...]:
    """The unknowns named by ``selection`` (see the module docstring), in canonical order, without duplicates."""
    chosen: set[tuple[str, int]] = set()
    for item in selection_items(selection, _ALIASES, "kind", "one of k, d_f, d_fm (optionally ':joint1+joint2')"):
        for name in item.names:
            if name not in robot.joint_names:
                raise IdentificationError(f"parameters: {item.text!r}: unknown joint {name!r}; robot {robot.name} "
                                          f"has joints {list(robot.joint_names)}")
            chosen.add((item.kind, robot.joint_names.index(name)))
        if not item.names:
            chosen.update((item.kind, j) for j in range(robot.n))
    if not chosen:
        raise IdentificationError("parameters: nothing to identify; name at least one of k, d_f, d_fm")
    order = list(KIND_FIELDS)
    return tuple(JointParameter(kind, j, robot.joint_names[j])
                 for kind, j in sorted(chosen, key=lambda item: (order.index(item[0]), item[1])))


def default_bounds(robot: FlexibleRobot, parameter: JointParameter) -> tuple[float, float]:
    """Bounds used when none are given, around the YAML value taken as known within a factor 5: k in
    [k0 / 5, 5 k0]; a damping in [0, 5 d0], or, when the YAML has d0 = 0, in [0, 0.2 sqrt(k0 B)] (a tenth of the
    damping that makes the joint's motor inertia B on its spring k0 critically damped)."""
    k0 = float(robot.stiffness[parameter.joint])
    if parameter.kind == "k":
        return k0 / 5.0, 5.0 * k0
    d0 = parameter.value_in(robot)
    return 0.0, (5.0 * d0 if d0 > 0 else 0.2 * float(np.sqrt(k0 * robot.motor_inertia[parameter.joint])))


def parse_bounds(text: str | None) -> dict[str, tuple[float, float]]:
    """``'k=0:5000,d_f=0:100,d_fm:joint1=0:10'`` -> ``{'k': (0, 5000), 'd_f': (0, 100), 'd_fm:joint1': (0, 10)}``."""
    bounds: dict[str, tuple[float, float]] = {}
    if not text:
        return bounds
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        low, colon, high = value.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = None
        if not sep or not colon or pair is None:
            raise IdentificationError(f"bounds: cannot read {item!r}; expected KIND[:JOINT]=LOW:HIGH, e.g. k=0:5000")
        bounds[key.strip()] = pair
    return bounds


def resolve_bounds(robot: FlexibleRobot, parameters: Sequence[JointParameter],
                   bounds: Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds (P,) of the unknowns.

    ``bounds`` maps a kind ('k', 'd_f', 'd_fm') or ``kind:joint`` to ``(low, high)``; the more specific key wins;
    missing entries get :func:`default_bounds`. A stiffness lower bound is raised to ``STIFFNESS_FLOOR`` times the
    YAML value (eq. 3.29: 0 < k). Raises IdentificationError for unknown keys or empty intervals.
    """
    given = given_bounds(parameters, bounds, _ALIASES)
    lower, upper = np.empty(len(parameters)), np.empty(len(parameters))
    for i, p in enumerate(parameters):
        low, high = bounds_pair(p, given, default_bounds(robot, p))
        if not (np.isfinite(low) and np.isfinite(high) and 0.0 <= low < high):
            raise IdentificationError(f"bounds of {p.name}: expected finite 0 <= low < high, got ({low}, {high})")
        if p.kind == "k":
            low = max(low, STIFFNESS_FLOOR * p.value_in(robot))
        lower[i], upper[i] = low, high
    return lower, upper


__all__ = ["KIND_FIELDS", "JointParameter", "parse_parameters", "default_bounds", "parse_bounds",
           "resolve_bounds", "STIFFNESS_FLOOR"]
