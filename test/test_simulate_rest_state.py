"""Issue 38 item 1, the simulator's side: ``flexrobot simulate --feedforward FILE`` starts every file (rigid,
flexible, shaped) at the rest state of its first sample under the PD it runs with, and after the file's end holds the
last pose with its static torque; so the README's shaped-move figures come out of the CLI as a user runs it.

Independent checks: the rigid law's rest state on the Scompi solved here (scipy's fsolve on the spring, gravity and
PD balance, as test/test_shaping_scompi.py does), pinocchio's gravity torque, the plant's forward dynamics at the
first simulated state, and the same files simulated in process from that start.
"""
from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import fsolve

from flexrobot_ros.cli import main
from flexrobot_ros.kinematics import frame_origins
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.timeseries import read_timeseries

#: The thesis' configuration 8 of the Scompi [m, rad], and the README's shaped move's end pose (docs/input_shaping.md).
CONFIGURATION_8 = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]
SHAPED_MOVE_END = [0.1, -0.1, 1.6, 0.3, -1.6, 0.3]


@pytest.fixture(scope="module")
def scompi():
    return load_robot("scompi", tool=True)


def columns_of(path, name, robot):
    """(t, the columns ``name.<joint>`` (samples, n)) of a time series."""
    t, columns = read_timeseries(path)
    return t, np.column_stack([columns[f"{name}.{joint}"] for joint in robot.joint_names])


def rigid_rest(robot, tau_m, q_m, q_guess):
    """The link pose where the law tau_m + K_P (q_m - q_m') holds the Scompi at rest: the spring carries gravity,
    K W (q_m' - W q) = g(q), and the motor balances it, K (q_m' - W q) = tau_m + K_P (q_m - q_m') (fsolve)."""
    data = robot.model.createData()
    w, k = robot.transmission, robot.stiffness

    def motor(q):
        return w * q + pin.computeGeneralizedGravity(robot.model, data, q) / (k * w)

    def unbalance(q):
        return tau_m + robot.kp * (q_m - motor(q)) - pin.computeGeneralizedGravity(robot.model, data, q) / w

    q = fsolve(unbalance, q_guess, xtol=1e-14)
    assert np.abs(unbalance(q)).max() < 1e-9
    return q, motor(q)


def test_a_file_that_holds_a_pose_does_not_move_the_robot(scompi, tmp_path, capsys):
    """Issue 38: the rigid-model file that holds configuration 8 made the robot jump (max |q - q_d(t)| 0.000656 rad,
    213 um at the tool). Now each file starts at the rest state of its own law: the robot does not move (every
    link within 1e-12 of its start over 2 s, 1 s past the file's end); the rigid file's start is its law's rest
    state solved here (1e-10 rad): the link sags from configuration 8 by the spring deflection K^-1 g the rigid law
    does not compensate, 4.03e-4 rad on joint 2; the SDRNEA file's is configuration 8 itself (1e-12 rad)."""
    hold = tmp_path / "hold.yaml"
    hold.write_text(f"profile: poly9\nduration: 1.0\nq0: {CONFIGURATION_8}\nqf: {CONFIGURATION_8}\n")
    for method in ("rigid", "sdrnea"):
        ff, out = tmp_path / f"{method}.csv", tmp_path / f"{method}_sim.csv"
        assert main(["feedforward", "scompi", "--tool", "--trajectory", str(hold), "--method", method,
                     "--out", str(ff)]) == 0
        assert main(["simulate", "scompi", "--tool", "--feedforward", str(ff), "--duration", "2", "--out",
                     str(out)]) == 0
        _, q = columns_of(out, "q", scompi)
        tool = np.array([frame_origins(scompi, pose, ["tool0"])[0] for pose in q])
        assert np.abs(q - q[0]).max() <= 1e-12 and np.abs(tool - tool[0]).max() <= 1e-12
        if method == "rigid":
            _, tau_m = columns_of(ff, "tau_m", scompi)
            _, q_m = columns_of(ff, "q_m", scompi)
            rest, _ = rigid_rest(scompi, tau_m[0], q_m[0], np.array(CONFIGURATION_8))
            np.testing.assert_allclose(q[0], rest, rtol=0, atol=1e-10)
            assert abs(q[0, 1] - CONFIGURATION_8[1]) == pytest.approx(4.03e-4, rel=2e-3)
        else:
            np.testing.assert_allclose(q[0], CONFIGURATION_8, rtol=0, atol=1e-12)
    capsys.readouterr()


