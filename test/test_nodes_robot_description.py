"""The URDF from the latched ``robot_description`` topic (issue 36, item 5) on both runtimes, as node processes.

The robot is the Panda of the PyPI package example-robot-data (a vendor URDF: 7 joints and two prismatic fingers,
held by ``locked_joints``), described by the flexibility YAML of the issue in two copies that differ in ``urdf``
only: the URDF file, and ``robot_description``. This test publishes the URDF text latched (transient local), as
robot_state_publisher does, from a peer of the node's own DDS implementation (a standalone node for a standalone one,
an rclpy node for an rclpy one). What is checked:

- the modal monitor whose URDF comes from the topic publishes, at a pose it receives on ``joint_states``, the
  frequencies ``flexrobot modal`` prints for the file-based robot at that pose (one code path, so equal to 1e-12
  relative), with the URDF published before the node starts and, separately, after the node logged that it waits for
  it; the topic chosen by the YAML's ``urdf: robot_description`` or by the node's ``urdf`` parameter (with the file
  YAML); relative, so in the node's namespace, and remappable;
- no URDF within ``robot_description_timeout``: exit status 2 and one error line naming the fully qualified topic
  and the timeout;
- a robot_description that is not XML, one that urdfdom refuses, and the URDF of another robot: exit status 2 and
  one error line naming the topic (urdfdom's reason, the joint that is missing);
- SIGINT while the node waits: exit status 0 at once, not after the timeout;
- a simulator whose URDF came from the topic publishes none of its own (one publisher on robot_description, the
  test's), and runs the Panda; its joint_states carry the locked fingers at their positions;
- ``flexrobot bringup hardware --urdf robot_description``: the bring-up and its nodes take the topic's URDF;
  ``bringup simulation`` refuses a YAML whose URDF comes from the topic.
"""
from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import runtime_peer as peer
from flexrobot_ros.runtime.messages import float_sequence
from vendor_robots import vendor_robots

REPO = Path(__file__).resolve().parents[1]
#: A pose of the Panda inside its joint limits [rad].
POSE = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
FINGERS = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
#: Seconds a node process may take to start, or to stop after SIGINT (several on a loaded 2-core machine).
START_S = 60.0


def vendor_file(relative: str) -> Path:
    """A file of the installed example-robot-data's robots folder (the test is skipped without the package)."""
    return vendor_robots() / relative


@pytest.fixture(scope="module")
def panda(tmp_path_factory) -> dict[str, Any]:
    """The Panda's URDF text and its flexibility YAMLs: ``file`` (urdf: the file) and ``topic`` (urdf:
    robot_description)."""
    urdf = vendor_file("panda_description/urdf/panda.urdf")
    folder = tmp_path_factory.mktemp("panda")
    joints = "".join(f"  {joint}: {{stiffness: 20000.0, rotor_inertia: 1.0e-5, gear_ratio: 100, link_damping: 1.0}}\n"
                     for joint in JOINTS)
    body = (f"tool_frame: panda_hand\nlocked_joints: {json.dumps(FINGERS)}\ncontroller: {{kp: 2000.0, kd: 20.0}}\n"
            f"joints:\n{joints}")
    files = {"file": folder / "panda.yaml", "topic": folder / "panda_from_topic.yaml"}
    files["file"].write_text(f"robot: panda\nurdf: {urdf}\n{body}")
    files["topic"].write_text(f"robot: panda\nurdf: robot_description\n{body}")
    return {"urdf": urdf.read_text(), **files}


@pytest.fixture(scope="module")
def cli_modes(panda) -> list[float]:
    """``flexrobot modal <file YAML> --q POSE --json``: the natural frequencies [Hz] of the file-based robot."""
    from flexrobot_ros.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["modal", str(panda["file"]), "--q", ",".join(map(str, POSE)), "--json"]) == 0
    return json.loads(out.getvalue())["frequencies_hz"]


# ------------------------------------------------------------------------------------------------------------------
# The test's side of the graph: a node of the runtime under test's DDS implementation
# ------------------------------------------------------------------------------------------------------------------

