"""Flexible links: beam shape functions (assumed modes, finite elements), the link model, and the dynamics of
serial chains mixing rigid and flexible links (seed 003, DeNOC) and of trees of rigid links. The YAML section is
parsed by :mod:`flexrobot_ros.model.flexible_link_specs`; the composed model of a whole robot is
:mod:`.elastic_robot`, its closed-loop modes :mod:`flexrobot_ros.modal.elastic_robot_linearization`, its plant
:mod:`flexrobot_ros.simulation.elastic_robot_plant`.

May import: errors, compiled_code, model and kinematics; never dynamics (whose feedforward of flexible-link robots
builds on this package), control, modal, simulation, identification, oma, runtime, nodes or commands.
"""
