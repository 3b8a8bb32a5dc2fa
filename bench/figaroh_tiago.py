"""Side by side with FIGAROH on the real TIAGo record (issue 37, item 4), one core.

The data: a PAL TIAGo moving along an identification trajectory (FIGAROH's examples, Thanh Nguyen / CNRS / Toward,
Apache-2.0): ``../shared/data/tiago_identification`` beside the checkout, or the folder ``$FLEXROBOT_TIAGO_DATA``
(its README gives the units, the effort constants and FIGAROH's published figures). Never copied: the bench links
the files into a temporary folder beside test/data/tiago/'s robot and experiment files.

The split of FIGAROH's README: fit on samples 921-3855, predict 3856-6790; torques fitted and scored on arm_1..arm_4
(the wrist efforts are 88-90 % zeros); efforts converted by FIGAROH's TIAGo constants (gear ratio x motor
constant). Both tools see the torso and the seven arm joints (FIGAROH's active joints; every other joint held at 0).

* flexrobot: ``flexrobot identify-rigid tiago_arm.yaml --experiment tiago_experiment.yaml`` (test/data/tiago: the
  logger's clock resampled onto a uniform grid by a cubic spline, 5 Hz zero-phase low-pass, central differences,
  rotor inertia, viscous and Coulomb friction and a torque offset per joint, rows slower than 0.02 rad/s left out of
  the fit, weighted least squares), in process; and the same without the speed threshold (``--min-velocity 0``).
* FIGAROH 1.0.2 (``BaseIdentification`` with the data loaded and converted as its TIAGo example does, upstream's
  settings: median filter 5 and 4th-order Butterworth at 2 Hz on the positions (upstream's 100 Hz of 5000 Hz, the
  same normalized cutoff at the record's 100 Hz), velocity and acceleration by ``numpy.gradient`` on the recorded
  times, friction (viscous + Coulomb), actuator inertia and offset per joint, decimation by 10, OLS), then the
  setups of :data:`FIGAROH_SETUPS` (other cutoffs, all 8 joints fitted, weighted LS); its held-out figure is its own
  ``_compute_validation_metrics`` (the prediction at every sample 3856-6790 against the converted efforts). The
  setups were chosen by a search over FIGAROH's options on this record (:data:`FIGAROH_SETUPS`); its best is
  compared.

Columns, per tool and setup: held-out torque RMSE per joint [N m] against the recorded (converted) efforts, on the
samples both tools score (flexrobot leaves out the 1 / cutoff s of filter transient at each end of the held-out
window: FIGAROH's prediction is scored on the same samples), the RMSE over the four joints, FIGAROH's own figure over
every held-out sample, the base-parameter count, cond() of the base observation matrix, and the wall time from the
CSV files to the held-out error (best of :data:`REPEATS`; imports excluded) with its ratio to flexrobot's.

Needs a Python with figaroh 1.0.2 and this package's dependencies (FIGAROH is not a dependency of the package):
``python -m venv .venv-bench && .venv-bench/bin/pip install figaroh==1.0.2 pin scipy pyyaml casadi threadpoolctl``
then ``.venv-bench/bin/python bench/figaroh_tiago.py`` (six FIGAROH runs of 20-60 s each on this machine).
The last line printed is the headline.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flexrobot_ros.cli import main as flexrobot  # noqa: E402

DATA = Path(os.environ.get("FLEXROBOT_TIAGO_DATA") or ROOT / ".." / "shared" / "data" / "tiago_identification")
FILES = ("tiago_48_hey5.urdf", "tiago_position.csv", "tiago_velocity.csv", "tiago_effort.csv")
ACTIVE = ("torso_lift_joint",) + tuple(f"arm_{i}_joint" for i in range(1, 8))
SCORED = ACTIVE[1:5]
#: FIGAROH's TIAGo example: joint torque = reduction ratio x motor constant x effort (torso: a force [N]).
REDUCTION = dict(zip(ACTIVE, (1, 100, 100, 100, 100, 336, 336, 336)))
KMOTOR = dict(zip(ACTIVE, (1.0, 0.136, 0.136, -0.087, -0.087, -0.0613, -0.0613, -0.0613)))
FIT_ROWS, HELD_OUT_ROWS = (921, 3856), (3856, 6791)  # Python slices: samples 921-3855 and 3856-6790
#: FIGAROH setups: (label, Butterworth cutoff [Hz] at the record's 100 Hz, joints whose torques are fitted, WLS,
#: velocities: the recorded ones (the controller's filtered derivative, then FIGAROH's filter) instead of numpy.gradient
#: of the filtered positions). Searched beforehand on this record (held-out RMSE on arm_1..4): cutoffs 1, 2, 3, 5,
#: 8 Hz x arm_1..4 or all 8 fitted (OLS): 3.32, 2.67, 2.64, 2.13, 2.25 / 2.00, 1.86, 1.97, 1.87, 1.91 N m; WLS, all
#: fitted, 2 and 5 Hz: 1.76, 1.75; recorded velocities, all fitted, 2 Hz OLS / WLS, 5 Hz OLS / WLS: 1.71, 1.69, 1.71,
#: 1.69 (best); recorded velocities, arm_1..4, 2 Hz: 2.33. ``solve(decimate=False)`` fails on this robot in FIGAROH
#: 1.0.2 ("cond is not defined on empty arrays": its undecimated rows assume every model joint is active).
FIGAROH_SETUPS = (
    ("upstream: 2 Hz, arm_1..4 fitted", 2.0, SCORED, False, False),
    ("5 Hz, arm_1..4 fitted", 5.0, SCORED, False, False),
    ("2 Hz, all 8 fitted", 2.0, None, False, False),
    ("5 Hz, all 8 fitted, WLS", 5.0, None, True, False),
    ("2 Hz, all 8 fitted, WLS, recorded velocities", 2.0, None, True, True),
    ("5 Hz, all 8 fitted, WLS, recorded velocities", 5.0, None, True, True),
)
#: Timed runs per setup (the best is kept): the machine is shared.
REPEATS = {"flexrobot": 3, "figaroh": 1}


@dataclass
class Run:
    label: str
    per_joint: np.ndarray       # held-out RMSE [N m] on the common samples, SCORED order
    own: float                  # the tool's own held-out figure over its scored samples [N m]
    base: int
    condition: float
    seconds: float

    @property
    def pooled(self) -> float:
        return float(np.sqrt(np.mean(self.per_joint**2)))


def prepared_folder() -> Path:
    """A temporary folder with the robot and experiment files and links to the data."""
    missing = [name for name in FILES if not (DATA / name).is_file()]
    if missing:
        sys.exit(f"bench/figaroh_tiago.py: TIAGo data absent: no {[str(DATA / m) for m in missing]} (set "
                 "FLEXROBOT_TIAGO_DATA to its folder)")
    folder = Path(tempfile.mkdtemp(prefix="figaroh_tiago_"))
    for name in FILES:
        (folder / name).symlink_to((DATA / name).resolve())
    for name in ("tiago_arm.yaml", "tiago_experiment.yaml"):
        shutil.copy(ROOT / "test" / "data" / "tiago" / name, folder / name)
    return folder


def run_flexrobot(folder: Path, label: str, options: tuple[str, ...] = ()) -> tuple[Run, dict]:
    arguments = ["identify-rigid", str(folder / "tiago_arm.yaml"), "--experiment",
                 str(folder / "tiago_experiment.yaml"), "--json", *options]
    best, summary = np.inf, None
    for _ in range(REPEATS["flexrobot"]):
        out = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(out):
            status = flexrobot(arguments)
        best = min(best, time.perf_counter() - start)
        if status != 0:
            sys.exit(f"bench/figaroh_tiago.py: flexrobot identify-rigid exited with {status}")
        summary = json.loads(out.getvalue())
    held_out = summary["validation"][0]
    return Run(f"flexrobot {label}", np.array(held_out["rms_nm"]), held_out["pooled_rms_nm"],
               len(summary["parameters"]), summary["condition_number"], best), held_out


def figaroh_class():
    """FIGAROH's BaseIdentification with the TIAGo record read and converted as its TIAGo example does."""
    import pinocchio as pin
    from figaroh.identification.base_identification import BaseIdentification

    def read_table(name: str) -> tuple[list[str], np.ndarray]:
        path = DATA / f"tiago_{name}.csv"
        return path.open().readline().strip().split(","), np.loadtxt(path, delimiter=",", skiprows=1)

    class TiagoIdentification(BaseIdentification):
        recorded_velocities = False

        def load_trajectory_data(self, data_source=None):  # the files read here, as upstream's example does
            tables = {name: read_table(name) for name in ("position", "velocity", "effort")}
            out = {"timestamps": tables["position"][1][:, :1], "accelerations": None}
            for key, name in (("positions", "position"), ("velocities", "velocity"), ("torques", "effort")):
                header, table = tables[name]
                out[key] = table[:, [header.index(f"- {joint}_{name}") for joint in ACTIVE]]
            if not self.recorded_velocities:
                out["velocities"] = None  # upstream: from the filtered positions
            if data_source:  # the held-out window, "first:stop"
                first, stop = map(int, data_source.split(":"))
                out = {key: None if value is None else value[first:stop] for key, value in out.items()}
            self.raw_data = out
            return out

        def process_torque_data(self):
            pin.computeSubtreeMasses(self.robot.model, self.robot.data)
            tau = self.raw_data["torques"].copy()
            for i, joint in enumerate(ACTIVE):
                tau[:, i] *= REDUCTION[joint] * KMOTOR[joint]
                if joint == "torso_lift_joint":  # as upstream: the lift's effort excludes the weight it carries
                    tau[:, i] += 9.81 * self.robot.data.mass[self.robot.model.getJointId(joint)]
            self.processed_data["torques"] = tau
            return tau

    return TiagoIdentification


