"""The :class:`Simulation`: a plant, a controller, excitations and sensors, advanced in chunks of output samples.

Outputs are sampled at a fixed ``rate`` [Hz] with exact timestamps ``t_k = k / rate``. Two integration modes:
``"accurate"`` (variable-step ``solve_ivp``, for validation) and ``"fixed"`` (exponential Euler with a lagged
Jacobian, for real-time streaming); see :mod:`flexrobot_ros.simulation.integrators`.

Example (seed 000 section 2.4.3, Scompi case 2 at configuration 8)::

    robot = load_robot("scompi", tool=True)
    controller = PDGravityCompensation.create(robot, q_d)
    sim = Simulation(robot, controller, rate=1000.0, mode="fixed")     # starts at rest at (q_d, q_m^d)
    sim.apply(RectangularPulse("tool0", [0, 50, 0], 0.2, 0.206))
    out = sim.run(3.0)                                                   # 3001 samples, t = 0 .. 3 s
    out.q_m, out.columns()["q_m.joint2"], out.energy().total
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from flexrobot_ros.errors import FlexrobotError, SimulationError
from flexrobot_ros.model import FlexibleRobot
from flexrobot_ros.simulation.excitation import RectangularPulse
from flexrobot_ros.simulation.integrators import (AccurateIntegration, ClosedLoop, Divergence, ExponentialEuler,
                                                  FixedStepIntegration, integrate_accurate)
from flexrobot_ros.simulation.plant import Energy, Plant


def plant_for(robot: FlexibleRobot) -> Plant:
    """The plant that simulates ``robot``: the composed model's
    :class:`~flexrobot_ros.simulation.elastic_robot_plant.ElasticRobotPlant`, for every robot (elastic joints alone
    through its seed-000 evaluation, flexible links, rigid joints, extra elasticities, gear dampers)."""
    from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant

    return ElasticRobotPlant(robot)


MODES = ("fixed", "accurate")


@dataclass(frozen=True)
class SimulationOutput:
    """Samples of a simulation. ``t`` (samples,) [s]; ``states`` (samples, size) in the plant's layout;
    ``tau_m`` (samples, n) motor torques [N m]; ``sensors`` named sensor columns (samples,).

    Properties ``q``, ``qd``, ``q_m``, ``qd_m`` (samples, n) and ``elastic_torque`` (samples, n) [N m] are views or
    cheap derivations; :meth:`energy` evaluates the energy terms per sample.
    """

    t: np.ndarray
    states: np.ndarray
    tau_m: np.ndarray
    sensors: dict[str, np.ndarray]
    plant: Plant = field(repr=False)

    def _block(self, name: str) -> np.ndarray:
        return self.states[:, self.plant.layout[name]]

    @property
    def q(self) -> np.ndarray:
        return self._block("q")

    @property
    def qd(self) -> np.ndarray:
        return self._block("qd")

    @property
    def q_m(self) -> np.ndarray:
        return self._block("q_m")

    @property
    def qd_m(self) -> np.ndarray:
        return self._block("qd_m")

    @property
    def elastic_torque(self) -> np.ndarray:
        return self.plant.elastic_torque(self.q, self.q_m)

    def energy(self) -> Energy:
        """Energy terms (arrays over samples) [J]."""
        terms = [self.plant.energy(x) for x in self.states]
        names = ("kinetic", "elastic", "gravitational", "dissipated", "work_in")
        return Energy(**{name: np.array([getattr(e, name) for e in terms]) for name in names})

    def columns(self, energy: bool = False) -> dict[str, np.ndarray]:
        """Named columns for :func:`flexrobot_ros.timeseries.write_timeseries`: ``q.<joint>``, ``q_m.<joint>``,
        ``qd.<joint>``, ``qd_m.<joint>``, ``tau_m.<joint>``, ``tau_j.<joint>`` (elastic torque), the sensor columns,
        and with ``energy`` the ``energy.<term>`` columns."""
        names = self.plant.joint_names
        columns: dict[str, np.ndarray] = {}
        for label, values in (("q", self.q), ("q_m", self.q_m), ("qd", self.qd), ("qd_m", self.qd_m),
                              ("tau_m", self.tau_m), ("tau_j", self.elastic_torque)):
            columns.update({f"{label}.{name}": values[:, i] for i, name in enumerate(names)})
        columns.update(self.sensors)
        if hasattr(self.plant, "extra_columns"):  # e.g. deflection.<link>.<y|z> of flexible links
            columns.update(self.plant.extra_columns(self.states))
        if energy:
            terms = self.energy()
            for name in ("kinetic", "elastic", "gravitational", "dissipated", "work_in"):
                columns[f"energy.{name}"] = getattr(terms, name)
        return columns

    @staticmethod
    def concatenate(outputs: Sequence["SimulationOutput"]) -> "SimulationOutput":
        """One output from consecutive chunks (same plant and sensors)."""
        if not outputs:
            raise SimulationError("cannot concatenate zero simulation outputs")
        return SimulationOutput(
            t=np.concatenate([o.t for o in outputs]), states=np.concatenate([o.states for o in outputs]),
            tau_m=np.concatenate([o.tau_m for o in outputs]),
            sensors={key: np.concatenate([o.sensors[key] for o in outputs]) for key in outputs[0].sensors},
            plant=outputs[0].plant)


class Simulation:
    """A robot (or any :class:`~flexrobot_ros.simulation.plant.Plant`) under a controller, stepped in chunks.

    ``robot``: a FlexibleRobot (simulated with :func:`plant_for`'s
    :class:`~flexrobot_ros.simulation.elastic_robot_plant.ElasticRobotPlant`) or a plant. ``controller``: see
    :mod:`flexrobot_ros.simulation.controllers`. Initial state: ``q0`` [rad | m] defaults to the controller's set
    point ``q_d``; ``q_m0`` to its ``q_m_d`` or else to the static motor position of ``q0`` (eq. 2.3, springs
    carrying gravity); rates default to zero; ``x0``: a whole initial state in the plant's layout instead (e.g. the
    law's rest state, :func:`~flexrobot_ros.simulation.law_equilibrium.law_equilibrium`). ``rate`` [Hz] output sample
    rate; ``mode`` 'fixed' or 'accurate' with
    options ``fixed``/``accurate``; ``sensors`` sensor models; ``seed`` their noise seed; ``excitations`` initial
    excitations. ``max_speed`` [rad/s | m/s] and ``max_position`` [rad | m] bound the state: beyond them (or on a
    non-finite value) the chunk stops with a :class:`SimulationError` saying where and when, and the simulation
    stays at the chunk's start.
    """

    def __init__(self, robot: FlexibleRobot | Plant, controller: Any, *, q0: Any = None, q_m0: Any = None,
                 qd0: Any = None, qd_m0: Any = None, rate: float = 1000.0, mode: str = "fixed",
                 fixed: FixedStepIntegration | None = None, accurate: AccurateIntegration | None = None,
                 sensors: Iterable[Any] = (), seed: int = 0, excitations: Iterable[Any] = (),
                 max_speed: float = 1.0e3, max_position: float = 1.0e3, x0: Any = None):
        if isinstance(robot, FlexibleRobot):
            self.plant: Plant = plant_for(robot)
        else:
            self.plant = robot
        self.robot: FlexibleRobot = self.plant.robot
        if mode not in MODES:
            raise SimulationError(f"simulation mode {mode!r} unknown; use one of {list(MODES)}")
        rate = float(rate)
        if not (math.isfinite(rate) and rate > 0):
            raise SimulationError(f"output rate must be a finite positive number of Hz, got {rate}")
        self.rate, self.mode = rate, mode
        self.fixed_options = fixed or FixedStepIntegration()
        self.accurate_options = accurate or AccurateIntegration()
        self._stepper = ExponentialEuler(self.fixed_options)
        self.sensors = tuple(sensors)
        self.seed = int(seed)
        layout = self.plant.layout
        bound = np.full(layout.size, np.inf)
        bound[layout["positions"]] = max_position
        bound[layout["velocities"]] = max_speed
        self._bound = bound
        self._excitations: list[tuple[int, Any]] = []
        self.controller = controller
        self._check_controller(controller)
        if x0 is None:
            self._initial = self._initial_state(q0, q_m0, qd0, qd_m0)
        else:
            self._initial = np.array(x0, dtype=float)
            if self._initial.shape != (layout.size,) or not np.all(np.isfinite(self._initial)):
                raise SimulationError(f"robot {self.robot.name}: x0: expected {layout.size} finite values (the "
                                      f"plant's state), got shape {self._initial.shape}")
        for excitation in excitations:
            self.apply(excitation)
        self.reset()

    # ------------------------------------------------------------------ set-up helpers
    def _check_controller(self, controller: Any) -> None:
        n = self.plant.n
        for name in ("kp", "kd"):
            gains = np.asarray(getattr(controller, name, None), dtype=float)
            if gains.shape != (n,) or not np.all(np.isfinite(gains)):
                raise SimulationError(f"controller {type(controller).__name__}: {name} must be {n} finite gains, "
                                      f"got {getattr(controller, name, None)!r}")
        if not callable(getattr(controller, "motor_torque", None)):
            raise SimulationError(f"controller {type(controller).__name__} has no motor_torque(t, q, qd, q_m, qd_m)")

    def _initial_state(self, q0: Any, q_m0: Any, qd0: Any, qd_m0: Any) -> np.ndarray:
        robot, controller = self.robot, self.controller
        if q0 is None:
            if not hasattr(controller, "q_d"):
                raise SimulationError(f"robot {robot.name}: give q0, the initial link positions "
                                      f"({robot.n} values for {list(robot.joint_names)})")
            q0 = controller.q_d
        q0 = robot.check_q(q0, "q0")
        if q_m0 is None:
            if hasattr(controller, "q_m_d") and np.array_equal(q0, getattr(controller, "q_d", None)):
                q_m0 = controller.q_m_d
            elif hasattr(self.plant, "static_motor_position"):
                q_m0 = self.plant.static_motor_position(q0)
            else:
                from flexrobot_ros.modal.linearization import motor_set_point

                q_m0 = motor_set_point(robot, q0)
        return self.plant.state(q0, q_m0, qd0, qd_m0)

    def _loop(self) -> ClosedLoop:
        return ClosedLoop(self.plant, self.controller, self._excitations)

    # ------------------------------------------------------------------ state
    @property
    def t(self) -> float:
        """Current simulation time [s] (= sample index / rate)."""
        return self._sample / self.rate

    @property
    def sample_index(self) -> int:
        return self._sample

    @property
    def state(self) -> np.ndarray:
        """A copy of the current state vector (plant layout)."""
        return self._x.copy()

    @property
    def linearizations(self) -> int:
        """How many times the fixed-step integrator rebuilt its Jacobian exponential."""
        return self._stepper.refreshes

    def energy(self) -> Energy:
        """Energy terms at the current state [J]."""
        return self.plant.energy(self._x)

    def reset(self, q0: Any = None, q_m0: Any = None, qd0: Any = None, qd_m0: Any = None) -> None:
        """Back to t = 0 with zero energy integrals and fresh sensor noise; new initial values replace the
        constructor's when given. Excitations stay scheduled (see :meth:`clear_excitations`)."""
        if any(v is not None for v in (q0, q_m0, qd0, qd_m0)):
            self._initial = self._initial_state(q0, q_m0, qd0, qd_m0)
        self._x = self._initial.copy()
        self._sample = 0
        self._rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(self.seed).spawn(len(self.sensors))]
        self._stepper.invalidate()

    # ------------------------------------------------------------------ commands
    def set_controller(self, controller: Any) -> None:
        """Switch to another controller from the current time on."""
        self._check_controller(controller)
        self.controller = controller
        self._stepper.invalidate()

    def set_point(self, q_d: Any) -> None:
        """New link set point for a set-point controller (one with ``with_set_point``, e.g. PD + compensation)."""
        if not hasattr(self.controller, "with_set_point"):
            raise SimulationError(f"controller {type(self.controller).__name__} has no set point to change")
        self.set_controller(self.controller.with_set_point(q_d))

    def set_gains(self, kp: Any = None, kd: Any = None) -> None:
        """New motor-side PD gains (None keeps a gain) for a controller with ``with_gains``."""
        if not hasattr(self.controller, "with_gains"):
            raise SimulationError(f"controller {type(self.controller).__name__} has no gains to change")
        self.set_controller(self.controller.with_gains(kp, kd))

    def apply(self, excitation: Any) -> None:
        """Schedule an excitation (absolute times; see :mod:`flexrobot_ros.simulation.excitation`)."""
        frame_id = self.plant.frame_id(excitation.frame)
        self._excitations.append((frame_id, excitation))
        self._stepper.invalidate()

    def impact(self, force: Any, frame: str | None = None, duration: float = 0.006, delay: float = 0.0) -> None:
        """A rectangular force (3 values, N) or wrench (6 values) pulse at ``frame`` (default the tool frame),
        starting ``delay`` seconds from now and lasting ``duration`` seconds (default 6 ms as in seed 000)."""
        start = self.t + float(delay)
        self.apply(RectangularPulse(frame or self.robot.tool_frame, force, start, start + float(duration)))

    def clear_excitations(self) -> None:
        """Remove every scheduled excitation."""
        self._excitations.clear()
        self._stepper.invalidate()

    # ------------------------------------------------------------------ stepping
    def observe(self) -> SimulationOutput:
        """The current sample as a one-sample output."""
        return self._output(np.array([self.t]), self._x[None, :].copy(), self._loop())

    def step(self, samples: int) -> SimulationOutput:
        """Advance by ``samples`` output samples; returns them (times ``t + 1/rate .. t + samples/rate``)."""
        if int(samples) != samples or samples < 0:
            raise SimulationError(f"step: samples must be a non-negative integer, got {samples!r}")
        samples = int(samples)
        loop = self._loop()
        first = self._sample
        times = (first + 1 + np.arange(samples)) / self.rate
        if samples == 0:
            return self._output(times, np.empty((0, self.plant.layout.size)), loop)
        try:
            if self.mode == "fixed":
                states, torques = self._stepper.integrate(loop, self._x, first, samples, self.rate, self._check)
            else:
                states = integrate_accurate(loop, self._x, first / self.rate, times, self.accurate_options,
                                            self._check, self._margin)
                torques = None
        except Divergence as stop:
            raise SimulationError(self._divergence_message(stop)) from None
        output = self._output(times, states, loop, torques)
        self._x = states[-1].copy()
        self._sample = first + samples
        return output

    def advance(self, duration: float) -> SimulationOutput:
        """Advance by ``duration`` seconds (rounded to whole samples)."""
        duration = float(duration)
        if not (math.isfinite(duration) and duration >= 0):
            raise SimulationError(f"advance: duration must be a finite number of seconds >= 0, got {duration}")
        return self.step(int(round(duration * self.rate)))

    def run(self, duration: float) -> SimulationOutput:
        """The current sample followed by ``duration`` seconds of samples."""
        first = self.observe()
        return SimulationOutput.concatenate([first, self.advance(duration)])

    # ------------------------------------------------------------------ internals
    def _check(self, t: float, x: np.ndarray) -> None:
        if not (np.abs(x) <= self._bound).all():
            raise Divergence(t, x)

    def _margin(self, x: np.ndarray) -> float:
        """Smallest relative distance to the state bounds (> 0 inside, <= 0 outside or non-finite)."""
        ratio = np.abs(x) / self._bound
        worst = ratio.max()
        return 1.0 - worst if np.isfinite(worst) else -1.0

    def _divergence_message(self, stop: Divergence) -> str:
        layout, x = self.plant.layout, stop.x
        outside = np.flatnonzero(~(np.abs(x) < self._bound))
        bad = int(outside[0]) if outside.size else int(np.argmax(np.abs(x) / self._bound))
        block = next(name for name in layout.slices if name not in ("positions", "velocities")
                     and layout[name].start <= bad < layout[name].stop)  # plants may add blocks (e.g. q_e)
        offset = bad - layout[block].start
        if block in ("q", "q_m", "qd", "qd_m"):
            where = f"{block}[{self.plant.joint_names[offset]}]"
        elif block in ("q_e", "qd_e"):
            where = f"{block}[{self.plant.elastic_names[offset]}]"
        else:
            where = f"{block}[{offset}]"
        message = (f"robot {self.robot.name}: the simulated state left the valid range at t = {stop.t:.6g} s: "
                   f"{where} = {x[bad]:.6g} (bound {self._bound[bad]:g}); stopped, the simulation stays at "
                   f"t = {self.t:.6g} s.")
        if hasattr(self.controller, "q_d"):
            try:
                from flexrobot_ros.modal import modal_analysis

                controller = self.controller
                verdict = modal_analysis(self.robot, controller.q_d, controller.kp, controller.kd).verdict
                message += f" The linearized closed loop at the set point is {verdict} with kp/kd as given."
            except FlexrobotError:
                pass
        return message

    def _output(self, times: np.ndarray, states: np.ndarray, loop: ClosedLoop,
                tau: np.ndarray | None = None) -> SimulationOutput:
        if tau is None:
            tau = np.array([loop.torque(float(t), x) for t, x in zip(times, states)]).reshape(len(times),
                                                                                             self.plant.n)
        sensors: dict[str, np.ndarray] = {}
        for sensor, rng in zip(self.sensors, self._rngs):
            sensors.update(sensor.measure(times, states, loop, rng))
        return SimulationOutput(t=times, states=states, tau_m=tau, sensors=sensors, plant=self.plant)


__all__ = ["MODES", "Simulation", "SimulationOutput"]
