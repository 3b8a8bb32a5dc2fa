"""The URDF a flexibility YAML names, as text and as a pinocchio model.

``urdf:`` is a URDF file, a ``.xacro`` file (expanded by the ``xacro`` package with the YAML's ``xacro_args``), a
``package://<package>/<path>`` URI (``flexrobot_ros`` is found among the shipped files, any other package in the
ament index of a sourced ROS 2), or :data:`FROM_TOPIC`: the text then comes from the latched ``robot_description``
topic (the nodes read it) and is passed to :func:`flexrobot_ros.model.load_robot` as ``urdf_text``.

Mesh and other ``package://`` URIs inside the URDF are never opened: the dynamics need no geometry.

``continuous`` joints are read as revolute joints without position limits: pinocchio's continuous joint has two
configuration coordinates (cos, sin), every algorithm here uses one angle per joint. The URDF is parsed with the
joint's type set to ``revolute``; its effort and velocity limits are pinocchio's reading of the original joint, its
position limits -inf and +inf.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator
from xml.etree import ElementTree

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError

#: ``urdf:`` value that takes the URDF from the ``robot_description`` topic.
FROM_TOPIC = "robot_description"
PACKAGE = "flexrobot_ros"


def resolve_reference(reference: str, yaml_path: Path, share: Path) -> Path:
    """The file a ``urdf:`` value names: relative to the YAML's folder, absolute, or ``package://`` (this
    package's ``share`` folder, or another package's share folder in the ament index)."""
    if reference.startswith("package://"):
        package, _, rest = reference[len("package://"):].partition("/")
        if package == PACKAGE:
            return share / rest
        try:
            from ament_index_python.packages import get_package_share_directory

            return Path(get_package_share_directory(package)) / rest
        except Exception as error:  # ament_index absent (no ROS 2 sourced) or the package not in it
            raise ModelError(f"{yaml_path}: urdf: {reference!r}: ROS package {package!r} not found ({error}); "
                             "source its workspace or give the file's path") from None
    path = Path(reference).expanduser()
    return path if path.is_absolute() else (yaml_path.parent / path).resolve()


def expand_xacro(path: Path, arguments: dict[str, str]) -> str:
    """The URDF text of the xacro file ``path`` with ``arguments`` (xacro's ``name:=value``)."""
    try:
        import xacro
    except ImportError:
        raise ModelError(f"{path}: a xacro file needs the xacro package: pip install xacro (or, with ROS 2, "
                         "apt install ros-<distro>-xacro)") from None
    try:
        document = xacro.process_file(str(path), mappings=dict(arguments))
    except Exception as error:  # xacro raises XacroException, OSError, KeyError, NameError ... on a bad file
        raise ModelError(f"{path}: xacro does not expand it: {type(error).__name__}: {error}") from None
    return document.toprettyxml(indent="  ")


def read_urdf_text(path: Path, arguments: dict[str, str], where: str) -> str:
    """The URDF text of ``path`` (a .xacro file is expanded); ``where`` (the YAML field) names what named it."""
    if not path.is_file():
        raise ModelError(f"{where}: {path}: no such file")
    if path.suffix == ".xacro":
        return expand_xacro(path, arguments)
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ModelError(f"URDF {path}: cannot read: {error}") from error


@contextlib.contextmanager
def _captured_stderr() -> Iterator[list[str]]:
    """File descriptor 2 redirected into a temporary file within the block; the list then holds the lines written
    to it. urdfdom, which pinocchio parses URDFs with, prints why a URDF is invalid there (console_bridge's
    ``Error:`` lines), not into the exception. Without a file descriptor 2 nothing is captured."""
    lines: list[str] = []
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield lines
        return
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines.extend(capture.read().decode(errors="replace").splitlines())


def _parse(text: str, source: str) -> pin.Model:
    """pinocchio's model of the URDF ``text``; a ModelError holds urdfdom's reasons. What else reached stderr
    meanwhile (urdfdom's warnings on a valid URDF, another thread's output) is written to it again."""
    error: Exception | None = None
    with _captured_stderr() as printed:
        try:
            model = pin.buildModelFromXML(text)
        except (RuntimeError, ValueError, IndexError) as raised:
            error = raised
    if error is None:
        if printed:
            print("\n".join(printed), file=sys.stderr)
        return model
    reasons = [line.split("Error:", 1)[1].strip() for line in printed if line.lstrip().startswith("Error:")]
    others = [line for line in printed if not line.lstrip().startswith(("Error:", "at line "))]
    if others:
        print("\n".join(others), file=sys.stderr)
    why = f" (urdfdom: {'; '.join(reasons)})" if reasons else ""
    raise ModelError(f"URDF {source}: pinocchio cannot parse it: {error}{why}") from error


def urdf_root(text: str, source: str) -> ElementTree.Element:
    """The ``<robot>`` element of the URDF ``text``; a ModelError naming ``source`` when it is not XML or not a URDF."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise ModelError(f"URDF {source}: not a URDF (not well-formed XML: {error})") from None
    if root.tag != "robot":
        raise ModelError(f"URDF {source}: not a URDF (the root element is <{root.tag}>, expected <robot>)")
    return root


def urdf_model(text: str, source: str) -> tuple[pin.Model, tuple[str, ...]]:
    """Pinocchio model of the URDF ``text`` with its continuous joints as unlimited revolute joints, and the
    names of those joints. ``source`` (a file or topic) names the URDF in errors."""
    root = urdf_root(text, source)
    continuous = [joint for joint in root.iter("joint") if joint.get("type") == "continuous"]
    if not continuous:
        return _parse(text, source), ()
    original = _parse(text, source)
    for joint in continuous:
        joint.set("type", "revolute")
        limit = joint.find("limit")
        if limit is None:
            limit = ElementTree.SubElement(joint, "limit", effort="0", velocity="0")
        limit.set("lower", "-1")
        limit.set("upper", "1")
    model = _parse(ElementTree.tostring(root, encoding="unicode"), source)
    names = tuple(joint.get("name") for joint in continuous)
    lower, upper = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    velocity, effort = model.velocityLimit.copy(), model.effortLimit.copy()
    for name in names:
        j, j0 = model.getJointId(name), original.getJointId(name)
        lower[model.idx_qs[j]], upper[model.idx_qs[j]] = -np.inf, np.inf
        velocity[model.idx_vs[j]] = original.velocityLimit[original.idx_vs[j0]]
        effort[model.idx_vs[j]] = original.effortLimit[original.idx_vs[j0]]
    model.lowerPositionLimit, model.upperPositionLimit = lower, upper
    model.velocityLimit, model.effortLimit = velocity, effort
    return model, names


__all__ = ["FROM_TOPIC", "resolve_reference", "expand_xacro", "read_urdf_text", "urdf_root", "urdf_model"]
