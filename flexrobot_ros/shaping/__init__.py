"""Vibration suppression by input shaping tuned to the modes the model predicts along a motion.

Built on :mod:`flexrobot_ros.modal` (dominant modes at poses) and :mod:`flexrobot_ros.dynamics` (shapers, the
time-varying convolution); the feedforward of the shaped reference is :func:`flexrobot_ros.dynamics.feedforward`.
:func:`compare_shapers` reports and recommends a shaper for given modes (``flexrobot shape``).

May import: errors, lazy, model, the physics (dynamics) and modal; never simulation, identification, oma, runtime,
nodes or commands (the shaping node and ``flexrobot shape`` build on it).
"""
from flexrobot_ros.lazy import lazy_package

#: Public names and the submodules they come from (imported on first use: :mod:`flexrobot_ros.lazy`).
_EXPORTS = {**dict.fromkeys(("ScheduledShaping", "shape_reference"), "pose_scheduled"),
            **dict.fromkeys(("CandidateShaper", "ShaperComparison", "compare_shapers"), "shaper_comparison"),
            "plot_sensitivity": "sensitivity_plot"}
lazy_package(__name__, _EXPORTS)
