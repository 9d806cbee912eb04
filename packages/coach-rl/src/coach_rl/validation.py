"""Validation (``validation_every``): sampled success on instances of its own, and the best policy kept in ``best/``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from coach_rl.checkpoints import BEST_DIR_NAME, BEST_INFO_NAME, POLICY_DIR, replace_dir
from coach_rl.components import run_env_kwargs
from coach_rl.configs import RunConfig
from coach_rl.evaluation import EvalReport
from coach_rl.run import capture_rng_state, restore_rng_state

__all__ = ["best_record", "load_best_policy", "note_validation", "sample_validation", "save_best",
           "validation_record", "validation_seeds"]


def validation_seeds(config: RunConfig) -> list[int]:
    """Seeds of the validation instances: none trained on, demonstrated or in the held-out evaluation."""
    start = config.loop.validation_seed_offset
    return list(range(start, start + config.loop.validation_instances_per_task))


def sample_validation(policy: Any, config: RunConfig, tasks: Sequence[str], iteration: int,
                      env_steps: int) -> tuple[EvalReport, list[Any]]:
    """The policy after ``iteration`` sampling ``validation_samples_per_instance`` episodes on each validation instance
    of ``tasks``: its report and episodes.

    The policy samples at its training temperature (as the held-out sampled evaluation does) from a generator
    seeded by the run's seed and the iteration, inside a saved and restored RNG state: validating changes nothing
    the training draws (exact resume holds, and the policies trained are those of a run without validation).
    """
    from coach_rl.evaluation import evaluate_policy

    args = config.coach
    n = int(config.loop.validation_samples_per_instance)
    seeds = [seed for seed in validation_seeds(config) for _ in range(n)]
    env_kwargs = run_env_kwargs(config)
    env_kwargs.pop("latency", None)  # as the evaluation: the latency study times training only
    saved_rng = capture_rng_state()
    try:
        torch.manual_seed(int(args.seed) * 1_000_003 + 7_919 * iteration + 17)
        return evaluate_policy(
            policy, tasks, seeds, env_id=args.env_id, env_kwargs=env_kwargs,
            num_envs=max(1, int(args.num_envs)), greedy=False, with_reference=False,
            meta={"label": f"validation_iter{iteration:04d}", "iteration": iteration,
                  "env_steps": env_steps, "samples_per_instance": n,
                  "temperature": float(args.temperature)},
        )
    finally:
        restore_rng_state(saved_rng)


def note_validation(state: Any, score: float, episodes: Sequence[Any], patience: int) -> bool:
    """Count a validation of the policy after ``state.iteration`` in the loop's counters (``state``: its
    :class:`coach_rl.loop.LoopState`): its env steps, the curve, the best so far (ties keep the earlier) and the
    early stop after ``patience`` validations without a new best (0: never). Whether it is the new best."""
    state.validation_env_steps += sum(len(t.steps) for t in episodes)
    state.validations.append([state.iteration, score])
    improved = state.best_score is None or score > state.best_score  # ties keep the earlier policy
    if improved:
        state.best_iteration, state.best_score = state.iteration, score
        state.validations_since_best = 0
    else:
        state.validations_since_best += 1
        if patience and state.validations_since_best >= patience:
            state.stopped_early = True
    return improved


def validation_record(state: Any, report: EvalReport, seconds: float) -> dict[str, Any]:
    """The metrics record of the validation :func:`note_validation` just counted."""
    m = report.overall
    return {
        "kind": "validation", "iteration": state.iteration, "env_steps": state.env_steps,
        "validation/success_rate": float(m.success_rate), "validation/ci_low": m.ci_low,
        "validation/ci_high": m.ci_high, "validation/episodes": m.episodes,
        "validation/env_steps": state.validation_env_steps, "validation/best_iteration": state.best_iteration,
        "validation/best_success_rate": state.best_score, "validation/since_best": state.validations_since_best,
        "validation/stopped_early": state.stopped_early, "time/validation": seconds}


def save_best(run_path: Path, model: Any, tokenizer: Any, state: Any, report: EvalReport) -> None:
    """Write the policy to ``best/`` as the best of ``state`` (a new folder swapped in: a kill leaves the old one or
    the new)."""
    tmp = run_path / f".tmp-best-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp / POLICY_DIR)
    tokenizer.save_pretrained(tmp / POLICY_DIR)
    info = {"iteration": state.best_iteration, "validation_success_rate": state.best_score,
            "env_steps": state.env_steps, "validation": json.loads(report.to_json())}
    (tmp / BEST_INFO_NAME).write_text(json.dumps(info, indent=1))
    replace_dir(tmp, run_path / BEST_DIR_NAME)


def load_best_policy(model: Any, run_path: Path) -> None:
    """Load the weights of ``best/`` into ``model`` (a RuntimeError when they do not fit it)."""
    from safetensors.torch import load_file

    weights: dict[str, torch.Tensor] = {}
    for shard in sorted((run_path / BEST_DIR_NAME / POLICY_DIR).glob("*.safetensors")):
        weights.update(load_file(str(shard)))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    tied = set(getattr(model, "all_tied_weights_keys", None) or
               getattr(model, "_tied_weights_keys", None) or ())
    if [k for k in missing if k not in tied] or unexpected:
        raise RuntimeError(f"the best policy in {run_path / BEST_DIR_NAME} does not fit the model: "
                           f"missing {list(missing)[:5]}, unexpected {list(unexpected)[:5]}")
    if getattr(model.config, "tie_word_embeddings", False) and hasattr(model, "tie_weights"):
        model.tie_weights()


def best_record(state: Any) -> dict[str, Any]:
    """The run's ``best`` metrics record: the policy kept, the validation curve, whether it stopped early."""
    return {"kind": "best", "best_iteration": state.best_iteration, "best_validation_success_rate": state.best_score,
            "final_iteration": state.iteration, "stopped_early": state.stopped_early,
            "validation/env_steps": state.validation_env_steps, "validation_seconds": state.validation_seconds,
            "validations": [list(v) for v in state.validations]}
