"""The rollout collector: lockstep batched generation over several sim envs, rewards, returns, replay, device faults."""

from __future__ import annotations

import math
import time

import gymnasium as gym
import pytest
import torch

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.sim.faults import FaultPlan
from coach_reward.backends import TransformersBackend
from coach_reward.prm import ProcessRewardModel
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_reward.verifiers import RuleVerifier
from coach_rl.policy import HFPolicy, PolicyFormat, stored_prompt
from coach_rl.records import episodes
from coach_rl.replay import ReplayBuffer
from coach_rl.rewards import RewardPipeline, SimOracle
from coach_rl.rollout import STEP_INFO_KEYS, TRAJECTORY_INFO_KEYS, RolloutCollector

TASKS = ["SystemWifiTurnOn", "SystemBluetoothTurnOff"]
MAX_STEPS = 3


class RecordingPolicy(HFPolicy):
    """The real HFPolicy, remembering how many requests each act() call carried."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batch_sizes: list[int] = []

    def act(self, requests, *, greedy=False):
        self.batch_sizes.append(len(requests))
        return super().act(requests, greedy=greedy)


@pytest.fixture(scope="module")
def lm():
    return build_tiny_causal_lm(seed=0)


def _policy(lm, cls=HFPolicy, **kwargs):
    model, tokenizer = lm
    fmt = PolicyFormat(action_format="index", max_history=1, action_space=())
    return cls(model, tokenizer, format=fmt, max_new_tokens=6, **kwargs)


def _envs(n, **kwargs):
    return [gym.make("AndroidSim-v0", task=TASKS, max_steps=MAX_STEPS, **kwargs) for _ in range(n)]


def _hand_returns(r_p, r_o, w_p, w_o, gamma):
    """R_t = w_p * sum_{tau=t..T} gamma^(T-tau) r_p^tau + w_o * r_o, written out as loops."""
    T = len(r_p) - 1
    out = []
    for t in range(T + 1):
        total = 0.0
        for tau in range(t, T + 1):
            total += gamma ** (T - tau) * r_p[tau]
        out.append(w_p * total + w_o * r_o)
    return out


def test_lockstep_collection_writes_replay_with_the_paper_returns(lm, tmp_path):
    policy = _policy(lm, RecordingPolicy, record_logprobs=True)
    replay = ReplayBuffer(tmp_path / "replay")
    rewards_by_step = [0.25, 1.0, 0.5]  # a deterministic PRM: r_p depends on the step index

    def prm(trajectory):
        return [rewards_by_step[i % 3] for i in range(len(trajectory.steps))]

    collector = RolloutCollector(_envs(3), policy, replay=replay, prm=prm, w_p=0.3, w_o=2.0, gamma=0.9)
    torch.manual_seed(0)
    batch = collector.collect(7, seeds=100)
    stats = batch.stats

    assert len(batch) == stats.episodes == 7 and not batch.failures
    assert [t.info["episode"] for t in batch.trajectories] == list(range(7))
    assert [t.seed for t in batch.trajectories] == list(range(100, 107))
    assert stats.env_steps == sum(len(t) for t in batch.trajectories)
    # one batched generation per lockstep step, over every env with an episode running
    assert stats.generate_calls == len(policy.batch_sizes) == policy.generate_calls
    assert policy.batch_sizes[0] == 3 and max(policy.batch_sizes) == 3 and sum(policy.batch_sizes) == stats.env_steps
    assert stats.generated_tokens == sum(len(r.token_ids) for r in batch.records)
    for name in ("wall_seconds", "env_seconds", "generation_seconds", "replay_seconds"):
        assert getattr(stats, name) > 0
    assert stats.env_seconds + stats.generation_seconds + stats.reward_seconds + stats.replay_seconds \
        <= stats.wall_seconds + 1e-6
    assert stats.env_steps_per_second == pytest.approx(stats.env_steps / stats.wall_seconds)

    # returns follow the formula; the replay holds every trajectory with the same numbers
    assert replay.num_trajectories == 7 and len(replay) == stats.env_steps
    assert batch.replay_ids == replay.trajectory_ids()
    assert len(batch.records) == stats.env_steps
    for trajectory, records in zip(batch.trajectories, episodes(batch.records), strict=True):
        assert set(TRAJECTORY_INFO_KEYS) <= set(trajectory.info)
        r_p = [r.process_reward for r in records]
        assert r_p == prm(trajectory)
        expected = _hand_returns(r_p, trajectory.info["outcome_reward"], 0.3, 2.0, 0.9)
        assert [r.return_t for r in records] == pytest.approx(expected)
        assert records[0].episode_id == trajectory.info["replay_id"]
        stored = replay.load_trajectory(trajectory.info["replay_id"])
        assert [s.response for s in stored.steps] == [s.response for s in trajectory.steps]
        assert [s.info for s in stored.steps] == [s.info for s in trajectory.steps]
        # the exact prompt, tokens and return of every state survive the replay round trip, for the trainers
        assert replay.load_records(trajectory.info["replay_id"]) == records
        for record in records:
            assert stored_prompt(record.prompt) == record.prompt
            assert record.prompt_text.endswith("<|im_start|>assistant\n") and record.policy_version == 0
            assert record.token_ids and len(record.token_ids) == len(record.token_logprobs)
        sampled = replay.sample_steps(3, rng=0)
        assert all(s.prompt_text.startswith("<|im_start|>user") for s in sampled)
        assert all(s.record().prompt_text == s.prompt_text for s in sampled)
        for step in trajectory.steps:
            assert set(STEP_INFO_KEYS) <= set(step.info)


def test_collected_steps_carry_no_training_fields_in_info_only_their_records_do(lm):
    """What the policy produced is typed (PolicyTurn -> StepRecord); ``step.info`` keeps only the env's annotations
    and the index ``target`` the next prompts read."""
    training = {"prompt", "prompt_text", "thought", "num_tokens", "token_ids", "token_logprobs", "policy_version",
                "process_reward", "return_t", "env_error", "expert_action"}
    policy = _policy(lm, record_logprobs=True)
    policy.version = 4
    batch = RolloutCollector(_envs(2), policy, prm=SimOracle()).collect(3, seeds=11)  # the oracle needs expert actions
    assert batch.records and len(batch.records) == sum(len(t) for t in batch.trajectories)
    assert all(r.process_reward in (0.0, 1.0) or r.process_reward_missing for r in batch.records)
    for trajectory, records in zip(batch.trajectories, episodes(batch.records), strict=True):
        assert not training & set(trajectory.info) - {"policy_version"}
        assert not {"process_rewards", "returns", "sample_weight"} & set(trajectory.info)
        for step, record in zip(trajectory.steps, records, strict=True):
            assert not training & set(step.info), sorted(training & set(step.info))
            assert record.prompt and record.prompt_text.endswith("<|im_start|>assistant\n")
            assert record.token_ids and len(record.token_logprobs) == len(record.token_ids)
            assert all(math.isfinite(lp) and lp <= 0 for lp in record.token_logprobs)
            assert record.policy_version == 4 and record.response == step.response


def test_unparseable_replies_take_the_env_invalid_action_path(lm):
    env = _envs(1)
    batch = RolloutCollector(env, _policy(lm)).collect(1, seeds=[3], task_options={"task": "SystemWifiTurnOn"})
    trajectory = batch.trajectories[0]
    assert trajectory.task == "SystemWifiTurnOn" and len(trajectory) == MAX_STEPS
    assert trajectory.truncated and trajectory.success == 0.0
    for step in trajectory.steps:  # a random tiny model writes no valid JSON
        assert step.action is None and step.parse_error
        assert step.reward == pytest.approx(-0.1)  # the env's invalid-action penalty
    assert batch.stats.parse_errors == MAX_STEPS


def test_a_device_crash_truncates_only_its_own_trajectory(lm):
    # The third env's phone crashes on its 8th device call: 1 snapshot when the env is made, 5 calls to
    # reset, then one screen dump per step, so the crash hits the first episode's second step. The episode
    # ends truncated with the error, the env recovers at its next reset, and nothing else is lost.
    envs = _envs(2) + _envs(1, faults=FaultPlan(schedule=[(8, "crash")]))
    collector = RolloutCollector(envs, _policy(lm))
    batch = collector.collect(6, seeds=7)
    assert len(batch) == 6 and not batch.failures
    crashed = [t for t in batch.trajectories if t.error]
    assert len(crashed) == 1 and crashed[0].info["env_index"] == 2
    assert crashed[0].truncated and "DeviceCrashed" in crashed[0].error and len(crashed[0]) == 2
    assert batch.stats.env_errors == 1
    others = [t for t in batch.trajectories if not t.error]
    assert all(len(t) == MAX_STEPS for t in others)
    after = [t for t in batch.trajectories if t.info["env_index"] == 2 and t.info["episode"] > crashed[0].info["episode"]]
    assert after and all(not t.error for t in after)  # the crashed env came back for its next episode


def test_an_env_that_cannot_reset_is_reported_and_left_out(lm):
    envs = _envs(2)
    envs[1].unwrapped.device.close()  # every call now fails: resets cannot succeed
    batch = RolloutCollector(envs, _policy(lm), max_reset_failures=2).collect(4, seeds=0)
    assert len(batch.failures) == 2 and batch.stats.reset_failures == 2 and batch.stats.envs_disabled == 1
    assert all(f.env_index == 1 and "Disconnected" in f.error for f in batch.failures)
    assert len(batch) == 2 and all(t.info["env_index"] == 0 for t in batch.trajectories)
    assert sorted([t.info["episode"] for t in batch.trajectories] + [f.episode for f in batch.failures]) == [0, 1, 2, 3]


def test_threads_give_the_same_episodes_as_sequential_stepping(lm):
    runs = []
    for threads in (False, True):
        policy = _policy(lm)
        batch = RolloutCollector(_envs(3), policy, threads=threads).collect(5, seeds=11, greedy=True)
        runs.append([(t.task, [s.response for s in t.steps], [s.ui for s in t.steps]) for t in batch.trajectories])
    assert runs[0] == runs[1]


class _ResetClock(gym.Wrapper):
    """Records when each reset of the wrapped env started and ended (the env itself is untouched)."""

    def __init__(self, env, log):
        super().__init__(env)
        self.log = log

    def reset(self, **kwargs):
        started = time.perf_counter()
        try:
            return self.env.reset(**kwargs)
        finally:
            self.log.append((started, time.perf_counter()))


def _overlapping(intervals):
    ordered = sorted(intervals)
    return sum(1 for (_, end), (start, _) in zip(ordered, ordered[1:]) if start < end)


def test_with_threads_resets_on_slow_devices_overlap_and_episodes_stay_the_same(lm):
    # the sim's latency model makes every shell command (task set-up) and dump wait, as a device does
    latency = {"shell": 0.01, "dump": 0.02, "launch": 0.02}
    runs, overlaps = [], []
    for threads in (False, True):
        log: list[tuple[float, float]] = []
        envs = [_ResetClock(env, log) for env in _envs(3, latency=latency)]
        batch = RolloutCollector(envs, _policy(lm), threads=threads).collect(6, seeds=3, greedy=True)
        runs.append([(t.task, t.info["env_index"], [s.response for s in t.steps]) for t in batch.trajectories])
        overlaps.append(_overlapping(log))
        assert len(log) == 6
    assert runs[0] == runs[1]  # the same episodes on the same envs
    assert overlaps[0] == 0 and overlaps[1] >= 2  # one at a time; then at least the first round of 3 at once


def test_a_real_prm_and_the_rule_verifier_give_the_rewards(lm):
    model, tokenizer = lm
    # an untrained judge answers no readable verdict: asked again (retries), then r_p is missing (NaN), not 0.5
    prm = ProcessRewardModel(TransformersBackend(model, tokenizer), max_new_tokens=4)
    rewards = RewardPipeline(prm, RuleVerifier(use_recorded=True), retries=1, retry_wait=0.0)
    collector = RolloutCollector(_envs(2), _policy(lm), rewards=rewards)
    with pytest.warns(RuntimeWarning, match="no usable score"):
        batch = collector.collect(2, seeds=1,
                                  task_options=[{"task": "SystemWifiTurnOn"}, {"task": "SystemBluetoothTurnOff"}])
    steps = sum(len(t) for t in batch.trajectories)
    for trajectory in batch.trajectories:
        assert trajectory.info["outcome_reward"] == 0.0  # never finished: the rule check gives 0
        assert trajectory.info["verifier"]
    assert all(r.process_reward_missing for r in batch.records) and len(batch.records) == steps
    assert [r.return_t for r in batch.records] == pytest.approx([0.0] * steps)  # the outcome alone
    # one batched call for all steps of the round, one more for the steps still unscored
    assert rewards.stats.prm_calls == 2 and rewards.stats.prm_retries == 1 and rewards.stats.prm_missing == steps
    assert batch.stats.reward_seconds > 0 and batch.stats.verifier_errors == 0

    def failing(trajectory):
        raise RuntimeError("judge offline")

    fallback = RolloutCollector(_envs(1), _policy(lm), verifier=failing).collect(1, seeds=2)
    assert fallback.stats.verifier_errors == 1
    assert "judge offline" in fallback.trajectories[0].info["verifier"]


def test_bad_arguments_are_refused(lm):
    with pytest.raises(ValueError, match="envs"):
        RolloutCollector([], _policy(lm))
    with pytest.raises(ValueError, match="gamma"):
        RolloutCollector(_envs(1), _policy(lm), gamma=1.5)
    collector = RolloutCollector(_envs(1), _policy(lm))
    with pytest.raises(ValueError, match="seeds"):
        collector.collect(3, seeds=[1, 2])
    with pytest.raises(ValueError, match="n_episodes"):
        collector.collect(-1)
    assert len(collector.collect(0)) == 0


class _ActionLog(gym.Wrapper):
    """Records what the collector steps the env with (the checker-wrapped env underneath stays as made)."""

    def __init__(self, env):
        super().__init__(env)
        self.actions = []

    def step(self, action):
        self.actions.append(action)
        return self.env.step(action)


def test_the_collector_keeps_the_env_contract_and_annotates_the_envs_own_record(lm):
    """Steps carry what the action space declares (Gymnasium's checker on); each episode is recorded once."""
    from gymnasium.wrappers.common import PassiveEnvChecker

    env = _ActionLog(gym.make("AndroidSim-v0", task=TASKS, max_steps=MAX_STEPS))
    assert any(isinstance(w, PassiveEnvChecker) for w in _wrappers(env))
    batch = RolloutCollector([env], _policy(lm)).collect(1, seeds=5)
    (trajectory,) = batch.trajectories
    assert trajectory is env.unwrapped.trajectory  # the env's own record, annotated: no second copy
    assert env.actions and all(env.action_space.contains(a) for a in env.actions)
    for step, record in zip(trajectory.steps, batch.records):
        assert "activity" in step.info and "target" in step.info  # the env's annotations + the collector's one
        assert step.response == record.response
    assert trajectory.seed == 5 and "instance_seed" in trajectory.info


def _wrappers(env):
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env


class _PickLast:
    """A chooser that always takes the last of its ``samples`` replies, recording what it was shown."""

    def __init__(self, samples):
        self.samples = samples
        self.shown = []

    def __call__(self, requests, replies):
        self.shown.append([[r.text for r in group] for group in replies])
        return [len(group) - 1 for group in replies]


def test_a_reply_chooser_picks_the_executed_reply_among_its_samples(lm):
    torch.manual_seed(0)
    policy = _policy(lm, cls=RecordingPolicy)
    chooser = _PickLast(3)
    batch = RolloutCollector(_envs(2), policy).collect(2, seeds=[0, 1], choose=chooser)
    steps = batch.stats.env_steps
    # per step round: the policy's sample for every active env, then 2 more each, in one call
    assert policy.batch_sizes[1::2] == [2 * n for n in policy.batch_sizes[0::2]]
    assert batch.stats.choice_replies == 2 * steps
    assert len(chooser.shown) == len(policy.batch_sizes) // 2
    executed = [s.response for t in batch.trajectories for s in t.steps]
    shown_last = [group[-1] for round_ in chooser.shown for group in round_]
    assert sorted(executed) == sorted(shown_last)  # every executed reply is the chooser's pick
    first = [group[0] for round_ in chooser.shown for group in round_]
    assert batch.stats.chose_other == sum(a != b for a, b in zip(first, shown_last))
    assert batch.stats.choice_seconds >= 0
    # greedy (evaluation) never asks the chooser
    chooser.shown.clear()
    RolloutCollector(_envs(1), _policy(lm)).collect(1, seeds=[0], greedy=True, choose=chooser)
    assert chooser.shown == []
    # a chooser with one sample is the policy's own reply: the same episodes as no chooser at all
    torch.manual_seed(3)
    plain = RolloutCollector(_envs(1), _policy(lm)).collect(1, seeds=[5])
    torch.manual_seed(3)
    one = RolloutCollector(_envs(1), _policy(lm)).collect(1, seeds=[5], choose=_PickLast(1))
    assert [s.response for s in plain.trajectories[0].steps] == [s.response for s in one.trajectories[0].steps]


def test_a_bad_reply_chooser_is_refused(lm):
    collector = RolloutCollector(_envs(1), _policy(lm))
    with pytest.raises(TypeError, match="ReplyChooser"):
        collector.collect(1, seeds=[0], choose=object())

    class OutOfRange(_PickLast):
        def __call__(self, requests, replies):
            return [7 for _ in replies]

    with pytest.raises(RuntimeError, match="picked 7"):
        collector.collect(1, seeds=[0], choose=OutOfRange(2))
