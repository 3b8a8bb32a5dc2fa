"""``identify-rigid --out``: the identified robot written as a flexibility YAML + URDF (issue 37, item 3).

Records are the rigid model's motor torques written out here (pinocchio's RNEA + B qdd + F_v qd + F_c tanh(qd / v_c)
with the truth robot's own parameters) along a Fourier excitation: the stored optimized one for the kr90 variants
(test/data/kr90_excitation.json), random 5-harmonic ones for the Panda and the two-link xacro arm. What the written
files must hold is checked with pinocchio on the files themselves (the URDF parsed and reduced by pinocchio, not by
the package), against the identified parameters.
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.base_parameters import base_parameters
from flexrobot_ros.identification.excitation import FourierTrajectory
from flexrobot_ros.identification.rigid_body import RigidRecord, identify_rigid_body
from flexrobot_ros.identification.rigid_export import joint_fields, standard_from_base, write_identified_robot
from flexrobot_ros.identification.rigid_regressor import regressor, standard_parameters
from flexrobot_ros.model import load_robot
from flexrobot_ros.timeseries import write_timeseries
from vendor_robots import ROBOTS

EXCITATION = Path(__file__).parent / "data" / "kr90_excitation.json"
PANDA = ROBOTS / "panda_description" / "urdf" / "panda.urdf"


def kr90_excitation() -> FourierTrajectory:
    stored = json.loads(EXCITATION.read_text())["trajectory"]
    return FourierTrajectory(stored["frequency_hz"], np.array(stored["a"]), np.array(stored["b"]),
                             np.array(stored["q0"]))


def random_excitation(robot, seed: int, frequency_hz: float = 0.2, amplitude: float = 0.25) -> FourierTrajectory:
    """5 harmonics per joint about the middle of the position range, each harmonic's position amplitude
    ``amplitude`` [rad] at most."""
    rng = np.random.default_rng(seed)
    omega = 2 * np.pi * frequency_hz * np.arange(1, 6)[:, None]
    lower = np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -1.0)
    upper = np.where(np.isfinite(robot.upper_limits), robot.upper_limits, 1.0)
    return FourierTrajectory(frequency_hz, amplitude * omega * rng.uniform(-1, 1, (5, robot.n)),
                             amplitude * omega * rng.uniform(-1, 1, (5, robot.n)), 0.5 * (lower + upper))


def rigid_torques(robot, q, qd, qdd) -> np.ndarray:
    """Eq. 4 with ``robot``'s own parameters (samples, n) [N m]."""
    data = robot.create_data()
    link = np.array([pin.rnea(robot.model, data, *state) for state in zip(q, qd, qdd)])
    return (link + robot.motor_inertia * qdd + (robot.link_damping + robot.motor_damping) * qd
            + (robot.link_coulomb + robot.motor_coulomb) * np.tanh(qd / robot.coulomb_width))


def rigid_record(truth, trajectory: FourierTrajectory, rate_hz: float = 1000.0, sign: float = 1.0) -> RigidRecord:
    """The truth robot's rigid-model motor torques along ``trajectory`` (times ``sign``)."""
    t = np.arange(0.0, trajectory.period, 1.0 / rate_hz)
    q, qd, qdd = trajectory.evaluate(t)
    return RigidRecord(t, q, sign * rigid_torques(truth, q, qd, qdd), "rigid model")


def write_csv(path: Path, robot, record: RigidRecord) -> Path:
    columns = {f"q_m.{joint}": record.q[:, j] for j, joint in enumerate(robot.joint_names)}
    columns.update({f"tau_m.{joint}": record.tau[:, j] for j, joint in enumerate(robot.joint_names)})
    write_timeseries(path, record.t, columns)
    return path


