"""Robot models: a URDF (pinocchio) plus a flexibility YAML make a :class:`FlexibleRobot`.

Every section of the flexibility YAML is parsed and validated here into plain data (joints, tool and gains:
:mod:`.schema`; flexible links: :mod:`.flexible_link_specs`; extra elasticities: :mod:`.elasticities` and the
extended pinocchio model :mod:`.extended_model`).

May import: errors and yaml_files only (and pinocchio, numpy); the physics and everything above build on it.
"""
from flexrobot_ros.model.flexible_robot import FlexibleRobot, Tool
from flexrobot_ros.model.loader import RobotListing, list_shipped_robots, load_robot, share_directory, shipped_robots

__all__ = ["FlexibleRobot", "Tool", "load_robot", "share_directory", "shipped_robots", "list_shipped_robots",
           "RobotListing"]
