"""Live parameters on rclpy (issue 11, "live parameters"): the nodes as processes on the rclpy back end, changed
through the rcl_interfaces parameter services (``~/set_parameters``, ``~/get_parameters``, ``~/describe_parameters``:
what ``ros2 param``, rclpy's parameter clients and rqt call), called from an rclpy node of the test, while they run.

simulator_node, oma_node and modal_monitor_node run in a namespace and ROS domain of their own. What is checked, and
against what:
- ``~/set_parameters`` of /ns/simulator_node ``kp`` at a pause of the simulation: the motor torques of the next samples
  follow the new gains. A least-squares fit of each joint's motor torque on its motor angle and speed (PD law of
  seed 000 eq. 2.2 at a set point) recovers k_P and k_D: the YAML's (seed 000 eqs. 2.19-2.20: 15000 N m/rad,
  52 N m s/rad) up to the change, the values set from the next sample on;
- refused sets (out of range, wrong length for 6 joints, read-only) answer unsuccessful with the reason and leave
  the node as it was: ``~/get_parameters`` gives the old value, the torques keep the old gains;
  ``~/describe_parameters`` gives the declared type, description, range and read-only flag;
- oma_node fed 4 s of the 4-DOF chain's white-noise response (oma_cases.chain_system: modes are the eigenvalues of
  its state matrix): SSI-cov orders 2:40 find its 4 modes within 5 %; after orders '2:4' are set, the next
  identification (~/identify) finds at most 2 (a state-space model of order 4 has at most 2 oscillatory modes); a
  refused set (orders '40:2') leaves orders '2:4';
- modal_monitor_node's publish_rate_hz 0 -> 50 Hz -> 0 while the robot holds still: its republish timer is created
  (a volatile subscriber gets the modes every 20 ms) and cancelled again (no more).

Runs on the rclpy the test command installs (ROS 2 Jazzy from PyPI) or on a sourced ROS 2.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from runtime_peer import run_domain

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.srv import DescribeParameters, GetParameters, SetParameters  # noqa: E402
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))
from oma_cases import chain_system, white_noise_case  # noqa: E402

PARAMS = REPO / "config" / "scompi_simulation.yaml"
#: Seed 000 eqs. 2.19-2.20: the Scompi's motor PD gains (config/scompi.yaml).
KP_YAML, KD_YAML = 15000.0, 52.0
KP_NEW = [12000.0, 9000.0, 11000.0, 8000.0, 10000.0, 13000.0]
KD_NEW = 40.0
NAMESPACE = f"/live_{os.getpid()}"
CHANNELS = ["c1", "c2", "c3", "c4"]
#: The node processes: module -> extra ROS arguments.
NODES = {
    "simulator_node": ["--params-file", str(PARAMS), "-p", "autostart:=false", "-p", "real_time_factor:=4.0",
                       "-p", "excitation.period_s:=100.0", "-p", "pause_at_s:=[0.45, 0.7, 0.95]"],
    "oma_node": ["-p", "robot:=''", "-p", "sample_rate_hz:=200.0", "-p", "window_s:=4.0",
                 "-p", "update_period_s:=1000.0", "-p", "orders:='2:40'", "-r", "motor_states:=chain"],
    "modal_monitor_node": ["--params-file", str(PARAMS), "-p", "publish_rate_hz:=0.0"],
}


def domain() -> int:
    """The ROS domain of this test (runtime_peer.run_domain: its work unit's range, apart from concurrent runs)."""
    return run_domain()


def environment() -> dict[str, str]:
    return {**os.environ, "FLEXROBOT_RUNTIME": "rclpy", "ROS_DOMAIN_ID": str(domain()), "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


class Peer:
    """This process's rclpy node: records motor_states, the mode topics and diagnostics; calls services."""

    def __init__(self) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain())
        self.node = node = rclpy.create_node("live_parameters_test", namespace=NAMESPACE, context=self.context)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.motor_states: list[JointState] = []
        self.oma: list[Float64MultiArray] = []
        self.modal: list[Float64MultiArray] = []
        self.status: dict[str, dict[str, str]] = {}
        node.create_subscription(JointState, "motor_states", self.motor_states.append, 5000)
        node.create_subscription(Float64MultiArray, "oma/frequencies", self.oma.append, latched)
        node.create_subscription(Float64MultiArray, "modal/frequencies", self.modal.append, 100)  # volatile
        node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 100)
        self.chain = node.create_publisher(JointState, "chain", 2000)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(node)
        self._stop = threading.Event()
        self._spinner = threading.Thread(target=self._spin, daemon=True)
        self._spinner.start()

    def _spin(self) -> None:
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self.status[status.name.split(":")[0].rsplit("/", 1)[-1]] = {kv.key: kv.value for kv in status.values}

    def call(self, srv_type, name: str, request, timeout: float = 60.0):
        client = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=timeout), f"service {name} not available"
            future = client.call_async(request)
            assert wait(future.done, timeout), f"no response from {name}"
            return future.result()
        finally:
            self.node.destroy_client(client)

    def set_parameters(self, node: str, values: dict) -> tuple[bool, str]:
        """rcl_interfaces/srv/SetParameters on ``node`` (one request, one result per parameter)."""
        request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                    for k, v in values.items()])
        results = self.call(SetParameters, f"{node}/set_parameters", request).results
        return all(r.successful for r in results), "; ".join(r.reason for r in results if r.reason)

    def get_parameter(self, node: str, name: str):
        """The value of ``name`` (GetParameters), None for a parameter declared by type and never set (rclpy
        answers no value for it; ``ros2 param get`` prints "Parameter not set")."""
        values = self.call(GetParameters, f"{node}/get_parameters", GetParameters.Request(names=[name])).values
        return parameter_value_to_python(values[0]) if values else None

    def describe(self, node: str, name: str):
        """rcl_interfaces/ParameterDescriptor of ``name`` (DescribeParameters)."""
        return self.call(DescribeParameters, f"{node}/describe_parameters",
                         DescribeParameters.Request(names=[name])).descriptors[0]

    def close(self) -> None:
        self._stop.set()
        self._spinner.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def fitted_gains(messages) -> np.ndarray:
    """(joints, 2) k_P, k_D fitted per joint: tau_m = c - k_P q_m - k_D qd_m over JointState samples."""
    q_m = np.array([m.position for m in messages])
    qd_m = np.array([m.velocity for m in messages])
    tau_m = np.array([m.effort for m in messages])
    gains = []
    for j in range(q_m.shape[1]):
        columns = np.column_stack([np.ones(len(q_m)), q_m[:, j], qd_m[:, j]])
        solution, *_ = np.linalg.lstsq(columns, tau_m[:, j], rcond=None)
        gains.append(-solution[1:])
    return np.array(gains)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logs = tmp_path_factory.mktemp("live")
    peer = Peer()
    processes = {}
    result: dict = {}
    try:
        for name, arguments in NODES.items():
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", f"flexrobot_ros.nodes.{name}", "--ros-args", "-r", f"__ns:={NAMESPACE}",
                 *arguments], cwd=REPO, env=environment(), stdout=(logs / f"{name}.log").open("w"),
                stderr=subprocess.STDOUT)

        def up() -> bool:
            assert all(p.poll() is None for p in processes.values()), \
                {n: (logs / f"{n}.log").read_text()[-2000:] for n, p in processes.items() if p.poll() is not None}
            return (peer.chain.get_subscription_count() >= 1 and "modal_monitor_node" in peer.status
                    and peer.status.get("simulator_node", {}).get("motor_states subscribers") not in (None, "0"))
        assert wait(up, 120.0), "node processes did not come up"
        simulator, oma, monitor = (f"{NAMESPACE}/{n}" for n in NODES)
        resume = SetBool.Request(data=True)

        def paused_at(sample: int) -> bool:
            return (len(peer.motor_states) == sample
                    and peer.status.get("simulator_node", {}).get("state") == "paused")

        # simulator: refused sets at 0.45 s, the new gains at 0.7 s
        assert peer.call(SetBool, f"{simulator}/run", resume).success
        assert wait(lambda: paused_at(450), 60.0), (len(peer.motor_states), peer.status.get("simulator_node"))
        result["refused"] = {"range": peer.set_parameters(simulator, {"kp": [-1.0]}),
                             "length": peer.set_parameters(simulator, {"kp": [1.0, 2.0]}),
                             "read-only": peer.set_parameters(simulator, {"rate_hz": 500.0}),
                             "factor": peer.set_parameters(simulator, {"real_time_factor": 1000.0}),
                             "type": peer.set_parameters(simulator, {"real_time_factor": "fast"})}
        result["after refusals"] = {name: peer.get_parameter(simulator, name)
                                    for name in ("kp", "rate_hz", "real_time_factor")}
        result["described"] = {name: peer.describe(simulator, name) for name in ("real_time_factor", "rate_hz", "kp")}
        assert peer.call(SetBool, f"{simulator}/run", resume).success
        assert wait(lambda: paused_at(700), 60.0), (len(peer.motor_states), peer.status.get("simulator_node"))
        result["accepted"] = [peer.set_parameters(simulator, {"kp": KP_NEW}),
                              peer.set_parameters(simulator, {"kd": [KD_NEW]})]
        assert peer.call(SetBool, f"{simulator}/run", resume).success
        assert wait(lambda: paused_at(950), 60.0), (len(peer.motor_states), peer.status.get("simulator_node"))
        result["motor_states"] = list(peer.motor_states)

        # OMA: 4 s of the chain at 200 Hz, first identification with orders 2:40, then 2:4
        case = white_noise_case(seed=3, duration_s=4.0, fs_hz=200.0)
        for k, sample in enumerate(case.y):
            msg = JointState(name=CHANNELS, position=[float(v) for v in sample])
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k // 200, (k % 200) * 5_000_000
            peer.chain.publish(msg)
        assert wait(lambda: len(peer.oma) >= 1, 60.0), peer.status.get("oma_node")
        result["oma first"] = np.array(peer.oma[-1].data)
        result["orders set"] = peer.set_parameters(oma, {"orders": "2:4"})
        result["oma identify"] = peer.call(Trigger, f"{oma}/identify", Trigger.Request())
        assert wait(lambda: len(peer.oma) >= 2, 30.0)
        result["oma second"] = np.array(peer.oma[-1].data)
        result["orders refused"] = peer.set_parameters(oma, {"orders": "40:2"})
        result["orders after refusal"] = peer.get_parameter(oma, "orders")

        # monitor (the robot holds still: the modes change no more): no republish timer -> 20 ms -> none
        count = len(peer.modal)
        wait(lambda: False, 1.0)
        result["republished without a timer"] = len(peer.modal) - count
        result["rate set"] = peer.set_parameters(monitor, {"publish_rate_hz": 50.0})
        count = len(peer.modal)
        result["republished at 50 Hz"] = wait(lambda: len(peer.modal) >= count + 10, 10.0)
        result["rate off"] = peer.set_parameters(monitor, {"publish_rate_hz": 0.0})
        wait(lambda: False, 0.3)  # messages already on their way
        count = len(peer.modal)
        wait(lambda: False, 1.0)
        result["republished at 0 Hz"] = len(peer.modal) - count
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.send_signal(2)
        for name, process in processes.items():
            try:
                result[f"exit {name}"] = process.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        peer.close()
    result["logs"] = {name: (logs / f"{name}.log").read_text() for name in NODES}
    return result


