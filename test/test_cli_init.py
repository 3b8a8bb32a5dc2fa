"""Issue 36, item 6: ``flexrobot init URDF --out FILE.yaml`` writes a starter flexibility YAML for a vendor URDF.

Checked on the Panda (7 elastic joints, the two fingers locked), the TIAGo (the arm chain elastic, every other of
its 48 movable joints locked, continuous wheels among them) and the Kinova j2s6s200 (continuous joints 1, 4, 6
elastic), all from the PyPI package example-robot-data: each written file loads, every placeholder is marked, and
``flexrobot modal`` at the start pose reports a stable closed loop. The placeholder rule is checked against
pinocchio's CRBA computed here on the URDF with pinocchio's own reduced model, and against closed forms on one-joint
robots: a pendulum about a vertical axis (M = m l^2 + I_zz; alone on its joint, the closed loop is the two-mass
system written out below) and a vertical slide (M = m). Default chain ends on synthetic trees; bad input gives one
line naming the link or file.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.model import load_robot
from vendor_robots import panda_urdf, vendor_robots

#: The rule the help and the YAML state: locked-rotor frequency [Hz], B / M_ii, kd = 2 zeta_m sqrt((k + kp) B) with
#: kp = k, d_f = 2 zeta_l sqrt(k W^2 M_ii), gear ratio, prismatic transmission radius [m].
F_LOCKED_ROTOR, MOTOR_FRACTION, ZETA_MOTOR, ZETA_LINK, GEAR, RADIUS = 15.0, 0.5, 0.2, 0.02, 100.0, 0.01
#: Relative rounding of the written placeholders (4 significant digits), compounded over two roundings.
ROUNDING = 1.2e-3


def init(capsys, *argv: str) -> dict:
    """``flexrobot init ARGV --json``: its report."""
    assert main(["init", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def modal(capsys, path: Path, q: list[float]) -> dict:
    assert main(["modal", str(path), "--q", ",".join(repr(v) for v in q), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def movable_joints(urdf: Path) -> dict[str, str]:
    """name -> URDF type of every movable joint, read here from the XML."""
    return {joint.get("name"): joint.get("type") for joint in ElementTree.parse(urdf).getroot().findall("joint")
            if joint.get("type") != "fixed"}


def check_rule(robot, urdf: Path) -> None:
    """Every elastic joint of ``robot`` follows the stated rule with M_ii from pinocchio's CRBA of the URDF with the
    robot's locked joints held (pinocchio's buildReducedModel, called here; continuous joints as pinocchio's own
    two-coordinate joints), at the start pose 0 clipped into the limits."""
    full = pin.buildModelFromUrdf(str(urdf))
    reference = pin.neutral(full)
    for name, position in robot.locked_joints.items():
        j = full.getJointId(name)
        q = full.idx_qs[j]
        if full.joints[j].nq == 2:  # continuous: (cos, sin)
            reference[q:q + 2] = np.cos(position), np.sin(position)
        else:
            reference[q] = position
    reduced = pin.buildReducedModel(full, [full.getJointId(name) for name in robot.locked_joints], reference)
    q0 = pin.neutral(reduced)  # a continuous joint's (cos, sin) at angle 0: (1, 0)
    for j in range(1, reduced.njoints):
        if reduced.joints[j].nq == 1:
            q = reduced.idx_qs[j]
            q0[q] = np.clip(0.0, reduced.lowerPositionLimit[q], reduced.upperPositionLimit[q])
    inertia = pin.crba(reduced, reduced.createData(), q0)
    assert list(reduced.names[1:]) == list(robot.joint_names)
    omega = 2 * math.pi * F_LOCKED_ROTOR
    for i, name in enumerate(robot.joint_names):
        m = inertia[i, i]
        w = robot.transmission[i]
        assert robot.stiffness[i] * w**2 / m == pytest.approx(omega**2, rel=ROUNDING), name
        assert robot.motor_inertia[i] * w**2 / m == pytest.approx(MOTOR_FRACTION, rel=ROUNDING), name
        assert robot.gear_ratio[i] == GEAR and robot.kp[i] == robot.stiffness[i]
        assert robot.kd[i] == pytest.approx(2 * ZETA_MOTOR * math.sqrt(2 * robot.stiffness[i] * robot.motor_inertia[i]),
                                            rel=ROUNDING), name
        assert robot.link_damping[i] == pytest.approx(2 * ZETA_LINK * math.sqrt(robot.stiffness[i] * w**2 * m),
                                                      rel=ROUNDING), name
        assert robot.motor_damping[i] == 0.0


def check_placeholders_marked(text: str) -> None:
    """Every number under joints and controller sits on a line marked PLACEHOLDER (or under the marked
    controller key)."""
    document = yaml.safe_load(text)
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("joints:")))
    for line in lines[start + 1:]:
        if line.startswith("    "):
            assert "# PLACEHOLDER [" in line, line
        elif line.startswith("controller:"):
            assert "# PLACEHOLDER" in line, line
    assert document["controller"]["kp"] and document["controller"]["kd"]
    assert text.count("# PLACEHOLDER [N m/rad]: measure it") == len(document["joints"])


def test_panda_fingers_locked_seven_joints_elastic(tmp_path, capsys):
    urdf = panda_urdf()
    out = tmp_path / "panda.yaml"
    report = init(capsys, str(urdf), "--out", str(out))
    assert report["base"] == "panda_link0" and not report["base_given"]  # the root link
    assert report["tip"] == "panda_hand" and not report["tip_given"]  # the fingers tie: stop at the hand
    robot = load_robot(out)
    assert robot.joint_names == tuple(f"panda_joint{k}" for k in range(1, 8))
    assert dict(robot.locked_joints) == {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}  # limits [0, 0.04]
    assert robot.tool_frame == "panda_hand" and robot.continuous_joints == ()
    check_rule(robot, urdf)
    check_placeholders_marked(out.read_text())
    q0 = report["start_pose"]
    assert q0 == [0, 0, 0, -0.0698, 0, 0, 0]  # joint 4's limits are [-3.0718, -0.0698] rad
    result = modal(capsys, out, q0)
    assert result["stable"] and result["verdict"] == "stable"
    assert 1.0 < min(result["frequencies_hz"]) and max(result["frequencies_hz"]) < 200.0
    assert result["frequencies_hz"] == pytest.approx(report["frequencies_hz"], rel=1e-12)


def test_panda_text_output_says_what_was_done(tmp_path, capsys):
    urdf = panda_urdf()
    out = tmp_path / "panda.yaml"
    assert main(["init", str(urdf), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out}" in text and "it loads" in text
    assert "elastic chain: panda_link0 (the root link) -> panda_hand (the end of the longest chain)" in text
    assert "fixed frames below it: panda_hand_tcp" in text
    assert re.search(r"panda_finger_joint1\s+prismatic\s+0 m", text)
    assert "continuous joints (revolute without position limits): none" in text
    assert "verdict: stable" in text and f"flexrobot modal {out} --q 0,0,0,-0.0698,0,0,0" in text
    assert main(["init", str(urdf), "--out", str(out)]) == 2  # no overwriting without --force
    assert "already exists; give --force" in capsys.readouterr().err
    assert main(["init", str(urdf), "--out", str(out), "--force", "--tip-link", "panda_hand_tcp"]) == 0
    assert load_robot(out).tool_frame == "panda_hand_tcp"


def test_tiago_arm_chain_elastic_everything_else_locked(tmp_path, capsys):
    """The TIAGo's arm: torso_lift_link (the torso's moving part) to arm_tool_link (the flange), read off its URDF;
    torso lift, head, hand and the continuous wheels are locked."""
    urdf = vendor_robots() / "tiago_description" / "robots" / "tiago.urdf"
    movable = movable_joints(urdf)
    assert len(movable) == 48
    out = tmp_path / "tiago.yaml"
    report = init(capsys, str(urdf), "--base-link", "torso_lift_link", "--tip-link", "arm_tool_link",
                  "--out", str(out))
    robot = load_robot(out)
    arm = tuple(f"arm_{k}_joint" for k in range(1, 8))
    assert robot.joint_names == arm and robot.tool_frame == "arm_tool_link"
    assert set(robot.locked_joints) == set(movable) - set(arm)
    assert robot.locked_joints["torso_lift_joint"] == 0.0  # prismatic, limits [0, 0.35] m
    locked = {j["name"]: j for j in report["locked_joints"]}
    assert locked["wheel_left_joint"]["urdf_type"] == locked["wheel_right_joint"]["urdf_type"] == "continuous"
    assert locked["torso_lift_joint"]["unit"] == "m"
    full = pin.buildModelFromUrdf(str(urdf))
    for name, position in robot.locked_joints.items():
        q = full.idx_qs[full.getJointId(name)]
        if movable[name] != "continuous":
            assert full.lowerPositionLimit[q] <= position <= full.upperPositionLimit[q], name
    check_rule(robot, urdf)
    result = modal(capsys, out, report["start_pose"])
    assert result["stable"]


def test_tiago_default_chain_is_torso_and_arm(tmp_path, capsys):
    """Defaults: the root link base_footprint; descending, the torso's branch is longest (lift + arm + hand), then
    the arm's (7 + hand fingers > head's 2), and the hand's four fingers tie at 7 joints: the tip is the palm."""
    urdf = vendor_robots() / "tiago_description" / "robots" / "tiago.urdf"
    report = init(capsys, str(urdf), "--out", str(tmp_path / "tiago.yaml"))
    assert (report["base"], report["tip"]) == ("base_footprint", "hand_palm_link")
    assert [j["name"] for j in report["elastic_joints"]] == ["torso_lift_joint"] + [f"arm_{k}_joint" for k in
                                                                                    range(1, 8)]
    assert report["elastic_joints"][0]["urdf_type"] == "prismatic" and report["stable"]
    check_rule(load_robot(tmp_path / "tiago.yaml"), urdf)


