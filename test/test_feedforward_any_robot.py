"""Issue 25: the feedforward of every robot the package loads. Joint-space inversion of flexible-link robots
(link deformations integrated along the prescribed joint motion, flexible_links/prescribed_joint_inverse_dynamics.py)
against the rigid-robot baseline in the simulator (seed 003 eq. 44 on the Canadarm, seed 004 section 5 on the RRP),
and checks of the inverse dynamics by independent means: the forward dynamics of the simulator's plant open loop (its
compiled path: generated C of the chain's Lagrangian, which equals the DeNOC recursion of seed 003 section 5 to 1e-9,
test_flexible_links_dynamics.py / test_flexible_links_simulation.py), pinocchio's rnea, and the EJNEA path for robots
without flexible links.
The composed robots (mixed4, moberg5_flexlink: extra elasticities, gear dampers, Coulomb friction) against the
forward dynamics of ElasticRobotPlant open loop and under the shipped PD, and moberg5's 'prescribed' against seed
002's inverse DAE."""
import numpy as np
import pinocchio as pin
import pytest
from scipy.interpolate import BPoly, CubicSpline

from flexrobot_ros.dynamics import Poly9Trajectory, default_method, feedforward
from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.model import load_robot
from flexrobot_ros.model.loader import share_directory
from flexrobot_ros.simulation import AccurateIntegration, FeedforwardPD, Simulation, TorqueInput
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

CANADARM = share_directory() / "config" / "canadarm_trajectory.yaml"


@pytest.fixture(scope="module")
def canadarm():
    return load_robot("canadarm")


@pytest.fixture(scope="module")
def canadarm_feedforwards(canadarm):
    """Seed 003 eq. 44 (section 7.1) at 1 kHz: joint-space ('prescribed') and rigid-robot feedforward."""
    return {method: feedforward(canadarm, CANADARM, method, rate_hz=1000.0) for method in ("prescribed", "rigid")}


@pytest.fixture(scope="module")
def canadarm_plant(canadarm):
    """The simulator's plant of the Canadarm on its compiled path (generated C of the CasADi Lagrangian: the DeNOC
    recursion's model, equal to it to 1e-9, test_flexible_links_simulation.py), built once for the tests below."""
    return ElasticRobotPlant(canadarm, compiled=True)


def run_with_pd(robot, plant, result, duration):
    """The feedforward result through the simulator under the robot's shipped motor PD about its motor reference."""
    controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t)
    return Simulation(plant, controller, q0=result.q[0], rate=1000.0).run(duration)


def joint_error(output, result):
    """max over joints and time of |q - q_ref(t)| [rad] (reference held at its end after the motion)."""
    reference = np.array([np.interp(output.t, result.t, result.q[:, j]) for j in range(result.q.shape[1])]).T
    return np.abs(output.q - reference).max()


def test_canadarm_joint_space_feedforward_tracks_20x_better_than_rigid(canadarm, canadarm_feedforwards,
                                                                       canadarm_plant):
    """Acceptance (a): seed 003 eq. 44 on the Canadarm (three flexible links, rigid joints), feedforward + the
    shipped PD (K_P = 2e4 N m/rad, K_D = 2e3 N m s/rad) in the simulator (fixed step, 1 kHz) over the motion's 10 s:
    the worst joint error with the joint-space feedforward is at least 20x smaller than with the rigid-robot one.
    Eq. 44 does not end at rest (joint 1 at 0.15 rad/s at 10 s), so there is no "after" with a held reference: the
    tip deflections are printed over the motion and over its last second for both; joint-space inversion does not
    control the tip (the undamped beams vibrate as the motion makes them, by the feedforward's own prediction)."""
    plant = canadarm_plant
    errors, tips = {}, {}
    for method, result in canadarm_feedforwards.items():
        output = run_with_pd(canadarm, plant, result, 10.0)
        errors[method] = joint_error(output, result)
        deflection = np.linalg.norm(plant.tip_deflections(output.states), axis=2).max(axis=1)
        tips[method] = (deflection.max(), deflection[output.t >= 9.0].max())
        print(f"canadarm {method}: max |q - q_ref| = {errors[method]:.3e} rad; max tip deflection "
              f"{1e3 * tips[method][0]:.2f} mm over the motion, {1e3 * tips[method][1]:.2f} mm over its last second")
    print(f"ratio rigid / prescribed: {errors['rigid'] / errors['prescribed']:.1f}x")
    assert errors["prescribed"] * 20.0 <= errors["rigid"]
    prescribed = canadarm_feedforwards["prescribed"]
    predicted = max(np.abs(values).max() for values in prescribed.deflections.values())
    assert tips["prescribed"][0] == pytest.approx(predicted, rel=0.05)  # the feedforward predicts the deflection


