"""Accuracy of the DAE inverse dynamics (seed 002 sections 8-9): where the error of the k-step BDF solution comes
from and at which order it converges, measured against independent references.

* The rest-to-rest polynomial p (section 9.1) against exact rational arithmetic on its closed-form derivative
  p' = (2r+1)!/(r!)^2 s^r (1 - s)^r.
* Extra elasticities removed (K_e -> infinity, D_g = 0): the dae method's motor torque against EJNEA's analytic one
  (thesis eqs. 4.7-4.10): O(h^2) across the start and end of the paper's C^5 line, O(h^k) inside, and O(h^k)
  everywhere (1e-8 of the peak) for a reference with k + nu - 1 continuous derivatives.
* Table 1 model, the 2.2 m line in 0.3 s (section 9.2, Fig. 5): the open-loop tool error of the simulator driven by
  the computed torque splits into the BDF truncation error (O(h^3) at k = 3) and the torque interpolation between
  the BDF samples; the simulator and the consistent initial conditions contribute < 1e-5 mm.
"""
from __future__ import annotations

from fractions import Fraction
from math import comb, factorial

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, interp1d, make_interp_spline

from flexrobot_ros.dynamics import feedforward
from flexrobot_ros.dynamics.dae.bdf_inverse import solve_bdf
from flexrobot_ros.dynamics.dae.inverse_dae import InverseDae
from flexrobot_ros.dynamics.dae.reference import CartesianLine
from flexrobot_ros.dynamics.trajectory import TrajectorySamples
from flexrobot_ros.model.extended_model import rigid_extended
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import AccurateIntegration, Simulation, TorqueInput

from test_dae_bdf import LINE, planar_ik  # section 9.2's 2.2 m line in 0.3 s and the closed-form elbow IK

Q_G_START = planar_ik(LINE.start)


@pytest.fixture(scope="module")
def moberg5():
    return load_robot("moberg5")


