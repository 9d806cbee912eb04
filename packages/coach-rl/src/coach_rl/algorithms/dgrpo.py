r"""DGRPO, MobileRL's Difficulty-Adaptive GRPO (§4.3, Table 4), as an :class:`~coach_rl.algorithms.Algorithm`.

Per iteration the loop plays ``G`` episodes of each task instance (``episodes_per_instance``) and hands over
their :class:`~coach_rl.records.StepRecord` batch. DGRPO then

1. rewards each trajectory with the Shortest-Path Reward Adjustment (:func:`coach_rl.returns.spa_rewards`,
   switch ``dgrpo_spa``; off: the outcome reward broadcast to every step),
2. scores it with the trajectory-level advantage (:func:`coach_rl.advantages.dgrpo_advantages`, Eq. 2-3),
3. with Difficulty-Adaptive Positive Replay (``dgrpo_dapr``) adds the stored positives with the highest
   current advantage (:class:`coach_rl.positive_replay.PositiveReplay`) and prunes negatives to at most 2 per
   positive by trajectory-level KL (:func:`coach_rl.positive_replay.prune_negatives`),
4. minimises the clipped trajectory-ratio objective plus ``beta`` KL to a frozen copy of the starting policy
   (:func:`coach_rl.losses.dgrpo_loss`), with :class:`coach_rl.actor.ActorUpdater`'s optimiser, tokenisation and
   micro-batching,
5. stores the iteration's top ``kappa`` trajectories for replay, and feeds the task outcomes to Failure
   Curriculum Filtering (``dgrpo_fcf``; :class:`coach_rl.curriculum.FailureCurriculum`), whose
   :meth:`DGRPO.task_weights` the loop samples tasks by.

The trajectory ratio multiplies over every token of every step, so one trajectory's gradient depends on all its
steps; micro-batches of steps still fit memory: a no-grad pass first gives each trajectory's full log-ratio,
and each micro-batch then differentiates only its own steps' share with the rest held constant, which yields
exactly the full-batch gradient.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch

from coach_rl.actor import ActorUpdater
from coach_rl.advantages import dgrpo_advantages
from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext, register_algorithm
from coach_rl.arguments import TrainerConfig
from coach_rl.curriculum import FailureCurriculum
from coach_rl.diagnostics import step_advantage_metrics
from coach_rl.losses import dgrpo_loss, kl_to_reference
from coach_rl.positive_replay import PositiveReplay, ReplayTrajectory, prune_negatives
from coach_rl.records import StepRecord, check_records, episodes
from coach_rl.returns import spa_rewards

__all__ = ["DGRPO", "DGRPOArguments", "DGRPOConfig", "build_dgrpo"]

_PAPER = "MobileRL (Xu et al. 2025) Table 4"
_STATE_FILE = "dgrpo_state.pt"
_REFERENCE_FILE = "dgrpo_reference.pt"


@dataclass
class DGRPOArguments:
    """DGRPO's settings (MobileRL §4.3); prefixed ``dgrpo_`` so they never clash with TRL's or the shared fields."""

    # -- groups and objective --
    dgrpo_group_size: int = field(
        default=16, metadata={"help": f"G: episodes per task instance per iteration ({_PAPER}: n = 16)."})
    dgrpo_kl_beta: float = field(
        default=0.001, metadata={"help": f"beta of the KL to the frozen reference policy ({_PAPER}: 0.001); "
                                         "0 keeps no reference copy."})
    dgrpo_epochs: int = field(default=1, metadata={"help": f"Passes over each update batch ({_PAPER}: PPO epochs 1)."})
    dgrpo_mini_batch_trajectories: int | None = field(
        default=None, metadata={"help": "Trajectories per optimiser step (None: the whole batch, one step)."})
    # -- Shortest-Path Reward Adjustment --
    dgrpo_spa: bool = field(default=True, metadata={"help": "Use SPA rewards (off: the ablation without SPA)."})
    dgrpo_spa_alpha: float = field(default=1.0, metadata={"help": f"alpha of SPA, Eq. 1 ({_PAPER}: 1.0)."})
    # -- Difficulty-Adaptive Positive Replay --
    dgrpo_dapr: bool = field(default=True, metadata={"help": "Replay stored positives and prune negatives "
                                                             "(off: the ablation without DAPR)."})
    dgrpo_replay_size: int = field(default=256, metadata={"help": f"Replay buffer capacity ({_PAPER}: 256)."})
    dgrpo_replay_top_fraction: float = field(
        default=0.25, metadata={"help": f"kappa: share of each iteration's trajectories stored ({_PAPER}: 0.25)."})
    dgrpo_replay_mix: float = field(
        default=1.0, metadata={"help": f"gamma: at most gamma * M replayed per update of M ({_PAPER}: 1.0)."})
    dgrpo_max_negatives_per_positive: float = field(
        default=2.0, metadata={"help": "Negative trajectories kept per positive one (MobileRL §4.3.2: 1:2)."})
    # -- Failure Curriculum Filtering --
    dgrpo_fcf: bool = field(default=True, metadata={"help": "Down-weight and remove always-failing tasks "
                                                            "(off: the ablation without FCF)."})
    dgrpo_fcf_patience: int = field(
        default=2, metadata={"help": "All-zero epochs before a task's cooldown (MobileRL §4.3.3: 2)."})
    dgrpo_fcf_cooldown: int = field(default=3, metadata={"help": "Cooldown epochs at weight exp(-f) (§4.3.3: 3)."})
    dgrpo_fcf_remove_after: int = field(
        default=3, metadata={"help": "All-zero epochs after which a task is removed for good (§4.3.3: f >= 3)."})
    dgrpo_fcf_epoch_iterations: int = field(
        default=1, metadata={"help": "Training iterations that make one curriculum epoch (a pass over the tasks)."})

    def __post_init__(self) -> None:
        self.validate_dgrpo_arguments()
        parent = getattr(super(), "__post_init__", None)
        if parent is not None:  # mixed into DGRPOConfig: TrainerConfig's own checks come next in the MRO
            parent()

    def validate_dgrpo_arguments(self) -> None:
        """Check the ``dgrpo_*`` fields; raises ``ValueError`` naming the bad field."""
        for name in ("dgrpo_group_size", "dgrpo_epochs", "dgrpo_replay_size", "dgrpo_fcf_patience",
                     "dgrpo_fcf_cooldown", "dgrpo_fcf_remove_after", "dgrpo_fcf_epoch_iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.dgrpo_group_size < 2:
            raise ValueError(f"dgrpo_group_size must be >= 2 (the group is the baseline), got {self.dgrpo_group_size}")
        m = self.dgrpo_mini_batch_trajectories
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise ValueError(f"dgrpo_mini_batch_trajectories must be a positive integer or None, got {m!r}")
        if not (isinstance(self.dgrpo_kl_beta, (int, float)) and self.dgrpo_kl_beta >= 0):
            raise ValueError(f"dgrpo_kl_beta must be >= 0, got {self.dgrpo_kl_beta!r}")
        if not self.dgrpo_max_negatives_per_positive >= 0:
            raise ValueError(f"dgrpo_max_negatives_per_positive must be >= 0, got {self.dgrpo_max_negatives_per_positive!r}")

    @classmethod
    def from_object(cls, config: Any) -> DGRPOArguments:
        """The fields found on ``config`` (a :class:`DGRPOConfig`); defaults for the rest."""
        return cls(**{f.name: getattr(config, f.name) for f in dataclasses.fields(cls) if hasattr(config, f.name)})



@dataclass
class DGRPOConfig(DGRPOArguments, TrainerConfig):
    """Configuration of DGRPO (``algorithm: dgrpo``): the shared :class:`~coach_rl.arguments.TrainerConfig` (the actor's
    settings) and :class:`DGRPOArguments` (validated by its own ``__post_init__``, which runs first). Its KL weight is
    ``dgrpo_kl_beta``, not TRL's ``beta``."""

    kl_weight: ClassVar[str | None] = "dgrpo_kl_beta"


