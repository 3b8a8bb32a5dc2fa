"""The ``flexible_links`` section of the flexibility YAML, validated into plain data (:class:`BeamSpec` per link).

::

    flexible_links:                   # per URDF link (the child link of a movable joint), by name
      link1:
        EI: 1.0e5                     # [N m^2]: one number = planar link (bends along beam y only), or
        # EI: {y: 1.0e5, z: 2.0e5}    #   one value per bending direction of the beam frame
        method: assumed_modes         # assumed_modes (default) | finite_elements
        modes: 2                      # assumed modes per bending direction (1..40)
        family: clamped_free          # boundary family of the assumed modes: clamped_free, or clamped_mass (the
        #                               exact eigenfunctions with a tip body, seed 004 eqs. 9-13, 38)
        # tip: {M: 1.55, J: 0.36, D: 0}  # clamped_mass: dimensionless tip body (eq. 12), or {y: {..}, z: {..}};
        #                               default the link's own tip_mass: M = tip_mass / (rho l), J = D = 0;
        # tip: {distal: {joint3: 0.3}}  #   or from the bodies beyond the link (URDF inertias, a tool when loaded,
        #                               a sliding beam with its tip_mass) frozen at these joint positions (others
        #                               0), seen at the link's end
        # elements: 4                 # finite elements per bending direction (method: finite_elements)
        # length: 6.0                 # [m]; default: distance to the child joint, or to tip_frame
        # tip_frame: tool0            # frame at the beam's end (last link); default: the next joint
        # mass_per_length: 23.3       # [kg/m]; default: the URDF link mass / length
        # tip_mass: 0.0               # [kg] point mass at the tip
        # hub_inertia: 0.0            # [kg m^2] rigid inertia about the joint axis at the link's root
        # damping_ratio: 0.0          # modal damping of the clamped link's modes [-]
        # roots: explicit             # a sliding link's (prismatic joint) clamped-mass roots beta_i(d): explicit
        #                               functions of d, or integrated as states by eqs. 45-47 (the paper's way)

The beam frame: origin at the link's joint frame, x towards the beam's end, z the joint axis made orthogonal to x
(so y lies in the plane of motion of a planar arm). The flexible link's inertia is the beam's (plus hub and tip mass);
the URDF inertial only supplies the default mass per length. The physics builds the beams from these specs on the
robot's URDF model (:mod:`flexrobot_ros.flexible_links.link_specs`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from flexrobot_ros.errors import ModelError
from flexrobot_ros.yaml_files import finite

#: Discretizations of a flexible link.
LINK_MODELS = ("assumed_modes", "finite_elements")
#: Largest number of clamped-free modes a link may use (beyond it the roots are (j - 1/2) pi to machine precision
#: and the assumed-modes model has no practical use).
MAX_CLAMPED_FREE_MODES = 40
#: Keys of one ``flexible_links.<link>`` entry.
LINK_KEYS = frozenset({"EI", "method", "modes", "family", "elements", "length", "tip_frame", "mass_per_length",
                       "tip_mass", "hub_inertia", "damping_ratio", "tip", "roots"})
#: How a sliding link's assumed-mode roots beta_i(d) enter the dynamics (seed 004 section 4.2).
ROOTS = ("explicit", "integrated")
#: Assumed-mode families and the largest number of modes each supports.
FAMILIES = {"clamped_free": MAX_CLAMPED_FREE_MODES, "clamped_mass": 12}
MAX_ELEMENTS = 200


def _number(value: Any, where: str, positive: bool = False, allow_zero: bool = True) -> float:
    value = finite(value, where)
    if positive and value <= 0:
        raise ModelError(f"{where}: expected a positive number, got {value!r}")
    if not allow_zero and value < 0:
        raise ModelError(f"{where}: expected a number >= 0, got {value!r}")
    return float(value)


def _count(value: Any, where: str, largest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= largest:
        raise ModelError(f"{where}: expected an integer 1..{largest}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ClampedMassParameters:
    """Dimensionless tip mass M, rotary inertia J and first moment D of seed 004 eq. 12."""

    M: float = 0.0
    J: float = 0.0
    D: float = 0.0

    @classmethod
    def from_tip_body(cls, tip: Any, mass_per_length: float, length: float,
                      source: str = "clamped-mass link") -> "ClampedMassParameters":
        """Eq. 12 for a link of ``length`` [m] and ``mass_per_length`` rho A [kg/m] carrying ``tip`` (a
        :class:`~flexrobot_ros.flexible_links.clamped_mass.TipBody`: mass [kg], first_moment [kg m], inertia
        [kg m^2] about the bending axis through the tip)."""
        if not (math.isfinite(mass_per_length) and mass_per_length > 0.0):
            raise ModelError(f"{source}: mass_per_length must be a finite number > 0 kg/m, got {mass_per_length!r}")
        if not (math.isfinite(length) and length > 0.0):
            raise ModelError(f"{source}: length must be a finite number > 0 m, got {length!r}")
        rho_a_l = mass_per_length * length
        params = cls(M=tip.mass / rho_a_l, J=tip.inertia / (rho_a_l * length * length),
                     D=tip.first_moment / (rho_a_l * length))
        params.validate(source)
        return params

    def validate(self, source: str = "clamped-mass link") -> None:
        """Raise ModelError unless the tip body's inertia [[M, D], [D, J]] is finite and positive semidefinite."""
        if not all(math.isfinite(v) for v in (self.M, self.J, self.D)):
            raise ModelError(f"{source}: M, J, D must be finite, got M={self.M!r}, J={self.J!r}, D={self.D!r}")
        if self.M < 0.0 or self.J < 0.0:
            raise ModelError(f"{source}: tip mass M and rotary inertia J must be >= 0, got M={self.M}, J={self.J}")
        if self.D * self.D > self.M * self.J * (1.0 + 1e-12) + 1e-300:
            raise ModelError(f"{source}: first moment D={self.D} exceeds sqrt(M J)={math.sqrt(self.M * self.J)}: "
                             "a tip body has J_L >= M_DL^2 / M_L about the tip (parallel-axis theorem)")


