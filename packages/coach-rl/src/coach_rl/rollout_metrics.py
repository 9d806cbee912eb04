"""The metrics of an iteration's rollout (success, steps, returns, timings, the sim oracle's view) for its record."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["TIMING_KEYS", "rollout_metrics", "rollout_oracle_metrics"]

TIMING_KEYS = ("env", "generation", "reward")
"""The collector's timings (``<key>_seconds`` of its stats) that go into ``time/<key>``."""


def rollout_metrics(batch: Any, seconds: float) -> dict[str, Any]:
    """``rollout/*``: the episodes' success, steps, returns, rewards and parse errors; ``time/*``: the rollout's and
    the collector's timings (``seconds``: the rollout's wall time)."""
    trajectories = list(batch.trajectories)
    n = len(trajectories)
    records = batch.records
    steps = len(records)
    wins = sum(t.success >= 1.0 for t in trajectories)
    returns0 = [r.return_t for r in records if r.step_index == 0]
    errors = sum(1 for r in records if r.parse_error)
    scored = [r.process_reward for r in records if not r.process_reward_missing]
    out: dict[str, Any] = {
        "rollout/episodes": n, "rollout/steps": steps, "rollout/successes": wins,
        "rollout/success_rate": wins / n if n else 0.0,
        "rollout/return_mean": float(np.mean(returns0)) if returns0 else 0.0,
        "rollout/outcome_mean": float(np.mean([r.outcome_reward for r in records if r.step_index == 0])) if n else 0.0,
        "rollout/process_reward_mean": float(np.mean(scored)) if scored else math.nan,
        "rollout/episode_length": steps / n if n else 0.0,
        "rollout/parse_error_rate": errors / steps if steps else 0.0,
        "time/rollout": seconds,
    }
    stats = batch.stats
    for key in TIMING_KEYS:
        out[f"time/{key}"] = float(getattr(stats, f"{key}_seconds"))
    chosen = int(stats.choice_replies)
    if chosen:  # the algorithm picked the executed reply among several samples (coach_execute_best_of)
        out["rollout/choice_replies"] = chosen
        out["rollout/chose_other_rate"] = stats.chose_other / steps if steps else 0.0
        out["time/choice"] = float(stats.choice_seconds)
    return out


def rollout_oracle_metrics(records: Sequence[Any], prm: bool = False) -> dict[str, float]:
    """``diag/rollout_expert_match``: share of the actions taken in this rollout that were the sim expert's. With a
    PRM, how its ``r_p`` on these steps (the policy's own states, not the demonstrations it was trained on) agrees with
    "this is the expert's action": ``diag/prm_expert_agreement`` (r_p > 0.5 on the same side), the majority class's
    share to read it against (``diag/prm_expert_majority``) and ``diag/prm_expert_auc``."""
    known = [r for r in records if r.expert_match is not None]
    if not known:
        return {}
    match = [float(r.expert_match) for r in known]
    out = {"diag/rollout_expert_match": sum(match) / len(match)}
    scored = [(float(r.process_reward), m >= 0.5) for r, m in zip(known, match) if not r.process_reward_missing]
    if prm and scored:
        from coach_rl.diagnostics import binary_auc

        share = sum(y for _, y in scored) / len(scored)
        out["diag/prm_expert_agreement"] = sum((v > 0.5) == y for v, y in scored) / len(scored)
        out["diag/prm_expert_majority"] = max(share, 1.0 - share)
        out["diag/prm_expert_auc"] = binary_auc([v for v, _ in scored], [y for _, y in scored])
    return out
