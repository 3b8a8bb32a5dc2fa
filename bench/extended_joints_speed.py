"""Speed check of the extended-joint robots on the one model (branch one-model-extended): CPU time of
``modal_analysis`` per pose and of a 1 s ``flexrobot simulate`` (impact on tool0, 1 kHz, fixed step) for moberg5,
moberg5_nmp and kr90_3dof, on the current tree and on a commit before the change (default c98fc02, the per-family
ExtendedJointPlant / extended_linearization), each in its own subprocess (the old tree extracted with ``git
archive`` into a temporary folder). Best of 5 x 200 poses and of 3 runs; workers run old, new, new, old and the best
per tree is kept. Acceptance: none slower by more than 10 %. BLAS threads pinned to 1.

    nice -n 19 python bench/extended_joints_speed.py [--old c98fc02]
"""
from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ("moberg5", "moberg5_nmp", "kr90_3dof")


def measure() -> dict[str, float]:
    """Per robot: modal per pose [ms CPU] and the 1 s simulate [s CPU] on the tree PYTHONPATH selects."""
    import contextlib
    import io

    import numpy as np

    from flexrobot_ros.cli import main
    from flexrobot_ros.model import load_robot

    try:  # the entry for any robot; an older tree names it held_modes (its modal_analysis took elastic joints only)
        from flexrobot_ros.modal.held_modes import modal_analysis
    except ImportError:
        from flexrobot_ros.modal.held_modes import held_modes as modal_analysis

    def cpu(function, repeat: int) -> float:
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            function()
            best = min(best, time.process_time() - start)
        return best

    out = {}
    for name in ROBOTS:
        robot = load_robot(name)
        lower, upper = np.maximum(robot.lower_limits, -np.pi), np.minimum(robot.upper_limits, np.pi)
        q = 0.5 * (lower + upper) + 0.1
        modal_analysis(robot, q)
        out[f"{name} modal per pose [ms]"] = cpu(lambda: [modal_analysis(robot, q) for _ in range(200)], 5) / 200 * 1e3
        with tempfile.TemporaryDirectory() as folder:
            argv = ["simulate", name, "--q0", ",".join(repr(float(v)) for v in q), "--duration", "1", "--rate",
                    "1000", "--impact", "tool0,500,500,500,0.1,0.106", "--out", f"{folder}/r.npz", "--json"]

            def simulate() -> None:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    assert main(argv) == 0

            out[f"{name} simulate 1 s [s CPU]"] = cpu(simulate, 3)
    return out


def worker(tree: Path) -> dict[str, float]:
    process = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure"], cwd=str(tree),
                             env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True, text=True, check=True)
    return json.loads(process.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="c98fc02", help="commit before the change (default c98fc02)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.old, "flexrobot_ros", "config", "urdf"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        runs = [("old", Path(folder)), ("new", ROOT), ("new", ROOT), ("old", Path(folder))]
        best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
        for label, tree in runs:
            for key, value in worker(tree).items():
                best[label][key] = min(best[label].get(key, float("inf")), value)
    worst = 0.0
    for key in best["old"]:
        ratio = best["new"][key] / best["old"][key]
        worst = max(worst, ratio)
        print(f"{key:36s} before {best['old'][key]:8.4f}  after {best['new'][key]:8.4f}  after/before {ratio:.3f}")
    print(f"worst after/before {worst:.3f}: {'none' if worst <= 1.10 else 'one'} slower by more than 10 %")


if __name__ == "__main__":
    main()
