"""Identification of joint stiffness and damping from modal data at several poses (seed 000 chapter 3).

The inverse eigenvalue problem: find the unknowns p (any subset of k, d_f, d_fm; the others stay at the robot's
YAML values) that make every measured eigenvalue a root of the model's characteristic polynomial at its pose,
by bounded nonlinear least squares on the Re/Im parts of the scaled determinants of eq. 3.31::

    minimize  F(p) = sum_(poses i) sum_(modes k) Re(|A_ik(p)|)^2 + Im(|A_ik(p)|)^2      (eq. 3.28)
    subject to lower <= p <= upper                                                     (eqs. 3.29-3.30)

solved with ``scipy.optimize.least_squares`` (trust-region reflective, analytic Jacobian) from several seeded
random starts spread uniformly over the bounds (the thesis' MultiStart + lsqnonlin, section 3.4.3); the best
local minimum is the estimate. Before solving, the request is checked (eq. 3.32 counting, two or more poses) and
the measured modes are matched to the model's modes at each pose (:mod:`.matching`); after solving, the
identifiability report (Jacobian rank and conditioning) and the data sensitivity say how well each parameter is
determined (:mod:`.identifiability`).

Usage::

    from flexrobot_ros.model import load_robot
    from flexrobot_ros.identification import identify_joint_parameters, read_modal_data
    result = identify_joint_parameters(load_robot("planar_2r"), read_modal_data("modes.yaml"), "k,d_f,d_fm")
    result.robot.stiffness, result.objective, result.parameters[0].std
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy.optimize import least_squares

from flexrobot_ros.errors import IdentificationError, ModalError, ModelError
from flexrobot_ros.identification.affine_model import AffineModel, Residuals
from flexrobot_ros.identification.characteristic_determinant import CharacteristicDeterminant
from flexrobot_ros.identification.eigenvalue_residuals import EigenvalueResiduals
from flexrobot_ros.identification.identifiability import (
    Identifiability, Sensitivity, check_counting, column_scale, data_sensitivity, jacobian_report)
from flexrobot_ros.identification.matching import (
    FREQUENCY_TOLERANCE, MAC_THRESHOLD, PoseMatch, match_modes, require_matched)
from flexrobot_ros.identification.modal_data import ModalData, PoseModes
from flexrobot_ros.identification.parameters import KIND_FIELDS, parse_parameters, resolve_bounds
from flexrobot_ros.flexible_links.elastic_robot import elastic_joints_only
from flexrobot_ros.modal import linearize, modal_analysis
from flexrobot_ros.modal.held_modes import has_link_layer
from flexrobot_ros.model import FlexibleRobot

#: Two local solutions are the same minimum when they differ by less than this fraction of the bound widths.
MINIMUM_CLUSTER_TOLERANCE = 1e-3
#: rms relative eigenvalue error below which a local solution fits the data exactly (far below any OMA accuracy).
EXACT_FIT = 1e-6
#: Estimated serial time [s] of the remaining starts above which ``workers='auto'`` uses a second process.
PARALLEL_THRESHOLD_S = 3.0

Progress = Callable[[int, int, float], None]
#: Residuals that :func:`identify_joint_parameters` can minimize.
RESIDUALS = ("determinant", "eigenvalue")


@dataclass(frozen=True)
class StartResult:
    """One local solve: ``index`` of the start, ``initial`` and ``final`` parameter vectors (P,), ``objective``
    (the minimized sum of squares) at ``final``, ``eigenvalue_rms`` the rms relative error of the matched model
    eigenvalues there (scale-free fit quality: about the rms of frequency and damping-ratio errors),
    ``evaluations`` of the residuals and ``jacobians``, scipy ``status`` and ``message``."""

    index: int
    initial: np.ndarray
    final: np.ndarray
    objective: float
    eigenvalue_rms: float
    evaluations: int
    jacobians: int
    status: int
    message: str


@dataclass(frozen=True)
class LocalMinimum:
    """A distinct local minimum: its ``objective`` (minimized sum of squares), ``eigenvalue_rms`` (see
    :class:`StartResult`), parameter ``values`` (P,) (the best of its starts) and the ``starts`` that reached it."""

    objective: float
    eigenvalue_rms: float
    values: np.ndarray
    starts: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.starts)


@dataclass(frozen=True)
class IdentifiedParameter:
    """One identified parameter: ``value`` (the estimate), ``nominal`` (YAML), ``lower``/``upper`` bounds,
    ``at_bound``; ``std`` its standard deviation for the stated data uncertainty (0 at a bound);
    ``damping_bias`` its shift per +1 percentage point on every damping ratio and ``frequency_bias`` per +1 %
    on every frequency (first order); ``unit`` SI. A flexible-link parameter (:mod:`.link_parameters`) has its link
    in ``joint`` and its ``flexible_links.<link>`` field in ``field`` ('' for joint parameters)."""

    name: str
    kind: str
    joint: str
    unit: str
    value: float
    nominal: float
    lower: float
    upper: float
    at_bound: bool
    std: float
    damping_bias: float
    frequency_bias: float
    field: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ModeComparison:
    """A measured mode and the identified model's mode matched to it at the same pose (frequencies [Hz],
    damping ratios as fractions; ``model_mode`` -1 and NaNs when nothing matches; ``mac`` NaN without shape)."""

    pose: int
    mode: int
    model_mode: int
    measured_frequency_hz: float
    predicted_frequency_hz: float
    measured_damping_ratio: float
    predicted_damping_ratio: float
    mac: float

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class IdentificationResult:
    """Outcome of :func:`identify_joint_parameters`.

    ``robot``: a copy of the input robot with the identified values; ``parameters``: the per-parameter table;
    ``estimate`` (P,); ``objective`` F of eq. 3.28 at the estimate and ``objective_nominal`` at the YAML values;
    ``residual`` the residual minimized ('determinant' | 'eigenvalue') and ``minimized_objective`` its sum of
    squares at the estimate (= ``objective`` for 'determinant'); ``eigenvalue_rms`` the rms relative error of the
    identified model's eigenvalues matched to the measured ones (about the rms of relative frequency and
    damping-ratio errors); ``minima``: distinct local minima of the
    minimized objective, best first; ``starts``: every local solve; ``identifiability``: counting
    and Jacobian conditioning at the estimate; ``sensitivity``: first-order data sensitivity;
    ``comparisons``: measured vs predicted modes; ``matches``: the matching at the YAML values, before
    identifying; ``evaluations``/``jacobians``: totals over all starts; ``wall_time_s``; ``warnings``;
    ``source``: where the modal data came from; ``workers`` processes used.
    """

    robot: FlexibleRobot
    parameters: tuple[IdentifiedParameter, ...]
    estimate: np.ndarray
    objective: float
    objective_nominal: float
    residual: str
    minimized_objective: float
    eigenvalue_rms: float
    minima: tuple[LocalMinimum, ...]
    starts: tuple[StartResult, ...]
    identifiability: Identifiability
    sensitivity: Sensitivity
    comparisons: tuple[ModeComparison, ...]
    matches: tuple[PoseMatch, ...]
    evaluations: int
    jacobians: int
    wall_time_s: float
    warnings: tuple[str, ...]
    source: str
    workers: int

    def value(self, name: str) -> float:
        """Estimate of the parameter named e.g. ``'k.joint1'``."""
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter.value
        raise IdentificationError(f"no identified parameter {name!r}; identified: {[p.name for p in self.parameters]}")

    def to_dict(self) -> dict:
        """JSON-ready summary (SI units, damping ratios as fractions)."""
        return {
            "robot": self.robot.name,
            "source": self.source,
            "objective": self.objective,
            "objective_nominal": self.objective_nominal,
            "residual": self.residual,
            "minimized_objective": self.minimized_objective,
            "parameters": [p.to_dict() for p in self.parameters],
            "identified": {field: getattr(self.robot, field).tolist()
                           for field in sorted({KIND_FIELDS[p.kind] for p in self.parameters if not p.field})},
            "identified_links": identified_links(self.parameters),
            "identifiability": self.identifiability.to_dict(),
            "data_uncertainty": {"frequency_std_relative": self.sensitivity.frequency_std,
                                 "damping_std": self.sensitivity.damping_std},
            "eigenvalue_rms": self.eigenvalue_rms,
            "minima": [{"objective": m.objective, "eigenvalue_rms": m.eigenvalue_rms, "values": m.values.tolist(),
                        "count": m.count, "starts": list(m.starts)} for m in self.minima],
            "starts": len(self.starts),
            "start_objectives": [s.objective for s in self.starts],
            "evaluations": self.evaluations,
            "jacobians": self.jacobians,
            "wall_time_s": self.wall_time_s,
            "workers": self.workers,
            "comparisons": [c.to_dict() for c in self.comparisons],
            "matches_before": [m.to_dict() for m in self.matches],
            "warnings": list(self.warnings),
        }


class LocalSolver:
    """One bounded trust-region-reflective solve per start (picklable, so chunks of starts can run in worker
    processes). ``problem`` is minimized; ``fit`` (eigenvalue residuals) grades each local solution on a common,
    scale-free footing: the rms relative eigenvalue error of the matched modes."""

    def __init__(self, problem: Residuals, fit: EigenvalueResiduals, lower: np.ndarray, upper: np.ndarray,
                 tolerance: float, max_evaluations: int) -> None:
        self.problem, self.fit = problem, fit
        self.lower, self.upper = lower, upper
        self.tolerance, self.max_evaluations = tolerance, max_evaluations

    def solve(self, indices: Sequence[int], initials: np.ndarray) -> list[StartResult]:
        problem, results = self.problem, []
        for index, x0 in zip(indices, initials):
            before_f, before_j = problem.n_evaluations, problem.n_jacobians
            solution = least_squares(problem.residuals, x0, jac=problem.jacobian, bounds=(self.lower, self.upper),
                                     method="trf", x_scale=self.upper - self.lower, ftol=self.tolerance,
                                     xtol=self.tolerance, gtol=self.tolerance, max_nfev=self.max_evaluations)
            final = np.clip(solution.x, self.lower, self.upper)
            results.append(StartResult(
                index=int(index), initial=np.array(x0), final=final, objective=problem.objective(final),
                eigenvalue_rms=float(np.sqrt(self.fit.objective(final) / self.fit.n_modes)),
                evaluations=problem.n_evaluations - before_f, jacobians=problem.n_jacobians - before_j,
                status=int(solution.status), message=str(solution.message)))
        return results


def _run_starts(solver: LocalSolver, initials: np.ndarray, workers: int | str,
                progress: Progress | None) -> tuple[list[StartResult], int]:
    total = len(initials)
    results: list[StartResult] = []

    def report() -> None:
        if progress is not None:
            progress(len(results), total, min(r.objective for r in results))

    started = time.perf_counter()
    results += solver.solve([0], initials[:1])
    report()
    first = time.perf_counter() - started
    cores = os.cpu_count() or 1
    if workers == "auto":
        workers = 2 if cores > 1 and first * (total - 1) > PARALLEL_THRESHOLD_S else 1
    workers = max(1, min(int(workers), total - 1)) if total > 1 else 1
    remaining = list(range(1, total))
    if workers == 1:
        for index in remaining:
            results += solver.solve([index], initials[index:index + 1])
            report()
        return results, 1
    chunks = [remaining[i::workers * 4] for i in range(workers * 4) if remaining[i::workers * 4]]
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(solver.solve, chunk, initials[chunk]) for chunk in chunks]
        for future in concurrent.futures.as_completed(futures):
            results += future.result()
            report()
    results.sort(key=lambda r: r.index)
    return results, workers


def identified_links(parameters: Sequence[IdentifiedParameter]) -> dict[str, dict[str, float]]:
    """``{link: {field: value}}`` of the flexible-link parameters among ``parameters`` (for the YAML writer)."""
    links: dict[str, dict[str, float]] = {}
    for p in parameters:
        if p.field:
            links.setdefault(p.joint, {})[p.field] = p.value
    return links


def cluster_minima(starts: Sequence[StartResult], lower: np.ndarray, upper: np.ndarray,
                   tolerance: float = MINIMUM_CLUSTER_TOLERANCE) -> tuple[LocalMinimum, ...]:
    """Group local solutions, best first: a solution joins a better one when their parameters differ by less than
    ``tolerance`` of the bound widths (max norm), or when both fit the data exactly (``eigenvalue_rms`` below
    EXACT_FIT: points of one zero-residual valley along poorly determined parameters)."""
    width = upper - lower
    groups: list[tuple[StartResult, list[int]]] = []
    for start in sorted(starts, key=lambda s: s.objective):
        for best, members in groups:
            if (np.max(np.abs(start.final - best.final) / width) < tolerance
                    or max(start.eigenvalue_rms, best.eigenvalue_rms) < EXACT_FIT):
                members.append(start.index)
                break
        else:
            groups.append((start, [start.index]))
    return tuple(LocalMinimum(objective=best.objective, eigenvalue_rms=best.eigenvalue_rms, values=best.final,
                              starts=tuple(members)) for best, members in groups)


def snap_to_bounds(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, at_bound) (P,): ``values`` with those within 1e-9 of the bound width of a bound set exactly on it
    (the solver stops a hair inside an active bound), and which ones are."""
    at_lower = values - lower <= 1e-9 * (upper - lower)
    at_upper = upper - values <= 1e-9 * (upper - lower)
    return np.where(at_lower, lower, np.where(at_upper, upper, values)), at_lower | at_upper


