"""Standalone bring-up mechanism: start node processes with parameter files, stop them cleanly.

Each :class:`NodeLaunch` becomes one process started with a ROS 2 command line (``--ros-args -r __node:=NAME
-r __ns:=NS --params-file FILE ... --params-file OVERRIDES -r from:=to``), as ``ros2 launch`` passes it, so the same
node ``main()`` and the same parameter files serve both. The launch's own parameter values go in a last parameter
file of the node's own (:meth:`NodeLaunch.overrides_yaml`), written by the :class:`Launcher`. Output lines are
prefixed with ``[name]``.

Shutdown follows ``ros2 launch``: SIGINT to every node, SIGTERM after ``grace_s`` for those still running, SIGKILL
after another ``grace_s``. :func:`launch` runs a bring-up until its deadline, Ctrl-C/SIGTERM, or the exit of a
node marked ``required``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

import yaml

from flexrobot_ros.errors import RuntimeLayerError


@dataclass(frozen=True)
class NodeLaunch:
    """One node process.

    Attributes:
        name: node name (``__node:=``), also the output prefix.
        module: Python module whose ``main()`` runs the node, started as ``python -m module``.
        command: instead of ``module``, the command to run (executable and its own arguments).
        namespace: node namespace (``__ns:=``).
        parameter_files: ROS 2 parameter files, in order.
        parameters: ``-p`` overrides (YAML-typed).
        remappings: ``{from: to}`` topic/service remappings.
        env: extra environment variables.
        required: when this process exits, the whole bring-up stops.
    """

    name: str
    module: str | None = None
    command: tuple[str, ...] | None = None
    namespace: str | None = None
    parameter_files: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    remappings: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    required: bool = False

    @property
    def fully_qualified_name(self) -> str:
        """``/namespace/name`` of the node."""
        return f"/{(self.namespace or '').strip('/')}/{self.name}".replace("//", "/")

    def overrides_yaml(self) -> str:
        """``parameters`` as a ROS 2 parameter file for this node alone (its fully qualified name is the section key).

        Passed as the last ``--params-file``, it wins over every section of the earlier files on both runtimes. A ``-p``
        override would not on rclpy: rcl adds it to the files' ``/**`` section, and a file's section naming the node
        (``simulator_node:``) then overrides it whatever the order on the command line."""
        return yaml.safe_dump({self.fully_qualified_name: {"ros__parameters": dict(self.parameters)}},
                              default_flow_style=None, sort_keys=False)

    def argv(self, overrides_file: str | None = None) -> list[str]:
        """The command line of the process; ``overrides_file`` holds :meth:`overrides_yaml` (needed when the launch
        has ``parameters``).

        Raises:
            RuntimeLayerError: neither or both of ``module`` and ``command``, a missing parameter file, or
                ``parameters`` without an ``overrides_file``.
        """
        if (self.module is None) == (self.command is None):
            raise RuntimeLayerError(f"node launch {self.name!r}: give exactly one of module= and command=")
        argv = [sys.executable, "-m", self.module] if self.module else list(self.command or ())
        argv += ["--ros-args", "-r", f"__node:={self.name}"]
        if self.namespace:
            argv += ["-r", f"__ns:={self.namespace}"]
        for path in self.parameter_files:
            if not Path(path).is_file():
                raise RuntimeLayerError(f"node launch {self.name!r}: parameter file {path} does not exist")
            argv += ["--params-file", str(path)]
        if self.parameters:
            if overrides_file is None:
                raise RuntimeLayerError(f"node launch {self.name!r}: its parameters {sorted(self.parameters)} need an "
                                        "overrides file (NodeLaunch.overrides_yaml; the Launcher writes it)")
            argv += ["--params-file", str(overrides_file)]
        for source, target in self.remappings.items():
            argv += ["-r", f"{source}:={target}"]
        return argv


@dataclass(frozen=True)
class ProcessResult:
    """How a node process ended: its exit code (negative: killed by that signal) and how it was stopped
    (``exited`` by itself, ``sigint``, ``sigterm`` or ``sigkill`` from the launcher)."""

    name: str
    pid: int
    returncode: int
    stopped_by: str


def _stop_with_parent() -> None:
    """In the child before exec: ask the kernel for SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG). A launcher
    killed without warning cannot stop its nodes in order; SIGINT there left a node running now and then."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