class Peer:
    """This process's node in ``namespace``: publishes latched texts and poses, records ``modal/frequencies`` and
    ``joint_states``, sees the writers on ``robot_description``."""

    def __init__(self, runtime: str, namespace: str) -> None:
        self.runtime = runtime
        self.frequencies: list[list[float]] = []
        self.states: list[Any] = []
        self.publishers: dict[str, Any] = {}
        self._stop = threading.Event()
        if runtime == "rclpy":
            pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")
            import rclpy
            from rclpy.executors import SingleThreadedExecutor
            from rclpy.qos import DurabilityPolicy, QoSProfile
            from sensor_msgs.msg import JointState
            from std_msgs.msg import Float64MultiArray, String

            self.context = rclpy.Context()
            rclpy.init(context=self.context, domain_id=peer.run_domain())
            self.node = rclpy.create_node("urdf_peer", namespace=namespace, context=self.context)
            self.latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.volatile = QoSProfile(depth=10)
            self.String, self.JointState = String, JointState
            self.node.create_subscription(Float64MultiArray, "modal/frequencies", self._on_frequencies, self.latched)
            self.node.create_subscription(JointState, "joint_states", self.states.append, 1000)
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
            spin_once: Callable[[], None] = lambda: self.executor.spin_once(timeout_sec=0.05)  # noqa: E731
        else:
            from flexrobot_ros.runtime import QOS_DEFAULT, QOS_LATCHED, create_node

            self._loopback = peer.loopback_in_process()
            self._loopback.__enter__()
            self.node = create_node("urdf_peer", namespace=namespace, backend="dds")
            self.latched, self.volatile = QOS_LATCHED, QOS_DEFAULT
            types = self.node.types
            self.String, self.JointState = types.std_msgs.msg.String, types.sensor_msgs.msg.JointState
            self.node.create_subscription(self.node.types.std_msgs.msg.Float64MultiArray, "modal/frequencies",
                                          self._on_frequencies, QOS_LATCHED)
            self.node.create_subscription(self.JointState, "joint_states", self.states.append,
                                          QOS_DEFAULT.with_depth(1000))
            self.description = self.node.create_subscription(self.String, "robot_description", lambda msg: None,
                                                             QOS_LATCHED)
            spin_once = lambda: self.node.spin_once(0.05)  # noqa: E731
        self._thread = threading.Thread(target=self._spin, args=(spin_once,), daemon=True)
        self._thread.start()

    def _spin(self, spin_once: Callable[[], None]) -> None:
        while not self._stop.is_set():
            spin_once()

    def _on_frequencies(self, msg: Any) -> None:
        self.frequencies.append(list(msg.data))

    def description_writers(self) -> int:
        """Writers matched on robot_description (the standalone runtime's peer)."""
        return self.description.get_publisher_count()

    def latch(self, topic: str, text: str) -> None:
        """Publish ``text`` (std_msgs/String) on ``topic``, latched (transient local, depth 1)."""
        self.publishers[topic] = self.node.create_publisher(self.String, topic, self.latched)
        self.publishers[topic].publish(self.String(data=text))

    def publish_pose(self, k: int) -> None:
        """:data:`POSE` and the fingers on ``joint_states`` (stamp k x 0.1 s), as a Panda's driver names them."""
        if "joint_states" not in self.publishers:
            self.publishers["joint_states"] = self.node.create_publisher(self.JointState, "joint_states",
                                                                         self.volatile)
        msg = self.JointState(name=JOINTS + list(FINGERS), position=float_sequence(POSE + list(FINGERS.values())))
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1 + k // 10, (k % 10) * 100_000_000
        self.publishers["joint_states"].publish(msg)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        if self.runtime == "rclpy":
            import rclpy

            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
            rclpy.try_shutdown(context=self.context)
        else:
            self.node.destroy()
            self._loopback.__exit__(None, None, None)


