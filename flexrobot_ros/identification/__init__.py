"""Identification of joint stiffness and damping from modal data at several poses (seed 000 chapter 3).

May import: errors, yaml_files, text_table, model, the physics and modal, and oma's signal readers (records of the
rigid-body identification: :mod:`.rigid_record`); never simulation, runtime, nodes or commands.
"""
from flexrobot_ros.identification.joint_parameters import (
    IdentificationResult, IdentifiedParameter, LocalMinimum, ModeComparison, StartResult,
    identify_joint_parameters)
from flexrobot_ros.identification.matching import PoseMatch, match_modes
from flexrobot_ros.identification.modal_data import (
    MeasuredMode, ModalData, PoseModes, modal_data_from_model, parse_modal_data, read_modal_data, write_modal_data)
from flexrobot_ros.identification.parameters import JointParameter, parse_parameters

__all__ = ["identify_joint_parameters", "IdentificationResult", "IdentifiedParameter", "LocalMinimum",
           "ModeComparison", "StartResult", "PoseMatch", "match_modes", "MeasuredMode", "ModalData", "PoseModes",
           "modal_data_from_model", "parse_modal_data", "read_modal_data", "write_modal_data", "JointParameter",
           "parse_parameters"]
