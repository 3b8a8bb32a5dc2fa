"""Joint and flexible-link parameters of a node's model as live parameters: the values a calibration pushes while
the node runs.

The model nodes (modal monitor, feedforward) load their robot from the read-only ``robot`` parameter (a flexibility
YAML). The parameters ``model.stiffness`` [N m/rad], ``model.link_damping`` [N m s/rad | N s/m] and
``model.motor_damping`` [N m s/rad] (one value per joint in the robot's order; empty: the YAML's) replace those
joint arrays of the loaded robot; ``model.link_EI`` [N m^2] and ``model.link_damping_ratio`` (fraction in [0, 1))
replace the flexible links' bending stiffness and modal damping ratio (:meth:`FlexibleRobot.with_link_parameters`):
one value per flexible link in the YAML's ``flexible_links`` order, for the EI of a link bending both ways two (its
``EI.y``, then ``EI.z``; :func:`link_fields`). The calibration node (:mod:`flexrobot_ros.nodes.calibration_node`)
sets them with a parameter request (``ros2 param set`` works the same), and the change is announced on
``/parameter_events``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from flexrobot_ros.errors import ModelError, RuntimeLayerError
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.model.flexible_robot import LINK_FIELDS
from flexrobot_ros.runtime import ParameterSpec

#: Live parameter -> FlexibleRobot joint array it replaces.
MODEL_FIELDS = {"model.stiffness": "stiffness", "model.link_damping": "link_damping",
                "model.motor_damping": "motor_damping"}
#: Live parameter -> kind of flexible-link field it replaces (:func:`link_fields`).
LINK_MODEL_FIELDS = {"model.link_EI": "EI", "model.link_damping_ratio": "damping_ratio"}
MODEL_PARAMETERS = (
    ParameterSpec("model.stiffness", [], "joint stiffness K [N m/rad of the motor-side angle], one per joint (empty: "
                  "the YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.link_damping", [], "link-side viscous damping d_f [N m s/rad | N s/m], one per joint (empty: "
                  "the YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.motor_damping", [], "motor-side viscous damping d_fm [N m s/rad], one per joint (empty: the "
                  "YAML's); set by a calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.link_EI", [], "flexible-link bending stiffness EI [N m^2] > 0, one per flexible link in the "
                  "YAML's flexible_links order (a link bending both ways: EI.y, EI.z) (empty: the YAML's); set by a "
                  "calibration", type="double_array", range=(0.0, 1e15)),
    ParameterSpec("model.link_damping_ratio", [], "flexible-link modal damping ratio (fraction in [0, 1)), one per "
                  "flexible link in the YAML's flexible_links order (empty: the YAML's); set by a calibration",
                  type="double_array", range=(0.0, 1.0)),
)


def link_fields(robot: FlexibleRobot, kind: str) -> list[tuple[str, str]]:
    """``(link, field)`` of the values of live parameter kind ``kind`` ('EI' | 'damping_ratio'), in order: the
    flexible links in the YAML's order; for 'EI' a link bending both ways contributes ``EI.y`` then ``EI.z``."""
    if kind == "damping_ratio":
        return [(link, "damping_ratio") for link in robot.flexible_links]
    return [(link, field) for link, spec in robot.flexible_links.items()
            for field in (("EI",) if spec.EI_z is None else ("EI.y", "EI.z"))]


def model_values(robot: FlexibleRobot, *, joints: bool = True, links: bool = True) -> dict[str, list[float]]:
    """The ``model.*`` values that describe ``robot`` (e.g. a calibrated copy): its joint arrays (``joints``) and,
    for a robot with flexible links, its links' EI and damping ratios (``links``)."""
    values = {name: [float(v) for v in getattr(robot, field)] for name, field in MODEL_FIELDS.items()} \
        if joints else {}
    if links and robot.flexible_links:
        for name, kind in LINK_MODEL_FIELDS.items():
            values[name] = [float(getattr(robot.flexible_links[link], LINK_FIELDS[field]))
                            for link, field in link_fields(robot, kind)]
    return values


def live_robot(loaded: FlexibleRobot, values: Mapping[str, Any]) -> FlexibleRobot:
    """``loaded`` (the YAML's robot) with the non-empty ``model.*`` values replacing its joint arrays and flexible-link
    parameters.

    Raises:
        RuntimeLayerError: naming the parameter: a value list is not one per joint (per flexible link, or bending
            plane), a link value on a robot without flexible links, or an invalid value (a stiffness or EI must be
            > 0, a damping ratio < 1).
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
    robot = loaded
    if arrays:
        try:
            robot = loaded.with_parameters(**arrays)
        except ModelError as error:
            raise RuntimeLayerError(f"parameters {sorted(MODEL_FIELDS)}: {error}") from error
    for name, kind in LINK_MODEL_FIELDS.items():
        value = values.get(name) or ()
        if not value:
            continue
        fields = link_fields(loaded, kind)
        if not fields:
            raise RuntimeLayerError(f"parameter {name!r}: robot {loaded.name} has no flexible links (no "
                                    f"flexible_links section in its flexibility YAML); expected no values, got "
                                    f"{list(value)}")
        if len(value) != len(fields):
            raise RuntimeLayerError(f"parameter {name!r}: expected {len(fields)} values, one per "
                                    f"{[f'{link}.{field}' for link, field in fields]}, got {len(value)}")
        links: dict[str, dict[str, float]] = {}
        for (link, field), v in zip(fields, value):
            links.setdefault(link, {})[field] = float(v)
        try:
            robot = robot.with_link_parameters(links)
        except ModelError as error:
            raise RuntimeLayerError(f"parameter {name!r}: {error}") from error
    return robot


__all__ = ["LINK_MODEL_FIELDS", "MODEL_FIELDS", "MODEL_PARAMETERS", "link_fields", "live_robot", "model_values"]