class NodeProcess:
    """``python -m flexrobot_ros.nodes.<node> --ros-args -r __ns:=<namespace> ...`` on ``runtime``; ``lines`` is its
    output (stdout and stderr), read as it comes."""

    def __init__(self, node: str, runtime: str, namespace: str, *ros_args: str) -> None:
        env = peer.loopback_env(FLEXROBOT_RUNTIME=runtime, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
                                OPENBLAS_NUM_THREADS="1")
        if runtime == "rclpy":
            env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        self.node = node
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"flexrobot_ros.nodes.{node}", "--ros-args", "-r", f"__ns:={namespace}", *ros_args],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, condition: Callable[[], bool], seconds: float = START_S) -> None:
        """Until ``condition()``; fails, with the output, when the process ended first or the time ran out."""
        deadline = time.monotonic() + seconds
        while not condition():
            assert self.process.poll() is None, f"{self.node} ended ({self.process.returncode}):\n{self.output}"
            assert time.monotonic() < deadline, f"{self.node}: not within {seconds} s:\n{self.output}"
            time.sleep(0.05)

    def waiting(self) -> bool:
        """Whether the node logged that it waits for the URDF."""
        return any("for the URDF on" in line for line in self.lines)

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Send ``sig``; the exit status (killed, and failing, after :data:`START_S`)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.finish()

    def finish(self) -> int:
        """The exit status once the process ended by itself (killed, and failing, after :data:`START_S`)."""
        try:
            code = self.process.wait(timeout=START_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.node} did not end within {START_S} s:\n{self.output}") from None
        self._reader.join(timeout=5.0)
        return code

    def error_line(self) -> str:
        """The one line ``<node>: error: ...`` of a refused start (no traceback)."""
        errors = [line for line in self.lines if line.startswith(f"{self.node}: error: ")]
        assert len(errors) == 1 and "Traceback" not in self.output, self.output
        return errors[0]


@contextlib.contextmanager
def graph(runtime: str, namespace: str):
    """The test's peer in ``namespace`` (closed after)."""
    node = Peer(runtime, namespace)
    try:
        yield node
    finally:
        node.close()


def namespace(label: str) -> str:
    return f"/urdf_{label}_{peer.run_domain()}"


# ------------------------------------------------------------------------------------------------------------------
# The modes of the topic's URDF are the file's
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("runtime, order, selected", [
    ("dds", "before", "yaml"),
    ("dds", "after", "parameter, remapped"),
    ("rclpy", "before", "parameter"),
    ("rclpy", "after", "yaml, remapped"),
])
def test_the_monitor_on_the_topics_urdf_gives_the_modes_of_the_file(panda, cli_modes, runtime, order, selected):
    ns = namespace(f"{runtime}_{order}")
    yaml_file = panda["topic"] if selected.startswith("yaml") else panda["file"]
    topic, ros_args = "robot_description", ["-p", f"robot:={yaml_file}", "-p", "robot_description_timeout:=60.0"]
    if selected.startswith("parameter"):
        ros_args += ["-p", "urdf:=robot_description"]
    if selected.endswith("remapped"):
        topic = f"{ns}/arm/robot_description"
        ros_args += ["-r", f"robot_description:={topic}"]
    with graph(runtime, ns) as test:
        if order == "before":
            test.latch(topic, panda["urdf"])
        monitor = NodeProcess("modal_monitor_node", runtime, ns, *ros_args)
        try:
            monitor.wait_for(monitor.waiting)
            assert f"for the URDF on {topic if topic.startswith('/') else f'{ns}/{topic}'}" in monitor.output
            if order == "after":
                test.latch(topic, panda["urdf"])
            k, deadline = 0, time.monotonic() + START_S
            while not test.frequencies:  # poses until the monitor, subscribed once it has the URDF, answers
                assert monitor.process.poll() is None and time.monotonic() < deadline, monitor.output
                test.publish_pose(k)
                k += 1
                time.sleep(0.1)
        finally:
            code = monitor.stop()
    frequencies = test.frequencies[-1]
    print(f"{runtime}, URDF published {order} the node started ({selected}): {np.round(frequencies[:4], 4)} ... Hz; "
          f"flexrobot modal on the file: {np.round(cli_modes[:4], 4)} ... Hz")
    assert code == 0, monitor.output
    assert len(frequencies) == 2 * len(JOINTS) and np.allclose(frequencies, cli_modes, rtol=1e-12, atol=0.0)


# ------------------------------------------------------------------------------------------------------------------
# Bad input: no URDF, not a URDF, another robot's
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("runtime", ["dds", "rclpy"])
def test_no_urdf_within_the_timeout_is_one_line_naming_topic_and_timeout(panda, runtime):
    if runtime == "rclpy":
        pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")
    ns = namespace(f"{runtime}_timeout")
    started = time.monotonic()
    monitor = NodeProcess("modal_monitor_node", runtime, ns, "-p", f"robot:={panda['topic']}",
                          "-p", "robot_description_timeout:=0.5")
    code = monitor.finish()
    line = monitor.error_line()
    print(f"{runtime}: exit {code} after {time.monotonic() - started:.1f} s: {line}")
    assert code == 2, monitor.output
    assert f"no URDF on {ns}/robot_description within 0.5 s" in line, line