def test_a_composed_robot_starts_at_rest_under_a_rigid_file(tmp_path):
    """mixed4 (gravity, a flexible link, an extra elasticity, gear dampers, Coulomb friction): its rigid-model file
    holding a pose knows none of them; the simulator starts at the rest state of that law (the beam, q_e and the
    springs deflected, the links sagging by 6.7e-3 rad on joint 2), and the plant integrated from there (its forward
    dynamics, not the Newton solve that found the state) moves no coordinate by more than 1e-12 over 0.5 s, 0.2 s
    past the file's end (the file ends at rest: its last torque held)."""
    hold, ff, out = tmp_path / "hold.yaml", tmp_path / "ff.csv", tmp_path / "sim.csv"
    pose = [0.2, 0.4, -0.6]
    hold.write_text(f"profile: poly9\nduration: 0.3\nq0: {pose}\nqf: {pose}\n")
    assert main(["feedforward", "mixed4", "--trajectory", str(hold), "--method", "rigid", "--out", str(ff)]) == 0
    assert main(["simulate", "mixed4", "--feedforward", str(ff), "--duration", "0.5", "--out", str(out)]) == 0
    _, columns = read_timeseries(out)
    names = [name for name in columns if name.split(".")[0] in ("q", "q_m", "q_e", "deflection")]
    assert {"q_e.joint4", "deflection.link2.y"} <= set(names)
    assert max(np.abs(columns[name] - columns[name][0]).max() for name in names) <= 1e-12
    assert columns["q.joint2"][0] - pose[1] == pytest.approx(6.74e-3, rel=1e-2)


def in_process_residual(robot, ff_path, end, settle=2.5):
    """RMS [m] of the tool's distance from its rest position over [end, end + 1 s] of the file at ``ff_path``
    simulated here: FeedforwardPD on the file's samples (the last held), from the rest state solved by
    :func:`rigid_rest`, fixed step 1 kHz, ``settle`` s beyond ``end``; and the CLI's run of the same file."""
    t, tau_m = columns_of(ff_path, "tau_m", robot)
    _, q_m = columns_of(ff_path, "q_m", robot)
    _, qd_m = columns_of(ff_path, "qd_m", robot)
    _, q = columns_of(ff_path, "q", robot)
    rest, motor = rigid_rest(robot, tau_m[0], q_m[0], q[0])
    out = Simulation(robot, FeedforwardPD(robot, tau_m, q_m, qd_m, t), q0=rest, q_m0=motor, rate=1000.0,
                     mode="fixed").run(end + settle)
    return residual(robot, out.t, out.q, end)


def residual(robot, t, q, end):
    """RMS [m] over [end, end + 1 s] of |p(t) - p(t_last)|, p the tool0 origin (forward kinematics of q)."""
    tool = np.array([frame_origins(robot, pose, ["tool0"])[0] for pose in q])
    window = (t >= end) & (t <= end + 1.0)
    return float(np.sqrt(np.mean(np.sum((tool[window] - tool[-1]) ** 2, axis=1))))


