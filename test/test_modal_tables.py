"""Closed-loop modal analysis against the numbers printed in seed 000 (thesis) chapters 2 and 3.

* Table 2.5 (AMA columns): Scompi configuration 8, case 1 (no tool) and case 2 (4 kg point mass at O_6).
* Section 2.4.2 text: extremes of the 50-configuration sweep, modes 4/5 averages, the gain study (Fig. 2.5).
* Eq. 2.22: motor set point of configuration 8.
* Table 3.1: planar 2R robot, modes 1 and 4 at 15 configurations (damping column minus 0.50 pp, ERRATA.md).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.modal import modal_analysis, motor_set_point
from flexrobot_ros.modal.maps import gain_map, modal_map, thesis_configurations
from flexrobot_ros.model import load_robot

# Thesis eq. 2.21: configuration 8 (index 7 of the 50-configuration linspace of section 2.4.2).
Q8 = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]

# Thesis Table 2.5, AMA columns: (f [Hz], zeta [%]) per mode.
TABLE_2_5_CASE_1 = [(6.3692, 7.6686), (6.9642, 11.2981), (9.8842, 12.7399), (12.7170, 16.1988),
                    (13.1418, 16.7181), (25.5949, 26.5926), (37.0199, 1.3938), (58.3984, 2.9817),
                    (58.8631, 3.4643), (94.3825, 2.2483), (183.2303, 17.0471), (850.8082, 80.5774)]
TABLE_2_5_CASE_2 = [(5.9634, 7.1538), (6.6522, 10.8175), (9.2928, 11.9109), (12.6414, 16.1256),
                    (13.1418, 16.7181), (25.3752, 25.6469), (33.1574, 2.3513), (46.3479, 2.1881),
                    (49.3412, 3.3381), (92.0281, 2.2052), (138.7911, 12.5831), (850.5782, 80.5557)]


@pytest.fixture(scope="module")
def sweeps(scompi, scompi_tool):
    """The 50-configuration sweep of section 2.4.2 for both cases."""
    return {tool: modal_map(robot, thesis_configurations(50))
            for tool, robot in ((False, scompi), (True, scompi_tool))}


@pytest.mark.parametrize("case", [1, 2])
def test_table_2_5_all_twelve_modes(case, scompi, scompi_tool):
    """Table 2.5, configuration 8: |df| <= 0.05 Hz (case-2 mode 11: <= 0.35 Hz, printed inertias are rounded,
    ERRATA.md) and |dzeta| <= 0.05 percentage points, every mode."""
    robot, table = (scompi, TABLE_2_5_CASE_1) if case == 1 else (scompi_tool, TABLE_2_5_CASE_2)
    result = modal_analysis(robot, Q8)
    assert result.verdict == "stable" and result.n_modes == 12 and not result.overdamped.any()
    expected = np.array(table)
    df = np.abs(result.frequencies_hz - expected[:, 0])
    dzeta = np.abs(100 * result.damping_ratios - expected[:, 1])
    tolerance = np.full(12, 0.05)
    if case == 2:
        tolerance[10] = 0.35
    for mode in range(12):
        assert df[mode] <= tolerance[mode], f"case {case} mode {mode + 1}: f {result.frequencies_hz[mode]:.4f} Hz"
        assert dzeta[mode] <= 0.05, f"case {case} mode {mode + 1}: zeta {100 * result.damping_ratios[mode]:.4f} %"
    # what this implementation actually reaches (documented in the report): 0.034 Hz case 1, 0.30 Hz case 2 mode 11
    assert df.max() <= (0.035 if case == 1 else 0.31)


def test_equation_2_22_motor_set_point(scompi_tool):
    """Eq. 2.22: q_m(0) = [0.0, -0.374, 1.9446, -0.0001, -1.9449, 0.0] for configuration 8. The validation of
    section 2.4.3 runs case 2 (Fig. 2.7 'case 2'), i.e. with the 4 kg tool; within half a unit of the printed last
    digit (the 2nd entry is printed with 3 decimals, the others with 4)."""
    q_m = motor_set_point(scompi_tool, Q8)
    printed = np.array([0.0, -0.374, 1.9446, -0.0001, -1.9449, 0.0])
    assert np.all(np.abs(q_m - printed) <= np.array([5e-5, 5e-4, 5e-5, 5e-5, 5e-5, 5e-5]))


def test_configuration_8_is_index_7_of_the_sweep():
    """Eq. 2.21 is the 8th of the 50 linearly spaced configurations of section 2.4.2 (4 printed decimals)."""
    assert np.allclose(thesis_configurations(50)[7], Q8, atol=5e-5)


def test_sweep_extremes(sweeps):
    """Section 2.4.2: lowest frequency 5.13 Hz, highest 851.14 Hz, damping from 1.25 % (mode 7) to 80.61 %
    (mode 12), over both cases. Reached to within half a unit of the last printed digit (0.005)."""
    frequencies = np.concatenate([m.frequencies_hz for m in sweeps.values()])
    damping = 100 * np.concatenate([m.damping_ratios for m in sweeps.values()])
    assert abs(frequencies.min() - 5.13) <= 0.005
    assert abs(frequencies.max() - 851.14) <= 0.005
    assert abs(damping.min() - 1.25) <= 0.005
    assert abs(damping.max() - 80.61) <= 0.005
    lowest_mode = np.unravel_index(np.argmin(damping), damping.shape)[1]
    highest_mode = np.unravel_index(np.argmax(damping), damping.shape)[1]
    assert (lowest_mode + 1, highest_mode + 1) == (7, 12)
    assert all(m.all_stable for m in sweeps.values())


def test_sweep_modes_4_and_5(sweeps):
    """Section 2.4.2: modes 4 and 5 are closely spaced around about 12.88 Hz, with damping ratios nearly constant,
    about 16.16 % and 16.71 % (both cases, 50 configurations). The text says 'approximately': checked to 0.05 Hz
    and 0.01 pp on the averages."""
    both = list(sweeps.values())
    frequency = np.mean([m.frequencies_hz[:, 3:5].mean() for m in both])
    zeta_4 = np.mean([100 * m.damping_ratios[:, 3].mean() for m in both])
    zeta_5 = np.mean([100 * m.damping_ratios[:, 4].mean() for m in both])
    assert abs(frequency - 12.88) <= 0.05
    assert abs(zeta_4 - 16.16) <= 0.01
    assert abs(zeta_5 - 16.71) <= 0.01
    for m in both:  # "nearly constant": spread below 0.1 Hz / 0.2 pp along the sweep
        assert np.ptp(m.frequencies_hz[:, 3:5], axis=0).max() < 0.1
        assert 100 * np.ptp(m.damping_ratios[:, 3:5], axis=0).max() < 0.2


def test_tool_lowers_the_frequencies(sweeps):
    """Section 2.4.2 / Fig. 2.3: with the 4 kg tool the frequency curves are lower (every mode, every config)."""
    assert np.all(sweeps[True].frequencies_hz <= sweeps[False].frequencies_hz + 1e-9)


def test_gain_study_configuration_1(scompi):
    """Section 2.4.2 / Fig. 2.5, configuration 1, K_P = 2000..15000, K_D = 0.425 sqrt(K_P): f1 rises 2.39 ->
    6.51 Hz and zeta1 declines 9.44 -> 7.85 %. Frequencies to 0.005 Hz; damping to 0.01 pp (the printed 7.85
    is 7.8575 truncated rather than rounded)."""
    sweep = gain_map(scompi, thesis_configurations(50)[0], np.linspace(2000, 15000, 14), kd_factor=0.425)
    f1, zeta1 = sweep.frequencies_hz[:, 0], 100 * sweep.damping_ratios[:, 0]
    assert abs(f1[0] - 2.39) <= 0.005 and abs(f1[-1] - 6.51) <= 0.005
    assert abs(zeta1[0] - 9.44) <= 0.01 and abs(zeta1[-1] - 7.85) <= 0.01
    assert np.all(np.diff(f1) > 0) and np.all(np.diff(zeta1) < 0)  # "frequencies increase, damping decreases"


# Thesis Table 3.1: q1 [rad], q2 [rad], f1 [Hz], zeta1 [%], f4 [Hz], zeta4 [%].
TABLE_3_1 = """
1.474 1.765 2.83 12.03 9.38 12.34
0.133 1.947 3.01 13.06 9.15 13.54
2.193 0.839 2.29 8.75 12.1 7.72
0.667 0.501 2.18 8.29 13.68 7.47
0.946 0.443 2.16 8.28 13.93 7.49
2.24 2.208 3.26 15.08 8.97 14.65
-1.373 1.717 2.93 11.5 9.46 11.98
0.849 0.179 2.13 8.1 14.88 7.62
0.549 2.582 3.53 17.7 8.87 15.46
2.945 2.577 3.58 17.65 8.88 15.33
-2.307 2.945 3.78 19.04 8.92 14.99
1.627 0.974 2.32 9.07 11.51 8.08
-2.088 1.638 2.88 11.08 9.61 11.39
2.335 1.686 2.81 11.54 9.52 11.75
1.856 2.96 3.66 19.03 8.95 14.57
"""


def test_table_3_1_planar_2r():
    """Table 3.1, all 15 configurations: f1 and f4 within 0.006 Hz; zeta1 and zeta4 within 0.006 pp of the printed
    value minus 0.50 pp (ERRATA.md). 0.006 rather than 0.005 because the printed joint angles are rounded to
    3 decimals as well."""
    robot = load_robot("planar_2r")
    rows = np.array([[float(v) for v in line.split()] for line in TABLE_3_1.strip().splitlines()])
    for number, row in enumerate(rows, start=1):
        result = modal_analysis(robot, row[:2])
        assert result.stable and result.n_modes == 4
        assert abs(result.frequencies_hz[0] - row[2]) <= 0.006, f"configuration {number}, f1"
        assert abs(result.frequencies_hz[3] - row[4]) <= 0.006, f"configuration {number}, f4"
        assert abs(100 * result.damping_ratios[0] - (row[3] - 0.50)) <= 0.006, f"configuration {number}, zeta1"
        assert abs(100 * result.damping_ratios[3] - (row[5] - 0.50)) <= 0.006, f"configuration {number}, zeta4"
