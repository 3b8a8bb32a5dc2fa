"""Speed acceptance of issue 24's one plant for the plain flexible-joint robots: the former FlexibleJointPlant (its
file taken from git, default 864f837, the last commit that has it, and imported beside the current tree) against
ElasticRobotPlant's elastic-joints evaluation in the same process.

Cases: the Scompi with its 4 kg tool at the thesis' configuration 8 and the KUKA LWR4 at the second pose of the
regression cases (``test/regression_cases.py``), each under its shipped PD + gravity compensation, a 6 ms force
pulse on the tool frame at t = 0.1 s (50 N and 20 N along each world axis, as the regression cases), 1 s simulated
at 1 kHz output in the fixed-step mode (``Simulation.run(1.0)``, the core of ``flexrobot simulate``).

Measured per robot, in CPU time of this process (``time.process_time``), best of ``--rounds`` ABBA rounds (old,
new, new, old, so that a drift of the shared machine's load cancels): one ``derivative`` and one ``jacobian`` call
[us], building the plant [ms], and the 1 s run with the plant built beforehand [s CPU]. The reference is one
``pin.aba`` call on the same robot, measured in the same run; every time is also printed in units of it.
Acceptance: the 1 s run not slower than the old plant by more than 10 %. BLAS threads are pinned to 1. The headline
is the last line.

    nice -n 19 python bench/one_plant_speed.py [--old 864f837] [--rounds 3]
"""
from __future__ import annotations

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import PDGravityCompensation, RectangularPulse, Simulation  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402
from flexrobot_ros.simulation.impact_experiment import thesis_configuration  # noqa: E402
from regression_cases import poses  # noqa: E402

#: (robot, tool, pose, impact force along each world axis [N])
CASES = (("scompi", True, thesis_configuration(8), 50.0), ("lwr4", False, poses("lwr4")[1], 20.0))
OLD_FILE = "flexrobot_ros/simulation/flexible_joint_plant.py"


def old_plant_class(commit: str, folder: str) -> type:
    """FlexibleJointPlant as it was at ``commit``, imported from a copy of its file (its imports resolve to the
    current tree's model and plant protocol)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{OLD_FILE}"], check=True,
                            capture_output=True, text=True).stdout
    path = Path(folder) / "old_flexible_joint_plant.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_flexible_joint_plant", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FlexibleJointPlant


def cpu(function) -> float:
    """CPU time [s] of one call."""
    start = time.process_time()
    function()
    return time.process_time() - start


def per_call(function, number: int) -> float:
    """Best CPU time per call [s] of 3 runs of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=3, timer=time.process_time)) / number


def measure(build, robot, q_d: np.ndarray, force: float) -> dict[str, float]:
    """Times [s] of one plant class: build, derivative, jacobian, the 1 s impact run; and the run's final state."""
    controller = PDGravityCompensation.create(robot, q_d)
    plant = build(robot)
    frame = robot.tool_frame or "tool0"
    rng = np.random.default_rng(0)
    x = plant.state(q_d, controller.q_m_d) + np.concatenate([0.01 * rng.standard_normal(4 * robot.n), [0, 0]])
    tau = rng.standard_normal(robot.n)
    slope = np.zeros((robot.n, x.size))

    def run():
        pulse = RectangularPulse(frame, [force, force, force], 0.1, 0.106)
        return Simulation(plant, controller, rate=1000.0, mode="fixed", excitations=[pulse]).run(1.0)

    final = run().states[-1]
    return {"build": cpu(lambda: build(robot)), "derivative": per_call(lambda: plant.derivative(x, tau, ()), 5000),
            "jacobian": per_call(lambda: plant.jacobian(x, tau, slope, ()), 2000), "run": cpu(run), "final": final}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="864f837", help="a commit holding the former FlexibleJointPlant (default "
                        "864f837, the last one)")
    parser.add_argument("--rounds", type=int, default=3, help="ABBA rounds (default 3)")
    args = parser.parse_args()
    slowdowns = {}
    with tempfile.TemporaryDirectory() as folder:
        plants = {"old": old_plant_class(args.old, folder), "new": ElasticRobotPlant}
        for name, tool, q_d, force in CASES:
            robot = load_robot(name, tool=tool)
            data = robot.create_data()
            aba = per_call(lambda: pin.aba(robot.model, data, q_d, np.ones(robot.n), np.ones(robot.n)), 20000)
            best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
            finals = {}
            for _ in range(args.rounds):
                for label in ("old", "new", "new", "old"):
                    result = measure(plants[label], robot, q_d, force)
                    finals[label] = result.pop("final")
                    for key, value in result.items():
                        best[label][key] = min(best[label].get(key, np.inf), value)
            difference = np.abs(finals["new"] - finals["old"]).max()
            print(f"{name}{' + tool' if tool else ''} (n = {robot.n}), reference pin.aba {aba * 1e6:.2f} us; "
                  f"old = FlexibleJointPlant at {args.old}, new = ElasticRobotPlant; best of {2 * args.rounds} each")
            for key, unit, scale in (("build", "ms", 1e3), ("derivative", "us", 1e6), ("jacobian", "us", 1e6),
                                     ("run", "s CPU", 1.0)):
                old, new = best["old"][key], best["new"][key]
                print(f"  {key:<11} old {old * scale:10.3f} {unit:5s} ({old / aba:9.1f} aba)   new "
                      f"{new * scale:10.3f} {unit:5s} ({new / aba:9.1f} aba)   new/old x{new / old:.3f}")
            print(f"  final states of the 1 s runs differ by {difference:.2e} (largest entry, rad | rad/s | J)")
            slowdowns[name] = best["new"]["run"] / best["old"]["run"]
    worst = max(slowdowns, key=slowdowns.get)
    verdict = "not slower by more than 10 %" if slowdowns[worst] <= 1.10 else f"{worst} slower by more than 10 %"
    print("headline: 1 s impact run (1 kHz, fixed step), ElasticRobotPlant / former FlexibleJointPlant CPU time: "
          + ", ".join(f"{name} x{value:.3f}" for name, value in slowdowns.items()) + f": {verdict}")


if __name__ == "__main__":
    main()
