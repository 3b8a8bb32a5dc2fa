"""Time integration of a closed loop ``xdot = f(t, x)``: accurate variable-step and fixed-step real-time modes.

Both take a :class:`ClosedLoop` (plant + controller + excitations) and fill the state at output samples
``t_k = k / rate`` (k an integer sample index, so timestamps are exact and do not accumulate rounding).

**Accurate mode** (:class:`AccurateIntegration`): ``scipy.integrate.solve_ivp``, stopped at every excitation
breakpoint, with the plant's analytic Jacobian for the implicit methods. Default ``LSODA`` (switches between
Adams and BDF), rtol 1e-10, atol 1e-12. On 1 s of the Scompi impact case (bench/simulator.py) LSODA and DOP853
cost about the same (0.35-0.45 s CPU, errors 6e-9 and 2e-10 of the peak response), Radau about 2x and BDF 3-4x
more; LSODA is the default because it turns stiff where DOP853 cannot (10 s conservative swing at rtol 1e-7:
LSODA 5.9 s, DOP853 8.7 s). Radau needs
``atol >= 1e-9`` here: below that its Newton test chases the rounding noise of the stiff springs (K (W q - q_m)
with K = 1.2e5 N m/rad) and the step collapses to microseconds.

**Fixed-step mode** (:class:`FixedStepIntegration`): exponential Euler with a lagged Jacobian::

    x_{k+1} = x_k + h phi_1(h A) f(t_k, x_k),      phi_1(z) = (e^z - 1) / z,

``A`` the Jacobian of the closed loop at the last linearization point. It integrates the linearized dynamics
about that point exactly whatever the step (no stability limit from the stiff 850 Hz / 80 % mode of the Scompi,
no frequency warping of the lightly damped modes), costs one plant evaluation and one matrix-vector product per
step, and ``A`` is recomputed (``scipy.linalg.expm``, about 1 ms) only when the configuration has moved by more than
``refresh_distance``. Smoothed Coulomb friction, whose slope f_c / w_c switches on and off within a few w_c of
zero speed, is kept out of ``A`` and treated linearly implicitly at every step (the plant's ``coulomb_damping``,
one small solve). Excitations enter as their exact mean
over the step, so a pulse keeps its impulse. Measured in bench/simulator.py (Scompi case 2, impact, h = 1 ms):
explicit RK4 is unstable at 1 ms (|R| = 19.6 on the 850 Hz / 80 % mode, |lambda| = 5346 1/s) and needs 2 substeps
(8 plant evaluations per sample: 6.7x real time, error 3e-5 of the peak response); implicit midpoint warps the
mode frequencies by up to 5.6 % at 1 ms (0.38 % with 4 substeps) and needs a Newton solve per step; exponential
Euler reproduces the linearized modes exactly (frequency error 0, damping error 1e-15) and runs the case at about
40-55x real time with error 2.7e-5 of the peak response against the accurate mode.
Limits: energy integrals are second order only (trapezoidal), so the fixed-mode energy balance closes to about
1e-2 (accurate mode: 1e-9); the Coulomb correction is first order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from flexrobot_ros.errors import SimulationError

if TYPE_CHECKING:  # `flexrobot simulate --help` (ACCURATE_METHODS) loads neither scipy nor pinocchio (via the plant)
    from flexrobot_ros.simulation.plant import FrameWrench, Plant

ACCURATE_METHODS = ("Radau", "BDF", "LSODA", "DOP853", "RK45")
_IMPLICIT = ("Radau", "BDF", "LSODA")


@dataclass(frozen=True)
class AccurateIntegration:
    """Variable-step ``solve_ivp`` options: ``method`` (one of :data:`ACCURATE_METHODS`), relative and absolute
    tolerances ``rtol``, ``atol`` (atol in state units: rad, m, rad/s, m/s, J), optional ``max_step`` [s]."""

    method: str = "LSODA"
    rtol: float = 1e-10
    atol: float = 1e-12
    max_step: float = math.inf

    def __post_init__(self):
        if self.method not in ACCURATE_METHODS:
            raise SimulationError(f"accurate integration: method {self.method!r} unknown; use one of "
                                  f"{list(ACCURATE_METHODS)}")
        if not (0 < self.rtol < 1 and 0 < self.atol and self.max_step > 0):
            raise SimulationError(f"accurate integration: expected 0 < rtol < 1, atol > 0, max_step > 0; got "
                                  f"rtol={self.rtol}, atol={self.atol}, max_step={self.max_step}")


@dataclass(frozen=True)
class FixedStepIntegration:
    """Fixed-step exponential Euler options: ``substeps`` per output sample (step h = 1 / (rate substeps)) and
    ``refresh_distance`` [rad | m], the largest change of any joint coordinate before the Jacobian is rebuilt."""

    substeps: int = 1
    refresh_distance: float = 0.01

    def __post_init__(self):
        if int(self.substeps) != self.substeps or self.substeps < 1 or not self.refresh_distance > 0:
            raise SimulationError(f"fixed-step integration: expected substeps >= 1 (integer) and refresh_distance > 0,"
                                  f" got substeps={self.substeps}, refresh_distance={self.refresh_distance}")

    def evaluation_times(self, rate: float, duration: float) -> np.ndarray:
        """The instants [s] at which :class:`ExponentialEuler` evaluates a time-varying controller over a run of
        ``duration`` s from t = 0 at ``rate`` Hz: every step start k h and mid-step k h + h / 2 (h = 1 / (rate
        substeps)), k = 0 .. steps, computed with the integrator's own float expressions, so that inputs sampled
        here beforehand are met exactly (increasing, (2 steps + 2,))."""
        steps_per_second = float(rate) * int(self.substeps)
        steps = int(round(float(duration) * float(rate))) * int(self.substeps)
        starts = np.arange(steps + 1) / steps_per_second
        times = np.empty(2 * starts.size)
        times[0::2], times[1::2] = starts, starts + 0.5 * (1.0 / steps_per_second)
        return times


class ClosedLoop:
    """A plant driven by a controller and excitations: ``f(t, x)`` and its Jacobian.

    ``excitations`` are (frame id, excitation) pairs; an excitation has ``wrench_at(t)``, ``mean(a, b)``,
    ``t0``, ``t1`` and ``breakpoints`` (see :mod:`flexrobot_ros.simulation.excitation`).
    """

    def __init__(self, plant: Plant, controller: Any, excitations: Sequence[tuple[int, Any]] = ()):
        self.plant = plant
        self.controller = controller
        self.excitations = tuple(excitations)
        layout = plant.layout
        self._slices = tuple(layout[name] for name in ("q", "qd", "q_m", "qd_m"))
        self._full_state = bool(getattr(controller, "full_state", False))
        dtau = np.zeros((plant.n, layout.size))
        dtau[:, layout["q_m"]] = -np.diag(controller.kp)
        dtau[:, layout["qd_m"]] = -np.diag(controller.kd)
        self.dtau_dx = dtau

    def torque(self, t: float, x: np.ndarray) -> np.ndarray:
        """Motor torques (n,): ``motor_torque(t, q, qd, q_m, qd_m)``, or ``state_torque(t, x)`` for a controller
        that declares ``full_state`` (it sees the whole plant state, e.g. beam coordinates)."""
        if self._full_state:
            return self.controller.state_torque(t, x)
        q, qd, q_m, qd_m = self._slices
        return self.controller.motor_torque(t, x[q], x[qd], x[q_m], x[qd_m])

    def torque_slope(self, t: float, x: np.ndarray) -> np.ndarray:
        """d(torque)/dx (n, size): from the PD gains, or by central differences for a full-state controller."""
        if not self._full_state:
            return self.dtau_dx
        size = self.plant.layout.size
        slope = np.zeros((self.plant.n, size))
        for k in range(size - 2):
            step = 1e-7 * max(1.0, abs(x[k]))
            plus, minus = x.copy(), x.copy()
            plus[k] += step
            minus[k] -= step
            slope[:, k] = (self.torque(t, plus) - self.torque(t, minus)) / (2 * step)
        return slope

    def wrenches_at(self, t: float) -> list[FrameWrench]:
        return [(frame, e.wrench_at(t)) for frame, e in self.excitations if e.t0 <= t <= e.t1]

    def wrenches_mean(self, a: float, b: float) -> list[FrameWrench]:
        return [(frame, e.mean(a, b)) for frame, e in self.excitations if e.t0 < b and a < e.t1]

    def derivative(self, t: float, x: np.ndarray) -> np.ndarray:
        return self.plant.derivative(x, self.torque(t, x), self.wrenches_at(t))

    def jacobian(self, t: float, x: np.ndarray, coulomb: bool = True) -> np.ndarray:
        return self.plant.jacobian(x, self.torque(t, x), self.torque_slope(t, x), self.wrenches_at(t), coulomb)

    def breakpoints(self, a: float, b: float) -> list[float]:
        """Sorted times strictly inside (a, b) where an excitation switches."""
        points = {p for _, e in self.excitations for p in e.breakpoints if a < p < b}
        return sorted(points)


class Divergence(Exception):
    """Raised inside an integration when the state stops being finite or exceeds the plant's bounds."""

    def __init__(self, t: float, x: np.ndarray):
        super().__init__(t)
        self.t, self.x = t, x


