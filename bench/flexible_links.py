"""Benchmark of the flexible-link layer (issue 13): the Canadarm's forced run, solver costs, real-time factor.

Sections:
1. cost per forward-dynamics call, recursive DeNOC (U D U^T, seed 003 section 5) vs the assembled inertia matrix +
   Cholesky (section 7.2), on planar chains of n = 2..32 flexible links with two clamped-free modes each, as
   ratios to one ``pin.aba`` call on the rigid chain of the same n measured in the same run;
2. the forced Canadarm run of seed 003 section 7.1: 10 s, rigid-model torques of eq. 44 open loop, fixed step at
   1 kHz output: tip deflections (Fig. 5; ``--plot FILE.png``), cond(inertia matrix) along the run, and the
   recursive and Cholesky accelerations compared at the run's states (the paper says its non-recursive solver
   fails past 5 s; here both agree to round-off: the inertia matrix stays well conditioned);
3. Exudyn (external reference) on the same braked Canadarm: lowest frequencies and solve time vs ours;
4. the same run with the compiled link dynamics (generated C, :mod:`flexrobot_ros.flexible_links.compiled_dynamics`),
   and the same run through the CLI path (``flexrobot simulate canadarm --open-loop config/canadarm_trajectory.yaml
   --compiled --duration 10``, the command's own code called in-process): both real-time factors and their ratio,
   measured in the same run (wall time, best of 3; issue 22: the CLI within 1.5x of the bench);
5. Exudyn (external reference) on the same forced run: CPU time and agreement of joint angles and tip deflections;
6. energy over 10 s of the free Canadarm (no damping, no gravity, zero torque; issue 13's 1e-8 line), measured;
7. the headline (last line): the Canadarm's real-time factor at 1 kHz output on one core.

    python bench/flexible_links.py [--plot tip_deflections.png] [--threads] [--quick]

``--quick``: sections 4 and 7 only (compiled plant, CLI path, headline).
"""
from __future__ import annotations

import os
import sys

if "--threads" not in sys.argv:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"

import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flexrobot_ros.flexible_links.beam_link import BeamLink  # noqa: E402
from flexrobot_ros.flexible_links.denoc import forward_dynamics  # noqa: E402
from flexrobot_ros.flexible_links.flexible_chain import FlexibleLinkChain  # noqa: E402
from flexrobot_ros.flexible_links.inertia_matrix import forward_dynamics_cholesky, generalized_inertia  # noqa
from flexrobot_ros.flexible_links.link_specs import chain_from_robot  # noqa: E402
from flexrobot_ros.flexible_links.elastic_robot import ElasticRobot  # noqa: E402
from flexrobot_ros.modal.elastic_robot_linearization import elastic_robot_modes  # noqa: E402
from flexrobot_ros.flexible_links.mode_shapes import ClampedFreeModes  # noqa: E402
from flexrobot_ros.model import load_robot  # noqa: E402
from flexrobot_ros.simulation import FixedStepIntegration, Simulation  # noqa: E402
from flexrobot_ros.simulation.controllers import TorqueInput  # noqa: E402
from flexrobot_ros.simulation.elastic_robot_plant import ElasticRobotPlant  # noqa: E402

K44, T44 = np.array([0.075, 0.05, 0.1]), np.array([10.0, 5.0, 5.0])
CANADARM_LINKS = ((6.0, 140.0), (7.0, 85.0), (2.0, 95.0))  # seed 003 Table 2: a [m], m [kg]; EI = 1e5 N m^2


