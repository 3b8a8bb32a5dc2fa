"""The composed elastic-robot model (issue 24) on its two new robots, moberg5_flexlink (elastic joints, an extra
elasticity, link 2 a beam with two assumed modes per direction, seed 002 Table 1) and mixed4 (a rigid joint, elastic
joints with Coulomb friction, an extra elasticity, a flexible link, gravity), against an independent CasADi
Lagrangian of the whole robot written here from the URDF text: homogeneous transforms per joint, rigid bodies'
kinetic energy from their world velocities, the beam as a line of material points p(s) = p_B + R_B R_beam (s e_x +
[0, phi_y(s) eta_y, phi_z(s) eta_z]) with the cantilever eigenfunctions in closed form, the child frame on the
deformed tip (rotated by Rz(phi_y'(l) eta_y) Ry(-phi_z'(l) eta_z), the link model's convention), rotors and springs.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
import scipy.linalg
import yaml
from scipy.optimize import brentq

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.compiled_dynamics import compiled_library
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot
from flexrobot_ros.model import load_robot
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

ROOT = Path(__file__).resolve().parent.parent
ROBOTS = ["moberg5_flexlink", "mixed4"]


def rotation(axis, angle):
    """Rodrigues' rotation about a unit axis (CasADi or float angle)."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = ca.DM([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return ca.DM.eye(3) + ca.sin(angle) * K + (1 - ca.cos(angle)) * (K @ K)


def rpy(values):
    r, p, y = values
    return rotation([0, 0, 1], y) @ rotation([0, 1, 0], p) @ rotation([1, 0, 0], r)


def numbers(text, default="0 0 0"):
    return [float(v) for v in (text or default).split()]


def cantilever(length, count):
    """phi, phi', phi'' (functions of s) of the unit mean-square clamped-free eigenfunctions."""
    roots = [brentq(lambda b: 1 + math.cos(b) * math.cosh(b), (j - 1) * math.pi + 0.1, j * math.pi)
             for j in range(1, count + 1)]
    shapes = []
    for lam in roots:
        sigma = (math.cosh(lam) + math.cos(lam)) / (math.sinh(lam) + math.sin(lam))
        b = lam / length
        shapes.append((lambda s, b=b, sg=sigma: ca.cosh(b * s) - ca.cos(b * s) - sg * (ca.sinh(b * s) - ca.sin(b * s)),
                       lambda s, b=b, sg=sigma: b * (ca.sinh(b * s) + ca.sin(b * s) - sg * (ca.cosh(b * s) - ca.cos(b * s))),
                       lambda s, b=b, sg=sigma: b * b * (ca.cosh(b * s) + ca.cos(b * s) - sg * (ca.sinh(b * s) + ca.sin(b * s)))))
    return shapes


