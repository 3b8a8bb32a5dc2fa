"""Flexible links: beam shape functions (assumed modes, finite elements), the link model, and the dynamics of
serial chains mixing rigid and flexible links (seed 003, DeNOC). The YAML section is parsed by
:mod:`flexrobot_ros.model.flexible_link_specs`; the closed-loop modes are :mod:`flexrobot_ros.modal.
flexible_link_linearization`, the plant :mod:`flexrobot_ros.simulation.flexible_link_plant`.

May import: errors, compiled_code, model and kinematics; never dynamics (whose feedforward of flexible-link robots
builds on this package), control, modal, simulation, identification, oma, runtime, nodes or commands.
"""
