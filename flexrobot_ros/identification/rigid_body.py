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
   Coupled transmissions (:attr:`FlexibleRobot.coupling` G, rigid joints): the link positions are G^-1 times the
   motor positions (after the deflection of the elastic joints, which G leaves alone); the regressor's rows are
   the motors (:mod:`.rigid_regressor`: G^-T on the link block, rotor and friction on G qd), applied at every
   sample before the parallel filter (linear, so the order would not matter; it is done there, once).
3. Observation matrix A (eq. 7), parallel filtered (:mod:`.parallel_filter`): the base regressor
   (:mod:`.base_parameters`: inertial base parameters, rotor inertias and viscous/Coulomb friction of every joint,
   the Coulomb column the model's own tanh(qd / coulomb_width)) at every sample, each column through the same
   filter F as the torques (decimation, the zero-phase Butterworth at ``cutoff_hz``, rows at 2 per cutoff period,
   the first and last 1 / cutoff_hz seconds dropped), T = F[tau - motor-side difference]. F[tau] = F[Y] beta is
   exact whatever F attenuates; the filtered torques against the unfiltered sgn(qd) column put F_c 6-12 % low
   (issue 37). Y is evaluated :data:`CHUNK_SAMPLES` samples at a time and only its decimated samples are kept.
   With ``torque_offset`` every joint has a constant offset column (1 at every sample), which F passes unchanged.
   Only the equations of the fitted joints (``fit_joints``) enter, and the base parameters are those of these rows.
   ``min_velocity`` (per joint, a motor speed |G qd|_j [rad/s | m/s]): near a velocity reversal the Coulomb law
   does not describe the friction, so joint j's equation at a kept row is left out when any full-rate sample within
   :data:`VELOCITY_WINDOW_PERIODS` / ``cutoff_hz`` of the row time (the support of F's impulse response that
   matters) has |G qd|_j below it. The whole equation of that joint at that row goes, not only its friction
   columns (the friction torque is in the measured torque and cannot be taken out of one equation); the other
   joints keep the row. Rows are left out after filtering, never samples before it: a filtered equation
   F[tau] = F[Y] beta is exact only over the full-rate signal.
4. Weighted least squares (Gautier): ordinary LS first, then each joint's rows are divided by the standard
   deviation of that joint's residual sigma_j = ||r_j|| / sqrt(M_j - r M_j / M) (M_j equations of joint j, M in
   all) and the LS is solved again. The covariance of the estimate is kappa sigma_w^2 (A_w^T A_w)^-1 with
   sigma_w^2 = ||r_w||^2 / (M - r) and kappa
   (about 1.11) the effective number of kept rows per independent one of white noise through the parallel filter
   (:meth:`.parallel_filter.ParallelFilter.noise_correlation`; with several records, kappa_i per record:
   sigma_w^2 (A_w^T A_w)^-1 (sum_i kappa_i A_w,i^T A_w,i) (A_w^T A_w)^-1). The standard deviation of each base
   parameter is the root of its diagonal entry, and its relative standard deviation is that over |beta| (in %).
   They assume torque noise that is white before the filter (rows left out by ``min_velocity`` are taken as not
   changing kappa); residuals that are model errors (correlated over
   seconds) can make them optimistic, and noise on the positions (through the twice-differentiated states) makes them
   pessimistic (the residual then sits near the cutoff, where slowly varying columns do not see it).

Records come from :mod:`.rigid_record` (CSV/NPZ time series, rosbag2 bags, channel mapping, effort scaling, a
non-uniform clock resampled onto a uniform grid).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.dynamics.flexible_joint import JointFlexibility
from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.base_parameters import BaseParameters, base_parameters
from flexrobot_ros.identification.joint_deflection import link_positions, motor_side_difference
from flexrobot_ros.identification.parallel_filter import ParallelFilter
from flexrobot_ros.identification.rigid_regressor import check_rigid_model, regressor

