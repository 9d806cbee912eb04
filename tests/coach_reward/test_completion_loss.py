"""coach_reward.completion_loss: on CPU the fine-tune's loss scores only the completion's positions and equals
TRL's own (which scores every position there and masks the prompt's afterwards), on a PRM's verdict rows."""

from __future__ import annotations

import pytest
import torch

from coach_reward.completion_loss import completion_only_sft_trainer
from coach_reward.prm_data import PerturbationSampler, build_prm_dataset, sim_expert_steps
from coach_reward.prm_training import prm_sft_dataset, prm_text_corpus
from coach_reward.tiny_models import build_tiny_causal_lm


def _loss_and_grads(trainer, model, batch):
    model.zero_grad()
    loss = trainer.compute_loss(model, dict(batch))
    loss.backward()
    return loss.item(), torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def test_the_cpu_loss_on_prm_verdicts_equals_trls_and_skips_the_prompt(tmp_path):
    from trl import SFTConfig, SFTTrainer

    steps = sim_expert_steps(["SystemWifiTurnOn"], seed=0)
    data = build_prm_dataset(steps, PerturbationSampler(seed=0), k=2, seed=0)
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(data, prompt="compact"))
    examples = prm_sft_dataset(data, prompt="compact").select(range(6))
    args = SFTConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=3, report_to="none",
                     completion_only_loss=True, use_cpu=True, save_strategy="no", disable_tqdm=True)
    ours = completion_only_sft_trainer()(model=model, args=args, train_dataset=examples, processing_class=tokenizer)
    trl = SFTTrainer(model=model, args=args, train_dataset=examples, processing_class=tokenizer)
    batch = next(iter(ours.get_train_dataloader()))
    scored = int((batch["labels"][:, 1:] != -100).sum())
    assert int((batch["labels"][:, 1:] == -100).sum()) > 5 * scored  # the screen prompt dominates the batch
    assert ours._compact_loss_applies(model, batch)
    model.train()
    (loss, grads), (trl_loss, trl_grads) = (_loss_and_grads(t, model, batch) for t in (ours, trl))
    assert loss == pytest.approx(trl_loss, rel=1e-5) and loss > 0
    assert torch.allclose(grads, trl_grads, rtol=1e-4, atol=1e-6)
    assert ours._metrics["train"]["mean_token_accuracy"] and ours._metrics["train"]["num_tokens"]
    # what it does not cover goes to TRL unchanged: another loss type, or extra inputs (a VLM's pixels)
    assert not ours._compact_loss_applies(model, {**batch, "pixel_values": batch["input_ids"]})
    ours.args.loss_type = "dft"
    assert not ours._compact_loss_applies(model, batch)
