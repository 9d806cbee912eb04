"""ProcessRewardModel: p(correct) from the verdict token's probabilities, from the text, or neutral; over local and HTTP backends."""

from __future__ import annotations

import math

import pytest
import torch

from android_gym.actions import Click
from coach_reward.backends import OpenAIBackend, TokenLogprob, TransformersBackend
from coach_reward.prm import ProcessRewardModel, StepInput, verdict_probability
from coach_reward.server import serve
from coach_reward.tiny_models import scripted_backend

L = math.log
STEP = {"instruction": "Save the note in Markor", "ui": "[n1] Button ;click ; Save ;;: bounds: [10,20][200,80]",
        "thought": "I tap Save.", "action": Click(x=105, y=50)}


def tlp(token: str, p: float, top: dict[str, float] | None = None) -> TokenLogprob:
    return TokenLogprob(token, L(p), {k: L(v) for k, v in (top or {}).items()})


# ---- the probability read at the verdict token, on hand-made log-probabilities --------------------


def test_whole_word_tokens():
    toks = [tlp("<think>", 1), tlp("ok", 1), tlp("</think>", 1), tlp(" judgment", 1), tlp(":", 1),
            tlp("True", 0.6, {"True": 0.6, "False": 0.3, "Tr": 0.05, "Maybe": 0.05})]
    p, why = verdict_probability("<think>ok</think> judgment:True", toks)
    # P(True) = 0.6 + 0.05 ("Tr" begins "True"); P(False) = 0.3; p = 0.65 / 0.95
    assert p == pytest.approx(0.65 / 0.95)
    assert "at token 5" in why


def test_verdict_split_into_pieces_uses_the_first_piece():
    toks = [tlp("judgment", 1), tlp(":", 1), tlp("T", 0.5, {"T": 0.5, "F": 0.2, "Fal": 0.1, "X": 0.2}), tlp("rue", 0.9)]
    p, _ = verdict_probability("judgment:True", toks)
    assert p == pytest.approx(0.5 / 0.8)  # T -> True; F and Fal -> False; X ignored


def test_separator_merged_into_the_verdict_token():
    toks = [tlp(" judgment", 1), tlp(":False", 0.7, {":False": 0.7, ":True": 0.2, ":": 0.1})]
    p, _ = verdict_probability(" judgment:False", toks)
    assert p == pytest.approx(0.2 / 0.9)


def test_words_that_only_start_like_the_verdict_do_not_count():
    toks = [tlp("judgment: ", 1), tlp("True", 0.5, {"True": 0.5, "Truex": 0.3, "falsetto": 0.1, "false": 0.1})]
    p, _ = verdict_probability("judgment: True", toks)
    assert p == pytest.approx(0.5 / 0.6)


def test_chosen_token_counts_even_if_not_listed():
    toks = [tlp("judgment:", 1), tlp("False", 0.4, {"True": 0.5})]
    p, _ = verdict_probability("judgment:False", toks)
    assert p == pytest.approx(0.5 / 0.9)


def test_last_verdict_is_the_one_scored():
    toks = [tlp("judgment:", 1), tlp("True", 0.9, {"True": 0.9, "False": 0.1}), tlp(" then judgment:", 1),
            tlp("False", 0.8, {"False": 0.8, "True": 0.2})]
    p, _ = verdict_probability("judgment:True then judgment:False", toks)
    assert p == pytest.approx(0.2)


def test_tokens_that_do_not_add_up_to_the_text_fall_back_to_a_search():
    # Byte-level pieces of a split character decode to U+FFFD, so the token texts differ from the text.
    toks = [tlp("\ufffd", 1), tlp("\ufffd", 1), tlp(" judgment", 1), tlp(":", 1),
            tlp("True", 0.7, {"True": 0.7, "False": 0.3})]
    p, _ = verdict_probability("é judgment:True", toks)
    assert p == pytest.approx(0.7)


def test_unscorable_cases_say_why():
    p, why = verdict_probability("no verdict here", [tlp("no", 1)])
    assert p is None and "no verdict" in why
    p, why = verdict_probability("judgment:True", [])
    assert p is None and "could not be located" in why


# ---- the model, on a real tiny model whose output is scripted by a logits processor ---------------


def scripted(tiny_lm, text: str) -> TransformersBackend:
    return scripted_backend(*tiny_lm, text)


def test_logprob_score_equals_the_models_own_distribution(tiny_lm):
    model, tok = tiny_lm
    text = "<think>The Save button is hit.</think> judgment:True"
    prm = ProcessRewardModel(scripted(tiny_lm, text), top_logprobs=model.config.vocab_size, max_new_tokens=64)
    score = prm.score(**STEP)
    assert score.text == text and score.verdict is True and score.source == "logprobs"

    # Independent check: one forward pass over prompt + output, full softmax at the verdict token.
    prompt = tok.apply_chat_template(prm.messages(StepInput(**STEP)), add_generation_prompt=True, tokenize=False)
    prompt_ids, out_ids = tok.encode(prompt), tok.encode(text)
    k = next(i for i in range(len(out_ids)) if tok.decode(out_ids[: i + 1]).endswith(("T", "True")))
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([prompt_ids + out_ids])).logits[0, len(prompt_ids) + k - 1], -1)

    def begins(word: str, piece: str) -> bool:
        v = piece.lstrip(" \t\n*_`\"'[(:：").lower()
        return bool(v) and (word.startswith(v) or (v.startswith(word) and not v[len(word):][:1].isalnum()))

    pieces = [tok.decode([i]) for i in range(probs.shape[0])]
    p_true = sum(probs[i].item() for i, s in enumerate(pieces) if begins("true", s))
    p_false = sum(probs[i].item() for i, s in enumerate(pieces) if begins("false", s))
    assert score.p_correct == pytest.approx(p_true / (p_true + p_false), rel=1e-3)
    assert 0.0 < score.p_correct < 1.0


