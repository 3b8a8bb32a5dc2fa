"""Live parameters of the nodes on the standalone runtime (nodes and probe in this process, loopback DDS).

A change goes through ``Node.set_parameters`` (the path of ``ros2 param set``) while the node runs. What is checked,
and against what:
- simulator gains: the motor torques of the published motor_states stream follow the PD law of seed 000 eq. 2.2
  (tau_m = const + k_P (q_m^d - q_m) - k_D qd_m at a set point); a least-squares fit of each joint's torque on its
  own motor angle and speed recovers k_P and k_D: the YAML's (seed 000 eqs. 2.19-2.20: 15000 N m/rad, 52 N m s/rad)
  up to the change, the values set from the next sample on;
- refused changes (out of range, wrong length, read-only, a band beyond Nyquist): the reason is given and the
  parameters, the running law and the stream's gains stay as they were (all or nothing);
- OMA orders (set through the ``~/set_parameters`` service on the wire, as ``ros2 param set`` does): the next
  identification runs over the orders set ('first:last' inclusive) and a state-space model
  of order n has at most n / 2 oscillatory modes; before it, the 4 modes of the chain whose samples are streamed
  (oma_cases.chain_system, eigenvalues of its state matrix) are found; a new window length is the next window;
- rates: the monitor's republish timer is re-created (none at 0 Hz, every 20 ms at 50 Hz); new monitor gains give
  the modes of the core modal analysis with those gains at the streamed pose;
- thread safety: changes from another thread while the simulator runs leave a gap-free stream and no callback
  error.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from flexrobot_ros.modal import modal_analysis
from flexrobot_ros.nodes.modal_monitor_node import ModalMonitorNode
from flexrobot_ros.nodes.oma_node import OmaNode
from flexrobot_ros.nodes.simulator_node import SimulatorNode
from flexrobot_ros.runtime import QOS_DEFAULT
from flexrobot_ros.runtime.messages import float_sequence
from flexrobot_ros.runtime.parameter_services import parameter_value
from node_harness import Q8, Harness, Probe, states
from oma_cases import chain_system, white_noise_case

JS, FA, DIAG = "sensor_msgs/msg/JointState", "std_msgs/msg/Float64MultiArray", "diagnostic_msgs/msg/DiagnosticArray"
#: Seed 000 eqs. 2.19-2.20: the Scompi's motor PD gains (config/scompi.yaml).
KP_YAML, KD_YAML = 15000.0, 52.0
KP_NEW = np.array([12000.0, 9000.0, 11000.0, 8000.0, 10000.0, 13000.0])
KD_NEW = 40.0


def fitted_gains(messages) -> np.ndarray:
    """(joints, 2) k_P, k_D fitted per joint from JointState samples (position q_m, velocity qd_m, effort tau_m)
    at a set point: tau_m = c - k_P q_m - k_D qd_m."""
    _, q_m, qd_m, tau_m = states(messages)
    gains = []
    for j in range(q_m.shape[1]):
        columns = np.column_stack([np.ones(len(q_m)), q_m[:, j], qd_m[:, j]])
        solution, *_ = np.linalg.lstsq(columns, tau_m[:, j], rcond=None)
        gains.append(-solution[1:])
    return np.array(gains)


def wait(condition, seconds: float) -> bool:
    """Wait (another thread spins) until ``condition()`` holds or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def wait_paused_at(harness, app, probe, sample):
    assert harness.spin(30.0, lambda: app.state == "paused" and app.sim.sample_index == sample
                        and len(probe.messages["/motor_states"]) == sample), (app.state, app.sim.sample_index)


