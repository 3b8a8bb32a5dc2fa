"""The Lagrangian's evaluation through bound CasADi buffers and the chain dynamics' memory of recent states
(flexible_links/buffered_function.py, chain_dynamics.py): the same numbers as plain CasADi calls and as a fresh
evaluation, bit for bit, and results that callers may modify."""
import casadi as ca
import numpy as np
import pytest

from flexrobot_ros.flexible_links.buffered_function import BufferedFunction
from flexrobot_ros.flexible_links.chain_dynamics import ChainDynamics
from flexrobot_ros.flexible_links.link_specs import chain_from_robot
from flexrobot_ros.model import load_robot


@pytest.fixture(scope="module")
def rrp_chain():
    """The shipped RRP (links 2 and 3 flexible, link 3 sliding: the Lagrangian), two elements per plane."""
    return chain_from_robot(load_robot("rrp", tool=True))


def random_states(chain, count: int, seed: int = 4):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (np.r_[rng.uniform(-1, 1, 2), rng.uniform(0.3, 1.1), 1e-3 * rng.normal(size=chain.m)],
               rng.normal(size=chain.size))


def test_buffered_evaluation_equals_plain_casadi_calls(rrp_chain):
    """I, h, energy and placements through bound buffers equal CasADi's own call with DM conversions, bit for bit
    (the same instructions on the same values)."""
    lagrangian = ChainDynamics(rrp_chain).lagrangian
    for y, y_dot in random_states(rrp_chain, 3):
        inertia, bias = lagrangian.inertia_and_bias(y, y_dot)
        np.testing.assert_array_equal(inertia, np.array(lagrangian.inertia(y)))
        np.testing.assert_array_equal(bias, np.array(lagrangian.bias(y, y_dot)).ravel())
        np.testing.assert_array_equal(lagrangian.evaluate("energy", y, y_dot)[0],
                                      np.array(lagrangian.energy(y, y_dot)).ravel())
        np.testing.assert_array_equal(lagrangian.evaluate("placements", y)[0],
                                      np.array(lagrangian.placements(y)).ravel())
        tau = np.arange(rrp_chain.size, dtype=float)
        np.testing.assert_array_equal(lagrangian.forward_dynamics(y, y_dot, tau),
                                      np.linalg.solve(np.array(lagrangian.inertia(y)),
                                                      tau - np.array(lagrangian.bias(y, y_dot)).ravel()))


def test_remembered_states_give_a_fresh_evaluations_numbers(rrp_chain):
    """A second request for a state, and a new velocity at a remembered configuration (inertia remembered, h
    evaluated), give what a fresh ChainDynamics computes, bit for bit; modifying a result changes nothing later."""
    remembering, fresh = ChainDynamics(rrp_chain), ChainDynamics(rrp_chain)
    for y, y_dot in random_states(rrp_chain, 2, seed=9):
        first = remembering.inertia_and_bias(y, y_dot)
        first[0][:] = np.nan
        first[1][:] = np.nan
        for velocity in (y_dot, 2.0 * y_dot, y_dot):
            for ours, theirs in zip(remembering.inertia_and_bias(y, velocity), fresh.inertia_and_bias(y, velocity)):
                np.testing.assert_array_equal(ours, theirs)
                assert np.all(np.isfinite(ours))


def test_recursive_chain_remembers_the_same_numbers(rrp_link2):
    """Without a sliding beam (composite-body inertia and recursive bias, seed 003), the remembered inertia with a
    new velocity equals a fresh evaluation, bit for bit."""
    chain = chain_from_robot(rrp_link2, method="finite_elements", elements=2)
    remembering, fresh = ChainDynamics(chain), ChainDynamics(chain)
    assert remembering.lagrangian is None
    for y, y_dot in random_states(chain, 2, seed=5):
        remembering.inertia_and_bias(y, y_dot)
        for ours, theirs in zip(remembering.inertia_and_bias(y, -y_dot), fresh.inertia_and_bias(y, -y_dot)):
            np.testing.assert_array_equal(ours, theirs)


def test_buffered_function_refuses_sparse_outputs_and_wrong_inputs():
    """A sparse output or a wrong number of inputs gets an error naming the function and what was expected."""
    x = ca.SX.sym("x", 2)
    with pytest.raises(ValueError, match="function f: output o0 is sparse; expected dense"):
        BufferedFunction(ca.Function("f", [x], [ca.diag(x)]))
    buffered = BufferedFunction(ca.Function("g", [x], [ca.densify(ca.diag(x))]))
    np.testing.assert_array_equal(buffered(np.array([1.0, 2.0]))[0], np.diag([1.0, 2.0]))
    with pytest.raises(TypeError, match="function g: 1 inputs expected, got 2"):
        buffered(np.zeros(2), np.zeros(2))
