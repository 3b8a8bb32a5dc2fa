"""Malformed robot descriptions give a ModelError naming the file, the field and the joint; never a partial robot."""
from __future__ import annotations

import copy
import random
import shutil
from pathlib import Path

import pinocchio as pin
import numpy as np
import pytest
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model import load_robot, share_directory

SCOMPI_YAML = share_directory() / "config" / "scompi.yaml"


@pytest.fixture()
def scompi_copy(tmp_path: Path):
    """A writable copy of the Scompi files; returns (document, write) where write(doc) saves and returns the path."""
    shutil.copy(share_directory() / "urdf" / "scompi.urdf", tmp_path / "scompi.urdf")
    document = yaml.safe_load(SCOMPI_YAML.read_text())
    document["urdf"] = "scompi.urdf"

    def write(doc) -> Path:
        path = tmp_path / "robot.yaml"
        path.write_text(yaml.safe_dump(doc))
        return path

    return document, write


def mutate(document, path, value):
    doc = copy.deepcopy(document)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


DELETE = object()

CASES = [
    # (id, path into the document, new value, words the message must contain)
    ("unknown_joint", ("joints", "joint7"), {"stiffness": 1.0, "rotor_inertia": 1e-4}, ["joints", "joint7", "unknown"]),
    ("missing_joint", ("joints", "joint3"), DELETE, ["joints", "joint3", "missing"]),
    ("zero_stiffness", ("joints", "joint2", "stiffness"), 0.0, ["joints.joint2.stiffness", "positive"]),
    ("negative_stiffness", ("joints", "joint4", "stiffness"), -5.0, ["joints.joint4.stiffness", "positive"]),
    ("nan_stiffness", ("joints", "joint2", "stiffness"), float("nan"), ["joints.joint2.stiffness", "finite"]),
    ("inf_damping", ("joints", "joint5", "link_damping"), float("inf"), ["joints.joint5.link_damping", "finite"]),
    ("negative_damping", ("joints", "joint5", "motor_damping"), -1.0, ["joints.joint5.motor_damping", ">= 0"]),
    ("zero_rotor_inertia", ("joints", "joint2", "rotor_inertia"), 0.0, ["joints.joint2.rotor_inertia", "positive"]),
    ("zero_gear_ratio", ("joints", "joint6", "gear_ratio"), 0, ["joints.joint6.gear_ratio", "positive"]),
    ("string_gear_ratio", ("joints", "joint6", "gear_ratio"), "160", ["joints.joint6.gear_ratio", "number"]),
    ("typo_key", ("joints", "joint2", "stifness"), 1.0, ["joints.joint2", "stifness", "unknown"]),
    ("typo_top_key", ("gravty",), [0, 0, -9.81], ["gravty", "unknown"]),
    ("missing_stiffness", ("joints", "joint3", "stiffness"), DELETE, ["joints.joint3.stiffness", "missing"]),
    ("missing_radius", ("joints", "joint1", "transmission_radius"), DELETE, ["joints.joint1.transmission_radius",
                                                                             "prismatic"]),
    ("radius_on_revolute", ("joints", "joint2", "transmission_radius"), 0.1, ["joints.joint2.transmission_radius",
                                                                               "revolute"]),
    ("gravity_length", ("gravity",), [0.0, -9.81], ["gravity", "3 entries"]),
    ("gravity_nan", ("gravity",), [0.0, float("nan"), 0.0], ["gravity[1]", "finite"]),
    ("kp_length", ("controller", "kp"), [1.0, 2.0], ["controller.kp", "6 entries"]),
    ("kp_negative", ("controller", "kd"), -3.0, ["controller.kd", ">= 0"]),
    ("tool_mass", ("tool", "mass"), -4.0, ["tool.mass", "positive"]),
    ("tool_frame", ("tool", "frame"), "no_such_frame", ["tool.frame", "no_such_frame"]),
    ("tool_inertia_length", ("tool", "inertia"), [0.0, 0.0], ["tool.inertia", "6 entries"]),
    ("both_inertias", ("joints", "joint2", "reflected_inertia"), 6.0, ["joints.joint2", "exactly one"]),
    ("missing_urdf", ("urdf",), DELETE, ["urdf", "missing"]),
    ("urdf_not_found", ("urdf",), "nowhere.urdf", ["nowhere.urdf", "no such file"]),
    ("tool_frame_unknown", ("tool_frame",), "flange", ["tool_frame", "flange"]),
    ("flexible_link_method", ("flexible_links",), {"link3": {"method": "magic"}}, ["flexible_links.link3.method"]),
    ("summary_two_lines", ("summary",), "a robot\nfrom a paper", ["summary", "one line"]),   # issue 22 item 3
    ("summary_not_text", ("summary",), 12, ["summary", "one line"]),
    ("summary_too_long", ("summary",), "x" * 121, ["summary", "at most 120 characters"]),
    # issue 22: PyYAML (YAML 1.1) reads 2.0e3 and 1e-4 as text; every section's numbers name the fix, as
    # flexible_links did alone (the joints said only "expected a number, got '2.0e3'")
    ("yaml11_stiffness", ("joints", "joint2", "stiffness"), "2.0e3",
     ["joints.joint2.stiffness", "got '2.0e3' (YAML 1.1 reads 2.0e3 as text: write 2.0e+3)"]),
    ("yaml11_rotor_inertia", ("joints", "joint2", "rotor_inertia"), "1e-4",
     ["joints.joint2.rotor_inertia", "(YAML 1.1 reads 1e-4 as text: write 1.0e-4)"]),
    ("yaml11_tool_mass", ("tool", "mass"), "8E1", ["tool.mass", "(YAML 1.1 reads 8E1 as text: write 8.0E+1)"]),
    ("yaml11_link_EI", ("flexible_links",), {"link3": {"EI": "2e5"}},
     ["flexible_links.link3.EI", "(YAML 1.1 reads 2e5 as text: write 2.0e+5)"]),
    ("text_not_number", ("joints", "joint2", "stiffness"), "stiff", ["joints.joint2.stiffness", "got 'stiff'"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_validation_error_names_the_field(scompi_copy, case) -> None:
    document, write = scompi_copy
    _, path, value, words = case
    with pytest.raises(ModelError) as error:
        load_robot(write(mutate(document, path, value)), tool=True)
    message = str(error.value)
    assert "robot.yaml" in message or "nowhere.urdf" in message, message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_malformed_yaml_and_urdf(tmp_path: Path, scompi_copy) -> None:
    document, write = scompi_copy
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("joints: [unclosed\n  - : :")
    with pytest.raises(ModelError, match="bad.yaml.*malformed YAML"):
        load_robot(bad_yaml)
    (tmp_path / "broken.urdf").write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'>")
    with pytest.raises(ModelError, match="broken.urdf"):
        load_robot(write(mutate(document, ("urdf",), "broken.urdf")))
    (tmp_path / "notes.urdf").write_text("hello")
    with pytest.raises(ModelError, match="notes.urdf.*not a URDF"):
        load_robot(write(mutate(document, ("urdf",), "notes.urdf")))
    with pytest.raises(ModelError, match="unknown robot 'scompy'"):
        load_robot("scompy")
    with pytest.raises(ModelError, match="no such flexibility YAML"):
        load_robot(tmp_path / "absent.yaml")


def test_continuous_joint_is_an_unlimited_revolute_joint(tmp_path: Path) -> None:
    """A continuous joint is elastic like a revolute one, with no position limits; its effort and velocity limits
    are the URDF's (issue 36)."""
    link = ("<link name='l1'><inertial><origin xyz='0.3 0 0'/><mass value='2'/>"
            "<inertia ixx='0.1' ixy='0' ixz='0' iyy='0.2' iyz='0' izz='0.3'/></inertial></link>")
    (tmp_path / "c.urdf").write_text(
        f"<robot name='c'><link name='base'/>{link}<joint name='j1' type='continuous'><parent link='base'/>"
        "<child link='l1'/><axis xyz='0 0 1'/><limit effort='12' velocity='3'/></joint></robot>")
    (tmp_path / "c.yaml").write_text("urdf: c.urdf\ngravity: [0, -9.81, 0]\n"
                                     "joints:\n  j1: {stiffness: 100.0, rotor_inertia: 1.0e-4}\n")
    robot = load_robot(tmp_path / "c.yaml")
    assert robot.joint_types == ("revolute",) and robot.continuous_joints == ("j1",)
    assert robot.lower_limits[0] == -np.inf and robot.upper_limits[0] == np.inf
    assert robot.velocity_limits[0] == 3.0 and robot.effort_limits[0] == 12.0
    assert robot.limit_violation([40.0]) is None  # many turns: no limit
    # the pendulum's gravity torque m g l cos(q) about z, gravity along -y: a closed form
    q = 2.5
    tau = pin.rnea(robot.model, robot.create_data(), np.array([q]), np.zeros(1), np.zeros(1))
    assert tau[0] == pytest.approx(2.0 * 9.81 * 0.3 * np.cos(q), rel=1e-12)


def _random_value(rng: random.Random):
    return rng.choice([None, -1.0, 0.0, 1e308 * 10, float("nan"), "text", [], [1.0], {"a": 1}, True, 3, 2.5e3,
                       [0.0, 0.0, 0.0], "tool0", {"stiffness": 1.0}])


def _all_paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _all_paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _all_paths(value, prefix + (index,))


def test_fuzzed_files_give_a_robot_or_a_model_error(scompi_copy) -> None:
    """700 random mutations (replace, delete, add keys, at any depth) of a valid file: a valid robot or a clean
    ModelError, never another exception (with the URDF and text-level cases below: 1,200 damaged robot files)."""
    document, write = scompi_copy
    rng = random.Random(1234)
    outcomes = {"robot": 0, "error": 0}
    for _ in range(700):
        doc = copy.deepcopy(document)
        for _ in range(rng.randint(1, 3)):
            paths = [p for p in _all_paths(doc) if p]
            path = rng.choice(paths)
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            action = rng.random()
            if action < 0.2 and isinstance(parent, dict):
                del parent[path[-1]]
            elif action < 0.3 and isinstance(parent, dict):
                parent[rng.choice(["extra", "joint9", "kp", "mass"])] = _random_value(rng)
            else:
                parent[path[-1]] = _random_value(rng)
        try:
            robot = load_robot(write(doc), tool=rng.random() < 0.5)
        except ModelError:
            outcomes["error"] += 1
        else:
            assert robot.n == 6
            outcomes["robot"] += 1
    assert outcomes["error"] > 250 and outcomes["robot"] > 0, outcomes


GARBAGE = ("nan", "-1", "0", "abc", "1e400", "", "0 0", "1 2 3 4", "inf", "-1e-9", "\x00", "<", "1,5")


def test_fuzzed_urdfs_give_a_robot_or_a_model_error(scompi_copy, tmp_path: Path) -> None:
    """300 URDFs with random damage at the XML level (an attribute replaced by garbage or removed, an element
    removed or duplicated): a robot or a clean ModelError naming the URDF, never another exception or a crash of
    the URDF parser."""
    import xml.etree.ElementTree as ET

    document, write = scompi_copy
    path = write(document)
    source = (tmp_path / "scompi.urdf").read_text()
    rng = random.Random(99)
    outcomes = {"robot": 0, "error": 0}
    for _ in range(300):
        root = ET.fromstring(source)
        elements = list(root.iter())
        for _ in range(rng.randint(1, 3)):
            element = rng.choice(elements[1:])
            action = rng.random()
            if action < 0.6 and element.attrib:
                key = rng.choice(sorted(element.attrib))
                element.attrib[key] = rng.choice(GARBAGE)
            elif action < 0.75 and element.attrib:
                del element.attrib[rng.choice(sorted(element.attrib))]
            else:
                parent = next(p for p in root.iter() if element in list(p))
                if action < 0.9:
                    parent.remove(element)
                else:
                    parent.append(copy.deepcopy(element))
                elements = list(root.iter())
        (tmp_path / "scompi.urdf").write_text(ET.tostring(root, encoding="unicode"))
        try:
            load_robot(path)
        except ModelError as error:
            assert "scompi.urdf" in str(error) or "robot.yaml" in str(error), error
            outcomes["error"] += 1
        else:
            outcomes["robot"] += 1
    assert outcomes["error"] > 100 and outcomes["robot"] > 0, outcomes


def test_damaged_file_text_gives_a_model_error(scompi_copy, tmp_path: Path) -> None:
    """200 flexibility YAMLs and URDFs cut at a random byte or with random bytes spliced in (a copy interrupted, a
    disk error): a robot or a ModelError naming the file, never another exception."""
    document, write = scompi_copy
    path = write(document)
    texts = {path: path.read_bytes(), tmp_path / "scompi.urdf": (tmp_path / "scompi.urdf").read_bytes()}
    rng = random.Random(7)
    errors = 0
    for i in range(200):
        target = list(texts)[i % 2]
        data = texts[target]
        cut = rng.randrange(len(data))
        damaged = data[:cut] if rng.random() < 0.5 else data[:cut] + bytes(rng.randrange(256) for _ in range(
            rng.randint(1, 40))) + data[cut:]
        target.write_bytes(damaged)
        try:
            load_robot(path)
        except ModelError as error:
            assert target.name in str(error) or path.name in str(error), (target.name, error)
            errors += 1
        finally:
            target.write_bytes(data)
    assert errors > 100
