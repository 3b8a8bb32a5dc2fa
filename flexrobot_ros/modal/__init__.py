"""Modal analysis of robots with elastic joints and links under PD control (seed 000 chapter 2, seeds 002-004).

The entries, for any robot: :func:`linearize` (M_bar, D_bar, K_bar about the held pose), :func:`linearize_batch`
(P poses), :func:`modal_analysis` (frequencies, damping ratios, mode shapes, stability) and
:func:`modal_coordinates` (the labels of the mode shapes' rows), all in held_modes: through the composed model, with
seed 000's analytic evaluation as the fast path for elastic joints on rigid links.

linearization (that fast path: eqs. 2.3, 2.9-2.12), elastic_robot_linearization (the composed model: flexible links
or rigid joints, seeds 003/004 incl. the decoupling law, extra elasticities or gear dampers, seed 002, or both),
eigenproblem (batched, skew+symmetric first-order form), modes (frequencies, damping, shapes, stability; eqs.
2.13-2.18), undamped, frf (receptance at a frame), participation, mac, maps (paths, grids, gain sweeps, NPZ files),
plots (PNG, matplotlib imported lazily).

May import: errors, model, the physics (kinematics, dynamics, flexible_links) and control; never simulation,
identification, oma, runtime, nodes or commands.
"""
from flexrobot_ros.modal.frf import Receptance, receptance
from flexrobot_ros.modal.held_modes import linearize, linearize_batch, modal_analysis, modal_coordinates
from flexrobot_ros.modal.linearization import LinearizedBatch, LinearizedModel, motor_set_point
from flexrobot_ros.modal.mac import mac
from flexrobot_ros.modal.maps import ModalMap, gain_map, grid_map, load_map, modal_map, path_map, save_map
from flexrobot_ros.modal.modes import ModalResult
from flexrobot_ros.modal.participation import ModalParticipation, modal_participation
from flexrobot_ros.modal.undamped import UndampedModes, undamped_modes

__all__ = ["LinearizedModel", "LinearizedBatch", "linearize", "linearize_batch", "motor_set_point", "ModalResult",
           "modal_analysis", "modal_coordinates", "UndampedModes", "undamped_modes", "Receptance", "receptance",
           "ModalParticipation", "modal_participation", "mac", "ModalMap", "modal_map", "path_map", "grid_map",
           "gain_map", "save_map", "load_map"]
