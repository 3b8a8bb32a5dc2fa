"""Test signals with known modes: linear systems sampled exactly, for validating OMA.

A :class:`LinearSystem` is a continuous-time state-space model ``xdot = A x + B u``, ``y = C x`` whose modes are
known in closed form (the eigenvalues of ``A``). It is built from mass, damping and stiffness matrices
(:meth:`LinearSystem.from_mck`) or from modal parameters (:meth:`LinearSystem.from_modes`), and sampled without
integration error:

- :meth:`LinearSystem.impulse_response`: a rectangular force pulse (zero-order hold is exact for it) followed by
  the free decay, like an impact hammer test;
- :meth:`LinearSystem.white_noise_response`: continuous white-noise forces, discretized with Van Loan's
  method, so the sampled response has exactly the covariance of the continuous process.

The response is computed in the diagonal (modal) coordinates of ``A`` with one first-order recursion per pole
(``scipy.signal.lfilter``), which is exact and fast. :func:`add_noise` and :func:`quantize` model measurement
noise at a given SNR and encoder quantization. Nothing here is used by the identification itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.signal

from flexrobot_ros.errors import SignalError

__all__ = ["LinearSystem", "add_noise", "quantize"]


@dataclass(frozen=True)
class LinearSystem:
    """Continuous-time LTI system ``xdot = A x + B u``, ``y = C x``.

    ``A`` (2n, 2n) [1/s], ``B`` (2n, inputs), ``C`` (outputs, 2n). Outputs are displacements in the units the
    builder gives them (m or rad). Modes come from the eigenvalues of ``A`` (:attr:`frequencies_hz`,
    :attr:`damping_ratios`, undamped natural frequency ``|lambda| / 2 pi`` and ``-Re(lambda) / |lambda|``).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray

    @classmethod
    def from_mck(cls, M, C, K, outputs=None, inputs=None) -> "LinearSystem":
        """Second-order system ``M qdd + C qd + K q = F u`` with outputs ``y = q[outputs]``.

        ``inputs``/``outputs`` are DOF index lists (default: every DOF). Units: SI (kg, N·s/m, N/m).
        """
        M, Cd, K = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (M, C, K))
        n = M.shape[0]
        outputs = list(range(n)) if outputs is None else list(outputs)
        inputs = list(range(n)) if inputs is None else list(inputs)
        Minv = np.linalg.inv(M)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ Cd]])
        F = np.zeros((n, len(inputs)))
        F[inputs, range(len(inputs))] = 1.0
        B = np.vstack([np.zeros((n, len(inputs))), Minv @ F])
        Cout = np.zeros((len(outputs), 2 * n))
        Cout[range(len(outputs)), outputs] = 1.0
        return cls(A, B, Cout)

    @classmethod
    def from_modes(cls, frequencies_hz, damping_ratios, shapes, participation) -> "LinearSystem":
        """Uncoupled modal model ``eta_r'' + 2 zeta_r w_r eta_r' + w_r^2 eta_r = L_r . u``, ``y = Phi eta``.

        ``frequencies_hz`` (modes,) undamped natural frequencies, ``damping_ratios`` (modes,) fractions (< 1),
        ``shapes`` Phi (outputs, modes), ``participation`` L (modes, inputs).
        """
        f = np.asarray(frequencies_hz, dtype=float)
        z = np.asarray(damping_ratios, dtype=float)
        w = 2.0 * np.pi * f
        Phi = np.atleast_2d(np.asarray(shapes, dtype=float))
        L = np.asarray(participation, dtype=float).reshape(len(f), -1)
        n = len(f)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.diag(w**2), -np.diag(2.0 * z * w)]])
        B = np.vstack([np.zeros_like(L), L])
        C = np.hstack([Phi, np.zeros_like(Phi)])
        return cls(A, B, C)

    # ----------------------------------------------------------------------------------------------- modes
    def _poles(self) -> np.ndarray:
        lam = np.linalg.eigvals(self.A)
        lam = lam[lam.imag > 0]
        return lam[np.argsort(np.abs(lam))]

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Undamped natural frequencies ``|lambda| / 2 pi`` [Hz] of the oscillating poles, ascending."""
        return np.abs(self._poles()) / (2.0 * np.pi)

    @property
    def damping_ratios(self) -> np.ndarray:
        """Damping ratios ``-Re(lambda) / |lambda|`` [fraction], in the order of :attr:`frequencies_hz`."""
        lam = self._poles()
        return -lam.real / np.abs(lam)

    # ----------------------------------------------------------------------------------------- responses
    def _modal(self):
        lam, V = np.linalg.eig(self.A)
        return lam, V, np.linalg.solve(V, np.eye(len(lam)))

    def _run(self, fs_hz: float, mu: np.ndarray, drive: np.ndarray, V: np.ndarray) -> np.ndarray:
        """Recursions ``z[k+1] = mu z[k] + drive[k]`` (z[0] = 0) per modal coordinate; returns ``y = Re(C V z)``."""
        out = np.empty(drive.shape, dtype=complex)
        for r in range(len(mu)):
            out[:, r] = scipy.signal.lfilter([0.0, 1.0], [1.0, -mu[r]], drive[:, r])
        return np.real(out @ (self.C @ V).T)

    def impulse_response(self, fs_hz: float, duration_s: float, pulse_start_s: float, pulse_samples: int,
                         amplitude) -> np.ndarray:
        """Response ``y`` (samples, outputs) to a rectangular force pulse, sampled exactly at ``fs_hz``.

        The force ``amplitude`` (per input, N) acts on ``[pulse_start_s, pulse_start_s + pulse_samples / fs_hz)``
        from rest; the pulse edges are placed on samples so zero-order hold is exact. Sample k is time ``k/fs``.
        """
        dt = 1.0 / fs_hz
        n_samples = int(round(duration_s * fs_hz))
        lam, V, Vinv = self._modal()
        mu = np.exp(lam * dt)
        # exact ZOH input gain per pole: (e^{lam dt} - 1) / lam
        gain = np.where(np.abs(lam) > 0, (mu - 1.0) / np.where(lam == 0, 1.0, lam), dt)
        u = np.zeros((n_samples, self.B.shape[1]))
        k0 = int(round(pulse_start_s * fs_hz))
        u[k0:k0 + pulse_samples] = np.broadcast_to(np.asarray(amplitude, dtype=float), (self.B.shape[1],))
        drive = (u @ (Vinv @ self.B).T) * gain
        return self._run(fs_hz, mu, drive, V)

    def white_noise_response(self, fs_hz: float, duration_s: float, force_psd: float = 1.0,
                             rng: np.random.Generator | None = None, settle_s: float | None = None) -> np.ndarray:
        """Stationary response ``y`` (samples, outputs) to independent white-noise forces on every input.

        ``force_psd`` is the two-sided spectral density of each force [N^2/Hz] (intensity ``Q = force_psd`` in
        ``E[u(t) u(s)] = Q delta(t - s)``). The process noise of the sampled system is Van Loan's exact
        ``Qd = int_0^dt e^{A s} B Q B^T e^{A^T s} ds``. A settling time (default: 5 time constants of the
        slowest mode) is simulated and discarded so the output is stationary.
        """
        rng = np.random.default_rng() if rng is None else rng
        dt = 1.0 / fs_hz
        n = self.A.shape[0]
        lam, V, Vinv = self._modal()
        if settle_s is None:
            settle_s = 5.0 / max(np.min(-lam.real), 1e-9)
        n_settle = int(np.ceil(settle_s * fs_hz))
        n_samples = int(round(duration_s * fs_hz))
        Q = force_psd * np.eye(self.B.shape[1])
        vl = np.block([[-self.A, self.B @ Q @ self.B.T], [np.zeros((n, n)), self.A.T]]) * dt
        E = scipy.linalg.expm(vl)
        Ad = E[n:, n:].T
        Qd = Ad @ E[:n, n:]
        Qd = 0.5 * (Qd + Qd.T)
        evals, evecs = np.linalg.eigh(Qd)
        L = evecs * np.sqrt(np.clip(evals, 0.0, None))
        w = rng.standard_normal((n_settle + n_samples, n)) @ L.T
        drive = w @ Vinv.T
        y = self._run(fs_hz, np.exp(lam * dt), drive, V)
        return y[n_settle:]


def add_noise(y: np.ndarray, snr_db: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """``y`` plus white Gaussian noise whose power is ``snr_db`` below each channel's signal power."""
    rng = np.random.default_rng() if rng is None else rng
    y = np.asarray(y, dtype=float)
    rms = np.sqrt(np.mean((y - y.mean(axis=0)) ** 2, axis=0))
    return y + rng.standard_normal(y.shape) * rms * 10.0 ** (-snr_db / 20.0)


def quantize(y: np.ndarray, step) -> np.ndarray:
    """Encoder quantization: ``y`` rounded to multiples of ``step`` (scalar or per channel, same units)."""
    step = np.asarray(step, dtype=float)
    if np.any(step <= 0):
        raise SignalError(f"quantization step must be > 0, got {step}")
    return np.round(np.asarray(y, dtype=float) / step) * step
