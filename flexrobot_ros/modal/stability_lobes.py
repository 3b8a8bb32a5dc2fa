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

Only ``Lambda_R < 0`` gives a positive (physical) depth; in terms of lambda0 itself that is ``Re lambda0 > 0``,
``a_lim = 2 pi / (N K_t Re lambda0)`` and ``eps = pi + 2 arg(lambda0)`` in (0, 2 pi). Each lobe k is the curve
(n, a_lim) over the chatter frequencies; the lower envelope over the lobes is the stability limit (evaluated
exactly at given speeds by :mod:`flexrobot_ros.modal.lobe_envelope`); its minimum over all speeds, the smallest
a_lim over the chatter frequencies, is the depth below which the cut is stable at every spindle speed.

The two eigenvalues of [Phi0] are followed along the chatter frequencies as two branches; the grid is refined until
each branch is unambiguous between neighbours and turns by less than pi/8 there, and it holds the local minima of
each branch's depth (:func:`resolved_branches`), so that the lobes between grid points are what the receptance
gives there, not an interpolation.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from scipy.optimize import minimize_scalar

from flexrobot_ros.errors import ModalError

#: ``frf(frequencies_hz (F,)) -> (F, 2, 2)`` complex receptance [m/N] in the machining frame's x/y.
FeedPlaneFRF = Callable[[np.ndarray], np.ndarray]
MILLING_MODES = ("up", "down")
#: Most lobes a diagram computes (a spindle-speed range reaching far below the first lobe is refused).
MAX_LOBES = 500
#: Grid refinement (:func:`resolved_branches`): the largest phase step of a branch between neighbours [rad], the
#: largest step of a branch as a fraction of the distance between the two eigenvalues, the most halvings, the most
#: points; an eigenvalue below RANK_ONE times the other is zero; golden-section steps (0.618^60 = 3e-13).
PHASE_STEP_RAD, BRANCH_SEPARATION, MAX_REFINEMENTS, MAX_GRID_POINTS = np.pi / 8, 0.25, 20, 200_000
RANK_ONE, GOLDEN_ITERATIONS = 1e-10, 60
#: Chatter-frequency grid below the modes (:func:`chatter_frequency_grid`): down to STATIC_FRACTION of the lowest
#: natural frequency, at the step ratio OUTER_STEP (also above the modes, up to a frequency asked).
STATIC_FRACTION, OUTER_STEP = 1e-3, 1.05


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

    ``chatter_frequencies_hz`` (F,) [Hz]: the grid given, refined by :func:`resolved_branches` and holding the
    local minima of each branch's critical depth; ``eigenvalues`` (F, 2) [m/N] of [Phi0] there, each column (a
    branch) followed by continuity; ``critical_depths_m`` (F, 2) their a_lim [m] (NaN where Lambda_R >= 0: no
    chatter); ``phase_shifts_rad`` (F, 2) eps [rad]; ``lobe_numbers`` (K+1,) k; ``spindle_speeds_rpm`` (K+1, F, 2)
    n [rpm] of lobe k; ``minimum_depth_m`` the smallest a_lim [m], at ``minimum_chatter_frequency_hz`` [Hz] with the
    phase ``minimum_phase_rad`` [rad], reached on lobe k at ``minimum_speeds_rpm[k]`` [rpm]; ``process`` the cut;
    ``frf`` the receptance of the lobes (the exact stability limit at given speeds evaluates it between the grid's
    frequencies: :func:`flexrobot_ros.modal.lobe_envelope.stability_limit`).
    """

    chatter_frequencies_hz: np.ndarray
    eigenvalues: np.ndarray
    critical_depths_m: np.ndarray
    phase_shifts_rad: np.ndarray
    lobe_numbers: np.ndarray
    spindle_speeds_rpm: np.ndarray
    minimum_depth_m: float
    minimum_chatter_frequency_hz: float
    minimum_phase_rad: float
    minimum_speeds_rpm: np.ndarray
    process: MillingProcess
    frf: FeedPlaneFRF

    def with_lobes(self, lobes: int) -> StabilityLobes:
        """The same diagram with the lobes k = 0..``lobes``."""
        if int(lobes) != lobes or not 0 <= lobes <= MAX_LOBES:
            raise ModalError(f"milling: lobes: expected an integer 0..{MAX_LOBES}, got {lobes}")
        numbers = np.arange(int(lobes) + 1)
        speeds = np.stack([spindle_speed(self.chatter_frequencies_hz[:, None], self.phase_shifts_rad, k,
                                         self.process.teeth) for k in numbers])
        minima = spindle_speed(self.minimum_chatter_frequency_hz, self.minimum_phase_rad, numbers, self.process.teeth)
        return replace(self, lobe_numbers=numbers, spindle_speeds_rpm=speeds, minimum_speeds_rpm=minima)

    def minima_between(self, low_rpm: float, high_rpm: float) -> tuple[np.ndarray, np.ndarray]:
        """``(k, n [rpm])`` of every lobe whose minimum (depth a_lim,min) lies at a speed in [``low_rpm``,
        ``high_rpm``]: n_k = 60 w_c / (N (eps + 2 k pi)) at the minimum's chatter frequency and phase."""
        if not np.isfinite(self.minimum_depth_m):
            return np.zeros(0, dtype=int), np.zeros(0)
        numerator = 2 * np.pi * self.minimum_chatter_frequency_hz * 60.0 / self.process.teeth  # eps + 2 k pi = this / n
        first = max(int(np.ceil((numerator / high_rpm - self.minimum_phase_rad) / (2 * np.pi))), 0)
        last = int(np.floor((numerator / low_rpm - self.minimum_phase_rad) / (2 * np.pi)))
        numbers = np.arange(first, last + 1)
        speeds = spindle_speed(self.minimum_chatter_frequency_hz, self.minimum_phase_rad, numbers, self.process.teeth)
        inside = (speeds >= low_rpm) & (speeds <= high_rpm)  # rounding at the ends
        return numbers[inside], speeds[inside]


