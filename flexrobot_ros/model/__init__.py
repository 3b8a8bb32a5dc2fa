"""Robot models: a URDF (pinocchio) plus a flexibility YAML make a :class:`FlexibleRobot`.

Every section of the flexibility YAML is parsed and validated here into plain data (joints, tool and gains:
:mod:`.schema`; flexible links: :mod:`.flexible_link_specs`; extra elasticities: :mod:`.elasticities` and the
extended pinocchio model :mod:`.extended_model`). :mod:`.starter_yaml` writes a starter flexibility YAML for any
URDF (``flexrobot init``), by the placeholder rule of :mod:`.placeholder_rule`.

The public names are imported from their submodules on first use (:mod:`flexrobot_ros.lazy`), so that a module
without pinocchio (:mod:`.placeholder_rule`, whose constants ``flexrobot init --help`` prints) loads without it.

May import: errors, lazy and yaml_files only (and pinocchio, numpy); the physics and everything above build on it.
"""
from flexrobot_ros.lazy import lazy_package

#: Public names and the submodules they come from (imported on first use: :mod:`flexrobot_ros.lazy`).
_EXPORTS = {
    **dict.fromkeys(("FlexibleRobot", "Tool"), "flexible_robot"),
    **dict.fromkeys(("RobotListing", "list_shipped_robots", "load_robot", "share_directory", "shipped_robots"),
                    "loader"),
}
lazy_package(__name__, _EXPORTS)
