"""Feedforward of a flexible-joint robot: from a link trajectory to motor references and motor torques.

``feedforward(robot, trajectory)`` samples the trajectory (q .. q''''), computes the link torques tau and their two
time derivatives (SDRNEA compiled code by default, or EJNEA), then the motor side q_m, qd_m, qdd_m, tau_m of thesis
eqs. 4.7-4.10 (:mod:`.flexible_joint`). Feeding tau_m as motor torque and q_m, qd_m as references of a motor PD makes
the elastic robot follow the link trajectory exactly (up to model error); :func:`rigid_feedforward` is the
rigid-joint baseline (thesis eq. 4.5) for comparisons.

Robots with flexible links or rigid joints (method 'prescribed', their default): the link deformations are
integrated along the prescribed joint motion and the joint torques follow
(:mod:`flexrobot_ros.flexible_links.prescribed_joint_inverse_dynamics`); elastic joints among them get their motor
side as above, rigid joints take the joint torque directly (tau_m = tau + D qd + D_c tanh(qd / v_c), q_m = q: the
simulator's rigid joint). Robots with extra elasticities or gear dampers (mixed4, moberg5_flexlink; and moberg5 with
method 'prescribed') are inverted on the composed model's chain
(:class:`~flexrobot_ros.flexible_links.elastic_robot.ElasticRobot`, built on the extended model): the non-actuated
elastic joints are integrated with the link deformations, and an elastic joint with a gear damper gets its motor
side from the damper's first-order equation (:mod:`.damped_motor_side`, seed 002 eq. 1b). The inversion is in joint
space: the joints follow q(t), the beams and the extra elasticities vibrate as that motion makes them.
"""
from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.dynamics.codegen import CompiledSdrnea, load_sdrnea
from flexrobot_ros.dynamics.dae.reference import CartesianLine, ToolTrajectory
from flexrobot_ros.dynamics.dae.tool_path import ToolPath
from flexrobot_ros.dynamics.damped_motor_side import damped_motor_side
from flexrobot_ros.dynamics.ejnea import Ejnea
from flexrobot_ros.dynamics.feedforward_names import DEFAULT_GENERAL_METHOD, DEFAULT_METHOD, METHODS, TOOL_METHODS
from flexrobot_ros.dynamics.feedforward_result import FeedforwardResult
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, coulomb_friction, motor_side, rigid_motor_side
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.dynamics.post_actuation import RestToRest, not_at_rest, post_actuate
from flexrobot_ros.dynamics.trajectory import Trajectory, TrajectorySamples, load_trajectory
from flexrobot_ros.errors import ModelError, TrajectoryError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.flexible_links.prescribed_joint_inverse_dynamics import PrescribedJointInverseDynamics
from flexrobot_ros.flexible_links.tip_deflections import deflection_links, tip_deflections
from flexrobot_ros.model.flexible_robot import angle_or_length


def general(robot: Any) -> bool:
    """Whether ``robot`` has rigid joints or flexible links (methods 'prescribed' and 'rigid' only)."""
    return bool(list(getattr(robot, "rigid_joints", ())) or list(getattr(robot, "flexible_links", ())))


def default_method(robot: Any) -> str:
    """The method a robot gets when none is asked for: 'sdrnea' for elastic joints on rigid links, 'prescribed' for
    robots with rigid joints or flexible links."""
    return DEFAULT_GENERAL_METHOD if general(robot) else DEFAULT_METHOD


def check_supported(robot: Any, method: str = DEFAULT_METHOD) -> None:
    """Raise :class:`ModelError` naming the robot when it has rigid joints or flexible links: methods 'sdrnea',
    'ejnea' and 'dae' (thesis eqs. 4.7-4.10, seed 002) invert finite joint stiffnesses of a tree of rigid links;
    'prescribed' and 'rigid' take any robot."""
    rigid, links = list(getattr(robot, "rigid_joints", ())), list(getattr(robot, "flexible_links", ()))
    if method in ("prescribed", "rigid") or not general(robot):
        return
    parts = ([f"rigid joints ({', '.join(rigid)}: no finite stiffness to invert)"] if rigid else []) + \
            ([f"flexible links ({', '.join(links)})"] if links else [])
    raise ModelError(
        f"robot {robot.name!r}: method {method!r} supports elastic joints on rigid links only; robot has "
        f"{' and '.join(parts)}: use method 'prescribed' (its default: the link deformations integrated along the "
        "joint motion) or 'rigid' (the rigid-robot baseline)"
        + ("; method 'dae' takes a tool-space CartesianLine (flexrobot feedforward --line) on any robot"
           if method == "dae" else ""))


