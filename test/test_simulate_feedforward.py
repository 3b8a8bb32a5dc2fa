"""``flexrobot simulate ROBOT --feedforward FILE`` (issue 25): the file ``flexrobot feedforward --out`` writes, run
through the simulator under the robot's shipped motor PD about its motor reference. Checked against the same
feedforward simulated in process (FeedforwardPD on the same plant), and its errors for files and options that do not
fit."""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import FeedforwardPD, Simulation
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant
from flexrobot_ros.timeseries import read_timeseries, write_timeseries

#: A short Canadarm move (rest to rest, ninth-order polynomial, 1.5 s) [rad], and the rates [Hz] of the runs.
Q0, QF, DURATION_S, RATE_HZ = [0.0, 0.0, 0.0], [0.3, -0.4, 0.5], 1.5, 200.0
#: Simulated time [s]: the move and 0.5 s after it (the last pose held with its static torque).
SIMULATED_S = 2.0


@pytest.fixture(scope="module")
def canadarm_run(tmp_path_factory):
    """The CLI's two steps on the Canadarm (flexible links, rigid joints): feedforward (default method, prescribed;
    ``--end as-given``: the undamped beams never come to rest after this move, so the default refuses it, see
    test_rest_to_rest.py) to CSV, then simulate --feedforward with the compiled plant; their outputs and the printed
    line."""
    folder = tmp_path_factory.mktemp("simulate_feedforward")
    trajectory, ff, out = folder / "move.yaml", folder / "ff.csv", folder / "sim.csv"
    trajectory.write_text(f"profile: poly9\nduration: {DURATION_S}\nq0: {Q0}\nqf: {QF}\n")
    assert main(["feedforward", "canadarm", "--trajectory", str(trajectory), "--rate", str(RATE_HZ),
                 "--end", "as-given", "--out", str(ff)]) == 0
    return folder, ff, out


def test_simulate_feedforward_matches_the_in_process_simulation(canadarm_run, capsys):
    """The CLI run (q, q_m, tau_m, error.<joint>, deflection.<link>.y columns) equals the in-process simulation of
    the same feedforward (feedforward() at 200 Hz, FeedforwardPD with the shipped K_P = 2e4 N m/rad, K_D = 2e3 N m s/rad
    about q_m, the compiled plant; after the file's end the last pose held with its static torque, zero without
    gravity) to 1e-12 of each column's peak; error.<joint> is q - q_ref(t) with the reference interpolated linearly
    here (held after the move); the closing line reports the worst joint error [rad] and the largest tip deflection
    [mm] of that run."""
    folder, ff, out = canadarm_run
    capsys.readouterr()
    assert main(["simulate", "canadarm", "--feedforward", str(ff), "--duration", str(SIMULATED_S), "--rate",
                 str(RATE_HZ), "--compiled", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    t, columns = read_timeseries(out)
    robot = load_robot("canadarm")
    result = feedforward(robot, Poly9Trajectory(Q0, QF, DURATION_S), "prescribed", rate_hz=RATE_HZ)
    plant = ElasticRobotPlant(robot, compiled=True)
    controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t,
                               hold=(np.zeros(robot.n), result.q_m[-1]))
    np.testing.assert_array_equal(controller.kp, [2e4] * 3)  # the shipped gains (config/canadarm.yaml)
    expected = Simulation(plant, controller, q0=result.q[0], rate=RATE_HZ).run(SIMULATED_S)
    np.testing.assert_allclose(t, expected.t, rtol=0, atol=1e-12)
    reference = np.stack([np.interp(expected.t, result.t, result.q[:, j]) for j in range(robot.n)], axis=1)
    error = expected.q - reference
    tips = plant.tip_deflections(expected.states)[:, :, 0]
    for j, joint in enumerate(robot.joint_names):
        for name, values in (("q", expected.q[:, j]), ("q_m", expected.q_m[:, j]), ("tau_m", expected.tau_m[:, j]),
                             ("error", error[:, j])):
            np.testing.assert_allclose(columns[f"{name}.{joint}"], values, rtol=0,
                                       atol=1e-12 * np.abs(values).max(), err_msg=f"{name}.{joint}")
    for k, link in enumerate(("link1", "link2", "link3")):
        np.testing.assert_allclose(columns[f"deflection.{link}.y"], tips[:, k], rtol=0,
                                   atol=1e-12 * np.abs(tips[:, k]).max(), err_msg=link)
    worst = np.abs(error).max()
    tip = np.linalg.norm(plant.tip_deflections(expected.states), axis=2).max()
    assert worst > 0 and tip > 1e-3  # a real move: the joints lag, the beams bend by millimetres
    assert f"max |q - q_d(t)| = {worst:.3g} rad along the trajectory" in printed
    assert f"max tip deflection {1e3 * tip:.3g} mm" in printed


def test_simulate_feedforward_refuses_files_and_options_that_do_not_fit(canadarm_run, capsys):
    """A file of another robot (columns missing) and options a feedforward run would ignore: exit 2 with an error
    naming --feedforward."""
    folder, ff, out = canadarm_run
    other = folder / "planar.csv"
    write_timeseries(other, np.array([0.0, 0.1]), {"q.joint1": np.zeros(2)})
    capsys.readouterr()
    assert main(["simulate", "canadarm", "--feedforward", str(other), "--out", str(out)]) != 0
    message = capsys.readouterr().err
    assert f"--feedforward {other}" in message and "missing columns" in message and "q_m.joint1" in message
    assert main(["simulate", "canadarm", "--feedforward", str(ff), "--q0", "0,0,0", "--out", str(out)]) != 0
    assert "--q0 would conflict" in capsys.readouterr().err


def test_composed_robot_feedforward_file_runs_through_the_simulator(tmp_path, capsys):
    """moberg5_flexlink (gear dampers, the extra elasticity joint3, link 2 a beam: the composed model): ``flexrobot
    feedforward`` (default method, prescribed) of a 0.5 s move at 1 kHz writes the predicted q_e.joint3 beside the
    torques, and ``simulate --feedforward`` (ElasticRobotPlant, compiled, the shipped PD K_P = 2e5 N m/rad) follows
    it: the worst joint error along the move is below 1e-5 rad (test_feedforward_any_robot.py: 2.6e-6 rad, and
    4.2e-2 rad with the rigid baseline), as the closing line reports."""
    trajectory, ff, out = tmp_path / "move.yaml", tmp_path / "ff.csv", tmp_path / "sim.csv"
    trajectory.write_text("profile: poly9\nduration: 0.5\nq0: [0.0, 0.5]\nqf: [0.3, 0.2]\n")
    assert main(["feedforward", "moberg5_flexlink", "--trajectory", str(trajectory), "--rate", "1000",
                 "--out", str(ff)]) == 0
    assert "prescribed" in capsys.readouterr().out
    predicted = read_timeseries(ff)[1]
    assert np.abs(predicted["q_e.joint3"]).max() > 1e-4  # rad: the extra elasticity moves
    assert main(["simulate", "moberg5_flexlink", "--feedforward", str(ff), "--compiled", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    columns = read_timeseries(out)[1]
    worst = max(np.abs(columns[f"error.{joint}"]).max() for joint in ("joint1", "joint2"))
    print(f"moberg5_flexlink simulate --feedforward: max |q - q_ref| = {worst:.3e} rad")
    assert 0 < worst < 1e-5
    assert f"max |q - q_d(t)| = {worst:.3g} rad along the trajectory" in printed
