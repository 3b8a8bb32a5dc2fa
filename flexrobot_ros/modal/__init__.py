"""Modal analysis of flexible-joint robots under PD control (seed 000 chapter 2): linearization, modes, FRF, maps."""
from flexrobot_ros.modal.linearization import LinearizedModel, linearize, motor_set_point
from flexrobot_ros.modal.modes import ModalResult, modal_analysis

__all__ = ["LinearizedModel", "linearize", "motor_set_point", "ModalResult", "modal_analysis"]
