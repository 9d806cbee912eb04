"""Configuration pieces shared by the algorithms' configs, and :class:`TrainerConfig`, the base every one extends.

``TrainerConfig`` is a TRL ``GRPOConfig`` (the actor's optimiser and sampling, with Android Coach's Table 5
defaults) plus :class:`OnlineRLArguments` (environment, observation, rewards and returns, replay, outer loop) and the
distributed collection's settings. Each algorithm module of :mod:`coach_rl.algorithms` declares its own config on
top of it with the mixins it reads: :class:`CriticArguments` (a critic's or value network's optimisation: Coach,
Coach K = 1, PPO, DistRL), :class:`QCriticArguments` (Android Coach's Q critic: Coach, Coach K = 1), and its own
(``CoachArguments``, ``DGRPOArguments``, ``DistRLArguments``). :mod:`coach_rl.config` re-exports them with Android
Coach's ``CoachConfig`` (which lives with its algorithm in :mod:`coach_rl.algorithms.coach`). Every class works with
``transformers.HfArgumentParser``, so each field is also a ``--flag`` on the command line.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

from transformers.trainer_utils import SchedulerType
from trl import GRPOConfig

from coach_rl.distributed.arguments import DistributedArguments

__all__ = ["OUTCOME_VERIFIERS", "PRM_BACKENDS", "CriticArguments", "OnlineRLArguments", "QCriticArguments",
           "ReplayActorArguments", "TrainerConfig"]

#: Where a model-based judge (PRM or LLM outcome verifier) runs.
PRM_BACKENDS: tuple[str, ...] = ("transformers", "vllm", "openai")
#: How the outcome reward r_o is decided.
OUTCOME_VERIFIERS: tuple[str, ...] = ("rule", "llm_judge", "last_screen", "vote", "probing")

_TABLE5 = "Android Coach Table 5"


def _finite(value: Any, name: str, *, minimum: float | None = None, strict: bool = False) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite number (optionally ``>= minimum`` or ``> minimum``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value!r}")


def _positive_int(value: Any, name: str, *, allow_none: bool = False, minimum: int = 1) -> None:
    """Raise ``ValueError`` unless ``value`` is an int ``>= minimum`` (or None when allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"{name} must be an integer >= {minimum}{' or None' if allow_none else ''}, got {value!r}"
        )


