"""``flexrobot identify ROBOT --modal-data FILE.yaml``: joint stiffness/damping from modes measured at several poses.

Writes the identified flexibility YAML (``--out``, only the identified fields change) and, beside it, a text
report, a JSON report and a PNG of measured vs predicted modes (``<out>.report.txt|json|png``). The modal-data
format is described in :mod:`flexrobot_ros.identification.modal_data`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flexrobot_ros.commands.arguments import CommandError, output_file


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "identify", help="identify joint stiffness and damping from modal data at several poses (seed 000 ch. 3)",
        description="Identify joint stiffness and damping from the modes measured at several poses (the "
                    "thesis' inverse eigenvalue method) and write the identified flexibility YAML.")
    parser.add_argument("robot", help="shipped robot name or path to a flexibility YAML")
    parser.add_argument("--modal-data", required=True, type=Path,
                        help="YAML: poses: [{q: [...], modes: [{frequency_hz, damping_ratio, shape?}, ...]}, ...]")
    parser.add_argument("--params", default="k,d_f,d_fm",
                        help="unknowns: k, d_f, d_fm, optionally per joint, e.g. 'k,d_f:joint1+joint2' "
                             "(default: k,d_f,d_fm)")
    parser.add_argument("--starts", type=int, default=40, help="random starts of the local solver (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random starts (default 0)")
    parser.add_argument("--bounds", default=None,
                        help="KIND[:JOINT]=LOW:HIGH,... e.g. 'k=0:5000,d_f=0:100,d_fm=0:100' (default: k in "
                             "[k_yaml/5, 5 k_yaml], damping in [0, 5 d_yaml])")
    parser.add_argument("--residual", choices=("determinant", "eigenvalue"), default="determinant",
                        help="minimize the scaled determinants of the thesis' eq. 3.31 (default, the thesis method) or "
                             "the matched relative eigenvalue errors (more robust when the modes are widely spread: "
                             "unmeasured modes far above the measured band, such as the Scompi's wrist modes, give "
                             "the determinant objective spurious minima)")
    parser.add_argument("--tool", action="store_true", help="the robot carried its tool during the measurements")
    parser.add_argument("--out", type=Path, default=None,
                        help="identified flexibility YAML to write (default: <robot>_identified.yaml)")
    parser.add_argument("--workers", default="1", help="processes for the starts: a number or 'auto' (default 1)")
    parser.add_argument("--match-tolerance", type=float, default=0.3,
                        help="largest relative frequency distance between a measured and a model mode (default 0.3)")
    parser.add_argument("--mac-threshold", type=float, default=0.5,
                        help="smallest MAC for a measured mode with a shape (default 0.5)")
    parser.add_argument("--drop-unmatched", action="store_true",
                        help="leave out measured modes that match no model mode (spurious OMA modes) instead of "
                             "refusing the data")
    parser.add_argument("--frequency-std", type=float, default=0.005,
                        help="relative frequency uncertainty per mode for the confidence figures (default 0.005)")
    parser.add_argument("--damping-std", type=float, default=0.005,
                        help="damping-ratio uncertainty per mode, a fraction (default 0.005 = 0.5 points)")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of the text report")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.identification import identify_joint_parameters, read_modal_data
    from flexrobot_ros.identification.flexibility_update import identified_fields, write_identified_yaml
    from flexrobot_ros.identification.parameters import parse_bounds
    from flexrobot_ros.identification.report import plot_identification, text_report, write_json
    from flexrobot_ros.model import load_robot

    if args.workers != "auto" and not (args.workers.isdigit() and int(args.workers) >= 1):
        raise CommandError(f"--workers: expected a number of processes (1, 2, ...) or 'auto', got {args.workers!r}")
    workers = args.workers if args.workers == "auto" else int(args.workers)
    if args.starts < 1:
        raise CommandError(f"--starts: expected at least 1, got {args.starts}")
    robot = load_robot(args.robot, tool=args.tool)
    out = output_file(args.out or Path(f"{robot.name}_identified.yaml"), "--out", (".yaml", ".yml"))
    data = read_modal_data(args.modal_data)

    interactive = sys.stderr.isatty()

    def progress(done: int, total: int, best: float) -> None:
        if interactive:
            print(f"\rstart {done}/{total}, best objective {best:.4g}", end="\n" if done == total else "",
                  file=sys.stderr, flush=True)
        elif done == total or done % max(1, total // 4) == 0:
            print(f"start {done}/{total}, best objective {best:.4g}", file=sys.stderr, flush=True)

    result = identify_joint_parameters(
        robot, data, args.params, bounds=parse_bounds(args.bounds), starts=args.starts, seed=args.seed,
        residual=args.residual,
        workers=workers, frequency_tolerance=args.match_tolerance, mac_threshold=args.mac_threshold,
        frequency_std=args.frequency_std, damping_std=args.damping_std, drop_unmatched=args.drop_unmatched,
        progress=progress)
    description = (f"from modal data {args.modal_data.resolve()} ({result.identifiability.n_eigenvalues} modes at "
                   f"{result.identifiability.n_poses} poses), unknowns {args.params}, {args.residual} residuals, "
                   f"{args.starts} starts, "
                   f"objective F (seed 000 eq. 3.28) = {result.objective:.4g}")
    write_identified_yaml(robot, identified_fields(result), out, description)
    stem = out.with_suffix("")
    files = {
        "yaml": str(out),
        "report_txt": str(stem.with_name(stem.name + ".report.txt")),
        "report_json": str(stem.with_name(stem.name + ".report.json")),
        "plot": str(stem.with_name(stem.name + ".report.png")),
    }
    text = text_report(result)
    Path(files["report_txt"]).write_text(text + "\n")
    write_json(result, files["report_json"])
    plot_identification(result, files["plot"])
    if args.json:
        print(json.dumps({**result.to_dict(), "files": files}, indent=2))
    else:
        print(text)
        print("\nwrote " + ", ".join(files.values()))
    return 0