class Lagrangian:
    """T, V_gravity, V_elastic of the whole robot in CasADi, coordinates y = [joints in URDF chain order, eta (per
    beam: y modes then z modes), motor angles of the elastic joints]."""

    def __init__(self, name):
        robot = load_robot(name)
        yaml_doc = __import__("yaml").safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        urdf = ET.parse((ROOT / "config" / yaml_doc["urdf"]).resolve())
        joints = {j.get("name"): j for j in urdf.getroot().findall("joint")}
        links = {link.get("name"): link for link in urdf.getroot().findall("link")}
        chain = [j for j in joints.values() if j.get("type") != "fixed"]
        beams = yaml_doc.get("flexible_links", {})
        extras = {e["joint"]: e for e in yaml_doc.get("extra_elasticities", [])}
        spec = yaml_doc["joints"]
        elastic = [j for j in spec if not spec[j].get("rigid")]
        n_joint = len(chain)
        m = sum(2 * beams[b]["modes"] for b in beams)
        self.size = n_joint + m + len(elastic)
        y, yd = ca.SX.sym("y", self.size), ca.SX.sym("yd", self.size)
        g = ca.DM(yaml_doc["gravity"])
        R, p = ca.DM.eye(3), ca.DM.zeros(3)
        T = V = Vel = 0
        offset = n_joint
        points, weights = np.polynomial.legendre.leggauss(40)

        def velocity(expr):
            return ca.jtimes(expr, y, yd)

        def omega(Rw):
            S = velocity(Rw) @ Rw.T
            return ca.vertcat(S[2, 1], S[0, 2], S[1, 0])

        for i, joint in enumerate(chain):
            origin = joint.find("origin")
            p = p + R @ ca.DM(numbers(origin.get("xyz")))
            R = R @ rpy(numbers(origin.get("rpy")))
            R = R @ rotation(numbers(joint.find("axis").get("xyz")), y[i])
            child = joint.find("child").get("link")
            if child in beams:
                b = beams[child]
                nxt = next(j for j in chain if j.find("parent").get("link") == child)
                end = np.array(numbers(nxt.find("origin").get("xyz")))
                length = float(np.linalg.norm(end))
                ex = end / length
                up = np.array(numbers(joint.find("axis").get("xyz")))
                ez = up - (up @ ex) * ex
                ez /= np.linalg.norm(ez)
                Rb = ca.DM(np.column_stack([ex, np.cross(ez, ex), ez]))
                rho = float(links[child].find("inertial/mass").get("value")) / length
                k = b["modes"]
                eta_y, eta_z = y[offset:offset + k], y[offset + k:offset + 2 * k]
                offset += 2 * k
                shapes = cantilever(length, k)

                def local(s):
                    wy = sum(shapes[j][0](s) * eta_y[j] for j in range(k))
                    wz = sum(shapes[j][0](s) * eta_z[j] for j in range(k))
                    return ca.vertcat(s, wy, wz)

                for s, w in zip((points + 1) * length / 2, weights * length / 2):
                    r = p + R @ Rb @ local(s)
                    v = velocity(r)
                    T += 0.5 * rho * w * ca.dot(v, v)
                    V -= rho * w * ca.dot(g, r)
                    for eta, EI in ((eta_y, b["EI"]["y"]), (eta_z, b["EI"]["z"])):
                        curvature = sum(shapes[j][2](s) * eta[j] for j in range(k))
                        Vel += 0.5 * EI * w * curvature ** 2
                a = sum(shapes[j][1](length) * eta_y[j] for j in range(k))
                c = -sum(shapes[j][1](length) * eta_z[j] for j in range(k))
                bend = Rb @ rotation([0, 0, 1], a) @ rotation([0, 1, 0], c) @ Rb.T
                # the next joint's origin is given from B: B -> undeformed tip -> deformed tip -> back by l e_x
                p = p + R @ (Rb @ local(length) - bend @ ca.DM(length * ex))
                R = R @ bend
                continue
            inertial = links[child].find("inertial")
            if inertial is not None:
                mass = float(inertial.find("mass").get("value"))
                io = inertial.find("origin")
                com = p + R @ ca.DM(numbers(io.get("xyz") if io is not None else None))
                Rc = R @ rpy(numbers(io.get("rpy") if io is not None else None))
                a = inertial.find("inertia").attrib
                I = ca.DM([[float(a["ixx"]), float(a["ixy"]), float(a["ixz"])],
                           [float(a["ixy"]), float(a["iyy"]), float(a["iyz"])],
                           [float(a["ixz"]), float(a["iyz"]), float(a["izz"])]])
                v, w = velocity(com), omega(R)
                T += 0.5 * mass * ca.dot(v, v) + 0.5 * ca.dot(w, Rc @ I @ Rc.T @ w)
                V -= mass * ca.dot(g, com)
        names = [j.get("name") for j in chain]
        for e, joint in enumerate(elastic):
            i, motor = names.index(joint), n_joint + m + e
            k, w, B = (float(robot.stiffness[robot.joint_names.index(joint)]),
                       float(robot.transmission[robot.joint_names.index(joint)]),
                       float(robot.motor_inertia[robot.joint_names.index(joint)]))
            T += 0.5 * B * yd[motor] ** 2
            Vel += 0.5 * k * (w * y[i] - y[motor]) ** 2
        for joint, entry in extras.items():
            Vel += 0.5 * entry["stiffness"] * y[names.index(joint)] ** 2
        M = ca.hessian(T, yd)[0]
        h = ca.jtimes(ca.gradient(T, yd), y, yd) - ca.gradient(T, y) + ca.gradient(V, y)
        self.terms = ca.Function("terms", [y, yd], [M, h, ca.gradient(Vel, y), T, V, Vel])
        # Rayleigh dissipation of the linear dampers: link (viscous), gear (spring), motor, extra; beams added by the
        # caller (modal damping in the beam's own coordinates)
        R = 0
        for j, joint in enumerate(names):
            if joint in spec:
                R += 0.5 * float(spec[joint].get("link_damping", 0.0)) * yd[j] ** 2
        for e, joint in enumerate(elastic):
            i, motor = names.index(joint), n_joint + m + e
            w = float(robot.transmission[robot.joint_names.index(joint)])
            R += 0.5 * float(spec[joint].get("spring_damping", 0.0)) * (w * yd[i] - yd[motor]) ** 2
            R += 0.5 * float(spec[joint].get("motor_damping", 0.0)) * yd[motor] ** 2
        for joint, entry in extras.items():
            R += 0.5 * float(entry.get("damping", 0.0)) * yd[names.index(joint)] ** 2
        self.damping = ca.Function("damping", [], [ca.hessian(R, yd)[0]])
        self.joint_rows = [names.index(j) for j in spec]
        self.motor_rows = {j: n_joint + m + e for e, j in enumerate(elastic)}
        self.hessian = ca.Function("hessian", [y], [ca.hessian(V + Vel, y)[0]])
        self.n_joint, self.m = n_joint, m
        self.controller = yaml_doc["controller"]
        self.joint_names = list(spec)