def eigenvalues_2x2(matrices: np.ndarray) -> np.ndarray:
    """The two eigenvalues (F, 2) of complex 2 x 2 matrices (F, 2, 2) in closed form: the larger root of
    lambda^2 - tr lambda + det = 0 without cancellation, the other as det / larger; one below 1e-10 of the other is
    set to zero (a rank-one FRF: the structure rigid in one direction)."""
    trace = matrices[:, 0, 0] + matrices[:, 1, 1]
    determinant = matrices[:, 0, 0] * matrices[:, 1, 1] - matrices[:, 0, 1] * matrices[:, 1, 0]
    root = np.sqrt(0.25 * trace**2 - determinant)
    root = np.where((np.conj(trace) * root).real >= 0, root, -root)
    larger = 0.5 * trace + root
    with np.errstate(divide="ignore", invalid="ignore"):
        other = np.where(larger != 0, determinant / larger, 0.0)
    other = np.where(np.abs(other) <= RANK_ONE * np.abs(larger), 0.0, other)
    return np.stack([larger, other], axis=1)


def follow_branches(values: np.ndarray) -> np.ndarray:
    """The eigenvalue pairs (F, 2) reordered so that each column varies continuously along F: row i + 1 is swapped
    when that brings it closer to row i (as followed), decided for all rows at once by the parity of the swaps."""
    values = np.asarray(values)
    same = np.abs(values[1:, 0] - values[:-1, 0]) + np.abs(values[1:, 1] - values[:-1, 1])
    crossed = np.abs(values[1:, 1] - values[:-1, 0]) + np.abs(values[1:, 0] - values[:-1, 1])
    parity = np.concatenate([[0], np.cumsum(crossed < same) % 2]).astype(bool)
    return np.where(parity[:, None], values[:, ::-1], values)


