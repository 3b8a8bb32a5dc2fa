"""Rigid-body identification from recorded joint positions and motor torques (seed 001 section 2.2, eqs. 4-7).

Pipeline (:func:`identify_rigid_body`):

1. Signal conditioning. Motor positions q_m [rad] (after the gear), motor torques tau [N m] and, when the record has
   them, link positions [rad] sampled uniformly at f_s are filtered with the same zero-phase Butterworth low-pass
   (order 4, cutoff ``cutoff_hz``, ``scipy.signal.butter`` + ``filtfilt``, so torques and positions keep the same
   attenuation and no phase lag); velocities and accelerations are central differences of the filtered positions
   (``numpy.gradient``, second order in the interior). The filter pads each end with an odd extension of
   ``3 / cutoff_hz`` seconds; ``1 / cutoff_hz`` seconds at each end are dropped
   (filter transients), and the rows are decimated to about ``4 cutoff_hz`` (everything above the cutoff is gone;
   the residuals of neighbouring rows would otherwise be strongly correlated).
2. Joint elasticity (:mod:`.joint_deflection`). The rigid model of eq. 4 holds at the link positions q, which
   differ from q_m by the joint deflection (up to 4 mrad on the kr90, a bias of several % on its small base
   parameters when ignored). The link side is the record's link encoders when it has them, else
   q = q_m - (tau - B qdd_m - tau_fm(qd_m)) / K with the flexibility YAML's stiffness and motor-side terms
   (computed on the filtered full-rate signals, then differentiated); the motor-side terms' difference between
   the motor and the link state, B (qdd_m - qdd) + tau_fm(qd_m) - tau_fm(qd) with the YAML's values, is taken off
   the torques, so that T = Y(q, qd, qdd) phi holds. With ``elasticity=False`` the positions (link positions when
   the record has them, else motor positions) enter as they are and the deflection is a model error; a robot whose
   joints are all ``rigid: true`` has none (its recorded positions are the link positions).
   Coupled transmissions (:attr:`FlexibleRobot.coupling` G, rigid joints): the link positions are G^-1 times the
   motor positions (after the deflection of the elastic joints, which G leaves alone).
3. Observation matrix A (eq. 7): the base regressor (:mod:`.base_parameters`: inertial base parameters, rotor
   inertias and viscous/Coulomb friction of every joint, and a torque offset per joint with ``torque_offset``)
   stacked over the kept samples; T the torques. Only the rows of the fitted joints (``fit_joints``) enter, and of
   those only the samples where the joint's motor moves at ``min_velocity`` or faster (|G qd|_i: near a velocity
   reversal the Coulomb model sgn(qd) does not describe the friction); the base parameters are those of these rows.
4. Weighted least squares (Gautier): ordinary LS first, then each joint's rows are divided by the standard
   deviation of that joint's residual sigma_j = ||r_j|| / sqrt(M_j - r M_j / M) (M_j rows of joint j, M in all)
   and the LS is solved again. The covariance of the estimate is sigma_w^2 (A_w^T A_w)^-1 with
   sigma_w^2 = ||r_w||^2 / (M - r); the standard deviation of each base parameter is the root of its diagonal
   entry, and its relative standard deviation is that over |beta| (in %).

Records come from :mod:`.rigid_record` (CSV/NPZ time series, rosbag2 bags, channel mapping, effort scaling, a
non-uniform clock resampled onto a uniform grid).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.signal

from flexrobot_ros.dynamics.flexible_joint import JointFlexibility
from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.base_parameters import BaseParameters, base_parameters
from flexrobot_ros.identification.joint_deflection import link_positions, motor_side_difference
from flexrobot_ros.identification.rigid_regressor import check_rigid_model, regressor

#: Butterworth order of the zero-phase low-pass (applied forward and backward: effective order 8).
FILTER_ORDER = 4
#: Odd-extension padding of the zero-phase filter at each end, in periods of the cutoff (scipy's default, about
#: 27 samples, leaves transients far longer than the dropped 1 / cutoff_hz at the end of a record that stops moving
#: mid-trajectory).
PADDING_PERIODS = 3.0
#: Kept rows per second, in multiples of the cutoff frequency.
ROWS_PER_CUTOFF = 2.0
#: :attr:`ConditionedRecord.link_side` of the cases of step 2 (module docstring).
LINK_ENCODERS = "link encoders"
DEFLECTION_COMPENSATED = "motor positions - deflection (tau_m - motor-side terms) / K of the flexibility YAML"
ELASTICITY_IGNORED = " (joint elasticity ignored)"
RIGID_JOINTS = " (rigid joints: no deflection)"


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
    """Filtered, differentiated and decimated samples: t (rows,) [s]; link side q [rad], qd [rad/s], qdd [rad/s^2],
    motor torques tau [N m] and their part beyond the rigid model at the link state ``motor_difference`` [N m],
    each (rows, n); ``link_side`` says where q comes from (module docstring, step 2)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    motor_difference: np.ndarray
    cutoff_hz: float
    rate_hz: float
    decimation: int
    link_side: str


