"""What a simulated robot (a *plant*) offers the integrators and the :class:`~flexrobot_ros.simulation.Simulation`.

A plant owns its state vector ``x`` and its layout. Every plant's state holds, in named index ranges:

* ``q`` link-side joint coordinates (n,) [rad | m], ``q_m`` motor positions after the gear (n,) [rad],
* ``qd``, ``qd_m`` their rates,
* any further generalized coordinates a plant needs (flexible-link plants add e.g. ``eta``/``etad``),
* ``dissipated`` [J] and ``work_in`` [J]: the integrals of dissipated power and of input power (motor torques and
  external wrenches), integrated as states so that ``E(t) - E(0) = work_in - dissipated`` can be checked to the
  integrator's tolerance.

Every robot is :class:`flexrobot_ros.simulation.elastic_robot_plant.ElasticRobotPlant` (the flexible-joint robot of
seed 000 eq. 2.1 its fast path), or the flexible-link plant with a longer state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from flexrobot_ros.model import FlexibleRobot

#: One external wrench: (pinocchio frame id, [f_x, f_y, f_z, m_x, m_y, m_z] in N and N m, world axes, acting at
#: the frame's origin).
FrameWrench = tuple[int, np.ndarray]


@dataclass(frozen=True)
class StateLayout:
    """Index ranges of a plant's state vector ``x`` (size ``size``); ``slices`` maps a block name to its range.

    Every plant has the blocks ``q``, ``q_m``, ``qd``, ``qd_m`` (n entries each), ``dissipated`` and ``work_in``
    (one entry each); ``positions``/``velocities`` cover all generalized coordinates and their rates.
    """

    size: int
    slices: dict[str, slice]

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    @property
    def mechanical(self) -> slice:
        """The positions and velocities (everything but the two energy integrals)."""
        return slice(0, self.slices["dissipated"].start)


@dataclass(frozen=True)
class Energy:
    """Energy terms [J], scalars or arrays (samples,).

    ``kinetic`` links + rotors; ``elastic`` joint springs (and link elasticity for flexible-link plants);
    ``gravitational`` potential of the gravity field (pinocchio's convention, zero at the base origin);
    ``dissipated`` viscous and Coulomb friction energy since t = 0; ``work_in`` work of the motor torques and the
    external wrenches since t = 0.
    """

    kinetic: np.ndarray | float
    elastic: np.ndarray | float
    gravitational: np.ndarray | float
    dissipated: np.ndarray | float
    work_in: np.ndarray | float

    @property
    def total(self) -> np.ndarray | float:
        """Mechanical energy E = kinetic + elastic + gravitational [J]."""
        return self.kinetic + self.elastic + self.gravitational

    def balance_residual(self, initial_total: float) -> np.ndarray | float:
        """``E - E(0) - (work_in - dissipated)`` [J]: zero up to integration error."""
        return self.total - initial_total - (self.work_in - self.dissipated)


class Plant(Protocol):
    """The dynamics a simulation integrates: ``xdot = derivative(x, tau_m, wrenches)``.

    ``n`` motors (one per elastic joint); ``joint_names`` (n,); ``layout`` of the state; ``robot`` the model it was
    built from (gear ratios, transmission, tool frame, gravity for the sensors); ``frame_id(name)`` resolves a frame
    for external wrenches and sensors.
    """

    n: int
    joint_names: tuple[str, ...]
    layout: StateLayout
    robot: FlexibleRobot

    def frame_id(self, name: str) -> int:
        """Index of a frame where wrenches can act (raises ModelError for an unknown name)."""
        ...

    def state(self, q: np.ndarray, q_m: np.ndarray, qd: np.ndarray | None = None,
              qd_m: np.ndarray | None = None) -> np.ndarray:
        """A state with the given joint positions/rates, other coordinates at rest and zero energy integrals."""
        ...

    def derivative(self, x: np.ndarray, tau_m: np.ndarray, wrenches: Sequence[FrameWrench]) -> np.ndarray:
        """State derivative (size,) for motor torques ``tau_m`` (n,) [N m] and external wrenches."""
        ...

    def jacobian(self, x: np.ndarray, tau_m: np.ndarray, dtau_dx: np.ndarray,
                 wrenches: Sequence[FrameWrench], coulomb: bool = True) -> np.ndarray:
        """d(derivative)/dx (size, size) of the closed loop whose torque law has state Jacobian ``dtau_dx``
        (n, size); ``coulomb=False`` omits the smoothed Coulomb slopes (given by :meth:`coulomb_damping`)."""
        ...

    def coulomb_damping(self, x: np.ndarray) -> np.ndarray | None:
        """d(accelerations)/d(velocities) of the smoothed Coulomb friction alone (velocities block of the layout),
        or None without Coulomb friction. It changes within a few coulomb_width of zero speed, too fast for a lagged
        Jacobian, so the fixed-step integrator treats it linearly implicitly at every step."""
        ...

    def relinearize_needed(self, x: np.ndarray, x_lin: np.ndarray, h: float, distance: float) -> bool:
        """Whether a Jacobian taken at ``x_lin`` is too stale at ``x`` for fixed steps of ``h`` [s]
        (``distance`` [rad | m]: largest allowed change of a coordinate)."""
        ...

    def energy(self, x: np.ndarray) -> Energy:
        """Energy terms at state ``x`` (scalars)."""
        ...

    def elastic_torque(self, q: np.ndarray, q_m: np.ndarray) -> np.ndarray:
        """Torques transmitted by the joint springs (..., n) [N m] for positions (..., n)."""
        ...

    def frame_acceleration(self, x: np.ndarray, xdot: np.ndarray, frame_id: int) -> np.ndarray:
        """Classical linear acceleration (3,) [m/s^2] of a frame's origin, world axes, given ``xdot``."""
        ...


__all__ = ["Energy", "FrameWrench", "Plant", "StateLayout"]
