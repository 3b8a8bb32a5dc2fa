"""Loading robots: shipped names or user flexibility YAML files, and where the shipped files live.

Shipped robots are ``config/<name>.yaml`` (+ the URDF they name) of this package. They are looked up, in order, in
``$FLEXROBOT_SHARE``, the source tree (a checkout or editable install), ``<prefix>/share/flexrobot_ros`` of the prefix
this module is installed in (``<prefix>/lib/python3.X/site-packages``: a colcon install space, a venv, ``pip --user``),
``<sys.prefix>/share/flexrobot_ros`` (pip), the user base (``pip --user``) and the ament index (a colcon install).
"""
from __future__ import annotations

import functools

import os
import site
import sys
from dataclasses import dataclass
from pathlib import Path

import pinocchio as pin
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.flexible_robot import FlexibleRobot, build_robot
from flexrobot_ros.model.schema import parse_flexibility
from flexrobot_ros.model.urdf_source import FROM_TOPIC, read_urdf_text, resolve_reference, urdf_model
from flexrobot_ros.yaml_files import read_yaml

PACKAGE = "flexrobot_ros"


def _candidate_shares() -> list[Path]:
    candidates = []
    if os.environ.get("FLEXROBOT_SHARE"):
        candidates.append(Path(os.environ["FLEXROBOT_SHARE"]))
    here = Path(__file__).resolve()
    candidates.append(here.parents[2])
    if here.parents[2].name in ("site-packages", "dist-packages"):
        # the files installed beside this copy: a colcon install space that is imported from a venv that also holds
        # a pip-installed copy must not read that copy's files
        candidates.append(here.parents[5] / "share" / PACKAGE)
    candidates.append(Path(sys.prefix) / "share" / PACKAGE)
    candidates.append(Path(site.getuserbase()) / "share" / PACKAGE)
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory(PACKAGE)))
    except Exception:  # ament_index is absent outside ROS 2, or the package is not in the index
        pass
    return candidates


def share_directory() -> Path:
    """The directory that holds the shipped ``config/`` and ``urdf/`` folders."""
    for candidate in _candidate_shares():
        if (candidate / "config").is_dir() and (candidate / "urdf").is_dir():
            return candidate
    raise ModelError(f"cannot find the shipped robot files (config/, urdf/) of {PACKAGE}; looked in "
                     f"{[str(c) for c in _candidate_shares()]}; set FLEXROBOT_SHARE to the package's share folder")


def shipped_robots() -> tuple[str, ...]:
    """Names of the shipped robots (``config/<name>.yaml`` files that name a URDF)."""
    config = share_directory() / "config"
    names = []
    for path in sorted(config.glob("*.yaml")):
        stat = path.stat()
        if _describes_a_robot(str(path), stat.st_mtime_ns, stat.st_size):
            names.append(path.stem)
    return tuple(names)


@functools.lru_cache(maxsize=None)
def _describes_a_robot(path: str, mtime_ns: int, size: int) -> bool:
    """Whether the YAML file ``path`` (at this modification time and size) names a URDF and joints: parsed once per
    version of the file (every load by name asks, and the config folder holds ~20 YAML files)."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError:
        return False
    return isinstance(document, dict) and "urdf" in document and "joints" in document


@dataclass(frozen=True)
class RobotListing:
    """A shipped robot as its flexibility YAML describes it (no URDF is parsed): the ``summary`` line and the
    flexible parts, joints named as in the YAML."""

    robot: str
    summary: str
    elastic_joints: tuple[str, ...]
    rigid_joints: tuple[str, ...]
    flexible_links: tuple[str, ...]
    extra_elasticities: int


def list_shipped_robots() -> list[RobotListing]:
    """One :class:`RobotListing` per shipped robot, validated as :func:`load_robot` validates the YAML."""
    listings = []
    for name in shipped_robots():
        path = share_directory() / "config" / f"{name}.yaml"
        spec = parse_flexibility(read_yaml(path, ModelError, "the flexibility YAML"), str(path))
        rigid = tuple(joint for joint, params in spec.joints.items() if params.get("rigid") is True)
        listings.append(RobotListing(
            robot=name, summary=spec.summary, elastic_joints=tuple(j for j in spec.joints if j not in rigid),
            rigid_joints=rigid, flexible_links=tuple(spec.flexible_links),
            extra_elasticities=len(spec.extra_elasticities)))
    return listings


def resolve_robot_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The flexibility YAML of a shipped robot name, or the given path when it is a file."""
    text = str(name_or_path)
    path = Path(text).expanduser()
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ModelError(f"{path}: no such flexibility YAML file")
        return path
    shipped = share_directory() / "config" / f"{text}.yaml"
    if shipped.is_file() and text in shipped_robots():
        return shipped
    raise ModelError(f"unknown robot {text!r}: not a file and not a shipped robot {list(shipped_robots())}")


def parse_urdf(urdf_path: Path) -> pin.Model:
    """Pinocchio model of a URDF or xacro file (continuous joints as unlimited revolute joints); a ModelError
    names the file when it is missing or malformed."""
    return urdf_model(read_urdf_text(urdf_path, {}, "URDF"), str(urdf_path))[0]


def urdf_from_topic(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether the flexibility YAML of a robot (shipped name or path) takes its URDF from the ``robot_description``
    topic (``urdf: robot_description``); the YAML is validated as :func:`load_robot` validates it."""
    yaml_path = resolve_robot_path(name_or_path)
    spec = parse_flexibility(read_yaml(yaml_path, ModelError, "the flexibility YAML"), str(yaml_path))
    return spec.urdf == FROM_TOPIC


def load_robot(name_or_path: str | os.PathLike[str], tool: bool = False, urdf_text: str | None = None,
               urdf_origin: str = "the robot_description topic") -> FlexibleRobot:
    """Load a shipped robot by name (``"scompi"``) or a user flexibility YAML by path.

    ``tool=True`` adds the file's ``tool`` payload to the link it is attached to. ``urdf_text`` is the URDF when
    the YAML's ``urdf`` is ``robot_description`` (the nodes pass the topic's text), or replaces the file it names;
    ``urdf_origin`` says where that text came from in error messages (the nodes: ``topic /ns/robot_description``).
    Raises ModelError, naming the file, field and joint, on any problem; a partially valid robot is never returned.
    """
    yaml_path = resolve_robot_path(name_or_path)
    document = read_yaml(yaml_path, ModelError, "the flexibility YAML")
    spec = parse_flexibility(document, str(yaml_path))
    if urdf_text is not None:
        urdf_path, source = None, f"from {urdf_origin}"
    elif spec.urdf == FROM_TOPIC:
        raise ModelError(f"{yaml_path}: urdf: {FROM_TOPIC}: the URDF comes from the robot_description topic, which "
                         "the nodes read; elsewhere give a URDF file (or load_robot(..., urdf_text=...))")
    else:
        urdf_path = resolve_reference(spec.urdf, yaml_path, share_directory())
        urdf_text = read_urdf_text(urdf_path, spec.xacro_args, f"{yaml_path}: urdf: {spec.urdf!r} names")
        source = str(urdf_path)
    model, continuous = urdf_model(urdf_text, source)
    return build_robot(spec, model, urdf_path, yaml_path, tool, urdf_xml=urdf_text, continuous_joints=continuous,
                       urdf_origin=urdf_origin)
