"""modal_monitor_node: the closed loop's natural frequencies, damping and mode shapes at the robot's current pose.

Subscribes ``joint_states`` (sensor_msgs/JointState, link side; other joints in the message are ignored), or with
``state_input: dynamic_joint_states`` ros2_control's ``dynamic_joint_states`` (control_msgs/DynamicJointState: the
link position is the state interface ``dynamic_joint_states.link_interface``, default ``position``; joints mapped by
name; :mod:`flexrobot_ros.nodes.state_input`), with the state streams' QoS (reliable, keep-last 10,000: every
sample is received and counted, the newest pose is the one used). When the
pose has moved more than ``threshold`` [rad | m] in any joint since the last computation (and at most
``max_rate_hz`` times per second) it runs :func:`flexrobot_ros.modal.modal_analysis` (the one linearization of
any robot, as ``flexrobot modal``; seed 000 eqs. 2.13-2.18 for elastic joints on rigid links: PD gains ``kp``/``kd``,
gravity, the tool) and publishes, latched, and again every 1/``publish_rate_hz`` s (0: only
on change) so that late subscribers (latched) and volatile ones (``ros2 topic echo``, rqt_plot, PlotJuggler,
launch_testing's WaitForTopics) get the current modes while the robot holds still:

- ``modal/frequencies`` (std_msgs/Float64MultiArray, undamped natural frequencies [Hz], ascending),
- ``modal/damping`` (std_msgs/Float64MultiArray, damping ratios as fractions, 0.02 = 2 % - the CLI prints %, same
  order),
- ``modal/mode_shapes`` (Float64MultiArray (modes, 2n, 2): complex shapes in state order [q; q_m], real and
  imaginary parts, labelled dimensions ``mode``, ``coordinate:q.<joint>,...,q_m.<joint>``, ``part:re,im``),
- ``modal/markers`` (visualization_msgs/MarkerArray: the arm's skeleton and its first ``markers.modes`` link-side
  mode shapes, largest joint deflection ``markers.deflection`` [rad | m], in ``markers.frame``),
- ``diagnostics``: stability verdict (OK stable, WARN marginal, ERROR unstable), lowest damping ratio, pose samples
  received.

``controller: decoupling`` (flexible links, rigid joints) analyses instead the closed loop of seed 004's decoupling law
(:func:`flexrobot_ros.modal.elastic_robot_linearization.linearize_decoupled`, gains ``decoupling.gp``/``gv``): as the
arm moves the node streams the closed-loop frequencies of its Figs. 9-10 (the joint loop's poles at sqrt(G_p) and the
beams' modes, which follow the pose, e.g. a sliding link's length). They are computed at the current pose at rest:
along seed 004's section 5 motion they are within 5 % of the eigenvalues of the moving, deflected closed loop
(``flexrobot modal --controller decoupling --trajectory``).

The mode shapes run over the linearization's coordinates (:func:`flexrobot_ros.modal.modal_coordinates`):
``q.<joint>`` then ``q_m.<joint>`` for elastic joints on rigid links, and ``q.<joint>``, ``q_e.<name>``, ``eta.<k>``,
``q_m.<elastic joint>`` for the robots with extra elasticities, gear dampers, flexible links or rigid joints.

Service ``~/map`` (std_srvs/Trigger): a modal map over a ``map.points`` x ``map.points`` grid of the joints
``map.joints`` within +-``map.span`` of the current pose, written to ``map.directory`` (which must lie inside the
read-only ``output_directory``) as an ``.npz``
(:func:`flexrobot_ros.modal.maps.save_map` format) and a PNG of mode ``map.mode``; the response names both files.

Parameters are live (new gains, and new joint parameters ``model.stiffness``, ``model.link_damping``,
``model.motor_damping`` and flexible-link parameters ``model.link_EI``, ``model.link_damping_ratio`` from a
calibration (:mod:`flexrobot_ros.nodes.live_model`), recompute the modes, marker settings redraw them, rates re-create
their timers;
:meth:`ModalMonitorNode._prepare`) except the model, ``robot``, ``tool`` and the state input (read-only).
"""
from __future__ import annotations

