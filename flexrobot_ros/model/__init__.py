"""Robot models: a URDF (pinocchio) plus a flexibility YAML make a :class:`FlexibleRobot`."""
from flexrobot_ros.model.flexible_robot import FlexibleRobot, Tool
from flexrobot_ros.model.loader import RobotListing, list_shipped_robots, load_robot, share_directory, shipped_robots

__all__ = ["FlexibleRobot", "Tool", "load_robot", "share_directory", "shipped_robots", "list_shipped_robots",
           "RobotListing"]
