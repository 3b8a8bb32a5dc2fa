"""calibration_node: self-calibration of the joint parameters on a running robot, one service call (issue 26).

Why its own node: the calibration drives the robot (or the simulator), records the encoders, identifies the modes
and pushes the result to the model nodes; the OMA node's sliding window serves continuous monitoring, while each
calibration pose needs one record that starts at its excitation. This node runs the core procedure
:func:`flexrobot_ros.identification.calibration.calibrate` with the OMA core on its own records.

Service ``~/calibrate`` (std_srvs/Trigger): starts a calibration in a worker thread and answers at once (``success``
false while one runs, or when ``poses`` is empty); progress goes to ``calibration/progress`` (std_msgs/String) and
the log; the result to ``calibration/report`` (std_msgs/String, latched: JSON with ``success``, the identified
parameters and those kept at nominal with the reason, per pose and mode the measured, predicted-before and
predicted-after frequency [Hz] and damping ratio (fraction), the files written and the nodes updated). For each pose
of ``poses`` (n values per pose, link side [rad | m]):

1. move: ``move: command`` publishes the pose on ``set_point`` (sensor_msgs/JointState: the simulator moves there);
   both ``command`` and ``wait`` (hardware: the robot is moved by its own program) then wait until ``joint_states``
   reports every joint within ``pose_tolerance`` of the pose for ``settle_s`` of stream time, at most
   ``timeout_s`` (wall clock); with ``rest.hold_s`` > 0 it then waits until the robot is at rest: every joint's
   velocity in ``joint_states`` at most ``rest.velocity`` [rad/s | m/s] for ``rest.hold_s`` of stream time, at most
   ``rest.timeout_s`` (wall clock; the report names the pose). A move leaves the arm ringing in its lowest mode
   (the Canadarm's 0.11 Hz, 2 %-damped joint mode decays in about 62 s): records taken while it rings hold it, and
   OMA finds fewer of the modes that carry the calibrated parameters;
2. excite: ``excitation.type: service`` calls the std_srvs/Trigger service ``excitation.service`` (default the
   simulator's ``/simulator_node/apply_impact``); ``ambient`` records the robot as it is. ``excitation.wrench``
   (non-empty) is set as ``impact.force`` on the node serving that service (the simulator) for the sweep and its
   value restored after: the excitation must move every joint whose parameters are calibrated (Scompi: a blow
   through the wrist axis leaves joint 6's motor mode, whose damping carries d_f6, unexcited; see
   config/scompi_simulation.yaml);
3. record ``record_s`` seconds of ``motor_states`` (sensor_msgs/JointState, motor encoder positions [rad] at
   ``sample_rate_hz``) from the excitation on (``service``: from the blow's onset in the samples, which lands after
   the request by its latency) and identify the modes (``oma.method``, ``oma.orders``).

On a robot with motor Coulomb friction each record's friction is modelled from its ``motor_states`` velocities
(the positions differentiated where a message carries none): an equivalent motor damping per joint and pose
(:mod:`flexrobot_ros.identification.motor_friction`; the LWR4's friction holds its motors after a 50 N blow, and
the modes are then those of the held motors); a pose whose motors it holds only part of the time is left out and
the report says why. Then ``identification.parameters`` (default ``k,d_f``; a robot with flexible links: ``EI`` or
``EI,zeta``, the links' bending stiffness and damping ratio) are identified across the poses; parameters the
measured modes do not determine are kept at their nominal values and named with the reason. The result is accepted
only when the calibrated model reproduces every measured mode the identification used within
``acceptance.frequency`` (relative) and ``acceptance.damping`` (absolute damping ratio); a refused result (report
``success`` false, ``refusal`` naming each mode missed) writes no calibrated YAML and pushes nothing. Files (inside
``output_directory``, a replaced file kept as ``<name>.<k>.bak``): ``modal_data_file`` (the measured modes, also
after a failure or a refusal: what was measured is kept) and ``calibrated_yaml`` (an accepted calibration: the
robot's flexibility YAML with the calibrated values and a header saying when and from what).
The calibrated model is set on each node of ``push.nodes`` in one request (rcl_interfaces/SetParametersAtomically,
announced on ``/parameter_events``; :mod:`flexrobot_ros.nodes.live_model`): ``model.stiffness``,
``model.link_damping``, ``model.motor_damping`` when joint parameters were identified, ``model.link_EI`` and
``model.link_damping_ratio`` when flexible-link parameters were; the report's ``pushed`` says per node whether it
accepted them (and why not) and ``pushed_values`` what was set.

A failure at a pose (timeout, excitation refused, too few samples, no modes) ends the sweep; the report names the
pose and step, and the poses measured before it are kept (and identified when there are two or more).
Parameters are read when ``~/calibrate`` is called; ``robot``, ``tool``, ``sample_rate_hz``, ``queue_depth`` and
``output_directory`` are read-only.
"""
from __future__ import annotations

