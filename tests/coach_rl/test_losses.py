"""Clipped value loss and PPO clipped surrogate: hand-computed numbers, both clip branches, autograd gradients."""

from __future__ import annotations

import math

import pytest
import torch

from coach_rl.losses import PPOLossOutput, clipped_value_loss, kl_to_reference, ppo_clip_loss

F64 = torch.float64

# ---------------------------------------------------------------- clipped_value_loss
# Three elements, clip range eps_v = 0.5 (Table 5), Q_old = 0 everywhere:
#  e0: Q = 1.0, R = 2.0 -> (Q-R)^2 = 1; clip(Q, -0.5, 0.5) = 0.5, (0.5-2)^2 = 2.25; max = 2.25 (CLIPPED branch)
#      -> 0.5 * 2.25 = 1.125; the clipped term is constant in Q -> gradient 0
#  e1: Q = 1.0, R = 0.0 -> (Q-R)^2 = 1; (0.5-0)^2 = 0.25; max = 1 (UNCLIPPED branch) -> 0.5; dL/dQ = Q - R = 1
#  e2: Q = 0.2, R = 1.0 -> inside the clip range, both terms are 0.64 -> 0.32; dL/dQ = Q - R = -0.8
# mean = (1.125 + 0.5 + 0.32) / 3 = 1.945 / 3; gradient of the mean = [0, 1, -0.8] / 3


def _value_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q = torch.tensor([1.0, 1.0, 0.2], dtype=F64, requires_grad=True)
    q_old = torch.zeros(3, dtype=F64)
    returns = torch.tensor([2.0, 0.0, 1.0], dtype=F64)
    return q, q_old, returns


def test_clipped_value_loss_hand_numbers_and_gradient() -> None:
    q, q_old, returns = _value_case()
    loss = clipped_value_loss(q, q_old, returns, clip_range=0.5)
    assert loss.item() == pytest.approx(1.945 / 3)
    (grad,) = torch.autograd.grad(loss, q)
    torch.testing.assert_close(grad, torch.tensor([0.0, 1.0, -0.8], dtype=F64) / 3)


def test_clipped_value_loss_default_clip_is_paper_value() -> None:
    q, q_old, returns = _value_case()
    assert clipped_value_loss(q, q_old, returns).item() == pytest.approx(1.945 / 3)


def test_clipped_value_loss_mask() -> None:
    q, q_old, returns = _value_case()
    # keep e0, e1: (1.125 + 0.5) / 2 = 0.8125
    loss = clipped_value_loss(q, q_old, returns, mask=torch.tensor([True, True, False]))
    assert loss.item() == pytest.approx(0.8125)
    # a float 0/1 mask works the same; NaN at a masked-out position does not leak into the loss
    q_nan = torch.tensor([1.0, 1.0, float("nan")], dtype=F64)
    loss = clipped_value_loss(q_nan, q_old, returns, mask=torch.tensor([1.0, 1.0, 0.0]))
    assert loss.item() == pytest.approx(0.8125)


def test_clipped_value_loss_empty_mask_is_zero_and_differentiable() -> None:
    q, q_old, returns = _value_case()
    loss = clipped_value_loss(q, q_old, returns, mask=torch.zeros(3, dtype=torch.bool))
    assert loss.item() == 0.0
    loss.backward()
    torch.testing.assert_close(q.grad, torch.zeros(3, dtype=F64))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"q_old": torch.zeros(2)}, ValueError, "must share one shape"),
        ({"clip_range": 0.0}, ValueError, "clip_range must be > 0"),
        ({"mask": torch.ones(2, dtype=torch.bool)}, ValueError, r"mask must have shape \(3,\)"),
        ({"mask": torch.tensor([0.0, 0.5, 1.0])}, ValueError, "mask must hold only 0/1"),
        ({"returns": [0.0, 0.0, 0.0]}, TypeError, "returns must be a torch.Tensor"),
        ({"q": torch.tensor([1, 2, 3])}, TypeError, "q must be a floating tensor"),
    ],
)
def test_clipped_value_loss_rejects_bad_input(kwargs, error, match) -> None:
    args = {"q": torch.zeros(3), "q_old": torch.zeros(3), "returns": torch.zeros(3)} | kwargs
    with pytest.raises(error, match=match):
        clipped_value_loss(**args)