def test_kinova_continuous_joints_are_elastic(tmp_path, capsys):
    urdf = vendor_robots() / "kinova_description" / "robots" / "kinova.urdf"
    out = tmp_path / "kinova.yaml"
    report = init(capsys, str(urdf), "--out", str(out))
    robot = load_robot(out)
    continuous = ("j2s6s200_joint_1", "j2s6s200_joint_4", "j2s6s200_joint_6")
    assert robot.n == 6 and robot.locked_joints == {} and robot.continuous_joints == continuous
    assert [j["name"] for j in report["elastic_joints"] if j["urdf_type"] == "continuous"] == list(continuous)
    for name in continuous:
        i = robot.joint_index(name)
        assert robot.lower_limits[i] == -np.inf and robot.upper_limits[i] == np.inf
    check_rule(robot, urdf)
    result = modal(capsys, out, report["start_pose"])
    assert result["stable"]
    assert main(["info", str(out)]) == 0
    assert ("continuous joints (elastic, revolute without position limits): " + ", ".join(continuous)
            in capsys.readouterr().out)


LINK = ("<link name='{name}'><inertial><origin xyz='{x} 0 0'/><mass value='{m}'/>"
        "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.02' iyz='0' izz='{izz}'/></inertial></link>")


def test_one_pendulum_closed_form_modes(tmp_path, capsys):
    """A link of mass 2 kg at l = 0.3 m on a joint about the vertical axis (gravity does no work): M = m l^2 +
    I_zz = 0.19 kg m^2. The written k, B, kp, kd, d_f follow the rule for that M, and flexrobot modal's two modes
    equal the eigenvalues of the two-mass system M q'' + d_f q' + k (q - q_m) = 0,
    B q_m'' + kd q_m' + kp q_m + k (q_m - q) = 0, written out here."""
    (tmp_path / "one.urdf").write_text(
        "<robot name='one'><link name='base'/>" + LINK.format(name="arm", x=0.3, m=2.0, izz=0.01)
        + "<joint name='j1' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 0 1'/>"
          "<limit lower='-2' upper='2' effort='10' velocity='1'/></joint></robot>")
    report = init(capsys, str(tmp_path / "one.urdf"), "--out", str(tmp_path / "one.yaml"))
    assert "urdf: one.urdf\n" in (tmp_path / "one.yaml").read_text()  # beside the YAML: relative
    robot = load_robot(tmp_path / "one.yaml")
    m = 2.0 * 0.3**2 + 0.01
    k, b, kd, d = robot.stiffness[0], robot.motor_inertia[0], robot.kd[0], robot.link_damping[0]
    assert k == pytest.approx(m * (2 * math.pi * 15) ** 2, rel=5e-4) and b == pytest.approx(0.5 * m, rel=5e-4)
    assert robot.rotor_inertia[0] == pytest.approx(0.5 * m / 100**2, rel=5e-4)
    mass, damping = np.diag([m, b]), np.diag([d, kd])
    stiffness = np.array([[k, -k], [-k, k + robot.kp[0]]])
    state = np.block([[np.zeros((2, 2)), np.eye(2)],
                      [-np.linalg.solve(mass, stiffness), -np.linalg.solve(mass, damping)]])
    eigenvalues = np.linalg.eigvals(state)
    eigenvalues = eigenvalues[eigenvalues.imag > 0]
    eigenvalues = eigenvalues[np.argsort(np.abs(eigenvalues))]
    assert report["frequencies_hz"] == pytest.approx(np.abs(eigenvalues) / (2 * math.pi), rel=1e-9)
    assert report["damping_ratios"] == pytest.approx(-eigenvalues.real / np.abs(eigenvalues), rel=1e-9)
    # the docstring's numbers: 0.67 and 2.1 times the locked-rotor frequency, damped about 11 % and 16 %
    assert np.array(report["frequencies_hz"]) / 15 == pytest.approx([0.668, 2.12], abs=0.01)
    assert np.array(report["damping_ratios"]) == pytest.approx([0.11, 0.16], abs=0.01)