#: Horizon of the open-loop check [s]: the first 2 s of eq. 44 (tip deflections up to 78 mm, 29 % of the motion's
#: peak; torques up to 529 N m), not its 10 s: the DOP853 run through the Python DeNOC recursion cost ~25 s of CPU
#: per simulated second on this 2-core machine (it runs on the compiled plant now), and the identity checked (forward
#: dynamics of the inverse dynamics' torques = the prescribed motion) is the same at every instant, so a shorter
#: horizon checks the same thing.
OPEN_LOOP_HORIZON_S = 2.0


def test_canadarm_open_loop_torques_reproduce_the_joint_motion(canadarm, canadarm_feedforwards, canadarm_plant):
    """Acceptance (c): the joint-space torques fed open loop (no feedback) to the simulator's plant, integrated by
    DOP853
    (rtol 1e-10): the joints follow eq. 44 to 1e-5 rad over its first OPEN_LOOP_HORIZON_S = 2 s (the same identity
    as over its 10 s, at a fifth of the cost; 1.5e-11 rad over the 10 s when this ran the whole motion), and the
    beams' tip deflections match the prediction to 1e-3 of their peak over that horizon. The torque between samples:
    the quintic Hermite interpolant of tau, dtau, ddtau (scipy). The plant runs on its compiled path (generated C of
    the CasADi Lagrangian of the chain, equal to the Python DeNOC recursion to 1e-9: test_flexible_links_simulation.py,
    test_flexible_links_dynamics.py); the inversion's own equations are the Lagrangian differentiated by CasADi twice
    in time (jtimes) and integrated by LSODA along the prescribed joints, a different evaluation from the plant's
    forward dynamics x' = f(x, tau) integrated by DOP853."""
    result = canadarm_feedforwards["prescribed"]
    torque = BPoly.from_derivatives(result.t, np.stack([result.tau_m, result.dtau, result.ddtau], axis=1))
    plant = canadarm_plant
    output = Simulation(plant, TorqueInput(canadarm, lambda t: torque(min(t, result.t[-1]))), q0=result.q[0],
                        rate=100.0, mode="accurate", accurate=AccurateIntegration("DOP853", 1e-10, 1e-12)
                        ).run(OPEN_LOOP_HORIZON_S)
    reference = result.q[::10][:output.t.size]
    np.testing.assert_allclose(output.t, result.t[::10][:output.t.size], rtol=0, atol=1e-9)
    error = np.abs(output.q - reference).max()
    print(f"open loop: max |q - q_eq44| = {error:.2e} rad")
    assert error < 1e-5
    simulated = plant.tip_deflections(output.states)[:, :, 0]
    predicted = np.array([result.deflections[f"deflection.{link}.y"][::10][:output.t.size]
                          for link in ("link1", "link2", "link3")]).T
    assert np.abs(simulated - predicted).max() < 1e-3 * np.abs(predicted).max()


