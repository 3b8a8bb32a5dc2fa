"""Control laws shared by the simulator (:mod:`flexrobot_ros.simulation`) and the modal analysis
(:mod:`flexrobot_ros.modal`), which both linearize or run them.

May import: errors, model and the physics (kinematics, dynamics, flexible_links); never modal, simulation,
identification, oma or anything above them.
"""
