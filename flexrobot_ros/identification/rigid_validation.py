"""Held-out torque error of an identified rigid model: the torques it predicts along a record that the fit did not
use, against the torques the record holds.

Two figures per fitted joint [N m | N]:

* ``rms`` (against the measurement): the prediction at every sample of the record's uniform grid (conditioned as the
  fit's records were: the model at the state-filtered positions and their differences, not low-passed at the
  cutoff), interpolated by a cubic spline to the recorded sample times inside the conditioned span (the 1 / cutoff
  s of filter transient at each end are not scored), against the recorded torques (efforts scaled). It holds the
  measurement noise: the figure FIGAROH reports on held-out data, comparable with it.
* ``filtered_rms``: on the parallel-filtered rows (model and torques through the same filter), against the
  filtered torques (the model error without the noise above the cutoff; the fit's ``residual_rms`` is that on the
  fit records).

``pooled_rms`` is the RMS over every fitted joint's scored samples, sqrt(mean_j rms_j^2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.interpolate

from flexrobot_ros.identification.parallel_filter import TRIM_PERIODS
from flexrobot_ros.identification.rigid_body import RigidIdentification
from flexrobot_ros.identification.rigid_record import RecordedSamples


@dataclass(frozen=True)
class HeldOutError:
    """Held-out error of one record (module docstring): per fitted joint (``joint_names``) ``rms`` and
    ``filtered_rms`` [N m | N] and the recorded torque ``peak`` [N m | N]; ``samples`` recorded samples scored
    between ``t_first`` and ``t_last`` [s]; ``source`` the record."""

    source: str
    joint_names: tuple[str, ...]
    rms: np.ndarray
    filtered_rms: np.ndarray
    peak: np.ndarray
    samples: int
    t_first: float
    t_last: float

    @property
    def pooled_rms(self) -> float:
        """RMS over every fitted joint's scored samples [N m | N]."""
        return float(np.sqrt(np.mean(self.rms**2)))

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.source, "joint_names": list(self.joint_names), "rms_nm": self.rms.tolist(),
                "pooled_rms_nm": self.pooled_rms, "filtered_rms_nm": self.filtered_rms.tolist(),
                "peak_nm": self.peak.tolist(), "rms_over_peak_percent": (100 * self.rms / self.peak).tolist(),
                "samples": self.samples, "t_first_s": self.t_first, "t_last_s": self.t_last}


def held_out_error(robot: Any, result: RigidIdentification, recorded: RecordedSamples) -> HeldOutError:
    """The held-out error of ``result`` on ``recorded`` (module docstring)."""
    fitted = result.fitted(robot)
    record = result.conditioned(recorded.uniform())
    trim = TRIM_PERIODS / result.cutoff_hz
    inside = (recorded.t >= record.t[0] + trim) & (recorded.t <= record.t[-1] - trim)
    predicted = scipy.interpolate.CubicSpline(record.t, result.predict_samples(robot, record),
                                              axis=0)(recorded.t[inside])
    measured = recorded.tau[inside][:, fitted]
    filtered = np.sqrt(np.mean((result.predict(robot, record) - record.measured_torques()[:, fitted]) ** 2, axis=0))
    return HeldOutError(source=recorded.source, joint_names=result.joint_names,
                        rms=np.sqrt(np.mean((predicted - measured) ** 2, axis=0)), filtered_rms=filtered,
                        peak=np.abs(measured).max(axis=0), samples=int(inside.sum()),
                        t_first=float(recorded.t[inside][0]), t_last=float(recorded.t[inside][-1]))


__all__ = ["HeldOutError", "held_out_error"]
