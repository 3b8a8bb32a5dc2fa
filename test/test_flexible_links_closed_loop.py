"""Closed loop (issue 13): the modal monitor's modes of the held Canadarm (the composed model's linearization, joint
PD + flexible links) match the simulator's free decay after an impact, identified by the project's OMA (SSI-cov on the
joint angles and the links' tip deflections), within 0.5 %. The simulator runs the plant's compiled path (generated
C of the CasADi Lagrangian, equal to the Python DeNOC recursion to 1e-9: test_flexible_links_simulation.py,
test_flexible_links_dynamics.py); the monitor's linearization is the same model's."""
import numpy as np

from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes
from flexrobot_ros.model import load_robot
from flexrobot_ros.oma.identify import identify_modes
from flexrobot_ros.simulation import RectangularPulse, Simulation
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant, hold_controller

POSE = np.array([0.4, -1.1, 0.7])


def test_monitor_modes_match_identified_free_decay():
    robot = load_robot("canadarm")
    plant = ElasticRobotPlant(robot, compiled=True)
    monitor = elastic_robot_modes(plant.model, POSE)
    rate = 100.0
    simulation = Simulation(plant, hold_controller(plant, POSE), q0=POSE, rate=rate,
                            excitations=[RectangularPulse("tool0", [0.0, 300.0, 0.0], 0.1, 0.15)])
    output = simulation.run(60.0)
    columns = output.columns()
    data = np.column_stack([output.q - POSE] + [columns[f"deflection.link{i}.y"] for i in (1, 2, 3)])
    identified = np.array([mode.frequency_hz for mode in identify_modes(data[20:], rate, method="ssi-cov").modes])
    # every lightly damped mode below 0.4 x the sample rate (the excited, identifiable ones)
    expected = monitor.frequencies_hz[(monitor.damping_ratios < 0.35) & (monitor.frequencies_hz < 0.4 * rate)]
    assert expected.size >= 4
    for frequency in expected:
        nearest = identified[np.argmin(np.abs(identified - frequency))]
        assert abs(nearest - frequency) < 5e-3 * frequency, (frequency, identified)
