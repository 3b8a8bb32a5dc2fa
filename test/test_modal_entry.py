"""The one public modal entry, flexrobot_ros.modal.modal_analysis (and linearize), equals the composed model's modes
for every robot; its callers (identification, ``flexrobot modal``) give the composed model's numbers.

The reference, written out here: the composed model (ElasticRobot, built afresh, not the entry's cache) at its
static equilibrium, linearized by its general path, the exact derivatives of its CasADi force functions
(``ElasticRobot.functions.linearization``, the path of every robot with flexible links), the motor PD added on the
driven rows (the motor of an elastic joint, the joint itself when rigid), modes by seed 000 eqs. 2.13-2.18
(``modes_of``). For elastic joints on rigid links the entry takes seed 000's analytic evaluation instead (pinocchio's
CRBA and gravity derivatives): the two agree to round-off, checked at 1e-9 relative in frequencies and damping
ratios for every shipped robot (``flexrobot info --list``) at two poses, and on two vendor trees with locked joints.
Before the single entry, ``modal_analysis`` dropped moberg5's extra elasticity (1.062 / 6.394 / 8.732 / 11.846 Hz at
q = 0 against the composed model's 1.060 / 6.230 / 7.363 / 8.735 Hz) and refused flexarm2 and mixed4.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot, elastic_joints_only
from flexrobot_ros.modal import linearize, linearize_batch, modal_analysis, modal_coordinates, receptance
from flexrobot_ros.modal.linearization import LinearizedModel, linearize_elastic_joints
from flexrobot_ros.modal.modes import ModalResult, modes_of
from flexrobot_ros.model import load_robot, shipped_robots
from vendor_robots import vendor_robots

RTOL = 1e-9


def composed_reference(robot, q: np.ndarray) -> tuple[ModalResult, list[str]]:
    """(modes, coordinate labels) of the composed model held at ``q`` by the robot's PD (module docstring)."""
    model = ElasticRobot(robot)
    y = model.static_equilibrium(q)
    M, D, K = (np.array(matrix, dtype=float) for matrix in model.functions.linearization(y))
    driven = model.q_index.copy()
    driven[model.elastic_joints] = model.motor_index
    K[driven, driven] += robot.kp
    D[driven, driven] += robot.kd
    labels = [""] * model.size
    for index, joint in zip(model.q_index, robot.joint_names):
        labels[index] = f"q.{joint}"
    for index, name in zip(model.qe_index, model.ext.elastic_names):
        labels[index] = f"q_e.{name}"
    for k in range(model.m):
        labels[model.eta.start + k] = f"eta.{k}"
    for index, j in zip(model.motor_index, model.elastic_joints):
        labels[index] = f"q_m.{robot.joint_names[j]}"
    linearized = LinearizedModel(q=q, q_m=y[model.motors], M_bar=M, D_bar=D, K_bar=K,
                                 K_G=K[np.ix_(model.q_index, model.q_index)])
    return modes_of(linearized), labels


def two_poses(robot) -> list[np.ndarray]:
    """Every joint at 0 clipped into its limits, and a pose spread over the limits (0.3 to 0.7 of each range; 0.5
    rad | m for a joint without limits)."""
    lower, upper = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    spread = np.linspace(0.3, 0.7, robot.n)
    bounded = np.isfinite(lower) & np.isfinite(upper)
    return [np.clip(np.zeros(robot.n), lower, upper),
            np.where(bounded, lower + spread * np.where(bounded, upper - lower, 0.0), 0.5)]


def assert_same_modes(ours: ModalResult, reference: ModalResult, what: str) -> None:
    assert ours.n_modes == reference.n_modes, what
    np.testing.assert_array_equal(ours.overdamped, reference.overdamped, err_msg=what)
    np.testing.assert_allclose(ours.frequencies_hz, reference.frequencies_hz, rtol=RTOL, atol=0, err_msg=what)
    np.testing.assert_allclose(ours.damping_ratios, reference.damping_ratios, rtol=RTOL, atol=0, err_msg=what)
    assert ours.verdict == reference.verdict, what


