"""``flexrobot oma``: JSON, PNG and modal-data output on simulator-format files and rosbag2 bags; bad input gives
a one-line error and exit status 2."""
from __future__ import annotations

import json

import numpy as np
import pytest

from oma_cases import TABLE_2_5_CASE1, scompi_standin
from flexrobot_ros.cli import main
from flexrobot_ros.identification.modal_data import read_modal_data
from flexrobot_ros.timeseries import write_timeseries

POSE = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])  # seed 000 eq. 2.21, configuration 8


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    """The Table 2.5 stand-in written like the simulator: q_m.joint1..6 around the set point of eq. 2.22 plus
    the link positions q.joint1..6 (constant pose) and an unrelated channel."""
    case = scompi_standin()
    q_m0 = np.array([0.0, -0.374, 1.9446, -0.0001, -1.9449, 0.0])
    columns = {f"q_m.joint{i + 1}": q_m0[i] + case.y[:, i] for i in range(6)}
    columns.update({f"q.joint{i + 1}": np.full(len(case.y), POSE[i]) for i in range(6)})
    columns["tool_acceleration.y"] = np.gradient(np.gradient(case.y[:, 0]))
    return write_timeseries(tmp_path_factory.mktemp("oma") / "impact.csv", case.t, columns)


def test_json_plot_and_modal_data(record, tmp_path, capsys):
    """Default channels are the motor positions q_m.*; the JSON holds Table 2.5's 11 modes (case 1) within
    0.1 Hz / 0.2 percentage points, damping as fractions; the PNG is written; the modal-data file (issue 7's
    format) gets the pose from the q.* channels and one entry per mode, read back by the identification."""
    png, yaml_path = tmp_path / "stab.png", tmp_path / "modes.yaml"
    code = main(["oma", str(record), "--method", "ssi-cov", "--orders", "2:80", "--json", "--plot", str(png),
                 "--modal-data", str(yaml_path)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["channels"] == [f"q_m.joint{i}" for i in range(1, 7)]
    f, z = np.array(doc["frequencies_hz"]), np.array(doc["damping_ratios"])
    assert len(f) == 11
    assert np.max(np.abs(f - TABLE_2_5_CASE1[:11, 0])) < 0.1
    assert np.max(np.abs(100 * z - TABLE_2_5_CASE1[:11, 1])) < 0.2
    assert np.array(doc["shapes_real"]).shape == (11, 6)
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    data = read_modal_data(yaml_path)
    assert len(data.poses) == 1 and len(data.poses[0].modes) == 11
    np.testing.assert_allclose(data.poses[0].q, POSE)
    assert data.poses[0].modes[6].frequency_hz == pytest.approx(f[6])
    assert data.poses[0].modes[6].shape.shape == (6,)
    # a second run appends a pose
    assert main(["oma", str(record), "--method", "ssi-cov", "--orders", "2:60", "--modal-data", str(yaml_path),
                 "--pose", "0,0,0,0,0,0"]) == 0
    assert len(read_modal_data(yaml_path).poses) == 2


def test_text_output_and_channel_globs(record, capsys):
    """Human-readable table; --channels by glob; --start/--end crop the record (free decay only here)."""
    assert main(["oma", str(record), "--channels", "q_m.joint[1-3]", "--method", "var", "--orders", "2:20",
                 "--start", "0.21", "--end", "2.0"]) == 0
    out = capsys.readouterr().out
    assert "3 channels (q_m.joint1, q_m.joint2, q_m.joint3)" in out
    assert "f [Hz]" in out and "zeta [%]" in out


def _joint_state_bag(path, stamps_ns, y):
    """A rosbag2 bag of /motor_states sensor_msgs/JointState: header stamps ``stamps_ns`` [integer ns], positions
    ``y`` (samples, joints) of joints joint1, joint2, ..."""
    from rosbags.rosbag2 import Writer
    from flexrobot_ros.runtime.messages import typestore

    store = typestore("jazzy")
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header, Time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    joints = [f"joint{i + 1}" for i in range(y.shape[1])]
    with Writer(path, version=9) as writer:
        conn = writer.add_connection("/motor_states", "sensor_msgs/msg/JointState", typestore=store)
        for k, stamp in enumerate(stamps_ns):
            sec, nsec = divmod(int(stamp), 10**9)
            msg = JointState(Header(Time(sec=sec, nanosec=nsec), "base"), joints, y[k], np.zeros(len(joints)),
                             np.zeros(len(joints)))
            writer.write(conn, int(stamp), bytes(store.serialize_cdr(msg, "sensor_msgs/msg/JointState")))
    return path


def test_rosbag_joint_states(tmp_path, capsys):
    """A rosbag2 bag of sensor_msgs/JointState (stamped at 1 kHz) is read through the plugged-in reader:
    channels <topic>.position.<joint>; a 2-mode free decay comes out within 0.1 %."""
    fs, n = 1000.0, 3000
    t = np.arange(n) / fs
    y = np.column_stack([np.exp(-0.02 * 2 * np.pi * 12 * t) * np.sin(2 * np.pi * 12 * t)
                         + 0.5 * np.exp(-0.05 * 2 * np.pi * 40 * t) * np.sin(2 * np.pi * 40 * t + 1),
                         np.exp(-0.02 * 2 * np.pi * 12 * t) * np.cos(2 * np.pi * 12 * t)
                         - np.exp(-0.05 * 2 * np.pi * 40 * t) * np.sin(2 * np.pi * 40 * t)])
    bag = _joint_state_bag(tmp_path / "bag", 100 * 10**9 + np.arange(n) * 10**6, y)
    assert main(["oma", str(bag), "--channels", "motor_states.position.*", "--method", "ssi-cov", "--orders",
                 "2:20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["channels"] == ["motor_states.position.joint1", "motor_states.position.joint2"]
    # damped sinusoids: undamped natural frequency f_d / sqrt(1 - zeta^2)
    true_f = [12 / np.sqrt(1 - 0.02**2), 40 / np.sqrt(1 - 0.05**2)]
    true_z = [0.02 / np.sqrt(1 + 0.02**2), 0.05 / np.sqrt(1 + 0.05**2)]
    np.testing.assert_allclose(doc["frequencies_hz"], true_f, rtol=1e-3)
    np.testing.assert_allclose(doc["damping_ratios"], true_z, rtol=1e-2)


def test_bad_input_exit_status_2(tmp_path, capsys):
    """Missing file, non-monotonic time column, unknown channel, band above Nyquist: one-line errors, status 2."""
    assert main(["oma", str(tmp_path / "none.csv")]) == 2
    assert "no such" in capsys.readouterr().err
    t = np.arange(500) / 100.0
    t[100] = t[99]
    path = write_timeseries(tmp_path / "bad.csv", t, {"q_m.joint1": np.sin(t)})
    assert main(["oma", str(path)]) == 2
    assert "timestamps must increase strictly" in capsys.readouterr().err
    good = write_timeseries(tmp_path / "good.csv", np.arange(500) / 100.0, {"q_m.joint1": np.sin(np.arange(500))})
    assert main(["oma", str(good), "--channels", "tau.*"]) == 2
    assert "no channel matches 'tau.*'" in capsys.readouterr().err
    assert main(["oma", str(good), "--band", "80"]) == 2
    assert "too low for the requested band" in capsys.readouterr().err
    assert main(["oma", str(good), "--orders", "2:300"]) == 2
    assert "too few samples" in capsys.readouterr().err


def test_headerless_matrix_needs_fs(tmp_path, capsys):
    """A headerless matrix (one column per channel, no time column, like most DAQ exports) is read with --fs:
    channels ch1, ch2, time sample / fs. Without --fs, with --fs on a file that has a time column, or with a
    non-positive --fs: a one-line error naming the file and the option, status 2."""
    fs, n = 200.0, 4000
    t = np.arange(n) / fs
    rng = np.random.default_rng(22)
    y = np.column_stack([np.exp(-0.01 * 2 * np.pi * 7 * t) * np.sin(2 * np.pi * 7 * t),
                         np.exp(-0.01 * 2 * np.pi * 7 * t) * np.cos(2 * np.pi * 7 * t)])
    y += 1e-4 * rng.standard_normal(y.shape)
    asc = tmp_path / "daq.asc"
    np.savetxt(asc, y, fmt="%15.7e")
    csv = tmp_path / "daq.csv"
    np.savetxt(csv, y, fmt="%.9g", delimiter=",")
    for path in (asc, csv):
        assert main(["oma", str(path)]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and "--fs HZ" in err and "no header row" in err
        assert main(["oma", str(path), "--fs", "0"]) == 2
        assert "--fs" in capsys.readouterr().err
        assert main(["oma", str(path), "--fs", str(fs), "--orders", "2:20", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["channels"] == ["ch1", "ch2"] and doc["fs_hz"] == fs
        np.testing.assert_allclose(doc["frequencies_hz"], [7.0 / np.sqrt(1 - 0.01**2)], rtol=1e-3)
    with_t = write_timeseries(tmp_path / "with_t.csv", t, {"a": y[:, 0]})
    assert main(["oma", str(with_t), "--fs", str(fs)]) == 2
    err = capsys.readouterr().err
    assert str(with_t) in err and "--fs" in err and "leave --fs out" in err


def test_rosbag_epoch_stamps_keep_the_rate(tmp_path, capsys):
    """Issue 22: a 1 kHz bag stamped in 2026 (1.79573e9 s since the epoch) reported 1000.07 Hz and was resampled
    (float64 epoch seconds resolve 238 ns), and its gaps were printed as '1.79573e+09-1.79573e+09 s'. Read as
    integer nanoseconds: exactly 1000 Hz, nothing resampled, gaps in seconds from the record's start."""
    from flexrobot_ros.oma.signals import SignalWarning, prepare, read_signals

    fs, n, epoch_ns = 1000.0, 3000, 1_795_730_000 * 10**9 + 123_456_789
    k = np.arange(n)
    t = k / fs
    y = np.exp(-1.5 * t)[:, None] * np.column_stack([np.sin(2 * np.pi * 12 * t), np.cos(2 * np.pi * 12 * t)])
    bag = _joint_state_bag(tmp_path / "epoch", epoch_ns + k * 10**6, y)
    assert main(["oma", str(bag), "--orders", "2:12", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fs_hz"] == fs
    assert not any("resampled" in note for note in doc["notes"]), doc["notes"]
    gapped = _joint_state_bag(tmp_path / "gap", epoch_ns + np.where(k < 1000, k, k + 20) * 10**6, y)
    raw = read_signals(gapped, ["*.position.*"])
    assert raw.t[0] == 0.0 and raw.t[-1] == pytest.approx(3.019, abs=1e-12)
    assert main(["oma", str(gapped)]) == 2
    err = capsys.readouterr().err
    assert "0.999-1.02 s from the record's start" in err and "e+09" not in err, err
    with pytest.warns(SignalWarning, match=r"longest gap-free segment 1\.02-3\.019 s"):
        prepared = prepare(raw, on_gap="longest")
    assert prepared.fs_hz == fs and not prepared.resampled
