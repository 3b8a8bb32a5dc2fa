"""Regression cases of issue 24 ("one model of an elastic robot"): for every shipped robot, the ``flexrobot modal``
frequencies [Hz] and damping ratios (fractions) at three poses and a 1 s ``flexrobot simulate`` run, computed
through the command line's own entry point (:func:`flexrobot_ros.cli.main`, in process), so that the data cover the
path users run.

Cases (one per shipped robot, with its shipped flexibility YAML; ``--tool`` where the YAML has a ``tool`` section:
scompi and rrp):

- poses [rad | m]: the zero pose clipped into the URDF joint limits (kr90 and kr90_3dof: q2 = 0.09 rad; rrp:
  d3 = 0.2 m), and two random poses drawn uniformly from the middle 80 % of each joint's range (the range first
  cut to [-pi, pi]) by ``numpy.random.default_rng(SEED)``; the poses are stored with the data;
- modes: ``flexrobot modal ROBOT [--tool] --q POSE --json`` with the YAML's gains, or the recorded ones where the
  YAML has changed them since (RECORDED_GAINS: ``--kp``/``--kd``) (PD + gravity compensation; the extended model's
  modes for robots with extra elasticities, the link layer's for robots with flexible links);
- simulation: ``flexrobot simulate ROBOT [--tool] --q0 POSE2 --duration 1 --rate 1000 --impact
  tool0,F,F,F,0.1,0.106 --out FILE.npz`` (fixed-step mode, the robot's shipped controller: motor PD + gravity
  compensation holding the second pose; a 6 ms force pulse of F [N] along each world axis on tool0, F per
  robot in IMPACT_N), every column of the time series sampled at 100 instants (every 10th sample, t = 0 to
  0.99 s).

``python test/data/regression/record.py`` writes the data (test/data/regression/elastic_model.npz);
``test/test_regression_elastic_model.py`` recomputes them with the current code.
"""
from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np

from flexrobot_ros.cli import main

#: The data file written by ``test/data/regression/record.py``.
DATA = Path(__file__).parent / "data" / "regression" / "elastic_model.npz"
#: Shipped robots and whether the case loads the tool of their YAML.
ROBOTS = {"scompi": True, "planar_2r": False, "lwr4": False, "kr90": False, "kr90_3dof": False, "moberg5": False,
          "moberg5_nmp": False, "canadarm": False, "rrp": True}
#: Force [N] of the impact along each world axis, per robot (about a tenth of its weight or less, so the run stays
#: near the held pose).
IMPACT_N = {"scompi": 50.0, "planar_2r": 20.0, "lwr4": 20.0, "kr90": 500.0, "kr90_3dof": 500.0, "moberg5": 500.0,
            "moberg5_nmp": 500.0, "canadarm": 20.0, "rrp": 1.0}
#: PD gains [kp, kd] the data were recorded with where the shipped YAML has changed them since (config/rrp.yaml
#: shipped none, kp = kd = 0, until issue 38 gave it joint PD gains): the cases run with those.
RECORDED_GAINS = {"rrp": ("0", "0")}
#: Seed of the random poses.
SEED = 24
#: Simulated time [s], output rate [Hz] and the stride of the stored samples.
DURATION_S, RATE_HZ, STRIDE = 1.0, 1000.0, 10


def poses(robot_name: str) -> np.ndarray:
    """(3, n) poses [rad | m] of ``robot_name``: zero clipped into the limits, then two seeded random poses."""
    from flexrobot_ros.model import load_robot

    robot = load_robot(robot_name)
    lower = np.maximum(robot.lower_limits, -np.pi)
    upper = np.minimum(robot.upper_limits, np.pi)
    margin = 0.1 * (upper - lower)
    rng = np.random.default_rng(SEED)
    random = rng.uniform(lower + margin, upper - margin, size=(2, robot.n))
    return np.vstack([np.clip(np.zeros(robot.n), robot.lower_limits, robot.upper_limits), random])


def _run(argv: list[str]) -> str:
    """stdout of ``flexrobot ARGV`` run in this process; a nonzero status is an AssertionError."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    assert status == 0, f"flexrobot {' '.join(argv)}: status {status}: {err.getvalue()}"
    return out.getvalue()


def _vector(q: np.ndarray) -> str:
    """A pose as the command line takes it, every digit of each float kept."""
    return ",".join(repr(float(value)) for value in q)


def _options(robot_name: str) -> list[str]:
    """``--tool`` where the case loads the tool, ``--kp KP --kd KD`` where it pins the recorded gains."""
    gains = RECORDED_GAINS.get(robot_name)
    return (["--tool"] if ROBOTS[robot_name] else []) + (["--kp", gains[0], "--kd", gains[1]] if gains else [])


def modes(robot_name: str, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies [Hz], damping ratios) of ``flexrobot modal ROBOT --q Q --json``."""
    report = json.loads(_run(["modal", robot_name, *_options(robot_name), "--q", _vector(q), "--json"]))
    return np.array(report["frequencies_hz"], dtype=float), np.array(report["damping_ratios"], dtype=float)


def simulation(robot_name: str, q0: np.ndarray) -> dict[str, np.ndarray]:
    """Columns of ``flexrobot simulate`` (the impact run of the module docstring) at every STRIDE-th sample."""
    force = IMPACT_N[robot_name]
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "run.npz"
        _run(["simulate", robot_name, *_options(robot_name), "--q0", _vector(q0), "--duration", f"{DURATION_S:g}",
              "--rate", f"{RATE_HZ:g}", "--impact", f"tool0,{force:g},{force:g},{force:g},0.1,0.106",
              "--out", str(out), "--json"])
        with np.load(out) as data:
            return {name: np.asarray(data[name])[::STRIDE].copy() for name in data.files}


def compute(robot_name: str) -> dict[str, np.ndarray]:
    """Every array of one robot's case, keyed ``ROBOT/poses``, ``ROBOT/frequencies_hz.K``,
    ``ROBOT/damping_ratios.K`` (K = pose index) and ``ROBOT/simulate/COLUMN``."""
    q = poses(robot_name)
    arrays = {f"{robot_name}/poses": q}
    for k, pose in enumerate(q):
        arrays[f"{robot_name}/frequencies_hz.{k}"], arrays[f"{robot_name}/damping_ratios.{k}"] = modes(robot_name,
                                                                                                     pose)
    for column, values in simulation(robot_name, q[1]).items():
        arrays[f"{robot_name}/simulate/{column}"] = values
    return arrays