def integrate_accurate(loop: ClosedLoop, x0: np.ndarray, t0: float, sample_times: np.ndarray,
                       options: AccurateIntegration, check: Any, margin: Any) -> np.ndarray:
    """States (samples, size) at ``sample_times`` (increasing, > t0) from ``x0`` at ``t0``.

    ``check(t, x)`` raises :class:`Divergence` for a state that left the valid range; ``margin(x)`` is positive
    inside that range and stops the solver as soon as it crosses zero (a terminal event), so a blow-up does not
    run to the end of the chunk. Solver failures become SimulationError.
    """
    from scipy.integrate import solve_ivp


    def leaves_range(t, y):
        return margin(y)

    leaves_range.terminal = True
    t_end = float(sample_times[-1])
    edges = [t0, *loop.breakpoints(t0, t_end), t_end]
    states = np.empty((len(sample_times), len(x0)))
    x, filled = np.array(x0, dtype=float), 0
    for a, b in zip(edges[:-1], edges[1:]):
        count = int(np.searchsorted(sample_times, b, side="right")) - filled
        inside = (a + 1e-12 * (b - a), b - 1e-12 * (b - a))

        def rhs(t, y, lo=inside[0], hi=inside[1]):
            # Excitations are evaluated inside the open segment: a pulse edge at a segment end stays outside.
            return loop.derivative(min(max(t, lo), hi), y)

        def jac(t, y, lo=inside[0], hi=inside[1]):
            return loop.jacobian(min(max(t, lo), hi), y)

        kwargs = {"jac": jac} if options.method in _IMPLICIT else {}
        t_eval = sample_times[filled:filled + count]
        if not count or t_eval[-1] != b:
            t_eval = np.append(t_eval, b)
        solution = solve_ivp(rhs, (a, b), x, method=options.method, t_eval=t_eval, rtol=options.rtol,
                             atol=options.atol, max_step=options.max_step, events=leaves_range, **kwargs)
        if solution.status == 1:  # the terminal event: report the state where the range was left
            raise Divergence(float(solution.t_events[0][0]), solution.y_events[0][0])
        if solution.status != 0:
            raise SimulationError(f"accurate integration ({options.method}) failed between t = {a:.6g} s and "
                                  f"{b:.6g} s: {solution.message}")
        for t, y in zip(solution.t, solution.y.T):
            check(t, y)
        states[filled:filled + count] = solution.y[:, :count].T
        x = solution.y[:, -1]
        filled += count
    return states


