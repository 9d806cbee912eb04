r"""Android Coach (paper Algorithm 1, Phases 3-4) as an :class:`~coach_rl.algorithms.Algorithm`.

Each update: the critic ``Q(s, a)`` regresses onto the records' return targets ``R_t`` with the clipped value
loss (Eq. 2; one pass over the new records, or ``critic_updates_per_iteration`` batches drawn from the replay
buffer), then :class:`coach_rl.trainer.CoachTrainer` samples K actions for states drawn from the replay buffer,
scores them with the critic, and applies ACLOO (Eq. 3) and the PPO clip (Eq. 4, :func:`coach_rl.losses.ppo_clip_loss`).
No environment step is spent on the K - 1 extra actions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext, register_algorithm
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.records import StepRecord, check_records

__all__ = ["CoachAlgorithm", "critic_examples"]

_ACTOR_STATE = "actor_trainer.pt"
_CRITIC_DIR = "critic"
_CRITIC_TRAINER = "critic_trainer.pt"
_REFERENCE = "kl_reference.pt"


class CoachAlgorithm(AlgorithmHooks):
    """Critic-guided Single State Multiple Actions: critic update on ``R_t``, then K critic-scored actions per state."""

    name = "coach"
    episodes_per_instance = 1

    def __init__(self, actor: Any, critic: Critic, critic_trainer: CriticTrainer, *,
                 critic_updates_per_iteration: int | None = None, critic_batch_size: int = 8,
                 actor_states_per_iteration: int | None = None, prm_candidates: int = 0) -> None:
        """``actor`` a :class:`coach_rl.trainer.CoachTrainer` whose reward is ``critic``; ``critic_trainer`` its
        optimiser; ``prm_candidates`` extra replies per collected state the PRM labels as critic targets."""
        self.actor = actor
        self.critic = critic
        self.critic_trainer = critic_trainer
        self.critic_updates_per_iteration = critic_updates_per_iteration
        self.critic_batch_size = int(critic_batch_size)
        self.actor_states_per_iteration = actor_states_per_iteration
        self.prm_candidates = int(prm_candidates)

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

    def critic_update(self, records: list[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Regress Q onto R_t (Algorithm 1, lines 18-21): this iteration's records, or replay batches."""
        t0 = time.perf_counter()
        per = self.critic_updates_per_iteration
        if per is not None:
            if context.replay is None:
                raise ValueError("critic_updates_per_iteration samples the replay buffer, but the loop gave none")
            records = context.replay.sample_records(min(len(context.replay), per * self.critic_batch_size), context.rng)
        out: dict[str, float] = {}
        if records:
            states, actions, targets = critic_examples(records)
            metrics = self.critic_trainer.update(states, actions, targets, mini_batch_size=self.critic_batch_size)
            out.update({f"critic/{k}": v for k, v in metrics.items()})
            out["critic/candidate_examples"] = float(len(states) - len(records))
        out["time/critic"] = time.perf_counter() - t0
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
        torch.save(self.actor.actor_state_dict(include_model=False, include_rng=False), directory / _ACTOR_STATE)
        self.critic.save(directory / _CRITIC_DIR)
        torch.save(self.critic_trainer.state_dict(include_critic=False), directory / _CRITIC_TRAINER)
        reference = self.actor.reference_state_dict()
        if reference is not None:  # beta > 0: the KL anchor (the starting policy) is not the policy saved beside it
            torch.save(reference, directory / _REFERENCE)

    def load(self, directory: Path) -> None:
        """Restore :meth:`save` (the policy weights are loaded by the loop into the model given at construction)."""
        directory = Path(directory)
        self.critic.load_state_dict(Critic.load(directory / _CRITIC_DIR).state_dict())
        self.critic_trainer.load_state_dict(torch.load(directory / _CRITIC_TRAINER, weights_only=True))
        self.actor.load_actor_state_dict(torch.load(directory / _ACTOR_STATE, map_location="cpu", weights_only=False))
        if self.actor.kl_reference is not None:
            path = directory / _REFERENCE
            if not path.is_file():
                raise FileNotFoundError(f"beta > 0 but the checkpoint has no KL reference ({path}): it was saved by "
                                        "a run with beta = 0; resume it with beta=0 or start a new run")
            self.actor.load_reference_state_dict(torch.load(path, map_location="cpu", weights_only=True))

    def load_critic(self, directory: Path) -> bool:
        """Take the critic weights of another run's saved algorithm folder (``init_from``); False when it has none."""
        path = Path(directory) / _CRITIC_DIR
        if not path.is_dir():
            return False
        self.critic.load_state_dict(Critic.load(path).state_dict())
        return True


def critic_examples(records: Sequence[StepRecord]) -> tuple[list[str], list[str], list[float]]:
    """The critic's ``(state, action, target)`` lists: each record's executed reply with its return R_t (Eq. 2's
    target), then the PRM-labelled extra replies of its state (``critic_prm_candidates``) with their label."""
    states = [r.prompt_text for r in records]
    actions = [r.response for r in records]
    targets = [float(r.return_t) for r in records]
    for r in records:
        for text, label in r.candidate_labels:
            states.append(r.prompt_text)
            actions.append(text)
            targets.append(float(label))
    return states, actions, targets


def estimated_steps_per_iteration(args: Any) -> int:
    """Env steps one iteration is planned for (sizes the learning-rate schedules)."""
    episode = args.max_episode_steps or max(1, args.max_turns // 2)
    return max(1, args.rollout_batch_size * min(episode, 8))


@register_algorithm("coach")
def build_coach(config: Any, model: Any, tokenizer: Any, **parts: Any) -> CoachAlgorithm:
    """Android Coach for a run config: critic from ``critic_model_name_or_path`` (default: the policy's backbone)."""
    from transformers.integrations import get_reporting_integration_callbacks

    from coach_rl.trainer import CoachTrainer, checkpointing_requested, enable_checkpointing

    args, loop = config.coach, config.loop
    if args.critic_model_name_or_path:
        critic = Critic.from_pretrained_lm(args.critic_model_name_or_path, seed=int(args.seed),
                                           action_targets=args.critic_action_targets).to(args.device)
    else:
        critic = Critic.from_pretrained_lm(model, tokenizer, seed=int(args.seed), action_targets=args.critic_action_targets)
    if checkpointing_requested(args):
        # The critic is the policy's size: the config's checkpointing covers its updates as it covers the actor's.
        enable_checkpointing(critic.backbone, args)
    iterations = int(args.total_iterations)
    per_iteration = estimated_steps_per_iteration(args)
    critic_steps = iterations * (args.critic_updates_per_iteration or math.ceil(per_iteration / args.critic_batch_size))
    critic_trainer = CriticTrainer.from_config(critic, args, max(1, critic_steps))
    states = loop.actor_states_per_iteration or per_iteration
    actor = CoachTrainer(model, critic, args, tokenizer, num_training_steps=max(1, iterations * max(1, states // 2)))
    # The run's trackers (coach_rl.trackers) report every record; TRL's own reporting callbacks would write a
    # second, partial copy into transformers' default runs/<date>_<host> in the working folder.
    for callback in get_reporting_integration_callbacks(args.report_to):
        actor.remove_callback(callback)
    return CoachAlgorithm(actor, critic, critic_trainer, critic_updates_per_iteration=args.critic_updates_per_iteration,
                          critic_batch_size=args.critic_batch_size,
                          actor_states_per_iteration=loop.actor_states_per_iteration,
                          prm_candidates=int(args.critic_prm_candidates))
