"""A serial chain of rigid and flexible links, or a kinematic tree of rigid links (the model), and its kinematic
pass (seed 003 section 4.1).

Topology. Body i's parent is body ``parents[i]`` (pinocchio's ``model.parents``, -1 for the base); pinocchio's
joint order is topological, so the outward pass meets every parent before its children and the inward passes
(:mod:`.inverse_dynamics`, :mod:`.inertia_matrix`, :mod:`.denoc`) every child before its parent, summing the
children's terms into the parent. "i-1" below is body i's parent. Flexible links (beams, sliding beams) need a serial
chain: on a tree the constructor refuses them (the loader already has, naming the YAML,
:func:`flexrobot_ros.model.flexible_robot.build_robot`).

Coordinates. ``y = [theta (n), eta (m)]``: the n joint coordinates in pinocchio's joint order, then the elastic
coordinates of the flexible links, link after link (each link's ``[eta_y, eta_z]``, see :mod:`.beam_link`).

Bodies. Body i is pinocchio's joint i with the link it carries, its frame B_i the joint frame. A rigid body has
pinocchio's spatial inertia. A flexible body has a :class:`~.beam_link.BeamLink` (beam, tip mass) plus an optional
rigid hub inertia. The child of a flexible link is attached to the link's *deformed* tip frame: its joint placement
is taken relative to the undeformed tip, and the tip moves with the beam (seed 003 eqs. 10-11, corrected).

Twist propagation (seed 003 eq. 7, body frames, pinocchio's [linear; angular] order). With t_i = [V_i; eta_dot_i]
and q_i = [theta_i; eta_i]::

    t_i = A_{i,i-1} t_{i-1} + P_i q_dot_i,   A_{i,i-1} = [[X_i, X_i^C G_{i-1}], [0, 0]],  P_i = [[s_i, 0], [0, 1]]

X_i maps the parent body's twist to body i, G_{i-1} (6 x m_{i-1}) the parent's elastic rates to the twist of its
tip (zero columns for a rigid parent), s_i the joint's motion subspace. The time derivative adds the bias
accelerations c_i = V_i x (s_i theta_dot_i) + X_i^C (G_dot eta_dot + V_C x (G eta_dot)), so that
t_dot_i = A_{i,i-1} t_dot_{i-1} + P_i q_ddot_i + [c_i; 0] (seed 003 eq. 30 with the erratum qdot -> qddot).
Gravity enters as the base acceleration -g (Walker and Orin).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.flexible_links.beam_link import BeamLink, cross
from flexrobot_ros.flexible_links.sliding_beam import SlidingBeam
from flexrobot_ros.model.topology import first_branch


def motion_subspace(model: pin.Model, joint_id: int, data: pin.Data | None = None) -> np.ndarray:
    """Motion subspace s (6,) of a 1-DoF joint in its own frame ([linear; angular]), from pinocchio's LOCAL joint
    Jacobian at q = 0 (works on pinocchio 2.7 and 3.x)."""
    data = model.createData() if data is None else data
    jacobian = pin.computeJointJacobian(model, data, pin.neutral(model), joint_id)
    return np.asarray(jacobian, dtype=float).reshape(6, -1)[:, model.joints[joint_id].idx_v].copy()


def motion_cross(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spatial motion cross product v x w, [linear; angular] order."""
    return np.concatenate([cross(v[3:], w[:3]) + cross(v[:3], w[3:]), cross(v[3:], w[3:])])