@pytest.fixture(scope="module")
def gain_run():
    """Scompi + tool at configuration 8, the thesis impact at 0.2 s, pauses at 0.45, 0.7 and 0.95 s: refused changes
    at 0.45 s, k_P / k_D set at 0.7 s; every motor_states sample."""
    with Harness() as harness:
        node = harness.node("simulator_node", {"real_time_factor": 4.0, "autostart": False,
                                               "excitation.period_s": 100.0, "pause_at_s": [0.45, 0.7, 0.95]})
        app = SimulatorNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_states": JS})
        run = probe_node.create_client(probe_node.types.std_srvs.srv.SetBool, "/simulator_node/run")
        resume = probe_node.types.std_srvs.srv.SetBool.Request(data=True)
        harness.spin(1.0)
        assert harness.call(run, resume).success
        wait_paused_at(harness, app, probe, 450)

        before = dict(node.parameters)
        refusals = {label: node.set_parameters(values) for label, values in {
            "range": {"kp": [-1.0]},
            "length": {"kp": [1.0, 2.0]},
            "read-only": {"kp": [9000.0], "rate_hz": 500.0},
            "nyquist": {"excitation.type": "random", "excitation.band_hz": [1.0, 600.0]},
        }.items()}
        after_refusals = {"parameters": dict(node.parameters), "kp": app.sim.controller.kp.copy(),
                          "kd": app.sim.controller.kd.copy(), "type": app.p["excitation.type"]}
        assert harness.call(run, resume).success
        wait_paused_at(harness, app, probe, 700)

        accepted = node.set_parameters({"kp": KP_NEW.tolist(), "kd": [KD_NEW]})
        law = {"kp": app.sim.controller.kp.copy(), "kd": app.sim.controller.kd.copy()}
        assert harness.call(run, resume).success
        wait_paused_at(harness, app, probe, 950)
    return {"probe": probe, "before": before, "refusals": refusals, "after_refusals": after_refusals,
            "accepted": accepted, "law": law, "parameters": dict(node.parameters)}


def test_a_live_gain_change_sets_the_next_samples_torques(gain_run):
    """From sample 701 on (the first after the change at 0.7 s) the stream's torques follow the new k_P (one per
    joint) and k_D (one value for every joint); before it, the YAML's."""
    assert gain_run["accepted"] == (True, "")
    messages = gain_run["probe"].messages["/motor_states"]
    old = fitted_gains(messages[200:700])          # samples 201..700: after the impact, before the change
    new = fitted_gains(messages[700:950])          # samples 701..950
    np.testing.assert_allclose(old[:, 0], KP_YAML, rtol=1e-6)
    np.testing.assert_allclose(old[:, 1], KD_YAML, rtol=1e-5)
    np.testing.assert_allclose(new[:, 0], KP_NEW, rtol=1e-6)
    np.testing.assert_allclose(new[:, 1], KD_NEW, rtol=1e-5)
    np.testing.assert_array_equal(gain_run["law"]["kp"], KP_NEW)
    assert gain_run["parameters"]["kp"] == tuple(KP_NEW) and gain_run["parameters"]["kd"] == (KD_NEW,)


def test_refused_changes_leave_the_simulator_as_it_was(gain_run):
    """Each refusal says why; parameters, the running law and the torques of samples 451..700 are unchanged."""
    refusals = gain_run["refusals"]
    assert {label: ok for label, (ok, _) in refusals.items()} == dict.fromkeys(refusals, False)
    assert "outside the range" in refusals["range"][1]
    assert "'kp'" in refusals["length"][1] and "expected 6" in refusals["length"][1]
    assert "parameter 'rate_hz' cannot be set because it is read-only" in refusals["read-only"][1]
    assert "excitation.band_hz" in refusals["nyquist"][1] and "sample_rate / 2 = 500" in refusals["nyquist"][1]
    after = gain_run["after_refusals"]
    assert after["parameters"] == gain_run["before"]
    np.testing.assert_array_equal(after["kp"], KP_YAML)
    np.testing.assert_array_equal(after["kd"], KD_YAML)
    assert after["type"] == "impacts"
    gains = fitted_gains(gain_run["probe"].messages["/motor_states"][450:700])
    np.testing.assert_allclose(gains, np.tile([KP_YAML, KD_YAML], (6, 1)), rtol=1e-5)


CHANNELS = ("c1", "c2", "c3", "c4")


