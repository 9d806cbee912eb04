"""Rewards in the loop: PRM and verifier built from the run config, batched scoring, failures, the sim oracle."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
import torch

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.actions import format_action
from coach_reward.prm import ProcessRewardModel
from coach_reward.server import ChatCompletionServer
from coach_reward.tiny_models import build_tiny_causal_lm, scripted_backend
from coach_reward.verifiers import LastScreenshotJudge, LLMJudgeVerifier, MajorityVote
from coach_rl.configs import load_config
from coach_rl.policy import PolicyOutput
from coach_rl.rewards import (
    SIM_ORACLE,
    RewardPipeline,
    SimOracle,
    build_outcome_verifier,
    build_process_reward_model,
)
from coach_rl.rollout import RolloutCollector


@pytest.fixture(scope="module")
def lm():
    torch.manual_seed(0)
    return build_tiny_causal_lm(seed=0)


@pytest.fixture()
def judge_server(lm):
    """A real OpenAI-compatible server on 127.0.0.1 whose judge always answers that the step is right."""
    model, tokenizer = lm
    server = ChatCompletionServer(scripted_backend(model, tokenizer, "<think>ok</think> judgment: True"),
                                  model_name="judge").start()
    yield server
    server.shutdown()


class ExpertPolicy:
    """Plays the sim expert's next action (one env): the oracle must score every such step 1."""

    version = 0

    def __init__(self, env, wrong_every: int = 0) -> None:
        self.env = env
        self.wrong_every = wrong_every
        self.calls = 0

    def act(self, requests, *, greedy: bool = False):
        self.calls += 1
        action = self.env.unwrapped.expert_action()
        if self.wrong_every and self.calls % self.wrong_every == 0:
            from android_gym.actions import PressHome

            action = PressHome()
        text = format_action(action, "uitars")
        return [PolicyOutput(text=text, action=action, error=None, thought="", prompt=[{"role": "user", "content": "s"}],
                             prompt_text="<state>") for _ in requests]


def test_sim_oracle_scores_the_experts_actions_one_and_others_zero():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=8)
    rewards = RewardPipeline(SimOracle())
    batch = RolloutCollector([env], ExpertPolicy(env), rewards=rewards).collect(2, seeds=[0, 1])
    assert all(t.success == 1.0 for t in batch.trajectories)
    assert [r.process_reward for r in batch.records] == [1.0] * len(batch.records)
    assert all(r.return_t > r.outcome_reward for r in batch.records)  # w_p * sum of ones on top of r_o

    off_plan = RolloutCollector([env], ExpertPolicy(env, wrong_every=2), rewards=RewardPipeline(SimOracle()))
    batch = off_plan.collect(1, seeds=[2])
    scores = [r.process_reward for r in batch.records]
    assert scores[0] == 1.0 and scores[1] == 0.0  # the second action (press_home) is not the expert's
    assert set(scores) <= {0.0, 1.0}


def test_sim_oracle_is_refused_off_the_sim():
    class NotSim:
        unwrapped = type("Env", (), {"device": object(), "expert_action": lambda self: None})()

    with pytest.raises(ValueError, match="sim-oracle.*simulated phone"):
        RolloutCollector([NotSim()], ExpertPolicy(None), rewards=RewardPipeline(SimOracle()))


