"""``flexrobot shape``: recommend an input shaper for measured or predicted modes (measure -> recommend -> report).

Modes from an OMA result (``--modal-data FILE``: the modal-data YAML of ``flexrobot oma --modal-data`` and of the
OMA node's ``~/save_modal_data``, or the JSON of ``flexrobot oma --json``) or from the model at a pose
(``flexrobot shape ROBOT --q Q``: the dominant closed-loop modes by participation at the tool,
:func:`flexrobot_ros.modal.dominant_modes.dominant_modes`). For each candidate shaper
(:func:`flexrobot_ros.shaping.compare_shapers`: ZV, ZVD, EI, each convolved over the modes, and the per-mode mix of
``auto``) it prints the predicted residual vibration [%] at each mode's frequency and at +-E, the worst over the
band, and the added delay [s], then the recommendation (the rule of ``--shaper auto``) and a note naming any shorter
candidate that meets the tolerance too (with several modes the other modes' factors lower each mode's vibration; a
damped EI is slightly shorter than ZVD). ``--json`` prints the same
(fractions as fractions, vibration in percent as the key says); ``--plot-dir DIR`` writes
``shaper_sensitivity.png`` (residual vibration over the frequency ratio, one curve per candidate).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from flexrobot_ros.commands.arguments import CommandError, add_vector, gains, output_directory, vector, within_limits
from flexrobot_ros.commands.progress import Progress
from flexrobot_ros.dynamics.shaper_names import DEFAULT_FREQUENCY_ERROR, DEFAULT_TOLERANCE
from flexrobot_ros.text_table import Column, table

#: Most modes one comparison convolves (3^6 = 729 impulses for EI); choose among more with --measured-modes.
MAX_MODES = 6
#: File the sensitivity plot is written to in --plot-dir.
PLOT_NAME = "shaper_sensitivity.png"

EPILOG = """\
Modes: either ROBOT --q Q (the model's dominant closed-loop modes at that pose: participation at the tool of at least
--min-participation, at most --max-modes of them) or --modal-data FILE (.yaml: 'poses: [{q: [...], modes:
[{frequency_hz: .., damping_ratio: ..}, ...]}, ...]' as written by 'flexrobot oma --modal-data'; .json: the output of
'flexrobot oma --json'). Damping ratios are fractions (0.02 = 2 %). Residual vibration: 100 % is the vibration the
unshaped command leaves, 0 % none; a candidate meets the tolerance when its vibration stays at or below it over the
whole band f (1 +- E) of every mode. Example:

  flexrobot oma impact.csv --modal-data modes.yaml --pose 0,-0.374,1.9448,0,-1.9448,0
  flexrobot shape --modal-data modes.yaml --measured-modes 1,2 --frequency-error 0.1 --plot-dir out
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "shape", help="recommend an input shaper (ZV, ZVD, EI) for measured or predicted modes, with residual "
                      "vibration and delay",
        description="Compare input shapers (ZV, ZVD, EI, convolved over several modes) for the modes of an OMA "
                    "result or of the model at a pose: predicted residual vibration at each mode's frequency and "
                    "at +-E, the worst over the band, the added delay; recommend the shortest that stays within "
                    "the tolerance.", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("robot", nargs="?", help="shipped robot name or path to a flexibility YAML (with --q)")
    parser.add_argument("--tool", action="store_true", help="include the robot's tool/payload")
    add_vector(parser, "--q", help="link pose q1,...,qn [rad | m] of the model's modes")
    add_vector(parser, "--kp", metavar="KP",
               help="motor PD stiffness K_P [N m/rad]: one value or one per joint (default: YAML)")
    add_vector(parser, "--kd", metavar="KD",
               help="motor PD damping K_D [N m s/rad]: one value or one per joint (default: YAML)")
    parser.add_argument("--frame", help="frame of the participation (default: the robot's tool frame)")
    parser.add_argument("--min-participation", type=float, default=0.05, metavar="P",
                        help="smallest participation at the frame of a shaped mode, fraction (default 0.05)")
    parser.add_argument("--max-modes", type=int, default=4, metavar="N",
                        help="most modes shaped, the largest participation first (default 4)")
    parser.add_argument("--modal-data", type=Path, metavar="FILE",
                        help="measured modes: modal-data YAML or the JSON of 'flexrobot oma --json'")
    parser.add_argument("--pose-number", type=int, metavar="K",
                        help="pose K (from 1) of a modal-data file with several poses")
    parser.add_argument("--measured-modes", metavar="K,K",
                        help=f"modes (from 1, in the file's order) of --modal-data to shape for (default: all, at "
                             f"most {MAX_MODES})")
    parser.add_argument("--frequency-error", type=float, default=DEFAULT_FREQUENCY_ERROR, metavar="E",
                        help=f"relative frequency error to be robust to, fraction (default {DEFAULT_FREQUENCY_ERROR}"
                             f": +-{100 * DEFAULT_FREQUENCY_ERROR:g} %%)")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, metavar="V",
                        help=f"largest acceptable residual vibration, fraction (default {DEFAULT_TOLERANCE}: "
                             f"{100 * DEFAULT_TOLERANCE:g} %%); also EI's design tolerance")
    parser.add_argument("--plot-dir", type=Path, help=f"write {PLOT_NAME} into DIR")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def fraction(value: float, option: str, allow_zero: bool) -> float:
    """``value`` checked as a fraction in [0, 1) (``allow_zero``) or (0, 1)."""
    if not ((value >= 0.0 if allow_zero else value > 0.0) and value < 1.0):
        raise CommandError(f"{option}: {value!r}; expected a fraction {'0 <=' if allow_zero else '0 <'} x < 1 "
                           "(0.1 = 10 %)")
    return value


