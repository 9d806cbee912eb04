"""Learning algorithms behind one protocol (:class:`Algorithm`); each module registers one with a name."""

from __future__ import annotations

import importlib
import pkgutil

from coach_rl.algorithms.base import (
    Algorithm,
    AlgorithmFactory,
    AlgorithmHooks,
    UpdateContext,
    algorithm_names,
    build_algorithm,
    register_algorithm,
)

__all__ = ["Algorithm", "AlgorithmFactory", "AlgorithmHooks", "UpdateContext", "algorithm_names", "build_algorithm", "load_all",
           "register_algorithm"]


def load_all() -> None:
    """Import every module of this package, so each registers its algorithm (a new module needs nothing else)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
