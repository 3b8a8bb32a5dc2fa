"""Matching measured modes to model modes at one pose: frequency proximity and, with mode shapes, the MAC.

Measured modes are not matched by index: OMA finds some modes and misses others, and its ordering carries no
model information. At each pose the measured modes are assigned to distinct oscillating model modes by the
Hungarian method (``scipy.optimize.linear_sum_assignment``) on the cost::

    |f_measured - f_model| / f_model  +  (1 - MAC(shape_measured, shape_model))      (MAC term only with shapes)

An assignment is accepted when the relative frequency distance is at most ``frequency_tolerance`` and, with shapes,
the MAC is at least ``mac_threshold``; every other measured mode is *unmatched*. Damping ratios do not take part
in the matching (they are the least reliable OMA output, seed 000 section 3.3.2) unless a ``damping_tolerance`` is
given (the self-calibration's: a lightly damped measured pole is not a 67 %-damped model mode).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from flexrobot_ros.errors import IdentificationError, ModalError
from flexrobot_ros.identification.modal_data import PoseModes, model_shape
from flexrobot_ros.modal import ModalResult
from flexrobot_ros.modal.mac import mac as modal_assurance

#: Default largest accepted relative frequency distance between a measured mode and its model mode.
FREQUENCY_TOLERANCE = 0.3
#: Default smallest accepted MAC when the measured mode has a shape.
MAC_THRESHOLD = 0.5
#: Added to the assignment cost of a pair outside the damping tolerance (larger than any frequency + MAC cost).
IMPLAUSIBLE_COST = 1e6


@dataclass(frozen=True)
class PoseMatch:
    """Measured-to-model mode assignment at pose ``pose`` (index in the modal data).

    Arrays have one entry per measured mode (in the data's order): ``model_mode`` index into the model's modes
    (frequency order) or -1 when unmatched; ``measured_frequency_hz``, ``model_frequency_hz`` [Hz];
    ``measured_damping_ratio``, ``model_damping_ratio`` (fractions); ``frequency_error`` relative,
    (measured - model) / model; ``mac`` in [0, 1] (NaN without a measured shape). ``reasons`` explains each
    unmatched mode ('' when matched).
    """

    pose: int
    model_mode: np.ndarray
    measured_frequency_hz: np.ndarray
    model_frequency_hz: np.ndarray
    measured_damping_ratio: np.ndarray
    model_damping_ratio: np.ndarray
    frequency_error: np.ndarray
    mac: np.ndarray
    reasons: tuple[str, ...]

    @property
    def matched(self) -> np.ndarray:
        """Boolean mask of the measured modes that have a model mode."""
        return self.model_mode >= 0

    def to_dict(self) -> dict:
        """JSON-ready form (NaN MAC as None)."""
        return {
            "pose": self.pose,
            "model_mode": self.model_mode.tolist(),
            "measured_frequency_hz": self.measured_frequency_hz.tolist(),
            "model_frequency_hz": _nan_to_none(self.model_frequency_hz),
            "measured_damping_ratio": self.measured_damping_ratio.tolist(),
            "model_damping_ratio": _nan_to_none(self.model_damping_ratio),
            "frequency_error": _nan_to_none(self.frequency_error),
            "mac": _nan_to_none(self.mac),
            "unmatched": [reason for reason in self.reasons if reason],
        }


def _nan_to_none(values: np.ndarray) -> list:
    return [None if not np.isfinite(v) else float(v) for v in values]


def match_modes(model: ModalResult, measured: PoseModes, pose: int = 0, coordinates: str = "motor",
                frequency_tolerance: float = FREQUENCY_TOLERANCE, mac_threshold: float = MAC_THRESHOLD,
                source: str = "modal data", damping_tolerance: float | None = None) -> PoseMatch:
    """Assign the modes measured at one pose to the model's oscillating modes there (see the module docstring).

    ``damping_tolerance`` (absolute damping ratio, None: off): a pair whose damping ratios differ by more is not
    the same mode (kept out of the assignment, and unmatched when nothing else is left): e.g. a lightly damped
    spurious OMA pole at 157 Hz beside the KR90's 178 Hz, 67 %-damped motor mode.

    Raises :class:`IdentificationError` when a measured shape has the wrong length for ``coordinates``; unmatched
    modes are reported in the result (use :func:`require_matched` to refuse them).
    """
    candidates = np.flatnonzero(~model.overdamped)
    f_model = model.frequencies_hz[candidates]
    f_meas = np.array([m.frequency_hz for m in measured.modes])
    z_meas = np.array([m.damping_ratio for m in measured.modes])
    count = len(measured.modes)
    distance = np.abs(f_meas[:, None] - f_model[None, :]) / f_model[None, :]
    mac = np.full((count, candidates.size), np.nan)
    shapes = model_shape(model, coordinates)[candidates]
    for a, mode in enumerate(measured.modes):
        if mode.shape is None:
            continue
        if mode.shape.shape != (shapes.shape[1],):
            raise IdentificationError(
                f"{source}: poses[{pose}].modes[{a}].shape: expected {shapes.shape[1]} entries "
                f"({coordinates} coordinates), got {mode.shape.shape[0]}")
        try:
            mac[a] = modal_assurance(mode.shape, shapes.T)[0]
        except ModalError as error:
            raise IdentificationError(f"{source}: poses[{pose}].modes[{a}].shape: {error}") from None
    cost = distance + np.where(np.isnan(mac), 0.0, 1.0 - mac)
    damping_gap = np.abs(z_meas[:, None] - model.damping_ratios[candidates][None, :])
    implausible = damping_gap > (np.inf if damping_tolerance is None else damping_tolerance)
    cost = cost + np.where(implausible, IMPLAUSIBLE_COST, 0.0)
    rows, cols = linear_sum_assignment(cost) if candidates.size else (np.array([], int), np.array([], int))
    model_mode = np.full(count, -1)
    reasons = [""] * count
    pair_mac = np.full(count, np.nan)
    for a, b in zip(rows, cols):
        pair_mac[a] = mac[a, b]
        if distance[a, b] > frequency_tolerance:
            reasons[a] = (f"{f_meas[a]:.4g} Hz is {100 * distance[a, b]:.0f} % from the nearest free model mode "
                          f"({f_model[b]:.4g} Hz; tolerance {100 * frequency_tolerance:.0f} %)")
        elif not np.isnan(mac[a, b]) and mac[a, b] < mac_threshold:
            reasons[a] = (f"{f_meas[a]:.4g} Hz: MAC {mac[a, b]:.2f} with the model mode at {f_model[b]:.4g} Hz is "
                          f"below {mac_threshold:.2f}")
        elif implausible[a, b]:
            reasons[a] = (f"{f_meas[a]:.4g} Hz at {100 * z_meas[a]:.3g} % damping: the nearest free model mode "
                          f"({f_model[b]:.4g} Hz) has {100 * model.damping_ratios[candidates[b]]:.3g} % (tolerance "
                          f"{100 * damping_tolerance:.3g} points)")
        else:
            model_mode[a] = candidates[b]
    for a in range(count):
        if a not in rows:
            reasons[a] = (f"{f_meas[a]:.4g} Hz: more measured modes ({count}) than oscillating model modes "
                          f"({candidates.size}) at this pose")
    matched = model_mode >= 0
    index = np.where(matched, model_mode, 0)
    f_pair = np.where(matched, model.frequencies_hz[index], np.nan)
    z_pair = np.where(matched, model.damping_ratios[index], np.nan)
    return PoseMatch(pose=pose, model_mode=model_mode, measured_frequency_hz=f_meas, model_frequency_hz=f_pair,
                     measured_damping_ratio=z_meas, model_damping_ratio=z_pair,
                     frequency_error=(f_meas - f_pair) / f_pair, mac=np.where(matched, pair_mac, np.nan),
                     reasons=tuple(reasons))


def require_matched(matches: list[PoseMatch] | tuple[PoseMatch, ...], source: str = "modal data") -> None:
    """Raise :class:`IdentificationError` listing every unmatched measured mode (pose, mode, reason)."""
    problems = [f"poses[{m.pose}].modes[{a}]: {reason}" for m in matches for a, reason in enumerate(m.reasons)
                if reason]
    if problems:
        raise IdentificationError(
            f"{source}: {len(problems)} measured mode(s) match no mode of the model with its current parameters: "
            + "; ".join(problems) + ". Leave out spurious (e.g. OMA) modes with --drop-unmatched "
            "(drop_unmatched=True) or remove them from the file, check the poses, or widen the tolerance "
            "(--match-tolerance) if the model's parameters are far off.")


__all__ = ["PoseMatch", "match_modes", "require_matched", "FREQUENCY_TOLERANCE", "MAC_THRESHOLD"]
