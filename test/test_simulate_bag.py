"""``flexrobot simulate ... --out DIR`` writes a real rosbag2 bag holding the same samples as the CSV output.

Experiment: seed 000 section 2.4.3 (Table 2.5, case 2): Scompi with the 4 kg tool at configuration 8 under PD +
gravity compensation, 50 N along y_0 on tool0 during [0.2, 0.206) s, 2.5 s at 1 kHz, fixed-step mode. The same
command is run to a CSV file and to bags; the CSV (already tested against the physics in
test_simulation_impact.py) is the reference. The bags are read back with plain rosbags (its own Jazzy typestore,
not the package's reader), and ``flexrobot oma`` must find the same modes in the bag as in the CSV.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from flexrobot_ros.cli import main
from flexrobot_ros.simulation.impact_experiment import thesis_configuration
from flexrobot_ros.timeseries import read_timeseries

DURATION_S, RATE_HZ = 2.5, 1000.0
SAMPLES = int(DURATION_S * RATE_HZ) + 1  # t = 0, 1 ms, ..., 2.5 s
JOINTS = [f"joint{i}" for i in range(1, 7)]
#: bag topic -> CSV column prefixes of (position, velocity, effort), as documented in commands/simulate.py
TOPIC_COLUMNS = {"/motor_states": ("q_m", "qd_m", "tau_m"), "/joint_states": ("q", "qd", "tau_j")}


def simulate(out, *extra) -> None:
    q0 = [repr(float(v)) for v in thesis_configuration(8)]
    argv = ["simulate", "scompi", "--tool", "--q0", *q0, "--duration", str(DURATION_S), "--rate", str(RATE_HZ),
            "--impact", "tool0,0,50,0,0.2,0.206", "--out", str(out), *extra]
    assert main(argv) == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("simulate_bag")
    paths = {"csv": directory / "impact.csv", "bag": directory / "impact_bag",
             "mcap": directory / "impact_mcap", "motor_bag": directory / "impact_motor_bag"}
    simulate(paths["csv"])
    simulate(paths["bag"])
    simulate(paths["mcap"], "--storage", "mcap")
    simulate(paths["motor_bag"], "--bag-topics", "motor_states")
    return paths


def read_plain(path):
    """{topic: (msgtypes, bag times [ns], stamps [s], names, position, velocity, effort)} with plain rosbags."""
    out = {}
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, timestamp, data in reader.messages():
            m = reader.deserialize(data, connection.msgtype)
            entry = out.setdefault(connection.topic, {"types": set(), "bag_ns": [], "stamps": [], "names": set(),
                                                      "position": [], "velocity": [], "effort": []})
            entry["types"].add(connection.msgtype)
            entry["bag_ns"].append(timestamp)
            entry["stamps"].append(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec)
            entry["names"].add(tuple(m.name))
            for field in ("position", "velocity", "effort"):
                entry[field].append(np.array(getattr(m, field), dtype=float))
    return {topic: {k: np.array(v) if isinstance(v, list) else v for k, v in entry.items()}
            for topic, entry in out.items()}


@pytest.mark.parametrize("kind", ["bag", "mcap"])
def test_bag_holds_the_csv_samples_as_joint_states(runs, kind):
    """One sensor_msgs/msg/JointState per output sample on /motor_states and /joint_states; position, velocity
    and effort equal the CSV columns to 1e-12 (both are float64 written from the same arrays); header stamps and
    bag times are the sample times from 0 s to the nanosecond."""
    t, columns = read_timeseries(runs["csv"])
    assert t.size == SAMPLES
    topics = read_plain(runs[kind])
    assert sorted(topics) == sorted(TOPIC_COLUMNS)
    for topic, prefixes in TOPIC_COLUMNS.items():
        entry = topics[topic]
        assert entry["types"] == {"sensor_msgs/msg/JointState"}
        assert entry["names"] == {tuple(JOINTS)}
        assert entry["position"].shape == (SAMPLES, 6)
        np.testing.assert_allclose(entry["stamps"], t, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(entry["bag_ns"], np.round(t * 1e9).astype(np.int64))
        for field, prefix in zip(("position", "velocity", "effort"), prefixes):
            expected = np.column_stack([columns[f"{prefix}.{joint}"] for joint in JOINTS])
            np.testing.assert_allclose(entry[field], expected, rtol=0, atol=1e-12, err_msg=f"{topic} {field}")


def test_bag_metadata_is_what_ros2_bag_info_reads(runs):
    """metadata.yaml of the sqlite3 and mcap bags: rosbag2 version 9 (Jazzy), the storage asked for, 2 x 2501
    messages, each topic's count, CDR and the Jazzy RIHS01 hash of sensor_msgs/msg/JointState (from rosbags' own
    Jazzy typestore), which Jazzy's ``ros2 bag info/play`` require."""
    jazzy_hash = get_typestore(Stores.ROS2_JAZZY).hash_rihs01("sensor_msgs/msg/JointState")
    for kind, storage, suffix in (("bag", "sqlite3", ".db3"), ("mcap", "mcap", ".mcap")):
        info = yaml.safe_load((runs[kind] / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        assert info["version"] == 9 and info["storage_identifier"] == storage
        assert info["message_count"] == 2 * SAMPLES
        assert info["starting_time"]["nanoseconds_since_epoch"] == 0
        assert all(p.endswith(suffix) and (runs[kind] / p).is_file() for p in info["relative_file_paths"])
        for topic in info["topics_with_message_count"]:
            meta = topic["topic_metadata"]
            assert topic["message_count"] == SAMPLES
            assert meta["type"] == "sensor_msgs/msg/JointState" and meta["serialization_format"] == "cdr"
            assert meta["type_description_hash"] == jazzy_hash


def oma_json(capsys, path, channels):
    capsys.readouterr()
    assert main(["oma", str(path), "--json", "--channels", channels]) == 0
    return json.loads(capsys.readouterr().out)


def test_oma_finds_the_same_modes_in_the_bag_as_in_the_csv(runs, capsys):
    """``flexrobot oma BAG --channels 'motor_states.position.*'`` on the /motor_states bag against ``flexrobot oma
    CSV --channels 'q_m.*'``: same data, so the same modes. Stamps are rebuilt from nanoseconds, so the sampling
    rate may differ in the last bits (checked to 1e-12); frequencies and damping ratios agree to 1e-9 relative."""
    from_csv = oma_json(capsys, runs["csv"], "q_m.*")
    from_bag = oma_json(capsys, runs["motor_bag"], "motor_states.position.*")
    assert from_bag["channels"] == [f"motor_states.position.{joint}" for joint in JOINTS]
    assert from_bag["fs_hz"] == pytest.approx(from_csv["fs_hz"], rel=1e-12)
    assert len(from_csv["frequencies_hz"]) >= 10, from_csv["frequencies_hz"]  # the Table 2.5 modes below Nyquist
    assert len(from_bag["frequencies_hz"]) == len(from_csv["frequencies_hz"])
    np.testing.assert_allclose(from_bag["frequencies_hz"], from_csv["frequencies_hz"], rtol=1e-9)
    np.testing.assert_allclose(from_bag["damping_ratios"], from_csv["damping_ratios"], rtol=1e-9)


def test_oma_reads_the_default_two_topic_bag(runs, capsys):
    """The default bag (/motor_states and /joint_states, identical stamps) gives the same motor modes as the CSV."""
    from_csv = oma_json(capsys, runs["csv"], "q_m.*")
    from_bag = oma_json(capsys, runs["bag"], "motor_states.position.*")
    np.testing.assert_allclose(from_bag["frequencies_hz"], from_csv["frequencies_hz"], rtol=1e-9)
    np.testing.assert_allclose(from_bag["damping_ratios"], from_csv["damping_ratios"], rtol=1e-9)


def test_bag_reader_joins_topics_on_one_time_base_and_names_missing_channels(tmp_path):
    """Topics with identical stamps are joined into one record (only those holding a selected channel); a channel
    pattern that matches nothing is refused with the channel naming scheme."""
    from flexrobot_ros.commands.oma import _read_joint_state_bag
    from flexrobot_ros.errors import SignalError
    from flexrobot_ros.runtime.bag_writer import JointStateSeries, write_joint_state_bag

    t = np.arange(200) / 1000.0
    wave = np.column_stack([np.sin(40 * t), np.cos(25 * t)])
    write_joint_state_bag(tmp_path / "two", t, ("joint1", "joint2"),
                          [JointStateSeries("motor_states", wave), JointStateSeries("joint_states", 2 * wave)])
    both = _read_joint_state_bag(tmp_path / "two", ["*.position.*"])
    assert both.data.shape == (200, 4)
    assert both.channels == ("joint_states.position.joint1", "joint_states.position.joint2",
                             "motor_states.position.joint1", "motor_states.position.joint2")
    np.testing.assert_array_equal(both.data, np.hstack([2 * wave, wave]))
    motors = _read_joint_state_bag(tmp_path / "two", ["motor_states.position.*"])
    assert motors.data.shape == (200, 2)
    with pytest.raises(SignalError, match="no JointState channel matches"):
        _read_joint_state_bag(tmp_path / "two", ["q_m.*"])


@pytest.mark.parametrize("out, extra, message", [
    ("impact.txt", [], "unknown suffix '.txt'"),
    ("impact.csv", ["--storage", "mcap"], "apply to bags"),
    ("impact_bag", ["--energy"], "--energy columns go to .csv/.npz"),
])
def test_bad_output_choices_are_refused_before_simulating(tmp_path, capsys, out, extra, message):
    """Wrong combinations of --out and bag options give exit code 2 and a message naming the option."""
    capsys.readouterr()
    q0 = [repr(float(v)) for v in thesis_configuration(8)]
    assert main(["simulate", "scompi", "--q0", *q0, "--duration", "0.01", "--out", str(tmp_path / out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / out).exists()


def test_existing_bag_directory_is_not_overwritten(runs, capsys):
    """A bag goes to a new directory; an existing one is an error, and its contents stay."""
    before = (runs["bag"] / "metadata.yaml").read_bytes()
    capsys.readouterr()
    assert main(["simulate", "scompi", "--duration", "0.01", "--out", str(runs["bag"])]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (runs["bag"] / "metadata.yaml").read_bytes() == before


def test_simulation_and_command_import_no_rosbags():
    """The simulator core stays ROS-free: importing it and the command module loads no rosbags (only writing a
    bag does), checked in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys, flexrobot_ros.simulation, flexrobot_ros.commands.simulate; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rosbags', 'cyclonedds', 'rclpy')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
