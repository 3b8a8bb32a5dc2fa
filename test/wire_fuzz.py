"""Wire-level fuzzing of the nodes (issue 12, item 2): malformed samples sent through real DDS.

:func:`malformed` turns one valid sample of a topic's type into a reproducible stream of bad ones, at the byte level
(random payloads, bit flips, truncations, trailing garbage, sequence lengths claiming gigabytes, a sample of
another type) and at the message level (NaN/inf values, arrays whose lengths disagree, stamps out of order or
repeated, huge arrays). :func:`service_garbage` makes requests no server can decode (too short, wrong
encapsulation), so that no fuzzed request triggers a service's action. Used by ``test/test_fuzz_wire.py`` (a
fixed-seed subset in CI) and ``bench/fuzz_wire.py`` (the full campaign).
"""
from __future__ import annotations

import math
import random
import struct
from typing import Any, Callable, Iterator

import numpy as np

from flexrobot_ros.runtime.messages import float_sequence, time_message

#: The byte-level kinds and the message-level kinds, in the order they are cycled through.
BYTE_KINDS = ("random", "bit flips", "truncated", "trailing garbage", "huge length field", "other type")
MESSAGE_KINDS = ("non-finite", "mismatched lengths", "out-of-order stamp", "duplicate stamp", "huge arrays")


def _rewrite(make: Callable[[], Any], change: Callable[[Any], None]) -> bytes:
    msg = make()
    change(msg)
    return bytes(msg.serialize())


def _set_stamp(msg: Any, types: Any, seconds: float) -> None:
    header = getattr(msg, "header", None)
    if header is not None:
        header.stamp = time_message(types, seconds)


def _message_level(kind: str, types: Any, make: Callable[[], Any], rng: random.Random, last_stamp: float) -> bytes:
    """A decodable sample that breaks a rule of the node's input (non-finite value, lengths, stamps, size)."""
    def arrays(msg: Any) -> list[str]:
        return [f for f in ("position", "velocity", "effort", "data") if hasattr(msg, f)]

    def points(msg: Any) -> list[Any]:
        return list(getattr(msg, "points", []))

    if kind == "non-finite":
        bad = rng.choice([math.nan, math.inf, -math.inf])

        def change(msg: Any) -> None:
            for field in arrays(msg):
                values = np.array(getattr(msg, field), dtype=float)
                if values.size:
                    values[rng.randrange(values.size)] = bad
                    setattr(msg, field, float_sequence(values))
            for point in points(msg):
                values = np.array(point.positions, dtype=float)
                values[rng.randrange(values.size)] = bad
                point.positions = float_sequence(values)
        return _rewrite(make, change)
    if kind == "mismatched lengths":
        def change(msg: Any) -> None:
            for field in arrays(msg):
                values = list(getattr(msg, field))
                setattr(msg, field, float_sequence(values[: rng.randrange(max(1, len(values)))]))
            if hasattr(msg, "name"):
                msg.name = list(msg.name) + ["extra_joint"]
            for point in points(msg)[:1]:
                point.positions = float_sequence(list(point.positions)[:-1])
        return _rewrite(make, change)
    if kind in ("out-of-order stamp", "duplicate stamp"):
        stamp = last_stamp - (rng.uniform(1e-3, 0.5) if kind == "out-of-order stamp" else 0.0)
        return _rewrite(make, lambda msg: _set_stamp(msg, types, stamp))
    if kind == "huge arrays":
        size = rng.choice([10**5, 10**6])

        def change(msg: Any) -> None:
            for field in arrays(msg)[:1]:
                setattr(msg, field, float_sequence(np.full(size, 0.5)))
            for point in points(msg)[:1]:
                point.positions = float_sequence(np.full(size, 0.5))
        return _rewrite(make, change)
    raise ValueError(kind)


def _byte_level(kind: str, valid: bytes, other: bytes, rng: random.Random) -> bytes:
    body = bytearray(valid)
    if kind == "random":
        header = rng.choice([b"\x00\x01\x00\x00", b"\x00\x00\x00\x00", bytes(rng.randrange(256) for _ in range(4))])
        return header + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600)))
    if kind == "bit flips":
        for _ in range(rng.randrange(1, 9)):
            position = rng.randrange(4, len(body)) if len(body) > 4 else 0
            body[position] ^= 1 << rng.randrange(8)
        return bytes(body)
    if kind == "truncated":
        return bytes(body[: rng.randrange(0, len(body))])
    if kind == "trailing garbage":
        return bytes(body) + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096)))
    if kind == "huge length field":  # a uint32 at an aligned offset claims a huge sequence or string
        offsets = list(range(4, len(body) - 3, 4))
        struct.pack_into("<I", body, rng.choice(offsets), rng.choice([0x7FFFFFFF, 0xFFFFFFF0, 2**28, 2**20]))
        return bytes(body)
    if kind == "other type":
        return other
    raise ValueError(kind)


def malformed(types: Any, make: Callable[[], Any], other: bytes, count: int, seed: int,
              first_stamp: float) -> Iterator[tuple[str, bytes]]:
    """``count`` (kind, CDR bytes) pairs derived from samples made by ``make()`` (stamped ``first_stamp`` + 1 ms
    per sample), cycling through every kind; ``other`` is a valid sample of another type. At most 3 % of them are
    huge arrays (10^5 or 10^6 doubles), the rest stay under a few kB."""
    rng = random.Random(seed)
    kinds = BYTE_KINDS + MESSAGE_KINDS
    stamp = first_stamp
    for i in range(count):
        kind = kinds[i % len(kinds)]
        if kind == "huge arrays" and rng.random() > 0.3:
            kind = "bit flips"
        stamp += 1e-3

        def stamped() -> Any:
            msg = make()
            _set_stamp(msg, types, stamp)
            return msg
        if kind in BYTE_KINDS:
            yield kind, _byte_level(kind, bytes(stamped().serialize()), other, rng)
        else:
            yield kind, _message_level(kind, types, stamped, rng, stamp)


def service_garbage(count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """Requests no server can decode: shorter than the request header, or with an encapsulation other than CDR."""
    rng = random.Random(seed)
    for i in range(count):
        if i % 2:
            yield "truncated", bytes(rng.randrange(256) for _ in range(rng.randrange(0, 16)))
        else:
            header = bytes([rng.choice([0x7F, 0x80, 0xFF]), rng.randrange(256), 0, 0])
            yield "wrong encapsulation", header + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))


def rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` [bytes] (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")
