"""The deformed flexible links of a state, for RViz: each link's deformed end frame in its own link frame (tf) and
its deformed beam axis (a line strip), for the plant that carries beams
(:mod:`flexrobot_ros.simulation.elastic_robot_plant`).

Arguments are the chain (:class:`~flexrobot_ros.flexible_links.flexible_chain.FlexibleLinkChain`), the links as
``(URDF link name, body index in the chain)``, the chain's joint coordinates ``q`` (one per body, rad or m) and the
beam coordinates ``eta`` (the chain's eta block: modal amplitudes [m] or nodal deflections/slopes [m, rad]).
A revolute link's frame is its beam's clamped root; a sliding link's frame is the undeformed tip (the prismatic
joint moves it by d).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.kinematics import LinkTransform


def deformed_tip_transforms(chain: FlexibleLinkChain, links: Sequence[tuple[str, int]], q: np.ndarray,
                            eta: np.ndarray) -> tuple[LinkTransform, ...]:
    """tf entries ``<link>`` -> ``<link>/deformed_tip``: each flexible link's deformed end frame (beam axes) in its
    link frame [m, unit quaternion x, y, z, w]."""
    out = []
    for link, i in links:
        body = chain.bodies[i]
        values = eta[body.eta]
        if body.sliding is not None:
            sliding = body.sliding
            tip_w, slopes = sliding.tip_values(values, float(q[i]))
            a, b = slopes[0], (-slopes[1] if sliding.planes == 2 else 0.0)
            Rz = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
            Ry = np.array([[np.cos(b), 0.0, np.sin(b)], [0.0, 1.0, 0.0], [-np.sin(b), 0.0, np.cos(b)]])
            R = sliding.rotation
            tip = pin.SE3(R @ Rz @ Ry @ R.T, R[:, 1:1 + sliding.planes] @ tip_w)
        else:
            tip = body.beam.undeformed_tip() * body.beam.tip_motion(values, np.zeros(body.m))[0]
        out.append(LinkTransform(link, f"{link}/deformed_tip", np.array(tip.translation),
                                 np.array(pin.Quaternion(tip.rotation).coeffs())))
    return tuple(out)


def beam_axes(chain: FlexibleLinkChain, links: Sequence[tuple[str, int]], q: np.ndarray, eta: np.ndarray,
              points: int = 16) -> tuple[tuple[str, Any], ...]:
    """Each flexible link's deformed beam axis ``(link, (points, 3))`` [m] in the link frame, from the root (arc
    length 0) to the tip (length l) at equal steps: ``origin + s e_x + R S(s) eta`` (a sliding link: its free part,
    hub exit to tip)."""
    out = []
    for link, i in links:
        body = chain.bodies[i]
        values = eta[body.eta]
        if body.sliding is not None:
            d = float(q[i])
            out.append((link, body.sliding.axis_points(values, d, points) - d * body.sliding.axis))
        else:
            out.append((link, body.beam.deformed_axis(values, np.linspace(0.0, body.beam.length, points))))
    return tuple(out)


__all__ = ["beam_axes", "deformed_tip_transforms"]