def test_rigid_method_is_pinocchio_rnea_for_flexible_link_robots(canadarm):
    """`--method rigid` on a robot with flexible links and rigid joints: the URDF's rigid robot (pinocchio's rnea,
    called here), motor reference = link reference, motor torque = joint torque (no joint friction on the Canadarm)."""
    result = feedforward(canadarm, CANADARM, "rigid", rate_hz=50.0)
    model = canadarm.model
    data = model.createData()
    expected = np.array([pin.rnea(model, data, q, qd, qdd) for q, qd, qdd in zip(result.q, result.qd, result.qdd)])
    np.testing.assert_allclose(result.tau, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    np.testing.assert_array_equal(result.q_m, result.q)
    np.testing.assert_allclose(result.tau_m, result.tau, rtol=0, atol=1e-12)
    assert all(not np.any(values) for values in result.deflections.values())


@pytest.mark.parametrize("name", ["lwr4", "scompi", "planar_2r"])
def test_prescribed_equals_ejnea_without_flexible_links(name):
    """For robots without flexible links the joint-space inversion (the Lagrangian of the chain, differentiated by
    CasADi) gives the torques of the existing path: tau, dtau, ddtau and the motor side of thesis eqs. 4.7-4.10
    equal EJNEA's (and SDRNEA's, test_sdrnea.py) to 1e-9 of their peak."""
    robot = load_robot(name)
    trajectory = Poly9Trajectory(np.zeros(robot.n), np.linspace(0.3, -0.4, robot.n), 0.8)
    new, old = feedforward(robot, trajectory, "prescribed", rate_hz=100.0), feedforward(robot, trajectory, "ejnea",
                                                                                        rate_hz=100.0)
    for quantity in ("tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m", "tau_m"):
        a, b = getattr(new, quantity), getattr(old, quantity)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, np.abs(b).max()), err_msg=quantity)


def test_elastic_only_methods_refuse_flexible_links_with_a_clear_error(canadarm):
    for method in ("sdrnea", "ejnea", "dae"):
        with pytest.raises(ModelError, match="canadarm.*flexible links .*method 'prescribed'"):
            feedforward(canadarm, CANADARM, method, rate_hz=10.0)


#: Joint PD for the RRP (the gains config/rrp.yaml ships, test_rrp_gains.py; the paper's own law is the
#: decoupling control): critically damped joint loops K_P = J omega^2, K_D = 2 J omega at omega = 10 rad/s, six
#: times below link 2's first locked-joint mode (62.69 rad/s, seed 004 section 5 data, README), so the PD does not
#: excite the beams; J bounds the rigid robot's inertia seen by each joint over the section-5 motion: joint 1 <= 1.0
#: kg m^2 (pinocchio crba: 0.98 at the start), joint 2 <= 4.0 kg m^2 (0.82 + link 2's hub I_2 = 3.2), joint 3 =
#: 0.513 kg (link 3 + payload).
RRP_KP = np.array([100.0, 400.0, 51.3])  # N m/rad, N m/rad, N/m
RRP_KD = np.array([20.0, 80.0, 10.3])  # N m s/rad, N m s/rad, N s/m
#: Section 5: the cycloids end at 0.5 s; the run goes on 0.5 s with the references held (after the motion).
RRP_MOTION_S, RRP_RUN_S = 0.5, 1.0


def test_rrp_joint_space_feedforward_tracks_20x_better_than_rigid():
    """Acceptance (b): seed 004 section 5 cycloids on the RRP with both links flexible (config/rrp.yaml, two finite
    elements per link and plane, the payload as tool), each feedforward + the joint PD RRP_KP, RRP_KD in the
    simulator (fixed step, 1 kHz, compiled plant): during the motion the worst joint error with the joint-space
    feedforward is at least 20x smaller than with the rigid-robot one, over the revolute joints [rad] and over the
    prismatic joint [m] separately. The tip deflections during the motion and over the 0.5 s after it are printed
    for both; so is the joint error after the motion, where the feedforward has ended (its last torque held) while
    the undamped beams keep vibrating."""
    robot = load_robot("rrp", tool=True)
    path = share_directory() / "config" / "rrp_trajectory.yaml"
    plant = ElasticRobotPlant(robot, compiled=True)
    revolute = np.array([kind == "revolute" for kind in robot.joint_types])
    errors = {}
    for method in ("prescribed", "rigid"):
        result = feedforward(robot, path, method, rate_hz=1000.0)
        controller = FeedforwardPD(robot, result.tau_m, result.q_m, result.qd_m, times=result.t, kp=RRP_KP, kd=RRP_KD)
        output = Simulation(plant, controller, q0=result.q[0], rate=1000.0).run(RRP_RUN_S)
        reference = np.array([np.interp(output.t, result.t, result.q[:, j]) for j in range(robot.n)]).T
        error = np.abs(output.q - reference)
        during = output.t <= RRP_MOTION_S + 1e-9
        errors[method] = (error[during][:, revolute].max(), error[during][:, ~revolute].max())
        tip = np.linalg.norm(plant.tip_deflections(output.states), axis=2)  # (samples, links) [m]
        print(f"rrp {method}: during the motion max |q - q_ref| = {errors[method][0]:.3e} rad, "
              f"{errors[method][1]:.3e} m; after it {error[~during][:, revolute].max():.3e} rad, "
              f"{error[~during][:, ~revolute].max():.3e} m; max tip deflection (link2, link3) "
              f"{np.round(1e3 * tip[during].max(axis=0), 2)} mm during, {np.round(1e3 * tip[~during].max(axis=0), 2)} "
              "mm after")
    ratios = np.array(errors["rigid"]) / np.array(errors["prescribed"])
    print(f"ratio rigid / prescribed: {ratios[0]:.0f}x (rad), {ratios[1]:.0f}x (m)")
    assert np.all(ratios >= 20.0)


