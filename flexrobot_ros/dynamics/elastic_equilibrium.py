"""Static equilibrium of the extra elasticities of an extended flexible-joint model (seed 002 eq. 1c at rest):
the deflections q_e [rad | m] where the non-actuated springs K_e carry gravity, the actuated link positions held."""
from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.extended_model import ExtendedModel


def elastic_equilibrium(ext: ExtendedModel, q_g: Any) -> np.ndarray:
    """q_e (ne,) where the extra springs carry gravity at the actuated link positions q_g: K_e q_e + g_e(q_a) = 0
    (Newton with pinocchio's gravity derivatives); a ModelError when it does not converge."""
    q_a = ext.full_q(q_g)
    el = list(ext.elastic_index)
    if not el:
        return np.zeros(0)
    data = ext.create_data()
    for _ in range(50):
        dg = np.array(pin.computeGeneralizedGravityDerivatives(ext.model, data, q_a))
        residual = ext.elastic_stiffness * q_a[el] + data.g[el]
        step = np.linalg.solve(np.diag(ext.elastic_stiffness) + dg[np.ix_(el, el)], -residual)
        q_a[el] += step
        if np.abs(step).max() < 1e-15:
            return q_a[el]
    raise ModelError(f"no static equilibrium of the extra elasticities {list(ext.elastic_names)} at q = "
                     f"{np.asarray(q_g).tolist()} (springs too soft for the load?)")