@dataclass
class OnlineRLArguments:
    r"""Settings every online RL trainer here shares: environment, observation, rewards/returns, replay, outer loop.

    A mixin (no ``__post_init__`` of its own): a config class that inherits it calls
    :meth:`validate_online_rl_arguments` from its ``__post_init__``.
    """

    # Parameters that control the environment
    env_id: str = field(
        default="android_gym:AndroidSim-v0",
        metadata={
            "help": "Gymnasium id of the environment, e.g. `android_gym:AndroidSim-v0` (embedded simulated phone), "
            "`android_gym:AndroidWorld-v0` or `android_gym:AndroidLab-v0`."
        },
    )
    env_kwargs: dict | str | None = field(
        default=None,
        metadata={"help": "Extra keyword arguments for `gymnasium.make`, as a dict or a JSON object string."},
    )
    tasks: list[str] | None = field(
        default=None,
        metadata={
            "help": "Task names to train on. If `None`, every task of the environment's suite is used."
        },
    )
    rollout_batch_size: int = field(
        default=8,
        metadata={
            "help": f"Tasks (trajectories) rolled out per iteration ({_TABLE5}: Train Batch Size 8, which verl counts "
            "in prompts, i.e. task instructions)."
        },
    )
    num_envs: int | None = field(
        default=None,
        metadata={
            "help": "Environments stepped in parallel. If `None`, equal to `rollout_batch_size`, as in the paper "
            "(Appendix A.1: as many emulators as the batch size)."
        },
    )
    max_turns: int = field(
        default=25,
        metadata={"help": f"Hard cap on agent steps per episode ({_TABLE5}: Max Turns 25)."},
    )
    max_episode_steps: int | None = field(
        default=None,
        metadata={
            "help": "Per-episode step limit. If `None`, each task's own budget (AndroidWorld: 10 x complexity) "
            "capped at `max_turns`. Must not exceed `max_turns`."
        },
    )

    # Parameters that control the observation given to the policy
    max_pixels: int = field(
        default=1270180,
        metadata={
            "help": f"Largest screenshot area in pixels after smart-resizing ({_TABLE5}: Max Pixels 1270180). The "
            "processor, the generation backend and the action parser must share it to map coordinates back."
        },
    )
    min_pixels: int = field(
        default=256,
        metadata={
            "help": f"Smallest screenshot area in pixels after smart-resizing ({_TABLE5}: Min Pixels 256)."
        },
    )
    max_prompt_length: int | None = field(
        default=32768,
        metadata={
            "help": f"Longest prompt in tokens ({_TABLE5}: Max Prompt Length 32768); longer prompts drop their "
            "oldest history steps first. `None` disables the limit."
        },
    )

    # Parameters that control the rewards
    use_prm: bool = field(
        default=False,
        metadata={
            "help": "Score every step with the process reward model (PRM) and use it as r_p. The paper's main runs do "
            "(+2.4 SR on AndroidLab, Section 4.3); off by default only because it needs a trained judge "
            "(`prm_model`). Without it r_p = 0 and R_t = w_o * r_o. Read by the algorithms with step rewards: Coach "
            "and Coach K = 1 (the critic's R_t), PPO (each step's reward), DistRL (weighted by "
            "`distrl_process_reward_weight`); GRPO and DGRPO score whole trajectories by their outcome and ignore it."
        },
    )
    prm_model: str | None = field(
        default=None,
        metadata={
            "help": "PRM checkpoint path (backends `transformers`/`vllm`) or model name at the server (`openai`); "
            "`sim-oracle`: on the simulated phone, r_p = 1 when the action matches the task expert's next action in "
            "that state (the PRM dataset's matching rule), the upper bound for learned PRMs. Required with `use_prm`."
        },
    )
    prm_backend: str = field(
        default="transformers",
        metadata={"help": f"Where the PRM runs: one of {', '.join(PRM_BACKENDS)}."},
    )
    prm_base_url: str | None = field(
        default=None,
        metadata={
            "help": "Base URL of the OpenAI-compatible server that serves the PRM (backend `openai` only)."
        },
    )
    prm_max_new_tokens: int = field(
        default=512,
        metadata={
            "help": "Longest PRM judgment in tokens. A judge in the paper's format thinks first (`<think>...</think> "
            "judgment: True`), hence 512; a compact PRM trained with coach-reward answers in a few tokens (the main "
            "job uses 20), which keeps scoring fast on CPU."
        },
    )
    outcome_verifier: str = field(
        default="rule",
        metadata={
            "help": "How r_o is decided: `rule` (the task's own check; the paper's choice on AndroidWorld), "
            "`llm_judge` (a judge over the compressed-XML trajectory; the paper's choice on AndroidLab), "
            "`last_screen` (a judge of the last screen and actions, DistRL-style), `vote` (majority of rule, "
            "llm_judge and last_screen) or `probing` (ProRe: a judge that probes the device after the episode)."
        },
    )
    verifier_model: str | None = field(
        default=None,
        metadata={
            "help": "Judge model for `llm_judge`/`probing` (path or server model name). Required for those."
        },
    )
    verifier_backend: str = field(
        default="openai",
        metadata={
            "help": f"Where the judge of `llm_judge`/`probing` runs: one of {', '.join(PRM_BACKENDS)}."
        },
    )
    verifier_base_url: str | None = field(
        default=None,
        metadata={"help": "Base URL of the OpenAI-compatible server of the judge (backend `openai` only)."},
    )

    reward_retries: int = field(
        default=2,
        metadata={
            "help": "Extra attempts for a PRM call that fails or answers without a readable verdict, and for a "
            "failing outcome verifier. After them a step's r_p is recorded as missing (NaN; the return uses the "
            "episode's mean scored r_p) and a failed verdict falls back to the task's recorded check; both are "
            "counted in metrics.jsonl (rewards/prm_missing, rewards/verifier_failures)."
        },
    )

    # Parameters that control the return targets
    w_p: float = field(
        default=0.2,
        metadata={"help": f"Weight of the process rewards in R_t ({_TABLE5}: Process Reward Weight 0.2): Coach's "
                  "and PPO's step rewards (see `use_prm`)."},
    )
    w_o: float = field(
        default=1.0,
        metadata={"help": f"Weight of the outcome reward in R_t ({_TABLE5}: Outcome Reward Weight 1)."},
    )
    gamma: float = field(
        default=0.95,
        metadata={
            "help": f"Discount factor in R_t = w_p * sum_(tau=t..T) gamma^(T-tau) r_p^tau + w_o * r_o ({_TABLE5}: "
            "Discount factor 0.95)."
        },
    )

    # Parameters that control the replay buffer
    replay_dir: str | None = field(
        default=None,
        metadata={"help": "Directory of the on-disk replay buffer. If `None`, `<output_dir>/replay`."},
    )
    replay_size: int = field(
        default=2000,
        metadata={
            "help": "Most steps (state, action, return) kept in the replay buffer; the oldest go first. One iteration "
            "adds at most rollout_batch_size * max_turns steps (200 with the defaults)."
        },
    )

    # Parameters that control the outer training loop
    total_iterations: int = field(
        default=100,
        metadata={"help": "Iterations of the outer loop (rollout, returns, critic update, actor update)."},
    )
    checkpoint_every: int = field(
        default=10,
        metadata={
            "help": "Save actor, critic and replay every this many iterations. `0` saves only at the end."
        },
    )
    nonfinite_patience: int = field(
        default=3,
        metadata={
            "help": "NaN/inf guard (coach_rl.nonfinite). A sample whose logits are non-finite is marked failed, a "
            "non-finite critic/PRM score or advantage leaves its sample out, and an update step with a non-finite "
            "loss or gradient is skipped; each is counted in `nonfinite/<phase>` metrics and the run goes on. After "
            "this many such events in a row in one phase (skipped steps, generate calls where every sample failed) "
            "the run stops with an error naming the phase, the iteration and the state; weights with NaN/inf are "
            "never checkpointed. `0` never stops (the events are still skipped and counted)."
        },
    )

    def validate_online_rl_arguments(self) -> None:
        """Check the shared fields and normalise ``env_kwargs``; raises ``ValueError`` naming the bad field."""
        if not isinstance(self.env_id, str) or not self.env_id.strip():
            raise ValueError(f"env_id must be a non-empty Gymnasium id, got {self.env_id!r}")
        if isinstance(self.env_kwargs, str):
            try:
                parsed = json.loads(self.env_kwargs)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"env_kwargs must be a JSON object string, got {self.env_kwargs!r}: {err}"
                ) from err
            self.env_kwargs = parsed
        if self.env_kwargs is not None and not isinstance(self.env_kwargs, dict):
            raise ValueError(
                f"env_kwargs must be a dict (or JSON object), got {type(self.env_kwargs).__name__}"
            )
        if self.tasks is not None and (
            isinstance(self.tasks, str) or not all(isinstance(t, str) and t for t in self.tasks)
        ):
            raise ValueError(f"tasks must be a list of non-empty task names or None, got {self.tasks!r}")
        _positive_int(self.rollout_batch_size, "rollout_batch_size")
        _positive_int(self.num_envs, "num_envs", allow_none=True)
        _positive_int(self.max_turns, "max_turns")
        _positive_int(self.max_episode_steps, "max_episode_steps", allow_none=True)
        if self.max_episode_steps is not None and self.max_episode_steps > self.max_turns:
            raise ValueError(
                f"max_episode_steps ({self.max_episode_steps}) must not exceed max_turns ({self.max_turns})"
            )
        _positive_int(self.min_pixels, "min_pixels")
        _positive_int(self.max_pixels, "max_pixels")
        if self.min_pixels > self.max_pixels:
            raise ValueError(f"min_pixels ({self.min_pixels}) must not exceed max_pixels ({self.max_pixels})")
        _positive_int(self.max_prompt_length, "max_prompt_length", allow_none=True)

        for name in ("prm_backend", "verifier_backend"):
            if getattr(self, name) not in PRM_BACKENDS:
                raise ValueError(f"{name} must be one of {PRM_BACKENDS}, got {getattr(self, name)!r}")
        if self.use_prm:
            if not self.prm_model:
                raise ValueError(
                    "use_prm is set but prm_model is empty: give the PRM checkpoint or server model name"
                )
            if self.prm_model != "sim-oracle" and self.prm_backend == "openai" and not self.prm_base_url:
                raise ValueError("prm_backend='openai' needs prm_base_url (the server's base URL)")
        _positive_int(self.reward_retries, "reward_retries", minimum=0)
        _positive_int(self.prm_max_new_tokens, "prm_max_new_tokens")
        if self.outcome_verifier not in OUTCOME_VERIFIERS:
            raise ValueError(
                f"outcome_verifier must be one of {OUTCOME_VERIFIERS}, got {self.outcome_verifier!r}"
            )
        if self.outcome_verifier != "rule":
            if not self.verifier_model:
                raise ValueError(
                    f"outcome_verifier={self.outcome_verifier!r} needs verifier_model (the judge)"
                )
            if self.verifier_backend == "openai" and not self.verifier_base_url:
                raise ValueError("verifier_backend='openai' needs verifier_base_url (the server's base URL)")

        _finite(self.w_p, "w_p", minimum=0.0)
        _finite(self.w_o, "w_o", minimum=0.0)
        if self.w_p == 0 and self.w_o == 0:
            raise ValueError("w_p and w_o are both 0: every return target would be 0")
        _finite(self.gamma, "gamma", minimum=0.0)
        if self.gamma > 1:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma!r}")

        _positive_int(self.replay_size, "replay_size")
        _positive_int(self.total_iterations, "total_iterations")
        _positive_int(self.checkpoint_every, "checkpoint_every", minimum=0)
        _positive_int(self.nonfinite_patience, "nonfinite_patience", minimum=0)

    def resolve_online_rl_defaults(self, output_dir: str) -> None:
        """Fill the fields whose default depends on others (``num_envs``, ``replay_dir``)."""
        if self.num_envs is None:
            self.num_envs = self.rollout_batch_size
        if self.replay_dir is None:
            self.replay_dir = os.path.join(output_dir, "replay")