#: Samples of the regressor evaluated at once (10000 samples of 3 joints: 9 MB; only the decimated ones are kept).
CHUNK_SAMPLES = 10000
#: Half-width of the window around a kept row, in periods of the cutoff, whose samples must all be at
#: ``min_velocity`` or faster for the row to be kept (module docstring, step 3).
VELOCITY_WINDOW_PERIODS = 1.0
#: :attr:`ConditionedRecord.link_side` of the cases of step 2 (module docstring).
LINK_ENCODERS = "link encoders"
DEFLECTION_COMPENSATED = "motor positions - deflection (tau_m - motor-side terms) / K of the flexibility YAML"
ELASTICITY_IGNORED = " (joint elasticity ignored)"
RIGID_JOINTS = " (rigid joints: no deflection)"
COUPLED = " through the coupled transmissions"


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

    def observation(self, robot: Any, base: BaseParameters, offsets: bool = False) -> np.ndarray:
        """F[Y_1] at the kept rows, stacked joint-fastest (rows n, r): every column of the base regressor (with the
        torque offsets' when ``offsets``) at every sample through the same filter as the torques (step 3);
        evaluated :data:`CHUNK_SAMPLES` samples at a time, only the decimated samples kept."""
        n, r = robot.n, base.count
        chunks = (base.columns(regressor(robot, self.q[k:k + CHUNK_SAMPLES], self.qd[k:k + CHUNK_SAMPLES],
                                         self.qdd[k:k + CHUNK_SAMPLES], offsets=offsets)).reshape(-1, n, r)
                  for k in range(0, len(self.t), CHUNK_SAMPLES))
        return self.filter.filtered_blocks(self.filter.decimated(chunks)).reshape(self.rows * n, r)

    def fast_rows(self, coupling: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """(rows, n) bool: True where every full-rate sample within :data:`VELOCITY_WINDOW_PERIODS` / cutoff of the
        kept row's time has a motor speed |G qd|_j of at least ``floor`` (n,) [rad/s | m/s] (step 3)."""
        slow = np.abs(self.qd @ coupling.T) < floor
        counts = np.vstack([np.zeros((1, slow.shape[1]), dtype=int), np.cumsum(slow, axis=0)])
        half = VELOCITY_WINDOW_PERIODS / self.filter.cutoff_hz
        first = np.searchsorted(self.t, self.row_times - half, side="left")
        last = np.searchsorted(self.t, self.row_times + half, side="right")
        return counts[last] - counts[first] == 0


@dataclass(frozen=True)
class RigidIdentification:
    """Result of :func:`identify_rigid_body`: base parameters ``beta`` (r,), their standard deviations ``std`` and
    ``covariance`` (r, r), ``base`` (names, expressions), per-joint residual RMS [N m] ``residual_rms`` and torque
    peaks ``torque_peak`` [N m] of the filtered torques, ``weights`` sigma_j [N m], ``condition`` cond(A) of the
    observation matrix, the conditioned ``records`` used, the fitted joints' names ``joint_names`` (the per-joint
    figures are theirs), ``flexibility`` (the joint stiffness and motor-side terms that compensated the deflection;
    None when the elasticity was ignored); ``rows_per_joint`` the equations fitted per fitted joint,
    ``min_velocity`` (fitted joints,) [rad/s | m/s] the motor speed below which rows were left out,
    ``torque_offset`` whether the model has a torque offset per joint, ``coupling`` G when the robot has coupled
    transmissions (else None)."""

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
    rows_per_joint: np.ndarray | None = None
    min_velocity: np.ndarray | None = None
    torque_offset: bool = False
    coupling: np.ndarray | None = field(default=None, repr=False)

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

    def fitted(self, robot: Any) -> list[int]:
        """Indices of the fitted joints in ``robot``'s joint order."""
        return [robot.joint_names.index(joint) for joint in self.joint_names]

    def conditioned(self, record: RigidRecord) -> ConditionedRecord:
        """``record`` conditioned as the identification's records were (same low-pass, same link side)."""
        return condition_record(record, self.cutoff_hz, self.flexibility, self.coupling)

    def predict(self, robot: Any, record: ConditionedRecord) -> np.ndarray:
        """Motor torques (rows, fitted joints) [N m | N] the identified model gives at a conditioned record's kept
        rows, filtered as the fit's torques are: compare with ``record.measured_torques()[:, fitted(robot)]``."""
        torques = ((record.observation(robot, self.base, self.torque_offset) @ self.beta).reshape(record.rows, -1)
                   + record.difference_torques())
        return torques[:, self.fitted(robot)]

    def predict_samples(self, robot: Any, record: ConditionedRecord) -> np.ndarray:
        """Motor torques (samples, fitted joints) [N m | N] the identified model gives at every sample of a
        conditioned record, low-passed at the cutoff as the fit's rows were (L at the full rate,
        :meth:`.ParallelFilter.low_passed`, of the model torque at the state-filtered states): the band the model
        was fitted in, to compare with the recorded torques sample by sample (the first and last 1 / cutoff_hz
        seconds hold the filters' transients). Not low-passed, the prediction would carry the twice-differentiated
        position noise between the cutoff and the state filter's 3 x cutoff, which the fit never saw."""
        fitted, n = self.fitted(robot), robot.n
        out = []
        for k in range(0, len(record.t), CHUNK_SAMPLES):
            y = regressor(robot, record.q[k:k + CHUNK_SAMPLES], record.qd[k:k + CHUNK_SAMPLES],
                          record.qdd[k:k + CHUNK_SAMPLES], offsets=self.torque_offset)
            torques = (self.base.columns(y) @ self.beta).reshape(-1, n) + record.motor_difference[k:k + CHUNK_SAMPLES]
            out.append(torques[:, fitted])
        return record.filter.low_passed(np.vstack(out))

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
            "samples_used": self.rows, "link_side": self.link_side,
            "rows_per_joint": [] if self.rows_per_joint is None else self.rows_per_joint.tolist(),
            "min_velocity": [] if self.min_velocity is None else self.min_velocity.tolist(),
            "torque_offset": self.torque_offset}


