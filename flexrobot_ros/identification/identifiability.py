"""Do the modal data determine the unknowns? Counting (seed 000 eq. 3.32), Jacobian rank and conditioning, and
the first-order sensitivity of the estimate to the measured frequencies and damping ratios.

* **Counting**: the number N of distinct measured eigenvalues must exceed the number of unknowns (eq. 3.32), and
  the data must come from at least two distinct poses: the parameters are pose-independent, and it is the change
  of the modes with the pose (the mass matrix M(q) and gravity stiffness K_G(q)) that separates the joints'
  contributions (seed 000 section 3.4.1 uses 15 configurations).
* **Rank / conditioning**: singular values of the Jacobian of the relative eigenvalue errors (scale-free, the same
  whichever residual was minimized) with each column scaled by its parameter's magnitude, i.e. how much the
  eigenvalues move per relative change of each parameter; its numerical rank and condition number, and the
  weakest parameter combination (the right singular vector of the smallest singular value).
* **Sensitivity**: at the solution ``J^T r = 0``; to first order (Gauss-Newton, exact for zero residual) a change
  ``dy`` of the data moves the free parameters by ``dp = -(J^T J)^-1 J^T (dr/dy) dy``. This gives each parameter's
  standard deviation for stated data uncertainties and its shift per common bias of all damping ratios (the
  situation of Table 3.2's cases 2-7) or of all frequencies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.affine_model import Residuals
from flexrobot_ros.identification.modal_data import ModalData
from flexrobot_ros.identification.parameters import JointParameter

#: Singular values below this fraction of the largest count as zero in the reported numerical rank.
RANK_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Identifiability:
    """Counting and Jacobian-conditioning report at one parameter vector.

    ``n_eigenvalues`` N distinct measured eigenvalues, ``n_unknowns``, ``n_poses`` distinct poses,
    ``counting_ok`` (eq. 3.32 and >= 2 poses); ``singular_values`` of the column-scaled Jacobian, descending,
    normalized by the largest; ``rank`` with tolerance RANK_TOLERANCE; ``condition_number``;
    ``weakest_direction`` parameter name -> component of the least determined combination (unit vector in
    relative-parameter space); ``column_scale`` the parameter magnitudes used to scale the columns.
    """

    n_eigenvalues: int
    n_unknowns: int
    n_poses: int
    counting_ok: bool
    singular_values: np.ndarray
    rank: int
    condition_number: float
    weakest_direction: dict[str, float]
    column_scale: np.ndarray

    @property
    def full_rank(self) -> bool:
        return self.rank == self.n_unknowns

    def to_dict(self) -> dict:
        return {
            "n_eigenvalues": self.n_eigenvalues, "n_unknowns": self.n_unknowns, "n_poses": self.n_poses,
            "eq_3_32_satisfied": self.counting_ok, "singular_values": self.singular_values.tolist(),
            "rank": self.rank, "full_rank": self.full_rank, "condition_number": self.condition_number,
            "weakest_direction": self.weakest_direction, "column_scale": self.column_scale.tolist(),
        }


def distinct_counts(data: ModalData, decimals: int = 9) -> tuple[int, int]:
    """(distinct eigenvalues N, distinct poses) of the data; poses equal to ``decimals`` digits are the same pose,
    and the same eigenvalue measured twice at the same pose counts once."""
    poses: dict[tuple, set] = {}
    for pose in data.poses:
        if not pose.modes:
            continue
        key = tuple(np.round(pose.q, decimals))
        values = poses.setdefault(key, set())
        for mode in pose.modes:
            values.add((round(mode.frequency_hz, decimals), round(mode.damping_ratio, decimals)))
    return sum(len(v) for v in poses.values()), len(poses)


def check_counting(data: ModalData, parameters: Sequence[Any], setting: str = "--params") -> tuple[int, int]:
    """Refuse (IdentificationError) data that cannot determine the unknowns by counting; return (N, poses).
    ``setting`` names where the unknowns were chosen, for the message (the CLI's ``--params``, a node's
    ``identification.parameters``)."""
    n_eigenvalues, n_poses = distinct_counts(data)
    unknowns = len(parameters)
    names = [p.name for p in parameters]
    if n_eigenvalues <= unknowns:
        raise IdentificationError(
            f"{data.source}: {n_eigenvalues} distinct measured eigenvalue(s) for {unknowns} unknown(s) {names}: "
            f"seed 000 eq. 3.32 requires more eigenvalues than unknowns (dim(k) + dim(d) < N). Add modes or poses, "
            f"or identify fewer parameters ({setting}).")
    if n_poses < 2:
        raise IdentificationError(
            f"{data.source}: all modes come from one pose; the joint parameters {names} do not depend on the pose, "
            "and what separates them is how the modes change with the pose (mass matrix and gravity stiffness). "
            "Measure at two or more distinct poses (seed 000 uses 15).")
    return n_eigenvalues, n_poses


def column_scale(nominal: np.ndarray, estimate: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Magnitude of each parameter for relative scaling: max(|nominal|, |estimate|), or the upper bound if both
    are zero."""
    scale = np.maximum(np.abs(nominal), np.abs(estimate))
    return np.where(scale > 0, scale, upper)


