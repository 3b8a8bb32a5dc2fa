"""Motor-torque laws for the simulator: set-point PD with gravity/wrench compensation, feedforward + PD tracking,
raw torque input.

Every controller maps ``(t, q, qd, q_m, qd_m)`` to motor torques ``tau_m`` (n,) [N m] and declares its motor-side
feedback gains ``kp`` [N m/rad] and ``kd`` [N m s/rad] (zeros for open loop): the torque's state Jacobian is
``d tau/d q_m = -diag(kp)``, ``d tau/d qd_m = -diag(kd)``, which the stiff integrators use; ``time_varying`` says
whether the torque depends on t explicitly (the fixed-step integrator then evaluates it mid-step).

Time-dependent inputs (``tau_m(t)``, references) are either callables ``f(t) -> (n,)`` or sampled arrays
(samples, n) with their sample times (samples,) [s]; arrays are interpolated linearly and held constant
outside their time span.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

import numpy as np

from flexrobot_ros.errors import SimulationError
from flexrobot_ros.modal.linearization import motor_set_point
from flexrobot_ros.model import FlexibleRobot


class Controller(Protocol):
    """A motor-torque law (see the module docstring)."""

    kp: np.ndarray
    kd: np.ndarray
    time_varying: bool

    def motor_torque(self, t: float, q: np.ndarray, qd: np.ndarray, q_m: np.ndarray, qd_m: np.ndarray
                     ) -> np.ndarray:
        """Motor torques (n,) [N m] at time t [s] for the current joint state."""
        ...


def _gains(robot: FlexibleRobot, values: Any, default: np.ndarray, what: str) -> np.ndarray:
    array = np.asarray(default if values is None else values, dtype=float)
    if array.ndim == 0:
        array = np.full(robot.n, float(array))
    if array.shape != (robot.n,) or not np.all(np.isfinite(array)):
        raise SimulationError(f"robot {robot.name}: {what}: expected {robot.n} finite values (or one scalar) for "
                              f"joints {list(robot.joint_names)}, got {np.asarray(values).tolist()}")
    return array


class Signal:
    """A vector-valued input of time: a callable ``f(t) -> (n,)`` or samples (samples, n) at times (samples,) [s].

    Sampled signals are interpolated linearly and held at their first/last value outside ``[t[0], t[-1]]``. A
    constant (n,) vector is a signal too.
    """

    def __init__(self, values: Any, n: int, what: str, times: Any = None):
        self.what, self.n = what, n
        if callable(values):
            self._function: Callable[[float], np.ndarray] | None = values
            first = np.asarray(values(0.0 if times is None else float(np.asarray(times).ravel()[0])), dtype=float)
            if first.shape != (n,):
                raise SimulationError(f"{what}: the callable must return {n} values, returned shape {first.shape}")
            return
        self._function = None
        array = np.asarray(values, dtype=float)
        if array.ndim == 1 and times is None:
            array = array[None, :]
            times = [0.0]
        if times is None:
            raise SimulationError(f"{what}: samples of shape {array.shape} need their sample times")
        self._times = np.asarray(times, dtype=float)
        if array.ndim != 2 or array.shape[1] != n or self._times.shape != (array.shape[0],):
            raise SimulationError(f"{what}: expected samples (samples, {n}) with times (samples,), got {array.shape} "
                                  f"and times {self._times.shape}")
        if not (np.all(np.isfinite(array)) and np.all(np.isfinite(self._times))):
            raise SimulationError(f"{what}: non-finite samples or times")
        if np.any(np.diff(self._times) <= 0):
            raise SimulationError(f"{what}: sample times must increase strictly")
        self._values = array

    def __call__(self, t: float) -> np.ndarray:
        if self._function is not None:
            value = np.asarray(self._function(t), dtype=float)
            if value.shape != (self.n,) or not np.all(np.isfinite(value)):
                raise SimulationError(f"{self.what}: at t = {t:.6g} s the callable returned {value.tolist()}; "
                                      f"expected {self.n} finite values")
            return value
        times, values = self._times, self._values
        i = int(np.searchsorted(times, t, side="right"))
        if i == 0:
            return values[0]
        if i == len(times):
            return values[-1]
        s = (t - times[i - 1]) / (times[i] - times[i - 1])
        return values[i - 1] + s * (values[i] - values[i - 1])


@dataclass(frozen=True)
class PDGravityCompensation:
    """Set-point PD on the motor side with constant gravity (and wrench) compensation, seed 000 eqs. 2.2-2.3::

        tau_m = W^-1 (g(q^d) - J^T(q^d) w) + K_P (q_m^d - q_m) - K_D qd_m
        q_m^d = W q^d + (K W)^-1 (g(q^d) - J^T(q^d) w)

    Build it with :meth:`create`. ``feedforward`` is evaluated as ``K (q_m^d - W q^d)``, algebraically equal to
    ``W^-1 (g - J^T w)``, so that ``(q^d, q_m^d)`` is an equilibrium of the simulated equations to rounding.
    """

    robot: FlexibleRobot
    q_d: np.ndarray
    q_m_d: np.ndarray
    feedforward: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    wrench: np.ndarray | None = None
    frame: str | None = None
    time_varying = False

    @classmethod
    def create(cls, robot: FlexibleRobot, q_d: Any, kp: Any = None, kd: Any = None, wrench: Any = None,
               frame: str | None = None) -> "PDGravityCompensation":
        """PD + compensation holding ``q_d`` (n,) [rad | m]; gains default to ``robot.kp``/``robot.kd``;
        ``wrench`` [f; m] (6,) world axes at ``frame`` (default the tool frame) is compensated as a constant load."""
        q = robot.check_q(q_d, "q_d")
        if frame is not None:
            robot.frame_id(frame)
        if wrench is not None:
            wrench = np.asarray(wrench, dtype=float)
            if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
                raise SimulationError(f"robot {robot.name}: compensated wrench: expected 6 finite values "
                                      f"[fx, fy, fz, mx, my, mz], got {wrench.tolist()}")
        q_m_d = motor_set_point(robot, q, wrench=wrench, frame=frame)
        return cls(robot=robot, q_d=q, q_m_d=q_m_d,
                   feedforward=robot.stiffness * (q_m_d - robot.transmission * q),
                   kp=_gains(robot, kp, robot.kp, "kp"), kd=_gains(robot, kd, robot.kd, "kd"),
                   wrench=wrench, frame=frame)

    def with_set_point(self, q_d: Any) -> "PDGravityCompensation":
        """The same law holding a new link set point (same gains and compensated wrench)."""
        return PDGravityCompensation.create(self.robot, q_d, self.kp, self.kd, self.wrench, self.frame)

    def with_gains(self, kp: Any = None, kd: Any = None) -> "PDGravityCompensation":
        """The same set point with new gains (None keeps a gain)."""
        return replace(self, kp=_gains(self.robot, kp, self.kp, "kp"), kd=_gains(self.robot, kd, self.kd, "kd"))

    def motor_torque(self, t, q, qd, q_m, qd_m):
        return self.feedforward + self.kp * (self.q_m_d - q_m) - self.kd * qd_m


class FeedforwardPD:
    """Feedforward + PD tracking on the motor side::

        tau_m(t) = tau_ff(t) + K_P (q_m^ref(t) - q_m) + K_D (qd_m^ref(t) - qd_m)

    ``tau_ff``, ``q_m_ref``, ``qd_m_ref``: callables of t or samples (samples, n) at ``times`` (samples,) [s]
    (e.g. the motor torques and motor trajectory of :mod:`flexrobot_ros.dynamics.feedforward`). ``hold``:
    (tau_hold, q_m_hold) (n,) each [N m | N], [rad | m]: after the last sample time the law holds that pose,
    ``tau_m = tau_hold + K_P (q_m_hold - q_m) - K_D qd_m`` (e.g. the final pose with its static torque); None:
    the samples' last values (a callable's values) go on.
    """

    time_varying = True

    def __init__(self, robot: FlexibleRobot, tau_ff: Any, q_m_ref: Any, qd_m_ref: Any, times: Any = None,
                 kp: Any = None, kd: Any = None, hold: tuple[Any, Any] | None = None):
        n = robot.n
        self.robot = robot
        self.tau_ff = Signal(tau_ff, n, f"robot {robot.name}: tau_ff", times)
        self.q_m_ref = Signal(q_m_ref, n, f"robot {robot.name}: q_m_ref", times)
        self.qd_m_ref = Signal(qd_m_ref, n, f"robot {robot.name}: qd_m_ref", times)
        self.kp = _gains(robot, kp, robot.kp, "kp")
        self.kd = _gains(robot, kd, robot.kd, "kd")
        self.end, self.hold = None, None
        if hold is not None:
            if times is None:
                raise SimulationError(f"robot {robot.name}: hold: a pose held after the last sample needs sampled "
                                      "references with their times")
            self.end = float(np.asarray(times, dtype=float)[-1])
            self.hold = tuple(Signal(value, n, f"robot {robot.name}: hold {what}")(0.0)
                              for value, what in zip(hold, ("torque", "motor position")))

    def with_gains(self, kp: Any = None, kd: Any = None) -> "FeedforwardPD":
        """The same feedforward and references with new gains (None keeps a gain)."""
        law = copy.copy(self)
        law.kp = _gains(self.robot, kp, self.kp, "kp")
        law.kd = _gains(self.robot, kd, self.kd, "kd")
        return law

    def motor_torque(self, t, q, qd, q_m, qd_m):
        if self.end is not None and t > self.end:
            return self.hold[0] + self.kp * (self.hold[1] - q_m) - self.kd * qd_m
        return self.tau_ff(t) + self.kp * (self.q_m_ref(t) - q_m) + self.kd * (self.qd_m_ref(t) - qd_m)


class TorqueInput:
    """Open loop: the motor torques are a given signal ``tau_m(t)`` (callable, samples at ``times``, or constant)."""

    time_varying = True

    def __init__(self, robot: FlexibleRobot, tau_m: Any, times: Any = None):
        self.tau_m = Signal(tau_m, robot.n, f"robot {robot.name}: tau_m", times)
        self.kp = np.zeros(robot.n)
        self.kd = np.zeros(robot.n)

    def motor_torque(self, t, q, qd, q_m, qd_m):
        return self.tau_m(t)


__all__ = ["Controller", "FeedforwardPD", "PDGravityCompensation", "Signal", "TorqueInput"]
