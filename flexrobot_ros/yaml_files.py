"""Reading YAML documents with errors that name the file, in the caller's own error type."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from flexrobot_ros.errors import FlexrobotError


def read_yaml(path: str | Path, error: type[FlexrobotError], what: str) -> Any:
    """The YAML document in ``path``; ``error`` (naming the file and ``what`` it should hold) when it cannot be read
    or parsed."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{path}: cannot read {what}: {problem}") from problem
    except yaml.YAMLError as problem:
        raise error(f"{path}: malformed YAML: {problem}") from problem
