"""Rigid-body identification from recorded joint positions and motor torques (seed 001 section 2.2, eqs. 4-7).

Pipeline (:func:`identify_rigid_body`):

1. Signal conditioning. Motor positions q_m [rad] (after the gear) and, when the record has them, link positions
   [rad] sampled uniformly at f_s are filtered with the zero-phase Butterworth state filter S of
   :mod:`.parallel_filter` (order 4 forward and backward, no phase lag, cutoff 3 ``cutoff_hz``: it takes the
   encoder noise off and leaves the band of step 3 unchanged); velocities and accelerations are central
   differences of the filtered positions (``numpy.gradient``, second order in the interior), so the velocity in
   the friction columns is a filtered one and does not chatter at reversals.
2. Joint elasticity (:mod:`.joint_deflection`). The rigid model of eq. 4 holds at the link positions q, which
   differ from q_m by the joint deflection (up to 4 mrad on the kr90, a bias of several % on its small base
   parameters when ignored). The link side is the record's link encoders when it has them, else
   q = q_m - (S[tau] - B qdd_m - tau_fm(qd_m)) / K with the flexibility YAML's stiffness and motor-side terms
   (computed on the filtered full-rate signals, then differentiated); the motor-side terms' difference between
   the motor and the link state, B (qdd_m - qdd) + tau_fm(qd_m) - tau_fm(qd) with the YAML's values, is taken off
   the torques, so that tau = Y(q, qd, qdd) phi holds at every sample. With ``elasticity=False`` the positions
   (link positions when the record has them, else motor positions) enter as they are and the deflection is a model
   error; a robot whose joints are all ``rigid: true`` has neither deflection nor motor model (nothing to
   compensate), one with rigid and elastic joints is refused unless the elasticity is ignored.
3. Observation matrix A (eq. 7), parallel filtered (:mod:`.parallel_filter`): the base regressor
   (:mod:`.base_parameters`: inertial base parameters, rotor inertias and viscous/Coulomb friction of every joint,
   the Coulomb column the model's own tanh(qd / coulomb_width)) at every sample, each column through the same
   filter F as the torques (decimation, the zero-phase Butterworth at ``cutoff_hz``, rows at 2 per cutoff period,
   the first and last 1 / cutoff_hz seconds dropped), T = F[tau - motor-side difference]. F[tau] = F[Y] beta is
   exact whatever F attenuates; the filtered torques against the unfiltered sgn(qd) column put F_c 6-12 % low
   (issue 37). Y is evaluated :data:`CHUNK_SAMPLES` samples at a time and only its decimated samples are kept.
4. Weighted least squares (Gautier): ordinary LS first, then each joint's rows are divided by the standard
   deviation of that joint's residual sigma_j = ||r_j|| / sqrt(M - r / n) and the LS is solved again. The
   covariance of the estimate is kappa sigma_w^2 (A_w^T A_w)^-1 with sigma_w^2 = ||r_w||^2 / (n M - r) and kappa
   (about 1.11) the effective number of kept rows per independent one of white noise through the parallel filter
   (:meth:`.parallel_filter.ParallelFilter.noise_correlation`; with several records, kappa_i per record:
   sigma_w^2 (A_w^T A_w)^-1 (sum_i kappa_i A_w,i^T A_w,i) (A_w^T A_w)^-1). The standard deviation of each base
   parameter is the root of its diagonal entry, and its relative standard deviation is that over |beta| (in %).
   They assume torque noise that is white before the filter; residuals that are model errors (correlated over
   seconds) can make them optimistic, and noise on the positions (through the twice-differentiated states) makes them
   pessimistic (the residual then sits near the cutoff, where slowly varying columns do not see it).

Records are CSV/NPZ time series (:mod:`flexrobot_ros.timeseries`) or rosbag2 bags of the package's JointState
topics, read by :func:`flexrobot_ros.oma.signals.read_signals`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.dynamics.flexible_joint import JointFlexibility
from flexrobot_ros.errors import IdentificationError, SignalError
from flexrobot_ros.identification.base_parameters import BaseParameters, base_parameters
from flexrobot_ros.identification.joint_deflection import link_positions, motor_side_difference
from flexrobot_ros.identification.parallel_filter import ParallelFilter
from flexrobot_ros.identification.rigid_regressor import check_rigid_model, regressor

#: Samples of the regressor evaluated at once (10000 samples of 3 joints: 9 MB; only the decimated ones are kept).
CHUNK_SAMPLES = 10000
#: :attr:`ConditionedRecord.link_side` of the cases of step 2 (module docstring).
LINK_ENCODERS = "link encoders"
DEFLECTION_COMPENSATED = "motor positions - deflection (tau_m - motor-side terms) / K of the flexibility YAML"
ELASTICITY_IGNORED = " (joint elasticity ignored)"


@dataclass(frozen=True)
class RigidRecord:
    """A record for identification: times ``t`` (samples,) [s], motor positions after the gear ``q`` (samples, n)
    [rad] and motor torques ``tau`` (samples, n) [N m], columns in the robot's joint order; ``q_link``
    (samples, n) [rad] the link positions when the record has link encoders; ``source`` names it in messages."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    source: str = "<record>"
    q_link: np.ndarray | None = None


