"""The package's cache directory: generated C (:mod:`flexrobot_ros.compiled_code`) and the ROS 2 type definitions of
the standalone runtime (:mod:`flexrobot_ros.runtime.messages`). No robot, no physics, no transport."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$FLEXROBOT_CACHE`` or ``~/.cache/flexrobot_ros``."""
    return Path(os.environ.get("FLEXROBOT_CACHE") or Path.home() / ".cache" / "flexrobot_ros")


__all__ = ["cache_dir"]