#: robot_description texts that are no URDF of the Panda -> what the error line says besides the topic.
BAD_DESCRIPTIONS = {
    "not XML": ("this is not XML", "not well-formed XML"),
    "refused by urdfdom": ('<robot name="panda"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
                           '<child link="b"/></joint></robot>', "urdfdom: Joint [j] is of type REVOLUTE but it does "
                                                                "not specify limits"),
    "another robot": (None, "locked_joints.panda_finger_joint1: no movable joint 'panda_finger_joint1'"),
}


@pytest.mark.parametrize("runtime, kind", [("dds", "not XML"), ("rclpy", "not XML"), ("rclpy", "refused by urdfdom"),
                                           ("dds", "another robot")])
def test_a_robot_description_that_is_no_urdf_of_the_robot_is_one_line_naming_the_topic(panda, runtime, kind):
    from flexrobot_ros.model.loader import share_directory

    text, expected = BAD_DESCRIPTIONS[kind]
    text = text if text is not None else (share_directory() / "urdf" / "scompi.urdf").read_text()
    ns = namespace(f"{runtime}_bad")
    with graph(runtime, ns) as test:
        test.latch("robot_description", text)
        monitor = NodeProcess("modal_monitor_node", runtime, ns, "-p", f"robot:={panda['topic']}")
        code = monitor.finish()
    line = monitor.error_line()
    print(f"{runtime}, {kind}: exit {code}: {line}")
    assert code == 2, monitor.output
    assert f"topic {ns}/robot_description" in line and expected in line, line


def test_urdfdoms_reasons_are_in_the_error_and_not_on_stderr(panda, capfd):
    """urdfdom prints why it refuses a URDF on file descriptor 2 (two lines per reason, with its source file); the
    load error holds the reasons instead and nothing reaches stderr, so a node's refusal stays one line."""
    from flexrobot_ros.errors import ModelError
    from flexrobot_ros.model import load_robot

    text, _ = BAD_DESCRIPTIONS["refused by urdfdom"]
    with pytest.raises(ModelError) as refused:
        load_robot(panda["topic"], urdf_text=text, urdf_origin="topic /arm/robot_description")
    assert str(refused.value) == ("URDF from topic /arm/robot_description: pinocchio cannot parse it: The XML stream "
                                  "does not contain a valid URDF model. (urdfdom: Joint [j] is of type REVOLUTE but "
                                  "it does not specify limits; joint xml is not initialized correctly)")
    assert capfd.readouterr().err == ""


# ------------------------------------------------------------------------------------------------------------------
# Stopping while waiting; the simulator does not publish a second copy
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("runtime", ["dds", "rclpy"])
def test_sigint_while_waiting_stops_the_node_at_once(panda, runtime):
    if runtime == "rclpy":
        pytest.importorskip("rclpy", reason="needs rclpy (bash scripts/test installs ROS 2 Jazzy from PyPI)")
    monitor = NodeProcess("modal_monitor_node", runtime, namespace(f"{runtime}_sigint"), "-p",
                          f"robot:={panda['topic']}", "-p", "robot_description_timeout:=600.0")
    monitor.wait_for(monitor.waiting)
    started = time.monotonic()
    code = monitor.stop(signal.SIGINT)
    elapsed = time.monotonic() - started
    print(f"{runtime}: SIGINT while waiting: exit {code} after {elapsed:.2f} s")
    assert code == 0 and "Traceback" not in monitor.output and "error" not in monitor.output, monitor.output
    assert elapsed < 30.0, monitor.output  # the wait ended on the signal, not after its 600 s