def test_config_builds_each_reward_source(tmp_path, judge_server):
    base = [f"output_dir={tmp_path}"]
    assert build_process_reward_model(load_config("smoke", base).coach) is None
    oracle = build_process_reward_model(load_config("smoke", [*base, "use_prm=true", f"prm_model={SIM_ORACLE}"]).coach)
    assert isinstance(oracle, SimOracle)
    served = [*base, "use_prm=true", "prm_model=judge", "prm_backend=openai", f"prm_base_url={judge_server.url}"]
    prm = build_process_reward_model(load_config("smoke", served).coach)
    assert isinstance(prm, ProcessRewardModel) and prm.backend.base_url == judge_server.url
    judge = [*base, "verifier_model=judge", "verifier_backend=openai", f"verifier_base_url={judge_server.url}"]
    assert build_outcome_verifier(load_config("smoke", base).coach) is None  # rule: the task's own check
    kinds = {"llm_judge": LLMJudgeVerifier, "last_screen": LastScreenshotJudge, "vote": MajorityVote}
    for kind, cls in kinds.items():
        verifier = build_outcome_verifier(load_config("smoke", [*judge, f"outcome_verifier={kind}"]).coach)
        assert isinstance(verifier, cls)
    with pytest.raises(ValueError, match="outcome_verifier must be one of"):
        load_config("smoke", [*judge, "outcome_verifier=psychic"])


def test_training_with_a_served_prm_puts_its_rewards_in_the_returns(tmp_path, judge_server):
    """The issue's bug: use_prm=true trained with r_p = 0. Now a PRM behind a real HTTP server scores every step."""
    from coach_rl.loop import train

    out = tmp_path / "run"
    train("smoke", [f"output_dir={out}", "total_iterations=1", "eval_instances_per_task=0", "use_prm=true",
                    "prm_model=judge", "prm_backend=openai", f"prm_base_url={judge_server.url}"], progress=False)
    record = next(json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()
                  if json.loads(line).get("kind") == "train")
    assert record["rewards/prm_steps"] == record["rollout/steps"] > 0
    assert record["rewards/prm_calls"] == 1  # one batched call for the whole round
    assert record["rewards/prm_missing"] == 0
    assert record["rollout/process_reward_mean"] > 0.5  # the judge says True: p(True) from its log-probs
    from coach_rl.replay import ReplayBuffer

    stored = list(ReplayBuffer(out / "replay").states())
    assert stored and all(s.process_reward > 0.5 for s in stored)
    assert all(s.return_t > s.outcome_reward for s in stored)  # w_p * discounted r_p on top of w_o * r_o


def test_a_prm_server_that_fails_gives_missing_rewards_not_a_crash(lm, judge_server):
    model, tokenizer = lm
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=3)
    from coach_reward.backends import OpenAIBackend

    backend = OpenAIBackend(judge_server.url, "judge", max_retries=0, timeout=5)
    rewards = RewardPipeline(ProcessRewardModel(backend, use_logprobs=False), retries=2, retry_wait=0.0)
    judge_server.inject_failures(100, status=400)  # every request refused
    with pytest.warns(RuntimeWarning, match="process reward model failed"):
        batch = RolloutCollector([env], ExpertPolicy(env), rewards=rewards).collect(1, seeds=[0])
    assert batch.records and all(r.process_reward_missing for r in batch.records)
    assert rewards.stats.prm_retries == 2 and rewards.stats.prm_missing == len(batch.records)
    assert [r.return_t for r in batch.records] == [r.outcome_reward for r in batch.records]  # outcome alone


def test_garbage_verdicts_are_asked_again_then_missing(lm):
    model, tokenizer = lm
    prm = ProcessRewardModel(scripted_backend(model, tokenizer, "I am not sure."), use_logprobs=False)
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=2)
    rewards = RewardPipeline(prm, retries=1, retry_wait=0.0)
    with pytest.warns(RuntimeWarning, match="no usable score"):
        batch = RolloutCollector([env], ExpertPolicy(env), rewards=rewards).collect(1, seeds=[0])
    assert rewards.stats.prm_calls == 2 and rewards.stats.prm_retries == 1
    assert all(r.process_reward_missing for r in batch.records)


