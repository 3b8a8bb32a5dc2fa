"""The impact experiment of seed 000 section 2.4.3, and its motor-position records as a reusable fixture.

The Scompi is held at configuration 8 (eq. 2.21) by PD + gravity compensation (eqs. 2.2-2.3, gains eqs. 2.19-2.20),
starting at rest at ``(q^d, q_m^d)`` (eq. 2.22). A 50 N force along y_0 acts on the end effector (frame ``tool0``
= O_6) during [0.2, 0.206] s; motor positions are recorded at 1 kHz (the thesis' Fig. 2.7 and the input of its OMA
in Table 2.5). Case 1: no tool; case 2: 4 kg point mass at O_6.

:func:`impact_fixture` writes the records (``t``, ``q_m.<joint>``, ``q.<joint>``) to a time-series file once and
reuses it; the OMA tests call it with a temporary directory.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from flexrobot_ros.errors import SignalError, SimulationError
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation.controllers import PDGravityCompensation
from flexrobot_ros.simulation.excitation import RectangularPulse
from flexrobot_ros.simulation.integrators import AccurateIntegration
from flexrobot_ros.simulation.simulation import Simulation, SimulationOutput
from flexrobot_ros.timeseries import read_timeseries, write_timeseries

#: Joint ranges of the 50 configurations of seed 000 section 2.4.2 (q_1 = 0 m, q_6 = 0 rad held).
CONFIGURATION_START = np.array([0.0, -np.pi / 6, 2 * np.pi / 3, -np.pi / 18, -2 * np.pi / 3, 0.0])
CONFIGURATION_END = np.array([0.0, np.pi / 6, np.pi / 3, np.pi / 3, -np.pi / 3, 0.0])
#: The thesis' impact: 50 N along y_0 at the end effector during [0.2, 0.2 + 6 dt] s, dt = 1 ms.
IMPACT_FORCE = (0.0, 50.0, 0.0)
IMPACT_WINDOW = (0.2, 0.206)
#: Accurate integration used for the records (LSODA, rtol 1e-10, atol 1e-12: error about 1e-8 of the peak response).
RECORD_INTEGRATION = AccurateIntegration(method="LSODA", rtol=1e-10, atol=1e-12)


def thesis_configuration(index: int) -> np.ndarray:
    """Configuration ``index`` (1..50) of seed 000 section 2.4.2: joints varied linearly over 50 poses."""
    if not 1 <= int(index) <= 50:
        raise SimulationError(f"thesis configuration index must be 1..50, got {index}")
    return np.linspace(CONFIGURATION_START, CONFIGURATION_END, 50)[int(index) - 1]


def impact_experiment(case: int = 2, duration: float = 3.0, rate: float = 1000.0, mode: str = "accurate",
                      configuration: int = 8) -> SimulationOutput:
    """Run the seed 000 section 2.4.3 experiment (case 1: no tool, case 2: 4 kg tool); samples t = 0 .. duration."""
    if case not in (1, 2):
        raise SimulationError(f"impact experiment: case must be 1 (no tool) or 2 (4 kg tool), got {case!r}")
    robot = load_robot("scompi", tool=case == 2)
    controller = PDGravityCompensation.create(robot, thesis_configuration(configuration))
    simulation = Simulation(robot, controller, rate=rate, mode=mode, accurate=RECORD_INTEGRATION,
                            excitations=[RectangularPulse("tool0", IMPACT_FORCE, *IMPACT_WINDOW)])
    return simulation.run(duration)


def impact_fixture(directory: str | Path, case: int, duration: float = 3.0, rate: float = 1000.0,
                   suffix: str = ".npz") -> Path:
    """Path of the motor/link position records of :func:`impact_experiment` (accurate mode) in ``directory``.

    The file (``t``, ``q_m.joint1..6`` [rad], ``q.joint1..6`` [m, rad]) is generated on first use and reused
    afterwards; its name carries the case, rate, duration and a hash of the robot parameters, so a changed model
    regenerates it. Read it with :func:`flexrobot_ros.timeseries.read_timeseries`.
    """
    robot = load_robot("scompi", tool=case == 2) if case in (1, 2) else None
    if robot is None:
        raise SimulationError(f"impact fixture: case must be 1 or 2, got {case!r}")
    name = f"scompi_impact_case{case}_{rate:g}Hz_{duration:g}s_{robot.config_hash()[:12]}{suffix}"
    path = Path(directory) / name
    if path.is_file():
        try:
            read_timeseries(path)
            return path
        except SignalError:  # unreadable (e.g. truncated by an interrupted run): regenerate it
            path.unlink()
    output = impact_experiment(case, duration, rate)
    columns = {key: value for key, value in output.columns().items() if key.startswith(("q_m.", "q."))}
    partial = path.with_name(path.stem + ".partial" + suffix)
    write_timeseries(partial, output.t, columns)
    partial.replace(path)
    return path


__all__ = ["CONFIGURATION_END", "CONFIGURATION_START", "IMPACT_FORCE", "IMPACT_WINDOW", "RECORD_INTEGRATION",
           "impact_experiment", "impact_fixture", "thesis_configuration"]