def test_text_scoring_and_neutral(tiny_lm):
    prm = ProcessRewardModel(scripted(tiny_lm, "<think>wrong app</think> judgment:False"),
                             use_logprobs=False, max_new_tokens=64)
    score = prm.score(**STEP)
    assert (score.p_correct, score.verdict, score.source) == (0.0, False, "text")

    prm = ProcessRewardModel(scripted(tiny_lm, "<think>I am not sure what"), max_new_tokens=64)
    score = prm.score(**STEP)
    assert (score.p_correct, score.verdict, score.source) == (0.5, None, "neutral")
    assert "unparseable" in score.reason and "never closed" in score.reason


def test_score_batch_keeps_order_and_matches_single_scores(tiny_lm):
    prm = ProcessRewardModel(scripted(tiny_lm, "<think>ok</think> judgment:True"), max_new_tokens=64)
    steps = [StepInput(**STEP), StepInput(instruction="Open Clock", action="open_app(app_name='Clock')"),
             StepInput(instruction="Go back", action="press_back()", history=["open_app(app_name='Clock')"])]
    batch = prm.score_batch(steps)
    singles = [prm.score_batch([s])[0] for s in steps]
    assert [b.p_correct for b in batch] == pytest.approx([s.p_correct for s in singles], abs=1e-5)
    assert prm.score_batch([]) == []


class NoLogprobs:
    """A real backend whose replies lose their log-probabilities (like servers that ignore ``logprobs``)."""

    def __init__(self, inner):
        self.inner = inner

    def generate(self, requests, **kwargs):
        out = self.inner.generate(requests, **kwargs)
        for group in out:
            for c in group:
                c.token_logprobs = None
        return out


def test_use_logprobs_modes_when_the_backend_gives_none(tiny_lm):
    backend = NoLogprobs(scripted(tiny_lm, "<think>ok</think> judgment:True"))
    assert ProcessRewardModel(backend, max_new_tokens=64).score(**STEP).source == "text"
    with pytest.raises(ValueError, match="no log-probabilities"):
        ProcessRewardModel(backend, use_logprobs=True, max_new_tokens=64).score(**STEP)


def test_constructor_checks(tiny_lm):
    backend = scripted(tiny_lm, "judgment:True")
    with pytest.raises(ValueError, match="use_logprobs"):
        ProcessRewardModel(backend, use_logprobs="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_logprobs"):
        ProcessRewardModel(backend, top_logprobs=1)
    with pytest.raises(TypeError, match="Backend"):
        ProcessRewardModel(object())  # type: ignore[arg-type]


def test_over_http_same_score_and_fallback_when_logprobs_are_refused(tiny_lm):
    local = scripted(tiny_lm, "<think>ok</think> judgment:True")
    expected = ProcessRewardModel(local, top_logprobs=20, max_new_tokens=64).score(**STEP)
    with serve(scripted(tiny_lm, "<think>ok</think> judgment:True"), model_name="prm") as srv:
        remote = ProcessRewardModel(OpenAIBackend(srv.url, "prm"), top_logprobs=20, max_new_tokens=64).score(**STEP)
        assert remote.source == "logprobs"
        assert remote.p_correct == pytest.approx(expected.p_correct, abs=1e-5)
        # Our server allows at most 20 alternatives: asking for 50 is refused (HTTP 400), and "auto" falls back.
        prm = ProcessRewardModel(OpenAIBackend(srv.url, "prm", max_retries=0), top_logprobs=50, max_new_tokens=64)
        fallback = prm.score(**STEP)
        assert (fallback.source, fallback.p_correct) == ("text", 1.0)


def test_scores_a_step_with_a_screenshot_on_a_vision_language_model():
    import numpy as np

    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    backend = scripted_backend(model, processor, "<think>ok</think> judgment:True")
    shot = np.random.RandomState(0).randint(0, 255, (2400, 1080, 3), dtype=np.uint8)
    # All alternatives, so that both True and False pieces are listed for this random model.
    prm = ProcessRewardModel(backend, max_new_tokens=32, top_logprobs=model.config.text_config.vocab_size)
    with_image = prm.score("Open Clock", screenshot=shot, action="open_app(app_name='Clock')")
    other_image = prm.score("Open Clock", screenshot=255 - shot, action="open_app(app_name='Clock')")
    assert with_image.verdict is True and with_image.source == "logprobs"
    assert 0.0 < with_image.p_correct < 1.0
    assert with_image.p_correct != pytest.approx(other_image.p_correct, abs=1e-6)  # it depends on the pixels
