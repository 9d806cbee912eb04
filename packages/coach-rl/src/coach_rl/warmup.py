"""A fresh run's start before RL: the expert's demonstrations, SFT, critic pre-training, or another run's (init_from)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coach_rl.checkpoints import POLICY_DIR
from coach_rl.components import run_policy_format
from coach_rl.configs import RunConfig
from coach_rl.evaluation import EvalReport

__all__ = ["collect_run_demos", "critic_examples", "init_from_policy", "pretrain_critic", "reuse_eval_before",
           "rollout_state_examples", "sft_warm_up"]

Examples = list[tuple[str, str, int]]
"""Critic pre-training triples ``(state, reply, label)``."""


def collect_run_demos(config: RunConfig, tasks: Sequence[str]) -> Any:
    """The sim expert's demonstrations of ``tasks`` for the run's SFT warm-up (and a tiny policy's tokenizer)."""
    from coach_rl.demos import collect_demos

    n = config.loop.sft_instances_per_task or 2  # a tiny tokenizer needs some text even without SFT
    kwargs = dict(config.coach.env_kwargs or {})
    kwargs.pop("latency", None)  # demonstrations are not timed
    kwargs.pop("faults", None)
    return collect_demos(run_policy_format(config), list(tasks),
                         seeds=range(config.loop.sft_seed_offset, config.loop.sft_seed_offset + n),
                         env_kwargs=kwargs)


def sft_warm_up(model: Any, tokenizer: Any, policy: Any, demos: Any, config: RunConfig,
                echo: Callable[[str], None]) -> dict[str, Any]:
    """SFT of ``model`` on the demonstrations as ``policy`` prompts them (``sft_*`` settings); the ``sft_*`` stats."""
    from coach_rl.sft import sft_warmup

    loop, args = config.loop, config.coach
    t0 = time.perf_counter()
    result = sft_warmup(
        model, tokenizer,
        demos.examples(policy, answer_noise=loop.sft_answer_noise, seed=int(args.seed)),
        max_steps=loop.sft_max_steps,
        learning_rate=loop.sft_learning_rate, per_device_train_batch_size=loop.sft_batch_size,
        seed=int(args.seed), logging_steps=max(1, loop.sft_max_steps // 10), use_cpu=args.use_cpu,
        # the run's mixed precision: the trainers built after it in this process share accelerate's state, which
        # refuses a second setting ("AcceleratorState has already been initialized"), as on a GPU with TRL's bf16
        bf16=bool(args.bf16), fp16=bool(args.fp16),
    )
    stats = {"sft_steps": result.steps, "sft_loss": result.train_loss,
             "sft_final_loss": result.losses[-1] if result.losses else math.nan,
             "sft_seconds": time.perf_counter() - t0}
    noise = f" ({loop.sft_answer_noise:.0%} of the answers replaced by noise)" if loop.sft_answer_noise else ""
    echo(f"[coach-rl] SFT warm-up: {result.steps} steps on {result.examples} examples{noise}, loss "
         f"{result.train_loss:.3f} ({stats['sft_seconds']:.1f} s)")
    return stats


def critic_examples(config: RunConfig, policy: Any, demos: Any, prm: Any = None) -> Examples:
    """Critic pre-training triples (:mod:`coach_rl.critic_data`): a saved PRM dataset, or the demonstrated
    states with candidates labelled by ``critic_pretrain_labels`` (expert match or ``prm``, the run's PRM)."""
    from coach_rl.critic_data import critic_pretrain_examples, prm_dataset_examples

    args = config.coach
    if args.critic_pretrain_dataset:
        return prm_dataset_examples(args.critic_pretrain_dataset)
    return critic_pretrain_examples(
        policy, demos, samples=args.critic_pretrain_samples, contrast=args.critic_pretrain_contrast,
        seed=int(args.seed), labels=args.critic_pretrain_labels, prm=prm,
        screen_negatives=args.critic_pretrain_screen_negatives)


def rollout_state_examples(config: RunConfig, tasks: Sequence[str], policy: Any, collector: Any, rewards: Any,
                           episodes_per_task: int) -> Examples:
    """``(state, reply, label)`` at the states the warmed-up policy reaches itself (``critic_pretrain_rollouts``).

    The policy plays each task's demonstrated instances (sampling, ``episodes_per_task`` episodes a task, with the
    run's ``collector`` and ``rewards``); at every step where the sim's expert can say what it would do, its answer
    is a positive and the executed reply plus ``critic_pretrain_samples`` more sampled replies are labelled by the
    expert match (the rule the PRM dataset is built with). Needs the simulated phone's expert.
    """
    from android_gym import ActionFormatError
    from coach_rl.diagnostics import StateOracle
    from coach_rl.policy import PolicyRequest

    if collector is None or not hasattr(collector, "collect") or not tasks:
        raise ValueError("critic_pretrain_rollouts plays the warmed-up policy: it needs the local collector")
    loop = config.loop
    instances = max(1, int(loop.sft_instances_per_task or 1))
    seeds, options = [], []
    for i in range(episodes_per_task * len(tasks)):
        seeds.append(loop.sft_seed_offset + (i // len(tasks)) % instances)
        options.append({"task": tasks[i % len(tasks)]})
    was = rewards.oracle_diagnostics
    rewards.oracle_diagnostics = True
    try:
        batch = collector.collect(len(seeds), seeds=seeds, task_options=options, greedy=False)
    finally:
        rewards.oracle_diagnostics = was
    visited = [r for r in batch.records if r.oracle]
    if not visited:
        raise ValueError("critic_pretrain_rollouts needs the simulated phone's expert in every state; the "
                         f"{len(batch.records)} steps played had none (env {config.coach.env_id})")
    fmt = run_policy_format(config)
    samples = int(config.coach.critic_pretrain_samples)
    extra: list[list[str]] = [[] for _ in visited]
    if samples and not getattr(policy, "is_multimodal", False):
        generated = policy._generate([r.prompt for r in visited for _ in range(samples)],
                                     [r.prompt_text for r in visited for _ in range(samples)], False)
        extra = [[text for text, _, _ in generated[i * samples:(i + 1) * samples]] for i in range(len(visited))]
    examples: Examples = []
    for record, more in zip(visited, extra):
        oracle = StateOracle.from_json(record.oracle)
        request = PolicyRequest(instruction="", elements=oracle.elements, screen_size=oracle.screen_size)
        seen = set()
        try:
            answer = fmt.answer_for(oracle.expert, request, type_presses_enter=True)
            examples.append((record.prompt_text, answer, 1))
            seen.add(answer.strip())
        except ActionFormatError:
            pass  # the format cannot write the expert's action here: the replies are still labelled
        for text in [record.response, *more]:
            if text.strip() not in seen:
                seen.add(text.strip())
                examples.append((record.prompt_text, text, int(oracle.label_reply(text, fmt))))
    return examples


def pretrain_critic(critic: Any, examples: Examples, config: RunConfig, echo: Callable[[str], None], *,
                    started: float) -> dict[str, Any]:
    """Pre-train ``critic`` on ``examples`` (``critic_pretrain_*`` settings); the ``critic_pretrain_*`` stats, whose
    seconds count from ``started`` (a ``time.perf_counter()``, before the examples were made)."""
    from coach_rl.critic import critic_pretrain

    args = config.coach
    lr = args.critic_pretrain_learning_rate or args.critic_learning_rate
    result = critic_pretrain(critic, examples, learning_rate=lr,
                             epochs=max(1, math.ceil(args.critic_pretrain_steps * args.critic_batch_size
                                                     / max(1, len(examples)))),
                             batch_size=args.critic_batch_size, max_steps=args.critic_pretrain_steps,
                             warmup_ratio=args.critic_warmup_ratio, max_grad_norm=args.critic_max_grad_norm,
                             seed=int(args.seed), balanced=args.critic_pretrain_balanced,
                             paired=args.critic_pretrain_paired)
    positives = sum(label for _, _, label in examples)
    stats = {"critic_pretrain_examples": len(examples), "critic_pretrain_positives": positives,
             "critic_pretrain_steps": result.steps, "critic_pretrain_accuracy": result.accuracy,
             "critic_pretrain_final_loss": result.losses[-1] if result.losses else math.nan,
             "critic_pretrain_seconds": time.perf_counter() - started}
    echo(f"[coach-rl] critic pre-training: {result.steps} steps on {len(examples)} labelled actions "
         f"({positives} positive), accuracy {result.accuracy:.2f} "
         f"({stats['critic_pretrain_seconds']:.1f} s)")
    return stats


# -- a warm start from another run (init_from) ------------------------------------------------------------


def init_from_policy(checkpoint: Path) -> Path:
    """The policy folder of another run's complete checkpoint (``init_from``); FileNotFoundError when there is none."""
    if not (checkpoint / "MANIFEST.json").is_file():
        raise FileNotFoundError(f"init_from={checkpoint} is not a complete coach-rl checkpoint (no MANIFEST.json)")
    policy_dir = next((d for d in (checkpoint / POLICY_DIR, checkpoint / "actor" / "policy") if d.is_dir()), None)
    if policy_dir is None:
        raise FileNotFoundError(f"init_from={checkpoint} holds no policy (actor/policy/ or policy/)")
    return policy_dir


def reuse_eval_before(checkpoint: Path, run_path: Path, config: RunConfig, eval_tasks: list[str],
                      eval_seeds: list[int]) -> tuple[EvalReport, dict[str, Any]] | None:
    """The evaluation before training that ``checkpoint`` (``init_from``) saved, when it evaluated the same held-out
    instances (and, with ``eval_samples_per_instance``, sampled them the same way): the same policy's evaluation, put
    in ``run_path`` with its metrics record (``eval_tasks`` and ``eval_seeds`` are lists, compared with the saved
    ones). None: this run evaluates its starting policy itself."""
    saved = checkpoint / "eval_before.json"
    if not saved.is_file():
        return None
    report = EvalReport.from_dict(json.loads(saved.read_text()))
    sampled = _saved_sampled_before(checkpoint, config, eval_tasks, eval_seeds)
    if not (report.meta.get("tasks") == eval_tasks and report.meta.get("seeds") == eval_seeds
            and (sampled is not None or not config.loop.eval_samples_per_instance)):
        return None
    (run_path / "eval_before.json").write_text(report.to_json())
    entry: dict[str, Any] = {
        "kind": "eval", "label": "before", "at_iteration": 0, "env_steps": 0,
        "success_rate": report.overall.success_rate, "ci_low": report.overall.ci_low,
        "ci_high": report.overall.ci_high, "episodes": report.overall.episodes,
        "steps_per_success": report.meta.get("steps_per_success", math.nan), "from": str(checkpoint)}
    if sampled is not None:
        (run_path / "eval_before_sampled.json").write_text(sampled.to_json())
        s = sampled.overall
        entry.update({"sampled_success_rate": s.success_rate, "sampled_ci_low": s.ci_low,
                      "sampled_ci_high": s.ci_high, "sampled_episodes": s.episodes,
                      "sampled_steps_per_success": sampled.meta.get("steps_per_success", math.nan)})
    return report, entry


def _saved_sampled_before(checkpoint: Path, config: RunConfig, eval_tasks: list[str],
                          eval_seeds: list[int]) -> EvalReport | None:
    """The sampled evaluation before training saved with ``checkpoint``, when it fits this run's settings."""
    path = checkpoint / "eval_before_sampled.json"
    n = int(config.loop.eval_samples_per_instance)
    if not n or not path.is_file():
        return None
    report = EvalReport.from_dict(json.loads(path.read_text()))
    meta = report.meta
    fits = (meta.get("tasks") == eval_tasks and meta.get("samples_per_instance") == n
            and meta.get("temperature") == float(config.coach.temperature)
            and sorted(set(meta.get("seeds", []))) == eval_seeds)
    return report if fits else None