def best(function, repeats=5, number=20) -> float:
    """Best mean CPU time [s] of ``function()`` over ``repeats`` batches of ``number`` calls."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            function()
        times.append((time.process_time() - start) / number)
    return min(times)


def planar_chain(n: int) -> tuple[FlexibleLinkChain, pin.Model]:
    model = pin.Model()
    parent = 0
    for i in range(n):
        placement = pin.SE3(np.eye(3), np.array([1.0 if i else 0.0, 0.0, 0.0]))
        parent = model.addJoint(parent, pin.JointModelRZ(), placement, f"joint{i + 1}")
        model.appendBodyToJoint(parent, pin.Inertia(10.0, np.array([0.5, 0, 0]), np.diag([0.01, 0.85, 0.85])),
                                pin.SE3.Identity())
    beams = {f"joint{i + 1}": BeamLink("l", 1.0, 10.0, 2e4, None, ClampedFreeModes(1.0, 2), None, np.eye(3),
                                       np.zeros(3)) for i in range(n)}
    return FlexibleLinkChain(model, beams), model


def rigid_torque(robot):
    model = robot.model.copy()
    data = model.createData()

    def tau(t):
        s = math.pi * t / T44
        q, qd, qdd = K44 * (t - T44 / math.pi * np.sin(s)), K44 * (1 - np.cos(s)), K44 * math.pi / T44 * np.sin(s)
        return pin.rnea(model, data, q, qd, qdd).copy()
    return tau


def cli_real_time_factor(directory: str, duration: float = 10.0) -> float:
    """The real-time factor [x] that ``flexrobot simulate canadarm --open-loop config/canadarm_trajectory.yaml
    --compiled --duration 10 --json`` reports (simulated s / wall s of its simulation), the command run in-process
    with its output in ``directory``."""
    from flexrobot_ros.cli import main as flexrobot

    trajectory = Path(__file__).resolve().parents[1] / "config" / "canadarm_trajectory.yaml"
    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        status = flexrobot(["simulate", "canadarm", "--open-loop", str(trajectory), "--compiled", "--duration",
                            f"{duration:g}", "--out", str(Path(directory) / "canadarm.npz"), "--json"])
    if status:
        raise RuntimeError(f"flexrobot simulate exited with status {status}")
    return float(json.loads(summary.getvalue())["real_time_factor"])


def best_wall(simulation: Simulation, duration: float = 10.0, repeats: int = 3) -> float:
    """Best wall time [s] of ``repeats`` runs of ``duration`` s from the simulation's start."""
    walls = []
    for _ in range(repeats):
        simulation.reset()
        start = time.perf_counter()
        simulation.run(duration)
        walls.append(time.perf_counter() - start)
    return min(walls)


