"""What ``colcon build`` and ``ros2 launch`` need from the package, checked without ROS 2.

- package.xml: ament_python build type, a run dependency on every ROS 2 interface package the nodes use (found in
  the node sources) and on the tools the launch files start.
- setup.py: the ament index resource marker, package.xml, both launch files, every config file (parameter files,
  robot YAMLs, the RViz config) in data_files, each file existing; the console scripts point at callables.
- The parameter files are not mistaken for robots.
(test_runtime_rclpy.py checks the rest statically: rosdep keys, setup.cfg script dirs, launch keywords, parameter
file types against the nodes' declarations.)
- The launch files use the launch API they are meant to (DeclareLaunchArgument, LaunchConfiguration, IfCondition,
  ExecuteProcess for ros2 bag record, launch_ros Node) and start only console scripts that exist; when the launch
  packages are installed, ``generate_launch_description()`` builds.
- The RViz config shows the robot model, tf and the monitor's mode-shape markers.
"""
from __future__ import annotations

import ast
import importlib
import re
import runpy
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from unittest import mock

import pytest
import yaml

from flexrobot_ros.errors import RuntimeLayerError
from flexrobot_ros.model import shipped_robots

REPO = Path(__file__).resolve().parents[1]
NODES = ("simulator_node", "feedforward_node", "modal_monitor_node", "oma_node")


@pytest.fixture(scope="module")
def setup_kwargs():
    """The keyword arguments setup.py passes to setuptools.setup (run with setup() replaced by a recorder)."""
    captured = {}
    with mock.patch("setuptools.setup", lambda **kwargs: captured.update(kwargs)):
        cwd = Path.cwd()
        try:
            import os

            os.chdir(REPO)
            runpy.run_path(str(REPO / "setup.py"), run_name="__main__")
        finally:
            os.chdir(cwd)
    return captured


def package_xml():
    return ElementTree.parse(REPO / "package.xml").getroot()


def interface_packages() -> set[str]:
    """ROS 2 packages whose messages/services the nodes use: ``types.<pkg>.msg|srv`` and ``types.get("pkg/...")``."""
    packages = set()
    for path in (REPO / "flexrobot_ros" / "nodes").glob("*.py"):
        text = path.read_text()
        packages |= set(re.findall(r"types\.([a-z0-9_]+)\.(?:msg|srv)\b", text))
        packages |= set(re.findall(r"types\.get\(\"([a-z0-9_]+)/", text))
    packages |= {"builtin_interfaces", "geometry_msgs"}  # Time/Duration in headers, Transform/Point in tf and markers
    return packages


def test_package_xml_declares_the_dependencies():
    root = package_xml()
    assert root.findtext("name") == "flexrobot_ros"
    assert root.find("export").findtext("build_type") == "ament_python"
    depends = {e.text for e in root.iter() if e.tag in ("exec_depend", "depend")}
    used = interface_packages()
    assert {"std_msgs", "sensor_msgs", "trajectory_msgs", "visualization_msgs", "diagnostic_msgs", "std_srvs",
            "tf2_msgs"} <= used
    assert used <= depends, used - depends
    assert {"rclpy", "launch", "launch_ros", "robot_state_publisher", "rviz2", "ros2bag"} <= depends
    assert "python3-pytest" in {e.text for e in root.iter("test_depend")}


def test_setup_installs_what_colcon_needs(setup_kwargs):
    assert setup_kwargs["name"] == package_xml().findtext("name")
    data = {target: list(files) for target, files in setup_kwargs["data_files"]}
    assert data["share/ament_index/resource_index/packages"] == ["resource/flexrobot_ros"]
    assert (REPO / "resource" / "flexrobot_ros").is_file()
    assert data["share/flexrobot_ros"] == ["package.xml"]
    assert sorted(data["share/flexrobot_ros/launch"]) == ["launch/hardware.launch.py", "launch/simulation.launch.py"]
    config = set(data["share/flexrobot_ros/config"])
    expected = {f"config/{p.name}" for p in (REPO / "config").iterdir() if p.suffix in (".yaml", ".rviz", ".xml")}
    assert config == expected and "config/flexrobot.rviz" in config and "config/scompi_simulation.yaml" in config
    for files in data.values():
        for name in files:
            assert (REPO / name).is_file(), name


def test_console_scripts(setup_kwargs):
    scripts = dict(line.replace(" ", "").split("=") for line in setup_kwargs["entry_points"]["console_scripts"])
    assert set(NODES) | {"flexrobot"} <= set(scripts)
    for name, target in scripts.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), name
    for node in NODES:
        assert scripts[node] == f"flexrobot_ros.nodes.{node}:main"


