"""share_prompt_update: the K replies of a state share one prompt pass in the actor update (coach_rl.prefix_update).

A tiny real Qwen2 in a real CoachTrainer: the packed path's per-token log-probs, Eq. 4 loss and gradients equal TRL's
unshared rows to float tolerance, with the "sdpa" and the "eager" attention, and a whole actor update lands on the
same weights.
"""

from __future__ import annotations

import copy

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.algorithms.coach import CoachTrainer
from coach_rl.prefix_update import group_rows, pack_groups

from .trainer_parts import K, trainer_config, vowel_critic


def _trainer(tmp_path, attention: str = "sdpa", **overrides) -> CoachTrainer:
    model, tok = build_tiny_causal_lm(seed=0)
    model.config._attn_implementation = attention
    return CoachTrainer(model, vowel_critic, trainer_config(tmp_path, **overrides), tok)


def _batch(trainer: CoachTrainer) -> dict:
    """Two states (prompts of different length, so one is left padded), K replies each of different lengths."""
    tok = trainer.processing_class
    g = torch.Generator().manual_seed(3)
    prompts = [tok("Open the settings app and turn wifi on.")["input_ids"], tok("Tap OK.")["input_ids"]]
    width = max(len(p) for p in prompts)
    pad = tok.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts for _ in range(K)])
    prompt_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts for _ in range(K)])
    c = 7
    completion_ids = torch.randint(5, 900, (2 * K, c), generator=g)
    lengths = torch.tensor([7, 3, 5, 1, 6, 7, 2, 4])
    completion_mask = (torch.arange(c)[None] < lengths[:, None]).long()
    completion_ids = completion_ids.masked_fill(completion_mask == 0, pad)
    return {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
            "completion_mask": completion_mask, "advantages": torch.randn(2 * K, generator=g),
            "old_per_token_logps": -3.0 + 0.3 * torch.randn(2 * K, c, generator=g),
            "num_items_in_batch": completion_mask.sum()}


def _loss_and_grads(trainer: CoachTrainer, inputs: dict, shared: bool) -> tuple[torch.Tensor, dict]:
    trainer.args.share_prompt_update = shared
    model = trainer.model
    model.train()
    model.zero_grad(set_to_none=True)
    trainer.current_gradient_accumulation_steps = 1
    loss = trainer._compute_loss(model, inputs)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return loss.detach(), grads


