"""oma_node: online operational modal analysis of encoder signals, modal data and joint-parameter identification.

Subscribes ``motor_states`` (any sensor_msgs/JointState topic: remap it, e.g. ``motor_states:=/robot/encoders``;
channels are the robot's joints, or the joints of the first message when ``robot`` is empty) with a reliable queue
of ``queue_depth`` samples, and ``joint_states`` (link side) for the pose saved with the modes; or, with
``state_input: dynamic_joint_states``, both from ros2_control's ``dynamic_joint_states`` alone
(control_msgs/DynamicJointState, same queue: the encoder channels are the state interface
``dynamic_joint_states.motor_interface``, default ``motor_position``, the pose is
``dynamic_joint_states.link_interface``, default ``position``; joints mapped by name;
:mod:`flexrobot_ros.nodes.state_input`). The samples feed
a :class:`flexrobot_ros.oma.ModeTracker` (sliding ``window_s`` window at ``sample_rate_hz``, re-identified every
``update_period_s`` with ``method`` over ``orders``); samples must arrive in stamp order at the sampling rate:
up to ``max_bridged_samples`` missing samples (dropped messages) are bridged by linear interpolation and counted,
a longer gap restarts the window.

Publishes after every identification, latched: ``oma/frequencies`` (std_msgs/Float64MultiArray [Hz], ascending),
``oma/damping`` (std_msgs/Float64MultiArray, damping ratios as fractions, 0.02 = 2 %), ``oma/mode_shapes``
(Float64MultiArray (modes, channels, 2): complex shapes, labelled ``mode``, ``coordinate:<channel>,...``,
``part:re,im``) for the modes found in that window; and ``diagnostics`` (1 Hz: samples received, window fill, last
sample stamp - how far the node lags the stream -, window restarts and bridged samples, stream restarts,
identifications and their cost).

Services (std_srvs/Trigger; results go to the topics, files and the response message):
``~/identify`` identifies the buffer now; ``~/reset`` empties the window; ``~/save_modal_data`` appends the
current pose and the last identified modes to ``modal_data_file`` (inside ``output_directory``, as every file the
services write; an existing identified YAML is kept as a backup; the format of
:mod:`flexrobot_ros.identification.modal_data`, shapes in ``shape_coordinates``); ``~/identify_joint_parameters``
identifies ``identification.parameters`` of ``robot`` from every pose saved so far (seed 000 chapter 3) and writes
the updated flexibility YAML to ``identified_yaml``.

Parameters are live (the window, schedule, method and orders apply to the next identification, the rest to the next
service call; :meth:`OmaNode._prepare`) except ``robot``, ``tool``, ``sample_rate_hz``, ``queue_depth`` and the state
input (read-only).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.errors import IdentificationError, RuntimeLayerError, SignalError
from flexrobot_ros.identification import (MeasuredMode, ModalData, PoseModes, identify_joint_parameters,
                                          read_modal_data, write_modal_data)
from flexrobot_ros.identification.flexibility_update import identified_fields, write_identified_yaml
from flexrobot_ros.identification.parameters import parse_parameters
from flexrobot_ros.nodes.convert import (Counted, answer, diagnostics, float_array, interface_values, joint_values,
                                         mode_shapes_array, ordered_stamp, reporting)
from flexrobot_ros.nodes.live_parameters import LiveParameters, checked
from flexrobot_ros.nodes.output_files import keep_previous, output_path
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.nodes.run_parameters import RunParameters
from flexrobot_ros.nodes.silent_input import SILENT_INPUT_S, warn_if_silent
from flexrobot_ros.nodes.state_input import state_input_parameters
from flexrobot_ros.oma import ModeTracker, SignalWarning, TrackerOptions
from flexrobot_ros.oma.identify import parse_orders
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, ParameterSpec, run_node

PARAMETERS = (
    ParameterSpec("robot", "scompi", "robot of the encoders (shipped name or flexibility YAML; empty: channels "
                  "from the first message, no joint-parameter identification)", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("sample_rate_hz", 1000.0, "encoder sample rate [Hz]", range=(1.0, 100000.0), read_only=True),
    ParameterSpec("queue_depth", 10000, "encoder samples queued while an identification runs", range=(10, 10**7),
                  read_only=True),
    ParameterSpec("silent_warning_s", SILENT_INPUT_S, "warn when no encoder sample has arrived this long after "
                  "start [s]", range=(0.1, 3600.0), read_only=True),
    ParameterSpec("window_s", 3.0, "sliding window of the online tracker [s]", range=(0.01, 3600.0)),
    ParameterSpec("update_period_s", 1.0, "time between online identifications [s] (stream time)",
                  range=(0.01, 3600.0)),
    ParameterSpec("max_bridged_samples", 5, "longest run of missing samples filled by linear interpolation; a "
                  "longer gap restarts the window (0: every gap restarts it)", range=(0, 1000)),
    ParameterSpec("method", "ssi-cov", "identification method", choices=("ssi-cov", "var")),
    ParameterSpec("orders", "2:60", "model orders 'first:last[:step]' or 'a,b,c'"),
    ParameterSpec("block_rows", 0, "SSI-cov block rows (0: automatic)", range=(0, 100000)),
    ParameterSpec("shape_coordinates", "motor", "what the channels measure, for modal data: motor angles q_m "
                  "('motor') or link coordinates q ('link')", choices=("motor", "link")),
    ParameterSpec("output_directory", "", "the only folder the services write into (files below are relative to "
                  "it and must stay inside it; empty: $ROS_HOME/flexrobot/<launch date-time>_<launcher PID>)",
                  read_only=True),
    ParameterSpec("modal_data_file", "modal_data.yaml", "file ~/save_modal_data appends to (in output_directory)"),
    ParameterSpec("identified_yaml", "identified.yaml", "flexibility YAML ~/identify_joint_parameters writes (in "
                  "output_directory; an existing file is kept as <name>.<k>.bak)"),
    ParameterSpec("identification.parameters", "k", "parameters to identify, e.g. 'k', 'k,d_f,d_fm', "
                  "'k:joint2,k:joint3'"),
    ParameterSpec("identification.starts", 8, "random starts of the identification", range=(1, 10000)),
    ParameterSpec("identification.seed", 0, "seed of the random starts", range=(0, 2**31 - 1)),
    ParameterSpec("identification.residual", "eigenvalue", "residuals: matched eigenvalue errors ('eigenvalue') or "
                  "the thesis' characteristic determinants ('determinant')", choices=("eigenvalue", "determinant")),
    ParameterSpec("identification.drop_unmatched", True, "leave out saved modes that match no model mode "
                  "(spurious OMA modes) instead of refusing the data"),
    *state_input_parameters("motor_states for the encoders, joint_states for the pose", motor=True),
)


class OmaNode:
    """The OMA node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.robot = load_node_robot(node, p) if p["robot"] else None
        self.channels = self.robot.joint_names if self.robot is not None else None
        self.options = self._options(p)
        self.tracker: ModeTracker | None = None
        self.stamp, self.sample, self.pose, self.pose_stamp = None, None, None, None
        self.last_update, self.samples, self.updates, self.restarts = None, 0, 0, 0
        self.stream_restarts = 0
        types = node.types
        array_type = types.std_msgs.msg.Float64MultiArray
        self.frequencies = Counted(node.create_publisher(array_type, "oma/frequencies", QOS_LATCHED))
        self.damping = Counted(node.create_publisher(array_type, "oma/damping", QOS_LATCHED))
        self.shapes = Counted(node.create_publisher(array_type, "oma/mode_shapes", QOS_LATCHED))
        self.diagnostics = node.create_publisher(types.diagnostic_msgs.msg.DiagnosticArray, "diagnostics")
        joint_state, queue = types.sensor_msgs.msg.JointState, QOS_DEFAULT.with_depth(p["queue_depth"])
        locked = live.locked  # callbacks and parameter changes take turns
        if p["state_input"] == "dynamic_joint_states":  # encoders and pose from one topic
            self.topic = node.resolve_name("dynamic_joint_states")
            node.create_subscription(types.control_msgs.msg.DynamicJointState, "dynamic_joint_states",
                                     locked(self.on_dynamic_joint_states), queue)
        else:
            self.topic = node.resolve_name("motor_states")
            node.create_subscription(joint_state, "motor_states", locked(self.on_encoders), queue)
            node.create_subscription(joint_state, "joint_states", locked(self.on_joint_states))
        warn_if_silent(node, self.topic, lambda: self.samples, "is the robot publishing? check the encoder topic "
                       "(hardware.launch.py encoders:=, flexrobot bringup --encoders)", p["silent_warning_s"])
        trigger = types.std_srvs.srv.Trigger
        for name, action in (("~/identify", self._identify), ("~/reset", self._reset),
                             ("~/save_modal_data", self._save), ("~/identify_joint_parameters", self._identify_joints)):
            node.create_service(trigger, name, locked(lambda request, response, act=action: answer(response, act)))
        node.create_wall_timer(1.0, locked(self.on_diagnostics))
        live.on_change(self._prepare)
        self.run_parameters = RunParameters(node, self.robot)  # latched on /flexrobot/bringup_parameters
        node.logger.info(f"OMA ({p['method']}, orders {p['orders']}) on {self.topic} at {p['sample_rate_hz']:g} Hz, "
                         f"window {p['window_s']:g} s every {p['update_period_s']:g} s")

    def on_encoders(self, msg: Any) -> None:
        with reporting(self.node, self.topic):
            stamp = ordered_stamp(msg, self.stamp, self._stream_restarted)
            channels = self.channels or tuple(msg.name)
            self._push(stamp, channels, joint_values(msg, channels))

    def on_dynamic_joint_states(self, msg: Any) -> None:
        """Encoder sample and pose of one control_msgs/DynamicJointState (``state_input: dynamic_joint_states``);
        a message lacking either is skipped whole."""
        with reporting(self.node, self.topic):
            channels = self.channels or tuple(msg.joint_names)
            sample = interface_values(msg, channels, self.p["dynamic_joint_states.motor_interface"])
            pose = interface_values(msg, self.robot.joint_names if self.robot is not None else channels,
                                    self.p["dynamic_joint_states.link_interface"])
            stamp = ordered_stamp(msg, self.stamp, self._stream_restarted)
            self.pose, self.pose_stamp = pose, stamp
            self._push(stamp, channels, sample)

    def _push(self, stamp: float, channels: tuple[str, ...], sample: np.ndarray) -> None:
        """One encoder sample [rad] at ``stamp`` [s] into the tracker; publishes the identifications it triggers."""
        self.channels, self.stamp, self.sample = channels, stamp, sample
        self.tracker = self.tracker or ModeTracker(self.p["sample_rate_hz"], channels, self.options)
        self.samples += 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SignalWarning)
            updates = self.tracker.push(stamp, sample)
        for warning in caught:  # a gap or a bad sample restarted the window
            self.restarts += 1
            self.node.log_once("window restart", f"{self.topic}: {warning.message} (logged once, counted)")
        for update in updates:
            self._publish(update)

    def on_joint_states(self, msg: Any) -> None:
        with reporting(self.node, "joint_states"):
            stamp = ordered_stamp(msg, self.pose_stamp, lambda *_: None)
            self.pose = joint_values(msg, self.robot.joint_names if self.robot is not None else tuple(msg.name))
            self.pose_stamp = stamp

    def on_diagnostics(self) -> None:
        update = self.last_update
        fill = 0.0 if self.tracker is None else self.tracker.window_fill
        message = (f"{len(self._found(update))} modes at t = {update.time_s:.3f} s" if update is not None
                   else f"window {100 * fill:.0f} % full")
        self.diagnostics.publish(diagnostics(self.node, "oma", "ok", message, {
            "samples received": self.samples, "window fill": fill, "identifications": self.updates,
            "last sample stamp [s]": "" if self.stamp is None else f"{self.stamp:.6f}",
            "window restarts (gaps)": self.restarts,
            "stream restarts (stamps jumped back)": self.stream_restarts,
            "samples bridged (short gaps)": 0 if self.tracker is None else self.tracker.bridged_samples,
            "last identification [s]": 0.0 if update is None else update.elapsed_s,
            "frequencies [Hz]": [m.frequency_hz for m in self._found(update)],
            "published oma/frequencies": self.frequencies.count, "published oma/damping": self.damping.count,
            "published oma/mode_shapes": self.shapes.count}))

    # ------------------------------------------------------------------ services
    def _identify(self) -> str:
        if self.tracker is None:
            raise SignalError(f"no samples received on {self.topic} yet")
        update = self.tracker.update()
        self._publish(update)
        window = self.tracker.window_fill * self.options.window_s
        return f"{len(self._found(update))} modes: " + ", ".join(
            f"{m.frequency_hz:.4f} Hz ({100 * m.damping_ratio:.3f} %)" for m in self._found(update)) + \
            f" (window of {window:.3f} s ending at t = {update.time_s:.3f} s)"

    def _stream_restarted(self, stamp: float, last: float) -> None:
        """The encoder stamps jumped back (the simulator or the robot driver restarted): a new window."""
        self.stream_restarts += 1
        self.node.log_once("stream restart", f"{self.topic}: stamp {stamp:.6f} s is {last - stamp:.3f} s before the "
                                             "previous one: the stream started over; window restarted (logged once, "
                                             "counted)")
        self._reset()

    def _reset(self) -> str:
        if self.tracker is not None:
            self.tracker.reset()
        self.stamp = None
        return "window emptied"

    def _save(self) -> str:
        modes = self._found(self.last_update)
        if not modes:
            raise IdentificationError("no identified modes yet: call ~/identify first")
        pose = self.pose if self.pose is not None else self.sample
        measured = tuple(MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in modes
                         if m.frequency_hz > 0 and 0 <= m.damping_ratio < 1)  # what the modal-data format accepts
        path = self._output("modal_data_file")
        path.parent.mkdir(parents=True, exist_ok=True)
        previous = read_modal_data(path).poses if path.exists() else ()
        write_modal_data(path, ModalData(previous + (PoseModes(np.asarray(pose, dtype=float), measured),),
                                         self.p["shape_coordinates"], str(path),
                                         self.robot.name if self.robot is not None else None))
        return (f"{path.resolve()}: pose {len(previous) + 1} with {len(measured)} modes at q = "
                f"{np.round(pose, 5).tolist()}")

    def _identify_joints(self) -> str:
        if self.robot is None:
            raise IdentificationError("parameter robot is empty: no model to identify")
        path = self._output("modal_data_file")
        data = read_modal_data(path)
        result = identify_joint_parameters(self.robot, data, self.p["identification.parameters"],
                                           starts=self.p["identification.starts"],
                                           seed=self.p["identification.seed"],
                                           residual=self.p["identification.residual"],
                                           drop_unmatched=self.p["identification.drop_unmatched"])
        out = self._output("identified_yaml")
        out.parent.mkdir(parents=True, exist_ok=True)
        kept = keep_previous(out)
        write_identified_yaml(self.robot, identified_fields(result), out,
                              f"from {len(data.poses)} poses of OMA modal data in {path} "
                              f"(oma_node, objective {result.objective:.3g})")
        values = ", ".join(f"{q.name} = {q.value:.6g} {q.unit} (was {q.nominal:.6g}, std {q.std:.3g})"
                           for q in result.parameters)
        return f"{out}: {values}" + "".join(f"; warning: {w}" for w in result.warnings) + kept

    # ------------------------------------------------------------------ parameters
    def _options(self, p: Any) -> TrackerOptions:
        """Tracker settings of the parameter values ``p``, checked beyond their declarations (model orders, window
        length at the sample rate, joint-parameter selection): at start-up and for every change alike.

        Raises:
            RuntimeLayerError: naming the parameter and what is wrong.
        """
        checked("orders", parse_orders, p["orders"])
        samples = int(round(p["window_s"] * p["sample_rate_hz"]))
        if samples < 10:
            raise RuntimeLayerError(f"parameter 'window_s': {p['window_s']:g} s at {p['sample_rate_hz']:g} Hz holds "
                                    f"{samples} samples; the window needs at least 10")
        if self.robot is not None:
            checked("identification.parameters", parse_parameters, self.robot, p["identification.parameters"])
        return TrackerOptions(window_s=p["window_s"], update_period_s=p["update_period_s"],
                              max_bridged_samples=p["max_bridged_samples"], method=p["method"], orders=p["orders"],
                              block_rows=p["block_rows"] or None)

    def _prepare(self, values: Any, changed: frozenset) -> Any:
        """Check a change (:meth:`_options`) and return what installs it (see :mod:`.live_parameters`): the window,
        method, orders and schedule apply to the next identification; files and identification settings are read
        when their service runs."""
        options = self._options(values)

        def commit() -> None:
            self.options = options
            if self.tracker is not None:
                self.tracker.set_options(options)
        return commit if options != self.options else None

    # ------------------------------------------------------------------ helpers
    def _output(self, parameter: str) -> Path:
        return output_path(self.p["output_directory"], self.p[parameter], parameter)

    @staticmethod
    def _found(update: Any) -> list[Any]:
        return [] if update is None else [m for m in update.modes if m.missed == 0]

    def _publish(self, update: Any) -> None:
        self.last_update, self.updates = update, self.updates + 1
        modes, types = self._found(update), self.node.types
        self.frequencies.publish(float_array(types, [m.frequency_hz for m in modes], "mode"))
        self.damping.publish(float_array(types, [m.damping_ratio for m in modes], "mode"))
        shapes = np.array([m.shape for m in modes]).reshape(len(modes), len(self.channels))
        self.shapes.publish(mode_shapes_array(types, shapes, list(self.channels)))


def main(argv: list[str] | None = None) -> int:
    """Console script ``oma_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(OmaNode, "oma_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
