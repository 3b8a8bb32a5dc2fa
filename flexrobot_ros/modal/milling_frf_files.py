"""Files that give the tool-tip receptance of a milling cut without a robot model: a measured FRF (CSV) or the
structure's modes (YAML). Both are in the machining frame of :mod:`flexrobot_ros.modal.stability_lobes`
(x = feed, y = tool axis cross x); SI units.

Measured FRF, CSV: lines starting with ``#`` are comments; the first other line is the header, naming the columns
(any order, no others)::

    frequency_hz,xx_re,xx_im,xy_re,xy_im,yx_re,yx_im,yy_re,yy_im

``frequency_hz`` [Hz] strictly increasing and >= 0; ``<ij>_re``, ``<ij>_im`` the real and imaginary parts of the
receptance Phi_ij [m/N]: displacement along i per force along j (``xy``: x displacement per y force; a measured
FRF need not be symmetric). Between the rows it is linear in the real and imaginary parts
(:class:`~flexrobot_ros.modal.milling_frf.MeasuredFeedPlaneFRF`). :func:`frf_table` gives the same columns for a
JSON report, so that an FRF written by ``flexrobot lobes --json`` reads back as a CSV.

Modes, YAML::

    modes:                       # one entry per mode of the tool tip in the feed plane
      - frequency_hz: 10.0       # natural frequency f_r [Hz]
        damping_ratio: 0.014     # zeta_r (fraction, 0 < zeta < 1)
        shape: [0.6, 0.8]        # u_r: x, y components of the mode shape at the tool tip
        stiffness_n_per_m: 2.5e+6  # modal stiffness k_r of that shape [N/m] (YAML 1.1: not 2.5e6)
      - frequency_hz: 23.7
        damping_ratio: 0.008
        shape: [0.012, 0.03]     # without stiffness_n_per_m: mass-normalized [1/sqrt(kg)]

    Phi(f) = sum_r u_r u_r^T / (k_r (1 - (f/f_r)^2 + 2 i zeta_r f/f_r))     (k_r = (2 pi f_r)^2 when mass-normalized)

so a mode along x alone of stiffness k is ``shape: [1, 0], stiffness_n_per_m: k`` (its static compliance 1/k [m/N]).
Every error names the file, the line or mode, the column or field, and what was expected.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.milling_frf import MeasuredFeedPlaneFRF, ModalFeedPlaneFRF
from flexrobot_ros.yaml_files import finite, read_yaml

ENTRIES = ("xx", "xy", "yx", "yy")
#: The columns of a measured FRF file, in the order :func:`frf_table` writes them.
FRF_COLUMNS = ("frequency_hz",) + tuple(f"{entry}_{part}" for entry in ENTRIES for part in ("re", "im"))
MODE_FIELDS = ("frequency_hz", "damping_ratio", "shape", "stiffness_n_per_m")


def read_measured_frf(path: str | Path) -> MeasuredFeedPlaneFRF:
    """The measured feed-plane FRF in the CSV file ``path`` (module docstring)."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as problem:
        raise ModalError(f"{path}: cannot read the FRF file: {problem}") from problem
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ModalError(f"{path}: no header line; expected the columns {','.join(FRF_COLUMNS)}")
    rows = list(csv.reader(line for _, line in lines))
    header_line, header = lines[0][0], [name.strip() for name in rows[0]]
    for name in header:
        if name not in FRF_COLUMNS:
            raise ModalError(f"{path}: line {header_line}: unknown column {name!r}; expected the columns "
                             f"{','.join(FRF_COLUMNS)}")
    for name in FRF_COLUMNS:
        if name not in header:
            raise ModalError(f"{path}: line {header_line}: no column {name!r} in the header; expected the columns "
                             f"{','.join(FRF_COLUMNS)}")
    if len(set(header)) != len(header):
        twice = next(name for name in header if header.count(name) > 1)
        raise ModalError(f"{path}: line {header_line}: column {twice!r} appears twice in the header")
    table = np.empty((len(rows) - 1, len(FRF_COLUMNS)))
    for row_index, ((number, _), row) in enumerate(zip(lines[1:], rows[1:])):
        if len(row) != len(header):
            raise ModalError(f"{path}: line {number}: expected {len(header)} values (one per header column), got "
                             f"{len(row)}")
        for name, text_value in zip(header, row):
            unit = "Hz" if name == "frequency_hz" else "m/N"
            try:
                value = float(text_value)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ModalError(f"{path}: line {number}, column {name}: expected a finite number [{unit}], got "
                                 f"{text_value.strip()!r}")
            table[row_index, FRF_COLUMNS.index(name)] = value
        frequency = table[row_index, 0]
        if frequency < 0:
            raise ModalError(f"{path}: line {number}, column frequency_hz: expected a frequency >= 0 Hz, got "
                             f"{frequency:g}")
        if row_index and frequency <= table[row_index - 1, 0]:
            raise ModalError(f"{path}: line {number}, column frequency_hz: expected frequencies increasing strictly, "
                             f"got {frequency:g} Hz after {table[row_index - 1, 0]:g} Hz (line "
                             f"{lines[row_index][0]})")
    if table.shape[0] < 3:
        raise ModalError(f"{path}: expected at least 3 rows of data (frequencies), got {table.shape[0]}")
    values = (table[:, 1::2] + 1j * table[:, 2::2]).reshape(-1, 2, 2)
    return MeasuredFeedPlaneFRF(table[:, 0], values)


