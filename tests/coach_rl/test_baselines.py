"""GRPO and PPO baselines on a tiny locally built Qwen2: hand-checked advantages, update directions, V towards returns."""

from __future__ import annotations

import copy
import itertools

import pytest
import torch

from android_gym.trajectory import Step, Trajectory
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorUpdater
from coach_rl.algorithms.grpo import GRPOBaseline
from coach_rl.algorithms.ppo import PPOBaseline
from coach_rl.config import CoachConfig
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.records import StepRecord, trajectory_records


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_causal_lm(seed=0)


def _prompt(task: str, t: int, seed: int = 1) -> str:
    return f"<|im_start|>user\nTask: {task} #{seed}. Step {t}.<|im_end|>\n<|im_start|>assistant\n"


_EPISODES = itertools.count()


def _trajectory(task: str, seed: int, success: float, responses: list[str]) -> list[StepRecord]:
    """The StepRecords of one episode as the collector builds them (prompt text per step, outcome per episode)."""
    episode = f"episode-{next(_EPISODES)}"
    return [StepRecord(episode_id=episode, step_index=t, num_steps=len(responses), task=task, group=f"{task}:{seed}",
                       prompt=[], prompt_text=_prompt(task, t, seed), response=r, outcome_reward=success,
                       return_t=success, success=success) for t, r in enumerate(responses)]


GOOD, BAD = "Action: click(start_box='(10,20)')", "Action: press_home()"


def _group_batch() -> list[StepRecord]:
    """Two task instances with G = 4 rollouts each: one mixed group, one tied group."""
    episodes = [
        _trajectory("Clock", 1, 1.0, [GOOD, GOOD]),
        _trajectory("Clock", 1, 0.0, [BAD]),
        _trajectory("Clock", 1, 0.0, [BAD, BAD, BAD]),
        _trajectory("Clock", 1, 1.0, [GOOD]),
        _trajectory("Wifi", 2, 1.0, [GOOD]),
        _trajectory("Wifi", 2, 1.0, [GOOD]),
        _trajectory("Wifi", 2, 1.0, [GOOD]),
        _trajectory("Wifi", 2, 1.0, [GOOD]),
    ]
    return [record for episode in episodes for record in episode]


def test_records_group_step_records_into_episodes():
    recs = trajectory_records(_group_batch())
    assert len(recs) == 8
    assert recs[0].group == "Clock:1" and recs[0].outcome_reward == 1.0
    assert [(s.prompt_text, s.response) for s in recs[0].steps] == [(_prompt("Clock", 0), GOOD), (_prompt("Clock", 1), GOOD)]
    assert recs[2].steps[2].step_index == 2
    with pytest.raises(TypeError, match=r"records\[0\] must be a coach_rl.records.StepRecord, got Trajectory"):
        trajectory_records([Trajectory("A", "i", [Step(ui="", action=None, response="x")])])


def test_grpo_advantages_match_hand_computation(tiny):
    model, tok = tiny
    grpo = GRPOBaseline(ActorUpdater(copy.deepcopy(model), tok), group_size=4)
    adv = grpo.trajectory_advantages(_group_batch())
    std = torch.tensor([1.0, 0.0, 0.0, 1.0]).std().item()  # unbiased, as TRL: sqrt(1/3)
    expected = [0.5 / (std + 1e-4), -0.5 / (std + 1e-4), -0.5 / (std + 1e-4), 0.5 / (std + 1e-4)] + [0.0] * 4
    assert adv == pytest.approx(expected)
    samples = grpo.samples(_group_batch())
    assert len(samples) == 2 + 1 + 3 + 1 + 4  # every step of every trajectory
    assert [s.advantage for s in samples[:3]] == pytest.approx([expected[0], expected[0], expected[1]])
    assert samples[0].prompt_text == _prompt("Clock", 0) and samples[1].prompt_text == _prompt("Clock", 1)
    # the env-step budget ended the Clock group after 3 of its G = 4: normalised among those 3, and counted
    three = torch.tensor([1.0, 0.0, 0.0])
    std3 = three.std().item()  # unbiased: sqrt(1/3)
    assert grpo.trajectory_advantages(_group_batch()[:6]) == pytest.approx(
        [(2 / 3) / (std3 + 1e-4), (-1 / 3) / (std3 + 1e-4), (-1 / 3) / (std3 + 1e-4)])
    assert grpo.incomplete_groups == 1
    assert grpo.trajectory_advantages(_group_batch()[:2]) == [0.0]  # alone in its group: no baseline
    with pytest.raises(ValueError, match="has 5 trajectories, GRPO needs 4"):
        grpo.trajectory_advantages(_group_batch() + _trajectory("Clock", 1, 0.0, [BAD]))
    unscaled = GRPOBaseline(grpo.actor, scale_rewards=False).trajectory_advantages(_group_batch())
    assert unscaled == pytest.approx([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0])


