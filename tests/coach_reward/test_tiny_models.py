"""The offline tiny model builder: deterministic, reloadable with the Auto classes, usable for generate and chat."""

from __future__ import annotations

import time

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from coach_reward.tiny_models import ADDED_TOKENS, SPECIAL_TOKENS, build_tiny_causal_lm, build_tiny_tokenizer

SAMPLES = [
    "Thought: open the app.\nAction: click(start_box='<|box_start|>(123,4567)<|box_end|>')",
    "<think>The agent taps Save.</think> judgment:True",
    "héllo 世界 ＡＢ① judgment：False  \n\n x",
    '<node text="Wi-Fi" bounds="[0,0][1080,200]" />',
]


def test_same_seed_gives_identical_weights_and_vocab():
    m1, t1 = build_tiny_causal_lm(seed=3)
    m2, t2 = build_tiny_causal_lm(seed=3)
    m3, _ = build_tiny_causal_lm(seed=4)
    assert t1.get_vocab() == t2.get_vocab()
    s1, s2, s3 = m1.state_dict(), m2.state_dict(), m3.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    assert not all(torch.equal(s1[k], s3[k]) for k in s1)


def test_build_does_not_touch_global_rng():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    build_tiny_causal_lm(seed=0)
    assert torch.equal(torch.rand(3), expected)


def test_build_is_fast():
    start = time.perf_counter()
    build_tiny_causal_lm()
    assert time.perf_counter() - start < 5.0


def test_special_and_added_tokens_are_single_ids():
    tok = build_tiny_tokenizer()
    for i, token in enumerate(SPECIAL_TOKENS):
        assert tok.convert_tokens_to_ids(token) == i
    for token in ADDED_TOKENS:
        assert len(tok.encode(token)) == 1, token
    assert tok.padding_side == "left"
    assert tok.pad_token_id != tok.eos_token_id


@pytest.mark.parametrize("text", SAMPLES)
def test_text_round_trips(text):
    tok = build_tiny_tokenizer()
    assert tok.decode(tok.encode(text), skip_special_tokens=True) == text


def test_corpus_extends_vocabulary():
    base = build_tiny_tokenizer()
    extra = build_tiny_tokenizer(corpus=["zyzzyva quokka " * 3] * 50)
    assert len(extra.tokenize("zyzzyva")) < len(base.tokenize("zyzzyva"))


def test_bad_arguments_raise_clearly():
    with pytest.raises(ValueError, match="vocab_size"):
        build_tiny_tokenizer(vocab_size=100)
    with pytest.raises(TypeError, match="iterable of strings"):
        build_tiny_tokenizer(corpus="one string")
    with pytest.raises(ValueError, match="divisible"):
        build_tiny_causal_lm(hidden_size=30, num_heads=4)


def test_save_and_reload_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model, tok = build_tiny_causal_lm(tmp_path / "tiny", seed=1)
    model2 = AutoModelForCausalLM.from_pretrained(tmp_path / "tiny")
    tok2 = AutoTokenizer.from_pretrained(tmp_path / "tiny")
    for text in SAMPLES:
        assert tok2.encode(text) == tok.encode(text)
    assert tok2.chat_template == tok.chat_template
    assert (tok2.bos_token, tok2.eos_token, tok2.pad_token) == (tok.bos_token, tok.eos_token, tok.pad_token)
    ids = torch.tensor([tok.encode(SAMPLES[0])])
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, model2(ids).logits)


def test_generate_a_few_tokens_batched_with_left_padding():
    model, tok = build_tiny_causal_lm()
    batch = tok(["hello", "a longer prompt here"], return_tensors="pt", padding=True)
    assert batch["attention_mask"][0, 0] == 0  # left padded
    out = model.generate(**batch, max_new_tokens=4, do_sample=False)
    prompt_len = batch["input_ids"].shape[1]
    assert out.shape[0] == 2 and prompt_len < out.shape[1] <= prompt_len + 4
    assert torch.equal(out[:, :prompt_len], batch["input_ids"])


def test_chat_template_renders_roles_images_and_generation_prompt():
    _, tok = build_tiny_causal_lm()
    messages = [
        {"role": "system", "content": "You judge steps."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Is it right?"}]},
    ]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == ("<|im_start|>system\nYou judge steps.<|im_end|>\n"
                    "<|im_start|>user\n<|image_pad|>Is it right?<|im_end|>\n<|im_start|>assistant\n")
    full = messages + [{"role": "assistant", "content": "judgment:True"}]
    enc = tok.apply_chat_template(full, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    mask = enc["assistant_masks"]
    kept = [i for i, m in zip(enc["input_ids"], mask, strict=True) if m]
    assert tok.decode(kept) == "judgment:True<|im_end|>"


def test_model_vocabulary_covers_the_tokenizer():
    model, tok = build_tiny_causal_lm(vocab_size=600)
    assert len(tok) <= model.config.vocab_size == 600
    assert model.get_input_embeddings().weight.shape[0] == 600


def test_tiny_vision_lm_expands_images_and_generates():
    import numpy as np
    from PIL import Image

    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    model2, _ = build_tiny_vision_lm(seed=0)
    s1, s2 = model.state_dict(), model2.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    image = Image.fromarray(np.random.RandomState(0).randint(0, 255, (240, 108, 3), dtype=np.uint8))
    chat = [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": "Tap OK?"}]}]
    enc = processor.apply_chat_template([chat], add_generation_prompt=True, tokenize=True, return_dict=True,
                                        return_tensors="pt")
    ids = enc["input_ids"][0].tolist()
    n_image_tokens = ids.count(processor.image_token_id)
    # One placeholder per 2x2 group of 14-pixel patches of the resized image.
    t, h, w = enc["image_grid_thw"][0].tolist()
    assert n_image_tokens == t * h * w // 4 > 0
    assert h * w * 14 * 14 <= 112 * 112
    out = model.generate(**enc, max_new_tokens=3, do_sample=False)
    assert out.shape[1] == len(ids) + 3
