"""launch_testing test of launch/hardware.launch.py under ROS 2, with a simulator standing in for the robot.

Runs where ROS 2 (launch_testing, launch_ros, rclpy) is installed and flexrobot_ros is built in the sourced
workspace; skipped cleanly elsewhere. The "robot" is simulator_node in namespace /robot; the hardware launch file
is pointed at its topics with the ``encoders`` and ``joint_states`` arguments, and a second time (namespace
/ros2_control) at its ros2_control topics: ``state_input:=dynamic_joint_states`` with
``dynamic_joint_states:=/robot/dynamic_joint_states`` and the feedforward output on the simulator's
``/robot/effort_controller/commands``. Checks: the monitor and the OMA node work on the remapped streams
(modal/frequencies, oma/frequencies) in both, and every process exits cleanly.
"""
from __future__ import annotations

import os
import unittest

import pytest

pytest.importorskip("launch_testing", reason="needs ROS 2 launch_testing (not on PyPI): "
                    "scripts/test-ros2 runs it on a ROS 2 install")
pytest.importorskip("launch_ros", reason="needs ROS 2 launch_ros (not on PyPI): "
                    "scripts/test-ros2 runs it on a ROS 2 install")
pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

import launch  # noqa: E402
import launch_ros.actions  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from ament_index_python.packages import PackageNotFoundError, get_package_share_directory  # noqa: E402
from launch.actions import GroupAction, IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from launch_testing_ros import WaitForTopics  # noqa: E402

try:
    SHARE = get_package_share_directory("flexrobot_ros")
except PackageNotFoundError:
    pytest.skip("flexrobot_ros is not built in the sourced ROS 2 workspace", allow_module_level=True)

from std_msgs.msg import Float64MultiArray  # noqa: E402


@pytest.mark.launch_test
def generate_test_description():
    params = os.path.join(SHARE, "config", "scompi_simulation.yaml")
    configuration_8 = [0.0, -0.3739991254273563, 1.9447954522222528, 0.0, -1.9447954522222528, 0.0]
    robot = launch_ros.actions.Node(package="flexrobot_ros", executable="simulator_node", name="simulator_node",
                                    namespace="robot", output="screen",
                                    parameters=[params, {"set_point": configuration_8, "tool": True}])
    hardware = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(SHARE, "launch", "hardware.launch.py")),
        launch_arguments={"robot": "scompi", "tool": "true", "encoders": "/robot/motor_states",
                          "joint_states": "/robot/joint_states"}.items())
    ros2_control = GroupAction([launch_ros.actions.PushRosNamespace("ros2_control"), IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(SHARE, "launch", "hardware.launch.py")),
        launch_arguments={"robot": "scompi", "tool": "true", "state_input": "dynamic_joint_states",
                          "dynamic_joint_states": "/robot/dynamic_joint_states", "ros2_control_output": "commands",
                          "controller": "/robot/effort_controller"}.items())])
    return launch.LaunchDescription([robot, hardware, ros2_control, launch_testing.actions.ReadyToTest()])


class TestHardwareBringUp(unittest.TestCase):
    def test_monitor_and_oma_on_the_robots_topics(self):
        waiter = WaitForTopics([(f"{ns}/{kind}/frequencies", Float64MultiArray) for ns in ("", "/ros2_control")
                                for kind in ("modal", "oma")], timeout=120.0)
        try:
            self.assertTrue(waiter.wait())
        finally:
            waiter.shutdown()


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])
