"""The stability limit at given spindle speeds: the lower envelope of the zeroth-order lobes, solved exactly.

At a spindle speed n [rpm] the tooth period is T = 60 / (N n) [s]. A chatter frequency f [Hz] of branch b (an
eigenvalue lambda_b(f) [m/N] of the oriented FRF [Phi0], :mod:`flexrobot_ros.modal.stability_lobes`) lies on
lobe k when the phase condition holds:

    r_b(f) = 2 pi f T - eps_b(f) = 2 k pi,     eps_b = pi + 2 arg(lambda_b),

and it chatters there (Re lambda_b > 0) from the depth a_lim = 2 pi / (N K_t Re lambda_b(f)) [m] on. The stability
limit at n is the smallest a_lim over every root of every branch and lobe: the lobes' lower envelope evaluated at n
itself, not interpolated between the chatter frequencies of a grid (an interpolation cuts across a steep flank and
lies above the limit there).

Roots. On the lobes' grid (refined so that each branch is unambiguous and turns by less than pi/8 between
neighbours, holding every local minimum of each branch's depth: :func:`~flexrobot_ros.modal.stability_lobes.
resolved_branches`) r_b is sampled with eps_b unwrapped along the branch. An interval whose ends lie on either side
of 2 k pi holds a root, found by the Illinois variant of regula falsi on the receptance itself (the branch followed
by continuity from the grid) to 1e-13 relative in f. Where the sampled r_b has an extremum (a fold: the lobe's speed
turns back) and a level 2 k pi lies just beyond it, the true extremum is located by golden-section search between the
neighbours and the two roots on either side of it are solved the same way: a lobe tip between two grid points is
not missed. The assumption, which the grid's refinement serves: between neighbours r_b has at most one extremum and
the depth of a branch no minimum.

Cost. Roots are solved in increasing order of a lower bound of their depth, the smaller depth at the ends of their
interval (there is no minimum inside it), until no remaining one can be below the smallest found: the result is the
minimum over all roots, and only a few roots per speed are solved.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.stability_lobes import (StabilityLobes, branch_eigenvalues, branch_values,
                                                 golden_section_minimum, lobe_count, spindle_speed)

#: A root's phase residual must fall below this [rad]; a bracket that does not get there spans a jump, not a root.
ROOT_TOLERANCE_RAD = 1e-6
#: Regula falsi: at most MAX_STEPS steps; a root is done when its bracket is narrower than FREQUENCY_TOLERANCE
#: times f or its residual below RESIDUAL_DONE times (1 + level) [rad] (rounding: f then known to about 1e-12).
MAX_STEPS, FREQUENCY_TOLERANCE, RESIDUAL_DONE = 200, 1e-13, 1e-12
#: Each round solves, per speed, the candidates whose depth bound is within this factor of the smallest bound.
ROUND_FACTOR = 1.5
#: Brackets are taken in classes of depth bounds: class j holds (a_0 r^j, a_0 r^(j+1)] (class 0 from a_0 on; a_0
#: the smallest bound, r this ratio).
CLASS_RATIO = 2.0
#: Speeds per block x grid points: the size of the residual arrays of one block.
BLOCK_SIZE = 1_000_000
TWO_PI = 2.0 * np.pi


@dataclass(frozen=True)
class StabilityLimit:
    """The critical depth ``critical_depths_m`` (S,) [m] at ``spindle_speeds_rpm`` (S,) [rpm] (inf where no lobe
    passes; deeper cuts chatter), with the chatter frequency ``chatter_frequencies_hz`` (S,) [Hz] and the lobe number
    ``lobe_numbers`` (S,) of the root that sets it (NaN and -1 where none)."""

    spindle_speeds_rpm: np.ndarray
    critical_depths_m: np.ndarray
    chatter_frequencies_hz: np.ndarray
    lobe_numbers: np.ndarray


class _Branches:
    """The lobes' grid as the root search reads it: ``frequencies`` (F,) [Hz], ``values`` (F, 2) [m/N] followed
    branches, ``phases`` (F, 2) eps unwrapped along each branch [rad], ``interval_bound`` (F-1, 2) and
    ``fold_bound`` (F-2, 2) the smallest depth [m] at the ends of each interval and pair of intervals (inf where a
    branch does not chatter or vanishes there)."""

    def __init__(self, lobes: StabilityLobes) -> None:
        self.lobes = lobes
        self.frequencies, self.values = lobes.chatter_frequencies_hz, lobes.eigenvalues
        self.phases = np.pi + 2.0 * np.unwrap(np.angle(self.values), axis=0)
        depth = np.where(np.isfinite(lobes.critical_depths_m), lobes.critical_depths_m, np.inf)
        nonzero = self.values != 0
        self.interval_bound = np.where(nonzero[:-1] & nonzero[1:], np.minimum(depth[:-1], depth[1:]), np.inf)
        self.fold_bound = np.where(nonzero[:-2] & nonzero[1:-1] & nonzero[2:],
                                   np.minimum(np.minimum(depth[:-2], depth[1:-1]), depth[2:]), np.inf)
        finite = np.isfinite(self.interval_bound)
        lowest = self.interval_bound[finite].min() if finite.any() else np.inf
        edges = lowest * CLASS_RATIO ** np.arange(1, 64)
        interval_class = np.searchsorted(edges, self.interval_bound)
        fold_class = np.searchsorted(edges, self.fold_bound)
        #: (smallest bound [m], (intervals, branches), (fold centres, branches)) per class of depth bounds
        self.classes = []
        for number in np.unique(interval_class[finite]):
            interval, branch = np.nonzero((interval_class == number) & finite)
            centre, fold_branch = np.nonzero((fold_class == number) & np.isfinite(self.fold_bound))
            self.classes.append((lowest * CLASS_RATIO ** number, (interval, branch), (centre + 1, fold_branch)))

    def residual(self, at_hz: np.ndarray, period_s: np.ndarray, level_rad: np.ndarray, branch: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``(r_b(f) - level [rad], lambda_b(f) [m/N])`` at ``at_hz`` (X,) for tooth periods ``period_s`` (X,)."""
        value = branch_eigenvalues(self.lobes.frf, self.lobes.process, at_hz,
                                   branch_values(self.frequencies, self.values, at_hz, branch))
        phase = np.pi + 2.0 * np.angle(value)
        reference = branch_values(self.frequencies, self.phases, at_hz, branch)
        phase += 2.0 * TWO_PI * np.round((reference - phase) / (2.0 * TWO_PI))  # eps is 4 pi periodic in arg
        return TWO_PI * at_hz * period_s - phase - level_rad, value


