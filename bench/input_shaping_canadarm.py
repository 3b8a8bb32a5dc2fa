"""Benchmark of input shaping on the Canadarm (issue 26, "Canadarm: at least 10x"): residual tool vibration and cost.

The move and the figure of ``test/test_shaping_canadarm.py`` (seed 003's Canadarm, poly9 in 8 s from (0, 0.6, -0.8)
to (0.6, 0.1, -0.2) rad, shipped joint PD, compiled flexible-link plant), with the fixed-step simulator at ``--rate``
(default 1 kHz, the rate of the Scompi's figures; the test runs 100 Hz) and a longer window (``--window``, default
20 s, two periods of the dominant 0.095 Hz mode): the RMS of the deformed tool's distance [mm] from its rest position
over the window after the commanded move ends. Every feedforward runs on over the window with the reference held at
its end pose (the flexible feedforward keeps the joints on it while the beams vibrate; the rigid one is zero there).

Rows, each on two plants (the model, and the model with every link's EI x 0.81: its uncoupled beam modes 10 % lower,
the truth the shaper does not know): rigid-model feedforward + PD (the baseline), ZVD shaping of it, joint-space
flexible feedforward (``prescribed``: the beams' deformations integrated along the joint motion) + PD, both; ZV, EI,
and ZVD tuned 10 % above and 10 % below the predicted modes. Cost: ``shape_reference`` (ZVD) against the unshaped
rigid feedforward of the move (1 kHz), measured in the same run, best of ``--repeat``. The last line is the headline.
``--plot FILE.png`` draws the tool's distance from rest after the move for the first four rows on both plants (the
figure of ``docs/input_shaping.md``).

    python bench/input_shaping_canadarm.py [--rate 1000] [--window 20] [--repeat 1] \
        [--plot docs/input_shaping_canadarm.png]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small eigenproblems: one BLAS thread (FACTS.md)

import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward  # noqa: E402
from flexrobot_ros.dynamics.input_shaping import design_shaper  # noqa: E402
from flexrobot_ros.dynamics.shaped_trajectory import ShapedTrajectory  # noqa: E402
from flexrobot_ros.dynamics.trajectory import Trajectory  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.model.loader import share_directory  # noqa: E402
from flexrobot_ros.modal.dominant_modes import dominant_modes  # noqa: E402
from flexrobot_ros.shaping import shape_reference  # noqa: E402
from flexrobot_ros.simulation import FeedforwardPD, Simulation  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402

Q0 = np.array([0.0, 0.6, -0.8])
QF = np.array([0.6, 0.1, -0.2])
DURATION_S = 8.0
EI_SCALE = 0.81
#: The rows drawn by --plot.
FIGURE_ROWS = ("no shaping (rigid feedforward + PD)", "ZVD shaping", "flexible feedforward (prescribed)",
               "flexible feedforward + ZVD shaping")


class Held(Trajectory):
    """``reference`` on [t_0, t_f + tail_s] [s], at rest at its end pose after t_f."""

    def __init__(self, reference: Trajectory, tail_s: float):
        self.reference = reference
        self.n_joints = reference.n_joints
        self.start_time = reference.start_time
        self.end_time = reference.end_time + tail_s

    def _derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        moving = t <= self.reference.end_time
        samples = self.reference.evaluate(np.minimum(t, self.reference.end_time))
        return [samples.q] + [np.where(moving[:, None], d, 0.0) for d in (samples.qd, samples.qdd, samples.q3,
                                                                          samples.q4)]


def best_time(function: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Smallest wall time [s] and smallest CPU time of this process [s] of ``repeat`` calls, and the last result."""
    wall, cpu, result = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu), result


def softer_canadarm(directory: Path):
    """The Canadarm with every flexible link's EI x EI_SCALE (a copy of config/canadarm.yaml)."""
    source = share_directory() / "config" / "canadarm.yaml"
    data = yaml.safe_load(source.read_text())
    data["urdf"] = str((source.parent / data["urdf"]).resolve())
    for spec in data["flexible_links"].values():
        spec["EI"] = float(spec["EI"]) * EI_SCALE
    path = directory / "canadarm_soft.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_robot(str(path))


