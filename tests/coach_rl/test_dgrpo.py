"""DGRPO as an Algorithm on real sim episodes with a tiny policy: direction of the update, ablations, exact resume."""

from __future__ import annotations

import copy
import dataclasses
import json

import gymnasium as gym
import pytest
import torch

import android_gym  # noqa: F401  (registers the env ids)
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorUpdater
from coach_rl.algorithms import Algorithm, UpdateContext, algorithm_names, build_algorithm
from coach_rl.algorithms.dgrpo import DGRPO, DGRPOArguments
from coach_rl.configs import load_config
from coach_rl.demos import collect_demos
from coach_rl.policy import HFPolicy, PolicyFormat
from coach_rl.records import StepRecord, episodes
from coach_rl.rollout import RolloutCollector

TASK, SEED = "SystemWifiTurnOn", 3


@pytest.fixture(scope="module")
def sim_records():
    """Real episodes of one task instance: the sim's expert (successful) and a tiny random policy's (failed)."""
    model, tok = build_tiny_causal_lm(seed=0)
    policy = HFPolicy(model, tok, format=PolicyFormat(action_format="index", max_history=1, action_space=()),
                      max_new_tokens=6, record_logprobs=True)
    demos = collect_demos(policy, tasks=[TASK], seeds=[SEED])
    group = f"{TASK}:{SEED}"
    records: list[StepRecord] = []
    n = len(demos.records)
    for r in demos.records:
        records.append(StepRecord(
            episode_id="expert", step_index=r.step_index, num_steps=n, task=TASK, group=group,
            prompt=policy.messages_for(r.request), prompt_text=policy.prompt_text_for(r.request), response=r.answer,
            outcome_reward=1.0, success=1.0))
    env = gym.make("AndroidSim-v0", task=TASK, max_steps=3)
    torch.manual_seed(0)
    batch = RolloutCollector([env], policy).collect(2, seeds=[SEED, SEED])
    env.close()
    for k, episode in enumerate(episodes(batch.records)):  # the collector's records, renamed, rewards as before
        for r in episode:
            records.append(StepRecord(
                episode_id=f"policy{k}", step_index=r.step_index, num_steps=r.num_steps, task=TASK, group=group,
                prompt=r.prompt, prompt_text=r.prompt_text, response=r.response, token_ids=r.token_ids,
                token_logprobs=r.token_logprobs, outcome_reward=r.outcome_reward, success=r.success))
    return (model, tok), records


def _mean_logps(actor: ActorUpdater, records: list[StepRecord], episode: str) -> float:
    steps = [r for r in records if r.episode_id == episode]
    logps = actor.token_logprobs([s.prompt_text for s in steps], [s.response for s in steps],
                                 completion_ids=[s.token_ids for s in steps])
    return float(torch.cat(logps).mean())


def test_dgrpo_update_moves_the_policy_towards_the_positive_trajectories(sim_records):
    (model, tok), records = sim_records
    actor = ActorUpdater(copy.deepcopy(model), tok, lr=2e-3)
    dgrpo = DGRPO(actor, DGRPOArguments(dgrpo_group_size=3))
    trajectories = dgrpo.trajectories(records)
    advantages = {t.episode_id: t.advantage for t in trajectories}
    assert advantages["expert"] > 0 and sum(advantages.values()) == pytest.approx(0.0, abs=1e-6)
    before = {e: _mean_logps(actor, records, e) for e in advantages}
    metrics = {}
    for iteration in range(1, 4):
        metrics = dgrpo.update(records, UpdateContext(iteration=iteration))
    after = {e: _mean_logps(actor, records, e) for e in advantages}
    for episode, adv in advantages.items():
        if adv > 0:
            assert after[episode] > before[episode], episode
        elif adv < 0:
            assert after[episode] < before[episode], episode
    assert metrics["actor/steps"] == 1.0 and metrics["actor/kl_ref"] > 0
    # the expert trajectory (top kappa) was stored after the first update, replayed in the next ones
    assert metrics["dapr/replayed"] == 1.0 and metrics["dapr/inserted"] == 1.0
    assert json.dumps(metrics)  # flat, JSON-safe numbers


