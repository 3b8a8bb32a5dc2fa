"""``flexrobot modal`` for robots with extra elasticities (seed 002 eq. 1c): the closed-loop modes of the extended
model (:func:`flexrobot_ros.modal.extended_linearization.extended_modal_analysis`), state [q; q_m;
q_e].

Prints the mode table with each mode's dominant coordinate, or with ``--json`` ``{"frequencies_hz", "damping_ratios",
"coordinates", "dominant", "elastic_equilibrium", ...}``. The options that need the flexible-joint model's 2n-state
result (wrench, participation, undamped, plots) are refused with a message naming them.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from flexrobot_ros.errors import ModalError
from flexrobot_ros.modal.extended_linearization import extended_modal_analysis

UNSUPPORTED = ("wrench", "participation", "undamped", "shapes_plot", "frf_plot", "locked_joints", "link_model",
               "modes", "elements")


def run_extended(args: argparse.Namespace, robot, q: np.ndarray, kp, kd) -> int:
    """Modes of ``robot``'s extended model at link set point ``q`` with motor gains ``kp``, ``kd``."""
    given = [f"--{name.replace('_', '-')}" for name in UNSUPPORTED if getattr(args, name, None) not in (None, False)]
    if given:
        raise ModalError(f"robot {robot.name} has an extended model (extra elasticities "
                         f"{list(robot.extended.elastic_names)}, gear dampers D_g): {', '.join(given)} are not "
                         "available for it yet")
    modes = extended_modal_analysis(robot, q, kp, kd)
    names = modes.linearized.coordinates
    dominant = [names[int(np.argmax(np.abs(modes.mode_shapes[:, k])))] for k in range(modes.frequencies_hz.size)]
    if args.json:
        print(json.dumps({"robot": robot.name, "tool": robot.tool is not None, "model": "extended",
                          "frequencies_hz": modes.frequencies_hz.tolist(),
                          "damping_ratios": modes.damping_ratios.tolist(), "coordinates": list(names),
                          "dominant": dominant, "elastic_equilibrium": modes.linearized.q_e.tolist(),
                          "stable": modes.stable}, indent=2))
        return 0
    print(f"robot {robot.name}{' + tool' if robot.tool else ''} (extended model, {len(names)} coordinates) at "
          f"q = {np.round(q, 6).tolist()}")
    print(f"{'mode':>4} {'f [Hz]':>12} {'zeta [%]':>10}  dominant coordinate")
    for k, (f, zeta) in enumerate(zip(modes.frequencies_hz, modes.damping_ratios)):
        print(f"{k + 1:>4} {f:>12.4f} {100 * zeta:>10.4f}  {dominant[k]}")
    print(f"verdict: {'stable' if modes.stable else 'not stable'}")
    return 0
