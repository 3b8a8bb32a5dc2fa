"""Files the nodes' services write: only inside the node's ``output_directory``, and never replaced silently.

A service must not become a way to write wherever the node's user may (``ros2 param set /oma_node identified_yaml
~/.bashrc`` and then a call of ``~/identify_joint_parameters``): every file or folder name a service writes to is
resolved against the node's read-only ``output_directory`` parameter (``~``, ``..`` and symbolic links resolved) and
refused when it lands outside. A file a service would replace is first renamed ``<name>.<k>.bak`` (k = 1, 2, ...),
and the service's response says so.

``output_directory`` empty (the default) means the run directory (issue 23: services used to write into whatever
directory ``ros2 launch`` was started from): ``$ROS_HOME/flexrobot/<YYYY-MM-DD_HH-MM-SS>_<PID>`` (``ROS_HOME``
defaults to ``~/.ros``, as for ROS 2's logs), named after the process that started the node, its start time and
PID, so every node of one ``ros2 launch`` or ``flexrobot bringup`` writes into the same folder and each run gets its
own. It is created when a service first writes.
"""
from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Mapping

from flexrobot_ros.errors import RuntimeLayerError


def _start_time(pid: int) -> datetime.datetime | None:
    """Local start time of process ``pid`` (Linux /proc: field 22 of its stat, in clock ticks after boot), None
    where it cannot be read."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot_s = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                      if line.startswith("btime "))
        return datetime.datetime.fromtimestamp(boot_s + ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def run_directory(environ: Mapping[str, str] | None = None) -> Path:
    """Where the services of a node whose ``output_directory`` is empty write (see the module docstring)."""
    environ = os.environ if environ is None else environ
    parent = os.getppid()
    started = _start_time(parent) or datetime.datetime.now()
    home = Path(environ.get("ROS_HOME") or "~/.ros").expanduser()
    return home / "flexrobot" / f"{started:%Y-%m-%d_%H-%M-%S}_{parent}"


def output_path(directory: str, name: str, parameter: str) -> Path:
    """``name`` (relative to ``directory``, or absolute) resolved, checked to lie inside ``directory`` (empty: the
    :func:`run_directory`).

    Raises:
        RuntimeLayerError: the path leaves the output directory; the message names ``parameter`` and both paths.
    """
    base = (Path(directory).expanduser() if directory else run_directory()).resolve()
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


__all__ = ["keep_previous", "output_path", "run_directory"]
