"""Rigid-body identification from recorded joint positions and motor torques (seed 001 section 2.2, eqs. 4-7).

Pipeline (:func:`identify_rigid_body`):

1. Signal conditioning. Positions q [rad] and motor torques tau [N m] sampled uniformly at f_s are filtered with the
   same zero-phase Butterworth low-pass (order 4, cutoff ``cutoff_hz``, ``scipy.signal.butter`` + ``filtfilt``,
   so torques and positions keep the same attenuation and no phase lag); qd and qdd are central differences of the
   filtered q (``numpy.gradient``, second order in the interior). The filter pads each end with an odd extension of
   ``3 / cutoff_hz`` seconds; ``1 / cutoff_hz`` seconds at each end are dropped
   (filter transients), and the rows are decimated to about ``4 cutoff_hz`` (everything above the cutoff is gone;
   the residuals of neighbouring rows would otherwise be strongly correlated).
2. Observation matrix A (eq. 7): the base regressor (:mod:`.base_parameters`: inertial base parameters, rotor
   inertias and viscous/Coulomb friction of every joint) stacked over the kept samples; T the torques.
3. Weighted least squares (Gautier): ordinary LS first, then each joint's rows are divided by the standard
   deviation of that joint's residual sigma_j = ||r_j|| / sqrt(M - r / n) and the LS is solved again. The
   covariance of the estimate is sigma_w^2 (A_w^T A_w)^-1 with sigma_w^2 = ||r_w||^2 / (n M - r); the standard
   deviation of each base parameter is the root of its diagonal entry, and its relative standard deviation is
   that over |beta| (in %).

The positions may be link positions (link encoders) or motor positions after the gear (q_m, motor encoders): the
rigid model of eq. 4 does not tell them apart; the difference, the joint deflection tau / K, is a model error.
Records are CSV/NPZ time series (:mod:`flexrobot_ros.timeseries`) or rosbag2 bags of the package's JointState
topics, read by :func:`flexrobot_ros.oma.signals.read_signals`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.signal

from flexrobot_ros.errors import IdentificationError, SignalError
from flexrobot_ros.identification.base_parameters import BaseParameters, base_parameters
from flexrobot_ros.identification.rigid_regressor import check_rigid_model, regressor

#: Butterworth order of the zero-phase low-pass (applied forward and backward: effective order 8).
FILTER_ORDER = 4
#: Odd-extension padding of the zero-phase filter at each end, in periods of the cutoff (scipy's default, about
#: 27 samples, leaves transients far longer than the dropped 1 / cutoff_hz at the end of a record that stops moving
#: mid-trajectory).
PADDING_PERIODS = 3.0
#: Kept rows per second, in multiples of the cutoff frequency.
ROWS_PER_CUTOFF = 4.0


@dataclass(frozen=True)
class RigidRecord:
    """A record for identification: times ``t`` (samples,) [s], positions ``q`` (samples, n) [rad] and motor
    torques ``tau`` (samples, n) [N m], columns in the robot's joint order; ``source`` names it in messages."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    source: str = "<record>"


