"""Clean-data OMA (issue 12, item 4): noise-free and very-low-noise records, impulse input at the start.

The records are the exact sampled impulse response of the Scompi's linearized closed loop (seed 000 eqs. 2.8-2.14,
flexrobot_ros.modal.linearization) at thesis configuration 8 (eq. 2.21) with the 4 kg tool (case 2): a 50 N
force along y_0 on the tool frame (the thesis' impact direction, section 2.4.3), held for one sample (zero-order
hold, discretized exactly with the matrix exponential of the augmented system), then the free decay; the outputs
are the motor positions q_m (the encoder channels), written to CSV with 12 significant digits. The expected
modes are the eigenvalues of that same continuous model (flexrobot_ros.modal.modes), independent of the OMA code.

Observable modes (the criterion the tests state): below 0.45 fs (the band the stabilization diagram accepts, under
the Nyquist frequency), damping within the physical band (at most 40 %, the default ``damping_max``), and a
contribution to the outputs that stays above 1e-6 of the record's peak for at least 10 samples (computed from the
model's modal decomposition). Mode 12 (about 850 Hz, 80 % damping) fails it at 1 kHz (beyond Nyquist) and at
2 kHz (80 % damping: it decays by a factor 8 per sample), and is not identifiable, as in the thesis (Table 2.5).
Tolerances: 0.01 Hz and 0.05 damping percentage points (the issue's acceptance).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

from flexrobot_ros.cli import main
from flexrobot_ros.modal.frf import frame_jacobian
from flexrobot_ros.modal import linearize
from flexrobot_ros.modal.modes import modes_of
from flexrobot_ros.model import load_robot
from flexrobot_ros.oma import ModeTracker, TrackerOptions, identify_modes, prepare, read_signals
from flexrobot_ros.oma.signals import data_precision, significant_digits

Q8 = np.array([0.0, -0.374, 1.9448, 0.0, -1.9448, 0.0])  # seed 000 eq. 2.21, configuration 8
FORCE = np.array([0.0, 50.0, 0.0, 0.0, 0.0, 0.0])        # 50 N along y_0 (section 2.4.3)
DF_HZ, DZ_POINTS = 0.01, 0.05


class Model:
    """The Scompi's linearized closed loop at Q8 with the tool: expected modes and exact impulse responses."""

    def __init__(self):
        robot = load_robot("scompi", tool=True)
        self.lin = linearize(robot, Q8)
        self.modes = modes_of(self.lin)
        n = self.lin.n
        self.A = self.lin.state_matrix()
        jac = frame_jacobian(robot, self.lin.q, None, "world")
        self.B = np.zeros(4 * n)
        self.B[2 * n:] = np.linalg.solve(self.lin.M_bar, np.r_[jac.T @ FORCE, np.zeros(n)])
        self.C = np.zeros((n, 4 * n))
        self.C[:, n:2 * n] = np.eye(n)  # motor positions q_m (state z = [q; q_m], then velocities)

    def discrete(self, fs_hz: float) -> tuple[np.ndarray, np.ndarray]:
        """Exact zero-order-hold discretization (Ad, Bd) at ``fs_hz``."""
        size = len(self.B)
        aug = np.zeros((size + 1, size + 1))
        aug[:size, :size] = self.A
        aug[:size, size] = self.B
        e = scipy.linalg.expm(aug / fs_hz)
        return e[:size, :size], e[:size, size]

    def response(self, fs_hz: float, duration_s: float, pre_trigger: int) -> np.ndarray:
        """q_m deviation (samples, 6) [rad]: at rest for ``pre_trigger`` samples, force during the next one."""
        ad, bd = self.discrete(fs_hz)
        count = int(round(duration_s * fs_hz))
        x = np.zeros(len(bd))
        out = np.empty((count, self.C.shape[0]))
        for k in range(count):
            out[k] = self.C @ x
            x = ad @ x + (bd if k == pre_trigger else 0.0)
        return out

    def observable(self, fs_hz: float) -> np.ndarray:
        """Mask of the modes the record at ``fs_hz`` can identify (criterion in the module docstring)."""
        ad, bd = self.discrete(fs_hz)
        lam, vec = np.linalg.eig(self.A)
        left = np.linalg.inv(vec)
        peak = np.abs(self.response(fs_hz, 0.5, 0)).max()
        out = []
        for f, z, pole in zip(self.modes.frequencies_hz, self.modes.damping_ratios, self.modes.eigenvalues):
            r = int(np.argmin(np.abs(lam - pole)))
            amplitude = 2 * np.abs(self.C @ vec[:, r]).max() * abs(left[r] @ bd)  # modal contribution at k = 1
            decay = np.exp(pole.real / fs_hz)                                      # per sample
            samples = np.log(amplitude / (1e-6 * peak)) / -np.log(decay) if amplitude > 1e-6 * peak else 0.0
            out.append(f < 0.45 * fs_hz and z <= 0.40 and samples >= 10)
        return np.array(out)


