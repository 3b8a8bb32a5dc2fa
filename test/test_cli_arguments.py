"""Issue 12, item 5: every command reads joint vectors and gains the same way, errors are one line with status 2,
every command takes --json, ``--version`` exists and ``--help`` loads no numerical library.

Quoted failures covered here: "``flexrobot modal scompi --q -0.2,0.3,1.1,0.1,-1,0.2`` fails with 'argument --q:
expected one argument'", "the joint-vector syntax differs between commands", "'every command takes --json' is not
true (dh2urdf, bag play, bag record)", "no --version", "``flexrobot --help`` takes about 1.6 s because scipy and
pinocchio load first".
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

from cli_cases import flexrobot_script
from flexrobot_ros.cli import COMMANDS, build_parser, main
from flexrobot_ros.commands.arguments import CommandError, gains, number, vector

Q = "-0.2,0.3,1.1,0.1,-1,0.2"  # the pose: a negative first value


def modal_json(capsys, *argv: str) -> dict:
    assert main(["modal", "scompi", *argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_negative_first_value_comma_and_space_forms_agree(capsys):
    """The issue's command works; space-separated values, '=' and pi expressions give the same modes."""
    reference = modal_json(capsys, "--q", Q)
    for form in (["--q", *Q.split(",")], [f"--q={Q}"], ["--q", "-0.2,0.3,1.1", "0.1", "-1,0.2"]):
        assert modal_json(capsys, *form)["frequencies_hz"] == reference["frequencies_hz"], form


def test_gains_one_value_or_per_joint_negative_first(capsys):
    """--kp/--kd: one value for every joint equals the same value repeated per joint, comma or space separated;
    a negative first gain is read as a value (the model then says the loop is unstable, no argparse error)."""
    one = modal_json(capsys, "--q", Q, "--kp", "20000", "--kd", "60")
    per_joint = modal_json(capsys, "--q", Q, "--kp", *["20000"] * 6, "--kd", ",".join(["60"] * 6))
    assert per_joint["frequencies_hz"] == one["frequencies_hz"]
    assert main(["modal", "scompi", "--q", Q, "--kp", "-20000"]) == 0
    assert "verdict: unstable" in capsys.readouterr().out


def test_every_vector_option_takes_both_forms():
    """Every joint-vector and gain option of every command is registered the same way (nargs '+'), so the
    shared parser reads them; the option names of the issue are all among them (``oma --start/--end`` are times,
    not poses)."""
    parser = build_parser("*")
    seen = {}

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif any(o in action.option_strings for o in ("--q", "--q0", "--set-point", "--pose", "--kp", "--kd",
                                                          "--base", "--wrench")) or \
                    (path.endswith("modal-map") and action.option_strings[-1:] in (["--start"], ["--end"])):
                seen[f"{path} {action.option_strings[-1]}"] = action.nargs

    walk(parser, "flexrobot")
    assert set(seen.values()) == {"+"}, seen
    for option in ("modal --q", "simulate --q0", "simulate --set-point", "oma --pose", "modal --kp", "simulate --kd",
                   "modal-map --start"):
        assert f"flexrobot {option}" in seen


def test_shared_number_and_vector_rules():
    """Closed forms: pi expressions; one gain is a float, several an array; wrong lengths name the joints."""
    assert number("-pi/6", "x") == pytest.approx(-math.pi / 6)
    np.testing.assert_allclose(vector(["0,-pi/2", "2*pi/3"], "--q"), [0, -math.pi / 2, 2 * math.pi / 3])
    assert gains(["-5"], "--kp") == -5.0
    with pytest.raises(CommandError, match=r"--q: expected 3 values for joints \['a', 'b', 'c'\], got 2"):
        vector("1,2", "--q", 3, ["a", "b", "c"])
    with pytest.raises(CommandError, match="cannot read 'x1'"):
        vector("1,x1", "--q")


def test_simulate_q0_comma_form_equals_space_form(tmp_path, capsys):
    """simulate --q0 accepted only space-separated values before: both forms (negative first) write the same
    record."""
    out = []
    for k, q0 in enumerate((["-0.1,0.2"], ["-0.1", "0.2"])):
        path = tmp_path / f"s{k}.csv"
        assert main(["simulate", "planar_2r", "--q0", *q0, "--duration", "0.05", "--out", str(path)]) == 0
        out.append(path.read_text())
    assert out[0] == out[1]