@dataclass(frozen=True)
class RigidIdentification:
    """Result of :func:`identify_rigid_body`: base parameters ``beta`` (r,), their standard deviations ``std`` and
    ``covariance`` (r, r), ``base`` (names, expressions), per fitted joint (``joint_names``) the residual RMS
    ``residual_rms``, the torque peaks ``torque_peak`` and ``weights`` sigma_j [N m | N] and the rows fitted
    ``rows_per_joint``, ``condition`` cond(A) of the observation matrix, the conditioned record used, and
    ``flexibility`` (the joint stiffness and motor-side terms that compensated the deflection; None when the
    elasticity was ignored); ``min_velocity`` (fitted joints,) [rad/s | m/s] the motor speed below which rows were
    left out, ``torque_offset`` whether the model has a torque offset per joint, ``coupling`` G when the robot has
    coupled transmissions (else None)."""

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
    flexibility: JointFlexibility | None = field(default=None, repr=False)
    rows_per_joint: np.ndarray | None = None
    min_velocity: np.ndarray | None = None
    torque_offset: bool = False
    coupling: np.ndarray | None = field(default=None, repr=False)

    @property
    def relative_std(self) -> np.ndarray:
        """std / |beta| [fraction] (inf for a zero estimate)."""
        with np.errstate(divide="ignore"):
            return np.where(self.beta != 0.0, self.std / np.abs(self.beta), np.inf)

    def conditioned(self, record: RigidRecord, decimate: bool = True) -> ConditionedRecord:
        """``record`` conditioned as the identification's records were (same low-pass, same link side); every
        sample of the uniform grid between the trimmed ends when not ``decimate``."""
        return condition_record(record, self.record.cutoff_hz, self.flexibility, self.coupling, decimate)

    def predict(self, robot: Any, record: ConditionedRecord) -> np.ndarray:
        """Motor torques (rows, fitted joints) [N m | N] the identified model gives along a conditioned record."""
        fitted = [robot.joint_names.index(joint) for joint in self.joint_names]
        y = regressor(robot, record.q, record.qd, record.qdd, offsets=self.torque_offset)
        torques = (self.base.columns(y) @ self.beta).reshape(len(record.t), -1) + record.motor_difference
        return torques[:, fitted]

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
            "samples_used": int(len(self.record.t)), "link_side": self.record.link_side,
            "rows_per_joint": [] if self.rows_per_joint is None else self.rows_per_joint.tolist(),
            "min_velocity": [] if self.min_velocity is None else self.min_velocity.tolist(),
            "torque_offset": self.torque_offset}


