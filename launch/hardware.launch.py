"""Hardware bring-up: feedforward, modal monitor and OMA on a real robot's topics (no simulator).

    ros2 launch flexrobot_ros hardware.launch.py robot:=scompi encoders:=/robot/motor_encoders \\
        joint_states:=/joint_states ros2_control_output:=joint_trajectory controller:=joint_trajectory_controller
    ros2 launch flexrobot_ros hardware.launch.py robot:=scompi state_input:=dynamic_joint_states \\
        motor_interface:=motor_position link_interface:=position ros2_control_output:=commands \\
        controller:=effort_controller

Starts feedforward_node (desired_trajectory in, motor reference trajectory out on ``motor_trajectory``),
modal_monitor_node (on ``joint_states``) and oma_node (on the motor encoder topic ``encoders``, any
sensor_msgs/JointState topic; its ``sample_rate_hz`` must be that stream's rate), or, with
``state_input:=dynamic_joint_states``, both on ros2_control's ``dynamic_joint_states`` (control_msgs/DynamicJointState
of the joint_state_broadcaster; the state interfaces ``motor_interface`` and ``link_interface``), with
``config/<robot>_hardware.yaml``
(``config/hardware.yaml`` for robots without one; ``params_file:=`` overrides); optionally robot_state_publisher
(when the robot's driver does not run one), RViz with ``config/flexrobot.rviz`` and ``ros2 bag record -a``; missing
optional packages are dealt with before anything starts (:mod:`flexrobot_ros.runtime.launch_plan`).
``calibrate:=true`` also starts calibration_node (self-calibration on ``~/calibrate``; the parameter file's
``calibration_node`` section: poses, ``move: wait``, excitation) on the same encoder and joint-state topics.
``urdf:=robot_description`` (or ``urdf: robot_description`` in the flexibility YAML) makes every node take the URDF
from the latched ``/robot_description`` topic the robot's driver (its robot_state_publisher) publishes
(:mod:`flexrobot_ros.nodes.robot_description`); robot_state_publisher is then not started.
``flexrobot bringup hardware`` starts the same nodes with the same parameter files without ROS 2.
"""
from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexrobot_ros.commands.bringup import parameter_file
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.robot_description import uses_topic
from flexrobot_ros.runtime.launch_plan import LaunchPlan, in_ament_index, plan_launch

PACKAGE = "flexrobot_ros"
#: (name, default, description) of the launch arguments.
ARGUMENTS = (
    ("robot", "scompi", "shipped robot name or path of a flexibility YAML"),
    ("tool", "", "true/false: with the YAML's tool (empty: as the parameter file says)"),
    ("encoders", "motor_states", "sensor_msgs/JointState topic of the motor encoders (OMA input)"),
    ("joint_states", "joint_states", "sensor_msgs/JointState topic of the link positions (monitor input)"),
    ("motor_trajectory", "motor_trajectory", "topic of the motor reference trajectory for the robot's controller"),
    ("ros2_control_output", "", "feedforward to ros2_control: 'joint_trajectory' (JointTrajectory on "
     "<controller>/joint_trajectory), 'commands' (effort stream [N m] on <controller>/commands) or 'none' (empty: "
     "as the parameter file says)"),
    ("controller", "", "name of the ros2_control controller fed by the feedforward node (empty: as the parameter "
     "file says, joint_trajectory_controller by default)"),
    ("drive_compensates", "", "what the drive adds itself: 'none' or 'gravity' (the node then sends tau_m - W^-1 g(q) "
     "[N m]; empty: as the parameter file says)"),
    ("state_input", "", "where the monitor and OMA nodes read the joint states: 'joint_states' (encoders:= and "
     "joint_states:= topics) or 'dynamic_joint_states' (ros2_control's control_msgs/DynamicJointState; empty: as the "
     "parameter file says, joint_states by default)"),
    ("dynamic_joint_states", "dynamic_joint_states", "control_msgs/DynamicJointState topic of the "
     "joint_state_broadcaster (state_input:=dynamic_joint_states)"),
    ("motor_interface", "", "state interface of the motor encoders on dynamic_joint_states (OMA channels; empty: as "
     "the parameter file says, motor_position by default)"),
    ("link_interface", "", "state interface of the link position on dynamic_joint_states (empty: as the parameter file "
     "says, position by default)"),
    ("urdf", "", "where the nodes take the URDF from: empty = as the flexibility YAML says (a file, or the topic); "
     "'robot_description' = the latched /robot_description topic of the robot's driver (robot_state_publisher is "
     "then not started)"),
    ("robot_state_publisher", "false", "also start robot_state_publisher with the robot's URDF file"),
    ("rviz", "false", "start RViz with config/flexrobot.rviz"),
    ("record", "", "record every topic with 'ros2 bag record' into this directory (empty: no recording)"),
    ("params_file", "", "ROS 2 parameter file (empty: config/<robot>_hardware.yaml or config/hardware.yaml)"),
    ("calibrate", "false", "also start calibration_node (its section of the parameter file: poses, move: wait, "
     "excitation); call ~/calibrate to calibrate"),
)