def compiled_feedforward(robot: Any) -> CompiledSdrnea:
    """The robot's compiled SDRNEA with the motor side: x = [q, qd, qdd, q3, q4] -> [tau, .., q_m, .., tau_m].

    For per-sample use in a control loop (``evaluate_packed``); built once per robot and cached on disk.
    """
    check_supported(robot)
    return load_sdrnea(KinematicTree.from_model(robot.model), JointFlexibility.from_robot(robot))


def feedforward(robot: Any, trajectory: Trajectory | TrajectorySamples | str | os.PathLike, method: str | None = None,
                *, rate_hz: float = 1000.0, t: Any = None, check_limits: bool = True,
                link_model: dict[str, Any] | None = None, order: int | None = None,
                q_g_guess: Any = None, rest: RestToRest | None = None) -> FeedforwardResult:
    """Motor references and torques that make ``robot`` (a FlexibleRobot) follow ``trajectory``.

    Args:
        robot: :class:`flexrobot_ros.model.FlexibleRobot` (a tree of revolute/prismatic joints: a serial
            chain, or a robot whose unmodelled branches are locked).
        trajectory: a :class:`Trajectory` (sampled at ``t`` or at ``rate_hz``), already sampled
            :class:`TrajectorySamples`, or the path of a trajectory YAML (read by
            :func:`~flexrobot_ros.dynamics.trajectory.load_trajectory`).
        method: 'sdrnea' (compiled generated code, cached per robot), 'ejnea' (numeric recursion) or 'dae' (the
            extended flexible-joint model's inverse dynamics as a DAE, seed 002: a BDF step of 1 / ``rate_hz``,
            :mod:`flexrobot_ros.dynamics.dae.dae_feedforward`; ``trajectory`` may also be a CartesianLine) for
            elastic joints on rigid links; 'prescribed' for any robot (the deformations of flexible links
            integrated along the joint motion, with the extra elasticities of robots that have them; the result's
            ``deflections`` and ``eta`` predict them); 'rigid', the
            rigid-robot baseline (:func:`rigid_feedforward`). None: 'sdrnea', or 'prescribed' for robots with
            flexible links or rigid joints.
        link_model: ``method``/``modes``/``elements`` overrides of the flexible links' discretization (as the
            simulator's plant takes them), for methods 'prescribed' and 'dae' on robots with flexible links.
        order: the BDF order k of method 'dae' (default 6 on elastic joints with rigid links, 3 on the general
            model).
        q_g_guess: tool-space targets: link positions (n,) [rad | m] near the start that pick the configuration
            (elbow) the solution follows (None: the rigid inverse kinematics from the robot's default guess).
        check_limits: raise :class:`TrajectoryError` when a sample leaves the URDF position limits
            (:meth:`FlexibleRobot.limit_violation`) and warn (``RuntimeWarning``) when a speed exceeds the URDF
            velocity limit.
        rest: joint-space targets: the motion must be rest to rest and its feedforward end at rest
            (:mod:`.post_actuation`): q' and q'' zero at both ends (and the jerk and snap on robots with elastic
            joints, whose motors are at rest only then; method 'rigid' needs q', q'' only), else
            :class:`TrajectoryError` (:func:`check_rest_to_rest`); with method 'prescribed' the final pose is held
            after the motion until the deformation energy is below ``rest.energy_fraction`` of its peak (the
            result's ``post_actuation`` says how long), or :class:`TrajectoryError` when the model's damping does
            not bring it there within ``rest.max_post_actuation_s``. None: the motion as given.

    A :class:`~flexrobot_ros.dynamics.dae.reference.CartesianLine` (tool-frame positions [m]; or a
    :class:`~flexrobot_ros.dynamics.dae.reference.ToolTrajectory`, those positions along a waypoint spline) takes
    methods 'dae' and 'rigid' on any robot (:func:`tool_space_feedforward_result`; the joints' link reference from
    the rigid robot's inverse kinematics for 'rigid'; the links the solution takes checked against the limits as
    above, ``q_g_guess`` the start's configuration); so does a :class:`~flexrobot_ros.dynamics.dae.tool_path.ToolPath`
    (:func:`tool_path`: the path a joint Trajectory traces with rigid links, for the deformed tool to follow).
    """
    if method is None:
        method = default_method(robot)
    if method not in METHODS:
        raise TrajectoryError(f"method: {method!r}; expected one of {METHODS}")
    if isinstance(trajectory, ToolPath):
        _samples(robot, trajectory.trajectory, rate_hz, t, check_limits)  # joint count and limits, as for the others
    if isinstance(trajectory, (CartesianLine, ToolPath, ToolTrajectory)):
        result = _tool_space(robot, trajectory, method, rate_hz, order, link_model, q_g_guess)
        if check_limits:
            violation = None if result.converged else robot.limit_violation(result.q, result.t)
            if violation:
                raise TrajectoryError(f"{violation}: the tool-space {result.solver} did not converge "
                                      f"({result.solver_reason})")
            _check_limits(robot, result)
        return result
    check_supported(robot, method)
    if rest is not None:
        samples = _samples(robot, trajectory, rate_hz, t, check_limits)
        check_rest_to_rest(robot, samples, method)
        if method != "dae":  # the DAE's BDF steps take the Trajectory itself
            trajectory, check_limits = samples, False
    if method == "rigid":
        return rigid_feedforward(robot, trajectory, rate_hz=rate_hz, t=t, check_limits=check_limits)
    if method == "prescribed":
        return prescribed_feedforward(robot, trajectory, rate_hz=rate_hz, t=t, check_limits=check_limits,
                                      link_model=link_model, rest=rest)
    if method == "dae":
        from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward, feedforward_result

        if isinstance(trajectory, Trajectory):
            _samples(robot, trajectory, rate_hz, t, check_limits)  # joint count and limits, as for the others
        return feedforward_result(robot, dae_feedforward(robot, trajectory, h=1.0 / rate_hz,
                                                         **({} if order is None else {"k": order})))
    if getattr(robot, "extended", None) is not None:
        warnings.warn(f"robot {robot.name} has extra elasticities / gear dampers; method {method!r} inverts the "
                      "flexible-joint model without them (use method 'dae' to cancel them)", RuntimeWarning,
                      stacklevel=2)
    samples = _samples(robot, trajectory, rate_hz, t, check_limits)
    tree = KinematicTree.from_model(robot.model)
    flexibility = JointFlexibility.from_robot(robot)
    if method == "sdrnea":
        out = load_sdrnea(tree, flexibility).evaluate(samples.q, samples.qd, samples.qdd, samples.q3, samples.q4)
        link = {name: out[name] for name in ("tau", "dtau", "ddtau")}
        motor = {name: out[name] for name in ("q_m", "qd_m", "qdd_m", "tau_m")}
    else:
        torques = Ejnea(tree)(samples.q, samples.qd, samples.qdd, samples.q3, samples.q4)
        link = {"tau": torques.tau, "dtau": torques.dtau, "ddtau": torques.ddtau}
        side = motor_side(flexibility, samples.q, samples.qd, samples.qdd, samples.q3,
                          torques.tau, torques.dtau, torques.ddtau)
        motor = {"q_m": side.q_m, "qd_m": side.qd_m, "qdd_m": side.qdd_m, "tau_m": side.tau_m}
    return _result(robot, samples, link, motor, method)


