"""The motor side of elastic joints with a gear damper (dynamics/damped_motor_side.py, seed 002 eq. 1b): against the
closed-form solution of the damper's first-order equation for a sinusoidal link torque, and against thesis eqs.
4.7-4.10 (dynamics/flexible_joint.py) for a joint without a damper."""
import numpy as np

from flexrobot_ros.dynamics.damped_motor_side import damped_motor_side
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, motor_side

#: Three joints: moberg5's transmission (K = 1e5 N m/rad, D_g = 250 N m s/rad: a = K / D_g = 400 1/s, 0.4 per 1 ms
#: sample), a stiff one with a light damper (a = 1e4 1/s: ten sub-steps per sample), and one without a damper.
STIFFNESS, SPRING_DAMPING = np.array([1e5, 5e3, 2e3]), np.array([250.0, 0.5, 0.0])
#: Link torque tau = A sin(omega t) [N m], omega [rad/s]; the link at rest at q = 0 (no link friction), 1 kHz.
AMPLITUDE, OMEGA = np.array([800.0, 40.0, 25.0]), 30.0


def parameters():
    return JointFlexibility(stiffness=STIFFNESS, transmission=1.0, link_damping=0.0, link_coulomb=0.0,
                            motor_inertia=np.array([100.0, 0.6, 0.3]), motor_damping=np.array([0.0, 1.0, 0.5]),
                            motor_coulomb=0.0, coulomb_width=1e-2)


def test_damped_motor_deflection_is_the_closed_form_solution():
    """delta = q_m - q solves D_g delta' + K delta = A sin(omega t): delta = delta_p + (delta(0) - delta_p(0))
    e^(-K t / D_g) with the periodic delta_p = A (K sin - D_g omega cos) / (K^2 + D_g^2 omega^2); q_m and qd_m
    equal it and its rate to 1e-12 of their peaks, qdd_m to 1e-9 (qdd_m = g' - a delta' scales delta's round-off by
    a^2 = 1e8 on the lightly damped joint; measured 2.1e-10), and tau_m = B qdd_m + D_m qd_m + tau (seed 002 eq. 1d).
    The joint without a damper gets eqs. 4.7-4.10 exactly."""
    t = np.linspace(0.0, 0.2, 201)[:, None]
    zero = np.zeros((t.size, 3))
    tau = AMPLITUDE * np.sin(OMEGA * t)
    dtau, ddtau = AMPLITUDE * OMEGA * np.cos(OMEGA * t), -OMEGA ** 2 * tau
    params = parameters()
    side = damped_motor_side(params, SPRING_DAMPING, t[:, 0], zero, zero, zero, zero, tau, dtau, ddtau)
    damped = slice(0, 2)
    K, D, A = STIFFNESS[damped], SPRING_DAMPING[damped], AMPLITUDE[damped]
    a = K / D
    norm = K ** 2 + (D * OMEGA) ** 2
    periodic = [A * (K * np.sin(OMEGA * t) - D * OMEGA * np.cos(OMEGA * t)) / norm,
                A * OMEGA * (K * np.cos(OMEGA * t) + D * OMEGA * np.sin(OMEGA * t)) / norm,
                -OMEGA ** 2 * A * (K * np.sin(OMEGA * t) - D * OMEGA * np.cos(OMEGA * t)) / norm]
    start = side.q_m[0, damped]
    transient = (start - periodic[0][0]) * np.exp(-a * t)
    expected = [periodic[0] + transient, periodic[1] - a * transient, periodic[2] + a * a * transient]
    for name, value, tolerance in zip(("q_m", "qd_m", "qdd_m"), expected, (1e-12, 1e-12, 1e-9)):
        computed = getattr(side, name)[:, damped]
        error = np.abs(computed - value).max(axis=0) / np.abs(value).max(axis=0)
        print(f"{name}: error {error} (fraction of the peak)")
        assert np.all(error < tolerance), name
    np.testing.assert_allclose(side.tau_m, params.motor_inertia * side.qdd_m + params.motor_damping * side.qd_m + tau,
                               rtol=1e-14, atol=1e-12)
    # the start is on the slow manifold: (g - g'/a + g''/a^2) / a with g = tau / D_g, g' = dtau / D_g, g'' = 0 at t = 0
    np.testing.assert_allclose(start, -A * OMEGA / (K * a), rtol=1e-14)
    algebraic = motor_side(params, zero, zero, zero, zero, tau, dtau, ddtau)
    for name in ("q_m", "qd_m", "qdd_m", "tau_m"):
        np.testing.assert_array_equal(getattr(side, name)[:, 2], getattr(algebraic, name)[:, 2])