@dataclass(frozen=True)
class BeamSpec:
    """What the flexibility YAML says about one flexible link (validated), before it meets the URDF geometry.

    ``EI_y`` [N m^2] bends the beam along beam y (in the plane of a planar arm); ``EI_z`` along beam z, or None for
    a planar link (no z deflection). ``method`` is 'assumed_modes' (``modes`` per plane, ``family``
    'clamped_free') or 'finite_elements' (``elements`` per plane). ``length`` [m] / ``mass_per_length`` [kg/m] are
    None when they come from the URDF. ``damping_ratio`` is the modal damping of the clamped link's modes.
    """

    link: str
    method: str
    EI_y: float
    EI_z: float | None
    modes: int
    elements: int
    family: str
    length: float | None
    mass_per_length: float | None
    tip_mass: float
    hub_inertia: float
    damping_ratio: float
    tip_frame: str | None = None
    tip: tuple[Any, Any] | None = None    # family clamped_mass: (y, z) ClampedMassParameters given in the YAML
    roots: str = "explicit"               # a sliding link's assumed modes: "explicit" roots of d, or "integrated"


def parse_link(link: str, raw: Any, source: str) -> BeamSpec:
    """Validate one ``flexible_links.<link>`` entry (ModelError naming file, link and field)."""
    where = f"{source}: flexible_links.{link}"
    if not isinstance(raw, Mapping):
        raise ModelError(f"{where}: expected a mapping with EI, method, modes/elements, ...")
    method = raw.get("method", "assumed_modes")
    if method not in LINK_MODELS:
        raise ModelError(f"{where}.method: expected one of {LINK_MODELS}, got {method!r}")
    unknown = sorted(set(raw) - LINK_KEYS)
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(LINK_KEYS)}")
    if "EI" not in raw:
        raise ModelError(f"{where}.EI: missing (bending stiffness [N m^2], one number or {{y: , z: }})")
    EI = raw["EI"]
    if isinstance(EI, Mapping):
        bad = sorted(set(EI) - {"y", "z"})
        if bad or "y" not in EI or "z" not in EI:
            raise ModelError(f"{where}.EI: expected {{y: EI_y, z: EI_z}} [N m^2], got {dict(EI)!r}")
        EI_y = _number(EI["y"], f"{where}.EI.y", positive=True)
        EI_z: float | None = _number(EI["z"], f"{where}.EI.z", positive=True)
    else:
        EI_y, EI_z = _number(EI, f"{where}.EI", positive=True), None
    family = raw.get("family", "clamped_free")
    if family not in FAMILIES:
        raise ModelError(f"{where}.family: expected one of {sorted(FAMILIES)}, got {family!r}")
    modes = elements = 0
    if method == "assumed_modes":
        if "elements" in raw:
            raise ModelError(f"{where}.elements: only for method finite_elements (this link uses assumed_modes)")
        modes = _count(raw.get("modes", 2), f"{where}.modes ({family} family)", FAMILIES[family])
    else:
        if "modes" in raw:
            raise ModelError(f"{where}.modes: only for method assumed_modes (this link uses finite_elements)")
        elements = _count(raw.get("elements", 4), f"{where}.elements", MAX_ELEMENTS)
    length = raw.get("length")
    if length is not None:
        length = _number(length, f"{where}.length", positive=True)
    tip_frame = raw.get("tip_frame")
    if tip_frame is not None and (not isinstance(tip_frame, str) or not tip_frame):
        raise ModelError(f"{where}.tip_frame: expected a frame name, got {tip_frame!r}")
    rho = raw.get("mass_per_length")
    if rho is not None:
        rho = _number(rho, f"{where}.mass_per_length", positive=True)
    damping = _number(raw.get("damping_ratio", 0.0), f"{where}.damping_ratio", allow_zero=False)
    if damping >= 1.0:
        raise ModelError(f"{where}.damping_ratio: expected a fraction in [0, 1), got {damping}")
    roots = raw.get("roots", "explicit")
    if roots not in ROOTS:
        raise ModelError(f"{where}.roots: expected one of {list(ROOTS)}, got {roots!r}")
    return BeamSpec(link=link, method=method, EI_y=EI_y, EI_z=EI_z, modes=modes, elements=elements, family=family,
                    roots=roots,
                    tip=_tip_parameters(raw.get("tip"), f"{where}.tip", family),
                    length=length, mass_per_length=rho,
                    tip_mass=_number(raw.get("tip_mass", 0.0), f"{where}.tip_mass", allow_zero=False),
                    hub_inertia=_number(raw.get("hub_inertia", 0.0), f"{where}.hub_inertia", allow_zero=False),
                    damping_ratio=damping, tip_frame=tip_frame)


