r"""Critic-guided Single State Single Action: Android Coach's critic with one action per state (the K = 1 ablation).

The critic is trained exactly as in :mod:`coach_rl.algorithms.coach`; the actor learns from the one action the
policy took at each stored state, with the plain critic-value advantage ``A = Q(s, a) - mean Q`` over the sampled
batch (ACLOO needs K >= 2 actions of the same state) and the same PPO clip (Eq. 4). It isolates what sampling K
actions per state adds on top of the critic.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.advantages import batch_mean_advantages
from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext, register_algorithm
from coach_rl.algorithms.coach import CoachAlgorithm, build_coach
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.records import StepRecord, check_records

__all__ = ["CoachSSSAAlgorithm"]

_ACTOR_STATE = "sssa_actor.pt"


class CoachSSSAAlgorithm(AlgorithmHooks):
    """Coach's critic update, then a PPO-clip update of the stored actions with advantage ``Q - mean Q``."""

    name = "coach_sssa"
    episodes_per_instance = 1

    def __init__(self, coach: CoachAlgorithm, actor: ActorUpdater, *, mini_batch_size: int | None = None) -> None:
        """``coach`` supplies the critic and its trainer; ``actor`` updates the policy on stored actions."""
        self.coach = coach
        self.actor = actor
        self.mini_batch_size = mini_batch_size

    @property
    def critic(self) -> Any:
        """The critic Q(s, a) (pre-trained by the loop like Coach's)."""
        return self.coach.critic

    @property
    def policy_model(self) -> Any:
        """The policy the actor updates."""
        return self.actor.model

    def update(self, records: Sequence[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Critic on ``(s, a, R_t)``, then the stored actions of replay states weighted by ``Q - mean Q``."""
        records = check_records(records)
        out = self.coach.critic_update(records, context)
        t0 = time.perf_counter()
        n = self.coach.actor_states_per_iteration or len(records)
        picked = context.replay.sample_records(max(1, min(n, len(context.replay))), context.rng)
        states, actions = [r.prompt_text for r in picked], [r.response for r in picked]
        with torch.no_grad():
            q = self.critic.score(states, actions, batch_size=self.coach.critic_batch_size)
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
        self.coach.save(directory)
        torch.save(self.actor.state_dict(include_model=False), directory / _ACTOR_STATE)

    def load(self, directory: Path) -> None:
        """Restore :meth:`save`."""
        directory = Path(directory)
        self.coach.load(directory)
        self.actor.load_state_dict(torch.load(directory / _ACTOR_STATE, weights_only=False))

    def load_critic(self, directory: Path) -> bool:
        """Take another run's critic (``init_from``)."""
        return self.coach.load_critic(directory)


@register_algorithm("coach_sssa")
def build_coach_sssa(config: Any, model: Any, tokenizer: Any, **parts: Any) -> CoachSSSAAlgorithm:
    """Coach's critic with an :class:`ActorUpdater` on the stored actions (the same actor settings)."""
    coach = build_coach(config, model, tokenizer, **parts)
    actor = ActorUpdater.from_config(model, tokenizer, config.coach)
    return CoachSSSAAlgorithm(coach, actor, mini_batch_size=config.coach.per_device_train_batch_size)