def test_packing_groups_rows_by_prompt_and_blocks_the_segments():
    ids = torch.tensor([[0, 5, 6, 7, 9], [0, 5, 6, 8, 9], [4, 5, 6, 7, 0]])
    mask = torch.tensor([[0, 1, 1, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    groups = group_rows(ids, mask, 2)
    assert groups == [[0, 1], [2]]
    packed = pack_groups(ids, mask, 2, groups)
    # state 0: prompt [5, 6] -> [5] | 6 7 | 6 8 ; state 1: prompt [4, 5, 6] -> [4, 5] | 6 7, padded
    assert packed["input_ids"].tolist() == [[5, 6, 7, 6, 8], [4, 5, 6, 7, 0]]
    assert packed["position_ids"].tolist() == [[0, 1, 2, 1, 2], [0, 1, 2, 3, 0]]
    assert packed["shift_labels"].tolist() == [[-100, 7, 9, 8, 9], [-100, -100, 7, -100, -100]]
    assert packed["where"] == {0: (0, 1), 1: (0, 3), 2: (1, 2)}
    m = packed["attention_mask"][0, 0].int().tolist()
    assert m[3] == [1, 0, 0, 1, 0]  # the second reply sees the prompt and itself, not the first reply
    assert m[4] == [1, 0, 0, 1, 1]
    assert packed["attention_mask"][1, 0, 4].int().tolist() == [0, 0, 0, 0, 1]  # padding: itself only


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_shared_loss_and_gradients_equal_the_unshared_rows(tmp_path, attention):
    trainer = _trainer(tmp_path, attention)
    inputs = _batch(trainer)
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    with torch.no_grad():
        trainer.args.share_prompt_update = False
        plain, plain_h, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, 7, compute_entropy=True)
        trainer.args.share_prompt_update = True
        shared, shared_h, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, 7,
                                                                           compute_entropy=True)
    assert trainer.shared_update_rows == 2 * K and trainer.shared_update_prompts == 2
    assert bool((plain[inputs["completion_mask"] == 1] < -1).all())  # real log-probs of a random model, not zeros
    torch.testing.assert_close(shared, plain, atol=2e-5, rtol=1e-5)
    torch.testing.assert_close(shared_h, plain_h, atol=2e-5, rtol=1e-5)
    assert bool((shared[inputs["completion_mask"] == 0] == 0).all())

    loss_plain, grads_plain = _loss_and_grads(trainer, inputs, shared=False)
    loss_shared, grads_shared = _loss_and_grads(trainer, inputs, shared=True)
    assert abs(float(loss_plain)) > 1e-3
    torch.testing.assert_close(loss_shared, loss_plain, atol=1e-6, rtol=1e-5)
    assert grads_shared.keys() == grads_plain.keys() and len(grads_plain) > 10
    total = torch.sqrt(sum((g ** 2).sum() for g in grads_plain.values()))
    assert float(total) > 1e-3
    for name, grad in grads_plain.items():
        torch.testing.assert_close(grads_shared[name], grad, atol=1e-6, rtol=1e-4, msg=name)


def test_an_actor_update_with_the_shared_prompt_lands_on_the_same_weights(tmp_path):
    rows = [{"prompt": [{"role": "user", "content": f"Open the app number {i}."}], "state": f"state {i}"}
            for i in range(4)]
    results = {}
    for shared in (False, True):
        # two micro-batches of 4 rows per generation: the group shuffle keeps each state's K rows together. One
        # optimiser step: it sums both micro-batches, so the order the two shuffles (groups vs rows) leave is moot.
        trainer = _trainer(tmp_path / str(shared), share_prompt_update=shared, per_device_train_batch_size=4,
                           gradient_accumulation_steps=2)
        torch.manual_seed(11)
        metrics = trainer.actor_update(rows, num_steps=1, log=False)
        results[shared] = (copy.deepcopy(trainer.model.state_dict()), metrics, trainer.shared_update_rows)
    (plain, m_plain, n_plain), (shared, m_shared, n_shared) = results[False], results[True]
    assert n_plain == 0 and n_shared == 2 * 4  # micro-batches x rows: every row shared its prompt
    assert abs(m_shared["actor/loss"] - m_plain["actor/loss"]) < 1e-5
    moved = max(float((plain[k] - build_tiny_causal_lm(seed=0)[0].state_dict()[k]).abs().max()) for k in plain)
    assert moved > 1e-4
    for key in plain:
        torch.testing.assert_close(shared[key], plain[key], atol=2e-5, rtol=1e-4)


def _vlm_inputs(processor, k: int) -> dict:
    """Two screenshot states (different images, prompts of different length: left padding), K replies each."""
    from PIL import Image

    texts = [processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}], tokenize=False,
        add_generation_prompt=True) for text in ("Tap OK on the dialog that asks about wifi", "Go back")]
    images = [[Image.new("RGB", (120, 90), (200, 30, 30))], [Image.new("RGB", (90, 120), (30, 200, 90))]]
    enc = processor(text=texts, images=images, return_tensors="pt", padding=True, padding_side="left")
    rows = [i for i in range(2) for _ in range(k)]
    patches = enc["image_grid_thw"].prod(-1).tolist()
    spans = [(0, patches[0]), (patches[0], patches[0] + patches[1])]
    g = torch.Generator().manual_seed(5)
    c = 6
    completion_ids = torch.randint(5, 400, (2 * k, c), generator=g)
    completion_mask = (torch.arange(c)[None] < torch.tensor([6, 2, 4, 5, 6, 1][:2 * k])[:, None]).long()
    pad = processor.tokenizer.pad_token_id
    return {
        "prompt_ids": enc["input_ids"][rows], "prompt_mask": enc["attention_mask"][rows],
        "completion_ids": completion_ids.masked_fill(completion_mask == 0, pad), "completion_mask": completion_mask,
        "pixel_values": torch.cat([enc["pixel_values"][slice(*spans[r])] for r in rows]),
        "image_grid_thw": enc["image_grid_thw"][rows], "num_images": [1] * (2 * k),
        "mm_token_type_ids": torch.cat([enc["mm_token_type_ids"][rows], torch.zeros_like(completion_ids)], dim=1),
        "advantages": torch.randn(2 * k, generator=g),
        "old_per_token_logps": -6.0 + 0.3 * torch.randn(2 * k, c, generator=g),
        "num_items_in_batch": completion_mask.sum(),
    }


