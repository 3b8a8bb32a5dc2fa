"""Set or read another node's parameters: ``rcl_interfaces/srv/SetParametersAtomically`` and ``GetParameters``
requests, as ``ros2 param set`` / ``ros2 param get``.

Every ROS 2 node serves ``<node>/set_parameters_atomically`` (rclpy's ParameterService; the standalone runtime's
:mod:`.parameter_services`); the target validates the values against its declarations, runs its own checks and
announces the accepted change on ``/parameter_events``, so the same call works on both back ends and against any
ROS 2 node on the same DDS vendor: a target on the other one (an rclpy node on Fast DDS from the standalone runtime,
or the reverse) fails at once with a RuntimeLayerError saying so (:mod:`.vendors`). Call it from outside the calling
node's callbacks (a worker thread, a command), as :meth:`~flexrobot_ros.runtime.node.Node.call`.
"""
from __future__ import annotations

from typing import Any, Mapping

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.runtime.params import infer_type
from flexrobot_ros.runtime.parameter_services import parameter_value, python_value

SERVICE = "set_parameters_atomically"
GET_SERVICE = "get_parameters"


def _client(node: Any, srv: Any, name: str, timeout_sec: float, clients: dict[str, Any] | None, target: str) -> Any:
    cache = {} if clients is None else clients
    client = cache.get(name) or cache.setdefault(name, node.create_client(srv, name))
    if not client.wait_for_service(timeout_sec=timeout_sec):
        raise RuntimeLayerError(f"{name}: no such service within {timeout_sec:g} s (is {target} running?)")
    return client


def set_remote_parameters(node: Any, target: str, values: Mapping[str, Any], timeout_sec: float = 10.0,
                          clients: dict[str, Any] | None = None) -> tuple[bool, str]:
    """Set ``values`` ({name: bool | int | float | str | list}) on the node ``target`` (e.g. ``/modal_monitor_node``)
    all or nothing; returns (successful, reason) as the target's ``SetParametersResult``. ``clients`` caches the
    service clients by target across calls.

    Raises:
        RuntimeLayerError: the target's service is not up within ``timeout_sec``, does not answer, or is on another
            DDS vendor (at once).
    """
    types = node.types
    srv = types.rcl_interfaces.srv.SetParametersAtomically
    name = f"{target.rstrip('/')}/{SERVICE}"
    client = _client(node, srv, name, timeout_sec, clients, target)
    parameters = []
    for key, value in values.items():
        kind = infer_type(list(value) if isinstance(value, tuple) else value, key)
        item = list(value) if isinstance(value, (list, tuple)) else value
        parameters.append(types.rcl_interfaces.msg.Parameter(name=key, value=parameter_value(types, kind, item)))
    response = node.call(client, srv.Request(parameters=parameters), timeout_sec)
    if response is None:
        raise RuntimeLayerError(f"{name}: no answer within {timeout_sec:g} s")
    return bool(response.result.successful), str(response.result.reason)


def get_remote_parameters(node: Any, target: str, names: list[str], timeout_sec: float = 10.0,
                          clients: dict[str, Any] | None = None) -> dict[str, Any]:
    """The values of the parameters ``names`` of the node ``target`` ({name: value}; lists for arrays).

    Raises:
        RuntimeLayerError: the target's service is not up within ``timeout_sec``, does not answer, is on another
            DDS vendor (at once), or does not declare one of ``names``.
    """
    types = node.types
    srv = types.rcl_interfaces.srv.GetParameters
    name = f"{target.rstrip('/')}/{GET_SERVICE}"
    client = _client(node, srv, name, timeout_sec, clients, target)
    response = node.call(client, srv.Request(names=list(names)), timeout_sec)
    if response is None:
        raise RuntimeLayerError(f"{name}: no answer within {timeout_sec:g} s")
    values = {key: python_value(types, value) for key, value in zip(names, response.values)}
    missing = [key for key in names if values.get(key) is None]
    if missing or len(response.values) != len(names):
        raise RuntimeLayerError(f"{target}: no parameter(s) {missing or list(names)}")
    return values


__all__ = ["get_remote_parameters", "set_remote_parameters"]