@dataclass(frozen=True)
class ConditionedRecord:
    """Filtered, differentiated and decimated samples: t (rows,) [s], q, qd, qdd, tau (rows, n)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff_hz: float
    rate_hz: float
    decimation: int


@dataclass(frozen=True)
class RigidIdentification:
    """Result of :func:`identify_rigid_body`: base parameters ``beta`` (r,), their standard deviations ``std`` and
    ``covariance`` (r, r), ``base`` (names, expressions), per-joint residual RMS [N m] ``residual_rms`` and torque
    peaks ``torque_peak`` [N m], ``weights`` sigma_j [N m], ``condition`` cond(A) of the observation matrix, the
    conditioned record used, and the joint names."""

    beta: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    base: BaseParameters = field(repr=False)
    residual_rms: np.ndarray
    torque_peak: np.ndarray
    weights: np.ndarray
    condition: float
    record: ConditionedRecord = field(repr=False)
    joint_names: tuple[str, ...]

    @property
    def relative_std(self) -> np.ndarray:
        """std / |beta| [fraction] (inf for a zero estimate)."""
        with np.errstate(divide="ignore"):
            return np.where(self.beta != 0.0, self.std / np.abs(self.beta), np.inf)

    def predict(self, robot: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Motor torques (samples, n) [N m] the identified model gives along (q, qd, qdd)."""
        return (self.base.columns(regressor(robot, q, qd, qdd)) @ self.beta).reshape(len(q), -1)

    def to_dict(self) -> dict[str, Any]:
        names, units, expressions = self.base.base_names(), self.base.base_units(), self.base.expressions()
        return {
            "parameters": [{"name": name, "unit": unit, "expression": expression, "value": float(value),
                            "std": float(std), "relative_std_percent": float(100 * rel)}
                           for name, unit, expression, value, std, rel in
                           zip(names, units, expressions, self.beta, self.std, self.relative_std)],
            "joint_names": list(self.joint_names),
            "residual_rms_nm": self.residual_rms.tolist(), "torque_peak_nm": self.torque_peak.tolist(),
            "residual_sigma_nm": self.weights.tolist(), "condition_number": self.condition,
            "cutoff_hz": self.record.cutoff_hz, "rows_rate_hz": self.record.rate_hz / self.record.decimation,
            "samples_used": int(len(self.record.t))}


def read_rigid_record(path: str | Path, robot: Any, positions: str = "q.*", torques: str = "tau_m.*"
                      ) -> RigidRecord:
    """Positions and torques of ``robot``'s joints from a CSV/NPZ time series or a rosbag2 bag.

    ``positions``/``torques`` are channel globs whose last dotted part is the joint name (``q.joint2``,
    ``q_m.*``, ``joint_states.position.*``, ``motor_states.effort.*``); every joint must appear in each.
    """
    from flexrobot_ros.oma.signals import read_signals

    try:
        signals = read_signals(path)
    except SignalError as error:
        raise IdentificationError(str(error)) from None
    columns = []
    for pattern, what in ((positions, "positions"), (torques, "torques")):
        try:
            selected = signals.select([pattern])
        except SignalError as error:
            raise IdentificationError(f"{path}: {what}: {error}") from None
        by_joint = {name.rsplit(".", 1)[-1]: k for k, name in enumerate(selected.channels)}
        missing = [joint for joint in robot.joint_names if joint not in by_joint]
        if missing:
            raise IdentificationError(f"{path}: {what} channels {pattern!r} have no joint(s) {missing}; found "
                                      f"{list(selected.channels)}")
        columns.append(selected.data[:, [by_joint[joint] for joint in robot.joint_names]])
    return RigidRecord(signals.t, columns[0], columns[1], str(path))