def _linearize_poses(robot: FlexibleRobot, data: ModalData) -> list:
    linearized = []
    for i, pose in enumerate(data.poses):
        if pose.q.shape != (robot.n,):
            raise IdentificationError(f"{data.source}: poses[{i}].q: expected {robot.n} joint positions for "
                                      f"{list(robot.joint_names)}, got {pose.q.shape[0]}")
        try:
            linearized.append(linearize(robot, pose.q))
        except (ModalError, ModelError) as error:
            raise IdentificationError(f"{data.source}: poses[{i}]: cannot linearize {robot.name} there: {error}") \
                from None
    return linearized


def compare_modes(robot: FlexibleRobot, data: ModalData, frequency_tolerance: float,
                  mac_threshold: float) -> tuple[list[ModeComparison], list[str]]:
    """Each measured mode beside the mode of ``robot`` (the identified model) matched to it at its pose, and the
    problems found (an unstable model, a measured mode no model mode matches)."""
    comparisons, problems = [], []
    for i, pose in enumerate(data.poses):
        model = modal_analysis(robot, pose.q)
        if not model.stable:
            problems.append(f"the identified model is {model.verdict} at poses[{i}]")
        match = match_modes(model, pose, i, data.shape_coordinates, frequency_tolerance, mac_threshold, data.source)
        for k, mode in enumerate(pose.modes):
            j = int(match.model_mode[k])
            if j < 0:
                problems.append(f"after identification, poses[{i}].modes[{k}] matches no model mode: "
                                f"{match.reasons[k]}")
            comparisons.append(ModeComparison(
                pose=i, mode=k, model_mode=j, measured_frequency_hz=mode.frequency_hz,
                predicted_frequency_hz=float(model.frequencies_hz[j]) if j >= 0 else float("nan"),
                measured_damping_ratio=mode.damping_ratio,
                predicted_damping_ratio=float(model.damping_ratios[j]) if j >= 0 else float("nan"),
                mac=float(match.mac[k])))
    return comparisons, problems


