"""Rigid-body identification from records as robots write them (issue 37, item 1): a non-uniform clock, a prismatic
joint, efforts in drive units, the joints whose torques are fitted, a velocity threshold for the friction model,
torque offsets, coupled transmissions, channels named by a pattern, several files of one recording, and the bad
input of such records (one line naming the column, the sample, the joint or the field; exit status 2).

The robot: a 4-joint arm written here (a vertical prismatic lift, then three revolute joints; every joint
``rigid: true``). The references are independent of the code under test: the torques of the simulated records are
pinocchio's RNEA on the URDF (parsed by pinocchio here, not by the package's loader) plus the rotor inertia,
friction and offset terms written out below, along closed-form Fourier trajectories; with coupled transmissions the
motor torques G^-T tau + B thetadd + F_v thetad + F_c sgn(thetad) are written out the same way. The identified model
is judged by the torques it predicts along another trajectory (end-to-end against that reference) and by the
parameters that are base parameters on their own (friction, offsets), against the values used.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.errors import IdentificationError, ModelError
from flexrobot_ros.identification.rigid_body import RigidRecord, identify_rigid_body
from flexrobot_ros.identification.rigid_record import Channels, RecordWarning, read_record
from flexrobot_ros.identification.rigid_regressor import regressor
from flexrobot_ros.model import load_robot
from flexrobot_ros.timeseries import write_timeseries

URDF = """<robot name="lift_arm">
  <link name="base"/>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="torso"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="0.0" upper="0.4" effort="1000" velocity="1"/></joint>
  <link name="torso"><inertial><origin xyz="0.01 0.02 0.1"/><mass value="8.0"/>
    <inertia ixx="0.3" ixy="0.01" ixz="0.0" iyy="0.25" iyz="0.02" izz="0.1"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="torso"/><child link="upper"/><origin xyz="0.1 0 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="100" velocity="3"/></joint>
  <link name="upper"><inertial><origin xyz="0.2 0.01 0.0"/><mass value="3.0"/>
    <inertia ixx="0.01" ixy="0.001" ixz="0.002" iyy="0.05" iyz="0.0" izz="0.05"/></inertial></link>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.4 0 0" rpy="1.5707963267948966 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="100" velocity="3"/></joint>
  <link name="fore"><inertial><origin xyz="0.15 0.0 0.02"/><mass value="2.0"/>
    <inertia ixx="0.005" ixy="0.0" ixz="0.001" iyy="0.02" iyz="0.001" izz="0.02"/></inertial></link>
  <joint name="wrist" type="revolute"><parent link="fore"/><child link="hand"/>
    <origin xyz="0.3 0 0" rpy="0 1.5707963267948966 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="100" velocity="3"/></joint>
  <link name="hand"><inertial><origin xyz="0.0 0.03 0.05"/><mass value="1.0"/>
    <inertia ixx="0.002" ixy="0.0" ixz="0.0" iyy="0.002" iyz="0.0" izz="0.001"/></inertial></link>
</robot>
"""
JOINTS = ("lift", "shoulder", "elbow", "wrist")
#: Rotor inertia [kg | kg m^2], viscous [N s/m | N m s/rad] and Coulomb friction [N | N m], torque offsets [N | N m]
#: of the simulated records (lift, shoulder, elbow, wrist).
ARMATURE = np.array([0.5, 0.05, 0.03, 0.01])
VISCOUS = np.array([20.0, 0.5, 0.3, 0.1])
COULOMB = np.array([5.0, 0.8, 0.5, 0.2])
OFFSET = np.array([3.0, 0.2, -0.3, 0.1])
#: Wrist coupling of the coupled robot: the wrist motor turns with the elbow (motor positions q_m = G q).
COUPLING = np.array([[1.0, 0.0], [0.6, 1.0]])
RATE_HZ, DURATION_S = 100.0, 20.0
#: The friction law's tanh width [rad/s | m/s]: the flexibility YAML's coulomb_width default (none set here).
V_C = 1e-3


def robot_files(folder: Path, extra: str = "") -> Path:
    """The arm's URDF and a flexibility YAML (every joint rigid, ``extra`` appended) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lift_arm.urdf").write_text(URDF)
    yaml = folder / "lift_arm.yaml"
    yaml.write_text("robot: lift_arm\nurdf: lift_arm.urdf\njoints:\n"
                    + "".join(f"  {joint}: {{rigid: true}}\n" for joint in JOINTS) + extra)
    return yaml


