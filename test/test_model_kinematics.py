"""DH -> URDF generation and the shipped robots' kinematics and rigid-body dynamics.

Every reference here is computed independently of pinocchio and of flexrobot_ros.model.dh: a DH product written
out in this file, and a Lagrangian M(q) qdd + C(q, qd) qd + g(q) built from the CoM Jacobians of that DH product,
differentiated by complex steps (exact to machine precision).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from flexrobot_ros.model import load_robot, share_directory
from flexrobot_ros.model.dh import dh_to_urdf, load_dh_spec, parse_dh_spec
from flexrobot_ros.commands.dh2urdf import header_of

DH_SPECS = sorted((share_directory() / "urdf").glob("*.dh.yaml"))


def dh_matrix(theta, d, a, alpha):
    """Standard DH transform Rz(theta) Tz(d) Tx(a) Rx(alpha); works on complex numbers (complex-step tests)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    zero, one = 0.0 * ct, 1.0 + 0.0 * ct
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [zero, sa + zero, ca + zero, d + zero],
                     [zero, zero, zero, one]])


def dh_frames(rows, q):
    """Frames 0..n of a DH table (list of dicts) at q; revolute adds q to theta, prismatic to d."""
    frames = [np.eye(4, dtype=np.result_type(q, float))]
    for row, qi in zip(rows, q):
        revolute = row["type"] == "revolute"
        theta = row.get("theta", 0.0) + (qi if revolute else 0.0)
        d = row.get("d", 0.0) + (0.0 if revolute else qi)
        frames.append(frames[-1] @ dh_matrix(theta, d, row.get("a", 0.0), row.get("alpha", 0.0)))
    return frames


def random_dh_rows(rng, n):
    rows = []
    for _ in range(n):
        inertia_root = rng.normal(size=(3, 3)) * 0.2
        inertia = inertia_root @ inertia_root.T + 0.01 * np.eye(3)
        rows.append({
            "type": "prismatic" if rng.random() < 0.3 else "revolute",
            "theta": float(rng.uniform(-np.pi, np.pi)), "d": float(rng.uniform(-0.5, 0.5)),
            "a": float(rng.uniform(-0.5, 0.5)), "alpha": float(rng.choice([0, np.pi / 2, -np.pi / 2, rng.uniform(-3, 3)])),
            "mass": float(rng.uniform(0.5, 5.0)), "com": rng.uniform(-0.2, 0.2, 3).tolist(),
            "inertia": [inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2], inertia[2, 2]],
        })
    return rows


def pinocchio_model(rows, name="random"):
    return pin.buildModelFromXML(dh_to_urdf(parse_dh_spec({"name": name, "links": rows})))


@pytest.mark.parametrize("spec_path", DH_SPECS, ids=lambda p: p.name)
def test_shipped_urdf_is_generated_from_its_dh_spec(spec_path: Path) -> None:
    """The shipped URDF is exactly what the generator makes of the shipped DH spec (no hand edits, no drift)."""
    urdf_path = spec_path.with_name(spec_path.name.replace(".dh.yaml", ".urdf"))
    assert urdf_path.read_text() == dh_to_urdf(load_dh_spec(spec_path), header=header_of(spec_path))


@pytest.mark.parametrize("spec_path", DH_SPECS, ids=lambda p: p.name)
def test_shipped_forward_kinematics_equals_dh_product(spec_path: Path) -> None:
    """Issue 2: FK of every DH-generated URDF equals an independent DH product (1e-12) at random poses."""
    rows = yaml.safe_load(spec_path.read_text())["links"]
    model = pin.buildModelFromUrdf(str(spec_path.with_name(spec_path.name.replace(".dh.yaml", ".urdf"))))
    data = model.createData()
    rng = np.random.default_rng(2)
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, model.nq)
        pin.framesForwardKinematics(model, data, q)
        for i, expected in enumerate(dh_frames(rows, q)):
            placement = data.oMf[model.getFrameId(f"frame_{i}")].homogeneous
            np.testing.assert_allclose(placement, expected, atol=1e-12, rtol=0)


