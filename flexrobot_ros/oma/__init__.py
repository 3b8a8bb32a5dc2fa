"""Operational modal analysis (OMA): output-only modal identification from encoder signals, batch and online.

The package knows signals, not robots (it never imports ``flexrobot_ros.model``):

- :mod:`.signals` reading (CSV/NPZ, pluggable readers), checks and conditioning of measured signals;
- :mod:`.var` vector autoregressive identification (the thesis' method), :mod:`.ssi_cov` covariance-driven
  stochastic subspace identification; both return poles per model order (:mod:`.poles`);
- :mod:`.stabilization` stabilization diagram and physical-pole filters, :mod:`.selection` automatic mode
  selection by clustering, :mod:`.identify` the batch pipeline;
- :mod:`.tracker` online tracking with mode identities, :mod:`.plots` figures, :mod:`.synthetic` test
  signals with known modes. Identified modes are saved for joint-parameter identification with
  :mod:`flexrobot_ros.identification.modal_data` (the ``flexrobot oma --modal-data`` option).
"""
from __future__ import annotations

from flexrobot_ros.oma.identify import METHODS, OmaResult, identify_modes, parse_orders
from flexrobot_ros.oma.poles import PoleSet, mac, mac_matrix, mpc
from flexrobot_ros.oma.selection import Mode, SelectionOptions, select_modes
from flexrobot_ros.oma.signals import (PreparedSignals, Signals, SignalWarning, prepare, read_signals,
                                       register_reader)
from flexrobot_ros.oma.ssi_cov import ssi_cov_poles
from flexrobot_ros.oma.stabilization import StabilizationCriteria, StabilizationDiagram, stabilization_diagram
from flexrobot_ros.oma.tracker import ModeTracker, TrackedMode, TrackerOptions, TrackerUpdate
from flexrobot_ros.oma.var import var_models, var_poles

__all__ = [
    "METHODS", "OmaResult", "identify_modes", "parse_orders",
    "PoleSet", "mac", "mac_matrix", "mpc",
    "Mode", "SelectionOptions", "select_modes",
    "PreparedSignals", "Signals", "SignalWarning", "prepare", "read_signals", "register_reader",
    "ssi_cov_poles", "StabilizationCriteria", "StabilizationDiagram", "stabilization_diagram",
    "ModeTracker", "TrackedMode", "TrackerOptions", "TrackerUpdate", "var_models", "var_poles",
]