def wire_set(harness, client_node, target: str, values: dict) -> tuple[bool, str]:
    """rcl_interfaces/srv/SetParameters on ``target`` with string values, one result per parameter, as ros2cli's
    ``ros2 param set`` sends it: (all successful, reasons)."""
    srv, msg, types = client_node.types.rcl_interfaces.srv, client_node.types.rcl_interfaces.msg, client_node.types
    client = client_node.create_client(srv.SetParameters, f"{target}/set_parameters")
    parameters = [msg.Parameter(name=name, value=parameter_value(types, "string", value))
                  for name, value in values.items()]
    results = harness.call(client, srv.SetParameters.Request(parameters=parameters)).results
    return all(r.successful for r in results), "; ".join(r.reason for r in results if r.reason)


@pytest.fixture(scope="module")
def oma_run():
    """An OMA node (channels from the stream, 200 Hz, 4 s window, SSI-cov orders 2:40) fed 4 s of the 4-DOF chain's
    white-noise response; after the window's first identification, orders 2:4 are set and ~/identify called;
    then refused changes and ~/identify again; then a 2 s window."""
    case = white_noise_case(seed=3, duration_s=4.0, fs_hz=200.0)
    with Harness() as harness:
        node = harness.node("oma_node", {"robot": "", "sample_rate_hz": 200.0, "window_s": 4.0,
                                         "update_period_s": 1000.0, "orders": "2:40"}, files=())
        app = OmaNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/oma/frequencies": FA}, latched=["/oma/frequencies"])
        encoders = probe_node.create_publisher(probe_node.types.sensor_msgs.msg.JointState, "/motor_states",
                                               QOS_DEFAULT.with_depth(len(case.y)))
        identify = probe_node.create_client(probe_node.types.std_srvs.srv.Trigger, "/oma_node/identify")
        assert harness.spin(10.0, lambda: encoders.get_subscription_count() >= 1)
        JointState = probe_node.types.sensor_msgs.msg.JointState
        for k, sample in enumerate(case.y):
            msg = JointState(name=list(CHANNELS), position=float_sequence(sample))
            msg.header.stamp = probe_node.stamp(100.0 + k / case.fs_hz)
            encoders.publish(msg)
        assert harness.spin(60.0, lambda: app.samples == len(case.y) and app.updates == 1
                            and probe.last("/oma/frequencies") is not None), (app.samples, app.updates)
        first = {"orders": app.last_update.result.orders, "frequencies": probe.array("/oma/frequencies")}

        changed = wire_set(harness, probe_node, "/oma_node", {"orders": "2:4"})  # as `ros2 param set` does
        request = probe_node.types.std_srvs.srv.Trigger.Request()
        identified = harness.call(identify, request)
        harness.spin(5.0, lambda: len(probe.messages["/oma/frequencies"]) == 2)
        second = {"orders": app.last_update.result.orders, "frequencies": probe.array("/oma/frequencies")}

        before = dict(node.parameters)
        refusals = [wire_set(harness, probe_node, "/oma_node", {"orders": "40:2"})] + [
            node.set_parameters(values) for values in ({"orders": "two to forty"}, {"window_s": 0.0},
                                                       {"window_s": 0.04}, {"orders": "2:40", "queue_depth": 100})]
        unchanged = {"parameters": dict(node.parameters), "options": app.options, "tracker": app.tracker.options}
        harness.call(identify, request)
        third = {"orders": app.last_update.result.orders}

        shorter = node.set_parameters({"window_s": 2.0})
        windowed = harness.call(identify, request)
    return {"case": case, "first": first, "changed": changed, "identified": identified, "second": second,
            "before": before, "refusals": refusals, "unchanged": unchanged, "third": third, "shorter": shorter,
            "windowed": windowed}


def test_a_live_change_of_the_orders_changes_the_next_identification(oma_run):
    """Orders 2:40: the chain's 4 modes within 5 % (SSI-cov on 4 s of 30 dB data); after orders 2:4 the next
    identification runs orders (2, 3, 4) and finds at most 2 modes (4 states)."""
    first, second, case = oma_run["first"], oma_run["second"], oma_run["case"]
    assert first["orders"] == tuple(range(2, 41))
    found = first["frequencies"]
    assert len(found) == 4
    np.testing.assert_allclose(np.sort(found), chain_system().frequencies_hz, rtol=0.05)
    np.testing.assert_allclose(case.frequencies_hz, chain_system().frequencies_hz)
    assert oma_run["changed"] == (True, "")
    assert oma_run["identified"].success, oma_run["identified"].message
    assert second["orders"] == (2, 3, 4)
    assert len(second["frequencies"]) <= 2


