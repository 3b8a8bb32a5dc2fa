"""Figures of the rigid-body identification (matplotlib, Agg): the excitation and the torque fit.

* ``excitation.png``: q [rad], qd [rad/s], qdd [rad/s^2] of every joint over one period, limits dashed.
* ``tool_path.png``: the tool frame's origin [m] over one period in the base x-z and x-y planes, workspace box.
* ``torque_fit.png``: per fitted joint the measured (filtered) motor torque and the identified model's [N m | N]
  over time, and the residual [N m | N]; ``parameters.png``: the base parameters with their relative standard
  deviations [%].
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.identification.excitation import ExcitationDesign
from flexrobot_ros.identification.rigid_body import RigidIdentification
from flexrobot_ros.model.flexible_robot import torque_or_force


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_excitation(robot: Any, design: ExcitationDesign, directory: str | Path, workspace: Any = None
                    ) -> list[Path]:
    """Write ``excitation.png`` and ``tool_path.png`` (with the ``workspace`` box ((x, y, z)_min, (x, y, z)_max) [m]
    when given) into ``directory``; returns their paths."""
    plt = _pyplot()
    directory = Path(directory)
    trajectory = design.trajectory
    t = np.linspace(0.0, trajectory.period, 500)
    values = trajectory.evaluate(t)
    figure, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 7))
    limits = (None, robot.velocity_limits, None)
    for axis, value, label, limit in zip(axes, values, ("q [rad]", "qd [rad/s]", "qdd [rad/s^2]"), limits):
        for j, name in enumerate(robot.joint_names):
            line, = axis.plot(t, value[:, j], label=name)
            if limit is not None:
                axis.axhline(limit[j], color=line.get_color(), linestyle="--", linewidth=0.7)
                axis.axhline(-limit[j], color=line.get_color(), linestyle="--", linewidth=0.7)
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].set_title(f"{robot.name}: Fourier excitation, cond(A) = {design.condition:.3g} "
                      f"(random: {design.random_condition:.3g})")
    axes[-1].set_xlabel("t [s]")
    first = directory / "excitation.png"
    figure.tight_layout()
    figure.savefig(first, dpi=120)
    plt.close(figure)

    data, frame = robot.create_data(), robot.frame_id(robot.tool_frame)
    path = []
    for q in values[0]:
        pin.framesForwardKinematics(robot.model, data, q)
        path.append(data.oMf[frame].translation.copy())
    path = np.array(path)
    figure, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    for axis, (a, b) in zip(axes, ((0, 2), (0, 1))):
        axis.plot(path[:, a], path[:, b])
        if workspace is not None:
            (low, high) = (np.asarray(v, dtype=float) for v in workspace)
            axis.plot([low[a], high[a], high[a], low[a], low[a]], [low[b], low[b], high[b], high[b], low[b]], "k--",
                      linewidth=0.8, label="workspace")
            axis.legend(fontsize=8)
        axis.set_xlabel(f"{'xyz'[a]} [m]")
        axis.set_ylabel(f"{'xyz'[b]} [m]")
        axis.set_aspect("equal")
        axis.grid(alpha=0.3)
    second = directory / "tool_path.png"
    figure.suptitle(f"{robot.name}: path of {robot.tool_frame} (base frame)")
    figure.tight_layout()
    figure.savefig(second, dpi=120)
    plt.close(figure)
    return [first, second]


def plot_rigid_fit(robot: Any, result: RigidIdentification, directory: str | Path) -> list[Path]:
    """Write ``torque_fit.png`` and ``parameters.png`` into ``directory``; returns their paths."""
    plt = _pyplot()
    directory = Path(directory)
    # the records one after the other on one time axis (each record's kept rows, filtered as in the fit)
    fitted = result.fitted(robot)
    times, measured, predicted, offset = [], [], [], 0.0
    for record in result.records:
        times.append(record.row_times - record.t[0] + offset)
        measured.append(record.measured_torques()[:, fitted])
        predicted.append(result.predict(robot, record))
        offset += record.t[-1] - record.t[0]
    t, measured, predicted = np.concatenate(times), np.vstack(measured), np.vstack(predicted)
    n = len(fitted)
    figure, axes = plt.subplots(n, 2, sharex=True, figsize=(11, 2.4 * n), squeeze=False)
    for j, (index, name) in enumerate(zip(fitted, result.joint_names)):
        unit = torque_or_force(robot.joint_types[index])
        axes[j, 0].plot(t, measured[:, j], label="measured (filtered)")
        axes[j, 0].plot(t, predicted[:, j], "--", label="identified model")
        axes[j, 0].set_ylabel(f"{name} tau [{unit}]")
        axes[j, 1].plot(t, measured[:, j] - predicted[:, j], color="tab:red")
        axes[j, 1].set_ylabel(f"{name} residual [{unit}]")
        for axis in axes[j]:
            axis.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    for axis in axes[-1]:
        axis.set_xlabel("t [s]")
    first = directory / "torque_fit.png"
    figure.tight_layout()
    figure.savefig(first, dpi=120)
    plt.close(figure)

    names = result.base.base_names()
    figure, axis = plt.subplots(figsize=(8, 0.3 * len(names) + 1.5))
    relative = 100 * np.minimum(result.relative_std, 1e3)
    axis.barh(range(len(names)), relative)
    axis.set_yticks(range(len(names)), [f"{name} = {value:.4g}" for name, value in zip(names, result.beta)],
                    fontsize=7)
    axis.set_xscale("log")
    axis.set_xlabel("relative standard deviation [%]")
    axis.invert_yaxis()
    axis.grid(alpha=0.3)
    second = directory / "parameters.png"
    figure.tight_layout()
    figure.savefig(second, dpi=120)
    plt.close(figure)
    return [first, second]


__all__ = ["plot_excitation", "plot_rigid_fit"]
