"""The flexibility YAML's flexible_links section and rigid joints: validation errors name file, link and field;
rigid links, elastic joints, rigid joints and flexible links mix in one robot; the shipped Canadarm (seed 003
Table 2)."""
import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory, shipped_robots

CANADARM_HZ = [(1.0176, 6.3772), (1.0364, 6.4948), (6.4190, 40.2269)]  # issue 13, seed 003 Table 2 links


def write(tmp_path: Path, document: dict, urdf: str) -> Path:
    document = copy.deepcopy(document)
    document["urdf"] = str(share_directory() / "urdf" / urdf)
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture()
def canadarm_document():
    return yaml.safe_load((share_directory() / "config" / "canadarm.yaml").read_text())


def test_canadarm_is_shipped_and_matches_table2():
    assert "canadarm" in shipped_robots()
    robot = load_robot("canadarm")
    assert robot.rigid_joints == ("joint1", "joint2", "joint3")
    chain = chain_from_robot(robot)
    assert chain.size == 3 + 6
    for body, (a, m), expected in zip(chain.bodies, [(6.0, 140.0), (7.0, 85.0), (2.0, 95.0)], CANADARM_HZ):
        assert body.beam.length == pytest.approx(a, rel=1e-15)
        assert body.beam.mass == pytest.approx(m, rel=1e-12)
        hz = body.beam.clamped_frequencies_rad_s() / (2 * math.pi)
        exact = body.beam.family_y.frequencies_rad_s(1e5, m / a) / (2 * math.pi)
        np.testing.assert_allclose(hz, exact, rtol=1e-6)   # assumed modes: exact cantilever frequencies
        np.testing.assert_allclose(hz, expected, atol=5.1e-5)  # the 4-decimal figures


@pytest.mark.parametrize("field, value, words", [
    ("EI", 0.0, ["flexible_links.link2.EI", "positive"]),
    ("EI", -1.0e5, ["flexible_links.link2.EI", "positive"]),
    ("EI", "1.0e5", ["flexible_links.link2.EI", "1.0e+5"]),
    ("EI", {"y": 1.0, "x": 2.0}, ["flexible_links.link2.EI", "y: EI_y"]),
    ("modes", 41, ["flexible_links.link2.modes", "clamped_free", "1..40"]),
    ("modes", 0, ["flexible_links.link2.modes"]),
    ("method", "magic", ["flexible_links.link2.method", "finite_elements"]),
    ("family", "pinned", ["flexible_links.link2.family", "clamped_free"]),
    ("elements", 3, ["flexible_links.link2.elements", "finite_elements"]),
    ("damping_ratio", 1.5, ["flexible_links.link2.damping_ratio"]),
    ("mass_per_length", -2.0, ["flexible_links.link2.mass_per_length", "positive"]),
    ("wobble", 1, ["flexible_links.link2", "unknown", "wobble"]),
])
def test_bad_link_fields(tmp_path, canadarm_document, field, value, words):
    canadarm_document["flexible_links"]["link2"][field] = value
    with pytest.raises(ModelError) as error:
        load_robot(write(tmp_path, canadarm_document, "canadarm.urdf"))
    for word in words + ["robot.yaml"]:
        assert word in str(error.value), (word, str(error.value))


def test_link_without_length_and_unknown_link(tmp_path, canadarm_document):
    del canadarm_document["flexible_links"]["link3"]["tip_frame"]
    robot = load_robot(write(tmp_path, canadarm_document, "canadarm.urdf"))
    with pytest.raises(ModelError, match=r"robot.yaml: flexible_links.link3.length: missing"):
        chain_from_robot(robot)
    canadarm_document["flexible_links"]["link3"]["length"] = 2.0
    assert chain_from_robot(load_robot(write(tmp_path, canadarm_document, "canadarm.urdf"))).bodies[2].beam.length == 2
    canadarm_document["flexible_links"]["forearm"] = {"EI": 1.0}
    with pytest.raises(ModelError, match=r"flexible_links.forearm: no movable joint carries a link 'forearm'"):
        chain_from_robot(load_robot(write(tmp_path, canadarm_document, "canadarm.urdf")))


def test_rigid_joint_errors(tmp_path, canadarm_document):
    canadarm_document["joints"]["joint2"] = {"rigid": True, "stiffness": 10.0}
    with pytest.raises(ModelError, match=r"joints.joint2: a rigid joint has no \['stiffness'\]"):
        load_robot(write(tmp_path, canadarm_document, "canadarm.urdf"))
    canadarm_document["joints"]["joint2"] = {"rigid": "yes"}
    with pytest.raises(ModelError, match=r"joints.joint2.rigid: expected true or false"):
        load_robot(write(tmp_path, canadarm_document, "canadarm.urdf"))


def test_mixed_robot(tmp_path):
    """planar_2r (seed 000) with an elastic joint 1, a rigid joint 2, a rigid link 1 and a flexible link 2 (finite
    elements, two bending directions): the elastic joint keeps its parameters, the chain has 1 + 1 joints and
    2 x 2 x 3 nodal coordinates, and the flexible link's mass comes from the URDF."""
    document = yaml.safe_load((share_directory() / "config" / "planar_2r.yaml").read_text())
    document["joints"]["joint2"] = {"rigid": True, "link_damping": 0.5}
    document["flexible_links"] = {"link2": {"EI": {"y": 2.0e+3, "z": 3.0e+3}, "method": "finite_elements",
                                            "elements": 3, "tip_frame": "tool0", "tip_mass": 1.0}}
    robot = load_robot(write(tmp_path, document, "planar_2r.urdf"))
    assert robot.rigid_joints == ("joint2",)
    assert robot.stiffness[0] == 2000.0 and math.isinf(robot.stiffness[1])
    chain = chain_from_robot(robot)
    assert (chain.n, chain.m) == (2, 12)
    assert chain.bodies[0].beam is None
    assert chain.bodies[1].beam.mass == pytest.approx(10.0 + 1.0)
    assert chain.bodies[1].beam.length == pytest.approx(0.5)
    for robot_name in ("scompi", "planar_2r"):  # existing flexible-joint robots load unchanged
        assert load_robot(robot_name).rigid_joints == ()