def read_document(path: Path) -> Any:
    """The parsed YAML or JSON of ``--modal-data``."""
    if not path.is_file():
        raise CommandError(f"--modal-data {path}: no such file")
    if path.suffix.lower() == ".json":
        try:
            return json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CommandError(f"--modal-data {path}: not valid JSON ({error})") from None
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise CommandError(f"--modal-data {path}: expected a .yaml/.yml modal-data file or the .json of "
                           "'flexrobot oma --json'")
    from flexrobot_ros.errors import IdentificationError
    from flexrobot_ros.yaml_files import read_yaml

    return read_yaml(path, IdentificationError, "modal data")


def measured_modes(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any]]:
    """(frequencies [Hz], damping ratios, description) of the modes chosen in ``--modal-data``."""
    import numpy as np

    from flexrobot_ros.identification.modal_data import measured_mode, parse_modal_data

    path = args.modal_data
    document = read_document(path)
    description: dict[str, Any] = {"source": str(path)}
    if isinstance(document, dict) and "poses" in document:
        data = parse_modal_data(document, str(path))
        if args.pose_number is None and len(data.poses) > 1:
            raise CommandError(f"--modal-data {path}: {len(data.poses)} poses; choose one with --pose-number K (1.."
                               f"{len(data.poses)})")
        index = 1 if args.pose_number is None else args.pose_number
        if not 1 <= index <= len(data.poses):
            raise CommandError(f"--pose-number: {index}; --modal-data {path} has poses 1..{len(data.poses)}")
        pose = data.poses[index - 1]
        description.update(pose=index, q=pose.q.tolist(), **({"robot": data.robot} if data.robot else {}))
        modes = [(m.frequency_hz, m.damping_ratio) for m in pose.modes]
        where = f"pose {index}"
    elif isinstance(document, dict) and "frequencies_hz" in document and "damping_ratios" in document:
        if args.pose_number not in (None, 1):
            raise CommandError(f"--pose-number: {args.pose_number}; an OMA JSON result ({path}) holds one pose")
        f, zeta = document["frequencies_hz"], document["damping_ratios"]
        if not isinstance(f, list) or not isinstance(zeta, list) or len(f) != len(zeta):
            raise CommandError(f"--modal-data {path}: frequencies_hz and damping_ratios: expected two lists of equal "
                               "length")
        modes = [(m.frequency_hz, m.damping_ratio) for m in
                 (measured_mode(fk, zk, where=f"{path}: mode {k + 1}") for k, (fk, zk) in enumerate(zip(f, zeta)))]
        where = "the OMA result"
    else:
        raise CommandError(f"--modal-data {path}: expected a modal-data document (poses: [{{q, modes}}]) or the "
                           "JSON of 'flexrobot oma --json' (frequencies_hz, damping_ratios)")
    if not modes:
        raise CommandError(f"--modal-data {path}: {where} has no modes; expected at least one mode with "
                           "frequency_hz and damping_ratio")
    chosen = list(range(len(modes)))
    if args.measured_modes:
        picks = vector(args.measured_modes, "--measured-modes")
        if np.any(picks != np.round(picks)) or np.any(picks < 1) or np.any(picks > len(modes)):
            raise CommandError(f"--measured-modes: {args.measured_modes}; {where} of {path} has modes 1.."
                               f"{len(modes)}")
        chosen = sorted({int(k) - 1 for k in picks})
    if len(chosen) > MAX_MODES:
        raise CommandError(f"--modal-data {path}: {where} has {len(chosen)} modes; choose at most {MAX_MODES} with "
                           "--measured-modes K,K")
    description["modes"] = [{"number": k + 1, "frequency_hz": modes[k][0], "damping_ratio": modes[k][1]}
                            for k in chosen]
    return (np.array([modes[k][0] for k in chosen]), np.array([modes[k][1] for k in chosen]), description)


