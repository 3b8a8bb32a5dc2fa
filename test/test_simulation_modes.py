"""The simulated free response after an impact carries the modes of the linearized model (ties simulation and
modal analysis; seed 000 section 2.4.3 and Table 2.5).

Identification is independent of the modal code: dynamic mode decomposition (least-squares one-step map of the
sampled mechanical state, truncated SVD) of the simulated free decay gives discrete eigenvalues mu, and
lambda = ln(mu) * rate. The impact is small (0.5 N for 6 ms at tool0 along y_0) so that the response is linear to
about 1e-5; with the thesis' 50 N, amplitude-dependent (nonlinear) effects shift the heavily damped modes 3, 5
and 6 by up to 0.5 %. Mode 12 (850 Hz, 80 % damping) has decayed by 1e-7 after 4 ms and is not in the data,
like in the thesis' OMA; the 22 states that remain are kept by the SVD gap (singular values < 1e-3 of the largest
are dropped, the gap is 1e-3 -> 1e-5).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.model import load_robot
from flexrobot_ros.simulation import (AccurateIntegration, FixedStepIntegration, PDGravityCompensation,
                                      RectangularPulse, Simulation)
from flexrobot_ros.simulation.impact_experiment import thesis_configuration

Q8 = thesis_configuration(8)
# Thesis Table 2.5, AMA columns (modes 1-11): frequency [Hz], damping ratio [%].
TABLE_2_5 = {
    1: ([6.3692, 6.9642, 9.8842, 12.7170, 13.1418, 25.5949, 37.0199, 58.3984, 58.8631, 94.3825, 183.2303],
        [7.6686, 11.2981, 12.7399, 16.1988, 16.7181, 26.5926, 1.3938, 2.9817, 3.4643, 2.2483, 17.0471]),
    2: ([5.9634, 6.6522, 9.2928, 12.6414, 13.1418, 25.3752, 33.1574, 46.3479, 49.3412, 92.0281, 138.7911],
        [7.1538, 10.8175, 11.9109, 16.1256, 16.7181, 25.6469, 2.3513, 2.1881, 3.3381, 2.2052, 12.5831]),
}


def free_decay_eigenvalues(case: int, mode: str) -> np.ndarray:
    """Continuous-time eigenvalues (Im > 0) identified by DMD from the simulated free decay after a small impact."""
    robot = load_robot("scompi", tool=case == 2)
    controller = PDGravityCompensation.create(robot, Q8)
    rate = 2000.0 if mode == "accurate" else 1000.0
    simulation = Simulation(robot, controller, rate=rate, mode=mode,
                            accurate=AccurateIntegration("LSODA", rtol=1e-11, atol=1e-13),
                            fixed=FixedStepIntegration(substeps=1),
                            excitations=[RectangularPulse("tool0", [0.0, 0.5, 0.0], 0.0, 0.006)])
    simulation.advance(0.01)
    states = simulation.advance(1.0).states[:, simulation.plant.layout.mechanical]
    deviation = states - np.concatenate([controller.q_d, controller.q_m_d, np.zeros(12)])
    scaled = deviation / np.abs(deviation).max(axis=0)
    before, after = scaled[:-1].T, scaled[1:].T
    u, s, vt = np.linalg.svd(before, full_matrices=False)
    rank = int(np.sum(s > 1e-3 * s[0]))
    assert rank == 22
    reduced = u[:, :rank].T @ after @ vt[:rank].T / s[:rank]
    eigenvalues = np.log(np.linalg.eigvals(reduced).astype(complex)) * rate
    return eigenvalues[eigenvalues.imag > 0]


def match(identified: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The identified eigenvalue nearest to each reference eigenvalue (one-to-one)."""
    index = [int(np.argmin(np.abs(identified - value) / abs(value))) for value in reference]
    assert len(set(index)) == len(index)
    return identified[index]


@pytest.fixture(scope="module", params=[(1, "accurate"), (2, "accurate"), (2, "fixed")],
                ids=["case1-accurate", "case2-accurate", "case2-fixed"])
def identified(request):
    case, mode = request.param
    return case, free_decay_eigenvalues(case, mode)


def test_free_decay_modes_equal_modal_analysis(identified):
    """Modes 1-11 from the simulated response vs flexrobot_ros.modal.modal_analysis at the same pose and gains:
    frequencies within 3e-4 relative, damping ratios within 3e-4 (fraction). The fixed-step mode passes the same
    bound at 1 kHz: its exponential integrator does not warp frequencies or damping."""
    case, eigenvalues = identified
    modes = modal_analysis(load_robot("scompi", tool=case == 2), Q8)
    reference = modes.eigenvalues[:11]
    found = match(eigenvalues, reference)
    frequency = np.abs(found) / (2 * np.pi)
    damping = -found.real / np.abs(found)
    np.testing.assert_allclose(frequency, modes.frequencies_hz[:11], rtol=3e-4)
    np.testing.assert_allclose(damping, modes.damping_ratios[:11], atol=3e-4)


def test_free_decay_modes_reproduce_table_2_5(identified):
    """Modes 1-11 from the simulated response vs the printed AMA columns of Table 2.5 (configuration 8): within
    0.35 Hz and 0.05 percentage points. 0.35 Hz covers the model-vs-table gap documented in shared/FACTS.md
    (0.30 Hz for case-2 mode 11, at most 0.034 Hz elsewhere)."""
    case, eigenvalues = identified
    frequencies, damping_percent = (np.array(v) for v in TABLE_2_5[case])
    table = -damping_percent / 100 * 2 * np.pi * frequencies + 1j * 2 * np.pi * frequencies * np.sqrt(
        1 - (damping_percent / 100) ** 2)
    found = match(eigenvalues, table)
    assert np.all(np.abs(np.abs(found) / (2 * np.pi) - frequencies) <= 0.35)
    assert np.all(np.abs(-found.real / np.abs(found) * 100 - damping_percent) <= 0.05)
