"""flexrobot_ros: dynamics, modal analysis, OMA and identification of robots with flexible joints and links.

The core (``model``, ``dynamics``, ``simulation``, ``modal``, ``oma``, ``identification``) is plain Python on
pinocchio, numpy, scipy and casadi; ``nodes`` and ``runtime`` adapt it to ROS 2 (rclpy) or to standalone DDS.
"""
from __future__ import annotations

__version__ = "0.1.0"