def test_random_chains_forward_kinematics_equals_dh_product() -> None:
    """Random DH chains mixing revolute and prismatic joints and arbitrary twists: URDF FK == DH product."""
    rng = np.random.default_rng(7)
    for trial in range(10):
        rows = random_dh_rows(rng, int(rng.integers(1, 8)))
        model = pinocchio_model(rows)
        data = model.createData()
        q = rng.uniform(-2, 2, model.nq)
        pin.framesForwardKinematics(model, data, q)
        for i, expected in enumerate(dh_frames(rows, q)):
            np.testing.assert_allclose(data.oMf[model.getFrameId(f"frame_{i}")].homogeneous, expected,
                                       atol=1e-12, rtol=0, err_msg=f"trial {trial} frame {i}")


# --------------------------------------------------------------------------- independent Lagrangian dynamics
def lagrangian_terms(rows, gravity, q, extra_point_mass=None):
    """M(q) and potential energy from the DH product; complex-safe so complex steps differentiate them exactly.

    Link i's CoM and inertia are given in DH frame i (the papers' convention). ``extra_point_mass`` = (m, i) adds a
    point mass at the origin of frame i.
    """
    n = len(rows)
    frames = dh_frames(rows, q)
    mass_matrix = np.zeros((n, n), dtype=q.dtype)
    potential = 0.0 * q[0]
    bodies = [(row["mass"], np.array(row["com"]), inertia_tensor(row["inertia"]), i + 1) for i, row in enumerate(rows)]
    if extra_point_mass:
        bodies.append((extra_point_mass[0], np.zeros(3), np.zeros((3, 3)), extra_point_mass[1]))
    for mass, com, inertia, i in bodies:
        position = frames[i][:3, :3] @ com + frames[i][:3, 3]
        jv = np.zeros((3, n), dtype=q.dtype)
        jw = np.zeros((3, n), dtype=q.dtype)
        for j in range(i):
            z, origin = frames[j][:3, 2], frames[j][:3, 3]
            if rows[j]["type"] == "revolute":
                jv[:, j] = np.cross(z, position - origin)
                jw[:, j] = z
            else:
                jv[:, j] = z
        rotation = frames[i][:3, :3]
        world_inertia = rotation @ inertia @ rotation.T
        mass_matrix = mass_matrix + mass * jv.T @ jv + jw.T @ world_inertia @ jw
        potential = potential - mass * np.dot(gravity, position)
    return mass_matrix, potential


def inertia_tensor(six):
    ixx, ixy, ixz, iyy, iyz, izz = six
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def lagrangian_inverse_dynamics(rows, gravity, q, qd, qdd, extra_point_mass=None):
    """tau = M qdd + (Mdot qd - 1/2 d/dq (qd^T M qd)) + dP/dq, derivatives by complex step (h = 1e-30)."""
    h, n = 1e-30, len(q)
    mass_matrix, _ = lagrangian_terms(rows, gravity, q.astype(complex), extra_point_mass)
    mdot = lagrangian_terms(rows, gravity, q + 1j * h * qd, extra_point_mass)[0].imag / h
    coriolis, gravity_torque = mdot @ qd, np.zeros(n)
    for k in range(n):
        step = q.astype(complex)
        step[k] += 1j * h
        mk, pk = lagrangian_terms(rows, gravity, step, extra_point_mass)
        coriolis[k] -= 0.5 * qd @ (mk.imag / h) @ qd
        gravity_torque[k] = pk.imag / h
    return mass_matrix.real @ qdd + coriolis + gravity_torque