def test_a_vision_language_policy_shares_its_screenshot_prompt_with_the_same_loss_and_gradients(tmp_path):
    """Qwen2-VL: the packed prompt carries the screenshot once, its multimodal-RoPE positions from get_rope_index."""
    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    trainer = CoachTrainer(model, vowel_critic, trainer_config(tmp_path, num_generations=3, per_device_train_batch_size=6),
                           processor)
    inputs = _vlm_inputs(processor, 3)
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    mm = {key: inputs[key] for key in ("pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids")}
    with torch.no_grad():
        trainer.args.share_prompt_update = False
        plain, plain_h, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 6, compute_entropy=True, **mm)
        trainer.args.share_prompt_update = True
        shared, shared_h, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 6, compute_entropy=True,
                                                                           **mm)
    assert trainer.shared_update_rows == 6 and trainer.shared_update_prompts == 2
    assert bool((plain[inputs["completion_mask"] == 1] < -1).all())
    torch.testing.assert_close(shared, plain, atol=2e-5, rtol=1e-5)
    torch.testing.assert_close(shared_h, plain_h, atol=2e-5, rtol=1e-5)

    loss_plain, grads_plain = _loss_and_grads(trainer, inputs, shared=False)
    loss_shared, grads_shared = _loss_and_grads(trainer, inputs, shared=True)
    assert abs(float(loss_plain)) > 1e-3
    torch.testing.assert_close(loss_shared, loss_plain, atol=1e-6, rtol=1e-5)
    assert grads_shared.keys() == grads_plain.keys()
    assert any(name.startswith("model.visual") for name in grads_plain)  # the vision tower learns through it too
    for name, grad in grads_plain.items():
        torch.testing.assert_close(grads_shared[name], grad, atol=1e-6, rtol=1e-4)


def test_states_with_the_same_text_but_different_screenshots_are_not_packed_together(tmp_path):
    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    trainer = CoachTrainer(model, vowel_critic, trainer_config(tmp_path, num_generations=3, per_device_train_batch_size=6),
                           processor)
    inputs = _vlm_inputs(processor, 3)
    second = inputs["prompt_ids"][3:].clone()  # state 1 gets state 0's text; the screenshots stay different
    inputs["prompt_ids"][3:] = inputs["prompt_ids"][:3]
    inputs["prompt_mask"][3:] = inputs["prompt_mask"][:3]
    inputs["mm_token_type_ids"][3:, :second.shape[1]] = inputs["mm_token_type_ids"][:3, :second.shape[1]]
    n = int(inputs["image_grid_thw"][0].prod())
    inputs["pixel_values"] = torch.cat([inputs["pixel_values"][:3 * n], inputs["pixel_values"][:3 * n] + 0.5])
    inputs["image_grid_thw"][3:] = inputs["image_grid_thw"][:3]
    inputs["completion_ids"][3], inputs["completion_mask"][3] = inputs["completion_ids"][0], inputs["completion_mask"][0]
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    mm = {key: inputs[key] for key in ("pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids")}
    with torch.no_grad():
        trainer.args.share_prompt_update = False
        plain, _, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 6, **mm)
        trainer.args.share_prompt_update = True
        shared, _, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 6, **mm)
    assert trainer.shared_update_prompts == 2  # two packed prompts, not one
    torch.testing.assert_close(shared, plain, atol=2e-5, rtol=1e-5)
    # rows 0 and 3: the same text and reply on different screens, so different log-probs (one packed prompt for
    # both would have given row 3 row 0's screen, and the shared log-probs would differ from the unshared ones)
    assert float((plain[0] - plain[3]).abs().max()) > 1e-4


