"""A node stops when the process that started it dies (issue 23): the one check both back ends' spin loops make.

A node's parent is its launcher: ``ros2 launch``, ``ros2 run`` (itself a child of the shell), ``flexrobot bringup``
or a shell. When that parent is killed without warning (SIGKILL, a crashed terminal) nothing tells the node; it is
re-parented to init (PID 1) or to the nearest sub-reaper and would keep publishing into the domain forever. The
spin loops (:meth:`~flexrobot_ros.runtime.dds_backend.DdsNode.spin`, :func:`~flexrobot_ros.runtime.rclpy_backend.spin`)
ask :meth:`ParentWatch.parent_gone` between callbacks (at least every 0.1 s) and then stop the node the way SIGINT
does, so ``close()`` still runs (bags are closed, files flushed).

Why a parent-PID watch and not ``prctl(PR_SET_PDEATHSIG)`` in the node: the kernel sends the death signal when the
*thread* that forked the node ends, not the process, so a launcher starting nodes from a worker thread would stop
them while it is alive; and ``getppid()`` is one cheap system call that works on every POSIX system. (The standalone
launcher, :mod:`.processes`, additionally asks for SIGKILL by ``PR_SET_PDEATHSIG`` from its own starting thread.)

A node whose parent already is init (PID 1: a systemd service, a daemonized process) has no launcher to outlive and
is not watched.
"""
from __future__ import annotations

import os


class ParentWatch:
    """Remembers the parent process at construction and tells when this process has been re-parented."""

    def __init__(self) -> None:
        #: PID of the parent when the watch was made (the launcher).
        self.parent_pid = os.getppid()

    @property
    def watching(self) -> bool:
        """False when the parent was init (or none) already at start: nothing to watch."""
        return self.parent_pid > 1

    def parent_gone(self) -> bool:
        """True once the parent recorded at start has died (this process now has another parent)."""
        return self.watching and os.getppid() != self.parent_pid

    @property
    def reason(self) -> str:
        """Why the node stops, for its log."""
        return f"the process that started this node (PID {self.parent_pid}) has ended"
