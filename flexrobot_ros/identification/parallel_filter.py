"""Parallel filtering and decimation of the identification model (Gautier 1997, "Dynamic identification of robots
with power model"; Pham, Gautier & Poignet 2001): what seed 001's low-pass filtering of "torque and position
measurements" (section 2.3) has to be for the friction terms.

The rigid model holds sample by sample, tau(t_k) = Y(q, qd, qdd)(t_k) beta (seed 001 eq. 5). A linear filter L
applied to both sides keeps it exact, column by column, because beta is constant::

    L[tau] = L[Y] beta        (every column of Y and the torques through the same L)

whatever L attenuates. Filtering only the torques, L[tau] = Y beta, is exact only for the columns that L leaves
unchanged: the inertial and gravity columns are smooth functions of the excitation (a few times its highest
harmonic, far below the cutoff), but the Coulomb column f_c tanh(qd / v_c) ~ f_c sgn(qd) jumps at every velocity
reversal, and the jump's high-frequency content was filtered out of L[tau] and not out of the column: F_c came out
6-12 % low at the 5 Hz default (issue 37; F_c.joint2 = 180 N m of a kr90 came out 147 / 158 / 174 / 177 N m at
2 / 5 / 10 / 20 Hz). With the parallel filter the equation stays exact at any cutoff.

Two zero-phase Butterworth low-passes (order :data:`FILTER_ORDER`, applied forward and backward by
``scipy.signal.sosfiltfilt``: |H(f)|^2 = 1 / (1 + (f / f_c)^8), no phase lag; odd extension of
:data:`PADDING_PERIODS` / f_c seconds at each end, which is linear in the signal, so L[Y beta] = L[Y] beta holds at
the ends too):

* the *state* filter S at :data:`STATE_CUTOFF_RATIO` f_c (at most 0.4 f_s) on the positions (and on the torques of
  the joint-deflection estimate) before they are differentiated: it takes the encoder noise off the velocities
  and accelerations in Y, and leaves the signals within L's band unchanged (its attenuation at f_c is 1.5e-4; where
  it attenuates by 1 % or more, above 1.7 f_c, L has already taken off 98 %), so that L[Y(S q)] = L[Y(q)];
* the *parallel* filter L at f_c on every column of Y and on the torques. After L the rows carry nothing above
  about f_c, so they are decimated to :data:`ROWS_PER_CUTOFF` f_c rows per second (the Nyquist rate of the filtered
  signals), and the first and last :data:`TRIM_PERIODS` / f_c seconds are dropped (S's transients).

With S = L (both at f_c, as before issue 37) the states in Y are attenuated where L passes, L[Y(L q)] != L[Y(q)]:
on the simulated elastic kr90, F_c.joint1 = 1.2 N m came out 13 % high at a 2 Hz cutoff.

Correlated rows. White torque noise through L is correlated over about f_s / (2 f_c) samples; at the kept rows
(1 / (2 f_c) apart) the correlation is small (lag 1: 0.10, lag 2: -0.07) but not zero, and for regressor columns that
vary slowly between rows the least-squares covariance sigma^2 (A^T A)^-1 must be multiplied by
:meth:`ParallelFilter.noise_correlation` kappa = sum over all row lags l of rho(l), rho the autocorrelation of
L-filtered white noise at the row spacing (1.114 at 2 rows per cutoff period, whatever the cutoff: the rows are
worth N / kappa independent ones; 1.38 measured on 2e6 samples of white noise, 1.369 computed, at 100 Hz and a
20 Hz cutoff, where the rows are 50 per second). Without it the standard deviations come out 5 % small; kept at full
rate, the rows would claim kappa = 111 times too many independent equations at 1 kHz and 5 Hz (standard deviations
10.5x small).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.signal

#: Butterworth order of the zero-phase low-passes (applied forward and backward: effective order 8).
FILTER_ORDER = 4
#: Odd-extension padding of the zero-phase filters at each end, in periods of the cutoff (scipy's default, about
#: 27 samples, leaves transients far longer than the dropped 1 / cutoff_hz at the end of a record that stops moving
#: mid-trajectory).
PADDING_PERIODS = 3.0
#: Kept rows per second, in multiples of the cutoff frequency.
ROWS_PER_CUTOFF = 2.0
#: Seconds dropped at each end, in periods of the cutoff.
TRIM_PERIODS = 1.0
#: Cutoff of the state filter (positions before differentiation) in multiples of the parallel filter's.
STATE_CUTOFF_RATIO = 3.0
#: Highest state-filter cutoff, as a fraction of the sample rate (below the Nyquist frequency 0.5).
STATE_CUTOFF_LIMIT = 0.4


@dataclass(frozen=True)
class ParallelFilter:
    """The filters and the kept rows of a record of ``samples`` samples at ``rate_hz`` [Hz]: ``sos`` the sections
    of L (cutoff ``cutoff_hz`` [Hz]), ``state_sos`` those of S (``state_cutoff_hz``), ``padding`` [samples] of
    both, ``keep`` (rows,) the indices of the kept samples (module docstring)."""

    cutoff_hz: float
    state_cutoff_hz: float
    rate_hz: float
    sos: np.ndarray
    state_sos: np.ndarray
    padding: int
    keep: np.ndarray

    @classmethod
    def design(cls, cutoff_hz: float, rate_hz: float, samples: int) -> "ParallelFilter":
        """L at ``cutoff_hz`` and S above it for ``samples`` samples at ``rate_hz`` (0 < cutoff < Nyquist, checked
        by the caller); ``keep`` is empty when the record is not longer than the two dropped ends."""
        state_cutoff = min(STATE_CUTOFF_RATIO * cutoff_hz, STATE_CUTOFF_LIMIT * rate_hz)
        padding = min(samples - 1, int(np.ceil(PADDING_PERIODS * rate_hz / cutoff_hz)))
        trim = int(np.ceil(TRIM_PERIODS * rate_hz / cutoff_hz))
        keep = np.arange(trim, samples - trim, max(1, int(rate_hz / (ROWS_PER_CUTOFF * cutoff_hz))))
        return cls(float(cutoff_hz), float(max(state_cutoff, cutoff_hz)), float(rate_hz),
                   scipy.signal.butter(FILTER_ORDER, cutoff_hz, fs=rate_hz, output="sos"),
                   scipy.signal.butter(FILTER_ORDER, max(state_cutoff, cutoff_hz), fs=rate_hz, output="sos"),
                   padding, keep)

    @property
    def decimation(self) -> int:
        """Samples per kept row."""
        return int(self.keep[1] - self.keep[0]) if self.keep.size > 1 else 1

    def smooth(self, x: np.ndarray) -> np.ndarray:
        """S[x] at every sample, along axis 0 (samples first, any trailing shape)."""
        return scipy.signal.sosfiltfilt(self.state_sos, x, axis=0, padlen=self.padding)

    def low_pass(self, x: np.ndarray) -> np.ndarray:
        """L[x] at every sample, along axis 0 (samples first, any trailing shape)."""
        return scipy.signal.sosfiltfilt(self.sos, x, axis=0, padlen=self.padding)

    def rows(self, x: np.ndarray) -> np.ndarray:
        """L[x] at the kept samples (rows, ...)."""
        return self.low_pass(x)[self.keep]

    def noise_correlation(self) -> float:
        """kappa = sum_l rho(l D) over all integer l: the autocorrelation rho of white noise through L summed at
        the multiples of the row spacing D = :attr:`decimation` samples (1 for uncorrelated rows; module
        docstring). From L's impulse response, computed far from the record's ends."""
        half = int(np.ceil(20 * self.rate_hz / self.cutoff_hz))       # L's response has decayed to ~1e-12 there
        impulse = np.zeros(2 * half + 1)
        impulse[half] = 1.0
        response = scipy.signal.sosfiltfilt(self.sos, impulse, padlen=0)
        correlation = scipy.signal.correlate(response, response, mode="full", method="fft")  # lags -2 half..2 half
        lags = np.arange(-2 * half, 2 * half + 1)
        return float(correlation[lags % self.decimation == 0].sum() / correlation[2 * half])


__all__ = ["ParallelFilter", "FILTER_ORDER", "PADDING_PERIODS", "ROWS_PER_CUTOFF", "TRIM_PERIODS",
           "STATE_CUTOFF_RATIO", "STATE_CUTOFF_LIMIT"]
