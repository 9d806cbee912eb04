"""tools/bench/real_model_training.py: the GPU run's CPU twin (a causal-LM folder, the smoke config, every stage)."""

from __future__ import annotations

import json

import pytest

from coach_reward.tiny_models import build_tiny_causal_lm


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("real_model_training")


@pytest.mark.slow
def test_twin_warms_up_trains_both_algorithms_and_picks_by_validation(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    model_dir = tmp_path / "model"
    build_tiny_causal_lm(model_dir, vocab_size=512, hidden_size=32, num_layers=1, num_heads=2)
    out = tmp_path / "out"
    assert bench.main(["--model", str(model_dir), "--out", str(out), "--config", "smoke", "--no-prm",
                       "--learning-rates", "1e-4,3e-4", "--seeds", "0", "--env-steps", "12", "--jobs", "2",
                       "--validation-instances", "1", "--deadline", "900",
                       "--warmup", "sft_max_steps=2 critic_pretrain_steps=2", "eval_samples_per_instance=2"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["config"] == "smoke" and result["device"] == "cpu"
    assert result["phases"]["warmup"]["exit_code"] == 0
    assert set(result["phases"]["warmup"]["success_before"]) == {"greedy", "sampled"}
    assert {"runs-lr1e-4", "runs-lr3e-4"} <= set(result["phases"])
    assert sorted(result["runs"]) == ["coach-lr1e-4-seed0", "coach-lr3e-4-seed0", "grpo-lr1e-4-seed0",
                                      "grpo-lr3e-4-seed0"]
    for run in result["runs"].values():
        assert run["exit_code"] == 0 and run["validation_exit_code"] == 0
        assert run["env_steps"] == 12  # every run spends exactly the budget
        assert run["after_sampled"] is not None and run["validation_success"] is not None
        assert run["phase_seconds"]["rollout"] > 0 and run["iterations"] == len(run["rollout_success"]) >= 1
    best = result["best_by_validation"]
    assert set(best) == {"coach", "grpo"}
    for chosen in best.values():
        scores = chosen["validation_success_by_lr"]  # JSON keys: the learning rates as text
        assert chosen["learning_rate"] == float(max(scores, key=scores.get))
        assert len(chosen["after_sampled_per_seed"]) == 1
