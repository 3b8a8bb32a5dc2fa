"""Identification of flexible links' bending stiffness EI and modal damping from modal data at several poses.

The link counterpart of :func:`~flexrobot_ros.identification.joint_parameters.identify_joint_parameters` (issue 26):
find the unknowns p (EI [N m^2] per link and bending plane, damping ratio zeta per link; :mod:`.link_parameters`)
that make the model's eigenvalues at each pose those measured there::

    minimize  sum_(poses i) sum_(modes k) |lambda_ik,match(p) - lambda_hat_ik|^2 / |lambda_hat_ik|^2
    subject to lower <= p <= upper

(the eigenvalue residuals of :mod:`.eigenvalue_residuals` on the flexible-link model of :mod:`.link_model`, the
measured modes first matched to the model's by frequency + MAC, :mod:`.matching`), by bounded trust-region
least squares (``scipy.optimize.least_squares``) from the YAML values and ``starts - 1`` seeded random points
in the bounds, the Jacobian (the sensitivity of the measured eigenvalues to p) by central differences. With
gravity the beams' static sag moves with EI: the model is re-linearized at the estimate and solved again until the
estimate moves by less than ``RELINEARIZE_TOLERANCE`` (relative), at most ``MAX_RELINEARIZATIONS`` times.

Identifiability, as for the joint parameters (:mod:`.identifiability`): the rank and condition number of the
sensitivity matrix with columns scaled by the parameters' magnitudes, its weakest combination, and each
parameter's standard deviation for stated data uncertainties. A parameter no measured mode moves (a link whose
modes are outside the measured band or not excited, the damping of a link whose modes are overdamped) shows as a
zero singular value / a large standard deviation; :func:`~flexrobot_ros.identification.calibration.calibrate`
keeps it at its nominal value.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np

from flexrobot_ros.identification.identifiability import (
    check_counting, column_scale, data_sensitivity, jacobian_report)
from flexrobot_ros.identification.joint_parameters import (
    IdentificationResult, IdentifiedParameter, LocalSolver, check_pose_lengths, cluster_minima, compare_modes,
    identification_warnings, matched_data, snap_to_bounds)
from flexrobot_ros.identification.link_model import LinkEigenvalueResiduals, LinkModel
from flexrobot_ros.identification.link_parameters import parse_link_parameters, resolve_link_bounds
from flexrobot_ros.identification.matching import FREQUENCY_TOLERANCE, MAC_THRESHOLD
from flexrobot_ros.identification.modal_data import ModalData
from flexrobot_ros.modal.held_modes import composed_model
from flexrobot_ros.model import FlexibleRobot

#: The estimate has stopped moving when no parameter changes by more than this fraction between linearizations.
RELINEARIZE_TOLERANCE = 1e-6
MAX_RELINEARIZATIONS = 4


def identify_link_parameters(
        robot: FlexibleRobot, data: ModalData, parameters: str | Sequence[str] = "EI", *,
        bounds: Mapping[str, Any] | None = None, starts: int = 1, seed: int = 0, tolerance: float = 1e-12,
        max_evaluations: int = 200, frequency_tolerance: float = FREQUENCY_TOLERANCE,
        mac_threshold: float = MAC_THRESHOLD, frequency_std: float = 0.005, damping_std: float = 0.005,
        drop_unmatched: bool = False, parameters_setting: str = "--params",
        damping_match_tolerance: float | None = None) -> IdentificationResult:
    """Identify the flexible-link parameters of ``robot`` from modal ``data`` (module docstring).

    ``parameters``: :func:`~flexrobot_ros.identification.link_parameters.parse_link_parameters` selection (``EI``,
    ``EI,zeta``, ``EI:link1+link2``); ``bounds`` ``{'EI': (low, high), 'zeta:link3': (low, high)}`` [N m^2 |
    fraction] (defaults :func:`~flexrobot_ros.identification.link_parameters.default_link_bounds`); ``starts``,
    ``seed``, ``tolerance`` (ftol = xtol = gtol), ``max_evaluations`` per start; matching and data uncertainty as in
    :func:`~flexrobot_ros.identification.joint_parameters.identify_joint_parameters`, as are
    ``parameters_setting``, ``damping_match_tolerance`` and a pose's ``motor_friction_damping``. The result's
    ``IdentifiedParameter.joint`` holds the link, ``field`` its YAML field; ``residual`` is 'eigenvalue'.

    Raises :class:`~flexrobot_ros.errors.IdentificationError` for a robot without flexible links, an unknown link or
    kind, under-determined data (eq. 3.32 counting, a single pose), poses of the wrong length, and (without
    ``drop_unmatched``) measured modes matching no model mode.
    """
    started = time.perf_counter()
    unknowns = parse_link_parameters(robot, parameters)
    check_pose_lengths(robot, data)
    check_counting(data, unknowns, parameters_setting)
    lower, upper = resolve_link_bounds(robot, unknowns, bounds)
    nominal = np.array([p.value_in(robot) for p in unknowns])
    matches, data, dropped = matched_data(robot, data, frequency_tolerance, mac_threshold, drop_unmatched,
                                          damping_match_tolerance)
    n_eigenvalues, n_poses = check_counting(data, unknowns, parameters_setting)
    eigenvalues = [np.array([mode.eigenvalue for mode in pose.modes]) for pose in data.poses]
    poses = [pose.q for pose in data.poses]
    friction = [pose.motor_friction_damping for pose in data.poses]
    scale = column_scale(nominal, nominal, upper)

    rng = np.random.default_rng(seed)
    initials = lower + (upper - lower) * rng.random((max(1, starts), len(unknowns)))
    initials[0] = np.clip(nominal, lower, upper)
    at, results = robot, []
    gravity = bool(np.any(composed_model(robot).chain.gravity))
    for _ in range(MAX_RELINEARIZATIONS if gravity else 1):
        problem = LinkEigenvalueResiduals(LinkModel(at, poses, unknowns, friction), eigenvalues, scale)
        solver = LocalSolver(problem, problem, lower, upper, tolerance, max_evaluations)
        results = solver.solve(range(len(initials)), initials)
        minima = cluster_minima(results, lower, upper)
        moved = np.max(np.abs(minima[0].values - np.array([p.value_in(at) for p in unknowns])) / scale)
        at = robot.with_link_parameters(_fields(unknowns, minima[0].values))
        initials = minima[0].values[None, :]
        if moved < RELINEARIZE_TOLERANCE:
            break
    minima = cluster_minima(results, lower, upper)
    estimate, at_bound = snap_to_bounds(minima[0].values, lower, upper)
    identified = robot.with_link_parameters(_fields(unknowns, estimate))

    report = jacobian_report(problem.jacobian(estimate), column_scale(nominal, estimate, upper), unknowns,
                             n_eigenvalues, n_poses)
    frequencies = np.concatenate([[m.frequency_hz for m in pose.modes] for pose in data.poses])
    sensitivity = data_sensitivity(problem, estimate, ~at_bound, frequencies, frequency_std, damping_std)
    comparisons, problems = compare_modes(identified, data, frequency_tolerance, mac_threshold,
                                          damping_match_tolerance)
    table = tuple(IdentifiedParameter(
        name=p.name, kind=p.kind, joint=p.link, unit=p.unit, value=float(estimate[j]), nominal=float(nominal[j]),
        lower=float(lower[j]), upper=float(upper[j]), at_bound=bool(at_bound[j]), std=float(sensitivity.std[j]),
        damping_bias=float(0.01 * sensitivity.damping_bias[j]),
        frequency_bias=float(0.01 * sensitivity.frequency_bias[j]), field=p.field,
        deletion_std=float(sensitivity.deletion_std[j]), carried_by=int(sensitivity.deletion_mode[j]))
        for j, p in enumerate(unknowns))
    warnings = identification_warnings(table, report, minima, problems)
    if dropped:
        warnings.insert(0, f"{len(dropped)} measured mode(s) matching no model mode were left out: "
                        + "; ".join(dropped))
    objective = problem.objective(estimate)
    return IdentificationResult(
        robot=identified, parameters=table, estimate=estimate, objective=objective,
        objective_nominal=problem.objective(nominal), residual="eigenvalue", minimized_objective=objective,
        eigenvalue_rms=float(np.sqrt(objective / problem.n_modes)), minima=minima, starts=tuple(results),
        identifiability=report, sensitivity=sensitivity, comparisons=tuple(comparisons), matches=tuple(matches),
        evaluations=sum(r.evaluations for r in results), jacobians=sum(r.jacobians for r in results),
        wall_time_s=time.perf_counter() - started, warnings=tuple(warnings), source=data.source, workers=1)


def _fields(unknowns: Sequence[Any], values: np.ndarray) -> dict[str, dict[str, float]]:
    fields: dict[str, dict[str, float]] = {}
    for p, value in zip(unknowns, values):
        fields.setdefault(p.link, {})[p.field] = float(value)
    return fields


__all__ = ["identify_link_parameters", "MAX_RELINEARIZATIONS", "RELINEARIZE_TOLERANCE"]