def exudyn_forced_canadarm(torque, elements: int = 8, step: float = 1e-3, duration: float = 10.0, penalty: float = 1e9):
    """The forced Canadarm run in Exudyn (external reference): each link ``elements`` ObjectBeamGeometricallyExact2D
    beams (FACTS.md: shear/axial penalty ``penalty`` [N], no rotary inertia, like ours), revolute joints between the
    ground or the parent's last node and the link's first node (the beam clamped at its hub, as the link layer's
    clamped-free modes), the eq. 44 rigid-model torques as equal and opposite node torques, implicit
    generalized-alpha at ``step`` s. Returns (t, q (k, 3), tip deflections (k, 3) [m] normal to the root, CPU s)."""
    import exudyn as exu
    from exudyn.itemInterface import (LoadTorqueVector, MarkerBodyPosition, MarkerNodeRigid, NodeRigidBody2D,
                                      ObjectBeamGeometricallyExact2D, ObjectGround, ObjectJointRevolute2D, SensorNode)

    system = exu.SystemContainer()
    mbs = system.AddSystem()
    ground = mbs.AddMarker(MarkerBodyPosition(bodyNumber=mbs.AddObject(ObjectGround()), localPosition=[0, 0, 0]))
    x0, firsts, lasts = 0.0, [], []
    for a, m in CANADARM_LINKS:
        nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[x0 + a * k / elements, 0, 0]))
                 for k in range(elements + 1)]
        for i in range(elements):
            mbs.AddObject(ObjectBeamGeometricallyExact2D(
                nodeNumbers=[nodes[i], nodes[i + 1]], length=a / elements, massPerLength=m / a, crossSectionInertia=0.0,
                bendingStiffness=1e5, axialStiffness=penalty, shearStiffness=penalty, includeReferenceRotations=False))
        firsts.append(nodes[0])
        lasts.append(nodes[-1])
        x0 += a
    for i, first in enumerate(firsts):
        child = mbs.AddMarker(MarkerNodeRigid(nodeNumber=first))
        parent = ground if i == 0 else mbs.AddMarker(MarkerNodeRigid(nodeNumber=lasts[i - 1]))
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[parent, child]))
        mbs.AddLoad(LoadTorqueVector(markerNumber=child, loadVector=[0, 0, 0],
                                     loadVectorUserFunction=lambda mbs, t, load, i=i: [0, 0, float(torque(t)[i])]))
        if i:
            mbs.AddLoad(LoadTorqueVector(markerNumber=parent, loadVector=[0, 0, 0],
                                         loadVectorUserFunction=lambda mbs, t, load, i=i: [0, 0, -float(torque(t)[i])]))
    sensors = [[mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                         outputVariableType=exu.OutputVariableType.Coordinates)) for node in pair]
               for pair in zip(firsts, lasts)]
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = int(round(duration / step))
    settings.timeIntegration.endTime = duration
    settings.timeIntegration.verboseMode = 0
    settings.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    settings.solution.sensors.writePeriod = 0.01
    settings.solution.file.write = False
    settings.timeIntegration.generalizedAlpha.computeInitialAccelerations = False  # at rest, tau(0) = 0
    start = time.process_time()
    mbs.SolveDynamic(settings)
    cpu = time.process_time() - start
    data = [[mbs.GetSensorStoredData(sensor) for sensor in pair] for pair in sensors]  # [t, ux, uy, phi] per node
    t = data[0][0][:, 0]
    q = np.column_stack([data[0][0][:, 3]] + [data[i][0][:, 3] - data[i - 1][1][:, 3] for i in (1, 2)])
    deflections, x0 = [], 0.0
    for (first, last), (a, _) in zip(data, CANADARM_LINKS):
        chord = np.column_stack([a + last[:, 1] - first[:, 1], last[:, 2] - first[:, 2]])
        deflections.append(-np.sin(first[:, 3]) * chord[:, 0] + np.cos(first[:, 3]) * chord[:, 1])
    return t, q, np.column_stack(deflections), cpu


def energy_drift(robot, duration: float = 10.0, rtol: float = 1e-10) -> tuple[float, int, float]:
    """Issue 13 energy line: no damping, no gravity, zero torque (the Canadarm's joints free), T + V over
    ``duration`` s with DOP853 on the compiled link dynamics; returns (max |E - E0| / E0, evaluations, CPU s).
    rtol 1e-11 collapses the step (round-off: 1.2e6 evaluations for 0.2 s), so 1e-10 is the tightest usable."""
    from scipy.integrate import solve_ivp

    from flexrobot_ros.flexible_links.compiled_dynamics import CompiledForwardDynamics

    chain = chain_from_robot(robot)
    n, size = chain.n, chain.size
    fd, tau = CompiledForwardDynamics(chain), np.zeros(size)
    x0 = np.zeros(2 * size)
    x0[:n], x0[n:size], x0[size:size + n] = [0.3, -0.4, 0.8], 0.02, [0.1, -0.2, 0.3]
    start = time.process_time()
    solution = solve_ivp(lambda t, x: np.concatenate([x[size:], fd(x[:size], x[size:], tau)]), (0.0, duration), x0,
                         method="DOP853", rtol=rtol, atol=1e-2 * rtol, t_eval=np.linspace(0.0, duration, 201))
    cpu = time.process_time() - start
    energy = np.array([sum(chain.energy(x[:size], x[size:])) for x in solution.y.T])
    return float(np.max(np.abs(energy - energy[0])) / energy[0]), int(solution.nfev), cpu


