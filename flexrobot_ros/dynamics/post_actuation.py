"""Rest-to-rest means at rest: post-actuation of a joint-space inversion until the deformation it leaves has died out.

A rest-to-rest joint motion q(t) (q' and q'' zero at both ends, :func:`rest_to_rest`) inverted in joint space with
the deformation integrated along it (method 'prescribed',
:class:`~flexrobot_ros.flexible_links.prescribed_joint_inverse_dynamics.PrescribedJointInverseDynamics`) starts at
rest in the static deflection of the first pose, but leaves the deformation coordinates e = [q_e; eta] (the
non-actuated elastic joints and the beams) vibrating when the joints stop: the joint torques of the last sample then
still carry that vibration, and no pose can hold them. With the joints held at the final pose q_f the deformation
is free, and its small vibrations about the static deflection e_s(q_f) are

    M (e - e_s)'' + D e' + K (e - e_s) = 0          (M, D, K: ``locked_linearization(q_f)``, joints locked)

**Deformation energy** (the measure of rest) [J]::

    E = 1/2 (e - e_s)^T K (e - e_s) + 1/2 e'^T M e'

**At rest**: E <= ``energy_fraction`` * E_peak, E_peak the largest E over the motion's samples (with the M, K and
e_s of the final pose), default fraction 1e-6 (vibration amplitudes 1e-3 of the motion's). When E at the end of the
motion is above that, **post-actuation** holds q_f (q' = .. = q'''' = 0) and integrates the deformation on, with
the motion's integrator and its joint torques, until E falls below the threshold: the result ends on the first
sample that is at rest, within E_threshold of the static deflection, its torques the static torques of the final
pose up to that residue. Before integrating, the time it needs is estimated from the modes lambda_k of (M, D, K):
the end state's share in mode k, E_k = 1/2 (u_k^H K u_k + v_k^H M v_k) for its components [u_k; v_k] = V_k c_k
(V c = [e - e_s; e']), decays as exp(-2 sigma_k t), sigma_k = -Re(lambda_k), and the phase-averaged energy is
sum_k E_k, at most twice that at any phase. The motion is refused (:class:`~flexrobot_ros.errors.RestError`, one
line: the energy left, the mode, the time) when modes holding more than the threshold are undamped (it never comes
to rest) or when sum_k 2 E_k exp(-2 sigma_k t) stays above the threshold for t up to ``max_post_actuation_s``.

Joints without deformation coordinates (rigid links, elastic joints alone) need no post-actuation: a rest-to-rest
motion ends at rest there by itself, an elastic joint's motor when the jerk and the snap vanish at the ends too
(``rest_to_rest(samples, order=4)``: the motor side of thesis eqs. 4.7-4.10 holds q''' and q'''').
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.dynamics.feedforward_names import MAX_POST_ACTUATION_S, REST_ENERGY_FRACTION
from flexrobot_ros.dynamics.trajectory import Trajectory, TrajectorySamples
from flexrobot_ros.errors import RestError, TrajectoryError

#: Relative tolerance of "zero" for the rates at the ends of a motion (of each joint's peak over the motion).
REST_TOLERANCE = 1e-9
#: The derivatives of a joint sample, in order (velocity .. snap).
DERIVATIVES = ("qd", "qdd", "q3", "q4")
#: A mode counts as undamped when its decay rate is below this fraction of its frequency |lambda| [rad/s].
UNDAMPED = 1e-9


@dataclass(frozen=True)
class RestToRest:
    """What "at rest" means for the end of a rest-to-rest motion, and how long the post-actuation may hold.

    ``energy_fraction``: at rest when the deformation energy is at most this fraction of its peak over the motion
    (module docstring); ``max_post_actuation_s`` [s]: the longest post-actuation (final pose held) allowed."""

    energy_fraction: float = REST_ENERGY_FRACTION
    max_post_actuation_s: float = MAX_POST_ACTUATION_S

    def __post_init__(self) -> None:
        if not (0.0 < self.energy_fraction < 1.0):
            raise TrajectoryError(f"rest energy fraction: {self.energy_fraction!r}; expected a fraction in (0, 1) of "
                                  "the deformation energy's peak")
        if not (0.0 <= self.max_post_actuation_s < float("inf")):
            raise TrajectoryError(f"maximum post-actuation: {self.max_post_actuation_s!r} s; expected a finite "
                                  "time >= 0")


@dataclass(frozen=True)
class PostActuation:
    """How a rest-to-rest inversion came to rest: ``hold_s`` [s] the post-actuation added (0: at rest when the
    motion ended), ``energy_at_motion_end_j``, ``energy_j`` (at the last sample) and ``threshold_j``, ``peak_j``
    (the peak over the motion) the deformation energies of the module docstring [J]."""

    hold_s: float
    energy_at_motion_end_j: float
    energy_j: float
    threshold_j: float
    peak_j: float


def rest_to_rest(samples: TrajectorySamples, order: int = 2) -> bool:
    """Whether the joint samples start and end at rest: the derivatives 1 .. ``order`` (2: q', q''; 4: up to the
    snap, what an elastic joint's motor needs to be at rest too) zero within :data:`REST_TOLERANCE` of each joint's
    peak at the first and the last sample."""
    return not _moving_ends(samples, order)


def not_at_rest(samples: TrajectorySamples, joint_names: Sequence[str], units: Sequence[str], order: int = 2) -> str:
    """What keeps ``samples`` from being rest to rest up to ``order`` (:func:`rest_to_rest`), e.g. ``'it ends
    moving (qd.joint1 = 0.15 rad/s at t = 10 s)'``; '' when it is rest to rest. ``units``: each joint's position
    unit ('rad' or 'm')."""
    for where, name, j in _moving_ends(samples, order):
        index = 0 if where == "starts" else -1
        value = getattr(samples, name)[index, j]
        power = DERIVATIVES.index(name) + 1
        unit = f"{units[j]}/s" + (f"^{power}" if power > 1 else "")
        state = "moving" if power <= 2 else "with a nonzero jerk" if power == 3 else "with a nonzero snap"
        return f"it {where} {state} ({name}.{joint_names[j]} = {value:.4g} {unit} at t = {samples.t[index]:.6g} s)"
    return ""


def samples_through_the_end(trajectory: Trajectory, rate_hz: float) -> TrajectorySamples:
    """``trajectory`` sampled at start + k / ``rate_hz`` [Hz] up to the first of those times at or after its end,
    evaluated at min(t, end_time): the motion sampled through its last state (``Trajectory.sample`` stops at the
    last grid time before an end that falls between two, e.g. a shaped motion's), which a rest-to-rest motion then
    holds for less than one sample."""
    rate = float(rate_hz)
    count = int(np.ceil(trajectory.duration * rate - 1e-6)) + 1
    times = trajectory.start_time + np.arange(count) / rate
    samples = trajectory.evaluate(np.minimum(times, trajectory.end_time))
    return dataclasses.replace(samples, t=times)


def _moving_ends(samples: TrajectorySamples, order: int) -> list[tuple[str, str, int]]:
    """(``'starts'`` | ``'ends'``, derivative name, joint index) of every end derivative up to ``order`` that is not
    zero, the end's first."""
    found = []
    for name in DERIVATIVES[:order]:
        values = getattr(samples, name)
        peak = np.abs(values).max(axis=0)
        for where, index in (("starts", 0), ("ends", -1)):
            for j in np.flatnonzero(np.abs(values[index]) > REST_TOLERANCE * peak):
                found.append((where, name, int(j)))
    return sorted(found, key=lambda entry: entry[0] != "ends")


def deformation_energy(e: np.ndarray, e_dot: np.ndarray, e_s: np.ndarray, M: np.ndarray,
                       K: np.ndarray) -> np.ndarray:
    """E (samples,) [J] of deformations e, e_dot (samples, k) about the static deflection e_s (k,) with the locked
    joints' inertia M and stiffness K (k, k) (module docstring)."""
    d = np.atleast_2d(e) - e_s
    v = np.atleast_2d(e_dot)
    return 0.5 * (np.einsum("si,ij,sj->s", d, K, d) + np.einsum("si,ij,sj->s", v, M, v))


@dataclass(frozen=True)
class ModalDecay:
    """The end state's energy per mode of (M, D, K): ``rates`` sigma_k [1/s] and ``frequencies_hz`` |Im lambda_k|
    / 2 pi per eigenvalue, ``energies`` E_k [J] (phase-averaged share, module docstring)."""

    rates: np.ndarray
    frequencies_hz: np.ndarray
    energies: np.ndarray

    @property
    def undamped(self) -> np.ndarray:
        """Per eigenvalue, whether its decay rate is zero (below :data:`UNDAMPED` of |lambda|)."""
        magnitude = self.rates ** 2 + (2 * np.pi * self.frequencies_hz) ** 2
        return self.rates <= UNDAMPED * np.sqrt(magnitude)

    def bound(self, t: float) -> float:
        """Upper estimate [J] of the deformation energy after holding the pose t [s]: sum_k 2 E_k exp(-2 sigma_k t)."""
        return float(np.sum(2.0 * self.energies * np.exp(-2.0 * np.maximum(self.rates, 0.0) * t)))

    def time_to(self, threshold: float) -> float:
        """The hold [s] after which :meth:`bound` is at most ``threshold`` [J] (inf when undamped modes hold more)."""
        if self.bound(0.0) <= threshold:
            return 0.0
        if np.sum(2.0 * self.energies[self.undamped]) >= threshold:
            return float("inf")
        low, high = 0.0, 1.0
        while self.bound(high) > threshold:
            low, high = high, 2.0 * high
        for _ in range(60):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if self.bound(middle) > threshold else (low, middle)
        return high


def modal_decay(M: np.ndarray, D: np.ndarray, K: np.ndarray, d: np.ndarray, v: np.ndarray) -> ModalDecay:
    """The end state d = e - e_s, v = e' (k,) split over the modes of M x'' + D x' + K x = 0 (module docstring)."""
    k = len(d)
    A = np.block([[np.zeros((k, k)), np.eye(k)], [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    values, vectors = np.linalg.eig(A)
    shares = vectors * np.linalg.solve(vectors, np.r_[d, v])[None, :]
    u, w = shares[:k], shares[k:]
    energies = 0.5 * np.real(np.einsum("ik,ij,jk->k", u.conj(), K, u) + np.einsum("ik,ij,jk->k", w.conj(), M, w))
    return ModalDecay(rates=-values.real, frequencies_hz=np.abs(values.imag) / (2 * np.pi),
                      energies=np.maximum(energies, 0.0))


def post_actuate(inverse: Any, samples: TrajectorySamples, motion: Any, rest: RestToRest,
                 source: str) -> tuple[TrajectorySamples, Any, PostActuation]:
    """(the joint samples, the motion of ``inverse`` (a PrescribedJointInverseDynamics) and the report) of
    ``samples`` and their ``motion`` (a PrescribedJointMotion) extended at the same sample spacing by the
    post-actuation that brings the deformation to rest (module docstring); unchanged when it is at rest already or
    has no deformation coordinates.

    Raises:
        RestError: one line starting with ``source`` (e.g. the robot's name): the deformation never comes to
            rest (undamped modes) or needs longer than ``rest.max_post_actuation_s``.
    """
    e = np.concatenate([motion.q_e, motion.eta], axis=1)
    e_dot = np.concatenate([motion.qd_e, motion.eta_dot], axis=1)
    q_f = samples.q[-1]
    if e.shape[1] == 0:
        return samples, motion, PostActuation(0.0, 0.0, 0.0, 0.0, 0.0)
    e_s, M, D, K = inverse.locked_linearization(q_f)
    energy = deformation_energy(e, e_dot, e_s, M, K)
    peak = float(energy.max())
    threshold = rest.energy_fraction * peak
    end = float(energy[-1])
    if end <= threshold:
        return samples, motion, PostActuation(0.0, end, end, threshold, peak)
    decay = modal_decay(M, D, K, e[-1] - e_s, e_dot[-1])
    needed = decay.time_to(threshold)
    left = (f"{source}: the rest-to-rest motion leaves the deformation vibrating with {end:.4g} J when the joints "
            f"stop ({end / peak:.3g} of its peak {peak:.4g} J; at rest means below {rest.energy_fraction:g} of it)")
    if not np.isfinite(needed):
        undamped = decay.undamped & (decay.energies > 0.0)
        ringing = decay.frequencies_hz[undamped][np.argmax(decay.energies[undamped])]  # the undamped mode holding most
        raise RestError(f"{left}; with the joints held at the final pose it never comes to rest: the locked-joint "
                        f"mode at {ringing:.4g} Hz has no damping in the model")
    limit = rest.max_post_actuation_s
    if needed > limit:
        alone = np.log(np.maximum(2.0 * decay.energies, threshold) / threshold) / np.maximum(decay.rates, 1e-300)
        slowest = int(np.argmax(alone))  # the mode that would need the longest hold by itself
        raise RestError(f"{left}; holding the final pose brings it to rest in about {needed:.4g} s (the locked-joint "
                        f"mode at {decay.frequencies_hz[slowest]:.4g} Hz decays at {decay.rates[slowest]:.3g} 1/s), "
                        f"more than the {limit:g} s of post-actuation allowed", needed)
    h = float(samples.t[-1] - samples.t[-2])
    chunk = max(int(np.ceil(1.25 * needed / h)), 10)
    hold_t, hold_motion = [], []
    state, start = (e[-1], e_dot[-1]), float(samples.t[-1])
    total = int(np.floor(limit / h + 1e-9))
    done = 0
    while done < total:
        count = min(chunk, total - done)
        t = start + h * np.arange(done, done + count + 1)
        q = np.repeat(q_f[None], count + 1, axis=0)
        zero = np.zeros_like(q)
        part = inverse(t, q, zero, zero, zero, zero, start=state)
        part_e = np.concatenate([part.q_e, part.eta], axis=1)
        part_energy = deformation_energy(part_e, np.concatenate([part.qd_e, part.eta_dot], axis=1), e_s, M, K)
        below = np.flatnonzero(part_energy[1:] <= threshold)
        stop = int(below[0]) + 2 if below.size else count + 1
        hold_t.append(t[1:stop])
        hold_motion.append(_rows(part, slice(1, stop)))
        if below.size:
            break
        state = (part_e[-1], np.concatenate([part.qd_e, part.eta_dot], axis=1)[-1])
        done += count
    extended = _concatenate([motion, *hold_motion])
    last_e = np.concatenate([extended.q_e, extended.eta], axis=1)[-1]
    last = float(deformation_energy(last_e, np.concatenate([extended.qd_e, extended.eta_dot], axis=1)[-1],
                                    e_s, M, K)[0])
    if last > threshold:
        raise RestError(f"{left}; after {limit:g} s of post-actuation (the limit) it still holds {last:.4g} J",
                        needed)
    times = np.concatenate([samples.t, *hold_t])
    pad = len(times) - len(samples.t)
    hold = {name: np.concatenate([getattr(samples, name), np.zeros((pad, samples.q.shape[1]))])
            for name in ("qd", "qdd", "q3", "q4")}
    joints = TrajectorySamples(t=times, q=np.concatenate([samples.q, np.repeat(q_f[None], pad, axis=0)]), **hold)
    return joints, extended, PostActuation(float(times[-1] - samples.t[-1]), end, last, threshold, peak)


def _rows(motion: Any, rows: slice) -> Any:
    """The samples ``rows`` of a PrescribedJointMotion."""
    return dataclasses.replace(motion, **{field.name: getattr(motion, field.name)[rows]
                                          for field in dataclasses.fields(motion) if field.name != "evaluations"})


def _concatenate(motions: Sequence[Any]) -> Any:
    """One PrescribedJointMotion of consecutive ones (their evaluations summed)."""
    first = motions[0]
    arrays = {field.name: np.concatenate([getattr(m, field.name) for m in motions])
              for field in dataclasses.fields(first) if field.name != "evaluations"}
    return dataclasses.replace(first, evaluations=sum(m.evaluations for m in motions), **arrays)


__all__ = ["DERIVATIVES", "ModalDecay", "PostActuation", "REST_TOLERANCE", "RestToRest", "deformation_energy",
           "modal_decay", "not_at_rest", "post_actuate", "rest_to_rest", "samples_through_the_end"]