def rest_order(robot: Any, method: str) -> int:
    """The highest derivative of the joint motion that must vanish at its ends for ``method``'s feedforward of
    ``robot`` to start and end at rest: 4 (the snap) on a robot with elastic joints for the methods that invert
    them (their motors follow the link's jerk and snap, thesis eqs. 4.7-4.10), else 2 (method 'rigid': motor = W
    link; rigid joints)."""
    return 4 if len(getattr(robot, "rigid_joints", ())) < robot.n and method != "rigid" else 2


def check_rest_to_rest(robot: Any, samples: TrajectorySamples, method: str) -> None:
    """Raise :class:`TrajectoryError` (one line: robot, joint, derivative, value, time and why) unless the joint
    ``samples`` are rest to rest for ``method`` on ``robot``: their derivatives up to :func:`rest_order` zero at
    both ends."""
    order = rest_order(robot, method)
    units = [angle_or_length(kind) for kind in robot.joint_types]
    why = not_at_rest(samples, robot.joint_names, units, order)
    if why:
        need = ("zero velocity, acceleration, jerk and snap at both ends: the elastic joints' motors are at rest "
                "only then (profile poly9, or waypoints of degree 9 with zero end rates)" if order == 4 else
                "zero velocity and acceleration at both ends")
        raise TrajectoryError(f"robot {robot.name!r}: the motion is not rest to rest: {why}; a feedforward that ends "
                              f"at rest needs {need}")