PARAMETER_FILES = sorted(p.name for p in (REPO / "config").glob("*.yaml")
                         if p.stem.endswith(("simulation", "hardware")))


def test_parameter_files_are_not_robots():
    """shipped_robots() lists config/*.yaml files with 'urdf' and 'joints': the parameter files are not among them
    (their types and declarations are checked in test_runtime_rclpy.py)."""
    assert {"simulation.yaml", "hardware.yaml", "scompi_simulation.yaml",
            "scompi_hardware.yaml"} <= set(PARAMETER_FILES)
    assert set(shipped_robots()) & {Path(p).stem for p in PARAMETER_FILES} == set()
    assert "scompi" in shipped_robots()


#: The ros2_control and state-input arguments both launch files take, with the same meaning (issue 23).
ROS2_CONTROL_ARGUMENTS = {"ros2_control_output", "controller", "drive_compensates", "state_input", "motor_interface",
                          "link_interface"}
LAUNCH_FILES = {"simulation.launch.py": {"robot", "tool", "rviz", "record", "rate", "robot_state_publisher"}
                | ROS2_CONTROL_ARGUMENTS,
                "hardware.launch.py": {"robot", "tool", "urdf", "encoders", "joint_states", "dynamic_joint_states",
                                       "rviz", "record", "robot_state_publisher"} | ROS2_CONTROL_ARGUMENTS}


@pytest.mark.parametrize("name", sorted(LAUNCH_FILES))
def test_launch_files_use_the_launch_api(name, setup_kwargs):
    source = (REPO / "launch" / name).read_text()
    tree = ast.parse(source)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "generate_launch_description" in functions
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert {"LaunchDescription", "DeclareLaunchArgument", "LaunchConfiguration", "ExecuteProcess",
            "Node", "OpaqueFunction"} <= imported
    arguments = {node.elts[0].value for node in ast.walk(tree) if isinstance(node, ast.Tuple) and len(node.elts) == 3
                 and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)}
    assert LAUNCH_FILES[name] <= arguments
    assert '"ros2", "bag", "record"' in source
    scripts = {line.split("=")[0].strip() for line in setup_kwargs["entry_points"]["console_scripts"]}
    executables = set(re.findall(r'package=PACKAGE, executable="([a-z_]+)"', source))
    assert executables and executables <= scripts


@pytest.mark.parametrize("name", sorted(LAUNCH_FILES))
def test_launch_descriptions_build(name):
    """With the ROS 2 launch packages installed, generate_launch_description() returns a LaunchDescription that
    declares the arguments (skipped without them)."""
    pytest.importorskip("launch", reason="needs ROS 2 launch (not on PyPI): "
                        "scripts/test-ros2 runs it on a ROS 2 install")
    pytest.importorskip("launch_ros", reason="needs ROS 2 launch_ros (not on PyPI): "
                        "scripts/test-ros2 runs it on a ROS 2 install")
    pytest.importorskip("ament_index_python", reason="needs ament_index_python (ROS 2)")
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory("flexrobot_ros")
    except PackageNotFoundError:
        pytest.skip("flexrobot_ros is not built in the sourced ROS 2 workspace")
    module = runpy.run_path(str(REPO / "launch" / name))
    description = module["generate_launch_description"]()
    declared = {argument.name for argument in description.get_launch_arguments()}
    assert LAUNCH_FILES[name] <= declared


@pytest.mark.parametrize("choice", ["true", "false", "auto"])
def test_simulation_launch_without_robot_state_publisher(choice):
    """robot_state_publisher:=false (or auto where it is not installed) starts the four nodes only, and the
    simulator publishes /tf and /robot_description itself (its parameter file's tf_rate_hz, 50 Hz for the Scompi);
    with robot_state_publisher the simulator's own are off. Needs the launch packages (skipped without them)."""
    pytest.importorskip("launch", reason="needs ROS 2 launch (not on PyPI): "
                        "scripts/test-ros2 runs it on a ROS 2 install")
    pytest.importorskip("launch_ros", reason="needs ROS 2 launch_ros (not on PyPI): "
                        "scripts/test-ros2 runs it on a ROS 2 install")
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    from launch import LaunchContext

    module = runpy.run_path(str(REPO / "launch" / "simulation.launch.py"))
    context = LaunchContext()
    context.launch_configurations.update({"robot": "scompi", "tool": "", "rate": "1000.0", "real_time_factor": "1.0",
                                          "params_file": "", "robot_state_publisher": choice, "rviz": "false",
                                          "record": "", **{name: "" for name in ROS2_CONTROL_ARGUMENTS}})
    try:
        installed = bool(get_package_share_directory("robot_state_publisher"))
    except PackageNotFoundError:
        installed = False
    expected = {"true": True, "false": False, "auto": installed}[choice]
    executables = [action.node_executable for action in module["launch_nodes"](context)]
    assert executables == list(NODES) + (["robot_state_publisher"] if expected else [])
    overrides = module["simulator_overrides"](context, module["launch_plan"](context).robot_state_publisher)
    assert (overrides.get("tf_rate_hz", 50.0) > 0.0) is not expected
    assert overrides.get("publish_robot_description", True) is not expected
    context.launch_configurations["robot_state_publisher"] = "maybe"
    with pytest.raises(RuntimeLayerError, match="robot_state_publisher:='maybe'"):
        module["launch_plan"](context)


