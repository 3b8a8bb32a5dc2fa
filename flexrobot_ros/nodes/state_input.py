"""Where the monitor and OMA nodes read the robot's joint states: ``sensor_msgs/JointState`` topics or ros2_control's
``/dynamic_joint_states`` (issue 23).

ros2_control's joint_state_broadcaster publishes every state interface of every joint on ``dynamic_joint_states``
(``control_msgs/DynamicJointState``: ``joint_names`` and, per joint, ``interface_names`` with their ``values``) beside
the position/velocity/effort of ``joint_states``. A robot with elastic joints exports its motor-side encoder there as
an extra state interface (e.g. ``motor_position``) next to the link-side ``position``. With ``state_input:
dynamic_joint_states`` a node reads both from that one topic, the interfaces named by its
``dynamic_joint_states.*`` parameters; the simulator publishes the interfaces of :data:`SIMULATED_INTERFACES`.
"""
from __future__ import annotations

from flexrobot_ros.runtime import ParameterSpec

#: Values of the ``state_input`` parameter: JointState topics (``joint_states``, ``motor_states``), or
#: ``dynamic_joint_states`` alone.
STATE_INPUTS = ("joint_states", "dynamic_joint_states")
#: State interfaces the simulator publishes on ``dynamic_joint_states`` for every joint, in this order: link
#: position q [rad | m], link velocity [rad/s | m/s], elastic joint torque [N m | N] (as on ``joint_states``), motor
#: position q_m [rad] and motor velocity [rad/s] (as on ``motor_states``).
SIMULATED_INTERFACES = ("position", "velocity", "effort", "motor_position", "motor_velocity")


def state_input_parameters(topics: str, motor: bool) -> tuple[ParameterSpec, ...]:
    """The read-only parameters that choose a node's state input.

    Args:
        topics: what ``state_input: joint_states`` reads, for the description (e.g. "joint_states").
        motor: the node also reads the motor side (``dynamic_joint_states.motor_interface``).
    """
    specs = [
        ParameterSpec("state_input", "joint_states", f"where the joint states come from: 'joint_states' ({topics}, "
                      "sensor_msgs/JointState) or 'dynamic_joint_states' (control_msgs/DynamicJointState of "
                      "ros2_control's joint_state_broadcaster, interfaces named by dynamic_joint_states.*)",
                      choices=STATE_INPUTS, read_only=True),
        ParameterSpec("dynamic_joint_states.link_interface", "position", "state interface of the link-side position "
                      "q [rad | m] on dynamic_joint_states", read_only=True),
    ]
    if motor:
        specs.append(ParameterSpec("dynamic_joint_states.motor_interface", "motor_position", "state interface of the "
                                   "encoder channels OMA identifies from on dynamic_joint_states (motor side q_m "
                                   "[rad]; 'position' for link encoders, then shape_coordinates: link)",
                                   read_only=True))
    return tuple(specs)
