"""ActorUpdater on a tiny locally built Qwen2: log-probs, the PPO-clip update's direction, clipping, micro-batching, resume."""

from __future__ import annotations

import copy

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.config import CoachConfig

PROMPT = "<|im_start|>user\nOpen the Clock app.<|im_end|>\n<|im_start|>assistant\n"
GOOD = "Thought: open it\nAction: open_app(app_name='Clock')"
BAD = "Action: press_home()"


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_causal_lm(seed=0)


@pytest.fixture()
def model_tok(tiny):
    model, tokenizer = tiny
    return copy.deepcopy(model), tokenizer


def _params(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def test_token_logprobs_match_an_unpadded_forward_and_count_eos(model_tok):
    model, tok = model_tok
    actor = ActorUpdater(model, tok, micro_batch_size=3)
    prompts = [PROMPT, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", PROMPT]
    completions = [GOOD, BAD, "x"]
    batched = actor.token_logprobs(prompts, completions)
    for prompt, completion, got in zip(prompts, completions, batched):
        ids, n = actor.encode_pair(prompt, completion)
        assert ids[-1] == tok.eos_token_id  # EOS appended: generation stopped there
        assert n == len(tok(completion, add_special_tokens=False)["input_ids"]) + 1
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits[:-1], dim=-1).gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1)
        torch.testing.assert_close(got, logp[-n:], atol=1e-5, rtol=1e-5)


def test_generated_ids_are_used_as_they_are(model_tok):
    """A reply cut at the token limit has no EOS: with its generated ids nothing is appended or re-tokenised."""
    model, tok = model_tok
    actor = ActorUpdater(model, tok)
    ids = tok(GOOD, add_special_tokens=False)["input_ids"][:5]
    full, n = actor.encode_pair(PROMPT, "ignored when ids are given", ids)
    assert n == 5 and full[-5:] == ids and tok.eos_token_id not in full[-5:]
    (logps,) = actor.token_logprobs([PROMPT], ["x"], completion_ids=[ids])
    assert logps.shape == (5,)
    metrics = actor.update([ActorSample(PROMPT, "x", 1.0, old_logps=logps.tolist(), completion_ids=ids)])
    assert metrics["tokens"] == 5.0 and metrics["approx_kl"] == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="outside the model's vocabulary"):
        actor.encode_pair(PROMPT, "", [10**6])


def test_update_raises_logp_of_positive_advantage_and_lowers_negative(model_tok):
    model, tok = model_tok
    actor = ActorUpdater(model, tok, lr=1e-3)
    before = actor.sequence_logprobs([PROMPT, PROMPT], [GOOD, BAD])
    samples = [ActorSample(PROMPT, GOOD, 1.0), ActorSample(PROMPT, BAD, -1.0)]
    for _ in range(3):
        metrics = actor.update(samples)
    after = actor.sequence_logprobs([PROMPT, PROMPT], [GOOD, BAD])
    assert after[0] > before[0] + 0.1
    assert after[1] < before[1] - 0.1
    assert metrics["steps"] == 1.0 and metrics["learning_rate"] == pytest.approx(1e-3)
    assert actor.step == 3


def test_clipped_tokens_get_no_gradient(model_tok):
    """Old log-probs far below the current ones make rho >> 1 + eps: with A > 0 the clip removes every gradient."""
    model, tok = model_tok
    actor = ActorUpdater(model, tok, lr=1e-2)
    current = actor.token_logprobs([PROMPT], [GOOD])[0]
    before = _params(model)
    metrics = actor.update([ActorSample(PROMPT, GOOD, 1.0, old_logps=(current - 5.0).tolist())])
    assert metrics["clip_fraction"] == pytest.approx(1.0)
    assert metrics["grad_norm"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, _params(model)))


def test_micro_batching_does_not_change_the_update(tiny):
    """The loss is the token mean over the mini-batch however it is split into micro-batches."""
    model, tok = tiny
    samples = [ActorSample(PROMPT, GOOD, 0.7), ActorSample(PROMPT, BAD, -1.2), ActorSample(PROMPT, "wait()", 0.3)]
    start = _params(model)
    steps, losses = [], []
    for micro in (1, 2, 3):
        m = copy.deepcopy(model)
        actor = ActorUpdater(m, tok, micro_batch_size=micro)
        # plain SGD with lr 1 makes the parameter change equal the accumulated gradient (Adam would hide its scale)
        actor.optimizer = torch.optim.SGD(m.parameters(), lr=1.0)
        losses.append(actor.update(samples)["loss"])
        steps.append([p0 - p1 for p0, p1 in zip(start, _params(m))])
    assert losses[0] == pytest.approx(losses[1], abs=1e-6) and losses[0] == pytest.approx(losses[2], abs=1e-6)
    assert any(float(g.abs().max()) > 1e-4 for g in steps[0])
    for other in steps[1:]:
        for a, b in zip(steps[0], other):
            torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-4)


def test_state_dict_resume_gives_the_identical_next_update(tiny):
    model, tok = tiny
    samples = [ActorSample(PROMPT, GOOD, 1.0), ActorSample(PROMPT, BAD, -0.5), ActorSample(PROMPT, "wait()", -0.5)]
    a = ActorUpdater(copy.deepcopy(model), tok, lr=1e-3, seed=3)
    a.update(samples, mini_batch_size=2)
    saved = a.state_dict()
    a.update(samples, mini_batch_size=2)
    b = ActorUpdater(copy.deepcopy(model), tok, lr=1e-3, seed=99)
    b.load_state_dict(saved)
    b.update(samples, mini_batch_size=2)
    assert b.step == a.step == 4
    for x, y in zip(_params(a.model), _params(b.model)):
        assert torch.equal(x, y)


def test_from_config_uses_the_coach_actor_settings(model_tok, tmp_path):
    model, tok = model_tok
    config = CoachConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    actor = ActorUpdater.from_config(model, tok, config)
    assert actor.lr == 1e-6 and actor.clip_eps == 0.2 and actor.grad_clip == 1.0  # Table 5
    assert actor.optimizer.param_groups[0]["betas"] == (config.adam_beta1, config.adam_beta2)
    assert actor.autocast_dtype == (torch.bfloat16 if config.bf16 else None)  # same precision as TRL's actor


def test_bad_input_is_rejected_with_a_clear_message(model_tok):
    model, tok = model_tok
    actor = ActorUpdater(model, tok)
    with pytest.raises(ValueError, match="empty"):
        actor.update([])
    with pytest.raises(ValueError, match="finite"):
        actor.update([ActorSample(PROMPT, GOOD, float("nan"))])
    with pytest.raises(ValueError, match="old_logps has 2 values"):
        actor.update([ActorSample(PROMPT, GOOD, 1.0, old_logps=[0.0, 0.0])])
    with pytest.raises(TypeError, match="ActorSample"):
        actor.update([(PROMPT, GOOD, 1.0)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="total_steps"):
        ActorUpdater(model, tok, lr_scheduler_type="linear")
