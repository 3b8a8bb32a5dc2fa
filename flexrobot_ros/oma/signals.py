"""Measured output signals for OMA: reading, channel selection, checks and conditioning.

A :class:`Signals` holds timestamps ``t`` (samples,) [s] and ``data`` (samples, channels) with channel names (e.g.
``q_m.joint2``). :func:`read_signals` reads CSV/NPZ files in the simulator's format
(:mod:`flexrobot_ros.timeseries`: first column ``t`` in s, one column per channel) through a table of readers keyed
by file suffix, so other formats plug in with :func:`register_reader`; headerless matrices (one sample per row, one
column per channel, no time column: most DAQ exports; ``.asc``, ``.txt``, ``.dat`` or a ``.csv`` whose first row is
numbers) are read by :func:`read_matrix` with the sampling rate given (``fs_hz``); rosbag2 bags (a directory, ``.db3``,
``.mcap``) are read by :mod:`flexrobot_ros.oma.bag_signals`, imported on first use (rosbags only; this package never
imports the runtime layer). :func:`prepare` turns raw signals into
what the identification methods need, uniformly sampled data:

1. checks: timestamps finite and strictly increasing, data finite (errors name the channel, sample and time),
   constant channels dropped with a warning (they carry no modal information and make the fits singular);
2. gaps (a sampling interval above ``gap_factor`` times the median) are reported, never bridged: an error
   by default, or the longest gap-free segment is kept (``on_gap="longest"``), with a warning;
3. jittered timestamps are resampled onto a uniform grid (cubic interpolation) at the median rate;
4. encoder quantization is detected (values on a grid of step ``q``); the step gives a noise floor
   ``q / sqrt(12)`` and a warning when a channel moves over only a few steps; the precision the values were
   stored with (:func:`data_precision`: significant decimal digits of a text export, else float64 rounding) gives
   a floor too, so noise-free records (simulation output) are judged by their own precision;
5. set-point removal: subtract a reference channel per channel, then ``detrend`` ``"constant"`` (mean),
   ``"linear"``, ``"none"`` or a zero-phase high-pass (``highpass_hz``) for slow set-point motion;
6. decimation with a zero-phase FIR anti-alias filter (``decimate`` factor, or ``decimate=None``: chosen from
   the band by :func:`band_decimation`, so the identification fits the band of interest rather than the whole
   spectrum up to the Nyquist frequency), and a check that the sampling rate suits the requested band
   (``band_hz`` above Nyquist is an error, above 0.4 fs a warning).
"""
from __future__ import annotations

import fnmatch
import importlib
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from flexrobot_ros.errors import SignalError
from flexrobot_ros.timeseries import SUFFIXES, read_timeseries

__all__ = ["Signals", "PreparedSignals", "SignalWarning", "read_signals", "read_matrix", "is_matrix_file",
           "MATRIX_SUFFIXES", "register_reader", "readers", "select_channels", "find_gaps", "sampling_rate",
           "band_decimation", "quantization_step", "data_precision", "significant_digits", "channel_scales", "prepare"]


class SignalWarning(UserWarning):
    """A signal is usable but something about it deserves attention (dropped channel, gap, coarse encoder)."""


@dataclass(frozen=True)
class Signals:
    """Timestamps ``t`` (samples,) [s], ``data`` (samples, channels) in SI units, ``channels`` names,
    ``source`` (file or stream the signals came from, used in messages)."""

    t: np.ndarray
    data: np.ndarray
    channels: tuple[str, ...]
    source: str = "<signals>"

    def __post_init__(self):
        t = np.asarray(self.t, dtype=float)
        data = np.asarray(self.data, dtype=float)
        if data.ndim == 1:
            data = data[:, None]
        if t.ndim != 1 or data.ndim != 2 or data.shape[0] != t.shape[0]:
            raise SignalError(f"{self.source}: t must be (samples,) and data (samples, channels), got "
                              f"{np.shape(self.t)} and {np.shape(self.data)}")
        if len(self.channels) != data.shape[1]:
            raise SignalError(f"{self.source}: {len(self.channels)} channel names for {data.shape[1]} columns")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "channels", tuple(str(c) for c in self.channels))

    def select(self, patterns: Sequence[str] | None) -> "Signals":
        """The channels matching ``patterns`` (names or shell globs such as ``q_m.*``), in pattern order."""
        if not patterns:
            return self
        idx = select_channels(self.channels, patterns, self.source)
        return replace(self, data=self.data[:, idx], channels=tuple(self.channels[i] for i in idx))