#: Composed robots (extra elasticities, gear dampers, Coulomb friction with flexible links or rigid joints): a rest to
#: rest ninth-order move of 0.5 s from the start pose [rad] by the step [rad], sampled at 1 kHz.
COMPOSED_MOVES = {"mixed4": ([0.2, 0.4, -0.6], [0.3, 0.3, -0.3]), "moberg5_flexlink": ([0.0, 0.5], [0.3, -0.3])}
COMPOSED_MOVE_S = 0.5


@pytest.fixture(scope="module", params=sorted(COMPOSED_MOVES))
def composed(request):
    """(robot, its compiled ElasticRobotPlant, {'prescribed': result, 'rigid': result}) of a composed robot's move."""
    robot = load_robot(request.param)
    start, step = (np.array(values) for values in COMPOSED_MOVES[request.param])
    move = Poly9Trajectory(start, start + step, COMPOSED_MOVE_S)
    results = {method: feedforward(robot, move, method, rate_hz=1000.0) for method in ("prescribed", "rigid")}
    return robot, ElasticRobotPlant(robot, compiled=True), results


def test_composed_robot_default_method_is_prescribed_and_predicts_its_extra_coordinates(composed):
    """mixed4 and moberg5_flexlink (their model is ElasticRobot's) get method 'prescribed' by default, with the
    non-actuated elastic joint's q_e.<joint> and the flexible link's deflection.<link>.y columns beside the torques;
    a rigid joint's motor reference is its joint reference."""
    robot, _, results = composed
    result = results["prescribed"]
    assert default_method(robot) == "prescribed" and result.method == "prescribed"
    names = [name for name in result.deflections if name.startswith("q_e.")]
    assert names == [f"q_e.{name}" for name in ElasticRobot(robot).ext.elastic_names]
    assert "deflection.link2.y" in result.deflections
    rigid = [j for j, name in enumerate(robot.joint_names) if name in robot.rigid_joints]
    np.testing.assert_array_equal(result.q_m[:, rigid], result.q[:, rigid])
    print(f"{robot.name}: max |q_e| = {max(np.abs(v).max() for k, v in result.deflections.items() if 'q_e' in k):.3e} "
          f"rad, max |tip deflection| = {1e3 * np.abs(result.deflections['deflection.link2.y']).max():.3f} mm")


def test_composed_robot_open_loop_torques_reproduce_the_joint_motion(composed):
    """Issue 25 on the composed model: the 'prescribed' motor torques fed open loop (no feedback; the cubic spline
    of the 1 kHz samples between them) to ElasticRobotPlant (the CasADi forward dynamics of ElasticRobot: chain,
    rotors, gear springs and dampers, Coulomb friction, extra spring, beam), integrated by DOP853 (rtol 1e-10) from
    the static equilibrium at the start pose (the simulator's initial state): the joints follow the move to 1e-7 rad,
    the extra elastic joint and the tip deflection follow the prediction to 1e-4 of their peaks. The joint error is
    the torque interpolation's: on mixed4 2.7e-8 rad from 1 kHz samples, 1.1e-9 rad from 2 kHz ones (the cubic
    spline's h^4); the rigid baseline's open-loop error is 1.2e-2 rad over a 1 s move."""
    robot, plant, results = composed
    result = results["prescribed"]
    torque = CubicSpline(result.t, result.tau_m)
    output = Simulation(plant, TorqueInput(robot, lambda t: torque(min(t, result.t[-1]))), q0=result.q[0],
                        rate=100.0, mode="accurate", accurate=AccurateIntegration("DOP853", 1e-10, 1e-12)
                        ).run(COMPOSED_MOVE_S)
    reference = result.q[::10][:output.t.size]
    np.testing.assert_allclose(output.t, result.t[::10][:output.t.size], rtol=0, atol=1e-9)
    error = np.abs(output.q - reference).max()
    simulated = plant.extra_columns(output.states)
    deformation = {name: np.abs(simulated[name] - values[::10]).max() / np.abs(values).max()
                   for name, values in result.deflections.items() if np.abs(values).max() > 0.0}
    print(f"{robot.name} open loop: max |q - q_ref| = {error:.2e} rad; predicted deformation error (fraction of its "
          f"peak): {', '.join(f'{name} {value:.1e}' for name, value in deformation.items())}")
    assert error < 1e-7
    assert max(deformation.values()) < 1e-4


