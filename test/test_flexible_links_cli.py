"""`flexrobot modal` and `flexrobot simulate` on flexible-link robots (issue 13): --locked-joints on a one-link
robot gives the clamped-free frequencies of seed 003 Table 2's link 1; --link-model/--link-modes/--link-elements
override the YAML; --json keeps frequencies_hz ascending and damping_ratios; the forced Canadarm writes deflection
columns."""
import json
import math

import numpy as np
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.timeseries import read_timeseries

LINK1_HZ = (1.0176, 6.3772)  # issue 13, Canadarm link 1 clamped-free (a = 6 m, m = 140 kg, EI = 1e5 N m^2)


def one_link_robot(tmp_path):
    urdf = tmp_path / "one.urdf"
    urdf.write_text("""<robot name="one"><link name="base_link"/>
      <link name="arm"><inertial><origin xyz="3 0 0"/><mass value="140"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="420" iyz="0" izz="420"/></inertial></link>
      <joint name="joint1" type="revolute"><parent link="base_link"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" velocity="1" effort="1"/></joint>
      <link name="tip"/><joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
        <origin xyz="6 0 0"/></joint></robot>""")
    path = tmp_path / "one.yaml"
    path.write_text(f"urdf: {urdf}\ngravity: [0.0, 0.0, 0.0]\njoints: {{joint1: {{rigid: true}}}}\n"
                    "controller: {kp: 1.0e+4, kd: 100.0}\n"
                    "flexible_links: {arm: {EI: 1.0e+5, modes: 2, tip_frame: tip, damping_ratio: 0.01}}\n")
    return path


