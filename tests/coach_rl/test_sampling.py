"""K actions from one prompt pass (coach_rl.sampling, CoachTrainer's share_prompt_prefix) on tiny real models."""

from __future__ import annotations

import pytest
import torch
from PIL import Image

from coach_reward.tiny_models import build_tiny_causal_lm, build_tiny_vision_lm
from coach_rl.config import CoachConfig
from coach_rl.sampling import generate_shared_prefix, repeat_rows

K = 3


@pytest.fixture(scope="module")
def text_lm():
    return build_tiny_causal_lm(seed=0)


@pytest.fixture(scope="module")
def vision_lm():
    return build_tiny_vision_lm(seed=0, max_pixels=224 * 224)


def _vision_batch(processor, k_copies: int = 1):
    """Two screenshot prompts of different lengths (left padding), each optionally repeated as K rows."""
    screens = [Image.new("RGB", (300, 600), (20, 120, 30)), Image.new("RGB", (300, 600), (200, 20, 30))]
    texts = ["Tap the OK button", "Open the settings of the clock app and turn the alarm off"]
    messages = [[{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": t}]}] for t in texts]
    prompts = [processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in messages]
    rows = [i for i in range(2) for _ in range(k_copies)]
    return processor(text=[prompts[i] for i in rows], images=[[screens[i]] for i in rows], return_tensors="pt",
                     padding=True, padding_side="left", return_mm_token_type_ids=True)


def _count_vision_patches(model) -> list[int]:
    seen: list[int] = []
    model.model.visual.register_forward_hook(lambda module, args, out: seen.append(args[0].shape[0]))
    return seen


def test_greedy_replies_equal_k_independent_rows_for_a_text_model(text_lm):
    model, tok = text_lm
    enc = tok(["Open the clock app.", "Turn the wifi on in the settings, then go back home."], return_tensors="pt",
              padding=True, padding_side="left")
    options = dict(max_new_tokens=8, do_sample=False, pad_token_id=tok.pad_token_id, output_logits=True,
                   return_dict_in_generate=True)
    plain = model.generate(input_ids=repeat_rows(enc["input_ids"], K), attention_mask=repeat_rows(enc["attention_mask"], K),
                           **options)
    shared = generate_shared_prefix(model, enc["input_ids"], enc["attention_mask"], K, **options)
    assert torch.equal(plain.sequences, shared.sequences)
    for a, b in zip(plain.logits, shared.logits):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_greedy_replies_equal_independent_rows_for_a_vlm_and_the_screenshot_is_encoded_once(vision_lm):
    """The image features come from the shared prefill: a cache generate ignored would lose them and differ."""
    model, processor = vision_lm
    pad = processor.tokenizer.pad_token_id
    repeated = _vision_batch(processor, K)
    once = _vision_batch(processor, 1)
    patches = _count_vision_patches(model)
    plain = model.generate(**repeated, max_new_tokens=8, do_sample=False, pad_token_id=pad)
    plain_patches = sum(patches)
    patches.clear()
    fields = {k: v for k, v in once.items() if k not in ("input_ids", "attention_mask")}
    shared = generate_shared_prefix(model, once["input_ids"], once["attention_mask"], K, prefill_inputs=fields,
                                    max_new_tokens=8, do_sample=False, pad_token_id=pad)
    assert torch.equal(plain, shared)
    assert sum(patches) * K == plain_patches  # each screenshot through the vision tower once, not K times
    assert getattr(model.model, "rope_deltas", None) is None or model.model.rope_deltas.shape[0] in (2, 2 * K)


def test_sampled_replies_come_back_grouped_by_prompt(text_lm):
    model, tok = text_lm
    enc = tok(["Open the clock app.", "Turn the wifi on."], return_tensors="pt", padding=True, padding_side="left")
    torch.manual_seed(0)
    out = generate_shared_prefix(model, enc["input_ids"], enc["attention_mask"], 4, max_new_tokens=6, do_sample=True,
                                 temperature=1.0, top_k=0, pad_token_id=tok.pad_token_id)
    width = enc["input_ids"].shape[1]
    assert out.shape[0] == 8
    for row in range(8):  # rows 0-3 continue prompt 0, rows 4-7 prompt 1
        assert torch.equal(out[row, :width], enc["input_ids"][row // 4])
    replies = {tuple(r.tolist()) for r in out[:4, width:]}
    assert len(replies) > 1  # K samples, not K copies of one


def test_bad_arguments_are_named(text_lm):
    model, tok = text_lm
    ids = torch.tensor([[5, 6, 7]])
    with pytest.raises(ValueError, match="k .samples per prompt"):
        generate_shared_prefix(model, ids, torch.ones_like(ids), 0)
    with pytest.raises(ValueError, match="same .batch, length. shape"):
        generate_shared_prefix(model, ids, torch.ones(1, 2, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        generate_shared_prefix(model, ids[:, :1], torch.ones(1, 1, dtype=torch.long), 2)


# -- in CoachTrainer -----------------------------------------------------------------------------------


def _trainer(vision_lm, tmp_path, **overrides):
    import copy

    from coach_rl.algorithms.coach import CoachTrainer

    model, processor = vision_lm
    kwargs = dict(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no", bf16=False,
                  per_device_train_batch_size=8, num_generations=4, max_completion_length=6, seed=3,
                  learning_rate=1e-3, gradient_checkpointing=False)
    kwargs.update(overrides)
    return CoachTrainer(copy.deepcopy(model), lambda s, a: [float(len(x)) for x in a], CoachConfig(**kwargs), processor)


def _screen_rows(n: int) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": f"Tap OK {i}"}]}],
             "state": f"screen {i}", "images": [Image.new("RGB", (120, 90), (40 * i, 30, 30))]} for i in range(n)]


@pytest.mark.parametrize("share", [True, False])
def test_coach_trainer_samples_k_actions_per_state_from_one_prompt_pass(vision_lm, tmp_path, share):
    """Same seed, same replies and Q with or without sharing; sharing encodes each screenshot once for sampling."""
    trainer = _trainer(vision_lm, tmp_path, share_prompt_prefix=share)
    patches = _count_vision_patches(trainer.model)
    trainer.actor_update(_screen_rows(2), num_steps=1)
    per_image = patches[-1] // 2  # the loss forward (share_prompt_update) sees each state's screenshot once
    assert sum(patches[:-1]) == (2 if share else 8) * per_image
    actions = list(trainer.critic_reward.last_actions)
    scores = trainer.critic_reward.last_scores.tolist()
    reference = _trainer(vision_lm, tmp_path / "ref", share_prompt_prefix=not share)
    reference.actor_update(_screen_rows(2), num_steps=1)
    assert list(reference.critic_reward.last_actions) == actions and reference.critic_reward.last_scores.tolist() == scores


def test_rows_that_are_not_groups_of_k_go_to_trl_unchanged(vision_lm, tmp_path):
    trainer = _trainer(vision_lm, tmp_path)
    ids = [[1, 2, 3], [1, 2, 4], [5, 6], [5, 6]]  # the first "group" holds two different prompts
    assert trainer._shared_groups(ids, None, {}, 2) is None
    assert trainer._shared_groups([[1, 2, 3], [1, 2, 3]], None, {}, 2) == ([[1, 2, 3]], {})


def test_k_equal_one_needs_the_plain_q_advantage(vision_lm, tmp_path):
    with pytest.raises(ValueError, match="K = 1 works with coach_advantage='q'"):
        CoachConfig(output_dir=str(tmp_path), num_generations=1, use_cpu=True, report_to="none")
    trainer = _trainer(vision_lm, tmp_path, num_generations=1, coach_advantage="q", per_device_train_batch_size=2)
    assert trainer.args.num_generations == 1
    metrics = trainer.actor_update(_screen_rows(2), num_steps=1)
    assert len(trainer.critic_reward.last_actions) == 2 and metrics["actor/grad_norm"] > 0


def test_actor_update_turns_on_the_configs_gradient_checkpointing(vision_lm, tmp_path):
    """Trainer.train() would enable it; actor_update never calls train(), and at real size the flag was ignored."""
    trainer = _trainer(vision_lm, tmp_path, gradient_checkpointing=True)
    during_loss: list[bool] = []
    compute = trainer._compute_loss

    def spy(model, inputs):
        during_loss.append(bool(model.is_gradient_checkpointing) and model.training)
        return compute(model, inputs)

    trainer._compute_loss = spy
    trainer.actor_update(_screen_rows(2), num_steps=1)
    assert during_loss == [True]


def test_the_unshared_update_encodes_every_rows_screenshot_again(vision_lm, tmp_path):
    """share_prompt_update off: TRL's loss forward runs the vision tower over all 8 rows (2 states x K = 4)."""
    shared = _trainer(vision_lm, tmp_path)
    shared_patches = _count_vision_patches(shared.model)
    shared.actor_update(_screen_rows(2), num_steps=1)
    plain = _trainer(vision_lm, tmp_path / "plain", share_prompt_update=False)
    plain_patches = _count_vision_patches(plain.model)
    plain.actor_update(_screen_rows(2), num_steps=1)
    assert plain_patches[-1] == 4 * shared_patches[-1] > 0
    assert shared.shared_update_rows == 8 and plain.shared_update_rows == 0