def _regula_falsi(branches: _Branches, period: np.ndarray, level: np.ndarray, branch: np.ndarray, low: np.ndarray,
                  high: np.ndarray, g_low: np.ndarray, g_high: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """``(f [Hz], residual [rad], lambda [m/N])`` of the root in each bracket [low, high] (residuals of opposite
    signs at the ends), by the Illinois variant of regula falsi, all brackets at once."""
    if low.size == 0:
        return low, low, low.astype(complex)
    low, high, g_low, g_high = low.copy(), high.copy(), g_low.copy(), g_high.copy()
    kept = np.zeros(low.size, dtype=int)  # -1: the last step moved the low end, +1: the high end
    done = (g_low == 0) | (g_high == 0)
    root = np.where(np.abs(g_low) <= np.abs(g_high), low, high)
    for _ in range(MAX_STEPS):
        active = np.flatnonzero(~done & (high - low > FREQUENCY_TOLERANCE * high))
        if active.size == 0:
            break
        lo, hi, glo, ghi = low[active], high[active], g_low[active], g_high[active]
        x = (lo * ghi - hi * glo) / (ghi - glo)
        inside = (x > lo) & (x < hi)
        x = np.where(inside, x, 0.5 * (lo + hi))
        g, _ = branches.residual(x, period[active], level[active], branch[active])
        moves_low = np.sign(g) == np.sign(glo)
        twice_low, twice_high = moves_low & (kept[active] == -1), ~moves_low & (kept[active] == 1)
        g_high[active] = np.where(twice_low, 0.5 * ghi, np.where(moves_low, ghi, g))
        g_low[active] = np.where(twice_high, 0.5 * glo, np.where(moves_low, g, glo))
        low[active], high[active] = np.where(moves_low, x, lo), np.where(moves_low, hi, x)
        kept[active] = np.where(moves_low, -1, 1)
        root[active] = x
        done[active] = np.abs(g) <= RESIDUAL_DONE * (1.0 + np.abs(level[active]))
    residual, value = branches.residual(root, period, level, branch)
    return root, residual, value


@dataclass
class _Candidates:
    """Brackets of one block of speeds: speed index ``speed``, ``branch``, phase ``level`` 2 k pi [rad], frequency
    bracket ``low``/``high`` [Hz] with residuals ``g_low``/``g_high`` [rad], depth lower ``bound`` [m]; a fold
    (``fold``) holds two roots on either side of the extremum of r_b in the bracket, r_b - level of sign ``sign``
    there and of the other sign at both ends."""

    speed: np.ndarray
    branch: np.ndarray
    level: np.ndarray
    low: np.ndarray
    high: np.ndarray
    g_low: np.ndarray
    g_high: np.ndarray
    bound: np.ndarray
    fold: np.ndarray
    sign: np.ndarray

    @staticmethod
    def join(parts: list[_Candidates]) -> _Candidates:
        return _Candidates(*(np.concatenate([getattr(part, field.name) for part in parts]) for field in
                             fields(_Candidates)))

    def subset(self, pick: np.ndarray) -> _Candidates:
        return _Candidates(*(getattr(self, field.name)[pick] for field in fields(_Candidates)))


def _expand(count: np.ndarray, first: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The indices of the entries of ``count`` > 0, each repeated ``count`` times, and the levels 2 pi (first + 0,
    1, ..) of the repetitions [rad]."""
    index = np.nonzero(count > 0)
    counts = count[index].astype(int)
    repeat = np.repeat(np.arange(counts.size), counts)
    offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return tuple(i[repeat] for i in index), TWO_PI * (first[index][repeat] + offset)


def _interval_candidates(branches: _Branches, speeds: np.ndarray, period: np.ndarray, interval: np.ndarray,
                         branch: np.ndarray) -> _Candidates:
    """The brackets of the grid intervals ``interval`` (C,) of ``branch`` (C,) at the speeds ``speeds`` (S,)
    (indices into the block, tooth periods ``period`` (S,) [s]) wherever r_b crosses a level 2 k pi."""
    f, phases = branches.frequencies, branches.phases
    r_low = TWO_PI * f[interval][None] * period[:, None] - phases[interval, branch][None]
    r_high = TWO_PI * f[interval + 1][None] * period[:, None] - phases[interval + 1, branch][None]
    first = np.ceil(np.minimum(r_low, r_high) / TWO_PI)  # levels 2 pi m in [min r, max r]
    (s, c), level = _expand(np.floor(np.maximum(r_low, r_high) / TWO_PI) - first + 1, first)
    return _Candidates(speed=speeds[s], branch=branch[c], level=level, low=f[interval[c]], high=f[interval[c] + 1],
                       g_low=r_low[s, c] - level, g_high=r_high[s, c] - level,
                       bound=branches.interval_bound[interval[c], branch[c]], fold=np.zeros(s.size, dtype=bool),
                       sign=np.zeros(s.size))


def _fold_candidates(branches: _Branches, speeds: np.ndarray, period: np.ndarray, centre: np.ndarray,
                     branch: np.ndarray) -> _Candidates:
    """The folds at the grid points ``centre`` (C,) of ``branch`` (C,) at the speeds ``speeds`` (S,) (tooth periods
    ``period`` (S,) [s]): where the sampled r_b has an extremum at ``centre`` and a level 2 k pi lies within the
    gap by which the true extremum can exceed it (a parabola through the three points, its vertex between the outer
    two: the larger outer difference scaled by the squared ratio of the steps)."""
    f, phases = branches.frequencies, branches.phases
    r = [TWO_PI * f[centre + d][None] * period[:, None] - phases[centre + d, branch][None] for d in (-1, 0, 1)]
    left, right = r[1] - r[0], r[2] - r[1]
    ratio = ((f[centre + 1] - f[centre]) / (f[centre] - f[centre - 1]))[None]
    gap = np.maximum(np.abs(left) * ratio**2, np.abs(right) / ratio**2)
    maximum = left > 0
    first = np.where(maximum, np.floor(r[1] / TWO_PI) + 1, np.ceil((r[1] - gap) / TWO_PI))
    last = np.where(maximum, np.floor((r[1] + gap) / TWO_PI), np.ceil(r[1] / TWO_PI) - 1)
    (s, c), level = _expand(np.where(left * right < 0, last - first + 1, 0), first)
    return _Candidates(speed=speeds[s], branch=branch[c], level=level, low=f[centre[c] - 1], high=f[centre[c] + 1],
                       g_low=r[0][s, c] - level, g_high=r[2][s, c] - level,
                       bound=branches.fold_bound[centre[c] - 1, branch[c]], fold=np.ones(s.size, dtype=bool),
                       sign=np.where(maximum[s, c], 1.0, -1.0))


def _solve(branches: _Branches, period: np.ndarray, c: _Candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray]:
    """``(speed index, depth [m], f [Hz], k)`` of every root of the candidates ``c`` (periods ``period`` (S,))
    that chatters."""
    t = period[c.speed]
    folds = np.flatnonzero(c.fold)
    parts = [(np.flatnonzero(~c.fold), c.low[~c.fold], c.high[~c.fold], c.g_low[~c.fold], c.g_high[~c.fold])]
    tangent = np.zeros(0, dtype=int), np.zeros(0)
    if folds.size:
        sign = c.sign[folds]
        at, value = golden_section_minimum(
            lambda x: -sign * branches.residual(x, t[folds], c.level[folds], c.branch[folds])[0],
            c.low[folds], c.high[folds])
        extremum = -sign * value
        crosses = sign * extremum > 0
        touches = ~crosses & (np.abs(extremum) < ROOT_TOLERANCE_RAD)
        tangent = folds[touches], at[touches]
        fc = folds[crosses]
        parts.append((fc, c.low[fc], at[crosses], c.g_low[fc], extremum[crosses]))
        parts.append((fc, at[crosses], c.high[fc], extremum[crosses], c.g_high[fc]))
    index = np.concatenate([p[0] for p in parts])
    roots, residual, value = _regula_falsi(branches, t[index], c.level[index], c.branch[index],
                                           *(np.concatenate([p[n] for p in parts]) for n in range(1, 5)))
    if tangent[0].size:
        touch_residual, touch_value = branches.residual(tangent[1], t[tangent[0]], c.level[tangent[0]],
                                                        c.branch[tangent[0]])
        index, roots = np.concatenate([index, tangent[0]]), np.concatenate([roots, tangent[1]])
        residual, value = np.concatenate([residual, touch_residual]), np.concatenate([value, touch_value])
    chatters = (value.real > 0) & (np.abs(residual) < ROOT_TOLERANCE_RAD)
    index, roots, value = index[chatters], roots[chatters], value[chatters]
    process = branches.lobes.process
    depth = TWO_PI / (process.teeth * process.kt * value.real)
    phase = np.pi + 2.0 * np.angle(value)
    lobe = np.rint((TWO_PI * roots * t[index] - phase) / TWO_PI).astype(int)
    return c.speed[index], depth, roots, lobe


def _block(branches: _Branches, speeds_rpm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Depth [m], chatter frequency [Hz] and lobe number at each of ``speeds_rpm`` (S,): the brackets of the grid's
    intervals and folds taken in classes of increasing depth bound, only at the speeds whose depth found so far
    exceeds the class's smallest bound, and within a class in rounds of increasing bound."""
    period = 60.0 / (branches.lobes.process.teeth * speeds_rpm)
    count = speeds_rpm.size
    depth, frequency, lobe = np.full(count, np.inf), np.full(count, np.nan), np.full(count, -1)
    for lowest, intervals, folds in branches.classes:
        speeds = np.flatnonzero(depth > lowest)
        if speeds.size == 0:
            break
        c = _Candidates.join([_interval_candidates(branches, speeds, period[speeds], *intervals),
                              _fold_candidates(branches, speeds, period[speeds], *folds)])
        solved = np.zeros(c.speed.size, dtype=bool)
        while True:
            open_ = ~solved & (c.bound < depth[c.speed])
            if not open_.any():
                break
            smallest = np.full(count, np.inf)
            np.minimum.at(smallest, c.speed[open_], c.bound[open_])
            pick = open_ & (c.bound <= ROUND_FACTOR * smallest[c.speed])
            solved |= pick
            speed, found, roots, numbers = _solve(branches, period, c.subset(pick))
            order = np.lexsort((found, speed))
            speed, found, roots, numbers = speed[order], found[order], roots[order], numbers[order]
            first = np.concatenate([[True], speed[1:] != speed[:-1]]) if speed.size else np.zeros(0, dtype=bool)
            speed, found, roots, numbers = speed[first], found[first], roots[first], numbers[first]
            better = found < depth[speed]
            depth[speed[better]], frequency[speed[better]] = found[better], roots[better]
            lobe[speed[better]] = numbers[better]
    return depth, frequency, lobe


def speed_coverage(lobes: StabilityLobes) -> tuple[float, float]:
    """``(lowest, highest)`` spindle speed [rpm] whose lobe 0 chatters inside the band of the lobes' chatter
    frequencies: lobe 0 passes the lowest frequency at n_0 = 60 w / (N eps) (the largest over the branches that
    chatter there; 0 rpm when none does) and the highest at its n_0 (the smallest; inf when none chatters there).
    Below the band: at a speed above the lowest no lobe chatters there (lobe k passes the lowest frequency at
    n_k < n_0, and n_k grows with f in the quasi-static region, where eps is about pi). Above the band: at a speed
    below the highest lobe 0 chatters inside it; roots of the higher lobes above the band (the receptance falls as
    1/f^2 there, the depths grow as f^2) are not searched."""
    frequencies, depths, phases = lobes.chatter_frequencies_hz, lobes.critical_depths_m, lobes.phase_shifts_rad
    ends = [spindle_speed(frequencies[i], phases[i][np.isfinite(depths[i])], 0, lobes.process.teeth) for i in (0, -1)]
    return (float(ends[0].max()) if ends[0].size else 0.0), (float(ends[1].min()) if ends[1].size else np.inf)


def stability_limit(lobes: StabilityLobes, speeds_rpm: np.ndarray) -> StabilityLimit:
    """The critical depth of ``lobes`` at each of ``speeds_rpm`` [rpm] (any shape, positive): the smallest a_lim of
    every lobe and branch passing through that speed, each solved exactly from the receptance (module docstring).
    The roots are those in the band of the lobes' chatter frequencies; speeds outside :func:`speed_coverage`, whose
    lobe 0 chatters outside the band, are refused (ModalError)."""
    speeds = np.asarray(speeds_rpm, dtype=float)
    flat = speeds.ravel()
    if flat.size == 0 or not np.all(np.isfinite(flat) & (flat > 0)):
        raise ModalError("milling: spindle speeds: expected positive finite values [rpm]")
    lobe_count(lobes.chatter_frequencies_hz, lobes.critical_depths_m, lobes.process.teeth, float(flat.min()))
    low, high = speed_coverage(lobes)
    band = lobes.chatter_frequencies_hz[[0, -1]]
    if flat.min() < low:
        raise ModalError(f"milling: spindle speeds down to {flat.min():g} rpm: lobe 0 passes the lowest chatter "
                         f"frequency searched, {band[0]:.4g} Hz, at {low:.6g} rpm, and chatters below it at lower "
                         f"speeds; give speeds from {low:.6g} rpm on or chatter frequencies reaching lower")
    if flat.max() > high:
        raise ModalError(f"milling: spindle speeds up to {flat.max():g} rpm: lobe 0 passes the highest chatter "
                         f"frequency searched, {band[1]:.4g} Hz, at {high:.6g} rpm, and chatters above it at higher "
                         f"speeds; give speeds up to {high:.6g} rpm or chatter frequencies reaching higher")
    branches = _Branches(lobes)
    size = max(1, BLOCK_SIZE // (2 * branches.frequencies.size))
    depth, frequency, lobe = np.empty(flat.size), np.empty(flat.size), np.empty(flat.size, dtype=int)
    for start in range(0, flat.size, size):
        part = slice(start, start + size)
        depth[part], frequency[part], lobe[part] = _block(branches, flat[part])
    return StabilityLimit(spindle_speeds_rpm=speeds, critical_depths_m=depth.reshape(speeds.shape),
                          chatter_frequencies_hz=frequency.reshape(speeds.shape),
                          lobe_numbers=lobe.reshape(speeds.shape))


__all__ = ["StabilityLimit", "stability_limit", "speed_coverage"]