def test_vertical_slide_closed_form(tmp_path, capsys):
    """A prismatic joint along z carrying 5 kg: M = 5 kg; k = M (2 pi 15)^2 r^2 with r = 0.01 m, B = 0.5 M r^2."""
    (tmp_path / "slide.urdf").write_text(
        "<robot name='slide'><link name='base'/>" + LINK.format(name="carriage", x=0.0, m=5.0, izz=0.03)
        + "<joint name='z' type='prismatic'><parent link='base'/><child link='carriage'/><axis xyz='0 0 1'/>"
          "<limit lower='0.2' upper='1' effort='100' velocity='1'/></joint></robot>")
    report = init(capsys, str(tmp_path / "slide.urdf"), "--out", str(tmp_path / "slide.yaml"))
    robot = load_robot(tmp_path / "slide.yaml")
    assert robot.joint_types == ("prismatic",) and robot.transmission[0] == pytest.approx(1 / RADIUS)
    assert robot.stiffness[0] == pytest.approx(5.0 * (2 * math.pi * 15) ** 2 * RADIUS**2, rel=5e-4)
    assert robot.motor_inertia[0] == pytest.approx(0.5 * 5.0 * RADIUS**2, rel=5e-4)
    assert report["start_pose"] == [0.2]  # 0 clipped into [0.2, 1] m
    assert report["elastic_joints"][0]["locked_rotor_hz"] == pytest.approx(15.0, rel=5e-4)
    assert report["stable"]


