"""What ``simulation.launch.py`` and ``hardware.launch.py`` start besides the nodes, decided before anything starts.

Measured on Jazzy (issue 23): ``rviz:=true`` without rviz2 installed let the four nodes and robot_state_publisher
start, then aborted the launch on the missing executable and left them running. Both launch files therefore ask
:func:`plan_launch` first, with a function telling which ROS 2 packages are installed (:func:`in_ament_index`),
and start everything from one ``OpaqueFunction`` only after it has answered:

- ``rviz:=true`` without rviz2: RViz is skipped with a warning (the nodes do not need it).
- ``robot_state_publisher:=true`` without the package: skipped with a warning; in simulation the simulator then
  publishes ``/tf`` and ``/robot_description`` itself, on hardware they must come from the robot's driver.
  ``auto`` (simulation's default) means: when installed.
- ``record:=DIR`` without ``ros2 bag`` (package ros2bag): refused before any node starts, since a run the user
  wanted recorded would otherwise be lost.
- The nodes take the URDF from the ``robot_description`` topic (``urdf: robot_description`` in the flexibility YAML,
  or ``urdf:=robot_description``): robot_state_publisher, which needs the URDF as a parameter and would publish a
  second latched robot_description, is not started (with a warning when asked for: the robot's driver, or the
  robot_state_publisher that publishes that topic, gives /tf); a simulation launch is refused, since its simulator
  is the robot and nothing else would publish the URDF.
- A switch that is not true/false (or auto where allowed) is refused, naming the argument and the value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from flexrobot_ros.errors import RuntimeLayerError

#: Accepted spellings of a launch switch (what launch's ``IfCondition`` accepts, plus yes/no).
SWITCH_VALUES = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
#: ROS 2 package providing each optional tool.
RVIZ_PACKAGE = "rviz2"
STATE_PUBLISHER_PACKAGE = "robot_state_publisher"
RECORDER_PACKAGE = "ros2bag"
KINDS = ("simulation", "hardware")


@dataclass(frozen=True)
class LaunchPlan:
    """What to start besides the nodes, and the warnings to print.

    Attributes:
        robot_state_publisher: start robot_state_publisher (in simulation: and turn the simulator's /tf off).
        rviz: start RViz.
        record_directory: directory for ``ros2 bag record -a``, "" for no recording.
        warnings: one line per optional tool asked for but not started.
    """

    robot_state_publisher: bool
    rviz: bool
    record_directory: str
    warnings: tuple[str, ...]


def switch(argument: str, value: str, *, allow_auto: bool = False) -> bool | None:
    """The boolean a launch switch means (None for ``auto`` where allowed).

    Raises:
        RuntimeLayerError: any other value, naming the argument, the value and what is accepted.
    """
    text = value.strip().lower()
    if allow_auto and text == "auto":
        return None
    if text not in SWITCH_VALUES:
        expected = "true, false or auto" if allow_auto else "true or false"
        raise RuntimeLayerError(f"launch argument {argument}:={value!r}: expected {expected}")
    return SWITCH_VALUES[text]


def in_ament_index(package: str) -> bool:
    """True when the ROS 2 package is installed (found in the sourced ament index; needs ROS 2)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory(package)
    except PackageNotFoundError:
        return False
    return True


def plan_launch(kind: str, *, robot_state_publisher: str, rviz: str, record: str,
                installed: Callable[[str], bool], urdf_from_topic: bool = False) -> LaunchPlan:
    """Decide what a launch of ``kind`` (simulation or hardware) starts besides its nodes.

    Args:
        robot_state_publisher: the launch argument (true/false, or auto: when installed).
        rviz: the launch argument (true/false).
        record: the launch argument (a directory, or "" for no recording).
        installed: ``installed(package)`` is True when that ROS 2 package is installed.
        urdf_from_topic: the nodes take the URDF from the ``robot_description`` topic.

    Raises:
        RuntimeLayerError: an invalid switch, a recording asked for where ``ros2 bag`` is not installed, or a
            simulation whose URDF would come from the topic.
    """
    if kind not in KINDS:
        raise RuntimeLayerError(f"launch kind {kind!r}: expected one of {KINDS}")
    if urdf_from_topic and kind == "simulation":
        raise RuntimeLayerError("the URDF would come from the robot_description topic (urdf: robot_description), but "
                                "the simulator is the robot and publishes it: give a flexibility YAML whose urdf is a "
                                "file")
    warnings = []
    wants_state_publisher = switch("robot_state_publisher", robot_state_publisher, allow_auto=True)
    has_state_publisher = installed(STATE_PUBLISHER_PACKAGE)
    if wants_state_publisher and urdf_from_topic:
        warnings.append("robot_state_publisher:=true but the nodes take the URDF from the robot_description topic "
                        "(urdf: robot_description): not started; /tf must come from the robot's driver (the "
                        "robot_state_publisher that publishes robot_description)")
    elif wants_state_publisher and not has_state_publisher:
        instead = ("simulator_node publishes /tf and /robot_description itself" if kind == "simulation"
                   else "/tf and /robot_description must come from the robot's driver")
        warnings.append(f"robot_state_publisher:=true but the {STATE_PUBLISHER_PACKAGE} package is not installed: "
                        f"not started; {instead}")
    wants_rviz = bool(switch("rviz", rviz))
    has_rviz = installed(RVIZ_PACKAGE)
    if wants_rviz and not has_rviz:
        warnings.append(f"rviz:=true but {RVIZ_PACKAGE} is not installed: RViz not started "
                        f"(install ros-<distro>-{RVIZ_PACKAGE} to use it)")
    record = record.strip()
    if record and not installed(RECORDER_PACKAGE):
        raise RuntimeLayerError(f"launch argument record:={record!r}: 'ros2 bag' ({RECORDER_PACKAGE}) is not "
                                f"installed, so nothing was started; install ros-<distro>-rosbag2 or leave record "
                                f"empty")
    return LaunchPlan(robot_state_publisher=wants_state_publisher is not False and has_state_publisher
                      and not urdf_from_topic,
                      rviz=wants_rviz and has_rviz, record_directory=record, warnings=tuple(warnings))
