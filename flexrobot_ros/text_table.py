"""Aligned text tables: every column as wide as its widest entry (title, unit or cell), whatever the joint names'
length.

A table is a list of :class:`Column` (title, unit shown as ``[unit]`` on a second header line, alignment) and rows
of cells already formatted as text (the caller chooses digits and units); :func:`table` returns its lines::

    table([Column("joint", align="<"), Column("K", "N m/rad")], [["joint1", "2.5e+04"], ["a_long_name", "800"]])
    # joint              K
    #            [N m/rad]
    # joint1       2.5e+04
    # a_long_name      800

No robot, no physics: every layer that prints a table (the commands, the identification and calibration reports)
uses this one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

#: What a cell shows when there is no value (a rigid joint's motor-side parameters, a mode not matched).
MISSING = "-"


@dataclass(frozen=True)
class Column:
    """One column: ``title``, ``unit`` (empty: none; shown as ``[unit]`` below the title) and ``align``: '>' right
    (numbers), '<' left (names, text)."""

    title: str
    unit: str = ""
    align: str = ">"

    def __post_init__(self) -> None:
        if self.align not in ("<", ">"):
            raise ValueError(f"Column {self.title!r}: align must be '<' or '>', got {self.align!r}")


def table(columns: Sequence[Column], rows: Iterable[Sequence[str]], indent: str = "", gap: int = 2) -> list[str]:
    """The lines of a table: the titles, the units (when a column has one), one line per row. Each column is as
    wide as its widest title, ``[unit]`` or cell; columns are ``gap`` spaces apart; a row shorter than the columns
    leaves the rest empty; trailing spaces are dropped."""
    body = [[str(cell) for cell in row] for row in rows]
    for row in body:
        if len(row) > len(columns):
            raise ValueError(f"a row has {len(row)} cells for {len(columns)} columns: {row}")
    headers = [[column.title for column in columns]]
    if any(column.unit for column in columns):
        headers.append([f"[{column.unit}]" if column.unit else "" for column in columns])
    lines = headers + [row + [""] * (len(columns) - len(row)) for row in body]
    widths = [max(len(line[k]) for line in lines) for k in range(len(columns))]
    spacer = " " * gap
    return [(indent + spacer.join(f"{cell:{column.align}{width}}" for cell, column, width in
                                  zip(line, columns, widths))).rstrip() for line in lines]


def cell(value: float | None, spec: str, unit: str = "") -> str:
    """``value`` formatted by ``spec`` (``".4g"``), followed by `` unit`` when given; :data:`MISSING` for None."""
    if value is None:
        return MISSING
    return f"{value:{spec}}" + (f" {unit}" if unit else "")


__all__ = ["Column", "table", "cell", "MISSING"]
