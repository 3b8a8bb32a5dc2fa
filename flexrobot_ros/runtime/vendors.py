"""Which DDS implementation an endpoint belongs to, and the error of a service call across two of them.

Topics interoperate between the standalone runtime (Cyclone DDS) and rclpy on its default RMW (Fast DDS); services
do not: rmw_fastrtps carries a request's id (client GUID, sequence number) outside the payload, rmw_cyclonedds (and
the standalone runtime, which follows it) inside it. The two sides' request and reply endpoints still match (same
DDS topic and type names), so without a check a client sees the server as available and then waits for a reply that
never comes (Fast DDS logs "Change payload size of '24' bytes is larger than the history payload size of '11'
bytes" and drops the request). Parameters are services too (``<node>/get_parameters``, ...).

The RTPS GUID prefix of every entity starts with its implementation's two-byte vendor id (RTPS 2.3, 8.2.4.2 and
9.3.1.5; OMG's vendor id list): Fast DDS ``01 0f``, Cyclone DDS ``01 10`` (measured here: rclpy 7.1 on
rmw_fastrtps_cpp and the cyclonedds 11 wheel). A ROS 2 GID is the entity's GUID (then zero padding), so both back
ends tell a server's vendor from the GIDs of its request reader and reply writer: :func:`cross_vendor_error` is the
check the service clients of both back ends make.
"""
from __future__ import annotations

from typing import Iterable

from flexrobot_ros.errors import RuntimeLayerError

FAST_DDS = b"\x01\x0f"
CYCLONE_DDS = b"\x01\x10"
#: Vendor ids of the DDS implementations ROS 2 has RMWs for (OMG's list).
VENDORS = {b"\x01\x01": "RTI Connext DDS", FAST_DDS: "Fast DDS", CYCLONE_DDS: "Cyclone DDS",
           b"\x01\x11": "GurumDDS"}
#: How the error names a server on each vendor (this project's two runtimes).
RUNTIMES = {FAST_DDS: "rclpy", CYCLONE_DDS: "standalone"}


def vendor_of(gid: Iterable[int] | bytes) -> bytes:
    """The vendor id (two bytes) of a GUID or ROS 2 GID (bytes, or rclpy's list of ints)."""
    return bytes(list(gid)[:2])


def vendor_name(vendor: bytes) -> str:
    """``Fast DDS``, ``Cyclone DDS``, ... or ``DDS vendor 01.xx``."""
    return VENDORS.get(vendor, f"DDS vendor {vendor[:1].hex()}.{vendor[1:2].hex()}")


def _node(runtime: str | None, vendor: bytes) -> str:
    """``an rclpy (Fast DDS) node``, ``a standalone (Cyclone DDS) node``, ``a RTI Connext DDS node``."""
    if runtime is None:
        return f"a {vendor_name(vendor)} node"
    return f"{'an' if runtime == 'rclpy' else 'a'} {runtime} ({vendor_name(vendor)}) node"


def cross_vendor_error(service: str, servers: Iterable[bytes], own: bytes, backend: str) -> RuntimeLayerError | None:
    """The error to raise when every server of ``service`` found so far (``servers``: their vendor ids) is on a DDS
    vendor other than this node's (``own``; ``backend``: ``rclpy`` or ``dds``); None when no server was found yet,
    or one shares this node's vendor (the call can work)."""
    vendors = set(servers)
    if not vendors or own in vendors:
        return None
    other = sorted(vendors)[0]
    this = _node("rclpy" if backend == "rclpy" else "standalone", own)
    hint = "run both with FLEXROBOT_RUNTIME=rclpy (or both with FLEXROBOT_RUNTIME=dds)"
    if backend == "rclpy" and other == CYCLONE_DDS:
        hint += ", or this one with RMW_IMPLEMENTATION=rmw_cyclonedds_cpp"
    return RuntimeLayerError(f"service {service} is served by {_node(RUNTIMES.get(other), other)} and this "
                             f"is {this}: services (and so parameters) do not interoperate across the two DDS "
                             f"implementations; {hint}")
