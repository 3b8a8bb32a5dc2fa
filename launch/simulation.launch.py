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
installed is skipped with a warning; ``record:=`` without ``ros2 bag`` refuses the launch, and so does a flexibility
YAML with ``urdf: robot_description`` (the simulator is the robot: its URDF must be a file). ``flexrobot bringup
simulation`` starts the same nodes with the same parameter files without ROS 2.

``calibrate:=true`` also starts calibration_node (self-calibration on ``~/calibrate`` over the poses of the parameter
file's ``calibration_node`` section) and turns the simulator's periodic excitation off; ``true_yaml:=FILE`` makes the
simulator run that flexibility YAML (the robot as built) while the other nodes run the nominal ``robot``:

    ros2 launch flexrobot_ros simulation.launch.py calibrate:=true true_yaml:=/tmp/as_built.yaml
    ros2 service call /calibration_node/calibrate std_srvs/srv/Trigger

The simulated robot exposes the topics of a ros2_control robot: ``/joint_states`` and ``/dynamic_joint_states``
(joint_state_broadcaster) and ``/<controller>/commands`` (a forward_command_controller on the effort interfaces), so
the ros2_control and state-input arguments of hardware.launch.py (``ros2_control_output``, ``controller``,
``drive_compensates``, ``state_input``, ``motor_interface``, ``link_interface``) mean the same here:

    ros2 launch flexrobot_ros simulation.launch.py state_input:=dynamic_joint_states \\
        ros2_control_output:=commands controller:=effort_controller
"""
from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from flexrobot_ros.commands.bringup import node_parameters, parameter_file, simulated_time
from flexrobot_ros.commands.bringup_calibration import SIMULATOR_OVERRIDES
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.robot_description import uses_topic
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
    ("ros2_control_output", "", "feedforward to ros2_control: 'joint_trajectory', 'commands' (effort stream [N m] on "
     "<controller>/commands, which the simulator applies) or 'none' (empty: as the parameter file says)"),
    ("controller", "", "name of the ros2_control controller: the feedforward node's output and the simulator's "
     "<controller>/commands input (empty: as the parameter file says; the simulator's default is effort_controller)"),
    ("drive_compensates", "", "what the drive adds itself: 'none' or 'gravity' (empty: as the parameter file says; the "
     "simulator applies commands as they are: use none)"),
    ("state_input", "", "where the monitor and OMA nodes read the joint states: 'joint_states' (/motor_states and "
     "/joint_states) or 'dynamic_joint_states' (empty: as the parameter file says, joint_states by default)"),
    ("motor_interface", "", "state interface of the motor encoders on dynamic_joint_states (empty: motor_position, "
     "what the simulator publishes)"),
    ("link_interface", "", "state interface of the link position on dynamic_joint_states (empty: position)"),
    ("calibrate", "false", "also start calibration_node (its section of the parameter file: poses, excitation); the "
     "simulator's periodic excitation is then off; call ~/calibrate to calibrate"),
    ("true_yaml", "", "with calibrate:=true: the flexibility YAML the simulator runs (the robot as built; the other "
     "nodes run the nominal robot)"),
)


def robot_overrides(context) -> dict:
    """Parameters every node gets from the launch arguments (robot, and tool when given)."""
    overrides = {"robot": LaunchConfiguration("robot").perform(context)}
    tool = LaunchConfiguration("tool").perform(context).strip().lower()
    if tool:
        overrides["tool"] = tool in ("true", "1", "yes")
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
    return plan_launch("simulation", installed=in_ament_index,
                       robot_state_publisher=LaunchConfiguration("robot_state_publisher").perform(context),
                       rviz=LaunchConfiguration("rviz").perform(context),
                       record=LaunchConfiguration("record").perform(context),
                       urdf_from_topic=uses_topic(LaunchConfiguration("robot").perform(context), ""))


def simulator_overrides(context, state_publisher: bool) -> dict:
    """Parameters simulator_node gets from the launch arguments (the controller whose commands it takes, when
    given); with robot_state_publisher running, which publishes /tf and /robot_description, the simulator's own are
    turned off."""
    overrides = {**robot_overrides(context), "rate_hz": float(LaunchConfiguration("rate").perform(context)),
                 "real_time_factor": float(LaunchConfiguration("real_time_factor").perform(context))}
    controller = LaunchConfiguration("controller").perform(context).strip()
    if controller:
        overrides["ros2_control.controller"] = controller
    if state_publisher:
        overrides.update({"publish_robot_description": False, "tf_rate_hz": 0.0})
    if calibrating(context):
        true_yaml = LaunchConfiguration("true_yaml").perform(context).strip()
        overrides.update({**SIMULATOR_OVERRIDES, **({"robot": true_yaml} if true_yaml else {})})
    return overrides


def calibrating(context) -> bool:
    """Whether the launch starts calibration_node (``calibrate:=true``)."""
    return LaunchConfiguration("calibrate").perform(context).strip().lower() in ("true", "1", "yes")


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
             parameters=[params, {**common, **sim_time(params, "feedforward_node", clock)},
                         ros2_control_overrides(context)]),
        Node(package=PACKAGE, executable="modal_monitor_node", name="modal_monitor_node", output="screen",
             parameters=[params, {**common, **sim_time(params, "modal_monitor_node", clock)},
                         state_overrides(context, motor=False)]),
        Node(package=PACKAGE, executable="oma_node", name="oma_node", output="screen",
             parameters=[params, {**common, **sim_time(params, "oma_node", clock), "sample_rate_hz": rate},
                         state_overrides(context, motor=True)]),
    ]
    if calibrating(context):
        actions.append(Node(package=PACKAGE, executable="calibration_node", name="calibration_node", output="screen",
                            parameters=[params, {**common, **sim_time(params, "calibration_node", clock)}]))
    if plan.robot_state_publisher:
        actions.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                            name="robot_state_publisher", output="screen",
                            parameters=[{"robot_description": load_robot(robot).urdf_xml}]))
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