def condition_record(record: RigidRecord, cutoff_hz: float) -> ConditionedRecord:
    """Step 1 of the module docstring: zero-phase low-pass, central differences, trimmed ends, decimation."""
    t, q, tau = (np.asarray(x, dtype=float) for x in (record.t, record.q, record.tau))
    if t.ndim != 1 or q.shape != tau.shape or q.shape[0] != t.size:
        raise IdentificationError(f"{record.source}: t {t.shape}, positions {q.shape} and torques {tau.shape} "
                                  "must be (samples,), (samples, n), (samples, n)")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and np.all(np.isfinite(tau))):
        raise IdentificationError(f"{record.source}: non-finite time, position or torque samples")
    steps = np.diff(t)
    if steps.size < 10 or np.any(steps <= 0) or steps.max() > 1.01 * steps.min():
        raise IdentificationError(f"{record.source}: expected at least 11 uniformly sampled, increasing times "
                                  f"(intervals {steps.min(initial=0):.6g}..{steps.max(initial=0):.6g} s)")
    rate = 1.0 / float(np.mean(steps))
    if not (0.0 < cutoff_hz < 0.5 * rate):
        raise IdentificationError(f"cutoff_hz: {cutoff_hz:g} Hz; expected between 0 and the Nyquist frequency "
                                  f"{0.5 * rate:g} Hz of {record.source}")
    sos = scipy.signal.butter(FILTER_ORDER, cutoff_hz, fs=rate, output="sos")
    padding = min(len(t) - 1, int(np.ceil(PADDING_PERIODS * rate / cutoff_hz)))
    q_f = scipy.signal.sosfiltfilt(sos, q, axis=0, padlen=padding)
    tau_f = scipy.signal.sosfiltfilt(sos, tau, axis=0, padlen=padding)
    dt = 1.0 / rate
    qd = np.gradient(q_f, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    decimation = max(1, int(rate / (ROWS_PER_CUTOFF * cutoff_hz)))
    trim = int(np.ceil(rate / cutoff_hz))
    keep = np.arange(trim, len(t) - trim, decimation)
    if keep.size < 2:
        raise IdentificationError(f"{record.source}: {t[-1] - t[0]:.3g} s is too short for a {cutoff_hz:g} Hz "
                                  f"low-pass (its {1 / cutoff_hz:.3g} s transients are dropped at both ends)")
    return ConditionedRecord(t[keep], q_f[keep], qd[keep], qdd[keep], tau_f[keep], float(cutoff_hz), rate,
                             decimation)


def identify_rigid_body(robot: Any, records: RigidRecord | Sequence[RigidRecord], cutoff_hz: float = 5.0,
                        base: BaseParameters | None = None) -> RigidIdentification:
    """Base parameters of ``robot``'s rigid model from one or more records (module docstring, steps 1-3)."""
    check_rigid_model(robot)
    base = base or base_parameters(robot)
    records = [records] if isinstance(records, RigidRecord) else list(records)
    if not records:
        raise IdentificationError("no record to identify from")
    n = robot.n
    for record in records:
        if np.shape(record.q)[1:] != (n,):
            raise IdentificationError(f"{record.source}: {np.shape(record.q)[1:]} position columns; robot "
                                      f"{robot.name} has {n} joints {list(robot.joint_names)}")
    conditioned = [condition_record(record, cutoff_hz) for record in records]
    joined = ConditionedRecord(*(np.concatenate([getattr(c, name) for c in conditioned]) for name in
                                 ("t", "q", "qd", "qdd", "tau")), cutoff_hz=float(cutoff_hz),
                               rate_hz=conditioned[0].rate_hz, decimation=conditioned[0].decimation)
    a = base.columns(regressor(robot, joined.q, joined.qd, joined.qdd))
    torques = joined.tau.ravel()
    rows, r = len(joined.t), base.count
    if rows * n <= r:
        raise IdentificationError(f"{rows} samples x {n} joints for {r} base parameters; record longer")
    condition = float(np.linalg.cond(a))
    if condition > 1e10:
        raise IdentificationError(f"the observation matrix is rank deficient (cond(A) = {condition:.3g}): the "
                                  "record does not excite every base parameter; use an optimized excitation "
                                  "('flexrobot excite')")
    beta = np.linalg.lstsq(a, torques, rcond=None)[0]
    residual = (torques - a @ beta).reshape(rows, n)
    sigma = np.sqrt(np.sum(residual**2, axis=0) / max(rows - r / n, 1.0))
    sigma = np.where(sigma > 0.0, sigma, np.finfo(float).tiny)
    row_weights = np.tile(1.0 / sigma, rows)
    a_w, t_w = a * row_weights[:, None], torques * row_weights
    beta = np.linalg.lstsq(a_w, t_w, rcond=None)[0]
    residual_w = t_w - a_w @ beta
    covariance = np.sum(residual_w**2) / (rows * n - r) * np.linalg.inv(a_w.T @ a_w)
    residual = (torques - a @ beta).reshape(rows, n)
    return RigidIdentification(
        beta=beta, std=np.sqrt(np.diag(covariance)), covariance=covariance, base=base,
        residual_rms=np.sqrt(np.mean(residual**2, axis=0)), torque_peak=np.abs(joined.tau).max(axis=0),
        weights=sigma, condition=condition, record=joined, joint_names=tuple(robot.joint_names))


__all__ = ["RigidRecord", "ConditionedRecord", "RigidIdentification", "read_rigid_record", "condition_record",
           "identify_rigid_body", "FILTER_ORDER", "PADDING_PERIODS", "ROWS_PER_CUTOFF"]
