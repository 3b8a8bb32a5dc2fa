"""Progress of long commands on stderr: a line when a stage starts, one with its wall time [s] when it ends, and
the path of every file written. Quiet with ``--json`` (stdout is then the JSON alone and stderr keeps only warnings
and errors).

Example (``flexrobot simulate``)::

    progress = Progress("simulate", quiet=args.json)
    with progress.stage("simulating 10 s at 1000 Hz (fixed mode)"):
        output = simulation.run(10.0)
    progress.wrote("time series", path)
"""
from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Iterator


class Progress:
    """Stage and written-file lines on stderr, prefixed ``flexrobot COMMAND:``; nothing when ``quiet``."""

    def __init__(self, command: str, quiet: bool = False):
        self.prefix = f"flexrobot {command}: "
        self.quiet = quiet

    def say(self, text: str) -> None:
        """One line on stderr, flushed at once (the user is waiting for it)."""
        if not self.quiet:
            print(self.prefix + text, file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def stage(self, text: str, note: str = "") -> Iterator[None]:
        """``<text> (<note>) ...`` now and ``<text>: done in <wall> s`` when the block ends without an error."""
        self.say(f"{text}{f' ({note})' if note else ''} ...")
        start = time.perf_counter()
        yield
        self.say(f"{text}: done in {time.perf_counter() - start:.1f} s")

    def wrote(self, what: str, path: str | Path) -> None:
        """``wrote <what> <path>``."""
        self.say(f"wrote {what} {path}")