@pytest.mark.parametrize("name", sorted(LAUNCH_FILES))
def test_launch_decides_optional_tools_before_starting_anything(name):
    """Issue 23: every process of the launch comes from launch_nodes, which asks plan_launch first; the description
    itself holds only the argument declarations and that one OpaqueFunction (no rviz2 or recorder action that could
    fail after the nodes started)."""
    tree = ast.parse((REPO / "launch" / name).read_text())
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    description_calls = {_call_name(node) for node in ast.walk(functions["generate_launch_description"])
                         if isinstance(node, ast.Call)}
    assert not description_calls & {"Node", "ExecuteProcess"}, description_calls
    launch_nodes = functions["launch_nodes"]
    first = launch_nodes.body[1] if isinstance(launch_nodes.body[0].value, ast.Constant) else launch_nodes.body[0]
    assert isinstance(first, ast.Assign) and _call_name(first.value) == "launch_plan", ast.dump(first)
    assert "plan_launch" in {_call_name(node) for node in ast.walk(functions["launch_plan"])
                             if isinstance(node, ast.Call)}


#: Launch argument -> the node parameter it sets, on the nodes that take it (issue 23: one configuration for the
#: simulated and the real robot).
ARGUMENT_PARAMETERS = {
    "ros2_control_output": ("ros2_control.output", {"feedforward_node"}),
    "controller": ("ros2_control.controller", {"feedforward_node", "simulator_node"}),
    "drive_compensates": ("drive_compensates", {"feedforward_node"}),
    "state_input": ("state_input", {"modal_monitor_node", "oma_node"}),
    "link_interface": ("dynamic_joint_states.link_interface", {"modal_monitor_node", "oma_node"}),
    "motor_interface": ("dynamic_joint_states.motor_interface", {"oma_node"}),
}


@pytest.mark.parametrize("name", sorted(LAUNCH_FILES))
def test_ros2_control_arguments_become_declared_parameters(name):
    """Both launch files read each ros2_control / state-input argument into the parameter of that name (keyed by the
    parameter's own name in the source), which the nodes declare; the hardware launch file remaps
    dynamic_joint_states on the monitor and OMA nodes as it remaps joint_states; the simulation launch file gives the
    simulator the controller whose commands it takes."""
    import importlib

    tree = ast.parse((REPO / "launch" / name).read_text())
    text = ast.unparse(tree)  # one quoting and spacing
    declared = {node: {spec.name for spec in importlib.import_module(f"flexrobot_ros.nodes.{node}").PARAMETERS}
                for node in NODES}
    for argument, (parameter, nodes) in ARGUMENT_PARAMETERS.items():
        read = f"LaunchConfiguration('{argument}').perform(context).strip()"
        assert f"'{parameter}': {read}" in text or f"values['{parameter}'] = {read}" in text, (argument, parameter)
        assert all(parameter in declared[node] for node in nodes), (parameter, nodes)
    functions = {node.name: ast.unparse(node) for node in tree.body if isinstance(node, ast.FunctionDef)}
    launch_nodes = functions["launch_nodes"]
    assert "state_overrides(context, motor=False)" in launch_nodes and "state_overrides(context, motor=True)" in \
        launch_nodes
    assert "ros2_control_overrides(context)" in launch_nodes
    if name == "hardware.launch.py":
        assert launch_nodes.count("dynamic_joint_states]") == 2  # monitor's and OMA's remappings
    else:
        simulator = functions["simulator_overrides"]
        assert "controller = LaunchConfiguration('controller').perform(context).strip()" in simulator
        assert "overrides['ros2_control.controller'] = controller" in simulator


