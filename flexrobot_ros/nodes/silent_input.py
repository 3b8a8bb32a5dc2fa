"""A node warns once when an input topic it needs stays silent after start (issue 23).

``flexrobot bringup hardware`` warned when the OMA node had no encoder samples 15 s after start, ``ros2 launch
flexrobot_ros hardware.launch.py`` said nothing: a wrong ``encoders:=`` remapping or a robot driver that is not
running looked like a quiet robot. The warning now comes from the node itself, on both runtimes and under either
launcher, through :func:`warn_if_silent`; the bring-up waits :data:`SILENT_INPUT_S` for the same samples.
"""
from __future__ import annotations

from typing import Any, Callable

#: Seconds after start at which a node warns that an input it needs has delivered nothing (default).
SILENT_INPUT_S = 15.0


def warn_if_silent(node: Any, topic: str, received: Callable[[], int], hint: str,
                   after_s: float = SILENT_INPUT_S) -> Any:
    """Once, ``after_s`` seconds after this call: log a warning naming ``topic`` if ``received()`` is still 0.

    Args:
        node: the runtime node (its timer and logger are used).
        topic: resolved name of the input topic, for the message.
        received: number of samples received so far.
        hint: what to check, e.g. "is the robot publishing? check the encoders remapping".
        after_s: delay [s] of wall time.

    Returns:
        The one-shot timer (cancelled once it has fired).
    """
    def check() -> None:
        timer.cancel()
        if not received():
            node.logger.warning(f"no samples received on {topic} {after_s:g} s after start ({hint}); still waiting")

    timer = node.create_wall_timer(after_s, check)  # wall seconds, also under use_sim_time (no /clock yet)
    return timer
