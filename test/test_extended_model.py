"""Extended flexible-joint model (seed 002, section 2): extra_elasticities in the YAML, built on pinocchio.

Checks: the extended model of a URDF with nothing inserted is pinocchio's own model of that URDF (same M, same
RNEA); an inserted elastic DOF at q_e = 0 leaves the rigid dynamics of robot.model unchanged (closed form: the mass
matrix of the extended model restricted to the actuated joints equals robot.model's); kr90_3dof gets seed 001's
six transverse springs (Table 6); bad entries get errors naming the file, entry, field and joint.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.extended_model import without_extra_elasticities
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import parse_urdf, share_directory


def _sym(m: np.ndarray) -> np.ndarray:
    return np.triu(m) + np.triu(m, 1).T


def test_extended_model_of_moberg5_is_pinocchios_model_of_its_urdf() -> None:
    """moberg5's extended model (joint3 a URDF joint) has pinocchio's CRBA and RNEA of the URDF parsed directly."""
    ext = load_robot("moberg5").extended
    urdf = parse_urdf(share_directory() / "urdf" / "moberg5.urdf")
    urdf.gravity = pin.Motion.Zero()  # the YAML's g = 0
    d1, d2 = ext.create_data(), urdf.createData()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, a = rng.normal(size=(3, 3))
        np.testing.assert_allclose(_sym(pin.crba(ext.model, d1, q)), _sym(pin.crba(urdf, d2, q)), rtol=1e-14)
        np.testing.assert_allclose(pin.rnea(ext.model, d1, q, v, a), pin.rnea(urdf, d2, q, v, a), rtol=1e-13,
                                   atol=1e-12)


def test_inserted_springs_of_kr90_3dof_are_seed_001_table_6() -> None:
    """Seed 001 Table 6: k_ix, k_iy (d_ix, d_iy) about x_i, y_i of frame O_i become six massless elastic joints
    inserted before joints 1-3; at q_e = 0 the actuated block of M and the tool pose equal robot.model's."""
    robot = load_robot("kr90_3dof")
    ext = robot.extended
    assert ext.elastic_names == ("joint1_rx", "joint1_ry", "joint2_rx", "joint2_ry", "joint3_rx", "joint3_ry")
    np.testing.assert_allclose(ext.elastic_stiffness, [6.1e6, 11.9e6, 11.8e6, 8.1e6, 5.2e6, 12.0e6])
    np.testing.assert_allclose(ext.elastic_damping, [40.0, 3.1e3, 40.0, 9.4e3, 9.2e3, 80.0])
    d_ext, d = ext.create_data(), robot.create_data()
    tool_e, tool = ext.model.getFrameId("tool0"), robot.frame_id("tool0")
    for q in np.random.default_rng(1).uniform(-1, 1, (4, 3)):
        qa = ext.full_q(q)
        m_ext = _sym(pin.crba(ext.model, d_ext, qa))
        np.testing.assert_allclose(m_ext[np.ix_(ext.actuated_index, ext.actuated_index)],
                                   _sym(pin.crba(robot.model, d, q)), rtol=1e-12, atol=1e-9)
        pin.framesForwardKinematics(ext.model, d_ext, qa)
        pin.framesForwardKinematics(robot.model, d, q)
        np.testing.assert_allclose(d_ext.oMf[tool_e].homogeneous, d.oMf[tool].homogeneous, atol=1e-12)
    # a rotation about x_1 at joint 1 tilts the whole arm: it changes the tool height by the lever arm
    qa = ext.full_q([0.0, 0.0, 0.0], [1e-3, 0, 0, 0, 0, 0])
    pin.framesForwardKinematics(ext.model, d_ext, qa)
    assert abs(d_ext.oMf[tool_e].translation[2] - d.oMf[tool].translation[2]) > 1e-4


def test_removing_the_extra_elasticities_gives_robot_model() -> None:
    robot = without_extra_elasticities(load_robot("moberg5"))
    assert robot.extended.ne == 0 and robot.extended.model is robot.model
    np.testing.assert_array_equal(robot.extended.spring_damping, [250.0, 250.0])


