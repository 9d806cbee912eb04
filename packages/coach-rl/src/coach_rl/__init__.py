"""coach-rl: online RL for Android GUI agents on TRL (Android Coach, GRPO and PPO)."""

from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.advantages import acloo, grpo_advantages, rloo
from coach_rl.algorithms import Algorithm, UpdateContext, algorithm_names, build_algorithm, register_algorithm
from coach_rl.baselines import GRPOBaseline, PPOBaseline, TrajectoryRecord, trajectory_records
from coach_rl.config import OUTCOME_VERIFIERS, PRM_BACKENDS, CoachConfig, CriticArguments, OnlineRLArguments
from coach_rl.configs import LoopArguments, RunConfig, load_config
from coach_rl.critic import Critic, CriticPretrainResult, CriticTrainer, critic_pretrain, critic_update
from coach_rl.demos import DemoRecord, DemoSet, DemoStats, collect_demos
from coach_rl.envs import make_envs
from coach_rl.evaluation import EvalReport, evaluate_policy
from coach_rl.loop import LoopState, TrainingLoop, TrainResult, train
from coach_rl.losses import PPOLossOutput, clipped_value_loss, ppo_clip_loss
from coach_rl.policy import (
    ACTION_FORMATS,
    HFPolicy,
    Policy,
    PolicyFormat,
    PolicyOutput,
    PolicyRequest,
    VLLMPolicy,
    json_safe_messages,
    stored_prompt,
)
from coach_rl.prompting import (
    INDEX_ACTION_SPACE,
    POLICY_MODES,
    UITARS_MOBILE_ACTION_SPACE,
    build_index_policy_messages,
    build_policy_messages,
    fit_policy_messages,
    format_index_action,
    index_target,
    parse_index_output,
    parse_policy_output,
    render_indexed_elements,
    render_messages_text,
    sanitize_policy_text,
    split_thought_action,
)
from coach_rl.records import StepRecord, episodes
from coach_rl.replay import ReplayBuffer, ReplayResumeReport, ReplayStep
from coach_rl.returns import coach_returns, discounted_returns, fill_missing_process_rewards, gae
from coach_rl.rewards import (
    SIM_ORACLE,
    RewardPipeline,
    RewardStats,
    SimOracle,
    build_outcome_verifier,
    build_process_reward_model,
    build_reward_pipeline,
    score_trajectory,
)
from coach_rl.rollout import (
    STEP_INFO_KEYS,
    TRAJECTORY_INFO_KEYS,
    EpisodeFailure,
    RolloutBatch,
    RolloutCollector,
    RolloutStats,
)
from coach_rl.sft import DemoAccuracy, SFTResult, demo_accuracy, sft_warmup
from coach_rl.trainer import COACH_LOSS_TYPES, CoachTrainer, CriticReward, completion_text

__version__ = "0.1.0"

__all__ = [
    "train",
    "load_config",
    "RunConfig",
    "LoopArguments",
    "TrainingLoop",
    "TrainResult",
    "LoopState",
    "evaluate_policy",
    "EvalReport",
    "make_envs",
    "StepRecord",
    "episodes",
    "Algorithm",
    "UpdateContext",
    "algorithm_names",
    "build_algorithm",
    "register_algorithm",
    "SIM_ORACLE",
    "RewardPipeline",
    "RewardStats",
    "SimOracle",
    "build_outcome_verifier",
    "build_process_reward_model",
    "build_reward_pipeline",
    "score_trajectory",
    "fill_missing_process_rewards",
    "ActorSample",
    "ActorUpdater",
    "GRPOBaseline",
    "PPOBaseline",
    "TrajectoryRecord",
    "trajectory_records",
    "DemoRecord",
    "DemoSet",
    "DemoStats",
    "collect_demos",
    "ACTION_FORMATS",
    "HFPolicy",
    "Policy",
    "PolicyFormat",
    "PolicyOutput",
    "PolicyRequest",
    "VLLMPolicy",
    "json_safe_messages",
    "stored_prompt",
    "STEP_INFO_KEYS",
    "TRAJECTORY_INFO_KEYS",
    "EpisodeFailure",
    "RolloutBatch",
    "RolloutCollector",
    "RolloutStats",
    "DemoAccuracy",
    "SFTResult",
    "demo_accuracy",
    "sft_warmup",
    "COACH_LOSS_TYPES",
    "CoachTrainer",
    "CriticReward",
    "completion_text",
    "INDEX_ACTION_SPACE",
    "build_index_policy_messages",
    "format_index_action",
    "index_target",
    "parse_index_output",
    "render_indexed_elements",
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
