"""The README's PRM demo at CI size: simulated-phone data -> tiny PRM -> better than the majority class on held-out tasks."""

from __future__ import annotations

import pytest

from coach_reward.prm_training import run_prm_demo


@pytest.mark.slow
def test_tiny_prm_beats_the_majority_baseline_on_held_out_tasks(tmp_path):
    # the CI size with 400 steps: on the 140-task suite (AndroidLab's calendar and Zoom tasks joined it) the preset's
    # 200 steps give 0.531 vs a majority baseline of 0.555 on seed 0, 400 steps 0.648 (coach-reward README)
    result = run_prm_demo("ci", seed=0, output_dir=tmp_path / "prm", overrides={"max_steps": 400})
    report = result.report
    # held-out means held out: no task is in both splits
    assert result.test_tasks and not set(result.test_tasks) & set(result.train_tasks)
    assert result.test_rows == report.n >= 100
    # every held-out row got a real judgment, read from the verdict token's probabilities
    assert report.sources.get("logprobs", 0) == report.n and report.neutral == 0
    # the tiny PRM is better than always answering the majority label, by a clear margin
    assert report.accuracy >= report.baseline_accuracy + 0.05, result.summary()
    assert report.brier < 0.25, result.summary()  # better than the constant 0.5 score
    assert (tmp_path / "prm" / "prm_config.json").is_file()