def recursion_costs() -> dict[int, tuple[float, float]]:
    """Section 1: CPU s per call of the recursive and Cholesky forward dynamics by number of links."""
    rng = np.random.default_rng(0)
    print("1. forward dynamics per call (best of 5), planar chains with 2 modes per link")
    print(f"  {'n':>3} {'dof':>4} {'recursive':>12} {'Cholesky':>12} {'ratio':>7} {'pin.aba (rigid)':>16}")
    costs = {}
    for n in (2, 3, 4, 8, 16, 32):
        chain, model = planar_chain(n)
        data = model.createData()
        y = np.concatenate([rng.uniform(-1, 1, n), 0.01 * rng.normal(size=chain.m)])
        yd, tau = rng.normal(size=chain.size), np.concatenate([rng.normal(size=n), np.zeros(chain.m)])
        recursive = best(lambda: forward_dynamics(chain, y, yd, tau), number=5)
        cholesky = best(lambda: forward_dynamics_cholesky(chain, y, yd, tau), number=5)
        aba = best(lambda: pin.aba(model, data, y[:n], yd[:n], tau[:n]), number=200)
        costs[n] = (recursive, cholesky)
        print(f"  {n:>3} {chain.size:>4} {recursive * 1e3:>9.3f} ms {cholesky * 1e3:>9.3f} ms "
              f"{cholesky / recursive:>7.2f} {aba * 1e6:>13.2f} us")
    growth = costs[32][0] / costs[16][0]
    print(f"  recursive cost 32 vs 16 links: x{growth:.2f} (linear: x2); Cholesky: x{costs[32][1] / costs[16][1]:.2f}")
    return costs


def forced_run(robot):
    """Section 2: the forced run with the Python recursion; returns (output, CPU s)."""
    print("2. forced Canadarm (seed 003 section 7.1): 10 s, eq. 44 rigid-model torques open loop, 1 kHz output")
    simulation = Simulation(robot, TorqueInput(robot, rigid_torque(robot)), q0=np.zeros(3), rate=1000.0)
    start = time.process_time()
    output = simulation.run(10.0)
    cpu = time.process_time() - start
    columns = output.columns()
    plant = output.plant
    for link in ("link1", "link2", "link3"):
        values = columns[f"deflection.{link}.y"]
        print(f"  tip deflection {link}: max |w| {np.max(np.abs(values)) * 1e3:8.3f} mm at t = "
              f"{output.t[np.argmax(np.abs(values))]:.2f} s, at 10 s {values[-1] * 1e3:8.3f} mm")
    conditions, differences = [], []
    for k in range(0, len(output.t), 250):
        x = output.states[k]
        layout = plant.layout
        y, y_dot = np.concatenate([x[layout["q"]], x[layout["eta"]]]), np.concatenate([x[layout["qd"]],
                                                                                       x[layout["eta_dot"]]])
        tau = np.concatenate([output.tau_m[k], np.zeros(plant.m)])
        conditions.append(np.linalg.cond(generalized_inertia(plant.chain, plant.chain.propagate(y, y_dot))))
        a, b = forward_dynamics(plant.chain, y, y_dot, tau), forward_dynamics_cholesky(plant.chain, y, y_dot, tau)
        differences.append(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300) if np.any(b) else 0.0)
    print(f"  cond(I) along the run: {min(conditions):.3g} .. {max(conditions):.3g}; recursive vs Cholesky q'' "
          f"max relative difference {max(differences):.2e} over {len(differences)} states (0-10 s)")
    joint_error = np.abs(output.q - K44 * (output.t[:, None] - T44 / math.pi * np.sin(math.pi * output.t[:, None]
                                                                                       / T44))).max(axis=0)
    print(f"  joint deviation from eq. 44 (link flexibility): max {np.round(joint_error, 5).tolist()} rad; "
          f"energy balance residual (fixed step) {abs(output.energy().balance_residual(0.0)[-1]):.3g} J")
    if "--plot" in sys.argv:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        path = Path(sys.argv[sys.argv.index("--plot") + 1])
        figure, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 7))
        for axis, link in zip(axes, ("link1", "link2", "link3")):
            axis.plot(output.t, columns[f"deflection.{link}.y"] * 1e3, linewidth=0.8)
            axis.set_ylabel(f"{link} tip [mm]")
            axis.grid(True, linewidth=0.3)
        axes[0].set_title("Canadarm tip deflections, eq. 44 rigid-model torques (seed 003 Fig. 5)")
        axes[-1].set_xlabel("t [s]")
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        print(f"  plot: {path}")
    return output, cpu


