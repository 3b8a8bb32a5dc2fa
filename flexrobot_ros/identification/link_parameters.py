"""The unknowns of the flexible-link identification: bending stiffness and modal damping of which links, and bounds.

Kinds and the flexibility-YAML field (``flexible_links.<link>``) each one replaces:

========  ======================================  ==========================================================
kind      field                                   unit
========  ======================================  ==========================================================
``EI``    ``EI`` (planar link), or ``EI.y`` and   N m^2, bending stiffness of the beam (one parameter per
          ``EI.z`` (a link bending both ways)     bending plane)
``zeta``  ``damping_ratio``                       fraction, modal damping of the link's clamped modes
========  ======================================  ==========================================================

A selection is written ``EI,zeta`` (every flexible link) or with links, ``EI:link1+link2,zeta:link3``
(:mod:`.parameter_selection`); the
parameter vector is ordered by kind (EI, zeta), then by link (the YAML's order), y before z. Links on prismatic
joints (sliding beams, seed 004) are not identified (their roots follow the joint; refused by name).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.parameter_selection import bounds_pair, given_bounds, selection_items
from flexrobot_ros.modal.held_modes import composed_model
from flexrobot_ros.model import FlexibleRobot

#: Kinds of link parameters and their aliases.
LINK_KINDS = ("EI", "zeta")
_ALIASES = {"EI": "EI", "bending_stiffness": "EI", "zeta": "zeta", "damping_ratio": "zeta"}
#: Default bounds: EI within a factor EI_FACTOR of the YAML value; zeta in [0, ZETA_UPPER].
EI_FACTOR = 3.0
ZETA_UPPER = 0.3


def is_link_kind(item: str) -> bool:
    """Whether one item of a parameter selection (``EI``, ``zeta:link1``, ...) names a link parameter."""
    return str(item).strip().partition(":")[0].strip() in _ALIASES


@dataclass(frozen=True)
class LinkParameter:
    """One unknown: ``kind`` ('EI' | 'zeta') of flexible link ``link``; ``plane`` 'y' or 'z' for the EI of a link
    bending both ways, '' otherwise."""

    kind: str
    link: str
    plane: str = ""

    @property
    def name(self) -> str:
        """Display name, e.g. ``EI.link1``, ``EI.link2.z``, ``zeta.link3``."""
        return f"{self.kind}.{self.link}" + (f".{self.plane}" if self.plane else "")

    @property
    def key(self) -> str:
        """Bounds key of this kind on this link (both planes), e.g. ``EI:link1``."""
        return f"{self.kind}:{self.link}"

    @property
    def field(self) -> str:
        """The ``flexible_links.<link>`` field this parameter replaces (``EI``, ``EI.y``, ``EI.z``,
        ``damping_ratio``)."""
        if self.kind == "zeta":
            return "damping_ratio"
        return f"EI.{self.plane}" if self.plane else "EI"

    @property
    def is_damping(self) -> bool:
        return self.kind == "zeta"

    @property
    def unit(self) -> str:
        return "N m^2" if self.kind == "EI" else "fraction"

    def value_in(self, robot: FlexibleRobot) -> float:
        """The parameter's current value in ``robot``."""
        spec = robot.flexible_links[self.link]
        if self.kind == "zeta":
            return float(spec.damping_ratio)
        return float(spec.EI_z if self.plane == "z" else spec.EI_y)


def beam_links(robot: FlexibleRobot) -> list[str]:
    """The flexible links whose parameters can be identified (revolute links; a sliding beam's are not)."""
    sliding = {body.sliding.link for body in composed_model(robot).chain.bodies if body.sliding is not None}
    return [link for link in robot.flexible_links if link not in sliding]


def parse_link_parameters(robot: FlexibleRobot, selection: str | Sequence[str] = "EI") -> tuple[LinkParameter, ...]:
    """The unknowns named by ``selection`` (module docstring), in canonical order, without duplicates."""
    links = list(robot.flexible_links)
    if not links:
        raise IdentificationError(f"parameters: robot {robot.name} has no flexible links (no flexible_links section "
                                  "in its flexibility YAML); link parameters EI, zeta need one")
    usable = beam_links(robot)
    chosen: set[tuple[str, str]] = set()
    for item in selection_items(selection, _ALIASES, "link parameter kind",
                                "EI or zeta (optionally ':link1+link2')"):
        for name in item.names or usable:
            if name not in links:
                raise IdentificationError(f"parameters: {item.text!r}: unknown flexible link {name!r}; robot "
                                          f"{robot.name} has flexible links {links}")
            if name not in usable:
                raise IdentificationError(f"parameters: {item.text!r}: link {name!r} slides on a prismatic joint; "
                                          "its beam parameters are not identified (only revolute links' are)")
            chosen.add((item.kind, name))
    if not chosen:
        raise IdentificationError("parameters: nothing to identify; name at least one of EI, zeta")
    out = []
    for kind, link in sorted(chosen, key=lambda item: (LINK_KINDS.index(item[0]), links.index(item[1]))):
        planar = robot.flexible_links[link].EI_z is None
        planes = [""] if kind == "zeta" or planar else ["y", "z"]
        out += [LinkParameter(kind, link, plane) for plane in planes]
    return tuple(out)


def default_link_bounds(robot: FlexibleRobot, parameter: LinkParameter) -> tuple[float, float]:
    """Bounds used when none are given: EI in [EI0 / EI_FACTOR, EI_FACTOR EI0]; zeta in [0, ZETA_UPPER]."""
    if parameter.kind == "zeta":
        return 0.0, ZETA_UPPER
    value = parameter.value_in(robot)
    return value / EI_FACTOR, value * EI_FACTOR


def resolve_link_bounds(robot: FlexibleRobot, parameters: Sequence[LinkParameter],
                        bounds: Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds (P,): ``bounds`` maps a kind ('EI', 'zeta') or ``kind:link`` to ``(low, high)`` (the
    more specific key wins), missing entries get :func:`default_link_bounds`. EI must stay > 0."""
    given = given_bounds(parameters, bounds, _ALIASES, "link parameter")
    lower, upper = np.empty(len(parameters)), np.empty(len(parameters))
    for i, p in enumerate(parameters):
        low, high = bounds_pair(p, given, default_link_bounds(robot, p))
        if not (np.isfinite(low) and np.isfinite(high) and 0.0 <= low < high) or (p.kind == "EI" and low <= 0.0) \
                or (p.kind == "zeta" and high >= 1.0):
            raise IdentificationError(f"bounds of {p.name}: expected finite 0 {'<' if p.kind == 'EI' else '<='} "
                                      f"low < high{' < 1' if p.kind == 'zeta' else ''}, got ({low}, {high})")
        lower[i], upper[i] = low, high
    return lower, upper


__all__ = ["LINK_KINDS", "LinkParameter", "beam_links", "default_link_bounds", "is_link_kind",
           "parse_link_parameters", "resolve_link_bounds"]