def test_xacro_arguments_reach_the_file(tmp_path, capsys):
    """--xacro-arg mass:=3: the YAML names the xacro file with xacro_args, and the mass reaches M = m l^2 + I_zz."""
    (tmp_path / "arm.urdf.xacro").write_text(
        "<robot name='arm' xmlns:xacro='http://www.ros.org/wiki/xacro'><xacro:arg name='mass' default='1'/>"
        "<link name='base'/><link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='$(arg mass)'/>"
        "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial></link>"
        "<joint name='j1' type='continuous'><parent link='base'/><child link='arm'/><axis xyz='0 0 1'/></joint>"
        "</robot>")
    pytest.importorskip("xacro")
    init(capsys, str(tmp_path / "arm.urdf.xacro"), "--xacro-arg", "mass:=3", "--out", str(tmp_path / "arm.yaml"))
    assert yaml.safe_load((tmp_path / "arm.yaml").read_text())["xacro_args"] == {"mass": "3"}
    robot = load_robot(tmp_path / "arm.yaml")
    assert robot.continuous_joints == ("j1",)
    assert robot.stiffness[0] == pytest.approx((3 * 0.5**2 + 0.01) * (2 * math.pi * 15) ** 2, rel=5e-4)


def tree_urdf(joints: list[tuple[str, str, str, str]]) -> str:
    """A URDF of (joint, type, parent, child) rows, every link 1 kg at 0.1 m along x."""
    links = {"root"} | {child for *_, child in joints}
    body = "".join(LINK.format(name=link, x=0.1, m=1.0, izz=0.01) for link in sorted(links))
    rows = "".join(f"<joint name='{name}' type='{kind}'><parent link='{parent}'/><child link='{child}'/>"
                   "<axis xyz='0 1 0'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"
                   for name, kind, parent, child in joints)
    return f"<robot name='tree'>{body}{rows}</robot>"


