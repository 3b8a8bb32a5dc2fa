"""The tool/payload of a flexibility YAML (``tool`` section, :class:`~flexrobot_ros.model.schema.ToolSpec`) added to a
pinocchio model: its inertia joins the body of the joint its frame is attached to."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.schema import ToolSpec


def merge_tool(model: pin.Model, tool: ToolSpec, source: str) -> None:
    """Add ``tool``'s mass [kg], CoM [m] and inertia [kg m^2] (about the CoM, in its frame's axes) to the body of
    the joint that carries ``tool.frame`` in ``model`` (in place); ModelError naming ``source`` for an unknown frame."""
    if not model.existFrame(tool.frame):
        raise ModelError(f"{source}: tool.frame: unknown frame {tool.frame!r}")
    frame = model.frames[model.getFrameId(tool.frame)]
    parent = frame.parentJoint if hasattr(frame, "parentJoint") else frame.parent
    inertia = pin.Inertia(tool.mass, np.asarray(tool.com, dtype=float), np.asarray(tool.inertia, dtype=float))
    model.inertias[parent] = model.inertias[parent] + frame.placement.act(inertia)
