"""SFT warm-up with TRL's SFTTrainer on demonstrations from the sim, on a tiny model built here."""

from __future__ import annotations

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.demos import collect_demos
from coach_rl.policy import HFPolicy, PolicyFormat
from coach_rl.sft import demo_accuracy, sft_warmup

FORMAT = PolicyFormat(action_format="index", max_history=0, action_space=())


@pytest.fixture(scope="module")
def settings_demos():
    return collect_demos(FORMAT, ["SystemWifiTurnOn", "SystemWifiTurnOff", "SystemBluetoothTurnOn",
                                  "SystemBluetoothTurnOff"], seeds=range(5))


def test_a_few_steps_teach_the_answers_of_two_states(settings_demos):
    """Two demonstrated states (the launcher and the last Settings screen), 60 small steps: both memorised."""
    first = next(r for r in settings_demos.records if r.step_index == 0)
    last = next(r for r in settings_demos.records if r.action.type == "finished")
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=settings_demos.corpus())
    policy = HFPolicy(model, tokenizer, format=FORMAT, max_new_tokens=24)
    before = demo_accuracy(policy, [first, last])
    rows = [r for r in settings_demos.examples() if r["completion"][0]["content"] in (first.answer, last.answer)][:2]
    weights = model.model.embed_tokens.weight.detach().clone()
    result = sft_warmup(model, tokenizer, rows, max_steps=60, learning_rate=1e-2, per_device_train_batch_size=2)
    after = demo_accuracy(policy, [first, last])
    assert result.steps == 60 and result.examples == 2 and len(result.losses) == 60
    assert result.losses[-1] < result.losses[0] / 5
    assert not torch.equal(weights, model.model.embed_tokens.weight)
    assert not model.training
    assert before.exact == 0.0 and after.exact == 1.0 and after.action == 1.0


def test_bad_examples_are_refused():
    model, tokenizer = build_tiny_causal_lm(seed=0)
    with pytest.raises(ValueError, match="no SFT examples"):
        sft_warmup(model, tokenizer, [])
    with pytest.raises(ValueError, match="'prompt' and 'completion'"):
        sft_warmup(model, tokenizer, [{"text": "hello"}])
    row = {"prompt": [{"role": "user", "content": "a"}], "completion": [{"role": "assistant", "content": "b"}]}
    with pytest.raises(ValueError, match="images"):
        sft_warmup(model, tokenizer, [row, {**row, "images": []}])


@pytest.mark.slow
def test_sft_on_a_hundred_demos_lowers_loss_and_raises_exact_match(settings_demos):
    """~100 demonstrated steps of four Settings tasks, 60 steps of batch 8 (seeded): the loss falls and a
    good share of greedy replies become exactly the demonstrated answers (none are before)."""
    assert 90 <= len(settings_demos) <= 130
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=settings_demos.corpus())
    policy = HFPolicy(model, tokenizer, format=FORMAT, max_new_tokens=24)
    before = demo_accuracy(policy, settings_demos)
    result = sft_warmup(model, tokenizer, settings_demos, max_steps=100, learning_rate=5e-3,
                        per_device_train_batch_size=8, seed=0)
    after = demo_accuracy(policy, settings_demos)
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert last < first / 3
    assert before.exact == 0.0 and after.exact >= 0.25 and after.parsed >= 0.9
