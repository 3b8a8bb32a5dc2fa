"""The standalone DDS runtime's 1 kHz stream over a minute: 60 000 JointStates, none lost.

This file is its own xdist work unit (``WORK_UNIT``, test/conftest.py), beside the DDS group rather than in it: it
waits on real time for a minute at a quarter of a core, so in the group it would add that minute to the group's
serial run. It runs in a ROS domain of its own range (``runtime_peer.run_domain(separate=True)``), so it never
shares a domain with the group's files running at the same time; like every stream check, it must lose nothing on a
busy machine.
"""
from __future__ import annotations

import pytest

import runtime_peer as peer

WORK_UNIT = "dds-soak"


@pytest.mark.slow
def test_1khz_joint_state_stream_loses_nothing_60s():
    """The acceptance figure of the runtime issue: 60 000 JointStates at 1 kHz for 60 s (reliable QoS, keep-all
    listener), none lost, in order."""
    peer.stream_loses_nothing(60.0, 80.0, separate=True)