import json
import threading
import time
import traceback
from typing import Any, Sequence

import numpy as np

from flexrobot_ros.errors import CalibrationError, FlexrobotError
from flexrobot_ros.identification.calibration import (CalibrationOptions, CalibrationResult, calibrate,
                                                      check_parameters)
from flexrobot_ros.identification.flexibility_update import write_identified_yaml
from flexrobot_ros.identification.modal_data import MeasuredMode, write_modal_data
from flexrobot_ros.nodes.convert import answer, joint_state, joint_values, ordered_stamp, reporting
from flexrobot_ros.nodes.live_model import model_values
from flexrobot_ros.nodes.live_parameters import LiveParameters, checked
from flexrobot_ros.nodes.output_files import keep_previous, output_path
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.oma import identify_modes
from flexrobot_ros.oma.identify import parse_orders
from flexrobot_ros.oma.onset import impulse_onset
from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, ParameterSpec, run_node
from flexrobot_ros.runtime.remote_parameters import get_remote_parameters, set_remote_parameters

PARAMETERS = (
    ParameterSpec("robot", "scompi", "nominal robot (shipped name or flexibility YAML)", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("sample_rate_hz", 1000.0, "encoder sample rate [Hz]", range=(1.0, 100000.0), read_only=True),
    ParameterSpec("queue_depth", 20000, "encoder samples queued", range=(10, 10**7), read_only=True),
    ParameterSpec("poses", [], "calibration poses, n values per pose [rad | m]", type="double_array"),
    ParameterSpec("move", "command", "'command': publish each pose on set_point (the simulator moves there); "
                  "'wait': wait until the robot reports it", choices=("command", "wait")),
    ParameterSpec("pose_tolerance", 1e-3, "largest joint error at a reached pose [rad | m]", range=(1e-9, 10.0)),
    ParameterSpec("settle_s", 0.5, "stream time the pose must hold within the tolerance before the excitation [s]",
                  range=(0.0, 600.0)),
    ParameterSpec("timeout_s", 60.0, "longest wall-clock wait for a pose, and for a record [s]",
                  range=(0.1, 86400.0)),
    ParameterSpec("rest.velocity", 1e-3, "at rest: every joint's joint_states velocity at most this [rad/s | m/s]",
                  range=(0.0, 1e3)),
    ParameterSpec("rest.hold_s", 0.0, "stream time the robot must stay at rest at a reached pose before the "
                  "excitation [s] (0: no rest wait)", range=(0.0, 3600.0)),
    ParameterSpec("rest.timeout_s", 600.0, "longest wall-clock wait for the robot to come to rest at a pose [s]",
                  range=(0.1, 86400.0)),
    ParameterSpec("excitation.type", "service", "'service': call excitation.service at each pose; 'ambient': record "
                  "the robot as it is", choices=("service", "ambient")),
    ParameterSpec("excitation.service", "/simulator_node/apply_impact", "std_srvs/Trigger service that excites "
                  "the robot"),
    ParameterSpec("excitation.wrench", [], "with excitation.type 'service': impact force [N] (3 values) or wrench "
                  "[N, N m] (6 values), world axes at the tool frame, set as impact.force on the node serving "
                  "excitation.service during the sweep (empty: that node's own)", type="double_array"),
    ParameterSpec("record_s", 2.0, "record length after the excitation [s] (stream time)", range=(0.05, 3600.0)),
    ParameterSpec("oma.method", "ssi-cov", "OMA method", choices=("ssi-cov", "var")),
    ParameterSpec("oma.orders", "", "OMA model orders 'first:last[:step]' (empty: the method's default)"),
    ParameterSpec("identification.parameters", "k,d_f", "parameters to calibrate, e.g. 'k,d_f', 'k'; flexible "
                  "links: 'EI', 'EI,zeta'"),
    ParameterSpec("identification.starts", 8, "random starts of the identification", range=(1, 10000)),
    ParameterSpec("identification.seed", 0, "seed of the random starts", range=(0, 2**31 - 1)),
    ParameterSpec("acceptance.frequency", 0.01, "accept the calibration only when the calibrated model gives every "
                  "used measured mode's frequency within this fraction (0.01 = 1 %)", range=(1e-6, 1.0)),
    ParameterSpec("acceptance.damping", 0.01, "accept the calibration only when the calibrated model gives every "
                  "used measured mode's damping ratio within this (absolute: 0.01 = 1 percentage point)",
                  range=(1e-6, 1.0)),
    ParameterSpec("push.nodes", ["/modal_monitor_node", "/feedforward_node"], "nodes whose model.* parameters "
                  "(joint, flexible-link) receive the calibrated values (empty list entry: none)", type="string_array"),
    ParameterSpec("push.timeout_s", 120.0, "longest wait for each node to accept the values [s] (a feedforward "
                  "with sdrnea compiles code for them)", range=(0.1, 3600.0)),
    ParameterSpec("output_directory", "", "the only folder the node writes into (empty: $ROS_HOME/flexrobot/<launch "
                  "date-time>_<launcher PID>)", read_only=True),
    ParameterSpec("modal_data_file", "calibration_modes.yaml", "measured modes (in output_directory)"),
    ParameterSpec("calibrated_yaml", "calibrated.yaml", "calibrated flexibility YAML (in output_directory)"),
)
#: Wall-clock interval [s] of the progress messages while waiting for the robot to rest.
REST_REPORT_S = 10.0


class CalibrationNode:
    """The calibration node (see the module docstring); it is also the :class:`CalibrationCell` of the procedure."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.robot = load_node_robot(node, p)
        self.lock = threading.Lock()  # between the subscriptions and the worker
        self.pose, self.pose_stamp, self.velocity = None, None, None
        self.stamp, self.record_from, self.samples, self.record = None, None, [], []
        self.worker: threading.Thread | None = None
        self.clients: dict[str, Any] = {}
        types = node.types
        joint_state_type = types.sensor_msgs.msg.JointState
        node.create_subscription(joint_state_type, "motor_states", self.on_encoders,
                                 QOS_DEFAULT.with_depth(p["queue_depth"]))
        node.create_subscription(joint_state_type, "joint_states", self.on_joint_states)
        self.set_point = node.create_publisher(joint_state_type, "set_point")
        self.progress = node.create_publisher(types.std_msgs.msg.String, "calibration/progress",
                                              QOS_DEFAULT.with_depth(100))
        self.report = node.create_publisher(types.std_msgs.msg.String, "calibration/report", QOS_LATCHED)
        node.create_service(types.std_srvs.srv.Trigger, "~/calibrate",
                            live.locked(lambda request, response: answer(response, self._start)))
        live.on_change(lambda values, changed: self._options(values) and None)
        node.logger.info(f"calibration of {self.robot.name}: ~/calibrate over {len(p['poses']) // self.robot.n} "
                         f"poses ({p['move']}, excitation {p['excitation.type']}, {p['record_s']:g} s records)")

    # ------------------------------------------------------------------ subscriptions
    def on_encoders(self, msg: Any) -> None:
        with reporting(self.node, "motor_states"):
            stamp = ordered_stamp(msg, self.stamp, lambda *_: None)
            sample = joint_values(msg, self.robot.joint_names)
            velocity = joint_values(msg, self.robot.joint_names, "velocity") if len(msg.velocity) else None
            with self.lock:
                self.stamp = stamp
                if self.record_from is not None and stamp >= self.record_from:
                    self.samples.append((stamp, sample, velocity))

    def on_joint_states(self, msg: Any) -> None:
        with reporting(self.node, "joint_states"):
            stamp = ordered_stamp(msg, self.pose_stamp, lambda *_: None)
            pose = joint_values(msg, self.robot.joint_names)
            velocity = joint_values(msg, self.robot.joint_names, "velocity") if len(msg.velocity) else None
            with self.lock:
                self.pose, self.pose_stamp, self.velocity = pose, stamp, velocity

    # ------------------------------------------------------------------ the service
    def _options(self, p: Any) -> tuple[list[np.ndarray], CalibrationOptions]:
        """Poses and options of the parameter values ``p``, checked (pose lengths, orders, parameter selection).

        Raises:
            RuntimeLayerError: naming the parameter and what is wrong.
        """
        n = self.robot.n
        if len(p["poses"]) % n:
            raise CalibrationError(f"parameter 'poses': {len(p['poses'])} values are not whole poses of {n} joints "
                                   f"{list(self.robot.joint_names)}")
        poses = [checked("poses", self.robot.check_q, p["poses"][i:i + n], f"calibration pose {i // n + 1}")
                 for i in range(0, len(p["poses"]), n)]
        if p["oma.orders"]:
            checked("oma.orders", parse_orders, p["oma.orders"])
        wrench = p["excitation.wrench"]
        if len(wrench) not in (0, 3, 6) or not np.all(np.isfinite(wrench)):
            raise CalibrationError(f"parameter 'excitation.wrench': expected 3 finite values [fx, fy, fz] (N) or 6 "
                                   f"[fx, fy, fz, mx, my, mz] (N, N m), or none, got {list(wrench)}")
        checked("identification.parameters", check_parameters, self.robot, p["identification.parameters"])
        return poses, CalibrationOptions(parameters=p["identification.parameters"],
                                         starts=p["identification.starts"], seed=p["identification.seed"],
                                         mode_frequency_tolerance=p["acceptance.frequency"],
                                         mode_damping_tolerance=p["acceptance.damping"],
                                         parameters_setting="identification.parameters")

    def _start(self) -> str:
        if self.worker is not None and self.worker.is_alive():
            raise CalibrationError("a calibration is running; wait for its report on calibration/report")
        poses, options = self._options(self.p)
        if len(poses) < 2:
            raise CalibrationError(f"parameter 'poses' holds {len(poses)} pose(s); give two or more "
                                   f"({self.robot.n} values each)")
        self.worker = threading.Thread(target=self._calibrate, args=(poses, options, dict(self.p)),
                                       name="calibration", daemon=True)
        self.worker.start()
        return (f"calibration of {self.robot.name} started over {len(poses)} poses; progress on "
                f"{self.node.resolve_name('calibration/progress')}, report on "
                f"{self.node.resolve_name('calibration/report')}")

    def _say(self, message: str) -> None:
        self.node.logger.info(f"calibration: {message}")
        self.progress.publish(self.node.types.std_msgs.msg.String(data=message))

    def _calibrate(self, poses: Sequence[np.ndarray], options: CalibrationOptions, p: dict[str, Any]) -> None:
        """The worker: the procedure, the files, the push, the report (never raises)."""
        report: dict[str, Any] = {"success": False}
        restore: dict[str, Any] = {}
        try:
            self.settings = p
            restore = self._set_excitation(p)
            result = calibrate(self.robot, poses, self, options, self._say)
            report.update(result.to_dict())
            report["files"] = self._write(result, p)
            values = model_values(result.robot, joints=bool(result.identified), links=bool(result.identified_links))
            report["pushed_values"] = values
            report["pushed"] = self._push(values, p) if values else {}
            report["success"] = result.failure is None and result.accepted and all(
                ok for ok, _ in report["pushed"].values())
            self.node.logger.info("calibration:\n" + result.text())
            self._say("done" if report["success"] else "finished with problems: see calibration/report")
        except FlexrobotError as error:
            report["error"] = str(error)
            self._say(f"failed: {error}")
        except Exception as error:  # a bug must not leave the caller waiting without a report
            report["error"] = f"unexpected {type(error).__name__}: {error}"
            self.node.logger.error(f"calibration: {report['error']}\n{traceback.format_exc()}")
        finally:
            with self.lock:
                self.record_from, self.samples = None, []
        for target, values in restore.items():
            try:
                set_remote_parameters(self.node, target, values, p["push.timeout_s"], self.clients)
                self._say(f"{target}: impact.force restored to {values['impact.force']}")
            except FlexrobotError as error:
                report.setdefault("warnings", []).append(f"{target}: impact.force not restored: {error}")
        self.report.publish(self.node.types.std_msgs.msg.String(data=json.dumps(report)))

    def _set_excitation(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Set ``excitation.wrench`` as ``impact.force`` on the node serving ``excitation.service``; returns
        {node: its previous values} to restore ({} when nothing was set).

        Raises:
            CalibrationError: the service name has no node part, or the node refuses the wrench.
        """
        if p["excitation.type"] != "service" or not p["excitation.wrench"]:
            return {}
        service = self.node.resolve_name(p["excitation.service"])
        target = service.rsplit("/", 1)[0]
        if not target:
            raise CalibrationError(f"parameter 'excitation.service' {service!r}: no node in the name to set "
                                   "excitation.wrench on (expected /<node>/<service>)")
        previous = get_remote_parameters(self.node, target, ["impact.force"], p["timeout_s"], self.clients)
        wrench = [float(v) for v in p["excitation.wrench"]]
        ok, reason = set_remote_parameters(self.node, target, {"impact.force": wrench}, p["timeout_s"], self.clients)
        if not ok:
            raise CalibrationError(f"{target} refused impact.force {wrench} (excitation.wrench): {reason}")
        self._say(f"{target}: impact.force {wrench} for the calibration (was {previous['impact.force']})")
        return {target: previous}

    def _write(self, result: CalibrationResult, p: dict[str, Any]) -> dict[str, str]:
        files = {}
        if result.data.poses:
            path = output_path(p["output_directory"], p["modal_data_file"], "modal_data_file")
            path.parent.mkdir(parents=True, exist_ok=True)
            keep_previous(path)
            files["modal_data"] = str(write_modal_data(path, result.data))
        if result.accepted:
            out = output_path(p["output_directory"], p["calibrated_yaml"], "calibrated_yaml")
            out.parent.mkdir(parents=True, exist_ok=True)
            kept = keep_previous(out)
            kept_nominal = "".join(f"\n  {name}: kept at its nominal value ({why})"
                                   for name, why in result.kept.items())
            write_identified_yaml(
                self.robot, result.identified, out,
                f"self-calibration at {len(result.data.poses)} poses (modes in {files.get('modal_data')}), "
                f"eigenvalue residuals, {p['identification.starts']} starts{kept_nominal}", by="calibration_node",
                links=result.identified_links)
            files["calibrated_yaml"] = str(out)
            if kept:
                files["backup"] = kept.rsplit(" ", 1)[-1]
            self._say(f"wrote {out}{kept}")
        return files

    def _push(self, values: dict[str, list[float]], p: dict[str, Any]) -> dict[str, tuple[bool, str]]:
        """Set the calibrated ``model.*`` ``values`` on every node of ``push.nodes`` (atomically per node);
        {node: (accepted, reason)}."""
        pushed = {}
        for target in [t for t in p["push.nodes"] if t]:
            try:
                pushed[target] = set_remote_parameters(self.node, target, values, p["push.timeout_s"], self.clients)
            except FlexrobotError as error:
                pushed[target] = (False, str(error))
            self._say(f"{target}: " + (f"calibrated {', '.join(values)} set" if pushed[target][0] else
                                       f"refused the calibrated {', '.join(values)}: {pushed[target][1]}"))
        return pushed

    # ------------------------------------------------------------------ CalibrationCell
    def move_to(self, pose: np.ndarray) -> np.ndarray:
        """Command the pose (``move: command``), then wait until the robot reports it (module docstring)."""
        p = self.settings
        if p["move"] == "command":
            if not self.set_point.get_subscription_count():
                raise CalibrationError(f"nobody subscribes to {self.set_point.topic_name} (is the simulator "
                                       "running? on a robot, use move: wait)")
            self.set_point.publish(joint_state(self.node.types, self.node.stamp(), self.robot.joint_names, pose))
        deadline, held_since = time.monotonic() + p["timeout_s"], None
        while time.monotonic() < deadline:
            with self.lock:
                current, stamp = self.pose, self.pose_stamp
            if current is not None and np.max(np.abs(current - pose)) <= p["pose_tolerance"]:
                held_since = stamp if held_since is None else held_since
                if stamp - held_since >= p["settle_s"]:
                    return self._wait_at_rest(pose, p) if p["rest.hold_s"] > 0.0 else current
            else:
                held_since = None
            time.sleep(0.01)
        seen = "no joint_states received" if current is None else \
            f"last reported {np.round(current, 6).tolist()}, error {np.max(np.abs(current - pose)):.3g}"
        raise CalibrationError(f"the robot did not hold the pose within {p['pose_tolerance']:g} rad | m for "
                               f"{p['settle_s']:g} s within {p['timeout_s']:g} s ({seen})")

    def _wait_at_rest(self, pose: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        """Wait until every joint velocity of ``joint_states`` stays at most ``rest.velocity`` for ``rest.hold_s``
        of stream time (at most ``rest.timeout_s`` wall); returns the pose reported then.

        Raises:
            CalibrationError: joint_states carries no velocities, or the robot did not come to rest in time (the
                largest velocity seen last, and the target pose).
        """
        deadline, rest_since, speed = time.monotonic() + p["rest.timeout_s"], None, None
        self._say(f"waiting until the robot rests at {np.round(pose, 6).tolist()} (|qd| <= {p['rest.velocity']:g} "
                  f"for {p['rest.hold_s']:g} s)")
        started = report_at = time.monotonic()
        while time.monotonic() < deadline:
            with self.lock:
                current, stamp, velocity = self.pose, self.pose_stamp, self.velocity
            if velocity is None:
                raise CalibrationError(f"{self.node.resolve_name('joint_states')} carries no velocities: the rest "
                                       "wait needs them (parameter 'rest.hold_s': set 0 to excite without it)")
            speed = float(np.max(np.abs(velocity)))
            if time.monotonic() >= report_at + REST_REPORT_S:
                report_at = time.monotonic()
                self._say(f"still moving after {report_at - started:.0f} s: |qd| {speed:.3g} at stream time "
                          f"{stamp:.1f} s")
            if speed <= p["rest.velocity"]:
                rest_since = stamp if rest_since is None else rest_since
                if stamp - rest_since >= p["rest.hold_s"]:
                    self._say(f"at rest after {time.monotonic() - started:.1f} s (|qd| {speed:.3g})")
                    return current
            else:
                rest_since = None
            time.sleep(0.01)
        raise CalibrationError(f"the robot did not come to rest at {np.round(pose, 6).tolist()} within "
                               f"{p['rest.timeout_s']:g} s (parameter 'rest.timeout_s'): largest joint velocity "
                               f"{speed:.3g} rad/s | m/s, expected at most {p['rest.velocity']:g} (rest.velocity) for "
                               f"{p['rest.hold_s']:g} s (rest.hold_s)")

    def excite(self) -> None:
        """Start the record at the newest encoder sample, or with ``use_sim_time`` at the simulated time of
        ``/clock`` if later (on a busy machine the received samples lag the simulator, whose excitation starts at its
        own time: a record from the last received sample would hold less of the response), then excite
        (``excitation.type``)."""
        p = self.settings
        with self.lock:
            if self.stamp is None:
                raise CalibrationError(f"no encoder samples on {self.node.resolve_name('motor_states')}")
            start = max(self.stamp, self.node.now()) if self.node.use_sim_time else self.stamp
            self.record_from, self.samples = start, []
        if p["excitation.type"] == "service":
            name = p["excitation.service"]
            client = self.clients.get(name) or self.clients.setdefault(
                name, self.node.create_client(self.node.types.std_srvs.srv.Trigger, name))
            if not client.wait_for_service(timeout_sec=p["timeout_s"]):
                raise CalibrationError(f"excitation service {name} is not up within {p['timeout_s']:g} s")
            response = self.node.call(client, self.node.types.std_srvs.srv.Trigger.Request(), p["timeout_s"])
            if response is None or not response.success:
                raise CalibrationError(f"excitation service {name} refused: "
                                       f"{'no answer' if response is None else response.message}")

    def measure_modes(self) -> list[MeasuredMode]:
        """The modes of ``record_s`` seconds of encoder samples from the excitation on, their mean removed; with
        ``excitation.type`` 'service' from the blow's onset found in the samples
        (:func:`~flexrobot_ros.oma.onset.impulse_onset`): the blow lands when the request reaches the exciter, after
        the record began, and the motors' creep toward their set point ahead of it hid the LWR4's 2.7 and 2.9 Hz
        modes from SSI-cov."""
        p, rate = self.settings, self.p["sample_rate_hz"]
        begin = self.record_from
        record = self._collect(begin + p["record_s"], p)
        if p["excitation.type"] == "service":
            onset = impulse_onset(np.array([q for _, q, _ in record]))
            if onset is not None and record[onset][0] > begin:
                begin = record[onset][0]
                record = self._collect(begin + p["record_s"], p)
        record = [sample for sample in record if begin <= sample[0] <= begin + p["record_s"] + 0.5 / rate]
        data = np.array([v for _, v, _ in record])
        expected = int(round(p["record_s"] * rate))
        if len(data) < 0.95 * expected:
            raise CalibrationError(f"{self.node.resolve_name('motor_states')}: {len(data)} samples in the "
                                   f"{p['record_s']:g} s record, expected {expected} at {rate:g} Hz (samples lost)")
        self.record = record
        result = identify_modes(data - data.mean(axis=0), rate, p["oma.method"], p["oma.orders"] or None,
                                channels=self.robot.joint_names)
        return [MeasuredMode(m.frequency_hz, m.damping_ratio, np.asarray(m.shape)) for m in result.modes
                if m.frequency_hz > 0 and 0.0 <= m.damping_ratio < 1.0]

    def _collect(self, until: float, p: dict[str, Any]) -> list[tuple[float, np.ndarray, np.ndarray | None]]:
        """The samples recorded so far once one is stamped at ``until`` [s] or later (at most ``timeout_s``).

        Raises:
            CalibrationError: the samples did not reach ``until`` in time.
        """
        deadline = time.monotonic() + p["timeout_s"]
        while time.monotonic() < deadline:
            with self.lock:
                if self.samples and self.samples[-1][0] >= until:
                    return list(self.samples)
            time.sleep(0.02)
        raise CalibrationError(f"{self.node.resolve_name('motor_states')}: {len(self.samples)} samples of the "
                               f"{p['record_s']:g} s record arrived within {p['timeout_s']:g} s")

    def motor_velocities(self) -> np.ndarray:
        """The motor velocities [rad/s] of the record :meth:`measure_modes` analysed: ``motor_states`` velocities,
        or the positions differentiated over their stamps where a message carries none."""
        stamps = np.array([s for s, _, _ in self.record])
        if all(v is not None for _, _, v in self.record):
            return np.array([v for _, _, v in self.record])
        positions = np.array([q for _, q, _ in self.record])
        return np.gradient(positions, stamps, axis=0)


def main(argv: list[str] | None = None) -> int:
    """Console script ``calibration_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(CalibrationNode, "calibration_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
