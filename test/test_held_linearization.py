"""The one linearization entry (flexrobot_ros.modal.linearize) for any robot.

Checks: for elastic joints on rigid links it takes seed 000's analytic evaluation (eqs. 2.3, 2.9-2.12, the fast path)
and that evaluation equals the composed model's general linearization (ElasticRobot.linearize: CRBA, the force
slopes of its CasADi force function, pinocchio's gravity derivatives) to round-off, which in turn is checked here
against central differences of the composed model's own forward dynamics at rest; a constant wrench is refused by
name for a robot with extra elasticities; a modal map of kr90_3dof through the entry equals the pose-by-pose modes;
the modal monitor's coordinates for a plain robot are [q; q_m].
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.errors import ModalError
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot, elastic_joints_only
from flexrobot_ros.modal.elastic_robot_linearization import linearize_elastic_robot
from flexrobot_ros.modal import linearize, linearize_batch, modal_analysis, modal_coordinates
from flexrobot_ros.modal.linearization import linearize_elastic_joints
from flexrobot_ros.modal.maps import modal_map
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation.impact_experiment import thesis_configuration

PLAIN = (("scompi", True, thesis_configuration(8)), ("lwr4", False, np.array([0.3, 0.8, -0.2, -1.1, 0.4, 0.6, 0.1])),
         ("planar_2r", False, np.array([0.4, -0.9])))


@pytest.mark.parametrize("name,tool,q", PLAIN, ids=[case[0] for case in PLAIN])
def test_plain_robots_take_seed_000_and_it_is_the_composed_linearization(name, tool, q):
    robot = load_robot(name, tool=tool)
    assert elastic_joints_only(robot)
    fast = linearize(robot, q)
    reference = linearize_elastic_joints(robot, q)
    for field in ("q_m", "M_bar", "D_bar", "K_bar", "K_G"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(reference, field), err_msg=f"{name}: {field}")
    model = ElasticRobot(robot)
    general = linearize_elastic_robot(model, q)
    for field in ("M_bar", "D_bar", "K_bar"):
        ours, theirs = getattr(fast, field), getattr(general, field)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * np.abs(theirs).max(), err_msg=f"{name}: {field}")
    np.testing.assert_allclose(fast.q_m, general.q_m, rtol=1e-12, atol=1e-14)
    # the composed model's stiffness against central differences of its rest force h + f_el - S (K_P (q_m^d - q_m))
    y0, step = model.static_equilibrium(q), 1e-6
    numeric = np.empty((model.size, model.size))
    for k in range(model.size):
        e = np.zeros(model.size)
        e[k] = step
        numeric[:, k] = (model.rest_force(y0 + e)[0] - model.rest_force(y0 - e)[0]) / (2 * step)
    numeric[model.motor_index, model.motor_index] += robot.kp
    np.testing.assert_allclose(fast.K_bar, numeric, rtol=0, atol=1e-6 * np.abs(numeric).max(), err_msg=name)
    assert modal_coordinates(robot) == [f"{side}.{j}" for side in ("q", "q_m") for j in robot.joint_names]


def test_a_wrench_is_refused_by_name_beyond_elastic_joints():
    robot = load_robot("kr90_3dof")
    with pytest.raises(ModalError, match=r"robot kr90_3dof: wrench: .* elastic joints on rigid links only"):
        linearize(robot, np.radians([0.0, 55.0, -100.5]), wrench=[0.0, 0.0, -100.0, 0.0, 0.0, 0.0])


def test_a_modal_map_of_the_composed_robot_is_its_modes_pose_by_pose():
    """kr90_3dof (extra elasticities) along three poses: the map's frequencies [Hz] and damping ratios equal
    modal_analysis at each pose (same linearization, batched eigenvalues)."""
    robot = load_robot("kr90_3dof")
    poses = np.radians([[0.0, 55.0, -100.5], [10.0, 40.0, -90.0], [-20.0, 60.0, -110.0]])
    batch = linearize_batch(robot, poses)
    assert batch.M_bar.shape == (3, 12, 12)
    result = modal_map(robot, poses)
    for i, q in enumerate(poses):
        modes = modal_analysis(robot, q)
        count = modes.n_modes
        np.testing.assert_allclose(result.frequencies_hz[i, :count], modes.frequencies_hz, rtol=1e-9)
        np.testing.assert_allclose(result.damping_ratios[i, :count], modes.damping_ratios, rtol=0, atol=1e-9)


def test_modal_map_command_serves_a_robot_with_extra_elasticities(tmp_path, capsys):
    """``flexrobot modal-map kr90_3dof --grid ...`` (formerly refused): 12 modes per pose, and the reported
    frequency range [Hz] is that of modal_analysis over the grid's poses."""
    import json

    from flexrobot_ros.cli import main

    assert main(["modal-map", "kr90_3dof", "--grid", "joint2:0.5:1.0:3", "--grid", "joint3:-1.8:-1.6:2", "--base",
                 "0,0.96,-1.75", "--out", str(tmp_path / "map.npz"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["maps"][0]
    robot = load_robot("kr90_3dof")
    frequencies = np.concatenate([modal_analysis(robot, [0.0, a, b]).frequencies_hz for a in np.linspace(0.5, 1.0, 3)
                                  for b in np.linspace(-1.8, -1.6, 2)])
    assert summary["points"] == 6 and summary["modes"] == 12
    np.testing.assert_allclose(summary["frequency_range_hz"], [frequencies.min(), frequencies.max()], rtol=1e-12)


def test_joint_identification_refuses_a_robot_the_joint_model_does_not_hold():
    """k, d_f, d_fm of kr90_3dof (extra elasticities): refused by name before any solve (its modes are the composed
    model's, 2n + ne of them, which the seed-000 affine model cannot hold); the data are the plain KR90's."""
    from flexrobot_ros.errors import IdentificationError
    from flexrobot_ros.identification import identify_joint_parameters
    from flexrobot_ros.identification.modal_data import modal_data_from_model

    data = modal_data_from_model(load_robot("kr90"), [np.radians([0.0, 55.0, -100.5])])
    with pytest.raises(IdentificationError, match=r"robot kr90_3dof: k, d_f, d_fm .* extra elasticities"):
        identify_joint_parameters(load_robot("kr90_3dof"), data, starts=1)
