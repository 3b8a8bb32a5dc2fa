"""Speed acceptance of issue 24 (one model of an elastic robot): four measurements on the current tree and on the
pre-refactor commit (default e11f85a), each tree in its own subprocess with ``PYTHONPATH`` pointing at it:

1. compiled SDRNEA feedforward per sample (KUKA LWR4, one bound ctypes call from Python, ``bench/feedforward.py``'s
   sample of the poly9 trajectory) [us];
2. ``modal_analysis`` of the Scompi at the thesis' configuration 8, one pose (linearize + eig + shapes) [ms];
3. the real-time factor of ``flexrobot simulate canadarm --open-loop config/canadarm_trajectory.yaml --compiled
   --duration 10`` (simulated s / wall s, as the command reports it; a warm-up run compiles first) [x];
4. the RRP section-5 run of seed 004 (``bench/amm_vs_fem.py``: assumed modes, decoupling control along the cycloids,
   1.5 s at 1 kHz, fixed step) [CPU s].

Each worker also times one ``pin.rnea`` call (LWR4) as the machine's reference in that process, interleaved with
measurements 1 and 2; each slowdown is also printed divided by the reference's (the same library in both trees, so
its after/before ratio is the machine's load difference between the workers). The workers run
old, new, new, old (``--rounds`` pairs, ABBA order so that a drift of the shared machine's load cancels) and the
best value of each measurement per tree is kept. The old tree is checked out with ``git worktree add --detach``
into a temporary worktree (``--old-path``) and removed afterwards; both trees share one temporary code cache (the
same generated function compiles once). Acceptance: none slower by more than 10 % (slowdown = after/before for
times, before/after for the real-time factor). BLAS threads are pinned to 1. The headline is the last line.

    nice -n 19 python bench/elastic_model_speed.py [--old e11f85a] [--rounds 1]
"""
from __future__ import annotations

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: (key, label, unit, True when larger is better)
MEASUREMENTS = (("sdrnea_us", "SDRNEA feedforward per sample (LWR4)", "us", False),
                ("modal_ms", "modal per pose (Scompi, configuration 8)", "ms", False),
                ("canadarm_rtf", "Canadarm --compiled real-time factor (10 s)", "x", True),
                ("rrp_cpu_s", "RRP section-5 run (AMM, 1.5 s at 1 kHz)", "s CPU", False))


def measure() -> dict[str, float]:
    """The four measurements and the rnea reference on the tree that ``PYTHONPATH`` selects (worker side)."""
    import contextlib
    import io
    import timeit
    import warnings

    import numpy as np
    import pinocchio as pin

    import flexrobot_ros
    from flexrobot_ros.cli import main as flexrobot
    from flexrobot_ros.dynamics.feedforward import compiled_feedforward
    from flexrobot_ros.dynamics.trajectory import Poly9Trajectory, load_trajectory
    from flexrobot_ros.modal import modal_analysis
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.simulation import Simulation
    from flexrobot_ros.simulation.decoupling_control import DecouplingControl
    try:  # trees before the one plant (issue 24): the flexible-link family's own plant
        from flexrobot_ros.simulation.flexible_link_plant import FlexibleLinkPlant as link_plant
    except ImportError:
        from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant as link_plant

    tree = Path(flexrobot_ros.__file__).resolve().parents[1]

    def best(function, number: int, repeat: int = 5) -> float:
        return min(timeit.repeat(function, number=number, repeat=repeat)) / number

    out: dict[str, float] = {"tree": str(tree)}
    warnings.simplefilter("ignore", RuntimeWarning)  # the thesis trajectory exceeds the KUKA speed limits
    lwr4 = load_robot("lwr4")
    q0, qf = np.zeros(7), np.array([1.0, 0.8, -0.5, 1.2, 0.3, -0.4, 0.6])
    s = Poly9Trajectory(q0, qf, 3.0).evaluate(np.linspace(0.0, 3.0, 10_000))
    x_one = np.ascontiguousarray(np.concatenate([s.q, s.qd, s.qdd, s.q3, s.q4], axis=1)[3333])
    data = lwr4.create_data()
    compiled = compiled_feedforward(lwr4)
    compiled.evaluate_packed(x_one)
    scompi = load_robot("scompi")
    q8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
    modal_analysis(scompi, q8)
    # interleaved with the rnea reference, so that a change of the machine's load hits both
    rnea, sdrnea, modal = [], [], []
    for _ in range(7):
        rnea.append(best(lambda: pin.rnea(lwr4.model, data, s.q[3333], s.qd[3333], s.qdd[3333]), 20_000, 1))
        sdrnea.append(best(lambda: compiled.evaluate_packed(x_one), 20_000, 1))
        modal.append(best(lambda: modal_analysis(scompi, q8), 100, 1))
    out["rnea_us"], out["sdrnea_us"], out["modal_ms"] = min(rnea) * 1e6, min(sdrnea) * 1e6, min(modal) * 1e3

    trajectory = tree / "config" / "canadarm_trajectory.yaml"
    with tempfile.TemporaryDirectory() as folder:
        factors = []
        for duration in (0.5, 10.0, 10.0):  # the first run compiles (when the cache is cold) and is not kept
            summary = io.StringIO()
            with contextlib.redirect_stdout(summary), contextlib.redirect_stderr(io.StringIO()):
                status = flexrobot(["simulate", "canadarm", "--open-loop", str(trajectory), "--compiled",
                                    "--duration", f"{duration:g}", "--out", str(Path(folder) / "c.npz"), "--json"])
            if status:
                raise RuntimeError(f"flexrobot simulate canadarm exited with status {status}")
            factors.append(float(json.loads(summary.getvalue())["real_time_factor"]))
        out["canadarm_rtf"] = max(factors[1:])

    rrp = load_robot("rrp", tool=True)
    cycloids = load_trajectory(tree / "config" / "rrp_trajectory.yaml")
    plant = link_plant(rrp, method="assumed_modes", modes=2)
    control = DecouplingControl(plant, cycloids)
    start = time.process_time()
    Simulation(plant, control, q0=control.q_d, rate=1000.0).run(1.5)
    out["rrp_cpu_s"] = time.process_time() - start
    return out