def model_modes(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any]]:
    """(frequencies [Hz], damping ratios, description) of the model's dominant modes at ``--q``."""
    from flexrobot_ros.errors import ModalError
    from flexrobot_ros.modal.dominant_modes import dominant_modes
    from flexrobot_ros.model import load_robot

    if args.q is None:
        raise CommandError(f"--q: the pose of {args.robot}'s modes is required with ROBOT")
    robot = load_robot(args.robot, tool=args.tool)
    q = within_limits(robot, vector(args.q, "--q", robot.n, robot.joint_names), "--q")
    kp = gains(args.kp, "--kp", robot.n, robot.joint_names)
    kd = gains(args.kd, "--kd", robot.n, robot.joint_names)
    if not 0.0 < args.min_participation <= 1.0:
        raise CommandError(f"--min-participation: {args.min_participation!r}; expected a fraction 0 < p <= 1")
    if not 1 <= args.max_modes <= MAX_MODES:
        raise CommandError(f"--max-modes: {args.max_modes}; expected 1..{MAX_MODES}")
    try:
        modes = dominant_modes(robot, q[None, :], frame=args.frame, min_participation=args.min_participation,
                               max_modes=args.max_modes, kp=kp, kd=kd)
    except ModalError as error:
        raise CommandError(f"{args.robot} at --q: {error}") from None
    description = {"source": f"model {robot.name}", "robot": robot.name, "tool": robot.tool is not None,
                   "q": q.tolist(), "frame": modes.frame,
                   "modes": [{"number": int(r) + 1, "frequency_hz": float(f), "damping_ratio": float(z),
                              "participation": float(p)}
                             for r, f, z, p in zip(modes.ranks, modes.frequencies_hz[0], modes.damping_ratios[0],
                                                   modes.participation[0])]}
    return modes.frequencies_hz[0], modes.damping_ratios[0], description


def run(args: argparse.Namespace) -> int:
    from flexrobot_ros.shaping.shaper_comparison import compare_shapers

    if (args.robot is None) == (args.modal_data is None):
        raise CommandError("modes: give ROBOT --q Q (the model's modes) or --modal-data FILE (measured), not "
                           + ("both" if args.robot else "neither"))
    if args.modal_data is None and (args.pose_number is not None or args.measured_modes):
        raise CommandError("--pose-number and --measured-modes choose modes of --modal-data; give --modal-data FILE "
                           "too")
    if args.modal_data is not None and (args.q or args.tool or args.kp or args.kd or args.frame):
        raise CommandError("--q, --tool, --kp, --kd and --frame set the model's modes; leave them out with "
                           "--modal-data")
    error = fraction(args.frequency_error, "--frequency-error", True)
    tolerance = fraction(args.tolerance, "--tolerance", False)
    plot_dir = output_directory(args.plot_dir, "--plot-dir") if args.plot_dir else None
    progress = Progress("shape", quiet=args.json)
    frequencies, damping, description = (measured_modes(args) if args.modal_data is not None
                                         else model_modes(args))
    with progress.stage(f"comparing shapers for {len(frequencies)} modes"):
        comparison = compare_shapers(frequencies, damping, frequency_error=error, tolerance=tolerance)
    report = {**description, "frequency_error": error, "tolerance": tolerance,
              "candidates": [candidate_summary(c, comparison) for c in comparison.candidates],
              "recommended": comparison.recommended}
    recommended = comparison.candidate(comparison.recommended).added_delay_s
    report["shorter_within_tolerance"] = [item["name"] for item in report["candidates"]
                                          if item["meets_tolerance"] and item["added_delay_s"] < recommended]
    if plot_dir:
        from flexrobot_ros.shaping.sensitivity_plot import plot_sensitivity

        title = (f"{description['source']}: shapers for {len(frequencies)} modes, frequency error +-"
                 f"{100 * error:g} %, tolerance {100 * tolerance:g} %")
        report["plot"] = str(plot_sensitivity(comparison, plot_dir / PLOT_NAME, title,
                                              [mode["number"] for mode in description["modes"]]))
        progress.wrote("sensitivity plot", report["plot"])
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print_report(report)
    return 0


