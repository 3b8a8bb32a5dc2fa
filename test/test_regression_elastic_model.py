"""Issue 24's regression check: the modes and simulations of every shipped robot, as the code before the layering
work computed them, are reproduced by the current code.

Data: test/data/regression/elastic_model.npz, written by test/data/regression/record.py on commit e11f85a (before
any move); cases in test/regression_cases.py (poses, impact, controller). Both sides run the command line's entry
point (``flexrobot modal ... --json`` and ``flexrobot simulate ... --out FILE.npz``, in process).

Tolerances (issue 24's acceptance): frequencies to 1e-9 relative (zero-frequency modes of a free joint, whose value
is round-off, to 1e-9 of the pose's largest frequency); damping ratios, fractions of critical damping, to 1e-9
absolute (undamped modes carry round-off of 1e-15 there, which no relative tolerance can compare); every simulated
column to 1e-6 of its range over the run. About 20 s for the nine robots on an idle machine (rrp 8 s).
"""
from __future__ import annotations

import numpy as np
import pytest

from regression_cases import DATA, ROBOTS, modes, poses, simulation

RECORDED = dict(np.load(DATA))


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_modes_at_three_poses_as_before(robot):
    """``flexrobot modal`` at the three recorded poses: same number of modes, frequencies [Hz] and damping ratios."""
    recorded_poses = RECORDED[f"{robot}/poses"]
    np.testing.assert_array_equal(poses(robot), recorded_poses, err_msg=f"{robot}: the case's poses changed")
    for k, q in enumerate(recorded_poses):
        frequencies, damping = modes(robot, q)
        old_f, old_zeta = RECORDED[f"{robot}/frequencies_hz.{k}"], RECORDED[f"{robot}/damping_ratios.{k}"]
        assert frequencies.shape == old_f.shape, f"{robot} pose {k}: {frequencies.size} modes, {old_f.size} before"
        np.testing.assert_allclose(frequencies, old_f, rtol=1e-9, atol=1e-9 * old_f.max(),
                                   err_msg=f"{robot} pose {k} = {q.tolist()}: frequencies [Hz]")
        np.testing.assert_allclose(damping, old_zeta, rtol=0, atol=1e-9,
                                   err_msg=f"{robot} pose {k} = {q.tolist()}: damping ratios")


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_one_second_impact_simulation_as_before(robot):
    """``flexrobot simulate`` 1 s with an impact on tool0 from the second pose: the same columns, each equal to 1e-6
    of its range over the run at the 100 recorded instants."""
    prefix = f"{robot}/simulate/"
    old = {key[len(prefix):]: value for key, value in RECORDED.items() if key.startswith(prefix)}
    new = simulation(robot, RECORDED[f"{robot}/poses"][1])
    assert sorted(new) == sorted(old), f"{robot}: columns {sorted(new)}, before {sorted(old)}"
    for column, values in old.items():
        scale = np.ptp(values) or np.abs(values).max() or 1.0  # a constant column: its value (or 1 when zero)
        np.testing.assert_allclose(new[column], values, rtol=0, atol=1e-6 * scale,
                                   err_msg=f"{robot}: column {column} (range {np.ptp(values):.3g})")
