"""Learning algorithms behind one protocol (:class:`Algorithm`); each module registers one with a name."""

from __future__ import annotations

from coach_rl.algorithms.base import (
    Algorithm,
    AlgorithmFactory,
    AlgorithmHooks,
    UpdateContext,
    algorithm_names,
    build_algorithm,
    config_class,
    load_all,
    register_algorithm,
)

__all__ = ["Algorithm", "AlgorithmFactory", "AlgorithmHooks", "UpdateContext", "algorithm_names", "build_algorithm",
           "config_class", "load_all", "register_algorithm"]
