"""Simulator core: flexible-joint robot dynamics under control, with excitations, sensors and energy accounting.

See :class:`Simulation` for the entry point and :mod:`flexrobot_ros.simulation.plant` for the plant protocol that
the composed elastic-robot plant (:mod:`.elastic_robot_plant`) and the flexible-link plant implement.

May import: errors, lazy, timeseries, model, the physics (kinematics, dynamics, flexible_links), control and modal;
never identification, oma, runtime, nodes or commands.
"""
from flexrobot_ros.lazy import lazy_package

#: Public names and the submodules they come from (imported on first use: :mod:`flexrobot_ros.lazy`).
_EXPORTS = {
    **dict.fromkeys(("FeedforwardPD", "PDGravityCompensation", "Signal", "TorqueInput"), "controllers"),
    **dict.fromkeys(("HalfSinePulse", "RandomForce", "RectangularPulse", "StepLoad"), "excitation"),
    "ElasticRobotPlant": "elastic_robot_plant",
    **dict.fromkeys(("AccurateIntegration", "FixedStepIntegration"), "integrators"),
    **dict.fromkeys(("Energy", "Plant", "StateLayout"), "plant"),
    **dict.fromkeys(("JointTorqueSensor", "LinkEncoder", "MotorEncoder", "ToolAccelerometer"), "sensors"),
    **dict.fromkeys(("Simulation", "SimulationOutput"), "simulation"),
}
lazy_package(__name__, _EXPORTS)
