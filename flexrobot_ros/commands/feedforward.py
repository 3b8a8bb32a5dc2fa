"""``flexrobot feedforward ROBOT --trajectory FILE.yaml --out FILE.csv``: motor references and torques.

The trajectory YAML is ``{profile: poly9, duration: T, q0: [...], qf: [...]}`` or
``{waypoints: [{t: .., q: [...], qd: [...], qdd: [...]}, ...], degree: 9}`` (see
:func:`flexrobot_ros.dynamics.trajectory.trajectory_from_dict`). The CSV has a column ``<quantity>.<joint>`` for q,
qd, qdd, q3, q4, tau, dtau, ddtau, q_m, qd_m, qdd_m and tau_m (SI units); ``--json`` prints ``robot``, ``tool``,
``method``, ``joint_names``, ``t`` and the same quantities as (samples x joints) arrays, and ``shaping`` (the
shaper, per mode its kind, frequency [Hz], damping ratio and participation, the added move time [s]).
``--shaper zv|zvd|ei|auto`` shapes the reference first (:func:`flexrobot_ros.shaping.shape_reference`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from flexrobot_ros.commands.arguments import LINK_MODELS, CommandError, add_link_model_arguments, output_file
from flexrobot_ros.dynamics.feedforward_names import METHODS, QUANTITIES
from flexrobot_ros.dynamics.shaper_names import DEFAULT_FREQUENCY_ERROR, SHAPERS
from flexrobot_ros.timeseries import write_timeseries

#: Quantities of the CSV and of ``--json``, (samples x joints) each.
JSON_KEYS = QUANTITIES


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "feedforward", help="motor references q_m and motor torques tau_m that make an elastic robot follow a "
                            "link trajectory (EJNEA or SDRNEA, the thesis' chapter 4)",
        description="Motor references q_m [rad] and motor torques tau_m [N m] that make a robot with elastic joints "
                    "follow a link trajectory, written as a CSV or NPZ time series.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--trajectory", type=Path, required=True, help="trajectory YAML (poly9 profile or waypoints)")
    parser.add_argument("--method", choices=METHODS,
                        help="inverse-dynamics algorithm: sdrnea: generated C code, compiled once per robot and "
                             "cached (default for elastic joints on rigid links); ejnea: numeric recursion; dae: "
                             "robots with extra elasticities (BDF or optimization, after Moberg & Hanssen); "
                             "prescribed: any robot, the flexible links' deformations and extra elasticities "
                             "integrated along the joint motion (default for robots with flexible links or rigid joints); rigid: the rigid-robot "
                             "baseline (links and joints rigid, motor reference = link reference)")
    parser.add_argument("--rate", type=float, default=1000.0, help="sampling rate [Hz] (default 1000)")
    parser.add_argument("--out", type=Path, required=True, help="output time series (.csv or .npz)")
    parser.add_argument("--plot", type=Path, help="also write a PNG figure (q, deflection, tau, tau_m)")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    parser.add_argument("--shaper", choices=SHAPERS, default="none",
                        help="input shaping of the reference for the dominant modes the model predicts along the "
                             "motion (pose-scheduled): zv, zvd, ei (5 %% vibration tolerance), auto (the shortest "
                             "that stays within 5 %% over +- --shaper-frequency-error), none (default)")
    parser.add_argument("--shaper-frequency-error", type=float, default=DEFAULT_FREQUENCY_ERROR, metavar="E",
                        help="relative frequency error the auto shaper is robust to (default 0.1: +-10 %%)")
    parser.add_argument("--json", action="store_true", help="print the arrays as JSON on stdout")
    links = parser.add_argument_group("flexible links (robots with a flexible_links section; method prescribed)")
    add_link_model_arguments(links)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.dynamics.feedforward import default_method, feedforward  # casadi, pinocchio, scipy
    from flexrobot_ros.dynamics.trajectory import load_trajectory
    from flexrobot_ros.model import load_robot
    from flexrobot_ros.model.flexible_robot import torque_or_force

    output_file(args.out, "--out", (".csv", ".npz"))
    output_file(args.plot, "--plot", (".png",))
    robot = load_robot(args.robot, tool=args.tool)
    link_model = {"method": LINK_MODELS.get(args.link_model), "modes": args.modes, "elements": args.elements}
    if any(value is not None for value in link_model.values()):
        if not robot.flexible_links:
            raise CommandError(f"robot {robot.name}: --link-model/--link-modes/--link-elements need flexible links")
        if (args.method or default_method(robot)) != "prescribed":
            raise CommandError(f"--link-model/--link-modes/--link-elements: the link discretization of method "
                               f"'prescribed'; method {args.method or default_method(robot)!r} does not integrate "
                               "the link deformations")
    trajectory = load_trajectory(args.trajectory)
    start = time.perf_counter()
    shaping = None
    if args.shaper != "none":
        from flexrobot_ros.shaping import shape_reference

        shaping = shape_reference(robot, trajectory, args.shaper, frequency_error=args.shaper_frequency_error)
        trajectory = shaping.trajectory
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        result = feedforward(robot, trajectory, args.method, rate_hz=args.rate, link_model=link_model)
    elapsed = time.perf_counter() - start
    for warning in caught:
        print(f"flexrobot feedforward: warning: {warning.message}", file=sys.stderr)
    write_timeseries(args.out, result.t, result.columns())
    if args.plot is not None:
        from flexrobot_ros.dynamics.feedforward_plot import plot_feedforward

        plot_feedforward(result, args.plot, robot.transmission)
    if args.json:
        payload = {"robot": robot.name, "tool": robot.tool is not None, "method": result.method, "joint_names": list(result.joint_names),
                   "t": result.t.tolist(), **{key: getattr(result, key).tolist() for key in JSON_KEYS},
                   "shaping": shaping.summary() if shaping is not None else {"shaper": "none", "added_time_s": 0.0}}
        print(json.dumps(payload))
        return 0
    print(f"wrote {args.out}: {len(result.t)} samples x {robot.n} joints of robot {robot.name} "
          f"({result.method}, {elapsed:.3f} s)" + (f", plot {args.plot}" if args.plot else ""))
    if shaping is not None:
        modes = ", ".join(f"{m['kind']} at {m['frequency_hz']:.2f} Hz ({100 * m['damping_ratio']:.1f} %)"
                          for m in shaping.summary()["modes"])
        print(f"shaper {args.shaper}: {modes} (modes at the end pose); added move time {shaping.added_time_s:.3f} s")
    print(f"{'joint':<12}{'max|tau|':>10}    {'max|tau_m|':>10}    {'max|q_m-Wq|':>11}")
    deflection = abs(result.q_m - robot.transmission * result.q).max(axis=0)
    for j, (name, kind) in enumerate(zip(result.joint_names, robot.joint_types)):
        print(f"{name:<12}{abs(result.tau[:, j]).max():>10.4g} {torque_or_force(kind):<3}"
              f"{abs(result.tau_m[:, j]).max():>10.4g} N m{deflection[j]:>12.4g} rad")
    return 0
