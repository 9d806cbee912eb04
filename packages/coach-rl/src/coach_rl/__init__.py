"""coach-rl: online RL for Android GUI agents on TRL (Android Coach, GRPO and PPO).

The names below are imported on first use (PEP 562): ``import coach_rl`` costs nothing, and a process that
needs one module (a Ray device worker plays episodes with ``coach_rl.rollout``) does not import TRL, the
critic and the learners with it.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "coach_rl.actor": ("ActorSample", "ActorUpdater"),
    "coach_rl.advantages": (
        "acloo", "aride_advantages", "dgrpo_advantages", "grpo_advantages", "rloo", "trajectory_scores",
    ),
    "coach_rl.algorithms": (
        "Algorithm", "AlgorithmHooks", "UpdateContext", "algorithm_names", "build_algorithm", "register_algorithm",
    ),
    "coach_rl.algorithms.coach": ("COACH_LOSS_TYPES", "CoachTrainer", "CriticReward", "completion_text"),
    "coach_rl.algorithms.dgrpo": ("DGRPO", "DGRPOArguments"),
    "coach_rl.algorithms.grpo": ("GRPOBaseline",),
    "coach_rl.algorithms.ppo": ("PPOBaseline",),
    "coach_rl.config": ("OUTCOME_VERIFIERS", "PRM_BACKENDS", "CoachConfig", "CriticArguments", "OnlineRLArguments"),
    "coach_rl.configs": ("LoopArguments", "RunConfig", "load_config"),
    "coach_rl.critic": ("Critic", "CriticPretrainResult", "CriticTrainer", "critic_pretrain", "critic_update"),
    "coach_rl.curriculum": ("FailureCurriculum",),
    "coach_rl.demos": ("DemoRecord", "DemoSet", "DemoStats", "collect_demos"),
    "coach_rl.envs": ("make_envs",),
    "coach_rl.evaluation": (
        "BestOfNReport", "EvalReport", "best_of_n_verifier", "evaluate_best_of_n", "evaluate_policy",
    ),
    "coach_rl.irr": ("IRRResult", "iterative_reasoning_refinement", "load_irr_dataset"),
    "coach_rl.loop": ("LoopState", "TrainingLoop", "TrainResult", "train"),
    "coach_rl.losses": (
        "DGRPOLossOutput", "DistRLLossOutput", "PPOLossOutput", "clipped_value_loss", "dgrpo_loss",
        "distrl_actor_loss", "kl_to_reference", "ppo_clip_loss",
    ),
    "coach_rl.policy": (
        "ACTION_FORMATS", "HFPolicy", "Policy", "PolicyFormat", "PolicyOutput", "PolicyRequest", "VLLMPolicy",
        "json_safe_messages", "stored_prompt",
    ),
    "coach_rl.positive_replay": ("PositiveReplay", "ReplayTrajectory", "prune_negatives"),
    "coach_rl.priorities": (
        "PrioritizedTrajectorySampler", "TrajectoryStats", "dper_priorities", "sampling_probabilities",
    ),
    "coach_rl.prompting": (
        "INDEX_ACTION_SPACE", "POLICY_MODES", "UITARS_MOBILE_ACTION_SPACE", "build_index_policy_messages",
        "build_policy_messages", "fit_policy_messages", "format_index_action", "index_target", "parse_index_output",
        "parse_policy_output", "render_indexed_elements", "render_messages_text", "sanitize_policy_text",
        "split_thought_action",
    ),
    "coach_rl.records": ("PolicyTurn", "StepRecord", "TrajectoryRecord", "episodes", "trajectory_records"),
    "coach_rl.replay": ("ReplayBuffer", "ReplayResumeReport", "ReplayStep"),
    "coach_rl.returns": (
        "coach_returns", "discounted_returns", "fill_missing_process_rewards", "gae", "retrace_targets",
        "spa_rewards",
    ),
    "coach_rl.rewards": (
        "SIM_ORACLE", "RewardPipeline", "RewardStats", "SimOracle", "build_outcome_verifier",
        "build_process_reward_model", "build_reward_pipeline", "score_trajectory",
    ),
    "coach_rl.rollout": (
        "STEP_INFO_KEYS", "TRAJECTORY_INFO_KEYS", "EpisodeFailure", "RolloutBatch", "RolloutCollector",
        "RolloutStats",
    ),
    "coach_rl.sft": ("DemoAccuracy", "SFTResult", "demo_accuracy", "sft_warmup"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

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
    "PolicyTurn",
    "episodes",
    "Algorithm",
    "AlgorithmHooks",
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
    "BestOfNReport",
    "DGRPO",
    "DGRPOArguments",
    "DGRPOLossOutput",
    "FailureCurriculum",
    "IRRResult",
    "PositiveReplay",
    "ReplayTrajectory",
    "best_of_n_verifier",
    "dgrpo_advantages",
    "dgrpo_loss",
    "evaluate_best_of_n",
    "iterative_reasoning_refinement",
    "kl_to_reference",
    "load_irr_dataset",
    "prune_negatives",
    "spa_rewards",
    "trajectory_scores",
    "DistRLLossOutput",
    "PrioritizedTrajectorySampler",
    "TrajectoryStats",
    "aride_advantages",
    "distrl_actor_loss",
    "dper_priorities",
    "retrace_targets",
    "sampling_probabilities",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use; a submodule (``coach_rl.loop``) likewise."""
    module = _MODULE_OF.get(name)
    if module is None:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
