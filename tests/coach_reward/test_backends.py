"""TransformersBackend on a real tiny model: batching with left padding, n, stopping, log-probabilities, validation."""

from __future__ import annotations

import importlib.util
import threading
import time

import numpy as np
import pytest
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from coach_reward.backends import (
    Backend,
    OpenAIBackend,
    TransformersBackend,
    VLLMBackend,
    normalize_messages,
)
from coach_reward.prompts import image_data_url

CHATS = [
    [{"role": "user", "content": "hi"}],
    [{"role": "system", "content": "You judge steps."}, {"role": "user", "content": "a much longer prompt " * 5}],
    [{"role": "user", "content": [{"type": "text", "text": "parts "}, {"type": "text", "text": "work too"}]}],
]


class ForceText(LogitsProcessor):
    """Make generation emit ``ids`` then stop: every other token gets -inf (the model still computes its logits)."""

    def __init__(self, ids: list[int], prompt_len: int):
        self.ids, self.prompt_len = ids, prompt_len

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_len
        forced = torch.full_like(scores, -torch.inf)
        forced[:, self.ids[min(step, len(self.ids) - 1)]] = 0.0
        return forced


def test_is_a_backend(tiny_lm):
    model, tok = tiny_lm
    assert isinstance(TransformersBackend(model, tok), Backend)
    assert "TransformersBackend" in repr(TransformersBackend(model, tok))


def test_batched_greedy_equals_one_by_one(tiny_lm):
    model, tok = tiny_lm
    batched = TransformersBackend(model, tok, batch_size=3).generate(CHATS, max_new_tokens=6)
    single = TransformersBackend(model, tok, batch_size=1).generate(CHATS, max_new_tokens=6)
    assert [g[0].text for g in batched] == [g[0].text for g in single]
    assert all(len(g) == 1 for g in batched)
    assert batched[0][0].finish_reason == "length" and batched[0][0].completion_tokens == 6
    assert batched[0][0].prompt_tokens < batched[1][0].prompt_tokens


def test_n_completions_greedy_and_sampled(tiny_lm):
    model, tok = tiny_lm
    backend = TransformersBackend(model, tok)
    greedy = backend.generate(CHATS[:2], max_new_tokens=4, n=3)
    assert [len(g) for g in greedy] == [3, 3]
    assert len({c.text for c in greedy[0]}) == 1
    torch.manual_seed(0)
    sampled = backend.generate(CHATS[:2], max_new_tokens=8, temperature=1.0, n=4)
    torch.manual_seed(0)
    again = backend.generate(CHATS[:2], max_new_tokens=8, temperature=1.0, n=4)
    assert [len(g) for g in sampled] == [4, 4]
    assert [[c.text for c in g] for g in sampled] == [[c.text for c in g] for g in again]
    assert len({c.text for c in sampled[0]}) > 1  # a random model sampled at T=1 varies


def test_stops_at_eos_and_reports_stop(tiny_lm):
    model, tok = tiny_lm
    prompt_len = len(tok.apply_chat_template(CHATS[0], add_generation_prompt=True, tokenize=True,
                                             return_dict=True)["input_ids"])
    script = tok.encode("<think>ok</think> judgment:True") + [tok.eos_token_id]
    backend = TransformersBackend(model, tok, generate_kwargs={
        "logits_processor": LogitsProcessorList([ForceText(script, prompt_len)])})
    out = backend.generate(CHATS[:1], max_new_tokens=40)[0][0]
    assert out.text == "<think>ok</think> judgment:True"
    assert out.finish_reason == "stop"
    assert out.completion_tokens == len(script)