def run_worker(tree: Path, cache: str) -> dict[str, float]:
    """One worker process on ``tree``; its JSON line."""
    environment = dict(os.environ, PYTHONPATH=str(tree), FLEXROBOT_CACHE=cache)
    process = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure"], cwd=str(tree),
                             env=environment, capture_output=True, text=True)
    if process.returncode != 0:
        raise RuntimeError(f"worker on {tree} failed:\n{process.stderr[-3000:]}")
    return json.loads(process.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="e11f85a", help="the pre-refactor commit (default e11f85a)")
    parser.add_argument("--old-path", default="/work/wt-model24-old", help="temporary worktree of --old")
    parser.add_argument("--rounds", type=int, default=1, help="ABBA rounds (default 1: old, new, new, old)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    old_tree = Path(args.old_path)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old_tree), args.old], check=True,
                   capture_output=True)
    results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="speed_cache") as cache:
            for _ in range(args.rounds):
                for label, tree in (("before", old_tree), ("after", ROOT), ("after", ROOT), ("before", old_tree)):
                    results[label].append(run_worker(tree, cache))
                    print(f"  worker {label:6s} done ({time.perf_counter() - start:6.1f} s wall so far)", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_tree)], check=False,
                       capture_output=True)

    def pick(label: str, key: str, larger: bool) -> float:
        values = [r[key] for r in results[label]]
        return max(values) if larger else min(values)

    print(f"before = {args.old} ({old_tree}), after = {ROOT}; best of {2 * args.rounds} workers each")
    ref_before, ref_after = pick("before", "rnea_us", False), pick("after", "rnea_us", False)
    print(f"  reference pin.rnea (LWR4) per call: before {ref_before:.3f} us, after {ref_after:.3f} us "
          f"(after/before {ref_after / ref_before:.3f})")
    slowdowns = {}
    reference = ref_after / ref_before
    for key, label, unit, larger in MEASUREMENTS:
        before, after = pick("before", key, larger), pick("after", key, larger)
        slowdowns[key] = before / after if larger else after / before
        print(f"  {label:<46} before {before:10.3f} {unit:5s} after {after:10.3f} {unit:5s} "
              f"slowdown x{slowdowns[key]:.3f} (x{slowdowns[key] / reference:.3f} in units of the rnea reference)")
    worst = max(slowdowns, key=slowdowns.get)
    verdict = "none slower by more than 10 %" if slowdowns[worst] <= 1.10 else f"{worst} slower by more than 10 %"
    print("headline: after/before slowdowns " + ", ".join(f"{k} x{v:.3f}" for k, v in slowdowns.items())
          + f" (worst {worst} x{slowdowns[worst]:.3f}): {verdict}; {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