def jacobian_report(jacobian: np.ndarray, scale: np.ndarray, parameters: Sequence[JointParameter],
                    n_eigenvalues: int, n_poses: int) -> Identifiability:
    """Rank and conditioning of a Jacobian (2N, P) with columns scaled by ``scale`` (P,)."""
    scaled = jacobian * scale[None, :]
    _, singular, vh = np.linalg.svd(scaled, full_matrices=False)
    top = singular[0] if singular.size and singular[0] > 0 else 1.0
    relative = singular / top
    rank = int(np.sum(relative > RANK_TOLERANCE))
    condition = float(top / singular[-1]) if singular[-1] > 0 else float("inf")
    weakest = vh[-1] * np.sign(vh[-1][np.argmax(np.abs(vh[-1]))])
    return Identifiability(
        n_eigenvalues=n_eigenvalues, n_unknowns=len(parameters), n_poses=n_poses,
        counting_ok=n_eigenvalues > len(parameters) and n_poses >= 2, singular_values=relative, rank=rank,
        condition_number=condition, weakest_direction={p.name: float(c) for p, c in zip(parameters, weakest)},
        column_scale=scale)


@dataclass(frozen=True)
class Sensitivity:
    """First-order response of the free parameters to the data (rows: parameters; parameters at a bound have
    zero rows). ``d_frequency`` (P, N) [parameter unit per Hz], ``d_damping`` (P, N) [per unit damping ratio],
    ``damping_bias`` (P,) shift per +1.0 added to every damping ratio (multiply by 0.01 for one percentage
    point), ``frequency_bias`` (P,) shift per relative change +1.0 of every frequency, ``std`` (P,) standard
    deviation for the stated data uncertainties ``frequency_std`` (relative) and ``damping_std`` (absolute);
    ``unobservable`` (P,) the free parameters in the Jacobian's numerical null space (a combination the data do
    not move at all: ``std`` inf, their rows NaN), ``null_weight`` (P,) each one's squared share of that null
    space (0 for the others); ``deletion_std`` (P,) the largest standard deviation with any one measured mode
    left out (inf: some mode alone carries the parameter, so nothing else checks it) and ``deletion_mode`` (P,)
    that mode's index (-1 when the parameter is not free)."""

    d_frequency: np.ndarray
    d_damping: np.ndarray
    damping_bias: np.ndarray
    frequency_bias: np.ndarray
    std: np.ndarray
    frequency_std: float
    damping_std: float
    unobservable: np.ndarray
    null_weight: np.ndarray
    deletion_std: np.ndarray
    deletion_mode: np.ndarray


#: A parameter whose squared share of the Jacobian's null space exceeds this is unobservable (std inf).
NULL_SHARE = 1e-12