def braked_modes(robot) -> None:
    """Section 3: the braked Canadarm's lowest frequencies, ours and Exudyn's."""
    print("3. braked Canadarm, pose (0.4, -1.1, 0.7): lowest frequencies [Hz]")
    angles = (0.4, -1.1, 0.7)
    model = ElasticRobot(robot, method="finite_elements", elements=16)
    start = time.process_time()
    ours = elastic_robot_modes(model, angles, locked_joints=True).frequencies_hz[:4]
    ours_time = time.process_time() - start
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
        from test_flexible_links_modes import exudyn_braked_canadarm

        start = time.process_time()
        runs = {(e, p): exudyn_braked_canadarm(angles, e, p) for e in (32, 64) for p in (1e8, 1e9)}
        exudyn_time = time.process_time() - start
        limit = {e: (1e9 * runs[(e, 1e9)] - 1e8 * runs[(e, 1e8)]) / (1e9 - 1e8) for e in (32, 64)}
        exudyn = limit[64] + (limit[64] - limit[32]) / 3
        print(f"  ours (FEM 16/link) {np.round(ours, 6).tolist()} in {ours_time:.2f} s; Exudyn (extrapolated) "
              f"{np.round(exudyn, 6).tolist()} in {exudyn_time:.2f} s; max rel. diff "
              f"{np.max(np.abs(ours - exudyn) / exudyn):.1e}")
    except Exception as error:  # exudyn missing: report and go on
        print(f"  Exudyn unavailable: {error}")