def condition_record(record: RigidRecord, cutoff_hz: float, flexibility: JointFlexibility | None = None,
                     coupling: np.ndarray | None = None, decimate: bool = True) -> ConditionedRecord:
    """Steps 1-2 of the module docstring: zero-phase low-pass, link side (the record's link positions, else the
    deflection through ``flexibility``, else none; then G^-1 of the ``coupling`` G), central differences, trimmed
    ends, decimation (every sample kept when not ``decimate``)."""
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
                                  f"(intervals {steps.min(initial=0):.6g}..{steps.max(initial=0):.6g} s; "
                                  "rigid_record.read_record(...).uniform() resamples a logger's clock)")
    rate = 1.0 / float(np.mean(steps))
    if not (0.0 < cutoff_hz < 0.5 * rate):
        raise IdentificationError(f"cutoff_hz: {cutoff_hz:g} Hz; expected between 0 and the Nyquist frequency "
                                  f"{0.5 * rate:g} Hz of {record.source}")
    sos = scipy.signal.butter(FILTER_ORDER, cutoff_hz, fs=rate, output="sos")
    padding = min(len(t) - 1, int(np.ceil(PADDING_PERIODS * rate / cutoff_hz)))

    def low_pass(x: np.ndarray) -> np.ndarray:
        return scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padding)

    dt = 1.0 / rate
    q_m_f, tau_f = low_pass(q_m), low_pass(tau)
    qd_m = np.gradient(q_m_f, dt, axis=0)
    qdd_m = np.gradient(qd_m, dt, axis=0)
    if q_link is not None:
        q, link_side = low_pass(q_link), LINK_ENCODERS
    elif flexibility is not None:
        q, link_side = link_positions(flexibility, q_m_f, qd_m, qdd_m, tau_f), DEFLECTION_COMPENSATED
    else:
        q, link_side = q_m_f, "motor positions"
    if q_link is None and coupling is not None:
        q, link_side = q @ np.linalg.inv(coupling).T, link_side + " through the coupled transmissions"
    qd = np.gradient(q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    if flexibility is not None:
        difference = motor_side_difference(flexibility, qd, qdd, qd_m, qdd_m)
    else:
        difference, link_side = np.zeros_like(tau_f), link_side + ELASTICITY_IGNORED
    decimation = max(1, int(rate / (ROWS_PER_CUTOFF * cutoff_hz))) if decimate else 1
    trim = int(np.ceil(rate / cutoff_hz))
    keep = np.arange(trim, len(t) - trim, decimation)
    if keep.size < 2:
        raise IdentificationError(f"{record.source}: {t[-1] - t[0]:.3g} s is too short for a {cutoff_hz:g} Hz "
                                  f"low-pass (its {1 / cutoff_hz:.3g} s transients are dropped at both ends)")
    return ConditionedRecord(t[keep], q[keep], qd[keep], qdd[keep], tau_f[keep], difference[keep], float(cutoff_hz),
                             rate, decimation, link_side)


def identify_rigid_body(robot: Any, records: RigidRecord | Sequence[RigidRecord], cutoff_hz: float = 5.0,
                        base: BaseParameters | None = None, elasticity: bool = True,
                        fit_joints: Sequence[str] | None = None, min_velocity: float | Sequence[float] = 0.0,
                        torque_offset: bool = False) -> RigidIdentification:
    """Base parameters of ``robot``'s rigid model from one or more records (module docstring, steps 1-4).

    ``elasticity``: reduce the records to the link side through the robot's stiffness and motor-side terms (step 2);
    False evaluates the rigid model at the recorded positions as they are. ``fit_joints``: the joints whose torques
    are fitted (default all); ``min_velocity`` [rad/s | m/s]: one speed for every joint or one per joint (n,), rows
    of slower samples left out (step 3); ``torque_offset``: a constant torque offset per joint in the model."""
    check_rigid_model(robot)
    n = robot.n
    fitted = fitted_joints(robot, fit_joints)
    floor = np.broadcast_to(np.asarray(min_velocity, dtype=float), (n,)) if np.ndim(min_velocity) == 0 else \
        np.asarray(min_velocity, dtype=float)
    if floor.shape != (n,) or not np.all(np.isfinite(floor) & (floor >= 0.0)):
        raise IdentificationError(f"min_velocity: {np.asarray(min_velocity).tolist()}; expected one speed >= 0 "
                                  f"[rad/s | m/s] or {n} (joints {list(robot.joint_names)})")
    base = base or base_parameters(robot, joints=fitted, offsets=torque_offset)
    width = (14 if torque_offset else 13) * n
    if len(base.names) != width:
        raise IdentificationError(f"base parameters over {len(base.names)} standard parameters; robot {robot.name} "
                                  f"has {width} ({'with' if torque_offset else 'without'} torque offsets)")
    records = [records] if isinstance(records, RigidRecord) else list(records)
    if not records:
        raise IdentificationError("no record to identify from")
    for record in records:
        if np.shape(record.q)[1:] != (n,):
            raise IdentificationError(f"{record.source}: {np.shape(record.q)[1:]} position columns; robot "
                                      f"{robot.name} has {n} joints {list(robot.joint_names)}")
    all_rigid = len(robot.rigid_joints) == n
    if elasticity and robot.rigid_joints and not all_rigid:
        raise IdentificationError(f"robot {robot.name}: joints {list(robot.rigid_joints)} are rigid and the others "
                                  "elastic; the deflection compensation needs every joint elastic: ignore the "
                                  "elasticity (--rigid, elasticity=False)")
    flexibility = JointFlexibility.from_robot(robot) if elasticity and not all_rigid else None
    coupling = robot.coupling if robot.coupled_transmissions else None
    conditioned = [condition_record(record, cutoff_hz, flexibility, coupling) for record in records]
    if all_rigid:
        conditioned = [dataclasses.replace(c, link_side=c.link_side.replace(ELASTICITY_IGNORED, RIGID_JOINTS))
                       for c in conditioned]
    joined = ConditionedRecord(*(np.concatenate([getattr(c, name) for c in conditioned]) for name in
                                 ("t", "q", "qd", "qdd", "tau", "motor_difference")), cutoff_hz=float(cutoff_hz),
                               rate_hz=conditioned[0].rate_hz, decimation=conditioned[0].decimation,
                               link_side="; ".join(dict.fromkeys(c.link_side for c in conditioned)))
    keep = np.zeros((len(joined.t), n), dtype=bool)
    keep[:, fitted] = np.abs(joined.qd @ robot.coupling.T)[:, fitted] >= floor[fitted]
    counts = keep.sum(axis=0)[fitted]
    if np.any(counts == 0):
        slow = [robot.joint_names[j] for j, count in zip(fitted, counts) if count == 0]
        raise IdentificationError(f"min_velocity: no sample of joint(s) {slow} moves at {floor[fitted].max():g} "
                                  "rad/s (m/s) or faster; lower it or record a faster excitation")
    y = regressor(robot, joined.q, joined.qd, joined.qdd, offsets=torque_offset)
    a = base.columns(y)[keep.ravel()]
    torques = (joined.tau - joined.motor_difference)[keep]
    joint_of_row = np.nonzero(keep)[1]
    rows, r = len(torques), base.count
    if rows <= r:
        names = [robot.joint_names[j] for j in fitted]
        raise IdentificationError(f"{rows} torque rows ({len(joined.t)} samples, joints {names}) for {r} base "
                                  "parameters; record longer")
    condition = float(np.linalg.cond(a))
    if condition > 1e10:
        raise IdentificationError(f"the observation matrix is rank deficient (cond(A) = {condition:.3g}): the "
                                  "record does not excite every base parameter; use an optimized excitation "
                                  "('flexrobot excite')")
    beta = np.linalg.lstsq(a, torques, rcond=None)[0]
    residual = torques - a @ beta
    sigma = np.zeros(n)
    for j, count in zip(fitted, counts):
        sigma[j] = np.sqrt(np.sum(residual[joint_of_row == j] ** 2) / max(count - r * count / rows, 1.0))
    sigma = np.where(sigma > 0.0, sigma, np.finfo(float).tiny)
    row_weights = 1.0 / sigma[joint_of_row]
    a_w, t_w = a * row_weights[:, None], torques * row_weights
    beta = np.linalg.lstsq(a_w, t_w, rcond=None)[0]
    residual_w = t_w - a_w @ beta
    covariance = np.sum(residual_w**2) / (rows - r) * np.linalg.inv(a_w.T @ a_w)
    residual = torques - a @ beta
    rms = np.array([np.sqrt(np.mean(residual[joint_of_row == j] ** 2)) for j in fitted])
    return RigidIdentification(
        beta=beta, std=np.sqrt(np.diag(covariance)), covariance=covariance, base=base, residual_rms=rms,
        torque_peak=np.abs(joined.tau[:, fitted]).max(axis=0), weights=sigma[fitted], condition=condition,
        record=joined, joint_names=tuple(robot.joint_names[j] for j in fitted), flexibility=flexibility,
        rows_per_joint=counts, min_velocity=floor[fitted].copy(), torque_offset=torque_offset, coupling=coupling)


def fitted_joints(robot: Any, names: Sequence[str] | None) -> list[int]:
    """Indices of the joints ``names`` (all joints when None) in the robot's joint order; an IdentificationError
    names an unknown, locked or repeated joint."""
    if names is None:
        return list(range(robot.n))
    if not names:
        raise IdentificationError("fit_joints: empty; name at least one joint whose torque is fitted")
    out = []
    for name in names:
        if name not in robot.joint_names:
            locked = f" (locked at {robot.locked_joints[name]:g} by the flexibility YAML)" \
                if name in robot.locked_joints else ""
            raise IdentificationError(f"fit_joints: {name!r} is not a joint of robot {robot.name}{locked}; joints: "
                                      f"{list(robot.joint_names)}")
        if robot.joint_names.index(name) in out:
            raise IdentificationError(f"fit_joints: {name!r} given twice")
        out.append(robot.joint_names.index(name))
    return sorted(out)


__all__ = ["RigidRecord", "ConditionedRecord", "RigidIdentification", "condition_record", "identify_rigid_body",
           "fitted_joints", "FILTER_ORDER", "PADDING_PERIODS", "ROWS_PER_CUTOFF", "LINK_ENCODERS",
           "DEFLECTION_COMPENSATED", "ELASTICITY_IGNORED", "RIGID_JOINTS"]
