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
    result = sft_warmup(model, tokenizer, rows, max_steps=60, learning_rate=5e-3, per_device_train_batch_size=2)
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
    """~100 demonstrated steps of four Settings tasks, 150 steps of batch 8 (seeded): the loss falls and a
    good share of greedy replies become exactly the demonstrated answers (none are before). 100 steps were enough
    before Settings' pages and the status bar took the emulator's texts (longer prompts): 75% parsed, now 100%."""
    assert 90 <= len(settings_demos) <= 130
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=settings_demos.corpus())
    policy = HFPolicy(model, tokenizer, format=FORMAT, max_new_tokens=24)
    before = demo_accuracy(policy, settings_demos)
    result = sft_warmup(model, tokenizer, settings_demos, max_steps=150, learning_rate=5e-3,
                        per_device_train_batch_size=8, seed=0)
    after = demo_accuracy(policy, settings_demos)
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert last < first / 3
    assert before.exact == 0.0 and after.exact >= 0.25 and after.parsed >= 0.9


def test_the_cpu_loss_scores_only_the_completion_and_equals_trls(settings_demos, tmp_path):
    """On CPU the warm-up's trainer projects only the completion's positions through the LM head; its loss and
    gradients are TRL's own (which scores every position there and masks the prompt's afterwards)."""
    from trl import SFTConfig, SFTTrainer

    from coach_reward.completion_loss import completion_only_sft_trainer

    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=settings_demos.corpus())
    rows = settings_demos.examples()[:6]
    args = SFTConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=3, report_to="none",
                     completion_only_loss=True, use_cpu=True, save_strategy="no", disable_tqdm=True)
    from datasets import Dataset

    ours = completion_only_sft_trainer()(model=model, args=args, train_dataset=Dataset.from_list(rows),
                                          processing_class=tokenizer)
    trl = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
    batch = next(iter(ours.get_train_dataloader()))
    prompt_positions = int((batch["labels"][:, 1:] == -100).sum())
    assert prompt_positions > 10 * int((batch["labels"][:, 1:] != -100).sum())  # the prompt dominates the batch
    assert ours._compact_loss_applies(model, batch)
    losses, grads = [], []
    model.train()
    for trainer in (ours, trl):
        model.zero_grad()
        loss = trainer.compute_loss(model, dict(batch))
        loss.backward()
        losses.append(loss.item())
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    assert losses[0] == pytest.approx(losses[1], rel=1e-5) and losses[0] > 0
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)
    assert ours._metrics["train"]["mean_token_accuracy"] and ours._metrics["train"]["entropy"]
    # what it does not cover goes to TRL: e.g. another loss type
    ours.args.loss_type = "dft"
    assert not ours._compact_loss_applies(model, batch)