@pytest.fixture(scope="module")
def model():
    return Model()


def write_csv(path: Path, fs_hz: float, q_m: np.ndarray) -> Path:
    """``t`` and ``q_m.joint1..6`` with 12 significant digits (what a user's export of simulation output holds)."""
    t = np.arange(len(q_m)) / fs_hz
    header = ",".join(["t"] + [f"q_m.joint{i + 1}" for i in range(q_m.shape[1])])
    np.savetxt(path, np.column_stack([t, q_m]), delimiter=",", fmt="%.12g", header=header, comments="")
    return path


@pytest.fixture(scope="module")
def records(model, tmp_path_factory):
    """Records (path, fs): ``set_point``: q_m = set point + response, 2 kHz, 3 s, 50 ms at rest; ``noise``: the
    response alone (set point removed, so that 12 digits keep the noise) plus white noise of 1e-9 of each
    channel's std; ``deviation``: the response alone (set point removed)
    at 1 kHz, 5 s, 0.2 s at rest (the record of the issue's VAR refusal); ``thesis_pulse``: set point +
    response to the thesis' 6 ms pulse after 0.2 s at 1 kHz, 5 s (the issue's spurious 425 Hz SSI-cov mode)."""
    folder = tmp_path_factory.mktemp("clean_oma")
    out = {}
    y = model.response(2000.0, 3.0, 100)
    out["set_point"] = (write_csv(folder / "set_point.csv", 2000.0, model.lin.q_m + y), 2000.0)
    noise = 1e-9 * y.std(axis=0) * np.random.default_rng(12).standard_normal(y.shape)
    out["noise"] = (write_csv(folder / "noise.csv", 2000.0, y + noise), 2000.0)  # no set point: 12 digits keep it
    y = model.response(1000.0, 5.0, 200)
    out["deviation"] = (write_csv(folder / "deviation.csv", 1000.0, y), 1000.0)
    ad, bd = model.discrete(1000.0)
    x, rows = np.zeros(len(bd)), []
    for k in range(5000):
        rows.append(model.C @ x)
        x = ad @ x + (bd if 200 <= k < 206 else 0.0)
    out["thesis_pulse"] = (write_csv(folder / "thesis_pulse.csv", 1000.0, model.lin.q_m + np.array(rows)), 1000.0)
    return out


def check_modes(model, fs_hz, frequencies_hz, damping_ratios, what):
    """Every observable mode within 0.01 Hz / 0.05 points, exactly once, and nothing else; returns the errors."""
    obs = model.observable(fs_hz)
    f_ref = model.modes.frequencies_hz[obs]
    z_ref = model.modes.damping_ratios[obs]
    f, z = np.asarray(frequencies_hz), np.asarray(damping_ratios)
    assert len(f) == len(f_ref), f"{what}: {np.round(f, 3)} against {np.round(f_ref, 3)}"
    j = np.argmin(np.abs(f[:, None] - f_ref[None, :]), axis=1)
    assert sorted(j) == list(range(len(f_ref))), f"{what}: a mode found twice or missed: {np.round(f, 3)}"
    df = np.abs(f - f_ref[j])
    dz = 100 * np.abs(z - z_ref[j])
    assert df.max() < DF_HZ and dz.max() < DZ_POINTS, f"{what}: |df| {df.max():.3g} Hz, |dz| {dz.max():.3g} points"
    return df, dz


def test_observable_modes_criterion(model):
    """The criterion keeps the 11 modes below 140 Hz and rejects mode 12 (about 850 Hz, 80 % damping) at 1 and
    2 kHz (thesis Table 2.5: 11 modes identified, mode 12 not)."""
    assert model.modes.frequencies_hz[11] > 800 and model.modes.damping_ratios[11] > 0.7
    for fs in (1000.0, 2000.0):
        assert model.observable(fs).tolist() == [True] * 11 + [False]