@dataclass
class _Row:
    """One step of one trajectory in an update batch."""

    trajectory: int
    ids: list[int]
    n_completion: int


class DGRPO(AlgorithmHooks):
    """Difficulty-Adaptive GRPO over StepRecord batches (see the module docstring)."""

    name = "dgrpo"

    def __init__(self, actor: ActorUpdater, args: DGRPOArguments | None = None) -> None:
        """Train ``actor.model``; a frozen copy of it (as it is now) is the KL reference when ``dgrpo_kl_beta`` > 0."""
        if not isinstance(actor, ActorUpdater):
            raise TypeError(f"actor must be an ActorUpdater, got {type(actor).__name__}")
        self.actor = actor
        self.args = args = args or DGRPOArguments()
        self.reference: torch.nn.Module | None = None
        if args.dgrpo_kl_beta > 0:
            self.reference = copy.deepcopy(actor.model).eval()
            for p in self.reference.parameters():
                p.requires_grad_(False)
        self.replay = PositiveReplay(args.dgrpo_replay_size, args.dgrpo_replay_top_fraction, args.dgrpo_replay_mix)
        self.curriculum = FailureCurriculum(args.dgrpo_fcf_patience, args.dgrpo_fcf_cooldown,
                                            args.dgrpo_fcf_remove_after)
        self.iterations = 0

    @classmethod
    def from_config(cls, model: Any, tokenizer: Any, config: Any) -> DGRPO:
        """DGRPO with the actor settings of a CoachConfig (lr, clip ratio, ...) and its ``dgrpo_*`` fields."""
        return cls(ActorUpdater.from_config(model, tokenizer, config), DGRPOArguments.from_object(config))

    @property
    def episodes_per_instance(self) -> int:
        """G."""
        return self.args.dgrpo_group_size

    @property
    def policy_model(self) -> Any:
        """The model being trained."""
        return self.actor.model

    def task_weights(self, tasks: Iterable[str]) -> dict[str, float]:
        """Sampling weight per task from Failure Curriculum Filtering (all 1 when ``dgrpo_fcf`` is off)."""
        tasks = list(tasks)
        return self.curriculum.weights(tasks) if self.args.dgrpo_fcf else {t: 1.0 for t in tasks}

    # -- rewards and advantages -----------------------------------------------------------------------------

    def _group_advantages(self, lengths: list[int], outcomes: list[float]) -> tuple[list[float], list[float]]:
        """(rewards, advantages) of one group: SPA (or the plain outcome) broadcast per step, then Eq. 2-3."""
        outcomes = [max(0.0, float(r)) for r in outcomes]
        rewards = spa_rewards(lengths, outcomes, self.args.dgrpo_spa_alpha) if self.args.dgrpo_spa else outcomes
        adv = dgrpo_advantages([[r] * t for r, t in zip(rewards, lengths)])
        return rewards, [float(x) for x in adv]

    def trajectories(self, records: Sequence[StepRecord]) -> list[ReplayTrajectory]:
        """One :class:`ReplayTrajectory` per episode of ``records`` with its group-normalised advantage."""
        episode_steps = episodes(check_records(records))
        groups: dict[str, list[list[StepRecord]]] = {}
        for steps in episode_steps:
            groups.setdefault(steps[0].group, []).append(steps)
        out: list[ReplayTrajectory] = []
        for group, members in groups.items():
            outcomes = [float(m[0].outcome_reward) for m in members]
            if len(members) < 2:  # the env-step budget or a failed reset left it alone: no group to normalise in
                rewards, adv = outcomes, [0.0]
            else:
                rewards, adv = self._group_advantages([len(m) for m in members], outcomes)
            for steps, r, o, a in zip(members, rewards, outcomes, adv):
                out.append(ReplayTrajectory(steps[0].episode_id, group, steps[0].task, a, steps, reward=r, outcome=o))
        return out

    def _refresh_replay(self, current: list[ReplayTrajectory]) -> None:
        """Re-score stored trajectories against this iteration's group of their task instance (their current advantage)."""
        by_group: dict[str, list[ReplayTrajectory]] = {}
        for t in current:
            by_group.setdefault(t.group, []).append(t)
        for group, members in by_group.items():
            for stored in self.replay.in_group(group):
                lengths = [m.length for m in members] + [stored.length]
                outcomes = [m.outcome for m in members] + [stored.outcome]
                _, adv = self._group_advantages(lengths, outcomes)
                self.replay.set_advantage(stored.episode_id, adv[-1])

    # -- log-probs ------------------------------------------------------------------------------------------

    def _logps(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, T-1)`` next-token log-probs of ``batch`` under ``model`` (the actor's temperature and autocast)."""
        actor = self.actor
        autocast = (torch.autocast(device_type=actor.device.type, dtype=actor.autocast_dtype)
                    if actor.autocast_dtype is not None else nullcontext())
        with autocast:
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        position_ids=batch["position_ids"], use_cache=False)
        logits = out.logits[:, :-1].float() / actor.temperature
        targets = batch["input_ids"][:, 1:]
        return torch.gather(logits, -1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)

    @torch.no_grad()
    def _current_logps(self, rows: list[_Row]) -> list[torch.Tensor]:
        """Token log-probs of every row's completion under the current policy (CPU float32)."""
        model = self.actor.model
        was_training = model.training
        model.eval()
        out: list[torch.Tensor] = []
        try:
            for start in range(0, len(rows), self.actor.micro_batch_size):
                chunk = rows[start:start + self.actor.micro_batch_size]
                batch = self.actor._collate([(r.ids, r.n_completion) for r in chunk])
                logps = self._logps(model, batch).cpu()
                mask = batch["target_mask"].cpu()
                out.extend(logps[i][mask[i]].clone() for i in range(len(chunk)))
        finally:
            model.train(was_training)
        return out

    # -- the update -----------------------------------------------------------------------------------------

    def update(self, records: Sequence[StepRecord], context: UpdateContext | None = None) -> dict[str, float]:
        """One DGRPO iteration on this iteration's records (module docstring, steps 1-5); flat metrics."""
        context = context or UpdateContext()
        on_policy = self.trajectories(records)
        if not on_policy:
            raise ValueError("records is empty: nothing to update on")
        self.iterations += 1
        metrics: dict[str, float] = {}
        replayed: list[ReplayTrajectory] = []
        if self.args.dgrpo_dapr:
            self._refresh_replay(on_policy)
            replayed = self.replay.draw(len(on_policy))
        batch = on_policy + replayed
        rows: list[_Row] = []
        for index, traj in enumerate(batch):
            for step in traj.steps:
                ids, n = self.actor.encode_pair(step.prompt_text, step.response, step.token_ids)
                rows.append(_Row(index, ids, n))
        current = self._current_logps(rows)
        old = self._behaviour_logps(batch, rows, current, context)
        kls = [0.0] * len(batch)
        for row, cur, beh in zip(rows, current, old):
            diff = cur - beh
            kls[row.trajectory] += float((torch.exp(diff) - diff - 1.0).sum())
        keep = list(range(len(batch)))
        if self.args.dgrpo_dapr:
            keep = prune_negatives([t.advantage for t in batch], kls, self.args.dgrpo_max_negatives_per_positive)
        # behaviour log-probs travel with a trajectory into the buffer (per step, lists of floats)
        per_traj: list[list[list[float]]] = [[] for _ in batch]
        for row, beh in zip(rows, old):
            per_traj[row.trajectory].append(beh.tolist())
        for traj, logps in zip(batch, per_traj):
            traj.behaviour_logps = logps

        learn = [i for i in keep if batch[i].advantage != 0.0] if self.args.dgrpo_kl_beta == 0 else keep
        if learn:
            metrics.update(self._optimise(batch, rows, old, learn))
        else:
            metrics["actor/steps"] = 0.0
        if self.args.dgrpo_dapr:
            inserted = self.replay.add_iteration(on_policy)
            metrics["dapr/inserted"] = float(len(inserted))
        metrics.update({
            "dapr/replayed": float(len(replayed)), "dapr/buffer": float(len(self.replay)),
            "dapr/pruned": float(len(batch) - len(keep)),
            "dgrpo/trajectories": float(len(batch)), "dgrpo/groups": float(len({t.group for t in on_policy})),
            "dgrpo/reward_mean": sum(t.reward for t in on_policy) / len(on_policy),
            "dgrpo/outcome_mean": sum(t.outcome for t in on_policy) / len(on_policy),
            "dgrpo/advantage_abs_mean": sum(abs(t.advantage) for t in on_policy) / len(on_policy),
        })
        metrics.update(step_advantage_metrics([s for t in on_policy for s in t.steps],
                                              [t.advantage for t in on_policy for _ in t.steps]))
        successes = [t.length for t in on_policy if t.outcome > 0]
        if successes:
            metrics["dgrpo/steps_per_success"] = sum(successes) / len(successes)
        if self.args.dgrpo_fcf:
            by_task: dict[str, list[float]] = {}
            for t in on_policy:
                by_task.setdefault(t.task, []).append(t.outcome)
            for task, outcomes in by_task.items():
                self.curriculum.observe(task, outcomes)
            if self.iterations % self.args.dgrpo_fcf_epoch_iterations == 0:
                metrics.update(self.curriculum.end_epoch())
        return metrics

    def _behaviour_logps(self, batch: list[ReplayTrajectory], rows: list[_Row], current: list[torch.Tensor],
                         context: UpdateContext) -> list[torch.Tensor]:
        """pi_old per row: stored for replayed trajectories, recorded for stale steps, else the current policy's."""
        old: list[torch.Tensor] = []
        step_of: dict[int, int] = {}
        for row, cur in zip(rows, current):
            traj = batch[row.trajectory]
            s = step_of.get(row.trajectory, 0)
            step_of[row.trajectory] = s + 1
            step = traj.steps[s]
            if traj.behaviour_logps is not None:
                logps = torch.as_tensor(traj.behaviour_logps[s], dtype=torch.float32)
            elif step.policy_version != context.policy_version and step.token_logprobs is not None:
                logps = torch.as_tensor(step.token_logprobs, dtype=torch.float32)
            else:
                logps = cur.clone()
            if logps.numel() != cur.numel():
                raise ValueError(f"episode {traj.episode_id} step {s}: {logps.numel()} behaviour log-probs for "
                                 f"{cur.numel()} completion tokens (record token_ids with token_logprobs)")
            old.append(logps)
        return old

    def _optimise(self, batch: list[ReplayTrajectory], rows: list[_Row], old: list[torch.Tensor],
                  learn: list[int]) -> dict[str, float]:
        size = self.args.dgrpo_mini_batch_trajectories or len(learn)
        history: list[dict[str, float]] = []
        for _ in range(self.args.dgrpo_epochs):
            order = (torch.randperm(len(learn), generator=self.actor.generator).tolist() if size < len(learn)
                     else list(range(len(learn))))
            for start in range(0, len(learn), size):
                chosen = [learn[i] for i in order[start:start + size]]
                history.append(self._optimizer_step(batch, rows, old, chosen))
        out = {f"actor/{k}": sum(h[k] for h in history) / len(history) for k in history[0]}
        out["actor/steps"] = float(len(history))
        return out

    def _optimizer_step(self, batch: list[ReplayTrajectory], rows: list[_Row], old: list[torch.Tensor],
                        chosen: list[int]) -> dict[str, float]:
        actor, beta = self.actor, self.args.dgrpo_kl_beta
        slot = {traj: k for k, traj in enumerate(chosen)}
        row_ids = [i for i, r in enumerate(rows) if r.trajectory in slot]
        current = self._current_logps([rows[i] for i in row_ids])
        full = torch.zeros(len(chosen), dtype=torch.float32)
        for i, cur in zip(row_ids, current):
            full[slot[rows[i].trajectory]] += float((cur - old[i]).sum())
        advantages = torch.tensor([batch[t].advantage for t in chosen], dtype=torch.float32)
        n_traj = len(chosen)
        total_tokens = sum(rows[i].n_completion for i in row_ids)
        kl_sum = 0.0
        actor.model.train()
        actor.optimizer.zero_grad(set_to_none=True)
        for start in range(0, len(row_ids), actor.micro_batch_size):
            chunk = row_ids[start:start + actor.micro_batch_size]
            collated = actor._collate([(rows[i].ids, rows[i].n_completion) for i in chunk])
            logps = self._logps(actor.model, collated)
            mask = collated["target_mask"]
            device = logps.device
            part = torch.zeros(n_traj, dtype=logps.dtype, device=device)
            for r, i in enumerate(chunk):
                diff = logps[r][mask[r]] - old[i].to(device, logps.dtype)
                part = part.index_add(0, torch.tensor([slot[rows[i].trajectory]], device=device), diff.sum().view(1))
            touched = sorted({slot[rows[i].trajectory] for i in chunk})
            idx = torch.tensor(touched, device=device)
            log_ratio = full.to(device)[idx] - part.detach()[idx] + part[idx]
            # This micro-batch's share of the batch's loss: the policy term's share is its trajectories' (it is their
            # mean), the KL's its tokens' (the batch KL is a token mean). dgrpo_loss adds beta * kl to the policy
            # term, so kl is given here as the micro-batch's KL over the policy term's share.
            share = len(touched) / n_traj
            kl = None
            if self.reference is not None and beta > 0:
                with torch.no_grad():
                    ref = self._logps(self.reference, collated)
                weight = int(mask.sum()) / total_tokens
                kl = kl_to_reference(logps, ref, mask)
                kl_sum += float(kl.detach()) * weight
                kl = kl * (weight / share)
            out = dgrpo_loss(log_ratio, advantages.to(device)[idx], clip_eps=actor.clip_eps, beta=beta, kl=kl)
            (out.loss * share).backward()
        summary = dgrpo_loss(full, advantages, clip_eps=actor.clip_eps, beta=beta,
                             kl=torch.tensor(kl_sum, dtype=torch.float64))
        step: dict[str, float] = {}
        if not actor.optimizer_step(float(summary.loss), "a DGRPO actor step", step):
            step["grad_norm"] = math.nan
        return {"policy_loss": float(summary.policy_loss), "kl_ref": kl_sum,
                "loss": float(summary.loss), "clip_fraction": float(summary.clip_fraction),
                "ratio_mean": float(summary.ratio.mean()), "grad_norm": step["grad_norm"],
                "learning_rate": step["learning_rate"], "tokens": float(total_tokens), "trajectories": float(n_traj)}

    # -- resume ---------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Actor (weights, optimiser, schedule, RNG), replay buffer, curriculum, iteration count, settings."""
        return {"actor": self.actor.state_dict(), "replay": self.replay.state_dict(),
                "curriculum": self.curriculum.state_dict(), "iterations": self.iterations,
                "args": dataclasses.asdict(self.args)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.actor.load_state_dict(state["actor"])
        self.replay.load_state_dict(state["replay"])
        self.curriculum.load_state_dict(state["curriculum"])
        self.iterations = int(state["iterations"])

    def save(self, directory: Path) -> None:
        """Write ``dgrpo_state.pt`` (and the frozen reference's weights) under ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), directory / _STATE_FILE)
        if self.reference is not None:
            torch.save(self.reference.state_dict(), directory / _REFERENCE_FILE)

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote (weights into the model given at construction)."""
        directory = Path(directory)
        path = directory / _STATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no DGRPO checkpoint at {path}")
        self.load_state_dict(torch.load(path, weights_only=False))
        if self.reference is not None:
            ref = directory / _REFERENCE_FILE
            if not ref.is_file():
                raise FileNotFoundError(f"dgrpo_kl_beta > 0 but the checkpoint has no reference weights ({ref})")
            self.reference.load_state_dict(torch.load(ref, weights_only=True))


@register_algorithm("dgrpo", config=DGRPOConfig)
def build_dgrpo(config: Any, model: Any, tokenizer: Any, **parts: Any) -> DGRPO:
    """``algorithm: dgrpo``: the actor settings and ``dgrpo_*`` fields of ``config.coach`` (a RunConfig)."""
    coach = getattr(config, "coach", config)
    return DGRPO.from_config(model, tokenizer, coach)
