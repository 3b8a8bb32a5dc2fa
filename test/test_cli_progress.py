"""Long commands show progress on stderr and say what they wrote (issue 22: `flexrobot modal rrp --controller
decoupling ...` ran 135 s and `simulate` 122 s with no output, the first `--compiled` run compiled ~30 s silently,
`--frf-plot` ran 16-46 s and never said it wrote the file). Short cases here: the stage lines, the written-file
lines, and with --json a pure-JSON stdout and an empty stderr."""
from __future__ import annotations

import json

import numpy as np

from flexrobot_ros.cli import main
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.commands.simulate import run_with_progress
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.simulation import PDGravityCompensation, Simulation


def test_simulate_says_each_stage_and_the_files_it_wrote(tmp_path, capsys):
    out, plot = tmp_path / "hold.csv", tmp_path / "hold.png"
    assert main(["simulate", "planar_2r", "--q0", "0,0.5", "--duration", "0.05", "--out", str(out),
                 "--plot", str(plot)]) == 0
    err = capsys.readouterr().err
    for line in ("flexrobot simulate: building the plant of planar_2r ...",
                 "flexrobot simulate: simulating 0.05 s at 1000 Hz (fixed mode) ...",
                 f"flexrobot simulate: wrote time series {out}\n", f"flexrobot simulate: wrote plot {plot}\n"):
        assert line in err, err
    assert err.count(": done in ") == 2 and out.exists() and plot.exists()


def test_simulate_json_keeps_stdout_json_and_stderr_empty(tmp_path, capsys):
    assert main(["simulate", "planar_2r", "--q0", "0,0.5", "--duration", "0.05", "--out", str(tmp_path / "h.csv"),
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["samples"] == 51 and captured.err == ""


def test_simulate_compiled_says_it_may_compile(tmp_path, capsys):
    """The --compiled plant build is a stage of its own whose line says it compiles on first use (canadarm)."""
    trajectory = share_directory() / "config" / "canadarm_trajectory.yaml"
    assert main(["simulate", "canadarm", "--open-loop", str(trajectory), "--compiled", "--duration", "0.02",
                 "--out", str(tmp_path / "c.npz")]) == 0
    err = capsys.readouterr().err
    assert ("flexrobot simulate: building the plant of canadarm (--compiled: generated C, compiled on first use in "
            "~20-30 s, then cached) ...") in err
    assert "flexrobot simulate: building the plant of canadarm: done in " in err


def test_fixed_mode_progress_in_tenths_is_the_same_run(capsys):
    """With every tenth reported (period 0 s), the run says how far it is (1 of 10 lines per tenth but the last)
    and its states are bit-identical to one ``Simulation.run``."""
    robot = load_robot("planar_2r")
    hold = PDGravityCompensation.create(robot, [0.0, 0.5])
    chunked = run_with_progress(Simulation(robot, hold, rate=1000.0), 0.1, Progress("simulate"), period_s=0.0)
    one = Simulation(robot, hold, rate=1000.0).run(0.1)
    np.testing.assert_array_equal(chunked.states, one.states)
    np.testing.assert_array_equal(chunked.t, one.t)
    err = capsys.readouterr().err
    assert "flexrobot simulate: simulated 0.01 of 0.1 s (10 %)\n" in err and "(90 %)" in err
    assert err.count("simulated ") == 9, err


def test_modal_frf_plot_says_it_computes_and_writes(tmp_path, capsys):
    frf = tmp_path / "frf.png"
    arguments = ["modal", "scompi", "--q", "0,-0.37,1.94,0,-1.94,0", "--frf-plot", str(frf), "--frf-range", "1:60:12"]
    assert main(arguments) == 0
    err = capsys.readouterr().err
    assert "flexrobot modal: tool receptance at 12 frequencies, 1-60 Hz ..." in err
    assert f"flexrobot modal: wrote receptance plot {frf}\n" in err and frf.exists()
    assert main([*arguments, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["frf_plot"] == str(frf) and captured.err == ""


def test_modal_along_motion_shows_its_stages(capsys):
    """``--controller decoupling`` on the RRP robot (seed 004), two times 2 ms apart: the plant build and the
    simulation + linearization are stages; with --json stderr stays empty."""
    arguments = ["modal", "rrp", "--controller", "decoupling", "--trajectory",
                 str(share_directory() / "config" / "rrp_trajectory.yaml"), "--times", "0,0.002"]
    assert main(arguments) == 0
    err = capsys.readouterr().err
    assert "flexrobot modal: building the plant of rrp: done in " in err
    assert ("flexrobot modal: simulating the motion to t = 0.002 s under decoupling control and linearizing at 2 "
            "times ...") in err
    assert main([*arguments, "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)["along_motion"]) == 2 and captured.err == ""
