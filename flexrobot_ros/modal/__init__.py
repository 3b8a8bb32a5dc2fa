"""Modal analysis of flexible-joint robots under PD control (seed 000 chapter 2).

linearization (M_bar, D_bar, K_bar, q_m^d; eqs. 2.3, 2.9-2.12), eigenproblem (batched, skew+symmetric first-order
form), modes (frequencies, damping, shapes, stability; eqs. 2.13-2.18), undamped, frf (receptance at a frame),
participation, mac, maps (paths, grids, gain sweeps, NPZ files), plots (PNG, matplotlib imported lazily);
elastic_robot_linearization (the composed model: robots with flexible links or rigid joints, seeds 003/004 incl. the
decoupling law, with extra elasticities or gear dampers, seed 002, or both); held_modes (the one entry for any robot:
held_linearization, held_modes, with linearization's analytic evaluation as the fast path for elastic joints on rigid
links).

May import: errors, model, the physics (kinematics, dynamics, flexible_links) and control; never simulation,
identification, oma, runtime, nodes or commands.
"""
from flexrobot_ros.modal.frf import Receptance, receptance
from flexrobot_ros.modal.linearization import (LinearizedBatch, LinearizedModel, linearize, linearize_batch,
                                               motor_set_point)
from flexrobot_ros.modal.mac import mac
from flexrobot_ros.modal.maps import ModalMap, gain_map, grid_map, load_map, modal_map, path_map, save_map
from flexrobot_ros.modal.modes import ModalResult, modal_analysis
from flexrobot_ros.modal.participation import ModalParticipation, modal_participation
from flexrobot_ros.modal.undamped import UndampedModes, undamped_modes

__all__ = ["LinearizedModel", "LinearizedBatch", "linearize", "linearize_batch", "motor_set_point", "ModalResult",
           "modal_analysis", "UndampedModes", "undamped_modes", "Receptance", "receptance", "ModalParticipation",
           "modal_participation", "mac", "ModalMap", "modal_map", "path_map", "grid_map", "gain_map", "save_map",
           "load_map"]