@dataclass(frozen=True)
class PreparedSignals:
    """Uniformly sampled, checked and conditioned signals ready for identification.

    ``data`` (samples, channels), ``fs_hz`` sampling rate [Hz], ``t0`` time of the first sample [s],
    ``channels`` names, ``quantization_steps`` (channels,) detected encoder steps (NaN: not quantized),
    ``noise_floor`` (channels,) the std of the error the values carry at least: quantization noise ``q / sqrt(12)``
    or the rounding of the stored digits ``precision / sqrt(3)``, whichever is larger; ``precision`` (channels,)
    half-width of that rounding (:func:`data_precision` of the raw values, data units); ``gaps`` list
    of ``(t_start, t_end)`` [s], ``dropped`` channels, ``resampled`` whether timestamps were regridded,
    ``decimation`` factor applied, ``notes`` every warning issued while preparing.
    """

    data: np.ndarray
    fs_hz: float
    t0: float
    channels: tuple[str, ...]
    quantization_steps: np.ndarray
    noise_floor: np.ndarray
    gaps: tuple[tuple[float, float], ...] = ()
    dropped: tuple[str, ...] = ()
    resampled: bool = False
    decimation: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)
    precision: np.ndarray | None = None


# --------------------------------------------------------------------------------------------------- readers
Reader = Callable[[Path], Signals]
_READERS: dict[str, Reader] = {}
#: Readers of this package imported on first use (their dependencies load only when such a file is read).
_BUILT_IN_READERS = {suffix: "flexrobot_ros.oma.bag_signals" for suffix in ("/", ".mcap", ".db3")}


def register_reader(suffixes: str | Sequence[str], reader: Reader) -> None:
    """Register ``reader(path) -> Signals`` for file suffixes (``".mcap"``) or ``"/"`` for directories."""
    for suffix in [suffixes] if isinstance(suffixes, str) else suffixes:
        _READERS[suffix.lower()] = reader


def readers() -> Mapping[str, Reader]:
    """The registered readers by suffix (read-only view)."""
    return dict(_READERS)


def read_signals(path: str | Path, channels: Sequence[str] | None = None, fs_hz: float | None = None) -> Signals:
    """Read a signal file (CSV, NPZ, a headerless matrix, or any registered format) and select ``channels`` (names
    or globs). ``fs_hz`` [Hz] is the sampling rate of a headerless matrix (:func:`read_matrix`), which has no time
    column; it is refused for files that carry their own times."""
    path = Path(path)
    if not path.exists():
        raise SignalError(f"{path}: no such file or directory")
    if is_matrix_file(path):
        if fs_hz is None:
            raise SignalError(f"{path}: no header row and no time column (one column per channel); give its "
                              f"sampling rate with --fs HZ (fs_hz)")
        return read_matrix(path, fs_hz).select(channels)
    if fs_hz is not None:
        raise SignalError(f"{path}: --fs (fs_hz) is the sampling rate of a headerless matrix file; this file "
                          f"carries its own times (column t or message stamps): leave --fs out")
    key = "/" if path.is_dir() else path.suffix.lower()
    if key not in _READERS and key in _BUILT_IN_READERS:
        importlib.import_module(_BUILT_IN_READERS[key])  # registers itself
    reader = _READERS.get(key)
    if reader is None:
        known = ", ".join(sorted(k if k != "/" else "directory" for k in _READERS))
        raise SignalError(f"{path}: no reader for {'a directory' if key == '/' else repr(key)} files "
                          f"(known: {known}, and headerless {', '.join(MATRIX_SUFFIXES)} with --fs)")
    return reader(path).select(channels)


#: Suffixes of headerless matrix files (one sample per row, one column per channel, no time column).
MATRIX_SUFFIXES = (".asc", ".txt", ".dat")


def _first_data_line(path: Path) -> str:
    with path.open(errors="replace") as stream:
        for line in stream:
            if line.strip() and not line.lstrip().startswith("#"):
                return line
    return ""


