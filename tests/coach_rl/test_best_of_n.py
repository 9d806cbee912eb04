"""ProRe best-of-N on the sim: a briefly fine-tuned tiny policy, N sampled attempts per instance, verifiers pick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from coach_reward.backends import OpenAIBackend, TransformersBackend
from coach_reward.probing import BackendProbeAgent, ProbingVerifier
from coach_reward.server import serve
from coach_reward.tiny_models import build_tiny_causal_lm, scripted_backend
from coach_reward.verifiers import LLMJudgeVerifier
from coach_rl.cli import main
from coach_rl.demos import collect_demos
from coach_rl.evaluation import best_of_n_verifier, evaluate_best_of_n
from coach_rl.policy import HFPolicy, PolicyFormat
from coach_rl.sft import sft_warmup

FORMAT = PolicyFormat(action_format="index", max_history=0, action_space=())
TASK = "SystemWifiTurnOn"
ENV = {"max_steps": 8}
YES = "<analysis>Wi-Fi is on.</analysis> <ans>yes</ans>"


@pytest.fixture(scope="module")
def policy():
    """A tiny policy fine-tuned on the expert's Wi-Fi demos: sampled, it succeeds on some attempts, not all."""
    demos = collect_demos(FORMAT, [TASK], seeds=range(4))
    model, tok = build_tiny_causal_lm(seed=0, corpus=demos.corpus())
    sft_warmup(model, tok, demos, max_steps=80, learning_rate=3e-3, per_device_train_batch_size=4)
    return HFPolicy(model, tok, format=FORMAT, max_new_tokens=24, temperature=1.0)


@pytest.mark.slow
def test_rule_verifier_best_of_n_reaches_pass_at_n(policy):
    torch.manual_seed(0)
    report, trajectories = evaluate_best_of_n(policy, [TASK], [20, 21, 22], 4, best_of_n_verifier("rule"),
                                              verifier_name="rule", env_kwargs=ENV, num_envs=2)
    m = report.overall
    assert (m.instances, m.episodes, len(trajectories)) == (3, 12, 12)
    assert m.same_start == 1.0  # every attempt of an instance started on the identical screen
    # sampled attempts of a half-trained policy: some succeed, some do not
    assert 0.0 < m.pass_at_1 < 1.0 and m.pass_at_n > m.pass_at_1
    # the task's own rule check is a perfect verifier: it finds a success whenever there is one
    assert m.verifier_accuracy == 1.0 and m.verifier_failures == 0 and m.best_of_n == m.pass_at_n
    for group in report.instances:
        picked = group["episodes"][group["picked"]]
        assert picked["success"] == any(e["success"] for e in group["episodes"])
    assert report.per_task[TASK] == m
    assert json.loads(report.to_json())["overall"]["best_of_n"] == m.best_of_n
    assert "| **overall** | 3 |" in report.markdown()


@pytest.mark.slow
def test_judge_over_http_and_probing_verifiers_pick_deterministically(policy):
    """A judge that says yes to everything (served over HTTP on 127.0.0.1) ties every attempt: the shortest
    wins; a probing verifier on an untrained tiny reasoner runs its probes on each attempt's end state."""
    model, tok = build_tiny_causal_lm(seed=1)
    server = serve(scripted_backend(model, tok, YES), model_name="judge")
    try:
        judge = LLMJudgeVerifier(OpenAIBackend(server.url, "judge", max_retries=0), use_logprobs=False,
                                 max_new_tokens=24)
        torch.manual_seed(1)
        report, _ = evaluate_best_of_n(policy, [TASK], [30, 31], 3, judge, verifier_name="judge", env_kwargs=ENV,
                                       num_envs=2)
    finally:
        server.shutdown()
    for group in report.instances:
        steps = [e["steps"] for e in group["episodes"]]
        assert all(e["score"] == 1.0 for e in group["episodes"])
        assert group["picked"] == steps.index(min(steps))
    assert report.overall.verifier_accuracy == pytest.approx(report.overall.pass_at_1)

    reasoner = TransformersBackend(model, tok)
    probing = ProbingVerifier(reasoner, evaluator=BackendProbeAgent(reasoner, max_new_tokens=12), probe_steps=1,
                              max_probes=1, judge="rule", max_new_tokens=16)
    torch.manual_seed(2)
    report, _ = evaluate_best_of_n(policy, [TASK], [40], 2, probing, verifier_name="probing", env_kwargs=ENV,
                                   num_envs=1)
    assert report.overall.episodes == 2 and report.overall.verifier_failures == 0
    assert all(e["score"] is not None for g in report.instances for e in g["episodes"])


def test_best_of_n_refuses_bad_arguments(policy):
    with pytest.raises(ValueError, match="positive integer"):
        evaluate_best_of_n(policy, [TASK], [0], 0, best_of_n_verifier("rule"))
    with pytest.raises(ValueError, match="unknown verifier 'oracle'"):
        best_of_n_verifier("oracle")
    with pytest.raises(ValueError, match="needs a judge model"):
        best_of_n_verifier("judge")


@pytest.mark.slow
def test_cli_eval_best_of(policy, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    policy.model.save_pretrained(tmp_path / "policy")
    policy.tokenizer.save_pretrained(tmp_path / "policy")
    out = tmp_path / "bon.json"
    argv = ["eval", "--config", "smoke", "--policy", str(tmp_path / "policy"), "--tasks", TASK, "--instances", "1",
            "--best-of", "2", "--verifier", "rule", "--out", str(out), "max_history=0", "num_envs=2",
            "max_turns=8", "max_episode_steps=8", "max_completion_length=24"]
    assert main(argv) == 0
    assert "Best-of-2 with the rule verifier" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["n"] == 2 and data["overall"]["episodes"] == 2 and data["overall"]["same_start"] == 1.0
    assert main([a if a != "rule" else "judge" for a in argv]) == 2
    assert "needs a judge" in capsys.readouterr().err