# ---------------------------------------------------------------- ppo_clip_loss
# Five tokens with logp_old = 0 and logp = log(ratio); eps = 0.2 (Table 5) -> clip range [0.8, 1.2]
#  t0: ratio 1.5, A = +1: min(1.5, 1.2) = 1.2    -> loss -1.2, CLIPPED (gradient 0)
#  t1: ratio 1.5, A = -1: min(-1.5, -1.2) = -1.5 -> loss  1.5, not clipped, dL/dlogp = -A*ratio = 1.5
#  t2: ratio 0.5, A = -1: min(-0.5, -0.8) = -0.8 -> loss  0.8, CLIPPED (gradient 0)
#  t3: ratio 0.5, A = +1: min(0.5, 0.8) = 0.5    -> loss -0.5, not clipped, dL/dlogp = -0.5
#  t4: ratio 1.0, A = +2: min(2, 2) = 2          -> loss -2.0, not clipped, dL/dlogp = -2
# mean loss = (-1.2 + 1.5 + 0.8 - 0.5 - 2.0) / 5 = -1.4 / 5 = -0.28; gradient = [0, 1.5, 0, -0.5, -2] / 5
# clip fraction = 2/5 (t0, t2)
# approx KL = mean((ratio - 1) - ln ratio): t0,t1: 0.5 - ln 1.5; t2,t3: -0.5 - ln 0.5 = ln 2 - 0.5; t4: 0
RATIOS = [1.5, 1.5, 0.5, 0.5, 1.0]
ADVS = [1.0, -1.0, -1.0, 1.0, 2.0]
EXPECTED_KL = (2 * (0.5 - math.log(1.5)) + 2 * (math.log(2.0) - 0.5)) / 5


def _ppo_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    logp = torch.tensor([[math.log(r) for r in RATIOS]], dtype=F64, requires_grad=True)  # shape (1, 5)
    return logp, torch.zeros(1, 5, dtype=F64), torch.tensor([ADVS], dtype=F64)


def test_ppo_clip_loss_hand_numbers_both_branches() -> None:
    logp, logp_old, adv = _ppo_case()
    out = ppo_clip_loss(logp, logp_old, adv, clip_eps=0.2)
    assert isinstance(out, PPOLossOutput)
    assert out.loss.item() == pytest.approx(-0.28)
    assert out.clip_fraction.item() == pytest.approx(0.4)
    assert out.approx_kl.item() == pytest.approx(EXPECTED_KL)
    assert not out.clip_fraction.requires_grad and not out.approx_kl.requires_grad


def test_ppo_clip_loss_gradient_is_zero_where_clipped() -> None:
    logp, logp_old, adv = _ppo_case()
    loss, _, _ = ppo_clip_loss(logp, logp_old, adv)
    (grad,) = torch.autograd.grad(loss, logp)
    torch.testing.assert_close(grad, torch.tensor([[0.0, 1.5, 0.0, -0.5, -2.0]], dtype=F64) / 5)


def test_ppo_clip_loss_mask_is_token_level_mean() -> None:
    logp, logp_old, adv = _ppo_case()
    mask = torch.tensor([[1, 0, 1, 1, 1]])
    # drop t1: (-1.2 + 0.8 - 0.5 - 2.0) / 4 = -2.9 / 4 = -0.725; clipped: t0, t2 of 4 tokens -> 0.5
    out = ppo_clip_loss(logp, logp_old, adv, mask=mask)
    assert out.loss.item() == pytest.approx(-0.725)
    assert out.clip_fraction.item() == pytest.approx(0.5)
    (grad,) = torch.autograd.grad(out.loss, logp)
    torch.testing.assert_close(grad, torch.tensor([[0.0, 0.0, 0.0, -0.5, -2.0]], dtype=F64) / 4)


def test_ppo_clip_loss_sequence_advantages_broadcast_over_tokens() -> None:
    # two sequences of three tokens; one advantage per sequence (the ACLOO output) equals the expanded form
    logp = torch.log(torch.tensor([[1.5, 1.0, 0.5], [0.5, 1.1, 1.5]], dtype=F64))
    logp_old = torch.zeros(2, 3, dtype=F64)
    adv = torch.tensor([1.0, -1.0], dtype=F64)
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    per_seq = ppo_clip_loss(logp, logp_old, adv, mask=mask)
    expanded = ppo_clip_loss(logp, logp_old, adv[:, None].expand(2, 3), mask=mask)
    torch.testing.assert_close(per_seq.loss, expanded.loss)
    # by hand over the 5 masked tokens, clip [0.8, 1.2]:
    # seq 0 (A=+1): r=1.5 -> -1.2; r=1.0 -> -1.0
    # seq 1 (A=-1): r=0.5 -> min(-0.5, -0.8) -> 0.8; r=1.1 -> 1.1; r=1.5 -> min(-1.5, -1.2) -> 1.5
    # mean = (-1.2 - 1.0 + 0.8 + 1.1 + 1.5) / 5 = 1.2 / 5 = 0.24
    assert per_seq.loss.item() == pytest.approx(0.24)