def is_matrix_file(path: Path) -> bool:
    """Whether ``path`` is a headerless matrix: a ``.asc``/``.txt``/``.dat`` file, or a ``.csv`` whose first data
    row is numbers (no header naming the columns)."""
    suffix = path.suffix.lower()
    if path.is_dir() or suffix not in MATRIX_SUFFIXES + (".csv",):
        return False
    if suffix in MATRIX_SUFFIXES:
        return True
    try:
        [float(v) for v in _first_data_line(path).replace(",", " ").split()]
    except ValueError:
        return False
    return True


def read_matrix(path: str | Path, fs_hz: float) -> Signals:
    """A headerless matrix file: one sample per row, one column per channel, separated by commas or white space,
    no time column; ``fs_hz`` [Hz] its sampling rate. Channels are named ``ch1``, ``ch2``, ... (column order);
    time is ``sample / fs_hz`` [s]."""
    path = Path(path)
    if not (isinstance(fs_hz, (int, float)) and np.isfinite(fs_hz) and fs_hz > 0):
        raise SignalError(f"{path}: sampling rate --fs (fs_hz) must be a positive number of Hz, got {fs_hz!r}")
    delimiter = "," if "," in _first_data_line(path) else None
    try:
        data = np.loadtxt(path, delimiter=delimiter, comments="#", ndmin=2)
    except ValueError as error:
        raise SignalError(f"{path}: not a matrix of numbers (one sample per row, one column per channel): "
                          f"{error}") from None
    if data.size == 0:
        raise SignalError(f"{path}: no samples")
    return Signals(np.arange(data.shape[0]) / float(fs_hz), data,
                   tuple(f"ch{i + 1}" for i in range(data.shape[1])), str(path))


def _read_timeseries(path: Path) -> Signals:
    t, columns = read_timeseries(path)
    if not columns:
        raise SignalError(f"{path}: no channel columns besides 't'")
    return Signals(t, np.column_stack(list(columns.values())), tuple(columns), str(path))


register_reader(SUFFIXES, _read_timeseries)


def select_channels(names: Sequence[str], patterns: Sequence[str], source: str = "<signals>") -> list[int]:
    """Indices of the channels matching each pattern (exact name or glob), in pattern order, no duplicates."""
    out: list[int] = []
    for pattern in patterns:
        hits = [i for i, n in enumerate(names) if n == pattern or fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            raise SignalError(f"{source}: no channel matches {pattern!r}; channels: {', '.join(names)}")
        out.extend(i for i in hits if i not in out)
    return out


# ---------------------------------------------------------------------------------------------- conditioning
def find_gaps(t: np.ndarray, gap_factor: float = 1.5) -> list[tuple[int, float, float]]:
    """Sampling gaps: ``(index, t_before, t_after)`` where ``t[i+1] - t[i] > gap_factor * median(dt)``."""
    dt = np.diff(t)
    if len(dt) == 0:
        return []
    limit = gap_factor * np.median(dt)
    return [(int(i), float(t[i]), float(t[i + 1])) for i in np.flatnonzero(dt > limit)]


def sampling_rate(t: np.ndarray) -> float:
    """Sampling rate [Hz] of timestamps ``t`` [s]: 1 / the median interval, rounded to the significant digits the
    float64 stamps resolve (their spacing ``eps * max|t|`` relative to the interval), so samples ``k / 40`` over
    330 s give 40.0 Hz, not 39.99999999999091 Hz."""
    t = np.asarray(t, dtype=float)
    dt = float(np.median(np.diff(t)))
    resolution = 2.0 * np.finfo(float).eps * max(abs(t[0]), abs(t[-1]), dt) / dt
    digits = int(np.clip(np.floor(-np.log10(resolution)), 1, 15))
    return float(f"{1.0 / dt:.{digits}g}")


def quantization_step(x: np.ndarray, max_levels_fraction: float = 0.5) -> float:
    """Encoder step of ``x`` if its values lie on a uniform grid, else NaN.

    The candidate is the smallest difference between distinct values; it is accepted when every
    difference between consecutive distinct values is an integer multiple of it (1 % tolerance) and the
    values repeat (fewer distinct values than ``max_levels_fraction`` of the samples).
    """
    u = np.unique(x)
    if len(u) < 2 or len(u) > max_levels_fraction * len(x):
        return float("nan")
    d = np.diff(u)
    step = d.min()
    if step <= 0:
        return float("nan")
    ratio = d / step
    return float(step) if np.max(np.abs(ratio - np.round(ratio))) < 0.01 else float("nan")


def significant_digits(x: np.ndarray, max_digits: int = 15) -> np.ndarray:
    """Significant decimal digits each channel of ``x`` (samples, channels) was stored with, or 0 when its values
    need more than ``max_digits`` (full float64 values, not a decimal export).

    A channel has ``d`` digits when every value equals itself rounded to ``d`` significant digits (within two
    float64 roundings), the way ``"%.{d}g"`` text written by a simulator or a spreadsheet reads back.
    """
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    out = np.zeros(x.shape[1], dtype=int)
    probe = x[np.linspace(0, len(x) - 1, min(len(x), 256)).astype(int)] if len(x) else x
    for c in range(x.shape[1]):
        d = 1
        while d <= max_digits:
            d = _digits_of(probe[:, c], d, max_digits)  # cheap: the fewest digits a few hundred values need
            if d == 0 or _digits_of(x[:, c], d, d) == d:
                break
            d += 1
        out[c] = d if d <= max_digits else 0
    return out


def _digits_of(x: np.ndarray, first: int, last: int) -> int:
    """The fewest significant digits in ``first .. last`` that represent every value of ``x``, else 0."""
    mag = np.abs(x)
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log10(np.where(mag > 0, mag, 1.0)))
    tol = 4.0 * np.finfo(float).eps * mag
    for d in range(first, last + 1):
        factor = 10.0 ** (d - 1 - exponent)
        if np.all(np.abs(np.round(x * factor) / factor - x) <= tol):
            return d
    return 0