import datetime
from typing import Any

import numpy as np

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.kinematics import chain_links, frame_origins
from flexrobot_ros.modal import modal_analysis, modal_coordinates
from flexrobot_ros.modal.held_modes import composed_model, has_link_layer
from flexrobot_ros.modal.maps import grid_map, save_map
from flexrobot_ros.modal.plots import plot_grid
from flexrobot_ros.model.schema import gains as joint_gains
from flexrobot_ros.nodes.convert import (Counted, diagnostics, float_array, interface_values, joint_values,
                                         mode_markers, mode_shapes_array, ordered_stamp, reporting)
from flexrobot_ros.nodes.live_parameters import LiveParameters, LiveTimer, changed_any, checked
from flexrobot_ros.nodes.live_model import MODEL_PARAMETERS, live_robot
from flexrobot_ros.nodes.output_files import output_path
from flexrobot_ros.nodes.state_input import state_input_parameters
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.nodes.run_parameters import RunParameters
from flexrobot_ros.runtime import QOS_LATCHED, QOS_STREAM, ParameterSpec, run_node

PARAMETERS = (
    ParameterSpec("robot", "scompi", "shipped robot name or path of a flexibility YAML", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("kp", [], "motor PD stiffness [N m/rad]: empty for the YAML's, one value or n values",
                  type="double_array", range=(0.0, 1e9)),
    ParameterSpec("kd", [], "motor PD damping [N m s/rad]: empty for the YAML's, one value or n values",
                  type="double_array", range=(0.0, 1e9)),
    ParameterSpec("controller", "pd", "closed loop analysed: 'pd' (PD + gravity compensation with kp/kd, seed 000) or "
                  "'decoupling' (seed 004's decoupling law with decoupling.gp/gv: the joint loop's poles and the "
                  "beams' closed-loop modes, its Figs. 9-10 along the motion; flexible links, rigid joints)",
                  choices=("pd", "decoupling")),
    ParameterSpec("decoupling.gp", [], "decoupling law's position gains G_p [1/s^2]: empty for 400, one value or n "
                  "values", type="double_array", range=(0.0, 1e9)),
    ParameterSpec("decoupling.gv", [], "decoupling law's velocity gains G_v [1/s]: empty for 40, one value or n values",
                  type="double_array", range=(0.0, 1e9)),
    ParameterSpec("threshold", 0.01, "recompute when a joint moved more than this [rad | m]", range=(0.0, 10.0)),
    ParameterSpec("max_rate_hz", 10.0, "most recomputations per second [Hz]", range=(0.01, 1000.0)),
    ParameterSpec("publish_rate_hz", 2.0, "also republish the current modes and markers at this rate [Hz] for "
                  "volatile and late subscribers (0: only when they change)", range=(0.0, 100.0)),
    ParameterSpec("markers.frame", "base_link", "frame_id of the mode-shape markers"),
    ParameterSpec("markers.modes", 3, "how many modes (lowest first) to draw", range=(0, 100)),
    ParameterSpec("markers.deflection", 0.2, "largest joint deflection drawn [rad | m]", range=(0.0, 10.0)),
    ParameterSpec("map.joints", [], "the two joints of the ~/map grid (empty: the first two joints)",
                  type="string_array"),
    ParameterSpec("map.span", 0.3, "half width of the ~/map grid around the current pose [rad | m]",
                  range=(1e-6, 10.0)),
    ParameterSpec("map.points", 11, "grid points per joint of ~/map", range=(2, 1000)),
    ParameterSpec("map.mode", 0, "mode plotted by ~/map (0: lowest)", range=(0, 1000)),
    ParameterSpec("output_directory", "", "the only folder ~/map writes into (empty: $ROS_HOME/flexrobot/<launch "
                  "date-time>_<launcher PID>)", read_only=True),
    ParameterSpec("map.directory", ".", "where ~/map writes its files (inside output_directory)"),
    *state_input_parameters("joint_states", motor=False),
    *MODEL_PARAMETERS,
)


class ModalMonitorNode:
    """The modal monitor node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.loaded = load_node_robot(node, p)
        self.robot = live_robot(self.loaded, p)  # the YAML's joint parameters, or calibrated ones (model.*)
        self.chain = composed_model(self.robot).chain if has_link_layer(self.robot) else None  # decoupling check
        self.links = chain_links(self.robot)
        self.pose, self.stamp, self.computed, self.result = None, None, None, None
        self.computations, self.republished, self.samples = 0, 0, 0  # samples: pose messages received
        self.published: list[tuple[Counted, Any]] = []  # (publisher, message) of the current modes
        self.coordinates = modal_coordinates(self.robot)
        # rows of the joints in a mode shape
        self.joint_rows = np.array([self.coordinates.index(f"q.{joint}") for joint in self.robot.joint_names])
        self.kp, self.kd, self.decoupling = self._settings(p)
        types = node.types
        array_type = types.std_msgs.msg.Float64MultiArray
        self.frequencies = Counted(node.create_publisher(array_type, "modal/frequencies", QOS_LATCHED))
        self.damping = Counted(node.create_publisher(array_type, "modal/damping", QOS_LATCHED))
        self.shapes = Counted(node.create_publisher(array_type, "modal/mode_shapes", QOS_LATCHED))
        self.markers = Counted(node.create_publisher(types.visualization_msgs.msg.MarkerArray, "modal/markers",
                                                     QOS_LATCHED))
        self.diagnostics = node.create_publisher(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics")
        locked = live.locked  # callbacks and parameter changes take turns
        self.topic = p["state_input"]  # joint_states or dynamic_joint_states
        self.input_topic = node.resolve_name(self.topic)  # after remapping: what the messages name
        if self.topic == "dynamic_joint_states":
            node.create_subscription(types.control_msgs.msg.DynamicJointState, self.topic,
                                     locked(self.on_dynamic_joint_states), QOS_STREAM)
        else:
            node.create_subscription(types.sensor_msgs.msg.JointState, self.topic, locked(self.on_joint_states),
                                     QOS_STREAM)
        node.create_service(types.std_srvs.srv.Trigger, "~/map", locked(self.on_map))
        self.computing = LiveTimer(node, 1.0 / p["max_rate_hz"], locked(self.on_timer))
        self.republishing = LiveTimer(node, self._republish_period(p), locked(self.on_republish))
        node.create_wall_timer(1.0, locked(self.on_diagnostics))
        live.on_change(self._prepare)
        self.run_parameters = RunParameters(node, self.robot, check=True)  # latched on /flexrobot/bringup_parameters
        node.logger.info(f"modes of {self.robot.name}{' + tool' if p['tool'] else ''} on "
                         f"{self.input_topic}: threshold {p['threshold']:g}, at most "
                         f"{p['max_rate_hz']:g} Hz")

    def on_joint_states(self, msg: Any) -> None:
        with reporting(self.node, "joint_states"):
            self.stamp = ordered_stamp(msg, self.stamp, lambda *_: None)  # a restarted stream: take its poses
            self.pose = joint_values(msg, self.robot.joint_names)
            self.samples += 1

    def on_dynamic_joint_states(self, msg: Any) -> None:
        with reporting(self.node, "dynamic_joint_states"):
            pose = interface_values(msg, self.robot.joint_names, self.p["dynamic_joint_states.link_interface"])
            self.stamp = ordered_stamp(msg, self.stamp, lambda *_: None)
            self.pose = pose
            self.samples += 1

    def on_timer(self) -> None:
        pose = self.pose
        if pose is None or (self.computed is not None and np.abs(pose - self.computed).max() <= self.p["threshold"]):
            return
        self.result = modal_analysis(self.robot, pose, self.kp, self.kd, decoupling=self.decoupling)
        self.computed = pose
        self.computations += 1
        self._publish(self.result)

    def on_republish(self) -> None:
        """The current modes and markers once more (markers re-stamped), for subscribers that missed them."""
        if not self.published:
            return
        stamp = self.node.stamp()
        for publisher, msg in self.published:
            for marker in getattr(msg, "markers", ()):
                marker.header.stamp = stamp
            publisher.publish(msg)  # counted: the diagnostics' publication counts are every message sent
        self.republished += 1

    def on_map(self, request: Any, response: Any) -> Any:
        if self.computed is None:
            response.success, response.message = False, f"no pose received on {self.input_topic} yet"
            return response
        p, names = self.p, self.robot.joint_names
        joints = tuple(p["map.joints"]) or names[:2]
        axes = [np.clip(self.computed[self.robot.joint_index(j)] + np.linspace(-p["map.span"], p["map.span"],
                                                                              p["map.points"]),
                        self.robot.lower_limits[self.robot.joint_index(j)],
                        self.robot.upper_limits[self.robot.joint_index(j)]) for j in joints]
        result = grid_map(self.robot, self.computed, joints, axes[0], axes[1], kp=self.kp, kd=self.kd)
        try:
            folder = output_path(p["output_directory"], p["map.directory"], "map.directory")
        except RuntimeLayerError as error:
            response.success, response.message = False, str(error)
            return response
        folder.mkdir(parents=True, exist_ok=True)
        base = folder / f"modal_map_{datetime.datetime.now():%Y%m%d_%H%M%S_%f}"
        npz = save_map(base.with_suffix(".npz"), result)
        png = plot_grid(result, base.with_suffix(".png"), mode=min(p["map.mode"], result.frequencies_hz.shape[1] - 1))
        response.success = True
        response.message = f"{npz} {png} ({len(result)} poses over {joints[0]} x {joints[1]})"
        return response

    def on_diagnostics(self) -> None:
        result = self.result
        if result is None:
            level, message, values = "ok", f"waiting for {self.input_topic}", {}
        else:
            level = {"stable": "ok", "marginal": "warn"}.get(result.verdict, "error")
            message = f"{result.verdict}: {result.n_modes} modes, lowest {result.frequencies_hz[0]:.4g} Hz"
            values = {"verdict": result.verdict, "lowest damping ratio": float(result.damping_ratios.min()),
                      "largest eigenvalue real part [1/s]": float(result.eigenvalues.real.max()),
                      "pose": self.computed}
        self.diagnostics.publish(diagnostics(self.node, "modal monitor", level, message, {
            **values, "samples received": self.samples, "computations": self.computations,
            "published modal/frequencies": self.frequencies.count, "published modal/damping": self.damping.count,
            "published modal/mode_shapes": self.shapes.count, "published modal/markers": self.markers.count,
            "republished (publish_rate_hz)": self.republished}))

    # ------------------------------------------------------------------ parameters
    def _settings(self, p: Any) -> tuple[Any, Any, Any]:
        """(kp, kd, decoupling) of the parameter values ``p`` (kp/kd None: the YAML's; decoupling (G_p, G_v) with
        ``controller: decoupling``, else None), checked beyond their declarations (one value or one per joint; the
        decoupling law needs flexible links and rigid joints), as are the ``map.joints``: at start-up and for every
        change alike.

        Raises:
            RuntimeLayerError: naming the parameter and what is wrong.
        """
        robot = self.robot
        gains = [None if not p[k] else p[k][0] if len(p[k]) == 1 else np.array(p[k]) for k in ("kp", "kd")]
        for name, value in zip(("kp", "kd"), gains):  # one non-negative value, or one per joint
            checked(name, joint_gains, value if value is None or np.ndim(value) == 0 else list(value), robot.n,
                    robot.joint_names, f"parameter '{name}'", 0.0)
        joints = p["map.joints"]
        if joints and (len(joints) != 2 or len(set(joints)) != 2 or not set(joints) <= set(robot.joint_names)):
            raise RuntimeLayerError(f"parameter 'map.joints': expected two different joints of "
                                    f"{list(robot.joint_names)}, got {list(joints)}")
        decoupling = None
        if p["controller"] == "decoupling":
            from flexrobot_ros.control.decoupling_gains import DEFAULT_GP, DEFAULT_GV, decoupling_gains

            elastic = [j for j in robot.joint_names if j not in robot.rigid_joints]
            extra = list(robot.extended.elastic_names) if robot.extended is not None else []
            if self.chain is None or not self.chain.m or elastic or extra:
                raise RuntimeLayerError(f"parameter 'controller': decoupling (seed 004) needs flexible links and rigid "
                                        f"joints; {robot.name} has " + (f"elastic joints {elastic}" if elastic else
                                                                         f"extra elasticities {extra}" if extra
                                                                         else "no flexible links"))
            decoupling = tuple(checked(name, decoupling_gains, p[name] or None, robot.n, default, name)
                               for name, default in (("decoupling.gp", DEFAULT_GP), ("decoupling.gv", DEFAULT_GV)))
        return gains[0], gains[1], decoupling

    @staticmethod
    def _republish_period(p: Any) -> float | None:
        return 1.0 / p["publish_rate_hz"] if p["publish_rate_hz"] > 0.0 else None

    def _prepare(self, values: Any, changed: frozenset) -> Any:
        """Check a change (:meth:`_settings`) and return what installs it (see :mod:`.live_parameters`): new gains
        recompute the modes at the current pose at the next tick, marker settings redraw the current modes now,
        rates re-create their timers; the rest is read where it is used."""
        kp, kd, decoupling = self._settings(values)
        robot = live_robot(self.loaded, values)

        def commit() -> None:
            self.computing.set_period(1.0 / values["max_rate_hz"])
            self.republishing.set_period(self._republish_period(values))
            if changed_any(changed, "model."):  # new joint or link parameters (a calibration): recompute now
                self.robot, self.computed = robot, None
            if changed_any(changed, ("kp", "kd", "controller", "decoupling.")):
                self.kp, self.kd, self.decoupling, self.computed = kp, kd, decoupling, None
            elif changed_any(changed, "markers.") and self.result is not None:
                self._publish(self.result)
        return commit

    def _publish(self, result: Any) -> None:
        types = self.node.types
        published = [(self.frequencies, float_array(types, result.frequencies_hz, "mode")),
                     (self.damping, float_array(types, result.damping_ratios, "mode")),
                     (self.shapes, mode_shapes_array(types, result.mode_shapes.T, self.coordinates))]
        count = min(self.p["markers.modes"], result.n_modes)
        deformed = []
        for k in range(count):
            link_shape = result.mode_shapes[self.joint_rows, k].real
            scale = self.p["markers.deflection"] / max(np.abs(link_shape).max(), 1e-12)
            deformed.append(frame_origins(self.robot, self.computed + scale * link_shape, self.links))
        labels = [f"mode {k + 1}: {result.frequencies_hz[k]:.2f} Hz, {100 * result.damping_ratios[k]:.1f} %"
                  for k in range(count)]
        published.append((self.markers, mode_markers(types, self.node.stamp(), self.p["markers.frame"],
                                                     frame_origins(self.robot, self.computed, self.links), deformed,
                                                     labels)))
        for publisher, msg in published:
            publisher.publish(msg)
        self.published = published


def main(argv: list[str] | None = None) -> int:
    """Console script ``modal_monitor_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(ModalMonitorNode, "modal_monitor_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
