"""Build script for flexrobot_ros: an ament_python package for colcon, and a plain pip-installable package."""
from __future__ import annotations

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "flexrobot_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf") + glob("urdf/*.dh.yaml")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.rviz") + glob("config/*.xml")),
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.23",
        "scipy>=1.9",
        "PyYAML>=5.4",
        "pin>=2.7",
        "casadi>=3.6",
        "matplotlib>=3.5",
        "cyclonedds>=0.10.5",
        "rosbags>=0.10.10",  # needs rosbag2.StoragePlugin (0.10.9+); the MCAP bag test fails on 0.10.9
        "threadpoolctl>=3",
        "setuptools",
    ],
    extras_require={
        # exudyn: the flexible-body cross-checks; example-robot-data: vendor URDFs (Panda, UR, Kinova, TIAGo)
        "test": ["pytest>=7", "pytest-xdist>=3", "hypothesis>=6", "exudyn>=1.9", "example-robot-data>=6",
                 "xacro>=2.1"],
        "xacro": ["xacro>=2.1"],  # urdf: <file>.xacro (a ROS 2 install has it as ros-<distro>-xacro)
        "bench": ["pyOMA-2>=1.0", "koma-python>=1.3"],
    },
    zip_safe=True,
    maintainer="flexrobot_ros developers",
    maintainer_email="flexrobot@example.org",
    description="Dynamics, feedforward, simulation, modal monitoring and OMA for robots with flexible joints and links.",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "flexrobot = flexrobot_ros.cli:main",
            "simulator_node = flexrobot_ros.nodes.simulator_node:main",
            "feedforward_node = flexrobot_ros.nodes.feedforward_node:main",
            "modal_monitor_node = flexrobot_ros.nodes.modal_monitor_node:main",
            "oma_node = flexrobot_ros.nodes.oma_node:main",
            "calibration_node = flexrobot_ros.nodes.calibration_node:main",
            "rigid_identification_node = flexrobot_ros.nodes.rigid_identification_node:main",
        ],
    },
)