def force_cross(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Spatial force cross product v x* f, [linear; angular] order."""
    return np.concatenate([cross(v[3:], f[:3]), cross(v[:3], f[:3]) + cross(v[3:], f[3:])])


@dataclass
class ChainBody:
    """One body of the chain (see the module docstring)."""

    name: str
    joint_type: str
    motion_subspace: np.ndarray           # s_i (6,)
    placement: pin.SE3                    # joint placement in the parent body frame (rigid parent) or relative
    #                                       to the parent's undeformed tip frame (flexible parent)
    rigid_inertia: pin.Inertia            # pinocchio inertia (rigid link) or hub (flexible link) in B_i
    beam: BeamLink | None
    eta: slice                            # this body's elastic coordinates in eta
    parent_flexible: bool = False
    sliding: SlidingBeam | None = None    # a beam sliding through the hub of this prismatic joint (seed 004)

    @property
    def m(self) -> int:
        return self.sliding.m if self.sliding is not None else 0 if self.beam is None else self.beam.m


@dataclass
class ChainState:
    """Per-body quantities of one kinematic pass (lists indexed by body)."""

    A: list[np.ndarray]                   # A_{i,i-1} (6 + m_i, 6 + m_{i-1}), i-1 the parent; a body on the base:
    #                                       (6 + m_i, 6)
    t: list[np.ndarray]                   # twists (6 + m_i,)
    c: list[np.ndarray]                   # bias accelerations (6 + m_i,)
    M: list[np.ndarray]                   # body inertia (6 + m_i, 6 + m_i)
    gamma: list[np.ndarray]               # velocity-dependent generalized forces incl. strain and damping
    placements: list[pin.SE3]             # oM_i, world placement of B_i
    base_acceleration: np.ndarray         # [-g; 0] (6,)
    eta: list[np.ndarray] = field(default_factory=list)


class FlexibleLinkChain:
    """A serial chain or a tree (module docstring): pinocchio's kinematics and rigid inertias, plus beams on some links
    of a chain."""

    def __init__(self, model: pin.Model, beams: dict[str, BeamLink], gravity: np.ndarray | None = None,
                 hubs: dict[str, pin.Inertia] | None = None, sliding: dict[str, SlidingBeam] | None = None):
        branch = first_branch(model)
        if branch is not None and (beams or sliding):
            link = sorted({*beams, *(sliding or {})})[0]
            raise ModelError(f"flexible-link dynamics: the flexible link of joint {link} needs a serial chain; model "
                             f"{model.name!r} is a tree ({branch})")
        if model.nq != model.nv:
            raise ModelError("flexible-link dynamics: only 1-DoF revolute/prismatic joints are supported")
        self.model = model
        self.gravity = np.asarray(model.gravity.linear if gravity is None else gravity, dtype=float).copy()
        hubs = hubs or {}
        self.bodies: list[ChainBody] = []
        #: body i's parent body (-1: the base), pinocchio's model.parents shifted by one
        self.parents = tuple(int(model.parents[j]) - 1 for j in range(1, model.njoints))
        offset = 0
        joint_data = model.createData()
        for j in range(1, model.njoints):
            name = model.names[j]
            parent_body = self.bodies[self.parents[j - 1]] if self.parents[j - 1] >= 0 else None
            previous_beam = None if parent_body is None else parent_body.beam
            unknown = set(beams) - set(model.names[1:])
            if unknown:
                raise ModelError(f"flexible-link dynamics: beams on unknown joint(s) {sorted(unknown)}")
            subspace = motion_subspace(model, j, joint_data)
            kind = "prismatic" if np.linalg.norm(subspace[3:]) < 1e-12 else "revolute"
            beam = beams.get(name)
            slider = (sliding or {}).get(name)
            if parent_body is not None and parent_body.sliding is not None:
                raise ModelError(f"flexible-link dynamics: joint {name} follows the sliding link of joint "
                                 f"{parent_body.name}; a sliding beam must be the last link")
            if slider is not None and kind != "prismatic":
                raise ModelError(f"flexible-link dynamics: a sliding beam needs a prismatic joint; {name} is {kind}")
            m = slider.m if slider is not None else 0 if beam is None else beam.m
            placement = model.jointPlacements[j]
            if previous_beam is not None:
                placement = previous_beam.undeformed_tip().inverse() * placement
            # a flexible link's inertia is its beam's (plus hub); a sliding beam replaces the link's (and a tool's)
            rigid = hubs.get(name, pin.Inertia.Zero()) if beam is not None else \
                pin.Inertia.Zero() if slider is not None else model.inertias[j]
            self.bodies.append(ChainBody(name, kind, subspace, placement, rigid, beam, slice(offset, offset + m),
                                         previous_beam is not None, slider))
            offset += m
        self.n = len(self.bodies)
        self.m = offset
        self.size = self.n + self.m
        self.joint_names = tuple(b.name for b in self.bodies)
        self.sliding = tuple(b for b in self.bodies if b.sliding is not None)

    # ------------------------------------------------------------------ coordinates
    def check_free_lengths(self, theta: np.ndarray) -> None:
        """Raise ModelError unless every sliding beam's free length (its joint coordinate) lies in (0, l0] [m]."""
        for i, body in enumerate(self.bodies):
            if body.sliding is not None and not 0.0 < theta[i] <= body.sliding.length:
                k = self.model.joints[i + 1].idx_q
                raise ModelError(f"{body.name} = {theta[i]:g} m: the sliding link {body.sliding.link}'s free length "
                                 f"must lie in (0, {body.sliding.length:g}] m (joint limits "
                                 f"[{self.model.lowerPositionLimit[k]:g}, {self.model.upperPositionLimit[k]:g}] m)")

    def split(self, y: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """(theta (n,), [eta_i]) of a coordinate vector y (size,)."""
        y = np.asarray(y, dtype=float)
        theta, eta = y[:self.n], y[self.n:]
        return theta, [eta[b.eta] for b in self.bodies]

    def block_indices(self, i: int) -> np.ndarray:
        """Indices in y of body i's q_i = [theta_i; eta_i]."""
        body = self.bodies[i]
        return np.concatenate([[i], self.n + np.arange(body.eta.start, body.eta.stop)]).astype(int)

    # ------------------------------------------------------------------ kinematic pass
    def propagate(self, y: np.ndarray, y_dot: np.ndarray, with_dynamics: bool = True) -> ChainState:
        """Outward pass: A_{i,i-1}, twists, bias accelerations, and (``with_dynamics``) body inertias and gamma."""
        if self.sliding:
            raise ModelError(f"flexible-link dynamics: the recursive pass does not model the sliding beam of joint "
                             f"{self.sliding[0].name}; use the Lagrangian (flexible_links.lagrangian)")
        theta, etas = self.split(y)
        theta_dot, eta_dots = self.split(y_dot)
        A, T, C, M, Gm, P = [], [], [], [], [], []
        for i, body in enumerate(self.bodies):
            k = self.parents[i]
            parent = None if k < 0 else self.bodies[k]
            parent_twist = np.zeros(6) if k < 0 else T[k]
            parent_placement = pin.SE3.Identity() if k < 0 else P[k]
            m_prev = 0 if parent is None else parent.m
            joint = pin.exp6(pin.Motion(body.motion_subspace * theta[i]))
            bias = np.zeros(6)
            if parent is not None and parent.beam is not None:
                beam = parent.beam
                D, G_tip, bias_tip = beam.tip_motion(etas[k], eta_dots[k])
                attach = beam.undeformed_tip() * D * body.placement              # C in the parent body frame
                to_c = body.placement.inverse().toActionMatrix()                    # D frame -> C frame
                G_c = to_c @ G_tip
                v_c = attach.inverse().toActionMatrix() @ parent_twist[:6]
                rel = G_c @ eta_dots[k]
                bias_c = to_c @ bias_tip + motion_cross(v_c + rel, rel)
            else:
                attach = body.placement
                G_c = np.zeros((6, m_prev))
                bias_c = np.zeros(6)
            local = attach * joint                                                  # B_i in the parent frame
            to_i = joint.inverse().toActionMatrix()
            X = local.inverse().toActionMatrix()
            A_i = np.zeros((6 + body.m, 6 + m_prev))
            A_i[:6, :6] = X
            if m_prev:
                A_i[:6, 6:] = to_i @ G_c
            twist = A_i @ parent_twist if parent is not None else np.zeros(6 + body.m)
            s_dot = body.motion_subspace * theta_dot[i]
            twist[:6] += s_dot
            twist[6:] = eta_dots[i]
            bias = to_i @ bias_c + motion_cross(twist[:6], s_dot)
            c = np.zeros(6 + body.m)
            c[:6] = bias
            placement = parent_placement * local
            A.append(A_i)
            T.append(twist)
            C.append(c)
            P.append(placement)
            if with_dynamics:
                Mi, gi = self.body_dynamics(body, twist, etas[i], eta_dots[i])
                M.append(Mi)
                Gm.append(gi)
        base = np.concatenate([-self.gravity, np.zeros(3)])
        return ChainState(A, T, C, M, Gm, P, base, etas)

    @staticmethod
    def body_dynamics(body: ChainBody, twist: np.ndarray, eta: np.ndarray,
                      eta_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M_i, gamma_i): generalized inertia and velocity terms of one body (seed 003 eqs. 23-24b, corrected)."""
        rigid = body.rigid_inertia.matrix()
        v = twist[:6]
        rigid_bias = force_cross(v, rigid @ v)
        if body.beam is None:
            return rigid, rigid_bias
        M, c, J, G = body.beam.inertia(eta)
        gamma = body.beam.velocity_terms(v[:3], v[3:], eta, eta_dot, c, J, G)
        M[:6, :6] += rigid
        gamma[:6] += rigid_bias
        return M, gamma

    # ------------------------------------------------------------------ energy
    def energy(self, y: np.ndarray, y_dot: np.ndarray) -> tuple[float, float, float]:
        """(kinetic, strain, gravitational) energy [J]; gravity potential -m g . p_com, zero at the base origin."""
        state = self.propagate(y, y_dot, with_dynamics=True)
        kinetic = sum(0.5 * float(t @ M @ t) for t, M in zip(state.t, state.M))
        strain = sum(b.beam.strain_energy(e) for b, e in zip(self.bodies, state.eta) if b.beam is not None)
        potential = 0.0
        for body, placement, eta in zip(self.bodies, state.placements, state.eta):
            first = body.rigid_inertia.mass * body.rigid_inertia.lever
            if body.beam is not None:
                first = first + body.beam.c0 + body.beam.a_psi @ eta
            potential -= float(self.gravity @ (placement.rotation @ first + self._mass(body) * placement.translation))
        return kinetic, strain, potential

    @staticmethod
    def _mass(body: ChainBody) -> float:
        return body.rigid_inertia.mass + (0.0 if body.beam is None else body.beam.mass)

    def tip_placement(self, y: np.ndarray, i: int) -> pin.SE3:
        """World placement of body i's deformed tip frame (beam axes), or of B_i for a rigid body."""
        state = self.propagate(y, np.zeros(self.size), with_dynamics=False)
        body = self.bodies[i]
        if body.beam is None:
            return state.placements[i]
        D = body.beam.tip_motion(state.eta[i], np.zeros(body.m))[0]
        return state.placements[i] * body.beam.undeformed_tip() * D


__all__ = ["ChainBody", "ChainState", "FlexibleLinkChain", "force_cross", "motion_cross", "motion_subspace"]