@pytest.fixture(scope="module", params=ROBOTS)
def case(request):
    return request.param, ElasticRobot(load_robot(request.param)), Lagrangian(request.param)


def test_mass_matrix_bias_and_springs_equal_the_independent_lagrangian(case):
    """M(y), h(y, y_dot) and f_el(y) at random states equal the CasADi Lagrangian's to 1e-10 (relative to norm)."""
    name, model, reference = case
    assert model.size == reference.size
    rng = np.random.default_rng(24)
    for _ in range(5):
        y = rng.uniform(-1.0, 1.0, model.size)
        y[model.eta] *= 0.05  # beam amplitudes [m]
        y_dot = rng.uniform(-2.0, 2.0, model.size)
        M_ref, h_ref, f_ref, *_ = (np.array(v) for v in reference.terms(y, y_dot))
        M, h = model.inertia_and_bias(y, y_dot)
        f = model.elastic_force(y)
        assert np.max(np.abs(M - M_ref)) <= 1e-10 * np.max(np.abs(M_ref)), name
        assert np.max(np.abs(h - h_ref.ravel())) <= 1e-10 * np.max(np.abs(h_ref)), name
        assert np.max(np.abs(f - f_ref.ravel())) <= 1e-10 * np.max(np.abs(f_ref)), name
        kinetic, elastic, gravity = model.energy(y, y_dot)
        T, V, Vel = (float(v) for v in reference.terms(y, y_dot)[3:])
        assert kinetic == pytest.approx(T, rel=1e-10) and elastic == pytest.approx(Vel, rel=1e-10)
        assert gravity == pytest.approx(V, rel=1e-10, abs=1e-10 * max(1.0, abs(T)))