def matched_data(robot: FlexibleRobot, data: ModalData, frequency_tolerance: float, mac_threshold: float,
                 drop_unmatched: bool) -> tuple[list[PoseMatch], ModalData, list[str]]:
    """(matches at the robot's values, the data, the dropped modes): measured modes matched to ``robot``'s modes at
    each pose (:mod:`.matching`); those matching none are left out (``drop_unmatched``, each described in the
    list) or refused (IdentificationError)."""
    matches = [match_modes(modal_analysis(robot, pose.q), pose, i, data.shape_coordinates, frequency_tolerance,
                           mac_threshold, data.source) for i, pose in enumerate(data.poses)]
    dropped: list[str] = []
    if not drop_unmatched:
        require_matched(matches, data.source)
        return matches, data, dropped
    kept = []
    for match, pose in zip(matches, data.poses):
        dropped += [f"poses[{match.pose}].modes[{k}] ({reason})" for k, reason in enumerate(match.reasons) if reason]
        kept.append(PoseModes(pose.q, tuple(m for m, j in zip(pose.modes, match.model_mode) if j >= 0)))
    return matches, dataclasses.replace(data, poses=tuple(kept)), dropped


def check_pose_lengths(robot: FlexibleRobot, data: ModalData) -> None:
    """Refuse modal data whose poses do not have one position per joint of ``robot`` (data of another robot)."""
    for i, pose in enumerate(data.poses):
        if pose.q.shape != (robot.n,):
            raise IdentificationError(
                f"{data.source}: poses[{i}].q: expected {robot.n} joint positions for the joints "
                f"{list(robot.joint_names)} of robot {robot.name}, got {pose.q.size}: joint-count mismatch (modal "
                "data of another robot, or a pose written with the wrong length)")


