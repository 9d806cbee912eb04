r"""Android Coach (paper Algorithm 1, Phases 3-4): critic-guided Single State Multiple Actions.

Each update: the critic ``Q(s, a)`` regresses onto the records' return targets ``R_t`` with the clipped value
loss (Eq. 2; one pass over the new records, or ``critic_updates_per_iteration`` batches drawn from the replay
buffer), then the actor samples K actions for states drawn from the replay buffer, scores them with the critic,
and applies ACLOO (Eq. 3, :func:`coach_rl.advantages.acloo`) and the PPO clip (Eq. 4,
:func:`coach_rl.losses.ppo_clip_loss`). No environment step is spent on the K - 1 extra actions.

The file reads top to bottom: :class:`CoachConfig`, the run's settings (the shared parts, the critic's and
:class:`CoachArguments`); :class:`CoachCritic`, the critic half (the K = 1 ablation, ``coach_sssa``, shares it);
:class:`CoachAlgorithm`, the update the training loop calls; :func:`build_critic` and :func:`build_coach`, how a run
config builds them; then the actor beside it, :class:`CoachTrainer`, a TRL ``GRPOTrainer`` whose reward is
the critic (:class:`CriticReward`) and whose advantages are ACLOO, as TRL keeps a trainer beside its config.

**The actor's rows.** One row of the actor's training data is one **stored online state** (Algorithm 1, lines
23-30): its ``prompt`` is the policy's chat messages for that state (``HFPolicy.messages_for`` or
``ReplayStep.policy_messages``) and its ``state`` column is the text the critic reads for that state.
TRL samples ``K = num_generations`` completions per row (Single State Multiple Actions, no extra
environment steps), the critic scores each one as ``Q(s, a_i)`` through TRL's reward-function hook, and
:meth:`CoachTrainer._generate_and_score_completions` replaces GRPO's group-normalised rewards by the exact
ACLOO advantages of Equation 3, ``A_i = Q_i - mean_{j != i} Q_j`` over each group of K.

**Why TRL's loss with ``beta = 0`` is the paper's Eq. 4.** For ``loss_type`` in the clipped family
("dapo", "bnpo", "grpo", "dr_grpo") TRL 1.16 computes, per completion token,
``coef_1 = exp(logp_theta - logp_old)`` (``importance_sampling_level="token"``),
``coef_2 = clamp(coef_1, 1 - epsilon, 1 + epsilon_high)`` and ``per_token_loss = -min(coef_1 A, coef_2 A)``;
with ``beta = 0`` no KL term is added, with ``delta = None`` there is no extra upper clip, and with
``top_entropy_quantile = 1``, ``entropy_coef = 0`` and ``off_policy_mask_threshold = None`` nothing else
re-weights the tokens. That is exactly ``-min(rho A, clip(rho, 1 +- eps) A)`` of Eq. 4 with
``rho = pi_theta / pi_theta_old`` (``epsilon_high`` defaults to ``epsilon`` = 0.2, Table 5's clip ratio).
``logp_old`` is the policy that sampled the K actions: TRL stores it when a generated batch is reused
(``num_iterations > 1`` or ``steps_per_generation > gradient_accumulation_steps``) and otherwise uses the
detached current log-probs (ratio 1 on the single on-policy step, where Eq. 4's gradient is ``A grad logp``).

**Which ``loss_type`` and why: "dapo" (TRL's default, kept).** It sums the per-token losses of the whole
generation batch and divides by its number of completion tokens, i.e. Eq. 4's expectation taken as a mean
over all action tokens. That is verl's ``token-mean`` aggregation (the paper's implementation is built on
verl) and :func:`coach_rl.losses.ppo_clip_loss`'s reduction, which the GRPO/PPO baselines use, so the three
algorithms weigh tokens alike. ("grpo" would average per sequence first, which favours short actions with
positive advantage; "bnpo"/"dr_grpo" differ only in the normaliser.) Loss types outside the clipped family
and sequence-level importance sampling are rejected: they are not Eq. 4. ``CoachTrainer`` tests this
equivalence against :func:`coach_rl.losses.ppo_clip_loss` (tests/coach_rl/test_trainer.py).

**``beta > 0`` (beyond the paper, off by default).** Eq. 4 has no KL term. With ``beta > 0`` the loss adds
``beta * kl_to_reference(logp_theta, logp_ref)`` (:func:`coach_rl.losses.kl_to_reference`, the token-mean k3
estimate, importance-weighted as TRL's ``use_bias_correction_kl``) against a frozen copy of the policy this
trainer was built with: in the outer loop that is the warm-up (or ``init_from``'s policy), and checkpoints keep
it (:meth:`reference_state_dict`). It is the lever against drifting away from what the warm-up already solved;
the coach-rl README has its ablation.

The outer loop (rollout, returns, critic update, actor update) calls :meth:`CoachTrainer.actor_update` once
per iteration on the same trainer object, so the optimiser state carries over; :meth:`actor_state_dict` /
:meth:`save_actor_state` hold everything an exact resume needs.
"""

from __future__ import annotations

import copy
import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from accelerate.utils import is_peft_model
from datasets import Dataset
from transformers import Trainer
from transformers.integrations import get_reporting_integration_callbacks
from trl import GRPOConfig, GRPOTrainer
from trl.data_utils import apply_chat_template
from trl.extras.profiling import profiling_context
from trl.models import prepare_deepspeed, prepare_fsdp, unwrap_model_for_generation
from trl.trainer.utils import (
    add_fused_lm_head,
    disable_dropout_in_model,
    pad,
    split_pixel_values_by_grid,
    split_tensor_dict,
    unsplit_pixel_values_by_grid,
)

from coach_rl.advantages import acloo
from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext, register_algorithm
from coach_rl.arguments import (
    CriticArguments,
    QCriticArguments,
    ReplayActorArguments,
    TrainerConfig,
    _finite,
    _positive_int,
)
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.diagnostics import fixed_normal
from coach_rl.losses import kl_to_reference, ppo_clip_loss, rescale_to_batch_tokens
from coach_rl.nonfinite import NonFiniteLogits, NonFiniteMonitor, all_finite, guarded_generate
from coach_rl.prefix_update import (
    SHARED_ATTENTION,
    VLM_FIELDS,
    group_rows,
    shared_prefix_logps,
    shuffle_groups,
    split_by_images,
    vlm_prompt_inputs,
)
from coach_rl.records import StepRecord, check_records
from coach_rl.replay import ReplayStep
from coach_rl.run import capture_rng_state, restore_rng_state
from coach_rl.sampling import field_layout, generate_shared_prefix, images_per_row

__all__ = [
    "ACTOR_STATE_NAME",
    "COACH_LOSS_TYPES",
    "CoachAlgorithm",
    "CoachArguments",
    "CoachConfig",
    "CoachCritic",
    "CoachTrainer",
    "CriticReward",
    "POLICY_DIR_NAME",
    "build_coach",
    "build_critic",
    "checkpointing_requested",
    "completion_text",
    "critic_examples",
    "enable_checkpointing",
    "estimated_steps_per_iteration",
]

ACTOR_STATE_NAME = "actor_trainer.pt"
"""The actor trainer's state (optimiser, schedule, counters): in a saved algorithm folder, and in
:meth:`CoachTrainer.save_actor_state`'s folder (with the RNG states there)."""
POLICY_DIR_NAME = "policy"
"""Sub-folder of :meth:`CoachTrainer.save_actor_state` holding the policy weights and its tokenizer/processor."""
COACH_LOSS_TYPES: tuple[str, ...] = ("dapo", "bnpo", "grpo", "dr_grpo")
"""TRL loss types whose per-token loss is the PPO clipped surrogate of Eq. 4 (they differ only in the normaliser)."""
_CRITIC_DIR = "critic"
_CRITIC_TRAINER = "critic_trainer.pt"
_REFERENCE = "kl_reference.pt"
_FORMAT = "coach_rl.actor_trainer"
_FORMAT_VERSION = 1
_CONSTANT_SCHEDULES = ("constant", "constant_with_warmup")


# -- the config: shared parts, the critic's, and Coach's own ------------------------------------------------------


