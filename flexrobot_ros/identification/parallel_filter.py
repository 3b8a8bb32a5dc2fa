"""Parallel filtering and decimation of the identification model (Gautier 1997, "Dynamic identification of robots
with power model"; Pham, Gautier & Poignet 2001): what seed 001's low-pass filtering of "torque and position
measurements" (section 2.3) has to be for the friction terms.

The rigid model holds sample by sample, tau(t_k) = Y(q, qd, qdd)(t_k) beta (seed 001 eq. 5). A linear operator F
applied to both sides keeps it exact, column by column, because beta is constant::

    F[tau] = F[Y] beta        (every column of Y and the torques through the same F)

whatever F attenuates, aliases or drops. Filtering only the torques, F[tau] = Y beta, is exact only for the
columns that F leaves unchanged: the inertial and gravity columns are smooth functions of the excitation (a few
times its highest harmonic, far below the cutoff), but the Coulomb column f_c tanh(qd / v_c) ~ f_c sgn(qd) jumps at
every velocity reversal, and the jump's high-frequency content was filtered out of F[tau] and not out of the
column: F_c came out 6-12 % low at the 5 Hz default (issue 37; F_c.joint2 = 180 N m of a kr90 came out 147 / 158 /
174 / 177 N m at 2 / 5 / 10 / 20 Hz). With the parallel filter the equation stays exact at any cutoff.

F, step by step (the same steps on the torques and on every column of Y):

1. decimation to about :data:`BLOCKS_PER_CUTOFF` samples per cutoff period (none when the record is sampled
   slower): a causal Butterworth anti-alias low-pass (order :data:`ALIAS_ORDER` at a quarter of the decimated rate,
   started in its steady state for the first sample, which keeps it linear) and every :attr:`ParallelFilter.block`-th
   sample. Causal is enough: F only has to be the same on both sides, so its phase lag (its group delay, taken off
   the row times) changes no equation. Its state is carried from chunk to chunk, so Y is evaluated at every sample
   a chunk at a time and only the decimated samples are kept (a 600 s record of a 3-joint robot at 1 kHz, the
   5 Hz default: the identification's memory peaks at 150 MB, 160 MB before issue 37; its regressor at every
   sample alone would take 900 MB). What it folds into the band below the cutoff comes from near multiples
   of the decimated rate, where it attenuates by 1e-4 or more: the sharp steps of the friction columns at
   reversals, which S (below) smooths differently in Y than the robot did in the torques, do not leak into the
   band (with block means in place of this filter, F_c.joint2 came out 0.6 % off and I_yz.link2 22 % at 2 Hz on
   test_rigid_friction's record, against 0.0003 % and 0.03 % now);
2. L, the zero-phase Butterworth low-pass at f_c (order :data:`FILTER_ORDER`, forward and backward by
   ``scipy.signal.sosfiltfilt``: |H(f)|^2 = 1 / (1 + (f / f_c)^8), no phase lag; odd extension of
   :data:`PADDING_PERIODS` / f_c seconds at each end, which is linear in the signal);
3. rows: :data:`ROWS_PER_CUTOFF` f_c per second (after L nothing is left above about f_c), the first and last
   :data:`TRIM_PERIODS` / f_c seconds dropped (the transients of the state filter).

Before that, the positions (and the torques of the joint-deflection estimate) pass the *state* filter S, the same
Butterworth at :data:`STATE_CUTOFF_RATIO` f_c (at most 0.4 f_s), at every sample, and are differentiated: S takes the
encoder noise off the velocities and accelerations in Y and leaves the signals within L's band unchanged (its
attenuation at f_c is 1.5e-4; where it attenuates by 1 % or more, above 1.7 f_c, L has already taken off 98 %), so
that F[Y(S q)] = F[Y(q)]. With S = L (both at f_c, as before issue 37) the states in Y are attenuated where L
passes: on the simulated elastic kr90, F_c.joint1 = 1.2 N m came out 13 % high at a 2 Hz cutoff.

Correlated rows. White torque noise through F is correlated between neighbouring rows (lag 1: 0.10, lag 2:
-0.07). For regressor columns that vary slowly between rows the least-squares covariance sigma^2 (A^T A)^-1 must be
multiplied by :meth:`ParallelFilter.noise_correlation` kappa = sum over all row lags l of rho(l), rho the
autocorrelation of white noise through F at the row spacing (1.113 at 2 rows per cutoff period: the rows are worth
N / kappa independent ones; 1.159 at 1 kHz and a 20 Hz cutoff, rows at 41.7 Hz; 1.369 at 100 Hz and 20 Hz, rows at
50 Hz, 1.38 measured there on 2e6 samples of white noise). Without it the standard deviations come out 5 % small;
kept at full rate, the rows would claim kappa = 111 times too many independent equations at 1 kHz and 5 Hz
(standard deviations 10.5x small).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

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
#: Decimated samples per second (step 1), in multiples of the cutoff frequency (at least).
BLOCKS_PER_CUTOFF = 20.0
#: Butterworth order of the causal anti-alias filter of step 1, and its cutoff as a fraction of the decimated rate.
ALIAS_ORDER = 8
ALIAS_CUTOFF = 0.25
#: Seconds dropped at each end, in periods of the cutoff.
TRIM_PERIODS = 1.0
#: Columns filtered at once by :meth:`ParallelFilter.filtered_blocks`.
COLUMNS_AT_ONCE = 8
#: Cutoff of the state filter (positions before differentiation) in multiples of the parallel filter's.
STATE_CUTOFF_RATIO = 3.0
#: Highest state-filter cutoff, as a fraction of the sample rate (below the Nyquist frequency 0.5).
STATE_CUTOFF_LIMIT = 0.4


@dataclass(frozen=True)
class ParallelFilter:
    """F and S for a record of ``samples`` samples at ``rate_hz`` [Hz] (module docstring): every ``block``-th
    sample kept after ``alias_sos`` (the causal anti-alias filter at ``rate_hz``; None when ``block`` is 1), ``sos``
    the sections of L at the decimated rate (cutoff ``cutoff_hz`` [Hz]), ``padding`` its padding [decimated
    samples], ``keep`` (rows,) the indices of the kept decimated samples; ``state_sos`` the sections of S at
    ``rate_hz`` (``state_cutoff_hz``), ``state_padding`` [samples]."""

    cutoff_hz: float
    state_cutoff_hz: float
    rate_hz: float
    block: int
    alias_sos: np.ndarray | None
    sos: np.ndarray
    padding: int
    keep: np.ndarray
    state_sos: np.ndarray
    state_padding: int

    @classmethod
    def design(cls, cutoff_hz: float, rate_hz: float, samples: int) -> "ParallelFilter":
        """F at ``cutoff_hz`` and S above it for ``samples`` samples at ``rate_hz`` (0 < cutoff < Nyquist, checked
        by the caller); ``keep`` is empty when the record is not longer than the two dropped ends."""
        block = max(1, int(rate_hz / (BLOCKS_PER_CUTOFF * cutoff_hz)))
        block_rate, blocks = rate_hz / block, samples // block
        alias = (None if block == 1 else
                 scipy.signal.butter(ALIAS_ORDER, ALIAS_CUTOFF * block_rate, fs=rate_hz, output="sos"))
        state_cutoff = max(min(STATE_CUTOFF_RATIO * cutoff_hz, STATE_CUTOFF_LIMIT * rate_hz), cutoff_hz)
        trim = int(np.ceil(TRIM_PERIODS * block_rate / cutoff_hz))
        keep = np.arange(trim, blocks - trim, max(1, int(block_rate / (ROWS_PER_CUTOFF * cutoff_hz))))
        return cls(float(cutoff_hz), float(state_cutoff), float(rate_hz), block, alias,
                   scipy.signal.butter(FILTER_ORDER, cutoff_hz, fs=block_rate, output="sos"),
                   max(0, min(blocks - 1, int(np.ceil(PADDING_PERIODS * block_rate / cutoff_hz)))), keep,
                   scipy.signal.butter(FILTER_ORDER, state_cutoff, fs=rate_hz, output="sos"),
                   max(0, min(samples - 1, int(np.ceil(PADDING_PERIODS * rate_hz / cutoff_hz)))))

    @property
    def block_rate_hz(self) -> float:
        """Decimated samples per second [Hz]."""
        return self.rate_hz / self.block

    @property
    def decimation(self) -> int:
        """Decimated samples per kept row."""
        return int(self.keep[1] - self.keep[0]) if self.keep.size > 1 else 1

    @property
    def row_rate_hz(self) -> float:
        """Kept rows per second [Hz]."""
        return self.block_rate_hz / self.decimation

    @property
    def delay_s(self) -> float:
        """Group delay of step 1 at low frequency [s] (0 without decimation): the centroid of the anti-alias
        filter's impulse response."""
        if self.alias_sos is None:
            return 0.0
        impulse = np.zeros(int(np.ceil(200 * self.block)))
        impulse[0] = 1.0
        response = scipy.signal.sosfilt(self.alias_sos, impulse)
        return float(np.sum(np.arange(impulse.size) * response) / np.sum(response)) / self.rate_hz

    def smooth(self, x: np.ndarray) -> np.ndarray:
        """S[x] at every sample, along axis 0 (samples first, any trailing shape)."""
        return scipy.signal.sosfiltfilt(self.state_sos, x, axis=0, padlen=self.state_padding)

    def low_passed(self, x: np.ndarray) -> np.ndarray:
        """L at the full rate: x (samples, ...) through the zero-phase Butterworth at ``cutoff_hz`` designed at
        ``rate_hz`` (same order and padding in seconds as L; no decimation): the band the rows are fitted in, at
        every sample (a prediction to compare with recorded torques sample by sample)."""
        sos = scipy.signal.butter(FILTER_ORDER, self.cutoff_hz, fs=self.rate_hz, output="sos")
        return scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=self.state_padding)

    def decimated(self, chunks: Iterable[np.ndarray]) -> np.ndarray:
        """Step 1 on a signal given as consecutive chunks (samples_i, ...), samples first: (samples // block,
        ...). The anti-alias filter's state goes from chunk to chunk, so the result does not depend on the
        chunking."""
        out, state, offset = [], None, 0
        for chunk in chunks:
            chunk = np.asarray(chunk, dtype=float)
            if self.alias_sos is None:
                out.append(chunk)
                continue
            if state is None:                              # the steady state of the first sample: linear in it
                state = np.multiply.outer(scipy.signal.sosfilt_zi(self.alias_sos), chunk[0])
            filtered, state = scipy.signal.sosfilt(self.alias_sos, chunk, axis=0, zi=state)
            first = (self.block - 1 - offset) % self.block
            out.append(filtered[first::self.block].copy())      # a view would keep the whole chunk alive
            offset = (offset + len(chunk)) % self.block
        return np.concatenate(out)

    def filtered_blocks(self, decimated: np.ndarray) -> np.ndarray:
        """Steps 2-3 on decimated samples: L, then the kept rows (rows, ...); :data:`COLUMNS_AT_ONCE` trailing
        columns at a time (sosfiltfilt's padded copies of all of them at once would triple the memory)."""
        flat = np.asarray(decimated, dtype=float).reshape(len(decimated), -1)
        out = np.empty((self.keep.size, flat.shape[1]))
        for k in range(0, flat.shape[1], COLUMNS_AT_ONCE):
            out[:, k:k + COLUMNS_AT_ONCE] = scipy.signal.sosfiltfilt(
                self.sos, flat[:, k:k + COLUMNS_AT_ONCE], axis=0, padlen=self.padding)[self.keep]
        return out.reshape(self.keep.size, *np.shape(decimated)[1:])

    def rows(self, x: np.ndarray) -> np.ndarray:
        """F[x] (rows, ...) of ``x`` (samples, ...)."""
        return self.filtered_blocks(self.decimated([x]))

    def row_times(self, t: np.ndarray) -> np.ndarray:
        """Times of the kept rows (rows,) [s] from the sample times ``t``: the kept samples' minus the delay of
        step 1."""
        return t[self.block - 1::self.block][:len(t) // self.block][self.keep] - self.delay_s

    def noise_correlation(self) -> float:
        """kappa = sum_l rho(l D) over all integer l: the autocorrelation rho of white noise through L at the
        decimated rate summed at the multiples of the row spacing D = :attr:`decimation` (1 for uncorrelated rows;
        module docstring). White before L: step 1 passes L's band flat and folds nothing into it. From L's impulse
        response, computed far from the record's ends."""
        half = int(np.ceil(20 * self.block_rate_hz / self.cutoff_hz))   # L's response has decayed to ~1e-12 there
        impulse = np.zeros(2 * half + 1)
        impulse[half] = 1.0
        response = scipy.signal.sosfiltfilt(self.sos, impulse, padlen=0)
        correlation = scipy.signal.correlate(response, response, mode="full", method="fft")  # lags -2 half..2 half
        lags = np.arange(-2 * half, 2 * half + 1)
        return float(correlation[lags % self.decimation == 0].sum() / correlation[2 * half])


__all__ = ["ParallelFilter", "FILTER_ORDER", "PADDING_PERIODS", "ROWS_PER_CUTOFF", "BLOCKS_PER_CUTOFF",
           "ALIAS_ORDER", "ALIAS_CUTOFF", "COLUMNS_AT_ONCE", "TRIM_PERIODS", "STATE_CUTOFF_RATIO", "STATE_CUTOFF_LIMIT"]
