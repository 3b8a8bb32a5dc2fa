"""The standalone runtime honours ROS_DOMAIN_ID, ROS_LOCALHOST_ONLY and ROS_AUTOMATIC_DISCOVERY_RANGE as
rmw_cyclonedds does (issue 12, item 6): two domains on one machine do not see each other; with a localhost-only range
Cyclone selects the loopback interface alone (its own configuration trace says so) and nodes still find each other.

Every process here talks on loopback only: the localhost-only cases by the setting under test, the others by the
test suite's loopback configuration.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import runtime_peer as peer

#: A node that publishes std_msgs/String on /scope for ``seconds`` and counts what it receives there from others.
NODE = textwrap.dedent("""
    import json, sys, time
    from flexrobot_ros.runtime import create_node
    name, seconds = sys.argv[1], float(sys.argv[2])
    node = create_node(name, backend="dds")
    string = node.types.std_msgs.msg.String
    publisher = node.create_publisher(string, "/scope")
    heard = set()
    node.create_subscription(string, "/scope", lambda msg: heard.add(msg.data.split(":")[0]))
    node.create_timer(0.05, lambda: publisher.publish(string(data=f"{name}:{time.monotonic()}")))
    node.spin(seconds)
    print(json.dumps(sorted(heard - {name})))
""")


def _run(nodes: dict[str, dict[str, str]], seconds: float = 6.0) -> dict[str, list[str]]:
    """Run one NODE process per entry {name: environment changes} at once; {name: names it heard}."""
    processes = {name: subprocess.Popen([sys.executable, "-c", NODE, name, str(seconds)], text=True,
                                        env=peer.loopback_env(**changes), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE) for name, changes in nodes.items()}
    heard = {}
    for name, process in processes.items():
        out, err = process.communicate(timeout=60 + seconds)
        assert process.returncode == 0, err[-2000:]
        heard[name] = json.loads(out.strip().splitlines()[-1])
    return heard


def test_two_domains_on_one_machine_do_not_see_each_other():
    a, b = str(peer.run_domain()), str(peer.run_domain() + 1)
    heard = _run({"a1": {"ROS_DOMAIN_ID": a}, "a2": {"ROS_DOMAIN_ID": a}, "b1": {"ROS_DOMAIN_ID": b}})
    assert heard == {"a1": ["a2"], "a2": ["a1"], "b1": []}


@pytest.mark.parametrize("setting", [{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, {"ROS_LOCALHOST_ONLY": "1"}])
def test_localhost_only_selects_the_loopback_interface_alone(tmp_path, setting):
    """Cyclone's configuration trace (requested through CYCLONEDDS_URI, which the runtime keeps and extends as
    rmw_cyclonedds does) lists the interfaces it found and the ones it selected: loopback only, no multicast; two
    such nodes hear each other through the unicast localhost peer."""
    traces = {name: tmp_path / f"{name}.log" for name in ("l1", "l2")}
    heard = _run({name: {**setting, "CYCLONEDDS_URI": (
        f'<CycloneDDS><Domain id="any"><Tracing><Verbosity>config</Verbosity><OutputFile>{trace}</OutputFile>'
        "</Tracing></Domain></CycloneDDS>")} for name, trace in traces.items()})
    assert heard == {"l1": ["l2"], "l2": ["l1"]}
    for trace in traces.values():
        lines = trace.read_text().splitlines()
        selected = [line.split("selected interfaces:")[1].strip() for line in lines if "selected interfaces:" in line]
        assert len(selected) == 1 and selected[0].startswith("lo ") and selected[0].count("(index") == 1, selected
        assert any(line.endswith("ownip: udp/127.0.0.1") for line in lines)
        assert any(line.endswith("config: Domain/General/AllowMulticast/#text: false {1}") for line in lines)
