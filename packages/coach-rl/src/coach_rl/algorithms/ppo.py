"""PPO with a state-value critic and GAE (the paper's SSSA baseline) as a registered algorithm."""

from __future__ import annotations

import math
from typing import Any

from coach_rl.algorithms.base import register_algorithm
from coach_rl.algorithms.coach import estimated_steps_per_iteration
from coach_rl.baselines import PPOBaseline

__all__ = ["build_ppo"]


@register_algorithm("ppo")
def build_ppo(config: Any, model: Any, tokenizer: Any, **parts: Any) -> PPOBaseline:
    """PPO whose V schedule is planned for the run's iterations; actor settings as Android Coach's."""
    args = config.coach
    value_steps = int(args.total_iterations) * math.ceil(estimated_steps_per_iteration(args) / args.critic_batch_size)
    return PPOBaseline.from_config(model, tokenizer, args, total_value_steps=max(1, value_steps))
