"""The result of a feedforward (every method: SDRNEA, EJNEA, DAE, the rigid baseline): link trajectory, link
torques and their derivatives, motor references and motor torques, sampled in time."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexrobot_ros.dynamics.feedforward_names import QUANTITIES
from flexrobot_ros.dynamics.post_actuation import PostActuation


@dataclass(frozen=True)
class FeedforwardResult:
    """Feedforward along a trajectory; arrays (samples, n) in SI units, pinocchio joint order.

    t [s]; link trajectory q, qd, qdd, q3 (jerk), q4 (snap); link torques tau [N·m or N] and their time
    derivatives dtau, ddtau; motor references q_m [rad], qd_m [rad/s], qdd_m [rad/s²] and motor torque tau_m
    [N·m] (after the gear); ``method`` is 'sdrnea', 'ejnea', 'dae', 'prescribed' or 'rigid'. For robots with
    flexible links, ``deflections`` holds the predicted tip deflection of each (method 'prescribed'; zero for
    'rigid') as the simulator names it, ``deflection.<link>.y`` / ``.z`` (samples,) [m] (beam axes, z only for links
    bending both ways), and ``eta`` (samples, m) the elastic coordinates; with extra elasticities, ``deflections``
    also holds the predicted ``q_e.<joint>`` (samples,) [rad | m] of each non-actuated elastic joint ('prescribed');
    a rigid joint's motor reference is its
    joint reference (q_m = q) and its motor torque acts on the joint directly. Tool-space targets (method 'dae')
    also report the ``solver`` that ran ('bdf' or 'optimization'), ``solver_reason`` (why: the zeros of the tool
    output along the path), the ``unstable_zeros`` [rad/s] (complex, all path poses; empty when minimum phase) and
    ``converged`` (False when the solver stopped early or hit its iteration limit: ``solver_reason`` says how).
    ``post_actuation``: how a rest-to-rest motion of method 'prescribed' came to rest (``feedforward(..., rest=)``:
    the final pose held that long after the motion, :mod:`.post_actuation`), None otherwise.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    q3: np.ndarray
    q4: np.ndarray
    tau: np.ndarray
    dtau: np.ndarray
    ddtau: np.ndarray
    q_m: np.ndarray
    qd_m: np.ndarray
    qdd_m: np.ndarray
    tau_m: np.ndarray
    joint_names: tuple[str, ...]
    method: str
    deflections: dict[str, np.ndarray] = field(default_factory=dict)
    eta: np.ndarray | None = None
    solver: str = ""
    solver_reason: str = ""
    unstable_zeros: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=complex))
    converged: bool = True
    post_actuation: PostActuation | None = None

    def columns(self) -> dict[str, np.ndarray]:
        """Columns ``<quantity>.<joint>`` (samples,), then the ``deflections``, for :func:`flexrobot_ros.timeseries.write_timeseries`."""
        return {**{f"{name}.{joint}": getattr(self, name)[:, j]
                   for name in QUANTITIES for j, joint in enumerate(self.joint_names)}, **self.deflections}