def test_a_verifier_that_fails_falls_back_to_the_task_check_after_retries():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=8)
    calls = []

    def flaky(trajectory):
        calls.append(1)
        raise ConnectionError("judge offline")

    rewards = RewardPipeline(verifier=flaky, retries=2, retry_wait=0.0)
    with pytest.warns(RuntimeWarning, match="outcome verifier failed"):
        batch = RolloutCollector([env], ExpertPolicy(env), rewards=rewards).collect(1, seeds=[0])
    assert len(calls) == 3 and rewards.stats.verifier_failures == 1 and rewards.stats.verifier_retries == 2
    trajectory = batch.trajectories[0]
    assert trajectory.info["outcome_reward"] == trajectory.success == 1.0
    assert "judge offline" in trajectory.info["verifier"]


def test_bad_pipeline_arguments_are_refused():
    with pytest.raises(TypeError, match="prm must be"):
        RewardPipeline(prm=42)
    with pytest.raises(TypeError, match="verifier must be"):
        RewardPipeline(verifier="rule")
    with pytest.raises(ValueError, match="retries"):
        RewardPipeline(retries=-1)
    with pytest.raises(ValueError, match="gamma"):
        RewardPipeline(gamma=2.0)
    with pytest.raises(ValueError, match="tolerance"):
        SimOracle(tolerance=-1)


class CandidatePolicy(ExpertPolicy):
    """Acts as the expert; asked for the extra candidates (every second call), answers press_home then the expert."""

    def act(self, requests, *, greedy: bool = False):
        from android_gym.actions import PressHome

        self.calls += 1
        expert = self.env.unwrapped.expert_action()
        if self.calls % 2:  # the executed reply
            actions = [expert] * len(requests)
        else:  # two candidates per request: a wrong one, then a copy of the executed reply (dropped)
            actions = [PressHome(), expert] * (len(requests) // 2)
        return [PolicyOutput(text=format_action(a, "uitars"), action=a, error=None, thought="",
                             prompt=[{"role": "user", "content": "s"}], prompt_text="<state>") for a in actions]


def test_prm_candidates_are_sampled_labelled_and_become_critic_targets(lm, judge_server):
    """critic_prm_candidates: extra replies per collected state, deduplicated against the executed one, judged by
    the PRM (sim oracle: the expert match; a served PRM: its verdict) and appended to the critic's examples."""
    from coach_rl.algorithms.coach import critic_examples

    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=8)
    rewards = RewardPipeline(SimOracle())
    batch = RolloutCollector([env], CandidatePolicy(env), rewards=rewards, candidates=2).collect(1, seeds=[0])
    home = format_action(__import__("android_gym.actions", fromlist=["PressHome"]).PressHome(), "uitars")
    assert batch.records and all(r.candidate_labels == [(home, 0.0)] for r in batch.records)
    states, actions, targets = critic_examples(batch.records)
    n = len(batch.records)
    assert actions == [r.response for r in batch.records] + [home] * n
    assert targets == [r.return_t for r in batch.records] + [0.0] * n
    assert states == [r.prompt_text for r in batch.records] * 2

    model, tokenizer = lm
    from coach_reward.backends import OpenAIBackend

    served = RewardPipeline(ProcessRewardModel(OpenAIBackend(judge_server.url, "judge", max_retries=0, timeout=30)))
    batch = RolloutCollector([env], CandidatePolicy(env), rewards=served, candidates=2).collect(1, seeds=[0])
    assert all(r.candidate_labels == [(home, 1.0)] for r in batch.records)  # this judge says True to everything
    assert served.stats.prm_candidates == len(batch.records)
    # without candidates (the paper) nothing changes
    plain = RolloutCollector([env], ExpertPolicy(env), rewards=RewardPipeline(SimOracle())).collect(1, seeds=[0])
    assert all(r.candidate_labels == [] for r in plain.records)
    with pytest.raises(ValueError, match="candidates"):
        RolloutCollector([env], ExpertPolicy(env), rewards=RewardPipeline(SimOracle()), candidates=-1)
    with pytest.raises(ValueError, match="critic_prm_candidates"):
        load_config("smoke", ["critic_prm_candidates=2"])
