"""coach_sssa (Coach's K = 1 ablation): Coach's critic half alone, an ActorUpdater on the stored actions, exact resume."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorUpdater
from coach_rl.algorithms import UpdateContext, build_algorithm
from coach_rl.algorithms.coach import CoachCritic
from coach_rl.configs import load_config
from coach_rl.records import StepRecord


class _Replay:
    """The replay buffer's sampling, over a fixed list of records."""

    def __init__(self, records: list[StepRecord]) -> None:
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def sample_records(self, n: int, rng: np.random.Generator) -> list[StepRecord]:
        return [self.records[i] for i in rng.choice(len(self.records), size=n, replace=False)]


def _records() -> list[StepRecord]:
    replies = ["tap(3)", "tap(5)", "back()", "tap(3)"]
    return [StepRecord(episode_id=f"e{i}", step_index=0, num_steps=1, task="OpenAppTaskEval", group=f"g{i}",
                       prompt=[{"role": "user", "content": f"screen {i % 2}"}], prompt_text=f"<screen {i % 2}>",
                       response=reply, outcome_reward=float(i % 2), success=float(i % 2))
            for i, reply in enumerate(replies)]


def _build(model, tok):
    return build_algorithm("coach_sssa", load_config("smoke", ["algorithm=coach_sssa"]), model, tok)


def test_coach_sssa_builds_coachs_critic_and_a_stored_action_actor_only():
    model, tok = build_tiny_causal_lm(seed=0)
    algorithm = _build(copy.deepcopy(model), tok)
    assert isinstance(algorithm, CoachCritic) and isinstance(algorithm.actor, ActorUpdater)
    assert algorithm.critic_trainer.critic is algorithm.critic and algorithm.policy_model is algorithm.actor.model
    from trl import GRPOTrainer

    assert not any(isinstance(v, GRPOTrainer) for v in vars(algorithm).values())  # no Coach actor trainer built


def test_coach_sssa_update_then_save_and_load_resumes_exactly(tmp_path):
    model, tok = build_tiny_causal_lm(seed=0)
    records = _records()
    first = _build(copy.deepcopy(model), tok)
    metrics = first.update(records, UpdateContext(replay=_Replay(records), rng=np.random.default_rng(0)))
    assert metrics["critic/steps"] >= 1 and metrics["actor/steps"] >= 1 and metrics["actor/states"] == 4.0
    first.save(tmp_path / "ckpt")
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["critic", "critic_trainer.pt", "sssa_actor.pt"]
    # a folder saved while this ablation still built Coach's actor trainer holds its actor_trainer.pt too: not read
    (tmp_path / "ckpt" / "actor_trainer.pt").write_bytes(b"not read")

    resumed = _build(copy.deepcopy(first.policy_model), tok)
    resumed.load(tmp_path / "ckpt")
    for a, b in zip(first.critic.state_dict().values(), resumed.critic.state_dict().values()):
        assert torch.equal(a, b)
    m1 = first.update(records, UpdateContext(replay=_Replay(records), rng=np.random.default_rng(1)))
    m2 = resumed.update(records, UpdateContext(replay=_Replay(records), rng=np.random.default_rng(1)))
    assert {k: v for k, v in m1.items() if not k.startswith("time/")} == pytest.approx(
        {k: v for k, v in m2.items() if not k.startswith("time/")})
    for (name, a), b in zip(first.policy_model.state_dict().items(), resumed.policy_model.state_dict().values()):
        assert torch.equal(a, b), name


def test_the_iterations_prm_labelled_replies_reach_a_critic_that_samples_the_replay_buffer():
    """With critic_updates_per_iteration the critic trains on replay batches, whose records carry no PRM-labelled extra
    replies (the buffer does not keep them): this iteration's (critic_prm_candidates) must join the batch anyway."""
    import dataclasses

    from coach_rl.algorithms.coach import critic_examples

    model, tok = build_tiny_causal_lm(seed=0)
    config = load_config("smoke", ["algorithm=coach_sssa", "critic_updates_per_iteration=1"])
    algorithm = build_algorithm("coach_sssa", config, model, tok)
    stored = _records()
    new = [dataclasses.replace(r, candidate_labels=[("home()", 0.0), ("tap(9)", 1.0)]) for r in _records()[:2]]
    out = algorithm.critic_update(new, UpdateContext(replay=_Replay(stored), rng=np.random.default_rng(0)))
    assert out["critic/candidate_examples"] == 4.0 and out["critic/steps"] >= 1
    states, actions, targets = critic_examples(stored[:1], candidates_of=new[:1])
    assert actions == [stored[0].response, "home()", "tap(9)"]
    assert targets == [stored[0].return_t, 0.0, 1.0]
    assert states == [stored[0].prompt_text, new[0].prompt_text, new[0].prompt_text]
