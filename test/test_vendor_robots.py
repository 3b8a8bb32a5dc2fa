"""Issue 36, item 7: the package on real vendor files (example-robot-data, installed by the test extra): the Franka
Panda with its fingers locked, the UR10, the Kinova j2s6s200 with its continuous joints 1, 4, 6, and TIAGo's arm with
the rest of TIAGo (wheels, torso, head, hand) locked; the flexibility YAMLs and their parameters: vendor_cases.py.

For each robot, through the commands a user runs (in process, ``flexrobot_ros.cli.main``):

a. ``flexrobot info`` lists the modelled joints and only those (the locked ones apart), continuous joints marked.
b. ``flexrobot modal`` at three poses equals an independent linearization written here to 1e-6: pinocchio's reduced
   model built from the vendor URDF as it is (``pin.buildReducedModel`` with the locked joints at their positions;
   continuous joints as pinocchio's own two-coordinate joint, configuration (cos q, sin q), whose tangent is the
   angle), then seed 000 eqs. 2.9-2.11 (M(q) from ``pin.crba``, K_G from ``pin.computeGeneralizedGravityDerivatives``,
   the motor PD with gravity compensation), the state matrix of eq. 2.14 and its eigenvalues (eqs. 2.16-2.17), and
   the motor set point of eq. 2.3.
c. ``flexrobot feedforward`` (its default method, SDRNEA's generated code) of a rest-to-rest quintic from pose A,
   fed to ``flexrobot simulate --feedforward``: the worst joint error is at least 20x smaller than with
   ``--method rigid`` (the rigid-robot feedforward).

The bring-ups of the four robots (item d) are in test_vendor_bringup.py (node processes: a process-test unit).
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.commands.bringup import DEFAULT_STEP, plan_poses
from flexrobot_ros.model import load_robot
from flexrobot_ros.timeseries import read_timeseries
from vendor_cases import ROBOTS
from vendor_robots import vendor_folder

FOLDER = vendor_folder()
pytestmark = pytest.mark.skipif(FOLDER is None, reason="example-robot-data is not installed (pip install .[test])")

NAMES = sorted(ROBOTS)
#: The acceptance of item c: the feedforward's worst joint error at least this much below the rigid baseline's.
RIGID_RATIO = 20.0


@pytest.fixture(scope="module")
def yamls(tmp_path_factory):
    """The four flexibility YAMLs on the installed vendor URDFs: {robot: path}."""
    directory = tmp_path_factory.mktemp("vendor")
    return {name: robot.write_yaml(FOLDER, directory) for name, robot in ROBOTS.items()}


def document(path) -> dict:
    """A flexibility YAML as the data it holds."""
    return yaml.safe_load(path.read_text())


def urdf_joints(name: str) -> dict[str, str]:
    """Every joint of the vendor URDF: name -> URDF type."""
    root = ElementTree.parse(ROBOTS[name].urdf_path(FOLDER)).getroot()
    return {joint.get("name"): joint.get("type") for joint in root.findall("joint")}  # not <transmission>s' joints


# ------------------------------------------------------------------------------------------------------ a. info

@pytest.mark.parametrize("name", NAMES)
def test_info_lists_the_modelled_joints_only(name, yamls, capsys):
    """The table has one row per joint of the YAML, in its order, and no other joint of the URDF (the locked ones
    are in a table of their own, with their positions); ``--json`` says which joints are continuous and which are
    locked at what."""
    content, kinds = document(yamls[name]), urdf_joints(name)
    joints, locked = list(content["joints"]), content.get("locked_joints") or {}
    assert main(["info", str(yamls[name])]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("joint "))
    rows = lines[header + 2:header + 2 + len(joints)]
    assert [row.split()[0] for row in rows] == joints
    # continuous joints are revolute joints without limits, named on a line of their own
    assert [row.split()[1] for row in rows] == [kinds[joint].replace("continuous", "revolute") for joint in joints]
    assert len({len(line.rstrip()) for line in lines[header:header + 2] + rows}) == 1  # aligned, whatever the names
    continuous = [j for j in joints if kinds[j] == "continuous"]
    assert any(line.startswith("continuous joints") and all(j in line for j in continuous) for line in lines) \
        == bool(continuous)
    if locked:
        at = lines.index("locked joints (held at a position):")
        held = {line.split()[0]: line.split()[2:] for line in lines[at + 2:at + 2 + len(locked)]}
        assert held == {joint: [f"{value:g}", "m" if kinds[joint] == "prismatic" else "rad"]
                        for joint, value in locked.items()}
    others = set(kinds) - set(joints) - set(locked)
    assert not any(line.split() and line.split()[0] in others for line in lines)
    assert main(["info", str(yamls[name]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [j["name"] for j in info["joints"]] == joints and info["n"] == len(joints)
    assert info["continuous_joints"] == continuous
    assert {entry["name"]: entry["position"] for entry in info["locked_joints"]} == locked
    movable = {joint for joint, kind in kinds.items() if kind in ("revolute", "continuous", "prismatic")}
    assert set(joints) | set(locked) == movable and not set(joints) & set(locked)
    print(f"{name}: {len(joints)} joints modelled, {len(locked)} locked, "
          f"continuous {[j for j in joints if kinds[j] == 'continuous']}")


# ------------------------------------------------------------------------------------------------------ b. modes

def configuration(nq: int, angle: float) -> np.ndarray:
    """A one-degree-of-freedom joint's configuration: the angle or length, or (cos, sin) for pinocchio's
    unbounded revolute joint (a URDF continuous joint)."""
    return np.array([angle]) if nq == 1 else np.array([np.cos(angle), np.sin(angle)])


def reduced_model(content: dict) -> pin.Model:
    """Pinocchio's model of the vendor URDF as it is, with the YAML's locked joints fixed at their positions."""
    full = pin.buildModelFromUrdf(content["urdf"])
    locked = content.get("locked_joints") or {}
    reference = pin.neutral(full)
    for joint, position in locked.items():
        j = full.getJointId(joint)
        reference[full.idx_qs[j]:full.idx_qs[j] + full.joints[j].nq] = configuration(full.joints[j].nq, position)
    model = pin.buildReducedModel(full, sorted(full.getJointId(joint) for joint in locked), reference) \
        if locked else full
    model.gravity = pin.Motion(np.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0]))  # the YAMLs' default gravity
    return model


def independent_modes(content: dict, pose: tuple[float, ...]) -> dict[str, np.ndarray]:
    """Seed 000 eqs. 2.3, 2.9-2.11, 2.14, 2.16-2.17 on pinocchio's reduced model of a flexibility YAML's content:
    frequencies [Hz] ascending, damping ratios (fractions), motor set point q_m [rad] and the largest real part [1/s]
    of the 4n eigenvalues."""
    model = reduced_model(content)
    names = [model.names[j] for j in range(1, model.njoints)]
    assert names == list(content["joints"])  # the pose's order
    q = np.concatenate([configuration(model.joints[j].nq, angle) for j, angle in zip(range(1, model.njoints), pose)])
    data = model.createData()
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    k_g = pin.computeGeneralizedGravityDerivatives(model, data, q)  # dg/dq in the tangent space (the angles)
    gravity = pin.computeGeneralizedGravity(model, data, q)
    joints = [content["joints"][joint] for joint in names]
    k = np.array([p["stiffness"] for p in joints])
    b = np.array([p["gear_ratio"] ** 2 * p["rotor_inertia"] for p in joints])
    d, d_m = np.array([p["link_damping"] for p in joints]), np.array([p["motor_damping"] for p in joints])
    kp, kd = np.array(content["controller"]["kp"]), np.array(content["controller"]["kd"])
    n, zero = len(names), np.zeros((len(names), len(names)))
    m_bar = np.block([[mass, zero], [zero, np.diag(b)]])                                   # eq. 2.9
    d_bar = np.diag(np.concatenate([d, d_m + kd]))                                        # eq. 2.10 (W = I)
    k_bar = np.block([[k_g + np.diag(k), -np.diag(k)], [-np.diag(k), np.diag(k + kp)]])   # eq. 2.11
    a = np.block([[np.zeros((2 * n, 2 * n)), np.eye(2 * n)],
                  [-np.linalg.solve(m_bar, k_bar), -np.linalg.solve(m_bar, d_bar)]])      # eq. 2.14
    eigenvalues = np.linalg.eigvals(a)
    modes = eigenvalues[(eigenvalues.imag > 0) | (eigenvalues.imag == 0)]  # one per pair, one per real eigenvalue
    omega = np.abs(modes)                                                                 # eq. 2.16
    order = np.argsort(omega)
    return {"frequencies_hz": omega[order] / (2 * np.pi), "damping_ratios": -modes.real[order] / omega[order],
            "q_m": np.array(pose) + gravity / k, "max_real": eigenvalues.real.max()}             # eqs. 2.17, 2.3


@pytest.mark.parametrize("name", NAMES)
def test_modal_equals_an_independent_linearization_at_three_poses(name, yamls, capsys):
    """``flexrobot modal --json`` at poses A, B, C: frequencies and damping ratios equal the independent
    linearization's to 1e-6 (relative), the motor set point too, and the verdict is stable (every eigenvalue's real
    part negative in the independent spectrum as well)."""
    robot, report = ROBOTS[name], []
    for label, pose in (("A", robot.pose_a), ("B", robot.pose_b), ("C", robot.pose_c)):
        assert main(["modal", str(yamls[name]), "--q", ",".join(repr(v) for v in pose), "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        expected = independent_modes(document(yamls[name]), pose)
        assert result["stable"] is True and result["verdict"] == "stable" and expected["max_real"] < 0
        np.testing.assert_allclose(result["frequencies_hz"], expected["frequencies_hz"], rtol=1e-6, atol=0)
        np.testing.assert_allclose(result["damping_ratios"], expected["damping_ratios"], rtol=1e-6, atol=0)
        np.testing.assert_allclose(result["q_m"], expected["q_m"], rtol=1e-6, atol=1e-12)
        frequencies = np.array(result["frequencies_hz"])
        report.append(f"{name} pose {label}: {frequencies.size} modes {frequencies[0]:.3f} .. {frequencies[-1]:.1f} "
                      f"Hz, damping {100 * min(result['damping_ratios']):.2f} .. "
                      f"{100 * max(result['damping_ratios']):.2f} %; max |df/f| "
                      f"{np.max(np.abs(frequencies / expected['frequencies_hz'] - 1)):.1e}")
    print("\n".join(report))


# ------------------------------------------------------------------------------------------------------ c. motion

def quintic(q0: np.ndarray, qf: np.ndarray, duration: float, t: np.ndarray) -> np.ndarray:
    """Rest-to-rest quintic q0 + (qf - q0)(10 s^3 - 15 s^4 + 6 s^5), s = t / duration (samples, joints) [rad]."""
    s = np.clip(t / duration, 0.0, 1.0)[:, None]
    return q0 + (qf - q0) * (10 * s**3 - 15 * s**4 + 6 * s**5)


@pytest.mark.parametrize("name", NAMES)
def test_feedforward_tracks_a_quintic_20x_better_than_the_rigid_feedforward(name, yamls, tmp_path, capsys):
    """A quintic from pose A (a few joints, within the position, velocity and effort limits: no warning) through
    ``flexrobot feedforward`` (default method: SDRNEA) and ``flexrobot simulate --feedforward`` (the YAML's motor PD,
    1 kHz, the move and 0.5 s after): the worst |q - q_ref| is at least 20x smaller than with ``--method rigid``."""
    robot, model = ROBOTS[name], load_robot(yamls[name])
    q0, qf = np.array(robot.pose_a), np.add(robot.pose_a, robot.move)
    trajectory = tmp_path / "move.yaml"
    trajectory.write_text(yaml.safe_dump({"degree": 5, "waypoints": [
        {"t": 0.0, "q": q0.tolist()}, {"t": robot.move_s, "q": qf.tolist()}]}))  # two waypoints: the quintic
    errors = {}
    for method in ("default", "rigid"):
        ff, out = tmp_path / f"{method}.csv", tmp_path / f"{method}_sim.csv"
        chosen = [] if method == "default" else ["--method", "rigid"]
        assert main(["feedforward", str(yamls[name]), "--trajectory", str(trajectory), "--out", str(ff), *chosen]) == 0
        printed = capsys.readouterr()
        assert "warning" not in printed.err, printed.err
        assert f"({'sdrnea' if method == 'default' else 'rigid'}," in printed.out
        t, columns = read_timeseries(ff)
        q = np.stack([columns[f"q.{joint}"] for joint in model.joint_names], axis=1)
        np.testing.assert_allclose(q, quintic(q0, qf, robot.move_s, t), rtol=0, atol=1e-9)
        tau = np.stack([columns[f"tau.{joint}"] for joint in model.joint_names], axis=1)
        assert np.all(np.abs(tau).max(axis=0) < model.effort_limits), (np.abs(tau).max(axis=0), model.effort_limits)
        assert main(["simulate", str(yamls[name]), "--feedforward", str(ff), "--duration", str(robot.move_s + 0.5),
                     "--out", str(out)]) == 0
        capsys.readouterr()
        _, simulated = read_timeseries(out)
        errors[method] = max(np.abs(simulated[f"error.{joint}"]).max() for joint in model.joint_names)
    print(f"{name}: max |q - q_ref| {errors['default']:.3e} rad with the SDRNEA feedforward, {errors['rigid']:.3e} rad "
          f"with the rigid one: {errors['rigid'] / errors['default']:.0f}x")
    assert 0 < errors["default"] * RIGID_RATIO <= errors["rigid"]


# ------------------------------------------------------------------------------------------------------ bring-up plan

def test_scripted_bringup_starts_where_the_simulator_holds_a_panda(yamls):
    """Without set points the scripted bring-up plans from the pose the simulator holds, zeros clipped to the
    joint limits (the Panda's joint 4 range [-3.07, -0.07] rad excludes 0: the plan from zeros was refused by the
    feedforward node and reported pose A at zeros), and moves 0.2 rad on the first three joints within the limits
    (the other way where a limit is nearer)."""
    robot = load_robot(yamls["panda"])
    urdf = pin.buildModelFromUrdf(str(ROBOTS["panda"].urdf_path(FOLDER)))
    lower, upper = urdf.lowerPositionLimit[:7], urdf.upperPositionLimit[:7]
    start, target = plan_poses(robot, [], [])
    np.testing.assert_array_equal(start, np.clip(np.zeros(7), lower, upper))
    assert start[3] == upper[3] < 0
    np.testing.assert_allclose(target - start, [DEFAULT_STEP] * 3 + [0.0] * 4, rtol=0, atol=1e-15)
    at_limit = np.array(ROBOTS["panda"].pose_a)
    at_limit[0] = upper[0]
    start, target = plan_poses(robot, at_limit.tolist(), [])
    np.testing.assert_allclose(target - start, [-DEFAULT_STEP, DEFAULT_STEP, DEFAULT_STEP, 0, 0, 0, 0], atol=1e-15)
    assert robot.limit_violation(np.stack([start, target])) is None


def test_tool_space_feedforward_of_a_7_axis_arm_is_refused_in_one_line(yamls, tmp_path, capsys):
    """``flexrobot feedforward panda.yaml --line ...`` (and ``--tool-path``): the tool-space inversion controls the
    tool point's x, y, z; a 7-axis arm is refused naming the count (it asked for 'tool_axes', the 7 tool-point
    coordinates to control, which the tool point does not have and the command line cannot give)."""
    out = tmp_path / "line.csv"
    assert main(["feedforward", str(yamls["panda"]), "--line", "0.4,0.1,0.5", "0.5,0.1,0.5", "--duration", "1",
                 "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "robot panda: 7 actuators for the tool point's 3 coordinates" in error, error
    assert "joint-space trajectory" in error and not out.exists()