def test_a_set_gain_changes_the_next_samples_torques(run):
    assert run["accepted"] == [(True, ""), (True, "")], run["accepted"]
    messages = run["motor_states"]
    assert len(messages) == 950
    np.testing.assert_allclose(fitted_gains(messages[200:700]), np.tile([KP_YAML, KD_YAML], (6, 1)), rtol=1e-5)
    new = fitted_gains(messages[700:950])
    np.testing.assert_allclose(new[:, 0], KP_NEW, rtol=1e-6)
    np.testing.assert_allclose(new[:, 1], KD_NEW, rtol=1e-5)


def test_refused_sets_say_why_and_leave_the_simulator_as_it_was(run):
    refused = run["refused"]
    assert not any(ok for ok, _ in refused.values()), refused
    assert "-1.0 is outside the range [0.0, 1000000000.0]" in refused["range"][1], refused["range"]
    assert "'kp'" in refused["length"][1] and "expected 6" in refused["length"][1], refused["length"]
    assert "read-only" in refused["read-only"][1], refused["read-only"]
    assert "out of range" in refused["factor"][1] and "100.0" in refused["factor"][1], refused["factor"]  # rclpy's
    # rclpy's own wording: "expected 'Type.DOUBLE' got 'Type.STRING'" (7.1), "expected '3' got '4'" (9.x: an IntEnum)
    assert re.search(r"expected '(Type\.DOUBLE|3)'", refused["type"][1]), refused["type"]
    after = run["after refusals"]
    assert after["kp"] is None, after       # as declared: unset (empty), the YAML's gains
    assert after["rate_hz"] == 1000.0 and after["real_time_factor"] == 4.0, after


