r"""DistRL's learner, A-RIDE (Wang et al. 2024, "DistRL", Section 5 and Appendix A.4), as an :class:`Algorithm`.

One update on the records of the episodes just collected:

1. New episodes join the learner's trajectory replay (a circular buffer of ``distrl_replay_capacity``
   trajectories) and the DPER sampler (:mod:`coach_rl.priorities`); a warm-up set of trajectories is put there
   before the first online update (and ``distrl_warmup_updates`` updates are run on it alone).
2. Every ``distrl_priority_refresh_interval`` updates, the priorities of all stored trajectories are recomputed
   under the latest policy and value network: mean |TD error|, mean importance ratio, mean entropy.
3. The training batch is the new episodes plus ``distrl_replay_trajectories`` trajectories drawn from the
   replay with probability ``p^alpha`` (uniformly with ``distrl_use_dper=False``).
4. Per step: reward ``r_t`` (the outcome reward on the last step, plus ``distrl_process_reward_weight * r_p``),
   the value ``V(s_t)`` (a :class:`coach_rl.critic.Critic` scoring the state text with an empty action), the
   sequence importance ratio ``rho_t = pi(a_t|s_t) / mu(a_t|s_t)`` from the record's ``token_logprobs`` (the
   behaviour policy) against the current policy, Retrace(lambda) targets with ``c_i = lambda min(1, rho_i)``
   (:func:`coach_rl.returns.retrace_targets`; plain TD(lambda) with ``distrl_use_retrace=False``) and the
   one-step A-RIDE advantage (:func:`coach_rl.advantages.aride_advantages`).
5. V regresses onto the Retrace targets (:class:`coach_rl.critic.CriticTrainer`, clipped value loss); the policy
   takes one step of the A-RIDE loss (:func:`coach_rl.losses.distrl_actor_loss`): ``-rho A log pi`` plus the
   entropy bonus and the invalid-action penalty on records with a ``parse_error``.

Deviation from the paper, on purpose: V is regressed onto Retrace targets with a squared loss (the paper writes
both Retrace for V and a cross-entropy on ``1[G_t > 0]``; the two cannot both be V's loss), and the trajectory-level
value estimator ``V_traj`` that filters the replay is not built (the verifier's outcome reward plays its part).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coach_rl.actor import ActorUpdater
from coach_rl.advantages import aride_advantages
from coach_rl.algorithms.base import AlgorithmHooks, UpdateContext, register_algorithm
from coach_rl.arguments import CriticArguments, TrainerConfig
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.losses import distrl_actor_loss
from coach_rl.nonfinite import monitor_of
from coach_rl.priorities import PrioritizedTrajectorySampler, TrajectoryStats
from coach_rl.records import StepRecord, check_records, episodes
from coach_rl.returns import retrace_targets

__all__ = ["DistRLArguments", "DistRLConfig", "DistRLLearner", "load_records_jsonl", "save_records_jsonl"]

_PAPER = "DistRL (Wang et al. 2024)"


@dataclass
class DistRLArguments:
    """DistRL's settings (a mixin of :class:`DistRLConfig`; every field is read by DistRLLearner)."""

    # -- A-RIDE actor loss (Section 5.1, Eq. 1) --------------------------------------------------------
    distrl_entropy_coef: float = field(
        default=0.01, metadata={"help": f"beta, the weight of the entropy bonus in the A-RIDE loss ({_PAPER}, Eq. 1; "
                                        "the paper gives no value)."})
    distrl_invalid_penalty: float = field(
        default=1.0, metadata={"help": f"lambda of the invalid-action penalty: pushes down replies with a parse error "
                                       f"({_PAPER}, Eq. 1 and Appendix A.4.2, where P_invalid is 0/1)."})
    distrl_rho_max: float = field(
        default=2.0, metadata={"help": "Truncation of the sequence importance ratio pi/mu in the actor loss (0: none). "
                                       "The paper does not truncate; ratios of whole replies can be huge, so we do."})
    distrl_process_reward_weight: float = field(
        default=0.0, metadata={"help": "Weight of the process reward r_p added to each step's reward (DistRL itself uses "
                                       "only the outcome reward: 0)."})
    # -- value network and Retrace (Section 5.2) ------------------------------------------------------
    distrl_use_retrace: bool = field(
        default=True, metadata={"help": f"Retrace(lambda) off-policy correction of V's targets ({_PAPER}, Sec. 5.2). "
                                        "False: uncorrected TD(lambda) targets (the paper's ablation)."})
    distrl_retrace_lambda: float = field(
        default=0.95, metadata={"help": "Trace decay lambda in c_i = lambda * min(1, rho_i) (in [0, 1])."})
    # -- DPER (Section 5.3, Appendix A.4.3) -----------------------------------------------------------
    distrl_use_dper: bool = field(
        default=True, metadata={"help": f"Prioritised trajectory replay ({_PAPER}, Sec. 5.3). False: uniform replay "
                                        "(the paper's ablation)."})
    distrl_priority_w_td: float = field(
        default=1.0, metadata={"help": "w1, weight of the normalised mean |TD error| (paper's grid: 0.01..10)."})
    distrl_priority_w_rho: float = field(
        default=0.5, metadata={"help": "w2, weight of the mean importance ratio (paper's grid: 0.01..1)."})
    distrl_priority_w_entropy: float = field(
        default=0.1, metadata={"help": "w3, weight of the normalised mean entropy (paper's grid: 0.01..1)."})
    distrl_priority_alpha: float = field(
        default=0.5, metadata={"help": f"alpha in P(tau) = p^alpha / sum p^alpha ({_PAPER}, Appendix A.4: 0.5)."})
    distrl_priority_refresh_interval: int = field(
        default=5, metadata={"help": "Recompute every stored trajectory's priority under the latest policy every this "
                                     "many updates."})
    distrl_replay_capacity: int = field(
        default=512, metadata={"help": "Trajectories kept in the learner's circular replay (oldest overwritten)."})
    distrl_replay_trajectories: int = field(
        default=4, metadata={"help": "Trajectories drawn from the replay per update, besides the new episodes."})
    # -- warm-up ----------------------------------------------------------------------------------------
    distrl_warmup_path: str = field(
        default="", metadata={"help": "JSONL of StepRecords (save_records_jsonl) put into the replay before online "
                                      "training ('' for none), as DistRL warms up on offline trajectories."})
    distrl_warmup_updates: int = field(
        default=0, metadata={"help": "Updates on the warm-up replay alone before the first online update."})



