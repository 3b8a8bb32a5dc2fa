"""Robots as their vendors describe them (issue 36, items 1, 2 and 4 and the bad input): locked joints, xacro files
with arguments, ``package://`` URIs, the URDF given as text (the robot_description topic's).

Expected values come from pinocchio on the vendor's full URDF, computed here: a locked joint does not move, so the
reduced model's mass matrix is the full one's block of the modelled joints, its gravity torques the full model's
entries, at the full pose holding the locked joints at their positions.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model import load_robot
from vendor_robots import ROBOTS

PANDA = ROBOTS / "panda_description" / "urdf" / "panda.urdf"
ARM = [f"panda_joint{i}" for i in range(1, 8)]
FINGERS = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.035}
JOINT = {"stiffness": 2.0e4, "rotor_inertia": 1.0e-5, "gear_ratio": 100, "link_damping": 1.0}

pytestmark = pytest.mark.skipif(not PANDA.is_file(), reason="needs example-robot-data (the test extra)")


def write_yaml(tmp_path: Path, name: str = "robot.yaml", **fields) -> Path:
    document = {"robot": "panda", "urdf": str(PANDA), "tool_frame": "panda_hand", "locked_joints": dict(FINGERS),
                "controller": {"kp": 2000.0, "kd": 20.0}, "joints": {joint: dict(JOINT) for joint in ARM}}
    document.update(fields)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return path


def full_pose(full: pin.Model, arm: np.ndarray) -> np.ndarray:
    q = pin.neutral(full)
    for joint, value in [*zip(ARM, arm), *FINGERS.items()]:
        q[full.idx_qs[full.getJointId(joint)]] = value
    return q


def test_locked_fingers_hold_their_positions_in_the_dynamics(tmp_path: Path) -> None:
    robot = load_robot(write_yaml(tmp_path))
    assert robot.joint_names == tuple(ARM) and robot.locked_joints == FINGERS
    full = pin.buildModelFromUrdf(str(PANDA))
    assert robot.total_mass == pytest.approx(sum(inertia.mass for inertia in full.inertias), rel=1e-12)
    columns = [full.idx_vs[full.getJointId(joint)] for joint in ARM]
    rng = np.random.default_rng(36)
    for _ in range(3):
        arm = rng.uniform(robot.lower_limits, robot.upper_limits)
        q = full_pose(full, arm)
        mass = pin.crba(full, full.createData(), q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        reduced = pin.crba(robot.model, robot.create_data(), arm)
        reduced = np.triu(reduced) + np.triu(reduced, 1).T
        np.testing.assert_allclose(reduced, mass[np.ix_(columns, columns)], rtol=1e-12, atol=1e-12)
        gravity = pin.computeGeneralizedGravity(full, full.createData(), q)[columns]
        np.testing.assert_allclose(pin.computeGeneralizedGravity(robot.model, robot.create_data(), arm), gravity,
                                   rtol=1e-12, atol=1e-12)
        # every frame of the vendor's model is still there, where the full model puts it (the fingertips too)
        data_full, data = full.createData(), robot.create_data()
        pin.framesForwardKinematics(full, data_full, q)
        pin.framesForwardKinematics(robot.model, data, arm)
        for frame in ("panda_leftfinger", "panda_rightfinger", "panda_hand"):
            np.testing.assert_allclose(data.oMf[robot.model.getFrameId(frame)].homogeneous,
                                       data_full.oMf[full.getFrameId(frame)].homogeneous, atol=1e-12)


def test_xacro_with_arguments_and_package_uris(tmp_path: Path) -> None:
    """A xacro file expanded with the YAML's xacro_args gives the robot its URDF with those values gives; mesh
    URIs of packages that are not installed do not stop the load (dynamics need no geometry)."""
    (tmp_path / "arm.urdf.xacro").write_text("""<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="length" default="0.5"/>
  <xacro:property name="l" value="$(arg length)"/>
  <xacro:macro name="link" params="name mass">
    <link name="${name}">
      <visual><geometry><mesh filename="package://no_such_description/meshes/${name}.dae"/></geometry></visual>
      <inertial><origin xyz="${l/2} 0 0"/><mass value="${mass}"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="${mass*l*l/12}" iyz="0" izz="${mass*l*l/12}"/></inertial>
    </link>
  </xacro:macro>
  <link name="base"/>
  <xacro:link name="upper" mass="3.0"/>
  <xacro:link name="fore" mass="2.0"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="fore"/><origin xyz="${l} 0 0"/>
    <axis xyz="0 0 1"/><limit effort="30" velocity="3"/></joint>