def test_refused_oma_changes_leave_the_node_as_it_was(oma_run):
    reasons = [reason for ok, reason in oma_run["refusals"] if not ok]
    assert len(reasons) == len(oma_run["refusals"]) == 5
    assert "need at least one order" in reasons[0] and "'orders'" in reasons[0]
    assert "cannot read 'two to forty'" in reasons[1]
    assert "outside the range" in reasons[2]
    assert "'window_s'" in reasons[3] and "holds 8 samples" in reasons[3]      # 0.04 s at 200 Hz
    assert "'queue_depth' cannot be set because it is read-only" in reasons[4]
    unchanged = oma_run["unchanged"]
    assert unchanged["parameters"] == oma_run["before"]
    assert unchanged["options"].orders == unchanged["tracker"].orders == "2:4"
    assert unchanged["options"].window_s == unchanged["tracker"].window_s == 4.0
    assert oma_run["third"]["orders"] == (2, 3, 4)


def test_a_live_window_change_is_the_next_window(oma_run):
    """window_s 2.0 at 200 Hz: the next identification uses the newest 400 samples (the response names the
    window's length and its end, the last streamed sample at 100 + 799 / 200 s)."""
    assert oma_run["shorter"] == (True, "")
    assert oma_run["windowed"].success
    assert "window of 2.000 s ending at t = 103.995 s" in oma_run["windowed"].message


@pytest.fixture(scope="module")
def monitor_run():
    """A modal monitor at configuration 8 republishing every 20 s; then 50 Hz, then 0 Hz; then new gains."""
    with Harness() as harness:
        node = harness.node("modal_monitor_node", {"publish_rate_hz": 0.05})
        app = ModalMonitorNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/modal/frequencies": FA}, latched=["/modal/frequencies"])
        pose = probe_node.create_publisher(probe_node.types.sensor_msgs.msg.JointState, "/joint_states")
        assert harness.spin(10.0, lambda: pose.get_subscription_count() >= 1)
        robot = app.robot
        msg = probe_node.types.sensor_msgs.msg.JointState(name=list(robot.joint_names), position=float_sequence(Q8))
        msg.header.stamp = probe_node.stamp()
        pose.publish(msg)
        assert harness.spin(10.0, lambda: app.computations == 1 and probe.last("/modal/frequencies") is not None)
        slow = app.republished
        periods = {"0.05 Hz": app.republishing.period_s}
        node.set_parameters({"publish_rate_hz": 50.0})
        periods["50 Hz"] = app.republishing.period_s
        fast = harness.spin(5.0, lambda: app.republished >= slow + 10)
        node.set_parameters({"publish_rate_hz": 0.0})
        periods["0 Hz"] = app.republishing.period_s
        stopped = app.republished
        harness.spin(0.5)
        after_stop = app.republished
        published = len(probe.messages["/modal/frequencies"])
        gains = node.set_parameters({"kp": [8000.0], "kd": [30.0]})
        assert harness.spin(10.0, lambda: app.computations == 2
                            and len(probe.messages["/modal/frequencies"]) > published)
    return {"slow": slow, "periods": periods, "fast": fast, "stopped": stopped, "after_stop": after_stop,
            "gains": gains, "frequencies": probe.array("/modal/frequencies"), "robot": robot}


def test_a_rate_change_recreates_the_timer(monitor_run):
    """Nothing republished at 0.05 Hz within the first seconds; 10 republications soon after 50 Hz is set (0.2 s at
    that rate; 200 s at the old one); none once 0 Hz is set (no timer)."""
    assert monitor_run["slow"] == 0
    assert monitor_run["periods"] == {"0.05 Hz": 20.0, "50 Hz": 0.02, "0 Hz": None}
    assert monitor_run["fast"]
    assert monitor_run["after_stop"] == monitor_run["stopped"]


