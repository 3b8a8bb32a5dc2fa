"""Stability lobes of milling: the zeroth-order (average tooth angle) solution of Altintas and Budak (1995).

Reference: Y. Altintas, E. Budak, Analytical prediction of stability lobes in milling, Ann. CIRP 44 (1995)
357-362 (seed 001 ref. [3]); Y. Altintas, Manufacturing Automation, 2nd ed. (2012), section 3.4.

Machining frame (right-handed): x = feed direction, z = tool axis pointing from the tool tip into the spindle,
y = z cross x. The cutter turns clockwise seen from the spindle (+z), i.e. a right-hand cutter under M03. The
immersion angle phi of a tooth is measured clockwise from +y; a tooth cuts while ``entry <= phi <= exit``:
up-milling ``entry = 0, exit = arccos(1 - 2 a_e/D)``; down-milling ``entry = arccos(2 a_e/D - 1), exit = pi``;
slotting (full immersion) ``0..pi``. With the chip thickness ``h = dx sin(phi) + dy cos(phi)`` (dx, dy: the
vibration of this tooth pass minus that of the previous one, tool relative to workpiece), the tangential force
``F_t = K_t a h`` [N] and the radial force ``F_r = K_r F_t`` on the tool give

    {F} = 1/2 a K_t [A0] {d},     [A0] = N/(2 pi) [alpha],

with ``a`` the axial depth of cut [m], ``K_t`` the tangential cutting coefficient [N/m^2], ``K_r`` the RATIO of
the radial to the tangential coefficient [-], N the number of teeth and the average directional coefficients

    alpha_xx = 1/2 [ cos 2phi - 2 K_r phi + K_r sin 2phi ]_entry^exit
    alpha_xy = 1/2 [-sin 2phi - 2 phi + K_r cos 2phi ]_entry^exit
    alpha_yx = 1/2 [-sin 2phi + 2 phi + K_r cos 2phi ]_entry^exit
    alpha_yy = 1/2 [-cos 2phi - 2 K_r phi - K_r sin 2phi ]_entry^exit.

With the tool-tip receptance [Phi(i w_c)] (2 x 2, [m/N], x/y of the machining frame, cross terms included) at a
chatter frequency w_c, ``{d} = (1 - e^(-i w_c T)) [Phi] {F}`` and the oriented FRF ``[Phi0] = [alpha][Phi]``,
the critical depth solves ``det[I + Lambda [Phi0]] = 0`` with ``Lambda = -N a K_t (1 - e^(-i w_c T)) / (4 pi)``:
``Lambda = -1/lambda0`` for each eigenvalue lambda0 of [Phi0], and

    a_lim = -2 pi Lambda_R (1 + kappa^2) / (N K_t),   kappa = Lambda_I / Lambda_R,
    eps = pi - 2 atan(kappa),   T = (eps + 2 k pi) / w_c,   n = 60 / (N T) [rpm],   k = 0, 1, 2, ...

Only ``Lambda_R < 0`` gives a positive (physical) depth. Each lobe k is the curve (n, a_lim) over the chatter
frequencies; the lower envelope over the lobes is the stability limit; its minimum over all speeds, the smallest
a_lim over the chatter frequencies, is the depth below which the cut is stable at every spindle speed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import minimize_scalar

from flexrobot_ros.errors import ModalError

#: ``frf(frequencies_hz (F,)) -> (F, 2, 2)`` complex receptance [m/N] in the machining frame's x/y.
FeedPlaneFRF = Callable[[np.ndarray], np.ndarray]
MILLING_MODES = ("up", "down")
#: Most lobes a diagram computes (a spindle-speed range reaching far below the first lobe is refused).
MAX_LOBES = 500


@dataclass(frozen=True)
class MillingProcess:
    """The cut: ``teeth`` N, ``kt`` tangential cutting coefficient [N/m^2], ``kr`` radial/tangential ratio [-],
    ``entry_angle`` and ``exit_angle`` [rad] (measured clockwise from +y, module docstring)."""

    teeth: int
    kt: float
    kr: float
    entry_angle: float
    exit_angle: float

    def __post_init__(self) -> None:
        if int(self.teeth) != self.teeth or self.teeth < 1:
            raise ModalError(f"milling: teeth: expected a positive integer, got {self.teeth}")
        if not (np.isfinite(self.kt) and self.kt > 0):
            raise ModalError(f"milling: K_t: expected a positive tangential cutting coefficient [N/m^2], got "
                             f"{self.kt}")
        if not (np.isfinite(self.kr) and self.kr >= 0):
            raise ModalError(f"milling: K_r: expected a non-negative radial/tangential force ratio [-], got {self.kr}")
        if not 0.0 <= self.entry_angle < self.exit_angle <= np.pi:
            raise ModalError(f"milling: immersion angles: expected 0 <= entry < exit <= pi rad, got entry "
                             f"{self.entry_angle} rad, exit {self.exit_angle} rad")

    @classmethod
    def from_immersion(cls, teeth: int, kt: float, kr: float, radial_immersion: float, milling: str = "down"
                       ) -> MillingProcess:
        """The cut of a cutter engaged over ``radial_immersion`` = a_e/D (0 < . <= 1) of its diameter, up- or
        down-milling (1 = slotting, the same for both)."""
        entry, exit_ = immersion_angles(radial_immersion, milling)
        return cls(teeth=int(teeth), kt=float(kt), kr=float(kr), entry_angle=entry, exit_angle=exit_)

    def directional_coefficients(self) -> np.ndarray:
        """[alpha] (2, 2) [-] of the module docstring; [A0] = N/(2 pi) [alpha]."""
        return directional_coefficients(self.entry_angle, self.exit_angle, self.kr)


def immersion_angles(radial_immersion: float, milling: str = "down") -> tuple[float, float]:
    """``(entry, exit)`` angles [rad] of a cut over ``radial_immersion`` = a_e/D of the cutter diameter."""
    if milling not in MILLING_MODES:
        raise ModalError(f"milling: expected one of {list(MILLING_MODES)}, got {milling!r}")
    if not (np.isfinite(radial_immersion) and 0.0 < radial_immersion <= 1.0):
        raise ModalError(f"milling: radial immersion a_e/D: expected 0 < a_e/D <= 1, got {radial_immersion}")
    if milling == "up":
        return 0.0, float(np.arccos(1.0 - 2.0 * radial_immersion))
    return float(np.arccos(2.0 * radial_immersion - 1.0)), float(np.pi)


def directional_coefficients(entry_angle: float, exit_angle: float, kr: float) -> np.ndarray:
    """The average directional coefficients [alpha] (2, 2) [-] between ``entry_angle`` and ``exit_angle`` [rad]
    for the radial/tangential ratio ``kr`` (module docstring)."""

    def primitive(phi: float) -> np.ndarray:
        s, c = np.sin(2 * phi), np.cos(2 * phi)
        return 0.5 * np.array([[c - 2 * kr * phi + kr * s, -s - 2 * phi + kr * c],
                               [-s + 2 * phi + kr * c, -c - 2 * kr * phi - kr * s]])

    return primitive(exit_angle) - primitive(entry_angle)


@dataclass(frozen=True)
class StabilityLobes:
    """A zeroth-order stability lobe diagram (module docstring).

    ``chatter_frequencies_hz`` (F,) [Hz] (the grid given plus the frequency of the minimum); ``critical_depths_m`` (F, 2) a_lim [m] of the two eigenvalues of
    [Phi0] at each chatter frequency (NaN where Lambda_R >= 0: no chatter there), eigenvalues followed by
    continuity along F; ``phase_shifts_rad`` (F, 2) eps [rad]; ``lobe_numbers`` (K+1,) k;
    ``spindle_speeds_rpm`` (K+1, F, 2) n [rpm] of lobe k; ``minimum_depth_m`` the smallest a_lim [m] (refined
    between the grid frequencies), at ``minimum_chatter_frequency_hz`` [Hz], reached on lobe k at
    ``minimum_speeds_rpm[k]`` [rpm]; ``process`` the cut.
    """

    chatter_frequencies_hz: np.ndarray
    critical_depths_m: np.ndarray
    phase_shifts_rad: np.ndarray
    lobe_numbers: np.ndarray
    spindle_speeds_rpm: np.ndarray
    minimum_depth_m: float
    minimum_chatter_frequency_hz: float
    minimum_speeds_rpm: np.ndarray
    process: MillingProcess

    def envelope(self, speeds_rpm: np.ndarray) -> np.ndarray:
        """The lower envelope of the lobes: the critical depth [m] at each of ``speeds_rpm`` [rpm] (inf where no
        lobe passes), linear between the computed points of each lobe."""
        speeds = np.asarray(speeds_rpm, dtype=float)
        order = np.argsort(speeds.ravel())
        grid = speeds.ravel()[order]
        best = np.full(grid.size, np.inf)
        for k in range(self.lobe_numbers.size):
            for branch in range(2):
                _lower_segments(grid, self.spindle_speeds_rpm[k, :, branch], self.critical_depths_m[:, branch], best)
        result = np.empty_like(best)
        result[order] = best
        return result.reshape(speeds.shape)


def _lower_segments(grid: np.ndarray, speeds: np.ndarray, depths: np.ndarray, best: np.ndarray) -> None:
    """Lower ``best`` (on the sorted speed ``grid``) to the curve through (``speeds``, ``depths``), piecewise linear
    between consecutive finite points."""
    n0, n1, a0, a1 = speeds[:-1], speeds[1:], depths[:-1], depths[1:]
    valid = np.isfinite(n0) & np.isfinite(n1) & np.isfinite(a0) & np.isfinite(a1)
    n0, n1, a0, a1 = n0[valid], n1[valid], a0[valid], a1[valid]
    first = np.searchsorted(grid, np.minimum(n0, n1), side="left")
    counts = np.searchsorted(grid, np.maximum(n0, n1), side="right") - first
    if counts.sum() == 0:
        return
    segment = np.repeat(np.arange(counts.size), counts)
    index = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + first[segment]
    span = n1[segment] - n0[segment]
    weight = np.divide(grid[index] - n0[segment], span, out=np.zeros(index.size), where=span != 0)
    np.minimum.at(best, index, a0[segment] + weight * (a1[segment] - a0[segment]))


def _follow_branches(values: np.ndarray) -> np.ndarray:
    """Order the two eigenvalues (F, 2) so that each column varies continuously along F."""
    values = values.copy()
    for i in range(1, values.shape[0]):
        same = abs(values[i, 0] - values[i - 1, 0]) + abs(values[i, 1] - values[i - 1, 1])
        swapped = abs(values[i, 1] - values[i - 1, 0]) + abs(values[i, 0] - values[i - 1, 1])
        if swapped < same:
            values[i] = values[i, ::-1]
    return values


def oriented_eigenvalues(frf_values: np.ndarray, process: MillingProcess) -> np.ndarray:
    """Eigenvalues (F, 2) [m/N] of the oriented FRF [Phi0] = [alpha][Phi] for receptances ``frf_values``
    (F, 2, 2) [m/N]."""
    values = np.asarray(frf_values)
    if values.ndim != 3 or values.shape[1:] != (2, 2):
        raise ModalError(f"milling: the feed-plane FRF must be (F, 2, 2) [m/N], got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ModalError("milling: the feed-plane FRF has non-finite values")
    return np.linalg.eigvals(process.directional_coefficients() @ values)


def critical_depth(eigenvalues: np.ndarray, process: MillingProcess) -> tuple[np.ndarray, np.ndarray]:
    """``(a_lim [m], eps [rad])`` for eigenvalues lambda0 of [Phi0] [m/N] (any shape): Lambda = -1/lambda0,
    a_lim = -2 pi Lambda_R (1 + kappa^2)/(N K_t), eps = pi - 2 atan(kappa); a_lim is NaN where Lambda_R >= 0."""
    eigenvalues = np.asarray(eigenvalues, dtype=complex)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = -1.0 / eigenvalues
        kappa = lam.imag / lam.real
        depth = -2.0 * np.pi * lam.real * (1.0 + kappa**2) / (process.teeth * process.kt)
        phase = np.pi - 2.0 * np.arctan(kappa)
    chatter = np.isfinite(depth) & (lam.real < 0)
    return np.where(chatter, depth, np.nan), np.where(chatter, phase, np.nan)


def spindle_speed(chatter_frequency_hz: np.ndarray, phase_rad: np.ndarray, lobe: int, teeth: int) -> np.ndarray:
    """n = 60 / (N T) [rpm] with T = (eps + 2 k pi) / w_c [s] on lobe ``lobe`` = k."""
    omega = 2.0 * np.pi * np.asarray(chatter_frequency_hz, dtype=float)
    return 60.0 * omega / (teeth * (np.asarray(phase_rad) + 2.0 * np.pi * lobe))


def minimum_critical_depth(frf: FeedPlaneFRF, frequencies_hz: np.ndarray, process: MillingProcess,
                           depths: np.ndarray | None = None) -> tuple[float, float, float]:
    """``(a_lim,min [m], chatter frequency [Hz], eps [rad])``: the smallest critical depth over the chatter
    frequencies, found on the grid ``frequencies_hz`` [Hz] and refined between its neighbours by Brent's bounded
    search on ``frf`` (``depths`` (F, 2): the grid's a_lim when already computed). ``inf`` when no frequency of the
    grid chatters."""
    frequencies = np.asarray(frequencies_hz, dtype=float)
    if depths is None:
        depths, _ = critical_depth(oriented_eigenvalues(frf(frequencies), process), process)
    finite = np.where(np.isfinite(depths), depths, np.inf)
    if not np.any(np.isfinite(finite)):
        return float("inf"), float("nan"), float("nan")
    i = int(np.argmin(finite.min(axis=1)))

    def depth_at(frequency: float) -> float:
        values, _ = critical_depth(oriented_eigenvalues(frf(np.array([frequency])), process), process)
        return float(np.nanmin(values)) if np.any(np.isfinite(values)) else float("inf")

    low, high = frequencies[max(i - 1, 0)], frequencies[min(i + 1, frequencies.size - 1)]
    best_frequency, best_depth = float(frequencies[i]), float(finite[i].min())
    if high > low:
        found = minimize_scalar(depth_at, bounds=(low, high), method="bounded",
                                options={"xatol": 1e-12 * high, "maxiter": 200})
        if found.fun < best_depth:
            best_frequency, best_depth = float(found.x), float(found.fun)
    values, phases = critical_depth(oriented_eigenvalues(frf(np.array([best_frequency])), process), process)
    branch = int(np.nanargmin(values[0]))
    return best_depth, best_frequency, float(phases[0, branch])


def lobe_count(frequencies_hz: np.ndarray, depths: np.ndarray, teeth: int, lowest_speed_rpm: float) -> int:
    """The highest lobe number K whose lobe reaches down to ``lowest_speed_rpm`` [rpm]: lobe k lies below
    60 f_c / (N k) for the chatter frequencies f_c [Hz] where a_lim (F, 2) is finite."""
    chatter = np.asarray(frequencies_hz)[np.any(np.isfinite(depths), axis=1)]
    if chatter.size == 0 or lowest_speed_rpm <= 0:
        return 0
    count = int(np.floor(60.0 * chatter.max() / (teeth * lowest_speed_rpm)))
    if count > MAX_LOBES:
        raise ModalError(f"milling: spindle speeds down to {lowest_speed_rpm:g} rpm need lobes up to k = {count} "
                         f"(at most {MAX_LOBES}); raise the lowest spindle speed")
    return count


def zeroth_order_lobes(frf: FeedPlaneFRF, frequencies_hz: np.ndarray, process: MillingProcess, lobes: int = 10
                       ) -> StabilityLobes:
    """The stability lobes k = 0..``lobes`` of ``process`` for the machining-frame receptance ``frf`` over the
    chatter-frequency grid ``frequencies_hz`` [Hz] (increasing; see :func:`chatter_frequency_grid`)."""
    frequencies = np.asarray(frequencies_hz, dtype=float)
    if frequencies.ndim != 1 or frequencies.size < 3 or np.any(np.diff(frequencies) <= 0) or frequencies[0] <= 0:
        raise ModalError("milling: chatter frequencies: expected at least 3 increasing positive values [Hz]")
    if int(lobes) != lobes or not 0 <= lobes <= MAX_LOBES:
        raise ModalError(f"milling: lobes: expected an integer 0..{MAX_LOBES}, got {lobes}")
    depths, _ = critical_depth(oriented_eigenvalues(frf(frequencies), process), process)
    minimum, frequency, phase = minimum_critical_depth(frf, frequencies, process, depths)
    if np.isfinite(frequency) and not np.any(frequencies == frequency):  # the lobes pass through their minima
        frequencies = np.insert(frequencies, np.searchsorted(frequencies, frequency), frequency)
    eigenvalues = _follow_branches(oriented_eigenvalues(frf(frequencies), process))
    depths, phases = critical_depth(eigenvalues, process)
    numbers = np.arange(int(lobes) + 1)
    speeds = np.stack([spindle_speed(frequencies[:, None], phases, k, process.teeth) for k in numbers])
    return StabilityLobes(chatter_frequencies_hz=frequencies, critical_depths_m=depths, phase_shifts_rad=phases,
                          lobe_numbers=numbers, spindle_speeds_rpm=speeds, minimum_depth_m=minimum,
                          minimum_chatter_frequency_hz=frequency,
                          minimum_speeds_rpm=spindle_speed(frequency, phase, numbers, process.teeth),
                          process=process)


def chatter_frequency_grid(natural_frequencies_hz: np.ndarray, damping_ratios: np.ndarray,
                           max_points: int = 20000) -> np.ndarray:
    """A geometric grid of chatter frequencies [Hz] from half the lowest to twice the highest natural frequency
    [Hz], with a step ratio 1 + zeta_min/4 (about eight points per half-power bandwidth of the least damped mode;
    damping ratios clipped to [1e-4, 0.2]; at most ``max_points`` points)."""
    frequencies = np.asarray(natural_frequencies_hz, dtype=float)
    zeta = np.asarray(damping_ratios, dtype=float)
    keep = np.isfinite(frequencies) & (frequencies > 0) & np.isfinite(zeta) & (zeta < 1)
    if not np.any(keep):
        raise ModalError("milling: chatter frequencies: no oscillatory mode (f > 0 Hz, damping ratio < 1) to "
                         "place the chatter-frequency grid around")
    low, high = 0.5 * frequencies[keep].min(), 2.0 * frequencies[keep].max()
    step = np.log1p(np.clip(zeta[keep], 1e-4, 0.2).min() / 4.0)
    count = int(min(max(np.ceil(np.log(high / low) / step) + 1, 3), max_points))
    return np.geomspace(low, high, count)


__all__ = ["MillingProcess", "StabilityLobes", "FeedPlaneFRF", "MILLING_MODES", "immersion_angles",
           "directional_coefficients", "oriented_eigenvalues", "critical_depth", "spindle_speed",
           "minimum_critical_depth", "lobe_count", "zeroth_order_lobes", "chatter_frequency_grid"]
