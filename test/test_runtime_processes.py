"""Standalone bring-up mechanism: node processes started with ROS 2 parameter files and remappings, stopped
cleanly at a deadline, on Ctrl-C of the launcher, or when a required node fails."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import runtime_peer as peer
from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime import QOS_LATCHED, create_node
from flexrobot_ros.runtime.processes import Launcher, NodeLaunch, launch

PARAMS = textwrap.dedent("""
    /**:
      ros__parameters:
        robot: scompi
        rate_hz: 250.0
    /bench/alpha:
      ros__parameters:
        gains: [10.0, 20.0, 30.0]
        excitation:
          period_s: 2.5
    beta:
      ros__parameters:
        rate_hz: 1000.0
""")


def _node(name: str, params, **kw) -> NodeLaunch:
    return NodeLaunch(name, command=(sys.executable, peer.__file__, "param_node"), parameter_files=(str(params),), **kw)


@pytest.fixture()
def params(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS)
    return path


def test_nodes_get_their_parameters_and_stop_at_the_deadline(tmp_path, params):
    """alpha (namespace /bench) gets the wildcard values plus its own section, beta (root namespace) the
    wildcard plus its own and a -p override; remapping applies; both run close() and exit 0 at the deadline."""
    env = peer.loopback_env(PEER_MARKER_DIR=str(tmp_path))
    launches = [_node("alpha", params, namespace="/bench", remappings={"joint_states": "/robot/motor_states"}),
                _node("beta", params, parameters={"gains": [0.5]})]
    reports = {}
    with peer.loopback_in_process():
        listener = create_node("bringup_listener")
        for fqn in ("/bench/alpha", "/beta"):
            listener.create_subscription(listener.types.std_msgs.msg.String, f"{fqn}/params",
                                         lambda m, f=fqn: reports.__setitem__(f, json.loads(m.data)), QOS_LATCHED)
        output = io.StringIO()
        start = time.monotonic()
        with Launcher(launches, env=env, output=output, grace_s=5.0) as launcher:
            while len(reports) < 2 and time.monotonic() - start < 20:
                listener.spin_once(0.05)
            reason = launcher.wait(duration_s=0.5)
        results = {r.name: r for r in launcher.shutdown()}
        listener.destroy()
    assert reason == "deadline"
    assert reports["/bench/alpha"] == {
        "parameters": {"rate_hz": 250.0, "robot": "scompi", "gains": [10.0, 20.0, 30.0], "excitation.period_s": 2.5},
        "fqn": "/bench/alpha", "joint_states": "/robot/motor_states"}
    assert reports["/beta"] == {
        "parameters": {"rate_hz": 1000.0, "robot": "scompi", "gains": [0.5], "excitation.period_s": 1.0},
        "fqn": "/beta", "joint_states": "/joint_states"}
    assert {n: (r.returncode, r.stopped_by) for n, r in results.items()} == {"alpha": (0, "sigint"),
                                                                            "beta": (0, "sigint")}
    assert sorted(p.name for p in tmp_path.glob("*.closed")) == ["alpha.closed", "beta.closed"]


def test_ctrl_c_on_the_launcher_stops_every_node_cleanly(tmp_path, params):
    """SIGINT to a launcher process (what Ctrl-C sends) ends it and both nodes, each after its close()."""
    script = textwrap.dedent(f"""
        import sys, json
        sys.path.insert(0, {str(peer.REPO)!r})
        from flexrobot_ros.runtime.processes import NodeLaunch, launch
        nodes = [NodeLaunch(n, command=(sys.executable, {peer.__file__!r}, "param_node"),
                            parameter_files=({str(params)!r},)) for n in ("gamma", "delta")]
        reason, results = launch(nodes, duration_s=60)
        print(json.dumps({{"reason": reason, "codes": [r.returncode for r in results],
                          "pids": [r.pid for r in results]}}))
    """)
    env = peer.loopback_env(PEER_MARKER_DIR=str(tmp_path))
    launcher = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60.0  # both nodes up (their stop handlers installed), however slow the machine
    while time.monotonic() < deadline and not all((tmp_path / f"{n}.started").exists() for n in ("gamma", "delta")):
        time.sleep(0.05)
    start = time.monotonic()
    launcher.send_signal(signal.SIGINT)
    out, _ = launcher.communicate(timeout=30)
    assert time.monotonic() - start < 10
    summary = json.loads(out.splitlines()[-1])
    assert summary["reason"] == "stopped" and summary["codes"] == [0, 0]
    for pid in summary["pids"]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert sorted(p.name for p in tmp_path.glob("*.closed")) == ["delta.closed", "gamma.closed"]


def _state(pid: int) -> str | None:
    """Process state letter from /proc (``Z`` for a zombie), None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_node_stops_cleanly_when_the_process_that_started_it_is_killed(tmp_path, params):
    """Issue 23: a launcher that does not ask the kernel to kill its children (``ros2 launch``, ``ros2 run``, a
    shell) is killed with SIGKILL; the node sees it has a new parent, stops like on Ctrl-C (its ``close()`` runs)
    and logs why, within a few seconds, instead of living on with parent PID 1."""
    script = textwrap.dedent(f"""
        import subprocess, sys, time
        log = open({str(tmp_path / "node.log")!r}, "w")
        node = subprocess.Popen([sys.executable, {peer.__file__!r}, "param_node", "--ros-args", "-r",
                                 "__node:=orphan", "--params-file", {str(params)!r}], stdout=log, stderr=log)
        print(node.pid, flush=True)
        time.sleep(600)
    """)
    launcher = subprocess.Popen([sys.executable, "-c", script], env=peer.loopback_env(PEER_MARKER_DIR=str(tmp_path)),
                                stdout=subprocess.PIPE, text=True)
    node_pid = int(launcher.stdout.readline())
    try:
        deadline = time.monotonic() + 60.0  # the node up with its stop handlers, however slow the machine
        while time.monotonic() < deadline and not (tmp_path / "orphan.started").exists():
            time.sleep(0.05)
        assert (tmp_path / "orphan.started").exists(), (tmp_path / "node.log").read_text()
        killed = time.monotonic()
        launcher.kill()
        launcher.wait(10)
        while time.monotonic() - killed < 10.0 and _state(node_pid) not in (None, "Z"):
            time.sleep(0.05)
        stopped_after_s = time.monotonic() - killed
        state = _state(node_pid)
    finally:
        if _state(node_pid) not in (None, "Z"):
            os.kill(node_pid, signal.SIGKILL)  # a failed run must not leave a node in the next tests' domain
    print(f"node stopped {stopped_after_s:.2f} s after its launcher was killed")
    assert state in (None, "Z"), f"node {node_pid} still running 10 s after its launcher was killed"
    assert (tmp_path / "orphan.closed").exists(), "the node stopped without running close()"
    assert f"stopping: the process that started this node (PID {launcher.pid}) has ended" in \
        (tmp_path / "node.log").read_text()


def test_a_failing_required_node_stops_the_bringup(tmp_path, params):
    """A parameter the node refuses (an integer for a double: ROS 2 types parameters statically) makes it exit
    with status 2 and a message naming parameter, file and value; being required, it ends the bring-up."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("epsilon:\n  ros__parameters:\n    rate_hz: 500\n")
    output = io.StringIO()
    wait_for_zeta = {"PEER_WAIT_FOR": str(tmp_path / "zeta.started")}  # fail only once zeta can stop cleanly
    reason, results = launch([_node("epsilon", bad, required=True, env=wait_for_zeta), _node("zeta", params)],
                             duration_s=30,
                             env=peer.loopback_env(PEER_MARKER_DIR=str(tmp_path)), output=output)
    codes = {r.name: (r.returncode, r.stopped_by) for r in results}
    assert reason == "required node epsilon exited"
    assert codes == {"epsilon": (2, "exited"), "zeta": (0, "sigint")}
    assert "parameter 'rate_hz'" in output.getvalue() and "bad.yaml" in output.getvalue()
    assert "write 1.0, not 1" in output.getvalue()


def test_launch_description_errors_are_clear(tmp_path):
    with pytest.raises(RuntimeLayerError, match="does not exist"):
        NodeLaunch("x", module="m", parameter_files=(str(tmp_path / "missing.yaml"),)).argv()
    with pytest.raises(RuntimeLayerError, match="exactly one of"):
        NodeLaunch("x").argv()
    with pytest.raises(RuntimeLayerError, match="distinct names"):
        Launcher([NodeLaunch("x", module="m"), NodeLaunch("x", module="m")])
