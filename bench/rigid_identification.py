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
3. Identification (filtering, differentiation, link side through the joint deflection, parallel filtering of the
   regressor, weighted LS) of the four fit records. Reference: one regressor stack at every sample of them.

Then the joint elasticity's bias (issue 27): each base parameter's error with the deflection compensated (the
default) and ignored (``elasticity=False``), on the noisy records and on the same records noise-free (the simulator's
q_m and tau_m: the model error alone); and how often the issue's line "every base parameter whose relative standard
deviation is below 10 % lies within 5 % of the truth" holds over 20 torque-noise realizations added to the same
simulated runs, with and without the compensation.

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
from flexrobot_ros.identification.rigid_body import RigidRecord, identify_rigid_body  # noqa: E402
from flexrobot_ros.identification.rigid_regressor import regressor  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import Simulation  # noqa: E402
from flexrobot_ros.simulation.controllers import FeedforwardPD  # noqa: E402
from flexrobot_ros.simulation.sensors import MotorEncoder  # noqa: E402

TRAJECTORIES, FIT = 6, 4
#: Torque noise realizations of the noise study, and the noise: standard deviation as a fraction of each joint's peak.
REALIZATIONS, NOISE = 20, 0.01


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def row(label: str, seconds: float, reference: float, what: str) -> None:
    print(f"{label:<52} {seconds:9.3f} s  {seconds / reference:10.1f} x {what} ({reference:.4g} s)")


def record_of(robot, trajectory, seed: int) -> tuple[RigidRecord, RigidRecord]:
    """The elastic kr90 along ``trajectory``: (quantized motor positions and motor torques with 1 % noise, the
    simulator's exact q_m and tau_m)."""
    t = np.arange(0.0, trajectory.period + 5e-4, 1e-3)
    samples = TrajectorySamples(t, *trajectory.evaluate(t), trajectory.derivative(t, 3), trajectory.derivative(t, 4))
    reference = feedforward(robot, samples, "ejnea", check_limits=False)
    law = FeedforwardPD(robot, reference.tau_m, reference.q_m, reference.qd_m, times=t, kp=1e6, kd=3e4)
    out = Simulation(robot, law, q0=reference.q[0], q_m0=reference.q_m[0], seed=seed,
                     sensors=[MotorEncoder(counts_per_rev=4096)]).run(trajectory.period)
    q = np.column_stack([out.sensors[f"motor_encoder.{joint}"] for joint in robot.joint_names])
    noise = NOISE * np.abs(out.tau_m).max(axis=0) * np.random.default_rng(seed).standard_normal(out.tau_m.shape)
    return (RigidRecord(out.t, q, out.tau_m + noise, f"trajectory {seed}"),
            RigidRecord(out.t, out.q_m, out.tau_m, f"trajectory {seed}, noise-free"))


def literal_line_holds(result, truth) -> bool:
    """Every base parameter with relative std below 10 % within 5 % of the truth."""
    well = result.relative_std < 0.10
    return bool(np.all(np.abs(result.beta[well] - truth[well]) <= 0.05 * np.abs(truth[well])))


def noise_study(robot, base, exact: list[RigidRecord], truth) -> dict[bool, int]:
    """{elasticity compensated: realizations (of REALIZATIONS) in which the literal line holds}."""
    rng = np.random.default_rng(1000)
    held = {True: 0, False: 0}
    for _ in range(REALIZATIONS):
        noisy = [RigidRecord(r.t, r.q, r.tau + NOISE * np.abs(r.tau).max(axis=0) * rng.standard_normal(r.tau.shape))
                 for r in exact]
        for elasticity in held:
            held[elasticity] += literal_line_holds(identify_rigid_body(robot, noisy, cutoff_hz=5.0, base=base,
                                                                       elasticity=elasticity), truth)
    return held


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
    pairs, simulation_seconds = timed(lambda: [record_of(robot, d.trajectory, seed)
                                               for seed, d in enumerate(designs)])
    records, exact = [p[0] for p in pairs], [p[1] for p in pairs]
    row(f"simulation, {TRAJECTORIES} x 10 s at 1 kHz", simulation_seconds, 10.0 * TRAJECTORIES, "simulated time")
    result, identification_seconds = timed(lambda: identify_rigid_body(robot, records[:FIT], cutoff_hz=5.0,
                                                                       base=base))
    _, stack = timed(lambda: [regressor(robot, c.q, c.qd, c.qdd) for c in result.records])
    row(f"identification, {FIT} records", identification_seconds, stack, "one regressor stack at every sample")
    truth = true_base_parameters(robot, base)
    ignored = identify_rigid_body(robot, records[:FIT], cutoff_hz=5.0, base=base, elasticity=False)
    exact_fits = {elasticity: identify_rigid_body(robot, exact[:FIT], cutoff_hz=5.0, base=base,
                                                  elasticity=elasticity) for elasticity in (True, False)}
    print(f"  {'base parameter':<18}{'compensated: error':>20}{'rel. std':>10}{'ignored: error':>16}{'rel. std':>10}"
          f"{'noise-free bias, compensated':>30}{'ignored':>10}   [%]")
    for k, name in enumerate(base.base_names()):
        errors = [100 * (fit.beta[k] - truth[k]) / abs(truth[k]) for fit in (result, ignored, *exact_fits.values())]
        print(f"  {name:<18}{errors[0]:>20.3f}{100 * result.relative_std[k]:>10.3f}{errors[1]:>16.3f}"
              f"{100 * ignored.relative_std[k]:>10.3f}{errors[2]:>30.3f}{errors[3]:>10.3f}")
    worst = []
    for record in records[FIT:]:
        conditioned = result.conditioned(record)
        measured = conditioned.measured_torques()
        rms = np.sqrt(np.mean((result.predict(robot, conditioned) - measured) ** 2, axis=0))
        worst.append(float(np.max(100 * rms / np.abs(measured).max(axis=0))))
    held, study_seconds = timed(lambda: noise_study(robot, base, exact[:FIT], truth))
    print(f"literal line (rel. std < 10 % => within 5 %) on the records above: compensated "
          f"{literal_line_holds(result, truth)}, ignored {literal_line_holds(ignored, truth)}; over {REALIZATIONS} "
          f"noise realizations: compensated {held[True]}, ignored {held[False]} ({study_seconds:.1f} s)")
    well = result.relative_std < 0.10
    print(f"HEADLINE rigid identification kr90 (seed 001 section 2.3 case): mean cond(A) {conditions.mean():.1f} "
          f"(paper 28), validation rms/peak {max(worst):.3f} % on 2 unseen trajectories, {well.sum()} parameters "
          f"with relative std < 10 %, largest error among them "
          f"{100 * (np.abs(result.beta - truth) / np.abs(truth))[well].max():.2f} % with the elasticity compensated; "
          f"literal line in {held[True]}/{REALIZATIONS} noise realizations (ignored: {held[False]}); design "
          f"{design_seconds:.1f} s, identification {identification_seconds:.2f} s")


if __name__ == "__main__":
    main()
