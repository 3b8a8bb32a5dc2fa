"""Extended flexible joints (seed 002): non-actuated elastic DOFs on pinocchio, their forward dynamics (a simulator
plant) and the zero dynamics of the model linearized along a path."""
from flexrobot_ros.extended_joints.elasticities import ElasticitySpec, parse_elasticities
from flexrobot_ros.extended_joints.extended_model import (ExtendedModel, extended_model, rigid_extended,
                                                         without_extra_elasticities)

__all__ = ["ElasticitySpec", "ExtendedModel", "extended_model", "parse_elasticities", "rigid_extended",
           "without_extra_elasticities"]
