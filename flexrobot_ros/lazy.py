"""Packages whose public names are imported from their submodules on first use.

``flexrobot COMMAND --help`` builds the command's parser, which takes choices and defaults from core modules
(``flexrobot_ros.simulation.integrators.ACCURATE_METHODS``, ``flexrobot_ros.oma.identify.METHODS``, ...). Importing
such a module runs its package's ``__init__``; an ``__init__`` that imported every submodule would load scipy,
pinocchio and casadi before any help is printed. With :func:`lazy_package` the ``__init__`` only names where each
public name lives::

    lazy_package(__name__, {"Simulation": "simulation", "TorqueInput": "controllers"})

and ``from flexrobot_ros.simulation import Simulation`` imports ``flexrobot_ros.simulation.simulation`` then.

A public name may also be a submodule's name (``flexrobot_ros.dynamics.feedforward``, the function, lives in the
submodule ``flexrobot_ros.dynamics.feedforward``). An eager ``__init__`` rebinds such a name to the function after
importing the submodule; here the package's module class (Python's documented ``__class__`` customization of a
module) keeps the import system from binding the submodule over the name, so the name means the same either way.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class LazyPackage(types.ModuleType):
    """A package module whose public names (``_lazy_exports``: name -> submodule) are imported on first access."""

    _lazy_exports: dict[str, str]

    def __getattr__(self, name: str) -> Any:
        exports = vars(self).get("_lazy_exports", {})
        if name not in exports:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.__name__}.{exports[name]}"), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if (name in vars(self).get("_lazy_exports", {}) and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return  # the import system binding submodule `name`: the public name keeps its meaning
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(vars(self)) | set(vars(self).get("_lazy_exports", {})))


def lazy_package(package: str, exports: dict[str, str]) -> None:
    """Make ``package`` (its ``__name__``, called from its ``__init__``) a :class:`LazyPackage` exporting
    ``exports`` (public name -> submodule name); sets its ``__all__``."""
    module = sys.modules[package]
    module.__class__ = LazyPackage
    module._lazy_exports = dict(exports)
    module.__all__ = sorted(exports)