def oriented_eigenvalues(frf_values: np.ndarray, process: MillingProcess) -> np.ndarray:
    """Eigenvalues (F, 2) [m/N] of the oriented FRF [Phi0] = [alpha][Phi] for receptances ``frf_values``
    (F, 2, 2) [m/N] (:func:`eigenvalues_2x2`)."""
    values = np.asarray(frf_values)
    if values.ndim != 3 or values.shape[1:] != (2, 2):
        raise ModalError(f"milling: the feed-plane FRF must be (F, 2, 2) [m/N], got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ModalError("milling: the feed-plane FRF has non-finite values")
    return eigenvalues_2x2(process.directional_coefficients() @ values)


def branch_values(frequencies_hz: np.ndarray, values: np.ndarray, at_hz: np.ndarray, branch: np.ndarray
                  ) -> np.ndarray:
    """Branch ``branch`` (X,) of ``values`` (F, 2) (complex or real, sampled at ``frequencies_hz`` (F,)),
    interpolated linearly at ``at_hz`` (X,) [Hz]."""
    columns = [np.interp(at_hz, frequencies_hz, values[:, b].real) for b in range(2)]
    if np.iscomplexobj(values):
        columns = [column + 1j * np.interp(at_hz, frequencies_hz, values[:, b].imag) for b, column in
                   enumerate(columns)]
    return np.where(branch == 1, columns[1], columns[0])


def branch_eigenvalues(frf: FeedPlaneFRF, process: MillingProcess, at_hz: np.ndarray, reference: np.ndarray
                       ) -> np.ndarray:
    """The eigenvalue (X,) [m/N] of [Phi0] at ``at_hz`` (X,) [Hz] nearest to ``reference`` (X,): a branch's value
    interpolated from a grid on which it is unambiguous (:func:`resolved_branches`)."""
    values = oriented_eigenvalues(frf(at_hz), process)
    second = np.abs(values[:, 1] - reference) < np.abs(values[:, 0] - reference)
    return np.where(second, values[:, 1], values[:, 0])


def golden_section_minimum(function: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray,
                           iterations: int = GOLDEN_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """``(x, function(x))``: the minimizer in each bracket [``low``, ``high``] (X,) of ``function`` (X,) -> (X,),
    unimodal there, by golden-section search (all brackets at once; each shrinks by 0.618^``iterations``)."""
    ratio = 0.5 * (np.sqrt(5.0) - 1.0)
    a, b = np.array(low, dtype=float), np.array(high, dtype=float)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = function(c), function(d)
    for _ in range(iterations):
        left = fc < fd  # the minimum lies in [a, d]
        a, b = np.where(left, a, c), np.where(left, d, b)
        new = np.where(left, b - ratio * (b - a), a + ratio * (b - a))
        value = function(new)
        c, d, fc, fd = (np.where(left, new, d), np.where(left, c, new), np.where(left, value, fd),
                        np.where(left, fc, value))
    better = fc < fd
    return np.where(better, c, d), np.where(better, fc, fd)


def _unresolved(values: np.ndarray) -> np.ndarray:
    """(F-1,) intervals of the followed eigenvalues (F, 2) on which a branch turns by more than PHASE_STEP_RAD or
    moves by more than BRANCH_SEPARATION times the distance between the two eigenvalues."""
    step = np.abs(np.diff(values, axis=0))
    nonzero = (values[:-1] != 0) & (values[1:] != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        turn = np.where(nonzero, np.abs(np.angle(values[1:] / values[:-1])), 0.0)
    gap = np.abs(values[:, 0] - values[:, 1])
    gap = np.minimum(gap[:-1], gap[1:])
    ambiguous = (step.max(axis=1) > BRANCH_SEPARATION * gap) & (gap > RANK_ONE * np.abs(values).max())
    return ambiguous | np.any(turn > PHASE_STEP_RAD, axis=1)


def _merged(frequencies: np.ndarray, values: np.ndarray, new_frequencies: np.ndarray, new_values: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """The grid with the points ``new_frequencies`` (eigenvalue pairs ``new_values``) inserted, branches followed."""
    merged = np.concatenate([frequencies, new_frequencies])
    order = np.argsort(merged, kind="stable")
    merged, values = merged[order], np.concatenate([values, new_values])[order]
    keep = np.concatenate([[True], np.diff(merged) > 0])
    return merged[keep], follow_branches(values[keep])


def resolved_branches(frf: FeedPlaneFRF, frequencies_hz: np.ndarray, process: MillingProcess
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(frequencies [Hz] (F,), eigenvalues [m/N] (F, 2))``: the chatter-frequency grid ``frequencies_hz``
    refined by halving every interval on which a branch of [Phi0]'s eigenvalues turns by more than PHASE_STEP_RAD
    (pi/8) or moves by more than BRANCH_SEPARATION (1/4) of the distance between the two eigenvalues (so that each
    branch, followed by continuity, is unambiguous between grid points), at most MAX_REFINEMENTS times and to
    MAX_GRID_POINTS; then the local minima of each branch's critical depth (maxima of Re lambda > 0, refined by
    golden-section search between the neighbours of a grid maximum) inserted."""
    frequencies = np.asarray(frequencies_hz, dtype=float)
    values = follow_branches(oriented_eigenvalues(frf(frequencies), process))
    for _ in range(MAX_REFINEMENTS):
        flagged = _unresolved(values)
        if not flagged.any() or frequencies.size + flagged.sum() > MAX_GRID_POINTS:
            break
        middle = 0.5 * (frequencies[:-1][flagged] + frequencies[1:][flagged])
        frequencies, values = _merged(frequencies, values, middle, oriented_eigenvalues(frf(middle), process))
    real = np.where(values != 0, values.real, -np.inf)
    peak = (real[1:-1] > real[:-2]) & (real[1:-1] >= real[2:]) & (real[1:-1] > 0)
    index, branch = np.nonzero(peak)
    if index.size:
        index = index + 1
        at, _ = golden_section_minimum(
            lambda x: -branch_eigenvalues(frf, process, x, branch_values(frequencies, values, x, branch)).real,
            frequencies[index - 1], frequencies[index + 1])
        frequencies, values = _merged(frequencies, values, at, oriented_eigenvalues(frf(at), process))
    return frequencies, values


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
    chatter-frequency grid ``frequencies_hz`` [Hz] (increasing; see :func:`chatter_frequency_grid`), refined by
    :func:`resolved_branches`; a_lim,min is the smallest critical depth of the refined grid, which holds every local
    minimum of each branch."""
    frequencies = np.asarray(frequencies_hz, dtype=float)
    if frequencies.ndim != 1 or frequencies.size < 3 or np.any(np.diff(frequencies) <= 0) or frequencies[0] <= 0:
        raise ModalError("milling: chatter frequencies: expected at least 3 increasing positive values [Hz]")
    frequencies, eigenvalues = resolved_branches(frf, frequencies, process)
    depths, phases = critical_depth(eigenvalues, process)
    if np.any(np.isfinite(depths)):
        index, branch = np.unravel_index(int(np.nanargmin(depths)), depths.shape)
        minimum, frequency, phase = float(depths[index, branch]), float(frequencies[index]), float(phases[index,
                                                                                                          branch])
    else:
        minimum, frequency, phase = float("inf"), float("nan"), float("nan")
    return StabilityLobes(chatter_frequencies_hz=frequencies, eigenvalues=eigenvalues, critical_depths_m=depths,
                          phase_shifts_rad=phases, lobe_numbers=np.zeros(0, dtype=int),
                          spindle_speeds_rpm=np.zeros((0,) + depths.shape), minimum_depth_m=minimum,
                          minimum_chatter_frequency_hz=frequency, minimum_phase_rad=phase,
                          minimum_speeds_rpm=np.zeros(0), process=process, frf=frf).with_lobes(lobes)


def chatter_frequency_grid(natural_frequencies_hz: np.ndarray, damping_ratios: np.ndarray,
                           max_points: int = 20000, up_to_hz: float | None = None) -> np.ndarray:
    """A geometric grid of chatter frequencies [Hz]: from half the lowest to twice the highest natural frequency
    [Hz] with a step ratio 1 + zeta_min/4 (about eight points per half-power bandwidth of the least damped mode;
    damping ratios clipped to [1e-4, 0.2]; at most ``max_points`` points there), and beyond it at the step ratio
    OUTER_STEP down to STATIC_FRACTION of the lowest natural frequency (the quasi-static region, where lobe 0
    chatters near half the tooth-passing frequency at high speeds) and up to ``up_to_hz`` when that is higher (lobe 0
    of a speed n chatters below its tooth-passing frequency N n / 60)."""
    frequencies = np.asarray(natural_frequencies_hz, dtype=float)
    zeta = np.asarray(damping_ratios, dtype=float)
    keep = np.isfinite(frequencies) & (frequencies > 0) & np.isfinite(zeta) & (zeta < 1)
    if not np.any(keep):
        raise ModalError("milling: chatter frequencies: no oscillatory mode (f > 0 Hz, damping ratio < 1) to "
                         "place the chatter-frequency grid around")
    low, high = 0.5 * frequencies[keep].min(), 2.0 * frequencies[keep].max()
    step = np.log1p(np.clip(zeta[keep], 1e-4, 0.2).min() / 4.0)
    count = int(min(max(np.ceil(np.log(high / low) / step) + 1, 3), max_points))
    bottom, top = 2.0 * STATIC_FRACTION * low, max(high, up_to_hz or 0.0)
    below = np.geomspace(bottom, low, int(np.ceil(np.log(low / bottom) / np.log(OUTER_STEP))) + 1)[:-1]
    above = np.geomspace(high, top, int(np.ceil(np.log(top / high) / np.log(OUTER_STEP))) + 1)[1:]
    return np.concatenate([below, np.geomspace(low, high, count), above])


__all__ = ["MillingProcess", "StabilityLobes", "FeedPlaneFRF", "MILLING_MODES", "immersion_angles",
           "directional_coefficients", "eigenvalues_2x2", "follow_branches", "oriented_eigenvalues", "branch_values",
           "branch_eigenvalues", "golden_section_minimum", "resolved_branches", "critical_depth", "spindle_speed",
           "minimum_critical_depth", "lobe_count", "zeroth_order_lobes", "chatter_frequency_grid"]