@dataclass
class CoachArguments:
    r"""Android Coach's own settings (the actor side of SSMA): how the K sampled actions are scored and turned into
    advantages, and how their prompt is shared. A mixin: :class:`CoachConfig` calls :meth:`validate_coach_arguments`."""

    # Parameters that control the K actions per state
    coach_advantage: str = field(
        default="acloo",
        metadata={
            "help": "Advantage of each of the K sampled actions: `acloo` (A_i = Q_i - mean_{j != i} Q_j, the paper's "
            "Eq. 3) or `q` (A_i = Q_i, the plain critic value with no baseline: the ablation ACLOO is measured "
            "against)."
        },
    )
    coach_min_q_spread: float = field(
        default=0.0,
        metadata={
            "help": "Beyond the paper: a state whose K actions' critic scores differ by less than this (max - min) "
            "gets zero advantages. A learned critic's small preferences among equally good, or equally wrong, "
            "actions are its noise, and ACLOO turns them into updates in random directions (`diag/critic_q_spread_"
            "pure` against `_mixed` shows their size). 0: the paper's ACLOO."
        },
    )
    share_prompt_prefix: bool = field(
        default=True,
        metadata={
            "help": "Sample the K actions of a state from one pass over its prompt (the prompt's KV cache, and its "
            "screenshot's vision encoding, computed once and shared by the K samples) instead of K independent "
            "rows. Same sampling distribution; it only changes the cost. Applies to Transformers generation "
            "(vLLM shares prefixes itself through its prefix cache)."
        },
    )
    share_prompt_update: bool = field(
        default=True,
        metadata={
            "help": "In the actor update's forward and backward, run each state's prompt once and let its K replies "
            "attend to it (one packed sequence per state with a block attention mask, coach_rl.prefix_update) instead "
            "of K rows that each repeat the prompt. The same per-token log-probs, loss and gradients up to float "
            "rounding; the cost of the prompt (and of its screenshot's vision encoding) no longer grows with K. Applies to "
            "text and Qwen-VL-style policies with 'sdpa' or 'eager' attention (others keep the unshared rows); a "
            "micro-batch shares what it holds, so make `per_device_train_batch_size` a multiple of K."
        },
    )
    coach_q_source: str = field(
        default="critic",
        metadata={
            "help": "What scores the K sampled actions in the actor update: `critic` (the learned Q_phi(s, a), the "
            "paper) or `sim-oracle` (a DIAGNOSTIC upper bound, simulated phone only: Q = 1 when the action is the "
            "expert's next action by the action-match rule, else 0; needs `oracle_diagnostics`). The critic is still "
            "trained and its ranking still logged (`diag/critic_*`), but the advantages come from the oracle: it "
            "measures what Coach gains with a perfect critic, i.e. whether the critic or the actor side is the "
            "bottleneck. Never a training setting for a real device."
        },
    )
    coach_oracle_noise: float = field(
        default=0.0,
        metadata={
            "help": "DIAGNOSTIC, with coach_q_source=sim-oracle: each oracle score gets sigma * z added, z a standard "
            "normal fixed per (state, reply), i.e. a critic that is consistent but wrong by that much. Sweeping sigma "
            "between the oracle (0) and the learned critic's sign agreement measures how good a critic SSMA needs."
        },
    )
    critic_prm_candidates: int = field(
        default=0,
        metadata={
            "help": "Beyond the paper (Android Coach only; 0 = off, the paper): at every state collected online, "
            "sample this many extra replies (never executed, no env step), let the run's process reward model judge "
            "the ones that differ from the executed reply (one batched call per collection; the sim oracle judges by "
            "the expert match), and add them to that iteration's critic update with the PRM's verdict as target "
            "(1 judged correct, 0 not: the critic's pre-training labels). The online critic otherwise sees one "
            "action per state and never learns to rank the alternatives ACLOO compares. Needs `use_prm`."
        },
    )
    coach_execute_best_of: int = field(
        default=1,
        metadata={
            "help": "Beyond the paper (1 = off, the paper: execute the policy's sample): while collecting, sample this "
            "many replies at every state and execute the one the critic scores highest. Costs policy samples and "
            "critic scores, no env steps; the actor still trains on K fresh samples per stored state, and evaluation "
            "always plays the policy alone. Measured on the main job (docs/studies/2026-11-29-exploration.md): 2 and "
            "4 do not beat 1 on validation instances, because the learned critic's pick among the policy's own "
            "samples is no more often the expert's action."
        },
    )

    def validate_coach_arguments(self) -> None:
        """Check the fields of this mixin; raises ``ValueError`` naming the bad field."""
        if self.coach_advantage not in ("acloo", "q"):
            raise ValueError(f"coach_advantage must be 'acloo' or 'q', got {self.coach_advantage!r}")
        _finite(self.coach_min_q_spread, "coach_min_q_spread", minimum=0.0)
        if self.coach_min_q_spread and self.coach_advantage != "acloo":
            raise ValueError("coach_min_q_spread zeroes ACLOO's advantages of states the critic cannot tell apart; "
                             f"coach_advantage={self.coach_advantage!r} has no such groups: set it to 0")
        if not isinstance(self.share_prompt_prefix, bool):
            raise ValueError(f"share_prompt_prefix must be true or false, got {self.share_prompt_prefix!r}")
        if not isinstance(self.share_prompt_update, bool):
            raise ValueError(f"share_prompt_update must be true or false, got {self.share_prompt_update!r}")
        _positive_int(self.critic_prm_candidates, "critic_prm_candidates", minimum=0)
        _positive_int(self.coach_execute_best_of, "coach_execute_best_of")
        if self.coach_q_source not in ("critic", "sim-oracle"):
            raise ValueError(f"coach_q_source must be 'critic' or 'sim-oracle', got {self.coach_q_source!r}")
        _finite(self.coach_oracle_noise, "coach_oracle_noise", minimum=0.0)
        if self.coach_oracle_noise and self.coach_q_source != "sim-oracle":
            raise ValueError("coach_oracle_noise perturbs the sim oracle's scores: it needs coach_q_source=sim-oracle")


@dataclass
class CoachConfig(CoachArguments, ReplayActorArguments, QCriticArguments, CriticArguments, TrainerConfig):
    r"""Configuration of Android Coach (``algorithm: coach``): the shared :class:`~coach_rl.arguments.TrainerConfig`
    (``trl.GRPOConfig`` with the paper's Table 5 defaults, online RL, distributed collection), the critic's
    :class:`~coach_rl.arguments.CriticArguments` and :class:`~coach_rl.arguments.QCriticArguments`, the replay
    actor's :class:`~coach_rl.arguments.ReplayActorArguments`, and :class:`CoachArguments`.

    The actor update is TRL's GRPO machinery with dataset rows = stored states, ``num_generations`` = K actions
    per state, the critic as the reward and ACLOO advantages. Where Table 5 of the paper lands:

    ========================  ==========  =====================================================
    Table 5 row               value       field
    ========================  ==========  =====================================================
    Max Prompt Length         32768       ``max_prompt_length``
    Max Response Length       512         ``max_completion_length``
    Train Batch Size          8           ``rollout_batch_size`` (tasks per iteration)
    Actor Learning Rate       1e-6        ``learning_rate``
    Gradient Clipping         1.0         ``max_grad_norm``
    Clip Ratio                0.2         ``epsilon``
    Sampling Temperature      1.0         ``temperature``
    Max New Tokens            512         ``max_completion_length``
    Max Turns                 25          ``max_turns``
    Max / Min Pixels          1270180/256 ``max_pixels`` / ``min_pixels``
    Process / Outcome weight  0.2 / 1     ``w_p`` / ``w_o``
    Discount factor           0.95        ``gamma``
    Critic Learning Rate      1e-5        ``critic_learning_rate``
    Critic Clip Range Value   0.5         ``critic_clip_range``
    Critic Warmup Ratio       0.1         ``critic_warmup_ratio``
    Strategy FSDP2            -           not a field: an ``accelerate`` config (``fsdp``/``fsdp_config``)
    PPO Micro Batch Size/GPU  1           not mapped: TRL's ``per_device_train_batch_size`` (default 8)
                                          must hold whole groups of K, so it keeps TRL's default
    ========================  ==========  =====================================================

    K (``num_generations``) defaults to 4: the paper's efficiency study (Figure 4) uses 4, and its sweep over
    K = 1, 2, 4, 8 (Table 3) shows 4 gets the whole gain of 8 on AndroidLab (37.0 SR for both) at 1.62x
    instead of 2.18x the K=1 training time. K = 1 (Table 3's N = 1 row: one fresh action per state, scored by
    the critic) needs ``coach_advantage="q"``: ACLOO's leave-one-out baseline needs a second action.
    """

    kl_weight: ClassVar[str | None] = "beta"

    num_generations: int | None = field(
        default=4,
        metadata={
            "help": "K: actions sampled per stored state and scored by the critic for ACLOO (Single State Multiple "
            "Actions). Must be >= 2 (1 only with coach_advantage='q'). Default 4: the paper's Figure 4 setting; its K sweep (Table 3: 1, 2, 4, 8) "
            "shows 8 adds nothing over 4 on AndroidLab at 2.18x vs 1.62x the training time."
        },
    )

    def single_generation_allowed(self) -> bool:
        """K = 1 works with the plain critic value (``coach_advantage='q'``); ACLOO needs a second action."""
        return self.coach_advantage == "q"

    def validate_algorithm_arguments(self) -> None:
        """The critic's, the Q critic's and Coach's own fields, and how they meet the shared ones."""
        self.validate_coach_arguments()
        if self.critic_prm_candidates and not self.use_prm:
            raise ValueError("critic_prm_candidates has the process reward model label extra replies: set use_prm "
                             "(and prm_model), or critic_prm_candidates=0")
        if self.critic_prm_candidates and self.collector == "ray":
            raise ValueError("critic_prm_candidates samples extra replies in the local collector; collector=ray "
                             "does not (set critic_prm_candidates=0)")
        if self.coach_execute_best_of > 1 and self.collector == "ray":
            raise ValueError("coach_execute_best_of picks among sampled replies in the local collector; collector=ray "
                             "plays the policy's own sample (set coach_execute_best_of=1)")
        self.validate_critic_arguments()
        self.validate_q_critic_arguments()
        self.validate_replay_actor_arguments()


