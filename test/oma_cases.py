"""Data sets with known modes shared by the OMA tests and bench/oma.py.

Every signal is sampled exactly from a continuous linear system (flexrobot_ros.oma.synthetic), so the true
modes are the eigenvalues of its state matrix, independent of the OMA code under test.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexrobot_ros.oma.synthetic import LinearSystem, add_noise, quantize

#: Seed 000, Table 2.5, Scompi configuration 8, AMA case 1: frequency [Hz], damping ratio [%]. Mode 12
#: (850.8 Hz, 80.6 %) lies beyond the 500 Hz Nyquist frequency of the 1 kHz record, as in the thesis.
TABLE_2_5_CASE1 = np.array([
    [6.3692, 7.6686], [6.9642, 11.2981], [9.8842, 12.7399], [12.7170, 16.1988], [13.1418, 16.7181],
    [25.5949, 26.5926], [37.0199, 1.3938], [58.3984, 2.9817], [58.8631, 3.4643], [94.3825, 2.2483],
    [183.2303, 17.0471], [850.8082, 80.5774],
])


@dataclass(frozen=True)
class Case:
    """Output record ``y`` (samples, channels) at ``fs_hz``, its true ``frequencies_hz`` and ``damping_ratios``."""

    y: np.ndarray
    fs_hz: float
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    name: str

    @property
    def t(self) -> np.ndarray:
        return np.arange(len(self.y)) / self.fs_hz


def chain_system() -> LinearSystem:
    """4-DOF mass-spring-damper chain fixed at one end (non-proportional damping, complex modes):
    11.3, 26.2, 39.5, 47.5 Hz with 1.2, 2.6, 3.8, 4.1 % damping; every DOF measured, forced by white noise."""
    m = [2.0, 1.5, 1.0, 0.8]
    k = [6.0e4, 4.0e4, 3.0e4, 2.5e4]
    c = [25.0, 12.0, 8.0, 6.0]
    n = len(m)
    K = np.zeros((n, n))
    C = np.zeros((n, n))
    for i in range(n):
        K[i, i] += k[i]
        C[i, i] += c[i]
        if i > 0:
            for mat, val in ((K, k[i]), (C, c[i])):
                mat[i - 1, i - 1] += val
                mat[i - 1, i] -= val
                mat[i, i - 1] -= val
    return LinearSystem.from_mck(np.diag(m), C, K)


def white_noise_case(seed: int = 0, duration_s: float = 600.0, fs_hz: float = 200.0) -> Case:
    """Chain response to white-noise forces, 30 dB SNR measurement noise, then quantized to std/20 steps."""
    system = chain_system()
    rng = np.random.default_rng(seed)
    y = system.white_noise_response(fs_hz, duration_s, rng=rng)
    y = add_noise(y, 30.0, rng)
    y = quantize(y, y.std(axis=0) / 20.0)
    return Case(y, fs_hz, system.frequencies_hz, system.damping_ratios, "white noise, 4-DOF chain")


def modal_impulse(frequencies_hz, damping_ratios, channels: int, seed: int, duration_s: float,
                  pre_trigger_s: float, pulse_samples: int, force_n: float, fs_hz: float = 1000.0,
                  quantization: float = 0.0) -> np.ndarray:
    """Impulse response of a modal model with random shapes (channels x modes) and random participation scaled
    by omega (so every mode moves the outputs by a comparable amount), quantized to ``quantization`` times the
    peak value when > 0."""
    f = np.asarray(frequencies_hz, dtype=float)
    rng = np.random.default_rng(seed)
    shapes = rng.standard_normal((channels, len(f))) * 1e-6
    participation = (rng.uniform(0.5, 1.5, len(f)) * rng.choice([-1.0, 1.0], len(f)) * 2 * np.pi * f)[:, None]
    system = LinearSystem.from_modes(f, damping_ratios, shapes, participation)
    y = system.impulse_response(fs_hz, duration_s, pre_trigger_s, pulse_samples, force_n)
    return quantize(y, np.abs(y).max() * quantization) if quantization > 0 else y


def scompi_standin(seed: int = 1, quantization: float = 1e-6) -> Case:
    """Stand-in for the thesis experiment (seed 000 section 2.4.3): 12 modes of Table 2.5 case 1 on 6 channels,
    50 N force for 6 samples after 0.2 s pre-trigger, 3.2 s at 1 kHz, values rounded to 1e-6 of the peak."""
    f, z = TABLE_2_5_CASE1[:, 0], TABLE_2_5_CASE1[:, 1] / 100.0
    y = modal_impulse(f, z, 6, seed, 3.2, 0.2, 6, 50.0, quantization=quantization)
    return Case(y, 1000.0, f, z, "Scompi stand-in (Table 2.5 case 1)")


#: free decay with frequencies 5-200 Hz and damping up to 27 %
FREE_DECAY_MODES = np.array([[5.0, 0.02], [21.0, 0.08], [63.0, 0.27], [118.0, 0.03], [196.0, 0.12]])


def free_decay_case(seed: int = 0, quantization: float = 1e-3) -> Case:
    """Impact (3 samples) on a 5-mode system measured by 4 channels, 2.5 s at 1 kHz, quantized to 1e-3 of peak."""
    f, z = FREE_DECAY_MODES[:, 0], FREE_DECAY_MODES[:, 1]
    y = modal_impulse(f, z, 4, seed, 2.5, 0.1, 3, 20.0, quantization=quantization)
    return Case(y, 1000.0, f, z, "free decay 5-200 Hz, damping up to 27 %")


def match(found_hz: np.ndarray, true_hz: np.ndarray) -> np.ndarray:
    """Index of the nearest true mode for each found frequency."""
    return np.argmin(np.abs(np.asarray(found_hz)[:, None] - np.asarray(true_hz)[None, :]), axis=1)