def figaroh_config(path: Path, cutoff_hz: float, fit: tuple[str, ...] | None, wls: bool) -> None:
    """A unified FIGAROH 1.0 configuration (the Butterworth's normalized cutoff: f_butter / (f_sample / 2))."""
    document = {
        "_metadata": {"schema_version": "2.0", "config_type": "robot_configuration"},
        "robot": {"name": "tiago", "properties": {"joints": {"active_joints": list(ACTIVE)},
                                                  "coupling": {"has_coupled_wrist": False}}},
        "tasks": {"identification": {
            "enabled": True,
            "problem": {"use_joint_torques": True, "include_external_forces": False, "wls": wls,
                        "model_components": {"friction": True, "joint_offset": True, "actuator_inertia": True},
                        "torque_fit_joints": None if fit is None else list(fit)},
            "signal_processing": {"sampling_frequency": 100.0, "cutoff_frequency": cutoff_hz},
            "data": {"validation_data_file": f"{HELD_OUT_ROWS[0]}:{HELD_OUT_ROWS[1]}"}}}}
    path.write_text(yaml.safe_dump(document))


def run_figaroh(robot, label: str, cutoff_hz: float, fit, wls: bool, velocities: bool, scored: np.ndarray,
                folder: Path) -> Run:
    """One FIGAROH setup; ``scored`` (held-out samples,) marks the samples flexrobot scores."""
    identification = figaroh_class()
    identification.recorded_velocities = velocities
    config = folder / "figaroh.yaml"
    figaroh_config(config, cutoff_hz, fit, wls)
    best = np.inf
    for _ in range(REPEATS["figaroh"]):
        start = time.perf_counter()
        ident = identification(robot, str(config))
        settings = ident.identif_config
        settings["act_Jid"] = [ident.model.getJointId(joint) for joint in settings["active_joints"]]
        settings["act_J"] = [ident.model.joints[j] for j in settings["act_Jid"]]
        settings["act_idxq"] = [joint.idx_q for joint in settings["act_J"]]
        settings["act_idxv"] = [joint.idx_v for joint in settings["act_J"]]
        ident.initialize(truncate=FIT_ROWS)
        with contextlib.redirect_stdout(io.StringIO()):
            ident.solve(decimate=True, plotting=False, save_results=False, wls=wls)
        metrics = ident._compute_validation_metrics()
        best = min(best, time.perf_counter() - start)
    predicted = metrics["tau_identified_per_joint"]
    measured = metrics["tau_measured_per_joint"]
    common = np.array([np.sqrt(np.mean((np.array(predicted[j])[scored] - np.array(measured[j])[scored]) ** 2))
                       for j in SCORED])
    own = np.sqrt(np.mean([metrics["per_joint"][j]["rmse_identified"] ** 2 for j in SCORED]))
    return Run(f"FIGAROH {label}", common, float(own), len(ident.phi_base), float(ident.result["condition number"]),
               best)


