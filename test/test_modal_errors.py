"""Bad input to the modal-analysis core gives a ModalError that names what is wrong, or a clear 'unstable' /
'marginal' verdict with finite numbers; never a crash or NaN output."""
from __future__ import annotations

import numpy as np
import pytest

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal import linearize, modal_analysis
from flexrobot_ros.modal.eigenproblem import solve_modes
from flexrobot_ros.modal.frf import receptance
from flexrobot_ros.modal.maps import gain_map, load_map, modal_map
from flexrobot_ros.model import load_robot

Q8 = [0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0]


@pytest.mark.parametrize("pose,words", [
    ([0.0, 1.0], ["expected 6 values", "joint1"]),
    ([[0.0] * 6], ["expected 6 values"]),
    ("0,0,0,0,0,0", ["expected 6 values"]),
    ([0.0, np.nan, 0.0, 0.0, 0.0, 0.0], ["non-finite", "joint2"]),
    ([0.0, 0.0, np.inf, 0.0, 0.0, 0.0], ["non-finite", "joint3"]),
])
def test_bad_pose(scompi, pose, words):
    with pytest.raises(ModalError) as error:
        modal_analysis(scompi, pose)
    assert all(word in str(error.value) for word in words)


@pytest.mark.parametrize("kwargs,words", [
    ({"kp": [1.0, 2.0]}, ["kp", "expected 6 values"]),
    ({"kd": [np.nan] * 6}, ["kd", "non-finite"]),
    ({"wrench": [1.0, 2.0, 3.0]}, ["wrench", "6 finite values"]),
    ({"wrench": [0, 0, np.inf, 0, 0, 0]}, ["wrench"]),
    ({"wrench": [0, 0, 1, 0, 0, 0], "frame": "nowhere"}, ["nowhere", "known frames"]),
])
def test_bad_gains_wrench_frame(scompi, kwargs, words):
    with pytest.raises(ModalError) as error:
        modal_analysis(scompi, Q8, **kwargs)
    assert all(word in str(error.value) for word in words)


def test_destabilizing_gains_give_unstable_verdict_with_finite_numbers(scompi):
    """Negative K_P (positive feedback) makes the closed loop unstable: verdict 'unstable', the offending
    eigenvalues (Re > 0) are listed, the over-damped real eigenvalues are reported (not dropped), all finite."""
    result = modal_analysis(scompi, Q8, kp=-20000.0)
    assert result.verdict == "unstable" and not result.stable
    assert result.offending_eigenvalues.size > 0 and np.all(result.offending_eigenvalues.real > 0)
    assert result.overdamped.any() and result.n_modes > 12  # real eigenvalues each count as a mode
    for array in (result.frequencies_hz, result.damping_ratios, result.eigenvalues, result.mode_shapes):
        assert np.all(np.isfinite(array))
    assert np.all(result.damping_ratios[result.overdamped] == np.sign(-result.eigenvalues[result.overdamped].real))
    # the real eigenvalues plus two per complex mode account for the whole 4n spectrum
    assert result.overdamped.sum() + 2 * (~result.overdamped).sum() == 4 * scompi.n


def test_negative_damping_gains_unstable(scompi):
    """K_D strongly negative: complex modes with negative damping ratio, verdict 'unstable'."""
    result = modal_analysis(scompi, Q8, kd=-200.0)
    assert result.verdict == "unstable" and np.any(result.damping_ratios < 0)
    assert np.all(np.isfinite(result.damping_ratios))


def test_unstable_gains_in_a_map_are_flagged_and_padded(scompi):
    """A gain sweep crossing into instability: per-pose verdicts, mode_count > 2n where eigenvalues are real,
    the valid columns finite and only the documented padding NaN."""
    sweep = gain_map(scompi, Q8, [-20000.0, 5000.0, 15000.0])
    assert sweep.verdict.tolist() == ["unstable", "stable", "stable"]
    assert sweep.mode_count[0] > 12 and sweep.mode_count[1] == sweep.mode_count[2] == 12
    for row, count in enumerate(sweep.mode_count):
        assert np.all(np.isfinite(sweep.frequencies_hz[row, :count]))
        assert np.all(np.isnan(sweep.frequencies_hz[row, count:]))
    assert sweep.max_real_part[0] > 0 > sweep.max_real_part[2]


def test_singular_mass_matrix():
    """A zero (singular) mass matrix is refused with a ModalError naming the pose, in the batch solver and in the
    state matrix of a single pose."""
    m_bar = np.tile(np.eye(4), (3, 1, 1))
    m_bar[1, 0, 0] = 0.0
    k_bar = np.tile(np.diag([10.0, 10.0, 10.0, 10.0]), (3, 1, 1))
    with pytest.raises(ModalError, match=r"singular.*pose\(s\) \[1\]"):
        solve_modes(m_bar, np.zeros_like(m_bar), k_bar)
    robot = load_robot("scompi")
    lin = linearize(robot, Q8)
    broken = type(lin)(q=lin.q, q_m=lin.q_m, M_bar=np.zeros_like(lin.M_bar), D_bar=lin.D_bar, K_bar=lin.K_bar,
                       K_G=lin.K_G)
    with pytest.raises(ModalError, match="singular"):
        broken.state_matrix()


def test_non_finite_matrices_refused():
    m_bar = np.tile(np.eye(2), (2, 1, 1))
    k_bar = m_bar.copy()
    k_bar[1, 0, 1] = np.nan
    with pytest.raises(ModalError, match=r"K_bar has non-finite entries at pose\(s\) \[1\]"):
        solve_modes(m_bar, m_bar, k_bar)
    with pytest.raises(ModalError, match="three"):
        solve_modes(m_bar, m_bar, k_bar[:, :1])


def test_bad_poses_in_a_map_name_the_pose(scompi):
    poses = np.zeros((5, 6))
    poses[3, 4] = np.nan
    with pytest.raises(ModalError, match="pose 3, joint joint5"):
        modal_map(scompi, poses)
    with pytest.raises(ModalError, match=r"expected an array \(P, 6\)"):
        modal_map(scompi, np.zeros((5, 5)))


def test_receptance_bad_frequencies_and_frame(scompi):
    with pytest.raises(ModalError, match="frequencies_hz"):
        receptance(scompi, Q8, [1.0, np.nan])
    with pytest.raises(ModalError, match="axes"):
        receptance(scompi, Q8, [1.0], axes="tool")
    with pytest.raises(ModalError, match="known frames"):
        receptance(scompi, Q8, [1.0], frame="flange_that_is_not_there")


def test_load_map_rejects_other_files(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ModalError, match="format"):
        load_map(other)
    with pytest.raises(ModalError, match="not a readable"):
        load_map(tmp_path / "missing.npz")