class Launcher:
    """Starts node processes, forwards their output, and stops them (usable as a context manager)."""

    def __init__(self, launches: Sequence[NodeLaunch], *, env: Mapping[str, str] | None = None,
                 output: TextIO | None = None, grace_s: float = 5.0) -> None:
        names = [launch.name for launch in launches]
        if len(set(names)) != len(names):
            raise RuntimeLayerError(f"node launches must have distinct names, got {names}")
        self.launches = list(launches)
        self._env = dict(os.environ if env is None else env)
        self._output = output if output is not None else sys.stderr
        self._grace = grace_s
        self._processes: dict[str, subprocess.Popen] = {}
        self._stopped_by: dict[str, str] = {}
        self._threads: list[threading.Thread] = []
        self._write_lock = threading.Lock()
        self._overrides: tempfile.TemporaryDirectory | None = None  # the parameter overrides files, while running

    def start(self) -> None:
        """Start every process (each in its own session, so a terminal's Ctrl-C reaches only the launcher). On Linux
        each is killed when the launcher dies, even by SIGKILL, so no node outlives a killed bring-up."""
        self._overrides = tempfile.TemporaryDirectory(prefix="flexrobot-launch-")
        for launch in self.launches:
            overrides = None
            if launch.parameters:
                overrides = Path(self._overrides.name) / f"{launch.name}.overrides.yaml"
                overrides.write_text(launch.overrides_yaml(), encoding="utf-8")
            argv = launch.argv(overrides)
            process = subprocess.Popen(argv, env={**self._env, **launch.env}, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, bufsize=1, start_new_session=True,
                                       preexec_fn=_stop_with_parent if sys.platform == "linux" else None)
            self._processes[launch.name] = process
            thread = threading.Thread(target=self._forward, args=(launch.name, process), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _forward(self, name: str, process: subprocess.Popen) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._write_lock:
                self._output.write(f"[{name}] {line}")
                self._output.flush()

    def pids(self) -> dict[str, int]:
        """Process ID of each started node ({name: pid})."""
        return {name: process.pid for name, process in self._processes.items()}

    def exited(self) -> list[str]:
        """Names of the processes that have ended."""
        return [name for name, process in self._processes.items() if process.poll() is not None]

    def wait(self, duration_s: float | None = None, stop: threading.Event | None = None) -> str:
        """Block until the deadline (``"deadline"``), ``stop`` is set (``"stopped"``), a required node ends
        (``"required node <name> exited"``) or all nodes end (``"all exited"``)."""
        deadline = None if duration_s is None else time.monotonic() + duration_s
        required = {launch.name for launch in self.launches if launch.required}
        while True:
            ended = self.exited()
            for name in ended:
                if name in required:
                    return f"required node {name} exited"
            if len(ended) == len(self._processes):
                return "all exited"
            if stop is not None and stop.is_set():
                return "stopped"
            if deadline is not None and time.monotonic() >= deadline:
                return "deadline"
            time.sleep(0.05)

    def shutdown(self) -> list[ProcessResult]:
        """SIGINT, then SIGTERM, then SIGKILL (``grace_s`` apart) to the processes still running."""
        for sig, label in ((signal.SIGINT, "sigint"), (signal.SIGTERM, "sigterm"), (signal.SIGKILL, "sigkill")):
            running = {n: p for n, p in self._processes.items() if p.poll() is None}
            if not running:
                break
            for name, process in running.items():
                self._stopped_by[name] = label
                process.send_signal(sig)
            deadline = time.monotonic() + self._grace
            while time.monotonic() < deadline and any(p.poll() is None for p in running.values()):
                time.sleep(0.02)
        for process in self._processes.values():
            process.wait()
        for thread in self._threads:
            thread.join(timeout=1.0)
        if self._overrides is not None:
            self._overrides.cleanup()
            self._overrides = None
        return [ProcessResult(name, process.pid, process.returncode, self._stopped_by.get(name, "exited"))
                for name, process in self._processes.items()]

    def __enter__(self) -> Launcher:
        self.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.shutdown()


def launch(launches: Sequence[NodeLaunch], *, duration_s: float | None = None, env: Mapping[str, str] | None = None,
           output: TextIO | None = None, grace_s: float = 5.0) -> tuple[str, list[ProcessResult]]:
    """Run a bring-up until ``duration_s``, SIGINT/SIGTERM to this process, or a required node's exit; then stop
    every node cleanly. Returns (why it stopped, how each process ended)."""
    stop = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    launcher = Launcher(launches, env=env, output=output, grace_s=grace_s)
    try:
        launcher.start()
        reason = launcher.wait(duration_s, stop)
    finally:
        results = launcher.shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return reason, results
