"""The package's layers (issue 24, "Structure"): every import of every module of flexrobot_ros, read with ast
(imports inside functions and under ``if TYPE_CHECKING`` included, relative imports resolved), has no circle between
files or between folders and points down the layers:

    errors, yaml_files, lazy, timeseries,         (no robot, no physics)
    text_table
    model/                                        URDF + flexibility YAML -> FlexibleRobot, plain data per section
    physics: kinematics.py, dynamics/, flexible_links/
    control/                                      control laws shared by modal/ and simulation/
    modal/, simulation/, identification/          on the physics
    oma/ (signals, not robots), runtime/ (transport, not physics)
    nodes/, commands/, cli.py                     on top

What an import statement names: ``import a.b.c`` names module a.b.c; ``from a.b import c`` names a.b.c when it is a
submodule (and then also the package a.b, whose namespace the name is read from), else the package a.b - or, when
a.b's ``__init__`` exports c lazily (:mod:`flexrobot_ros.lazy`), the submodule that defines c. The ``__init__`` of
the packages Python passes through on the way to a module is not counted (that would make every package with an
``__init__`` one circle).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "flexrobot_ros"
#: Folders (and top-level modules) of the physics layer.
PHYSICS = {"dynamics", "flexible_links", "kinematics"}
#: What model/ may import besides itself.
MODEL_MAY_IMPORT = {"errors", "lazy", "yaml_files"}
#: Layers above the core: no core module imports them.
TOP = {"nodes", "commands", "cli", "runtime"}
#: The core: what runs without ROS 2 and without a terminal.
CORE = {"model", "control", "modal", "simulation", "identification", "oma"} | PHYSICS


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def lazy_exports(package: str) -> dict[str, str]:
    """name -> submodule of a package whose ``__init__`` assigns ``_EXPORTS`` for :func:`lazy_package`."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            return eval(compile(ast.Expression(node.value), str(path), "eval"), {"__builtins__": {}, "dict": dict})
    return {}


def imported(module: str) -> dict[str, int]:
    """Modules of the package that ``module`` imports -> the line of the first such import."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    out: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        if target != module and target.split(".")[0] == "flexrobot_ros":
            assert target in MODULES, f"{path}:{line}: imports {target}, which is not a module of the package"
            out.setdefault(target, line)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module
            if source.split(".")[0] != "flexrobot_ros":
                continue
            exports = lazy_exports(source)
            for alias in node.names:
                if f"{source}.{alias.name}" in MODULES:
                    add(f"{source}.{alias.name}", node.lineno)
                    add(source, node.lineno)
                elif alias.name in exports:
                    add(f"{source}.{exports[alias.name]}", node.lineno)
                else:
                    add(source, node.lineno)
    return out


IMPORTS = {module: imported(module) for module in MODULES}


def folder(module: str) -> str:
    """The package's folder (or top-level module) a module belongs to: ``dynamics`` for flexrobot_ros.dynamics.dae.x."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "flexrobot_ros"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(edges: list[tuple[str, str]]) -> str:
    return "; ".join(f"{MODULES[a].relative_to(PACKAGE.parent)}:{IMPORTS[a][b]} imports {b}" for a, b in edges)


def test_the_reader_sees_the_imports_the_issue_names():
    """The reader itself: a relative import, a function-level import and a lazy export resolve as Python does."""
    assert "flexrobot_ros.errors" in IMPORTS["flexrobot_ros.model.schema"]
    assert "flexrobot_ros.simulation.elastic_robot_plant" in IMPORTS["flexrobot_ros.commands.modal"]  # in a function
    assert "flexrobot_ros.simulation.simulation" in IMPORTS["flexrobot_ros.nodes.simulator_node"]  # lazy export
    assert "flexrobot_ros.runtime.messages" in IMPORTS["flexrobot_ros.runtime"]


def test_no_import_circle_between_files():
    graph = {module: set(targets) for module, targets in IMPORTS.items()}
    bad = circles(graph)
    assert not bad, "import circles between files: " + " | ".join(
        describe([(a, b) for a in component for b in IMPORTS[a] if b in component]) for component in bad)


def test_no_import_circle_between_folders():
    graph: dict[str, set[str]] = {}
    for module, targets in IMPORTS.items():
        graph.setdefault(folder(module), set()).update(folder(t) for t in targets if folder(t) != folder(module))
    bad = circles(graph)
    assert not bad, "import circles between folders: " + " | ".join(
        f"{component}: " + describe([(a, b) for a in IMPORTS for b in IMPORTS[a]
                                     if folder(a) in component and folder(b) in component and folder(a) != folder(b)])
        for component in bad)


def forbidden(sources: set[str], targets: set[str]) -> list[tuple[str, str]]:
    return [(a, b) for a in IMPORTS for b in IMPORTS[a] if folder(a) in sources and folder(b) in targets]


@pytest.mark.parametrize("sources, targets, rule", [
    ({"model"}, {folder(m) for m in MODULES} - MODEL_MAY_IMPORT - {"model"},
     "model/ imports nothing of the package but errors, lazy and yaml_files"),
    (PHYSICS, {"control", "modal", "simulation", "identification", "oma"} | TOP,
     "the physics never imports the layers above it"),
    ({"oma"}, {"model", "control", "modal", "simulation", "identification"} | PHYSICS,
     "oma/ knows signals, not robots"),
    ({"runtime"}, CORE, "runtime/ knows transport, not the model or the physics"),
    (CORE, TOP, "the core never imports the runtime, the nodes or the command line"),
    ({"control"}, {"modal", "simulation", "identification"}, "control laws sit below modal/ and simulation/"),
], ids=["model", "physics", "oma", "runtime", "core", "control"])
def test_imports_point_down_the_layers(sources, targets, rule):
    bad = forbidden(sources, targets)
    assert not bad, f"{rule}: {describe(bad)}"
