"""Names of the feedforward's methods and result quantities, importable without the numerical libraries (the
command line lists them in ``flexrobot feedforward --help``); :mod:`flexrobot_ros.dynamics.feedforward` uses them."""

#: Feedforward methods: SDRNEA generated code, EJNEA numeric, DAE (robots with extra elasticities, seed 002).
METHODS = ("sdrnea", "ejnea", "dae")
#: Quantities of a result, in column order, each (samples, n).
QUANTITIES = ("q", "qd", "qdd", "q3", "q4", "tau", "dtau", "ddtau", "q_m", "qd_m", "qdd_m", "tau_m")
