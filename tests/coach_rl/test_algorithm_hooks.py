"""The Algorithm contract's optional hooks: declared once with defaults (AlgorithmHooks), given by build_algorithm to
an algorithm that defines none of them, overridden by the shipped ones that need them; the loop calls them directly."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

from coach_rl import checkpoints, components, held_out, rollout_metrics, rollout_plan, validation, warmup
from coach_rl import loop as loop_module
from coach_rl.algorithms import (
    Algorithm,
    AlgorithmHooks,
    algorithm_names,
    build_algorithm,
    register_algorithm,
)
from coach_rl.algorithms.base import _HOOKS


class _Minimal:
    """An algorithm from outside the package: only the required members, no hooks."""

    name = "minimal_for_hooks_test"
    episodes_per_instance = 1

    def __init__(self, model: Any) -> None:
        self.model = model

    @property
    def policy_model(self) -> Any:
        return self.model

    def update(self, records, context) -> dict[str, float]:
        return {}

    def save(self, directory: Path) -> None:
        pass

    def load(self, directory: Path) -> None:
        pass


register_algorithm(_Minimal.name)(lambda config, model, tokenizer, **parts: _Minimal(model))


def test_an_algorithm_without_hooks_gets_their_defaults():
    algorithm = build_algorithm(_Minimal.name, None, "the model", None)
    assert isinstance(algorithm, Algorithm) and not isinstance(algorithm, AlgorithmHooks)
    assert algorithm.critic is None and algorithm.prm_candidates == 0
    assert algorithm.task_weights(["A", "B"]) is None
    assert algorithm.load_critic(Path("nowhere")) is False
    assert algorithm.use_oracle_format(object()) is None
    assert set(_HOOKS) == {name for name in vars(AlgorithmHooks) if not name.startswith("_")}


def test_shipped_algorithms_inherit_the_hooks_and_override_what_they_need():
    from coach_rl.algorithms.coach import CoachAlgorithm
    from coach_rl.algorithms.coach_sssa import CoachSSSAAlgorithm
    from coach_rl.algorithms.dgrpo import DGRPO
    from coach_rl.algorithms.distrl import DistRLLearner
    from coach_rl.algorithms.grpo import GRPOBaseline
    from coach_rl.algorithms.ppo import PPOBaseline

    shipped = [CoachAlgorithm, CoachSSSAAlgorithm, DGRPO, DistRLLearner, GRPOBaseline, PPOBaseline]
    assert all(issubclass(cls, AlgorithmHooks) for cls in shipped)
    assert {"coach", "coach_sssa", "dgrpo", "distrl", "grpo", "ppo"} <= set(algorithm_names())
    own = {cls: cls.__mro__[:cls.__mro__.index(AlgorithmHooks)] for cls in shipped}  # the class and its own bases
    overrides = {cls.__name__: sorted(n for n in _HOOKS if any(n in vars(c) for c in own[cls])) for cls in shipped}
    # critic (both) and prm_candidates (Coach): set in __init__; load_critic: their shared CoachCritic's
    assert overrides["CoachAlgorithm"] == ["load_critic", "use_oracle_format"]
    assert overrides["CoachSSSAAlgorithm"] == ["load_critic"]
    assert overrides["DGRPO"] == ["task_weights"]
    assert not (Path(inspect.getfile(CoachAlgorithm)).parents[1] / "baselines.py").exists()  # each algorithm whole


def test_the_loop_never_probes_the_algorithm_or_branches_on_its_name():
    # the loop and the modules it keeps its set-up, checkpoints, validation and evaluation in
    for module in (loop_module, checkpoints, components, held_out, rollout_metrics, rollout_plan, validation, warmup):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            where = f"{module.__name__} line {getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr"):
                target = ast.unparse(node.args[0])
                assert "algorithm" not in target, f"{where}: {ast.unparse(node)}"
            if isinstance(node, ast.Compare) and "loop.algorithm" in ast.unparse(node.left):
                raise AssertionError(f"{where} branches on the algorithm's name: {ast.unparse(node)}")


# The trainer-side config the loop reads is the run's algorithm's own class: only TrainerConfig's fields and methods
# are there for every algorithm. Reached only through a capability the config declares: critic pre-training
# (TrainingLoop._critic_pretrain runs only when `pretrains_critic()`, and calls the others).
_CRITIC_PRETRAINING = {("coach_rl.warmup", "critic_examples"), ("coach_rl.warmup", "pretrain_critic"),
                       ("coach_rl.warmup", "rollout_state_examples"), ("coach_rl.loop", "_critic_pretrain")}


def _config_reads(module: Any) -> list[tuple[str, str]]:
    """``(name, where)`` of every ``args.NAME`` / ``self.args.NAME`` / ``config.coach.NAME`` / ``coach.NAME`` read."""
    out = []
    tree = ast.parse(inspect.getsource(module))
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if (module.__name__, func.name) in _CRITIC_PRETRAINING:
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Attribute):
                owner = ast.unparse(node.value)
                if owner in ("args", "self.args", "config.coach", "self.config.coach", "coach", "loop.args"):
                    out.append((node.attr, f"{module.__name__}.{func.name} line {node.lineno}"))
    return out


def test_shared_code_reads_only_the_config_fields_every_algorithm_has():
    from coach_rl.config import TrainerConfig

    shared = set(dir(TrainerConfig)) | {f.name for f in __import__("dataclasses").fields(TrainerConfig)}
    from coach_rl import evaluation, rewards
    from coach_rl.distributed import collector

    modules = (loop_module, checkpoints, components, held_out, rollout_metrics, rollout_plan, validation, warmup,
               evaluation, rewards, collector)
    reads = [r for m in modules for r in _config_reads(m)]
    assert len(reads) > 20  # the scan sees the loop's reads
    foreign = [f"{where}: {name}" for name, where in reads if name not in shared]
    assert not foreign, f"shared code reads config fields some algorithms' configs lack: {foreign}"


def test_critic_pretraining_is_a_capability_the_config_declares(tmp_path: Path):
    from coach_rl.configs import load_config

    for algorithm, pretrains in (("coach", True), ("coach_sssa", True), ("ppo", False), ("grpo", False),
                                 ("dgrpo", False), ("distrl", False)):
        extra = ["critic_pretrain_steps=5"] if pretrains else []
        cfg = load_config("smoke", [f"algorithm={algorithm}", f"output_dir={tmp_path}", *extra])
        assert cfg.coach.pretrains_critic() is pretrains and cfg.coach.critic_pretrain_needs_demos() is pretrains
