"""The dynamics, simulation and oma packages import their submodules on first use (flexrobot_ros/lazy.py, issue 22:
subcommand --help must not load scipy/pinocchio/casadi). Their public names must mean what the former eager
``__init__`` made them mean, in whatever order modules are imported; a fresh interpreter each time."""
from __future__ import annotations

import subprocess
import sys


def run_fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_function_named_like_its_submodule_stays_the_function():
    """``flexrobot_ros.dynamics.feedforward`` is both a submodule and the function it defines (likewise ejnea,
    sdrnea): importing the submodules first (as ``flexrobot feedforward`` does) must not turn
    ``from flexrobot_ros.dynamics import feedforward`` into the module (a bare PEP 562 __getattr__ would)."""
    out = run_fresh(
        "import types\n"
        "import flexrobot_ros.dynamics.feedforward, flexrobot_ros.dynamics.ejnea, flexrobot_ros.dynamics.sdrnea\n"
        "from flexrobot_ros.dynamics import ejnea, feedforward, sdrnea, codegen\n"
        "import flexrobot_ros.dynamics as d\n"
        "print([type(f).__name__ for f in (feedforward, ejnea, sdrnea, d.feedforward)], "
        "isinstance(codegen, types.ModuleType), d.feedforward is feedforward)\n")
    assert out.strip() == "['function', 'function', 'function', 'function'] True True", out


def test_public_names_load_on_first_use_and_unknown_names_are_errors():
    """``import flexrobot_ros.simulation`` loads no submodule (nor scipy); a public name loads its submodule;
    ``from ... import *`` gives every name of ``__all__``; an unknown name is an AttributeError naming the package."""
    out = run_fresh(
        "import sys\nimport flexrobot_ros.simulation as s, flexrobot_ros.oma as o\n"
        "print(sorted(m for m in sys.modules if m.startswith(('flexrobot_ros.simulation.', 'flexrobot_ros.oma.'))),"
        " 'scipy' in sys.modules)\n"
        "print(s.Simulation.__module__, 'Simulation' in dir(s))\n"
        "namespace = {}\nexec('from flexrobot_ros.oma import *', namespace)\n"
        "print(sorted(set(o.__all__) - set(namespace)))\n"
        "try:\n    s.Simulator\nexcept AttributeError as error:\n    print(error)\n")
    lines = out.splitlines()
    assert lines[0] == "[] False", out
    assert lines[1] == "flexrobot_ros.simulation.simulation True"
    assert lines[2] == "[]"
    assert lines[3] == "module 'flexrobot_ros.simulation' has no attribute 'Simulator'"