def data_precision(x: np.ndarray, max_digits: int = 15) -> np.ndarray:
    """Half-width (channels,) of the rounding error the stored values of ``x`` (samples, channels) carry, in data
    units: ``0.5 * 10^(e - d + 1)`` for values written with ``d`` significant digits whose largest magnitude has
    decimal exponent ``e`` (:func:`significant_digits`), and at least the float64 rounding ``eps * max|x|``.

    This is the precision of a noise-free record (simulation output exported as text): what its residuals can
    reach at best, whatever the model.
    """
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    peak = np.max(np.abs(x), axis=0) if len(x) else np.zeros(x.shape[1])
    digits = significant_digits(x, max_digits)
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log10(np.where(peak > 0, peak, 1.0)))
    decimal = np.where((digits > 0) & (peak > 0), 0.5 * 10.0 ** (exponent - digits + 1), 0.0)
    return np.maximum(decimal, np.finfo(float).eps * peak)


def channel_scales(y: np.ndarray, scaling: str = "common", what: str = "OMA") -> np.ndarray:
    """Factors (channels,) dividing the mean-free channels before identification (poles do not depend on them).

    ``"common"``: one factor for all channels (their overall RMS), so each channel weighs by its motion; a
    channel that barely moves (e.g. a joint the excitation does not reach, carrying only numerical or encoder
    noise) cannot spoil the fit. ``"channel"``: each channel to unit variance (for channels in different
    units). Constant channels are an error naming them.
    """
    std = np.asarray(y, dtype=float).std(axis=0)
    if np.any(std == 0):
        raise SignalError(f"{what}: channel(s) {np.flatnonzero(std == 0).tolist()} are constant")
    if scaling == "common":
        return np.full_like(std, np.sqrt(np.mean(std**2)))
    if scaling == "channel":
        return std
    raise SignalError(f"{what}: scaling must be 'common' or 'channel', got {scaling!r}")


#: Sampling rate over band after automatic decimation: the band stays below 0.4 fs (no close-to-Nyquist warning)
#: and the anti-alias filter's transition (up to the new Nyquist frequency) lies above it.
BAND_OVERSAMPLING = 2.5