def test_dgrpo_is_a_registered_algorithm_with_ablation_switches(sim_records):
    (model, tok), records = sim_records
    assert "dgrpo" in algorithm_names()

    run = load_config("smoke", ["algorithm=dgrpo", "learning_rate=1e-3", "dgrpo_group_size=3", "dgrpo_dapr=false",
                                "dgrpo_fcf=false", "dgrpo_spa=false", "dgrpo_kl_beta=0"])
    assert type(run.coach).__name__ == "DGRPOConfig"  # the dgrpo_* fields are DGRPO's config's own

    algo = build_algorithm("dgrpo", run, copy.deepcopy(model), tok)
    assert isinstance(algo, Algorithm) and algo.episodes_per_instance == 3 and algo.reference is None
    metrics = algo.update(records, UpdateContext())
    assert len(algo.replay) == 0 and "fcf/removed" not in metrics
    assert algo.task_weights([TASK]) == {TASK: 1.0}
    # without SPA every success is worth 1 whatever its length
    assert {t.reward for t in algo.trajectories(records) if t.outcome > 0} == {1.0}


def test_spa_prefers_the_shorter_success_and_fcf_cools_a_failing_task(sim_records):
    (model, tok), records = sim_records
    dgrpo = DGRPO(ActorUpdater(copy.deepcopy(model), tok), DGRPOArguments(dgrpo_group_size=3, dgrpo_kl_beta=0.0))
    expert = [r for r in records if r.episode_id == "expert"]
    longer = [dataclasses.replace(r, episode_id="slow", step_index=r.step_index, num_steps=2 * len(expert)) for r in expert]
    longer += [dataclasses.replace(r, episode_id="slow", step_index=len(expert) + r.step_index) for r in expert]
    trajectories = {t.episode_id: t for t in dgrpo.trajectories(records + longer)}
    assert trajectories["expert"].reward == 1.0 and trajectories["slow"].reward == pytest.approx(0.5)
    assert trajectories["expert"].advantage > trajectories["slow"].advantage > trajectories["policy0"].advantage
    failing = [r for r in records if r.episode_id != "expert"]
    for _ in range(2):
        dgrpo.update(failing, UpdateContext())  # all-zero rewards: ties, no gradient, but the curriculum counts
    assert dgrpo.task_weights([TASK, "Other"]) == pytest.approx({TASK: 2.718281828 ** -2, "Other": 1.0})


def test_dgrpo_save_load_resumes_exactly(sim_records, tmp_path):
    (model, tok), records = sim_records
    args = DGRPOArguments(dgrpo_group_size=3)
    first = DGRPO(ActorUpdater(copy.deepcopy(model), tok, lr=1e-3), args)
    first.update(records, UpdateContext())
    first.save(tmp_path / "ckpt")
    resumed = DGRPO(ActorUpdater(copy.deepcopy(model), tok, lr=1e-3), args)
    resumed.load(tmp_path / "ckpt")
    assert [t.episode_id for t in resumed.replay.items] == ["expert"]
    assert resumed.curriculum.state_dict() == first.curriculum.state_dict()
    m1 = first.update(records, UpdateContext())
    m2 = resumed.update(records, UpdateContext())
    assert m1 == pytest.approx(m2)
    for (name, a), (_, b) in zip(first.policy_model.state_dict().items(), resumed.policy_model.state_dict().items()):
        assert torch.equal(a, b), name
    with pytest.raises(FileNotFoundError, match="no DGRPO checkpoint"):
        resumed.load(tmp_path / "missing")


def test_dgrpo_gives_an_episode_alone_in_its_group_no_advantage(sim_records):
    """The env-step budget (or a failed reset) can leave one episode of a task instance: no group, advantage 0."""
    (model, tok), records = sim_records
    dgrpo = DGRPO(ActorUpdater(copy.deepcopy(model), tok), DGRPOArguments(dgrpo_group_size=3, dgrpo_kl_beta=0.0))
    alone = dgrpo.trajectories([r for r in records if r.episode_id == "expert"])
    assert [(t.episode_id, t.advantage) for t in alone] == [("expert", 0.0)]
    with pytest.raises(ValueError, match="dgrpo_group_size"):
        DGRPOArguments(dgrpo_group_size=1)


