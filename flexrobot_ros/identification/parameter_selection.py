"""The grammar shared by the joint (:mod:`.parameters`) and flexible-link (:mod:`.link_parameters`) unknowns:
a selection of kinds, each optionally restricted to some joints or links, and bounds keyed by kind or kind:name.

A selection is a comma-separated text (or a sequence of items)::

    KIND[:NAME+NAME..],KIND[:NAME..],..        e.g.  k,d_f:joint2,d_fm:joint1+joint2     EI:link1+link2,zeta

an item without names means every joint (link) the kind applies to. Bounds map ``KIND`` or ``KIND:NAME`` to
``(low, high)`` in the parameter's unit; the more specific key wins. Kinds may be written by an alias (``stiffness``
for ``k``, ``damping_ratio`` for ``zeta``); what each kind means, its unit and its admissible bounds belong to the
module of its unknowns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Protocol, Sequence

from flexrobot_ros.errors import IdentificationError


class Unknown(Protocol):
    """What the shared bounds reading needs of one unknown (JointParameter, LinkParameter)."""

    kind: str

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> str: ...


@dataclass(frozen=True)
class SelectionItem:
    """One item of a selection: ``text`` as written, its canonical ``kind``, the ``names`` after ':' (empty: all)."""

    text: str
    kind: str
    names: tuple[str, ...]


def selection_items(selection: str | Sequence[str], aliases: Mapping[str, str], unknown_kind: str,
                    expected: str) -> Iterator[SelectionItem]:
    """The non-empty items of ``selection`` (module docstring) in order, their kinds made canonical by ``aliases``;
    an unknown kind raises ``parameters: unknown <unknown_kind> 'x' in 'x:..'; expected <expected>`` when its item
    is reached (the caller checks the names of the items before it first)."""
    items = selection.split(",") if isinstance(selection, str) else list(selection)
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        kind_text, _, names_text = item.partition(":")
        kind = aliases.get(kind_text.strip())
        if kind is None:
            raise IdentificationError(f"parameters: unknown {unknown_kind} {kind_text.strip()!r} in {item!r}; "
                                      f"expected {expected}")
        names = tuple(name.strip() for name in names_text.split("+")) if names_text.strip() else ()
        yield SelectionItem(item, kind, names)


def given_bounds(parameters: Sequence[Unknown], bounds: Mapping[str, Any] | None, aliases: Mapping[str, str],
                 what: str = "parameter") -> dict[str, Any]:
    """``bounds`` (module docstring) keyed by canonical ``kind`` or ``kind:name``; a key that names none of
    ``parameters`` raises ``bounds: 'key' names no identified <what>; identified: [..]``."""
    known = {p.kind for p in parameters} | {p.key for p in parameters}
    given = {}
    for key, pair in (bounds or {}).items():
        kind, _, name = str(key).partition(":")
        canonical = aliases.get(kind, kind) + (f":{name}" if name else "")
        if canonical not in known:
            raise IdentificationError(f"bounds: {key!r} names no identified {what}; identified: "
                                      f"{[p.name for p in parameters]}")
        given[canonical] = pair
    return given


def bounds_pair(parameter: Unknown, given: Mapping[str, Any], default: tuple[float, float]) -> tuple[float, float]:
    """(low, high) of ``parameter``: its ``kind:name`` entry of ``given`` (:func:`given_bounds`), else its kind's,
    else ``default``, as two floats; anything else raises ``bounds of <name>: expected (low, high)``."""
    pair = given.get(parameter.key, given.get(parameter.kind, default))
    try:
        low, high = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise IdentificationError(f"bounds of {parameter.name}: expected (low, high), got {pair!r}") from None
    return low, high


__all__ = ["SelectionItem", "Unknown", "bounds_pair", "given_bounds", "selection_items"]