def test_logprobs_match_an_independent_forward_pass(tiny_lm):
    model, tok = tiny_lm
    backend = TransformersBackend(model, tok)
    out = backend.generate(CHATS[1:2], max_new_tokens=5, logprobs=True, top_logprobs=5)[0][0]
    assert out.token_logprobs is not None and len(out.token_logprobs) == 5
    prompt_ids = tok.apply_chat_template(CHATS[1], add_generation_prompt=True, tokenize=True,
                                         return_dict=True)["input_ids"]
    gen_ids = tok.encode(out.text)
    with torch.no_grad():
        logits = model(torch.tensor([prompt_ids + gen_ids])).logits[0]
    logp = torch.log_softmax(logits.float(), dim=-1)
    for t, entry in enumerate(out.token_logprobs):
        pos = len(prompt_ids) + t - 1
        assert entry.logprob == pytest.approx(logp[pos, gen_ids[t]].item(), abs=1e-4)
        assert entry.logprob == pytest.approx(logp[pos].max().item(), abs=1e-4)  # greedy picks the arg-max
        # The top-5 ids, with ids that read as the same text merged (probabilities added).
        values, ids = logp[pos].topk(5)
        expected: dict[str, float] = {}
        for v, i in zip(values.tolist(), ids.tolist(), strict=True):
            expected[tok.decode([i])] = float(np.logaddexp(expected.get(tok.decode([i]), -np.inf), v))
        assert entry.top_logprobs.keys() == expected.keys()
        assert list(entry.top_logprobs.values()) == pytest.approx(list(expected.values()), abs=1e-4)
    assert "".join(e.token for e in out.token_logprobs) == out.text


def test_no_logprobs_unless_asked(tiny_lm):
    model, tok = tiny_lm
    out = TransformersBackend(model, tok).generate(CHATS[:1], max_new_tokens=2)[0][0]
    assert out.token_logprobs is None


def test_images_with_a_text_tokenizer(tiny_lm):
    model, tok = tiny_lm
    chat = [{"role": "user", "content": [{"type": "image", "image": np.zeros((4, 4, 3), np.uint8)},
                                         {"type": "text", "text": "what is this"}]}]
    with pytest.raises(ValueError, match="processor"):
        TransformersBackend(model, tok).generate([chat], max_new_tokens=2)
    dropped = TransformersBackend(model, tok, images="drop").generate([chat], max_new_tokens=2)
    assert len(dropped[0]) == 1


def test_from_pretrained_loads_a_saved_folder(tiny_model_dir, tiny_lm):
    backend = TransformersBackend.from_pretrained(str(tiny_model_dir))
    model, tok = tiny_lm
    expected = TransformersBackend(model, tok).generate(CHATS[:1], max_new_tokens=4)
    assert backend.generate(CHATS[:1], max_new_tokens=4)[0][0].text == expected[0][0].text


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"max_new_tokens": 0}, "max_new_tokens"), ({"temperature": -1.0}, "temperature"),
     ({"temperature": float("nan")}, "temperature"), ({"n": 0}, "n must"), ({"top_logprobs": -1}, "top_logprobs")],
)
def test_generate_argument_checks(tiny_lm, kwargs, match):
    model, tok = tiny_lm
    with pytest.raises(ValueError, match=match):
        TransformersBackend(model, tok).generate(CHATS[:1], **kwargs)


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ([], "non-empty"),
        ("hello", "non-empty"),
        ([{"role": "robot", "content": "x"}], "unknown role"),
        ([{"content": "x"}], "'role' and 'content'"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "unknown part type"),
        ([{"role": "user", "content": [{"type": "text", "text": 3}]}], "string 'text'"),
        ([{"role": "user", "content": [{"type": "image"}]}], "needs 'image'"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}],
         "data: URLs"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}]}],
         "readable base64"),
    ],
)
def test_normalize_messages_rejects_malformed_chats(messages, match):
    with pytest.raises(ValueError, match=match):
        normalize_messages(messages)


def test_normalize_messages_converts_images_both_ways():
    url = image_data_url(np.full((3, 5, 3), 200, np.uint8))
    msgs = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    pil = normalize_messages(msgs, images="pil")[0]["content"][0]
    assert pil["type"] == "image" and pil["image"].size == (5, 3)
    back = normalize_messages([{"role": "user", "content": [pil]}], images="url")[0]["content"][0]
    assert back["type"] == "image_url" and back["image_url"]["url"].startswith("data:image/png;base64,")