def test_grpo_update_moves_logprobs_in_the_direction_of_the_advantage(tiny):
    model, tok = tiny
    actor = ActorUpdater(copy.deepcopy(model), tok, lr=1e-3)
    grpo = GRPOBaseline(actor, group_size=4)
    prompts = [_prompt("Clock", 0), _prompt("Clock", 0)]
    before = actor.sequence_logprobs(prompts, [GOOD, BAD])
    for _ in range(3):
        metrics = grpo.update(_group_batch())
    after = actor.sequence_logprobs(prompts, [GOOD, BAD])
    assert after[0] > before[0] and after[1] < before[1]
    assert metrics["grpo/groups"] == 2.0 and metrics["grpo/samples"] == 11.0 and metrics["actor/steps"] == 1.0


def _ppo(model, tok, lr_value: float = 1e-3, **kwargs) -> PPOBaseline:
    critic = Critic.from_pretrained_lm(model, tok, seed=4)
    value_trainer = CriticTrainer(critic, total_steps=100, learning_rate=lr_value, warmup_ratio=0.0)
    return PPOBaseline(ActorUpdater(copy.deepcopy(model), tok, lr=1e-3), value_trainer, **kwargs)


def test_ppo_advantages_are_gae_lambda_one_by_hand(tiny):
    model, tok = tiny
    ppo = _ppo(model, tok, gamma=0.9)
    batch = [*_trajectory("Clock", 1, 1.0, [GOOD, BAD, GOOD]), *_trajectory("Wifi", 2, 0.0, [BAD, BAD])]
    values = ppo.values(batch)
    states = [_prompt("Clock", t, 1) for t in range(3)] + [_prompt("Wifi", t, 2) for t in range(2)]
    torch.testing.assert_close(torch.cat(values), ppo.value_critic.score(states, [""] * 5))
    adv, ret = ppo.advantages_and_returns(batch, values)
    # lambda = 1: Monte Carlo return of the outcome reward on the last step, minus V(s_t)
    expected_ret = [[0.9 ** 2, 0.9, 1.0], [0.0, 0.0]]
    for a, r, v, e in zip(adv, ret, values, expected_ret):
        torch.testing.assert_close(r, torch.tensor(e, dtype=torch.float64))
        torch.testing.assert_close(a, torch.tensor(e, dtype=torch.float64) - v.double())


def test_whiten_by_hand():
    from coach_rl.advantages import whiten

    x = torch.tensor([1.0, 2.0, 3.0, 6.0], dtype=torch.float64)  # mean 3, population variance (4+1+0+9)/4 = 3.5
    torch.testing.assert_close(whiten(x, eps=0.0), (x - 3.0) / 3.5 ** 0.5)
    assert whiten(torch.tensor([5.0])).tolist() == [5.0]  # one entry: nothing to normalise against


def test_ppo_step_rewards_weigh_process_and_outcome_rewards_by_hand(tiny):
    model, tok = tiny
    ppo = _ppo(model, tok, gamma=0.5, w_p=0.2, w_o=1.0)
    steps = _trajectory("Clock", 1, 1.0, [GOOD, BAD, GOOD])
    for step, r_p in zip(steps, (1.0, float("nan"), 0.5)):  # the second step's r_p is missing: it counts 0
        step.process_reward = r_p
    (record,) = trajectory_records(steps)
    assert ppo.step_rewards(record) == pytest.approx([0.2, 0.0, 0.1 + 1.0])
    _, (ret,) = ppo.advantages_and_returns(steps)
    # R_2 = 1.1, R_1 = 0 + 0.5 * 1.1 = 0.55, R_0 = 0.2 + 0.5 * 0.55 = 0.475
    torch.testing.assert_close(ret, torch.tensor([0.475, 0.55, 1.1], dtype=torch.float64))
    assert _ppo(model, tok).step_rewards(record) == [0.0, 0.0, 1.0]  # default: the outcome on the last step only


def test_ppo_value_moves_towards_returns_and_actor_follows_advantages(tiny):
    model, tok = tiny
    ppo = _ppo(model, tok, lr_value=3e-4)
    batch = [*_trajectory("Clock", 1, 1.0, [GOOD, GOOD]), *_trajectory("Wifi", 2, 0.0, [BAD, BAD])]
    _, returns = ppo.advantages_and_returns(batch)
    target = torch.cat(returns).float()
    mse_before = ((torch.cat(ppo.values(batch)) - target) ** 2).mean()
    prompts = [_prompt("Clock", 0, 1), _prompt("Wifi", 0, 2)]
    logp_before = ppo.actor.sequence_logprobs(prompts, [GOOD, BAD])
    for _ in range(6):
        metrics = ppo.update(batch)
    values = torch.cat(ppo.values(batch))
    logp_after = ppo.actor.sequence_logprobs(prompts, [GOOD, BAD])
    assert ((values - target) ** 2).mean() < 0.5 * mse_before
    assert values[:2].min() > values[2:].max()  # success states now valued above failure states
    assert logp_after[0] > logp_before[0] and logp_after[1] < logp_before[1]
    for key in ("actor/loss", "value/loss", "value/value_mse", "ppo/return_mean", "ppo/advantage_mean"):
        assert key in metrics