def _tip_parameters(raw: Any, where: str, family: str) -> tuple[Any, Any] | None:
    """``tip: {M:, J:, D:}`` (both planes) or ``{y: {M:, J:, D:}, z: {...}}``: seed 004 eq. 12's dimensionless tip
    mass, rotary inertia and first moment of what lies beyond the link (clamped_mass family)."""
    if raw is None:
        return None
    if family != "clamped_mass":
        raise ModelError(f"{where}: tip parameters belong to the clamped_mass family (this link: {family})")
    if isinstance(raw, Mapping) and set(raw) == {"distal"}:  # resolved on the model by the physics
        pose = raw["distal"]
        if not isinstance(pose, Mapping) or not all(isinstance(k, str) for k in pose):
            raise ModelError(f"{where}.distal: expected joint positions {{joint: value}} [rad | m], got {pose!r}")
        return DistalPose({k: _number(v, f"{where}.distal.{k}") for k, v in pose.items()})
    if not isinstance(raw, Mapping):
        raise ModelError(f"{where}: expected {{M: , J: , D: }} or {{y: {{M: ..}}, z: {{M: ..}}}}, got {raw!r}")
    planes = (raw["y"], raw["z"]) if set(raw) == {"y", "z"} else (raw, raw)
    out = []
    for plane, values in zip("yz", planes):
        if not isinstance(values, Mapping) or not set(values) <= {"M", "J", "D"}:
            raise ModelError(f"{where}: expected M, J, D (dimensionless, seed 004 eq. 12), got {values!r}")
        params = ClampedMassParameters(**{k: _number(values.get(k, 0.0), f"{where}.{k}") for k in "MJD"})
        params.validate(f"{where} ({plane} plane)")
        out.append(params)
    return out[0], out[1]


class DistalPose(dict):
    """``tip: {distal: {joint: value, ...}}``: the joint positions (others zero) at which the clamped-mass tip
    parameters are computed from the bodies beyond the link (on the model:
    :func:`flexrobot_ros.flexible_links.link_specs.build_beams`)."""


def parse_flexible_links(raw: Any, source: str) -> dict[str, BeamSpec]:
    """Validate the whole ``flexible_links`` mapping (empty or absent: no flexible link)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ModelError(f"{source}: flexible_links: expected a mapping from link name to a beam description")
    return {str(link): parse_link(str(link), desc, source) for link, desc in raw.items()}


__all__ = ["BeamSpec", "ClampedMassParameters", "DistalPose", "FAMILIES", "LINK_KEYS", "LINK_MODELS",
           "MAX_CLAMPED_FREE_MODES", "MAX_ELEMENTS", "ROOTS", "parse_flexible_links", "parse_link"]