def test_hardware_urdf_argument_is_every_nodes_urdf_parameter():
    """hardware.launch.py's ``urdf:=`` is the ``urdf`` parameter of every node it starts (robot_overrides, which
    each node gets), which those nodes declare, and it tells the launch plan whether the URDF comes from the topic
    (then no robot_state_publisher); simulation.launch.py asks the plan with the YAML's own choice."""
    import importlib

    tree = ast.parse((REPO / "launch" / "hardware.launch.py").read_text())
    functions = {node.name: ast.unparse(node) for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "urdf = LaunchConfiguration('urdf').perform(context).strip()" in functions["robot_overrides"]
    assert "overrides['urdf'] = urdf" in functions["robot_overrides"]
    assert "urdf_from_topic=uses_topic(LaunchConfiguration('robot').perform(context), " \
           "LaunchConfiguration('urdf').perform(context).strip())" in functions["launch_plan"]
    assert functions["launch_nodes"].count("common") >= 4  # feedforward, monitor, OMA, calibration
    for node in ("feedforward_node", "modal_monitor_node", "oma_node", "calibration_node"):
        assert "urdf" in {spec.name for spec in importlib.import_module(f"flexrobot_ros.nodes.{node}").PARAMETERS}
    simulation = ast.unparse(ast.parse((REPO / "launch" / "simulation.launch.py").read_text()))
    assert "urdf_from_topic=uses_topic(LaunchConfiguration('robot').perform(context), '')" in simulation


def _call_name(call: ast.AST) -> str | None:
    func = call.func if isinstance(call, ast.Call) else None
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def test_rviz_config():
    config = yaml.safe_load((REPO / "config" / "flexrobot.rviz").read_text())
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "base_link"
    displays = {d["Class"]: d for d in manager["Displays"]}
    assert displays["rviz_default_plugins/RobotModel"]["Description Topic"]["Value"] == "/robot_description"
    assert displays["rviz_default_plugins/MarkerArray"]["Topic"]["Value"] == "/modal/markers"
    assert "rviz_default_plugins/TF" in displays


#: The keys rosbag2 accepts in a --qos-profile-overrides-path file (ros2bag/api: _QOS_POLICY_FROM_SHORT_NAME,
#: _DURATION_KEYS, _VALUE_KEYS; the same on Humble and Jazzy) and the short keys of the policies used here.
ROSBAG2_QOS_KEYS = {"history", "reliability", "durability", "liveliness", "deadline", "lifespan",
                    "liveliness_lease_duration", "depth", "avoid_ros_namespace_conventions"}
SHORT_KEYS = {"history": {"keep_last", "keep_all", "system_default"},
              "reliability": {"reliable", "best_effort", "system_default"},
              "durability": {"volatile", "transient_local", "system_default"}}


def test_simulation_launch_records_with_qos_overrides_matching_the_writers(setup_kwargs):
    """Issue 23 item 4: record:=DIR lost ~2,000 of 40,000 /motor_states samples with rosbag2's default depth 10
    (Jazzy, measured). The launch file passes --qos-profile-overrides-path with config/recording_qos.yaml (installed),
    whose entries cover every stream the simulator publishes with QOS_STREAM, with the writers' reliability and
    durability and keep-all history (or a depth at least the writers')."""
    from flexrobot_ros.runtime.qos import QOS_STREAM

    source = (REPO / "launch" / "simulation.launch.py").read_text()
    tree = ast.parse(source)
    commands = [node.value for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg == "cmd"]
    assert len(commands) == 1
    words = [e.value if isinstance(e, ast.Constant) else e for e in commands[0].elts]
    assert words[:4] == ["ros2", "bag", "record", "-a"]
    path = words[words.index("--qos-profile-overrides-path") + 1]
    assert ast.unparse(path.func) == "os.path.join" and ast.unparse(path.args[0]) == "share"
    overrides_file = REPO.joinpath(*(ast.literal_eval(arg) for arg in path.args[1:]))
    assert overrides_file == REPO / "config" / "recording_qos.yaml"
    installed = {f"{target}/{Path(f).name}" for target, files in setup_kwargs["data_files"] for f in files}
    assert f"share/flexrobot_ros/config/{overrides_file.name}" in installed

    overrides = yaml.safe_load(overrides_file.read_text())
    simulator = (REPO / "flexrobot_ros" / "nodes" / "simulator_node.py").read_text()
    streams = {f"/{name}" for name in re.findall(r'(?:create|optional)_publisher\([^()]*,\s*"([a-z_]+)",\s*QOS_STREAM[,)]',
                                                  simulator)}
    assert streams == {"/motor_states", "/joint_states", "/dynamic_joint_states"}
    assert streams <= set(overrides)
    for topic, profile in overrides.items():
        assert set(profile) <= ROSBAG2_QOS_KEYS, topic
        for key, value in profile.items():
            assert key not in SHORT_KEYS or value in SHORT_KEYS[key], (topic, key, value)
        assert profile["reliability"] == QOS_STREAM.reliability and profile["durability"] == QOS_STREAM.durability
        assert profile["history"] == "keep_all" or profile.get("depth", 0) >= QOS_STREAM.depth, topic