def modal_json(capsys, *arguments):
    assert main(["modal", *arguments, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_modal_locked_joints_one_link(tmp_path, capsys):
    path = str(one_link_robot(tmp_path))
    report = modal_json(capsys, path, "--q", "0", "--locked-joints")
    lam = np.array([1.875104068711961, 4.694091132974175])
    exact = lam**2 * math.sqrt(1e5 / (140 / 6 * 6**4)) / (2 * math.pi)
    np.testing.assert_allclose(report["frequencies_hz"], exact, rtol=1e-6)
    np.testing.assert_allclose(report["frequencies_hz"], LINK1_HZ, atol=5.1e-5)
    np.testing.assert_allclose(report["damping_ratios"], 0.01, rtol=1e-6)
    fem = modal_json(capsys, path, "--q", "0", "--locked-joints", "--link-model", "fem", "--link-elements", "4")
    assert np.all(np.diff(fem["frequencies_hz"]) >= 0)
    assert np.all(np.array(fem["frequencies_hz"][:2]) > exact)      # FEM from above
    closed = modal_json(capsys, path, "--q", "0", "--link-modes", "3")
    assert len(closed["frequencies_hz"]) == 4 and np.all(np.diff(closed["frequencies_hz"]) >= 0)
    assert "damping_ratios" in closed


def test_modal_locked_joints_undamped_arm_is_marginally_stable(capsys):
    """Issue 22: the braked Canadarm (no structural damping in config/canadarm.yaml) printed every mode as stable
    "NO" with zeta -0.0000 and all 12 eigenvalues as "offending". Its real parts are zero within round-off
    (|Re| <= 1e-9 max|lambda|, checked here on the JSON eigenvalues): each mode is "marginal", zeta prints 0, the
    verdict says marginally stable and the header says the joints are locked."""
    arguments = ["canadarm", "--q", "0.4,-1.1,0.7", "--locked-joints"]
    report = modal_json(capsys, *arguments)
    eigenvalues = np.array(report["eigenvalues"])
    assert np.all(np.abs(eigenvalues[:, 0]) <= 1e-9 * np.abs(eigenvalues[:, 1]).max())
    assert report["locked_joints"] is True and report["verdict"] == "marginal"
    assert report["mode_stability"] == ["marginal"] * 6 and report["mode_stable"] == [False] * 6
    assert main(["modal", *arguments]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "robot canadarm at q = [0.4, -1.1, 0.7]; every joint locked (structural modes of the braked arm)"
    rows = lines[2:8]
    for row, f in zip(rows, report["frequencies_hz"]):
        assert row.split() == [row.split()[0], f"{f:.4f}", "0.0000", "marginal"], row
    assert lines[8].startswith("verdict: marginally stable: 12 eigenvalue(s) with |Re| <= ")
    assert "none in the right half-plane" in lines[8] and "offending" not in lines[8]


def test_modal_options_need_flexible_links(capsys):
    assert main(["modal", "planar_2r", "--q", "0,0", "--locked-joints"]) != 0


def test_simulate_forced_canadarm(tmp_path):
    out = tmp_path / "canadarm.csv"
    from flexrobot_ros.model.loader import share_directory

    trajectory = share_directory() / "config" / "canadarm_trajectory.yaml"
    assert main(["simulate", "canadarm", "--open-loop", str(trajectory), "--duration", "0.3", "--rate", "100",
                 "--out", str(out), "--energy"]) == 0
    _, columns = read_timeseries(out)
    for link in ("link1", "link2", "link3"):
        assert f"deflection.{link}.y" in columns
    assert np.max(np.abs(columns["deflection.link1.y"])) > 1e-4


def test_simulate_summary_reports_what_the_open_loop_run_tracked(tmp_path, capsys):
    """Issue 22: the open-loop Canadarm printed max |q_m - q_m^d| = 0.999 rad, the distance from a set point it never
    used. Its summary reports the link-side error from the trajectory file and the largest tip deflection, both
    recomputed here from the written CSV (trajectory evaluated by load_trajectory; |(w_y, w_z)| per link)."""
    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.model.loader import share_directory

    path = share_directory() / "config" / "canadarm_trajectory.yaml"
    out = tmp_path / "canadarm.csv"
    arguments = ["simulate", "canadarm", "--open-loop", str(path), "--duration", "0.3", "--rate", "100",
                 "--out", str(out)]
    assert main([*arguments, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    t, columns = read_timeseries(out)
    q = np.column_stack([columns[f"q.joint{i}"] for i in (1, 2, 3)])
    expected_error = np.abs(q - load_trajectory(path).evaluate(t).q).max()
    deflection = max(np.hypot(columns[f"deflection.link{i}.y"], columns.get(f"deflection.link{i}.z", 0.0)).max()
                     for i in (1, 2, 3))
    assert "max_motor_deviation_rad" not in summary and "max_trajectory_error_m" not in summary
    assert summary["max_trajectory_error_rad"] == pytest.approx(expected_error, rel=1e-9)
    assert summary["max_tip_deflection_m"] == pytest.approx(deflection, rel=1e-9) and deflection > 1e-4
    assert main(arguments) == 0
    line = capsys.readouterr().out
    assert "q_m - q_m^d" not in line and f"max |q - q_d(t)| = {expected_error:.3g} rad along the trajectory" in line
    assert f"max tip deflection {1e3 * deflection:.3g} mm" in line and "x real time" in line
    assert "(0.0x real time)" not in line


def test_elastic_joint_methods_refuse_flexible_links_naming_the_methods_that_work(tmp_path, capsys):
    """EJNEA, SDRNEA and the DAE invert finite joint stiffnesses of rigid links (thesis eqs. 4.5-4.10): asked for the
    Canadarm (rigid joints, flexible links) or a flexible link on an elastic joint they give one error naming the
    robot, what they do not support and the methods that do ('prescribed', 'rigid'), from the CLI and from every API
    entry point (before: 'stiffness: non-finite value [inf, inf, inf]'); no output file is written."""
    import pytest

    from flexrobot_ros.dynamics import compiled_feedforward, feedforward
    from flexrobot_ros.errors import ModelError
    from flexrobot_ros.model import load_robot

    trajectory = "config/canadarm_trajectory.yaml"
    assert main(["feedforward", "canadarm", "--trajectory", trajectory, "--method", "ejnea",
                 "--out", str(tmp_path / "ff.csv")]) != 0
    message = capsys.readouterr().err
    assert "robot 'canadarm'" in message and "rigid joints (joint1, joint2, joint3" in message
    assert "flexible links (link1, link2, link3)" in message and "inf" not in message.replace("finite", "")
    assert "'prescribed'" in message and "'rigid'" in message
    assert not (tmp_path / "ff.csv").exists()
    robot = load_robot("canadarm")
    for call in (lambda: feedforward(robot, trajectory, "sdrnea"), lambda: feedforward(robot, trajectory, "ejnea"),
                 lambda: feedforward(robot, trajectory, "dae"), lambda: compiled_feedforward(robot)):
        with pytest.raises(ModelError, match="robot 'canadarm'.*rigid joints .*flexible links .*'prescribed'"):
            call()
    # an elastic joint carrying a flexible link: only the flexible link is named
    path = one_link_robot(tmp_path)
    path.write_text("robot: one\n" + path.read_text().replace("{rigid: true}",
                                                               "{stiffness: 2000.0, reflected_inertia: 1.0}"))
    elastic = load_robot(str(path))
    assert not elastic.rigid_joints
    with pytest.raises(ModelError, match=r"robot 'one'.*has flexible links \(arm\): use method 'prescribed'") as error:
        feedforward(elastic, trajectory, "ejnea")
    assert "rigid joints" not in str(error.value)


def test_feedforward_link_model_arguments(tmp_path, capsys):
    """`flexrobot feedforward --link-model fem --link-elements 4` (the arguments of `flexrobot simulate`) on a one-link
    arm (seed 003 Table 2's link 1, rigid joint, no gravity), a 0.2 rad poly9 move in 1 s at 200 Hz: the predicted tip
    deflection equals the core's with the same discretization (feedforward(..., link_model=...)) exactly, and the
    finite-element beam agrees with the YAML's two assumed modes to 1e-3 of the peak (0.095 mm of 816 mm measured: two
    discretizations of one beam, the link's first mode at 1.02 Hz well below the second); refused for a robot without flexible links and for a
    method that does not integrate the links."""
    from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
    from flexrobot_ros.model import load_robot

    path = one_link_robot(tmp_path)
    move = tmp_path / "move.yaml"
    move.write_text("profile: poly9\nduration: 1.0\nq0: [0.0]\nqf: [0.2]\n")
    tips = {}
    for name, extra in (("amm", []), ("fem", ["--link-model", "fem", "--link-elements", "4"])):
        out = tmp_path / f"{name}.npz"
        assert main(["feedforward", str(path), "--trajectory", str(move), "--rate", "200", "--out", str(out),
                     "--end", "as-given", *extra]) == 0  # the motion as given: its 1 % damped beam rings ~2 min
        tips[name] = read_timeseries(out)[1]["deflection.arm.y"]
    core = feedforward(load_robot(str(path)), Poly9Trajectory([0.0], [0.2], 1.0), None, rate_hz=200.0,
                       link_model={"method": "finite_elements", "elements": 4})
    np.testing.assert_array_equal(tips["fem"], core.deflections["deflection.arm.y"])
    peak = np.abs(tips["amm"]).max()
    with capsys.disabled():
        print(f"peak tip deflection: {1e3 * peak:.3f} mm (2 assumed modes), "
              f"{1e3 * np.abs(tips['fem']).max():.3f} mm (4 finite elements); "
              f"largest difference {1e3 * np.abs(tips['fem'] - tips['amm']).max():.4f} mm")
    assert peak > 1e-4 and np.abs(tips["fem"] - tips["amm"]).max() < 1e-3 * peak
    capsys.readouterr()
    assert main(["feedforward", "planar_2r", "--trajectory", str(move), "--out", str(tmp_path / "x.csv"),
                 "--link-modes", "2"]) != 0
    assert "robot planar_2r: --link-model/--link-modes/--link-elements need flexible links" in capsys.readouterr().err
    assert main(["feedforward", str(path), "--trajectory", str(move), "--method", "rigid", "--out",
                 str(tmp_path / "x.csv"), "--link-modes", "1"]) != 0
    assert "method 'rigid' does not integrate the link deformations" in capsys.readouterr().err
