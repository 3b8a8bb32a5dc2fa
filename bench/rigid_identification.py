"""Benchmark of the rigid-body identification with optimal excitation (seed 001 section 2, issue 27), one core.

The paper's full case on the shipped kr90: 5 harmonics at 0.1 Hz, Tables 1-2's limits, six optimized excitation
trajectories (seed 001 section 2.3: "a total of six different excitation trajectories ... average condition number
28"), four of them simulated (elastic joints, motor PD about the feedforward's q_m, 4096-count motor encoders, 1 %
torque noise) and used for the fit, the other two for validation, as in the paper.

Rows, each with wall time and a ratio to a reference measured in the same run:

1. Excitation design, one start per trajectory (SLSQP, finite-difference gradient). Reference: one cond(A) over
   60 samples (the objective's work: a regressor stack and an SVD), so the ratio is the design's cost in objective
   evaluations.
2. Simulation of the six 10 s trajectories (fixed-step, 1 kHz). Reference: the simulated time.
3. Identification (filtering, differentiation, weighted LS) of the four fit records. Reference: one regressor
   stack over the same rows.

The last line printed is the headline: mean cond(A) against the paper's 28, validation error, identification time.

    python bench/rigid_identification.py
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.dynamics.feedforward import feedforward  # noqa: E402
from flexrobot_ros.dynamics.trajectory import TrajectorySamples  # noqa: E402
from flexrobot_ros.identification.base_parameters import base_parameters, true_base_parameters  # noqa: E402
from flexrobot_ros.identification.excitation import (KR90_WORKSPACE, ExcitationLimits,  # noqa: E402
                                                     design_excitation, observation_condition)
from flexrobot_ros.identification.rigid_body import (RigidRecord, condition_record,  # noqa: E402
                                                     identify_rigid_body)
from flexrobot_ros.identification.rigid_regressor import regressor  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import Simulation  # noqa: E402
from flexrobot_ros.simulation.controllers import FeedforwardPD  # noqa: E402
from flexrobot_ros.simulation.sensors import MotorEncoder  # noqa: E402

TRAJECTORIES, FIT = 6, 4


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def row(label: str, seconds: float, reference: float, what: str) -> None:
    print(f"{label:<52} {seconds:9.3f} s  {seconds / reference:10.1f} x {what} ({reference:.4g} s)")


def record_of(robot, trajectory, seed: int) -> RigidRecord:
    """The elastic kr90 along ``trajectory``: quantized motor positions and motor torques with 1 % noise."""
    t = np.arange(0.0, trajectory.period + 5e-4, 1e-3)
    samples = TrajectorySamples(t, *trajectory.evaluate(t), trajectory.derivative(t, 3), trajectory.derivative(t, 4))
    reference = feedforward(robot, samples, "ejnea", check_limits=False)
    law = FeedforwardPD(robot, reference.tau_m, reference.q_m, reference.qd_m, times=t, kp=1e6, kd=3e4)
    out = Simulation(robot, law, q0=reference.q[0], q_m0=reference.q_m[0], seed=seed,
                     sensors=[MotorEncoder(counts_per_rev=4096)]).run(trajectory.period)
    q = np.column_stack([out.sensors[f"motor_encoder.{joint}"] for joint in robot.joint_names])
    noise = 0.01 * np.abs(out.tau_m).max(axis=0) * np.random.default_rng(seed).standard_normal(out.tau_m.shape)
    return RigidRecord(out.t, q, out.tau_m + noise, f"trajectory {seed}")


def main() -> None:
    robot = load_robot("kr90")
    base = base_parameters(robot)
    limits = ExcitationLimits.of_robot(robot, 8.0, KR90_WORKSPACE)
    designs, design_seconds = timed(lambda: [design_excitation(robot, limits, starts=1, seed=seed, base=base)
                                             for seed in range(TRAJECTORIES)])
    _, objective = timed(lambda: [observation_condition(robot, base, designs[0].trajectory, 60) for _ in range(20)])
    objective /= 20
    conditions = np.array([d.condition for d in designs])
    print(f"cond(A) of the {TRAJECTORIES} optimized trajectories: {np.round(conditions, 1).tolist()} (mean "
          f"{conditions.mean():.1f}; seed 001: 28 on average); random Fourier (median of 20 each): "
          f"{np.round([d.random_condition for d in designs], 0).tolist()}")
    row(f"design, {TRAJECTORIES} x 1 start, 5 harmonics at 0.1 Hz", design_seconds, objective,
        "objective evaluations")
    records, simulation_seconds = timed(lambda: [record_of(robot, d.trajectory, seed)
                                                 for seed, d in enumerate(designs)])
    row(f"simulation, {TRAJECTORIES} x 10 s at 1 kHz", simulation_seconds, 10.0 * TRAJECTORIES, "simulated time")
    result, identification_seconds = timed(lambda: identify_rigid_body(robot, records[:FIT], cutoff_hz=5.0,
                                                                       base=base))
    rows = result.record
    _, stack = timed(lambda: regressor(robot, rows.q, rows.qd, rows.qdd))
    row(f"identification, {FIT} records", identification_seconds, stack, "one regressor stack")
    truth = true_base_parameters(robot, base)
    error = np.abs(result.beta - truth) / np.abs(truth)
    for name, e, std in zip(base.base_names(), error, result.relative_std):
        print(f"  {name:<18} |error| {100 * e:8.3f} %   relative std {100 * std:8.3f} %")
    worst = []
    for record in records[FIT:]:
        conditioned = condition_record(record, 5.0)
        predicted = result.predict(robot, conditioned.q, conditioned.qd, conditioned.qdd)
        rms = np.sqrt(np.mean((predicted - conditioned.tau) ** 2, axis=0))
        worst.append(float(np.max(100 * rms / np.abs(conditioned.tau).max(axis=0))))
    well = result.relative_std < 0.10
    print(f"HEADLINE rigid identification kr90 (seed 001 section 2.3 case): mean cond(A) {conditions.mean():.1f} "
          f"(paper 28), validation rms/peak {max(worst):.3f} % on 2 unseen trajectories, {well.sum()} parameters "
          f"with relative std < 10 %, largest error among them {100 * error[well].max():.2f} %; design "
          f"{design_seconds:.1f} s, identification {identification_seconds:.2f} s")


if __name__ == "__main__":
    main()
