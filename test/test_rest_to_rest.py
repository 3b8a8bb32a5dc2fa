"""Issue 38 item 1: rest-to-rest means at rest. A feedforward of a rest-to-rest motion ends with the deformation at
rest and the static torque of the final pose (the post-actuation holds the final pose until the deformation energy is
below 1e-6 of its peak), or is refused saying why and what to use; a motion that is not rest to rest where one is
needed is refused in one line (exit 2).

The robot of the post-actuation tests is written here (no README example uses it): flexarm2's URDF (two 0.5 m links,
1.0 and 0.5 kg, urdf/flexarm2.urdf) turned into a vertical plane (gravity -9.81 m/s^2 along y), link 1 rigid, link 2
one clamped-free assumed mode (EI = 20 N m^2, rho A = m / l = 1 kg/m) with 5 % modal damping. With one mode on the
last link the checks have closed forms, computed here from the clamped-free mode shape (beta l = 1.8751, tip-
normalized, Gauss-Legendre quadrature): the locked-joint frequency w = (beta l)^2 sqrt(EI / (rho A l^4)), the static
deflection eta_s = -rho A g cos(theta) int(phi) / k, k = EI int(phi''^2) (theta = q1 + q2, link 2's angle), the
static torques = pinocchio's rigid gravity torque plus the deflected beam's moment -rho A g sin(theta) int(w) on both
joints, the deformation energy 1/2 k (eta - eta_s)^2 + 1/2 m eta'^2 (m = rho A int(phi^2)), and its decay
exp(-2 zeta w t).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import Poly9Trajectory, feedforward
from flexrobot_ros.dynamics.post_actuation import RestToRest
from flexrobot_ros.errors import RestError, TrajectoryError
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.modal.held_modes import held_modes
from flexrobot_ros.timeseries import read_timeseries

#: The beam of link 2 [m, N m^2, kg/m], its damping ratio, gravity [m/s^2].
LENGTH, EI, RHO_A, ZETA, G = 0.5, 20.0, 1.0, 0.05, 9.81
#: The motion of the post-actuation tests: poly9 in 0.8 s [rad], link 2 at 0.6 rad from the horizontal at the end.
Q0, QF, DURATION_S = [0.3, 0.9], [-0.2, 0.8], 0.8


def beam_arm(folder) -> str:
    """The flexibility YAML of the module docstring's arm, written in ``folder``."""
    path = folder / "vertical_beam_arm.yaml"
    path.write_text(
        f"robot: vertical_beam_arm\nurdf: {share_directory() / 'urdf' / 'flexarm2.urdf'}\n"
        "gravity: [0.0, -9.81, 0.0]\ntool_frame: tool0\njoints: {joint1: {rigid: true}, joint2: {rigid: true}}\n"
        f"flexible_links:\n  link2: {{EI: {EI}, method: assumed_modes, modes: 1, family: clamped_free, "
        f"damping_ratio: {ZETA}, tip_frame: tool0}}\ncontroller: {{kp: 20.0, kd: 2.0}}\n")
    return str(path)


def clamped_free_mode(points: int = 40):
    """(x, weights, phi, phi'') of the first clamped-free mode on [0, LENGTH], normalized to phi(l) = 1."""
    beta_l = 1.8751040687119611
    sigma = (np.cosh(beta_l) + np.cos(beta_l)) / (np.sinh(beta_l) + np.sin(beta_l))
    nodes, weights = np.polynomial.legendre.leggauss(points)
    x, weights = LENGTH * (nodes + 1) / 2, weights * LENGTH / 2
    b = beta_l / LENGTH

    def shape(s):
        return np.cosh(s) - np.cos(s) - sigma * (np.sinh(s) - np.sin(s))

    curvature = b ** 2 * (np.cosh(b * x) + np.cos(b * x) - sigma * (np.sinh(b * x) + np.sin(b * x)))
    tip = shape(beta_l)
    return x, weights, shape(b * x) / tip, curvature / tip


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    folder = tmp_path_factory.mktemp("beam_arm")
    return folder, load_robot(beam_arm(folder))


@pytest.fixture(scope="module")
def beam():
    """Closed forms of the beam (module docstring): modal stiffness k [N/m], mass m [kg], int(phi) [m], the moments
    int(x phi) [m^2] and the locked-joint frequency w [rad/s] (tip-normalized coordinates: eta = tip deflection)."""
    x, weights, phi, curvature = clamped_free_mode()
    k, m = EI * weights @ curvature ** 2, RHO_A * weights @ phi ** 2
    return {"k": k, "m": m, "int_phi": weights @ phi, "int_x_phi": weights @ (x * phi), "omega": np.sqrt(k / m)}