def _exact_profile(r: int, order: int, s: float) -> float:
    """d^order p / ds^order at s in exact rational arithmetic from p' = (2r+1)!/(r!)^2 s^r (1-s)^r (order >= 1)."""
    # s^r (1 - s)^r = sum_i C(r, i) (-1)^i s^(r+i): integer coefficients c[m] of s^m
    c = {r + i: comb(r, i) * (-1) ** i * factorial(2 * r + 1) // factorial(r) ** 2 for i in range(r + 1)}
    d = order - 1
    x = Fraction(s)
    return float(sum(Fraction(v * factorial(m) // factorial(m - d)) * x ** (m - d) for m, v in c.items() if m >= d))


@pytest.mark.parametrize("r", [5, 9])
def test_rest_to_rest_polynomial_to_round_off(r: int) -> None:
    """Section 9.1: p^[i] for i = 1..6 (r = 5, the paper's degree 11) and r = 9 (degree 19) equal the exact rational
    values to 1e-13 of their maximum. (The former monomial form with linearly solved coefficients was off by
    1.3e-5 in p^[6] at r = 5 and by 100 % at r = 9; the BDF differentiates the reference up to three times, so
    that round-off set the accuracy floor of the index-3 solver and of the stiff-limit torque.)"""
    line = CartesianLine([0.0], [1.0], 0.0, 1.0, continuity=r)
    s = np.linspace(0.0, 1.0, 41)
    for order in range(1, 7):
        exact = np.array([_exact_profile(r, order, x) for x in s])
        assert np.abs(line.profile(s, order) - exact).max() < 1e-13 * np.abs(exact).max(), order
    assert line.profile(np.array([1.0]), 0)[0] == 1.0


def _stiff_limit_errors(robot, continuity: int, k: int, h: float) -> tuple[float, float, float, int]:
    """(max |tau_m - tau_m EJNEA| / peak over the motion, the same inside 0.05 .. 0.25 s, max |q_m - q_m EJNEA|,
    torque_order) on the link-space line q_g: (0.3, 1.2) -> (1.3, -0.4) rad in 0.3 s, extra elasticity removed,
    D_g = 0 (the flexible-joint model EJNEA inverts, thesis eqs. 4.7-4.10)."""
    reference = CartesianLine([0.3, 1.2], [1.3, -0.4], 0.0, 0.3, continuity=continuity)
    dae = InverseDae(robot, reference, 1, output="joints", ext=rigid_extended(robot, 0.0))
    s = solve_bdf(dae, 0.3, h, k, q_g_guess=reference.start)
    d = reference.evaluate(s.t, 4)
    with pytest.warns(RuntimeWarning, match="extra elasticities"):  # EJNEA on purpose: the stiff-limit reference
        flat = feedforward(robot, TrajectorySamples(t=s.t, q=d[0], qd=d[1], qdd=d[2], q3=d[3], q4=d[4]), "ejnea",
                           check_limits=False)
    error = np.abs(s.tau_m - flat.tau_m).max(axis=1) / np.abs(flat.tau_m).max()
    inside = (s.t > 0.05) & (s.t < 0.25)
    return error.max(), error[inside].max(), np.abs(s.q_m - flat.q_m).max(), s.torque_order


def test_stiff_limit_torque_order_is_set_by_the_reference_smoothness(moberg5) -> None:
    """Paper's C^5 line, k = 3, extra elasticity removed, D_g = 0 (index nu = 4): q_m equals EJNEA's algebraic
    q_m to 1e-12 rad; tau_m (BDF derivative of the BDF derivative of q_m) converges at O(h^3) inside the motion
    (measured 1.70e-4 -> 2.12e-5 of the peak from h = 1 to 0.5 ms, ratio 8.0) but only at O(h^2) overall: the error
    peaks at t = h, where the 3-step stencil spans the start of the motion and q_m is only C^(r+2-nu) = C^3
    (measured 8.27e-4 -> 2.11e-4, ratio 3.9). ``torque_order`` = min(k, r + 1 - nu) = 2 says so."""
    coarse, fine = (_stiff_limit_errors(moberg5, 5, 3, h) for h in (0.001, 0.0005))
    assert coarse[2] < 1e-12 and fine[2] < 1e-12
    assert coarse[3] == fine[3] == 2
    assert 3.5 < coarse[0] / fine[0] < 4.5            # order 2 overall
    assert 7.0 < coarse[1] / fine[1] < 9.0            # order k = 3 inside
    assert 1e-4 < fine[0] < 4e-4


def test_stiff_limit_torque_equals_ejnea_to_1e_8(moberg5) -> None:
    """Same model with a C^9 line (nu = 4, k = 6: k + nu - 1 = 9 continuous derivatives): tau_m converges at the
    BDF order everywhere, measured 3.87e-7 -> 6.42e-9 of the peak (~1.0e5 N m) from h = 1 to 0.5 ms (ratio 60,
    order 5.9), i.e. the dae method equals EJNEA to 1e-8 at k = 6, h = 0.5 ms."""
    coarse, fine = (_stiff_limit_errors(moberg5, 9, 6, h) for h in (0.001, 0.0005))
    assert coarse[3] == fine[3] == 6
    assert coarse[0] / fine[0] > 40                   # order > 5.3
    assert fine[0] < 1e-8
    assert fine[2] < 1e-12


def _open_loop_tool_error(robot, t: np.ndarray, tau_m: np.ndarray, x0, q_m0, interpolation: str = "cubic",
                          until: float = 0.45) -> float:
    """Max distance [m] of the simulated tool from LINE over 0 .. ``until`` s, the simulator (extended plant, LSODA
    at rtol 1e-10) driven open loop by the samples tau_m(t) reconstructed by ``interpolation``."""
    if interpolation == "cubic":
        signal = CubicSpline(t, tau_m, axis=0)
    elif interpolation == "quintic":
        signal = make_interp_spline(t, tau_m, k=5, axis=0)
    else:
        signal = interp1d(t, tau_m, axis=0, kind=interpolation)
    end = t[-1]
    controller = TorqueInput(robot, lambda time: signal(min(max(time, 0.0), end)))
    sim = Simulation(robot, controller, q0=x0, q_m0=q_m0, rate=1000.0, mode="accurate",
                     accurate=AccurateIntegration(method="LSODA", rtol=1e-10, atol=1e-12))
    out = sim.run(until)
    tool = sim.plant.frame_id("tool0")
    position = np.array([sim.plant.frame_position(x, tool)[[0, 2]] for x in out.states])
    return float(np.linalg.norm(position - LINE.evaluate(out.t, 0)[0], axis=1).max())


@pytest.fixture(scope="module")
def reference_solution(moberg5):
    """k = 6, h = 0.25 ms solution of eq. 18 on LINE up to 0.45 s (its torque error is O(h^3) ~ 1e-3 N m at the
    start and end of the motion, ~1e-8 of the peak)."""
    return solve_bdf(InverseDae(moberg5, LINE, 2), 0.45, 0.00025, 6, q_g_guess=Q_G_START)


def test_simulator_and_initial_conditions_follow_a_converged_torque(moberg5, reference_solution) -> None:
    """Section 9.1/9.2: the converged torque, dense (0.25 ms samples, cubic), from the consistent rest state keeps
    the simulated tool within 1e-5 mm of the line (measured 2.9e-6 mm): neither the simulator's integration nor the
    initial conditions explain the error of the k = 3, h = 3 ms torque."""
    s = reference_solution
    assert _open_loop_tool_error(moberg5, s.t, s.tau_m, s.q_g[0], s.q_m[0]) < 1e-8


def test_torque_reconstruction_between_bdf_samples(moberg5, reference_solution) -> None:
    """The converged torque sampled every 3 ms (the paper's step) and reconstructed between samples: linear
    interpolation (what the simulator's sampled ``Signal`` does) leaves 1.30 mm, a cubic spline 0.085 mm, a quintic
    spline 0.025 mm of tool error (0.45 s; a zero-order hold: 30 mm): at 3 ms even an exact torque through a cubic
    spline misses the paper's 0.05 mm."""
    s = reference_solution
    t, tau = s.t[::12], s.tau_m[::12]
    errors = {kind: _open_loop_tool_error(moberg5, t, tau, s.q_g[0], s.q_m[0], kind)
              for kind in ("linear", "cubic", "quintic")}
    assert errors["linear"] > 0.5e-3
    assert 0.05e-3 < errors["cubic"] < 0.15e-3
    assert errors["quintic"] < 0.04e-3


def test_k3_h3ms_tool_error_is_the_bdf_truncation_error(moberg5, reference_solution) -> None:
    """Section 9.2 / Fig. 5 claim 'below 0.05 mm' for k = 3, h = 3 ms. Here (line placement not printed) the k = 3
    torque differs from the converged one by O(h^3), largest at t = 0.255 s (not at the start: the start-up with
    the exact rest history is not the limit): 2534 N m (2.4 % of the 1.05e5 N m peak) at h = 3 ms, 308 at 1.5 ms
    (ratio 8.2, order 3.04), 91 at 1 ms; the open-loop tool error (cubic reconstruction) follows at the same order,
    0.93 mm at 3 ms (0.43 mm during the motion), 0.125 mm at 1.5 ms (ratio 7.5), 0.038 mm at 1 ms. With a correct
    k = 3 BDF the paper's 0.05 mm needs h <= ~1.2 ms on this line; at h = 3 ms k = 5 gives 0.057 mm (the C^5 line's
    ends cap the torque order at 3, ``torque_order``). The other systems do no better at k = 3, h = 3 ms (eq. 17:
    3598 N m, 1.01 mm; eq. 19: 1588 N m, 1.22 mm; scaling changes neither), nor does measuring only the path
    (perpendicular) error: 0.57 mm."""
    ref = reference_solution
    spline = CubicSpline(ref.t, ref.tau_m, axis=0)
    torque_error, tool_error = [], []
    for h in (0.003, 0.0015, 0.001):
        s = solve_bdf(InverseDae(moberg5, LINE, 2), 0.45, h, 3, q_g_guess=Q_G_START)
        assert not s.diverged and s.torque_order == 3
        torque_error.append(np.abs(s.tau_m - spline(s.t)).max())
        tool_error.append(_open_loop_tool_error(moberg5, s.t, s.tau_m, s.q_g[0], s.q_m[0]))
    peak = np.abs(ref.tau_m).max()
    assert 0.015 < torque_error[0] / peak < 0.035
    assert 6.5 < torque_error[0] / torque_error[1] < 10.0          # order 2.7 .. 3.3
    assert 0.6e-3 < tool_error[0] < 1.3e-3                         # the paper's 0.05 mm is not reached
    assert 5.5 < tool_error[0] / tool_error[1] < 10.0
    assert tool_error[2] < 0.05e-3