def tool_space_feedforward_result(robot: Any, result: Any) -> FeedforwardResult:
    """The :class:`FeedforwardResult` of a :class:`~flexrobot_ros.dynamics.dae.tool_space_feedforward.
    ToolSpaceFeedforward` (method 'dae'): q, qd, qdd the joints of the solution (q3, q4 by differences of qdd),
    tau the drive's torque on the joint (a rigid joint's u - D qd - f_c tanh(qd / v_c); an elastic joint's
    K (q_m - W q) + D_g (qd_m - W qd)) with its derivatives by differences, q_m, qd_m, qdd_m the motors of elastic
    joints and the joints of rigid ones, tau_m = u; ``eta`` and the predicted tip deflections of the solution; the
    solver, its reason and the unstable zeros [rad/s] at the path poses."""
    s, model = result.solution, result.model
    t = s.t
    grad = lambda y: np.gradient(y, t, axis=0)  # noqa: E731
    q, qd, qdd = (values[:, model.q_index] for values in (s.y, s.v, s.a))
    q_m, qd_m, qdd_m = q.copy(), qd.copy(), qdd.copy()
    e = model.elastic_joints
    q_m[:, e], qd_m[:, e], qdd_m[:, e] = (values[:, model.motors] for values in (s.y, s.v, s.a))
    tau = s.u - robot.link_damping * qd - robot.link_coulomb * np.tanh(qd / robot.coulomb_width)
    w = robot.transmission[e]
    tau[:, e] = (robot.stiffness[e] * (q_m[:, e] - w * q[:, e])
                 + model.ext.spring_damping[e] * (qd_m[:, e] - w * qd[:, e]))
    dtau = grad(tau)
    eta = s.y[:, model.eta]
    deflections = _deflection_columns(robot, model.chain, s.y[:, :model.na], eta) if robot.flexible_links else {}
    return FeedforwardResult(t=t, q=q, qd=qd, qdd=qdd, q3=grad(qdd), q4=grad(grad(qdd)), tau=tau, dtau=dtau,
                             ddtau=grad(dtau), q_m=q_m, qd_m=qd_m, qdd_m=qdd_m, tau_m=s.u,
                             joint_names=tuple(robot.joint_names), method="dae", deflections=deflections, eta=eta,
                             solver=result.solver, solver_reason=result.reason, unstable_zeros=result.unstable_zeros(),
                             converged=not s.diverged)


def tool_path(robot: Any, trajectory: Trajectory) -> Any:
    """The :class:`~flexrobot_ros.dynamics.dae.tool_path.ToolPath` of ``trajectory`` on ``robot``'s default tool
    coordinates (x, y, z; the plane of motion of a planar two-joint arm)."""
    from flexrobot_ros.dynamics.dae.tool_axes import default_tool_axes
    from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics

    return ToolPath(ToolInverseKinematics(robot, default_tool_axes(robot)), trajectory)


def _tool_space(robot: Any, line: Any, method: str, rate_hz: float, order: int | None,
                link_model: dict[str, Any] | None, q_g_guess: Any = None) -> FeedforwardResult:
    """Methods 'dae' and 'rigid' along a tool-space line or path (see :func:`feedforward`; ``q_g_guess`` the link
    positions near the start that pick the inverse-kinematics branch, None: the solvers' default)."""
    if method == "rigid":
        from flexrobot_ros.dynamics.dae.tool_axes import default_tool_axes
        from flexrobot_ros.dynamics.dae.tool_inverse_kinematics import ToolInverseKinematics

        t = np.arange(int(np.floor((line.t0 + line.duration) * rate_hz + 1e-9)) + 1) / rate_hz
        samples = ToolInverseKinematics(robot, default_tool_axes(robot)).path(line, t, q_g_guess)
        return rigid_feedforward(robot, samples, check_limits=False)
    if method != "dae":
        raise TrajectoryError(f"method {method!r} along a tool-space line: expected 'dae' (the deformed tool on the "
                              "line) or 'rigid' (the rigid robot's inverse kinematics and dynamics)")
    if isinstance(line, ToolPath) and not general(robot):
        raise TrajectoryError(f"robot {robot.name!r} has rigid links: its tool follows the rigid tool path of a joint "
                              "trajectory when the links follow the trajectory itself; give the Trajectory (methods "
                              "sdrnea, ejnea, dae)")
    if general(robot):
        from flexrobot_ros.dynamics.dae.tool_space_feedforward import tool_space_feedforward

        return tool_space_feedforward_result(robot, tool_space_feedforward(
            robot, line, h=1.0 / rate_hz, link_model=link_model, q_g_guess=q_g_guess,
            **({} if order is None else {"k": order})))
    from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward, feedforward_result

    return feedforward_result(robot, dae_feedforward(robot, line, h=1.0 / rate_hz, q_g_guess=q_g_guess,
                                                     output="tool", **({} if order is None else {"k": order})))