@dataclass
class CriticArguments:
    r"""Settings of a learned critic's optimisation, Q_phi(s, a) or V(s) (policy architecture + scalar value head).

    Read by :meth:`coach_rl.critic.CriticTrainer.from_config`: Android Coach's and Coach K = 1's Q critic, PPO's and
    DistRL's value network. A mixin (no ``__post_init__``): a config class that inherits it calls
    :meth:`validate_critic_arguments`.
    """

    # Parameters that control the critic's updates
    critic_learning_rate: float = field(
        default=1e-5,
        metadata={"help": f"Learning rate of the critic ({_TABLE5}: Critic Learning Rate 1e-5)."},
    )
    critic_clip_range: float = field(
        default=0.5,
        metadata={
            "help": f"epsilon_v of the clipped value loss, Equation 2 ({_TABLE5}: Critic Clip Range Value 0.5)."
        },
    )
    critic_warmup_ratio: float = field(
        default=0.1,
        metadata={
            "help": f"Share of the critic's optimizer steps spent in linear learning-rate warmup ({_TABLE5}: Critic "
            "Warmup Ratio 0.1)."
        },
    )
    critic_max_grad_norm: float = field(
        default=1.0,
        metadata={"help": "Gradient-norm clip of the critic's updates."},
    )
    critic_batch_size: int = field(
        default=8,
        metadata={"help": "(state, action, return) samples per critic optimizer step."},
    )

    def validate_critic_arguments(self) -> None:
        """Check the critic's optimisation fields; raises ``ValueError`` naming the bad field."""
        _finite(self.critic_learning_rate, "critic_learning_rate", minimum=0.0, strict=True)
        _finite(self.critic_clip_range, "critic_clip_range", minimum=0.0, strict=True)
        _finite(self.critic_warmup_ratio, "critic_warmup_ratio", minimum=0.0)
        if self.critic_warmup_ratio >= 1:
            raise ValueError(f"critic_warmup_ratio must be in [0, 1), got {self.critic_warmup_ratio!r}")
        _finite(self.critic_max_grad_norm, "critic_max_grad_norm", minimum=0.0, strict=True)
        _positive_int(self.critic_batch_size, "critic_batch_size")