def static_pose(robot, beam, q):
    """(static tip deflection [m], static joint torques (2,) [N m]) at pose q: closed form + pinocchio."""
    theta = float(np.sum(q))
    eta_s = -RHO_A * G * np.cos(theta) * beam["int_phi"] / beam["k"]
    rigid = pin.computeGeneralizedGravity(robot.model, robot.model.createData(), np.asarray(q, dtype=float))
    return eta_s, rigid - RHO_A * G * np.sin(theta) * beam["int_phi"] * eta_s


def five_point_rate(values, h):
    """d/dt of equally spaced samples (spacing h [s]) by fourth-order differences: central inside, one-sided at the
    two samples of each end."""
    rate = np.empty_like(values)
    rate[2:-2] = (values[:-4] - 8 * values[1:-3] + 8 * values[3:-1] - values[4:]) / (12 * h)
    forward = np.array([-25.0, 48.0, -36.0, 16.0, -3.0]) / (12 * h)
    for k in (0, 1):
        rate[k] = forward @ values[k:k + 5]
        rate[-1 - k] = -forward @ values[len(values) - 1 - k - np.arange(5)]
    return rate


def test_post_actuation_ends_at_rest_on_the_static_torque_of_the_final_pose(arm, beam):
    """The poly9 move leaves link 2 vibrating when the joints stop; the feedforward holds the final pose until the
    deformation energy is at most 1e-6 of its peak, and ends there:
    - the locked-joint frequency of the model equals the closed form w = 62.896 rad/s (10.01 Hz) to 1e-6;
    - the deformation energy recomputed here from the tip deflection column and its rate (five-point differences,
      closed-form k and m) equals the reported one at the motion's end and at the last sample (2e-3), the last is at
      most the threshold, the one at the motion's end well above;
    - the hold lasts as long as the closed-form decay exp(-2 zeta w t) needs from the motion's end energy to the
      threshold, within one period of the mode;
    - the last sample's tip deflection is the closed-form static deflection within the amplitude the remaining
      energy allows, sqrt(2 E / k), and its torques are the static torques (pinocchio + the deflected beam) within
      what that amplitude can add (inertial coupling (int(x phi) + a_1 cos(q2) int(phi)) rho A w^2 and gravity's
      rho A g |sin(theta)| int(phi) per unit amplitude, the acceleration at most w^2 (1 + 2 zeta) times it);
    - the joints are held: q at the final pose and its rates zero over the post-actuation."""
    _, robot = arm
    rate = 1000.0
    result = feedforward(robot, Poly9Trajectory(Q0, QF, DURATION_S), rate_hz=rate, rest=RestToRest())
    post = result.post_actuation
    omega = beam["omega"]
    locked = held_modes(robot, QF, locked_joints=True)
    np.testing.assert_allclose(2 * np.pi * locked.frequencies_hz.min(), omega, rtol=1e-6)
    tip = result.deflections["deflection.link2.y"]
    eta_s, torque_s = static_pose(robot, beam, QF)
    energy = 0.5 * beam["k"] * (tip - eta_s) ** 2 + 0.5 * beam["m"] * five_point_rate(tip, 1.0 / rate) ** 2
    end = int(round(DURATION_S * rate))
    np.testing.assert_allclose(energy[end], post.energy_at_motion_end_j, rtol=2e-3)
    np.testing.assert_allclose(energy[-1], post.energy_j, rtol=2e-3)
    assert post.energy_j <= post.threshold_j == pytest.approx(1e-6 * post.peak_j)
    assert post.energy_at_motion_end_j > 10 * post.threshold_j
    decay = np.log(post.energy_at_motion_end_j / post.threshold_j) / (2 * ZETA * omega)
    period = 2 * np.pi / omega
    print(f"post-actuation {post.hold_s:.3f} s (closed-form decay {decay:.3f} s); energy "
          f"{post.energy_at_motion_end_j:.3e} -> {post.energy_j:.3e} J (threshold {post.threshold_j:.3e} J); last "
          f"torque {result.tau_m[-1]} vs static {torque_s} N m")
    assert abs(post.hold_s - decay) <= period
    np.testing.assert_allclose(result.t[-1], DURATION_S + post.hold_s, atol=1e-9)
    amplitude = np.sqrt(2 * post.energy_j / beam["k"])
    assert abs(tip[-1] - eta_s) <= 1.001 * amplitude
    inertial = RHO_A * (beam["int_x_phi"] + np.array([LENGTH * np.cos(QF[1]) * beam["int_phi"], 0.0]))
    coupling = inertial * omega ** 2 * (1 + 2 * ZETA) + RHO_A * G * abs(np.sin(np.sum(QF))) * beam["int_phi"]
    assert np.all(np.abs(result.tau_m[-1] - torque_s) <= 1.01 * coupling * amplitude)
    hold = result.t > DURATION_S
    np.testing.assert_array_equal(result.q[hold], np.repeat([QF], hold.sum(), axis=0))
    assert not np.any(result.qd[hold]) and not np.any(result.qdd[hold])