class CoachCritic(AlgorithmHooks):
    """Android Coach's critic half: ``Q(s, a)`` regressed onto the return targets ``R_t`` (Algorithm 1, lines 18-21;
    Eq. 2's clipped value loss in :class:`coach_rl.critic.CriticTrainer`) and its files in a checkpoint.

    :class:`CoachAlgorithm` adds the K-action actor to it; :mod:`coach_rl.algorithms.coach_sssa` (the K = 1
    ablation) a stored-action one. Build both parts of it for a run config with :func:`build_critic`.
    """

    def __init__(self, critic: Critic, critic_trainer: CriticTrainer, *, critic_updates_per_iteration: int | None = None,
                 critic_batch_size: int = 8) -> None:
        """``critic_trainer`` the optimiser of ``critic``; ``critic_updates_per_iteration`` None: one pass over the
        iteration's records, else that many batches of ``critic_batch_size`` drawn from the replay buffer."""
        self.critic = critic
        self.critic_trainer = critic_trainer
        self.critic_updates_per_iteration = critic_updates_per_iteration
        self.critic_batch_size = int(critic_batch_size)

    def critic_update(self, records: list[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Regress Q onto R_t (Algorithm 1, lines 18-21): this iteration's records, or replay batches. The PRM-labelled
        extra replies (``critic_prm_candidates``) are always this iteration's: the replay buffer does not keep them."""
        t0 = time.perf_counter()
        per = self.critic_updates_per_iteration
        new = records
        if per is not None:
            if context.replay is None:
                raise ValueError("critic_updates_per_iteration samples the replay buffer, but the loop gave none")
            records = context.replay.sample_records(min(len(context.replay), per * self.critic_batch_size), context.rng)
        out: dict[str, float] = {}
        if records:
            states, actions, targets = critic_examples(records, candidates_of=new)
            metrics = self.critic_trainer.update(states, actions, targets, mini_batch_size=self.critic_batch_size)
            out.update({f"critic/{k}": v for k, v in metrics.items()})
            out["critic/candidate_examples"] = float(len(states) - len(records))
        out["time/critic"] = time.perf_counter() - t0
        return out

    def save_critic(self, directory: Path) -> None:
        """The critic's weights (``critic/``) and its optimiser (``critic_trainer.pt``) into ``directory``."""
        self.critic.save(directory / _CRITIC_DIR)
        torch.save(self.critic_trainer.state_dict(include_critic=False), directory / _CRITIC_TRAINER)

    def load_critic_state(self, directory: Path) -> None:
        """Restore what :meth:`save_critic` wrote."""
        self.critic.load_state_dict(Critic.load(directory / _CRITIC_DIR).state_dict())
        self.critic_trainer.load_state_dict(torch.load(directory / _CRITIC_TRAINER, weights_only=True))

    def load_critic(self, directory: Path) -> bool:
        """Take the critic weights of another run's saved algorithm folder (``init_from``); False when it has none."""
        path = Path(directory) / _CRITIC_DIR
        if not path.is_dir():
            return False
        self.critic.load_state_dict(Critic.load(path).state_dict())
        return True


class CriticChooser:
    """Execute the reply the critic scores highest of ``samples`` sampled at a state (``coach_execute_best_of``).

    A :class:`coach_rl.rollout.ReplyChooser`: it reads each reply as the critic is trained on it (the policy's
    templated prompt and the reply text) and keeps the first of equal scores, so ties go to the policy's own sample.
    A NaN score never wins.
    """

    def __init__(self, critic: Critic, samples: int, *, batch_size: int = 8) -> None:
        """``samples`` replies per state (>= 2), scored in batches of ``batch_size``."""
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 2:
            raise ValueError(f"samples must be an integer >= 2, got {samples!r}")
        self.critic = critic
        self.samples = samples
        self.batch_size = int(batch_size)

    def __call__(self, requests: Sequence[Any], replies: Sequence[Sequence[Any]]) -> list[int]:
        """One index per request: its highest-Q reply."""
        states = [reply.prompt_text for group in replies for reply in group]
        actions = [reply.text for group in replies for reply in group]
        q = self.critic.score(states, actions, batch_size=self.batch_size)
        q = torch.where(torch.isfinite(q), q, torch.full_like(q, -math.inf))
        picks, start = [], 0
        for group in replies:
            scores = q[start:start + len(group)].tolist()
            start += len(group)
            picks.append(max(range(len(scores)), key=lambda k: (scores[k], -k)))
        return picks


class CoachAlgorithm(CoachCritic):
    """Critic-guided Single State Multiple Actions: critic update on ``R_t``, then K critic-scored actions per state."""

    name = "coach"
    episodes_per_instance = 1

    def __init__(self, actor: Any, critic: Critic, critic_trainer: CriticTrainer, *,
                 critic_updates_per_iteration: int | None = None, critic_batch_size: int = 8,
                 actor_states_per_iteration: int | None = None, prm_candidates: int = 0,
                 execute_best_of: int = 1) -> None:
        """``actor`` a :class:`CoachTrainer` whose reward is ``critic``; ``critic_trainer`` its
        optimiser; ``prm_candidates`` extra replies per collected state the PRM labels as critic targets;
        ``execute_best_of`` > 1: the collector executes the critic's pick of that many sampled replies."""
        self.actor = actor
        super().__init__(critic, critic_trainer, critic_updates_per_iteration=critic_updates_per_iteration,
                         critic_batch_size=critic_batch_size)
        self.actor_states_per_iteration = actor_states_per_iteration
        self.prm_candidates = int(prm_candidates)
        self.reply_chooser = CriticChooser(critic, execute_best_of, batch_size=critic_batch_size) \
            if execute_best_of > 1 else None

    @property
    def policy_model(self) -> Any:
        """The policy the actor trains."""
        return self.actor.model

    def update(self, records: Sequence[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Phase 3 (critic on ``(s, a, R_t)``) then Phase 4 (actor on states sampled from the replay buffer)."""
        records = check_records(records)
        out = self.critic_update(records, context)
        out.update(self.actor_update(len(records), context))
        return out

    def actor_update(self, new_steps: int, context: UpdateContext) -> dict[str, float]:
        """K actions per sampled stored state, scored by the critic, ACLOO, PPO clip (Algorithm 1, lines 23-30)."""
        if context.replay is None or not len(context.replay):
            raise ValueError("the Coach actor update samples stored states from the replay buffer, which is empty")
        t0 = time.perf_counter()
        n = self.actor_states_per_iteration or new_steps
        picked = context.replay.sample_records(max(1, min(n, len(context.replay))), context.rng)
        rows = [{"prompt": r.prompt, "state": r.prompt_text, "oracle": r.oracle or ""} for r in picked]
        metrics = self.actor.actor_update(rows)
        out = {k if k.startswith(("actor/", "diag/", "nonfinite/")) else f"actor/{k}": v for k, v in metrics.items()}
        out["actor/states"] = float(len(picked))
        out["time/actor"] = time.perf_counter() - t0
        return out

    def use_oracle_format(self, policy_format: Any) -> None:
        """Label the K sampled replies against the stored states' oracle with this ``PolicyFormat`` (diagnostics)."""
        self.actor.oracle_format = policy_format

    def save(self, directory: Path) -> None:
        """Actor trainer state (optimiser, schedule, counters), critic weights and the critic's optimiser."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        torch.save(self.actor.actor_state_dict(include_model=False, include_rng=False), directory / ACTOR_STATE_NAME)
        self.save_critic(directory)
        reference = self.actor.reference_state_dict()
        if reference is not None:  # beta > 0: the KL anchor (the starting policy) is not the policy saved beside it
            torch.save(reference, directory / _REFERENCE)

    def load(self, directory: Path) -> None:
        """Restore :meth:`save` (the policy weights are loaded by the loop into the model given at construction)."""
        directory = Path(directory)
        self.load_critic_state(directory)
        self.actor.load_actor_state_dict(torch.load(directory / ACTOR_STATE_NAME, map_location="cpu", weights_only=False))
        if self.actor.kl_reference is not None:
            path = directory / _REFERENCE
            if not path.is_file():
                raise FileNotFoundError(f"beta > 0 but the checkpoint has no KL reference ({path}): it was saved by "
                                        "a run with beta = 0; resume it with beta=0 or start a new run")
            self.actor.load_reference_state_dict(torch.load(path, map_location="cpu", weights_only=True))


def critic_examples(records: Sequence[StepRecord], candidates_of: Sequence[StepRecord] | None = None,
                    ) -> tuple[list[str], list[str], list[float]]:
    """The critic's ``(state, action, target)`` lists: each record's executed reply with its return R_t (Eq. 2's
    target), then the PRM-labelled extra replies (``critic_prm_candidates``) of the states of ``candidates_of``
    (default: ``records``) with their label."""
    states = [r.prompt_text for r in records]
    actions = [r.response for r in records]
    targets = [float(r.return_t) for r in records]
    for r in records if candidates_of is None else candidates_of:
        for text, label in r.candidate_labels:
            states.append(r.prompt_text)
            actions.append(text)
            targets.append(float(label))
    return states, actions, targets


def estimated_steps_per_iteration(args: Any) -> int:
    """Env steps one iteration is planned for (sizes the learning-rate schedules)."""
    episode = args.max_episode_steps or max(1, args.max_turns // 2)
    return max(1, args.rollout_batch_size * min(episode, 8))


def build_critic(config: Any, model: Any, tokenizer: Any) -> tuple[Critic, CriticTrainer]:
    """Coach's critic for a run config, from ``critic_model_name_or_path`` (default: the policy's backbone), and its
    optimiser, whose schedule is planned for the run's critic steps."""
    args = config.coach
    if args.critic_model_name_or_path:
        critic = Critic.from_pretrained_lm(args.critic_model_name_or_path, seed=int(args.seed),
                                           action_targets=args.critic_action_targets).to(args.device)
    else:
        critic = Critic.from_pretrained_lm(model, tokenizer, seed=int(args.seed), action_targets=args.critic_action_targets)
    if checkpointing_requested(args):
        # The critic is the policy's size: the config's checkpointing covers its updates as it covers the actor's.
        enable_checkpointing(critic.backbone, args)
    per_iteration = estimated_steps_per_iteration(args)
    critic_steps = int(args.total_iterations) * (args.critic_updates_per_iteration
                                                 or math.ceil(per_iteration / args.critic_batch_size))
    return critic, CriticTrainer.from_config(critic, args, max(1, critic_steps))


@register_algorithm("coach", config=CoachConfig)
def build_coach(config: Any, model: Any, tokenizer: Any, **parts: Any) -> CoachAlgorithm:
    """Android Coach for a run config: the critic of :func:`build_critic`, and a :class:`CoachTrainer` on the policy."""
    args = config.coach
    critic, critic_trainer = build_critic(config, model, tokenizer)
    iterations = int(args.total_iterations)
    states = args.actor_states_per_iteration or estimated_steps_per_iteration(args)
    actor = CoachTrainer(model, critic, args, tokenizer, num_training_steps=max(1, iterations * max(1, states // 2)))
    # The run's trackers (coach_rl.trackers) report every record; TRL's own reporting callbacks would write a
    # second, partial copy into transformers' default runs/<date>_<host> in the working folder.
    for callback in get_reporting_integration_callbacks(args.report_to):
        actor.remove_callback(callback)
    return CoachAlgorithm(actor, critic, critic_trainer, critic_updates_per_iteration=args.critic_updates_per_iteration,
                          critic_batch_size=args.critic_batch_size,
                          actor_states_per_iteration=args.actor_states_per_iteration,
                          prm_candidates=int(args.critic_prm_candidates),
                          execute_best_of=int(args.coach_execute_best_of))


# -- the actor on TRL: CoachTrainer -------------------------------------------------------------------------------


#: A critic-like scorer: ``scorer(states, actions) -> one float per pair``.
Scorer = Callable[[list[str], list[str]], Sequence[float] | torch.Tensor]


def completion_text(completion: Any) -> str:
    """The action text of one TRL completion: the string itself, or the text of the last assistant message.

    TRL hands reward functions plain strings for plain-text prompts and ``[{"role": "assistant", "content": ...}]``
    for conversational ones (``content`` a string or a list of ``{"type": "text"}`` parts).
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content")
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping) and part.get("type") == "text")
    raise TypeError(f"a completion must be a string or a list of chat messages, got {type(completion).__name__}")


class CriticReward:
    """TRL reward function returning the critic's ``Q(s, a_i)`` for each completion (``a_i`` = the completion text).

    The state text comes from the dataset column ``state_column`` (TRL passes every extra column to reward
    functions); rows without it use ``state_fn(prompt)`` (``CoachTrainer`` sets the policy's own chat
    template, so the critic reads state + action exactly as the policy wrote it). The scores of the last
    call are kept in :attr:`last_scores` so the trainer can rebuild ACLOO from the raw values. A NaN/inf Q (a broken
    critic) comes back as NaN and is counted in :attr:`last_nonfinite`; ``CoachTrainer`` leaves its group of K out.
    Deliberately not an ``nn.Module``: TRL would treat a module as a sequence-classification reward model.
    """

    __name__ = "critic"

    def __init__(
        self,
        critic: Critic | Scorer,
        *,
        state_column: str = "state",
        batch_size: int = 8,
        state_fn: Callable[[Any], str] | None = None,
    ) -> None:
        """Wrap a :class:`coach_rl.critic.Critic` (scored with ``Critic.score``) or any ``scorer(states, actions)``."""
        if not (isinstance(critic, Critic) or callable(critic)):
            raise TypeError(f"critic must be a coach_rl Critic or a callable scorer(states, actions), got "
                            f"{type(critic).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(state_column, str) or not state_column:
            raise ValueError(f"state_column must be a non-empty column name, got {state_column!r}")
        self.critic = critic
        self.state_column = state_column
        self.batch_size = batch_size
        self.state_fn = state_fn
        self.last_scores: torch.Tensor | None = None
        self.last_nonfinite = 0
        """How many of the last call's Q values were NaN/inf (returned as NaN)."""
        self.last_states: list[str] = []
        self.last_actions: list[str] = []

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
        """Score every (state, completion) pair; TRL's reward-function signature."""
        states = kwargs.get(self.state_column)
        if states is None:
            if self.state_fn is None:
                raise ValueError(
                    f"the batch has no {self.state_column!r} column (the critic's state text) and no state_fn "
                    "was given to derive it from the prompt"
                )
            states = [self.state_fn(p) for p in prompts]
        states = list(states)
        bad = [i for i, s in enumerate(states) if not isinstance(s, str)]
        if bad:
            raise TypeError(f"the {self.state_column!r} column must hold strings; row {bad[0]} holds "
                            f"{type(states[bad[0]]).__name__}")
        actions = [completion_text(c) for c in completions]
        if isinstance(self.critic, Critic):
            scores = self.critic.score(states, actions, batch_size=self.batch_size)
        else:
            scores = torch.as_tensor(self.critic(states, actions), dtype=torch.float32).detach().cpu().flatten()
        if scores.numel() != len(actions):
            raise ValueError(f"the critic returned {scores.numel()} scores for {len(actions)} completions")
        finite = torch.isfinite(scores)
        self.last_nonfinite = int((~finite).sum())
        if self.last_nonfinite:  # NaN/inf Q (a broken critic): kept as NaN, CoachTrainer leaves their groups out
            scores = torch.where(finite, scores, torch.full_like(scores, math.nan))
        self.last_scores = scores.float()
        self.last_states, self.last_actions = states, actions
        return self.last_scores.tolist()


def _check_coach_args(args: GRPOConfig) -> None:
    """Reject settings under which TRL's loss is no longer Eq. 4 or the advantages no longer ACLOO."""
    if not isinstance(args, GRPOConfig):
        raise TypeError(f"args must be a CoachConfig (a trl.GRPOConfig), got {type(args).__name__}")
    if args.loss_type not in COACH_LOSS_TYPES:
        raise ValueError(
            f"loss_type={args.loss_type!r} is not the PPO clipped surrogate of Eq. 4; use one of {COACH_LOSS_TYPES} "
            "('dapo', the default, is verl's token-mean)"
        )
    if args.importance_sampling_level != "token":
        raise ValueError(
            f"importance_sampling_level={args.importance_sampling_level!r}: Eq. 4 clips the per-token ratio, use 'token'"
        )
    if args.reward_weights is not None and list(args.reward_weights) != [1.0]:
        raise ValueError(f"reward_weights must be None (the critic is the only reward), got {args.reward_weights!r}")
    single = args.num_generations == 1 and getattr(args, "coach_advantage", "acloo") == "q"
    if args.num_generations is None or (args.num_generations < 2 and not single):
        raise ValueError(f"num_generations (K) must be >= 2 for ACLOO (1 with coach_advantage='q'), got "
                         f"{args.num_generations!r}")
    if not (isinstance(args.beta, (int, float)) and math.isfinite(args.beta) and args.beta >= 0):
        raise ValueError(f"beta (the KL weight to the starting policy) must be a number >= 0, got {args.beta!r}")
    if args.beta and args.sync_ref_model:
        raise ValueError("sync_ref_model=True: Android Coach's KL anchor is the policy the run started from "
                         "(beta > 0), which it does not move; use sync_ref_model=False")
    extras = {"top_entropy_quantile": (args.top_entropy_quantile, 1.0),
              "entropy_coef": (getattr(args, "entropy_coef", 0.0) or 0.0, 0.0),
              "off_policy_mask_threshold": (args.off_policy_mask_threshold, None), "delta": (args.delta, None)}
    for name, (value, eq4) in extras.items():
        if value != eq4:
            raise ValueError(f"{name}={value!r} adds a term Eq. 4 does not have; Android Coach's actor loss is "
                             f"coach_rl.losses.ppo_clip_loss (plus beta * kl_to_reference) ({name}={eq4!r})")
    if args.epsilon_high is not None and args.epsilon_high != args.epsilon:
        raise ValueError(f"epsilon_high={args.epsilon_high!r} != epsilon={args.epsilon!r}: Eq. 4 clips symmetrically")


class CoachTrainer(GRPOTrainer):
    """``trl.GRPOTrainer`` for Android Coach: rows are stored states, K actions each, critic Q as reward, ACLOO advantages.

    Use it inside the outer loop with :meth:`actor_update` (one object for the whole run), or as a plain TRL
    trainer with ``train_dataset`` and :meth:`train`. See the module docstring for the loss correspondence.
    """

    def __init__(
        self,
        model: Any,
        critic: Critic | Scorer,
        args: GRPOConfig,
        processing_class: Any,
        train_dataset: Dataset | None = None,
        *,
        state_column: str = "state",
        num_training_steps: int | None = None,
        callbacks: list[Any] | None = None,
        peft_config: Any = None,
    ) -> None:
        """Build the trainer; the critic becomes TRL's only reward function.

        Args:
            model: the policy (a loaded ``PreTrainedModel`` or a checkpoint path).
            critic: the :class:`coach_rl.critic.Critic`, or any ``scorer(states, actions) -> floats`` (tests, toy critics).
            args: a :class:`coach_rl.config.CoachConfig` (any ``GRPOConfig`` passing the Eq. 4 checks works).
            processing_class: the policy's tokenizer (text policies) or processor (VLMs).
            train_dataset: rows for :meth:`train`; not needed when only :meth:`actor_update` is used.
            state_column: the column holding the critic's state text (default ``"state"``); rows without it get
                the policy's templated prompt (:meth:`state_text`).
            num_training_steps: optimiser steps the learning-rate schedule is planned for in :meth:`actor_update`.
                Default ``args.max_steps`` when set, else ``args.total_iterations`` (CoachConfig) or 1. Only matters
                for decaying schedules; constant schedules (verl's actor default) ignore it.
            callbacks, peft_config: passed to ``GRPOTrainer``.
        """
        _check_coach_args(args)
        if processing_class is None:
            raise ValueError("processing_class is required: pass the policy's tokenizer or processor")
        self.critic_reward = CriticReward(
            critic,
            state_column=state_column,
            batch_size=int(getattr(args, "critic_batch_size", 8)),
            state_fn=self.state_text,
        )
        self.critic = critic
        self.state_column = state_column
        placeholder = train_dataset is None
        if placeholder:
            # GRPOTrainer insists on a dataset; actor_update feeds rows itself and never reads this one.
            train_dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": ""}]]})
        beta = float(args.beta)
        # beta > 0: the KL anchor is the policy as this trainer receives it (the warm-up, or init_from's policy).
        # TRL would reload it from the model's name_or_path, which after a resume is the run's latest checkpoint.
        reference = copy.deepcopy(model) if beta and isinstance(model, torch.nn.Module) and peft_config is None \
            and not is_peft_model(model) else None
        if reference is not None:
            args.beta = 0.0
        try:
            super().__init__(
                model=model,
                reward_funcs=[self.critic_reward],
                args=args,
                train_dataset=train_dataset,
                processing_class=processing_class,
                callbacks=callbacks,
                peft_config=peft_config,
            )
        finally:
            args.beta = beta
        if reference is not None:
            self.beta = beta
            self.ref_model = self._prepare_reference(reference)
        self._has_placeholder_dataset = placeholder
        if (args.bf16 or args.fp16) and self.accelerator.device.type == "cpu":
            warnings.warn(
                f"{'bf16' if args.bf16 else 'fp16'} autocast is on (TRL's default) while training on CPU, where it is "
                "emulated on most processors and several times slower (measured ~3.5x on the actor step of a tiny "
                "Qwen2); set bf16=False for CPU runs",
                RuntimeWarning,
                stacklevel=2,
            )
        if num_training_steps is None:
            if args.max_steps and args.max_steps > 0:
                num_training_steps = int(args.max_steps)
            else:
                num_training_steps = int(getattr(args, "total_iterations", 1) or 1)
        if isinstance(num_training_steps, bool) or not isinstance(num_training_steps, int) or num_training_steps < 1:
            raise ValueError(f"num_training_steps must be a positive integer, got {num_training_steps!r}")
        self.num_training_steps = num_training_steps
        self.oracle_format: Any = None
        """The policy's ``PolicyFormat``: set it to label sampled replies against rows' ``oracle`` (diagnostics)."""
        self.row_generator = torch.Generator().manual_seed(int(args.seed))
        self._row_queue: list[int] = []
        self._loop_ready = False
        self._warned_schedule_end = False
        self.nonfinite = NonFiniteMonitor(int(getattr(args, "nonfinite_patience", 3)))
        """Counts NaN/inf events (``nonfinite/*`` metrics); the training loop shares one monitor with the policy."""
        self._nonfinite_rows: list[int] = []
        self._batch_unusable: str | None = None
        self.shared_update_rows = 0
        """Rows whose log-probs came from a shared prompt pass (``share_prompt_update``), over the trainer's life."""
        self.shared_update_prompts = 0
        """Prompt passes those rows took (one per distinct prompt of a forward)."""

    def _prepare_reference(self, reference: torch.nn.Module) -> torch.nn.Module:
        """A frozen copy of the starting policy, set up as TRL sets up its ``ref_model`` (TRL then computes
        ``ref_per_token_logps`` for every generated batch because ``self.beta`` is not 0)."""
        reference.eval()
        reference.requires_grad_(False)
        if self.args.disable_dropout:
            disable_dropout_in_model(reference)
        add_fused_lm_head(reference, temperature=self.temperature, cast_lm_head_to_fp32=self.args.cast_lm_head_to_fp32)
        if self.is_deepspeed_enabled:
            return prepare_deepspeed(reference, self.accelerator)
        if self.is_fsdp_enabled:
            return prepare_fsdp(reference, self.accelerator)
        return self.accelerator.prepare_model(reference, evaluation_mode=True)

    @property
    def kl_reference(self) -> torch.nn.Module | None:
        """The KL anchor (``beta > 0``, a frozen copy of the starting policy), unwrapped; None without one (``beta``
        = 0, or a PEFT policy, whose reference is the adapter-free base model)."""
        if not self.beta or self.ref_model is None:
            return None
        return self.accelerator.unwrap_model(self.ref_model)

    def reference_state_dict(self) -> dict[str, torch.Tensor] | None:
        """The KL anchor's weights, for checkpoints (after a resume the policy has moved on); None without one."""
        reference = self.kl_reference
        if reference is None:
            return None
        return {k: v.detach().clone() for k, v in reference.state_dict().items()}

    def load_reference_state_dict(self, state: Mapping[str, torch.Tensor]) -> None:
        """Restore :meth:`reference_state_dict` into the KL anchor."""
        reference = self.kl_reference
        if reference is None:
            raise ValueError("this trainer has no KL reference (beta = 0 or a PEFT policy, whose reference is the "
                             "adapter-free base model)")
        reference.load_state_dict(state)

    # -- states ---------------------------------------------------------------------------------------

    def state_text(self, prompt: Any) -> str:
        """The policy's templated prompt for ``prompt`` (messages or text): the default state text of the critic.

        Same chat template and arguments TRL uses to generate, so ``state + completion`` is exactly the
        sequence the policy produced. (Images render as the template's placeholders.)
        """
        if isinstance(prompt, str):
            return prompt
        return apply_chat_template({"prompt": prompt}, self.processing_class, **self.chat_template_kwargs)["prompt"]

    def rows_from_steps(
        self,
        steps: Iterable[Any],
        *,
        messages_fn: Callable[[Any], list[dict[str, Any]]] | None = None,
        state_fn: Callable[[Any, list[dict[str, Any]]], str] | None = None,
        mode: str = "xml",
    ) -> list[dict[str, Any]]:
        """Training rows from stored states (e.g. :class:`coach_rl.replay.ReplayStep` read back from the buffer).

        ``prompt``: ``messages_fn(step)`` when given, else the messages the collector recorded (the
        ``ReplayStep``'s ``prompt`` column), else ``step.policy_messages(mode)``. ``state``: ``state_fn(step,
        prompt)`` when given, else the recorded ``prompt_text`` (the templated prompt the policy saw), else
        :meth:`state_text` of the prompt. The critic must be trained on the same state strings (and the reply as
        the action).
        """
        rows: list[dict[str, Any]] = []
        for i, step in enumerate(steps):
            if messages_fn is None and not isinstance(step, ReplayStep):
                raise TypeError(f"steps[{i}] must be a coach_rl.replay.ReplayStep, got {type(step).__name__}; or "
                                "pass messages_fn")
            recorded = isinstance(step, ReplayStep) and bool(step.prompt)
            if messages_fn is not None:
                prompt = messages_fn(step)
            elif recorded:
                prompt = step.prompt
            else:
                prompt = step.policy_messages(mode)
            if state_fn is not None:
                state = state_fn(step, prompt)
            elif isinstance(step, ReplayStep) and step.prompt_text:
                state = step.prompt_text
            else:
                state = self.state_text(prompt)
            rows.append({"prompt": prompt, self.state_column: state})
        return rows

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """TRL's ``train`` on ``train_dataset`` (rows of stored states); not mixable with :meth:`actor_update`."""
        if self._has_placeholder_dataset:
            raise ValueError("CoachTrainer was built without train_dataset: call actor_update(rows), or pass a "
                             "dataset of stored states to train()")
        if self._loop_ready:
            raise RuntimeError("actor_update already set up this trainer's optimiser; keep using actor_update")
        return super().train(*args, **kwargs)

    # -- K actions from one prompt pass (share_prompt_prefix) --------------------------------------------

    def _group_size(self) -> int:
        """K of the batch being generated, or 0 when its prompts are not shared (vLLM, tools, the option off)."""
        if (not getattr(self.args, "share_prompt_prefix", False) or self.use_vllm or self.tools
                or getattr(self, "use_transformers_continuous_batching", False)):
            return 0
        k = self.num_generations if self.model.training else self.num_generations_eval
        return int(k or 0) if (k or 0) >= 2 else 0

    def _tokenize_prompts(self, prompts: list) -> Any:
        """TRL's prompt tokenisation, run once per state when the batch holds each state's prompt K times in a row.

        The screenshot of a state is then resized and normalised once instead of K times; the result is expanded
        back to one entry per row, so everything downstream sees TRL's layout.
        """
        k = self._group_size()
        if not k or len(prompts) % k or any(prompts[i] != prompts[i - i % k] for i in range(len(prompts))):
            return super()._tokenize_prompts(prompts)
        prompt_ids, images, fields = super()._tokenize_prompts(prompts[::k])
        layout = field_layout(fields, images_per_row(images, len(prompt_ids)))
        if layout is None:
            return super()._tokenize_prompts(prompts)
        rows = [i for i in range(len(prompt_ids)) for _ in range(k)]
        return ([list(prompt_ids[i]) for i in rows], None if images is None else [images[i] for i in rows],
                layout.take(fields, rows))

    def _generate_single_turn(self, prompt_ids: list, images: Any, multimodal_fields: dict, num_generations: int,
                              has_tool_images: bool = False) -> tuple[list[list[int]], Any]:
        """TRL's Transformers generation, or, with ``share_prompt_prefix``, one prompt pass per group of K rows.

        The rows of a generation batch are each state's prompt K times in a row (TRL's layout); when every group
        really is K copies of one prompt and image, :func:`coach_rl.sampling.generate_shared_prefix` encodes the
        prompt (and its screenshot) once and samples the K replies from the shared KV cache. Anything else goes to
        TRL unchanged. Either way a :class:`coach_rl.nonfinite.NonFiniteLogits` processor guards the sampling: a row
        whose logits turn NaN/inf ends there (EOS) and is flagged (its advantage is set to 0, ``nonfinite/actor_sample``).
        """
        guard = NonFiniteLogits(self.eos_token_ids)
        with guarded_generate(self.accelerator.unwrap_model(self.model), guard):
            out = self._generate_rows(prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
        self._nonfinite_rows.extend(guard.rows())
        return out

    def _generate_rows(self, prompt_ids: list, images: Any, multimodal_fields: dict, num_generations: int,
                       has_tool_images: bool) -> tuple[list[list[int]], Any]:
        k = self._group_size()
        shared = self._shared_groups(prompt_ids, images, multimodal_fields, k) if k else None
        if shared is None:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                 has_tool_images)
        unique_ids, fields = shared
        tensors = [torch.tensor(ids) for ids in unique_ids]
        inputs: dict[str, Any] = {
            "input_ids": pad(tensors, padding_value=self._tokenizer.pad_token_id, padding_side="left",
                             pad_to_multiple_of=self.pad_to_multiple_of),
            "attention_mask": pad([torch.ones_like(t) for t in tensors], padding_value=0, padding_side="left",
                                  pad_to_multiple_of=self.pad_to_multiple_of),
        }
        for key, value in fields.items():
            if isinstance(value, torch.Tensor):
                inputs[key] = value
            elif isinstance(value, list) and value and isinstance(value[0], list):  # per-token: padded like the ids
                inputs[key] = pad([torch.tensor(x) for x in value], padding_value=0, padding_side="left",
                                  pad_to_multiple_of=self.pad_to_multiple_of)
            else:
                inputs[key] = torch.tensor(np.array(value))
        inputs = Trainer._prepare_inputs(self, inputs)
        ids, mask = inputs.pop("input_ids"), inputs.pop("attention_mask")
        with (
            profiling_context(self, "transformers.generate"),
            unwrap_model_for_generation(
                self.model_wrapped, self.accelerator, gather_deepspeed3_params=self.args.ds3_gather_for_generation,
                generation_kwargs=self.generation_kwargs,
                gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs,
            ) as unwrapped_model,
            torch.no_grad(),
            self._dist.summon_full_params(self.model_wrapped, recurse=False),
        ):
            sequences = generate_shared_prefix(unwrapped_model, ids, mask, k, prefill_inputs=inputs,
                                               generation_config=self.generation_config)
        completions = sequences[:, ids.shape[1]:].cpu()
        eos = torch.isin(completions, torch.tensor(self.eos_token_ids))
        ends = torch.where(eos.any(dim=1), eos.int().argmax(dim=1), completions.shape[1])
        return [row[: int(end) + 1].tolist() for row, end in zip(completions, ends)], None

    def _shared_groups(self, prompt_ids: list, images: Any, fields: dict, k: int) -> tuple[list, dict] | None:
        """The distinct prompts and their multimodal fields when the rows are groups of K identical ones, else None."""
        n = len(prompt_ids)
        if n % k or any(list(prompt_ids[i]) != list(prompt_ids[i - i % k]) for i in range(n)):
            return None
        layout = field_layout(fields, images_per_row(images, n))
        if layout is None or not layout.groups_equal(fields, k):
            return None
        return [prompt_ids[i] for i in range(0, n, k)], layout.take(fields, list(range(0, n, k)))

    # -- the K replies of a state share one prompt pass in the update (share_prompt_update) ---------------

    def _shared_update_attention(self, model: Any, multimodal: Mapping[str, Any], compute_aux_loss: bool) -> str | None:
        """The attention the packed update runs with, or None when this forward keeps TRL's unshared rows."""
        if not getattr(self.args, "share_prompt_update", False) or compute_aux_loss:
            return None
        given = {key for key, value in multimodal.items() if value is not None}
        unwrapped = self.accelerator.unwrap_model(model)
        config = getattr(unwrapped, "config", None)
        if config is None:
            return None
        if getattr(config, "vision_config", None) is not None or given:
            # a Qwen-VL-style policy (images per row, multimodal RoPE from get_rope_index); any other layout of
            # multimodal inputs keeps the unshared rows
            base = getattr(unwrapped, "model", None)
            if (not callable(getattr(base, "get_rope_index", None)) or not given <= VLM_FIELDS or not {"pixel_values", "image_grid_thw", "num_images"} <= given):
                return None
        attention = getattr(config, "_attn_implementation", None)
        if attention not in SHARED_ATTENTION:
            if not getattr(self, "_warned_shared_attention", False):
                self._warned_shared_attention = True
                warnings.warn(f"share_prompt_update: the policy's {attention!r} attention takes no block mask; the "
                              "actor update runs the unshared rows (use attn_implementation='sdpa' to share)",
                              RuntimeWarning, stacklevel=3)
            return None
        return attention

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                                           logits_to_keep: int, batch_size: int | None = None,
                                           compute_entropy: bool = False, compute_aux_loss: bool = False,
                                           **multimodal: Any) -> tuple[torch.Tensor, torch.Tensor | None, Any]:
        """TRL's per-token log-probs, or with ``share_prompt_update`` one packed pass per distinct prompt.

        Rows with the same prompt (the K replies of a state) become one sequence, prompt once, replies as blocks
        that see the prompt and themselves (:mod:`coach_rl.prefix_update`): the same log-probs and entropies, the
        prompt's cost paid once. Every caller goes through here: the loss forward, and the no-grad passes for the
        sampling policy's (``old``) and the KL reference's log-probs.
        """
        attention = self._shared_update_attention(model, multimodal, compute_aux_loss)
        groups = group_rows(input_ids, attention_mask, logits_to_keep) if attention else None
        vlm = attention is not None and multimodal.get("pixel_values") is not None
        if vlm:
            groups = split_by_images(groups, multimodal)
        if groups is None or max(len(g) for g in groups) < 2:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **multimodal)
        pad = self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None else 0
        extra: dict[str, Any] = {}
        if vlm:
            extra = vlm_prompt_inputs(self.accelerator.unwrap_model(model), input_ids, attention_mask,
                                      logits_to_keep, groups, multimodal)
        logps, entropies = shared_prefix_logps(
            model, input_ids, attention_mask, logits_to_keep, groups, attention=attention,
            compute_entropy=compute_entropy, rows_per_chunk=batch_size, autocast=self.accelerator.autocast,
            pad_id=pad, **extra)
        self.shared_update_rows += input_ids.shape[0]
        self.shared_update_prompts += len(groups)
        return logps, entropies, None

    def _prepare_inputs(self, generation_batch: Any) -> Any:
        """TRL's buffering of a generated batch, shuffling whole groups of K (not rows) under ``share_prompt_update``.

        TRL shuffles the rows of a generation batch before splitting it into micro-batches, which scatters a state's
        K replies over several of them; shuffling the groups keeps them together, so each micro-batch shares its
        prompts. (With one micro-batch per generation the order does not matter: TRL's shuffle is kept.)
        """
        k = int(self.num_generations or 1)
        if (not self.model.training or not getattr(self.args, "share_prompt_update", False) or k < 2
                or self.args.steps_per_generation == 1):
            return super()._prepare_inputs(generation_batch)
        generate_every = self.args.steps_per_generation * self.num_iterations
        if self._step % generate_every == 0 or self._buffered_inputs is None:
            batch = split_pixel_values_by_grid(self._generate_and_score_completions(generation_batch))
            batch = shuffle_groups(batch, k)
            parts = split_tensor_dict(batch, self.args.steps_per_generation)
            self._buffered_inputs = [unsplit_pixel_values_by_grid(part) for part in parts]
        return self._buffered_inputs[self._step % self.args.steps_per_generation]

    # -- advantages -----------------------------------------------------------------------------------

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """TRL's generation and scoring, then GRPO's advantages replaced by ACLOO over each group of K.

        TRL lays completions out as K consecutive rows per prompt, gathers the rewards of every process in
        process order before grouping, and keeps this process's slice; the same is done here with the
        critic's raw scores, so groups split across processes are handled as TRL handles them.
        """
        self.critic_reward.last_scores = None
        self._nonfinite_rows = []
        output = super()._generate_and_score_completions(inputs)
        mode = "train" if self.model.training else "eval"
        k = self.num_generations if mode == "train" else self.num_generations_eval
        plain_q = getattr(self.args, "coach_advantage", "acloo") == "q"  # the no-baseline ablation (K = 1 allowed)
        if k is None or k < (1 if plain_q else 2):
            raise ValueError(f"ACLOO needs K >= 2 completions per state, got num_generations={k!r} in {mode} mode")
        local = self.critic_reward.last_scores
        if local is None or local.numel() != len(inputs):
            raise RuntimeError("the critic reward did not score this batch (was the reward function replaced?)")
        device = output["advantages"].device
        q_all = self.accelerator.gather(local.to(device))
        if q_all.numel() % k:
            raise RuntimeError(f"{q_all.numel()} scored completions do not form whole groups of K={k}")
        # A group with a NaN/inf Q (a broken critic) is left out: its Q count as 0 for ACLOO, its advantages are 0.
        bad_group = ~torch.isfinite(q_all.view(-1, k)).all(dim=1)
        grouped = torch.where(bad_group[:, None], torch.zeros_like(q_all.view(-1, k)), q_all.view(-1, k))
        labels = self._oracle_labels(inputs, grouped)
        q_used = grouped.reshape(-1)
        sim_oracle = getattr(self.args, "coach_q_source", "critic") == "sim-oracle"  # the perfect-critic diagnostic
        if sim_oracle:
            if labels is None or bool(torch.isnan(labels).any()):
                raise ValueError("coach_q_source='sim-oracle' needs every state's oracle (the sim, with "
                                 "oracle_diagnostics on) and the policy's format to read the replies")
            q_used = labels.to(q_all.dtype).to(device).reshape(-1)
            sigma = float(getattr(self.args, "coach_oracle_noise", 0.0))
            if sigma:  # a consistent but imperfect critic: the same (state, reply) always gets the same error
                q_used = q_used + sigma * fixed_normal(self.critic_reward.last_states,
                                                       self.critic_reward.last_actions).to(q_used)
        if plain_q:
            advantages = q_used.reshape(-1).clone()
        else:
            min_spread = float(getattr(self.args, "coach_min_q_spread", 0.0))  # beyond the paper; 0 is Eq. 3
            advantages = acloo(q_used.view(-1, k), min_spread=min_spread).reshape(-1)
        start = self.accelerator.process_index * len(inputs)
        advantages = self._drop_nonfinite(advantages, bad_group if not sim_oracle else None, k, start, len(inputs))
        output["advantages"] = advantages[start:start + len(inputs)].to(output["advantages"].dtype)

        # The completions table logs TRL's GRPO advantages for this batch: swap in ours.
        logged = self._logs["advantages"]
        for _ in range(min(len(logged), advantages.numel())):
            logged.pop()
        logged.extend(advantages.tolist())
        self._oracle_metrics(grouped, labels, advantages, mode)
        self._metrics[mode]["acloo/advantage_abs_mean"].append(advantages.abs().mean().item())
        self._metrics[mode]["acloo/q_mean"].append(q_all.nanmean().item())
        self._metrics[mode]["acloo/q_group_spread"].append((grouped.max(1).values - grouped.min(1).values).mean().item())
        return output

    def _drop_nonfinite(self, advantages: torch.Tensor, bad_group: torch.Tensor | None, k: int, start: int,
                        local: int) -> torch.Tensor:
        """Advantages with every unusable sample at 0, counted: a NaN/inf Q in its group, logits that turned NaN/inf
        while it was sampled, or a non-finite advantage. When nothing in the batch is usable, the optimiser steps it
        serves are skipped (:meth:`actor_update`)."""
        monitor = self.nonfinite
        states = self.critic_reward.last_states
        where = lambda row: f"state {states[row]!r}" if 0 <= row < len(states) else f"row {row}"  # noqa: E731
        unusable = torch.zeros_like(advantages, dtype=torch.bool)
        if bad_group is not None:
            rows = bad_group.repeat_interleave(k)
            unusable |= rows
            if bool(bad_group.any()):
                first = int(torch.nonzero(rows)[0]) - start
                monitor.bad("critic_score", where(first), f"the critic gave NaN/inf Q for {int(rows.sum())} sampled "
                            "action(s); their states are left out of this update", count=int(rows.sum()),
                            streak=bool(bad_group.all()))
            else:
                monitor.ok("critic_score")
        flagged = sorted(set(self._nonfinite_rows))
        if flagged:
            unusable[torch.tensor([start + r for r in flagged], device=advantages.device)] = True
            monitor.bad("actor_sample", where(flagged[0]), f"{len(flagged)} of {local} sampled replies hit NaN/inf "
                        "logits (ended there; advantage 0)", count=len(flagged), streak=len(flagged) == local)
        else:
            monitor.ok("actor_sample")
        bad_advantage = ~torch.isfinite(advantages)
        if bool(bad_advantage.any()):
            first = int(torch.nonzero(bad_advantage)[0]) - start
            monitor.bad("advantage", where(first), f"{int(bad_advantage.sum())} advantage(s) were NaN/inf (set to 0)",
                        count=int(bad_advantage.sum()))
        else:
            monitor.ok("advantage")
        unusable |= bad_advantage
        self._batch_unusable = None
        if bool(unusable.all()):
            self._batch_unusable = "no sampled action of this batch is usable (NaN/inf Q, logits or advantages)"
        return torch.where(unusable, torch.zeros_like(advantages), advantages)

    def _oracle_labels(self, inputs: list[dict[str, Any]], q: torch.Tensor) -> torch.Tensor | None:
        """The sim oracle's label of each sampled reply (groups x K: 1 the expert's action, 0 not, NaN unknown).

        None unless rows carry the state's oracle (an ``oracle`` column, :class:`coach_rl.diagnostics.StateOracle`
        JSON) and :attr:`oracle_format` can read the replies; one process only (the rows of other processes are
        not here).
        """
        if self.oracle_format is None or self.accelerator.num_processes != 1:
            return None
        oracles = [row.get("oracle") for row in inputs]
        if not any(oracles) or len(oracles) != q.numel():
            return None
        from coach_rl.diagnostics import StateOracle

        parsed: dict[str, StateOracle] = {}
        labels: list[float] = []
        for text, action in zip(oracles, self.critic_reward.last_actions):
            if not text:
                labels.append(math.nan)
                continue
            oracle = parsed.get(text) or parsed.setdefault(text, StateOracle.from_json(text))
            labels.append(float(oracle.label_reply(action, self.oracle_format)))
        return torch.tensor(labels, dtype=torch.float64).view_as(q)

    def _oracle_metrics(self, q: torch.Tensor, y: torch.Tensor | None, advantages: torch.Tensor, mode: str) -> None:
        """``diag/`` metrics: the critic's ranking of the K actions (its own Q, whatever scored them for the
        advantages) and the advantages' signs against the sim oracle's labels ``y`` (:meth:`_oracle_labels`)."""
        if y is None:
            return
        from coach_rl.diagnostics import advantage_agreement, ranking_metrics

        known = ~torch.isnan(y).any(dim=1)
        metrics = self._metrics[mode]
        if bool(known.any()):
            ranking = ranking_metrics(q[known].cpu(), y[known].bool())
            for key, value in ranking.items():
                if math.isfinite(value):  # undefined this batch (e.g. no mixed group): not logged
                    metrics[f"diag/critic_{key}"].append(value)
        for key, value in advantage_agreement(advantages.cpu(), y.flatten()).items():
            if math.isfinite(value):
                metrics[f"diag/adv_{key}"].append(value)

    # -- the loss ---------------------------------------------------------------------------------------

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        """Eq. 4 as :func:`coach_rl.losses.ppo_clip_loss` computes it: the readable formula is the one that runs.

        TRL supplies the per-token log-probs of the K completions (and, when a generated batch is reused, the
        log-probs of the policy that sampled them); the loss is ``ppo_clip_loss`` over the completion tokens,
        re-weighted from its micro-batch token mean to TRL's "dapo" normaliser (the tokens of the whole
        generation batch, split over gradient accumulation) so every token of the batch weighs the same.
        """
        prompt_ids, prompt_mask = inputs["prompt_ids"], inputs["prompt_mask"]
        completion_ids, completion_mask = inputs["completion_ids"], inputs["completion_mask"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)
        multimodal = {key: inputs.get(key) for key in (
            "pixel_values", "image_grid_thw", "num_images", "pixel_attention_mask", "spatial_shapes", "num_tiles",
            "image_sizes", "token_type_ids", "mm_token_type_ids", "image_position_ids")}
        logps, entropies, _ = self._get_per_token_logps_and_entropies(model, input_ids, attention_mask,
                                                                      completion_ids.size(1), compute_entropy=True,
                                                                      **multimodal)
        old = inputs.get("old_per_token_logps")
        old = logps.detach() if old is None else old
        mask = completion_mask if "tool_mask" not in inputs else completion_mask * inputs["tool_mask"]
        out = ppo_clip_loss(logps, old, inputs["advantages"], clip_eps=float(self.epsilon_low), mask=mask)
        mode = "train" if self.model.training else "eval"
        metrics = self._metrics[mode]
        total = out.loss
        if self.beta != 0.0:  # beyond the paper: beta * KL to the starting policy (CoachConfig.beta)
            kl = kl_to_reference(logps, inputs["ref_per_token_logps"], mask,
                                 logp_old=old if self.args.use_bias_correction_kl else None)
            total = total + self.beta * kl
            metrics["kl"].append(self.accelerator.gather(kl.detach()).nanmean().item())
        tokens = mask.sum().clamp(min=1.0)
        normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        if mode == "train":
            normalizer = normalizer * self.current_gradient_accumulation_steps / self.args.steps_per_generation
        loss = rescale_to_batch_tokens(total, tokens, normalizer)
        metrics["clip_ratio/region_mean"].append(self.accelerator.gather(out.clip_fraction).nanmean().item())
        metrics["ppo/approx_kl"].append(self.accelerator.gather(out.approx_kl).nanmean().item())
        entropy = (entropies.detach() * mask).sum() / tokens
        metrics["entropy"].append(self.accelerator.gather(entropy).nanmean().item())
        return loss

    # -- the actor update inside the outer loop -----------------------------------------------------------

    def _setup_actor_loop(self) -> None:
        """Create optimiser and schedule once and prepare them with accelerate (single process or DDP)."""
        if self._loop_ready:
            return
        if self.is_deepspeed_enabled or self.is_fsdp_enabled:
            raise NotImplementedError(
                "actor_update drives the optimiser itself and supports one process or DDP; for DeepSpeed/FSDP use "
                "train() with a dataset of states"
            )
        self._enable_checkpointing()
        self.create_optimizer()
        model, self.optimizer = self.accelerator.prepare(self.model, self.optimizer)
        self.model_wrapped = model
        self.create_scheduler(num_training_steps=self.num_training_steps)
        for attr in ("model", "optimizer", "lr_scheduler"):
            setattr(self.callback_handler, attr, getattr(self, attr))
        self._loop_ready = True

    def _enable_checkpointing(self) -> None:
        """Turn on the config's gradient (activation) checkpointing, which Transformers' ``train()`` would have done.

        ``actor_update`` drives the optimiser itself and never enters ``Trainer.train``, where the flag takes effect:
        without this the flag was silently ignored, and at real size (Qwen2.5-VL-3B, 1,620 image tokens per
        screenshot) an update kept ~25 GB of activations per sampled action and ran out of an H200's memory at K = 4.
        """
        if checkpointing_requested(self.args):
            enable_checkpointing(self.model, self.args)

    def _check_rows(self, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
            raise TypeError(f"rows must be a list of dicts (one per stored state), got {type(rows).__name__}")
        if not rows:
            raise ValueError("rows is empty: the actor update needs at least one stored state")
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise TypeError(f"rows[{i}] must be a dict with 'prompt' (and the state column), got {type(row).__name__}")
            if "prompt" not in row:
                raise ValueError(f"rows[{i}] has no 'prompt' (the policy's chat messages for the state)")
            state = row.get(self.state_column)
            if state is not None and not isinstance(state, str):
                raise TypeError(f"rows[{i}][{self.state_column!r}] must be the critic's state text (str), got "
                                f"{type(state).__name__}")
        keys = set(rows[0])
        for i, row in enumerate(rows):
            if set(row) != keys:
                raise ValueError(f"rows[{i}] has columns {sorted(row)} but rows[0] has {sorted(keys)}: all rows need "
                                 "the same columns (TRL batches them)")
        return list(rows)

    def _next_states(self, rows: list[Mapping[str, Any]], n: int) -> list[Mapping[str, Any]]:
        """``n`` rows drawn without replacement from a seeded shuffle of ``rows``, reshuffled when used up."""
        picked: list[Mapping[str, Any]] = []
        while len(picked) < n:
            if not self._row_queue:
                self._row_queue = torch.randperm(len(rows), generator=self.row_generator).tolist()
            picked.append(rows[self._row_queue.pop(0)])
        return picked

    def _generation_batch(self, rows: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """This process's share of one generation batch: each drawn state repeated K times, as TRL's RepeatSampler."""
        k = self.num_generations
        global_size = self.args.generation_batch_size
        states = self._next_states(rows, global_size // k)
        batch = [dict(row) for row in states for _ in range(k)]
        local = global_size // self.accelerator.num_processes
        start = self.accelerator.process_index * local
        return batch[start:start + local]

    def actor_steps_for(self, num_rows: int) -> int:
        """Optimiser steps of one pass over ``num_rows`` states (the default of :meth:`actor_update`)."""
        if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 1:
            raise ValueError(f"num_rows must be a positive integer, got {num_rows!r}")
        states_per_generation = self.args.generation_batch_size // self.num_generations
        rounds = math.ceil(num_rows / states_per_generation)
        micro = rounds * self.args.steps_per_generation * self.num_iterations
        return max(1, math.ceil(micro / self.args.gradient_accumulation_steps))

    def actor_update(self, rows: Sequence[Mapping[str, Any]], num_steps: int | None = None, *,
                     log: bool = True) -> dict[str, float]:
        """Run ``num_steps`` actor optimiser steps on stored states (Algorithm 1, Phase 4); returns mean metrics.

        Each generation round draws ``generation_batch_size / K`` states from ``rows`` (a seeded shuffle,
        cycled), samples K actions per state, scores them with the critic, computes ACLOO and applies TRL's
        clipped loss over ``gradient_accumulation_steps`` micro-batches per optimiser step. A generated batch
        serves ``steps_per_generation * num_iterations`` micro-steps, as in TRL. ``num_steps`` defaults to
        one pass over ``rows`` (:meth:`actor_steps_for`). Rows are dicts with ``prompt`` (chat messages), the
        state column (critic text) and optionally ``image``/``images`` for VLM policies. The optimiser, the
        schedule and the counters persist across calls. With ``log`` the metrics also go to TRL's loggers.
        """
        rows = self._check_rows(rows)
        if num_steps is None:
            num_steps = self.actor_steps_for(len(rows))
        if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 1:
            raise ValueError(f"num_steps must be a positive integer, got {num_steps!r}")
        ga = self.args.gradient_accumulation_steps
        generate_every = self.args.steps_per_generation * self.num_iterations
        if (num_steps * ga) % generate_every:
            raise ValueError(
                f"num_steps={num_steps} x gradient_accumulation_steps={ga} micro-steps does not use up whole generated "
                f"batches (each serves steps_per_generation x num_iterations = {generate_every} micro-steps); pick "
                f"num_steps as a multiple of {generate_every // math.gcd(generate_every, ga)}"
            )
        self._setup_actor_loop()
        model = self.model_wrapped
        model.train()
        # Never reuse generations of earlier rows: each call starts on a fresh generation round.
        self._buffered_inputs = None
        self._step -= self._step % generate_every
        self.current_gradient_accumulation_steps = ga
        started = time.perf_counter()
        losses: list[float] = []
        grad_norms: list[float] = []
        learning_rates: list[float] = []
        skipped = 0
        counts_before = self.nonfinite.snapshot()
        batch: list[dict[str, Any]] | None = None
        for _ in range(num_steps):
            for micro in range(ga):
                last = micro == ga - 1
                self.accelerator.gradient_state._set_sync_gradients(last)
                if batch is None or self._step % generate_every == 0:
                    batch = self._generation_batch(rows)
                sync = nullcontext if last else partial(self.accelerator.no_sync, model=model)
                with sync():
                    loss = self.training_step(model, batch, None)
                losses.append(float(loss.detach()))
            grad_norm = self._clip_grad_norm(model) if self.args.max_grad_norm and self.args.max_grad_norm > 0 else None
            grad_norm = self._get_grad_norm(model, grad_norm=grad_norm)
            if grad_norm is None:
                grad_norm = _grad_norm(model)
            learning_rates.append(float(self._get_learning_rate()))
            problem = self._step_problem(losses[-ga:], float(grad_norm))
            if problem is not None:  # nothing non-finite reaches the weights: drop the gradients, skip the step
                model.zero_grad(set_to_none=True)
                skipped += 1
                grad_norms.append(math.nan)
                states = self.critic_reward.last_states
                self.nonfinite.bad("actor_update", f"state {states[0]!r}" if states else "the actor update",
                                   f"optimiser step skipped: {problem}")
                continue
            self.nonfinite.ok("actor_update")
            self.optimizer.step()
            if not self.accelerator.optimizer_step_was_skipped:
                self.lr_scheduler.step()
            model.zero_grad(set_to_none=True)
            self.state.global_step += 1
            grad_norms.append(float(grad_norm))
            self._warn_if_schedule_ended()
        seconds = time.perf_counter() - started

        trl_metrics = {key: _nanmean(values) for key, values in self._metrics["train"].items()}
        finite_losses = [v for v in losses if math.isfinite(v)]
        metrics: dict[str, float] = {
            "actor/loss": sum(finite_losses) / max(1, len(finite_losses) // ga) if finite_losses else math.nan,
            "actor/grad_norm": _nanmean(grad_norms),
            "actor/learning_rate": learning_rates[-1],
            "actor/steps": float(num_steps - skipped),
            "actor/skipped_steps": float(skipped),
            "actor/seconds": seconds,
            "actor/global_step": float(self.state.global_step),
        }
        metrics.update({key if key.startswith("diag/") else f"actor/{key}": value for key, value in trl_metrics.items()})
        metrics.update(self.nonfinite.metrics(since=counts_before))
        if log:  # GRPOTrainer.log adds (and clears) its own averaged metrics
            self.log({"loss": metrics["actor/loss"], "grad_norm": metrics["actor/grad_norm"],
                      "learning_rate": metrics["actor/learning_rate"], "actor_seconds": seconds})
        else:
            self._metrics["train"].clear()
        return metrics

    def _step_problem(self, losses: Sequence[float], grad_norm: float) -> str | None:
        """Why this optimiser step must not be applied (a non-finite loss or gradient, no usable sample), else None."""
        if not all_finite(*losses):
            return f"non-finite loss ({', '.join(f'{v:g}' for v in losses)})"
        if not math.isfinite(grad_norm):
            return f"non-finite gradient norm ({grad_norm:g})"
        return self._batch_unusable

    def _warn_if_schedule_ended(self) -> None:
        if (not self._warned_schedule_end and self.state.global_step > self.num_training_steps
                and self.args.lr_scheduler_type not in _CONSTANT_SCHEDULES):
            self._warned_schedule_end = True
            warnings.warn(
                f"the {self.args.lr_scheduler_type!r} learning-rate schedule was planned for {self.num_training_steps} "
                f"actor steps and step {self.state.global_step} is past its end (learning rate "
                f"{self._get_learning_rate():.3g}); pass num_training_steps to CoachTrainer or use "
                "lr_scheduler_type='constant'",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- resume ------------------------------------------------------------------------------------------

    def actor_state_dict(self, *, include_model: bool = True, include_rng: bool = True) -> dict[str, Any]:
        """Everything an exact resume of :meth:`actor_update` needs: weights, optimiser, schedule, counters, RNGs.

        The RNG part (Python, NumPy, torch CPU/CUDA global states) matters because sampling the K actions uses
        the global torch generator; leave it out when the caller checkpoints RNGs itself.
        """
        self._setup_actor_loop()
        state: dict[str, Any] = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            # deep copies: the optimiser updates its moment tensors in place on the next step
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "scheduler": copy.deepcopy(self.lr_scheduler.state_dict()),
            "global_step": int(self.state.global_step),
            "num_input_tokens_seen": int(self.state.num_input_tokens_seen),  # TRL's cumulative num_tokens metric
            "micro_step": int(self._step),
            "row_generator": self.row_generator.get_state(),
            "row_queue": list(self._row_queue),
            "entropy_coef": float(self.entropy_coef),
            "last_world_entropy": float(self._last_world_entropy),
            "num_training_steps": self.num_training_steps,
        }
        if include_model:
            model = self.accelerator.unwrap_model(self.model)
            state["model"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if include_rng:
            state["rng"] = capture_rng_state()
        return state

    def load_actor_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore an :meth:`actor_state_dict` (weights and RNGs only when present)."""
        if state.get("format") != _FORMAT or state.get("version") != _FORMAT_VERSION:
            raise ValueError(f"not a {_FORMAT} v{_FORMAT_VERSION} state: format={state.get('format')!r}, "
                             f"version={state.get('version')!r}")
        if state.get("num_training_steps") != self.num_training_steps:
            raise ValueError(f"the saved actor schedule was planned for {state.get('num_training_steps')} steps, this "
                             f"trainer for {self.num_training_steps}: pass the same num_training_steps")
        self._setup_actor_loop()
        if "model" in state:
            self.accelerator.unwrap_model(self.model).load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.lr_scheduler.load_state_dict(state["scheduler"])
        self.state.global_step = int(state["global_step"])
        self.state.num_input_tokens_seen = int(state.get("num_input_tokens_seen", 0))
        self._step = int(state["micro_step"])
        self._buffered_inputs = None
        self.row_generator.set_state(state["row_generator"])
        self._row_queue = list(state["row_queue"])
        self.entropy_coef = float(state["entropy_coef"])
        self._last_world_entropy = float(state["last_world_entropy"])
        if "rng" in state:
            restore_rng_state(state["rng"])

    def save_actor_state(self, directory: str | os.PathLike[str], *, include_rng: bool = True) -> Path:
        """Write the policy (``policy/``, ``save_pretrained`` + tokenizer/processor) and ``actor_trainer.pt``.

        Full-weight policies only (a PEFT model saves just its adapter): use :meth:`actor_state_dict` for those.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        model = self.accelerator.unwrap_model(self.model)
        model.save_pretrained(out / POLICY_DIR_NAME)
        self.processing_class.save_pretrained(out / POLICY_DIR_NAME)
        state = self.actor_state_dict(include_model=False, include_rng=include_rng)
        tmp = out / f".{ACTOR_STATE_NAME}.tmp"
        torch.save(state, tmp)
        os.replace(tmp, out / ACTOR_STATE_NAME)
        return out

    def load_actor_state(self, directory: str | os.PathLike[str]) -> None:
        """Restore what :meth:`save_actor_state` wrote (policy weights from ``policy/``, then the trainer state)."""
        src = Path(directory)
        path = src / ACTOR_STATE_NAME
        if not path.is_file():
            raise FileNotFoundError(f"{src} holds no saved actor trainer: {ACTOR_STATE_NAME} is missing")
        from safetensors.torch import load_file

        weights: dict[str, torch.Tensor] = {}
        policy_dir = src / POLICY_DIR_NAME
        shards = sorted(policy_dir.glob("*.safetensors"))
        if not shards:
            raise FileNotFoundError(f"{policy_dir} holds no safetensors weights")
        for shard in shards:
            weights.update(load_file(str(shard)))
        model = self.accelerator.unwrap_model(self.model)
        missing, unexpected = model.load_state_dict(weights, strict=False)
        tied = getattr(model, "all_tied_weights_keys", None) or getattr(model, "_tied_weights_keys", None) or ()
        missing = [k for k in missing if k not in set(tied)]  # tied copies (lm_head = embeddings) are not saved
        if missing or unexpected:
            raise ValueError(f"policy weights in {policy_dir} do not fit the model: missing {missing[:5]}, "
                             f"unexpected {list(unexpected)[:5]}")
        if getattr(model.config, "tie_word_embeddings", False) and hasattr(model, "tie_weights"):
            model.tie_weights()
        state = torch.load(path, map_location="cpu", weights_only=False)
        self.load_actor_state_dict(state)


def checkpointing_requested(args: Any) -> bool:
    """Whether a TrainingArguments asks for gradient (activation) checkpointing (the field was renamed in 5.2x)."""
    wanted = getattr(args, "activation_checkpointing", None)
    return bool(wanted if wanted is not None else getattr(args, "gradient_checkpointing", False))


def enable_checkpointing(model: Any, args: Any) -> None:
    """Turn gradient checkpointing on in ``model`` (a Transformers model) with ``args``' checkpointing kwargs."""
    on = getattr(model, "is_activation_checkpointing", None)
    if on is None:
        on = getattr(model, "is_gradient_checkpointing", False)
    if on:
        return
    kwargs = getattr(args, "activation_checkpointing_kwargs", None) or getattr(args, "gradient_checkpointing_kwargs",
                                                                              None)
    if callable(getattr(model, "activation_checkpointing_enable", None)):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def _grad_norm(model: torch.nn.Module) -> float:
    """The total 2-norm of the model's gradients (NaN/inf when one is)."""
    grads = [p.grad.detach().float() for p in model.parameters() if p.grad is not None]
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))) if grads else 0.0


def _nanmean(values: Iterable[float]) -> float:
    valid = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(valid) / len(valid) if valid else float("nan")
