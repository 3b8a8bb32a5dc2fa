"""Input shapers (issue 26 part 2): closed forms of Singer & Seering (ZV, ZVD), EI's defining conditions, the
residual vibration formula against an independent simulation of a second-order mode (scipy.signal.lsim), and the
time-varying convolution's derivatives against finite differences."""
import numpy as np
import pytest
from scipy import signal

from flexrobot_ros.dynamics import Poly9Trajectory
from flexrobot_ros.dynamics.input_shaping import (choose_kinds, convolve, design_shaper, ei_shaper, zv_shaper,
                                                  zvd_shaper)
from flexrobot_ros.dynamics.shaped_trajectory import ShapedTrajectory
from flexrobot_ros.errors import ShapingError


@pytest.mark.parametrize("zeta", [0.0, 0.02, 0.1, 0.3])
def test_zv_closed_form(zeta):
    """ZV: A1 = 1/(1+K), A2 = K/(1+K), K = exp(-zeta pi / sqrt(1-zeta^2)), t2 = half the damped period."""
    f = 7.3
    shaper = zv_shaper(f, zeta)
    k = np.exp(-zeta * np.pi / np.sqrt(1 - zeta**2))
    np.testing.assert_allclose(shaper.amplitudes, [1 / (1 + k), k / (1 + k)], rtol=1e-14)
    np.testing.assert_allclose(shaper.times_s, [0.0, 0.5 / (f * np.sqrt(1 - zeta**2))], rtol=1e-14)
    assert shaper.residual_vibration(f, zeta) < 1e-12


@pytest.mark.parametrize("zeta", [0.0, 0.05, 0.2])
def test_residual_vibration_matches_the_closed_form_elsewhere(zeta):
    """V(w) of ZV at other frequencies equals the Singer-Seering sum written out here for two impulses:
    V = exp(-zeta w t2) |A1 + A2 exp((zeta w + i w_d) t2)|."""
    shaper = zv_shaper(5.0, zeta)
    f = np.linspace(2.0, 12.0, 41)
    w = 2 * np.pi * f
    a1, a2 = shaper.amplitudes
    t2 = shaper.times_s[1]
    expected = 100 * np.exp(-zeta * w * t2) * np.abs(a1 + a2 * np.exp((zeta * w + 1j * w * np.sqrt(1 - zeta**2)) * t2))
    np.testing.assert_allclose(shaper.residual_vibration(f, zeta), expected, rtol=1e-12, atol=1e-12)


def test_zvd_has_zero_vibration_and_slope_at_the_design_frequency():
    f, zeta = 9.0, 0.08
    shaper = zvd_shaper(f, zeta)
    k = np.exp(-zeta * np.pi / np.sqrt(1 - zeta**2))
    np.testing.assert_allclose(shaper.amplitudes, np.array([1, 2 * k, k * k]) / (1 + k) ** 2, rtol=1e-14)
    h = 1e-4 * f
    assert shaper.residual_vibration(f, zeta) < 1e-12
    slope = (shaper.residual_vibration(f + h, zeta) - shaper.residual_vibration(f - h, zeta)) / (2 * h)
    assert abs(slope) < 1e-6  # V ~ (df)^2 near f: V(f +- h) ~ 1e-7 %


def test_ei_undamped_closed_form_and_damped_conditions():
    """Undamped EI: [(1+V)/4, (1-V)/2, (1+V)/4] at [0, T/2, T]. Damped: V(f) = V_tol, dV/df = 0 at f (central
    differences), two zeros of V either side (found here by a dense scan), V <= V_tol between them."""
    undamped = ei_shaper(4.0, 0.0, 0.05)
    np.testing.assert_allclose(undamped.amplitudes, [0.2625, 0.475, 0.2625], rtol=1e-10)
    np.testing.assert_allclose(undamped.times_s, [0.0, 0.125, 0.25], rtol=1e-10)
    for zeta in (0.03, 0.15, 0.35):
        f = 4.0
        shaper = ei_shaper(f, zeta, 0.05)
        assert np.all(shaper.amplitudes > 0) and abs(shaper.amplitudes.sum() - 1) < 1e-12
        assert abs(shaper.residual_vibration(f, zeta) - 5.0) < 1e-8
        h = 1e-5 * f
        slope = (shaper.residual_vibration(f + h, zeta) - shaper.residual_vibration(f - h, zeta)) / (2 * h)
        assert abs(slope) < 1e-4
        band = f * np.linspace(0.6, 1.4, 80001)
        v = shaper.residual_vibration(band, zeta)
        low, high = band[:40000][np.argmin(v[:40000])], band[40001:][np.argmin(v[40001:])]
        assert v[:40000].min() < 1e-3 and v[40001:].min() < 1e-3
        inside = (band >= low) & (band <= high)
        assert v[inside].max() <= 5.0 + 1e-8