@dataclass(frozen=True)
class ConditionedRecord:
    """A record ready for the parallel-filtered least squares (module docstring, steps 1-3). At every sample
    t (samples,) [s]: the link side q [rad], qd [rad/s], qdd [rad/s^2] (filtered positions, central differences),
    the motor torques tau [N m] as recorded and their part beyond the rigid model at the link state
    ``motor_difference`` [N m], each (samples, n). ``filter`` is the parallel filter F and the kept rows;
    ``link_side`` says where q comes from (step 2)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    motor_difference: np.ndarray
    filter: ParallelFilter = field(repr=False)
    link_side: str

    @property
    def rows(self) -> int:
        """Number of kept rows (samples of the decimated, filtered equations)."""
        return int(self.filter.keep.size)

    @property
    def row_times(self) -> np.ndarray:
        """Times of the kept rows (rows,) [s]."""
        return self.filter.row_times(self.t)

    def measured_torques(self) -> np.ndarray:
        """F[tau] at the kept rows (rows, n) [N m]: the torques the model is fitted to, with
        :meth:`difference_torques` in them."""
        return self.filter.rows(self.tau)

    def difference_torques(self) -> np.ndarray:
        """F[motor_difference] at the kept rows (rows, n) [N m]."""
        return self.filter.rows(self.motor_difference)

    def observation(self, robot: Any, base: BaseParameters) -> np.ndarray:
        """F[Y_1] at the kept rows, stacked joint-fastest (rows n, r): every column of the base regressor at every
        sample through the same filter as the torques (step 3); evaluated :data:`CHUNK_SAMPLES` samples at a time,
        only the decimated samples kept."""
        n, r = robot.n, base.count
        chunks = (base.columns(regressor(robot, self.q[k:k + CHUNK_SAMPLES], self.qd[k:k + CHUNK_SAMPLES],
                                         self.qdd[k:k + CHUNK_SAMPLES])).reshape(-1, n, r)
                  for k in range(0, len(self.t), CHUNK_SAMPLES))
        return self.filter.filtered_blocks(self.filter.decimated(chunks)).reshape(self.rows * n, r)


@dataclass(frozen=True)
class RigidIdentification:
    """Result of :func:`identify_rigid_body`: base parameters ``beta`` (r,), their standard deviations ``std`` and
    ``covariance`` (r, r), ``base`` (names, expressions), per-joint residual RMS [N m] ``residual_rms`` and torque
    peaks ``torque_peak`` [N m] of the filtered torques, ``weights`` sigma_j [N m], ``condition`` cond(A) of the
    observation matrix, the conditioned ``records`` used, the joint names, and ``flexibility`` (the joint
    stiffness and motor-side terms that compensated the deflection; None when the elasticity was ignored)."""

    beta: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    base: BaseParameters = field(repr=False)
    residual_rms: np.ndarray
    torque_peak: np.ndarray
    weights: np.ndarray
    condition: float
    records: tuple[ConditionedRecord, ...] = field(repr=False)
    joint_names: tuple[str, ...]
    cutoff_hz: float
    flexibility: JointFlexibility | None = field(default=None, repr=False)

    @property
    def relative_std(self) -> np.ndarray:
        """std / |beta| [fraction] (inf for a zero estimate)."""
        with np.errstate(divide="ignore"):
            return np.where(self.beta != 0.0, self.std / np.abs(self.beta), np.inf)

    @property
    def rows(self) -> int:
        """Kept rows over all records."""
        return sum(record.rows for record in self.records)

    @property
    def link_side(self) -> str:
        """Where the link positions came from, per distinct case over the records (module docstring, step 2)."""
        return "; ".join(dict.fromkeys(record.link_side for record in self.records))

    def conditioned(self, record: RigidRecord) -> ConditionedRecord:
        """``record`` conditioned as the identification's records were (same low-pass, same link side)."""
        return condition_record(record, self.cutoff_hz, self.flexibility)

    def predict(self, robot: Any, record: ConditionedRecord) -> np.ndarray:
        """Motor torques (rows, n) [N m] the identified model gives at a conditioned record's kept rows, filtered
        as the fit's torques are: compare with ``record.measured_torques()``."""
        return ((record.observation(robot, self.base) @ self.beta).reshape(record.rows, -1)
                + record.difference_torques())

    def to_dict(self) -> dict[str, Any]:
        names, units, expressions = self.base.base_names(), self.base.base_units(), self.base.expressions()
        first = self.records[0].filter
        return {
            "parameters": [{"name": name, "unit": unit, "expression": expression, "value": float(value),
                            "std": float(std), "relative_std_percent": float(100 * rel)}
                           for name, unit, expression, value, std, rel in
                           zip(names, units, expressions, self.beta, self.std, self.relative_std)],
            "joint_names": list(self.joint_names),
            "residual_rms_nm": self.residual_rms.tolist(), "torque_peak_nm": self.torque_peak.tolist(),
            "residual_sigma_nm": self.weights.tolist(), "condition_number": self.condition,
            "cutoff_hz": self.cutoff_hz, "rows_rate_hz": first.row_rate_hz,
            "samples_used": self.rows, "link_side": self.link_side}