def identify_joint_parameters(
        robot: FlexibleRobot, data: ModalData, parameters: str | Sequence[str] = "k,d_f,d_fm", *,
        bounds: Mapping[str, Any] | None = None, starts: int = 40, seed: int = 0, include_nominal: bool = True,
        residual: str = "determinant", workers: int | str = 1, tolerance: float = 1e-12, max_evaluations: int = 500,
        frequency_tolerance: float = FREQUENCY_TOLERANCE, mac_threshold: float = MAC_THRESHOLD,
        frequency_std: float = 0.005, damping_std: float = 0.005, drop_unmatched: bool = False,
        progress: Progress | None = None) -> IdentificationResult:
    """Identify joint stiffness/damping of ``robot`` from modal ``data`` (see the module docstring).

    ``parameters``: selection as in :func:`flexrobot_ros.identification.parameters.parse_parameters`;
    ``bounds``: ``{'k': (low, high), 'd_f:joint1': (low, high), ...}`` (defaults:
    :func:`~flexrobot_ros.identification.parameters.default_bounds`); ``residual``: ``'determinant'`` (seed 000
    eq. 3.31, the thesis method) or ``'eigenvalue'`` (matched relative eigenvalue errors,
    :mod:`.eigenvalue_residuals`: no spurious minima from unmeasured modes, better for robots with widely spread
    modes); ``starts`` local solves from points drawn uniformly in the bounds with
    ``numpy.random.default_rng(seed)``, the first one replaced by the YAML values when ``include_nominal``; ``workers``: processes for the starts (1, 2, ... or 'auto': a second process only
    when the first start predicts more than PARALLEL_THRESHOLD_S of serial work); ``tolerance``: ftol = xtol =
    gtol of each local solve, ``max_evaluations`` per start; ``frequency_tolerance``/``mac_threshold``: mode
    matching (:mod:`.matching`); ``frequency_std`` (relative) and ``damping_std`` (absolute fraction): data
    uncertainty used for the parameters' standard deviations; ``drop_unmatched``: leave out measured modes that
    match no model mode (e.g. spurious OMA modes) with a warning, instead of refusing the data (the comparisons
    then index the remaining modes); ``progress(done, total, best_F)`` after each start.

    Raises :class:`IdentificationError` for under-determined requests (eq. 3.32, a single pose), poses of the
    wrong length, and measured modes that match no model mode. Weakly determined parameters are reported
    (``identifiability``, per-parameter ``std``, ``warnings``), not refused.
    """
    started = time.perf_counter()
    if starts < 1:
        raise IdentificationError(f"starts: expected at least 1 local solve, got {starts}")
    if residual not in RESIDUALS:
        raise IdentificationError(f"residual: expected one of {RESIDUALS}, got {residual!r}")
    if has_link_layer(robot):
        raise IdentificationError(
            f"robot {robot.name}: k, d_f, d_fm are identified on the flexible-joint model (seed 000), which has no "
            "flexible links or rigid joints; this robot's flexible links are identified by EI, zeta "
            "(identify_link_parameters)")
    if not elastic_joints_only(robot):
        raise IdentificationError(
            f"robot {robot.name}: k, d_f, d_fm are identified on the flexible-joint model (seed 000: elastic joints on "
            "rigid links, coordinates [q; q_m]); this robot has extra elasticities or gear dampers, whose modes the "
            "joint model does not hold")
    unknowns = parse_parameters(robot, parameters)
    check_pose_lengths(robot, data)
    check_counting(data, unknowns)
    lower, upper = resolve_bounds(robot, unknowns, bounds)
    nominal = np.array([p.value_in(robot) for p in unknowns])

    linearized = _linearize_poses(robot, data)
    matches, data, dropped = matched_data(robot, data, frequency_tolerance, mac_threshold, drop_unmatched)
    check_counting(data, unknowns)

    eigenvalues = [np.array([mode.eigenvalue for mode in pose.modes]) for pose in data.poses]
    model = AffineModel(linearized, unknowns, nominal, robot.transmission)
    thesis = CharacteristicDeterminant(model, eigenvalues)
    fit = EigenvalueResiduals(model, eigenvalues)
    problem = thesis if residual == "determinant" else fit

    rng = np.random.default_rng(seed)
    initials = lower + (upper - lower) * rng.random((starts, len(unknowns)))
    if include_nominal:
        initials[0] = np.clip(nominal, lower, upper)
    solver = LocalSolver(problem, fit, lower, upper, tolerance, max_evaluations)
    results, used_workers = _run_starts(solver, initials, workers, progress)
    minima = cluster_minima(results, lower, upper)
    estimate, at_bound = snap_to_bounds(minima[0].values, lower, upper)

    fields = {field: np.array(getattr(robot, field)) for field in {p.field for p in unknowns}}
    for p, value in zip(unknowns, estimate):
        fields[p.field][p.joint] = value
    identified = robot.with_parameters(**fields)

    n_eigenvalues, n_poses = check_counting(data, unknowns)
    report = jacobian_report(fit.jacobian(estimate), column_scale(nominal, estimate, upper), unknowns,
                             n_eigenvalues, n_poses)
    frequencies = np.concatenate([[m.frequency_hz for m in pose.modes] for pose in data.poses])
    sensitivity = data_sensitivity(problem, estimate, ~at_bound, frequencies, frequency_std, damping_std)
    comparisons, problems = compare_modes(identified, data, frequency_tolerance, mac_threshold)

    table = tuple(IdentifiedParameter(
        name=p.name, kind=p.kind, joint=p.joint_name, unit=p.unit(robot), value=float(estimate[j]),
        nominal=float(nominal[j]), lower=float(lower[j]), upper=float(upper[j]), at_bound=bool(at_bound[j]),
        std=float(sensitivity.std[j]), damping_bias=float(0.01 * sensitivity.damping_bias[j]),
        frequency_bias=float(0.01 * sensitivity.frequency_bias[j])) for j, p in enumerate(unknowns))
    warnings = identification_warnings(table, report, minima, problems)
    if dropped:
        warnings.insert(0, f"{len(dropped)} measured mode(s) matching no model mode were left out: "
                        + "; ".join(dropped))
    if residual == "determinant" and np.any(~at_bound):
        alternative = data_sensitivity(fit, estimate, ~at_bound, frequencies, frequency_std, damping_std).std
        ratio = np.median(sensitivity.std[~at_bound] / np.maximum(alternative[~at_bound], 1e-300))
        if ratio > 3.0:
            warnings.append(f"with these data the determinant residuals of eq. 3.31 amplify data errors: eigenvalue "
                            f"residuals (residual='eigenvalue', --residual eigenvalue) would give standard "
                            f"deviations {ratio:.3g} times smaller (median over the parameters)")
    return IdentificationResult(
        robot=identified, parameters=table, estimate=estimate, objective=thesis.objective(estimate),
        objective_nominal=thesis.objective(nominal), residual=residual,
        minimized_objective=problem.objective(estimate),
        eigenvalue_rms=float(np.sqrt(fit.objective(estimate) / fit.n_modes)), minima=minima, starts=tuple(results),
        identifiability=report,
        sensitivity=sensitivity, comparisons=tuple(comparisons), matches=tuple(matches),
        evaluations=sum(r.evaluations for r in results), jacobians=sum(r.jacobians for r in results),
        wall_time_s=time.perf_counter() - started, warnings=tuple(warnings), source=data.source,
        workers=used_workers)