def main() -> None:
    quick = "--quick" in sys.argv
    robot = load_robot("canadarm")
    if not quick:
        costs = recursion_costs()
        output, cpu = forced_run(robot)
        braked_modes(robot)
    plant = ElasticRobotPlant(robot, compiled=True)  # compiled once per model (cached)
    fast = Simulation(plant, TorqueInput(robot, rigid_torque(robot)), q0=np.zeros(3), rate=1000.0)
    start = time.process_time()
    fast_output = fast.run(10.0)
    fast_cpu = time.process_time() - start
    print(f"4. compiled plant (one generated-C call per derivative: link dynamics, joints, power terms): 10 s in "
          f"{fast_cpu:.2f} s CPU with the eq. 44 torques computed by pin.rnea at every evaluation" + ("" if quick else
          f"; max |q| difference to the Python recursion's run {np.max(np.abs(fast_output.q - output.q)):.1e} rad, tip "
          f"deflections {np.max(np.abs(plant.tip_deflections(fast_output.states) - plant.tip_deflections(output.states))):.1e} m"))
    grid = FixedStepIntegration().evaluation_times(1000.0, 10.0)  # the instants the integrator asks for (as the CLI)
    torque = rigid_torque(robot)
    sampled = Simulation(plant, TorqueInput(robot, np.array([torque(t) for t in grid]), grid), q0=np.zeros(3),
                         rate=1000.0)
    start = time.process_time()
    sampled_output = sampled.run(10.0)
    sampled_cpu = time.process_time() - start
    print(f"   the same torques sampled at 2 kHz beforehand (an open-loop torque file): 10 s in {sampled_cpu:.2f} s CPU; "
          f"max |q| difference to the run above {np.max(np.abs(sampled_output.q - fast_output.q)):.1e} rad")
    bench_wall = best_wall(sampled)
    with tempfile.TemporaryDirectory(prefix="flexible_links_bench_") as directory:
        cli_factor = max(cli_real_time_factor(directory) for _ in range(3))
    cli = (f"CLI path {cli_factor:.1f}x real time ({10.0 / cli_factor:.2f} s wall) vs the sampled-torque run "
           f"{10.0 / bench_wall:.1f}x ({bench_wall:.2f} s wall): bench / CLI {10.0 / bench_wall / cli_factor:.2f} "
           f"(goal <= 1.5)")
    print(f"   flexrobot simulate canadarm --open-loop config/canadarm_trajectory.yaml --compiled --duration 10, its own "
          f"code in-process, and the sampled-torque run again, wall time, best of 3 each: {cli}")
    if quick:
        print(f"flexible links (--quick): Canadarm forced run {10.0 / sampled_cpu:.1f}x real time on one core with the "
              f"compiled plant and sampled torques ({sampled_cpu:.2f} s CPU); {cli}")
        return
    try:
        exudyn_t, exudyn_q, exudyn_w, exudyn_cpu = exudyn_forced_canadarm(torque)
        samples = np.rint(exudyn_t * 1000).astype(int) - 1
        keep = samples >= 0
        ours_w = plant.tip_deflections(sampled_output.states)[samples[keep], :, 0]
        peak = np.abs(exudyn_w).max(axis=0)
        print(f"5. Exudyn (external reference), the same forced run: 8 geometrically exact beams per link, implicit "
              f"generalized-alpha at 1 ms: 10 s in {exudyn_cpu:.2f} s CPU ({10.0 / exudyn_cpu:.1f}x real time); peak tip "
              f"deflections {np.round(peak * 1e3, 3).tolist()} mm (ours {np.round(np.abs(ours_w).max(axis=0) * 1e3, 3).tolist()}"
              f" mm); max |w_ours - w_Exudyn| / peak {np.round(np.abs(ours_w - exudyn_w[keep]).max(axis=0) / peak, 4).tolist()}"
              f", max |q_ours - q_Exudyn| {np.abs(sampled_output.q[samples[keep]] - exudyn_q[keep]).max():.1e} rad "
              f"(Exudyn's own change from 8 to 16 elements per link: ~3 % of the deflection)")
        exudyn_ratio = f"; Exudyn on the same run {10.0 / exudyn_cpu:.1f}x"
    except ImportError as error:
        print(f"5. Exudyn unavailable: {error}")
        exudyn_ratio = ""
    drift, evaluations, drift_cpu = energy_drift(robot)
    print(f"6. free Canadarm (no damping, no gravity, zero torque), 10 s, DOP853 rtol 1e-10, compiled dynamics: "
          f"max |T + V - E0| / E0 = {drift:.2e} from eta = 0.02 (integrator-limited; from the undeformed arm: the "
          f"test, 6e-13) with {evaluations} evaluations in {drift_cpu:.1f} s CPU")
    print(f"flexible links: Canadarm forced run (3 links x 2 modes, fixed step, 1 kHz output) {10.0 / sampled_cpu:.1f}x "
          f"real time on one core with the compiled plant and sampled torques ({10.0 / fast_cpu:.1f}x computing the "
          f"torques by RNEA in the loop, {10.0 / cpu:.1f}x with the Python recursion{exudyn_ratio}; goal >= 20x); "
          f"recursive/Cholesky cost at n = 3: {costs[3][0] / costs[3][1]:.2f}, n = 16: {costs[16][0] / costs[16][1]:.2f}; "
          f"{cli}")

if __name__ == "__main__":
    main()