def condition_record(record: RigidRecord, cutoff_hz: float, flexibility: JointFlexibility | None = None,
                     coupling: np.ndarray | None = None) -> ConditionedRecord:
    """Steps 1-2 of the module docstring and the parallel filter of step 3: zero-phase low-pass of the positions,
    link side (the record's link positions, else the deflection through ``flexibility``, else none; then G^-1 of
    the ``coupling`` G), central differences, the kept rows."""
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
    if q_link is None and coupling is not None:
        q, link_side = q @ np.linalg.inv(coupling).T, link_side + COUPLED
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
                        base: BaseParameters | None = None, elasticity: bool = True,
                        fit_joints: Sequence[str] | None = None, min_velocity: float | Sequence[float] = 0.0,
                        torque_offset: bool = False) -> RigidIdentification:
    """Base parameters of ``robot``'s rigid model from one or more records (module docstring, steps 1-4).

    ``elasticity``: reduce the records to the link side through the robot's stiffness and motor-side terms (step 2);
    False evaluates the rigid model at the recorded positions as they are. ``fit_joints``: the joints whose torques
    are fitted (default all); ``min_velocity`` [rad/s | m/s]: one motor speed for every joint or one per joint (n,),
    a joint's equations at rows near slower samples left out (step 3); ``torque_offset``: a constant torque offset
    per joint in the model."""
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
    flexibility = joint_flexibility(robot) if elasticity else None
    coupling = robot.coupling if robot.coupled_transmissions else None
    conditioned = tuple(condition_record(record, cutoff_hz, flexibility, coupling) for record in records)
    if len(robot.rigid_joints) == n:
        conditioned = tuple(dataclasses.replace(c, link_side=c.link_side.replace(ELASTICITY_IGNORED, RIGID_JOINTS))
                            for c in conditioned)
    blocks = [c.observation(robot, base, torque_offset) for c in conditioned]
    measured = np.vstack([c.measured_torques() for c in conditioned])
    torques_all = (measured - np.vstack([c.difference_torques() for c in conditioned])).ravel()
    kept = np.zeros((len(measured), n), dtype=bool)
    kept[:, fitted] = np.vstack([c.fast_rows(robot.coupling, floor) for c in conditioned])[:, fitted]
    counts = kept.sum(axis=0)[fitted]
    if np.any(counts == 0):
        slow = [robot.joint_names[j] for j, count in zip(fitted, counts) if count == 0]
        raise IdentificationError(f"min_velocity: no row of joint(s) {slow} has every sample within "
                                  f"{VELOCITY_WINDOW_PERIODS / cutoff_hz:.3g} s at {floor[fitted].max():g} rad/s "
                                  "(m/s) or faster; lower it or record a faster excitation")
    mask = kept.ravel()
    a, torques = np.vstack(blocks)[mask], torques_all[mask]
    joint_of_row = np.nonzero(kept)[1]
    rows, r = len(torques), base.count
    if rows <= r:
        names = [robot.joint_names[j] for j in fitted]
        raise IdentificationError(f"{rows} torque rows ({len(measured)} samples, joints {names}) for {r} base "
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
    inverse = np.linalg.inv(a_w.T @ a_w)
    correlated, start = np.zeros((r, r)), 0
    for c in conditioned:
        stop = start + c.rows * n
        block = a_w[mask[:start].sum():mask[:stop].sum()]           # this record's kept equations
        correlated += c.filter.noise_correlation() * block.T @ block
        start = stop
    covariance = np.sum(residual_w**2) / (rows - r) * inverse @ correlated @ inverse
    residual = torques - a @ beta
    rms = np.array([np.sqrt(np.mean(residual[joint_of_row == j] ** 2)) for j in fitted])
    return RigidIdentification(
        beta=beta, std=np.sqrt(np.diag(covariance)), covariance=covariance, base=base, residual_rms=rms,
        torque_peak=np.abs(measured[:, fitted]).max(axis=0), weights=sigma[fitted], condition=condition,
        records=conditioned, joint_names=tuple(robot.joint_names[j] for j in fitted), cutoff_hz=float(cutoff_hz),
        flexibility=flexibility, rows_per_joint=counts, min_velocity=floor[fitted].copy(),
        torque_offset=torque_offset, coupling=coupling)


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
           "fitted_joints", "joint_flexibility", "CHUNK_SAMPLES", "VELOCITY_WINDOW_PERIODS", "LINK_ENCODERS",
           "DEFLECTION_COMPENSATED", "ELASTICITY_IGNORED", "RIGID_JOINTS", "COUPLED"]