def pseudo_response(jacobian: np.ndarray, data_jac: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(``-J^+ (dr/dy)`` (P, columns of ``data_jac``) with NaN rows for the unobservable parameters, the
    unobservable mask (P,), their null-space weights (P,)): the pseudo-inverse of ``jacobian`` with its columns
    equilibrated (unit norm) and its singular values below RANK_TOLERANCE of the largest dropped."""
    norms = np.linalg.norm(jacobian, axis=0)
    norms = np.where(norms > 0.0, norms, 1.0)
    u, singular, vh = np.linalg.svd(jacobian / norms, full_matrices=True)
    top = singular[0] if singular.size and singular[0] > 0.0 else 1.0
    rank = int(np.sum(singular > RANK_TOLERANCE * top))
    solution = -(vh[:rank].T / singular[:rank]) @ (u[:, :rank].T @ data_jac) / norms[:, None]
    weight = np.sum(vh[rank:] ** 2, axis=0)
    null = weight > NULL_SHARE
    solution[null] = np.nan
    return solution, null, np.where(null, weight, 0.0)


def _spread(solution: np.ndarray, null: np.ndarray, frequencies_hz: np.ndarray, frequency_std: float,
            damping_std: float) -> np.ndarray:
    """Standard deviations (P,) of a :func:`pseudo_response` (columns f_1, zeta_1, f_2, ...) for the data
    uncertainty."""
    variance = ((solution[:, 0::2] * frequency_std * frequencies_hz[None, :]) ** 2
                + (solution[:, 1::2] * damping_std) ** 2)
    return np.where(null, np.inf, np.sqrt(variance.sum(axis=1)))


def data_sensitivity(problem: Residuals, estimate: np.ndarray, free: np.ndarray,
                     frequencies_hz: np.ndarray, frequency_std: float, damping_std: float) -> Sensitivity:
    """Gauss-Newton sensitivity of the free parameters (mask ``free``) to the measured data at ``estimate``.

    ``dp = -J^+ (dr/dy) dy`` with ``J^+`` the pseudo-inverse of the free parameters' Jacobian (:func:`pseudo_response`);
    a parameter with a share of the dropped (null) directions is unobservable: standard deviation inf, not the zero
    a minimum-norm solution would give it. The same with each measured mode left out in turn gives
    ``deletion_std``: a parameter one mode alone carries is fitted to that mode exactly, whatever its error (a
    spurious OMA pole), so reproducing that mode proves nothing."""
    count, modes = estimate.size, problem.n_modes
    d_frequency = np.zeros((count, modes))
    d_damping = np.zeros((count, modes))
    unobservable = np.zeros(count, dtype=bool)
    null_weight = np.zeros(count)
    deletion_std = np.zeros(count)
    deletion_mode = np.full(count, -1)
    frequencies_hz = np.asarray(frequencies_hz, dtype=float)
    if np.any(free):
        jacobian = problem.jacobian(estimate)[:, free]
        blocks = problem.data_jacobian(estimate)              # (N, 2, 2)
        data_jac = np.zeros((2 * modes, 2 * modes))           # columns: f_1, zeta_1, f_2, zeta_2, ...
        for k in range(modes):
            data_jac[2 * k:2 * k + 2, 2 * k:2 * k + 2] = blocks[k]
        solution, null, weight = pseudo_response(jacobian, data_jac)
        d_frequency[free] = solution[:, 0::2]
        d_damping[free] = solution[:, 1::2]
        unobservable[free], null_weight[free] = null, weight
        worst, worst_mode = np.zeros(int(free.sum())), np.full(int(free.sum()), -1)
        for k in range(modes):
            rows = np.ones(2 * modes, dtype=bool)
            rows[2 * k:2 * k + 2] = False
            left, left_null, _ = pseudo_response(jacobian[rows], data_jac[np.ix_(rows, rows)])
            spread = _spread(left, left_null, np.delete(frequencies_hz, k), frequency_std, damping_std)
            larger = spread > worst
            worst, worst_mode = np.where(larger, spread, worst), np.where(larger, k, worst_mode)
        deletion_std[free], deletion_mode[free] = worst, worst_mode
    variance = (d_frequency * frequency_std * frequencies_hz[None, :]) ** 2 + (d_damping * damping_std) ** 2
    std = np.where(unobservable, np.inf, np.sqrt(variance.sum(axis=1)))
    return Sensitivity(d_frequency=d_frequency, d_damping=d_damping, damping_bias=d_damping.sum(axis=1),
                       frequency_bias=(d_frequency * frequencies_hz[None, :]).sum(axis=1), std=std,
                       frequency_std=frequency_std, damping_std=damping_std, unobservable=unobservable,
                       null_weight=null_weight, deletion_std=np.maximum(deletion_std, std),
                       deletion_mode=deletion_mode)


@dataclass(frozen=True)
class Undetermined:
    """A parameter (index ``index`` in the unknowns) the data do not determine: its ``relative_std`` (standard
    deviation over its magnitude, inf when unobservable) when it was set aside; ``by_count``: set aside only so that
    the measured eigenvalues outnumber the unknowns (eq. 3.32); ``single_mode``: the index of the measured mode that
    alone carries it (its standard deviation is within ``fraction`` with every mode, not with that one left out),
    -1 otherwise."""

    index: int
    relative_std: float
    by_count: bool = False
    single_mode: int = -1

    def reason(self, fraction: float) -> str:
        """Why it was set aside, for reports."""
        if self.by_count:
            return (f"the least determined left (standard deviation {100 * self.relative_std:.3g} % of its value) "
                    "when the measured eigenvalues must outnumber the unknowns (seed 000 eq. 3.32)")
        if self.single_mode >= 0:
            return ("carried by a single measured mode, which then fits it exactly whatever that mode's error: "
                    "nothing cross-checks it")
        if not np.isfinite(self.relative_std):
            return "not observable from the measured modes (in the null space of their sensitivity matrix)"
        return (f"not determined by the measured modes: standard deviation {100 * self.relative_std:.3g} % of its "
                f"value, above {100 * fraction:.3g} %")


def undetermined_parameters(problem: Residuals, values: np.ndarray, free: np.ndarray, scale: np.ndarray,
                            frequencies_hz: np.ndarray, frequency_std: float, damping_std: float,
                            fraction: float, max_free: int | None = None) -> list[Undetermined]:
    """Backward elimination on the sensitivity matrix at ``values``: while some free parameter's standard deviation
    (:func:`data_sensitivity`, the others held) exceeds ``fraction`` of its magnitude ``scale`` with all measured
    modes or with any one of them left out, or more than ``max_free`` parameters are free (eq. 3.32: fewer unknowns
    than measured eigenvalues), set the worst one aside (an unobservable one first, the largest share of the null
    space first; then by the standard deviation with all modes, then with one left out) and look again; the
    parameters set aside, in that order. One at a time, so that a parameter correlated with an unobservable one is
    judged once the unobservable one is fixed: asking kr90 for d_fm (its motor modes lie far above the measured
    band) must not make the d_f that the link modes' damping carries look undetermined."""
    free = np.array(free, dtype=bool)
    removed: list[Undetermined] = []
    while np.any(free):
        sensitivity = data_sensitivity(problem, values, free, frequencies_hz, frequency_std, damping_std)
        relative = np.where(free, sensitivity.std / scale, -np.inf)
        deleted = np.where(free, sensitivity.deletion_std / scale, -np.inf)
        worst = int(np.lexsort((deleted, relative, sensitivity.null_weight))[-1])
        if relative[worst] <= fraction:
            worst = int(np.argmax(deleted))
        if deleted[worst] <= fraction and (max_free is None or free.sum() <= max_free):
            break
        single = int(sensitivity.deletion_mode[worst]) if relative[worst] <= fraction < deleted[worst] else -1
        removed.append(Undetermined(worst, float(relative[worst]), deleted[worst] <= fraction, single))
        free[worst] = False
    return removed


__all__ = ["Identifiability", "Sensitivity", "distinct_counts", "check_counting", "column_scale",
           "jacobian_report", "data_sensitivity", "RANK_TOLERANCE", "NULL_SHARE", "Undetermined",
           "undetermined_parameters", "pseudo_response"]
