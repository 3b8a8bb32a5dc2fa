"""rigid_identification_node: records motor positions and torques and identifies the rigid-body base parameters.

Subscribes ``motor_states`` (sensor_msgs/JointState: position = motor position after the gear q_m [rad], effort =
motor torque tau_m [N m], the robot's joints by name; what simulator_node publishes) and ``joint_states`` (link
positions q [rad], used with ``link_side: joint_states``), and keeps the last ``buffer_s`` seconds of samples
(a stamp that jumps back starts a new record).

Services (std_srvs/Trigger; results go to the files and the response message): ``~/identify_rigid`` identifies
the base parameters, rotor inertias and friction from the buffered samples
(:func:`flexrobot_ros.identification.rigid_body.identify_rigid_body`: ``cutoff_hz`` parallel low-pass, link
side by ``link_side``: ``deflection`` = q_m minus the joint deflection through the flexibility YAML,
``joint_states`` = the link encoders, ``rigid`` = q_m as it is) and writes, inside ``output_directory``
(:mod:`flexrobot_ros.nodes.output_files`; a file it would replace is kept as ``<name>.<k>.bak``),
``report_file`` (the JSON of ``flexrobot identify-rigid --json``) and ``identified_yaml`` (copy of the flexibility
YAML with the rotor inertias and friction, the URDF with the identified link inertias beside it). The samples are
resampled onto a uniform grid from the first to the last stamp at about their median interval (linear
interpolation; the link positions at the motor stamps) before the low-pass. ``~/reset`` empties the buffer.

Parameters are read when a service runs, except ``robot``, ``tool`` and ``output_directory`` (read-only).
"""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from flexrobot_ros.errors import IdentificationError
from flexrobot_ros.identification.rigid_body import RigidRecord, identify_rigid_body
from flexrobot_ros.identification.rigid_export import standard_from_base, write_identified_robot
from flexrobot_ros.nodes.convert import answer, joint_values, ordered_stamp, reporting
from flexrobot_ros.nodes.live_parameters import LiveParameters
from flexrobot_ros.nodes.output_files import keep_previous, output_path
from flexrobot_ros.nodes.robot_description import PARAMETERS as URDF_PARAMETERS, load_node_robot
from flexrobot_ros.runtime import QOS_DEFAULT, ParameterSpec, run_node

PARAMETERS = (
    ParameterSpec("robot", "kr90", "shipped robot name or path of a flexibility YAML", read_only=True),
    ParameterSpec("tool", False, "add the tool described in the flexibility YAML", read_only=True),
    *URDF_PARAMETERS,
    ParameterSpec("queue_depth", 10000, "motor_states samples queued between spins", range=(10, 10**7),
                  read_only=True),
    ParameterSpec("buffer_s", 600.0, "samples kept: the last buffer_s seconds of motor_states [s]",
                  range=(1.0, 36000.0)),
    ParameterSpec("cutoff_hz", 5.0, "zero-phase Butterworth low-pass of the regressor and the torques (parallel "
                  "filtering; the positions at 3x before differentiation) [Hz]",
                  range=(0.01, 10000.0)),
    ParameterSpec("link_side", "deflection", "link positions: motor positions minus the joint deflection through "
                  "the flexibility YAML ('deflection'), the link encoders of joint_states ('joint_states') or the "
                  "motor positions as they are ('rigid')", choices=("deflection", "joint_states", "rigid")),
    ParameterSpec("output_directory", "", "the only folder the services write into (empty: $ROS_HOME/flexrobot/"
                  "<launch date-time>_<launcher PID>)", read_only=True),
    ParameterSpec("report_file", "rigid_identification.json", "JSON report of ~/identify_rigid (in "
                  "output_directory)"),
    ParameterSpec("identified_yaml", "rigid_identified.yaml", "flexibility YAML ~/identify_rigid writes (in "
                  "output_directory; the URDF beside it, same stem)"),
)


