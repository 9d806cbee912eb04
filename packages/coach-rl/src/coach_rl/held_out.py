"""A run's evaluations on its held-out instances (greedy, and sampled): files in the run folder and a metrics record."""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from coach_rl.components import run_env_kwargs
from coach_rl.configs import RunConfig
from coach_rl.evaluation import EvalReport

__all__ = ["eval_seeds", "evaluate_held_out", "evaluation_due", "steps_per_success"]


def steps_per_success(episodes: Sequence[Any]) -> float:
    """Mean number of actions in the successful episodes (NaN when none succeeded)."""
    lengths = [len(t.steps) for t in episodes if float(t.success) >= 1.0]
    return sum(lengths) / len(lengths) if lengths else math.nan


def eval_seeds(config: RunConfig) -> list[int]:
    """Seeds of the held-out evaluation instances (the same before and after training)."""
    start = config.loop.eval_seed_offset
    return list(range(start, start + config.loop.eval_instances_per_task))


def evaluate_held_out(policy: Any, config: RunConfig, tasks: Sequence[str], label: str, run_path: Path, *,
                      iteration: int, env_steps: int, policy_iteration: int | None,
                      log: Callable[[dict[str, Any]], None], echo: Callable[[str], None]) -> tuple[EvalReport, list[Any]]:
    """Greedy evaluation of ``policy`` on the held-out instances of ``tasks`` after ``iteration``, and with
    ``eval_samples_per_instance`` a sampled one: ``eval_<label>.json`` (``eval_<label>_sampled.json``), the episodes in
    ``episodes/eval_<label>/``, a metrics record to ``log``; the greedy report and episodes.

    ``policy_iteration``: the iteration whose policy is evaluated when it is not the last (the best by validation).
    """
    from coach_rl.evaluation import evaluate_policy

    t0 = time.perf_counter()
    args = config.coach
    env_kwargs = run_env_kwargs(config)
    env_kwargs.pop("latency", None)  # evaluation is not what the latency study times
    report, episodes = evaluate_policy(
        policy, tasks, eval_seeds(config), env_id=args.env_id, env_kwargs=env_kwargs,
        num_envs=max(1, int(args.num_envs)), greedy=True,
        meta={"label": label, "iteration": iteration, "env_steps": env_steps},
    )
    report.meta["steps_per_success"] = steps_per_success(episodes)
    if policy_iteration is not None:
        report.meta["policy_iteration"] = policy_iteration
    _save_episodes(run_path, label, episodes)
    (run_path / f"eval_{label}.json").write_text(report.to_json())
    m = report.overall
    entry: dict[str, Any] = {
        "kind": "eval", "label": label, "at_iteration": iteration, "env_steps": env_steps,
        "success_rate": m.success_rate, "ci_low": m.ci_low, "ci_high": m.ci_high, "episodes": m.episodes,
        "steps_per_success": steps_per_success(episodes)}
    if policy_iteration is not None:  # validation_every: the best policy, not the last
        entry["policy_iteration"] = policy_iteration
    message = (f"[coach-rl] eval {label}: greedy success {100 * m.success_rate:.1f}% "
               f"[{100 * m.ci_low:.1f}, {100 * m.ci_high:.1f}] over {m.episodes} episodes")
    n = int(config.loop.eval_samples_per_instance)
    if n:
        sampled, sampled_episodes = _evaluate_sampled(policy, config, tasks, label, run_path, env_kwargs, n,
                                                      iteration=iteration, env_steps=env_steps,
                                                      policy_iteration=policy_iteration)
        s = sampled.overall
        entry.update({"sampled_success_rate": s.success_rate, "sampled_ci_low": s.ci_low,
                      "sampled_ci_high": s.ci_high, "sampled_episodes": s.episodes,
                      "sampled_steps_per_success": steps_per_success(sampled_episodes)})
        message += (f"; sampled (T={args.temperature:g}, {n} per instance) {100 * s.success_rate:.1f}% "
                    f"[{100 * s.ci_low:.1f}, {100 * s.ci_high:.1f}] over {s.episodes}")
    entry["seconds"] = time.perf_counter() - t0
    log(entry)
    echo(message)
    return report, episodes


def _save_episodes(run_path: Path, label: str, episodes: Sequence[Any]) -> None:
    """Keep the greedy evaluation's episodes in ``episodes/eval_<label>/`` (report.md links android-gym's page)."""
    folder = run_path / "episodes" / f"eval_{label}"
    if folder.exists():
        shutil.rmtree(folder)
    for i, trajectory in enumerate(episodes):
        trajectory.save(folder / f"{i:04d}-{trajectory.task}-{trajectory.seed}.json.gz")


def _evaluate_sampled(policy: Any, config: RunConfig, tasks: Sequence[str], label: str, run_path: Path,
                      env_kwargs: dict[str, Any], n: int, *, iteration: int, env_steps: int,
                      policy_iteration: int | None) -> tuple[EvalReport, list[Any]]:
    """Every held-out instance ``n`` times with the policy sampling (``eval_<label>_sampled.json``).

    Sampling draws from a generator seeded by the run's seed and the label, inside a forked RNG state, so the
    evaluation is repeatable and leaves the training's random stream exactly as it was (exact resume holds).
    """
    from coach_rl.evaluation import evaluate_policy

    args = config.coach
    seeds = [seed for seed in eval_seeds(config) for _ in range(n)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(args.seed) * 1_000_003 + sum(label.encode()))
        report, episodes = evaluate_policy(
            policy, tasks, seeds, env_id=args.env_id, env_kwargs=env_kwargs,
            num_envs=max(1, int(args.num_envs)), greedy=False, with_reference=False,
            meta={"label": label, "iteration": iteration, "env_steps": env_steps,
                  "samples_per_instance": n, "temperature": float(args.temperature)},
        )
    report.meta["steps_per_success"] = steps_per_success(episodes)
    if policy_iteration is not None:
        report.meta["policy_iteration"] = policy_iteration
    (run_path / f"eval_{label}_sampled.json").write_text(report.to_json())
    return report, episodes


def evaluation_due(run_path: Path, points: Sequence[int] | None, env_steps: int) -> bool:
    """Whether an ``eval_at_env_steps`` point (``points``) has been reached that no ``eval_steps<N>.json`` covers yet
    (files, not counters: a run resumed after a kill between its checkpoint and that evaluation still makes it)."""
    reached = [p for p in points or () if p <= env_steps]
    if not reached:
        return False
    covered = max((int(f.stem[len("eval_steps"):]) for f in run_path.glob("eval_steps*.json")
                   if f.stem[len("eval_steps"):].isdigit()), default=-1)
    return max(reached) > covered
