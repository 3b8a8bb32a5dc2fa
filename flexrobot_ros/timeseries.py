"""Time-series files shared by the simulator, the CLI and OMA: CSV or NPZ with a time column and named columns.

Format (chosen by the file suffix, ``.csv`` or ``.npz``):

* CSV: one header row ``t,<name>,<name>,...``, then one row per sample; ``t`` is the time in seconds, values are
  written with 17 significant digits (floats round-trip exactly). Lines starting with ``#`` are comments.
* NPZ: an array ``t`` (samples,) and one array (samples,) per column, keyed by the column name, in column order.

Column names are ``<quantity>.<joint or axis>``, e.g. ``q_m.joint2`` (motor position after the gear, rad),
``q.joint1`` (link position, m for prismatic joints), ``tool_acceleration.y``. Units are SI.
"""
from __future__ import annotations

import csv
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from flexrobot_ros.errors import SignalError

SUFFIXES = (".csv", ".npz")


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise SignalError(f"{path}: unknown time-series format {suffix!r}; expected one of {list(SUFFIXES)}")
    return suffix


def write_timeseries(path: str | Path, t: np.ndarray, columns: Mapping[str, np.ndarray]) -> Path:
    """Write samples at times ``t`` [s] with named columns (each of shape (samples,)) to a .csv or .npz file."""
    path = Path(path)
    suffix = _suffix(path)
    times = np.asarray(t, dtype=float)
    if times.ndim != 1:
        raise SignalError(f"{path}: t: expected a 1-D array of times, got shape {times.shape}")
    arrays = {}
    for name, values in columns.items():
        if name == "t" or not name or "," in name:
            raise SignalError(f"{path}: column name {name!r} is reserved or contains a comma")
        array = np.asarray(values, dtype=float)
        if array.shape != times.shape:
            raise SignalError(f"{path}: column {name!r}: expected shape {times.shape} like t, got {array.shape}")
        arrays[name] = array
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".npz":
        np.savez(path, t=times, **arrays)
        return path
    table = np.column_stack([times, *arrays.values()]) if arrays else times[:, None]
    with path.open("w", newline="") as stream:
        stream.write(",".join(["t", *arrays]) + "\n")
        np.savetxt(stream, table, delimiter=",", fmt="%.17g")
    return path


def read_timeseries(path: str | Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Read a file written by :func:`write_timeseries`: times [s] (samples,) and a dict of columns (samples,)."""
    path = Path(path)
    suffix = _suffix(path)
    if not path.is_file():
        raise SignalError(f"{path}: no such time-series file")
    if suffix == ".npz":
        try:
            with np.load(path) as archive:
                names = list(archive.files)
                arrays = {name: np.array(archive[name], dtype=float) for name in names}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise SignalError(f"{path}: not a readable NPZ time-series file ({error})") from None
        if "t" not in arrays:
            raise SignalError(f"{path}: no array 't' (time in seconds) in the archive; found {names}")
        t = arrays.pop("t")
        columns = arrays
    else:
        with path.open(newline="") as stream:
            rows = (line for line in stream if line.strip() and not line.startswith("#"))
            reader = csv.reader(rows)
            header = next(reader, None)
            if not header or header[0].strip() != "t":
                raise SignalError(f"{path}: the header row must start with 't' (time in seconds), got {header}")
            names = [name.strip() for name in header[1:]]
            values = []
            for row in reader:
                if len(row) != len(names) + 1:
                    raise SignalError(f"{path}: data row {len(values) + 1}: expected {len(names) + 1} values "
                                      f"(header {header}), got {len(row)}")
                try:
                    values.append([float(value) for value in row])
                except ValueError as error:
                    raise SignalError(f"{path}: non-numeric value in a data row ({error})") from None
        table = np.array(values, dtype=float).reshape(len(values), len(names) + 1)
        t = table[:, 0].copy()
        columns = {name: table[:, i + 1].copy() for i, name in enumerate(names)}
    for name, values in columns.items():
        if values.shape != t.shape:
            raise SignalError(f"{path}: column {name!r} has {values.shape} samples, t has {t.shape}")
    return t, columns


__all__ = ["read_timeseries", "write_timeseries", "SUFFIXES"]
