"""coach-rl: online RL for Android GUI agents on TRL (Android Coach, GRPO and PPO)."""

from coach_rl.advantages import acloo, grpo_advantages, rloo
from coach_rl.config import OUTCOME_VERIFIERS, PRM_BACKENDS, CoachConfig, CriticArguments, OnlineRLArguments
from coach_rl.losses import PPOLossOutput, clipped_value_loss, ppo_clip_loss
from coach_rl.returns import coach_returns, discounted_returns, gae

__version__ = "0.1.0"

__all__ = [
    "OUTCOME_VERIFIERS",
    "PRM_BACKENDS",
    "CoachConfig",
    "CriticArguments",
    "OnlineRLArguments",
    "PPOLossOutput",
    "acloo",
    "clipped_value_loss",
    "coach_returns",
    "discounted_returns",
    "gae",
    "grpo_advantages",
    "ppo_clip_loss",
    "rloo",
]