def tool_deviation(robot, plant, trajectory: Trajectory, ff, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """(t - t_end [s], |p(t) - p_rest| [m]) after ``trajectory`` ends, to the end of its feedforward ``ff`` (computed
    on the model along the held trajectory) run with the shipped PD on ``plant``; p the deformed tool0, p_rest its
    undeformed position at QF."""
    out = Simulation(plant, FeedforwardPD(robot, ff.tau_m, ff.q_m, ff.qd_m, times=ff.t), q0=ff.q[0],
                     rate=rate).run(ff.t[-1])
    tool = plant.frame_id("tool0")
    rest = plant.frame_position(plant.state(QF, QF), tool)
    after = out.t >= trajectory.end_time
    deviation = [np.linalg.norm(plant.frame_position(x, tool) - rest) for x in out.states[after]]
    return out.t[after] - trajectory.end_time, np.array(deviation)


def plot(path: Path, curves: dict, titles: list[str]) -> None:
    """Tool deviation [mm] after the move, one panel per plant, one curve per strategy (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(titles), figsize=(12, 4.6), sharey=True)
    for p, (axis, title) in enumerate(zip(axes, titles)):
        for k, (label, series) in enumerate(curves.items()):
            t, deviation = series[p]
            rms = 1e3 * np.sqrt(np.mean(deviation ** 2))
            axis.semilogy(t, np.maximum(deviation, 1e-9) * 1e3, color=f"C{k}", lw=1.0,
                          label=f"{label}: {rms:.3g} mm RMS")
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("time after the end of the commanded move [s]")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("deformed tool's distance from rest [mm]")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="simulation and feedforward rate [Hz]")
    parser.add_argument("--window", type=float, default=20.0, help="residual window after the move [s]")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs, best kept (default 1)")
    parser.add_argument("--plot", type=Path, help="also write the figure of docs/input_shaping.md (PNG)")
    args = parser.parse_args()
    robot = load_robot("canadarm")
    move = Poly9Trajectory(Q0, QF, DURATION_S)
    reference_s, reference_cpu_s, _ = best_time(lambda: feedforward(robot, move, "rigid", rate_hz=1000.0),
                                                max(args.repeat, 5))
    shaping_s, shaping_cpu_s, zvd = best_time(lambda: shape_reference(robot, move, "zvd"), args.repeat)
    shaped = {"zvd": zvd}
    for kind in ("zv", "ei"):
        shaped[kind] = shape_reference(robot, move, kind)
    for scale, label in ((1.1, "zvd +10 %"), (0.9, "zvd -10 %")):
        f, zeta = zvd.modes.frequencies_hz * scale, zvd.modes.damping_ratios
        shaped[label] = ShapedTrajectory(move, zvd.schedule_times,
                                         [design_shaper(zvd.kinds, fi, zi) for fi, zi in zip(f, zeta)])
    trajectory = {label: getattr(s, "trajectory", s) for label, s in shaped.items()}
    rows = [("no shaping (rigid feedforward + PD)", move, "rigid"), ("ZVD shaping", trajectory["zvd"], "rigid"),
            ("flexible feedforward (prescribed)", move, "prescribed"),
            ("flexible feedforward + ZVD shaping", trajectory["zvd"], "prescribed"),
            ("ZV shaping", trajectory["zv"], "rigid"), ("EI shaping", trajectory["ei"], "rigid"),
            ("ZVD tuned 10 % high", trajectory["zvd +10 %"], "rigid"),
            ("ZVD tuned 10 % low", trajectory["zvd -10 %"], "rigid")]
    with tempfile.TemporaryDirectory() as directory:
        soft = softer_canadarm(Path(directory))
        nominal_hz = dominant_modes(robot, QF[None]).frequencies_hz[0, 0]
        soft_hz = dominant_modes(soft, QF[None]).frequencies_hz[0, 0]
        plants = [(robot, ElasticRobotPlant(robot, compiled=True)), (soft, ElasticRobotPlant(soft, compiled=True))]
        print(f"Canadarm, poly9 move of {DURATION_S:g} s, shipped PD, fixed step {args.rate:g} Hz, residual = RMS "
              f"tool distance from rest over {args.window:g} s after the move; dominant mode at the end pose "
              f"{nominal_hz:.4f} Hz (model), {soft_hz:.4f} Hz (EI x {EI_SCALE}: "
              f"{100 * (soft_hz / nominal_hz - 1):+.1f} %)")
        print(f"  {'strategy':<38}{'added move':>11}{'plant = model':>16}{'ratio':>9}"
              f"{f'EI x {EI_SCALE}':>16}{'ratio':>9}")
        results, curves = {}, {}
        for label, path, method in rows:
            ff = feedforward(robot, Held(path, args.window), method, rate_hz=args.rate)  # once for both plants
            series = [tool_deviation(plant_robot, plant, path, ff, args.rate) for plant_robot, plant in plants]
            values = [1e3 * float(np.sqrt(np.mean(deviation ** 2))) for _, deviation in series]
            results[label] = values
            if label in FIGURE_ROWS:
                curves[label] = series
            base = results["no shaping (rigid feedforward + PD)"]
            added = path.end_time - move.end_time
            print(f"  {label:<38}{added:>9.3f} s{values[0]:>13.4g} mm{base[0] / values[0]:>8.1f}x"
                  f"{values[1]:>13.4g} mm{base[1] / values[1]:>8.1f}x", flush=True)
    if args.plot is not None:
        plot(args.plot, curves, [f"plant = model; ZVD adds {zvd.added_time_s:.2f} s",
                                 f"plant: links' EI x {EI_SCALE} (beam modes 10 % lower), laws from the model"])
    base, best = results["no shaping (rigid feedforward + PD)"], results["ZVD shaping"]
    high, low = results["ZVD tuned 10 % high"], results["ZVD tuned 10 % low"]
    print(f"cost: shape_reference zvd {shaping_s:.3f} s wall, {shaping_cpu_s:.3f} s CPU ({zvd.schedule_times.size} "
          f"schedule times) = {shaping_s / reference_s:.0f}x (CPU {shaping_cpu_s / reference_cpu_s:.0f}x) the unshaped "
          f"rigid feedforward ({reference_s * 1e3:.1f} ms wall, {reference_cpu_s * 1e3:.1f} ms CPU, 1 kHz)")
    print(f"canadarm ZVD: residual tool vibration {base[0] / best[0]:.1f}x smaller than rigid feedforward + PD "
          f"({base[0]:.4g} mm -> {best[0]:.4g} mm RMS; tuned 10 % high {base[0] / high[0]:.1f}x, 10 % low "
          f"{base[0] / low[0]:.1f}x; EI x {EI_SCALE} plant {base[1] / best[1]:.1f}x), move time "
          f"+{zvd.added_time_s:.3f} s "
          f"on {DURATION_S:g} s; shaping {shaping_s:.2f} s wall ({shaping_cpu_s:.2f} s CPU)")


if __name__ == "__main__":
    main()