def identification_warnings(table: Sequence[IdentifiedParameter], report: Identifiability,
                            minima: Sequence[LocalMinimum], problems: list[str]) -> list[str]:
    """Warnings of an identification: parameters at a bound, a rank-deficient Jacobian, poorly determined
    parameters, a best minimum reached once, and ``problems`` (:func:`compare_modes`)."""
    side = lambda p: "lower" if p.value - p.lower < p.upper - p.value else "upper"  # noqa: E731
    warnings = [f"{p.name} = {p.value:.6g} {p.unit} is at its {side(p)} bound [{p.lower:.6g}, {p.upper:.6g}]: the "
                "data push it out of the allowed range" for p in table if p.at_bound]
    if not report.full_rank:
        weakest = sorted(report.weakest_direction.items(), key=lambda item: -abs(item[1]))[:3]
        warnings.append(f"the Jacobian at the estimate has rank {report.rank} < {report.n_unknowns} (condition "
                        f"{report.condition_number:.3g}); poorly determined combination: "
                        + ", ".join(f"{name} {value:+.2f}" for name, value in weakest))
    loose = [f"{p.name} (std {p.std:.3g} {p.unit} for {p.value:.3g})" for p in table
             if not p.at_bound and p.std > 0.5 * abs(p.value)]
    if loose:
        warnings.append("poorly determined by these data (standard deviation above half the value for the stated "
                        "data uncertainty): " + ", ".join(loose))
    if minima[0].count == 1 and len(minima) > 1:
        warnings.append("the best minimum was reached by a single start; rerun with more starts to confirm it")
    return warnings + problems


__all__ = ["identify_joint_parameters", "IdentificationResult", "IdentifiedParameter", "LocalMinimum",
           "StartResult", "ModeComparison", "LocalSolver", "cluster_minima", "compare_modes", "identified_links",
           "identification_warnings", "matched_data", "snap_to_bounds"]
