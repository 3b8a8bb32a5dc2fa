"""Wall time of one flexible-link self-calibration (issue 26): ``python bench/link_calibration.py [--compiled]
[--poses N] [--record-s S] [--rate-hz R]`` (N from 2 to 5).

Runs :func:`flexrobot_ros.identification.calibration.calibrate` in-process on the Canadarm (seed 003) as
test/test_link_calibration.py does: a simulated "true" arm with every link's EI x 1.15 at N poses, each held under
its PD law, struck at the tip (300 N along y0 for 20 ms) and recorded for S seconds of joint encoders at R Hz;
SSI-cov (orders 2:60); identification of every link's EI (one start). The simulator is the Python recursion, or
with ``--compiled`` the compiled plant (generated C of the same model: its compile time, 10-35 s per EI value on
this machine, is printed beside the rest). Printed: EI errors [%], the wall time of each part - building the plant,
simulating the records, OMA, identification and report - as fractions of the total; the headline (last line) is the
total wall time against the simulated record time (a ratio below 1: the computation keeps up with the measurement).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from flexrobot_ros.identification.calibration import CalibrationOptions, calibrate  # noqa: E402
from flexrobot_ros.identification.modal_data import MeasuredMode  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.oma import identify_modes  # noqa: E402
from flexrobot_ros.simulation import RectangularPulse, Simulation  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller  # noqa: E402

LINKS = ("link1", "link2", "link3")
POSES = [[0.4, -1.1, 0.7], [0.0, 1.5, 1.5], [1.0, -1.2, 0.8], [-0.5, 0.8, -1.0], [0.2, 2.0, -0.6]]


def pose_count(text: str) -> int:
    """``--poses``: a whole number from 2 to len(POSES). One pose cannot calibrate by design: the parameters are
    pose-independent and the change of the modes with the pose separates them (calibrate and the identifications
    refuse fewer than two poses, seed 000 eq. 3.32 counting)."""
    try:
        count = int(text)
    except ValueError:
        count = None
    if count is None or not 2 <= count <= len(POSES):
        raise argparse.ArgumentTypeError(
            f"expected a whole number of calibration poses from 2 to {len(POSES)} (the first N of the bench's "
            f"{len(POSES)}; a calibration separates the parameters by how the modes change between poses, so one "
            f"pose cannot calibrate), got {text!r}")
    return count


class TimedArm:
    """The calibration cell on an in-process simulation of ``plant``, timing its simulation and OMA [s]."""

    def __init__(self, plant: ElasticRobotPlant, record_s: float, rate_hz: float) -> None:
        self.plant, self.record_s, self.rate_hz = plant, record_s, rate_hz
        self.simulation, self.simulate_s, self.oma_s = None, 0.0, 0.0

    def move_to(self, pose):
        self.simulation = Simulation(self.plant, hold_controller(self.plant, pose), q0=pose, rate=self.rate_hz)
        return self.simulation.state[:self.plant.n]

    def excite(self):
        t0 = self.simulation.t + 1.0 / self.rate_hz
        self.simulation.apply(RectangularPulse("tool0", (0.0, 300.0, 0.0), t0, t0 + 0.02))

    def measure_modes(self):
        started = time.perf_counter()
        q_m = self.simulation.advance(self.record_s).q_m
        middle = time.perf_counter()
        result = identify_modes(q_m - q_m.mean(axis=0), self.rate_hz, "ssi-cov", "2:60")
        self.simulate_s += middle - started
        self.oma_s += time.perf_counter() - middle
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if m.frequency_hz > 0 and 0.0 <= m.damping_ratio < 1.0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=pose_count, default=3,
                        help=f"calibration poses, the first N of {len(POSES)} (2 to {len(POSES)})")
    parser.add_argument("--record-s", type=float, default=16.0, help="record length per pose [s]")
    parser.add_argument("--rate-hz", type=float, default=100.0, help="encoder sample rate [Hz]")
    parser.add_argument("--compiled", action="store_true", help="simulate with the compiled plant")
    args = parser.parse_args()
    nominal = load_robot("canadarm")
    truth = nominal.with_link_parameters({link: {"EI": 1.15e5} for link in LINKS})
    started = time.perf_counter()
    plant = ElasticRobotPlant(truth, compiled=args.compiled)
    build_s = time.perf_counter() - started
    cell = TimedArm(plant, args.record_s, args.rate_hz)
    result = calibrate(nominal, POSES[:args.poses], cell, CalibrationOptions(parameters="EI", starts=1))
    total = time.perf_counter() - started
    records = args.poses * args.record_s
    errors = [result.robot.flexible_links[link].EI_y / 1.15e5 - 1.0 for link in LINKS]
    print(f"canadarm, EI x 1.15, {args.poses} poses x {args.record_s:g} s records at {args.rate_hz:g} Hz "
          f"({'compiled' if args.compiled else 'Python'} plant): EI errors "
          + ", ".join(f"{100 * e:+.3f} %" for e in errors) + f"; kept at nominal: {', '.join(result.kept) or 'none'}")
    rest = total - build_s - cell.simulate_s - cell.oma_s
    for name, seconds in (("building the plant", build_s), ("simulating the records", cell.simulate_s),
                          ("OMA (SSI-cov)", cell.oma_s), ("identification and report", rest)):
        print(f"  {name:<28} {seconds:8.2f} s  {100 * seconds / total:5.1f} % of the total")
    print(f"one link calibration: wall time {total:.2f} s for {records:g} s of simulated records: "
          f"ratio {total / records:.2f}")


if __name__ == "__main__":
    main()