def test_refusal_of_a_motion_that_never_comes_to_rest(tmp_path, capsys):
    """The Canadarm's beams are undamped: a poly9 move (2 s, a motion of this test) leaves them vibrating when the
    joints stop, and with the joints held they never stop. ``flexrobot feedforward`` (default --end auto) refuses it
    in one line (exit 2, no file): the energy left [J], the locked-joint mode that has no damping at the final pose
    (its frequency [Hz] one of the modal code's own locked-joint linearization there, ``flexrobot modal
    --locked-joints``) and what to use instead; ``--end as-given`` writes the inversion as before."""
    move, out = tmp_path / "move.yaml", tmp_path / "ff.csv"
    final = [0.25, -0.2, 0.3]
    move.write_text(f"profile: poly9\nduration: 2.0\nq0: [0.0, 0.1, -0.1]\nqf: {final}\n")
    assert main(["feedforward", "canadarm", "--trajectory", str(move), "--rate", "100", "--out", str(out)]) == 2
    message = capsys.readouterr().err.strip()
    assert "\n" not in message and not out.exists()
    locked = held_modes(load_robot("canadarm"), final, locked_joints=True).frequencies_hz
    assert any(f"the locked-joint mode at {f:.4g} Hz has no damping in the model" in message for f in locked)
    assert "never comes to rest" in message and "J when the joints stop" in message
    assert "--method rigid --shaper zvd" in message and "flexrobot shape canadarm --q 0.25,-0.2,0.3" in message
    assert "--end as-given" in message
    assert main(["feedforward", "canadarm", "--trajectory", str(move), "--rate", "100", "--end", "as-given",
                 "--out", str(out)]) == 0
    assert "as given" in capsys.readouterr().out and out.exists()


def test_refusal_of_a_post_actuation_longer_than_allowed(arm):
    """The same arm with a limit below what its 5 % damping needs: RestError (a TrajectoryError) saying how long it
    needs, which is the closed-form decay time from the motion's end energy (within a period of the mode: the
    estimate from the modes of the locked joints), and the limit."""
    _, robot = arm
    with pytest.raises(RestError) as refused:
        feedforward(robot, Poly9Trajectory(Q0, QF, DURATION_S), rate_hz=1000.0,
                    rest=RestToRest(max_post_actuation_s=0.1))
    assert isinstance(refused.value, TrajectoryError)
    message = str(refused.value)
    assert "more than the 0.1 s of post-actuation allowed" in message and "vertical_beam_arm" in message
    assert 0.3 < refused.value.hold_needed_s < 1.0