@pytest.mark.parametrize("name", shipped_robots())
def test_the_entry_is_the_composed_model_for_every_shipped_robot(name):
    """Frequencies [Hz] and damping ratios (fractions) of modal_analysis equal the composed model's to 1e-9
    relative at two poses; the mode shapes' rows are labelled by modal_coordinates as the composed model's
    coordinates (elastic joints alone: [q; q_m], the composed model's order too)."""
    robot = load_robot(name)
    for q in two_poses(robot):
        reference, labels = composed_reference(robot, q)
        ours = modal_analysis(robot, q)
        assert_same_modes(ours, reference, f"{name} at q = {q.tolist()}")
        assert modal_coordinates(robot) == labels
        assert ours.mode_shapes.shape[0] == len(labels)
        assert linearize(robot, q).M_bar.shape == reference.linearized.M_bar.shape


def test_the_shipped_robots_are_those_flexrobot_info_lists(capsys):
    """The parametrization above covers every robot ``flexrobot info --list`` names, of every kind."""
    from flexrobot_ros.cli import main

    assert main(["info", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert listed == list(shipped_robots())
    kinds = {elastic_joints_only(load_robot(name)) for name in listed}
    assert kinds == {True, False}


JOINT = {"stiffness": 2.0e4, "rotor_inertia": 1.0e-5, "gear_ratio": 100, "link_damping": 1.0, "motor_damping": 0.05}


def vendor_robot(folder: Path, name: str) -> object:
    """The Panda with its fingers locked at 0.02 m (a chain after locking), or the TIAGo with torso, arm and head
    elastic (the arm and the head both branch off the torso: a tree) and its other 48 joints locked at 0."""
    import pinocchio as pin

    robots = vendor_robots()
    if name == "panda":
        document = {"robot": "panda", "urdf": str(robots / "panda_description/urdf/panda.urdf"),
                    "tool_frame": "panda_hand",
                    "locked_joints": {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02},
                    "joints": {f"panda_joint{i}": dict(JOINT) for i in range(1, 8)}}
    else:
        urdf = robots / "tiago_description/robots/tiago.urdf"
        elastic = ["torso_lift_joint", *(f"arm_{i}_joint" for i in range(1, 8)), "head_1_joint", "head_2_joint"]
        movable = pin.buildModelFromUrdf(str(urdf)).names[1:]
        document = {"robot": "tiago", "urdf": str(urdf), "tool_frame": "arm_tool_link",
                    "locked_joints": {joint: 0.0 for joint in movable if joint not in elastic},
                    "joints": {joint: dict(JOINT, **({"transmission_radius": 0.01} if joint == "torso_lift_joint"
                                                     else {})) for joint in elastic}}
    document["controller"] = {"kp": 2000.0, "kd": 20.0}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_robot(path)


@pytest.mark.parametrize("name", ["panda", "tiago"])
def test_the_entry_is_the_composed_model_on_trees_with_locked_joints(tmp_path, name):
    """Vendor URDFs (example-robot-data): locked joints (pinocchio's reduced model) and a tree; elastic joints alone,
    so the entry takes seed 000's evaluation; equal to the composed model's CasADi path to 1e-9 at two poses."""
    robot = vendor_robot(tmp_path, name)
    assert elastic_joints_only(robot) and robot.locked_joints
    for q in two_poses(robot):
        reference, labels = composed_reference(robot, q)
        assert_same_modes(modal_analysis(robot, q), reference, f"{name} at q = {q.tolist()}")
        assert modal_coordinates(robot) == labels


def test_elastic_joint_robots_keep_the_analytic_fast_path():
    """For elastic joints alone the entry's matrices are seed 000's analytic evaluation itself (the speed of
    ``bench/modal.py``), pose by pose and batched."""
    robot = load_robot("scompi")
    poses = np.array(two_poses(robot))
    batch = linearize_batch(robot, poses)
    for i, q in enumerate(poses):
        fast = linearize_elastic_joints(robot, q)
        for field in ("q_m", "M_bar", "D_bar", "K_bar", "K_G"):
            np.testing.assert_array_equal(getattr(linearize(robot, q), field), getattr(fast, field))
            np.testing.assert_allclose(getattr(batch, field)[i], getattr(fast, field), rtol=1e-14, atol=1e-9)


TWO_JOINT_POSES = [np.zeros(2), np.array([0.6, -0.4]), np.array([-0.3, 1.1])]


@pytest.mark.parametrize("name", ["moberg5", "flexarm2"])
def test_modal_data_from_model_gives_the_composed_model(name):
    """identification.modal_data_from_model on moberg5 (one extra elasticity) and flexarm2 (rigid joints, flexible
    links, overdamped modes besides): the oscillating modes (the default selection) with the composed model's
    frequencies [Hz] and damping ratios (1e-9 relative) and motor-side shapes (the encoders: the motors' q_m rows,
    a rigid joint's own q row); moberg5 at q = 0 has the issue's 1.060 / 6.230 / 7.363 / 8.735 Hz, not the elastic
    joints' 8.732 Hz third mode."""
    from flexrobot_ros.identification import modal_data_from_model

    robot = load_robot(name)
    data = modal_data_from_model(robot, TWO_JOINT_POSES, shapes="motor")
    for q, pose in zip(TWO_JOINT_POSES, data.poses):
        reference, labels = composed_reference(robot, q)
        oscillating = np.flatnonzero(~reference.overdamped)
        assert len(pose.modes) == oscillating.size > 0
        np.testing.assert_allclose([m.frequency_hz for m in pose.modes], reference.frequencies_hz[oscillating],
                                   rtol=RTOL, atol=0)
        np.testing.assert_allclose([m.damping_ratio for m in pose.modes], reference.damping_ratios[oscillating],
                                   rtol=RTOL, atol=0)
        encoders = [labels.index(f"q_m.{joint}" if f"q_m.{joint}" in labels else f"q.{joint}")
                    for joint in robot.joint_names]
        for mode, k in zip(pose.modes, oscillating):
            np.testing.assert_allclose(mode.shape, reference.mode_shapes[encoders, k], rtol=0, atol=1e-9)
    if name == "moberg5":
        at_zero = [m.frequency_hz for m in data.poses[0].modes]
        np.testing.assert_allclose(at_zero[:4], [1.060, 6.230, 7.363, 8.735], rtol=0, atol=5e-4)
        joints_only = modes_of(linearize_elastic_joints(robot, TWO_JOINT_POSES[0])).frequencies_hz
        assert abs(joints_only[2] - at_zero[2]) > 1.0  # 8.732 against 7.363 Hz: the extra elasticity counts


def test_lowest_natural_frequency_of_an_excitation_is_the_composed_model_of_moberg5():
    """identification.excitation.lowest_natural_frequency on moberg5 along a Fourier excitation (one harmonic,
    0.2 Hz): the lowest composed-model frequency [Hz] over the same 6 instants, to 1e-9 relative."""
    from flexrobot_ros.identification.excitation import FourierTrajectory, lowest_natural_frequency

    robot = load_robot("moberg5")
    trajectory = FourierTrajectory(0.2, np.array([[0.3, -0.2]]), np.array([[0.1, 0.25]]), np.array([0.2, 0.5]))
    poses = trajectory.derivative(np.arange(6) * trajectory.period / 6, 0)
    expected = min(composed_reference(robot, q)[0].frequencies_hz[0] for q in poses)
    assert lowest_natural_frequency(robot, trajectory, poses=6) == pytest.approx(expected, rel=RTOL, abs=0)
    joints_only = min(modes_of(linearize_elastic_joints(robot, q)).frequencies_hz[0] for q in poses)
    assert joints_only != pytest.approx(expected, rel=1e-4)


def test_flexrobot_modal_reports_the_composed_model_of_moberg5(capsys):
    """``flexrobot modal moberg5 --q 0,0 --json``: the composed model's frequencies [Hz] and damping ratios."""
    from flexrobot_ros.cli import main

    assert main(["modal", "moberg5", "--q", "0,0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    reference, labels = composed_reference(load_robot("moberg5"), np.zeros(2))
    np.testing.assert_allclose(report["frequencies_hz"], reference.frequencies_hz, rtol=RTOL, atol=0)
    np.testing.assert_allclose(report["damping_ratios"], reference.damping_ratios, rtol=RTOL, atol=0)
    assert report["coordinates"] == labels


def test_the_receptance_and_participation_refuse_a_robot_beyond_elastic_joints_by_name():
    """The tool receptance and the participation at the tool (the rigid-link Jacobian over [q; q_m]) are refused in
    one line for moberg5 (its modes run over [q, q_e, q_m]) instead of the elastic joints' numbers."""
    from flexrobot_ros.modal import modal_participation

    robot = load_robot("moberg5")
    with pytest.raises(ModalError, match=r"^robot moberg5: the receptance is evaluated for elastic joints on rigid "
                                         r"links only .* extra elasticities"):
        receptance(robot, [0.0, 0.0], [1.0, 10.0])
    with pytest.raises(ModalError, match=r"^robot moberg5: its modes run over the composed model's 5 coordinates, "
                                         r"not \[q; q_m\]: pass jacobian"):
        modal_participation(robot, modal_analysis(robot, [0.0, 0.0]))


def test_the_former_names_warn_and_never_drop_an_elasticity():
    """The former names, kept one release, each warn (DeprecationWarning naming the entry): held_modes'
    held_* give the entry's results; the former elastic-joint entries (modes.modal_analysis, linearization.linearize,
    linearize_batch) give their numbers for elastic joints alone and refuse moberg5 by name instead of dropping its
    extra elasticity."""
    import flexrobot_ros.modal.held_modes as held
    import flexrobot_ros.modal.linearization as linearization
    import flexrobot_ros.modal.modes as modes

    robot, q = load_robot("moberg5"), np.array([0.6, -0.4])
    expected = modal_analysis(robot, q)
    with pytest.warns(DeprecationWarning, match=r"held_modes\.held_modes is deprecated .* use "
                                                r"flexrobot_ros\.modal\.modal_analysis"):
        np.testing.assert_array_equal(held.held_modes(robot, q).frequencies_hz, expected.frequencies_hz)
    with pytest.warns(DeprecationWarning, match=r"held_modes\.held_linearization is deprecated"):
        np.testing.assert_array_equal(held.held_linearization(robot, q).K_bar, expected.linearized.K_bar)
    with pytest.warns(DeprecationWarning, match=r"held_modes\.held_linearization_batch is deprecated"):
        np.testing.assert_array_equal(held.held_linearization_batch(robot, q[None]).K_bar[0],
                                      expected.linearized.K_bar)
    with pytest.warns(DeprecationWarning, match=r"held_modes\.held_coordinates is deprecated"):
        assert held.held_coordinates(robot) == modal_coordinates(robot)

    scompi, q8 = load_robot("scompi"), np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
    with pytest.warns(DeprecationWarning, match=r"flexrobot_ros\.modal\.modes\.modal_analysis is deprecated .* use "
                                                r"flexrobot_ros\.modal\.modal_analysis"):
        from flexrobot_ros.modal.modes import modal_analysis as former
    np.testing.assert_array_equal(former(scompi, q8).frequencies_hz, modal_analysis(scompi, q8).frequencies_hz)
    with pytest.raises(ModalError, match=r"^robot moberg5: .*modes\.modal_analysis \(deprecated\) evaluates elastic "
                                         r"joints on rigid links only; use flexrobot_ros\.modal\.modal_analysis"):
        former(robot, q)
    for name, entry, pose in (("linearize", linearize, q8), ("linearize_batch", linearize_batch, q8[None])):
        with pytest.warns(DeprecationWarning, match=rf"modal\.linearization\.{name} is deprecated"):
            function = getattr(linearization, name)
        np.testing.assert_array_equal(function(scompi, pose).K_bar, entry(scompi, pose).K_bar)
        with pytest.raises(ModalError, match=rf"^robot moberg5: .*linearization\.{name} \(deprecated\)"):
            function(robot, pose[..., :2])
    with pytest.raises(AttributeError):
        getattr(modes, "no_such_name")
