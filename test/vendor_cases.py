"""Four vendor robots of the PyPI package example-robot-data (installed by the test extra; the URDFs are read where
pip put them, never copied into this repository) with flexibility YAMLs written here, shared by
test_vendor_robots.py, test_vendor_bringup.py and bench/vendor_panda.py.

- Franka Emika Panda (``panda_description/urdf/panda.urdf``): 7 revolute joints, the two prismatic fingers locked.
- Universal Robots UR10 (``ur_description/urdf/ur10_robot.urdf``): 6 revolute joints.
- Kinova Jaco 2 j2s6s200 (``kinova_description/robots/kinova.urdf``): joints 1, 4 and 6 continuous (no position
  limits, pinocchio's two-coordinate joint in the URDF), 2, 3 and 5 revolute.
- PAL TIAGo (``tiago_description/robots/tiago.urdf``, 48 movable joints): the 7 arm joints elastic; everything else
  locked: the two wheels (continuous), the torso lift (prismatic, at 0.15 m), the head's two joints and the 36 joints
  of the hand (the caster joints are fixed joints in this URDF).

The joint parameters are not any vendor's data (none publishes them); they are the orders of magnitude of the drives
of arms of these sizes, stated beside each joint: harmonic drives of ratio 100-160 with torsional stiffness 5e3-4e4
N m/rad (the larger drives at the shoulder), rotor inertias from servo-motor datasheets (2e-6 kg m^2 for a ~40 W
motor up to 1e-4 kg m^2 for a ~1 kW one; B = N^2 I_r), link-side viscous friction of a few N m s/rad and motor-side
friction of 1e-3 N m s/rad. The motor PD gains K_P are 10-40 % of the joint stiffness, lower at the wrist;
K_D = 2 zeta sqrt(K_P B) with zeta = 0.06 (6 % of critical damping of the rotor alone on K_P, rounded), which gives
closed-loop modes of 1-9.3 % damping below 500 Hz (the light wrists' link modes above it, 540-1160 Hz, 11-22 %), the
range hammer tests of industrial arms show (seed 000 Table 2.5: 1.4-27 %).
A PD on the motor with positive gains and gravity compensation keeps the elastic-joint robot stable at any pose
(seed 000 section 2.3; every pose of the tests is checked to be stable).

Each robot comes with three poses within its limits (A and B: the bring-up's two holds, C: one more for the modal
analysis; the Kinova's C turns joint 6, a continuous joint, beyond 2 pi) and a rest-to-rest motion from A.
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class VendorRobot:
    """A vendor URDF with a flexibility YAML: ``urdf`` relative to the robots folder; ``yaml`` the document with
    ``{urdf}`` (its path) and ``{locked}`` (a flow mapping, TIAGo's) to fill; the poses [rad | m] in the order of the
    YAML's joints; the motion: ``move`` added to pose A in ``move_s`` seconds (a quintic, rest to rest)."""

    name: str
    urdf: str
    yaml: str
    pose_a: tuple[float, ...]
    pose_b: tuple[float, ...]
    pose_c: tuple[float, ...]
    move: tuple[float, ...]
    move_s: float

    def urdf_path(self, folder: Path) -> Path:
        return folder / self.urdf

    def locked(self, folder: Path) -> dict[str, float]:
        """The joints this robot's YAML locks, name -> position [rad | m]."""
        if self.name != "tiago":
            return {}
        arm = {f"arm_{i}_joint" for i in range(1, 8)}
        joints = ElementTree.parse(self.urdf_path(folder)).getroot().findall("joint")  # not <transmission>s'
        return {joint.get("name"): TIAGO_TORSO_M if joint.get("name") == "torso_lift_joint" else 0.0
                for joint in joints if joint.get("type") in ("revolute", "continuous", "prismatic")
                and joint.get("name") not in arm}

    def write_yaml(self, folder: Path, directory: Path) -> Path:
        """The flexibility YAML of this robot on the installed URDF, written into ``directory``."""
        locked = ", ".join(f"{name}: {value!r}" for name, value in self.locked(folder).items())
        path = directory / f"{self.name}.yaml"
        path.write_text(self.yaml.format(urdf=self.urdf_path(folder), locked="{" + locked + "}"))
        return path


#: TIAGo's torso lift while locked [m] (its range is 0 to 0.35 m); every other locked joint of TIAGo sits at 0, inside
#: its range (the hand's joints' ranges start at 0 or below).
TIAGO_TORSO_M = 0.15

PANDA = VendorRobot("panda", "panda_description/urdf/panda.urdf", """\
robot: panda
summary: "Franka Emika Panda (example-robot-data), fingers locked; drive parameters of the test's orders"
urdf: {urdf}
tool_frame: panda_hand
locked_joints: {{panda_finger_joint1: 0.02, panda_finger_joint2: 0.02}}   # the gripper half open [m]
controller:
  kp: [4000.0, 3500.0, 3000.0, 2500.0, 1500.0, 1000.0, 700.0]   # N m/rad
  kd: [5.37, 5.02, 4.65, 4.24, 1.80, 1.47, 1.23]                # N m s/rad: 2 * 0.06 * sqrt(K_P B)
joints:
  # joints 1-4: harmonic drive N = 100, k = 2e4 N m/rad; ~300 W motor, I_r = 5e-5 kg m^2 (B = 0.5 kg m^2)
  panda_joint1: {{stiffness: 2.0e+4, gear_ratio: 100, rotor_inertia: 5.0e-5, link_damping: 2.0, motor_damping: 1.0e-3}}
  panda_joint2: {{stiffness: 2.0e+4, gear_ratio: 100, rotor_inertia: 5.0e-5, link_damping: 2.0, motor_damping: 1.0e-3}}
  panda_joint3: {{stiffness: 2.0e+4, gear_ratio: 100, rotor_inertia: 5.0e-5, link_damping: 2.0, motor_damping: 1.0e-3}}
  panda_joint4: {{stiffness: 2.0e+4, gear_ratio: 100, rotor_inertia: 5.0e-5, link_damping: 2.0, motor_damping: 1.0e-3}}
  # wrist: smaller drives, k = 1e4 to 6e3 N m/rad; ~100 W motor, I_r = 1.5e-5 kg m^2 (B = 0.15 kg m^2)
  panda_joint5: {{stiffness: 1.0e+4, gear_ratio: 100, rotor_inertia: 1.5e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
  panda_joint6: {{stiffness: 8.0e+3, gear_ratio: 100, rotor_inertia: 1.5e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
  panda_joint7: {{stiffness: 6.0e+3, gear_ratio: 100, rotor_inertia: 1.5e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
""", pose_a=(0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8), pose_b=(0.5, -0.2, 0.5, -2.3, -0.4, 2.0, -0.6),
    pose_c=(-0.6, 0.4, -0.3, -1.2, 0.8, 1.0, 1.8), move=(0.6, 0.5, 0.0, 0.6, 0.0, -0.4, 0.0), move_s=1.8)

UR10 = VendorRobot("ur10", "ur_description/urdf/ur10_robot.urdf", """\
robot: ur10
summary: "Universal Robots UR10 (example-robot-data ur10_robot.urdf); drive parameters of the test's orders"
urdf: {urdf}
tool_frame: tool0
controller:
  kp: [12000.0, 12000.0, 6000.0, 2500.0, 1500.0, 1000.0]   # N m/rad
  kd: [13.28, 13.28, 7.27, 2.71, 2.10, 1.71]               # N m s/rad: 2 * 0.06 * sqrt(K_P B)
joints:
  # base and shoulder: size-32 harmonic drives N = 101, k = 4e4 N m/rad; ~1 kW motor, I_r = 1e-4 kg m^2 (B = 1.02)
  shoulder_pan_joint: {{stiffness: 4.0e+4, gear_ratio: 101, rotor_inertia: 1.0e-4, link_damping: 3.0,
                        motor_damping: 1.0e-3}}
  shoulder_lift_joint: {{stiffness: 4.0e+4, gear_ratio: 101, rotor_inertia: 1.0e-4, link_damping: 3.0,
                         motor_damping: 1.0e-3}}
  # elbow: k = 2.5e4 N m/rad, I_r = 6e-5 kg m^2
  elbow_joint: {{stiffness: 2.5e+4, gear_ratio: 101, rotor_inertia: 6.0e-5, link_damping: 2.0, motor_damping: 1.0e-3}}
  # wrist: k = 8e3 to 6e3 N m/rad; ~150 W motor, I_r = 2e-5 kg m^2 (B = 0.20 kg m^2)
  wrist_1_joint: {{stiffness: 8.0e+3, gear_ratio: 101, rotor_inertia: 2.0e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
  wrist_2_joint: {{stiffness: 7.0e+3, gear_ratio: 101, rotor_inertia: 2.0e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
  wrist_3_joint: {{stiffness: 6.0e+3, gear_ratio: 101, rotor_inertia: 2.0e-5, link_damping: 0.5, motor_damping: 1.0e-3}}
""", pose_a=(0.3, -1.2, 1.5, -1.0, 1.2, 0.4), pose_b=(-0.4, -1.8, 1.0, -0.6, 0.0, 0.0),
    pose_c=(1.0, -0.8, 2.0, -2.2, -0.5, 1.5), move=(-0.6, -0.5, -0.5, 0.0, 0.4, 0.0), move_s=1.8)

KINOVA = VendorRobot("kinova", "kinova_description/robots/kinova.urdf", """\
robot: kinova
summary: "Kinova Jaco 2 j2s6s200 (example-robot-data), continuous joints 1, 4, 6; drive parameters of the test's orders"
urdf: {urdf}
tool_frame: j2s6s200_end_effector
controller:
  kp: [1500.0, 1500.0, 1200.0, 600.0, 500.0, 400.0]   # N m/rad
  kd: [1.49, 1.49, 1.33, 0.67, 0.61, 0.54]            # N m s/rad: 2 * 0.06 * sqrt(K_P B)
joints:
  # shoulder and elbow: N = 160, k = 1e4 to 8e3 N m/rad; ~60 W motor, I_r = 4e-6 kg m^2 (B = 0.10 kg m^2)
  j2s6s200_joint_1: {{stiffness: 1.0e+4, gear_ratio: 160, rotor_inertia: 4.0e-6, link_damping: 1.0,
                      motor_damping: 1.0e-3}}   # continuous
  j2s6s200_joint_2: {{stiffness: 1.0e+4, gear_ratio: 160, rotor_inertia: 4.0e-6, link_damping: 1.0,
                      motor_damping: 1.0e-3}}
  j2s6s200_joint_3: {{stiffness: 8.0e+3, gear_ratio: 160, rotor_inertia: 4.0e-6, link_damping: 1.0,
                      motor_damping: 1.0e-3}}
  # wrist: k = 5e3 N m/rad; ~40 W motor, I_r = 2e-6 kg m^2 (B = 0.05 kg m^2)
  j2s6s200_joint_4: {{stiffness: 5.0e+3, gear_ratio: 160, rotor_inertia: 2.0e-6, link_damping: 0.3,
                      motor_damping: 1.0e-3}}   # continuous
  j2s6s200_joint_5: {{stiffness: 5.0e+3, gear_ratio: 160, rotor_inertia: 2.0e-6, link_damping: 0.3,
                      motor_damping: 1.0e-3}}
  j2s6s200_joint_6: {{stiffness: 5.0e+3, gear_ratio: 160, rotor_inertia: 2.0e-6, link_damping: 0.3,
                      motor_damping: 1.0e-3}}   # continuous
""", pose_a=(-0.1, 3.1, 1.8, 0.4, 3.1, 1.0), pose_b=(0.0, 2.9, 1.9, 0.6, 3.2, 0.95),
    pose_c=(-1.0, 3.4, 2.2, -1.0, 3.5, 7.0), move=(-0.5, 0.5, 0.5, -0.8, 0.0, 0.0), move_s=2.0)

TIAGO = VendorRobot("tiago", "tiago_description/robots/tiago.urdf", """\
robot: tiago
summary: "PAL TIAGo (example-robot-data tiago.urdf): the arm; base, torso, head and hand locked"
urdf: {urdf}
tool_frame: arm_tool_link
locked_joints: {locked}   # every movable joint but the arm's: wheels, torso (0.15 m), head, hand
controller:
  kp: [3000.0, 3000.0, 2500.0, 2000.0, 800.0, 600.0, 400.0]   # N m/rad
  kd: [3.60, 3.60, 2.68, 2.40, 0.96, 0.83, 0.68]              # N m s/rad: 2 * 0.06 * sqrt(K_P B)
joints:
  # shoulder: harmonic drives N = 100, k = 1.5e4 N m/rad; ~250 W motor, I_r = 3e-5 kg m^2 (B = 0.3 kg m^2)
  arm_1_joint: {{stiffness: 1.5e+4, gear_ratio: 100, rotor_inertia: 3.0e-5, link_damping: 1.0, motor_damping: 1.0e-3}}
  arm_2_joint: {{stiffness: 1.5e+4, gear_ratio: 100, rotor_inertia: 3.0e-5, link_damping: 1.0, motor_damping: 1.0e-3}}
  # upper arm and elbow: k = 1.2e4 N m/rad, I_r = 2e-5 kg m^2
  arm_3_joint: {{stiffness: 1.2e+4, gear_ratio: 100, rotor_inertia: 2.0e-5, link_damping: 1.0, motor_damping: 1.0e-3}}
  arm_4_joint: {{stiffness: 1.2e+4, gear_ratio: 100, rotor_inertia: 2.0e-5, link_damping: 1.0, motor_damping: 1.0e-3}}
  # wrist: k = 5e3 N m/rad; ~60 W motor, I_r = 8e-6 kg m^2 (B = 0.08 kg m^2)
  arm_5_joint: {{stiffness: 5.0e+3, gear_ratio: 100, rotor_inertia: 8.0e-6, link_damping: 0.3, motor_damping: 1.0e-3}}
  arm_6_joint: {{stiffness: 5.0e+3, gear_ratio: 100, rotor_inertia: 8.0e-6, link_damping: 0.3, motor_damping: 1.0e-3}}
  arm_7_joint: {{stiffness: 5.0e+3, gear_ratio: 100, rotor_inertia: 8.0e-6, link_damping: 0.3, motor_damping: 1.0e-3}}
""", pose_a=(0.5, -0.3, -1.5, 1.6, 0.5, 0.3, 0.2), pose_b=(1.2, 0.2, -0.8, 1.0, -0.5, -0.6, 0.8),
    pose_c=(2.0, 0.8, 0.5, 0.5, 1.5, 1.0, -1.5), move=(0.6, 0.4, 0.5, -0.5, 0.0, 0.0, 0.0), move_s=1.8)

ROBOTS = {robot.name: robot for robot in (PANDA, UR10, KINOVA, TIAGO)}
