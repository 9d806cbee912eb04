r"""Critic-guided Single State Single Action: Android Coach's critic with one action per state (the K = 1 ablation).

The critic is Coach's own (:class:`coach_rl.algorithms.coach.CoachCritic`, trained exactly as in
:mod:`coach_rl.algorithms.coach`); the actor learns from the one action the policy took at each stored state, with
the plain critic-value advantage ``A = Q(s, a) - mean Q`` over the sampled batch (ACLOO needs K >= 2 actions of the
same state) and the same PPO clip (Eq. 4). It isolates what sampling K actions per state adds on top of the critic.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.advantages import batch_mean_advantages
from coach_rl.algorithms.base import UpdateContext, register_algorithm
from coach_rl.algorithms.coach import CoachCritic, build_critic
from coach_rl.arguments import CriticArguments, QCriticArguments, ReplayActorArguments, TrainerConfig
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.records import StepRecord, check_records

__all__ = ["CoachSSSAAlgorithm", "CoachSSSAConfig"]


@dataclass
class CoachSSSAConfig(ReplayActorArguments, QCriticArguments, CriticArguments, TrainerConfig):
    """Configuration of Coach K = 1 (``algorithm: coach_sssa``): the shared :class:`~coach_rl.arguments.TrainerConfig`
    and Android Coach's Q critic (:class:`~coach_rl.arguments.CriticArguments`,
    :class:`~coach_rl.arguments.QCriticArguments`) and replay actor (:class:`~coach_rl.arguments.ReplayActorArguments`);
    none of Coach's K-action settings (``CoachArguments``)."""

    def validate_algorithm_arguments(self) -> None:
        """The critic's, the Q critic's and the replay actor's fields."""
        self.validate_critic_arguments()
        self.validate_q_critic_arguments()
        self.validate_replay_actor_arguments()

_ACTOR_STATE = "sssa_actor.pt"


class CoachSSSAAlgorithm(CoachCritic):
    """Coach's critic update, then a PPO-clip update of the stored actions with advantage ``Q - mean Q``."""

    name = "coach_sssa"
    episodes_per_instance = 1

    def __init__(self, critic: Critic, critic_trainer: CriticTrainer, actor: ActorUpdater, *,
                 critic_updates_per_iteration: int | None = None, critic_batch_size: int = 8,
                 actor_states_per_iteration: int | None = None, mini_batch_size: int | None = None) -> None:
        """The critic and its optimiser as :class:`CoachCritic` takes them; ``actor`` updates the policy on the stored
        actions of ``actor_states_per_iteration`` replay states (default: as many as the iteration's records)."""
        super().__init__(critic, critic_trainer, critic_updates_per_iteration=critic_updates_per_iteration,
                         critic_batch_size=critic_batch_size)
        self.actor = actor
        self.actor_states_per_iteration = actor_states_per_iteration
        self.mini_batch_size = mini_batch_size

    @property
    def policy_model(self) -> Any:
        """The policy the actor updates."""
        return self.actor.model

    def update(self, records: Sequence[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Critic on ``(s, a, R_t)``, then the stored actions of replay states weighted by ``Q - mean Q``."""
        records = check_records(records)
        out = self.critic_update(records, context)
        t0 = time.perf_counter()
        n = self.actor_states_per_iteration or len(records)
        picked = context.replay.sample_records(max(1, min(n, len(context.replay))), context.rng)
        states, actions = [r.prompt_text for r in picked], [r.response for r in picked]
        with torch.no_grad():
            q = self.critic.score(states, actions, batch_size=self.critic_batch_size)
        advantages = batch_mean_advantages(q).tolist()
        samples = [ActorSample(s, a, float(adv)) for s, a, adv in zip(states, actions, advantages)]
        metrics = self.actor.update(samples, mini_batch_size=self.mini_batch_size)
        out.update({f"actor/{k}": v for k, v in metrics.items()})
        out.update(step_advantage_metrics(picked, advantages))
        out.update({"actor/states": float(len(picked)), "actor/q_mean": float(q.mean()),
                    "time/actor": time.perf_counter() - t0})
        return out

    def save(self, directory: Path) -> None:
        """The critic's state (as Coach's) and the actor updater's optimiser."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.save_critic(directory)
        torch.save(self.actor.state_dict(include_model=False), directory / _ACTOR_STATE)

    def load(self, directory: Path) -> None:
        """Restore :meth:`save` (a folder saved before this ablation stopped building Coach's actor trainer holds its
        ``actor_trainer.pt`` too, which is not read)."""
        directory = Path(directory)
        self.load_critic_state(directory)
        self.actor.load_state_dict(torch.load(directory / _ACTOR_STATE, weights_only=False))


@register_algorithm("coach_sssa", config=CoachSSSAConfig)
def build_coach_sssa(config: Any, model: Any, tokenizer: Any, **parts: Any) -> CoachSSSAAlgorithm:
    """Coach's critic (:func:`build_critic`) with an :class:`ActorUpdater` on the stored actions (the same actor
    settings)."""
    args = config.coach
    critic, critic_trainer = build_critic(config, model, tokenizer)
    actor = ActorUpdater.from_config(model, tokenizer, args)
    return CoachSSSAAlgorithm(critic, critic_trainer, actor, critic_updates_per_iteration=args.critic_updates_per_iteration,
                              critic_batch_size=args.critic_batch_size,
                              actor_states_per_iteration=args.actor_states_per_iteration,
                              mini_batch_size=args.per_device_train_batch_size)
