"""``flexrobot bringup simulation|hardware ROBOT --calibrate``: one self-calibration during the bring-up (issue 26).

calibration_node (:mod:`flexrobot_ros.nodes.calibration_node`) starts beside the other nodes with the
``calibration_node`` section of the parameter file (poses, excitation, record length). In simulation the simulator
runs ``--true-yaml FILE`` when given (the robot as built) while every other node runs the nominal ROBOT, and the
simulator's own periodic excitation is off (the calibration strikes it at each pose). The bring-up calls
``/calibration_node/calibrate`` once, echoes ``calibration/progress`` on stderr, waits for the latched
``calibration/report`` (the node times out each pose itself; Ctrl-C stops the wait) and the summary prints it:
identified parameters (nominal, calibrated, change, standard deviation), those kept at nominal and why, and per pose
and measured mode the frequency and damping ratio measured, predicted before (nominal) and after (calibrated); a
refused calibration (the calibrated model misses a measured mode it was fitted to: nothing written or pushed) says
so with each mode missed, and the poses left out (a motor friction no linear model holds) with the reason.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

from flexrobot_ros.text_table import MISSING, Column, table

NODE = "calibration_node"
#: Simulator parameters during a calibration bring-up: the calibration excites the robot itself.
SIMULATOR_OVERRIDES = {"excitation.type": "none"}


class CalibrationRun:
    """The bring-up node's side of one calibration: the service client, progress echo and the latched report."""

    def __init__(self, node: Any, namespace: str | None) -> None:
        from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED

        types = node.types
        prefix = f"{(namespace or '').rstrip('/')}/{NODE}"
        self.node, self.report = node, None
        self.client = node.create_client(types.std_srvs.srv.Trigger, f"{prefix}/calibrate")
        node.create_subscription(types.std_msgs.msg.String, "calibration/progress", self._on_progress,
                                 QOS_DEFAULT.with_depth(100))
        node.create_subscription(types.std_msgs.msg.String, "calibration/report", self._on_report, QOS_LATCHED)

    @staticmethod
    def _on_progress(msg: Any) -> None:
        print(f"[calibration] {msg.data}", file=sys.stderr, flush=True)

    def _on_report(self, msg: Any) -> None:
        self.report = json.loads(msg.data)

    def run(self, call: Callable[[Any, Any], Any], alive: Callable[[], bool]) -> str:
        """Call ``~/calibrate`` (with the bring-up's ``call``) and wait while ``alive()`` for the report; returns
        why it ended ('calibrated', 'calibration refused: ...', 'stopped')."""
        response = call(self.client, self.node.types.std_srvs.srv.Trigger.Request())
        if response is None or not response.success:
            return "calibration refused: " + ("no answer" if response is None else response.message)
        while alive() and self.report is None:
            self.node.spin_once(0.05)
        return "calibrated" if self.report is not None else "stopped"


def _value(value: Any, scale: float = 1.0, width: int = 10, digits: int = 4) -> str:
    return f"{'-':>{width}}" if value is None else f"{scale * value:>{width}.{digits}f}"


def format_calibration(report: dict[str, Any] | None) -> list[str]:
    """The calibration report as summary lines (SI units; damping ratios in %)."""
    if report is None:
        return ["\ncalibration: no report (stopped before it finished, or the calibration node failed: see its "
                "output above)"]
    lines = [f"\ncalibration: {'succeeded' if report.get('success') else 'FAILED'}; "
             f"{report.get('poses_measured', 0)} poses measured"]
    if report.get("error"):
        lines.append(f"  error: {report['error']}")
    if report.get("failure"):
        lines.append(f"  stopped at {report['failure']}")
    tolerances = report.get("tolerances") or {}
    if report.get("refusal"):
        limits = (f" (tolerance {100 * tolerances['frequency_relative']:.3g} % in frequency, "
                  f"{100 * tolerances['damping_ratio_absolute']:.3g} points in damping)") if tolerances else ""
        lines.append(f"  REFUSED{limits}: nothing written, nothing pushed")
        lines += [f"    {reason}" for reason in report["refusal"]]
    for pose, why in (report.get("poses_left_out") or {}).items():
        lines.append(f"  pose {pose} left out: {why}")
    if report.get("parameters"):
        if not report.get("accepted", True):
            lines.append("  the estimate (not applied):")
        lines += table([Column("parameter", align="<"), Column("nominal"), Column("calibrated"),
                        Column("change [%]"), Column("std"), Column("unit", align="<")],
                       [[p["name"], f"{p['nominal']:.6g}", f"{p['value']:.8g}",
                         f"{100 * (p['value'] / p['nominal'] - 1):.2f}" if p["nominal"] else MISSING,
                         MISSING if p["std"] is None else f"{p['std']:.3g}", p["unit"]]
                        for p in report["parameters"]], indent="  ")
    lines += [f"  {name}: kept at its nominal value ({why})" for name, why in report.get("kept_nominal", {}).items()]
    for i, friction in enumerate(report.get("motor_friction") or []):
        if friction is not None:
            lines.append(f"  pose {i + 1}: motor friction " + ", ".join(
                f"{regime} {100 * inside:.0f} %" for regime, inside in zip(friction["regime"],
                                                                         friction["inside_fraction"]))
                + f" inside |qd_m| < {friction['width']:g} rad/s (joint order)")
    if report.get("modes"):
        lines.append("  pose  mode  f meas [Hz]  f before [Hz]  err [%]  f after [Hz]  err [%]  zeta meas [%]  "
                     "before [%]  after [%]")
        for m in report["modes"]:
            measured = m["measured_frequency_hz"]
            errors = [None if m[key] is None else m[key] / measured - 1.0
                      for key in ("before_frequency_hz", "after_frequency_hz")]
            lines.append(f"  {m['pose'] + 1:>4}  {m['mode'] + 1:>4}  {measured:>11.4f}  "
                         f"{_value(m['before_frequency_hz'], width=13)}  {_value(errors[0], 100, 7, 3)}  "
                         f"{_value(m['after_frequency_hz'], width=12)}  {_value(errors[1], 100, 7, 3)}  "
                         f"{_value(m['measured_damping_ratio'], 100, 13, 3)}  "
                         f"{_value(m['before_damping_ratio'], 100, 10, 3)}  "
                         f"{_value(m['after_damping_ratio'], 100, 9, 3)}")
    for name, path in report.get("files", {}).items():
        lines.append(f"  {name}: {path}")
    names = ", ".join(report.get("pushed_values", {})) or "values"
    for target, (ok, reason) in report.get("pushed", {}).items():
        lines.append(f"  {target}: {f'calibrated {names} set' if ok else f'refused the calibrated {names}: ' + reason}")
    lines += [f"  warning: {w}" for w in report.get("warnings", [])]
    return lines


__all__ = ["CalibrationRun", "NODE", "SIMULATOR_OVERRIDES", "format_calibration"]
