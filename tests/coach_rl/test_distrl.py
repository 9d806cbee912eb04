"""DistRL's learner (A-RIDE + Retrace + DPER) on a tiny locally built Qwen2 over hand-made StepRecords."""

from __future__ import annotations

import copy
import dataclasses
import types

import numpy as np
import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorUpdater
from coach_rl.algorithms import Algorithm, UpdateContext, build_algorithm
from coach_rl.algorithms.distrl import DistRLLearner, load_records_jsonl, save_records_jsonl
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.records import StepRecord
from coach_rl.returns import retrace_targets


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_causal_lm(seed=0)


def _prompt(task: str, t: int) -> str:
    return f"<|im_start|>user\nTask: {task}. Step {t}.<|im_end|>\n<|im_start|>assistant\n"


GOOD, BAD = "Action: click(start_box='(10,20)')", "Action: rotate_screen(now)"


def _episode(eid: str, responses: list[str], outcome: float, version: int = 0,
             invalid: tuple[int, ...] = ()) -> list[StepRecord]:
    return [StepRecord(episode_id=eid, step_index=t, num_steps=len(responses), task="Clock", group=f"Clock:{eid}",
                       prompt=[], prompt_text=_prompt("Clock", t), response=r, policy_version=version,
                       outcome_reward=outcome, parse_error="unknown action" if t in invalid else None)
            for t, r in enumerate(responses)]


def _with_behaviour(actor: ActorUpdater, records: list[StepRecord], shift: float) -> list[StepRecord]:
    """Records carrying token ids and behaviour log-probs of the current policy, shifted (an older policy)."""
    logps = actor.token_logprobs([r.prompt_text for r in records], [r.response for r in records])
    out = []
    for r, lp in zip(records, logps):
        ids, n = actor.encode_pair(r.prompt_text, r.response)
        out.append(dataclasses.replace(r, token_ids=ids[-n:], token_logprobs=[float(x) + shift / n for x in lp]))
    return out


def _learner(model, tok, **kwargs) -> DistRLLearner:
    model = copy.deepcopy(model)
    actor = ActorUpdater(model, tok, lr=1e-3, micro_batch_size=4)
    critic = Critic.from_pretrained_lm(model, tok, seed=0)
    trainer = CriticTrainer(critic, total_steps=20, learning_rate=1e-3, warmup_ratio=0.0, micro_batch_size=8)
    kwargs.setdefault("gamma", 0.9)
    return DistRLLearner(actor, trainer, **kwargs)


def _batches(learner: DistRLLearner) -> list[list[StepRecord]]:
    a = _with_behaviour(learner.actor, _episode("a", [GOOD, GOOD], 1.0), shift=-0.3)
    b = _with_behaviour(learner.actor, _episode("b", [BAD, GOOD, BAD], 0.0, invalid=(0, 2)), shift=0.4)
    c = _with_behaviour(learner.actor, _episode("c", [GOOD], 1.0, version=1), shift=0.0)
    return [a + b, c]


def test_targets_advantages_and_stats_follow_the_formulas(tiny) -> None:
    model, tok = tiny
    learner = _learner(model, tok, retrace_lambda=0.8)
    first, _ = _batches(learner)
    steps_b = first[2:]
    ev = learner._evaluate([steps_b])[0]
    rewards = learner.step_rewards(steps_b)
    assert rewards == [0.0, 0.0, 0.0]
    # rho_t = exp(log pi - log mu): the behaviour log-probs were shifted by +0.4 per reply, so rho = e^-0.4
    np.testing.assert_allclose([float(sum(b)) for b in ev["behaviour"]],
                               [sum(r.token_logprobs) for r in steps_b], rtol=1e-6)
    rho = [float(np.exp(-0.4))] * 3
    np.testing.assert_allclose(ev["targets"], retrace_targets(rewards, ev["values"], 0.9, 0.8, rhos=rho), rtol=1e-4)
    v = ev["values"]
    np.testing.assert_allclose(ev["advantages"], [0.9 * v[1] - v[0], 0.9 * v[2] - v[1], -v[2]], rtol=1e-5, atol=1e-7)
    assert ev["stats"].rho == pytest.approx(rho[0], rel=1e-4)
    assert ev["stats"].abs_td == pytest.approx(float(np.mean(np.abs(ev["advantages"]))))
    no_retrace = _learner(model, tok, retrace_lambda=0.8, use_retrace=False)._evaluate([steps_b])[0]
    np.testing.assert_allclose(no_retrace["targets"], retrace_targets(rewards, v, 0.9, 0.8), rtol=1e-4)