def kr90_variant(tmp_path: Path, name: str, joints: dict) -> Path:
    """The shipped kr90's flexibility YAML with ``joints`` instead of its own (URDF path made absolute)."""
    shipped = load_robot("kr90")
    document = yaml.safe_load(Path(shipped.yaml_path).read_text())
    document.update(urdf=str(shipped.urdf_path), joints=joints)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def summary_beta(summary: dict) -> np.ndarray:
    return np.array([entry["value"] for entry in summary["parameters"]])


RIGID_JOINTS = {"joint1": {"rigid": True, "link_damping": 5.4, "link_coulomb": 120.0},
                "joint2": {"rigid": True, "link_damping": 5.0, "link_coulomb": 180.0},
                "joint3": {"rigid": True, "link_damping": 3.7, "link_coulomb": 90.0}}


def test_all_rigid_robot_exports_a_valid_yaml_and_urdf(tmp_path, capsys) -> None:
    """Issue 37: a kr90 whose joints are all ``rigid: true`` (Coulomb friction 120/180/90 N m, link side).
    ``identify-rigid ROBOT REC --out X.yaml --json`` exits 0 with the JSON; the written YAML has rigid joints with
    only link_damping and link_coulomb (the identified totals: 5.4/5.0/3.7 N m s/rad and 120/180/90 N m within
    1e-4), no rotor or motor field; the pair loads, and its rigid torques (RNEA written out here on the loaded
    robot) equal the identified model's (base regressor times the JSON's base parameters, the armature of joint 3
    left out: within 3 standard deviations of 0, it is neither written nor warned about) to 1e-8 of the peak and
    the record's to 1e-5 (the identification's differentiation error: 1.1e-6); the JSON lists what changed."""
    robot_yaml = kr90_variant(tmp_path, "kr90_rigid_joints", RIGID_JOINTS)
    robot = load_robot(robot_yaml)
    assert set(robot.rigid_joints) == set(robot.joint_names)
    record = rigid_record(robot, kr90_excitation())
    csv = write_csv(tmp_path / "record.csv", robot, record)
    out = tmp_path / "out" / "identified.yaml"
    assert main(["identify-rigid", str(robot_yaml), str(csv), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["files"] == [str(out), str(out.with_suffix(".urdf"))]
    written = yaml.safe_load(out.read_text())["joints"]
    for joint, expected in RIGID_JOINTS.items():
        assert set(written[joint]) == {"rigid", "link_damping", "link_coulomb"}, written[joint]
        assert written[joint]["rigid"] is True
        for field in ("link_damping", "link_coulomb"):
            assert written[joint][field] == pytest.approx(expected[field], rel=1e-4)
    identified = load_robot(out)
    assert identified.urdf_path == out.with_suffix(".urdf").resolve()
    assert set(identified.rigid_joints) == set(identified.joint_names)
    states = kr90_excitation().evaluate(record.t[::50])
    exported = rigid_torques(identified, *states)
    beta = summary_beta(summary)
    armature = [k for k, entry in enumerate(summary["parameters"]) if entry["name"].startswith("armature.")]
    assert all(abs(beta[k]) < 3 * summary["parameters"][k]["std"] for k in armature)   # not warned about
    assert [line.split(":")[0] for line in summary["export"]["warnings"]] == ["link link2"]   # kr90's own link 2
    beta[armature] = 0.0                                        # a rigid joint has no rotor: not written
    model = (base_parameters(robot).columns(regressor(robot, *states)) @ beta).reshape(-1, 3)
    np.testing.assert_allclose(exported, model, rtol=0, atol=1e-8 * np.abs(model).max())
    np.testing.assert_allclose(exported, record.tau[::50], rtol=0, atol=1e-5 * np.abs(record.tau).max())
    changes = summary["export"]["changes"]
    assert [line.split(":")[0] for line in changes if ": mass" in line] == ["link1", "link2", "link3"]
    assert all(line.split(":")[0].split(".")[1] in ("link_damping", "link_coulomb")
               for line in changes if ": mass" not in line), changes
    assert not list((tmp_path / "out").glob(".*")), "the staging directory is left"


def test_damping_changes_only_the_motor_side_and_says_so(tmp_path, capsys) -> None:
    """The issue's case: the record's total viscous friction of joint 1 is 266.8 N m s/rad, the shipped kr90's
    YAML has link_damping 1450 (from modal identification). The export keeps every link_damping (1450, 1100, 290)
    and link_coulomb, sets joint1's motor_damping to 0 with a warning naming joint1, F_v 266.8 and link_damping
    1450, and lists every changed value on stderr and in the JSON (joint1.motor_damping 5.4 -> 0); joints 2-3 get
    F_v - link_damping (5.0, 3.7 within 1e-6 of the totals 1105, 293.7). The written YAML's header comment carries
    the changes and warnings; the kr90's equivalent link 2 (negative principal moments, as in its own URDF) is
    written with a warning naming it."""
    shipped = load_robot("kr90")
    truth_joints = yaml.safe_load(Path(shipped.yaml_path).read_text())["joints"]
    truth_joints["joint1"] = dict(truth_joints["joint1"], link_damping=261.4)     # + motor 5.4 = 266.8 in total
    truth = load_robot(kr90_variant(tmp_path, "truth", truth_joints))
    csv = write_csv(tmp_path / "record.csv", shipped, rigid_record(truth, kr90_excitation()))
    out = tmp_path / "kr90_identified.yaml"
    assert main(["identify-rigid", "kr90", str(csv), "--rigid", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    warnings = summary["export"]["warnings"]
    assert any("joint1" in line and "266.8" in line and "1450" in line and "motor_damping set to 0" in line
               for line in warnings), warnings
    assert any(line.startswith("link link2: negative principal moment") for line in warnings), warnings
    assert all(f"warning: {line}" in captured.err for line in warnings)
    assert "joint1.motor_damping: 5.4 -> 0.0 N m s/rad" in summary["export"]["changes"]
    assert not any(".link_damping" in line or ".link_coulomb" in line for line in summary["export"]["changes"])
    written = yaml.safe_load(out.read_text())["joints"]
    source = yaml.safe_load(Path(shipped.yaml_path).read_text())["joints"]
    for joint in ("joint1", "joint2", "joint3"):
        assert written[joint]["link_damping"] == source[joint]["link_damping"]
        assert written[joint].get("link_coulomb", 0.0) == source[joint].get("link_coulomb", 0.0)
    assert written["joint1"]["motor_damping"] == 0.0
    assert written["joint2"]["motor_damping"] == pytest.approx(5.0, abs=1e-6 * 1105.0)   # of the total F_v
    assert written["joint3"]["motor_damping"] == pytest.approx(3.7, abs=1e-6 * 293.7)
    header = out.read_text().split("\nrobot:")[0]
    assert "#   joint1.motor_damping: 5.4 -> 0.0 N m s/rad" in header and "# WARNING: joint joint1:" in header


def test_a_failed_export_leaves_nothing_and_still_reports(tmp_path, capsys) -> None:
    """Torques of the wrong sign (an effort convention error) give negative masses: the export is refused with one
    line naming the link and --physical, exit 2; the JSON with the identification is still printed; the previous
    YAML and URDF at --out are untouched and nothing else (no staging directory) is left."""
    robot = load_robot("kr90")
    csv = write_csv(tmp_path / "record.csv", robot, rigid_record(robot, kr90_excitation(), sign=-1.0))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "kr90_identified.yaml"
    out.write_text("previous yaml\n")
    out.with_suffix(".urdf").write_text("previous urdf\n")
    assert main(["identify-rigid", "kr90", str(csv), "--rigid", "--out", str(out), "--json"]) == 2
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert len(summary["parameters"]) == 22
    error = summary["export"]["error"]
    assert "nothing written" in error and "mass" in error and "--physical" in error
    assert captured.err.count("error:") == 1 and "identified mass" in captured.err
    assert sorted(p.name for p in out_dir.iterdir()) == ["kr90_identified.urdf", "kr90_identified.yaml"]
    assert out.read_text() == "previous yaml\n" and out.with_suffix(".urdf").read_text() == "previous urdf\n"


def test_a_non_positive_rotor_inertia_is_never_written(tmp_path) -> None:
    """An identified armature N^2 I_r <= 0 (noise on a small rotor) cannot be a rotor inertia (the schema needs
    one > 0): the field is left out (the YAML keeps its value), a warning names the joint, and the written pair
    loads with joint3's rotor inertia unchanged (0.0113 kg m^2)."""
    robot = load_robot("kr90")
    result = identify_rigid_body(robot, rigid_record(robot, kr90_excitation()), elasticity=False)
    phi = standard_from_base(robot, result)
    armature3 = 10 * robot.n + 3 * 2
    phi[armature3] = -0.5
    fields, warnings = joint_fields(robot, result, phi)
    assert "rotor_inertia" not in fields["joint3"] and "rotor_inertia" in fields["joint1"]
    assert any(line.startswith("joint joint3: identified armature") and "not positive" in line for line in warnings)
    exported = write_identified_robot(robot, result, phi, tmp_path / "k.yaml", "test")
    assert load_robot(exported.yaml).motor_inertia[2] == pytest.approx(robot.motor_inertia[2], rel=1e-12)
    assert any("joint3" in line and "not positive" in line for line in exported.warnings)


@pytest.mark.skipif(not PANDA.is_file(), reason="needs example-robot-data (the test extra)")
def test_locked_and_fixed_bodies_are_not_counted_twice(tmp_path) -> None:
    """The Panda with its fingers locked (issue 36's example YAML): pinocchio's reduced model merges panda_link8,
    panda_hand (fixed joints) and both fingers (locked) into joint 7's body. The exported URDF, parsed by
    pinocchio and reduced with the same locks here, has joint 7's body equal to the identified one (to 1e-9 of the
    largest parameter), so panda_link7 holds the identified body minus the hand, link 8 and the fingers, whose
    own inertials are left as the vendor wrote them; the same for every joint."""
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    fingers = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
    document = {"robot": "panda", "urdf": str(PANDA), "tool_frame": "panda_hand", "locked_joints": fingers,
                "controller": {"kp": 2000.0, "kd": 20.0},
                "joints": {joint: {"stiffness": 2.0e4, "rotor_inertia": 1.0e-5, "gear_ratio": 100,
                                   "link_damping": 1.0, "link_coulomb": 2.0} for joint in arm}}
    robot_yaml = tmp_path / "panda.yaml"
    robot_yaml.write_text(yaml.safe_dump(document))
    robot = load_robot(robot_yaml)
    record = rigid_record(robot, random_excitation(robot, seed=7), rate_hz=250.0)
    result = identify_rigid_body(robot, record, elasticity=False)
    phi = standard_from_base(robot, result)
    exported = write_identified_robot(robot, result, phi, tmp_path / "out" / "panda_identified.yaml", "test")

    full = pin.buildModelFromUrdf(str(exported.urdf))
    locked = [full.getJointId(name) for name in fingers]
    q = pin.neutral(full)
    for name, position in fingers.items():
        q[full.idx_qs[full.getJointId(name)]] = position
    reduced = pin.buildReducedModel(full, locked, q)
    identified = phi[:10 * robot.n].reshape(robot.n, 10)
    scale = np.abs(identified).max()
    for i, joint in enumerate(arm):
        got = np.asarray(reduced.inertias[reduced.getJointId(joint)].toDynamicParameters())
        np.testing.assert_allclose(got, identified[i], rtol=0, atol=1e-9 * scale, err_msg=joint)
    vendor = {link.get("name"): link for link in ElementTree.parse(PANDA).getroot().iter("link")}
    for link in ElementTree.parse(exported.urdf).getroot().iter("link"):
        if link.get("name") in ("panda_hand", "panda_link8", "panda_leftfinger", "panda_rightfinger"):
            assert ElementTree.tostring(link.find("inertial")) == ElementTree.tostring(
                vendor[link.get("name")].find("inertial")), link.get("name")
    hand = next(f for f in robot.model.frames if f.name == "panda_hand")
    assert hand.parentJoint == robot.model.getJointId("panda_joint7")


XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="length" default="0.5"/>
  <xacro:property name="l" value="$(arg length)"/>
  <xacro:macro name="link" params="name mass">
    <link name="${name}">
      <inertial><origin xyz="${l/2} 0.01 0"/><mass value="${mass}"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="${mass*l*l/12}" iyz="0" izz="${mass*l*l/12}"/></inertial>
    </link>
  </xacro:macro>
  <link name="base"/>
  <xacro:link name="upper" mass="3.0"/>
  <xacro:link name="fore" mass="2.0"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="${l} 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="30" velocity="3"/></joint>
</robot>"""


def test_a_xacro_robot_exports_an_expanded_urdf(tmp_path, capsys) -> None:
    """A flexibility YAML naming ``arm.urdf.xacro`` with ``xacro_args: {length: 0.8}``: ``--out`` writes the
    expanded URDF (no xacro left in it) and a YAML that names it and has no xacro_args (which the schema refuses
    beside a .urdf); the pair loads, and its torques (RNEA written out here on the loaded robot) equal the
    identified model's to 1e-8 of the peak; the source files are unchanged."""
    pytest.importorskip("xacro")
    (tmp_path / "arm.urdf.xacro").write_text(XACRO)
    joint = {"stiffness": 2.0e4, "rotor_inertia": 1.0e-4, "gear_ratio": 50, "link_damping": 0.5,
             "motor_damping": 0.2, "motor_coulomb": 0.3}
    source = tmp_path / "arm.yaml"
    source.write_text("# the two-link arm\nrobot: arm\nurdf: arm.urdf.xacro\nxacro_args: {length: 0.8}\n"
                      "gravity: [0.0, -9.81, 0.0]\njoints:\n"
                      + "".join(f"  {name}: {json.dumps(joint)}\n" for name in ("shoulder", "elbow")))
    before = source.read_text()
    robot = load_robot(source)
    record = rigid_record(robot, random_excitation(robot, seed=3, amplitude=0.4))
    csv = write_csv(tmp_path / "record.csv", robot, record)
    out = tmp_path / "identified" / "arm_identified.yaml"
    assert main(["identify-rigid", str(source), str(csv), "--rigid", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    document = yaml.safe_load(out.read_text())
    assert document["urdf"] == "arm_identified.urdf" and "xacro_args" not in document
    urdf_text = out.with_suffix(".urdf").read_text()
    assert "xacro" not in urdf_text and "${" not in urdf_text
    identified = load_robot(out)
    assert identified.urdf_path == out.with_suffix(".urdf").resolve()
    states = random_excitation(robot, seed=3, amplitude=0.4).evaluate(record.t[::20])
    exported = rigid_torques(identified, *states)
    model = (base_parameters(robot).columns(regressor(robot, *states)) @ summary_beta(summary)).reshape(-1, 2)
    np.testing.assert_allclose(exported, model, rtol=0, atol=1e-8 * np.abs(model).max())
    assert source.read_text() == before


def test_standard_parameters_of_the_written_robot_are_the_identified_ones(tmp_path) -> None:
    """The export's own load-back check compares the written robot's standard parameters with phi; here the same
    on kr90_3dof (physical links, fixed tool0 frame): every link of the loaded pair equals phi to 1e-9, and a phi
    whose mass of link 1 is not positive is refused before anything is written."""
    robot = load_robot("kr90_3dof")
    result = identify_rigid_body(robot, rigid_record(robot, kr90_excitation()), elasticity=False,
                                 base=base_parameters(robot))
    phi = standard_from_base(robot, result)
    exported = write_identified_robot(robot, result, phi, tmp_path / "k3.yaml", "test")
    np.testing.assert_allclose(standard_parameters(load_robot(exported.yaml))[:30], phi[:30], rtol=1e-9,
                               atol=1e-9 * np.abs(phi[:30]).max())
    bad = phi.copy()
    bad[0] = -1.0
    with pytest.raises(IdentificationError, match="link1: identified mass -1 kg is not positive.*--physical"):
        write_identified_robot(robot, result, bad, tmp_path / "bad.yaml", "test")
    assert not (tmp_path / "bad.yaml").exists() and not (tmp_path / "bad.urdf").exists()
    assert not list(tmp_path.glob(".bad.*"))


def test_the_tool_is_not_written_into_the_link(tmp_path, capsys) -> None:
    """A kr90 carrying a 50 kg tool at tool0 (``--tool``): the identified body of joint 3 includes the tool; the
    written URDF's link3 does not (pinocchio's model of the written URDF alone: mass of joint 3's body = identified
    - 50 kg, CoM moment likewise, to 1e-9), and the written YAML loaded with its tool gives the identified body
    back."""
    shipped = load_robot("kr90")
    document = yaml.safe_load(Path(shipped.yaml_path).read_text())
    document.update(urdf=str(shipped.urdf_path), tool={"mass": 50.0, "frame": "tool0", "com": [0.1, 0.0, 0.05]})
    robot_yaml = tmp_path / "kr90_tool.yaml"
    robot_yaml.write_text(yaml.safe_dump(document, sort_keys=False))
    robot = load_robot(robot_yaml, tool=True)
    csv = write_csv(tmp_path / "record.csv", robot, rigid_record(robot, kr90_excitation()))
    out = tmp_path / "kr90_tool_identified.yaml"
    assert main(["identify-rigid", str(robot_yaml), str(csv), "--rigid", "--tool", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    result = identify_rigid_body(robot, rigid_record(robot, kr90_excitation()), elasticity=False)
    phi = standard_from_base(robot, result)
    np.testing.assert_allclose(summary_beta(summary), result.beta, rtol=1e-12)
    urdf_only = pin.buildModelFromUrdf(str(out.with_suffix(".urdf")))
    body = np.asarray(urdf_only.inertias[urdf_only.getJointId("joint3")].toDynamicParameters())
    frame = shipped.model.frames[shipped.model.getFrameId("tool0")]
    tool = frame.placement.act(pin.Inertia(50.0, np.array([0.1, 0.0, 0.05]), np.zeros((3, 3))))
    np.testing.assert_allclose(body, phi[20:30] - np.asarray(tool.toDynamicParameters()), rtol=0,
                               atol=1e-9 * np.abs(phi[20:30]).max())
    np.testing.assert_allclose(standard_parameters(load_robot(out, tool=True))[:30], phi[:30], rtol=0,
                               atol=1e-9 * np.abs(phi[:30]).max())


def test_a_robot_description_robot_exports_a_urdf_file(tmp_path) -> None:
    """``urdf: robot_description`` (the URDF text from the topic): the export writes the URDF it was given, with
    the identified inertias, and a YAML naming that file, which loads without the topic."""
    shipped = load_robot("kr90")
    document = yaml.safe_load(Path(shipped.yaml_path).read_text())
    document.update(urdf="robot_description")
    robot_yaml = tmp_path / "kr90_topic.yaml"
    robot_yaml.write_text(yaml.safe_dump(document, sort_keys=False))
    robot = load_robot(robot_yaml, urdf_text=shipped.urdf_xml)
    assert robot.urdf_path is None
    result = identify_rigid_body(robot, rigid_record(robot, kr90_excitation()), elasticity=False)
    phi = standard_from_base(robot, result)
    exported = write_identified_robot(robot, result, phi, tmp_path / "out.yaml", "test")
    assert yaml.safe_load(exported.yaml.read_text())["urdf"] == "out.urdf"
    np.testing.assert_allclose(standard_parameters(load_robot(exported.yaml))[:30], phi[:30], rtol=0,
                               atol=1e-9 * np.abs(phi[:30]).max())
