"""OMA methods (VAR, SSI-cov), stabilization and selection against systems with known modes.

The true modes are the eigenvalues of the simulated continuous systems (test/oma_cases.py), or the thesis'
Table 2.5 values the stand-in is built from; nothing expected is computed by the code under test.
"""
from __future__ import annotations

import numpy as np
import pytest

from oma_cases import TABLE_2_5_CASE1, free_decay_case, match, scompi_standin, white_noise_case
from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma import SelectionOptions, identify_modes, parse_orders, ssi_cov_poles, var_models
from flexrobot_ros.oma.synthetic import LinearSystem

ORDERS = {"var": "2:30", "ssi-cov": "2:40"}


@pytest.fixture(scope="module")
def white_noise():
    return white_noise_case(seed=0)


@pytest.fixture(scope="module")
def standin():
    return scompi_standin()


@pytest.mark.parametrize("method", ["var", "ssi-cov"])
def test_white_noise_modes_within_issue_tolerances(white_noise, method):
    """Issue 6 acceptance: 4-DOF chain, white-noise forces, 30 dB SNR, quantized (600 s at 200 Hz): every mode
    with zeta >= 1 % found within 0.5 % in frequency and 15 % (relative) in damping, and nothing else."""
    case = white_noise
    result = identify_modes(case.y, case.fs_hz, method, ORDERS[method])
    assert len(result.modes) == len(case.frequencies_hz), result.frequencies_hz
    j = match(result.frequencies_hz, case.frequencies_hz)
    assert sorted(j) == list(range(len(case.frequencies_hz))), "a true mode found twice or missed"
    df = np.abs(result.frequencies_hz / case.frequencies_hz[j] - 1.0)
    dz = np.abs(result.damping_ratios / case.damping_ratios[j] - 1.0)
    assert np.all(case.damping_ratios >= 0.01)
    assert df.max() < 0.005, df
    assert dz.max() < 0.15, dz
    # the shapes come out too: all four are distinct (MAC well below 1 between different modes)
    shapes = result.shapes
    gram = np.abs(np.conj(shapes) @ shapes.T) ** 2
    assert np.all(gram[~np.eye(len(shapes), dtype=bool)] < 0.9)


@pytest.mark.parametrize("method", ["var", "ssi-cov"])
def test_free_decay_highly_damped_modes(method):
    """Impact response (free decay, not white noise) with modes 5-200 Hz and damping up to 27 %, sampled at
    1 kHz and quantized to 1e-3 of the peak: all five modes within 0.5 % / 15 % and nothing else."""
    case = free_decay_case()
    result = identify_modes(case.y, case.fs_hz, method, ORDERS[method])
    assert len(result.modes) == 5, result.frequencies_hz
    j = match(result.frequencies_hz, case.frequencies_hz)
    assert sorted(j) == list(range(5))
    assert np.max(np.abs(result.frequencies_hz / case.frequencies_hz[j] - 1)) < 0.005
    assert np.max(np.abs(result.damping_ratios / case.damping_ratios[j] - 1)) < 0.15


@pytest.mark.parametrize("method,selection", [("var", "hierarchical"), ("ssi-cov", "hierarchical"),
                                              ("ssi-cov", "grid")])
def test_scompi_standin_table_2_5(standin, method, selection):
    """Seed 000 Table 2.5 (case 1), OMA columns: 11 modes within 0.1 Hz and 0.2 percentage points of the AMA
    values, mode 12 (80 % damping, beyond Nyquist) absent, as in the thesis; also with the NAFID grid."""
    orders = "2:40" if method == "var" else "2:100"
    result = identify_modes(standin.y, standin.fs_hz, method, orders, selection=SelectionOptions(method=selection))
    f_true, z_true = TABLE_2_5_CASE1[:11, 0], TABLE_2_5_CASE1[:11, 1]
    assert len(result.modes) == 11, result.frequencies_hz
    j = match(result.frequencies_hz, f_true)
    assert list(j) == list(range(11))
    assert np.max(np.abs(result.frequencies_hz - f_true)) < 0.1
    assert np.max(np.abs(100 * result.damping_ratios - z_true)) < 0.2


def test_var_single_qr_equals_separate_least_squares():
    """The order sweep from one QR gives, for each order, the least-squares VAR coefficients of that order alone
    (numpy lstsq on the same rows, with intercept), to rounding."""
    rng = np.random.default_rng(3)
    y = np.cumsum(rng.standard_normal((400, 3)), axis=0) * 0.1 + rng.standard_normal((400, 3))
    orders = [1, 2, 4]
    models = var_models(y, orders, outlier_sigma=None, scaling="channel")
    z = (y - y.mean(axis=0)) / y.std(axis=0)
    pmax = max(orders)
    for model in models:
        p = model.order
        X = np.column_stack([np.ones(len(z) - pmax)] + [z[pmax - i:len(z) - i] for i in range(1, p + 1)])
        theta = np.linalg.lstsq(X, z[pmax:], rcond=None)[0]
        expected = theta[1:].reshape(p, 3, 3).transpose(0, 2, 1)
        np.testing.assert_allclose(model.coefficients, expected, atol=1e-10)