class RigidIdentificationNode:
    """The rigid-body identification node (see the module docstring for its interface)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        live = self.live = LiveParameters(node, PARAMETERS)
        p = self.p = live.values
        self.robot = load_node_robot(node, p)
        self.motor: deque[tuple[float, np.ndarray, np.ndarray]] = deque()
        self.link: deque[tuple[float, np.ndarray]] = deque()
        joint_state = node.types.sensor_msgs.msg.JointState
        queue = QOS_DEFAULT.with_depth(p["queue_depth"])
        node.create_subscription(joint_state, "motor_states", live.locked(self.on_motor_states), queue)
        node.create_subscription(joint_state, "joint_states", live.locked(self.on_joint_states), queue)
        trigger = node.types.std_srvs.srv.Trigger
        for name, action in (("~/identify_rigid", self._identify), ("~/reset", self._reset)):
            node.create_service(trigger, name,
                                live.locked(lambda request, response, act=action: answer(response, act)))
        live.on_change(lambda values, changed: None)  # nothing to prepare: the services read the values
        node.logger.info(f"rigid-body identification of {self.robot.name}: recording "
                         f"{node.resolve_name('motor_states')}")

    def on_motor_states(self, msg: Any) -> None:
        with reporting(self.node, "motor_states"):
            stamp = ordered_stamp(msg, self.motor[-1][0] if self.motor else None, lambda *_: self._reset())
            joints = self.robot.joint_names
            self.motor.append((stamp, joint_values(msg, joints), joint_values(msg, joints, "effort")))
            while stamp - self.motor[0][0] > self.p["buffer_s"]:
                self.motor.popleft()

    def on_joint_states(self, msg: Any) -> None:
        with reporting(self.node, "joint_states"):
            stamp = ordered_stamp(msg, self.link[-1][0] if self.link else None, lambda *_: self.link.clear())
            self.link.append((stamp, joint_values(msg, self.robot.joint_names)))
            while stamp - self.link[0][0] > self.p["buffer_s"]:
                self.link.popleft()

    # ------------------------------------------------------------------ services
    def _identify(self) -> str:
        record = self._record()
        result = identify_rigid_body(self.robot, record, cutoff_hz=self.p["cutoff_hz"],
                                     elasticity=self.p["link_side"] != "rigid")
        report, out = self._output("report_file"), self._output("identified_yaml")
        report.parent.mkdir(parents=True, exist_ok=True)
        kept = "".join(keep_previous(path) for path in (report, out, out.with_suffix(".urdf")))
        description = (f"rigid_identification_node: {len(record.t)} samples of {record.source} over "
                       f"{record.t[-1]:.3f} s, low-pass {self.p['cutoff_hz']:g} Hz, link side: "
                       f"{result.link_side}")
        exported = write_identified_robot(self.robot, result, standard_from_base(self.robot, result), out,
                                          description)
        for line in exported.warnings:
            self.node.logger.warning(line)
        summary = {"robot": self.robot.name, "tool": self.robot.tool is not None, "records": [description],
                   **result.to_dict(), "files": [str(exported.yaml), str(exported.urdf)],
                   "export": exported.to_dict()}
        report.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        worst = max(100 * result.residual_rms / result.torque_peak)
        warned = "".join(f"\n  warning: {line}" for line in exported.warnings)
        return (f"{report}, {out}: {result.base.count} base parameters from {len(record.t)} samples, cond(A) = "
                f"{result.condition:.4g}, largest residual rms {worst:.3g} % of the peak torque; "
                f"{len(exported.changes)} values changed (listed in {out.name})" + warned + kept)

    def _reset(self) -> str:
        self.motor.clear()
        self.link.clear()
        return "buffer emptied"

    # ------------------------------------------------------------------ helpers
    def _record(self) -> RigidRecord:
        """The buffered samples on a uniform grid (module docstring)."""
        topic = self.node.resolve_name("motor_states")
        if len(self.motor) < 11:
            raise IdentificationError(f"{len(self.motor)} samples of {topic} buffered; record an excitation first")
        stamps = np.array([sample[0] for sample in self.motor])
        intervals = int(round((stamps[-1] - stamps[0]) / float(np.median(np.diff(stamps)))))
        t = np.linspace(stamps[0], stamps[-1], intervals + 1)

        def resampled(times: np.ndarray, values: np.ndarray) -> np.ndarray:
            return np.column_stack([np.interp(t, times, column) for column in values.T])

        q_m = resampled(stamps, np.array([sample[1] for sample in self.motor]))
        tau = resampled(stamps, np.array([sample[2] for sample in self.motor]))
        q_link = None
        if self.p["link_side"] == "joint_states":
            link_stamps = np.array([sample[0] for sample in self.link])
            if len(self.link) < 2 or link_stamps[0] > t[0] or link_stamps[-1] < t[-1]:
                raise IdentificationError(
                    f"link_side joint_states: {self.node.resolve_name('joint_states')} does not cover the "
                    f"{topic} record ({t[0]:.3f}..{t[-1]:.3f} s); {len(self.link)} samples buffered")
            q_link = resampled(link_stamps, np.array([sample[1] for sample in self.link]))
        return RigidRecord(t - t[0], q_m, tau, topic, q_link=q_link)

    def _output(self, parameter: str) -> Path:
        return output_path(self.p["output_directory"], self.p[parameter], parameter)


def main(argv: list[str] | None = None) -> int:
    """Console script ``rigid_identification_node`` (ROS 2 arguments after ``--ros-args``)."""
    return run_node(RigidIdentificationNode, "rigid_identification_node", argv)


if __name__ == "__main__":
    raise SystemExit(main())
