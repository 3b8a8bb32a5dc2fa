"""Model-based decoupling control of a flexible-link robot with an LQR vibration loop (seed 004 section 3).

The model ``M(q) q_ddot + h(q, q_dot) = [Gamma; 0]`` (q = [q_r (n joints), q_f (m elastic)], h with Coriolis,
centrifugal, gravity, strain K q_f and modal damping; :meth:`ElasticRobotPlant.inertia_and_bias`) is partitioned as
seed 004 eqs. 27-28. Eliminating q_f_ddot (eq. 29) gives eq. 30, and the decoupling law (eq. 31)::

    Gamma = (M_rr - M_rf M_ff^-1 M_rf^T) u_I + h_r - M_rf M_ff^-1 h_f

turns the joints into double integrators q_r_ddot = u_I (eq. 35) while q_f obeys eq. 36. The joint loop is
``u_I = -G_p q_r - G_v q_r_dot + r(t)`` with ``r = q_r_ddot^d + G_v q_r_dot^d + G_p q_r^d`` (eqs. 32-33, with the
erratum -G_v q_r -> -G_p q_r), so the joint error obeys e_ddot + G_v e_dot + G_p e = 0 (eq. 34). From
``switch_time`` on (default: the end of the trajectory) the input is the LQR law ``u_II = -G_LQR dx`` (eq. 37),
dx = (e, q_f, e_dot, q_f_dot), G_LQR from the continuous Riccati equation of eqs. 35-36 linearized about the final
desired state (q_r^d(T), q_f = 0, at rest). ``stiffness_error`` alpha puts K_hat = (1 + alpha) K in the controller's
model (eq. 48): seed 004 section 4.3's mis-modelled stiffness (the lemma there is only necessary: use
:func:`closed_loop_eigenvalues` to decide stability).

Units: rad and m for q_r, the link layer's modal/nodal units for q_f, N m and N for Gamma. The paper gives no gains
or weights (docs/errata.md, the RRP paper); the defaults here: G_p = 400 s^-2, G_v = 40 s^-1 (a critically damped
20 rad/s joint loop); LQR weights dx^T Q dx = 1e4 |e|^2 + |e_dot|^2 + 100 (q_f^T K q_f + q_f_dot^T M_ff q_f_dot)
(the beams' strain and kinetic energy at the final pose, so that assumed modes and finite elements are weighted
alike), R = 1e-2 I.
Measured on the RRP of seed 004 section 5 (links 2 and 3 flexible, 1 kHz): end-effector error peak 22.1 mm, below
0.1 mm 0.31 s after the switch (bench/amm_vs_fem.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from flexrobot_ros.control.decoupling_gains import DEFAULT_GP, DEFAULT_GV, decoupling_gains
from flexrobot_ros.dynamics.trajectory import Trajectory
from flexrobot_ros.errors import SimulationError

class DecouplingControl:
    """Seed 004 eqs. 31-33 along ``trajectory`` on a flexible-link plant with rigid joints, then the LQR loop (eq. 37).

    A full-state controller: the simulator calls :meth:`state_torque` (t, x) with the plant state.
    """

    full_state = True
    time_varying = True

    def __init__(self, plant: Any, trajectory: Trajectory, gp: Any = None, gv: Any = None,
                 stiffness_error: float = 0.0, switch_time: float | None = None, lqr: bool = True,
                 Q: Any = None, R: Any = None):
        robot = plant.robot
        elastic = [name for name in robot.joint_names if name not in robot.rigid_joints]
        if elastic:
            raise SimulationError(f"robot {robot.name}: decoupling control (seed 004) needs rigid joints; "
                                  f"joint(s) {elastic} are elastic (set `rigid: true` or use the PD controller)")
        if plant.layout["q_e"].stop > plant.layout["q_e"].start:
            raise SimulationError(f"robot {robot.name}: decoupling control (seed 004) needs a model without extra "
                                  f"elasticities; it has {list(plant.elastic_names)}")
        if trajectory.n_joints != plant.n:
            raise SimulationError(f"decoupling control: the trajectory has {trajectory.n_joints} joints, robot "
                                  f"{robot.name} has {plant.n}")
        if not np.isfinite(stiffness_error) or stiffness_error <= -1:
            raise SimulationError(f"decoupling control: stiffness_error alpha must be > -1, got {stiffness_error!r}")
        self.plant, self.trajectory = plant, trajectory
        self.n, self.m = plant.n, plant.m
        self.gp = decoupling_gains(gp, self.n, DEFAULT_GP, "gp")
        self.gv = decoupling_gains(gv, self.n, DEFAULT_GV, "gv")
        self.stiffness_error = float(stiffness_error)
        self.kp, self.kd = np.zeros(self.n), np.zeros(self.n)  # no motor-side PD (the Simulation's gain check)
        self.switch_time = trajectory.end_time if switch_time is None else float(switch_time)
        end = trajectory.evaluate(trajectory.end_time)
        self.q_final = end.q[0]
        self.q_d = trajectory.evaluate(trajectory.start_time).q[0]
        self.q_m_d = self.q_d
        self._reference: tuple[float, np.ndarray] | None = None
        self.lqr_gain = self._lqr_gain(Q, R) if lqr else None

    # ------------------------------------------------------------------ model
    def model(self, y: np.ndarray, y_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M, h) of the controller's model: the plant's, with K_hat = (1 + alpha) K in h's elastic rows."""
        M, h = self.plant.inertia_and_bias(y, y_dot)
        if self.stiffness_error:
            h = h.copy()
            h[self.n:] += self.stiffness_error * (self.plant.beam_stiffness @ y[self.n:])
        return M, h

    def decoupling_terms(self, y: np.ndarray, y_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) of eq. 31, Gamma = A u + b: A = M_rr - M_rf M_ff^-1 M_rf^T, b = h_r - M_rf M_ff^-1 h_f."""
        n = self.n
        M, h = self.model(y, y_dot)
        M_rr, M_rf, M_ff = M[:n, :n], M[:n, n:], M[n:, n:]
        if self.m == 0:
            return M_rr, h[:n]
        factor = scipy.linalg.cho_factor(M_ff, check_finite=False)  # the model's M_ff: finite
        S = scipy.linalg.cho_solve(factor, M_rf.T, check_finite=False)  # M_ff^-1 M_rf^T
        return M_rr - M_rf @ S, h[:n] - S.T @ h[n:]

    # ------------------------------------------------------------------ control law
    def joint_input(self, t: float, y: np.ndarray, y_dot: np.ndarray) -> np.ndarray:
        """u: eq. 32 (u_I) before ``switch_time``, eq. 37 (u_II) after (joint accelerations [rad/s^2 | m/s^2])."""
        n = self.n
        if self.lqr_gain is not None and t >= self.switch_time:
            dx = np.concatenate([y[:n] - self.q_final, y[n:], y_dot])
            return -self.lqr_gain @ dx
        return -self.gp * y[:n] - self.gv * y_dot[:n] + self.reference_input(t)   # eq. 32 (G_p erratum)

    def reference_input(self, t: float) -> np.ndarray:
        """r(t) = q_r_ddot^d + G_v q_r_dot^d + G_p q_r^d (eq. 33) [rad/s^2 | m/s^2] (n,), the trajectory held at its
        ends; the last time's value is kept (a Jacobian of the closed loop asks at one t for every column)."""
        if self._reference is not None and self._reference[0] == t:
            return self._reference[1]
        ref = self.trajectory.evaluate(min(max(t, self.trajectory.start_time), self.trajectory.end_time))
        q_d, qd_d, qdd_d = ref.q[0], ref.qd[0], ref.qdd[0]
        if t > self.trajectory.end_time:
            qd_d, qdd_d = np.zeros(self.n), np.zeros(self.n)
        r = qdd_d + self.gv * qd_d + self.gp * q_d                   # eq. 33
        r.flags.writeable = False
        self._reference = (t, r)
        return r

    def state_torque(self, t: float, x: np.ndarray) -> np.ndarray:
        """Joint torques/forces Gamma (n,) [N m | N] at time t [s] and plant state x (eq. 31)."""
        layout = self.plant.layout
        y = np.concatenate([x[layout["q"]], x[layout["eta"]]])
        y_dot = np.concatenate([x[layout["qd"]], x[layout["eta_dot"]]])
        A, b = self.decoupling_terms(y, y_dot)
        return A @ self.joint_input(t, y, y_dot) + b

    def motor_torque(self, t, q, qd, q_m, qd_m):
        raise SimulationError("decoupling control needs the plant state (eta, eta_dot): the simulator calls "
                              "state_torque(t, x)")

    # ------------------------------------------------------------------ LQR (eq. 37)
    def closed_loop_matrices(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) of eqs. 35-36 linearized about the final desired state, state dx = (e, q_f, e_dot, q_f_dot),
        input u = q_r_ddot (central differences of the model)."""
        n, m = self.n, self.m
        size = n + m

        def rates(dx: np.ndarray, u: np.ndarray) -> np.ndarray:
            y = np.concatenate([self.q_final + dx[:n], dx[n:size]])
            y_dot = dx[size:]
            M, h = self.model(y, y_dot)
            eta_ddot = np.linalg.solve(M[n:, n:], -(M[:n, n:].T @ u + h[n:])) if m else np.zeros(0)
            return np.concatenate([y_dot, u, eta_ddot])

        zero_x, zero_u = np.zeros(2 * size), np.zeros(n)
        A = np.zeros((2 * size, 2 * size))
        B = np.zeros((2 * size, n))
        for k in range(2 * size):
            step = np.zeros(2 * size)
            step[k] = 1e-6
            A[:, k] = (rates(zero_x + step, zero_u) - rates(zero_x - step, zero_u)) / 2e-6
        for k in range(n):
            step = np.zeros(n)
            step[k] = 1e-6
            B[:, k] = (rates(zero_x, zero_u + step) - rates(zero_x, zero_u - step)) / 2e-6
        return A, B

    def _lqr_gain(self, Q: Any, R: Any) -> np.ndarray:
        size, n = self.n + self.m, self.n
        A, B = self.closed_loop_matrices()
        if Q is None:  # joint errors, and the beams' strain and kinetic energy at the final pose [J]
            M = self.model(np.concatenate([self.q_final, np.zeros(self.m)]), np.zeros(size))[0]
            Q = scipy.linalg.block_diag(1e4 * np.eye(n), 1e2 * self.plant.beam_stiffness, np.eye(n), 1e2 * M[n:, n:])
        Q = np.asarray(Q, float)
        R = 1e-2 * np.eye(self.n) if R is None else np.asarray(R, float)
        if Q.shape != (2 * size, 2 * size) or R.shape != (self.n, self.n):
            raise SimulationError(f"decoupling control: LQR weights Q {2 * size}x{2 * size} and R {self.n}x{self.n} "
                                  f"expected, got {Q.shape} and {R.shape}")
        try:
            P = scipy.linalg.solve_continuous_are(A, B, Q, R)
        except (np.linalg.LinAlgError, ValueError) as error:
            raise SimulationError(f"decoupling control: no LQR solution at the final pose ({error})") from error
        return np.linalg.solve(R, B.T @ P)


def closed_loop_eigenvalues(loop: Any, t: float, x: np.ndarray) -> np.ndarray:
    """Eigenvalues [1/s] of the Jacobian of the closed-loop state equations in (q, eta, q_dot, eta_dot) at time t and
    state x (rigid joints' motor entries, copies of the joints', left out) (central differences of ``loop.derivative``; seed 004 section 5 computes Figs. 9-10 this way)."""
    layout = loop.plant.layout
    columns = np.concatenate([np.arange(layout[name].start, layout[name].stop)
                              for name in ("q", "eta", "qd", "eta_dot")])
    jacobian = np.zeros((len(columns), len(columns)))
    for j, k in enumerate(columns):
        step = 1e-7 * max(1.0, abs(x[k]))
        plus, minus = x.copy(), x.copy()
        plus[k] += step
        minus[k] -= step
        jacobian[:, j] = (loop.derivative(t, plus)[columns] - loop.derivative(t, minus)[columns]) / (2 * step)
    return np.linalg.eigvals(jacobian)


def eigenvalues_along_motion(plant: Any, control: DecouplingControl, times: Any,
                             rate: float = 1000.0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Closed-loop eigenvalues [1/s] at ``times`` [s] along the controlled motion (seed 004 Figs. 9-10): the
    simulation under ``control`` from the trajectory's start (fixed step at ``rate`` Hz), and at the sample nearest
    each time :func:`closed_loop_eigenvalues`. Returns (sample times, eigenvalues per time)."""
    from flexrobot_ros.simulation import Simulation
    from flexrobot_ros.simulation.integrators import ClosedLoop

    times = np.atleast_1d(np.asarray(times, dtype=float))
    if times.size == 0 or np.any(times < 0) or not np.all(np.isfinite(times)):
        raise SimulationError(f"eigenvalues along the motion: expected finite times >= 0 s, got {times.tolist()}")
    simulation = Simulation(plant, control, q0=control.q_d, rate=rate)
    start = simulation.state
    output = simulation.run(max(float(times.max()), 1.0 / rate))
    t = np.concatenate([[0.0], output.t])
    states = np.vstack([start[None], output.states])
    loop = ClosedLoop(plant, control)
    picked = [int(np.argmin(np.abs(t - time))) for time in times]
    return t[picked], [closed_loop_eigenvalues(loop, t[k], states[k]) for k in picked]


__all__ = ["DEFAULT_GP", "DEFAULT_GV", "DecouplingControl", "closed_loop_eigenvalues", "decoupling_gains",
           "eigenvalues_along_motion"]