def test_locked_joint_modes_equal_the_linearized_lagrangian(case):
    """Modes with the joints and motors braked (free: q_e and eta) equal the undamped/damped eigenvalues of the
    Lagrangian linearized at its own static equilibrium (Newton on its gradient) to 1e-8."""
    name, model, reference = case
    q = np.array([0.3, -0.5]) if model.n == 2 else np.array([0.2, 0.4, -0.6])
    free = np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)
    y = model.coordinates(q)
    zero = np.zeros(model.size)
    for _ in range(30):  # the Lagrangian's own equilibrium of the free coordinates
        _, h, f, *_ = (np.array(v) for v in reference.terms(y, zero))
        K = np.array(reference.hessian(y))
        step = np.linalg.solve(K[np.ix_(free, free)], -(h.ravel() + f.ravel())[free])
        y[free] += step
    M = np.array(reference.terms(y, zero)[0])[np.ix_(free, free)]
    K = np.array(reference.hessian(y))[np.ix_(free, free)]
    D = np.zeros_like(K)
    D[:model.ne, :model.ne] = np.diag(model.ext.elastic_damping)
    beams = slice(model.ne, len(free))
    D[beams, beams] = model.beam_damping
    A = np.block([[np.zeros_like(K), np.eye(len(free))], [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    values = np.linalg.eigvals(A)
    values = values[values.imag > 0]
    expected = np.sort(np.abs(values) / (2 * np.pi))
    result = elastic_robot_modes(model, q, locked_joints=True)
    assert np.allclose(np.sort(result.frequencies_hz), expected, rtol=1e-8, atol=0), (name, result.frequencies_hz,
                                                                                   expected)
    undamped = np.sqrt(np.sort(scipy.linalg.eigh(K, M, eigvals_only=True))) / (2 * np.pi)
    assert undamped[0] > 0.5


@pytest.fixture(scope="module")
def plants():
    """Per robot: the CasADi-path plant and the compiled one (generated C compiled at each function's first call,
    in the package's code cache, test/conftest.py: the energy test compiles only the state derivative)."""
    return {name: (ElasticRobotPlant(load_robot(name), path="casadi"),
                   ElasticRobotPlant(load_robot(name), compiled=True, compile_on_first_use=True)) for name in ROBOTS}


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("forced", [False, True], ids=["free", "forced"])
def test_energy_balance_free_and_forced(plants, name, forced):
    """E(5 s) - E(0) = work_in - dissipated to 1e-8 of the energy exchanged (the issue's 5 s), from a moving start:
    free (the holding torques only) and forced (plus 1.5 Hz sinusoidal motor torques). Coulomb friction, gear, extra
    and modal dampers all dissipate; the dissipated power and the input power are two extra states of the plant.
    Integrated by SUNDIALS CVODES (Adams, functional iteration, rtol 1e-12, atol 1e-12) on the plant's compiled state
    derivative (about 1e5 calls in C for 5 s of mixed4); the energies are the model's, checked against the
    independent Lagrangian above. Measured: it closes to 3.4e-10 (moberg5_flexlink) and 1.9e-12 (mixed4) of the
    energy exchanged."""
    _, plant = plants[name]
    n = plant.n
    q = np.array([0.3, -0.5]) if n == 2 else np.array([0.2, 0.4, -0.6])
    x0 = plant.state(q, plant.static_motor_position(q), qd=0.5 * np.ones(n))
    hold = plant.model.holding_torque(plant.model.static_equilibrium(q))
    amplitude = (2000.0 if n == 2 else 3.0) * float(forced)
    function = plant.derivative_function
    plant.derivative(x0, hold)  # compiles the state derivative into the code cache
    library = compiled_library(function, function.size1_in(0), function.size1_out(0))
    assert library is not None, "no C compiler"
    derivative = ca.external(function.name(), str(library), {"enable_fd": True})
    x, t = ca.MX.sym("x", len(x0)), ca.MX.sym("t")
    tau = ca.DM(hold) + amplitude * ca.sin(2 * np.pi * 1.5 * t) * ca.DM.ones(n)
    ode = derivative(ca.vertcat(x, tau, ca.DM.zeros(plant.model.size), 1.0))
    integrator = ca.integrator("energy", "cvodes", {"x": x, "t": t, "ode": ode}, 0.0, 5.0, {
        "reltol": 1e-12, "abstol": 1e-12, "max_num_steps": 10 ** 7, "linear_multistep_method": "adams",
        "nonlinear_solver_iteration": "functional"})
    x_final = np.array(integrator(x0=x0)["xf"]).ravel()
    initial = plant.energy(x0).total
    final = plant.energy(x_final)
    exchanged = max(abs(final.work_in), abs(final.dissipated), abs(final.total - initial))
    assert final.dissipated > 0 and exchanged > 1e-3
    assert abs(final.balance_residual(initial)) <= 1e-8 * exchanged, (name, final, initial)


def relative(value, reference):
    """max |value - reference| / max |reference|."""
    return float(np.max(np.abs(np.asarray(value) - reference)) / np.max(np.abs(reference)))


@pytest.mark.parametrize("name", ROBOTS)
def test_compiled_path_equals_the_casadi_path(plants, name):
    """The generated C of the plant (state derivative, Coulomb slope block, and on moberg5_flexlink the Jacobian
    pieces) unpacks to the values of CasADi's own evaluation of the same functions to 1e-12 relative, at random
    moving states with random motor torques, a tool wrench and the torque law's slope (the Coulomb slope was once
    packed by nonzeros and only a long compiled run showed it). mixed4's Jacobian (its C takes 20-40 s to compile)
    is left to bench/elastic_robot.py; the unpacking code is the same for both robots."""
    symbolic, compiled = plants[name]
    rng = np.random.default_rng(12)
    n = symbolic.n
    for _ in range(3):
        q = rng.uniform(-0.5, 0.5, n)
        x = symbolic.state(q, symbolic.static_motor_position(q) + rng.uniform(-0.01, 0.01, n),
                           qd=rng.uniform(-1.0, 1.0, n), qd_m=rng.uniform(-1.0, 1.0, n))
        x[symbolic.layout["velocities"]] += rng.uniform(-0.5, 0.5, symbolic.layout["velocities"].stop
                                                        - symbolic.layout["velocities"].start)
        tau = rng.uniform(-5.0, 5.0, n)
        wrench = [(symbolic.frame_id(symbolic.model.model.frames[-1].name), rng.uniform(-5.0, 5.0, 6))]
        for wrenches in ((), wrench):
            reference = symbolic.derivative(x, tau, wrenches)
            assert relative(compiled.derivative(x, tau, wrenches), reference) <= 1e-12, name
        if symbolic.model.coulomb:
            reference = symbolic.coulomb_damping(x)
            assert relative(compiled.coulomb_damping(x), reference) <= 1e-12, name
        else:
            assert compiled.coulomb_damping(x) is None
        if name == "moberg5_flexlink":
            slope = rng.uniform(-1.0, 1.0, (n, len(x)))
            for coulomb in (True, False):
                reference = symbolic.jacobian(x, tau, slope, coulomb=coulomb)
                assert relative(compiled.jacobian(x, tau, slope, coulomb=coulomb), reference) <= 1e-12, name


@pytest.mark.parametrize("name", ROBOTS)
def test_closed_loop_pd_modes_equal_the_linearized_lagrangian(name):
    """Closed-loop modes under the PD law tau = K_P (q_m^d - q_m) - K_D qd_m (on the motor of an elastic joint, on
    the joint of a rigid one; the YAML's gains) equal the Lagrangian's linearized at its own equilibrium with the
    joints at q_d (Newton on [q_e, eta, q_m] over the rows [q_e, eta, elastic joints]), its Rayleigh dissipation
    plus the beams' modal damping and K_D, to 1e-8 (frequencies relative, damping ratios absolute)."""
    model, reference = ElasticRobot(load_robot(name)), Lagrangian(name)
    q = np.array([0.3, -0.5]) if model.n == 2 else np.array([0.2, 0.4, -0.6])
    free = np.concatenate([model.qe_index, np.arange(model.eta.start, model.eta.stop)]).astype(int)
    elastic = [j for j in reference.joint_names if j in reference.motor_rows]
    unknowns = np.concatenate([free, [reference.motor_rows[j] for j in elastic]]).astype(int)
    rows = np.concatenate([free, [reference.joint_rows[reference.joint_names.index(j)] for j in elastic]]).astype(int)
    y = model.coordinates(q)
    zero = np.zeros(model.size)
    for _ in range(30):
        _, h, f, *_ = (np.array(v) for v in reference.terms(y, zero))
        K = np.array(reference.hessian(y))
        y[unknowns] += np.linalg.solve(K[np.ix_(rows, unknowns)], -(h.ravel() + f.ravel())[rows])
    M = np.array(reference.terms(y, zero)[0])
    K = np.array(reference.hessian(y))
    D = np.array(reference.damping.call([])[0])
    D[model.eta, model.eta] += model.beam_damping
    kp, kd = (np.broadcast_to(np.asarray(reference.controller[k], dtype=float), (model.n,)) for k in ("kp", "kd"))
    for j, joint in enumerate(reference.joint_names):
        row = reference.motor_rows.get(joint, reference.joint_rows[j])
        K[row, row] += kp[j]
        D[row, row] += kd[j]
    size = model.size
    A = np.block([[np.zeros((size, size)), np.eye(size)], [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    values = np.linalg.eigvals(A)
    values = values[values.imag > 0]
    order = np.argsort(np.abs(values))
    expected_hz, expected_zeta = np.abs(values[order]) / (2 * np.pi), -values[order].real / np.abs(values[order])
    result = elastic_robot_modes(model, q)
    under = ~result.overdamped
    got = np.argsort(result.frequencies_hz[under])
    assert under.sum() == len(values), (name, result.frequencies_hz, expected_hz)
    assert np.allclose(result.frequencies_hz[under][got], expected_hz, rtol=1e-8, atol=0), name
    assert np.allclose(result.damping_ratios[under][got], expected_zeta, rtol=0, atol=1e-8), name


@pytest.mark.parametrize("name", ROBOTS)
def test_casadi_path_equals_the_numeric_path(plants, name):
    """The CasADi path (symbolic M, h, forward dynamics, plant state derivative) equals the numeric DeNOC path to
    1e-10 (relative to the largest entry) at random moving states; its exact Jacobian equals central differences
    of the numeric derivative to 1e-5 (their truncation error, step 1e-7 relative). The CasADi-path plant is the
    module's (``plants``), built once."""
    plant = plants[name][0]
    numeric = ElasticRobotPlant(plant.robot, path="numeric")
    model, functions = plant.model, plant.model.functions
    rng = np.random.default_rng(7)
    for _ in range(3):
        y = rng.uniform(-1.0, 1.0, model.size)
        y[model.eta] *= 0.05
        y_dot, u = rng.uniform(-2.0, 2.0, model.size), rng.uniform(-5.0, 5.0, model.n)
        M, h = model.inertia_and_bias(y, y_dot)
        assert np.max(np.abs(np.array(functions.inertia(y)) - M)) <= 1e-10 * np.max(np.abs(M))
        assert np.max(np.abs(np.array(functions.bias(y, y_dot)).ravel() - h)) <= 1e-10 * np.max(np.abs(h))
        a = model.forward_dynamics(y, y_dot, u)
        b = np.array(functions.forward_dynamics(y, y_dot, u, np.zeros(model.size), 1.0)).ravel()
        assert np.max(np.abs(a - b)) <= 1e-10 * np.max(np.abs(a))
        q = rng.uniform(-0.5, 0.5, model.n)
        x = plant.state(q, plant.static_motor_position(q), qd=rng.uniform(-1.0, 1.0, model.n))
        slope = rng.uniform(-1.0, 1.0, (model.n, len(x)))
        reference = numeric.derivative(x, u)
        assert np.max(np.abs(plant.derivative(x, u) - reference)) <= 1e-10 * np.max(np.abs(reference))
        for coulomb in (True, False):
            J = numeric.jacobian(x, u, slope, coulomb=coulomb)
            assert np.max(np.abs(plant.jacobian(x, u, slope, coulomb=coulomb) - J)) <= 1e-5 * np.max(np.abs(J))


@pytest.mark.parametrize("change, message", [
    ("roots", r"mixed4_variant.yaml: flexible_links.link2.roots: integrated roots are not composed .*use roots: "
              r"explicit"),
    ("after", r"mixed4_variant.yaml: flexible_links.link2: an extra elasticity with side: after at the joint of a "
              r"flexible link is not composed .*use side: before"),
    ("before", None)])
def test_uncomposed_combinations_are_refused_at_load_time(tmp_path, change, message):
    """What the composed model cannot do yet is refused when the YAML is loaded, in one line naming the file, the
    field and the alternative; the same elasticity inserted with side: before loads."""
    document = yaml.safe_load((ROOT / "config" / "mixed4.yaml").read_text())
    document["urdf"] = str(ROOT / "urdf" / "mixed4.urdf")
    if change == "roots":
        document["flexible_links"]["link2"]["roots"] = "integrated"
    else:
        document["extra_elasticities"].append({"joint": "joint2", "axis": "x", "stiffness": 1e5, "side": change})
    path = tmp_path / "mixed4_variant.yaml"
    path.write_text(yaml.safe_dump(document))
    if message is None:
        assert load_robot(path).extended.ne == 2
        return
    with pytest.raises(ModelError, match=message) as error:
        load_robot(path)
    assert "\n" not in str(error.value)
