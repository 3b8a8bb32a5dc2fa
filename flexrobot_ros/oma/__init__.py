"""Operational modal analysis (OMA): output-only modal identification from encoder signals, batch and online.

The package knows signals, not robots (may import: errors, lazy and timeseries; never the model, the physics or
anything above):

- :mod:`.signals` reading (CSV/NPZ, pluggable readers), checks and conditioning of measured signals;
- :mod:`.var` vector autoregressive identification (the thesis' method), :mod:`.ssi_cov` covariance-driven
  stochastic subspace identification; both return poles per model order (:mod:`.poles`);
- :mod:`.stabilization` stabilization diagram and physical-pole filters, :mod:`.selection` automatic mode
  selection by clustering, :mod:`.identify` the batch pipeline;
- :mod:`.onset` the onset of a blow in a record (where a free-decay record for OMA starts);
- :mod:`.tracker` online tracking with mode identities, :mod:`.plots` figures, :mod:`.synthetic` test
  signals with known modes. Identified modes are saved for joint-parameter identification with
  :mod:`flexrobot_ros.identification.modal_data` (the ``flexrobot oma --modal-data`` option).
"""
from __future__ import annotations

from flexrobot_ros.lazy import lazy_package

#: Public names and the submodules they come from (imported on first use: :mod:`flexrobot_ros.lazy`).
_EXPORTS = {
    **dict.fromkeys(("METHODS", "OmaResult", "identify_modes", "parse_orders"), "identify"),
    **dict.fromkeys(("PoleSet", "mac", "mac_matrix", "mpc"), "poles"),
    **dict.fromkeys(("Mode", "SelectionOptions", "select_modes"), "selection"),
    **dict.fromkeys(("PreparedSignals", "Signals", "SignalWarning", "prepare", "read_signals", "register_reader"),
                    "signals"),
    "ssi_cov_poles": "ssi_cov",
    **dict.fromkeys(("StabilizationCriteria", "StabilizationDiagram", "stabilization_diagram"), "stabilization"),
    **dict.fromkeys(("ModeTracker", "TrackedMode", "TrackerOptions", "TrackerUpdate"), "tracker"),
    **dict.fromkeys(("var_models", "var_poles"), "var"),
}
lazy_package(__name__, _EXPORTS)