@pytest.mark.parametrize("argv, message", [
    (["modal", "scompi", "--q", "0,1"], "--q: expected 6 values"),
    (["modal", "scompi", "--q", "0,a,0,0,0,0"], "cannot read 'a' as a number"),
    (["identify", "planar_2r", "--modal-data", "none.yaml", "--workers", "two"], "--workers"),
    (["oma", "missing.csv"], "missing.csv"),
    (["info"], "name a robot or use --list"),
    (["modal", "scompi", "--q", "0,0,0,0,0,0", "--frame", "tool0"], "give --wrench too"),
    # issue 22: poses outside the URDF limits (scompi joint1: prismatic, [-2, 2] m; joint2: [-3.1416, 3.1416] rad)
    # were modal-analysed and simulated silently; the feedforward's check refuses them for every command
    (["modal", "scompi", "--q", "-5,0,0,0,0,0"], "--q: joint 'joint1': q = -5 m is below the lower limit -2 m "
                                                 "(robot 'scompi'); expected positions within [-2, 2] m"),
    (["modal", "scompi", "--q", "0,-100,0,0,0,0"], "--q: joint 'joint2': q = -100 rad is below the lower limit "
                                                   "-3.1416 rad"),
    (["simulate", "scompi", "--q0", "0,0,4,0,0,0", "--duration", "0.01", "--out", "s.csv"],
     "--q0: joint 'joint3': q = 4 rad is above the upper limit 3.1416 rad"),
    (["simulate", "scompi", "--set-point", "2.5,0,0,0,0,0", "--duration", "0.01", "--out", "s.csv"],
     "--set-point: joint 'joint1': q = 2.5 m is above the upper limit 2 m"),
])
def test_errors_are_one_line_with_status_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_every_command_takes_json():
    """'Every command takes --json' (README): each leaf command, including bag record/play/info and dh2urdf."""
    parser = build_parser("*")
    missing = []

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, sub in subs[0].choices.items():
                walk(sub, f"{path} {name}")
        elif not any("--json" in a.option_strings for a in p._actions):
            missing.append(path)

    walk(parser, "flexrobot")
    assert not missing


def test_version_and_fast_help_in_a_fresh_interpreter():
    """``flexrobot --version`` prints the package version; ``--help`` (and --version) import none of scipy,
    pinocchio, casadi, matplotlib or numpy (measured: ~0.05 s instead of ~1.6-3 s before)."""
    import flexrobot_ros

    script = flexrobot_script()
    if script.exists():
        done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and flexrobot_ros.__version__ in done.stdout
    code = ("import sys, time\nfrom flexrobot_ros.cli import main\nstart = time.perf_counter()\n"
            "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
            "heavy = sorted(m for m in ('scipy', 'pinocchio', 'casadi', 'matplotlib', 'numpy') if m in sys.modules)\n"
            "print('HEAVY', heavy, time.perf_counter() - start)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HEAVY [] " in done.stdout and "modal-map" in done.stdout
    print(f"flexrobot --help in a fresh interpreter: {time.perf_counter() - start:.3f} s")


@pytest.mark.parametrize("argv", [["modal", "scompi", "--q"], ["modl"], ["simulate", "scompi", "--mode", "x"]])
def test_usage_errors_are_one_line_with_status_2(argv, capsys):
    """argparse's own errors (missing value, unknown command or choice) are one line too, with status 2."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "error:" in err and "--help" in err, err


@pytest.mark.parametrize("argv, message", [
    (["modal", "scompi", "--qq", "0"], "flexrobot modal: error: unrecognized arguments: --qq 0; did you mean --q? "
                                       "(see 'flexrobot modal --help')"),
    (["simulate", "scompi", "--out", "s.csv", "--durration=2"], "flexrobot simulate: error: unrecognized arguments: --durration=2; "
                                              "did you mean --duration?"),
    (["modl", "scompi"], "flexrobot: error: argument COMMAND: invalid choice: 'modl'; did you mean 'modal'?"),
    (["modal", "scompi", "--link-model", "amn"], "flexrobot modal: error: argument --link-model: invalid choice: "
                                                 "'amn'; did you mean 'amm'?"),
    (["info", "scompi", "--zzz"], "flexrobot info: error: unrecognized arguments: --zzz (see"),
])
def test_usage_errors_name_the_command_and_suggest_the_closest(argv, message, capsys):
    """Issue 22: a typo'd option said "flexrobot: error: unrecognized arguments" (not naming the subcommand whose
    --help lists the options) and no command or option was suggested; now the subcommand's parser reports it, with
    the closest option, command or choice (difflib) when there is one."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and message in err, err


def test_every_command_help_loads_no_heavy_library():
    """``flexrobot COMMAND --help`` for every command imports none of scipy, pinocchio, casadi, matplotlib (issue 22:
    feedforward, oma and simulate took their choices and defaults from core modules that loaded scipy, and
    feedforward casadi and pinocchio too; the packages now import their submodules on first use and the parsers'
    constants live in modules without them). Fresh interpreter; each command's new heavy modules are named."""
    code = ("import sys\nfrom flexrobot_ros.cli import COMMANDS, main\n"
            "for command in COMMANDS:\n"
            "    try:\n        main([command, '--help'])\n    except SystemExit:\n        pass\n"
            "    heavy = sorted(m for m in ('scipy', 'pinocchio', 'casadi', 'matplotlib') if m in sys.modules)\n"
            "    print('HEAVY', command, heavy, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("HEAVY")]
    assert len(lines) == len(COMMANDS) and all(line.endswith(" []") for line in lines), "\n".join(lines)
