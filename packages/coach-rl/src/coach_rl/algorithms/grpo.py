"""Trajectory-level GRPO (the paper's SSSA baseline) as a registered algorithm: :class:`coach_rl.baselines.GRPOBaseline`."""

from __future__ import annotations

from typing import Any

from coach_rl.algorithms.base import register_algorithm
from coach_rl.baselines import GRPOBaseline

__all__ = ["build_grpo"]


@register_algorithm("grpo")
def build_grpo(config: Any, model: Any, tokenizer: Any, **parts: Any) -> GRPOBaseline:
    """GRPO with G = ``num_generations`` episodes per task instance and Android Coach's actor settings."""
    return GRPOBaseline.from_config(model, tokenizer, config.coach)
