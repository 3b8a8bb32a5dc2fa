"""Simulation bring-up: the flexible-joint simulator with the feedforward, modal monitor and OMA nodes.

    ros2 launch flexrobot_ros simulation.launch.py robot:=scompi rviz:=true record:=/tmp/run1

Starts simulator_node (excited by periodic impacts by default, so the OMA node has something to identify),
feedforward_node, modal_monitor_node and oma_node (with ``use_sim_time`` true when the simulator publishes ``/clock``,
its ``clock_rate_hz`` > 0, the default) with the ROS 2 parameter file ``config/<robot>_simulation.yaml``
(``config/simulation.yaml`` for robots without one; ``params_file:=`` overrides), robot_state_publisher with the
robot's URDF when ``robot_state_publisher:=true`` (default ``auto``: when it is installed; it then publishes ``/tf``
and ``/robot_description`` and the simulator's own are turned off, otherwise the simulator publishes both, the same
link tree, so a minimal ROS 2 install runs this file), optionally RViz with ``config/flexrobot.rviz`` and
``ros2 bag record -a`` with the QoS overrides of ``config/recording_qos.yaml`` (keep-all for the 1 kHz streams:
rosbag2's default depth 10 loses samples when the recorder stalls). Missing optional packages are dealt with before
anything starts (:mod:`flexrobot_ros.runtime.launch_plan`): RViz or robot_state_publisher asked for but not
installed is skipped with a warning; ``record:=`` without ``ros2 bag`` refuses the launch. ``flexrobot bringup
simulation`` starts the same nodes with the same parameter files without ROS 2.
"""
from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexrobot_ros.commands.bringup import node_parameters, parameter_file, simulated_time
from flexrobot_ros.model import load_robot
from flexrobot_ros.runtime.launch_plan import LaunchPlan, in_ament_index, plan_launch

PACKAGE = "flexrobot_ros"
#: (name, default, description) of the launch arguments.
ARGUMENTS = (
    ("robot", "scompi", "shipped robot name or path of a flexibility YAML"),
    ("tool", "", "true/false: with the YAML's tool (empty: as the parameter file says)"),
    ("robot_state_publisher", "auto", "true/false/auto: /tf and /robot_description from robot_state_publisher "
     "(auto: when installed); else from the simulator"),
    ("rviz", "false", "start RViz with config/flexrobot.rviz"),
    ("record", "", "record every topic with 'ros2 bag record' into this directory (empty: no recording)"),
    ("rate", "1000.0", "simulation and encoder sample rate [Hz]"),
    ("real_time_factor", "1.0", "simulated seconds per wall-clock second"),
    ("params_file", "", "ROS 2 parameter file (empty: config/<robot>_simulation.yaml or config/simulation.yaml)"),
)


def robot_overrides(context) -> dict:
    """Parameters every node gets from the launch arguments (robot, and tool when given)."""
    overrides = {"robot": LaunchConfiguration("robot").perform(context)}
    tool = LaunchConfiguration("tool").perform(context).strip().lower()
    if tool:
        overrides["tool"] = tool in ("true", "1", "yes")
    return overrides


def launch_plan(context) -> LaunchPlan:
    """What to start besides the nodes (robot_state_publisher, RViz, recording), decided before anything starts."""
    return plan_launch("simulation", installed=in_ament_index,
                       robot_state_publisher=LaunchConfiguration("robot_state_publisher").perform(context),
                       rviz=LaunchConfiguration("rviz").perform(context),
                       record=LaunchConfiguration("record").perform(context))


def simulator_overrides(context, state_publisher: bool) -> dict:
    """Parameters simulator_node gets from the launch arguments; with robot_state_publisher running, which
    publishes /tf and /robot_description, the simulator's own are turned off."""
    overrides = {**robot_overrides(context), "rate_hz": float(LaunchConfiguration("rate").perform(context)),
                 "real_time_factor": float(LaunchConfiguration("real_time_factor").perform(context))}
    if state_publisher:
        overrides.update({"publish_robot_description": False, "tf_rate_hz": 0.0})
    return overrides


def sim_time(params: str, name: str, clock: bool) -> dict:
    """``use_sim_time: true`` for a node besides the simulator when the simulator publishes /clock (as ``flexrobot
    bringup simulation``), unless the parameter file sets it for that node."""
    return {"use_sim_time": True} if clock and "use_sim_time" not in node_parameters([params], name, None) else {}


def launch_nodes(context, *args, **kwargs):
    """Every process of the launch, or none: optional tools that are missing are skipped with a warning (or the
    launch refused) before the first node starts."""
    plan = launch_plan(context)
    share = get_package_share_directory(PACKAGE)
    robot = LaunchConfiguration("robot").perform(context)
    params = LaunchConfiguration("params_file").perform(context) or str(parameter_file("simulation", robot))
    common = robot_overrides(context)
    clock = simulated_time([params], None)
    rate = float(LaunchConfiguration("rate").perform(context))
    simulator = simulator_overrides(context, plan.robot_state_publisher)
    actions = [LogInfo(msg=f"WARNING: {warning}") for warning in plan.warnings]
    actions += [
        Node(package=PACKAGE, executable="simulator_node", name="simulator_node", output="screen",
             parameters=[params, simulator]),
        Node(package=PACKAGE, executable="feedforward_node", name="feedforward_node", output="screen",
             parameters=[params, {**common, **sim_time(params, "feedforward_node", clock)}]),
        Node(package=PACKAGE, executable="modal_monitor_node", name="modal_monitor_node", output="screen",
             parameters=[params, {**common, **sim_time(params, "modal_monitor_node", clock)}]),
        Node(package=PACKAGE, executable="oma_node", name="oma_node", output="screen",
             parameters=[params, {**common, **sim_time(params, "oma_node", clock), "sample_rate_hz": rate}]),
    ]
    if plan.robot_state_publisher:
        actions.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                            name="robot_state_publisher", output="screen",
                            parameters=[{"robot_description": load_robot(robot).urdf_path.read_text()}]))
    if plan.rviz:
        actions.append(Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                            arguments=["-d", os.path.join(share, "config", "flexrobot.rviz")]))
    if plan.record_directory:
        actions.append(ExecuteProcess(cmd=["ros2", "bag", "record", "-a", "--qos-profile-overrides-path",
                                           os.path.join(share, "config", "recording_qos.yaml"), "-o",
                                           plan.record_directory],
                                      output="screen"))
    return actions


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *[DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS],
        OpaqueFunction(function=launch_nodes),
    ])