def rigid_feedforward(robot: Any, trajectory: Trajectory | TrajectorySamples | str | os.PathLike, *,
                      rate_hz: float = 1000.0, t: Any = None, check_limits: bool = True) -> FeedforwardResult:
    """The rigid-robot feedforward: the URDF's links rigid, the joints rigid (thesis eq. 4.5: q_m = W q,
    tau_m = B W qdd + tau_fm + W^-1 (tau + tau_f) on elastic joints; q_m = q, tau_m = tau + D qd on rigid ones).

    The baseline a flexible feedforward is compared with; dtau and ddtau are still reported (EJNEA), and the
    predicted tip deflections of flexible links are zero.
    """
    samples = _samples(robot, trajectory, rate_hz, t, check_limits)
    torques = Ejnea(KinematicTree.from_model(robot.model))(samples.q, samples.qd, samples.qdd, samples.q3, samples.q4)
    link = {"tau": torques.tau, "dtau": torques.dtau, "ddtau": torques.ddtau}
    deflections = {}
    if getattr(robot, "flexible_links", None):
        chain, model = _chain(robot, None)
        joints = _chain_joints(chain, np.arange(robot.n) if model is None else model.q_index, samples.q)
        deflections = _deflection_columns(robot, chain, joints, np.zeros((samples.t.size, chain.m)))
    return _result(robot, samples, link, _motor_side(robot, samples, link, rigid_model=True), "rigid",
                   deflections)


def prescribed_feedforward(robot: Any, trajectory: Trajectory | TrajectorySamples | str | os.PathLike, *,
                           rate_hz: float = 1000.0, t: Any = None, check_limits: bool = True,
                           link_model: dict[str, Any] | None = None,
                           rest: RestToRest | None = None) -> FeedforwardResult:
    """Joint-space feedforward of any robot (module docstring): link deformations (and extra elasticities)
    integrated along the joint motion, joint torques from them (:class:`PrescribedJointInverseDynamics`), then the
    motor side per joint. Robots with extra elasticities also get the columns ``q_e.<joint>`` [rad | m] of the
    non-actuated elastic joints, as the simulator names them. ``rest``: the motion (rest to rest: :func:`feedforward`
    checks it) extended by the post-actuation that brings the deformation to rest
    (:func:`.post_actuation.post_actuate`; the result's ``post_actuation``), or :class:`TrajectoryError`."""
    samples = _samples(robot, trajectory, rate_hz, t, check_limits)
    chain, model = _chain(robot, link_model)
    inverse = PrescribedJointInverseDynamics(chain) if model is None else PrescribedJointInverseDynamics(
        chain, model.q_index, model.qe_index, model.ext.elastic_stiffness, model.ext.elastic_damping)
    if chain.sliding:
        chain.check_free_lengths(_chain_joints(chain, inverse.prescribed, samples.q.min(axis=0)[None])[0])
        chain.check_free_lengths(_chain_joints(chain, inverse.prescribed, samples.q.max(axis=0)[None])[0])
    motion = inverse(samples.t, samples.q, samples.qd, samples.qdd, samples.q3, samples.q4)
    post = None
    if rest is not None:
        samples, motion, post = post_actuate(inverse, samples, motion, rest, f"robot {robot.name!r}")
    link = {"tau": motion.tau, "dtau": motion.dtau, "ddtau": motion.ddtau}
    extra = inverse.free[:inverse.ne]
    columns = {f"q_e.{chain.bodies[i].name}": motion.q_e[:, k] for k, i in enumerate(extra)}
    if robot.flexible_links:
        joints = _chain_joints(chain, inverse.prescribed, samples.q)
        joints[:, extra] = motion.q_e
        columns.update(_deflection_columns(robot, chain, joints, motion.eta))
    result = _result(robot, samples, link, _motor_side(robot, samples, link, rigid_model=False), "prescribed",
                     columns)
    return dataclasses.replace(result, eta=motion.eta, post_actuation=post)


def _chain(robot: Any, link_model: dict[str, Any] | None) -> tuple[FlexibleLinkChain, ElasticRobot | None]:
    """(the chain the joint-space inversion runs on, the composed model or None): the flexible-link chain of
    ``robot.model``, or for robots with extra elasticities or gear dampers (``robot.extended``) the chain of
    :class:`ElasticRobot` on the extended model (the robot's joints at its ``q_index``, the non-actuated elastic
    joints at ``qe_index``); ``link_model`` overrides the links' discretization."""
    if getattr(robot, "extended", None) is None:
        return chain_from_robot(robot, **(link_model or {})), None
    model = ElasticRobot(robot, **(link_model or {}))
    return model.chain, model


