"""A feedforward file read back for ``flexrobot simulate ROBOT --feedforward FILE``: the CSV or NPZ time series that
``flexrobot feedforward --out`` writes (:meth:`flexrobot_ros.dynamics.feedforward_result.FeedforwardResult.columns`),
as the references of the motor PD (:class:`flexrobot_ros.simulation.controllers.FeedforwardPD`) and the link
reference the tracking error is measured from. A file starts at rest (its motor rates zero at the first sample,
within :data:`~flexrobot_ros.dynamics.post_actuation.REST_TOLERANCE` of their peaks): the simulator starts it at
the rest state of its first sample. It ends at rest when its rates ``qd_m``, ``qdd_m``, ``dtau`` and ``ddtau`` are
zero at the last sample as well (a rest-to-rest feedforward of a model without deformation to shed, or one that
came to rest): its last torque is then the static torque of its own model at the last pose."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from flexrobot_ros.commands.arguments import CommandError
from flexrobot_ros.dynamics.post_actuation import REST_TOLERANCE
from flexrobot_ros.timeseries import read_timeseries

#: Columns ``<quantity>.<joint>`` a simulation under feedforward + PD needs, per joint.
NEEDED = ("q", "q_m", "qd_m", "tau_m")
#: The rates that are zero at the last sample of a file that ends at rest (a file without them does not).
RATES = ("qd_m", "qdd_m", "dtau", "ddtau")
#: A link reference moves at its start when its rate over the first step exceeds this fraction of the peak rate of all joints (a
#: quintic's first step, 1 ms of a 2 s move, is 1.6e-6 of it; a motion that starts at speed, of the order of 1).
LINK_START_TOLERANCE = 1e-3


@dataclass(frozen=True)
class FeedforwardFile:
    """The samples of a feedforward file, (samples, n) each in the robot's joint order, times shifted to start at 0.

    t [s]; q the link reference [rad | m]; q_m [rad | m], qd_m [rad/s | m/s] the motor reference; tau_m [N m | N]
    the motor torque (after the gear); ``ends_at_rest`` whether every rate of :data:`RATES` is zero at the last
    sample (module docstring); ``start_warning`` says that the motors move at the first sample while the link
    reference starts at rest (a motion whose jerk is not zero at its start, such as a quintic, on elastic joints:
    the simulator starts at rest and the motors catch up), else None."""

    path: Path
    t: np.ndarray
    q: np.ndarray
    q_m: np.ndarray
    qd_m: np.ndarray
    tau_m: np.ndarray
    ends_at_rest: bool
    start_warning: str | None = None

    @property
    def duration(self) -> float:
        """Span of the file [s]."""
        return float(self.t[-1])

    def reference(self, times: np.ndarray) -> np.ndarray:
        """Link reference q [rad | m] at ``times`` [s] (len(times), n): linear between samples, held at the ends."""
        times = np.asarray(times, dtype=float)
        return np.stack([np.interp(times, self.t, self.q[:, j]) for j in range(self.q.shape[1])], axis=1)


def read_feedforward(path: Path, joint_names: tuple[str, ...] | list[str],
                     units: Sequence[str] | None = None) -> FeedforwardFile:
    """The feedforward file at ``path`` for a robot with joints ``joint_names`` (position ``units`` 'rad' or 'm' per
    joint, for the messages; default rad); a clear error naming ``--feedforward`` when the file is not a feedforward
    of that robot (missing columns, fewer than two samples) or does not start at rest."""
    t, columns = read_timeseries(path)
    missing = [f"{quantity}.{joint}" for quantity in NEEDED for joint in joint_names
               if f"{quantity}.{joint}" not in columns]
    if missing:
        raise CommandError(f"--feedforward {path}: not a feedforward of joints {list(joint_names)} (written by "
                           f"flexrobot feedforward --out): missing columns {missing}")
    if t.size < 2:
        raise CommandError(f"--feedforward {path}: {t.size} sample(s); a feedforward needs at least two")
    arrays = {quantity: np.stack([columns[f"{quantity}.{joint}"] for joint in joint_names], axis=1)
              for quantity in NEEDED}
    rate = arrays["qd_m"]
    moving = np.flatnonzero(np.abs(rate[0]) > REST_TOLERANCE * np.abs(rate).max(axis=0))
    link_rate = np.diff(arrays["q"], axis=0) / np.diff(t)[:, None]  # the link reference's rate between samples
    link_moving = np.abs(link_rate[0]) > LINK_START_TOLERANCE * np.abs(link_rate).max()  # peak over all joints
    start_warning = None
    if moving.size:
        j = int(moving[0])
        unit = (units or ["rad"] * len(joint_names))[j]
        sample = f"qd_m.{joint_names[j]} = {rate[0, j]:.4g} {unit}/s at t = {t[0]:g} s"
        if np.any(link_moving):
            raise CommandError(f"--feedforward {path}: its first sample moves ({sample}): a file starts at rest, at "
                               "the equilibrium of its first sample under the PD; write the feedforward of a motion "
                               "that starts at rest")
        start_warning = (f"--feedforward {path}: the link reference starts at rest but the motors move at its first "
                         f"sample ({sample}: the motion's jerk is not zero at its start); the simulation starts at "
                         "rest, so the motors lag at first (a 9th-order motion, profile poly9, starts smoothly)")
    rates = [np.stack([columns[f"{name}.{joint}"] for joint in joint_names], axis=1) for name in RATES
             if all(f"{name}.{joint}" in columns for joint in joint_names)]
    at_rest = len(rates) == len(RATES) and all(
        np.all(np.abs(value[-1]) <= REST_TOLERANCE * np.abs(value).max(axis=0)) for value in rates)
    return FeedforwardFile(path=Path(path), t=t - t[0], ends_at_rest=bool(at_rest), start_warning=start_warning,
                           **arrays)