class ExponentialEuler:
    """Fixed-step exponential Euler with a lagged Jacobian (see the module docstring); keeps its linearization
    between calls until :meth:`invalidate` (a new controller, gains or plant) or the state moves away."""

    def __init__(self, options: FixedStepIntegration):
        self.options = options
        self._phi: np.ndarray | None = None
        self._x_lin: np.ndarray | None = None
        self._h = math.nan
        self.refreshes = 0

    def invalidate(self) -> None:
        self._phi = None

    def _refresh(self, loop: ClosedLoop, t: float, x: np.ndarray, h: float, energy: int) -> None:
        import scipy.linalg

        a = loop.jacobian(t, x, coulomb=False)
        size = a.shape[0]
        block = np.zeros((2 * size, 2 * size))
        block[:size, :size] = h * a
        block[:size, size:] = h * np.eye(size)
        phi = scipy.linalg.expm(block)[:size, size:]
        phi[energy:] = 0.0  # the energy integrals use the trapezoidal rule (see integrate)
        if not np.all(np.isfinite(phi)):
            raise SimulationError(f"fixed-step integration: the linearized dynamics at t = {t:.6g} s are not finite "
                                  "(exp(h A) overflowed); the closed loop is violently unstable")
        velocities = loop.plant.layout["velocities"]
        self._phi, self._x_lin, self._h = phi, x.copy(), h
        self._phi_velocity_columns = np.ascontiguousarray(phi[:, velocities])
        self._phi_velocity_block = phi[velocities, velocities]
        self.refreshes += 1

    def _increment(self, plant: Plant, x: np.ndarray, f: np.ndarray, velocities: slice) -> np.ndarray:
        """``Phi f``, plus the linearly implicit Coulomb correction ``Phi[:, v] G dv`` with
        ``(I - Phi[v, v] G) dv = (Phi f)[v]``, G the plant's Coulomb damping at x (skipped without Coulomb)."""
        increment = self._phi @ f
        damping = plant.coulomb_damping(x)
        if damping is None:
            return increment
        size = damping.shape[0]
        dv = np.linalg.solve(np.eye(size) - self._phi_velocity_block @ damping, increment[velocities])
        return increment + self._phi_velocity_columns @ (damping @ dv)

    def integrate(self, loop: ClosedLoop, x0: np.ndarray, first_sample: int, samples: int, rate: float,
                  check: Any) -> tuple[np.ndarray, np.ndarray]:
        """States (samples, size) at sample indices ``first_sample + 1 ..`` from ``x0`` at ``first_sample / rate``,
        and the motor torques (samples, n) at those samples.

        A time-varying controller (``time_varying`` true, e.g. feedforward references) is evaluated at the middle
        of each step: with the state's feedback handled by ``A``, the reference acts like a forcing term, and its
        mid-step value removes the half-step lag a start-of-step value would cause. The energy integrals
        (dissipated, work in) are not propagated with the exponential but by the trapezoidal rule on the powers
        at both ends of each step (the motor torque at a step end is the controller's value at that time).
        """
        substeps = int(self.options.substeps)
        steps_per_second = rate * substeps
        h = 1.0 / steps_per_second
        if h != self._h:
            self._phi = None
        plant, distance = loop.plant, self.options.refresh_distance
        torque, wrenches_mean, derivative = loop.torque, loop.wrenches_mean, plant.derivative
        varying = bool(getattr(loop.controller, "time_varying", True))
        layout = plant.layout
        energy, work, qd_m = layout.mechanical.stop, layout["work_in"].start - layout.mechanical.stop, layout["qd_m"]
        velocities = layout["velocities"]
        states = np.empty((samples, len(x0)))
        torques = np.empty((samples, plant.n))
        x = np.array(x0, dtype=float)
        step = first_sample * substeps
        t = step / steps_per_second

        def evaluate(t: float, x: np.ndarray, wrenches: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
            """Derivative for the step from t, torque at t, torque driving the step, power correction
            (torque at t minus driving torque) . qd_m for the work integral."""
            tau = torque(t, x)
            if not varying:
                return derivative(x, tau, wrenches), tau, tau, 0.0
            tau_mid = torque(t + 0.5 * h, x)
            return derivative(x, tau_mid, wrenches), tau, tau_mid, (tau - tau_mid) @ x[qd_m]

        wrenches = wrenches_mean(t, t + h)
        f, tau, drive, correction = evaluate(t, x, wrenches)
        start_power = f[energy:].copy()
        start_power[work] += correction
        for k in range(samples):
            for _ in range(substeps):
                if self._phi is None or plant.relinearize_needed(x, self._x_lin, h, distance):
                    self._refresh(loop, t, x, h, energy)
                x = x + self._increment(plant, x, f, velocities)
                step += 1
                t = step / steps_per_second
                next_wrenches = wrenches_mean(t, t + h)
                f, tau, drive, correction = evaluate(t, x, next_wrenches)
                if wrenches or next_wrenches:  # with the wrench that acted during the step that ends
                    end_power = derivative(x, drive, wrenches)[energy:]
                else:
                    end_power = f[energy:].copy()
                end_power[work] += correction
                x[energy:] += (0.5 * h) * (start_power + end_power)
                wrenches = next_wrenches
                start_power = f[energy:].copy()
                start_power[work] += correction
            check(t, x)
            states[k] = x
            torques[k] = tau
        return states, torques


__all__ = ["ACCURATE_METHODS", "AccurateIntegration", "ClosedLoop", "Divergence", "ExponentialEuler",
           "FixedStepIntegration", "integrate_accurate"]
