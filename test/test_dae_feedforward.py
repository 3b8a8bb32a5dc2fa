"""The 'dae' feedforward method through the package's front doors: feedforward(), `flexrobot feedforward` and the
feedforward node's parameter choices (seed 002 as a third method beside EJNEA/SDRNEA).

Link-space reference (a poly9 of the thesis, C^4) on moberg5: the motor positions the dae method returns make the
link trajectory an exact solution of the link equations of the extended model (residual of eq. 17a-b, evaluated
with pinocchio's RNEA independently of the CasADi model the solver uses) up to the BDF differentiation error.
"""
from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import yaml

from flexrobot_ros.cli import main
from flexrobot_ros.dynamics import feedforward
from flexrobot_ros.dynamics.feedforward import METHODS
from flexrobot_ros.dynamics.trajectory import Poly9Trajectory
from flexrobot_ros.model import load_robot
from flexrobot_ros.nodes.feedforward_node import PARAMETERS


def test_dae_is_a_feedforward_method_everywhere() -> None:
    assert "dae" in METHODS
    method = next(p for p in PARAMETERS if p.name == "method")
    assert "dae" in method.choices


def test_link_space_dae_feedforward_satisfies_the_extended_link_equations() -> None:
    """Eq. 1a-c with pinocchio: M(q_a) qdd_a + c + K(q - q_m) + D_g(qd - qd_m) = 0 on the actuated rows and
    K_e q_e + D_e qd_e + (M qdd + c)_e = 0 on the elastic row, at the returned samples (central differences of the
    returned q_a for the rates; 1 % of the peak gear torque)."""
    robot = load_robot("moberg5")
    trajectory = Poly9Trajectory([0.2, 1.0], [0.7, 1.4], 0.6)
    result = feedforward(robot, trajectory, "dae", rate_hz=1000.0)
    assert result.method == "dae" and result.q_m.shape == (result.t.size, 2)
    held = trajectory.evaluate(np.minimum(result.t, trajectory.end_time)).q  # the reference rests after its end
    np.testing.assert_allclose(result.q, held, atol=1e-9)  # Gamma = q_g exactly
    from flexrobot_ros.dynamics.dae.dae_feedforward import dae_feedforward

    solution = dae_feedforward(robot, trajectory, h=1e-3).solution
    ext, data = robot.extended, robot.extended.create_data()
    t, q_a = solution.t, solution.q_a
    v_a, a_a = np.gradient(q_a, t, axis=0), np.gradient(np.gradient(q_a, t, axis=0), t, axis=0)
    v_m = np.gradient(solution.q_m, t, axis=0)
    peak = np.abs(result.tau).max()
    for i in range(5, t.size - 5, 25):
        rigid = pin.rnea(ext.model, data, q_a[i], v_a[i], a_a[i])
        gear = robot.stiffness * (q_a[i, :2] - solution.q_m[i]) + ext.spring_damping * (v_a[i, :2] - v_m[i])
        spring = ext.elastic_stiffness * q_a[i, 2:] + ext.elastic_damping * v_a[i, 2:]
        residual = rigid + np.concatenate([gear, spring])
        assert np.abs(residual).max() < 0.01 * peak, (t[i], residual)


def test_cli_feedforward_method_dae(tmp_path, capsys) -> None:
    spec = tmp_path / "move.yaml"
    spec.write_text(yaml.safe_dump({"profile": "poly9", "duration": 0.5, "q0": [0.2, 1.0], "qf": [0.6, 1.3]}))
    out = tmp_path / "ff.csv"
    assert main(["feedforward", "moberg5", "--method", "dae", "--trajectory", str(spec), "--rate", "500",
                 "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "dae" and len(payload["t"]) == len(payload["tau_m"])
    assert np.all(np.isfinite(payload["tau_m"])) and out.is_file()


def test_cli_refuses_a_reference_not_smooth_enough(tmp_path, capsys) -> None:
    """Section 9.1: a waypoint spline whose end velocities are not zero (two positions only) leaves rest with a
    jump in velocity: C^0 against the C^4 the index needs -> a clear error, exit code 1."""
    spec = tmp_path / "move.yaml"
    spec.write_text(yaml.safe_dump({"degree": 5, "waypoints": [{"t": 0.0, "q": [0.2, 1.0]},
                                                                {"t": 0.5, "q": [0.6, 1.3]}]}))
    code = main(["feedforward", "moberg5", "--method", "dae", "--trajectory", str(spec),
                 "--out", str(tmp_path / "x.csv")])
    assert code != 0
    assert "C^" in capsys.readouterr().err