def band_decimation(fs_hz: float, band_hz: float | None, samples: int) -> int:
    """Decimation factor that brings ``fs_hz`` [Hz] down to about :data:`BAND_OVERSAMPLING` times ``band_hz`` [Hz]
    (1 without a band), keeping at least 30 samples per factor for the anti-alias filter."""
    if band_hz is None or not band_hz > 0:
        return 1
    return int(max(1, min(np.floor(fs_hz / (BAND_OVERSAMPLING * band_hz)), samples // 30)))


def _warn(notes: list[str], message: str) -> None:
    notes.append(message)
    warnings.warn(message, SignalWarning, stacklevel=3)


def prepare(signals: Signals, detrend: str = "constant", highpass_hz: float | None = None,
            references: Mapping[str, np.ndarray] | None = None, band_hz: float | None = None,
            decimate: int | None = 1, gap_factor: float = 1.5, on_gap: str = "error",
            min_quantization_steps: float = 8.0) -> PreparedSignals:
    """Check and condition ``signals`` for identification (see the module docstring for the steps).

    ``detrend``: ``"constant"``, ``"linear"`` or ``"none"``; ``highpass_hz``: zero-phase 4th-order
    Butterworth high-pass [Hz] applied after detrending (removes slow set-point motion); ``references``:
    channel name -> reference signal (samples,) subtracted first (e.g. the commanded motor position);
    ``band_hz``: highest frequency of interest [Hz]; ``decimate``: integer factor, or None to choose it from
    ``band_hz`` (:func:`band_decimation`; a note says what was done); ``on_gap``: ``"error"`` or
    ``"longest"``; ``min_quantization_steps``: warn when a channel's std spans fewer encoder steps.
    """
    import scipy.interpolate  # imported here: `flexrobot oma --help` (this module's readers) needs no scipy
    import scipy.signal

    notes: list[str] = []
    src = signals.source
    t, data, names = signals.t, signals.data, list(signals.channels)
    if len(t) < 3:
        raise SignalError(f"{src}: {len(t)} samples; OMA needs a record of many samples")
    if not np.all(np.isfinite(t)):
        k = int(np.flatnonzero(~np.isfinite(t))[0])
        raise SignalError(f"{src}: timestamp {k} is {t[k]} (must be finite)")
    dt = np.diff(t)
    if np.any(dt <= 0):
        k = int(np.flatnonzero(dt <= 0)[0])
        raise SignalError(f"{src}: timestamps must increase strictly; t[{k}] = {t[k]:.9g} s is followed by "
                          f"t[{k + 1}] = {t[k + 1]:.9g} s (sort the samples or drop duplicates)")
    bad = ~np.isfinite(data)
    if bad.any():
        c = int(np.flatnonzero(bad.any(axis=0))[0])
        k = int(np.flatnonzero(bad[:, c])[0])
        raise SignalError(f"{src}: channel {names[c]!r} has {int(bad[:, c].sum())} non-finite value(s), first "
                          f"at sample {k} (t = {t[k]:.6g} s): {data[k, c]}")
    precision = data_precision(data)
    if references:
        data = data.copy()
        for name, ref in references.items():
            if name not in names:
                raise SignalError(f"{src}: reference given for unknown channel {name!r}")
            ref = np.asarray(ref, dtype=float)
            if ref.shape != t.shape or not np.all(np.isfinite(ref)):
                raise SignalError(f"{src}: reference of {name!r} must be finite with {len(t)} samples")
            data[:, names.index(name)] -= ref
            k = names.index(name)
            precision[k] = np.hypot(precision[k], data_precision(ref)[0])
    constant = [i for i in range(data.shape[1]) if np.ptp(data[:, i]) == 0]
    if constant:
        dropped = tuple(names[i] for i in constant)
        if len(constant) == data.shape[1]:
            raise SignalError(f"{src}: every channel is constant ({', '.join(dropped)}); nothing to identify")
        _warn(notes, f"{src}: constant channel(s) dropped: {', '.join(dropped)}")
        keep = [i for i in range(data.shape[1]) if i not in constant]
        data, names, precision = data[:, keep], [names[i] for i in keep], precision[keep]
    else:
        dropped = ()
    gaps = find_gaps(t, gap_factor)
    gap_times = tuple((a, b) for _, a, b in gaps)
    start = float(t[0])  # messages give times from the record's start (stamps may count from the epoch)
    if gaps:
        listing = ", ".join(f"{a - start:.6g}-{b - start:.6g} s" for a, b in gap_times[:5])
        listing = f"{listing}{' ...' if len(gaps) > 5 else ''} from the record's start"
        if on_gap == "error":
            raise SignalError(f"{src}: {len(gaps)} sampling gap(s) longer than {gap_factor} sampling intervals "
                              f"({listing}); OMA does not bridge gaps (use on_gap='longest' / --on-gap longest "
                              f"to analyse the longest gap-free segment)")
        if on_gap != "longest":
            raise SignalError(f"on_gap must be 'error' or 'longest', got {on_gap!r}")
        edges = [0] + [i + 1 for i, _, _ in gaps] + [len(t)]
        j = int(np.argmax(np.diff(edges)))
        a, b = edges[j], edges[j + 1]
        _warn(notes, f"{src}: {len(gaps)} sampling gap(s) ({listing}); analysing the longest gap-free segment "
                     f"{t[a] - start:.6g}-{t[b - 1] - start:.6g} s ({b - a} samples)")
        t, data = t[a:b], data[a:b]
        if len(t) < 3:
            raise SignalError(f"{src}: the longest gap-free segment has only {len(t)} samples")
    dt = np.diff(t)
    dt_med = float(np.median(dt))
    fs = sampling_rate(t)
    steps = np.array([quantization_step(data[:, i]) for i in range(data.shape[1])])
    resampled = bool(np.max(np.abs(dt - dt_med)) > 1e-6 * dt_med)
    if resampled:
        n = int(np.floor((t[-1] - t[0]) / dt_med)) + 1
        grid = t[0] + dt_med * np.arange(n)
        data = scipy.interpolate.CubicSpline(t, data, axis=0)(grid)
        jitter = float(np.std(dt) / dt_med)
        notes.append(f"{src}: timestamps jitter by {100 * jitter:.2g} % of the {dt_med * 1e3:.4g} ms interval; "
                     f"resampled onto a uniform grid at {fs:.6g} Hz")
    if detrend == "constant":
        data = data - data.mean(axis=0)
    elif detrend == "linear":
        data = scipy.signal.detrend(data, axis=0, type="linear")
    elif detrend != "none":
        raise SignalError(f"detrend must be 'constant', 'linear' or 'none', got {detrend!r}")
    if highpass_hz is not None:
        if not 0 < highpass_hz < 0.5 * fs:
            raise SignalError(f"{src}: high-pass cut-off {highpass_hz} Hz must lie in (0, {0.5 * fs:.6g}) Hz")
        sos = scipy.signal.butter(4, highpass_hz, btype="highpass", fs=fs, output="sos")
        data = scipy.signal.sosfiltfilt(sos, data, axis=0)
    q = band_decimation(fs, band_hz, data.shape[0]) if decimate is None else int(decimate)
    if decimate is None and q > 1:
        notes.append(f"{src}: decimated by {q} to {fs / q:.6g} Hz for the band up to {band_hz:.6g} Hz "
                     f"(--decimate 1 keeps {fs:.6g} Hz)")
    if q < 1:
        raise SignalError(f"decimation factor must be >= 1, got {decimate}")
    if q > 1:
        if data.shape[0] < 30 * q:
            raise SignalError(f"{src}: {data.shape[0]} samples are too few to decimate by {q}")
        data = scipy.signal.decimate(data, q, ftype="fir", axis=0, zero_phase=True)
        fs = fs / q
    if band_hz is not None:
        if band_hz >= 0.5 * fs:
            raise SignalError(f"{src}: sampling rate {fs:.6g} Hz is too low for the requested band up to "
                              f"{band_hz:.6g} Hz (Nyquist frequency {0.5 * fs:.6g} Hz)")
        if band_hz > 0.4 * fs:
            _warn(notes, f"{src}: band up to {band_hz:.6g} Hz is close to the Nyquist frequency {0.5 * fs:.6g} Hz; "
                         f"modes near it are poorly resolved")
    std = data.std(axis=0)
    for i, name in enumerate(names):
        if np.isfinite(steps[i]) and std[i] < min_quantization_steps * steps[i]:
            _warn(notes, f"{src}: channel {name!r} moves over only {std[i] / steps[i]:.3g} encoder steps "
                         f"(step {steps[i]:.3g}, std {std[i]:.3g}); quantization noise will bias weak modes")
    floor = np.maximum(np.where(np.isfinite(steps), steps, 0.0) / np.sqrt(12.0), precision / np.sqrt(3.0))
    return PreparedSignals(data=np.ascontiguousarray(data), fs_hz=float(fs), t0=float(t[0]), channels=tuple(names),
                           quantization_steps=steps, noise_floor=floor, gaps=gap_times, dropped=dropped,
                           resampled=resampled, decimation=q, notes=tuple(notes), precision=precision)
