"""Simulator core: flexible-joint robot dynamics under control, with excitations, sensors and energy accounting.

See :class:`Simulation` for the entry point and :mod:`flexrobot_ros.simulation.plant` for the plant protocol that
flexible-link models implement.
"""
from flexrobot_ros.simulation.controllers import FeedforwardPD, PDGravityCompensation, Signal, TorqueInput
from flexrobot_ros.simulation.excitation import HalfSinePulse, RandomForce, RectangularPulse, StepLoad
from flexrobot_ros.simulation.flexible_joint_plant import FlexibleJointPlant
from flexrobot_ros.simulation.integrators import AccurateIntegration, FixedStepIntegration
from flexrobot_ros.simulation.plant import Energy, Plant, StateLayout
from flexrobot_ros.simulation.sensors import JointTorqueSensor, LinkEncoder, MotorEncoder, ToolAccelerometer
from flexrobot_ros.simulation.simulation import Simulation, SimulationOutput

__all__ = ["AccurateIntegration", "Energy", "FeedforwardPD", "FixedStepIntegration", "FlexibleJointPlant",
           "HalfSinePulse", "JointTorqueSensor", "LinkEncoder", "MotorEncoder", "PDGravityCompensation", "Plant",
           "RandomForce", "RectangularPulse", "Signal", "Simulation", "SimulationOutput", "StateLayout", "StepLoad",
           "ToolAccelerometer", "TorqueInput"]