def test_openai_backend_validates_its_arguments():
    with pytest.raises(ValueError, match="base_url"):
        OpenAIBackend("localhost:8000", "m")
    with pytest.raises(ValueError, match="model"):
        OpenAIBackend("http://127.0.0.1:1/v1", "")
    with pytest.raises(ValueError, match="timeout"):
        OpenAIBackend("http://127.0.0.1:1/v1", "m", timeout=0)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_backend_says_how_to_install():
    with pytest.raises(ImportError, match=r"pip install coach-reward\[vllm\]"):
        VLLMBackend("some/model")


# ---- vision-language models (a tiny Qwen2-VL with an image-only processor) --------------------------


@pytest.fixture(scope="module")
def tiny_vlm():
    from coach_reward.tiny_models import build_tiny_vision_lm

    return build_tiny_vision_lm(seed=0)


def _shot(seed: int, height: int = 2400, width: int = 1080) -> np.ndarray:
    return np.random.RandomState(seed).randint(0, 255, (height, width, 3), dtype=np.uint8)


VLM_CHATS = [
    [{"role": "user", "content": [{"type": "image", "image": _shot(0)}, {"type": "text", "text": "Is Save visible?"}]}],
    [{"role": "user", "content": "no image in this one, and a longer text than the others"}],
    [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": image_data_url(_shot(1, 200, 100))}},
                                  {"type": "text", "text": "second"}]}],
]


def test_vlm_batched_greedy_equals_one_by_one(tiny_vlm):
    model, processor = tiny_vlm
    batched = TransformersBackend(model, processor, batch_size=3).generate(VLM_CHATS, max_new_tokens=5,
                                                                           logprobs=True, top_logprobs=2)
    single = TransformersBackend(model, processor, batch_size=1).generate(VLM_CHATS, max_new_tokens=5)
    assert [g[0].text for g in batched] == [g[0].text for g in single]
    assert all(len(g[0].token_logprobs) == 5 for g in batched)


def test_vlm_output_depends_on_the_image(tiny_vlm):
    model, processor = tiny_vlm
    backend = TransformersBackend(model, processor)

    def first_logprobs(seed):
        chat = [{"role": "user", "content": [{"type": "image", "image": _shot(seed)}, {"type": "text", "text": "?"}]}]
        return backend.generate([chat], max_new_tokens=1, logprobs=True, top_logprobs=5)[0][0].token_logprobs[0]

    assert first_logprobs(0).top_logprobs != first_logprobs(1).top_logprobs
    assert first_logprobs(0).top_logprobs == pytest.approx(first_logprobs(0).top_logprobs)


def test_generation_leaves_a_training_model_in_training_mode(tiny_lm):
    model, tok = tiny_lm
    model.train()
    try:
        TransformersBackend(model, tok).generate(CHATS[:1], max_new_tokens=2)
        assert model.training
    finally:
        model.eval()


class _StepLog(LogitsProcessor):
    """Notes which thread each generation step runs in, and yields the GIL at every step (as a real model's
    longer steps do), so that generations from several threads would interleave."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def __call__(self, input_ids, scores):
        self.threads.append(threading.get_ident())
        time.sleep(0.002)
        return scores


def test_generation_from_several_threads_runs_one_call_at_a_time(tiny_lm):
    # a worker driving several devices in threads scores all their steps with one PRM on one model
    model, tok = tiny_lm
    log = _StepLog()
    backend = TransformersBackend(model, tok, generate_kwargs={"logits_processor": LogitsProcessorList([log])})
    expected = TransformersBackend(model, tok).generate(CHATS, max_new_tokens=4, logprobs=True, top_logprobs=3)
    start = threading.Barrier(4)
    results: dict[int, list] = {}

    def run(i: int) -> None:
        start.wait()
        results[i] = backend.generate(CHATS, max_new_tokens=4, logprobs=True, top_logprobs=3)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(log.threads)) == 4
    # each call's steps in one run: the thread changes 3 times, not at every step
    assert sum(a != b for a, b in zip(log.threads, log.threads[1:])) == 3
    assert all(results[i] == expected for i in range(4))
