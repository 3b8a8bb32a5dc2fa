"""Wall time of one self-calibration (issue 26): ``python bench/calibration.py [--poses N] [--record-s S]``.

Runs the core procedure :func:`flexrobot_ros.identification.calibration.calibrate` in-process on the Scompi with the
4 kg tool, exactly as calibration_node does on its records: a simulated "true" robot (joint stiffness x U[0.8, 1.2],
link damping x U[0.7, 1.3], seed 26) at N poses (default the 6 of config/scompi_simulation.yaml), each held under PD
+ gravity compensation, struck (50 N along y0 + 5 N m about z0 for 6 ms) and recorded for S seconds of motor
encoders at 1 kHz; SSI-cov; identification of k and d_f (8 starts). Printed: the simulated record time the
calibration needs (N x S) and the wall time of each part - simulating the records, OMA, identification and report -
beside the total, as ratios in the same run; the headline (last line) is the total wall time against the simulated
record time. On a robot, the records take N x S seconds of real time plus the moves; a ratio below 1 means the
computation keeps up with the measurement.
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
from flexrobot_ros.runtime.params import parameters_for_node  # noqa: E402
from flexrobot_ros.simulation import (FixedStepIntegration, PDGravityCompensation, RectangularPulse,  # noqa: E402
                                      Simulation)

RATE_HZ = 1000.0
IMPACT = (0.0, 50.0, 0.0, 0.0, 0.0, 5.0)


class TimedCell:
    """The calibration cell on an in-process simulation of ``robot``, timing its simulation and OMA [s]."""

    def __init__(self, robot, record_s: float) -> None:
        self.robot, self.record_s = robot, record_s
        self.simulation, self.simulate_s, self.oma_s = None, 0.0, 0.0

    def move_to(self, pose):
        self.simulation = Simulation(self.robot, PDGravityCompensation.create(self.robot, pose), rate=RATE_HZ,
                                     fixed=FixedStepIntegration(1))
        return self.simulation.state[:self.robot.n]

    def excite(self):
        t0 = self.simulation.t + 0.001
        self.simulation.apply(RectangularPulse(self.robot.tool_frame, IMPACT, t0, t0 + 0.006))

    def measure_modes(self):
        started = time.perf_counter()
        q_m = self.simulation.advance(self.record_s).q_m
        middle = time.perf_counter()
        result = identify_modes(q_m - q_m.mean(axis=0), RATE_HZ, "ssi-cov")
        self.simulate_s += middle - started
        self.oma_s += time.perf_counter() - middle
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if m.frequency_hz > 0 and 0.0 <= m.damping_ratio < 1.0]


def config_poses(n: int) -> list[np.ndarray]:
    """The calibration poses of config/scompi_simulation.yaml [rad | m]."""
    values, _ = parameters_for_node([REPO / "config" / "scompi_simulation.yaml"], "/calibration_node")["poses"]
    values = np.asarray(values, dtype=float)
    return list(values.reshape(-1, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=6, help="calibration poses (the first N of the config's)")
    parser.add_argument("--record-s", type=float, default=2.0, help="record length per pose [s]")
    args = parser.parse_args()
    nominal = load_robot("scompi", tool=True)
    rng = np.random.default_rng(26)
    truth = nominal.with_parameters(stiffness=nominal.stiffness * rng.uniform(0.8, 1.2, nominal.n),
                                    link_damping=nominal.link_damping * rng.uniform(0.7, 1.3, nominal.n))
    poses = config_poses(nominal.n)[:args.poses]
    cell = TimedCell(truth, args.record_s)
    started = time.perf_counter()
    result = calibrate(nominal, poses, cell, CalibrationOptions())
    total = time.perf_counter() - started
    records = len(poses) * args.record_s
    rest = total - cell.simulate_s - cell.oma_s
    error = np.abs(result.robot.stiffness[:5] / truth.stiffness[:5] - 1.0).max()
    print(f"scompi + tool, {len(poses)} poses x {args.record_s:g} s records at {RATE_HZ:g} Hz: "
          f"{records:g} s of simulated records; k1-k5 worst error {100 * error:.4f} %, kept at nominal: "
          f"{', '.join(result.kept) or 'none'}")
    for name, seconds in (("simulating the records", cell.simulate_s), ("OMA (SSI-cov)", cell.oma_s),
                          ("identification and report", rest)):
        print(f"  {name:<28} {seconds:8.2f} s  {100 * seconds / total:5.1f} % of the total")
    print(f"one calibration: wall time {total:.2f} s for {records:g} s of simulated records: ratio {total / records:.2f}")


if __name__ == "__main__":
    main()