def test_new_monitor_gains_give_the_modes_with_those_gains(monitor_run):
    assert monitor_run["gains"] == (True, "")
    expected = modal_analysis(monitor_run["robot"], Q8, kp=8000.0, kd=30.0).frequencies_hz
    yaml_gains = modal_analysis(monitor_run["robot"], Q8).frequencies_hz
    np.testing.assert_allclose(monitor_run["frequencies"], expected, rtol=1e-12)
    assert np.abs(expected - yaml_gains).max() > 0.1


def test_changes_from_another_thread_while_the_simulator_runs():
    """40 gain changes from this thread while another spins the running simulator: every change accepted, no
    callback error, the stream without a gap or repeat (stamps 1 ms apart), the last gains in the running law."""
    with Harness() as harness:
        node = harness.node("simulator_node", {"real_time_factor": 2.0, "excitation.period_s": 0.25})
        app = SimulatorNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_states": JS})
        harness.spin(1.0, lambda: app.motor_states.publisher.get_subscription_count() >= 1)
        stop = threading.Event()
        spinner = threading.Thread(target=lambda: harness.spin(60.0, stop.is_set))
        spinner.start()
        try:
            results = []
            for i in range(40):  # one change per 20 samples received
                assert wait(lambda: len(probe.messages["/motor_states"]) >= 20 * i, 30.0), "the stream stopped"
                results.append(node.set_parameters({"kp": [KP_YAML * (0.6 + 0.01 * i)],
                                                    "update_period_s": 0.005 * (1 + i % 3)}))
        finally:
            stop.set()
            spinner.join()
    assert results == [(True, "")] * 40
    assert not node.input_errors
    stamps = states(probe.messages["/motor_states"])[0]
    assert len(stamps) >= 780
    np.testing.assert_allclose(np.diff(stamps), 1e-3, atol=1e-6)
    np.testing.assert_allclose(app.sim.controller.kp, KP_YAML * (0.6 + 0.39))
    assert app.ticks.period_s == 0.005 * (1 + 39 % 3)


def test_every_parameter_is_live_or_read_only():
    """The model and what fixes the streams' layout are read-only; the rest is applied live (README tables)."""
    from flexrobot_ros.nodes import feedforward_node, modal_monitor_node, oma_node, simulator_node

    read_only = {module.__name__.rsplit(".", 1)[1]: {s.name for s in module.PARAMETERS if s.read_only}
                 for module in (simulator_node, oma_node, feedforward_node, modal_monitor_node)}
    model = {"robot", "tool", "urdf", "robot_description_timeout"}  # the robot, and where its URDF comes from
    assert read_only == {
        "simulator_node": model | {"rate_hz", "substeps", "autostart", "publish_robot_description",
                                   "motor_encoder.counts_per_rev", "motor_encoder.noise_std",
                                   "link_encoder.counts_per_rev", "link_encoder.noise_std", "ros2_control.controller",
                                   "ros2_control.joints"},
        "oma_node": model | {"sample_rate_hz", "queue_depth", "output_directory", "silent_warning_s", "state_input",
                             "dynamic_joint_states.motor_interface", "dynamic_joint_states.link_interface"},
        "feedforward_node": model | {"ros2_control.output", "ros2_control.controller",
                                     "ros2_control.joints"},  # they choose the topics
        "modal_monitor_node": model | {"output_directory",  # where services may write: never live
                                       "state_input", "dynamic_joint_states.link_interface"},  # the subscription
    }


