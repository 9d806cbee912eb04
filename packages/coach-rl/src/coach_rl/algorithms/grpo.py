r"""Trajectory-level GRPO, the paper's Single State Single Action baseline: ``algorithm: grpo``.

G trajectories per task instance (``num_generations``), the outcome reward ``r_o`` of each, the group-normalised
advantage ``(r_o - mean) / (std + eps)`` over the G (:func:`coach_rl.advantages.grpo_advantages`) applied to every
step of the trajectory (sequence-level GRPO, the paper's Appendix A.3 setting: G = 4), and the actor updated with
:class:`coach_rl.actor.ActorUpdater` (PPO clip, Eq. 4, the optimiser and defaults of Android Coach's actor), so only
the advantage differs from Coach. Each batch is one optimiser step per pass, ``num_iterations`` passes (TRL's mu,
default 1): GRPO's own way to learn more from the env steps it paid for. It reads :class:`coach_rl.records.StepRecord` batches: per step ``prompt_text``,
``response`` and, when recorded, ``token_ids`` and ``token_logprobs`` (old log-probs only with
``use_recorded_logprobs``; by default the actor recomputes them before the update, as verl does); per episode the
``outcome_reward`` and the task-instance ``group``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from coach_rl.actor import ActorSample, ActorUpdater, actor_sample, check_epochs
from coach_rl.advantages import grpo_advantages
from coach_rl.algorithms.base import StateDictAlgorithm, UpdateContext, register_algorithm
from coach_rl.arguments import TrainerConfig
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.records import StepRecord, TrajectoryRecord, episodes_of

__all__ = ["GRPOBaseline", "GRPOBaselineConfig", "build_grpo"]


@dataclass
class GRPOBaselineConfig(TrainerConfig):
    """Configuration of trajectory-level GRPO (``algorithm: grpo``): the shared :class:`~coach_rl.arguments.TrainerConfig`
    and nothing of its own (no critic). G is TRL's ``num_generations``, the passes over each batch its
    ``num_iterations``, the reward scaling its ``scale_rewards``; the actor's settings are Android Coach's."""

    num_generations: int | None = field(
        default=4,
        metadata={"help": "G: trajectories played per task instance and normalised as one group (>= 2; the paper's "
                          "Appendix A.3 setting: 4)."},
    )


class GRPOBaseline(StateDictAlgorithm):
    """Trajectory-level GRPO: outcome rewards normalised within each group of G rollouts of one task instance."""

    name = "grpo"

    def __init__(
        self,
        actor: ActorUpdater,
        *,
        group_size: int | None = None,
        scale_rewards: bool = True,
        eps: float = 1e-4,
        epochs: int = 1,
        mini_batch_size: int | None = None,
        use_recorded_logprobs: bool = False,
    ) -> None:
        """``group_size`` (G), when given, is enforced for every group; ``scale_rewards=False`` only centres (Dr. GRPO)."""
        if not isinstance(actor, ActorUpdater):
            raise TypeError(f"actor must be an ActorUpdater, got {type(actor).__name__}")
        if group_size is not None and (isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 2):
            raise ValueError(f"group_size (G trajectories per task instance) must be an integer >= 2, got {group_size!r}")
        check_epochs(epochs, mini_batch_size)
        self.actor = actor
        self.group_size = group_size
        self.episodes_per_instance = group_size or 2
        self.scale_rewards = bool(scale_rewards)
        self.eps = float(eps)
        self.epochs = epochs
        self.mini_batch_size = mini_batch_size
        self.use_recorded_logprobs = bool(use_recorded_logprobs)
        self.incomplete_groups = 0
        """Groups of the last batch with fewer than G trajectories (the env-step budget, a failed reset)."""

    @classmethod
    def from_config(cls, model: Any, tokenizer: Any, config: Any, **overrides: Any) -> GRPOBaseline:
        """G = ``num_generations``, scaling from ``scale_rewards``, passes over each batch from TRL's
        ``num_iterations`` (mu), actor settings from the same CoachConfig."""
        kwargs: dict[str, Any] = {
            "group_size": config.num_generations,
            "scale_rewards": getattr(config, "scale_rewards", "group") != "none",
            "epochs": int(config.num_iterations),
        }
        kwargs.update(overrides)
        return cls(ActorUpdater.from_config(model, tokenizer, config), **kwargs)

    def trajectory_advantages(self, batch: Sequence[StepRecord] | Sequence[TrajectoryRecord]) -> list[float]:
        """One advantage per trajectory (input order): ``grpo_advantages`` of the outcome rewards of its group.

        A group with more than G trajectories is an error (the rollout plan gives G per task instance). A group with
        fewer is normalised among the ones it has: the env-step budget (``max_env_steps``) ended the iteration, or a
        device failed to reset; a trajectory alone in its group has no baseline and gets advantage 0. Both are
        counted in :attr:`incomplete_groups` (``grpo/incomplete_groups`` in the metrics).
        """
        records = episodes_of(batch)
        groups: dict[Hashable, list[int]] = {}
        for i, rec in enumerate(records):
            groups.setdefault(rec.group, []).append(i)
        out = [0.0] * len(records)
        self.incomplete_groups = 0
        for key, members in groups.items():
            if self.group_size is not None and len(members) > self.group_size:
                raise ValueError(f"group {key!r} has {len(members)} trajectories, GRPO needs {self.group_size} per "
                                 "task instance")
            if len(members) < (self.group_size or 2):
                self.incomplete_groups += 1
            if len(members) < 2:
                continue  # no baseline: advantage 0
            rewards = torch.tensor([records[i].outcome_reward for i in members], dtype=torch.float64)
            adv = grpo_advantages(rewards, eps=self.eps, scale=self.scale_rewards)
            for i, a in zip(members, adv.tolist()):
                out[i] = float(a)
        return out

    def samples(self, batch: Sequence[StepRecord] | Sequence[TrajectoryRecord]) -> list[ActorSample]:
        """The actor samples: every step of a trajectory with that trajectory's advantage."""
        records = episodes_of(batch)
        advantages = self.trajectory_advantages(records)
        return [actor_sample(step, adv, self.use_recorded_logprobs)
                for rec, adv in zip(records, advantages) for step in rec.steps]

    def update(self, batch: Sequence[StepRecord], context: UpdateContext | None = None) -> dict[str, float]:
        """One GRPO actor update on the collected records; metrics prefixed ``actor/`` plus reward stats."""
        records = episodes_of(batch)
        samples = self.samples(records)
        if not samples:
            raise ValueError("the trajectories hold no steps to learn from")
        metrics = {f"actor/{k}": v for k, v in
                   self.actor.update(samples, epochs=self.epochs, mini_batch_size=self.mini_batch_size).items()}
        metrics.update(step_advantage_metrics([s for rec in records for s in rec.steps], [s.advantage for s in samples]))
        rewards = [r.outcome_reward for r in records]
        metrics.update({"grpo/outcome_reward_mean": sum(rewards) / len(rewards),
                        "grpo/groups": float(len({r.group for r in records})),
                        "grpo/incomplete_groups": float(self.incomplete_groups),
                        "grpo/samples": float(len(samples))})
        return metrics

    def state_dict(self) -> dict[str, Any]:
        """The actor updater's state (model, optimiser, schedule, RNG)."""
        return {"actor": self.actor.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.actor.load_state_dict(state["actor"])


@register_algorithm("grpo", config=GRPOBaselineConfig)
def build_grpo(config: Any, model: Any, tokenizer: Any, **parts: Any) -> GRPOBaseline:
    """GRPO with G = ``num_generations`` episodes per task instance and Android Coach's actor settings."""
    return GRPOBaseline.from_config(model, tokenizer, config.coach)
