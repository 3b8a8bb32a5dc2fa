"""Benchmark of the simulator core (issue 4): real-time factor of the Scompi impact case in the fixed-step mode.

The case: seed 000 section 2.4.3, case 2 (4 kg tool), configuration 8, PD + gravity compensation, 50 N along y_0 on
tool0 during [0.2, 0.206] s, 3 s simulated, motor positions out at 1 kHz. Times are the best CPU time of this
process over a few repeats (the machine is shared), printed as absolute times and as ratios to one ``pin.aba``
call measured in the same run. BLAS threads are pinned to 1 ("one core"). Goal: >= 20x real time.

Sections:
1. per-call costs: ``pin.aba`` (the reference), CRBA + RNEA + solve (why the plant uses ABA), one plant derivative;
2. why exponential Euler: stability and frequency warping of candidate fixed-step methods on the linearized
   closed loop (eq. 2.14) at h = 1 ms, from their stability functions R(h lambda);
3. measured fixed-step candidates on the impact case: cost and error against an accurate reference;
4. accurate (variable-step) methods on 1 s of the impact case: cost and error;
5. the headline (last line).

    python bench/simulator.py [--threads]
"""
from __future__ import annotations

import os
import sys

if "--threads" not in sys.argv:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"

import time  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.modal import modal_analysis  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import (AccurateIntegration, FixedStepIntegration, PDGravityCompensation,  # noqa: E402
                                      RectangularPulse, Simulation)
from flexrobot_ros.simulation.impact_experiment import IMPACT_FORCE, IMPACT_WINDOW, thesis_configuration  # noqa
from flexrobot_ros.simulation.integrators import ClosedLoop  # noqa: E402