def test_describe_parameters_gives_type_description_range_and_read_only(run):
    factor, rate, kp = (run["described"][name] for name in ("real_time_factor", "rate_hz", "kp"))
    assert factor.type == ParameterType.PARAMETER_DOUBLE and not factor.read_only
    assert "real-time factor" in factor.description.lower() or "simulated seconds" in factor.description, factor
    assert [(r.from_value, r.to_value) for r in factor.floating_point_range] == [(0.01, 100.0)]
    assert rate.read_only and rate.type == ParameterType.PARAMETER_DOUBLE
    assert kp.type == ParameterType.PARAMETER_DOUBLE_ARRAY and "[0.0, 1000000000.0]" in kp.additional_constraints, kp


def test_a_live_change_of_the_oma_orders_changes_the_next_identification(run):
    np.testing.assert_allclose(np.sort(run["oma first"]), chain_system().frequencies_hz, rtol=0.05)
    assert run["orders set"] == (True, "")
    assert run["oma identify"].success, run["oma identify"].message
    assert len(run["oma second"]) <= 2
    ok, reason = run["orders refused"]
    assert not ok and "need at least one order" in reason
    assert run["orders after refusal"] == "2:4"


def test_a_rate_change_recreates_the_monitor_timer(run):
    assert run["republished without a timer"] == 0
    assert run["rate set"] == (True, "") and run["republished at 50 Hz"]
    assert run["rate off"] == (True, "") and run["republished at 0 Hz"] == 0


def test_the_nodes_stop_cleanly_after_the_changes(run):
    for name in NODES:
        assert run[f"exit {name}"] == 0, run["logs"][name][-3000:]
        assert "Traceback" not in run["logs"][name], run["logs"][name][-3000:]
