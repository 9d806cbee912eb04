"""coach-rl: online RL for Android GUI agents on TRL (Android Coach, GRPO and PPO)."""

from coach_rl.advantages import acloo, grpo_advantages, rloo
from coach_rl.config import OUTCOME_VERIFIERS, PRM_BACKENDS, CoachConfig, CriticArguments, OnlineRLArguments
from coach_rl.critic import Critic, CriticPretrainResult, CriticTrainer, critic_pretrain, critic_update
from coach_rl.losses import PPOLossOutput, clipped_value_loss, ppo_clip_loss
from coach_rl.prompting import (
    POLICY_MODES,
    UITARS_MOBILE_ACTION_SPACE,
    build_policy_messages,
    fit_policy_messages,
    parse_policy_output,
    render_messages_text,
    sanitize_policy_text,
    split_thought_action,
)
from coach_rl.replay import ReplayBuffer, ReplayResumeReport, ReplayStep
from coach_rl.returns import coach_returns, discounted_returns, gae

__version__ = "0.1.0"

__all__ = [
    "POLICY_MODES",
    "UITARS_MOBILE_ACTION_SPACE",
    "Critic",
    "CriticPretrainResult",
    "CriticTrainer",
    "ReplayBuffer",
    "ReplayResumeReport",
    "ReplayStep",
    "build_policy_messages",
    "critic_pretrain",
    "critic_update",
    "fit_policy_messages",
    "parse_policy_output",
    "render_messages_text",
    "sanitize_policy_text",
    "split_thought_action",
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