def _chain_joints(chain: FlexibleLinkChain, prescribed: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The chain's joint coordinates (samples, chain.n) with the robot's joints q (samples, n) at ``prescribed``
    and the others (non-actuated elastic joints) zero."""
    out = np.zeros((len(q), chain.n))
    out[:, prescribed] = q
    return out


def _deflection_columns(robot: Any, chain: FlexibleLinkChain, joints: np.ndarray,
                        eta: np.ndarray) -> dict[str, np.ndarray]:
    """``deflection.<link>.y`` / ``.z`` [m] (z for links bending both ways), as the simulator's plant writes them,
    from the chain's joint coordinates (samples, chain.n) and elastic coordinates ``eta`` (samples, m)."""
    links = deflection_links(robot, chain)
    values = tip_deflections(chain, links, joints, eta)
    columns = {}
    for k, (link, i) in enumerate(links):
        body = chain.bodies[i]
        columns[f"deflection.{link}.y"] = values[:, k, 0]
        if (body.sliding.planes == 2) if body.sliding is not None else body.beam.m_z:
            columns[f"deflection.{link}.z"] = values[:, k, 1]
    return columns


def _motor_side(robot: Any, samples: TrajectorySamples, link: dict[str, np.ndarray],
                rigid_model: bool) -> dict[str, np.ndarray]:
    """q_m, qd_m, qdd_m, tau_m per joint: elastic joints by thesis eqs. 4.7-4.10 (``rigid_model``: eq. 4.5; with a
    gear damper D_g > 0, :func:`.damped_motor_side.damped_motor_side`), rigid joints (``robot.rigid_joints``) q_m = q
    and tau_m = tau + D qd + D_c tanh(qd / v_c) (the torque acts on the joint)."""
    rigid = np.array([name in getattr(robot, "rigid_joints", ()) for name in robot.joint_names], dtype=bool)
    coulomb = coulomb_friction(np.asarray(robot.link_coulomb, dtype=float), float(robot.coulomb_width) or 1.0,
                               samples.qd, samples.qdd, samples.q3)[0]
    motor = {"q_m": samples.q.copy(), "qd_m": samples.qd.copy(), "qdd_m": samples.qdd.copy(),
             "tau_m": link["tau"] + np.asarray(robot.link_damping, dtype=float) * samples.qd + coulomb}
    elastic = ~rigid
    if not elastic.any():
        return motor
    # the elastic joints' parameters (a rigid joint's infinite stiffness is no JointFlexibility)
    flexibility = JointFlexibility(**{name: np.broadcast_to(np.asarray(getattr(robot, name), dtype=float),
                                                            (robot.n,))[elastic]
                                      for name in JointFlexibility.__dataclass_fields__}) if rigid.any() else \
        JointFlexibility.from_robot(robot)
    columns = [samples.q[:, elastic], samples.qd[:, elastic], samples.qdd[:, elastic]]
    damping = np.zeros(robot.n) if robot.extended is None else np.asarray(robot.extended.spring_damping, dtype=float)
    if rigid_model:
        side = rigid_motor_side(flexibility, *columns, link["tau"][:, elastic])
    elif np.any(damping[elastic] > 0.0):
        side = damped_motor_side(flexibility, damping[elastic], samples.t, *columns, samples.q3[:, elastic],
                                 link["tau"][:, elastic], link["dtau"][:, elastic], link["ddtau"][:, elastic])
    else:
        side = motor_side(flexibility, *columns, samples.q3[:, elastic], link["tau"][:, elastic],
                          link["dtau"][:, elastic], link["ddtau"][:, elastic])
    for name in motor:
        motor[name][:, elastic] = getattr(side, name)
    return motor


#: What a drive may already add to the torque command it receives (``drive_compensates``): nothing, or the gravity
#: torque of its own model at the measured pose.
DRIVE_COMPENSATION = ("none", "gravity")


def drive_torque(robot: Any, result: FeedforwardResult, drive_compensates: str = "none") -> np.ndarray:
    """The motor torque [N·m] (samples, n) to command a drive that already adds ``drive_compensates`` itself.

    'none': ``tau_m`` unchanged. 'gravity': ``tau_m - W^-1 g(q)``, the link gravity torque g(q) [N·m | N] of
    pinocchio's ``computeGeneralizedGravity`` at the desired link positions ``result.q`` brought to the motor side
    by the transmission W (thesis eq. 4.10: tau_m = ... + W^-1 (tau + tau_f)); in tracking, the drive's measured
    pose is the desired one, so the two together give ``tau_m``.

    Raises:
        ModelError: ``drive_compensates`` is not one of :data:`DRIVE_COMPENSATION`.
    """
    if drive_compensates not in DRIVE_COMPENSATION:
        raise ModelError(f"drive_compensates: {drive_compensates!r}; expected one of {DRIVE_COMPENSATION}")
    if drive_compensates == "none":
        return result.tau_m
    data = robot.model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(robot.model, data, q) for q in result.q])
    return result.tau_m - gravity / np.asarray(robot.transmission, dtype=float)


