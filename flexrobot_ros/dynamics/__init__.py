"""Rigid-link dynamics of flexible-joint robots: trajectories, EJNEA and SDRNEA (tau, dtau, ddtau), motor side.

Main entry point: :func:`feedforward` (link trajectory -> motor references q_m and motor torques tau_m).
"""
from flexrobot_ros.dynamics.codegen import CompiledSdrnea, load_sdrnea
from flexrobot_ros.dynamics.ejnea import Ejnea, ejnea
from flexrobot_ros.dynamics.feedforward import (FeedforwardResult, compiled_feedforward, feedforward,
                                                rigid_feedforward)
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, MotorSide, motor_side, rigid_motor_side
from flexrobot_ros.dynamics.sdrnea import OperationCounts, sdrnea, sdrnea_function
from flexrobot_ros.dynamics.serial_chain import SerialChain, TorqueDerivatives
from flexrobot_ros.dynamics.trajectory import (Poly9Trajectory, SplineTrajectory, Trajectory, TrajectorySamples,
                                               load_trajectory, spline_through_waypoints, trajectory_from_dict,
                                               trajectory_from_joint_trajectory)

__all__ = [
    "CompiledSdrnea", "Ejnea", "FeedforwardResult", "JointFlexibility", "MotorSide", "OperationCounts",
    "Poly9Trajectory", "SerialChain", "SplineTrajectory", "TorqueDerivatives", "Trajectory", "TrajectorySamples",
    "compiled_feedforward", "ejnea", "feedforward", "load_sdrnea", "load_trajectory", "motor_side",
    "rigid_feedforward", "rigid_motor_side", "sdrnea", "sdrnea_function", "spline_through_waypoints",
    "trajectory_from_dict", "trajectory_from_joint_trajectory",
]
