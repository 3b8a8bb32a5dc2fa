"""bench/oma.py without its OMA peers (issue 22): the headline said "ssi-cov nanx faster than the fastest peer" when
neither pyOMA2 nor koma was installed; it must say they are missing and how to install them, never print nan.
The peers are hidden here (``sys.modules[name] = None`` makes their import fail) whether or not they are installed."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from oma_cases import free_decay_case

BENCH = Path(__file__).resolve().parents[1] / "bench" / "oma.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_oma", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_headline_without_peers_says_how_to_install_them(monkeypatch, capsys):
    """One data set (free decay, 5 modes) through the bench's own per-data-set step and headline, peers hidden: the
    step reports each peer skipped and gives no speed-up; the headline names both peers and 'pip install .[bench]'
    and has no nan anywhere."""
    bench = load_bench()
    for module in ("pyoma2", "koma"):
        monkeypatch.setitem(sys.modules, module, None)
    available = bench.peers()
    assert set(available) == {"pyOMA2", "koma"} and all(available.values())
    speedup = bench.bench_dataset(free_decay_case(), "2:20", 1, available, True)
    printed = capsys.readouterr().out
    assert speedup is None and printed.count("not importable") == 2
    errors = (0.01, 0.1, 0.2, 5.0, 0, 0)  # max |df| Hz, %, |dzeta| points, %, missed, spurious
    line = bench.headline(0.5, errors, 0.8, errors, [], available, 0.02)
    assert line.startswith("HEADLINE:") and "nan" not in line.lower()
    assert "pyOMA2 and koma not importable" in line and "pip install .[bench]" in line, line
    assert "20 ms" in line and "0.50 s" in line


def test_headline_with_peers_gives_the_worst_data_set():
    """With speed-ups measured on several data sets, the headline gives the smallest (worst) one."""
    bench = load_bench()
    errors = (0.01, 0.1, 0.2, 5.0, 0, 0)
    line = bench.headline(0.5, errors, 0.8, errors, [12.0, 3.456, 7.0], {"pyOMA2": None, "koma": None}, 0.02)
    assert "ssi-cov 3.5x faster than the fastest peer (worst data set)" in line and "pip install" not in line
