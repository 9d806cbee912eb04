r"""The contract every learning algorithm meets, so the training loop never branches on an algorithm's name.

An algorithm owns the models it trains (policy, critic or value network), their optimisers and whatever it
keeps between iterations (a positive-replay buffer, a task curriculum, priorities). The loop gives it, once per
iteration, the :class:`~coach_rl.records.StepRecord` batch of the episodes just collected (rewards and returns
filled in) and an :class:`UpdateContext` (the replay buffer of earlier episodes, the loop's generator); the
algorithm updates and returns flat metrics. ``save``/``load`` hold everything an exact resume needs.

A new algorithm is one new module in this package that defines a class and its config (a dataclass built on
:class:`coach_rl.arguments.TrainerConfig` with the mixins it reads) and registers a factory with
:func:`register_algorithm`; ``algorithm: <name>`` in a run config then selects it, and the run config accepts
exactly the keys of that config class (:func:`config_class`). Besides the members of
:class:`Algorithm`, an algorithm may override the optional hooks of :class:`AlgorithmHooks` (a critic the loop
pre-trains, a task curriculum, ...); :func:`build_algorithm` gives one that defines none of them their defaults,
so the loop calls every hook directly.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from coach_rl.records import StepRecord

__all__ = ["Algorithm", "AlgorithmFactory", "AlgorithmHooks", "StateDictAlgorithm", "UpdateContext", "algorithm_names",
           "build_algorithm", "config_class", "load_all", "register_algorithm"]


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


class AlgorithmHooks:
    """The optional part of the contract, with the defaults an algorithm gets when it does not override them."""

    critic: Any = None
    """A critic (Q or V) the loop pre-trains in the warm-up and warm-starts from ``init_from``; None: none."""

    prm_candidates: int = 0
    """Extra replies the collector samples per state for the PRM to label as more critic targets
    (``critic_prm_candidates``; never executed, no env step); 0: none."""

    reply_chooser: Any = None
    """Picks which of several sampled replies each state executes while training (a
    :class:`coach_rl.rollout.ReplyChooser`, e.g. Coach's ``coach_execute_best_of``); None: the policy's own sample."""

    def task_weights(self, tasks: Sequence[str]) -> Mapping[str, float] | None:
        """How often to play each training task next (a curriculum, e.g. DGRPO's); None: round-robin."""
        return None

    def load_critic(self, directory: Path) -> bool:
        """Take the critic of another run's saved algorithm folder (``init_from``); False when there is none."""
        return False

    def use_oracle_format(self, policy_format: Any) -> None:
        """Label sampled replies against the sim's oracle with this ``PolicyFormat`` (``oracle_diagnostics``)."""
        return None


_HOOKS = tuple(name for name in vars(AlgorithmHooks) if not name.startswith("_"))


def _give_default_hooks(algorithm: Any) -> None:
    """The hooks of :class:`AlgorithmHooks` that ``algorithm`` lacks, set on it (bound to it) with their defaults."""
    for name in _HOOKS:
        if not hasattr(algorithm, name):
            default = getattr(AlgorithmHooks, name)
            setattr(algorithm, name, types.MethodType(default, algorithm) if callable(default) else default)


STATE_FILE = "baseline.pt"
"""The file :class:`StateDictAlgorithm` saves into an algorithm's checkpoint folder."""


class StateDictAlgorithm(AlgorithmHooks):
    """``save``/``load``/``policy_model`` of the Algorithm protocol from the subclass's ``state_dict`` and
    ``load_state_dict`` and its ``actor`` (a :class:`coach_rl.actor.ActorUpdater`): GRPO's and PPO's."""

    actor: Any

    @property
    def policy_model(self) -> Any:
        """The policy the actor updates."""
        return self.actor.model

    def save(self, directory: Path) -> None:
        """Policy weights, optimiser and schedule states (everything :meth:`load` restores) into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        import torch

        torch.save(self.state_dict(), directory / STATE_FILE)

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote."""
        import torch

        self.load_state_dict(torch.load(Path(directory) / STATE_FILE, weights_only=True))


AlgorithmFactory = Callable[..., Algorithm]
"""``factory(config, model, tokenizer, **parts) -> Algorithm``: ``config`` a :class:`coach_rl.configs.RunConfig`."""

_REGISTRY: dict[str, AlgorithmFactory] = {}
_CONFIGS: dict[str, type] = {}


def register_algorithm(name: str, config: type | None = None) -> Callable[[AlgorithmFactory], AlgorithmFactory]:
    """Decorator: make ``factory`` the builder of ``algorithm: <name>``, whose run configs are ``config`` objects (a
    dataclass built on :class:`coach_rl.arguments.TrainerConfig`; None: ``TrainerConfig`` itself, the shared keys only)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"an algorithm name must be an identifier, got {name!r}")
    if config is not None:
        from coach_rl.arguments import TrainerConfig

        if not (isinstance(config, type) and issubclass(config, TrainerConfig)):
            raise TypeError(f"the config of algorithm {name!r} must be a TrainerConfig subclass, got {config!r}")

    def decorate(factory: AlgorithmFactory) -> AlgorithmFactory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"algorithm {name!r} is registered twice")
        _REGISTRY[name] = factory
        if config is not None:
            _CONFIGS[name] = config
        return factory

    return decorate


def load_all() -> None:
    """Import every module of this package, so each registers its algorithm (a new module needs nothing else)."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name != "base":
            importlib.import_module(f"{__package__}.{module.name}")


def algorithm_names() -> list[str]:
    """The registered algorithm names, sorted."""
    load_all()
    return sorted(_REGISTRY)


def config_class(name: str) -> type:
    """The config class of algorithm ``name`` (what a run config with ``algorithm: <name>`` builds); a ValueError
    naming the known algorithms."""
    names = algorithm_names()
    if name not in _REGISTRY:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(names)}")
    if name in _CONFIGS:
        return _CONFIGS[name]
    from coach_rl.arguments import TrainerConfig

    return TrainerConfig


def build_algorithm(name: str, config: Any, model: Any, tokenizer: Any, **parts: Mapping[str, Any]) -> Algorithm:
    """The algorithm ``name`` for ``config`` around the policy ``model``; a ValueError naming the known ones."""
    names = algorithm_names()
    if name not in _REGISTRY:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(names)}")
    algorithm = _REGISTRY[name](config, model, tokenizer, **parts)
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"the factory of {name!r} returned {type(algorithm).__name__}, which is not an Algorithm")
    _give_default_hooks(algorithm)
    return algorithm
