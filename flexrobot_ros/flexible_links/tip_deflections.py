"""Tip deflections of a robot's flexible links from the chain coordinates: what the simulator writes as
``deflection.<link>.y`` / ``.z`` and the feedforward predicts.

A beam link's tip deflection is ``w = S(l) eta`` (its shape functions at the tip, beam axes y and z of
:mod:`.beam_link`); a beam sliding through a prismatic joint's hub (seed 004) takes its shapes at the free length
``d`` = the joint coordinate (:meth:`.sliding_beam.SlidingBeam.tip_values`). Values in m.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain
from flexrobot_ros.flexible_links.link_specs import link_joints


def deflection_links(robot: Any, chain: FlexibleLinkChain) -> list[tuple[str, int]]:
    """(URDF link name, chain body index) of every flexible link of ``robot`` (a FlexibleRobot), in the order of
    its ``flexible_links`` section."""
    joints = link_joints(robot.model)
    names = [body.name for body in chain.bodies]
    return [(link, names.index(robot.model.names[joints[link]])) for link in robot.flexible_links]


def tip_deflections(chain: FlexibleLinkChain, links: list[tuple[str, int]], q: np.ndarray,
                    eta: np.ndarray) -> np.ndarray:
    """(samples, links, 2) tip deflections w_y, w_z [m] (beam axes; w_z = 0 for a link bending one way) from the
    joint coordinates ``q`` (samples, n) [rad | m] and elastic coordinates ``eta`` (samples, m)."""
    q, eta = np.atleast_2d(q), np.atleast_2d(eta)
    out = np.zeros((len(eta), len(links), 2))
    for k, (_, i) in enumerate(links):
        body = chain.bodies[i]
        rows = eta[:, body.eta]
        if body.sliding is not None:  # the tip shapes follow the free length d = q_i
            for j, (values, d) in enumerate(zip(rows, q[:, i])):
                w = body.sliding.tip_values(values, d)[0]
                out[j, k, :len(w)] = w
        else:
            out[:, k] = rows @ body.beam.tip_deflection[1:].T
    return out


__all__ = ["deflection_links", "tip_deflections"]