@dataclass
class QCriticArguments:
    r"""Settings of Android Coach's Q critic Q_phi(s, a) besides its optimisation: where it starts, how often it is
    updated, what it reads, and its pre-training before RL (Section 3.2). Shared by ``coach`` and ``coach_sssa``.

    A mixin (no ``__post_init__``): a config class that inherits it calls :meth:`validate_q_critic_arguments`.
    """

    # Parameters that control the Q critic
    critic_model_name_or_path: str | None = field(
        default=None,
        metadata={
            "help": "Checkpoint the critic starts from. If `None`, the policy's own checkpoint (the paper's critic "
            "shares the policy architecture, plus a value head)."
        },
    )
    critic_updates_per_iteration: int | None = field(
        default=None,
        metadata={
            "help": "Critic optimizer steps per iteration, each on a batch sampled from the replay buffer. If "
            "`None`, one pass over the steps collected in this iteration (as verl's critic does)."
        },
    )
    critic_action_targets: bool = field(
        default=False,
        metadata={
            "help": "Beyond the paper (Android Coach's Q critic): it reads an index-format action followed by the screen element it names "
            "(`{... \"index\": 4} on TextView 'Wi-Fi'`, read from the state's element list) instead of the number alone, "
            "so it compares the task with the element's text rather than looking the number up in the screen list. "
            "Changes only the critic's input; the policy and its answers are unchanged."
        },
    )
    critic_pretrain_dataset: str | None = field(
        default=None,
        metadata={
            "help": "PRM-labelled steps (labels mapped to 0/1) to pre-train the critic on before RL. The paper does "
            "this to keep the critic from diverging early (Section 3.2, Figure 6)."
        },
    )
    critic_pretrain_steps: int = field(
        default=0,
        metadata={
            "help": "Critic pre-training optimizer steps on `critic_pretrain_dataset`. `0` skips pre-training."
        },
    )
    critic_pretrain_balanced: bool = field(
        default=False,
        metadata={
            "help": "Beyond the paper: pre-training batches hold as many actions labelled correct as wrong (drawn "
            "with replacement). With about one correct action in five, plain passes let a small critic settle on the "
            "label prior (Q the same for every action); measured in the coach-rl README."
        },
    )
    critic_pretrain_paired: bool = field(
        default=False,
        metadata={
            "help": "Beyond the paper (implies `critic_pretrain_balanced`): every correct action in a pre-training "
            "batch comes with a wrong action of the same state, so the critic learns what separates the actions a "
            "state offers (the comparison ACLOO makes among the K actions) rather than which states tend to be "
            "solved; measured in the coach-rl README."
        },
    )
    critic_pretrain_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "Learning rate of critic pre-training. If `None`, `critic_learning_rate`. Pre-training on labelled "
            "data can take a larger step than the online updates, whose Monte-Carlo returns are noisy."
        },
    )
    # Pre-training on the run's demonstrations (no `critic_pretrain_dataset`): read by coach_rl.warmup
    critic_pretrain_samples: int = field(
        default=4,
        metadata={"help": "With critic_pretrain_steps > 0 and no critic_pretrain_dataset: answers sampled from the "
                          "warmed-up policy per demonstrated state, labelled 1/0 by whether they match the expert's "
                          "action (the expert's own answer is a positive too)."},
    )
    critic_pretrain_contrast: int = field(
        default=2,
        metadata={"help": "With demo-based critic pre-training: answers of other demonstrated states added per state "
                          "(labelled by action match, so mostly negatives the policy rarely samples)."},
    )
    critic_pretrain_screen_negatives: bool = field(
        default=False,
        metadata={"help": "Beyond the paper, with demo-based critic pre-training: add the other demonstrated states' "
                          "answers as they would be given on this screen (an index re-aimed at the same element; "
                          "other answers from states showing the same elements), labelled by action match: the "
                          "choices other goals make on a shared screen, which a critic that ignores the goal scores "
                          "high (measured in the coach-rl README)."},
    )
    critic_pretrain_rollouts: int = field(
        default=0,
        metadata={"help": "Beyond the paper, with demo-based critic pre-training on the simulated phone: episodes per "
                          "task the warmed-up policy plays (sampling) on the demonstrated instances; at every state it "
                          "reaches, the sim expert's answer and the policy's replies (the executed one and "
                          "critic_pretrain_samples more) join the pre-training data, labelled by the expert match. "
                          "The demonstrations show only the expert's path; online the critic also scores actions "
                          "after the policy's own mistakes (measured in the coach-rl README). 0: off."},
    )
    critic_pretrain_labels: str = field(
        default="match",
        metadata={"help": "Who labels the critic's pre-training actions at demonstrated states: `match` (whether the "
                          "action is the expert's) or `prm` (the run's learned process reward model judges each one; "
                          "the paper pre-trains Q on PRM labels, Appendix B). `prm` needs use_prm with a learned "
                          "prm_model."},
    )

    def pretrains_critic(self) -> bool:
        """Whether the loop pre-trains this critic before RL (``critic_pretrain_steps`` > 0)."""
        return bool(self.critic_pretrain_steps)

    def critic_pretrain_needs_demos(self) -> bool:
        """Whether critic pre-training reads the run's demonstrations (no ``critic_pretrain_dataset``)."""
        return self.pretrains_critic() and not self.critic_pretrain_dataset

    def validate_q_critic_arguments(self) -> None:
        """Check the Q critic's fields; raises ``ValueError`` naming the bad field."""
        for name in ("critic_pretrain_balanced", "critic_pretrain_paired", "critic_action_targets"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        _positive_int(self.critic_updates_per_iteration, "critic_updates_per_iteration", allow_none=True)
        _positive_int(self.critic_pretrain_steps, "critic_pretrain_steps", minimum=0)
        if self.critic_pretrain_learning_rate is not None:
            _finite(self.critic_pretrain_learning_rate, "critic_pretrain_learning_rate", minimum=0.0, strict=True)
        for name in ("critic_pretrain_samples", "critic_pretrain_contrast", "critic_pretrain_rollouts"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        from coach_rl.critic_data import CRITIC_LABELS

        if self.critic_pretrain_labels not in CRITIC_LABELS:
            raise ValueError(f"critic_pretrain_labels must be one of {CRITIC_LABELS}, got {self.critic_pretrain_labels!r}")


@dataclass
class ReplayActorArguments:
    r"""How much the actor of the critic-guided algorithms learns per iteration: the stored states it draws from the
    replay buffer (Algorithm 1, line 24). Shared by ``coach`` (K fresh actions per state) and ``coach_sssa`` (the
    stored action); the other algorithms learn from the iteration's own episodes and have no such setting.

    A mixin (no ``__post_init__``): a config class that inherits it calls :meth:`validate_replay_actor_arguments`.
    """

    actor_states_per_iteration: int | None = field(
        default=None,
        metadata={"help": "Stored states sampled from the replay buffer for each actor update (Algorithm 1, line 24). "
                          "None: as many as the steps collected in this iteration."},
    )

    def validate_replay_actor_arguments(self) -> None:
        """Check the fields of this mixin; raises ``ValueError`` naming the bad field."""
        if self.actor_states_per_iteration is not None and self.actor_states_per_iteration < 1:
            raise ValueError(f"actor_states_per_iteration must be >= 1 or null, got {self.actor_states_per_iteration!r}")


# Mixins come first (Python's convention); dataclass fields are ordered base-last, so `--help` lists TRL's fields,
# then the OnlineRLArguments groups, then the distributed collection's, then an algorithm's own.
@dataclass
class TrainerConfig(DistributedArguments, OnlineRLArguments, GRPOConfig):
    r"""What every algorithm's config shares: ``trl.GRPOConfig`` (the actor's optimiser and sampling, with Android
    Coach's Table 5 defaults), :class:`OnlineRLArguments` and the distributed collection's
    :class:`~coach_rl.distributed.arguments.DistributedArguments`.

    Each algorithm module of :mod:`coach_rl.algorithms` declares its own config on top of it, with the mixins it
    reads (:class:`CriticArguments`, :class:`QCriticArguments`, ``DGRPOArguments``, ...), and registers it with the
    algorithm (``register_algorithm(name, config=...)``); ``load_config`` builds the one of the run's ``algorithm``.
    An algorithm config validates its own mixins in :meth:`validate_algorithm_arguments`.
    """

    kl_weight: ClassVar[str | None] = None
    """The field that holds this algorithm's KL weight to a reference policy: ``beta`` (Android Coach's actor),
    another field (DGRPO's ``dgrpo_kl_beta``) or None (no KL term). ``beta`` != 0 elsewhere is an error."""

    # Parameters whose default values are overridden from GRPOConfig / TrainingArguments (Android Coach Table 5)
    learning_rate: float = field(
        default=1e-6,
        metadata={
            "help": f"Initial learning rate of the actor (AdamW) ({_TABLE5}: Actor Learning Rate 1e-6)."
        },
    )
    max_grad_norm: float = field(
        default=1.0,
        metadata={"help": f"Gradient-norm clip of the actor ({_TABLE5}: Gradient Clipping 1.0)."},
    )
    lr_scheduler_type: SchedulerType | str = field(
        default="constant",
        metadata={
            "help": "Actor learning-rate schedule. Constant, as verl's actor (the paper's framework) uses: the outer loop "
            "calls the actor update many times, and Transformers' default 'linear' would decay to zero part way."
        },
    )
    epsilon: float = field(
        default=0.2,
        metadata={"help": f"PPO clip ratio epsilon of Equation 4 ({_TABLE5}: Clip Ratio 0.2)."},
    )
    beta: float = field(
        default=0.0,
        metadata={
            "help": "Beyond the paper (Eq. 4 has no KL term; 0 keeps it exact): weight of a KL penalty to the policy "
            "the run started from (the warm-up or init_from's policy), the token-mean k3 estimate of "
            "coach_rl.losses.kl_to_reference (importance-weighted when use_bias_correction_kl, TRL's default). "
            "Android Coach's actor only: DGRPO has dgrpo_kl_beta. Ablation in the coach-rl README."
        },
    )
    temperature: float = field(
        default=1.0,
        metadata={"help": f"Sampling temperature of the policy ({_TABLE5}: Sampling Temperature 1.0)."},
    )
    max_completion_length: int | None = field(
        default=512,
        metadata={
            "help": f"Most tokens generated per action ({_TABLE5}: Max New Tokens / Max Response Length 512)."
        },
    )
    num_generations: int | None = field(
        default=4,
        metadata={
            "help": "Replies sampled per prompt: Android Coach's K actions per stored state, GRPO's G trajectories per "
            "task instance; kept >= 2 (TRL's GRPOConfig checks its batch sizes against it) by the algorithms that do "
            "not read it."
        },
    )

    def validate_algorithm_arguments(self) -> None:
        """Check the algorithm's own fields (its mixins'); raises ``ValueError`` naming the bad field. None here."""

    def single_generation_allowed(self) -> bool:
        """Whether ``num_generations`` = 1 is valid (GRPOConfig's group statistics need 2; Coach's ``q`` does not)."""
        return False

    def pretrains_critic(self) -> bool:
        """Whether the loop pre-trains the algorithm's critic before RL (:class:`QCriticArguments`); no critic here."""
        return False

    def critic_pretrain_needs_demos(self) -> bool:
        """Whether critic pre-training reads the run's demonstrations; no critic pre-training here."""
        return False

    def __post_init__(self) -> None:
        """Validate our fields first (clear messages), then run GRPOConfig's own checks, then fill derived defaults."""
        if isinstance(self.num_generations, bool) or not isinstance(self.num_generations, int):
            raise ValueError(
                f"num_generations (K actions per state) must be an integer >= 2, got {self.num_generations!r}"
            )
        single = self.num_generations == 1 and self.single_generation_allowed()
        if self.num_generations < 2 and not single:
            raise ValueError(
                f"num_generations (K actions per state) is {self.num_generations}, but ACLOO's leave-one-out "
                "baseline averages the Q of the OTHER K-1 actions, so it needs K >= 2 (K = 1 works with "
                "coach_advantage='q')"
            )
        _finite(self.epsilon, "epsilon", minimum=0.0, strict=True)
        _finite(self.temperature, "temperature", minimum=0.0, strict=True)
        _finite(self.beta, "beta", minimum=0.0)
        if self.beta and self.kl_weight != "beta":
            own = f" (its KL weight is {self.kl_weight})" if self.kl_weight else ""
            raise ValueError(f"beta={self.beta!r} is the KL weight of Android Coach's actor (algorithm=coach); "
                             f"{type(self).__name__} does not read it{own}")
        _finite(self.learning_rate, "learning_rate", minimum=0.0)
        if self.max_completion_length is not None:
            _positive_int(self.max_completion_length, "max_completion_length")
        self.validate_online_rl_arguments()
        self.validate_algorithm_arguments()
        self.validate_distributed_arguments()
        if single:  # GRPOConfig rejects K = 1 (GRPO's group statistics need 2); our advantage does not
            self.num_generations = 2
        try:
            super().__post_init__()
        finally:
            if single:
                self.num_generations = 1
        self.resolve_online_rl_defaults(self.output_dir)