def test_robustness_order_and_auto_choice():
    """Insensitivity at +-10 % frequency error: ZV > ZVD worst vibration, EI at its tolerance; auto takes ZV where
    it is enough (no frequency error), ZVD at +-10 %, EI at +-16 % (ZVD exceeds 5 % there, EI does not)."""
    f, zeta = 6.0, 0.07
    worst = {kind: design_shaper([kind], [f], [zeta]).worst_vibration(f, zeta, 0.1) for kind in ("zv", "zvd", "ei")}
    assert worst["zv"] > 10.0 > 5.0 >= worst["ei"] - 1e-9 > worst["zvd"]
    assert choose_kinds("auto", [f], [zeta], frequency_error=0.0) == ("zv",)
    assert choose_kinds("auto", [f], [zeta], frequency_error=0.1) == ("zvd",)
    assert choose_kinds("auto", [f], [zeta], frequency_error=0.16) == ("ei",)
    with pytest.raises(ShapingError, match="shaper: 'zz'"):
        choose_kinds("zz", [f], [zeta])


def test_multi_mode_convolution_cancels_each_mode():
    modes = [(3.0, 0.02), (11.0, 0.1)]
    shaper = convolve([zv_shaper(*modes[0]), zvd_shaper(*modes[1])])
    assert shaper.amplitudes.size == 6 and abs(shaper.amplitudes.sum() - 1) < 1e-14
    for f, zeta in modes:
        assert shaper.residual_vibration(f, zeta) < 1e-10


@pytest.mark.parametrize("kind, zeta", [("zv", 0.05), ("zvd", 0.05), ("ei", 0.0)])
def test_shaped_step_of_a_second_order_system(kind, zeta):
    """A unit step shaped by the shaper, through G(s) = w^2 / (s^2 + 2 zeta w s + w^2) simulated by
    scipy.signal.lsim (zero-order hold: exact for steps on its time grid; the damped frequency is 2 Hz so that the
    impulses fall on the grid): after the last impulse the response stays at 1 within the predicted residual
    vibration (ZV, ZVD: 0; EI: 5 % of the unshaped step's envelope)."""
    f = 2.0 / np.sqrt(1 - zeta**2)
    w = 2 * np.pi * f
    shaper = design_shaper([kind], [f], [zeta])
    t = np.linspace(0.0, 6.0, 60001)
    step = sum(a * (t >= tau - 1e-12) for a, tau in zip(shaper.amplitudes, shaper.times_s))
    system = signal.lti([w * w], [1.0, 2 * zeta * w, w * w])
    _, shaped, _ = signal.lsim(system, step, t, interp=False)
    _, plain, _ = signal.lsim(system, np.ones_like(t), t, interp=False)
    after = t >= shaper.duration_s + 0.01
    # amplitude of the unshaped residual vibration at the same instants, times V
    envelope = np.exp(-zeta * w * (t[after] - shaper.duration_s)) / np.sqrt(1 - zeta**2)
    predicted = shaper.residual_vibration(f, zeta) / 100
    assert np.all(np.abs(shaped[after] - 1.0) <= predicted * envelope + 1e-9)
    assert np.abs(plain[after] - 1).max() > 0.3  # the unshaped step does vibrate (~ 85 % overshoot envelope)


def test_time_varying_convolution_derivatives_and_constant_case():
    """Constant shaper: y(t) = sum A_i x(t - T_i) written out here. Varying shaper: each derivative of y equals
    the central difference of the one below (away from the instants an impulse crosses the reference's ends,
    where the reference's fifth derivative jumps, and from the schedule times, where the quintic splines' does)."""
    ref = Poly9Trajectory([0.0, 0.0], [1.0, -2.0], 0.5)
    shaper = zvd_shaper(5.0, 0.05)
    constant = ShapedTrajectory(ref, [0.0], [shaper])
    t = np.linspace(0.0, constant.end_time, 501)
    y = constant.evaluate(t)
    for name in ("q", "qd", "qdd", "q3", "q4"):
        expected = sum(a * getattr(ref.evaluate(np.clip(t - tau, 0, 0.5)), name)
                       * (1.0 if name == "q" else ((t - tau > 0) & (t - tau < 0.5))[:, None])
                       for a, tau in zip(shaper.amplitudes, shaper.times_s))
        np.testing.assert_allclose(getattr(y, name), expected, rtol=1e-12, atol=1e-9 * np.abs(expected).max())
    nodes = np.linspace(0.0, 0.8, 12)
    varying = ShapedTrajectory(ref, nodes, [convolve([zvd_shaper(5 + 3 * s, 0.05 + 0.05 * s),
                                                      zv_shaper(12 - 4 * s, 0.02)]) for s in nodes])
    t = np.linspace(0.0, varying.end_time, 20001)
    h = t[1] - t[0]
    y = varying.evaluate(t)
    _, tau = varying.schedule(t)
    phi = t[:, None] - tau[0]
    away = np.all((np.abs(phi) > 3 * h) & (np.abs(phi - 0.5) > 3 * h), axis=1)
    away = (away & (np.abs(t[:, None] - nodes).min(axis=1) > 3 * h))[1:-1]
    names = ("q", "qd", "qdd", "q3", "q4")
    for lower, upper in zip(names, names[1:]):
        difference = (getattr(y, lower)[2:] - getattr(y, lower)[:-2]) / (2 * h)
        error = np.abs(difference - getattr(y, upper)[1:-1])[away].max() / np.abs(getattr(y, upper)).max()
        assert error < 1e-6, (upper, error)
    assert np.allclose(y.q[-1], [1.0, -2.0]) and np.abs(y.qd[-1]).max() < 1e-12