def test_feedforward_rate_and_streams_change_live():
    """output_rate_hz 100 then 250: the next motor_trajectory of the 1 s move has 101 then 251 points (t = k / rate);
    with stream_torques off nothing streams, on again the torque stream follows the new rate; a method that does
    not exist is refused."""
    from test_nodes_feedforward import JT, desired

    from flexrobot_ros.nodes.feedforward_node import FeedforwardNode

    with Harness() as harness:
        node = harness.node("feedforward_node", {"method": "ejnea"})
        app = FeedforwardNode(node)
        probe_node = harness.node("probe")
        probe = Probe(probe_node, {"/motor_trajectory": JT, "/motor_torque": JS})
        publisher = probe_node.create_publisher(probe_node.types.get(JT), "/desired_trajectory")
        assert harness.spin(5.0, lambda: publisher.get_subscription_count() > 0)
        quiet = node.set_parameters({"output_rate_hz": 100.0, "stream_torques": False})
        quiet_period = app.stream.period_s
        publisher.publish(desired(probe_node.types, probe_node.now() + 0.2))
        assert harness.spin(10.0, lambda: len(probe.messages["/motor_trajectory"]) == 1)
        harness.spin(1.5)  # the move is over: a stream would have run
        quiet_points, quiet_streamed = len(probe.last("/motor_trajectory").points), len(probe.messages["/motor_torque"])
        loud = node.set_parameters({"output_rate_hz": 250.0, "stream_torques": True})
        loud_period = app.stream.period_s
        publisher.publish(desired(probe_node.types, probe_node.now() + 0.2))
        assert harness.spin(10.0, lambda: len(probe.messages["/motor_torque"]) >= 251)
        refused = node.set_parameters({"method": "rnea"})
    assert quiet == loud == (True, "")
    assert quiet_period is None and quiet_points == 101 and quiet_streamed == 0
    assert loud_period == 0.004 and len(probe.last("/motor_trajectory").points) == 251
    assert len(probe.messages["/motor_torque"]) == 251
    assert not refused[0] and "not one of ['auto', 'sdrnea', 'ejnea', 'dae', 'prescribed', 'rigid']" in refused[1]
    assert node.parameters["method"] == "ejnea"


def test_excitation_changes_restart_the_schedule():
    """Impacts from first_s = 0.2 s every 100 s; at the 0.45 s pause the period becomes 0.1 s: the next impact is
    one new period after the last one but not in the past, i.e. at the next sample (0.451 s), then 0.551 and 0.651 s;
    at the 0.7 s pause the type becomes 'none': no impact up to 0.95 s. (The rule of the excitation.type
    description; times are sample times at 1 kHz.)"""
    with Harness() as harness:
        node = harness.node("simulator_node", {"real_time_factor": 4.0, "autostart": False,
                                               "excitation.period_s": 100.0, "pause_at_s": [0.45, 0.7, 0.95]})
        app = SimulatorNode(node)
        starts = []
        apply = app._apply
        app._apply = lambda excitation: (starts.append(round(excitation.t0, 9)), apply(excitation))
        resume = node.types.std_srvs.srv.SetBool.Request(data=True)
        response = node.types.std_srvs.srv.SetBool.Response()

        def run_to(sample):
            with app.live.lock:
                app.on_run(resume, response)
            assert harness.spin(30.0, lambda: app.state == "paused" and app.sim.sample_index == sample)

        run_to(450)
        faster = node.set_parameters({"excitation.period_s": 0.1})
        run_to(700)
        at_700 = list(starts)
        off = node.set_parameters({"excitation.type": "none"})
        run_to(950)
    assert faster == off == (True, "")
    assert at_700 == [0.2, 0.451, 0.551, 0.651]
    assert starts == at_700


def test_live_parameters_refuse_while_starting_and_undo_a_failed_commit():
    """Before the node has registered how to apply changes, a set is refused; a commit that fails (a bug) leaves the
    values the node reads and the node's parameters as they were, and the set request reports the failure."""
    from flexrobot_ros.nodes.live_parameters import LiveParameters
    from flexrobot_ros.runtime import ParameterSpec

    with Harness() as harness:
        node = harness.node("live_check", files=())
        live = LiveParameters(node, [ParameterSpec("gain", 1.0, "gain [-]", range=(0.0, 10.0))])
        starting = node.set_parameters({"gain": 2.0})
        seen = []

        def prepare(values, changed):
            def commit():
                seen.append(live.values["gain"])
                raise ZeroDivisionError("bug")
            return commit

        live.on_change(prepare)
        failed = node.set_parameters({"gain": 3.0})
    assert not starting[0] and "still starting" in starting[1]
    assert not failed[0] and "ZeroDivisionError" in failed[1]
    assert seen == [3.0] and live.values["gain"] == 1.0 and node.parameters["gain"] == 1.0
