"""DGRPO's formulas (MobileRL §4.3) against numbers worked out by hand: SPA, trajectory advantages, the loss."""

from __future__ import annotations

import math

import pytest
import torch

from coach_rl.advantages import dgrpo_advantages, trajectory_scores
from coach_rl.losses import dgrpo_loss, kl_to_reference
from coach_rl.returns import spa_rewards


def test_spa_rewards_by_hand():
    # lengths 2, 4, 3, 5; the first two succeed: T_min = 2
    # R = 1 - (2-2)/2 = 1; 1 - (4-2)/4 = 0.5; failure 0; failure 0
    assert spa_rewards([2, 4, 3, 5], [1, 1, 0, 0]) == pytest.approx([1.0, 0.5, 0.0, 0.0])
    # alpha = 0.5: 1 - 0.5 * 2/4 = 0.75
    assert spa_rewards([2, 4, 3], [1, 1, 0], alpha=0.5) == pytest.approx([1.0, 0.75, 0.0])
    # a short failure does not set T_min (only successes count)
    assert spa_rewards([1, 3, 6], [0, 1, 1]) == pytest.approx([0.0, 1.0, 0.5])
    assert spa_rewards([3, 4], [0, 0]) == [0.0, 0.0]
    with pytest.raises(ValueError, match="alpha must be in"):
        spa_rewards([1], [1], alpha=0.0)
    with pytest.raises(ValueError, match=r"lengths\[1\] must be a positive integer"):
        spa_rewards([1, 0], [1, 1])
    with pytest.raises(ValueError, match="one entry per trajectory"):
        spa_rewards([1, 2], [1])


def test_trajectory_scores_and_advantages_by_hand():
    # SPA rewards of the group above broadcast to every step:
    rewards = [[1.0, 1.0], [0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 0.0]]
    # step-wise means over G = 3 (ended trajectories count 0): t1 0.5, t2 0.5, t3 1/6, t4 1/6
    # S1 = 0.5 + 0.5 = 1; S2 = 0 + 0 + 1/3 + 1/3 = 2/3; S3 = -0.5 - 0.5 - 1/6 = -7/6
    s = trajectory_scores(rewards)
    assert s.tolist() == pytest.approx([1.0, 2 / 3, -7 / 6])
    mean = (1.0 + 2 / 3 - 7 / 6) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in (1.0, 2 / 3, -7 / 6)) / 2)
    expected = [(x - mean) / (std + 1e-4) for x in (1.0, 2 / 3, -7 / 6)]
    assert dgrpo_advantages(rewards).tolist() == pytest.approx(expected)
    assert dgrpo_advantages([[0.0], [0.0, 0.0]]).tolist() == [0.0, 0.0]  # ties: no signal
    with pytest.raises(ValueError, match="G >= 2"):
        trajectory_scores([[1.0]])
    with pytest.raises(ValueError, match=r"step_rewards\[1\] must be a non-empty"):
        trajectory_scores([[1.0], []])


def test_dgrpo_loss_by_hand():
    # two trajectories, A = +1 and -1, log r = log 1.1 and log 0.7, eps = 0.2
    log_ratio = torch.tensor([math.log(1.1), math.log(0.7)], requires_grad=True)
    adv = torch.tensor([1.0, -1.0])
    out = dgrpo_loss(log_ratio, adv, clip_eps=0.2, beta=0.0)
    # tau1: min(1.1, 1.1) = 1.1 ; tau2: min(-0.7, -0.8) = -0.8 (clipped: no gradient); loss = -(1.1 - 0.8)/2
    assert float(out.policy_loss.detach()) == pytest.approx(-0.15)
    assert float(out.clip_fraction) == pytest.approx(0.5)
    out.loss.backward()
    # d/dlog r of -r*A/2 for tau1 = -1.1/2; tau2 clipped -> 0
    assert log_ratio.grad.tolist() == pytest.approx([-0.55, 0.0])
    kl = torch.tensor(0.5)
    assert float(dgrpo_loss(log_ratio, adv, beta=0.001, kl=kl).loss.detach()) == pytest.approx(-0.15 + 0.0005)
    with pytest.raises(ValueError, match="per-trajectory"):
        dgrpo_loss(log_ratio, torch.tensor([1.0]))


def test_kl_to_reference_by_hand():
    logp = torch.tensor([[math.log(0.5), math.log(0.25)]], requires_grad=True)
    ref = torch.tensor([[math.log(0.25), math.log(0.25)]])
    # token 1: d = log 0.5 ... ref - logp = -log 2: e^-log2 + log 2 - 1 = 0.5 + 0.6931 - 1 = 0.19315; token 2: 0
    kl = kl_to_reference(logp, ref)
    assert float(kl.detach()) == pytest.approx((0.5 + math.log(2) - 1) / 2)
    masked = kl_to_reference(logp, ref, mask=torch.tensor([[True, False]]))
    assert float(masked.detach()) == pytest.approx(0.5 + math.log(2) - 1)
    assert float(kl_to_reference(ref.clone(), ref)) == 0.0
