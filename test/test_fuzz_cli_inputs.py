"""Damaged input files on the command line (issue 12, item 2): ``flexrobot oma`` on CSV, NPZ and rosbag2 files with
damaged headers, truncated rows, non-monotonic time, non-numbers, wrong shapes and broken containers ends with
status 0 (the damage did not matter) or with a one-line error and status 2 - never with a traceback."""
from __future__ import annotations

import contextlib
import io
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from flexrobot_ros import cli

FS, N = 200.0, 400


def _clean_record() -> tuple[np.ndarray, np.ndarray]:
    """Two channels of two decaying modes (12 Hz, 31 Hz) at 200 Hz."""
    t = np.arange(N) / FS
    x = np.column_stack([np.exp(-0.8 * t) * np.sin(2 * np.pi * 12 * t) + 0.3 * np.exp(-2 * t) * np.sin(2 * np.pi * 31 * t),
                         0.5 * np.exp(-0.8 * t) * np.sin(2 * np.pi * 12 * t + 0.3)
                         - np.exp(-2 * t) * np.sin(2 * np.pi * 31 * t)])
    return t, x


def _run(path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["oma", str(path), "--method", "ssi-cov", "--orders", "2:8", "--json"])
    return code, err.getvalue()


def _csv_variants(rng: random.Random, text: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    out = []
    for _ in range(60):
        damaged = list(lines)
        kind = rng.choice(["header bytes", "header drop t", "duplicate column", "truncated row", "short row",
                           "swap times", "repeat time", "text value", "nan value", "cut file", "blank lines",
                           "extra column"])
        row = rng.randrange(1, len(damaged))
        if kind == "header bytes":
            damaged[0] = "".join(rng.choice("t,q\x00\xff;\"' x") for _ in range(rng.randint(0, 20)))
        elif kind == "header drop t":
            damaged[0] = damaged[0].replace("t,", "time,", 1)
        elif kind == "duplicate column":
            damaged[0] = "t,a,a"
        elif kind == "truncated row":
            damaged[row] = damaged[row][: rng.randrange(len(damaged[row]))]
        elif kind == "short row":
            damaged[row] = damaged[row].rsplit(",", 1)[0]
        elif kind == "swap times":
            other = rng.randrange(1, len(damaged))
            damaged[row], damaged[other] = damaged[other], damaged[row]
        elif kind == "repeat time":
            damaged.insert(row, damaged[row])
        elif kind == "text value":
            damaged[row] = damaged[row].split(",")[0] + ",abc,1.0"
        elif kind == "nan value":
            damaged[row] = damaged[row].split(",")[0] + rng.choice([",nan,1.0", ",inf,1.0", ",1e999,0"])
        elif kind == "cut file":
            damaged = damaged[: rng.randrange(0, 4)]
        elif kind == "blank lines":
            damaged.insert(row, "")
        else:
            damaged[row] += ",7.0"
        out.append((kind, "\n".join(damaged) + "\n"))
    return out


def test_damaged_csv_files(tmp_path: Path) -> None:
    t, x = _clean_record()
    rng = random.Random(5)
    text = "t,a,b\n" + "\n".join(f"{ti:.6f},{a:.9g},{b:.9g}" for ti, (a, b) in zip(t, x))
    outcomes: dict[str, set[int]] = {}
    for i, (kind, damaged) in enumerate(_csv_variants(rng, text)):
        path = tmp_path / f"d{i}.csv"
        path.write_text(damaged)
        code, err = _run(path)
        assert code in (0, 2), (kind, code, err)
        assert "Traceback" not in err and (code == 0 or err.strip().count("\n") == 0), (kind, err)
        outcomes.setdefault(kind, set()).add(code)
    assert outcomes["swap times"] == {2} and outcomes["header drop t"] == {2}, outcomes


def test_damaged_npz_files(tmp_path: Path) -> None:
    t, x = _clean_record()
    clean = tmp_path / "clean.npz"
    np.savez(clean, t=t, a=x[:, 0], b=x[:, 1])
    data = clean.read_bytes()
    rng = random.Random(6)
    cases = {
        "no t": dict(a=x[:, 0], b=x[:, 1]),
        "2-D channel": dict(t=t, a=x),
        "short channel": dict(t=t, a=x[:-5, 0]),
        "text channel": dict(t=t, a=np.array(["x"] * N)),
        "object channel": dict(t=t, a=np.array([object()] * N, dtype=object)),
        "backwards time": dict(t=t[::-1].copy(), a=x[:, 0]),
        "nan time": dict(t=np.where(np.arange(N) == 7, np.nan, t), a=x[:, 0]),
        "empty": dict(t=np.array([]), a=np.array([])),
        "scalar": dict(t=np.float64(1.0), a=np.float64(2.0)),
    }
    for name, arrays in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.npz"
        np.savez(path, **arrays)
        code, err = _run(path)
        assert code == 2 and "Traceback" not in err and err.strip().count("\n") == 0, (name, code, err)
    for i in range(30):  # the archive itself damaged: cut, or bytes overwritten
        damaged = bytearray(data[: rng.randrange(len(data))] if i % 2 else data)
        if not i % 2:
            for _ in range(rng.randint(1, 8)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        path = tmp_path / f"broken{i}.npz"
        path.write_bytes(bytes(damaged))
        code, err = _run(path)
        assert code in (0, 2) and "Traceback" not in err, (i, code, err)
    assert zipfile.is_zipfile(clean)


def _bag(path: Path) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    js = store.types["sensor_msgs/msg/JointState"]
    header, time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    t, x = _clean_record()
    with Writer(path, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        connection = writer.add_connection("/motor_states", js.__msgtype__, typestore=store)
        for ti, row in zip(t, x):
            ns = 10**9 + int(round(ti * 1e9))
            msg = js(header=header(stamp=time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""), name=["a", "b"],
                     position=row, velocity=np.zeros(2), effort=np.zeros(2))
            writer.write(connection, ns, store.serialize_cdr(msg, js.__msgtype__))


@pytest.mark.parametrize("damage", ["no metadata", "metadata garbage", "metadata truncated", "db cut",
                                    "db bytes", "db missing"])
def test_damaged_bags(tmp_path: Path, damage: str) -> None:
    bag = tmp_path / "bag"
    _bag(bag)
    assert _run(bag)[0] == 0
    meta, db = bag / "metadata.yaml", bag / "bag.db3"
    if damage == "no metadata":
        meta.unlink()
    elif damage == "metadata garbage":
        meta.write_bytes(b"\x00\xff: [unclosed\n")
    elif damage == "metadata truncated":
        meta.write_text(meta.read_text()[:200])
    elif damage == "db cut":
        db.write_bytes(db.read_bytes()[:5000])
    elif damage == "db bytes":
        data = bytearray(db.read_bytes())
        rng = random.Random(3)
        for _ in range(50):
            data[rng.randrange(100, len(data))] = rng.randrange(256)
        db.write_bytes(bytes(data))
    else:
        db.unlink()
    code, err = _run(bag)
    assert code in (0, 2) and "Traceback" not in err and (code == 0 or err.strip().count("\n") == 0), (code, err)
    if damage in ("no metadata", "db missing", "metadata garbage"):
        assert code == 2 and str(bag) in err, err
