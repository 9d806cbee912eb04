r"""PPO with a state-value critic and GAE, the paper's other Single State Single Action baseline: ``algorithm: ppo``.

A state-value critic ``V(s)`` (a :class:`coach_rl.critic.Critic` scoring the state with an empty action), per-step
rewards ``w_p * r_p`` (with a PRM) plus ``w_o * r_o`` on the last step, GAE (:func:`coach_rl.returns.gae`) with
``lambda = 1`` (Monte Carlo returns minus V, the paper's setting) and ``gamma`` from the config; V is regressed onto
the returns with the clipped value loss (Eq. 2) and the actor (:class:`coach_rl.actor.ActorUpdater`, PPO clip, the
same optimiser as Coach's) gets per-step advantages, whitened over the batch as verl's GAE does
(:func:`coach_rl.advantages.whiten`). It reads the same :class:`coach_rl.records.StepRecord` batches as GRPO, and
like GRPO takes ``num_iterations`` (TRL's mu) actor passes over each batch.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from coach_rl.actor import ActorUpdater, actor_sample, check_epochs
from coach_rl.advantages import whiten
from coach_rl.algorithms.base import StateDictAlgorithm, UpdateContext, register_algorithm
from coach_rl.algorithms.coach import estimated_steps_per_iteration
from coach_rl.arguments import CriticArguments, TrainerConfig
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.nonfinite import monitor_of
from coach_rl.records import StepRecord, TrajectoryRecord, episodes_of
from coach_rl.returns import gae

__all__ = ["PPOBaseline", "PPOBaselineConfig", "build_ppo"]


@dataclass
class PPOBaselineConfig(CriticArguments, TrainerConfig):
    """Configuration of PPO with a state-value critic (``algorithm: ppo``): the shared
    :class:`~coach_rl.arguments.TrainerConfig` and the value network's :class:`~coach_rl.arguments.CriticArguments`
    (``critic_*``: V's learning rate, clip range, warm-up, gradient clip and batch size)."""

    def validate_algorithm_arguments(self) -> None:
        """V's optimisation fields."""
        self.validate_critic_arguments()


class PPOBaseline(StateDictAlgorithm):
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
        check_epochs(epochs, mini_batch_size)
        check_epochs(value_epochs, value_mini_batch_size)
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
                                  "w_p": config.w_p if config.use_prm else 0.0, "w_o": config.w_o,
                                  "epochs": int(config.num_iterations)}
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
        records = episodes_of(batch)
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
        records = episodes_of(batch)
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
        records = episodes_of(batch)
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
        actor_adv = whiten(flat_adv) if self.normalize_advantages else flat_adv
        value_metrics = self.value_trainer.update(
            states, [""] * len(states), flat_ret.float(), flat_val.float(),
            epochs=self.value_epochs, mini_batch_size=self.value_mini_batch_size,
        )
        samples = [actor_sample(step, a, self.use_recorded_logprobs) for step, a in zip(steps, actor_adv.tolist())]
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


@register_algorithm("ppo", config=PPOBaselineConfig)
def build_ppo(config: Any, model: Any, tokenizer: Any, **parts: Any) -> PPOBaseline:
    """PPO whose V schedule is planned for the run's iterations; actor settings as Android Coach's."""
    args = config.coach
    value_steps = int(args.total_iterations) * math.ceil(estimated_steps_per_iteration(args) / args.critic_batch_size)
    return PPOBaseline.from_config(model, tokenizer, args, total_value_steps=max(1, value_steps))
