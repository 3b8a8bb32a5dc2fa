"""Rigid-link dynamics of flexible-joint robots: trajectories, EJNEA and SDRNEA (tau, dtau, ddtau), motor side; the
extended model's DAE inverse dynamics (:mod:`.dae`).

Main entry point: :func:`feedforward` (link trajectory -> motor references q_m and motor torques tau_m).

May import: errors, yaml_files, lazy, compiled_code, model and flexible_links (the physics layer: the feedforward of
robots with flexible links or rigid joints); never control, modal, simulation, identification, oma, runtime, nodes
or commands.
"""
from flexrobot_ros.lazy import lazy_package

#: Public names and the submodules they come from (imported on first use: :mod:`flexrobot_ros.lazy`).
_EXPORTS = {
    **dict.fromkeys(("CompiledSdrnea", "load_sdrnea", "sdrnea"), "codegen"),
    **dict.fromkeys(("Ejnea", "ejnea"), "ejnea"),
    **dict.fromkeys(("DRIVE_COMPENSATION", "check_supported", "check_tool_space", "compiled_feedforward",
                     "default_method", "drive_torque", "feedforward", "interpolation_error", "predicted_deformation",
                     "rigid_feedforward", "tool_feedforward", "tool_path", "tool_space_feedforward_result"),
                    "feedforward"),
    "FeedforwardResult": "feedforward_result",
    **dict.fromkeys(("PostActuation", "RestToRest"), "post_actuation"),
    **dict.fromkeys(("JointFlexibility", "MotorSide", "motor_side", "rigid_motor_side"), "flexible_joint"),
    **dict.fromkeys(("OperationCounts", "sdrnea_function"), "sdrnea"),
    **dict.fromkeys(("KinematicTree", "TorqueDerivatives"), "kinematic_tree"),
    **dict.fromkeys(("Poly9Trajectory", "SplineTrajectory", "Trajectory", "TrajectorySamples", "load_trajectory",
                     "spline_through_waypoints", "trajectory_from_dict", "trajectory_from_joint_trajectory"),
                    "trajectory"),
}
lazy_package(__name__, _EXPORTS)
