"""Issue 12, item 5: output paths handled one way (missing parent directories are created by every command; a path
that cannot be written is refused before the work starts), closed pipes end quietly, inputs that cannot take effect
are refused.

Quoted failures covered here (one test each, named in the docstrings): ``feedforward ... --json | head`` ends in a
BrokenPipeError traceback; ``oma ... --plot nodir/s.png`` and ``bag info RUN/run1.db3`` end in tracebacks; a
missing output directory is refused by ``modal --frf-plot``, ``modal-map --out``, ``dh2urdf``, ``oma
--modal-data``, and by ``identify --out`` only after all the starts; ``simulate --duration 0.5 --impact
tool0,0,50,0,0.6,0.7`` succeeds without the impact; ``modal-map --out j.csv`` writes an NPZ named .csv; ``oma
--modal-data m.yaml --pose 0,1`` on 6-channel data writes a 2-entry pose; re-running it appends a duplicate pose.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from cli_cases import POSE, flexrobot_script, run_shell, write_record
from flexrobot_ros.cli import main
from flexrobot_ros.identification.modal_data import read_modal_data

OMA = ["--orders", "2:12"]  # the record has two modes: small VAR orders keep the runs short


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    return write_record(tmp_path_factory.mktemp("cli") / "record.csv")


def test_closed_pipe_ends_quietly(tmp_path):
    """``flexrobot feedforward ... --json | head`` (quoted): exit 0 or 141, no traceback (EJNEA, planar 2R)."""
    if not flexrobot_script().exists():
        pytest.skip("the package is not installed beside this interpreter (scripts/test installs it)")
    (tmp_path / "move.yaml").write_text("profile: poly9\nduration: 1.0\nq0: [0, 0]\nqf: [1.0, -0.5]\n")
    done = run_shell("set -o pipefail; flexrobot feedforward planar_2r --trajectory move.yaml --method ejnea "
                     "--out ff.csv --json | head -c 100 > /dev/null", tmp_path)
    assert done.returncode in (0, 141), done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_oma_plot_into_a_missing_directory_is_written(record, tmp_path, capsys, monkeypatch):
    """``oma ... --plot nodir/s.png`` (quoted: traceback after printing): the directory is created; a plot path
    under a file is refused before the identification (nothing printed on stdout)."""
    monkeypatch.chdir(tmp_path)
    assert main(["oma", str(record), *OMA, "--plot", "nodir/s.png"]) == 0
    assert (tmp_path / "nodir" / "s.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    (tmp_path / "afile").write_text("")
    assert main(["oma", str(record), *OMA, "--plot", "afile/s.png"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "afile is a file, not a directory" in captured.err


def test_bag_info_accepts_the_bags_db3_file(tmp_path, capsys):
    """``bag info RUN/run1.db3`` (quoted: NotADirectoryError, while oma accepts that file): the same summary as for
    the bag directory; a file that is no bag gives a one-line error and status 2."""
    from flexrobot_ros.runtime.bag_writer import JointStateSeries, write_joint_state_bag

    t = np.arange(50) / 1000.0
    bag = write_joint_state_bag(tmp_path / "RUN", t, ["joint1"], [JointStateSeries("/motor_states", t[:, None])])
    (db3,) = sorted(bag.glob("*.db3"))
    assert main(["bag", "info", str(bag), "--json"]) == 0
    directory = json.loads(capsys.readouterr().out)
    assert main(["bag", "info", str(db3), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == directory and directory["message_count"] == 50
    (tmp_path / "x.db3").write_text("not a bag")
    assert main(["bag", "info", str(tmp_path / "x.db3")]) == 2
    err = capsys.readouterr().err
    assert "not a rosbag2 bag" in err and err.count("\n") == 1


def test_missing_output_directories_are_created_by_every_command(record, tmp_path, capsys, monkeypatch):
    """``modal --frf-plot``, ``modal-map --out``, ``dh2urdf --out``, ``oma --modal-data`` (quoted: refused) now
    create missing directories like simulate, feedforward and bringup --plot-dir."""
    import flexrobot_ros.model.loader as loader

    monkeypatch.chdir(tmp_path)
    spec = loader.share_directory() / "urdf" / "scompi.dh.yaml"
    runs = [
        (["modal", "scompi", "--q", *map(str, POSE), "--frf-plot", "a/b/frf.png", "--frf-range", "1:50:20"],
         "a/b/frf.png"),
        (["modal-map", "planar_2r", "--start", "0,0", "--end", "0.5,0.5", "--count", "3", "--out", "c/map.npz"],
         "c/map.npz"),
        (["dh2urdf", str(spec), "--out", "d/e/scompi.urdf"], "d/e/scompi.urdf"),
        (["oma", str(record), *OMA, "--modal-data", "f/modes.yaml"], "f/modes.yaml"),
        (["simulate", "planar_2r", "--duration", "0.05", "--out", "g/s.csv"], "g/s.csv"),
    ]
    for argv, written in runs:
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        assert (tmp_path / written).is_file(), written


def test_identify_refuses_an_unwritable_out_before_the_starts(tmp_path, capsys):
    """``identify --out`` into an impossible directory (quoted: refused only after all the starts have run): refused
    at once, no start is run (no progress line)."""
    from flexrobot_ros.identification.modal_data import modal_data_from_model, write_modal_data
    from flexrobot_ros.model import load_robot

    data = write_modal_data(tmp_path / "m.yaml", modal_data_from_model(load_robot("planar_2r"),
                                                                      [[0.1, 0.2], [0.8, -0.6], [1.5, 0.4]]))
    (tmp_path / "file").write_text("")
    assert main(["identify", "planar_2r", "--modal-data", str(data), "--out", str(tmp_path / "file" / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is a file, not a directory" in err and "start " not in err


def test_simulate_refuses_an_impact_after_the_end(tmp_path, capsys):
    """``simulate --duration 0.5 --impact tool0,0,50,0,0.6,0.7`` (quoted: succeeded, impact never happened):
    refused with status 2 before simulating; an impact cut short by the end is simulated with a warning."""
    out = tmp_path / "s.csv"
    assert main(["simulate", "scompi", "--duration", "0.5", "--impact", "tool0,0,50,0,0.6,0.7", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "0.6 s" in err and "after the end" in err and not out.exists()
    assert main(["simulate", "planar_2r", "--duration", "0.05", "--impact", "tool0,0,50,0,0.04,0.06", "--out",
                 str(out)]) == 0
    assert "cut short" in capsys.readouterr().err and out.exists()


def test_modal_map_refuses_a_csv_name_for_its_npz(tmp_path, capsys):
    """``modal-map --out j.csv`` (quoted: wrote an NPZ archive named .csv): refused, nothing written."""
    out = tmp_path / "j.csv"
    assert main(["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--count", "2", "--out", str(out)]) == 2
    assert ".npz" in capsys.readouterr().err and not out.exists()


def test_oma_pose_length_is_checked_and_a_rerun_replaces_the_pose(record, tmp_path, capsys):
    """``oma --modal-data m.yaml --pose 0,1`` on 6-channel data (quoted: wrote a 2-entry pose) is refused before the
    identification; re-running at the same pose (quoted: appended a duplicate) replaces that pose and says so."""
    modes = tmp_path / "m.yaml"
    assert main(["oma", str(record), *OMA, "--modal-data", str(modes), "--pose", "0,1"]) == 2
    captured = capsys.readouterr()
    assert "--pose: 2 values for a record of 6 joints" in captured.err and captured.out == ""
    assert not modes.exists()
    pose = ",".join(str(float(v)) for v in POSE)
    for _ in range(2):
        assert main(["oma", str(record), *OMA, "--modal-data", str(modes), "--pose", pose]) == 0
    assert "replaced the modes of pose 1 of 1 (same q)" in capsys.readouterr().out
    data = read_modal_data(modes)
    assert len(data.poses) == 1
    np.testing.assert_allclose(data.poses[0].q, POSE)
    assert main(["oma", str(record), *OMA, "--modal-data", str(modes)]) == 0  # pose from the q.* channels: same
    assert len(read_modal_data(modes).poses) == 1
    assert main(["oma", str(record), *OMA, "--modal-data", str(modes), "--pose", *shlex.split("0 0 0 0 0 0")]) == 0
    assert "added pose 2" in capsys.readouterr().out and len(read_modal_data(modes).poses) == 2


@pytest.mark.parametrize("argv, message", [
    (["modal", "scompi", "--q", "0,0,0,0,0,0", "--frf-range", "1:20:10"], "give --frf-plot"),
    (["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--q", "1,1"], "--q applies to --gain-sweep"),
    (["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--kd-factor", "0.3"], "--kd-factor applies"),
    (["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--base", "0,0"], "--base applies"),
    (["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--plot-modes", "1"], "give --plot"),
    (["modal-map", "planar_2r", "--start", "0,0", "--end", "1,1", "--count", "0"], "--count"),
    (["oma", "record.csv", "--pose", "0,1"], "give --modal-data"),
])
def test_options_that_would_be_ignored_are_refused(argv, message, record, tmp_path, capsys, monkeypatch):
    """Inputs that cannot take effect (issue 12 item 5): an option the chosen sweep or output ignores is refused
    with status 2 before any work, naming what it applies to."""
    monkeypatch.chdir(record.parent)
    assert main([*argv, "--out", str(tmp_path / "m.npz")] if argv[0] == "modal-map" else argv) == 2
    assert message in capsys.readouterr().err