def test_ppo_clip_loss_empty_mask_and_no_clip_when_on_policy() -> None:
    logp, logp_old, adv = _ppo_case()
    out = ppo_clip_loss(logp, logp_old, adv, mask=torch.zeros(1, 5, dtype=torch.bool))
    assert out.loss.item() == 0.0 and out.clip_fraction.item() == 0.0
    # ratio 1 everywhere: loss = -mean(A) = -(1 - 1 - 1 + 1 + 2)/5 = -0.4, no clipping, zero KL
    on_policy = ppo_clip_loss(logp_old.clone().requires_grad_(), logp_old, adv)
    assert on_policy.loss.item() == pytest.approx(-0.4)
    assert on_policy.clip_fraction.item() == 0.0 and on_policy.approx_kl.item() == 0.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"logp_old": torch.zeros(2, 4)}, ValueError, "logp_old must have the shape of logp"),
        ({"advantages": torch.zeros(3)}, ValueError, r"advantages must have the shape of logp \(2, 3\)"),
        ({"clip_eps": -0.1}, ValueError, "clip_eps must be > 0"),
        ({"mask": torch.ones(3, 2)}, ValueError, "mask must have shape"),
        ({"logp": [[0.0] * 3] * 2}, TypeError, "logp must be a torch.Tensor"),
    ],
)
def test_ppo_clip_loss_rejects_bad_input(kwargs, error, match) -> None:
    args = {"logp": torch.zeros(2, 3), "logp_old": torch.zeros(2, 3), "advantages": torch.zeros(2)} | kwargs
    with pytest.raises(error, match=match):
        ppo_clip_loss(**args)


# ---------------------------------------------------------------- kl_to_reference with the importance weight
# One token, pi_theta = 0.5, pi_ref = 0.25, pi_old = 0.25 (the sampler): d = log pi_ref - log pi_theta = -log 2,
# k3 = e^d - d - 1 = 0.5 + log 2 - 1 = 0.19315; w = pi_theta / pi_old = 2 -> 0.38629.
# Gradient in logp (x): k3 = e^(r - x) + x - r - 1, dk3/dx = 1 - e^(r - x) = 0.5; w = e^(x - o), dw/dx = w = 2;
# d(w k3)/dx = w * k3 + w * 0.5 = 2 * 0.19315 + 1 = 1.38629 (the plain k3's gradient is 0.5).
def test_kl_to_reference_importance_weighted_hand_numbers_and_gradient() -> None:
    logp = torch.tensor([[math.log(0.5)]], dtype=F64, requires_grad=True)
    ref = torch.tensor([[math.log(0.25)]], dtype=F64)
    old = torch.tensor([[math.log(0.25)]], dtype=F64)
    k3 = 0.5 + math.log(2) - 1
    plain = kl_to_reference(logp, ref)
    plain.backward()
    assert float(plain) == pytest.approx(k3)
    assert float(logp.grad) == pytest.approx(0.5)
    logp.grad = None
    weighted = kl_to_reference(logp, ref, logp_old=old)
    weighted.backward()
    assert float(weighted) == pytest.approx(2 * k3)
    assert float(logp.grad) == pytest.approx(2 * k3 + 1.0)
    # on-policy (old = theta) the value is the plain k3 but the gradient is not: w's own gradient adds k3
    logp.grad = None
    on_policy = kl_to_reference(logp, ref, logp_old=logp.detach())
    on_policy.backward()
    assert float(on_policy) == pytest.approx(k3)
    assert float(logp.grad) == pytest.approx(k3 + 0.5)
    # masked tokens weigh nothing, whatever their log-probs
    two = torch.tensor([[math.log(0.5), math.log(0.9)]], dtype=F64)
    value = kl_to_reference(two, torch.tensor([[math.log(0.25), 0.0]], dtype=F64), mask=torch.tensor([[1, 0]]),
                            logp_old=torch.tensor([[math.log(0.25), -30.0]], dtype=F64))
    assert float(value) == pytest.approx(2 * k3)
    with pytest.raises(ValueError, match="logp_old must have the shape"):
        kl_to_reference(two, two, logp_old=old)


def test_rescale_to_batch_tokens_weighs_every_token_of_the_batch_the_same() -> None:
    from coach_rl.losses import rescale_to_batch_tokens

    # two micro-batches, 3 and 1 tokens with per-token losses [1, 2, 3] and [10]: token means 2 and 10
    parts = [(torch.tensor(2.0), torch.tensor(3.0)), (torch.tensor(10.0), torch.tensor(1.0))]
    total = sum(rescale_to_batch_tokens(mean, tokens, torch.tensor(4.0)) for mean, tokens in parts)
    assert float(total) == pytest.approx((1 + 2 + 3 + 10) / 4)  # the batch's token mean, 4.0