def read_rigid_record(path: str | Path, robot: Any, positions: str = "q_m.*", torques: str = "tau_m.*",
                      link_positions: str | None = None) -> RigidRecord:
    """Motor positions, motor torques and optionally link positions of ``robot``'s joints from a CSV/NPZ time
    series or a rosbag2 bag.

    ``positions``/``torques``/``link_positions`` are channel globs whose last dotted part is the joint name
    (``q_m.*``, ``motor_states.position.*``, ``motor_states.effort.*``, ``q.*``, ``joint_states.position.*``);
    every joint must appear in each.
    """
    from flexrobot_ros.oma.signals import read_signals

    try:
        signals = read_signals(path)
    except SignalError as error:
        raise IdentificationError(str(error)) from None
    columns = []
    for pattern, what in ((positions, "positions"), (torques, "torques"), (link_positions, "link positions")):
        if pattern is None:
            columns.append(None)
            continue
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
    return RigidRecord(signals.t, columns[0], columns[1], str(path), q_link=columns[2])


def condition_record(record: RigidRecord, cutoff_hz: float, flexibility: JointFlexibility | None = None
                     ) -> ConditionedRecord:
    """Steps 1-2 of the module docstring and the parallel filter of step 3: zero-phase low-pass of the positions,
    link side (the record's link positions, else the deflection through ``flexibility``, else none), central
    differences, the kept rows."""
    t, q_m, tau = (np.asarray(x, dtype=float) for x in (record.t, record.q, record.tau))
    if t.ndim != 1 or q_m.shape != tau.shape or q_m.shape[0] != t.size:
        raise IdentificationError(f"{record.source}: t {t.shape}, positions {q_m.shape} and torques {tau.shape} "
                                  "must be (samples,), (samples, n), (samples, n)")
    q_link = None if record.q_link is None else np.asarray(record.q_link, dtype=float)
    if q_link is not None and q_link.shape != q_m.shape:
        raise IdentificationError(f"{record.source}: link positions {q_link.shape}; expected the motor positions' "
                                  f"shape {q_m.shape}")
    if not all(np.all(np.isfinite(x)) for x in (t, q_m, tau) + (() if q_link is None else (q_link,))):
        raise IdentificationError(f"{record.source}: non-finite time, position or torque samples")
    steps = np.diff(t)
    if steps.size < 10 or np.any(steps <= 0) or steps.max() > 1.01 * steps.min():
        raise IdentificationError(f"{record.source}: expected at least 11 uniformly sampled, increasing times "
                                  f"(intervals {steps.min(initial=0):.6g}..{steps.max(initial=0):.6g} s)")
    rate = 1.0 / float(np.mean(steps))
    if not (0.0 < cutoff_hz < 0.5 * rate):
        raise IdentificationError(f"cutoff_hz: {cutoff_hz:g} Hz; expected between 0 and the Nyquist frequency "
                                  f"{0.5 * rate:g} Hz of {record.source}")
    parallel = ParallelFilter.design(cutoff_hz, rate, len(t))
    if parallel.keep.size < 2:
        raise IdentificationError(f"{record.source}: {t[-1] - t[0]:.3g} s is too short for a {cutoff_hz:g} Hz "
                                  f"low-pass (its {1 / cutoff_hz:.3g} s transients are dropped at both ends)")
    dt = 1.0 / rate
    q_m_f = parallel.smooth(q_m)
    qd_m = np.gradient(q_m_f, dt, axis=0)
    qdd_m = np.gradient(qd_m, dt, axis=0)
    if q_link is not None:
        q, link_side = parallel.smooth(q_link), LINK_ENCODERS
    elif flexibility is not None:
        q = link_positions(flexibility, q_m_f, qd_m, qdd_m, parallel.smooth(tau))
        link_side = DEFLECTION_COMPENSATED
    else:
        q, link_side = q_m_f, "motor positions"
    qd = np.gradient(q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    if flexibility is not None:
        difference = motor_side_difference(flexibility, qd, qdd, qd_m, qdd_m)
    else:
        difference, link_side = np.zeros_like(tau), link_side + ELASTICITY_IGNORED
    return ConditionedRecord(t, q, qd, qdd, tau, difference, parallel, link_side)


def joint_flexibility(robot: Any) -> JointFlexibility | None:
    """The stiffness and motor-side terms that reduce ``robot``'s records to the link side (step 2): None when every
    joint is ``rigid: true`` (no deflection, no motor model: the positions are the link positions)."""
    rigid = set(robot.rigid_joints)
    if not rigid:
        return JointFlexibility.from_robot(robot)
    if rigid == set(robot.joint_names):
        return None
    raise IdentificationError(
        f"robot {robot.name}: joints {sorted(rigid)} are rigid and {[j for j in robot.joint_names if j not in rigid]} "
        "elastic; the deflection compensation needs every joint elastic or every joint rigid: ignore the elasticity "
        "('--rigid', node link_side: rigid) or give link positions")


def identify_rigid_body(robot: Any, records: RigidRecord | Sequence[RigidRecord], cutoff_hz: float = 5.0,
                        base: BaseParameters | None = None, elasticity: bool = True) -> RigidIdentification:
    """Base parameters of ``robot``'s rigid model from one or more records (module docstring, steps 1-4).

    ``elasticity``: reduce the records to the link side through the robot's stiffness and motor-side terms (step 2);
    False evaluates the rigid model at the recorded positions as they are."""
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
    flexibility = joint_flexibility(robot) if elasticity else None
    conditioned = tuple(condition_record(record, cutoff_hz, flexibility) for record in records)
    blocks = [c.observation(robot, base) for c in conditioned]
    a = np.vstack(blocks)
    measured = np.vstack([c.measured_torques() for c in conditioned])
    torques = (measured - np.vstack([c.difference_torques() for c in conditioned])).ravel()
    rows, r = len(measured), base.count
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
    inverse = np.linalg.inv(a_w.T @ a_w)
    weights = 1.0 / sigma
    correlated = sum(c.filter.noise_correlation() * (block * np.tile(weights, c.rows)[:, None]).T
                     @ (block * np.tile(weights, c.rows)[:, None]) for c, block in zip(conditioned, blocks))
    covariance = np.sum(residual_w**2) / (rows * n - r) * inverse @ correlated @ inverse
    residual = (torques - a @ beta).reshape(rows, n)
    return RigidIdentification(
        beta=beta, std=np.sqrt(np.diag(covariance)), covariance=covariance, base=base,
        residual_rms=np.sqrt(np.mean(residual**2, axis=0)), torque_peak=np.abs(measured).max(axis=0),
        weights=sigma, condition=condition, records=conditioned, joint_names=tuple(robot.joint_names),
        cutoff_hz=float(cutoff_hz), flexibility=flexibility)


__all__ = ["RigidRecord", "ConditionedRecord", "RigidIdentification", "read_rigid_record", "condition_record",
           "identify_rigid_body", "joint_flexibility", "CHUNK_SAMPLES", "LINK_ENCODERS", "DEFLECTION_COMPENSATED",
           "ELASTICITY_IGNORED"]