def test_var_recovers_known_process():
    """A simulated VAR(2) process with known A1, A2 (stable, 2 channels, 20000 samples): estimates within
    0.05 (about 7 standard errors) and the model's poles equal the true companion eigenvalues within 0.02."""
    A1 = np.array([[1.2, -0.3], [0.2, 0.9]])
    A2 = np.array([[-0.5, 0.1], [0.0, -0.4]])
    rng = np.random.default_rng(5)
    n = 20000
    y = np.zeros((n, 2))
    e = rng.standard_normal((n, 2))
    for k in range(2, n):
        y[k] = A1 @ y[k - 1] + A2 @ y[k - 2] + e[k]
    model = var_models(y, [2])[0]  # one common scale factor for both channels leaves A_i unchanged
    A1_hat, A2_hat = model.coefficients
    assert np.max(np.abs(A1_hat - A1)) < 0.05 and np.max(np.abs(A2_hat - A2)) < 0.05
    comp = np.block([[A1, A2], [np.eye(2), np.zeros((2, 2))]])
    true = np.sort_complex(np.linalg.eigvals(comp))
    est = np.sort_complex(np.linalg.eigvals(model.companion()))
    assert np.max(np.abs(true - est)) < 0.02
    assert model.excluded_rows == 0


def test_ssi_cov_exact_on_noise_free_decay():
    """Noise-free free decay of a single-DOF oscillator (12 Hz, 3 %): SSI-cov returns the exact pole, because the
    covariances of a transient factor exactly as C A^k G when every lag uses the same time window. Order 3:
    the mean SSI-cov removes leaves a constant in the decay, one more (real, non-oscillating) state."""
    system = LinearSystem.from_modes([12.0], [0.03], [[1.0]], [[1.0]])
    y = system.impulse_response(500.0, 4.0, 0.0, 1, 1.0)
    pole_set = ssi_cov_poles(y, 500.0, [3], block_rows=10)[0]
    assert len(pole_set) == 1
    assert pole_set.frequencies_hz[0] == pytest.approx(12.0, rel=1e-7)
    assert pole_set.damping_ratios[0] == pytest.approx(0.03, rel=1e-6)


def test_impact_rows_left_out_of_var_fit(standin):
    """VAR on a record containing the impact: the equations around the force (which the output-only model
    cannot explain) are dropped and reported; on stationary data nothing is dropped."""
    result = identify_modes(standin.y, standin.fs_hz, "var", "2:12")
    assert result.notes and "left out" in result.notes[0]
    assert var_models(np.random.default_rng(0).standard_normal((3000, 2)), [2, 5])[-1].excluded_rows == 0


def test_bad_input_errors():
    """Too few samples for the order, non-finite or constant data, bad order specs: SignalError with a message
    that says what is wrong."""
    rng = np.random.default_rng(0)
    y = rng.standard_normal((300, 6))
    with pytest.raises(SignalError, match=r"too few samples for model order 100 with 6 channels: got 300"):
        identify_modes(y, 1000.0, "var", "2:100")
    with pytest.raises(SignalError, match=r"SSI-cov: too few samples"):
        identify_modes(y[:100], 1000.0, "ssi-cov", "2:100")
    bad = y.copy()
    bad[10, 2] = np.nan
    with pytest.raises(SignalError, match="non-finite"):
        identify_modes(bad, 1000.0, "var", "2:10")
    const = y.copy()
    const[:, 4] = 1.0
    with pytest.raises(SignalError, match=r"channel\(s\) \[4\] are constant"):
        identify_modes(const, 1000.0, "ssi-cov", "2:10")
    with pytest.raises(SignalError, match="cannot read 'two'"):
        parse_orders("two")
    with pytest.raises(SignalError, match="unknown method"):
        identify_modes(y, 1000.0, "fdd", "2:10")
    with pytest.raises(SignalError, match="support model orders up to"):
        identify_modes(y, 1000.0, "ssi-cov", "2:40", block_rows=4)
    assert parse_orders("2:10:4") == (2, 6, 10)
    assert parse_orders("5,3") == (3, 5)


def test_combination_tones_are_dropped_but_no_table_2_5_mode():
    """A pole at lambda_a + lambda_b (sum), lambda_a + conj(lambda_b) (difference) or 2 lambda_a (harmonic) of two
    modes at least as confident is a combination tone of a quadratic nonlinearity and is dropped; none of the
    11 Table 2.5 modes (case 1) is such a combination of the others."""
    from flexrobot_ros.oma.selection import Mode, drop_combinations

    def mode(f, z, confidence=0.9):
        return Mode(f, z, np.ones(1), 0.0, 0.0, 10, confidence, 1.0)

    def pole(f, z):
        w = 2 * np.pi * f
        return complex(-z * w, w * np.sqrt(1 - z * z))

    def from_pole(lam, confidence):
        return mode(abs(lam) / (2 * np.pi), -lam.real / abs(lam), confidence)

    a, b = (37.02, 0.0139), (6.369, 0.0767)
    tones = [from_pole(pole(*a) + pole(*b), 0.4), from_pole(pole(*a) + np.conj(pole(*b)), 0.4),
             from_pole(2 * pole(*a), 0.4)]
    kept = drop_combinations([mode(*a), mode(*b)] + tones, 0.005)
    assert [m.frequency_hz for m in kept] == [a[0], b[0]]
    table = [mode(f, z / 100) for f, z in TABLE_2_5_CASE1[:11]]
    assert len(drop_combinations(table, 0.005)) == 11
