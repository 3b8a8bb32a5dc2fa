"""The four ROS 2 nodes of flexrobot_ros, thin adapters over the core written once against
:mod:`flexrobot_ros.runtime` (rclpy inside ROS 2, the standalone DDS runtime elsewhere):

- :mod:`.simulator_node`: a flexible-joint robot simulated in scaled real time (encoders, tf, excitation);
- :mod:`.feedforward_node`: desired link trajectory -> motor reference trajectory and torques (SDRNEA/EJNEA);
- :mod:`.modal_monitor_node`: pose-dependent modes of the closed loop, RViz markers, modal maps;
- :mod:`.oma_node`: online operational modal analysis of encoder signals, modal data, joint identification.

:mod:`.robot_description` loads their robot (the URDF from its file or from the latched ``robot_description``
topic); :mod:`.convert` holds the message/array conversions, input checks and diagnostics they share;
:mod:`.output_files` where services may write, :mod:`.live_parameters` parameter changes while running,
:mod:`.silent_input` the warning about an input topic that stays silent.

May import: the core (model, physics, control, modal, simulation, identification, oma) and runtime; never commands.
"""
