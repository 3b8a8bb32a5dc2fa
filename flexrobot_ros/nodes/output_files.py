"""Files the nodes' services write: only inside the node's ``output_directory``, and never replaced silently.

A service must not become a way to write wherever the node's user may (``ros2 param set /oma_node identified_yaml
~/.bashrc`` and then a call of ``~/identify_joint_parameters``): every file or folder name a service writes to is
resolved against the node's read-only ``output_directory`` parameter (``~``, ``..`` and symbolic links resolved) and
refused when it lands outside. A file a service would replace is first renamed ``<name>.<k>.bak`` (k = 1, 2, ...),
and the service's response says so.
"""
from __future__ import annotations

from pathlib import Path

from flexrobot_ros.errors import RuntimeLayerError


def output_path(directory: str, name: str, parameter: str) -> Path:
    """``name`` (relative to ``directory``, or absolute) resolved, checked to lie inside ``directory``.

    Raises:
        RuntimeLayerError: the path leaves the output directory; the message names ``parameter`` and both paths.
    """
    base = Path(directory).expanduser().resolve()
    path = (base / Path(name).expanduser()).resolve()
    if path != base and base not in path.parents:
        raise RuntimeLayerError(f"parameter {parameter}: {name!r} resolves to {path}, outside the node's "
                                f"output_directory {base}; refused (set a path inside it)")
    return path


def keep_previous(path: Path) -> str:
    """Rename an existing ``path`` to the first free ``<name>.<k>.bak``; returns what was done, for a response
    ("" when there was no file)."""
    if not path.exists():
        return ""
    k = 1
    while (backup := path.with_name(f"{path.name}.{k}.bak")).exists():
        k += 1
    path.rename(backup)
    return f"; the previous {path.name} was kept as {backup.name}"


__all__ = ["keep_previous", "output_path"]
