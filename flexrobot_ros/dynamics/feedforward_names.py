"""Names of the feedforward's methods and result quantities, importable without the numerical libraries (the
command line lists them in ``flexrobot feedforward --help``); :mod:`flexrobot_ros.dynamics.feedforward` uses them."""

#: Feedforward methods: SDRNEA generated code, EJNEA numeric, DAE (robots with extra elasticities, seed 002) for
#: elastic joints on rigid links; 'prescribed' (any robot: flexible links, rigid joints; the link deformations
#: integrated along the prescribed joint motion, issue 25); 'rigid' (the baseline: links and joints rigid).
METHODS = ("sdrnea", "ejnea", "dae", "prescribed", "rigid")
#: What each robot gets without a method: elastic joints on rigid links, and robots with flexible links or rigid
#: joints.
DEFAULT_METHOD, DEFAULT_GENERAL_METHOD = "sdrnea", "prescribed"
#: Quantities of a result, in column order, each (samples, n).
QUANTITIES = ("q", "qd", "qdd", "q3", "q4", "tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m", "tau_m")
#: Spaces of the targets a feedforward inverts: the joints' (link) coordinates, or the tool point's (x, y, z of the
#: robot's tool_frame origin in the base frame [m]).
TARGET_SPACES = ("joint", "tool")
#: Methods that invert tool-space targets: seed 002's inverse DAE.
TOOL_METHODS = ("dae",)
#: A rest-to-rest motion is at rest when its deformation energy is at most this fraction of its peak over the motion
#: (vibration amplitudes 1e-3 of the motion's), and the final pose may be held that long [s] after the motion to get
#: there (:mod:`flexrobot_ros.dynamics.post_actuation`).
REST_ENERGY_FRACTION, MAX_POST_ACTUATION_S = 1e-6, 60.0
