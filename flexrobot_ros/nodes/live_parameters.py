"""Live parameters of the nodes: changes accepted while a node runs, applied between its callbacks.

A node declares its parameters through :class:`LiveParameters` and reads the current values from
``live.values`` where it uses them. A change (``ros2 param set``, ``Node.set_parameters``) reaches the node's
``prepare(values, changed)`` function after the runtime has checked it against the declarations (type, range,
choices, read-only). ``prepare`` checks what the declarations cannot (lengths against the robot's joints, frame
and joint names, model orders, ...) *with the same function the constructor uses*, and builds what the new
values need without touching the node; it raises :class:`~flexrobot_ros.errors.FlexrobotError` to refuse (the
message is the reason the set request reports, and nothing changes) or returns a ``commit()`` that installs the
new objects after the values are stored.

Thread safety: the executors of both runtimes run a node's callbacks in one thread, but ``Node.set_parameters``
may be called from any thread. :meth:`LiveParameters.locked` wraps a callback so that it runs under the
parameter lock; every subscription, service and timer callback of a node is wrapped, so a change lands between
two callbacks, never inside one (a simulation step, an identification, a modal analysis).

:class:`LiveTimer` is a timer whose period comes from a parameter: ``set_period`` re-creates it.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Mapping, Optional, Sequence

from flexrobot_ros.errors import FlexrobotError, RuntimeLayerError

#: ``prepare(values, changed) -> commit or None``: ``values`` all current values with the changes applied,
#: ``changed`` the names of the parameters in the request.
Prepare = Callable[[Mapping[str, Any], frozenset], Optional[Callable[[], None]]]


class LiveParameters:
    """A node's declared parameters, their current values and the lock between changes and callbacks."""

    def __init__(self, node: Any, specs: Sequence[Any]) -> None:
        self.lock = threading.RLock()
        self.values: dict[str, Any] = dict(node.declare_parameters(specs))
        self._prepare: Prepare | None = None
        node.on_parameters_set(self._on_set)

    def on_change(self, prepare: Prepare) -> None:
        """Apply accepted changes with ``prepare`` (see the module docstring)."""
        self._prepare = prepare

    def locked(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """``callback`` run under the parameter lock."""

        @functools.wraps(callback)
        def run(*args: Any) -> Any:
            with self.lock:
                return callback(*args)

        return run

    def _on_set(self, changes: dict[str, Any]) -> None:
        with self.lock:
            if self._prepare is None:
                raise RuntimeLayerError("the node is still starting: parameters cannot change yet")
            values = {**self.values, **changes}
            commit = self._prepare(values, frozenset(changes))
            previous = dict(self.values)
            self.values.update(changes)
            if commit is not None:
                try:
                    commit()
                except BaseException:
                    self.values.clear()
                    self.values.update(previous)
                    raise


def checked(name: str, check: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``check(*args, **kwargs)``, its FlexrobotError re-raised naming the parameter ``name``."""
    try:
        return check(*args, **kwargs)
    except RuntimeLayerError:
        raise
    except FlexrobotError as error:
        raise RuntimeLayerError(f"parameter {name!r}: {error}") from error


def changed_any(changed: frozenset, names: Sequence[str] | str) -> bool:
    """Whether ``changed`` holds one of ``names`` or, for a name ending in ``.``, a parameter of that group."""
    names = (names,) if isinstance(names, str) else names
    return any(c == n or (n.endswith(".") and c.startswith(n)) for c in changed for n in names)


class LiveTimer:
    """A node timer calling ``callback`` every ``period_s`` seconds, re-created when the period changes
    (``None``: no timer). ``running=False`` creates it paused: :meth:`pause` and :meth:`resume` let a node run a
    fast timer only while it has work (an idle node then costs no CPU for it). ``wall=True``: on the steady clock
    also under ``use_sim_time`` (``Node.create_wall_timer``)."""

    def __init__(self, node: Any, period_s: float | None, callback: Callable[[], None], *,
                 running: bool = True, wall: bool = False) -> None:
        self.node, self.callback = node, callback
        self._create = node.create_wall_timer if wall else node.create_timer
        self.period_s: float | None = None
        self.running = running
        self._timer: Any = None
        self.set_period(period_s)

    def set_period(self, period_s: float | None) -> None:
        """Cancel the timer and start one with the new period (first call one period from now; paused stays
        paused)."""
        if period_s == self.period_s and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.period_s = period_s
        if period_s:
            self._timer = self._create(period_s, self.callback)
            if not self.running:
                self._timer.cancel()

    def pause(self) -> None:
        """Stop calling back until :meth:`resume` (the timer is kept, cancelled)."""
        self.running = False
        if self._timer is not None:
            self._timer.cancel()

    def resume(self) -> None:
        """Call back again, the first time one period from now."""
        if not self.running and self._timer is not None:
            self._timer.reset()
        self.running = True


__all__ = ["LiveParameters", "LiveTimer", "changed_any", "checked"]
