"""Outcome verifiers: rule checks on the simulated phone, LLM judges on real tiny models (local and over HTTP),
prompt budget fitting, majority vote and composite routing.

Judges run on a real tiny Qwen2 model whose output is scripted by a logits processor: the text is fixed, but
the log-probabilities are the model's own, so probability scoring is checked against an independent forward
pass rather than against numbers the test made up.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from android_gym.actions import Click, Finished, OpenApp, PressBack, Type
from android_gym.agents import RandomAgent
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import Task, get_task_class
from android_gym.tasks.runner import run_expert, run_policy
from android_gym.trajectory import Step, Trajectory
from coach_reward.backends import OpenAIBackend, TokenLogprob, TransformersBackend
from coach_reward.prompts import build_outcome_messages
from coach_reward.server import serve
from coach_reward.tiny_models import scripted_backend
from coach_reward.trajectory_fit import fit_outcome_messages, messages_text, render_outcome_messages
from coach_reward.verifiers import (
    CompositeVerifier,
    LastScreenshotJudge,
    LLMJudgeVerifier,
    MajorityVote,
    OutcomeVerifier,
    RuleVerifier,
    Verdict,
    VerificationError,
    answer_probability,
    final_view,
)

L = math.log
YES = "<analysis>The contact list shows the new contact.</analysis> <ans>yes</ans>"
NO = "<analysis>The agent never saved it.</analysis> <ans>no</ans>"


def scripted(tiny_lm, text: str) -> TransformersBackend:
    return scripted_backend(*tiny_lm, text)


def tlp(token: str, p: float, top: dict[str, float] | None = None) -> TokenLogprob:
    return TokenLogprob(token, L(p), {k: L(v) for k, v in (top or {}).items()})


@pytest.fixture(scope="module")
def episodes():
    """Real sim episodes: the expert and a false claim of success on ContactsAddContact (same instance)."""
    task = get_task_class("ContactsAddContact")(seed=3)
    good_dev = SimDevice()
    good = run_expert(task, good_dev).trajectory
    bad_dev = SimDevice()
    script = iter([OpenApp("Contacts"), Click(964, 2158), Type("Esther", 592, 550), Finished("I saved the contact")])
    bad = run_policy(task, bad_dev, lambda ui: next(script)).trajectory
    return {"task": task, "good": good, "good_dev": good_dev, "bad": bad, "bad_dev": bad_dev}


# ---- Verdict ---------------------------------------------------------------------------------------


def test_verdict_checks_its_fields():
    assert Verdict(1, True, "ok").score == 1.0
    for bad in (1.5, -0.1, float("nan"), True):
        with pytest.raises(ValueError, match="score"):
            Verdict(bad, False, "x")
    with pytest.raises(TypeError, match="success"):
        Verdict(0.5, 1, "x")  # type: ignore[arg-type]
    v = Verdict(0.5, False, "x", {"abstained": True})
    assert v.abstained and v.to_dict()["details"] == {"abstained": True}


# ---- the answer token's probability on hand-made log-probabilities -------------------------------


def test_answer_probability_whole_and_split_tokens():
    toks = [tlp("<analysis>", 1), tlp("ok", 1), tlp("</analysis>", 1), tlp(" ", 1), tlp("<ans>", 1),
            tlp("yes", 0.6, {"yes": 0.6, "no": 0.2, "y": 0.1, "year": 0.05, "not": 0.05}), tlp("</ans>", 1)]
    p, why = answer_probability("<analysis>ok</analysis> <ans>yes</ans>", toks)
    # yes-pieces: "yes" + "y" = 0.7; no-pieces: "no" = 0.2 ("year" and "not" are other words)
    assert p == pytest.approx(0.7 / 0.9) and "at token 5" in why
    toks = [tlp("<ans>", 1), tlp("n", 0.3, {"n": 0.3, "y": 0.5, "fal": 0.1, "tr": 0.1}), tlp("o", 1), tlp("</ans>", 1)]
    p, _ = answer_probability("<ans>no</ans>", toks)
    assert p == pytest.approx(0.6 / 1.0)  # true/false count as yes/no, as the parser reads them


def test_answer_probability_last_answer_and_unscorable_cases():
    toks = [tlp("<ans>", 1), tlp("yes", 0.9, {"yes": 0.9, "no": 0.1}), tlp("</ans> then ", 1), tlp("<ans>", 1),
            tlp("no", 0.8, {"no": 0.8, "yes": 0.2}), tlp("</ans>", 1)]
    p, _ = answer_probability("<ans>yes</ans> then <ans>no</ans>", toks)
    assert p == pytest.approx(0.2)
    p, why = answer_probability("no answer at all", [tlp("no", 1)])
    assert p is None and "no answer" in why
    p, why = answer_probability("<ans>yes</ans>", [])
    assert p is None and "could not be located" in why
    # Token texts that do not add up to the text (bytes of a split character): found after the <ans> tag.
    toks = [tlp("\ufffd", 1), tlp("<ans>", 1), tlp("yes", 0.7, {"yes": 0.7, "no": 0.3})]
    p, _ = answer_probability("é<ans>yes", toks)
    assert p == pytest.approx(0.7)


# ---- the LLM judge on a real tiny model ----------------------------------------------------------


def test_judge_scores_from_the_models_own_answer_token_distribution(tiny_lm, episodes):
    model, tok = tiny_lm
    judge = LLMJudgeVerifier(scripted(tiny_lm, YES), top_logprobs=model.config.vocab_size, max_new_tokens=48,
                             max_prompt_tokens=1400)
    verdict = judge.verify(episodes["good"])
    assert verdict.details["source"] == "logprobs" and verdict.details["verdict"] is True
    assert verdict.details["judge_output"] == YES

    # Independent check: one forward pass over prompt + output, full softmax at the answer token.
    prompt = tok.apply_chat_template(judge.prompt(episodes["good"]).messages, add_generation_prompt=True,
                                     tokenize=False)
    prompt_ids, out_ids = tok.encode(prompt), tok.encode(YES)
    k = next(i for i in range(len(out_ids)) if tok.decode(out_ids[: i + 1]).endswith(("<ans>y", "<ans>ye", "<ans>yes")))
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([prompt_ids + out_ids])).logits[0, len(prompt_ids) + k - 1], -1)

    def begins(words: tuple[str, ...], piece: str) -> bool:
        v = piece.lstrip(" \t\n*_`\"'[(:：>").lower()
        return bool(v) and any(w.startswith(v) or (v.startswith(w) and not v[len(w):][:1].isalnum()) for w in words)

    pieces = [tok.decode([i]) for i in range(probs.shape[0])]
    p_yes = sum(probs[i].item() for i, s in enumerate(pieces) if begins(("yes", "true"), s))
    p_no = sum(probs[i].item() for i, s in enumerate(pieces) if begins(("no", "false"), s))
    assert verdict.score == pytest.approx(p_yes / (p_yes + p_no), rel=1e-3)
    assert 0.0 < verdict.score < 1.0
    assert verdict.success == (verdict.score >= 0.5)


@pytest.mark.parametrize(("output", "score", "success", "source", "reason_part"), [
    (NO, 0.0, False, "text", "answer 'no'"),
    (YES, 1.0, True, "text", "answer 'yes'"),
    ("<analysis>Figure 9 writes the tag oddly.</analysis> </ans> No </ans>", 0.0, False, "text", "'No'"),
    ("<analysis>I cannot tell whether", 0.5, False, "neutral", "never closed"),
    ("<analysis>It might be <ans>yes</ans> but</analysis>", 0.5, False, "neutral", "inside reasoning"),
    ("Reply with <ans>yes|no</ans>", 0.5, False, "neutral", "no answer outside the reasoning"),
    ("", 0.5, False, "neutral", "empty output"),
])
def test_judge_verdict_parsing_edge_cases(tiny_lm, episodes, output, score, success, source, reason_part):
    judge = LLMJudgeVerifier(scripted(tiny_lm, output), use_logprobs=False, max_new_tokens=48,
                             max_prompt_tokens=1400)
    v = judge.verify(episodes["bad"])
    assert (v.score, v.success, v.details["source"]) == (score, success, source)
    assert reason_part in v.reason
    assert v.abstained == (source == "neutral")


def test_judge_batch_keeps_order_and_matches_single_calls(tiny_lm, episodes):
    judge = LLMJudgeVerifier(scripted(tiny_lm, YES), max_new_tokens=48, max_prompt_tokens=1400)
    trajs = [episodes["good"], episodes["bad"], episodes["good"]]
    batch = judge.verify_batch(trajs)
    singles = [judge.verify(t) for t in trajs]
    assert [b.score for b in batch] == pytest.approx([s.score for s in singles], abs=1e-5)
    assert batch[0].score == pytest.approx(batch[2].score, abs=1e-6)
    assert judge.verify_batch([]) == []
    with pytest.raises(ValueError, match="devices has 1 entries for 3"):
        judge.verify_batch(trajs, devices=[None])


def test_judge_prompt_tokens_stay_within_the_token_budget(tiny_lm, episodes):
    model, tok = tiny_lm
    judge = LLMJudgeVerifier(scripted(tiny_lm, YES), max_new_tokens=48, max_prompt_tokens=2000)
    fitted = judge.prompt(episodes["good"])
    assert fitted.unit == "tokens" and fitted.fits and fitted.summarised > 0
    completion = judge.backend.generate([fitted.messages], max_new_tokens=4)[0][0]
    # the role markers and generation prompt the chat template puts around the contents (the budget counts
    # the contents only): the template's tokens for the same messages left empty
    empty = [{**m, "content": ""} for m in fitted.messages]
    template_overhead = len(tok.encode(tok.apply_chat_template(empty, tokenize=False, add_generation_prompt=True),
                                       add_special_tokens=False))
    assert 1000 < completion.prompt_tokens <= 2000 + template_overhead
    with pytest.raises(ValueError, match="count_tokens"):
        LLMJudgeVerifier(OpenAIBackend("http://127.0.0.1:9/v1", "x"), max_prompt_tokens=100)


def test_judge_needs_logprobs_when_told_to(tiny_lm, episodes):
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

    backend = NoLogprobs(scripted(tiny_lm, YES))
    v = LLMJudgeVerifier(backend, max_new_tokens=48, budget_chars=3000).verify(episodes["good"])
    assert (v.score, v.details["source"]) == (1.0, "text")
    with pytest.raises(VerificationError, match="no log-probabilities"):
        LLMJudgeVerifier(backend, use_logprobs=True, max_new_tokens=48, budget_chars=3000).verify(episodes["good"])
    with pytest.raises(ValueError, match="use_logprobs"):
        LLMJudgeVerifier(backend, use_logprobs="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        LLMJudgeVerifier(backend, threshold=0.0)


def test_judge_over_http_equals_local_and_falls_back_when_logprobs_are_refused(tiny_lm, episodes):
    local = LLMJudgeVerifier(scripted(tiny_lm, YES), max_new_tokens=48, budget_chars=2500).verify(episodes["good"])
    with serve(scripted(tiny_lm, YES), model_name="judge") as srv:
        remote_judge = LLMJudgeVerifier(OpenAIBackend(srv.url, "judge"), max_new_tokens=48, budget_chars=2500)
        remote = remote_judge.verify(episodes["good"])
        assert remote.details["source"] == "logprobs"
        assert remote.score == pytest.approx(local.score, abs=1e-5)
        # Our server allows at most 20 alternatives: 50 is refused with HTTP 400 and "auto" falls back to the text.
        refusing = LLMJudgeVerifier(OpenAIBackend(srv.url, "judge", max_retries=0), top_logprobs=50,
                                    max_new_tokens=48, budget_chars=2500)
        assert refusing.verify_batch([episodes["good"], episodes["bad"]])[1].details["source"] == "text"
        assert not refusing.wants_logprobs  # later calls do not ask again


# ---- fitting long trajectories into a budget -----------------------------------------------------


def long_trajectory(n: int = 30, ui_lines: int = 12) -> Trajectory:
    steps = []
    for i in range(n):
        ui = "\n".join(f"[n{i:02d}{j:02d}] TextView ;click ; ;;Item {i}-{j}: bounds: [0,{100 * j}][1080,{100 * j + 100}]"
                       for j in range(ui_lines))
        click = Click(540, 150 + 100 * (i % max(ui_lines, 1)))
        steps.append(Step(ui=ui, action=click if i < n - 1 else Finished("done")))
    return Trajectory(task="demo", instruction="Open item 7-3 and mark it done.", steps=steps)


def test_fit_is_the_plain_prompt_when_it_fits(episodes):
    t = episodes["good"]
    fitted = fit_outcome_messages(t.instruction, t.steps, answer="yes")
    assert fitted.fits and fitted.summarised == 0 and fitted.ui_chars is None
    assert fitted.messages == build_outcome_messages(t.instruction, t.steps, answer="yes")


def test_fit_keeps_first_and_last_steps_and_summarises_the_middle():
    t = long_trajectory()
    full = len(messages_text(build_outcome_messages(t.instruction, t.steps)))
    fitted = fit_outcome_messages(t.instruction, t.steps, budget=full // 4, keep_first=1, keep_last=2)
    text = fitted.messages[1]["content"]
    assert fitted.fits and fitted.size <= full // 4 and fitted.size == len(messages_text(fitted.messages))
    assert (fitted.kept_first, fitted.kept_last, fitted.summarised) == (1, 2, 27)
    assert "Step 1, screen before the action" in text and "Step 30, screen before the action" in text
    assert "Step 29, screen before the action" in text and "Step 2, screen before" not in text
    assert "Steps 2 to 28, summarised" in text
    # Summary lines name the element under the click: step 5 clicked y=550 -> "Item 4-5".
    assert "5. Action: click(start_box='<|box_start|>(540,550)<|box_end|>') on: TextView click Item 4-5" in text


def test_fit_shrinks_in_the_documented_order():
    t = long_trajectory()
    sizes = []
    for budget in (9000, 5000, 3000, 1900):
        fitted = fit_outcome_messages(t.instruction, t.steps, budget=budget)
        text = fitted.messages[1]["content"]
        assert fitted.fits and fitted.size <= budget, fitted.note
        assert "finished(content='done')" in text and "Open item 7-3" in text  # the end and the task always stay
        sizes.append((fitted.kept_first + fitted.kept_last, fitted.ui_chars, fitted.omitted))
    assert sizes[0][1] is None  # screens uncut while dropping full steps suffices
    assert sizes[-1][2] > 0  # the tightest budget thins the summary
    impossible = fit_outcome_messages(t.instruction, t.steps, budget=50)
    assert not impossible.fits and "does NOT fit" in impossible.note


def test_fit_counts_tokens_with_a_tokenizer(tiny_lm):
    _, tok = tiny_lm
    t = long_trajectory()

    def count(s: str) -> int:
        return len(tok.encode(s, add_special_tokens=False))

    fitted = fit_outcome_messages(t.instruction, t.steps, budget=1600, count_tokens=count)
    assert fitted.fits and fitted.unit == "tokens" and count(messages_text(fitted.messages)) <= 1600
    assert fitted.summarised > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 25), lines=st.integers(0, 8), budget=st.integers(100, 8000),
       keep_first=st.integers(0, 3), keep_last=st.integers(0, 3))
def test_fit_property_fits_or_says_so(n, lines, budget, keep_first, keep_last):
    t = long_trajectory(n, lines) if n else Trajectory(task="x", instruction="Do it.", steps=[])
    fitted = fit_outcome_messages(t.instruction, t.steps, budget=budget, keep_first=keep_first, keep_last=keep_last)
    assert fitted.size == len(messages_text(fitted.messages))
    if fitted.fits:
        assert fitted.size <= budget
    else:  # only when even the smallest form (last step only, no screens, no summary lines) is over the budget
        smallest = render_outcome_messages(t.instruction, t.steps, keep_first=0, keep_last=1, ui_chars=0,
                                           summary_keep=0)
        assert len(messages_text(smallest)) > budget
    if n:  # the last action is always shown in full
        assert f"Step {n}, action taken" in fitted.messages[1]["content"]
        assert "finished(content='done')" in fitted.messages[1]["content"]


# ---- rules on the simulated phone ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["ContactsAddContact", "ContactsPhoneNumberQuery", "SystemWifiTurnOff",
                                  "MarkorCreateNote", "SimpleSmsSend"])
def test_rule_verifier_expert_scores_one_random_scores_zero(name):
    rule = RuleVerifier()
    task = get_task_class(name)(seed=11)
    dev = SimDevice()
    expert = run_expert(task, dev)
    v = rule.verify(expert.trajectory, device=dev, task=task)
    assert (v.score, v.success, v.details["checked"]) == (1.0, True, True)
    assert v.details["answer"] == expert.answer

    for seed in range(3):
        dev = SimDevice()
        res = run_policy(task, dev, RandomAgent(seed=seed, finish_prob=0.3))
        v = rule.verify(res.trajectory, device=dev, task=task)
        assert v.score == res.success == 0.0 and not v.success
        assert v.details["checked"] == res.trajectory.steps[-1].action.type.startswith("finish")


def test_rule_verifier_counts_only_finished_episodes_unless_told():
    task = get_task_class("SystemWifiTurnOff")(seed=1)
    dev = SimDevice()
    res = run_expert(task, dev)
    cut = Trajectory(task=task.name, instruction=task.goal, steps=res.trajectory.steps[:-1], truncated=True)
    v = RuleVerifier().verify(cut, device=dev, task=task)
    assert (v.score, v.details["checked"]) == (0.0, False) and "never signalled finished" in v.reason
    v = RuleVerifier(require_finished=False).verify(cut, device=dev, task=task)
    assert (v.score, v.details["checked"]) == (1.0, True)  # Wi-Fi is off on the device all the same


def test_rule_verifier_clear_errors(episodes):
    rule = RuleVerifier()
    with pytest.raises(VerificationError, match="device and task missing"):
        rule.verify(episodes["good"])
    with pytest.raises(VerificationError, match=r"\(task missing\)"):
        rule.verify(episodes["good"], device=episodes["good_dev"])

    class NoCheck(Task):
        name = "NoCheckTask"
        template = "Look around."

    with pytest.raises(VerificationError, match="defines no rule check"):
        rule.verify(episodes["good"], device=episodes["good_dev"], task=NoCheck())
    other = get_task_class("SystemWifiTurnOff")(seed=1)
    with pytest.raises(VerificationError, match="trajectory is of task 'ContactsAddContact'"):
        rule.verify(episodes["good"], device=episodes["good_dev"], task=other)
    with pytest.raises(TypeError, match="Trajectory"):
        rule.verify("not a trajectory", device=episodes["good_dev"], task=episodes["task"])  # type: ignore[arg-type]


def test_rule_from_info_and_use_recorded(episodes):
    good, bad = episodes["good"], episodes["bad"]
    assert RuleVerifier.from_info(good).score == 1.0 and RuleVerifier.from_info(bad).score == 0.0
    assert RuleVerifier.from_info(good.to_dict()).details["source"] == "recorded"
    info = Trajectory(task="x", instruction="y", steps=[], info={"success": 0.5})
    assert RuleVerifier.from_info(info).score == 0.5 and not RuleVerifier.from_info(info).success
    running = Trajectory(task="x", instruction="y", steps=[Step(ui="", action=PressBack())])
    with pytest.raises(VerificationError, match="no recorded score"):
        RuleVerifier.from_info(running)
    with pytest.raises(VerificationError, match=r"must be in \[0, 1\]"):
        RuleVerifier.from_info(Trajectory(task="x", instruction="y", info={"success": 3}))
    assert RuleVerifier(use_recorded=True).verify(good).details["source"] == "recorded"


# ---- the last-screenshot judge (DistRL) ----------------------------------------------------------


def test_last_screenshot_judge_on_a_vision_language_model(episodes):
    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    backend = scripted_backend(model, processor, YES)
    judge = LastScreenshotJudge(backend, max_new_tokens=40, top_logprobs=model.config.text_config.vocab_size)
    shot = np.random.RandomState(0).randint(0, 255, (2400, 1080, 3), dtype=np.uint8)
    t = episodes["good"]
    a = Trajectory(task=t.task, instruction=t.instruction, steps=t.steps, info={"final_screenshot": shot})
    b = Trajectory(task=t.task, instruction=t.instruction, steps=t.steps, info={"final_screenshot": 255 - shot})
    va, vb = judge.verify_batch([a, b])
    assert va.details["view"] == "screenshot" and va.details["source"] == "logprobs"
    assert va.details["screenshot_source"] == "trajectory.info['final_screenshot']"
    assert 0.0 < va.score < 1.0 and va.score != pytest.approx(vb.score, abs=1e-6)  # it depends on the pixels
    # Without any recorded pixels the device's current screen is used.
    vc = judge.verify(t, device=episodes["good_dev"])
    assert vc.details["screenshot_source"] == "the device's screen"


def test_last_screenshot_judge_text_fallback_and_last_two_actions(tiny_lm, episodes):
    judge = LastScreenshotJudge(scripted(tiny_lm, NO), max_new_tokens=40)
    shot = np.zeros((2400, 1080, 3), dtype=np.uint8)
    t = episodes["bad"]
    t = Trajectory(task=t.task, instruction=t.instruction, steps=t.steps, info={"final_screenshot": shot})
    messages, shown = judge.messages(t)
    user = messages[1]["content"]
    assert isinstance(user, str) and shown["view"] == "text"  # a text-only model gets the last UI text
    assert "Create contact" in user and "Esther" in user  # the form the agent left, as UI text
    assert "type(content='Esther'" in user and "finished(content='I saved the contact')" in user
    assert "open_app" not in user  # only the last two actions
    v = judge.verify(t)
    assert (v.score, v.success, v.details["view"]) == (0.0, False, "text")
    with pytest.raises(ValueError, match="takes images"):
        LastScreenshotJudge(scripted(tiny_lm, NO), mode="screenshot")


def test_final_view_sources(episodes):
    good = episodes["good"]
    assert final_view(good).ui_source == "the last step (the agent finished on it)"
    cut = Trajectory(task=good.task, instruction=good.instruction, steps=good.steps[:-1], truncated=True)
    assert final_view(cut).ui_source.startswith("the screen before the last action")
    view = final_view(cut, episodes["good_dev"])
    assert view.ui_source == "the device's screen" and "Esther Fischer" in view.ui
    assert view.screenshot.shape == (2400, 1080, 3)
    text_only = final_view(cut, episodes["good_dev"], screenshot=False)
    assert text_only.screenshot is None and text_only.screenshot_source == "none" and text_only.ui == view.ui
    assert final_view(Trajectory(task="x", instruction="y", info={"final_ui": "[n1] X"})).ui == "[n1] X"


def test_last_screenshot_judge_over_http_falls_back_to_text_when_images_are_refused(tiny_lm, episodes):
    shot = np.zeros((240, 108, 3), dtype=np.uint8)
    t = episodes["good"]
    t = Trajectory(task=t.task, instruction=t.instruction, steps=t.steps, info={"final_screenshot": shot})
    with serve(scripted(tiny_lm, YES), model_name="text-judge") as srv:  # a text-only model: images get HTTP 400
        judge = LastScreenshotJudge(OpenAIBackend(srv.url, "text-judge", max_retries=0), max_new_tokens=40)
        v = judge.verify(t)
    assert v.details["view"] == "text" and v.details["verdict"] is True
    assert v.details["source"] == "logprobs"  # the image, not the log-probabilities, was what the server refused


# ---- majority vote and composite routing ---------------------------------------------------------


def V(success: bool | None, score: float | None = None) -> Verdict:
    if success is None:
        return Verdict(0.5, False, "abstain", {"abstained": True})
    return Verdict(score if score is not None else float(success), success, "v")


def test_majority_vote_arithmetic():
    vote = MajorityVote([RuleVerifier()])
    r = vote.combine([V(True), V(True), V(False)])
    assert (r.score, r.success, r.details["yes"], r.details["no"]) == (pytest.approx(2 / 3), True, 2, 1)
    r = vote.combine([V(True), V(False), V(True, 0.6), V(False, 0.2)])
    assert (r.score, r.success) == (0.5, False)  # a tie is not a majority
    assert r.details["mean_score"] == pytest.approx((1 + 0 + 0.6 + 0.2) / 4)
    r = vote.combine([V(True), V(None), V(None)])
    assert (r.score, r.success, r.details["abstentions"]) == (1.0, True, 2) and "2 abstained" in r.reason
    r = vote.combine([V(None), V(None)])
    assert (r.score, r.success, r.abstained) == (0.5, False, True)
    strict = MajorityVote([RuleVerifier()], threshold=0.7)
    assert not strict.combine([V(True), V(True), V(False)]).success
    assert strict.combine([V(True), V(True), V(True), V(False)]).success
    with pytest.raises(ValueError, match="threshold"):
        MajorityVote([RuleVerifier()], threshold=1.0)
    with pytest.raises(ValueError, match="at least one"):
        MajorityVote([])
    with pytest.raises(TypeError, match="verify"):
        MajorityVote([object()])  # type: ignore[list-item]


def test_majority_vote_over_real_verifiers(tiny_lm, episodes):
    rule = RuleVerifier()
    yes = LLMJudgeVerifier(scripted(tiny_lm, YES), use_logprobs=False, max_new_tokens=48, max_prompt_tokens=1400)
    no = LLMJudgeVerifier(scripted(tiny_lm, NO), use_logprobs=False, max_new_tokens=48, max_prompt_tokens=1400)
    vote = MajorityVote([rule, yes, no])
    assert isinstance(vote, OutcomeVerifier)
    good, bad = vote.verify_batch([episodes["good"], episodes["bad"]],
                                  devices=[episodes["good_dev"], episodes["bad_dev"]],
                                  tasks=[episodes["task"]] * 2)
    assert (good.details["yes"], good.success) == (2, True)  # rule yes, judge yes, judge no
    assert (bad.details["yes"], bad.success) == (1, False)  # rule no, judge yes, judge no


def test_composite_routes_rules_where_they_exist(tiny_lm, episodes):
    judge = LLMJudgeVerifier(scripted(tiny_lm, YES), use_logprobs=False, max_new_tokens=48, max_prompt_tokens=1400)
    comp = CompositeVerifier(judge=judge)

    class NoCheck(Task):
        name = "ContactsAddContact"  # same name, but no rule check of its own
        template = "x"

    out = comp.verify_batch([episodes["bad"], episodes["bad"], episodes["bad"], episodes["good"]],
                            devices=[episodes["bad_dev"], None, episodes["bad_dev"], episodes["good_dev"]],
                            tasks=[episodes["task"], episodes["task"], NoCheck(), episodes["task"]])
    assert [v.details["route"] for v in out] == ["rule", "judge", "judge", "rule"]
    assert [v.success for v in out] == [False, True, True, True]  # the judge is fooled; the rule is not
    with pytest.raises(VerificationError, match="no device given.*no judge"):
        CompositeVerifier().verify(episodes["bad"], task=episodes["task"])


def test_composite_can_send_a_failed_rule_check_to_the_judge(tiny_lm, episodes):
    judge = LLMJudgeVerifier(scripted(tiny_lm, NO), use_logprobs=False, max_new_tokens=48, max_prompt_tokens=1400)
    dead = SimDevice()
    dead.close()  # the device went away after the episode
    with pytest.raises(VerificationError, match="check failed on the device"):
        CompositeVerifier(judge=judge).verify(episodes["good"], device=dead, task=episodes["task"])
    v = CompositeVerifier(judge=judge, on_rule_error="judge").verify(episodes["good"], device=dead, task=episodes["task"])
    assert v.details["route"] == "judge" and "DeviceDisconnected" in v.details["route_note"]