def candidate_summary(candidate: Any, comparison: Any) -> dict[str, Any]:
    """JSON-ready: name, kinds, impulses (amplitudes, times [s]), added delay [s], per mode the residual vibration
    [%] at f (1 - E), f, f (1 + E) and the worst over the band, and whether the tolerance is met."""
    limit = 100.0 * comparison.tolerance
    return {"name": candidate.name, "kinds": list(candidate.kinds), "added_delay_s": candidate.added_delay_s,
            "impulses": {"amplitudes": candidate.shaper.amplitudes.tolist(),
                         "times_s": candidate.shaper.times_s.tolist()},
            "modes": [{"frequency_hz": float(f), "residual_vibration_low_percent": float(low),
                       "residual_vibration_nominal_percent": float(nominal),
                       "residual_vibration_high_percent": float(high),
                       "residual_vibration_worst_percent": float(worst)}
                      for f, low, nominal, high, worst in zip(comparison.frequencies_hz, candidate.low_percent,
                                                              candidate.nominal_percent, candidate.high_percent,
                                                              candidate.worst_percent)],
            "worst_percent": float(candidate.worst_percent.max()),
            "meets_tolerance": bool(candidate.worst_percent.max() <= limit * (1.0 + 1e-9))}


def print_report(report: dict[str, Any]) -> None:
    """The text report: modes, one line per candidate and mode, the recommendation."""
    error = 100.0 * report["frequency_error"]
    print(f"modes of {report['source']}" + (f" at q = {[round(v, 4) for v in report['q']]}" if "q" in report else "")
          + ":")
    for mode in report["modes"]:
        share = f", participation {100 * mode['participation']:.1f} %" if "participation" in mode else ""
        print(f"  mode {mode['number']}: {mode['frequency_hz']:.4f} Hz, damping {100 * mode['damping_ratio']:.3f} %"
              + share)
    print(f"residual vibration [%] (100 % = unshaped) at f (1 - {error:g} %), f, f (1 + {error:g} %) and the worst "
          f"over f (1 +- {error:g} %); tolerance {100 * report['tolerance']:g} %")
    rows = []
    for item in report["candidates"]:
        for j, mode in enumerate(item["modes"]):
            lead = ([item["name"], str(len(item["impulses"]["amplitudes"])), f"{item['added_delay_s']:.4f} s"]
                    if j == 0 else ["", "", ""])
            values = [f"{mode[f'residual_vibration_{key}_percent']:.3f} %" for key in ("low", "nominal", "high",
                                                                                     "worst")]
            verdict = "" if j < len(item["modes"]) - 1 else \
                ("meets the tolerance" if item["meets_tolerance"] else "exceeds the tolerance")
            rows.append(lead + [str(report["modes"][j]["number"]), f"{mode['frequency_hz']:.3f} Hz"] + values
                        + [verdict])
    print("\n".join(table([Column("shaper", align="<"), Column("impulses"), Column("delay"), Column("mode"),
                           Column("f"), Column("V(-E)"), Column("V(f)"), Column("V(+E)"), Column("worst"),
                           Column("", align="<")], rows, indent="  ")))
    best = next(item for item in report["candidates"] if item["name"] == report["recommended"])
    print(f"recommended: {best['name']} (the rule of --shaper auto: per mode the first of zv, zvd, ei whose own "
          f"shaper stays within {100 * report['tolerance']:g} % over f (1 +- {error:g} %)): added delay "
          f"{best['added_delay_s']:.4f} s, worst residual vibration {best['worst_percent']:.3f} %")
    for name in report["shorter_within_tolerance"]:
        item = next(item for item in report["candidates"] if item["name"] == name)
        print(f"note: {name} (added delay {item['added_delay_s']:.4f} s, worst {item['worst_percent']:.3f} %) also "
              "stays within the tolerance, with a shorter delay")
    if "plot" in report:
        print(f"plot: {report['plot']}")