def test_update_moves_v_to_targets_penalises_invalid_and_fills_dper(tiny) -> None:
    model, tok = tiny
    learner = _learner(model, tok, entropy_coef=0.0, invalid_penalty=5.0, replay_trajectories=2)
    assert isinstance(learner, Algorithm)
    first, second = _batches(learner)
    bad = first[2]
    before_bad = float(learner.actor.sequence_logprobs([bad.prompt_text], [bad.response])[0])
    v_before = float(learner.value_critic.score([first[1].prompt_text], [""])[0])
    rng = np.random.default_rng(0)
    metrics = learner.update(first, UpdateContext(rng=rng, iteration=1, policy_version=0))
    for _ in range(3):
        metrics = learner.update(second, UpdateContext(rng=rng, iteration=2, policy_version=2))
    assert all(np.isfinite(v) for v in metrics.values())
    assert metrics["distrl/staleness_mean"] == 1.0
    assert metrics["distrl/replay_trajectories"] == 3.0
    assert metrics["actor/invalid_share"] >= 0.0
    after_bad = float(learner.actor.sequence_logprobs([bad.prompt_text], [bad.response])[0])
    assert after_bad < before_bad  # the invalid reply became less likely
    # the last step of the successful episode "a" has target ~1 (r = 1, terminal): V moves up towards it
    v_after = float(learner.value_critic.score([first[1].prompt_text], [""])[0])
    assert v_after > v_before
    assert sorted(learner.sampler.ids) == ["a", "b", "c"]
    assert learner.sampler.priorities().min() > 0


def test_dper_ablation_samples_uniformly(tiny) -> None:
    model, tok = tiny
    learner = _learner(model, tok, use_dper=False)
    first, second = _batches(learner)
    learner.add_trajectories(first + second)
    draws = learner._draw(3000, np.random.default_rng(0))
    freq = [draws.count(i) / 3000 for i in ("a", "b", "c")]
    np.testing.assert_allclose(freq, [1 / 3] * 3, atol=0.03)


def test_warmup_trajectories_are_replayed_before_online_training(tiny, tmp_path) -> None:
    model, tok = tiny
    probe = _learner(model, tok)
    first, _ = _batches(probe)
    path = save_records_jsonl(first, tmp_path / "warm.jsonl")
    assert load_records_jsonl(path) == first
    learner = _learner(model, tok, warmup_records=load_records_jsonl(path), warmup_updates=2)
    assert sorted(learner.replay) == ["a", "b"]
    _, second = _batches(learner)
    metrics = learner.update(second, UpdateContext(rng=np.random.default_rng(0)))
    assert learner.updates == 3  # two warm-up updates, then the online one
    assert "warmup/actor/loss" in metrics


def test_save_load_resumes_exactly(tiny, tmp_path) -> None:
    model, tok = tiny
    a = _learner(model, tok, replay_trajectories=2, priority_refresh_interval=1)
    first, second = _batches(a)
    a.update(first, UpdateContext(rng=np.random.default_rng(0)))
    a.save(tmp_path)
    rng_state = np.random.default_rng(5)
    a.update(second, UpdateContext(rng=rng_state))
    b = _learner(model, tok, replay_trajectories=2, priority_refresh_interval=1)
    b.load(tmp_path)
    b.update(second, UpdateContext(rng=np.random.default_rng(5)))
    for (name, pa), pb in zip(a.policy_model.state_dict().items(), b.policy_model.state_dict().values()):
        assert torch.equal(pa, pb), name
    for pa, pb in zip(a.value_critic.state_dict().values(), b.value_critic.state_dict().values()):
        assert torch.equal(pa, pb)
    assert a.sampler.state_dict() == b.sampler.state_dict()
    with pytest.raises(FileNotFoundError, match="not a DistRL checkpoint"):
        b.load(tmp_path / "nothing")


def test_factory_reads_config(tiny, tmp_path) -> None:
    model, tok = tiny

    from coach_rl.algorithms.distrl import DistRLConfig

    coach = DistRLConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", gamma=0.8, distrl_use_dper=False,
                         distrl_retrace_lambda=0.5, distrl_replay_trajectories=3)
    learner = build_algorithm("distrl", types.SimpleNamespace(coach=coach, loop=None), copy.deepcopy(model), tok)
    assert isinstance(learner, DistRLLearner)
    assert (learner.gamma, learner.use_dper, learner.retrace_lambda, learner.replay_trajectories) == (0.8, False, 0.5, 3)
    with pytest.raises(ValueError, match="retrace_lambda"):
        _learner(model, tok, retrace_lambda=2.0)