def interpolation_error(values: np.ndarray) -> np.ndarray:
    """Largest error of linear interpolation between the samples ``values`` (samples, n), equally spaced in time,
    as a fraction of each column's peak magnitude (n,).

    Between samples h apart the error of the chord is at most h^2/8 max|f''|; h^2 f'' is estimated by the second
    differences of the samples themselves (so no time step is needed). A column that is zero throughout gives 0.
    """
    values = np.asarray(values, dtype=float)
    if values.shape[0] < 3:
        return np.zeros(values.shape[1])
    error = np.abs(np.diff(values, 2, axis=0)).max(axis=0) / 8.0
    peak = np.abs(values).max(axis=0)
    return np.divide(error, peak, out=np.zeros_like(error), where=peak > 0.0)


def check_tool_space(robot: Any, method: str) -> tuple[str, ...]:
    """The tool-point coordinates (``'x'``, ``'y'``, ``'z'`` of ``robot.tool_frame``'s origin in the base frame) a
    tool-space target of ``robot`` gives, once ``method`` is known to invert tool space for ``robot``: elastic
    joints on rigid links (seed 002's inverse DAE), and robots with flexible links, rigid joints or extra
    elasticities (the general model's DAE, :mod:`flexrobot_ros.dynamics.dae.tool_space_feedforward`).

    Raises:
        ModelError: naming what tool space does not support: methods other than 'dae' (they invert joint-space
            targets), robots without a ``tool_frame``, robots with other than 2 (planar: the plane's coordinates) or
            3 actuators (x, y, z; planar arms with 3, the Canadarm, are redundant for the tool point).
    """
    if method not in TOOL_METHODS:
        raise ModelError(f"target space 'tool': method {method!r} inverts joint-space targets only; tool-space "
                         f"targets run method {' or '.join(map(repr, TOOL_METHODS))} (seed 002's inverse DAE)")
    if getattr(robot, "tool_frame", None) is None:
        raise ModelError(f"target space 'tool': robot {robot.name!r} has no tool_frame in its flexibility YAML (the "
                         "frame whose origin the targets place)")
    from flexrobot_ros.dynamics.dae.tool_axes import default_tool_axes

    try:
        return default_tool_axes(robot)
    except ModelError as error:
        raise ModelError(f"target space 'tool': robot {robot.name!r} has {robot.n} actuators; tool-space targets "
                         "need 2 on a planar arm (the coordinates of its plane) or 3 (x, y, z)"
                         + (f" ({error})" if robot.n == 3 else "") + ": use target space 'joint'") from None


def tool_feedforward(robot: Any, trajectory: Trajectory, method: str = "dae", *, start_joints: Any,
                     rate_hz: float = 1000.0, check_limits: bool = True) -> FeedforwardResult:
    """Motor references and torques that make ``robot``'s tool point follow ``trajectory`` (the tool-point
    coordinates of :func:`check_tool_space`, in that order [m], base frame; e.g. the spline through the waypoints of
    a tool-space JointTrajectory): :func:`feedforward`'s tool-space inversion of the
    :class:`~flexrobot_ros.dynamics.dae.reference.ToolTrajectory` (method 'dae', a BDF step of 1 / ``rate_hz``
    [Hz]; seed 002's inverse DAE on elastic joints with rigid links, the general model's tool-space feedforward,
    its solver chosen from the zeros, on robots with flexible links or rigid joints), from rest at the start;
    ``start_joints`` (n,) the link positions [rad | m] near the start that choose the configuration (elbow) the
    solution follows. The motion starts at the trajectory's start time, later on a non-minimum-phase robot
    (pre-actuation: ``result.solver_reason`` says by how much). ``check_limits``: the link positions the solution
    takes are checked against the URDF limits as in :func:`feedforward`.

    Raises:
        ModelError: tool space is not supported for ``robot`` or ``method`` (:func:`check_tool_space`).
        TrajectoryError: ``start_joints`` has not n finite values, the trajectory has not one coordinate per tool
            axis, or the solution leaves the joint limits.
        DaeError: the DAE cannot be solved.
    """
    axes = check_tool_space(robot, method)
    start = np.asarray(start_joints, dtype=float).ravel()
    if start.shape != (robot.n,) or not np.all(np.isfinite(start)):
        raise TrajectoryError(f"start joints: {start.tolist()}; expected {robot.n} finite link positions [rad | m] "
                              f"of {list(robot.joint_names)} near the start of the tool-space target")
    if trajectory.n_joints != len(axes):
        raise TrajectoryError(f"tool trajectory has {trajectory.n_joints} coordinates; robot {robot.name!r} takes "
                              f"{list(axes)}")
    return feedforward(robot, ToolTrajectory(trajectory, t0=trajectory.start_time), method, rate_hz=rate_hz,
                       check_limits=check_limits, q_g_guess=start)