</robot>""")
    joints = {"shoulder": dict(JOINT), "elbow": dict(JOINT)}
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump({"robot": "arm", "urdf": "arm.urdf.xacro", "xacro_args": {"length": 0.8},
                                    "gravity": [0.0, -9.81, 0.0], "joints": joints}))
    robot = load_robot(path)
    assert robot.joint_names == ("shoulder", "elbow") and robot.continuous_joints == ("elbow",)
    assert robot.urdf_path == tmp_path / "arm.urdf.xacro" and "package://no_such_description" in robot.urdf_xml
    # the two-link planar arm's gravity torques in closed form, l = 0.8 m (the argument, not the default 0.5 m)
    length, q = 0.8, np.array([0.3, -1.1])
    elbow = 2.0 * 9.81 * length / 2 * np.cos(q[0] + q[1])
    shoulder = 3.0 * 9.81 * length / 2 * np.cos(q[0]) + 2.0 * 9.81 * length * np.cos(q[0]) + elbow
    np.testing.assert_allclose(pin.computeGeneralizedGravity(robot.model, robot.create_data(), q),
                               [shoulder, elbow], rtol=1e-12)
    assert robot.lower_limits[1] == -np.inf and robot.velocity_limits.tolist() == [2.0, 3.0]


def test_urdf_text_replaces_the_file(tmp_path: Path) -> None:
    """``urdf: robot_description`` takes the URDF text the caller read from the topic; anywhere else it is an
    error naming the file and the field."""
    path = write_yaml(tmp_path, urdf="robot_description")
    with pytest.raises(ModelError, match=r"robot\.yaml: urdf: robot_description: the URDF comes from the "
                                         r"robot_description topic"):
        load_robot(path)
    robot = load_robot(path, urdf_text=PANDA.read_text())
    assert robot.urdf_path is None and robot.urdf_source == "the robot_description topic"
    assert robot.config_hash() == load_robot(write_yaml(tmp_path, "file.yaml")).config_hash()


BAD = [
    # (fields of the YAML, words of the one-line message)
    ({"locked_joints": {**FINGERS, "panda_finger_joint1": 0.09}},
     ["locked_joints.panda_finger_joint1", "position 0.09", "outside the joint's limits", "[0, 0.04]"]),
    ({"locked_joints": {**FINGERS, "panda_joint7": 0.0}},
     ["locked_joints.panda_joint7", "also described under joints"]),
    ({"locked_joints": {**FINGERS, "gripper": 0.0}}, ["locked_joints.gripper", "no movable joint 'gripper'"]),
    ({"locked_joints": {"panda_finger_joint1": 0.01}},
     ["joints: missing joint(s) ['panda_finger_joint2']", "locked_joints"]),
    ({"locked_joints": {**FINGERS, "panda_finger_joint2": "open"}},
     ["locked_joints.panda_finger_joint2", "position"]),
    ({"locked_joints": [0.02, 0.02]}, ["locked_joints", "mapping from joint name to position"]),
    ({"xacro_args": {"arm_id": "fr3"}}, ["xacro_args", "not a .xacro file"]),
]


@pytest.mark.parametrize("fields, words", BAD, ids=[f"bad{k}" for k in range(len(BAD))])
def test_bad_descriptions_are_one_line_naming_the_field(tmp_path: Path, fields, words) -> None:
    with pytest.raises(ModelError) as error:
        load_robot(write_yaml(tmp_path, **fields))
    message = str(error.value)
    assert "\n" not in message and "robot.yaml" in message, message
    for word in words:
        assert word in message, (word, message)


def test_a_xacro_that_does_not_expand_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.urdf.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="b"><link name="${undefined_property}"/></robot>')
    with pytest.raises(ModelError, match=r"broken\.urdf\.xacro: xacro does not expand it: .*undefined_property"):
        load_robot(write_yaml(tmp_path, urdf="broken.urdf.xacro"))
    (tmp_path / "include.urdf.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="b">'
        '<xacro:include filename="$(find no_such_description)/urdf/arm.xacro"/></robot>')
    with pytest.raises(ModelError, match=r"include\.urdf\.xacro: xacro does not expand it"):
        load_robot(write_yaml(tmp_path, urdf="include.urdf.xacro"))
