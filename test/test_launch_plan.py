"""Issue 23: what the launch files start besides the nodes when optional ROS 2 packages are missing.

On Jazzy, ``rviz:=true`` without rviz2 aborted the launch after the nodes had started and left them running. The
launch files now ask :func:`plan_launch` (with the ament index as ``installed``) before they start anything; here it
gets fixed sets of installed packages.
"""
from __future__ import annotations

import pytest

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime.launch_plan import LaunchPlan, plan_launch, switch

FULL = {"rviz2", "robot_state_publisher", "ros2bag"}


def plan(kind: str, packages: set[str], *, rsp: str = "false", rviz: str = "false", record: str = "",
         urdf_from_topic: bool = False) -> LaunchPlan:
    return plan_launch(kind, robot_state_publisher=rsp, rviz=rviz, record=record, installed=packages.__contains__,
                       urdf_from_topic=urdf_from_topic)


@pytest.mark.parametrize("kind", ["simulation", "hardware"])
def test_everything_installed_starts_what_was_asked(kind):
    assert plan(kind, FULL, rsp="true", rviz="true", record="/tmp/run1") == LaunchPlan(
        robot_state_publisher=True, rviz=True, record_directory="/tmp/run1", warnings=())
    assert plan(kind, FULL) == LaunchPlan(robot_state_publisher=False, rviz=False, record_directory="",
                                          warnings=())


@pytest.mark.parametrize("kind", ["simulation", "hardware"])
def test_missing_rviz_is_skipped_with_one_warning(kind):
    """The measured failure: rviz:=true without rviz2. The nodes still start (the plan does not refuse), RViz not."""
    result = plan(kind, FULL - {"rviz2"}, rsp="true", rviz="true")
    assert result.rviz is False and result.robot_state_publisher is True
    assert result.warnings == ("rviz:=true but rviz2 is not installed: RViz not started "
                               "(install ros-<distro>-rviz2 to use it)",)


def test_missing_robot_state_publisher_says_who_publishes_tf_instead():
    simulation = plan("simulation", FULL - {"robot_state_publisher"}, rsp="true")
    hardware = plan("hardware", FULL - {"robot_state_publisher"}, rsp="yes")
    assert not simulation.robot_state_publisher and not hardware.robot_state_publisher
    assert simulation.warnings[0].endswith("not started; simulator_node publishes /tf and /robot_description itself")
    assert hardware.warnings[0].endswith("not started; /tf and /robot_description must come from the robot's driver")


def test_auto_state_publisher_follows_the_installation_silently():
    assert plan("simulation", FULL, rsp="auto").robot_state_publisher is True
    quiet = plan("simulation", FULL - {"robot_state_publisher"}, rsp="AUTO")
    assert quiet.robot_state_publisher is False and quiet.warnings == ()


def test_a_urdf_from_the_topic_starts_no_robot_state_publisher_and_no_simulation():
    """urdf: robot_description: robot_state_publisher (it needs the URDF file, and would publish a second latched
    robot_description) is not started, with one warning when asked for, none with auto; a simulation is refused
    before anything starts (its simulator is the robot)."""
    asked = plan("hardware", FULL, rsp="true", rviz="true", urdf_from_topic=True)
    assert asked.robot_state_publisher is False and asked.rviz is True
    assert asked.warnings == ("robot_state_publisher:=true but the nodes take the URDF from the robot_description "
                              "topic (urdf: robot_description): not started; /tf must come from the robot's driver "
                              "(the robot_state_publisher that publishes robot_description)",)
    quiet = plan("hardware", FULL, rsp="auto", urdf_from_topic=True)
    assert quiet.robot_state_publisher is False and quiet.warnings == ()
    with pytest.raises(RuntimeLayerError, match=r"the simulator is the robot and publishes it: give a flexibility YAML "
                                                r"whose urdf is a file"):
        plan("simulation", FULL, rsp="auto", urdf_from_topic=True)


def test_recording_without_ros2_bag_refuses_before_anything_starts():
    with pytest.raises(RuntimeLayerError, match=r"record:='/tmp/run1': 'ros2 bag' \(ros2bag\) is not installed, "
                                                r"so nothing was started"):
        plan("simulation", FULL - {"ros2bag"}, record="/tmp/run1")
    assert plan("hardware", FULL - {"ros2bag"}, record="  ").record_directory == ""


def test_bad_switches_and_kinds_are_refused_with_the_value():
    with pytest.raises(RuntimeLayerError, match=r"rviz:='maybe': expected true or false"):
        plan("hardware", FULL, rviz="maybe")
    with pytest.raises(RuntimeLayerError, match=r"robot_state_publisher:='sometimes': expected true, false or auto"):
        plan("simulation", FULL, rsp="sometimes")
    with pytest.raises(RuntimeLayerError, match=r"rviz:='auto': expected true or false"):
        switch("rviz", "auto")
    with pytest.raises(RuntimeLayerError, match=r"launch kind 'replay'"):
        plan("replay", FULL)


@pytest.mark.parametrize("value,expected", [("true", True), ("True", True), ("1", True), ("yes", True),
                                            ("false", False), ("0", False), (" no ", False)])
def test_switch_spellings(value, expected):
    assert switch("rviz", value) is expected