def main() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    folder = prepared_folder()
    try:
        ours, held_out = run_flexrobot(folder, "experiment file (test/data/tiago)")
        plain = run_flexrobot(folder, "without the speed threshold", ("--min-velocity", "0"))[0]
        from figaroh.tools.robot import load_robot

        robot = load_robot(str(folder / FILES[0]), load_by_urdf=True)
        t = np.loadtxt(DATA / "tiago_position.csv", delimiter=",", skiprows=1, usecols=0)[slice(*HELD_OUT_ROWS)]
        scored = (t >= held_out["t_first_s"]) & (t <= held_out["t_last_s"])
        runs = [ours, plain] + [run_figaroh(robot, *setup, scored, folder) for setup in FIGAROH_SETUPS]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    width = max(len(run.label) for run in runs)
    print(f"held-out torque RMSE [N m] on samples {HELD_OUT_ROWS[0]}-{HELD_OUT_ROWS[1] - 1} "
          f"({int(scored.sum())} of {scored.size} scored by both: t = {held_out['t_first_s']:.3f}-"
          f"{held_out['t_last_s']:.3f} s), fit on {FIT_ROWS[0]}-{FIT_ROWS[1] - 1}")
    header = "".join(f"{joint:>12}" for joint in SCORED)
    print(f"{'tool / setup':<{width}}{header}{'arm_1..4':>10}{'own':>8}{'base':>6}{'cond':>8}{'time':>10}"
          f"{'ratio':>9}")
    for run in runs:
        print(f"{run.label:<{width}}" + "".join(f"{value:>12.4f}" for value in run.per_joint)
              + f"{run.pooled:>10.4f}{run.own:>8.4f}{run.base:>6d}{run.condition:>8.4g}{run.seconds:>8.3f} s"
              + f"{run.seconds / ours.seconds:>8.1f}x")
    print("(own: the tool's own held-out figure: flexrobot's over its scored samples, FIGAROH's over every held-out "
          "sample, as its README reports it; ratio: wall time over flexrobot's)")
    figaroh_runs = runs[2:]
    best = min(figaroh_runs, key=lambda run: run.pooled)
    fastest = min(run.seconds for run in figaroh_runs)
    print(f"headline: held-out RMSE on arm_1..4 flexrobot {ours.pooled:.3f} N m, FIGAROH best setup "
          f"{best.pooled:.3f} N m ({best.label[8:]}), upstream {figaroh_runs[0].pooled:.3f} N m (published 2.67); "
          f"wall time flexrobot {ours.seconds:.2f} s, FIGAROH {fastest:.1f} s or more ({fastest / ours.seconds:.0f}x)")


if __name__ == "__main__":
    main()