def test_the_readme_shaped_move_figures_come_out_of_the_cli(scompi, tmp_path, capsys):
    """README "Input shaping" (docs/input_shaping.md): the Scompi's poly9 move of 0.5 s from configuration 8, each
    feedforward written by ``flexrobot feedforward`` and run by ``flexrobot simulate --feedforward`` for 2.5 s past
    the end of the (shaped) move; residual vibration = RMS over the 1 s after that end of the tool's distance from its
    rest position. Through the CLI: rigid 8.276 um, ZVD 0.0674 um (122.7x), EJNEA 0.0677 um (122.2x), the README's
    figures (issue 38: 5.1x before, the robot jumping at the start); each equal to the in-process run of the same
    file from the rest state solved here (1e-9 relative). The end of the shaped move is 0.5 s + the added move time
    (``--json``'s shaping.added_time_s)."""
    move = tmp_path / "move.yaml"
    move.write_text(f"profile: poly9\nduration: 0.5\nq0: {CONFIGURATION_8}\nqf: {SHAPED_MOVE_END}\n")
    rms = {}
    for name, options in (("rigid", ["--method", "rigid"]), ("zvd", ["--method", "rigid", "--shaper", "zvd"]),
                          ("ejnea", ["--method", "ejnea"])):
        ff, out = tmp_path / f"{name}.csv", tmp_path / f"{name}_sim.csv"
        assert main(["feedforward", "scompi", "--tool", "--trajectory", str(move), *options, "--out", str(ff),
                     "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["end"]["rest_to_rest"]
        end = 0.5 + report["shaping"]["added_time_s"]
        assert main(["simulate", "scompi", "--tool", "--feedforward", str(ff), "--duration",
                     str(read_timeseries(ff)[0][-1] + 2.5), "--out", str(out)]) == 0
        capsys.readouterr()
        t, q = columns_of(out, "q", scompi)
        rms[name] = residual(scompi, t, q, end)
        assert rms[name] == pytest.approx(in_process_residual(scompi, ff, end, t[-1] - end), rel=1e-9)
    capsys.readouterr()
    ratios = {name: rms["rigid"] / value for name, value in rms.items()}
    print({name: f"{value * 1e6:.4g} um, {ratios[name]:.1f}x" for name, value in rms.items()})
    assert f"{rms['rigid'] * 1e6:.4g}" == "8.276" and f"{ratios['zvd']:.1f}" == "122.7"
    assert f"{ratios['ejnea']:.1f}" == "122.2"


def test_after_the_end_the_last_pose_is_held_with_its_static_torque(tmp_path, capsys):
    """planar_2r (elastic joints, gravity in the plane): a motion that ends moving (0.3 rad/s on joint 1; --end auto
    writes it as given) run 0.5 s past the file's end: from then on the motor torque is the static torque of the
    last pose, g(q_f) / W (pinocchio), plus the PD about the last motor position with zero rate reference,
    tau_m = g(q_f) / W + K_P (q_m(t_f) - q_m) - K_D qd_m, to 1e-9 N m on the simulated q_m, qd_m; a file that ends at
    rest (the rigid feedforward of a poly9 move) holds its own last torque, the same static torque there."""
    robot = load_robot("planar_2r")
    data = robot.model.createData()
    moving, rest = tmp_path / "moving.yaml", tmp_path / "rest.yaml"
    moving.write_text("waypoints:\n  - {t: 0.0, q: [0.0, 0.5], qd: [0.0, 0.0], qdd: [0.0, 0.0]}\n"
                      "  - {t: 0.4, q: [0.1, 0.6], qd: [0.3, 0.0], qdd: [0.0, 0.0]}\n")
    rest.write_text("profile: poly9\nduration: 0.4\nq0: [0.0, 0.5]\nqf: [0.1, 0.6]\n")
    for path in (moving, rest):
        ff, out = tmp_path / f"{path.stem}.csv", tmp_path / f"{path.stem}_sim.csv"
        assert main(["feedforward", "planar_2r", "--trajectory", str(path), "--method", "rigid", "--out",
                     str(ff)]) == 0
        printed = capsys.readouterr().out
        assert ("not rest to rest" in printed) == (path is moving)
        assert main(["simulate", "planar_2r", "--feedforward", str(ff), "--duration", "0.9", "--out",
                     str(out)]) == 0
        span = read_timeseries(ff)[0][-1]
        _, q_f = columns_of(ff, "q", robot)
        _, q_m_file = columns_of(ff, "q_m", robot)
        t, tau_m = columns_of(out, "tau_m", robot)
        _, q_m = columns_of(out, "q_m", robot)
        _, qd_m = columns_of(out, "qd_m", robot)
        after = t > span + 1e-9
        static = pin.computeGeneralizedGravity(robot.model, data, q_f[-1]) / robot.transmission
        expected = static + robot.kp * (q_m_file[-1] - q_m[after]) - robot.kd * qd_m[after]
        np.testing.assert_allclose(tau_m[after], expected, rtol=0, atol=1e-9)
        assert np.abs(qd_m[after]).max() > 1e-3 or path is rest  # the moving file's arm is braked by the PD
    capsys.readouterr()


def test_a_file_that_starts_moving_is_refused(tmp_path, capsys):
    """The simulator starts a file at rest: a feedforward of a motion that starts at 0.2 rad/s on joint 2
    (planar_2r, rigid method: q_m = W q, so qd_m = W qd) is refused in one line naming the file, the joint, the
    motor rate and its unit and the time (exit 2)."""
    path, ff, out = tmp_path / "moving.yaml", tmp_path / "ff.csv", tmp_path / "sim.csv"
    path.write_text("waypoints:\n  - {t: 0.0, q: [0.0, 0.5], qd: [0.0, 0.2], qdd: [0.0, 0.0]}\n"
                    "  - {t: 0.4, q: [0.1, 0.6], qd: [0.0, 0.0], qdd: [0.0, 0.0]}\n")
    assert main(["feedforward", "planar_2r", "--trajectory", str(path), "--method", "rigid", "--out",
                 str(ff)]) == 0
    capsys.readouterr()
    assert main(["simulate", "planar_2r", "--feedforward", str(ff), "--out", str(out)]) == 2
    message = capsys.readouterr().err.strip()
    w = load_robot("planar_2r").transmission[1]
    assert "\n" not in message and f"--feedforward {ff}: its first sample moves" in message
    assert f"(qd_m.joint2 = {0.2 * w:.4g} rad/s at t = 0 s)" in message and not out.exists()