def test_ppo_state_dict_resume_gives_the_identical_next_update(tiny):
    model, tok = tiny
    batch = [*_trajectory("Clock", 1, 1.0, [GOOD]), *_trajectory("Clock", 2, 0.0, [BAD, GOOD])]
    a = _ppo(model, tok)
    a.update(batch)
    saved = a.state_dict()
    a.update(batch)
    b = _ppo(build_tiny_causal_lm(seed=9)[0], tok)
    b.load_state_dict(saved)
    b.update(batch)
    for x, y in zip(a.actor.model.parameters(), b.actor.model.parameters()):
        assert torch.equal(x, y)
    for x, y in zip(a.value_critic.parameters(), b.value_critic.parameters()):
        assert torch.equal(x, y)


def test_from_config_shares_the_coach_settings(tiny, tmp_path):
    model, tok = tiny
    config = CoachConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", gamma=0.9)
    grpo = GRPOBaseline.from_config(copy.deepcopy(model), tok, config)
    assert grpo.group_size == 4 and grpo.actor.lr == 1e-6 and grpo.actor.clip_eps == 0.2
    ppo = PPOBaseline.from_config(copy.deepcopy(model), tok, config, total_value_steps=10)
    assert ppo.gamma == 0.9 and ppo.lam == 1.0 and ppo.value_trainer.learning_rate == 1e-5
    assert ppo.value_trainer.clip_range == 0.5 and ppo.actor.grad_clip == 1.0
    assert grpo.epochs == 1 and ppo.epochs == 1  # TRL's num_iterations (mu) defaults to one pass


def test_num_iterations_gives_grpo_and_ppo_that_many_optimiser_steps_per_batch(tiny, tmp_path):
    """TRL's ``num_iterations`` (mu) is the baselines' passes over each batch: one optimiser step per pass."""
    model, tok = tiny
    config = CoachConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", num_iterations=3)
    batch = [*_trajectory("Clock", 1, 1.0, [GOOD]), *_trajectory("Clock", 1, 0.0, [BAD, GOOD])]
    grpo = GRPOBaseline.from_config(copy.deepcopy(model), tok, config, group_size=2)
    assert grpo.update(batch)["actor/steps"] == 3
    ppo = PPOBaseline.from_config(copy.deepcopy(model), tok, config, total_value_steps=10)
    assert ppo.update(batch)["actor/steps"] == 3


def test_baselines_learn_from_the_collectors_rollout_batch(tiny):
    """End to end with the real RolloutCollector: G rollouts per task instance on AndroidSim, then GRPO and PPO updates.

    The collector records the generated token ids and their log-probs; recomputing those log-probs from the
    recorded prompt text must give them back, which checks that prompts are tokenised as generation saw them.
    """
    import gymnasium as gym

    import android_gym  # noqa: F401  (registers the env ids)
    from coach_rl.policy import HFPolicy, PolicyFormat
    from coach_rl.rollout import RolloutCollector

    model, tok = tiny
    policy_model = copy.deepcopy(model)
    policy = HFPolicy(policy_model, tok, format=PolicyFormat(action_format="index", max_history=1, action_space=()),
                      max_new_tokens=6, record_logprobs=True)
    envs = [gym.make("AndroidSim-v0", task="SystemWifiTurnOn", max_steps=2) for _ in range(2)]
    torch.manual_seed(0)
    batch = RolloutCollector(envs, policy).collect(8, seeds=[3] * 4 + [4] * 4)
    assert len(batch.trajectories) == 8

    actor = ActorUpdater(policy_model, tok, lr=1e-4)
    grpo = GRPOBaseline(actor, group_size=4, use_recorded_logprobs=True)
    samples = grpo.samples(batch.records)
    assert len(samples) == sum(len(traj.steps) for traj in batch.trajectories) == len(batch.records)
    assert [s.completion_ids for s in samples] == [r.token_ids for r in batch.records]
    recomputed = actor.token_logprobs([s.prompt_text for s in samples], [s.completion_text for s in samples],
                                      completion_ids=[s.completion_ids for s in samples])
    for sample, logps in zip(samples, recomputed):
        torch.testing.assert_close(logps, torch.tensor(sample.old_logps), atol=2e-4, rtol=1e-4)
    assert grpo.update(batch.records)["grpo/groups"] == 2.0

    ppo = PPOBaseline(actor, CriticTrainer(Critic.from_pretrained_lm(model, tok), total_steps=10))
    metrics = ppo.update(batch.records)
    assert metrics["ppo/outcome_reward_mean"] == pytest.approx(
        sum(t.info["outcome_reward"] for t in batch.trajectories) / 8)


def test_a_down_weighted_stale_step_counts_less_in_the_update(tiny):
    """stale_policy=downweight: a record's sample_weight scales its advantage (and so its clipped surrogate term)."""
    model, tok = tiny
    grpo = GRPOBaseline(ActorUpdater(copy.deepcopy(model), tok), group_size=4)
    records = _group_batch()
    full = [s.advantage for s in grpo.samples(records)]
    for record in records:
        record.sample_weight = 0.25
    assert [s.advantage for s in grpo.samples(records)] == pytest.approx([0.25 * a for a in full])