def best(function, number: int, repeat: int = 5) -> float:
    """Best CPU time per call [s] over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=repeat, timer=time.process_time)) / number


def cpu(function) -> tuple[float, object]:
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def impact_simulation(robot, controller, mode: str, **options) -> Simulation:
    return Simulation(robot, controller, rate=1000.0, mode=mode,
                      excitations=[RectangularPulse("tool0", IMPACT_FORCE, *IMPACT_WINDOW)], **options)


def rk4_run(robot, controller, duration: float, substeps: int) -> np.ndarray:
    """Classical RK4 at h = 1 ms / substeps on the same closed loop (bench-only candidate), motor positions."""
    simulation = impact_simulation(robot, controller, "fixed")
    loop = ClosedLoop(simulation.plant, controller,
                      [(simulation.plant.frame_id("tool0"), RectangularPulse("tool0", IMPACT_FORCE, *IMPACT_WINDOW))])
    x, h = simulation.state, 1e-3 / substeps
    samples = int(round(duration * 1000))
    out = np.empty((samples + 1, robot.n))
    out[0] = x[6:12]
    step = 0
    for k in range(samples):
        for _ in range(substeps):
            t = step * h
            mid = t + 0.5 * h
            wrenches = loop.wrenches_mean(t, t + h)  # the pulse's mean over the step, as in the shipped method

            def f(time, state):
                return simulation.plant.derivative(state, loop.torque(time, state), wrenches)

            k1 = f(t, x)
            k2 = f(mid, x + 0.5 * h * k1)
            k3 = f(mid, x + 0.5 * h * k2)
            k4 = f(t + h, x + h * k3)
            x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
            step += 1
        if not np.all(np.isfinite(x)) or np.abs(x[:24]).max() > 1e3:
            return None
        out[k + 1] = x[6:12]
    return out


def main() -> None:
    robot = load_robot("scompi", tool=True)
    q8 = thesis_configuration(8)
    controller = PDGravityCompensation.create(robot, q8)
    model, data = robot.model, robot.create_data()
    rng = np.random.default_rng(0)
    q, v, tau = q8 + 0.01 * rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(6)

    print("1. per-call costs (Scompi + 4 kg tool)")
    aba = best(lambda: pin.aba(model, data, q, v, tau), 20000)

    def crba_rnea():
        mass = pin.crba(model, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        return np.linalg.solve(mass, tau - pin.nonLinearEffects(model, data, q, v))

    simulation = impact_simulation(robot, controller, "fixed")
    x = simulation.state
    costs = {"pin.aba (reference)": aba, "pin.crba + pin.nonLinearEffects + numpy solve": best(crba_rnea, 20000),
             "plant derivative (ABA + springs + motor side + powers)":
                 best(lambda: simulation.plant.derivative(x, tau, ()), 20000),
             "PD + gravity compensation torque": best(lambda: controller.motor_torque(0.0, q, v, q, v), 20000)}
    for label, seconds in costs.items():
        print(f"  {label:<62}{seconds * 1e6:>8.2f} us {seconds / aba:>7.2f} x aba")

    print("2. fixed-step candidates on the linearized closed loop (eq. 2.14, case 2, configuration 8), h = 1 ms:")
    modes = modal_analysis(robot, q8)
    lam = modes.eigenvalues
    exact_f = np.abs(lam) / (2 * np.pi)

    def rk4_r(z):
        return 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24

    candidates = {
        "explicit RK4, 1 substep": lambda z: rk4_r(z),
        "explicit RK4, 2 substeps": lambda z: rk4_r(z / 2) ** 2,
        "explicit RK4, 4 substeps": lambda z: rk4_r(z / 4) ** 4,
        "implicit midpoint, 1 step": lambda z: (1 + z / 2) / (1 - z / 2),
        "implicit midpoint, 4 substeps": lambda z: ((1 + z / 8) / (1 - z / 8)) ** 4,
        "exponential Euler (shipped), 1 step": lambda z: np.exp(z),
    }
    print(f"  {'method':<40}{'max |R|':>9}{'f error modes 1-11':>22}{'zeta error':>13}  (max over modes)")
    for label, stability in candidates.items():
        r = stability(lam * 1e-3)
        effective = np.log(r.astype(complex)) / 1e-3
        f_error = np.abs(np.abs(effective[:11]) / (2 * np.pi) / exact_f[:11] - 1).max()
        zeta_error = np.abs(-effective[:11].real / np.abs(effective[:11]) - modes.damping_ratios[:11]).max()
        verdict = "unstable" if np.abs(r).max() > 1 else f"{100 * f_error:8.3f} %"
        print(f"  {label:<40}{np.abs(r).max():>9.3f}{verdict:>22}{zeta_error:>13.2e}")

    print("3. fixed-step runs of the impact case (3 s, 1 kHz output); error = max |q_m - q_m(accurate)| / peak")
    reference = impact_simulation(robot, controller, "accurate",
                                  accurate=AccurateIntegration("LSODA", rtol=1e-12, atol=1e-14)).run(3.0).q_m
    peak = np.abs(reference - controller.q_m_d).max()
    rows = {}
    for substeps in (1, 2, 4):
        seconds, output = min((cpu(lambda: impact_simulation(
            robot, controller, "fixed", fixed=FixedStepIntegration(substeps)).run(3.0)) for _ in range(3)),
            key=lambda pair: pair[0])
        rows[f"exponential Euler, {substeps} step(s) per sample"] = (seconds, np.abs(output.q_m - reference).max())
    for substeps in (1, 2, 4):
        seconds, q_m = cpu(lambda: rk4_run(robot, controller, 3.0, substeps))
        rows[f"explicit RK4, {substeps} substep(s) (bench-only)"] = (seconds, None if q_m is None
                                                                   else np.abs(q_m - reference).max())
    for label, (seconds, error) in rows.items():
        if error is None:
            print(f"  {label:<48}   diverged (state beyond 1e3 within {seconds:.3f} s CPU)")
        else:
            print(f"  {label:<48}{seconds:>8.3f} s CPU {3.0 / seconds:>7.1f}x real time   error {error / peak:.2e}")

    print("4. accurate modes, 1 s of the impact case; error vs LSODA rtol 1e-12 / atol 1e-14")
    for method, rtol, atol in (("LSODA", 1e-10, 1e-12), ("DOP853", 1e-10, 1e-12), ("Radau", 1e-10, 1e-9),
                               ("BDF", 1e-10, 1e-12)):
        seconds, output = cpu(lambda: impact_simulation(
            robot, controller, "accurate", accurate=AccurateIntegration(method, rtol, atol)).run(1.0))
        error = np.abs(output.q_m - reference[:1001]).max() / peak
        print(f"  {method:<8} rtol {rtol:.0e} atol {atol:.0e}  {seconds:>7.3f} s CPU {1.0 / seconds:>7.2f}x real time"
              f"   error {error:.2e}")

    seconds, _ = min((cpu(lambda: impact_simulation(robot, controller, "fixed").run(3.0)) for _ in range(5)),
                     key=lambda pair: pair[0])
    per_sample = seconds / 3000
    print(f"simulator: Scompi impact case (fixed step, 1 kHz output) {3.0 / seconds:.1f}x real time on one core "
          f"({per_sample * 1e6:.1f} us per sample = {per_sample / aba:.1f} pin.aba calls of {aba * 1e6:.2f} us; "
          f"goal >= 20x)")


if __name__ == "__main__":
    main()
