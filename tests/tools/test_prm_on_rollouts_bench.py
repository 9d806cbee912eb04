"""tools/bench/prm_on_rollouts.py: its ranking measures against hand-computed values, and the whole pipeline (prm-data,
train-prm, eval) on two tiny runs with a tiny PRM."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.records import PolicyTurn
from coach_rl.replay import ReplayBuffer
from coach_rl.rewards import score_trajectory


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("prm_on_rollouts")


def test_same_screen_pairs_by_hand(bench):
    # screen A: correct 0.9, 0.3; wrong 0.5 -> (0.9 > 0.5) right, (0.3 < 0.5) wrong; screen B: correct 0.2 = wrong 0.2
    # -> a tie (1/2); screen C has no wrong step; the same screen of another task is another group.
    tasks = ["t", "t", "t", "t", "t", "t", "u"]
    screens = ["A", "A", "A", "B", "B", "C", "A"]
    labels = [True, True, False, True, False, True, False]
    scores = [0.9, 0.3, 0.5, 0.2, 0.2, 0.7, 0.0]
    ranked, pairs = bench.same_screen_pairs(tasks, screens, labels, scores)
    assert pairs == 3 and ranked == pytest.approx(1.5 / 3)
    nan, none = bench.same_screen_pairs(["t"], ["A"], [True], [0.5])
    assert none == 0 and math.isnan(nan)


def test_per_task_auc_by_hand(bench):
    # task t: positives 0.8, 0.4; negatives 0.6 -> 1 of 2 pairs right; task u has one class only
    out = bench.per_task_auc(["t", "t", "t", "u"], [True, True, False, True], [0.8, 0.4, 0.6, 0.1])
    assert out == {"t": pytest.approx(0.5), "u": None}


def _run_folder(path, k: int, expert: list[list[float]]) -> None:
    buf = ReplayBuffer(path / "replay", capacity=100)
    for e, matches in enumerate(expert):
        steps = [Step(ui=f"[n{i}] Button ;click ; Wi-Fi {i} ;;", action=Click(10 + i, 20),
                      response=f'{{"action_type": "click", "index": {i}}}') for i in range(len(matches) - 1)]
        steps.append(Step(ui="done", action=Finished(), response='{"action_type": "status", "goal_status": "complete"}'))
        traj = Trajectory(task="SystemWifiTurnOff", instruction="Turn Wi-Fi off", steps=steps,
                          success=float(all(matches)), seed=k * 10 + e)
        turns = [PolicyTurn(prompt=[{"role": "user", "content": step.ui}], prompt_text=step.ui) for step in steps]
        records = score_trajectory(traj, turns, [0.0] * len(steps), traj.success, "pending")
        buf.add(traj, [dataclasses.replace(r, expert_match=m) for r, m in zip(records, matches)])


@pytest.mark.slow
def test_the_pipeline_runs_on_tiny_runs_and_writes_every_measure(bench, tmp_path):
    from coach_reward.prm_training import prm_text_corpus, train_prm
    from coach_rl.prm_rollouts import rollout_prm_rows, save_rollout_prm_dataset

    _run_folder(tmp_path / "train", 0, [[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    _run_folder(tmp_path / "test", 1, [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    rows = rollout_prm_rows([tmp_path / "train"])
    save_rollout_prm_dataset(rows, tmp_path / "seed_rows")
    from coach_reward.prm_data import load_prm_dataset

    data = load_prm_dataset(tmp_path / "seed_rows")
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(data, prompt="compact"))
    train_prm(model, tokenizer, data, tmp_path / "prm", prompt="compact", max_ui_chars=100, max_steps=1, batch_size=2)
    assert bench.main(["--prm", str(tmp_path / "prm"), "--train-runs", str(tmp_path / "train"), "--test-runs",
                       str(tmp_path / "test"), "--out", str(tmp_path / "out"), "--steps", "2", "--no-oracle"]) == 0
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["test_steps"] == 6 and result["test_expert_share"] == pytest.approx(5 / 6)
    assert set(result["prms"]) == {"as trained (expert demos)", "+ rollouts, outcome labels"}
    for measures in result["prms"].values():
        assert 0.0 <= measures["accuracy"] <= 1.0 and measures["same_screen_pairs"] == 1
        assert set(measures["auc_per_task"]) == {"SystemWifiTurnOff"}
    assert json.loads((tmp_path / "out" / "prm_outcome" / "prm_config.json").read_text())["max_ui_chars"] == 100
