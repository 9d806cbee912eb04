r"""The Single State Single Action baselines of the paper's comparison: trajectory-level GRPO and PPO with GAE.

Both learn from the trajectories the rollout collector gathered (one action per visited state) and update the
actor with :class:`coach_rl.actor.ActorUpdater` (PPO clip, Eq. 4, same optimiser and defaults as Android
Coach), so only the advantage differs between algorithms:

* :class:`GRPOBaseline`: G trajectories per task instance, the outcome reward ``r_o`` of each, the GRPO
  group-normalised advantage ``(r_o - mean) / (std + eps)`` over the G (:func:`coach_rl.advantages.grpo_advantages`),
  applied to every step of the trajectory (sequence-level GRPO, the paper's Appendix A.3 setting: G = 4).
* :class:`PPOBaseline`: a state-value critic ``V(s)`` (a :class:`coach_rl.critic.Critic` scoring the state with
  an empty action), per-step rewards = ``w_p * r_p`` (with a PRM) plus ``w_o * r_o`` on the last step, GAE
  with ``lambda = 1`` (Monte Carlo returns minus V, the paper's setting) and ``gamma`` from the config; V is regressed onto
  the returns with the clipped value loss (Eq. 2) and the actor gets per-step advantages, whitened over the
  batch as verl's GAE does.

Both read only :class:`coach_rl.records.StepRecord` batches (the collector's records): per step the prompt
``prompt_text``, the reply ``response`` and, when recorded, its generated ``token_ids`` and ``token_logprobs``
(the ids are learned from as generated; the log-probs serve as old log-probs only with
``use_recorded_logprobs``: by default they are recomputed by the actor before the update, as verl does); per
episode the ``outcome_reward`` and the task-instance ``group``. Both implement
:class:`coach_rl.algorithms.Algorithm` (registered as ``grpo`` and ``ppo`` in :mod:`coach_rl.algorithms`).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.advantages import grpo_advantages
from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.nonfinite import monitor_of
from coach_rl.records import StepRecord, check_records, episodes
from coach_rl.returns import gae

__all__ = ["GRPOBaseline", "PPOBaseline", "TrajectoryRecord", "trajectory_records"]

_STATE_FILE = "baseline.pt"


class _SavesStateDict(AlgorithmHooks):
    """``save``/``load``/``policy_model`` of the Algorithm protocol from ``state_dict``/``load_state_dict``."""

    actor: ActorUpdater

    @property
    def policy_model(self) -> Any:
        """The policy the actor updates."""
        return self.actor.model

    def save(self, directory: Path) -> None:
        """Policy weights, optimiser and schedule states (everything :meth:`load` restores) into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), directory / _STATE_FILE)

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote."""
        self.load_state_dict(torch.load(Path(directory) / _STATE_FILE, weights_only=True))


@dataclass
class TrajectoryRecord:
    """The records of one episode with its group (task instance) and outcome reward."""

    group: Hashable
    outcome_reward: float
    steps: list[StepRecord] = field(default_factory=list)


def trajectory_records(records: Sequence[StepRecord]) -> list[TrajectoryRecord]:
    """The step records of a batch grouped into episodes (first-seen order, steps in order)."""
    return [TrajectoryRecord(group=steps[0].group, outcome_reward=steps[0].outcome_reward, steps=steps)
            for steps in episodes(check_records(records))]


def _actor_sample(step: StepRecord, advantage: float, use_recorded_logprobs: bool) -> ActorSample:
    """An :class:`ActorSample` of one step; recorded log-probs only when asked for and aligned with the ids."""
    old = None
    if use_recorded_logprobs:
        if step.token_logprobs is None or step.token_ids is None:
            raise ValueError("use_recorded_logprobs needs token_ids and token_logprobs on every step "
                             "(HFPolicy(record_logprobs=True))")
        old = step.token_logprobs
    # a down-weighted (stale) step counts less: scaling A scales its clipped surrogate term linearly
    return ActorSample(step.prompt_text, step.response, float(advantage) * step.sample_weight, old_logps=old,
                       completion_ids=step.token_ids)


def _check_epochs(epochs: int, mini_batch_size: int | None) -> None:
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if mini_batch_size is not None and (isinstance(mini_batch_size, bool) or not isinstance(mini_batch_size, int)
                                        or mini_batch_size < 1):
        raise ValueError(f"mini_batch_size must be a positive integer or None, got {mini_batch_size!r}")


class GRPOBaseline(_SavesStateDict):
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
        _check_epochs(epochs, mini_batch_size)
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
        """G = ``num_generations``, scaling from ``scale_rewards``, actor settings from the same CoachConfig."""
        kwargs: dict[str, Any] = {
            "group_size": config.num_generations,
            "scale_rewards": getattr(config, "scale_rewards", "group") != "none",
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
        records = _episodes_of(batch)
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
        records = _episodes_of(batch)
        advantages = self.trajectory_advantages(records)
        return [_actor_sample(step, adv, self.use_recorded_logprobs)
                for rec, adv in zip(records, advantages) for step in rec.steps]

    def update(self, batch: Sequence[StepRecord], context: UpdateContext | None = None) -> dict[str, float]:
        """One GRPO actor update on the collected records; metrics prefixed ``actor/`` plus reward stats."""
        records = _episodes_of(batch)
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


class PPOBaseline(_SavesStateDict):
    """PPO with a state-value critic V(s) and GAE (lambda = 1 by default): per-step advantages, SSSA."""

    name = "ppo"
    episodes_per_instance = 1

    def __init__(
        self,
        actor: ActorUpdater,
        value_trainer: CriticTrainer,
        *,
        gamma: float = 0.95,
        lam: float = 1.0,
        normalize_advantages: bool = True,
        epochs: int = 1,
        mini_batch_size: int | None = None,
        value_epochs: int = 1,
        value_mini_batch_size: int | None = None,
        value_batch_size: int = 8,
        use_recorded_logprobs: bool = False,
        w_p: float = 0.0,
        w_o: float = 1.0,
    ) -> None:
        """``value_trainer`` owns V (a :class:`coach_rl.critic.Critic` read with an empty action) and its optimiser;
        ``w_p`` and ``w_o`` weigh the process and outcome rewards in each step's reward (as in Coach's R_t)."""
        if not isinstance(actor, ActorUpdater):
            raise TypeError(f"actor must be an ActorUpdater, got {type(actor).__name__}")
        if not isinstance(value_trainer, CriticTrainer):
            raise TypeError(f"value_trainer must be a CriticTrainer (V(s) and its optimiser), got "
                            f"{type(value_trainer).__name__}")
        for name, value in (("gamma", gamma), ("lam", lam)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
        _check_epochs(epochs, mini_batch_size)
        _check_epochs(value_epochs, value_mini_batch_size)
        self.actor = actor
        self.value_trainer = value_trainer
        self.gamma = float(gamma)
        self.lam = float(lam)
        self.normalize_advantages = bool(normalize_advantages)
        self.epochs = epochs
        self.mini_batch_size = mini_batch_size
        self.value_epochs = value_epochs
        self.value_mini_batch_size = value_mini_batch_size
        self.value_batch_size = value_batch_size
        self.use_recorded_logprobs = bool(use_recorded_logprobs)
        self.w_p, self.w_o = float(w_p), float(w_o)

    @classmethod
    def from_config(
        cls,
        model: Any,
        tokenizer: Any,
        config: Any,
        *,
        total_value_steps: int,
        value_critic: Critic | None = None,
        **overrides: Any,
    ) -> PPOBaseline:
        """Actor and V settings from the same CoachConfig (critic_* fields for V, ``gamma``); V defaults to a copy
        of the policy's backbone with a fresh value head (pass a pre-trained one as ``value_critic``)."""
        critic = value_critic if value_critic is not None else Critic.from_pretrained_lm(model, tokenizer,
                                                                                         seed=config.seed)
        value_trainer = CriticTrainer.from_config(critic, config, total_value_steps)
        # the step reward Coach's returns use: w_p * r_p on every step (with a PRM) + w_o * r_o on the last
        kwargs: dict[str, Any] = {"gamma": config.gamma, "value_batch_size": config.critic_batch_size,
                                  "w_p": config.w_p if config.use_prm else 0.0, "w_o": config.w_o}
        kwargs.update(overrides)
        return cls(ActorUpdater.from_config(model, tokenizer, config), value_trainer, **kwargs)

    @property
    def value_critic(self) -> Critic:
        """The state-value model V."""
        return self.value_trainer.critic

    def step_rewards(self, record: TrajectoryRecord) -> list[float]:
        """Per-step rewards of a trajectory: ``w_p * r_p`` on every step (a missing r_p counts 0) plus
        ``w_o * r_o`` on its last step."""
        rewards = [0.0 if s.process_reward_missing else self.w_p * float(s.process_reward) for s in record.steps]
        if rewards:
            rewards[-1] += self.w_o * record.outcome_reward
        return rewards

    def values(self, batch: Sequence[StepRecord] | Sequence[TrajectoryRecord]) -> list[torch.Tensor]:
        """``V(s_t)`` of every step, one float32 tensor per trajectory (no gradient)."""
        records = _episodes_of(batch)
        states = [s.prompt_text for rec in records for s in rec.steps]
        flat = (self.value_critic.score(states, [""] * len(states), batch_size=self.value_batch_size)
                if states else torch.empty(0))
        out, start = [], 0
        for rec in records:
            out.append(flat[start:start + len(rec.steps)])
            start += len(rec.steps)
        return out

    def advantages_and_returns(
        self, batch: Sequence[StepRecord] | Sequence[TrajectoryRecord], values: Sequence[torch.Tensor] | None = None
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """GAE advantages and value targets per trajectory (before any whitening); episodes end at their last step."""
        records = _episodes_of(batch)
        values = self.values(records) if values is None else values
        if len(values) != len(records):
            raise ValueError(f"values has {len(values)} entries for {len(records)} trajectories")
        advantages, returns = [], []
        for rec, v in zip(records, values):
            v = torch.as_tensor(v, dtype=torch.float64)
            if v.numel() != len(rec.steps):
                raise ValueError(f"a trajectory has {len(rec.steps)} steps but {v.numel()} values")
            if not rec.steps:
                advantages.append(torch.empty(0, dtype=torch.float64))
                returns.append(torch.empty(0, dtype=torch.float64))
                continue
            rewards = torch.tensor(self.step_rewards(rec), dtype=torch.float64)
            adv, ret = gae(rewards, v, self.gamma, self.lam, last_value=0.0)
            advantages.append(adv)
            returns.append(ret)
        return advantages, returns

    def update(self, batch: Sequence[StepRecord], context: UpdateContext | None = None) -> dict[str, float]:
        """One PPO iteration: V and advantages from the pre-update critic, then the V update, then the actor update."""
        records = _episodes_of(batch)
        states = [s.prompt_text for rec in records for s in rec.steps]
        if not states:
            raise ValueError("the trajectories hold no steps to learn from")
        values = self.values(records)
        # A NaN/inf V(s) (a broken value network) makes its trajectory's returns and advantages unusable: those steps
        # are left out of both updates and counted (nonfinite/value); with none left, nothing is updated.
        broken = [not bool(torch.isfinite(torch.as_tensor(v)).all()) for v in values]
        safe = [torch.zeros_like(torch.as_tensor(v)) if b else v for v, b in zip(values, broken)]
        advantages, returns = self.advantages_and_returns(records, safe)
        flat_adv = torch.cat(advantages)
        flat_ret = torch.cat(returns)
        flat_val = torch.cat([torch.as_tensor(v, dtype=torch.float64) for v in values])
        steps = [s for rec in records for s in rec.steps]
        whole = torch.cat([torch.full((len(rec.steps),), not b, dtype=torch.bool) for rec, b in zip(records, broken)])
        usable = whole & torch.isfinite(flat_val) & torch.isfinite(flat_adv) & torch.isfinite(flat_ret)
        monitor = monitor_of(self.actor)
        if not bool(usable.all()):
            bad = int((~usable).sum())
            monitor.bad("value", f"state {states[int(torch.nonzero(~usable)[0])]!r}", f"{bad} of {len(states)} steps "
                        "had a NaN/inf value, return or advantage (left out of this update)", count=bad,
                        streak=not bool(usable.any()))
            if not bool(usable.any()):
                return {"actor/skipped_steps": 1.0, "value/skipped_steps": 1.0, "ppo/nonfinite_steps": float(bad)}
            keep = torch.nonzero(usable).flatten()
            flat_adv, flat_ret, flat_val = flat_adv[keep], flat_ret[keep], flat_val[keep]
            states = [states[i] for i in keep.tolist()]
            steps = [steps[i] for i in keep.tolist()]
        else:
            monitor.ok("value")
        if self.normalize_advantages and flat_adv.numel() > 1:
            actor_adv = (flat_adv - flat_adv.mean()) / (flat_adv.std(correction=0) + 1e-8)
        else:
            actor_adv = flat_adv
        value_metrics = self.value_trainer.update(
            states, [""] * len(states), flat_ret.float(), flat_val.float(),
            epochs=self.value_epochs, mini_batch_size=self.value_mini_batch_size,
        )
        samples = [_actor_sample(step, a, self.use_recorded_logprobs) for step, a in zip(steps, actor_adv.tolist())]
        actor_metrics = self.actor.update(samples, epochs=self.epochs, mini_batch_size=self.mini_batch_size)
        metrics = {f"actor/{k}": v for k, v in actor_metrics.items()}
        metrics.update({f"value/{k}": v for k, v in value_metrics.items()})
        metrics.update(step_advantage_metrics(steps, actor_adv))
        metrics.update({"ppo/advantage_mean": float(flat_adv.mean()), "ppo/return_mean": float(flat_ret.mean()),
                        "ppo/value_mean": float(flat_val.mean()),
                        "ppo/outcome_reward_mean": sum(r.outcome_reward for r in records) / len(records)})
        return metrics

    def state_dict(self) -> dict[str, Any]:
        """Actor updater and value trainer states (each with its weights)."""
        # deep copy: CriticTrainer.state_dict hands out the live optimiser moments, which the next step mutates
        return {"actor": self.actor.state_dict(), "value": copy.deepcopy(self.value_trainer.state_dict())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.actor.load_state_dict(state["actor"])
        self.value_trainer.load_state_dict(state["value"])


def _episodes_of(batch: Sequence[StepRecord] | Sequence[TrajectoryRecord]) -> list[TrajectoryRecord]:
    """Episodes of a batch of step records (grouped here) or of already grouped :class:`TrajectoryRecord` objects."""
    if isinstance(batch, Sequence) and batch and all(isinstance(b, TrajectoryRecord) for b in batch):
        return list(batch)  # type: ignore[arg-type]
    return trajectory_records(batch)  # type: ignore[arg-type]
