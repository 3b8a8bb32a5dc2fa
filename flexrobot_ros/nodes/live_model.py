"""Joint parameters of a node's model as live parameters: the values a calibration pushes while the node runs.

The model nodes (modal monitor, feedforward) load their robot from the read-only ``robot`` parameter (a flexibility
YAML). The parameters ``model.stiffness`` [N m/rad], ``model.link_damping`` [N m s/rad | N s/m] and
``model.motor_damping`` [N m s/rad] (one value per joint in the robot's order; empty: the YAML's) replace those
joint arrays of the loaded robot; the calibration node (:mod:`flexrobot_ros.nodes.calibration_node`) sets them with
a parameter request (``ros2 param set`` works the same), and the change is announced on ``/parameter_events``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from flexrobot_ros.errors import ModelError, RuntimeLayerError
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.runtime import ParameterSpec

#: Live parameter -> FlexibleRobot joint array it replaces.
MODEL_FIELDS = {"model.stiffness": "stiffness", "model.link_damping": "link_damping",
                "model.motor_damping": "motor_damping"}
MODEL_PARAMETERS = (
    ParameterSpec("model.stiffness", [], "joint stiffness K [N m/rad of the motor-side angle], one per joint (empty: "
                  "the YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.link_damping", [], "link-side viscous damping d_f [N m s/rad | N s/m], one per joint (empty: "
                  "the YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.motor_damping", [], "motor-side viscous damping d_fm [N m s/rad], one per joint (empty: the "
                  "YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
)


def live_robot(loaded: FlexibleRobot, values: Mapping[str, Any]) -> FlexibleRobot:
    """``loaded`` (the YAML's robot) with the non-empty ``model.*`` values replacing its joint arrays.

    Raises:
        RuntimeLayerError: a value list is not one per joint, or not a valid value (a stiffness must be > 0).
    """
    arrays = {}
    for name, field in MODEL_FIELDS.items():
        value = values.get(name) or ()
        if not value:
            continue
        if len(value) != loaded.n:
            raise RuntimeLayerError(f"parameter {name!r}: expected {loaded.n} values, one per joint "
                                    f"{list(loaded.joint_names)}, got {len(value)}")
        arrays[field] = np.asarray(value, dtype=float)
    if not arrays:
        return loaded
    try:
        return loaded.with_parameters(**arrays)
    except ModelError as error:
        raise RuntimeLayerError(f"parameters {sorted(MODEL_FIELDS)}: {error}") from error


__all__ = ["MODEL_FIELDS", "MODEL_PARAMETERS", "live_robot"]