def _hand_dgrpo_step(model, reference, rows, old, advantages, beta, clip_eps):
    """The gradient of DGRPO's objective over the whole batch, by hand in one pass: the clipped trajectory ratio
    (log r = sum over its steps' completion tokens of logp - logp_old) averaged over trajectories, plus beta times the
    token mean over every completion token of the batch of k3 = e^(ref - logp) - (ref - logp) - 1."""
    def completion_logps(net, row):
        ids = torch.tensor([row.ids])
        logits = net(input_ids=ids).logits[0, :-1].float()
        logps = torch.log_softmax(logits, dim=-1).gather(-1, ids[0, 1:, None])[:, 0]
        return logps[-row.n_completion:]

    logps = [completion_logps(model, row) for row in rows]
    with torch.no_grad():
        refs = [completion_logps(reference, row) for row in rows]
    log_ratio = torch.zeros(len(advantages))
    for row, logp, before in zip(rows, logps, old):
        log_ratio = log_ratio + torch.nn.functional.one_hot(torch.tensor(row.trajectory), len(advantages)) * (logp - before).sum()
    ratio = torch.exp(log_ratio)
    policy = -torch.minimum(ratio * advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages).mean()
    diff = torch.cat(refs) - torch.cat(logps)
    kl = (torch.exp(diff) - diff - 1.0).mean()
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.autograd.grad(policy + beta * kl, params), float(kl.detach())


def test_dgrpo_step_with_kl_is_the_documented_loss_over_the_whole_batch(sim_records):
    """beta > 0 over several micro-batches (a trajectory split across two, micro-batches of unequal token counts): the
    step is plain SGD on the gradient of dgrpo_loss's objective over the whole batch, computed by hand in one pass."""
    (model, tok), records = sim_records
    beta, lr = 10.0, 0.1
    actor = ActorUpdater(copy.deepcopy(model), tok, lr=lr, grad_clip=0.0, micro_batch_size=2)
    dgrpo = DGRPO(actor, DGRPOArguments(dgrpo_group_size=3, dgrpo_kl_beta=beta, dgrpo_dapr=False, dgrpo_fcf=False))
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # a reference away from the policy: the KL and its gradient are not 0
        for p in dgrpo.reference.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=generator))
    params = [p for p in actor.model.parameters() if p.requires_grad]
    actor.optimizer = torch.optim.SGD(params, lr=lr)  # the parameters move by exactly -lr * gradient
    actor.scheduler = torch.optim.lr_scheduler.LambdaLR(actor.optimizer, lambda _: 1.0)
    seen = {}
    step = dgrpo._optimizer_step

    def spy(batch, rows, old, chosen):
        seen.update(batch=batch, rows=rows, old=[o.clone() for o in old], chosen=list(chosen))
        seen["start"] = [p.detach().clone() for p in params]
        seen["hand"], seen["kl"] = _hand_dgrpo_step(actor.model, dgrpo.reference, rows, seen["old"],
                                                    torch.tensor([t.advantage for t in batch]), beta, actor.clip_eps)
        seen["hand_no_kl"], _ = _hand_dgrpo_step(actor.model, dgrpo.reference, rows, seen["old"],
                                                 torch.tensor([t.advantage for t in batch]), 0.0, actor.clip_eps)
        return step(batch, rows, old, chosen)

    dgrpo._optimizer_step = spy
    metrics = dgrpo.update(records, UpdateContext())
    rows = seen["rows"]
    assert metrics["actor/steps"] == 1.0 and seen["chosen"] == list(range(len(seen["batch"])))
    chunks = [rows[i:i + 2] for i in range(0, len(rows), 2)]
    assert any(a[-1].trajectory == b[0].trajectory for a, b in zip(chunks, chunks[1:]))  # a trajectory split in two
    assert len({sum(r.n_completion for r in c) for c in chunks}) > 1  # micro-batches weigh differently by tokens
    assert metrics["actor/kl_ref"] == pytest.approx(seen["kl"], rel=1e-4) and seen["kl"] > 0.01
    moved = torch.cat([(p.detach() - s).flatten() for p, s in zip(params, seen["start"])])
    expected = torch.cat([-lr * g.flatten() for g in seen["hand"]])
    without_kl = torch.cat([-lr * g.flatten() for g in seen["hand_no_kl"]])
    assert float((expected - without_kl).norm()) > 0.3 * float(expected.norm())  # the KL term is a real part of it
    assert float((moved - expected).norm()) <= 1e-4 * float(expected.norm())