@pytest.mark.parametrize("method", ["var", "ssi-cov"])
@pytest.mark.parametrize("name", ["set_point", "noise", "deviation", "thesis_pulse"])
def test_every_observable_mode_and_nothing_else(model, records, method, name):
    """Issue 12 acceptance, item 4: noise-free records (12 digits) and 1e-9 relative noise, both methods at their
    default orders (VAR 2..40 lags, SSI-cov 2..100 states), through the CLI's conditioning (prepare): every
    observable mode within 0.01 Hz / 0.05 points and no other mode (low-confidence poles are kept apart, in
    ``result.uncertain``)."""
    path, fs = records[name]
    prepared = prepare(read_signals(path, ["q_m.*"]))
    assert prepared.fs_hz == pytest.approx(fs)
    result = identify_modes(prepared.data, prepared.fs_hz, method, channels=prepared.channels,
                            noise_floor=prepared.noise_floor)
    check_modes(model, fs, result.frequencies_hz, result.damping_ratios, f"{name}, {method}")
    if method == "var":
        assert not result.uncertain  # VAR gives these records no spurious pole to set apart


def test_cli_quoted_failures(records, model, capsys):
    """The issue's reports: `flexrobot oma` (VAR) on a noise-free record refused it ("only 107 of 4960 equations
    fit ... not a linear response"); `--method ssi-cov` printed a spurious low-confidence mode (425 Hz,
    confidence 0.49) like the others. Now: status 0, the observable modes and nothing else in the table and in
    --json; a low-confidence pole, if any, is listed apart ("uncertain poles, not modes", JSON "uncertain")."""
    path, fs = records["deviation"]
    assert main(["oma", str(path)]) == 0
    out = capsys.readouterr().out
    assert "11 modes" in out and "not a linear response" not in out
    for name in ("deviation", "thesis_pulse"):
        path, fs = records[name]
        assert main(["oma", str(path), "--method", "ssi-cov", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        check_modes(model, fs, doc["frequencies_hz"], doc["damping_ratios"], f"CLI {name}")
        for pole in doc["uncertain"]:  # recurs in few orders and its damping wanders (selection's test)
            assert pole["confidence"] < 0.6 * max(doc["confidence"])
            assert pole["damping_std"] > 0.05 * pole["damping_ratio"]
        assert main(["oma", str(path), "--method", "ssi-cov"]) == 0
        text = capsys.readouterr().out
        table = text.split("MPC\n", 1)[1].split("uncertain poles", 1)[0]
        assert len([line for line in table.splitlines() if line[:4].strip().isdigit()]) == 11
        assert ("uncertain poles, not modes" in text) == bool(doc["uncertain"])
        if name == "thesis_pulse":  # the spurious pole near 425 Hz is reported, apart from the modes
            assert any(abs(pole["frequency_hz"] - 425) < 5 for pole in doc["uncertain"]), doc["uncertain"]


def test_tracker_converges_on_clean_record(model, records):
    """The online tracker (SSI-cov, the batch default orders 2..100), streamed the clean 2 kHz record in 10 ms
    chunks with a window as long as the record, identifies the same modes as the model within the same
    tolerances, each with its own id."""
    path, fs = records["set_point"]
    signals = read_signals(path, ["q_m.*"])
    tracker = ModeTracker(fs, signals.channels, TrackerOptions(window_s=3.0, update_period_s=1.0, orders="2:100"))
    updates = []
    for k in range(0, len(signals.t), 20):
        updates += tracker.push(signals.t[k:k + 20], signals.data[k:k + 20])
    assert len(updates) == 1
    found = updates[-1].modes
    check_modes(model, fs, [m.frequency_hz for m in found], [m.damping_ratio for m in found], "tracker")
    assert len({m.id for m in found}) == len(found)


def test_data_precision_of_text_exports():
    """Values written with %.12g read back as 12 significant digits, rounding half-width 0.5e-11 times the
    channel's largest decade; full float64 values give 0 digits and the float64 rounding eps * max|x|."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2000, 2)) * [1.0, 1e-5] + [1.9, 0.0]
    stored = np.array([[float(f"{v:.12g}") for v in row] for row in x])
    assert significant_digits(stored).tolist() == [12, 12]
    peak_decade = np.floor(np.log10(np.abs(stored).max(axis=0)))
    np.testing.assert_allclose(data_precision(stored), 0.5 * 10.0 ** (peak_decade - 11))
    assert significant_digits(x).tolist() == [0, 0]
    np.testing.assert_allclose(data_precision(x), np.finfo(float).eps * np.abs(x).max(axis=0))
