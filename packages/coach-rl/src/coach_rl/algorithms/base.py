r"""The contract every learning algorithm meets, so the training loop never branches on an algorithm's name.

An algorithm owns the models it trains (policy, critic or value network), their optimisers and whatever it
keeps between iterations (a positive-replay buffer, a task curriculum, priorities). The loop gives it, once per
iteration, the :class:`~coach_rl.records.StepRecord` batch of the episodes just collected (rewards and returns
filled in) and an :class:`UpdateContext` (the replay buffer of earlier episodes, the loop's generator); the
algorithm updates and returns flat metrics. ``save``/``load`` hold everything an exact resume needs.

A new algorithm is one new module in this package that defines a class and registers a factory with
:func:`register_algorithm`; ``algorithm: <name>`` in a run config then selects it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from coach_rl.records import StepRecord

__all__ = ["Algorithm", "AlgorithmFactory", "UpdateContext", "algorithm_names", "build_algorithm",
           "register_algorithm"]


@dataclass
class UpdateContext:
    """What the loop hands an algorithm besides the new records."""

    replay: Any = None
    """The run's :class:`coach_rl.replay.ReplayBuffer` (every stored episode, these included); None without one."""
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    """The loop's generator (saved with checkpoints): draw replay samples from it for an exact resume."""
    iteration: int = 0
    """The iteration being run (1-based)."""
    policy_version: int = 0
    """The learner's policy version before this update (records older than it are off-policy)."""


@runtime_checkable
class Algorithm(Protocol):
    """One learning algorithm over :class:`StepRecord` batches (see the module docstring)."""

    name: str
    """The registry name (``algorithm: <name>``)."""

    episodes_per_instance: int
    """Episodes the loop plays per task instance in one iteration (GRPO's group size G; 1 for per-state methods)."""

    @property
    def policy_model(self) -> Any:
        """The policy being trained (the model whose weights act in the next rollout)."""
        ...

    def update(self, records: Sequence[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Learn from this iteration's records; flat metrics (``actor/...``, ``critic/...``) for metrics.jsonl."""
        ...

    def save(self, directory: Path) -> None:
        """Write everything a resume needs (weights, optimisers, schedules, generators, buffers) to ``directory``."""
        ...

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote (the policy model is loaded into the object given at construction)."""
        ...


AlgorithmFactory = Callable[..., Algorithm]
"""``factory(config, model, tokenizer, **parts) -> Algorithm``: ``config`` a :class:`coach_rl.configs.RunConfig`."""

_REGISTRY: dict[str, AlgorithmFactory] = {}


def register_algorithm(name: str) -> Callable[[AlgorithmFactory], AlgorithmFactory]:
    """Decorator: make ``factory`` the builder of ``algorithm: <name>``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"an algorithm name must be an identifier, got {name!r}")

    def decorate(factory: AlgorithmFactory) -> AlgorithmFactory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"algorithm {name!r} is registered twice")
        _REGISTRY[name] = factory
        return factory

    return decorate


def algorithm_names() -> list[str]:
    """The registered algorithm names, sorted."""
    from coach_rl.algorithms import load_all

    load_all()
    return sorted(_REGISTRY)


def build_algorithm(name: str, config: Any, model: Any, tokenizer: Any, **parts: Mapping[str, Any]) -> Algorithm:
    """The algorithm ``name`` for ``config`` around the policy ``model``; a ValueError naming the known ones."""
    names = algorithm_names()
    if name not in _REGISTRY:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(names)}")
    algorithm = _REGISTRY[name](config, model, tokenizer, **parts)
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"the factory of {name!r} returned {type(algorithm).__name__}, which is not an Algorithm")
    return algorithm