def _write(tmp_path: Path, name: str, extra: list, joints: dict | None = None) -> Path:
    document = yaml.safe_load((share_directory() / "config" / f"{name}.yaml").read_text())
    document["urdf"] = str(share_directory() / "urdf" / Path(document["urdf"]).name)
    document["extra_elasticities"] = extra
    if joints is not None:
        document["joints"] = joints
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize("extra, words", [
    ([{"joint": "joint9", "stiffness": 1e5}], ["extra_elasticities[0]", "unknown joint 'joint9'", "joint3"]),
    ([{"joint": "joint3", "stiffness": 0.0}], ["extra_elasticities[0]", "joint3", "stiffness", "positive"]),
    ([{"joint": "joint3", "stiffness": -1e5}], ["stiffness", "positive", "-100000"]),
    ([{"joint": "joint3", "stiffness": 1e5, "damping": -1}], ["damping", ">= 0"]),
    ([{"joint": "joint3", "stiffness": 1e5, "spring": 1}], ["unknown key", "spring"]),
    ([{"joint": "joint1", "stiffness": 1e5, "axis": "w"}], ["axis", "x, y, z"]),
    ([{"joint": "joint1", "stiffness": 1e5}], ["joint1", "actuated", "axis"]),
    ([{"joint": "joint3", "stiffness": 1e5, "axis": "x"}], ["joint3", "not listed under joints"]),
    ([{"joint": "joint1", "stiffness": 1e5, "type": "prismatic"}], ["type", "without an axis"]),
])
def test_bad_extra_elasticities_are_named(tmp_path: Path, extra: list, words: list[str]) -> None:
    path = _write(tmp_path, "moberg5", extra)
    with pytest.raises(ModelError) as error:
        load_robot(path)
    message = str(error.value)
    assert str(path) in message
    for word in words:
        assert word in message, message


def test_unlisted_urdf_joint_without_elasticity_is_still_an_error(tmp_path: Path) -> None:
    """joint3 neither actuated nor elastic: the existing 'missing joint' error."""
    path = _write(tmp_path, "moberg5", [])
    with pytest.raises(ModelError, match="missing joint.*joint3"):
        load_robot(path)


def test_negative_spring_damping_is_rejected(tmp_path: Path) -> None:
    joints = {"joint1": {"stiffness": 1e5, "spring_damping": -1.0, "reflected_inertia": 100.0},
              "joint2": {"stiffness": 1e5, "reflected_inertia": 100.0}}
    path = _write(tmp_path, "moberg5", [{"joint": "joint3", "stiffness": 1e5}], joints)
    with pytest.raises(ModelError, match="joints.joint1.spring_damping"):
        load_robot(path)


def test_prismatic_and_unaligned_inserted_dofs(tmp_path: Path) -> None:
    """A translational elastic DOF along z and a rotational one about an unaligned axis at joint 2 of moberg5."""
    path = _write(tmp_path, "moberg5", [
        {"joint": "joint3", "stiffness": 1e5, "damping": 1.0},
        {"joint": "joint2", "axis": "z", "type": "prismatic", "stiffness": 1e8, "damping": 1e3},
        {"joint": "joint2", "axis": [1.0, 0.0, 1.0], "stiffness": 1e7, "name": "root2_tilt"}])
    ext = load_robot(path).extended
    assert ext.elastic_names == ("joint3", "joint2_pz", "root2_tilt")
    assert ext.elastic_types == ("revolute", "prismatic", "revolute")
    assert ext.coordinate_names == ("joint1", "joint2_pz", "root2_tilt", "joint2", "joint3")
    np.testing.assert_array_equal(ext.actuated_index, [0, 3])
    np.testing.assert_array_equal(ext.elastic_index, [4, 1, 2])


def test_info_reports_the_extended_model(capsys) -> None:
    """`flexrobot info moberg5 --json`: the non-actuated joint and the gear dampers of seed 002 Table 1."""
    import json

    from flexrobot_ros.cli import main

    assert main(["info", "moberg5", "--json"]) == 0
    extended = json.loads(capsys.readouterr().out)["extended"]
    assert extended["spring_damping"] == [250.0, 250.0]
    assert extended["elastic"] == [{"name": "joint3", "type": "revolute", "stiffness": 1e5, "damping": 250.0}]
    assert main(["info", "scompi", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["extended"] is None
