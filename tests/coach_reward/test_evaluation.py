"""Reward-model evaluation: metrics by hand, a PRM over a dataset, outcome verifiers over labelled episodes."""

from __future__ import annotations

import math

import pytest
from datasets import Dataset

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_reward.backends import Completion, TransformersBackend
from coach_reward.evaluation import binary_metrics, calibration_bins, evaluate_prm, evaluate_verifier, roc_auc
from coach_reward.prm import ProcessRewardModel
from coach_reward.prm_data import prm_features
from coach_reward.verifiers import LLMJudgeVerifier, RuleVerifier


def test_binary_metrics_by_hand():
    labels = [True, True, True, False, False, False, False, True]
    scores = [0.9, 0.6, 0.4, 0.7, 0.2, 0.1, 0.5, 1.0]
    m = binary_metrics(labels, scores)
    # predicted positive (>= 0.5): 0.9 T, 0.6 T, 0.7 F, 0.5 F, 1.0 T -> tp 3, fp 2, fn 1 (0.4), tn 2
    assert m.accuracy == pytest.approx(5 / 8)
    assert m.precision == pytest.approx(3 / 5) and m.recall == pytest.approx(3 / 4)
    assert m.f1 == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert m.brier == pytest.approx(sum((p - y) ** 2 for y, p in zip(labels, scores)) / 8)
    # two bins: [0, .5) holds 0.4 T, 0.2 F, 0.1 F; [.5, 1] holds 0.9 T, 0.6 T, 0.7 F, 0.5 F, 1.0 T
    ece2 = (3 * abs((0.4 + 0.2 + 0.1) / 3 - 1 / 3) + 5 * abs((0.9 + 0.6 + 0.7 + 0.5 + 1.0) / 5 - 3 / 5)) / 8
    assert binary_metrics(labels, scores, n_bins=2).ece == pytest.approx(ece2)
    assert m.positives == 4 and m.baseline_accuracy == 0.5 and m.baseline_label is True  # ties go to True
    fixed = binary_metrics(labels[:3] + labels[4:], scores[:3] + scores[4:], baseline_label=False)
    assert fixed.baseline_accuracy == pytest.approx(3 / 7)
    # AUC: positives 0.9 0.6 0.4 1.0 vs negatives 0.7 0.2 0.1 0.5: 0.9 beats 4, 0.6 beats 3, 0.4 beats 2, 1.0 beats 4
    assert m.auc == pytest.approx(13 / 16)
    assert roc_auc([True, False, True, False], [0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.5)
    assert math.isnan(roc_auc([True, True], [0.2, 0.3]))


def test_metrics_edge_cases_and_errors():
    m = binary_metrics([False, False, True], [0.1, 0.2, 0.3])  # nothing predicted positive
    assert m.precision == 0.0 and m.recall == 0.0 and m.f1 == 0.0 and m.accuracy == pytest.approx(2 / 3)
    assert m.baseline_label is False and m.baseline_accuracy == pytest.approx(2 / 3)
    bins = calibration_bins([True, False], [1.0, 0.0], n_bins=4)
    assert [b.count for b in bins] == [1, 0, 0, 1]  # 1.0 lands in the last bin
    assert math.isnan(bins[1].mean_score)
    with pytest.raises(ValueError, match="2 labels but 1 scores"):
        binary_metrics([True, False], [0.5])
    with pytest.raises(ValueError, match=r"score 0 must be a number in \[0, 1\]"):
        binary_metrics([True], [1.5])
    with pytest.raises(ValueError, match="label 0"):
        binary_metrics(["yes"], [0.5])
    with pytest.raises(ValueError, match="no labelled examples"):
        binary_metrics([], [])


class RuleJudge:
    """A Backend whose judgments follow a rule on the prompt: clicks are right, everything else wrong."""

    def generate(self, requests, *, max_new_tokens=256, temperature=0.0, n=1, logprobs=False, top_logprobs=0):
        out = []
        for messages in requests:
            user = messages[-1]["content"]
            text = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
            action = text.split("⟦action⟧")[1]
            if "unreadable" in action:
                out.append([Completion("I am not sure.")])
            else:
                out.append([Completion(f"<think>ok</think> judgment:{'click(' in action}")])
        return out


def _rows(n: int = 12) -> Dataset:
    rows = []
    actions = ["click(start_box='(1,1)')", "press_back()", "wait()", "press_back() unreadable"]
    for i in range(n):
        action = actions[i % 4]
        label = i % 3 != 0  # unrelated to the rule, so some judgments are wrong
        rows.append({"id": str(i), "source": "test", "episode_id": "e", "task": f"t{i % 2}", "app": ["a", "b"][i % 2],
                     "step_index": 0, "instruction": "do it", "step_instruction": "", "ui": "[n1] Button ;click ; OK",
                     "screenshot": None, "screen_width": 1080, "screen_height": 2400, "history": [],
                     "expert_action": "", "expert_action_json": "", "candidate_index": i, "thought": "",
                     "action_text": action, "action_json": "", "action_type": action.split("(")[0],
                     "parse_error": "", "label": label, "match_reason": "", "rationale": ""})
    return Dataset.from_list(rows, features=prm_features())


def test_evaluate_prm_scores_every_row_and_groups_them():
    data = _rows(12)
    report = evaluate_prm(ProcessRewardModel(RuleJudge(), use_logprobs=False), data, batch_size=5)
    expected = [1.0 if "click(" in a else (0.5 if "unreadable" in a else 0.0) for a in data["action_text"]]
    assert report.scores == expected
    assert report.neutral == 3 and report.sources == {"text": 9, "neutral": 3}
    direct = binary_metrics(data["label"], expected)
    assert report.metrics == direct and report.accuracy == direct.accuracy
    assert set(report.per_app) == {"a", "b"} and sum(m.n for m in report.per_app.values()) == 12
    assert set(report.per_action_type) == {"click", "press_back", "wait"}
    assert report.per_action_type["click"].accuracy == binary_metrics(
        [y for y, a in zip(data["label"], data["action_text"]) if "click(" in a], [1.0] * 3).accuracy
    text = report.summary()
    assert "majority-class baseline" in text and "per action type" in text
    assert report.to_dict()["metrics"]["n"] == 12
    assert evaluate_prm(ProcessRewardModel(RuleJudge(), use_logprobs=False), data, limit=4).n == 4


def test_evaluate_prm_with_a_local_model_reads_probabilities(tiny_lm):
    model, tokenizer = tiny_lm
    prm = ProcessRewardModel(TransformersBackend(model, tokenizer, images="drop"), max_new_tokens=4)
    report = evaluate_prm(prm, _rows(4))
    assert report.n == 4 and all(0.0 <= s <= 1.0 for s in report.scores)
    assert sum(report.sources.values()) == 4


def test_evaluate_prm_rejects_what_it_cannot_use():
    prm = ProcessRewardModel(RuleJudge(), use_logprobs=False)
    with pytest.raises(ValueError, match="missing column"):
        evaluate_prm(prm, Dataset.from_dict({"x": [1]}))
    with pytest.raises(TypeError, match="ProcessRewardModel"):
        evaluate_prm(object(), _rows(2))
    with pytest.raises(ValueError, match="empty"):
        evaluate_prm(prm, _rows(2).select([]))


def _episode(task: str, recorded: float, label: bool | None = None) -> Trajectory:
    steps = [Step(ui="[n1] Button ;click ; OK", action=Click(1, 1)), Step(ui="done", action=Finished())]
    info = {"success": recorded}
    if label is not None:
        info["label"] = label
    return Trajectory(task=task, instruction="Press OK", steps=steps, success=recorded, info=info)


def test_evaluate_verifier_against_labels():
    # The recorded score says success for the first three; the labels (ground truth) disagree on one.
    items = [(_episode("a", 1.0), True), (_episode("a", 1.0), True), (_episode("b", 1.0), False),
             (_episode("b", 0.0), False), (_episode("b", 0.0), True)]
    report = evaluate_verifier(RuleVerifier(use_recorded=True), items)
    assert report.predictions == [True, True, True, False, False]
    assert report.accuracy == pytest.approx(3 / 5)
    assert report.precision == pytest.approx(2 / 3) and report.recall == pytest.approx(2 / 3)
    assert report.baseline_accuracy == pytest.approx(3 / 5) and report.abstained == 0
    assert set(report.per_task) == {"a", "b"} and report.per_task["a"].accuracy == 1.0
    assert "verifier on 5 episodes" in report.summary()
    # labels from info["label"], else from success
    report = evaluate_verifier(RuleVerifier(use_recorded=True), [_episode("a", 1.0, label=False), _episode("a", 0.0)])
    assert report.accuracy == pytest.approx(0.5)


class YesNoJudge:
    """A Backend answering the outcome prompt: yes for task 'a', an unreadable reply otherwise."""

    def generate(self, requests, *, max_new_tokens=256, temperature=0.0, n=1, logprobs=False, top_logprobs=0):
        return [[Completion("<analysis>fine</analysis> <ans>yes</ans>" if "Press OK" in str(r) else "hmm")]
                for r in requests]


def test_evaluate_verifier_counts_abstentions():
    verifier = LLMJudgeVerifier(YesNoJudge(), use_logprobs=False)
    report = evaluate_verifier(verifier, [(_episode("a", 1.0), True), (_episode("a", 0.0), False)])
    assert report.predictions == [True, True] and report.accuracy == 0.5 and report.abstained == 0
    bad = Trajectory(task="c", instruction="Something else", steps=[], success=0.0)
    report = evaluate_verifier(verifier, [(bad, False)])
    assert report.abstained == 1 and report.scores == [0.5] and report.predictions == [False]
    with pytest.raises(ValueError, match="no trajectories"):
        evaluate_verifier(verifier, [])
    with pytest.raises(ValueError, match="label"):
        evaluate_verifier(verifier, [(bad, "maybe")])
