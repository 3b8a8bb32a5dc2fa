"""SDRNEA (flexrobot_ros.dynamics.sdrnea + codegen): generated, compiled, cached code for tau, dtau, ddtau.

Checks: agreement with pinocchio's rnea (tau, 1e-10 relative) and with the independent numeric EJNEA (tau, dtau,
ddtau, 1e-9 relative) on the models of test_ejnea; CasADi's fallback evaluation equals the compiled code; the LWR4
operation counts against thesis section 4.5.3 (1289 additions, 1516 multiplications, 12 trigonometric functions);
linear growth of the operation count with n (thesis eq. 4.26, O(n)); the on-disk cache.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from flexrobot_ros.dynamics import codegen
from flexrobot_ros.dynamics.codegen import load_sdrnea, sdrnea
from flexrobot_ros.dynamics.ejnea import Ejnea
from flexrobot_ros.dynamics.flexible_joint import JointFlexibility, motor_side
from flexrobot_ros.dynamics.sdrnea import OperationCounts, sdrnea_function
from flexrobot_ros.dynamics.kinematic_tree import KinematicTree
from flexrobot_ros.errors import TrajectoryError
from flexrobot_ros.model import load_robot
from test_ejnea import IDS, MODELS




def random_inputs(n: int, samples: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2.0, 2.0, size=(samples, n)) for _ in range(5)]


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_compiled_sdrnea_equals_rnea_and_ejnea(model):
    """tau = pin.rnea (1e-10 relative per sample); tau, dtau, ddtau = EJNEA (1e-9 relative to the largest value)."""
    compiled = load_sdrnea(KinematicTree.from_model(model))
    assert compiled.backend == "c"
    x = random_inputs(model.nq, 200, 11)
    out = compiled.evaluate(*x)
    data = model.createData()
    ref = np.array([pin.rnea(model, data, x[0][k], x[1][k], x[2][k]) for k in range(200)])
    assert np.all(np.abs(out["tau"] - ref) <= 1e-10 * np.abs(ref).max(axis=1, keepdims=True))
    numeric = Ejnea(model)(*x)
    for name in ("tau", "dtau", "ddtau"):
        expected = getattr(numeric, name)
        assert np.abs(out[name] - expected).max() <= 1e-9 * np.abs(expected).max(), name


def test_single_sample_call_and_convenience_function():
    model = MODELS[0]
    compiled = load_sdrnea(KinematicTree.from_model(model))
    x = random_inputs(model.nq, 3, 12)
    packed = np.concatenate([v[1] for v in x])
    y = compiled.evaluate_packed(packed)
    batch = compiled.evaluate_batch(np.concatenate(x, axis=1))
    np.testing.assert_array_equal(y, batch[1])
    one = sdrnea(model, *[v[1] for v in x])
    np.testing.assert_array_equal(one.ddtau, batch[1, 2 * model.nq:])
    with pytest.raises(TrajectoryError, match="q3: shape"):
        compiled.evaluate(x[0], x[1], x[2], x[3][:, :2], x[4])


def test_lwr4_operation_counts_close_to_thesis():
    """Thesis section 4.5.3: 1289 additions, 1516 multiplications and 12 cos/sin for the LWR4's tau, dtau, ddtau.

    The link inertias differ (the thesis' set has products of inertia, ours does not; see urdf/lwr4.dh.yaml), so
    the counts are compared within 5 %; the 12 trigonometric functions (q_1 needs none) must match exactly.
    """
    counts = OperationCounts.of(sdrnea_function(KinematicTree.from_model(load_robot("lwr4").model)))
    print(f"LWR4 SDRNEA: {counts} (thesis: 1289 add, 1516 mul, 12 trig)")
    assert counts.trigonometric == 12
    assert abs(counts.additions - 1289) <= 0.05 * 1289
    assert abs(counts.multiplications - 1516) <= 0.05 * 1516
    assert counts.other == 0


def general_dh_chain(n: int, seed: int) -> pin.Model:
    """n revolute joints with general DH parameters (d, a, alpha non-zero) and full link inertias, built like the
    DH -> URDF generator does (joint i+1 placed at the constant part Tz(d) Tx(a) Rx(alpha) of DH row i)."""
    rng = np.random.default_rng(seed)
    model = pin.Model()
    parent, previous = 0, pin.SE3.Identity()
    for i in range(n):
        parent = model.addJoint(parent, pin.JointModelRZ(), previous, f"joint{i + 1}")
        d, a, alpha = rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5), rng.uniform(0.2, 1.3)
        constant = (pin.SE3(np.eye(3), np.array([0.0, 0.0, d])) * pin.SE3(np.eye(3), np.array([a, 0.0, 0.0]))
                    * pin.SE3(pin.rpy.rpyToMatrix(alpha, 0.0, 0.0), np.zeros(3)))
        x = rng.normal(size=(3, 3))
        model.appendBodyToJoint(parent, pin.Inertia(rng.uniform(1, 3), rng.uniform(-0.1, 0.1, 3), x @ x.T + np.eye(3)),
                                constant)
        previous = constant
    return model


def test_operation_count_is_linear_in_n_like_eq_4_26():
    """Thesis eq. 4.26 (general DH parameters, no zero parameters): 323 n - 309 additions and 389 n - 325
    multiplications. Measured for n = 5, 10, 15: exactly linear (second difference 0 within 1 %) and within 15 % of
    eq. 4.26 (1306/1620, 2921/3565, 4536/5510)."""
    counts = [OperationCounts.of(sdrnea_function(KinematicTree.from_model(general_dh_chain(n, n))))
              for n in (5, 10, 15)]
    for field, slope, offset in (("additions", 323, -309), ("multiplications", 389, -325)):
        c5, c10, c15 = (getattr(c, field) for c in counts)
        print(f"{field}: n = 5, 10, 15 -> {c5}, {c10}, {c15} (eq. 4.26: "
              f"{[slope * n + offset for n in (5, 10, 15)]})")
        assert abs(c15 - 2 * c10 + c5) <= 0.01 * c10
        for n, count in zip((5, 10, 15), (c5, c10, c15)):
            assert abs(count - (slope * n + offset)) <= 0.15 * (slope * n + offset)


def test_motor_outputs_equal_numpy_motor_side():
    """Generated q_m .. tau_m equal the numpy formulas of flexible_joint (Scompi: prismatic W, Coulomb on the link
    and motor side added to exercise the differentiated tanh), 1e-10 relative."""
    robot = load_robot("scompi").with_parameters(link_coulomb=np.full(6, 3.0), motor_coulomb=np.full(6, 0.5))
    chain, flexibility = KinematicTree.from_model(robot.model), JointFlexibility.from_robot(robot)
    compiled = load_sdrnea(chain, flexibility)
    assert compiled.outputs[-4:] == ("q_m", "qd_m", "qdd_m", "tau_m")
    x = random_inputs(6, 100, 13)
    x[1] *= 1e-3  # velocities inside the Coulomb smoothing width too
    out = compiled.evaluate(*x)
    torques = Ejnea(chain)(*x)
    side = motor_side(flexibility, x[0], x[1], x[2], x[3], torques.tau, torques.dtau, torques.ddtau)
    for name in ("q_m", "qd_m", "qdd_m", "tau_m"):
        expected = getattr(side, name)
        assert np.abs(out[name] - expected).max() <= 1e-10 * np.abs(expected).max(), name


def test_casadi_fallback_equals_compiled_code():
    """compile=False evaluates the same function with CasADi's virtual machine: equal to 1e-12 relative."""
    chain = KinematicTree.from_model(load_robot("lwr4").model)
    compiled = load_sdrnea(chain)
    fallback = load_sdrnea(chain, compile=False)
    assert fallback.backend == "casadi" and fallback.library is None
    x = np.concatenate(random_inputs(7, 20, 14), axis=1)
    a, b = compiled.evaluate_batch(x), fallback.evaluate_batch(x)
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()
    np.testing.assert_allclose(fallback.evaluate_packed(x[3]), a[3], rtol=1e-12, atol=1e-12 * np.abs(a).max())


def test_missing_compiler_falls_back_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    chain = KinematicTree.from_model(MODELS[1])
    with pytest.warns(RuntimeWarning, match="falling back to CasADi"):
        result = load_sdrnea(chain, directory=tmp_path)
    assert result.backend == "casadi"
    x = np.concatenate(random_inputs(chain.n, 5, 15), axis=1)
    reference = Ejnea(chain)(*np.split(x, 5, axis=1))
    np.testing.assert_allclose(result.evaluate_batch(x)[:, :chain.n], reference.tau, rtol=1e-12, atol=1e-12)


def test_cache_reuses_the_compiled_library(monkeypatch):
    """A second load (new process = cleared in-memory memo) uses the stored .so without generating code; another
    stiffness is another cache entry."""
    robot = load_robot("lwr4")
    chain, flexibility = KinematicTree.from_model(robot.model), JointFlexibility.from_robot(robot)
    first = load_sdrnea(chain, flexibility)
    assert load_sdrnea(chain, flexibility) is first
    stamp = first.library.stat().st_mtime_ns
    monkeypatch.setattr(codegen, "_LOADED", {})

    def no_generation(*args, **kwargs):
        raise AssertionError("code was regenerated")

    monkeypatch.setattr(codegen, "sdrnea_function", no_generation)
    again = load_sdrnea(chain, flexibility)
    assert again.library == first.library and again.library.stat().st_mtime_ns == stamp
    assert again.operations == first.operations
    stiffer = JointFlexibility.from_robot(robot.with_parameters(stiffness=np.full(7, 2000.0)))
    assert codegen.cache_key(chain, stiffer) != codegen.cache_key(chain, flexibility)
