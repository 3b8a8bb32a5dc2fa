"""Automatic mode selection: clusters of stable poles in the stabilization diagram become modes.

Two clusterings of the stable poles (:attr:`StabilizationDiagram.stable`):

- ``"hierarchical"`` (default): average-linkage clustering with the pole distance of Reynders et al. (2012),
  ``d = |lambda_a - lambda_b| / max(|lambda_a|, |lambda_b|) + 1 - MAC(phi_a, phi_b)``, cut at
  ``distance``. Close modes with different shapes stay apart.
- ``"grid"``: the NAFID grid search the thesis uses (seed 000 section 2.4.3): poles are binned on a
  frequency x damping grid (default 0.1 Hz x 0.1 %), and connected occupied cells form a cluster.

Clusters closer than ``duplicate_distance`` (5 %) in frequency with nearly the same shape (MAC >= ``duplicate_mac``
= 0.95) are one mode split in two (models of high order often carry a mode twice) and are merged, as are clusters
within 0.5 % in frequency and 5 % in damping whatever their shapes (a weakly excited mode's shape wanders between
orders, which splits its poles by MAC). A cluster is a mode when it holds poles from at least ``min_fraction`` of
the evaluated orders (the thesis' "number of repeating frequencies"); a cluster keeps at most one pole per order
(the one closest to the cluster's median), and its frequencies must agree over the orders (standard deviation at
most ``max_spread`` = 1 % of the frequency). Finally, combination tones of a weakly nonlinear response (poles
``lambda_a + lambda_b`` or ``lambda_a + conj(lambda_b)`` of two other modes, e.g. the intermodulation of the
simulated Scompi's 37 Hz and 6.4 Hz modes at 30.7 and 43.4 Hz) are dropped. Each mode gets the median frequency and
damping of its poles, their standard deviations (the spread over model orders), the phase-aligned mean shape, and
``confidence`` = fraction of orders in which the mode is stable. A cluster stable in fewer orders than
``min_confidence`` (0.6) times the most confident mode *and* whose damping wanders over those orders (standard
deviation above ``max_damping_spread`` = 5 % of the damping, the stability tolerance) is an uncertain pole, not
a mode: it is left out (or handed back apart, see :func:`select_modes`). On noise-free Scompi records (test
test_oma_clean_data) the poles that SSI-cov models above the signal's states give to rounding have confidence
0.37-0.43 of the best mode's and damping spreads of 10-26 %; the physical modes, even a weakly excited one at
0.44 of the best, spread by at most 2.5 %. The batch pipeline applies the test only to records SSI-cov finds
noise-free (:func:`~flexrobot_ros.oma.identify.identify_modes`): in noisy ones a weak physical mode can look
like that.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexrobot_ros.errors import SignalError
from flexrobot_ros.oma.poles import mac_matrix, mpc, normalize_shapes
from flexrobot_ros.oma.stabilization import StabilizationDiagram

__all__ = ["Mode", "SelectionOptions", "drop_combinations", "select_modes"]


@dataclass(frozen=True)
class Mode:
    """One identified mode.

    ``frequency_hz`` undamped natural frequency [Hz], ``damping_ratio`` [fraction], ``shape`` (channels,)
    complex, unit norm, largest component real positive; ``frequency_std_hz`` and ``damping_std`` are the
    spread of the cluster's poles over model orders; ``n_poles`` the poles in the cluster; ``confidence`` the
    fraction of evaluated orders where the mode is stable; ``mpc`` the shape's modal phase collinearity.
    """

    frequency_hz: float
    damping_ratio: float
    shape: np.ndarray
    frequency_std_hz: float
    damping_std: float
    n_poles: int
    confidence: float
    mpc: float


@dataclass(frozen=True)
class SelectionOptions:
    """Mode selection settings.

    ``method``: ``"hierarchical"`` or ``"grid"``; ``min_fraction``: a mode must be stable in at least this
    fraction of the evaluated orders; ``distance``: hierarchical cut-off (relative pole distance + 1 - MAC);
    ``grid_hz`` and ``grid_damping``: NAFID grid resolution (0.1 Hz and 0.1 % in the thesis);
    ``duplicate_distance``, ``duplicate_mac``: clusters closer than this (relative) in frequency whose shapes
    have at least this MAC are one mode split in two (merged), and so are clusters closer than
    ``merge_frequency`` in frequency and ``merge_damping`` in damping (relative) whatever their shapes;
    ``max_spread``: largest standard deviation of a mode's frequency over the orders,
    relative to the frequency (a cluster wider than that gathers noise poles, not one mode);
    ``combination_tol``: modes whose pole is the sum of two others' within this fraction of its modulus are
    combination tones of a nonlinear response and are dropped (see :func:`drop_combinations`; ``None``: keep);
    ``min_confidence``, ``max_damping_spread``: a cluster whose confidence is below ``min_confidence`` times the
    most confident mode's and whose damping standard deviation over the orders exceeds ``max_damping_spread``
    times its damping is an uncertain pole, not a mode (0: the test is off).
    """

    method: str = "hierarchical"
    min_fraction: float = 0.3
    distance: float = 0.02
    grid_hz: float = 0.1
    grid_damping: float = 0.001
    duplicate_distance: float = 0.05
    duplicate_mac: float = 0.95
    merge_frequency: float = 0.005
    merge_damping: float = 0.05
    max_spread: float = 0.01
    combination_tol: float | None = 0.005
    min_confidence: float = 0.6
    max_damping_spread: float = 0.05


def select_modes(diagram: StabilizationDiagram, options: SelectionOptions | None = None,
                 uncertain: list[Mode] | None = None) -> list[Mode]:
    """Modes (sorted by frequency) from the clusters of stable poles in ``diagram``.

    Clusters that fail the consistency test (``options.min_confidence`` and ``options.max_damping_spread``) are
    left out of the modes; with ``uncertain``
    (a list) they are appended to it, sorted by frequency, to be reported apart from the modes.
    """
    options = SelectionOptions() if options is None else options
    idx = np.flatnonzero(diagram.stable)
    if options.method == "hierarchical":
        clusters = _hierarchical(diagram, idx, options.distance)
    elif options.method == "grid":
        clusters = _grid(diagram, idx, options.grid_hz, options.grid_damping)
    else:
        raise SignalError(f"mode selection: unknown method {options.method!r}, expected 'hierarchical' or 'grid'")
    clusters = _merge_duplicates(diagram, clusters, options)
    n_orders = max(len(diagram.orders), 1)
    min_orders = max(2, int(np.ceil(options.min_fraction * n_orders)))
    modes = []
    for members in clusters:
        if len(members) < min_orders:  # cheap test first: most clusters are a few stray poles
            continue
        members = _one_per_order(diagram, members)
        if len(members) < min_orders:
            continue
        mode = _summarize(diagram, members, n_orders)
        if mode.frequency_std_hz <= options.max_spread * mode.frequency_hz:
            modes.append(mode)
    if options.combination_tol is not None:
        modes = drop_combinations(modes, options.combination_tol)
    least = options.min_confidence * max((m.confidence for m in modes), default=0.0)
    doubtful = [m.confidence < least and m.damping_std > options.max_damping_spread * m.damping_ratio for m in modes]
    if uncertain is not None:
        uncertain.extend(sorted((m for m, d in zip(modes, doubtful) if d), key=lambda mode: mode.frequency_hz))
    return sorted((m for m, d in zip(modes, doubtful) if not d), key=lambda mode: mode.frequency_hz)


def _pole(mode: Mode) -> complex:
    w = 2.0 * np.pi * mode.frequency_hz
    return complex(-mode.damping_ratio * w, w * np.sqrt(max(1.0 - mode.damping_ratio**2, 0.0)))


def drop_combinations(modes: list[Mode], tol: float) -> list[Mode]:
    """Remove combination tones of a weakly nonlinear response: a mode whose pole equals, within ``tol`` of its
    modulus (or twice its relative frequency scatter over the orders, if larger), ``lambda_a + lambda_b`` or
    ``lambda_a + conj(lambda_b)`` of two other modes (a = b: a harmonic) that are at least as consistent over
    the model orders (confidence) as it is.

    Quadratic terms (Coriolis and centrifugal forces, geometry) make the product of two modal responses appear
    in the signals, with frequency ``f_a +- f_b`` and decay rate ``sigma_a + sigma_b``; such a component is as
    stable over model orders as a mode, though weaker. Its decay rate is the sum of the other two, so the mode
    with the largest ``|Re lambda|`` of a matching triple is the combination; candidates are examined in that
    order, and only against parents that are not less confident (a weak spurious pair cannot explain a mode).
    """
    kept = list(modes)
    for mode in sorted(modes, key=lambda m: _pole(m).real):  # most negative real part first
        parents = [m for m in kept if m is not mode and m.confidence >= mode.confidence]
        if not parents:
            continue
        a = np.array([_pole(m) for m in parents])
        target = _pole(mode)
        sums = np.concatenate([(a[:, None] + a[None, :]).ravel(), (a[:, None] + np.conj(a)[None, :]).ravel()])
        sums = np.where(sums.imag < 0, np.conj(sums), sums)
        scatter = 2.0 * mode.frequency_std_hz / mode.frequency_hz
        if np.min(np.abs(sums - target)) <= max(tol, scatter) * abs(target):
            kept = [m for m in kept if m is not mode]
    return kept


def _hierarchical(diagram: StabilizationDiagram, idx: np.ndarray, cut: float) -> list[np.ndarray]:
    """Average-linkage clusters of poles ``idx``; split first at frequency gaps wider than ``cut``."""
    if len(idx) == 0:
        return []
    idx = idx[np.argsort(diagram.frequencies_hz[idx])]
    f = diagram.frequencies_hz[idx]
    breaks = np.flatnonzero(np.diff(f) > cut * f[1:]) + 1
    clusters = []
    for group in np.split(idx, breaks):
        if len(group) == 1:
            clusters.append(group)
            continue
        lam = diagram.poles[group]
        dist = np.abs(lam[:, None] - lam[None, :]) / np.maximum(np.abs(lam[:, None]), np.abs(lam[None, :]))
        dist = dist + 1.0 - mac_matrix(diagram.shapes[group], diagram.shapes[group])
        dist = 0.5 * (dist + dist.T)
        np.fill_diagonal(dist, 0.0)
        import scipy.cluster.hierarchy  # imported here: `flexrobot oma --help` (SelectionOptions) needs no scipy
        import scipy.spatial.distance

        tree = scipy.cluster.hierarchy.linkage(scipy.spatial.distance.squareform(np.maximum(dist, 0.0),
                                                                                 checks=False), "average")
        labels = scipy.cluster.hierarchy.fcluster(tree, cut, criterion="distance")
        clusters.extend(group[labels == lab] for lab in np.unique(labels))
    return clusters


def _merge_duplicates(diagram: StabilizationDiagram, clusters: list[np.ndarray], options: "SelectionOptions"
                      ) -> list[np.ndarray]:
    """Merge clusters that are one mode split in two: the largest clusters absorb smaller ones whose median
    frequency lies within ``duplicate_distance`` of theirs with a central-shape MAC of at least
    ``duplicate_mac`` (a model of high order often carries a mode twice), or whose median frequency and damping
    lie within ``merge_frequency`` and ``merge_damping`` (relative) of theirs whatever the shapes (the shape of
    a weakly excited mode wanders between orders). Absorbed clusters absorb nothing (no chains)."""
    if len(clusters) < 2:
        return clusters
    labels = np.concatenate([np.full(len(c), k) for k, c in enumerate(clusters)])
    members = np.concatenate(clusters)
    index = np.arange(len(clusters))
    import scipy.ndimage  # imported here: `flexrobot oma --help` (SelectionOptions) needs no scipy

    f = np.asarray(scipy.ndimage.median(diagram.frequencies_hz[members], labels, index))
    z = np.asarray(scipy.ndimage.median(diagram.damping_ratios[members], labels, index))
    # central shape: the member closest in frequency to the cluster's median
    gap = np.abs(diagram.frequencies_hz[members] - f[labels])
    first = np.lexsort((gap, labels))
    starts = np.searchsorted(labels[first], index)
    ref = diagram.shapes[members[first[starts]]]
    merged: list[np.ndarray] = []
    taken = np.zeros(len(clusters), dtype=bool)
    for a in sorted(range(len(clusters)), key=lambda k: -len(clusters[k])):
        if taken[a]:
            continue
        taken[a] = True
        rel_f = np.abs(f - f[a]) / f[a]
        same = (rel_f <= options.merge_frequency) & (np.abs(z - z[a]) <= options.merge_damping * z[a])
        split = (rel_f <= options.duplicate_distance) & (mac_matrix(ref[a], ref)[0] >= options.duplicate_mac)
        near = np.flatnonzero(~taken & (same | split))
        taken[near] = True
        merged.append(np.concatenate([clusters[a]] + [clusters[k] for k in near]))
    return merged


def _grid(diagram: StabilizationDiagram, idx: np.ndarray, grid_hz: float, grid_damping: float) -> list[np.ndarray]:
    """Connected components (8-neighbourhood) of occupied frequency x damping grid cells."""
    cells: dict[tuple[int, int], list[int]] = {}
    for k in idx:
        key = (int(np.floor(diagram.frequencies_hz[k] / grid_hz)),
               int(np.floor(diagram.damping_ratios[k] / grid_damping)))
        cells.setdefault(key, []).append(int(k))
    seen: set[tuple[int, int]] = set()
    clusters = []
    for start in cells:
        if start in seen:
            continue
        stack, members = [start], []
        seen.add(start)
        while stack:
            cf, cz = stack.pop()
            members.extend(cells[(cf, cz)])
            for df in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    nb = (cf + df, cz + dz)
                    if nb in cells and nb not in seen:
                        seen.add(nb)
                        stack.append(nb)
        clusters.append(np.array(members, dtype=int))
    return clusters


def _one_per_order(diagram: StabilizationDiagram, members: np.ndarray) -> np.ndarray:
    """Keep, for each order, the member pole closest to the cluster's median pole."""
    lam = diagram.poles[members]
    centre = np.median(lam.real) + 1j * np.median(lam.imag)
    order = np.argsort(np.abs(lam - centre))
    _, first = np.unique(diagram.order[members[order]], return_index=True)
    return np.sort(members[order[first]])


def _summarize(diagram: StabilizationDiagram, members: np.ndarray, n_orders: int) -> Mode:
    f = diagram.frequencies_hz[members]
    z = diagram.damping_ratios[members]
    shapes = normalize_shapes(diagram.shapes[members])
    ref = shapes[np.argmin(np.abs(f - np.median(f)) / np.median(f) + np.abs(z - np.median(z)))]
    phase = np.conj(shapes @ np.conj(ref))
    aligned = shapes * (phase / np.maximum(np.abs(phase), 1e-300))[:, None]
    shape = normalize_shapes(aligned.mean(axis=0)[None, :])[0]
    return Mode(
        frequency_hz=float(np.median(f)),
        damping_ratio=float(np.median(z)),
        shape=shape,
        frequency_std_hz=float(np.std(f)),
        damping_std=float(np.std(z)),
        n_poles=len(members),
        confidence=float(len(np.unique(diagram.order[members])) / n_orders),
        mpc=float(mpc(shape[None, :])[0]),
    )
