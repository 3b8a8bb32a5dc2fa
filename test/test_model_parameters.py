"""Shipped robots carry their papers' numbers: masses, CoMs, stiffness, motor inertias, gains, tools."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main as cli_main
from flexrobot_ros.model import load_robot, shipped_robots
from test_model_kinematics import dh_frames

# Thesis Table 2.3 (masses, CoMs in DH frame i) and Table 2.2 (DH).
SCOMPI_MASSES = [19.0, 5.723, 5.166, 4.425, 3.302, 1.022]
SCOMPI_COMS = [[0.021, 0.031, -0.226], [-0.054, 0.003, 0.014], [-0.138, 0.0, -0.019],
               [0.011, 0.012, 0.161], [0.0, -0.026, -0.022], [-0.004, 0.039, 0.0]]
HALF_PI = np.pi / 2
SCOMPI_DH = [
    {"type": "prismatic", "theta": HALF_PI}, {"type": "revolute", "a": 0.192, "alpha": HALF_PI},
    {"type": "revolute", "a": 0.420}, {"type": "revolute", "alpha": HALF_PI},
    {"type": "revolute", "d": 0.380, "alpha": HALF_PI}, {"type": "revolute", "d": 0.088, "alpha": -HALF_PI},
]


def table_center_of_mass(q, tool_mass=0.0):
    frames = dh_frames(SCOMPI_DH, q)
    weighted = sum(m * (frames[i + 1][:3, :3] @ c + frames[i + 1][:3, 3])
                   for i, (m, c) in enumerate(zip(SCOMPI_MASSES, SCOMPI_COMS)))
    weighted = weighted + tool_mass * frames[6][:3, 3]
    return weighted / (sum(SCOMPI_MASSES) + tool_mass)


@pytest.mark.parametrize("tool", [False, True], ids=["case1_no_tool", "case2_tool_4kg"])
def test_scompi_mass_and_com_equal_table_2_3(tool: bool) -> None:
    """Thesis Table 2.3: total mass 38.638 kg ("about 39 kg", section 2.4.1); case 2 adds exactly 4 kg at O_6."""
    robot = load_robot("scompi", tool=tool)
    tool_mass = 4.0 if tool else 0.0
    assert robot.total_mass == pytest.approx(sum(SCOMPI_MASSES) + tool_mass, abs=1e-12)
    data = robot.create_data()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, 6)
        np.testing.assert_allclose(pin.centerOfMass(robot.model, data, q), table_center_of_mass(q, tool_mass),
                                   atol=1e-12)


def test_scompi_tool_is_point_mass_at_o6() -> None:
    """Case 2 tool: m_E = 4 kg, s_E = 0, I_E = 0 (section 2.4.2, ERRATA): the last body's inertia changes by
    exactly a 4 kg point mass at frame O_6."""
    bare, tooled = load_robot("scompi"), load_robot("scompi", tool=True)
    frame = bare.model.frames[bare.frame_id("frame_6")]
    point = frame.placement.act(pin.Inertia(4.0, np.zeros(3), np.zeros((3, 3))))
    difference = tooled.model.inertias[6].toDynamicParameters() - bare.model.inertias[6].toDynamicParameters()
    np.testing.assert_allclose(difference, point.toDynamicParameters(), atol=1e-14)
    assert tooled.tool.mass == 4.0 and tooled.tool.frame == "tool0"


def test_scompi_joint_parameters_equal_tables_2_1_and_2_4() -> None:
    """Table 2.1 (k, d_f, d_fm), Table 2.4 (N, I_r -> B = N^2 I_r, eq. A I-12), r_1 = 0.057 m, eqs. 2.19-2.20."""
    robot = load_robot("scompi")
    np.testing.assert_allclose(robot.stiffness, np.array([25, 120, 120, 57, 29, 29]) * 1000.0)
    np.testing.assert_allclose(robot.link_damping, [2.73, 24.74, 5.76, 9.37, 8.74, 8.74])
    np.testing.assert_allclose(robot.motor_damping, np.array([9.46, 9.46, 9.46, 9.46, 5.90, 5.90]) * 1e-4)
    n_ratio = np.array([51, 160, 160, 160, 160, 160.0])
    rotor = np.array([1.71, 2.65, 2.42, 1.26, 0.91, 0.86]) * 1e-4
    np.testing.assert_allclose(robot.motor_inertia, n_ratio**2 * rotor)
    np.testing.assert_allclose(robot.transmission, [1 / 0.057, 1, 1, 1, 1, 1])
    assert robot.joint_types == ("prismatic",) + ("revolute",) * 5
    np.testing.assert_allclose(robot.kp, 15000.0)
    np.testing.assert_allclose(robot.kd, 52.0)
    assert np.all(robot.model.armature == 0.0)


def test_planar_2r_matches_equations_3_33_and_3_34() -> None:
    """Chapter 3 planar robot: M(q) of eq. 3.33 (with the ERRATA fix of M_12) and g(q) of eq. 3.34."""
    robot = load_robot("planar_2r")
    m1, m2, a1, xc1, xc2, i1, i2, g = 20.0, 10.0, 0.4, 0.2, 0.25, 0.2667, 0.2083, 9.81
    data = robot.create_data()
    for q1, q2 in np.random.default_rng(1).uniform(-3, 3, (10, 2)):
        q = np.array([q1, q2])
        m12 = i2 + m2 * xc2**2 + m2 * a1 * xc2 * np.cos(q2)
        expected_m = np.array([[i1 + i2 + m1 * xc1**2 + m2 * (a1**2 + xc2**2) + 2 * m2 * a1 * xc2 * np.cos(q2), m12],
                               [m12, i2 + m2 * xc2**2]])
        np.testing.assert_allclose(pin.crba(robot.model, data, q), expected_m, atol=1e-12)
        expected_g = [g * (m1 * xc1 + m2 * a1) * np.cos(q1) + g * m2 * xc2 * np.cos(q1 + q2),
                      g * m2 * xc2 * np.cos(q1 + q2)]
        np.testing.assert_allclose(pin.computeGeneralizedGravity(robot.model, data, q), expected_g, atol=1e-12)
    np.testing.assert_allclose(robot.motor_inertia, [4.0572, 2.2148])
    np.testing.assert_allclose(robot.stiffness, [2000, 1600])


def test_every_shipped_robot_loads_consistently() -> None:
    """Every shipped robot loads; all parameters are finite; the required names are shipped."""
    names = shipped_robots()
    for required in ("scompi", "planar_2r"):
        assert required in names
    for name in names:
        robot = load_robot(name)
        assert robot.n == robot.model.nq == robot.model.nv
        elastic = np.array([joint not in robot.rigid_joints for joint in robot.joint_names])  # rigid: k = inf
        for array in (robot.stiffness[elastic], robot.motor_inertia[elastic], robot.transmission, robot.kp, robot.kd):
            assert np.all(np.isfinite(array))
        assert np.all(robot.stiffness > 0) and np.all(robot.motor_inertia[elastic] > 0)
        assert robot.is_serial_chain


def test_info_json_reports_total_mass(capsys) -> None:
    """`flexrobot info scompi --tool --json`: total_mass in kg (38.638 + 4)."""
    assert cli_main(["info", "scompi", "--tool", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["total_mass"] == pytest.approx(42.638)
    assert [j["type"] for j in info["joints"]] == ["prismatic"] + ["revolute"] * 5
    assert cli_main(["info", "--list"]) == 0
    assert "scompi" in capsys.readouterr().out.split()


def test_info_text_and_unknown_robot(capsys) -> None:
    assert cli_main(["info", "planar_2r"]) == 0
    out = capsys.readouterr().out
    assert "planar_2r" in out and "joint2" in out
    assert cli_main(["info", "no_such_robot"]) == 2
    assert "no_such_robot" in capsys.readouterr().err


def test_installed_console_script_runs_outside_the_source_tree(tmp_path) -> None:
    """`pip install .` then `flexrobot info scompi` (the README's test command installs the package into .venv):
    the installed script finds the shipped files through the installed share folder, not the checkout."""
    from pathlib import Path
    script = Path(sys.executable).with_name("flexrobot")
    if not script.exists():
        pytest.skip("the package is not installed in this interpreter's environment (run scripts/test)")
    result = subprocess.run([str(script), "info", "scompi", "--json"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total_mass"] == pytest.approx(38.638)


def test_lwr4_parameters_equal_thesis_section_4_5_1() -> None:
    """Thesis section 4.5.1: K = 1000 N m/rad, zero link friction, D_v,m, D_c,m and the reflected J_m as printed;
    DH eq. 4.27 (d_3 = 0.40 m, d_5 = 0.49 m, twists pi/2, -pi/2, -pi/2, pi/2, pi/2, -pi/2, 0)."""
    robot = load_robot("lwr4")
    assert robot.n == 7 and robot.joint_types == ("revolute",) * 7
    np.testing.assert_allclose(robot.stiffness, 1000.0)
    np.testing.assert_allclose(robot.link_damping, 0.0)
    np.testing.assert_allclose(robot.motor_damping, [14.3, 15.5, 6.50, 11.1, 4.37, 2.42, 1.75])
    np.testing.assert_allclose(robot.motor_coulomb, [11.6, 10.7, 8.60, 8.02, 7.38, 4.64, 6.02])
    np.testing.assert_allclose(robot.motor_inertia, [3.20, 3.05, 1.98, 2.06, 0.801, 0.48, 0.381])
    halfpi = np.pi / 2
    rows = [{"type": "revolute", "alpha": a, "d": d} for a, d in
            zip([halfpi, -halfpi, -halfpi, halfpi, halfpi, -halfpi, 0.0], [0, 0, 0.40, 0, 0.49, 0, 0])]
    data = robot.create_data()
    q = np.random.default_rng(4).uniform(-1.5, 1.5, 7)
    pin.framesForwardKinematics(robot.model, data, q)
    for i, expected in enumerate(dh_frames(rows, q)):
        np.testing.assert_allclose(data.oMf[robot.frame_id(f"frame_{i}")].homogeneous, expected, atol=1e-12)