def frf_table(frequencies_hz: np.ndarray, values: np.ndarray) -> dict[str, list[float]]:
    """The columns of :data:`FRF_COLUMNS` for receptances ``values`` (F, 2, 2) [m/N] at ``frequencies_hz`` (F,)."""
    table: dict[str, list[float]] = {"frequency_hz": np.asarray(frequencies_hz, dtype=float).tolist()}
    for index, entry in enumerate(ENTRIES):
        column = np.asarray(values)[:, index // 2, index % 2]
        table[f"{entry}_re"], table[f"{entry}_im"] = column.real.tolist(), column.imag.tolist()
    return table


def _mode(item: Any, where: str) -> tuple[float, float, np.ndarray]:
    """``(f_r [Hz], zeta_r, mass-normalized shape (2,) [1/sqrt(kg)])`` of one entry of ``modes``."""
    if not isinstance(item, dict):
        raise ModalError(f"{where}: expected a mapping with {', '.join(MODE_FIELDS[:3])} and optionally "
                         f"stiffness_n_per_m, got {item!r}")
    for key in item:
        if key not in MODE_FIELDS:
            raise ModalError(f"{where}: unknown field {key!r}; expected {', '.join(MODE_FIELDS)}")
    for key in MODE_FIELDS[:3]:
        if key not in item:
            raise ModalError(f"{where}: missing field {key!r}")
    frequency = finite(item["frequency_hz"], f"{where}.frequency_hz", ModalError)
    if frequency <= 0:
        raise ModalError(f"{where}.frequency_hz: expected a natural frequency > 0 Hz, got {frequency:g}")
    damping = finite(item["damping_ratio"], f"{where}.damping_ratio", ModalError)
    if not 0 < damping < 1:
        raise ModalError(f"{where}.damping_ratio: expected a fraction 0 < zeta < 1 (an undamped mode chatters at "
                         f"any depth), got {damping:g}")
    shape = item["shape"]
    if not isinstance(shape, list) or len(shape) != 2:
        raise ModalError(f"{where}.shape: expected [x, y] (two numbers, machining frame), got {shape!r}")
    vector = np.array([finite(value, f"{where}.shape[{i}]", ModalError) for i, value in enumerate(shape)])
    if not np.any(vector):
        raise ModalError(f"{where}.shape: expected a non-zero mode shape, got {shape!r}")
    if "stiffness_n_per_m" in item:
        stiffness = finite(item["stiffness_n_per_m"], f"{where}.stiffness_n_per_m", ModalError)
        if stiffness <= 0:
            raise ModalError(f"{where}.stiffness_n_per_m: expected a modal stiffness > 0 N/m, got {stiffness:g}")
        vector = vector * 2.0 * np.pi * frequency / np.sqrt(stiffness)  # u u^T / k_r = phi phi^T / w_r^2
    return frequency, damping, vector


def read_tool_modes(path: str | Path) -> ModalFeedPlaneFRF:
    """The feed-plane FRF of the modes in the YAML file ``path`` (module docstring)."""
    document = read_yaml(path, ModalError, "tool-tip modes")
    if not isinstance(document, dict) or "modes" not in document:
        raise ModalError(f"{path}: expected a mapping with 'modes' (a list of frequency_hz, damping_ratio, shape and "
                         "optionally stiffness_n_per_m)")
    unknown = [key for key in document if key != "modes"]
    if unknown:
        raise ModalError(f"{path}: unknown field {unknown[0]!r}; expected 'modes' only")
    items = document["modes"]
    if not isinstance(items, list) or not items:
        raise ModalError(f"{path}: modes: expected a non-empty list of modes, got {items!r}")
    modes = [_mode(item, f"{path}: modes[{index}]") for index, item in enumerate(items)]
    return ModalFeedPlaneFRF([m[0] for m in modes], [m[1] for m in modes], np.column_stack([m[2] for m in modes]))


__all__ = ["FRF_COLUMNS", "read_measured_frf", "frf_table", "read_tool_modes"]