def test_the_shared_update_is_exact_under_gradient_checkpointing_too(tmp_path):
    """The real-size recipe checkpoints activations: the packed forward is recomputed in the backward."""
    trainer = _trainer(tmp_path)
    trainer.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    inputs = _batch(trainer)
    loss_plain, grads_plain = _loss_and_grads(trainer, inputs, shared=False)
    loss_shared, grads_shared = _loss_and_grads(trainer, inputs, shared=True)
    assert trainer.shared_update_rows == 2 * K
    torch.testing.assert_close(loss_shared, loss_plain, atol=1e-6, rtol=1e-5)
    for name, grad in grads_plain.items():
        torch.testing.assert_close(grads_shared[name], grad, atol=1e-6, rtol=1e-4)


def test_the_real_size_architecture_qwen2_5_vl_shares_exactly_too(tmp_path):
    """Qwen2.5-VL (the real-size recipe's architecture, at toy size from tools/bench/rollout_split.py): its mRoPE
    positions for the packed prompt come from its own get_rope_index, so the log-probs match TRL's rows."""
    import importlib.util
    from pathlib import Path

    from PIL import Image

    path = Path(__file__).resolve().parents[2] / "tools" / "bench" / "rollout_split.py"
    spec = importlib.util.spec_from_file_location("rollout_split_for_prefix_test", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    model, processor, _ = bench.build_random_arch("qwen2.5-vl-tiny", tmp_path / "model", min_pixels=256,
                                                  max_pixels=40000, vocab_size=2048)
    assert type(model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    trainer = CoachTrainer(model, vowel_critic, trainer_config(tmp_path, num_generations=2, per_device_train_batch_size=4),
                           processor)
    texts = [processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}], tokenize=False,
        add_generation_prompt=True) for text in ("Open the clock", "Tap the second row")]
    images = [[Image.new("RGB", (200, 140), (20, 60, 200))], [Image.new("RGB", (140, 200), (220, 200, 10))]]
    enc = processor(text=texts, images=images, return_tensors="pt", padding=True, padding_side="left")
    rows = [0, 0, 1, 1]
    patches = enc["image_grid_thw"].prod(-1).tolist()
    spans = [(0, patches[0]), (patches[0], patches[0] + patches[1])]
    completion = torch.randint(5, 2000, (4, 5), generator=torch.Generator().manual_seed(1))
    ids = torch.cat([enc["input_ids"][rows], completion], 1)
    mask = torch.cat([enc["attention_mask"][rows], torch.ones_like(completion)], 1)
    mm = {"pixel_values": torch.cat([enc["pixel_values"][slice(*spans[r])] for r in rows]),
          "image_grid_thw": enc["image_grid_thw"][rows], "num_images": [1] * 4,
          "mm_token_type_ids": torch.cat([enc["mm_token_type_ids"][rows], torch.zeros_like(completion)], 1)}
    with torch.no_grad():
        trainer.args.share_prompt_update = False
        plain, _, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 5, **mm)
        trainer.args.share_prompt_update = True
        shared, _, _ = trainer._get_per_token_logps_and_entropies(model, ids, mask, 5, **mm)
    assert trainer.shared_update_prompts == 2 and bool((plain < -1).all())
    torch.testing.assert_close(shared, plain, atol=2e-5, rtol=1e-5)
