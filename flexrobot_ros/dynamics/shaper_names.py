"""Names and defaults of the input shapers, importable without the numerical libraries (``flexrobot feedforward
--help`` and ``flexrobot shape --help`` list them); :mod:`flexrobot_ros.dynamics.input_shaping` uses them."""

#: Shaper kinds of the command line and the feedforward node ('none': no shaping).
SHAPERS = ("none", "zv", "zvd", "ei", "auto")
#: Single-mode shapers 'auto' chooses from, shortest and least robust first.
CANDIDATES = ("zv", "zvd", "ei")
#: Vibration tolerance of EI and of 'auto' [fraction] (5 %).
DEFAULT_TOLERANCE = 0.05
#: Relative frequency error 'auto' is robust to (+-10 %).
DEFAULT_FREQUENCY_ERROR = 0.1