def test_the_cli_writes_the_post_actuation_and_the_simulator_stays_at_rest(arm, beam, capsys):
    """Through the CLI as a user runs it: ``flexrobot feedforward`` (default method prescribed, --end auto) writes the
    move and its post-actuation and says so; ``flexrobot simulate --feedforward`` (the YAML's PD, 1 kHz) runs it and
    1 s beyond: during the move the worst joint error is at most 1e-2 of the rigid feedforward's (--method rigid, the
    same move: 5.4e-6 vs 1.7e-3 rad), and from the file's end on the simulated tip stays at the closed-form static
    deflection within 1e-3 of the largest deflection change along the move (the robot at rest, holding the final
    pose with its static torque)."""
    folder, _ = arm
    path = beam_arm(folder)
    move = folder / "move.yaml"
    move.write_text(f"profile: poly9\nduration: {DURATION_S}\nq0: {Q0}\nqf: {QF}\n")
    eta_s, _ = static_pose(load_robot(path), beam, QF)
    residual, errors = {}, {}
    for method in ("prescribed", "rigid"):
        ff, sim = folder / f"{method}.csv", folder / f"{method}_sim.csv"
        assert main(["feedforward", path, "--trajectory", str(move), "--method", method, "--out", str(ff)]) == 0
        printed = capsys.readouterr().out
        span = read_timeseries(ff)[0][-1]
        if method == "prescribed":
            assert "end: post-actuation: the final pose held" in printed and span > DURATION_S + 0.3
        else:
            assert "end: rest to rest: the file ends at rest" in printed and span == pytest.approx(DURATION_S)
        assert main(["simulate", path, "--feedforward", str(ff), "--duration", str(span + 1.0), "--out",
                     str(sim)]) == 0
        t, columns = read_timeseries(sim)
        tip = columns["deflection.link2.y"]
        after = t >= span
        residual[method] = np.sqrt(np.mean((tip[after] - eta_s) ** 2))
        error = np.abs(np.column_stack([columns["error.joint1"], columns["error.joint2"]]))
        errors[method] = error[t <= DURATION_S].max(), error[after].max()
        if method == "prescribed":
            swing = np.abs(tip[t <= DURATION_S] - tip[0]).max()
            assert np.abs(tip[after] - eta_s).max() <= 1e-3 * swing
    print(f"over the 1 s after the file: tip RMS about the static deflection {residual['prescribed'] * 1e6:.4g} um "
          f"(prescribed + post-actuation) vs {residual['rigid'] * 1e6:.4g} um (rigid); worst joint error during the "
          f"move / after the file {errors['prescribed'][0]:.3g} / {errors['prescribed'][1]:.3g} rad vs "
          f"{errors['rigid'][0]:.3g} / {errors['rigid'][1]:.3g} rad")
    assert errors["prescribed"][0] <= 1e-2 * errors["rigid"][0]


def test_a_motion_that_is_not_rest_to_rest_where_one_is_needed(tmp_path, capsys):
    """--end rest asks for a rest-to-rest motion: waypoints that end moving (planar_2r, 0.2 rad/s on joint 1 at
    the end), or that end at rest in velocity and acceleration but with a nonzero jerk on a robot with elastic
    joints (their motors would still move: thesis eqs. 4.7-4.10, method ejnea), are refused in one line naming the
    joint, the derivative, its value and unit and the time (exit 2); --end auto writes them as given and says so;
    the rigid method needs zero velocity and acceleration only."""
    moving, jerk, out = tmp_path / "moving.yaml", tmp_path / "jerk.yaml", tmp_path / "ff.csv"
    moving.write_text("waypoints:\n  - {t: 0.0, q: [0.0, 0.0], qd: [0.0, 0.0], qdd: [0.0, 0.0]}\n"
                      "  - {t: 0.5, q: [0.1, 0.2], qd: [0.2, 0.0], qdd: [0.0, 0.0]}\n")
    jerk.write_text("degree: 5\nwaypoints:\n  - {t: 0.0, q: [0.0, 0.0], qd: [0.0, 0.0], qdd: [0.0, 0.0]}\n"
                    "  - {t: 0.25, q: [0.05, 0.1]}\n  - {t: 0.5, q: [0.1, 0.2], qd: [0.0, 0.0], qdd: [0.0, 0.0]}\n")
    for path, method, expected in ((moving, "ejnea", "it ends moving (qd.joint1 = 0.2 rad/s at t = 0.5 s)"),
                                   (jerk, "ejnea", "it ends with a nonzero jerk (q3.joint")):
        assert main(["feedforward", "planar_2r", "--trajectory", str(path), "--method", method, "--end", "rest",
                     "--out", str(out)]) == 2
        message = capsys.readouterr().err.strip()
        assert "\n" not in message and "the motion is not rest to rest" in message and expected in message
        assert not out.exists()
        assert main(["feedforward", "planar_2r", "--trajectory", str(path), "--method", method, "--out",
                     str(out)]) == 0
        assert "end: the motion is not rest to rest (it ends" in capsys.readouterr().out
        out.unlink()
    assert "rad/s^3 at t = 0.5 s" in message
    assert main(["feedforward", "planar_2r", "--trajectory", str(jerk), "--method", "rigid", "--end", "rest",
                 "--out", str(out)]) == 0
    assert "end: rest to rest" in capsys.readouterr().out