def robot_overrides(context) -> dict:
    """Parameters every node gets from the launch arguments (robot, and tool and urdf when given)."""
    overrides = {"robot": LaunchConfiguration("robot").perform(context)}
    tool = LaunchConfiguration("tool").perform(context).strip().lower()
    if tool:
        overrides["tool"] = tool in ("true", "1", "yes")
    urdf = LaunchConfiguration("urdf").perform(context).strip()
    if urdf:
        overrides["urdf"] = urdf
    return overrides


def ros2_control_overrides(context) -> dict:
    """The feedforward node's ros2_control parameters given as launch arguments (empty ones are left to the file)."""
    values = {"ros2_control.output": LaunchConfiguration("ros2_control_output").perform(context).strip(),
              "ros2_control.controller": LaunchConfiguration("controller").perform(context).strip(),
              "drive_compensates": LaunchConfiguration("drive_compensates").perform(context).strip()}
    return {parameter: value for parameter, value in values.items() if value}


def state_overrides(context, motor: bool) -> dict:
    """The state-input parameters given as launch arguments (empty ones are left to the file); ``motor``: the node
    reads the motor side too (OMA)."""
    values = {"state_input": LaunchConfiguration("state_input").perform(context).strip(),
              "dynamic_joint_states.link_interface": LaunchConfiguration("link_interface").perform(context).strip()}
    if motor:
        values["dynamic_joint_states.motor_interface"] = LaunchConfiguration("motor_interface").perform(context).strip()
    return {parameter: value for parameter, value in values.items() if value}


def launch_plan(context) -> LaunchPlan:
    """What to start besides the nodes (robot_state_publisher, RViz, recording), decided before anything starts."""
    return plan_launch("hardware", installed=in_ament_index,
                       robot_state_publisher=LaunchConfiguration("robot_state_publisher").perform(context),
                       rviz=LaunchConfiguration("rviz").perform(context),
                       record=LaunchConfiguration("record").perform(context),
                       urdf_from_topic=uses_topic(LaunchConfiguration("robot").perform(context),
                                                  LaunchConfiguration("urdf").perform(context).strip()))


def launch_nodes(context, *args, **kwargs):
    """Every process of the launch, or none: optional tools that are missing are skipped with a warning (or the
    launch refused) before the first node starts."""
    plan = launch_plan(context)
    robot = LaunchConfiguration("robot").perform(context)
    params = LaunchConfiguration("params_file").perform(context) or str(parameter_file("hardware", robot))
    common = robot_overrides(context)
    joint_states = ("joint_states", LaunchConfiguration("joint_states").perform(context))
    dynamic_joint_states = ("dynamic_joint_states", LaunchConfiguration("dynamic_joint_states").perform(context))
    actions = [LogInfo(msg=f"WARNING: {warning}") for warning in plan.warnings]
    actions += [
        Node(package=PACKAGE, executable="feedforward_node", name="feedforward_node", output="screen",
             parameters=[params, common, ros2_control_overrides(context)],
             remappings=[("motor_trajectory", LaunchConfiguration("motor_trajectory").perform(context))]),
        Node(package=PACKAGE, executable="modal_monitor_node", name="modal_monitor_node", output="screen",
             parameters=[params, common, state_overrides(context, motor=False)],
             remappings=[joint_states, dynamic_joint_states]),
        Node(package=PACKAGE, executable="oma_node", name="oma_node", output="screen",
             parameters=[params, common, state_overrides(context, motor=True)],
             remappings=[("motor_states", LaunchConfiguration("encoders").perform(context)), joint_states,
                         dynamic_joint_states]),
    ]
    if LaunchConfiguration("calibrate").perform(context).strip().lower() in ("true", "1", "yes"):
        actions.append(Node(package=PACKAGE, executable="calibration_node", name="calibration_node", output="screen",
                            parameters=[params, common],
                            remappings=[("motor_states", LaunchConfiguration("encoders").perform(context)),
                                        joint_states]))
    if plan.robot_state_publisher:
        actions.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                            name="robot_state_publisher", output="screen",
                            parameters=[{"robot_description": load_robot(robot).urdf_xml}],
                            remappings=[joint_states]))
    if plan.rviz:
        share = get_package_share_directory(PACKAGE)
        actions.append(Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                            arguments=["-d", os.path.join(share, "config", "flexrobot.rviz")]))
    if plan.record_directory:
        actions.append(ExecuteProcess(cmd=["ros2", "bag", "record", "-a", "-o", plan.record_directory],
                                      output="screen"))
    return actions


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *[DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS],
        OpaqueFunction(function=launch_nodes),
    ])