COUPLED_YAML = "coupled_transmissions:\n  - joints: [elbow, wrist]\n    matrix: [[1.0, 0.0], [0.6, 1.0]]\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lift_arm")


@pytest.fixture(scope="module")
def robot(folder):
    return load_robot(robot_files(folder / "plain"))


@pytest.fixture(scope="module")
def coupled(folder):
    return load_robot(robot_files(folder / "coupled", COUPLED_YAML))


@pytest.fixture(scope="module")
def pinocchio_model(folder):
    robot_files(folder / "plain")
    return pin.buildModelFromUrdf(str(folder / "plain" / "lift_arm.urdf"))


def fourier(t: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, qd, qdd (samples, 4) of a 3-harmonic Fourier series at 0.2 Hz (closed form); lift about 0.2 +- 0.1 m,
    the revolute joints within +-1.5 rad."""
    rng = np.random.default_rng(seed)
    amplitude = np.array([0.08, 0.5, 0.5, 0.5])
    a, b = rng.normal(size=(3, 4)) * amplitude, rng.normal(size=(3, 4)) * amplitude
    w = 2 * np.pi * 0.2 * np.arange(1, 4)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    q = np.array([0.2, 0.0, 0.3, 0.0]) + (s / w) @ a - (c / w) @ b
    return q, c @ a + s @ b, (-s * w) @ a + (c * w) @ b


def motor_torques(model, q, qd, qdd, coulomb=COULOMB, coupling=None) -> np.ndarray:
    """RNEA + B qdd + F_v qd + F_c tanh(qd / v_c) + offset (samples, 4); with ``coupling`` G over elbow and wrist the
    motor torques G^-T RNEA + B thetadd + F_v thetad + F_c tanh(thetad / v_c) + offset, theta = G q."""
    data = model.createData()
    rnea = np.array([pin.rnea(model, data, *state) for state in zip(q, qd, qdd)])
    g = np.eye(4)
    if coupling is not None:
        g[2:, 2:] = coupling
        rnea = rnea @ np.linalg.inv(g)  # rows: (G^-T tau_k)^T = tau_k^T G^-1
    thetad, thetadd = qd @ g.T, qdd @ g.T
    return rnea + ARMATURE * thetadd + VISCOUS * thetad + coulomb * np.tanh(thetad / V_C) + OFFSET


def jittered_times(seed: int, duration: float = DURATION_S) -> np.ndarray:
    """A logger's clock: 100 Hz with intervals 7.5-12.5 ms (the TIAGo record's spread)."""
    steps = np.random.default_rng(seed).uniform(0.0075, 0.0125, int(duration * RATE_HZ * 1.05))
    t = np.concatenate([[0.0], np.cumsum(steps)])
    return t[t <= duration]


def prediction_error(robot, result, model, seed: int, coulomb=COULOMB) -> np.ndarray:
    """RMS per fitted joint [N m | N] of the identified model's torques along another trajectory (10 s) against
    the reference torques there (Coulomb friction ``coulomb``), both through the parallel filter (the model's
    prediction at the kept rows against the filtered exact torques: the filter is linear and the same on both)."""
    t = np.arange(0.0, 10.0, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, seed)
    record = result.conditioned(RigidRecord(t, q, motor_torques(model, q, qd, qdd, coulomb), "validation"))
    fitted = [robot.joint_names.index(joint) for joint in result.joint_names]
    return np.sqrt(np.mean((result.predict(robot, record) - record.measured_torques()[:, fitted]) ** 2, axis=0))


def windowed_rows(record, floor, coupling=np.eye(4)) -> np.ndarray:
    """Rows per joint whose every full-rate sample within 1 / cutoff of the row time has a motor speed |G qd| of
    at least ``floor``, counted row by row (the rule of rigid_body, step 3, written out)."""
    half = 1.0 / record.filter.cutoff_hz
    speeds = np.abs(record.qd @ coupling.T)
    counts = np.zeros(4, dtype=int)
    for time in record.row_times:
        window = (record.t >= time - half) & (record.t <= time + half)
        counts += np.all(speeds[window] >= floor, axis=0)
    return counts


def value_of(result, name: str) -> float:
    return float(result.beta[result.base.base_names().index(name)])


def write_record(path: Path, t, q, tau, extra: dict | None = None) -> Path:
    columns = {f"q_m.{joint}": q[:, j] for j, joint in enumerate(JOINTS)}
    columns.update({f"tau_m.{joint}": tau[:, j] for j, joint in enumerate(JOINTS)})
    return write_timeseries(path, t, {**columns, **(extra or {})})


# --- clock ----------------------------------------------------------------------------------------------------------
def test_non_uniform_clock_is_resampled_exactly(robot, pinocchio_model, tmp_path) -> None:
    """A record on a logger's clock (7.5-12.5 ms intervals): read_record keeps the recorded times, uniform() puts
    it on the median interval's grid by a cubic spline, whose positions equal the closed-form trajectory there to
    1e-7 rad (m) (error O(h^4)). Identified from it (friction-free torques, so that only the resampling differs),
    the model predicts another trajectory's torques as well as the one identified from the same motion sampled
    uniformly at 100 Hz (within 5 % of its error, 2e-4 to 2.2e-3 of each joint's peak: the central differences'
    O(h^2) and the low-pass; both below 3e-3)."""
    t = jittered_times(3)
    q, qd, qdd = fourier(t, 1)
    tau = motor_torques(pinocchio_model, q, qd, qdd, coulomb=np.zeros(4))
    recorded = read_record(write_record(tmp_path / "jitter.csv", t, q, tau), robot)
    assert not recorded.is_uniform and np.array_equal(recorded.t, t)
    assert "resampled onto a uniform" in recorded.clock()
    uniform = recorded.uniform()
    steps = np.diff(uniform.t)
    assert steps.max() - steps.min() < 1e-12 and steps[0] == pytest.approx(np.median(np.diff(t)), rel=1e-12)
    np.testing.assert_allclose(uniform.q, fourier(uniform.t, 1)[0], rtol=0, atol=1e-7)
    peak = np.abs(tau).max(axis=0)
    from_jitter = identify_rigid_body(robot, uniform, torque_offset=True)
    t_u = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q_u, qd_u, qdd_u = fourier(t_u, 1)
    from_uniform = identify_rigid_body(robot, RigidRecord(t_u, q_u, motor_torques(
        pinocchio_model, q_u, qd_u, qdd_u, coulomb=np.zeros(4)), "uniform"), torque_offset=True)
    errors = [prediction_error(robot, result, pinocchio_model, 2, coulomb=np.zeros(4))
              for result in (from_jitter, from_uniform)]
    print("prediction rms / peak, logger's clock:", errors[0] / peak, "uniform:", errors[1] / peak)
    assert np.all(errors[0] < 3e-3 * peak) and np.all(errors[1] < 3e-3 * peak)
    assert np.all(errors[0] <= 1.05 * errors[1] + 1e-5 * peak)


# --- prismatic joint, offsets, friction threshold, fitted joints -----------------------------------------------------
#: Friction-free records (the Coulomb terms stay parameters, with value 0), so that these tests see their own feature
#: alone (the Coulomb estimate is test_rigid_friction's).
NO_COULOMB = np.zeros(4)


def test_prismatic_joint_and_torque_offsets(robot, pinocchio_model) -> None:
    """The vertical prismatic lift (units kg, N s/m, N) and the three revolute joints with rotor inertia, viscous
    friction and torque offsets. The viscous friction lies within 0.5 % of the values used, the revolute joints'
    offsets within 5e-3 N m (0.2 % of the shoulder's peak torque); the lift's offset is no base parameter on its own
    (a constant like the weight it carries); the torques along another trajectory are predicted within 3e-3 of each joint's peak."""
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    result = identify_rigid_body(robot, RigidRecord(t, q, motor_torques(pinocchio_model, q, qd, qdd, NO_COULOMB),
                                                    "fit"), torque_offset=True)
    units = dict(zip(result.base.base_names(), result.base.base_units()))
    assert (units["armature.lift"], units["F_v.lift"], units["F_c.lift"]) == ("kg", "N s/m", "N")
    assert (units["F_v.shoulder"], units["tau_0.shoulder"]) == ("N m s/rad", "N m")
    assert "tau_0.lift" not in units
    for j, joint in enumerate(JOINTS):
        assert value_of(result, f"F_v.{joint}") == pytest.approx(VISCOUS[j], rel=0.005), joint
        if joint != "lift":
            assert value_of(result, f"tau_0.{joint}") == pytest.approx(OFFSET[j], abs=5e-3), joint
    peak = np.abs(motor_torques(pinocchio_model, q, qd, qdd, NO_COULOMB)).max(axis=0)
    assert np.all(prediction_error(robot, result, pinocchio_model, 2, NO_COULOMB) < 3e-3 * peak)


def test_velocity_threshold_leaves_out_slow_rows(robot, coupled, pinocchio_model) -> None:
    """min_velocity: a joint's equation at a kept row enters only where its motor moves at the threshold or faster at
    every sample within 1 / cutoff of the row (the filter window): the rows per joint equal those counted here on
    the conditioned record (|qd| >= 0.03 m/s or rad/s; the slow lift loses more than 30 %); one threshold per joint
    works the same; with coupled transmissions the motor speeds |G qd| count (the wrist motor's rows differ from the
    wrist joint's: 40 and 48 rows at 0.5 rad/s). A threshold no row reaches is named."""
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    record = RigidRecord(t, q, motor_torques(pinocchio_model, q, qd, qdd), "fit")
    result = identify_rigid_body(robot, record, torque_offset=True, min_velocity=0.03)
    counted = windowed_rows(result.records[0], 0.03)
    np.testing.assert_array_equal(result.rows_per_joint, counted)
    assert counted[0] < 0.7 * result.rows
    floors = np.array([0.0, 0.1, 0.2, 0.3])
    per_joint = identify_rigid_body(robot, record, min_velocity=floors)
    np.testing.assert_array_equal(per_joint.rows_per_joint, windowed_rows(per_joint.records[0], floors))
    theta = q @ coupled.coupling.T
    motors = identify_rigid_body(coupled, RigidRecord(t, theta, motor_torques(pinocchio_model, q, qd, qdd,
                                                                              coupling=COUPLING), "coupled"),
                                 min_velocity=[0.0, 0.5, 0.5, 0.5])
    floors = np.array([0.0, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(motors.rows_per_joint, windowed_rows(motors.records[0], floors, coupled.coupling))
    assert motors.rows_per_joint[3] != windowed_rows(motors.records[0], floors)[3]
    with pytest.raises(IdentificationError, match=r"min_velocity: no row of joint\(s\) \['lift'\] has every sample"):
        identify_rigid_body(robot, record, min_velocity=[5.0, 0.0, 0.0, 0.0])


def test_fitted_joints(robot, pinocchio_model) -> None:
    """fit_joints = shoulder, elbow: only their rows enter (the lift and wrist still move and load them), the base
    parameters are those of these rows (fewer: the lift's and wrist's friction and offsets are gone), and the
    model predicts the two joints' torques within 3e-3 of their peaks; an unknown joint is named."""
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    record = RigidRecord(t, q, motor_torques(pinocchio_model, q, qd, qdd, NO_COULOMB), "fit")
    full = identify_rigid_body(robot, record, torque_offset=True)
    part = identify_rigid_body(robot, record, torque_offset=True, fit_joints=["elbow", "shoulder"])
    assert part.joint_names == ("shoulder", "elbow") and part.base.count < full.base.count
    assert not any(name.endswith((".lift", ".wrist")) and name.split(".")[0] in ("F_v", "F_c", "tau_0")
                   for name in part.base.base_names())
    peak = np.abs(motor_torques(pinocchio_model, q, qd, qdd, NO_COULOMB)).max(axis=0)[1:3]
    error = prediction_error(robot, part, pinocchio_model, 2, NO_COULOMB)
    assert error.shape == (2,) and np.all(error < 3e-3 * peak)
    with pytest.raises(IdentificationError, match="fit_joints: 'knee' is not a joint of robot lift_arm"):
        identify_rigid_body(robot, record, fit_joints=["knee"])


# --- coupled transmissions -------------------------------------------------------------------------------------------
def test_coupled_transmission_regressor_and_identification(coupled, pinocchio_model) -> None:
    """coupled_transmissions [elbow, wrist] with G = [[1, 0], [0.6, 1]] (the wrist motor turns with the elbow): the
    regressor times the standard parameters (the URDF's inertias, the rotor and friction values used, in motor
    coordinates) equals the motor torques written out here to 1e-9 N m; identified from a record of motor positions
    G q and those motor torques (friction-free, 100 Hz), the model predicts another trajectory's motor torques within
    3e-3 of each peak and the motors' viscous friction within 1 %. Without the coupling (the same record read by the
    uncoupled robot) the prediction is far off (> 1 % of the wrist's peak)."""
    np.testing.assert_array_equal(coupled.coupling[2:, 2:], COUPLING)
    np.testing.assert_array_equal(coupled.coupling[:2], np.eye(4)[:2])
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    phi = np.concatenate([np.asarray(coupled.model.inertias[j].toDynamicParameters()) for j in range(1, 5)]
                         + [np.column_stack([ARMATURE, VISCOUS, COULOMB]).ravel(), OFFSET])
    tau = motor_torques(pinocchio_model, q, qd, qdd, coupling=COUPLING)
    np.testing.assert_allclose((regressor(coupled, q[:50], qd[:50], qdd[:50], offsets=True) @ phi).reshape(50, 4),
                               tau[:50], rtol=0, atol=1e-9)
    smooth = motor_torques(pinocchio_model, q, qd, qdd, coulomb=np.zeros(4), coupling=COUPLING)
    theta = q @ coupled.coupling.T
    result = identify_rigid_body(coupled, RigidRecord(t, theta, smooth, "coupled"), torque_offset=True)
    assert "through the coupled transmissions" in result.link_side
    peak = np.abs(smooth).max(axis=0)

    def error_of(robot, fit):
        t_v = np.arange(0.0, 10.0, 1.0 / RATE_HZ)
        q_v, qd_v, qdd_v = fourier(t_v, 2)
        torque = motor_torques(pinocchio_model, q_v, qd_v, qdd_v, coulomb=np.zeros(4), coupling=COUPLING)
        record = fit.conditioned(RigidRecord(t_v, q_v @ coupled.coupling.T, torque, "validation"))
        return np.sqrt(np.mean((fit.predict(robot, record) - record.measured_torques()) ** 2, axis=0))

    assert np.all(error_of(coupled, result) < 3e-3 * peak)
    for j, joint in enumerate(JOINTS):
        assert value_of(result, f"F_v.{joint}") == pytest.approx(VISCOUS[j], rel=0.01), joint
    uncoupled = load_robot(coupled.yaml_path.parent.parent / "plain" / "lift_arm.yaml")
    wrong = identify_rigid_body(uncoupled, RigidRecord(t, theta, smooth, "coupled"), torque_offset=True)
    assert error_of(uncoupled, wrong)[3] > 0.01 * peak[3]


@pytest.mark.parametrize("extra, message", [
    ("coupled_transmissions:\n  - joints: [elbow, wrist]\n    matrix: [[1.0, 2.0], [0.5, 1.0]]\n",
     r"coupled_transmissions\[0\]\.matrix: singular or nearly so"),
    ("coupled_transmissions:\n  - joints: [elbow, knee]\n    matrix: [[1.0, 0.0], [0.6, 1.0]]\n",
     r"coupled_transmissions\[0\]\.joints: knee is not described under joints"),
    ("coupled_transmissions:\n  - joints: [elbow, wrist]\n    matrix: [[1.0, 0.0, 0.0], [0.6, 1.0, 0.0]]\n",
     r"coupled_transmissions\[0\]\.matrix\[0\]: expected 2 entries, got 3"),
    ("coupled_transmissions:\n  - joints: [elbow, wrist]\n    matrix: [[1.0, 0.0], [0.6, 1.0]]\n"
     "  - joints: [shoulder, wrist]\n    matrix: [[1.0, 0.0], [0.0, 1.0]]\n",
     r"coupled_transmissions\[1\]\.joints: wrist is already coupled in coupled_transmissions\[0\]"),
    ("coupled_transmissions:\n  - joints: [elbow]\n    matrix: [[1.0]]\n",
     r"coupled_transmissions\[0\]\.joints: expected a list of at least 2 different joint names"),
    ("coupled_transmissions:\n  - joints: [elbow, wrist]\n",
     r"coupled_transmissions\[0\]\.matrix: missing"),
])
def test_coupled_transmissions_bad_yaml(tmp_path, extra, message) -> None:
    """The schema field's errors: one line naming the file, the entry and the field, and what was expected."""
    with pytest.raises(ModelError, match=message) as caught:
        load_robot(robot_files(tmp_path, extra))
    assert "lift_arm.yaml" in str(caught.value) and "\n" not in str(caught.value)


def test_coupled_elastic_joint_refused(tmp_path) -> None:
    """A coupled joint must be rigid: an elastic one is named with the field to change."""
    yaml = robot_files(tmp_path, COUPLED_YAML)
    text = yaml.read_text().replace("wrist: {rigid: true}", "wrist: {stiffness: 1.0e4, rotor_inertia: 1.0e-4}")
    yaml.write_text(text)
    with pytest.raises(ModelError, match=r"joints: wrist is elastic; coupled transmissions join rigid joints"):
        load_robot(yaml)


# --- channels, files, efforts ----------------------------------------------------------------------------------------
def test_pattern_channels_several_files_and_effort_scale(robot, pinocchio_model, tmp_path, capsys) -> None:
    """A logger's export: positions and efforts in two files sharing the time column, columns named
    '- <joint>_position' / '- <joint>_effort', efforts in drive units (torque = scale x effort + offset, the scale
    an expression on the command line). The command reads them through --positions/--torques patterns and
    --effort-scale/--effort-offset, and its parameters equal those identified from the record in N m and N
    (the same pipeline, so to 1e-9 relative); the experiment file with the same settings gives the same numbers."""
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    tau = motor_torques(pinocchio_model, q, qd, qdd)
    scale, offset = np.array([1.0, 13.6, -8.7, 4.0]), np.array([0.0, 0.0, 0.5, 0.0])
    write_timeseries(tmp_path / "position.csv", t, {f"- {j}_position": q[:, k] for k, j in enumerate(JOINTS)})
    write_timeseries(tmp_path / "effort.csv", t, {f"- {j}_effort": (tau[:, k] - offset[k]) / scale[k]
                                                  for k, j in enumerate(JOINTS)})
    yaml = str(robot.yaml_path)
    record = f"{tmp_path / 'position.csv'}"
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(
        "records:\n  - files: [position.csv, effort.csv]\n"
        "channels: {positions: '- {joint}_position', torques: '- {joint}_effort'}\n"
        "effort: {shoulder: 13.6, elbow: {scale: -8.7, offset: 0.5}, wrist: 4.0}\n"
        "min_velocity: 0.03\ntorque_offset: true\n")
    assert main(["identify-rigid", yaml, "--experiment", str(experiment), "--json"]) == 0
    from_experiment = json.loads(capsys.readouterr().out)
    assert main(["identify-rigid", yaml, "--experiment", str(experiment), "--effort-scale", "shoulder=100*0.136",
                 "--json"]) == 0
    scaled = json.loads(capsys.readouterr().out)["parameters"]
    np.testing.assert_allclose([p["value"] for p in scaled], [p["value"] for p in from_experiment["parameters"]],
                               rtol=1e-9, atol=1e-12)
    direct = identify_rigid_body(robot, RigidRecord(t, q, tau, "N m"), torque_offset=True, min_velocity=0.03)
    np.testing.assert_allclose([p["value"] for p in from_experiment["parameters"]], direct.beta, rtol=1e-9,
                               atol=1e-9 * np.abs(direct.beta).max())
    two_files = read_record([record, tmp_path / "effort.csv"], robot,
                            Channels("- {joint}_position", "- {joint}_effort"), {"shoulder": 13.6})
    np.testing.assert_allclose(two_files.tau[:, 1], tau[:, 1], rtol=1e-12, atol=1e-12)


def test_extra_channel_warns(robot, pinocchio_model, tmp_path, capsys) -> None:
    """A record with one more joint channel than the robot has (q_m.joint5 and tau_m.joint5 of a 4-joint robot):
    the identification runs and stderr says which channels were ignored and why, one line each (also in the JSON);
    the library raises a RecordWarning."""
    t = np.arange(0.0, DURATION_S, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    path = write_record(tmp_path / "extra.csv", t, q, motor_torques(pinocchio_model, q, qd, qdd),
                        {"q_m.joint5": np.zeros_like(t), "tau_m.joint5": np.zeros_like(t)})
    assert main(["identify-rigid", str(robot.yaml_path), str(path), "--json"]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(lines) == 2 and all("joint5 is not a joint of robot lift_arm" in line for line in lines)
    assert "'q_m.joint5' matches the positions 'q_m.*'" in lines[0]
    assert json.loads(captured.out)["warnings"] == [line.split("warning: ", 1)[1] for line in lines]
    with pytest.warns(RecordWarning) as caught:
        read_record(path, robot)
    assert sorted(str(w.message).split("'")[1] for w in caught) == ["q_m.joint5", "tau_m.joint5"]


def bad_record(tmp_path: Path, pinocchio_model, change) -> Path:
    t = np.arange(0.0, 5.0, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    tau = motor_torques(pinocchio_model, q, qd, qdd)
    columns = {f"q_m.{joint}": q[:, j] for j, joint in enumerate(JOINTS)}
    columns.update({f"tau_m.{joint}": tau[:, j] for j, joint in enumerate(JOINTS)})
    t = change(t, columns)
    return write_timeseries(tmp_path / "bad.csv", t, columns)


def _set(columns: dict, name: str, k: int, value: float) -> None:
    columns[name] = columns[name].copy()
    columns[name][k] = value


@pytest.mark.parametrize("change, message", [
    (lambda t, c: (_set(c, "tau_m.elbow", 123, np.nan), t)[1],
     r"bad\.csv: column 'tau_m\.elbow', sample 123 \(t = 1\.23 s\): nan; expected a finite number"),
    (lambda t, c: (_set(c, "q_m.lift", 7, np.inf), t)[1],
     r"bad\.csv: column 'q_m\.lift', sample 7 \(t = 0\.07 s\): inf; expected a finite number"),
    (lambda t, c: (c.pop("tau_m.wrist"), t)[1],
     r"bad\.csv: torques 'tau_m\.\*': no channel for joint\(s\) \['wrist'\] \(expected a channel matching "
     r"'tau_m\.\*' whose last dotted part is wrist\)"),
    (lambda t, c: np.where(np.arange(t.size) == 300, t[299] - 0.004, t),
     r"bad\.csv: column 't', sample 300: 2\.986 s after 2\.99 s at sample 299; expected strictly increasing times"),
    (lambda t, c: np.where(np.arange(t.size) == 300, t[299], t),
     r"bad\.csv: column 't', sample 300: 2\.99 s after 2\.99 s at sample 299; expected strictly increasing times"),
    (lambda t, c: np.where(np.arange(t.size) >= 300, t + 0.5, t),
     r"bad\.csv: column 't': a gap of 0\.51 s between samples 299 and 300"),
], ids=["nan", "inf", "missing joint", "clock back", "clock stops", "gap"])
def test_bad_records_exit_2_naming_column_and_sample(robot, pinocchio_model, tmp_path, capsys, change,
                                                     message) -> None:
    """Each bad record: exit status 2 and one line on stderr naming the file, the column (or joint) and the sample,
    and what was expected."""
    path = bad_record(tmp_path, pinocchio_model, change)
    assert main(["identify-rigid", str(robot.yaml_path), str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("flexrobot identify-rigid: error: ")
    assert re.search(message, err), err


def test_bad_recordings_and_experiments_are_named(robot, pinocchio_model, tmp_path, capsys) -> None:
    """Files of one record whose clocks differ, a channel in two files, rows outside the record, an experiment file
    with an unknown key, a bad rows entry, an unknown joint, records in two places, an unknown --effort-scale joint:
    one line each, exit 2."""
    t = np.arange(0.0, 5.0, 1.0 / RATE_HZ)
    q, qd, qdd = fourier(t, 1)
    tau = motor_torques(pinocchio_model, q, qd, qdd)
    write_timeseries(tmp_path / "p.csv", t, {f"q_m.{j}": q[:, k] for k, j in enumerate(JOINTS)})
    write_timeseries(tmp_path / "e.csv", t + np.where(np.arange(t.size) == 42, 1e-3, 0.0),
                     {f"tau_m.{j}": tau[:, k] for k, j in enumerate(JOINTS)})
    write_timeseries(tmp_path / "pe.csv", t, {"q_m.lift": q[:, 0], **{f"tau_m.{j}": tau[:, k]
                                                                     for k, j in enumerate(JOINTS)}})
    experiment = tmp_path / "x.yaml"
    cases = [
        ("records:\n  - files: [p.csv, e.csv]\n", r"e\.csv: t of sample 42 is 0\.421 s, .*p\.csv has 0\.42 s; the "
                                                   r"files of one record share one clock"),
        ("records:\n  - files: [p.csv, pe.csv]\n", r"pe\.csv: channel 'q_m\.lift' is also in .*p\.csv"),
        ("records:\n  - files: [p.csv]\n    rows: [10, 900]\n", r"p\.csv: rows 10-900: expected 0 <= first < last "
                                                              r"<= 499"),
        ("record: [p.csv]\n", r"x\.yaml: unknown key\(s\) \['record'\]; expected keys"),
        ("records:\n  - files: [p.csv]\n    rows: [10]\n", r"x\.yaml: records\[0\]\.rows: expected \[first, last\]"),
        ("records: [p.csv]\neffort: {knee: 2.0}\n", r"x\.yaml: effort: unknown key\(s\) \['knee'\]; expected joints "
                                                    r"of the robot"),
        ("records: [p.csv]\nfit_joints: [knee]\n", r"x\.yaml: fit_joints: \['knee'\] are not joints of the robot"),
    ]
    for text, message in cases:
        experiment.write_text(text)
        assert main(["identify-rigid", str(robot.yaml_path), "--experiment", str(experiment)]) == 2, text
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and re.search(message, err), (text, err)
    experiment.write_text("records: [p.csv]\n")
    assert main(["identify-rigid", str(robot.yaml_path), str(tmp_path / "p.csv"), "--experiment",
                 str(experiment)]) == 2
    assert "records given on the command line and in" in capsys.readouterr().err
    assert main(["identify-rigid", str(robot.yaml_path), str(tmp_path / "p.csv"), "--effort-scale", "knee=2"]) == 2
    assert "--effort-scale: 'knee' is not a joint of the robot" in capsys.readouterr().err