def predicted_deformation(robot: Any, result: FeedforwardResult) -> dict[str, np.ndarray]:
    """The deformation ``result`` predicts along its samples, {name: (samples,)}: ``joint_deflection.<joint>``
    = q_m - W q [rad | m] of each elastic joint (motor minus link, motor side: what ``flexrobot feedforward`` prints
    as max|q_m-Wq|); ``q_e.<joint>`` [rad | m] the non-actuated elastic joints (method 'prescribed' on robots with
    extra elasticities); ``eta.<k>`` the elastic coordinates of the flexible links (method 'prescribed': the chain's
    eta, link after link in the ``flexible_links`` order, each link's [eta_y, eta_z]: modal amplitudes [m] or nodal
    displacements [m] and rotations [rad]); ``deflection.<link>.y`` / ``.z`` the tip deflections [m] of
    ``result.deflections`` (the columns of the CSV and the simulator)."""
    rigid = set(getattr(robot, "rigid_joints", ()))
    transmission = np.asarray(robot.transmission, dtype=float)
    out = {f"joint_deflection.{joint}": result.q_m[:, j] - transmission[j] * result.q[:, j]
           for j, joint in enumerate(result.joint_names) if joint not in rigid}
    if result.eta is not None:
        out.update({f"eta.{k}": result.eta[:, k] for k in range(result.eta.shape[1])})
    out.update(result.deflections)
    return out


def _samples(robot: Any, trajectory: Trajectory | TrajectorySamples, rate_hz: float, t: Any,
             check_limits: bool) -> TrajectorySamples:
    if isinstance(trajectory, (str, os.PathLike)):
        trajectory = load_trajectory(trajectory)
    if isinstance(trajectory, TrajectorySamples):
        samples = trajectory
    elif isinstance(trajectory, Trajectory):
        if trajectory.n_joints != robot.n:
            raise TrajectoryError(
                f"trajectory has {trajectory.n_joints} joints; robot {robot.name!r} has {robot.n} "
                f"({', '.join(robot.joint_names)})")
        samples = trajectory.evaluate(t) if t is not None else trajectory.sample(rate_hz)
    else:
        raise TrajectoryError(
            f"trajectory: {type(trajectory).__name__}; expected a Trajectory, TrajectorySamples or the path of a "
            "trajectory YAML")
    for name in ("q", "qd", "qdd", "q3", "q4"):
        value = getattr(samples, name)
        if value.ndim != 2 or value.shape != (samples.t.size, robot.n):
            raise TrajectoryError(f"trajectory {name}: shape {value.shape}; expected ({samples.t.size}, {robot.n})")
        if not np.all(np.isfinite(value)):
            raise TrajectoryError(f"trajectory {name}: non-finite values")
    if check_limits:
        _check_limits(robot, samples)
    return samples


def _check_limits(robot: Any, samples: TrajectorySamples) -> None:
    violation = robot.limit_violation(samples.q, samples.t)
    if violation:
        raise TrajectoryError(violation)
    for j, joint in enumerate(robot.joint_names):
        unit = angle_or_length(robot.joint_types[j])
        speed = np.abs(samples.qd[:, j])
        limit = float(np.asarray(robot.velocity_limits)[j])
        if np.isfinite(limit) and limit > 0.0 and speed.max() > limit:
            k = int(np.argmax(speed))
            warnings.warn(
                f"joint {joint!r}: speed {speed[k]:.4g} {unit}/s at t = {samples.t[k]:.4g} s exceeds the velocity "
                f"limit {limit:.4g} {unit}/s of robot {robot.name!r}", RuntimeWarning, stacklevel=4)


def _result(robot: Any, samples: TrajectorySamples, link: dict[str, np.ndarray], motor: dict[str, np.ndarray],
            method: str, deflections: dict[str, np.ndarray] | None = None) -> FeedforwardResult:
    return FeedforwardResult(t=samples.t, q=samples.q, qd=samples.qd, qdd=samples.qdd, q3=samples.q3,
                             q4=samples.q4, **link, **motor, joint_names=tuple(robot.joint_names), method=method,
                             deflections=deflections or {})