@dataclass
class DistRLConfig(DistRLArguments, CriticArguments, TrainerConfig):
    """Configuration of DistRL's A-RIDE learner (``algorithm: distrl``): the shared
    :class:`~coach_rl.arguments.TrainerConfig` (the actor's settings), the value network's
    :class:`~coach_rl.arguments.CriticArguments` and :class:`DistRLArguments`."""

    def validate_algorithm_arguments(self) -> None:
        """V's optimisation fields (DistRLArguments has no constraints of its own)."""
        self.validate_critic_arguments()


def save_records_jsonl(records: Sequence[StepRecord], path: str | Path) -> Path:
    """Write records as JSON lines (a warm-up set, or the learner's replay)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for record in check_records(records):
            f.write(json.dumps(asdict(record)) + "\n")
    tmp.replace(path)
    return path


def load_records_jsonl(path: str | Path) -> list[StepRecord]:
    """Read records written by :func:`save_records_jsonl`; a ValueError names the bad line."""
    out: list[StepRecord] = []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(StepRecord(**json.loads(line)))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: not a StepRecord: {exc}") from exc
    return out


class DistRLLearner(AlgorithmHooks):
    """A-RIDE with Retrace and DPER over StepRecord batches (see the module docstring)."""

    name = "distrl"
    episodes_per_instance = 1

    def __init__(
        self,
        actor: ActorUpdater,
        value_trainer: CriticTrainer,
        *,
        gamma: float = 0.95,
        entropy_coef: float = 0.01,
        invalid_penalty: float = 1.0,
        rho_max: float = 2.0,
        process_reward_weight: float = 0.0,
        use_retrace: bool = True,
        retrace_lambda: float = 0.95,
        use_dper: bool = True,
        priority_weights: tuple[float, float, float] = (1.0, 0.5, 0.1),
        priority_alpha: float = 0.5,
        priority_refresh_interval: int = 5,
        replay_capacity: int = 512,
        replay_trajectories: int = 4,
        warmup_records: Sequence[StepRecord] | None = None,
        warmup_updates: int = 0,
    ) -> None:
        """Take the actor's and V's optimisers and the settings of :class:`DistRLArguments`."""
        if not isinstance(actor, ActorUpdater):
            raise TypeError(f"actor must be an ActorUpdater, got {type(actor).__name__}")
        if not isinstance(value_trainer, CriticTrainer):
            raise TypeError(f"value_trainer must be a CriticTrainer (V and its optimiser), got {type(value_trainer).__name__}")
        for name, value in (("gamma", gamma), ("retrace_lambda", retrace_lambda)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        for name, value in (("entropy_coef", entropy_coef), ("invalid_penalty", invalid_penalty),
                            ("rho_max", rho_max), ("process_reward_weight", process_reward_weight)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        for name, value in (("replay_trajectories", replay_trajectories), ("warmup_updates", warmup_updates)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        self.actor = actor
        self.value_trainer = value_trainer
        self.gamma = float(gamma)
        self.entropy_coef = float(entropy_coef)
        self.invalid_penalty = float(invalid_penalty)
        self.rho_max = float(rho_max) if rho_max > 0 else None
        self.process_reward_weight = float(process_reward_weight)
        self.use_retrace = bool(use_retrace)
        self.retrace_lambda = float(retrace_lambda)
        self.use_dper = bool(use_dper)
        self.replay_trajectories = replay_trajectories
        self.warmup_updates = warmup_updates
        self.sampler = PrioritizedTrajectorySampler(priority_weights, priority_alpha, priority_refresh_interval,
                                                    capacity=replay_capacity)
        self.replay: dict[str, list[StepRecord]] = {}
        self.updates = 0
        self.warmed_up = warmup_updates == 0
        if warmup_records:
            self.add_trajectories(check_records(warmup_records, "warmup_records"))

    # -- the Algorithm protocol ---------------------------------------------------------------------------

    @property
    def policy_model(self) -> Any:
        """The policy being trained."""
        return self.actor.model

    @property
    def value_critic(self) -> Critic:
        """The state-value network V."""
        return self.value_trainer.critic

    def add_trajectories(self, records: Sequence[StepRecord]) -> list[str]:
        """Put the episodes of ``records`` into the replay (unscored: top priority until the next refresh)."""
        ids = []
        for steps in episodes(check_records(records)):
            episode_id = steps[0].episode_id
            self.replay[episode_id] = steps
            self.sampler.add(episode_id)
            ids.append(episode_id)
        for stale in set(self.replay) - set(self.sampler.ids):  # evicted by the circular buffer
            del self.replay[stale]
        return ids

    def update(self, records: Sequence[StepRecord], context: UpdateContext) -> dict[str, float]:
        """Replay in, priorities refreshed, one V step and one policy step on new + replayed trajectories."""
        records = check_records(records)
        metrics: dict[str, float] = {}
        if not self.warmed_up and self.replay:
            for _ in range(self.warmup_updates):
                if self.use_dper and self.sampler.needs_refresh(self.updates):
                    self.refresh_priorities()
                warm = self._train([self.replay[i] for i in self._draw(max(1, self.replay_trajectories), context.rng)])
                metrics.update({f"warmup/{k}": v for k, v in warm.items()})
        self.warmed_up = True
        new_ids = self.add_trajectories(records)
        if self.use_dper and self.sampler.needs_refresh(self.updates):
            self.refresh_priorities()
        batch_ids = new_ids + (self._draw(self.replay_trajectories, context.rng) if self.replay else [])
        if not batch_ids:
            raise ValueError("nothing to learn from: no records and an empty replay")
        metrics.update(self._train([self.replay[i] for i in batch_ids]))
        versions = [r.policy_version for r in records]
        metrics["distrl/staleness_mean"] = (float(np.mean([context.policy_version - v for v in versions]))
                                            if versions else 0.0)
        metrics["distrl/replay_trajectories"] = float(len(self.replay))
        metrics["distrl/priority_mean"] = float(self.sampler.priorities().mean()) if len(self.sampler) else 0.0
        return metrics

    # -- internals ----------------------------------------------------------------------------------------

    def _draw(self, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` replay ids: by DPER probability, or uniformly when DPER is off."""
        if n == 0 or not self.replay:
            return []
        if self.use_dper:
            return self.sampler.sample(n, rng)
        ids = self.sampler.ids
        return [ids[int(i)] for i in rng.integers(0, len(ids), size=n)]

    def step_rewards(self, steps: Sequence[StepRecord]) -> list[float]:
        """r_t: the outcome reward on the last step plus ``process_reward_weight * r_p`` (missing r_p counts 0)."""
        out = []
        for t, r in enumerate(steps):
            rp = 0.0 if r.process_reward_missing else float(r.process_reward)
            out.append(self.process_reward_weight * rp + (float(r.outcome_reward) if t == len(steps) - 1 else 0.0))
        return out

    def _evaluate(self, trajectories: list[list[StepRecord]]) -> list[dict[str, Any]]:
        """Per trajectory: V, current and behaviour token log-probs, rho, targets, advantages, DPER stats."""
        flat = [r for steps in trajectories for r in steps]
        values = self.value_critic.score([r.prompt_text for r in flat], [""] * len(flat),
                                         batch_size=self.value_trainer.micro_batch_size).tolist()
        current = self.actor.token_logprobs([r.prompt_text for r in flat], [r.response for r in flat],
                                            completion_ids=[r.token_ids for r in flat])
        out, pos = [], 0
        for steps in trajectories:
            n = len(steps)
            v = values[pos:pos + n]
            cur = current[pos:pos + n]
            pos += n
            behaviour = []
            for r, c in zip(steps, cur):
                recorded = r.token_logprobs
                ok = recorded is not None and len(recorded) == c.numel()
                behaviour.append(torch.tensor(recorded, dtype=torch.float32) if ok else c.clone())
            log_pi = [float(c.sum()) for c in cur]
            rho = [math.exp(min(50.0, lp - float(b.sum()))) for lp, b in zip(log_pi, behaviour)]
            rewards = self.step_rewards(steps)
            broken = not all(math.isfinite(x) for x in v)  # a NaN/inf V: this trajectory is left out of training
            v_used = [0.0] * n if broken else v
            targets = retrace_targets(rewards, v_used, self.gamma, self.retrace_lambda,
                                      rhos=rho if self.use_retrace else None)
            adv = aride_advantages(rewards, v_used, self.gamma).tolist()
            td = aride_advantages(rewards, v_used, self.gamma).abs().mean().item()
            stats = TrajectoryStats(abs_td=td, rho=float(np.mean(rho)), entropy=float(np.mean([-x for x in log_pi])))
            out.append({"values": v, "behaviour": behaviour, "targets": targets, "advantages": adv, "stats": stats,
                        "records": steps, "broken": broken})
        return out

    def refresh_priorities(self) -> None:
        """Recompute every stored trajectory's DPER statistics under the current policy and V."""
        ids = self.sampler.ids
        for start in range(0, len(ids), 16):
            chunk = ids[start:start + 16]
            for episode_id, ev in zip(chunk, self._evaluate([self.replay[i] for i in chunk])):
                self.sampler.update(episode_id, ev["stats"])
        self.sampler.mark_refreshed(self.updates)

    def _train(self, trajectories: list[list[StepRecord]]) -> dict[str, float]:
        """One V step onto the Retrace targets and one A-RIDE policy step on ``trajectories``."""
        evaluated = self._evaluate(trajectories)
        for steps, ev in zip(trajectories, evaluated):
            if steps[0].episode_id in self.replay:
                self.sampler.update(steps[0].episode_id, ev["stats"])
        broken = [ev for ev in evaluated if ev["broken"]]
        monitor = monitor_of(self.actor)
        if broken:
            bad = sum(len(ev["records"]) for ev in broken)
            monitor.bad("value", f"state {broken[0]['records'][0].prompt_text!r}", f"V(s) was NaN/inf on {len(broken)} "
                        "trajectory(ies); they are left out of this update", count=bad,
                        streak=len(broken) == len(evaluated))
            trajectories = [steps for steps, ev in zip(trajectories, evaluated) if not ev["broken"]]
            evaluated = [ev for ev in evaluated if not ev["broken"]]
            if not evaluated:
                return {"actor/skipped_steps": 1.0, "critic/skipped_steps": 1.0, "distrl/nonfinite_steps": float(bad)}
        else:
            monitor.ok("value")
        flat = [r for steps in trajectories for r in steps]
        values = [x for ev in evaluated for x in ev["values"]]
        targets = [x for ev in evaluated for x in ev["targets"]]
        # a down-weighted (stale) step counts less in the actor loss: its advantage is scaled by its weight
        advantages = [x * r.sample_weight for ev in evaluated for x, r in zip(ev["advantages"], ev["records"])]
        behaviour = [x for ev in evaluated for x in ev["behaviour"]]
        critic = self.value_trainer.update([r.prompt_text for r in flat], [""] * len(flat), targets, q_old=values)
        actor = self._actor_step(flat, behaviour, advantages)
        self.updates += 1
        out = {f"actor/{k}": v for k, v in actor.items()}
        out.update({f"critic/{k}": v for k, v in critic.items()})
        out["distrl/advantage_mean"] = float(np.mean(advantages))
        out["distrl/target_mean"] = float(np.mean(targets))
        return out

    def _actor_step(self, flat: list[StepRecord], behaviour: list[torch.Tensor], advantages: list[float]) -> dict[str, float]:
        """One optimiser step of :func:`distrl_actor_loss`, accumulated over the actor's micro-batches."""
        actor = self.actor
        pairs = [actor.encode_pair(r.prompt_text, r.response, r.token_ids) for r in flat]
        n = len(flat)
        actor.model.train()
        actor.optimizer.zero_grad(set_to_none=True)
        sums = {"loss": 0.0, "rho_mean": 0.0, "entropy": 0.0, "invalid_share": 0.0, "policy_term": 0.0}
        for start in range(0, n, actor.micro_batch_size):
            idx = list(range(start, min(n, start + actor.micro_batch_size)))
            batch = actor._collate([pairs[i] for i in idx])
            logps = actor._token_logps(batch)
            mask = batch["target_mask"]
            mu = torch.zeros_like(logps)
            for row, i in enumerate(idx):
                mu[row][mask[row]] = behaviour[i].to(logps.device, logps.dtype)
            adv = torch.tensor([advantages[i] for i in idx], dtype=logps.dtype, device=logps.device)
            invalid = torch.tensor([flat[i].parse_error is not None for i in idx], device=logps.device)
            out = distrl_actor_loss(logps, mu, adv, invalid, mask=mask, beta=self.entropy_coef,
                                    penalty_coef=self.invalid_penalty, rho_max=self.rho_max)
            weight = len(idx) / n
            (out.loss * weight).backward()
            sums["loss"] += float(out.loss.detach()) * weight
            sums["rho_mean"] += float(out.rho.mean()) * weight
            sums["entropy"] += float(out.entropy) * weight
            sums["invalid_share"] += float(out.penalty) * weight
            sums["policy_term"] += float(out.policy_term) * weight
        actor.optimizer_step(sums["loss"], "a DistRL actor step", sums)
        return sums

    # -- resume ---------------------------------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Policy and its optimiser, V and its optimiser, the replay, the DPER state and the counters."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        torch.save(self.actor.state_dict(), directory / "distrl_actor.pt")
        torch.save(self.value_trainer.state_dict(), directory / "distrl_value.pt")
        save_records_jsonl([r for steps in self.replay.values() for r in steps], directory / "distrl_replay.jsonl")
        state = {"sampler": self.sampler.state_dict(), "updates": self.updates, "warmed_up": self.warmed_up,
                 "order": list(self.replay)}
        tmp = directory / "distrl_state.json.tmp"
        tmp.write_text(json.dumps(state))
        tmp.replace(directory / "distrl_state.json")

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote."""
        directory = Path(directory)
        missing = [n for n in ("distrl_actor.pt", "distrl_value.pt", "distrl_replay.jsonl", "distrl_state.json")
                   if not (directory / n).exists()]
        if missing:
            raise FileNotFoundError(f"{directory} is not a DistRL checkpoint: missing {missing}")
        self.actor.load_state_dict(torch.load(directory / "distrl_actor.pt", weights_only=False))
        self.value_trainer.load_state_dict(torch.load(directory / "distrl_value.pt", weights_only=False))
        state = json.loads((directory / "distrl_state.json").read_text())
        grouped = {steps[0].episode_id: steps for steps in episodes(load_records_jsonl(directory / "distrl_replay.jsonl"))}
        self.replay = {i: grouped[i] for i in state["order"]}
        self.sampler.load_state_dict(state["sampler"])
        self.updates = int(state["updates"])
        self.warmed_up = bool(state["warmed_up"])


@register_algorithm("distrl", config=DistRLConfig)
def build_distrl(config: Any, model: Any, tokenizer: Any, **parts: Any) -> DistRLLearner:
    """``algorithm: distrl``: the actor from the CoachConfig's actor fields, V from its critic fields, DistRL's own
    settings from the :class:`DistRLArguments` fields of ``config.coach``; ``parts["value_critic"]`` overrides V."""
    coach = config.coach
    critic = parts.get("value_critic") or Critic.from_pretrained_lm(model, tokenizer, seed=coach.seed)
    value_trainer = CriticTrainer.from_config(critic, coach, max(1, int(coach.total_iterations)))
    warmup = load_records_jsonl(coach.distrl_warmup_path) if coach.distrl_warmup_path else None
    return DistRLLearner(
        ActorUpdater.from_config(model, tokenizer, coach),
        value_trainer,
        gamma=coach.gamma,
        entropy_coef=coach.distrl_entropy_coef,
        invalid_penalty=coach.distrl_invalid_penalty,
        rho_max=coach.distrl_rho_max,
        process_reward_weight=coach.distrl_process_reward_weight,
        use_retrace=coach.distrl_use_retrace,
        retrace_lambda=coach.distrl_retrace_lambda,
        use_dper=coach.distrl_use_dper,
        priority_weights=(coach.distrl_priority_w_td, coach.distrl_priority_w_rho, coach.distrl_priority_w_entropy),
        priority_alpha=coach.distrl_priority_alpha,
        priority_refresh_interval=coach.distrl_priority_refresh_interval,
        replay_capacity=coach.distrl_replay_capacity,
        replay_trajectories=coach.distrl_replay_trajectories,
        warmup_records=warmup,
        warmup_updates=coach.distrl_warmup_updates,
    )