def test_a_simulator_on_the_topics_urdf_latches_no_second_copy_and_states_its_locked_joints(panda):
    """A standalone simulator with urdf: robot_description: it logs that it does not publish robot_description, the
    topic keeps one writer (the test's) once the simulator runs, and the simulation runs the Panda: its joint_states
    name the seven joints, then the two locked fingers at the YAML's 0.02 m with velocity and effort 0 (what
    robot_state_publisher needs for the whole URDF's tf)."""
    ns = namespace("simulator")
    with graph("dds", ns) as test:
        test.latch("robot_description", panda["urdf"])
        simulator = NodeProcess("simulator_node", "dds", ns, "-p", f"robot:={panda['topic']}", "-p",
                                "excitation.type:=none", "-p", "tf_rate_hz:=0.0")
        try:
            simulator.wait_for(lambda: len(test.states) >= 100)
            time.sleep(1.0)  # every writer the simulator made before its first sample is discovered by now
            writers = test.description_writers()
        finally:
            code = simulator.stop()
    print(f"simulator on the topic's URDF: {len(test.states)} joint_states, {writers} writer(s) on robot_description")
    assert code == 0, simulator.output
    assert "publish_robot_description: not publishing" in simulator.output, simulator.output
    assert writers == 1, simulator.output
    last = test.states[-1]
    assert list(last.name) == JOINTS + list(FINGERS), list(last.name)
    assert list(last.position)[len(JOINTS):] == list(FINGERS.values())
    assert list(last.velocity)[len(JOINTS):] == list(last.effort)[len(JOINTS):] == [0.0, 0.0]
    assert np.all(np.isfinite(last.position)) and np.any(np.asarray(last.effort)[:len(JOINTS)] != 0.0)


# ------------------------------------------------------------------------------------------------------------------
# flexrobot bringup hardware --urdf robot_description
# ------------------------------------------------------------------------------------------------------------------

def bringup(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "flexrobot_ros.cli", "bringup", *arguments]


def test_the_hardware_bringup_takes_the_urdf_from_the_topic(panda, tmp_path):
    """``flexrobot bringup hardware <file YAML> --urdf robot_description --namespace NS`` on the standalone runtime,
    the URDF latched on NS/robot_description by this test: the bring-up's own node and its three nodes log that they
    wait for it because of the urdf parameter, the nodes then start on the Panda, and the bring-up's summary (after
    Ctrl-C: exit 130) is the Panda's, which it could only load from the topic. (The feedforward node runs EJNEA:
    SDRNEA's code generation for the Panda would take most of the test on a fresh machine.)"""
    ns = namespace("bringup")
    params = tmp_path / "hardware.yaml"
    params.write_text("/**/feedforward_node:\n  ros__parameters:\n    method: ejnea\n")
    with graph("dds", ns) as test:
        test.latch("robot_description", panda["urdf"])
        process = subprocess.Popen(bringup("hardware", str(panda["file"]), "--urdf", "robot_description",
                                           "--namespace", ns, "--params", str(params), "--json"),
                                   cwd=REPO, env=peer.loopback_env(PYTHONUNBUFFERED="1"), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in process.stderr),
                                  daemon=True)
        reader.start()
        started = ("modes of panda on", "feedforward for panda (ejnea", "OMA (")  # each node's line once it runs
        try:
            deadline = time.monotonic() + 2 * START_S
            while not all(any(text in line for line in lines) for text in started):
                assert process.poll() is None and time.monotonic() < deadline, "\n".join(lines)
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            stdout, _ = process.communicate(timeout=START_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        reader.join(timeout=5.0)
    output = "\n".join(lines)
    waited = sorted(line.split("]: waiting")[0].rsplit("/", 1)[1] for line in lines
                    if f"for the URDF on {ns}/robot_description (parameter urdf)" in line)
    print(f"bringup: exit {process.returncode}, robot {json.loads(stdout)['robot']}; waited for the URDF: {waited}")
    assert process.returncode == 130, output
    assert waited == ["feedforward_node", "flexrobot_bringup", "modal_monitor_node", "oma_node"], output
    summary = json.loads(stdout)
    assert summary["robot"] == "panda" and summary["kind"] == "hardware", summary


def test_the_simulation_bringup_refuses_a_urdf_from_the_topic(panda):
    """The simulator is the robot: ``bringup simulation`` with a YAML whose URDF comes from the topic is one line, exit
    status 2, before any node starts."""
    completed = subprocess.run(bringup("simulation", str(panda["topic"])), cwd=REPO, env=peer.loopback_env(),
                               capture_output=True, text=True, timeout=START_S)
    print(completed.stderr.strip())
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith("flexrobot bringup: error: bringup simulation ") and \
        "urdf: robot_description" in completed.stderr, completed.stderr