def test_composed_robot_joint_space_feedforward_tracks_100x_better_than_rigid(composed):
    """Each feedforward + the shipped motor PD about its motor reference (config/<robot>.yaml controller gains) in
    the simulator (fixed step, 1 kHz, compiled ElasticRobotPlant), over the move: the worst joint error with
    'prescribed' is at least 100x smaller than with the rigid-robot baseline 'rigid'. Not after it: the beam keeps
    swinging (mixed4's tip by up to 30 mm, its root moment on joint2 ~40 N m at the end of the move), which the last
    torque held cannot follow (joint inversion does not stop the beam; both methods then err by ~2.5e-2 rad 0.1 s
    later)."""
    robot, plant, results = composed
    errors = {}
    for method, result in results.items():
        errors[method] = joint_error(run_with_pd(robot, plant, result, COMPOSED_MOVE_S), result)
        print(f"{robot.name} {method} + PD: max |q - q_ref| = {errors[method]:.3e} rad")
    print(f"ratio rigid / prescribed: {errors['rigid'] / errors['prescribed']:.0f}x")
    assert errors["prescribed"] * 100.0 <= errors["rigid"]


def test_extended_joint_robot_prescribed_equals_the_inverse_dae():
    """moberg5 (seed 002 Table 1: gear dampers, the extra elasticity joint3, rigid links) by 'prescribed' (joint3
    integrated along the joint motion, the damped motor side integrated exactly) and by 'dae' (seed 002's inverse
    DAE, BDF steps of 1 ms; an independent formulation of the same model): the motor references agree to 2e-8 rad
    and their rates to 1e-4 rad/s along a 0.5 s move (measured 5.9e-9 rad, 2.6e-5 rad/s; the BDF's error: with
    0.5 ms steps the differences are 1.4e-10 rad, 2.4e-6 rad/s)."""
    robot = load_robot("moberg5")
    move = Poly9Trajectory(np.array([0.0, 0.5]), np.array([0.3, 0.2]), 0.5)
    prescribed, dae = (feedforward(robot, move, method, rate_hz=1000.0) for method in ("prescribed", "dae"))
    count = prescribed.t.size
    np.testing.assert_allclose(dae.t[:count], prescribed.t, rtol=0, atol=1e-12)
    errors = [np.abs(getattr(prescribed, name) - getattr(dae, name)[:count]).max() for name in ("q_m", "qd_m")]
    print(f"moberg5 prescribed vs dae: max |q_m| difference {errors[0]:.2e} rad, max |qd_m| {errors[1]:.2e} rad/s")
    assert errors[0] < 2e-8 and errors[1] < 1e-4


@pytest.mark.parametrize("name", ["mixed4", "moberg5_flexlink"])
def test_composed_robots_refuse_the_elastic_joint_methods(name):
    """sdrnea, ejnea and dae invert elastic joints on rigid links; a composed robot's error names method
    'prescribed'."""
    robot = load_robot(name)
    move = Poly9Trajectory(np.array(COMPOSED_MOVES[name][0]), np.array(COMPOSED_MOVES[name][0]) + 0.1, 0.5)
    for method in ("sdrnea", "ejnea", "dae"):
        with pytest.raises(ModelError, match=f"robot '{name}': method '{method}' .*method 'prescribed'"):
            feedforward(robot, move, method, rate_hz=50.0)
