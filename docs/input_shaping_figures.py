"""Regenerate the figures and the table of ``docs/input_shaping.md``: Scompi point-to-point move, four strategies on
two plants.

Move: poly9 in 0.5 s from the thesis' configuration 8 to (0.1 m, -0.1, 1.6, 0.3, -1.6, 0.3 rad), Scompi with its
4 kg tool, shipped motor PD (the move of ``test/test_shaping_scompi.py``). Strategies, each a feedforward computed
on the nominal model and run with the PD (:class:`~flexrobot_ros.simulation.FeedforwardPD`):

* no shaping: rigid-model feedforward (thesis eq. 4.5, motor reference W q) of the move;
* ZVD shaping: the same rigid feedforward of the move shaped by :func:`flexrobot_ros.shaping.shape_reference`
  (ZVD, modes of the nominal model along the motion);
* flexible feedforward: the flexible-joint inverse dynamics (EJNEA, thesis eqs. 4.7-4.10) of the move;
* both: the flexible feedforward of the shaped move.

Plants: the model itself ("exact") and the model with every joint stiffness x 0.81 (its elastic modes 10 % lower;
the strategies do not know). Each run starts at rest at the equilibrium of its own law at the first pose. Tool
deviation: |p(t) - p_rest| [m], p the tool0 origin from the simulated link angles, p_rest its position 2.5 s after
the end of the commanded move; residual vibration: its RMS over the 1 s after that end (the figure of the README).

    python docs/input_shaping_figures.py [--out docs]    # about 1-3 minutes; prints the table and the commit

Writes ``input_shaping_exact.png`` and ``input_shaping_off10.png`` (tool deviation vs time after the end of the
move, log scale) and prints a Markdown table with the commit it ran at.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from scipy.optimize import fsolve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flexrobot_ros.dynamics import Poly9Trajectory, feedforward, rigid_feedforward  # noqa: E402
from flexrobot_ros.dynamics.post_actuation import samples_through_the_end  # noqa: E402
from flexrobot_ros.kinematics import frame_origins  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.shaping import shape_reference  # noqa: E402
from flexrobot_ros.simulation import FeedforwardPD, Simulation  # noqa: E402

Q0 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])
QF = np.array([0.1, -0.1, 1.6, 0.3, -1.6, 0.3])
STIFFNESS_SCALE = 0.81
WINDOW_S, SETTLE_S, RATE_HZ = 1.0, 2.5, 1000.0
STRATEGIES = ("no shaping", "ZVD shaping", "flexible feedforward", "flexible feedforward + ZVD")


def tool_deviation(plant, law, end_time: float) -> tuple[np.ndarray, np.ndarray]:
    """(t - end_time [s], |p(t) - p_rest| [m]) from the end of the commanded move for the feedforward ``law``."""
    data = plant.model.createData()
    w, k = plant.transmission, plant.stiffness

    def motor(q):  # the spring carries gravity at rest: K W (q_m - W q) = g(q)
        return w * q + pin.computeGeneralizedGravity(plant.model, data, q) / (k * w)

    def unbalance(q):  # the law's torque at rest minus the spring torque
        gravity = pin.computeGeneralizedGravity(plant.model, data, q) / w
        return law.tau_m[0] + plant.kp * (law.q_m[0] - motor(q)) - gravity

    q_rest = fsolve(unbalance, law.q[0], xtol=1e-13)
    sim = Simulation(plant, FeedforwardPD(plant, law.tau_m, law.q_m, law.qd_m, law.t), q0=q_rest,
                     q_m0=motor(q_rest), rate=RATE_HZ, mode="fixed")
    out = sim.run(end_time + SETTLE_S)
    tool = np.array([frame_origins(plant, q, ["tool0"])[0] for q in out.q])
    after = out.t >= end_time
    return out.t[after] - end_time, np.linalg.norm(tool[after] - tool[-1], axis=1)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="directory of the PNGs (default docs/)")
    args = parser.parse_args()
    commit = git_commit()
    robot = load_robot("scompi", tool=True)
    move = Poly9Trajectory(Q0, QF, 0.5)
    shaping = shape_reference(robot, move, "zvd")
    shaped = shaping.trajectory
    # sampled through the end of the motion, as flexrobot feedforward samples a rest-to-rest motion (the shaped one
    # ends between two samples: its last sample at rest)
    samples = {name: samples_through_the_end(motion, RATE_HZ) for name, motion in (("move", move), ("shaped", shaped))}
    laws = {"no shaping": (rigid_feedforward(robot, samples["move"]), move.end_time),
            "ZVD shaping": (rigid_feedforward(robot, samples["shaped"]), shaped.end_time),
            "flexible feedforward": (feedforward(robot, samples["move"], "ejnea"), move.end_time),
            "flexible feedforward + ZVD": (feedforward(robot, samples["shaped"], "ejnea"), shaped.end_time)}
    plants = {"exact": robot, "off10": robot.with_parameters(stiffness=robot.stiffness * STIFFNESS_SCALE)}
    rms: dict[tuple[str, str], float] = {}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for plant_name, plant in plants.items():
        figure, axis = plt.subplots(figsize=(8, 4.6))
        for k, name in enumerate(STRATEGIES):
            law, end = laws[name]
            t, deviation = tool_deviation(plant, law, end)
            window = t <= WINDOW_S
            rms[plant_name, name] = float(np.sqrt(np.mean(deviation[window] ** 2)))
            print(f"{plant_name}: {name}: residual vibration {rms[plant_name, name] * 1e6:.4f} um RMS",
                  file=sys.stderr, flush=True)
            axis.semilogy(t[window], np.maximum(deviation[window], 1e-12) * 1e6, color=f"C{k}", lw=1.0,
                          label=f"{name}: {rms[plant_name, name] * 1e6:.3g} um RMS")
        which = ("plant = model (exact modes)" if plant_name == "exact" else
                 f"plant: joint stiffnesses x {STIFFNESS_SCALE} (elastic modes 10 % lower), laws from the model")
        axis.set_title(f"Scompi, poly9 move 0.5 s; {which}\nZVD adds {shaping.added_time_s:.3f} s; commit {commit}",
                       fontsize=9)
        axis.set_xlabel("time after the end of the commanded move [s]")
        axis.set_ylabel("tool deviation from rest [um]")
        axis.set_xlim(0.0, WINDOW_S)
        axis.set_ylim(1e-5, None)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8, loc="upper right")
        figure.tight_layout()
        path = args.out / f"input_shaping_{plant_name}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        print(f"wrote {path}", file=sys.stderr)
    print(f"Measured at commit {commit} (docs/input_shaping_figures.py); ZVD adds {shaping.added_time_s:.3f} s.\n")
    print("| strategy | exact plant [um RMS] | ratio | stiffness x 0.81 [um RMS] | ratio |")
    print("|---|---|---|---|---|")
    for name in STRATEGIES:
        cells = [f"{rms[p, name] * 1e6:.4g} | {rms[p, 'no shaping'] / rms[p, name]:.1f}x" for p in plants]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
