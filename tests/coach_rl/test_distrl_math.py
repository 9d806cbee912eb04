"""DistRL's formulas (Retrace targets, A-RIDE advantages, the actor loss, DPER priorities) against hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from coach_rl.advantages import aride_advantages
from coach_rl.losses import distrl_actor_loss
from coach_rl.priorities import (
    PrioritizedTrajectorySampler,
    TrajectoryStats,
    dper_priorities,
    sampling_probabilities,
)
from coach_rl.returns import gae, retrace_targets

# ---------------------------------------------------------------- Retrace(lambda)


def test_retrace_targets_hand_numbers() -> None:
    # r = [0, 0, 1], V = [0.5, 0.6, 0.8], gamma = 0.9, lambda = 0.5, rho = [1, 0.5, 2], V(s_3) = 0
    # td_2 = 1 - 0.8 = 0.2;             target_2 = 0.8 + 0.2 = 1.0
    # td_1 = 0.9*0.8 - 0.6 = 0.12;      c_2 = 0.5*min(1, 2) = 0.5
    #   delta_1 = 0.12 + 0.9*0.5*0.2 = 0.21;              target_1 = 0.81
    # td_0 = 0.9*0.6 - 0.5 = 0.04;      c_1 = 0.5*min(1, 0.5) = 0.25
    #   delta_0 = 0.04 + 0.9*0.25*0.12 + 0.81*0.25*0.5*0.2 = 0.04 + 0.027 + 0.02025 = 0.08725; target_0 = 0.58725
    out = retrace_targets([0.0, 0.0, 1.0], [0.5, 0.6, 0.8], gamma=0.9, lam=0.5, rhos=[1.0, 0.5, 2.0])
    assert out == pytest.approx([0.58725, 0.81, 1.0])


def test_retrace_c0_ratio_has_no_effect_and_bootstrap_is_used() -> None:
    # rho_0 never enters (the product starts at i = t + 1); last_value = 1 bootstraps the state after step 1.
    # td_1 = 0 + 0.5*1 - 0.4 = 0.1, target_1 = 0.5; td_0 = 0 + 0.5*0.4 - 0.2 = 0.0, c_1 = 1*min(1, 3) = 1
    # target_0 = 0.2 + 0.0 + 0.5*1*0.1 = 0.25
    a = retrace_targets(np.array([0.0, 0.0]), [0.2, 0.4], gamma=0.5, lam=1.0, rhos=[0.01, 3.0], last_value=1.0)
    b = retrace_targets(np.array([0.0, 0.0]), [0.2, 0.4], gamma=0.5, lam=1.0, rhos=[5.0, 3.0], last_value=1.0)
    assert isinstance(a, np.ndarray)
    np.testing.assert_allclose(a, [0.25, 0.5])
    np.testing.assert_allclose(a, b)


def test_retrace_on_policy_equals_gae_lambda_returns() -> None:
    rewards = torch.tensor([0.1, -0.2, 0.0, 1.0], dtype=torch.float64)
    values = torch.tensor([0.3, 0.1, 0.5, 0.7], dtype=torch.float64)
    _, lambda_returns = gae(rewards, values, gamma=0.95, lam=0.8)
    got = retrace_targets(rewards, values, gamma=0.95, lam=0.8, rhos=torch.ones(4, dtype=torch.float64))
    torch.testing.assert_close(got, lambda_returns)
    assert torch.equal(retrace_targets(rewards, values, 0.95, 0.8), got)  # rhos=None: the uncorrected ablation


def test_retrace_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="rhos must have the shape"):
        retrace_targets([0.0, 1.0], [0.0, 0.0], 0.9, 0.5, rhos=[1.0])
    with pytest.raises(ValueError, match="rhos must be >= 0"):
        retrace_targets([0.0, 1.0], [0.0, 0.0], 0.9, 0.5, rhos=[1.0, -1.0])
    with pytest.raises(ValueError, match="lam"):
        retrace_targets([0.0], [0.0], 0.9, 1.5)


# ---------------------------------------------------------------- A-RIDE advantages


def test_aride_advantages_hand_numbers() -> None:
    # A_t = r_t + 0.9 V_{t+1} - V_t: [0 + 0.54 - 0.5, 0 + 0.72 - 0.6, 1 + 0 - 0.8] = [0.04, 0.12, 0.2]
    adv = aride_advantages(torch.tensor([0.0, 0.0, 1.0]), torch.tensor([0.5, 0.6, 0.8]), gamma=0.9)
    torch.testing.assert_close(adv, torch.tensor([0.04, 0.12, 0.2]))
    # a truncated episode bootstraps: A_1 = 0 + 0.5*2 - 0.6 = 0.4
    adv = aride_advantages([0.0, 0.0], [0.5, 0.6], gamma=0.5, last_value=2.0)
    torch.testing.assert_close(adv, torch.tensor([0.0 + 0.3 - 0.5, 0.4]))
    with pytest.raises(ValueError, match="values must have the shape"):
        aride_advantages([0.0, 1.0], [0.0], gamma=0.9)


# ---------------------------------------------------------------- the actor loss


def test_distrl_actor_loss_hand_numbers_and_gradient() -> None:
    # two replies: tokens [-1, -0.5] and [-2, (pad)]; behaviour log-probs [-1.5, -0.5] and [-2, (pad)]
    # log pi = [-1.5, -2], log mu = [-2, -2], rho = [e^0.5 = 1.6487 -> truncated 1.5, 1]
    # A = [2, -1], invalid = [0, 1], beta = 0.1, lambda = 0.5
    # sample 0: -1.5*2*(-1.5) + 0.1*(-1.5) + 0        = 4.5 - 0.15 = 4.35
    # sample 1: -1*(-1)*(-2)  + 0.1*(-2)  + 0.5*(-2)  = -2 - 0.2 - 1 = -3.2;   mean = 0.575
    logps = torch.tensor([[-1.0, -0.5], [-2.0, float("nan")]], requires_grad=True)
    out = distrl_actor_loss(logps, torch.tensor([[-1.5, -0.5], [-2.0, 0.0]]), torch.tensor([2.0, -1.0]),
                            torch.tensor([0, 1]), mask=torch.tensor([[1, 1], [1, 0]]), beta=0.1,
                            penalty_coef=0.5, rho_max=1.5)
    assert float(out.loss.detach()) == pytest.approx(0.575)
    torch.testing.assert_close(out.rho, torch.tensor([1.5, 1.0]))
    assert float(out.entropy) == pytest.approx(1.75)
    assert float(out.penalty) == pytest.approx(0.5)
    out.loss.backward()
    # d/d token of reply 0: (-1.5*2 + 0.1) / 2 = -1.45; of reply 1: (1 + 0.1 + 0.5) / 2 = 0.8; the pad gets 0
    torch.testing.assert_close(logps.grad, torch.tensor([[-1.45, -1.45], [0.8, 0.0]]))


def test_distrl_actor_loss_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="advantages must have shape"):
        distrl_actor_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3), torch.zeros(2))
    with pytest.raises(ValueError, match="invalid must hold only 0/1"):
        distrl_actor_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2), torch.tensor([0, 2]))


# ---------------------------------------------------------------- DPER


STATS = [TrajectoryStats(0.2, 0.5, 1.0), TrajectoryStats(0.4, 1.5, 2.0), TrajectoryStats(0.1, 0.9, 4.0)]
# w = (1, 0.5, 0.25); max |td| = 0.4, max H = 4; rho capped at 1
# p_0 = 1*0.5  + 0.5*0.5 + 0.25*0.25 = 0.8125
# p_1 = 1*1    + 0.5*1   + 0.25*0.5  = 1.625
# p_2 = 1*0.25 + 0.5*0.9 + 0.25*1    = 0.95
HAND_P = [0.8125, 1.625, 0.95]
# alpha = 0.5: sqrt(p) = [0.901388, 1.274755, 0.974679], sum = 3.150822
HAND_P_SAMPLE = [0.901388 / 3.150822, 1.274755 / 3.150822, 0.974679 / 3.150822]


def test_dper_priorities_and_probabilities_hand_numbers() -> None:
    np.testing.assert_allclose(dper_priorities(STATS, (1.0, 0.5, 0.25)), HAND_P)
    np.testing.assert_allclose(sampling_probabilities(HAND_P, alpha=0.5, eps=0.0), HAND_P_SAMPLE, atol=1e-6)
    np.testing.assert_allclose(sampling_probabilities(HAND_P, alpha=0.0), [1 / 3] * 3)


def test_sampler_draws_in_proportion_to_p_alpha() -> None:
    sampler = PrioritizedTrajectorySampler(weights=(1.0, 0.5, 0.25), alpha=0.5, eps=0.0)
    for i, s in enumerate(STATS):
        sampler.add(f"t{i}", s)
    np.testing.assert_allclose(sampler.probabilities(), HAND_P_SAMPLE, atol=1e-6)
    draws = sampler.sample(40_000, np.random.default_rng(0))
    freq = [draws.count(f"t{i}") / len(draws) for i in range(3)]
    np.testing.assert_allclose(freq, HAND_P_SAMPLE, atol=0.01)


def test_sampler_new_ids_get_top_priority_refresh_schedule_and_resume() -> None:
    sampler = PrioritizedTrajectorySampler(weights=(1.0, 0.5, 0.25), refresh_interval=3, capacity=3)
    sampler.add("a", STATS[0])
    sampler.add("b", STATS[1])
    sampler.mark_refreshed(0)
    assert not sampler.needs_refresh(2)
    assert sampler.needs_refresh(3)
    sampler.add("c")  # unscored: gets the largest current priority and asks for a refresh
    assert sampler.needs_refresh(1)
    assert sampler.priorities()[-1] == pytest.approx(sampler.priorities().max())
    sampler.add("d", STATS[2])  # beyond capacity: the oldest ("a") drops
    assert sampler.ids == ["b", "c", "d"]
    clone = PrioritizedTrajectorySampler(weights=(1.0, 0.5, 0.25), refresh_interval=3, capacity=3)
    clone.load_state_dict(sampler.state_dict())
    np.testing.assert_allclose(clone.probabilities(), sampler.probabilities())
    assert clone.sample(5, np.random.default_rng(1)) == sampler.sample(5, np.random.default_rng(1))
    with pytest.raises(ValueError, match="weights"):
        PrioritizedTrajectorySampler(weights=(1.0, 0.5))
    with pytest.raises(ValueError, match="abs_td"):
        TrajectoryStats(float("nan"), 1.0, 1.0)


def test_sampling_probabilities_sum_to_one() -> None:
    p = sampling_probabilities([0.0, 1.0, 4.0], alpha=1.0)
    assert math.isclose(float(p.sum()), 1.0)
    assert p[0] > 0