@pytest.mark.parametrize("tool", [False, True], ids=["no_tool", "tool_4kg"])
def test_scompi_rnea_equals_independent_lagrangian(tool: bool) -> None:
    """Issue 2: pinocchio RNEA on the Scompi == M qdd + C qd + g from CoM Jacobians (1e-8 N m), prismatic joint 1,
    gravity -9.81 m/s^2 along x0 (ERRATA), with and without the 4 kg tool at O_6."""
    robot = load_robot("scompi", tool=tool)
    rows = yaml.safe_load((share_directory() / "urdf" / "scompi.dh.yaml").read_text())["links"]
    data = robot.create_data()
    np.testing.assert_array_equal(robot.gravity, [-9.81, 0.0, 0.0])
    rng = np.random.default_rng(11)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.n))
        expected = lagrangian_inverse_dynamics(rows, robot.gravity, q, qd, qdd, (4.0, 6) if tool else None)
        np.testing.assert_allclose(pin.rnea(robot.model, data, q, qd, qdd), expected, atol=1e-8, rtol=0)


def test_random_chain_rnea_equals_independent_lagrangian() -> None:
    """The generator's inertia placement is right for arbitrary chains, not just the shipped ones."""
    rng = np.random.default_rng(5)
    gravity = np.array([0.3, -2.0, -9.81])
    for _ in range(5):
        rows = random_dh_rows(rng, 5)
        model = pinocchio_model(rows)
        model.gravity = pin.Motion(gravity, np.zeros(3))
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nq))
        expected = lagrangian_inverse_dynamics(rows, gravity, q, qd, qdd)
        np.testing.assert_allclose(pin.rnea(model, model.createData(), q, qd, qdd), expected, atol=1e-9, rtol=0)


def craig_matrix(alpha, a, theta, d):
    """Modified (Craig) DH transform Rx(alpha) Tx(a) Rz(theta) Tz(d), written out from its factors."""
    rx = np.eye(4)
    rx[1:3, 1:3] = [[np.cos(alpha), -np.sin(alpha)], [np.sin(alpha), np.cos(alpha)]]
    tx = np.eye(4)
    tx[0, 3] = a
    rz = np.eye(4)
    rz[:2, :2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
    tz = np.eye(4)
    tz[2, 3] = d
    return rx @ tx @ rz @ tz


def test_modified_dh_chains_forward_kinematics_and_inertia() -> None:
    """`convention: modified` (Craig): URDF FK equals the product of Rx Tx Rz Tz, and the link CoMs (given in frame i)
    are placed right: pinocchio's centre of mass equals the mass-weighted CoMs mapped through the Craig frames."""
    rng = np.random.default_rng(19)
    for _ in range(6):
        rows = random_dh_rows(rng, int(rng.integers(1, 7)))
        model = pin.buildModelFromXML(dh_to_urdf(parse_dh_spec({"name": "craig", "convention": "modified",
                                                                "links": rows})))
        data = model.createData()
        q = rng.uniform(-2, 2, model.nq)
        pin.framesForwardKinematics(model, data, q)
        expected, weighted = np.eye(4), np.zeros(3)
        for i, row in enumerate(rows, start=1):
            revolute = row["type"] == "revolute"
            expected = expected @ craig_matrix(row["alpha"], row["a"], row["theta"] + (q[i - 1] if revolute else 0),
                                               row["d"] + (0 if revolute else q[i - 1]))
            np.testing.assert_allclose(data.oMf[model.getFrameId(f"frame_{i}")].homogeneous, expected, atol=1e-12)
            weighted += row["mass"] * (expected[:3, :3] @ row["com"] + expected[:3, 3])
        total = sum(row["mass"] for row in rows)
        np.testing.assert_allclose(pin.centerOfMass(model, data, q), weighted / total, atol=1e-12)


def test_dh_spec_rejects_unknown_convention() -> None:
    from flexrobot_ros.errors import ModelError
    with pytest.raises(ModelError, match="convention"):
        parse_dh_spec({"name": "x", "convention": "khalil", "links": [{"type": "revolute"}]})