@pytest.mark.parametrize("joints, tip", [
    # a two-finger gripper: the fingers tie (one joint each), the chain stops at the hand
    ([("j1", "revolute", "root", "l1"), ("j2", "revolute", "l1", "hand"), ("f1", "prismatic", "hand", "finger1"),
      ("f2", "prismatic", "hand", "finger2"), ("tcp", "fixed", "hand", "tcp")], "hand"),
    # the longer branch wins (2 joints against 1), then a single fixed child is followed to the flange
    ([("j1", "revolute", "root", "l1"), ("a", "revolute", "l1", "a1"), ("b", "revolute", "a1", "a2"),
      ("h", "revolute", "l1", "head"), ("flange", "fixed", "a2", "tool0")], "tool0"),
    # only fixed joints below, two of them: stop at the last moving link
    ([("j1", "revolute", "root", "l1"), ("x", "fixed", "l1", "tool0"), ("y", "fixed", "l1", "camera")], "l1"),
])
def test_default_tip(tmp_path, capsys, joints, tip):
    (tmp_path / "tree.urdf").write_text(tree_urdf(joints))
    report = init(capsys, str(tmp_path / "tree.urdf"), "--out", str(tmp_path / "tree.yaml"))
    assert report["tip"] == tip and report["tool_frame"] == tip


@pytest.mark.parametrize("argv, message", [
    (["{tmp}/missing.urdf"], "{tmp}/missing.urdf: no such URDF file"),
    (["{panda}", "--base-link", "panda_link99"], "base link 'panda_link99': no such link in URDF {panda}"),
    (["{panda}", "--tip-link", "gripper"], "tip link 'gripper': no such link in URDF {panda}"),
    (["{panda}", "--base-link", "panda_link5", "--tip-link", "panda_link2"],
     "tip link 'panda_link2' is not below base link 'panda_link5' in URDF {panda}"),
    (["{panda}", "--base-link", "panda_leftfinger", "--tip-link", "panda_rightfinger"],
     "tip link 'panda_rightfinger' is not below base link 'panda_leftfinger'"),
    (["{panda}", "--base-link", "panda_hand", "--tip-link", "panda_hand_tcp"],
     "base link 'panda_hand', tip link 'panda_hand_tcp': no movable joint between them in URDF {panda}"),
    (["{panda}", "--xacro-arg", "arm_id:=fr3"], "--xacro-arg: {panda} is not a .xacro file"),
    (["{tmp}/arm.urdf.xacro", "--xacro-arg", "mass=3"], "--xacro-arg 'mass=3': expected NAME:=VALUE"),
    (["{tmp}/massless.urdf"], "joint 'j2' drives no inertia at the start pose"),
])
def test_bad_input_is_one_line_naming_the_link_or_file(tmp_path, capsys, argv, message):
    panda = panda_urdf()
    (tmp_path / "arm.urdf.xacro").write_text("<robot name='a'><link name='base'/></robot>")
    (tmp_path / "massless.urdf").write_text(
        "<robot name='m'><link name='base'/>" + LINK.format(name="arm", x=0.3, m=2.0, izz=0.01)
        + "<link name='flange'/><joint name='j1' type='revolute'><parent link='base'/><child link='arm'/>"
          "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"
          "<joint name='j2' type='revolute'><parent link='arm'/><child link='flange'/><axis xyz='1 0 0'/>"
          "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint></robot>")
    fill = {"tmp": tmp_path, "panda": panda}
    out = tmp_path / "out.yaml"
    assert main(["init", *[a.format(**fill) for a in argv], "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flexrobot init: error: ") and err.count("\n") == 1, err
    assert message.format(**fill) in err, err
    assert not out.exists() and not list(tmp_path.glob(".*.yaml"))  # nothing written, no temporary left


def test_info_lists_locked_joints_and_dashes_for_rigid_joints(tmp_path, capsys):
    """Issue 36, item 4: ``flexrobot info`` on a starter file names the locked joints with their positions and
    units (text and --json); on the Canadarm (three rigid joints) the spring's and motor model's columns K, B, N, W,
    d_fm show '-', the link damping d_f its number and the PD gains theirs (config/canadarm.yaml: kp 2e4, the PD
    acts on the rigid joint itself)."""
    out = tmp_path / "panda.yaml"
    init(capsys, str(panda_urdf()), "--out", str(out))
    assert main(["info", str(out)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  panda_finger_joint1\s+prismatic\s+0 m$", text, re.MULTILINE), text
    assert main(["info", str(out), "--json"]) == 0
    locked = json.loads(capsys.readouterr().out)["locked_joints"]
    assert locked == [{"name": f"panda_finger_joint{k}", "urdf_type": "prismatic", "position": 0.0, "unit": "m"}
                      for k in (1, 2)]
    assert main(["info", "canadarm"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("joint") and "(rigid)"
            in line]
    assert len(rows) == 3
    for row in rows:  # joint, revolute, (rigid), K, B, N, W, d_f, d_fm, Kp, Kd
        assert row[3:7] == ["-"] * 4 and row[8] == "-" and float(row[7]) >= 0.0 and float(row[9]) == 2e4, row
