"""flexrobot_ros.kinematics (the simulator's tf and the monitor's mode-shape markers) against an independent
reading of the URDF: each link's transform in its parent is the joint's <origin> (xyz, then fixed-axis roll-pitch-
yaw) followed by the joint motion about/along <axis>, composed here with scipy's Rotation instead of pinocchio."""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from flexrobot_ros.errors import ModelError
from flexrobot_ros.kinematics import chain_links, frame_origins, link_transforms
from flexrobot_ros.model import load_robot

Q8 = np.array([0.0, -0.3739991254273563, 1.9447954522222528, 0.0, -1.9447954522222528, 0.0])


def urdf_joints(path):
    """{child link: (parent link, type, joint name, origin 4x4, axis)} from the URDF XML."""
    joints = {}
    for joint in ElementTree.parse(path).getroot().iter("joint"):
        origin = joint.find("origin")
        xyz = np.array([float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()])
        rpy = np.array([float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()])
        transform = np.eye(4)
        transform[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x-y-z = URDF's R = Rz Ry Rx
        transform[:3, 3] = xyz
        axis = joint.find("axis")
        axis = np.array([float(v) for v in axis.get("xyz").split()]) if axis is not None else np.array([1.0, 0, 0])
        joints[joint.find("child").get("link")] = (joint.find("parent").get("link"), joint.get("type"),
                                                   joint.get("name"), transform, axis)
    return joints


def expected_transform(entry, q_of):
    parent, kind, name, origin, axis = entry
    motion = np.eye(4)
    if kind in ("revolute", "continuous"):
        motion[:3, :3] = Rotation.from_rotvec(axis / np.linalg.norm(axis) * q_of[name]).as_matrix()
    elif kind == "prismatic":
        motion[:3, 3] = axis / np.linalg.norm(axis) * q_of[name]
    return origin @ motion


@pytest.mark.parametrize("name", ["scompi", "planar_2r", "lwr4"])
def test_link_transforms_follow_the_urdf(name):
    """Every URDF link appears once with its URDF parent; translation and rotation equal the URDF composition to
    1e-12 at a random pose; quaternions are unit (x, y, z, w)."""
    robot = load_robot(name)
    rng = np.random.default_rng(3)
    q = rng.uniform(np.maximum(robot.lower_limits, -2.0), np.minimum(robot.upper_limits, 2.0))
    q_of = dict(zip(robot.joint_names, q))
    joints = urdf_joints(robot.urdf_path)
    transforms = link_transforms(robot, q)
    assert sorted(t.child for t in transforms) == sorted(joints)
    for t in transforms:
        assert t.parent == joints[t.child][0]
        expected = expected_transform(joints[t.child], q_of)
        np.testing.assert_allclose(t.translation, expected[:3, 3], atol=1e-12)
        assert abs(np.linalg.norm(t.rotation) - 1.0) < 1e-12
        np.testing.assert_allclose(Rotation.from_quat(t.rotation).as_matrix(), expected[:3, :3], atol=1e-12)


def test_frame_origins_compose_the_chain():
    """The tool origin at configuration 8 equals the product of the URDF transforms along chain_links (base to
    tool0), and chain_links lists that path."""
    robot = load_robot("scompi")
    links = chain_links(robot)
    assert links[0] == "base_link" and links[-1] == robot.tool_frame
    joints = urdf_joints(robot.urdf_path)
    q_of = dict(zip(robot.joint_names, Q8))
    pose = np.eye(4)
    for child in links[1:]:
        assert joints[child][0] in links
        pose = pose @ expected_transform(joints[child], q_of)
    np.testing.assert_allclose(frame_origins(robot, Q8, [robot.tool_frame])[0], pose[:3, 3], atol=1e-12)
    assert frame_origins(robot, Q8, links).shape == (len(links), 3)


def test_bad_input_names_the_problem():
    robot = load_robot("scompi")
    with pytest.raises(ModelError, match="no_such_frame"):
        frame_origins(robot, Q8, ["no_such_frame"])
    with pytest.raises(ModelError):
        link_transforms(robot, Q8[:3])
