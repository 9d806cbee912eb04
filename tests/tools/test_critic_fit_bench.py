"""tools/bench/critic_fit.py: the ranking measures against hand-computed values, and one variant run end to end."""

from __future__ import annotations

import math
import pickle

import pytest

from coach_reward.tiny_models import build_tiny_causal_lm


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("critic_fit")


def test_auc_and_auc_within_states_by_hand(bench):
    # positives 0.9, 0.4; negatives 0.5, 0.1, 0.4: pairs (0.9>0.5, 0.9>0.1, 0.9>0.4, 0.4<0.5, 0.4>0.1, 0.4=0.4)
    assert bench.auc([1, 0, 1, 0, 0], [0.9, 0.5, 0.4, 0.1, 0.4]) == pytest.approx(4.5 / 6)
    assert math.isnan(bench.auc([1, 1], [0.2, 0.3]))
    examples = [("s1", "a", 1), ("s1", "b", 0), ("s2", "c", 1), ("s2", "d", 0), ("s2", "e", 0), ("s3", "f", 0)]
    # s1: 0.2 < 0.6 wrong; s2: 0.7 > 0.1 right, 0.7 = 0.7 half; s3 has no correct candidate (no pairs)
    assert bench.auc_within(examples, [0.2, 0.6, 0.7, 0.1, 0.7, 0.9]) == pytest.approx(1.5 / 3)


def test_one_variant_pretrains_with_the_shipped_options_and_reports(bench, tmp_path):
    model, tokenizer = build_tiny_causal_lm(seed=0)
    model.save_pretrained(tmp_path / "warm" / "policy")
    tokenizer.save_pretrained(tmp_path / "warm" / "policy")
    screen = "## Screen\n[0] Switch 'Wi-Fi' click\n[1] Switch 'Bluetooth' click\n"
    rows = [(f"Task: turn {name} on.\n{screen}", f'{{"action_type": "click", "index": {i}}}', int(name == want))
            for want in ("Wi-Fi", "Bluetooth") for i, name in enumerate(("Wi-Fi", "Bluetooth"))]
    with open(tmp_path / "data.pkl", "wb") as handle:
        pickle.dump({"train": rows * 4, "test": rows}, handle)
    spec = {"balanced": True, "targets": True, "steps": 8}
    result = bench.run_variant(("balanced_targets", spec, str(tmp_path / "warm"), str(tmp_path / "data.pkl"), 0))
    assert result["variant"] == "balanced_targets" and result["balanced"] and result["targets"]
    assert result["train_examples"] == 16 and result["train_positives"] == 8 and result["majority"] == 0.5
    assert result["test_examples"] == 4 and 0.0 <= result["test_auc_within"] <= 1.0
    assert len(result["loss_curve"]) == 8 and 0.0 <= result["train_acc"] <= 1.0
