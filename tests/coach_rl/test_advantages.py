"""ACLOO, RLOO and GRPO advantages checked against hand-computed numbers (arithmetic in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from trl.trainer.utils import nanstd

from coach_rl.advantages import acloo, grpo_advantages, rloo

# ---------------------------------------------------------------- acloo


def test_acloo_hand_numbers() -> None:
    # Q = [1, 2, 3, 6], K = 4; A_i = Q_i - mean of the other three
    # A_0 = 1 - (2+3+6)/3 = 1 - 11/3 = -8/3
    # A_1 = 2 - (1+3+6)/3 = 2 - 10/3 = -4/3
    # A_2 = 3 - (1+2+6)/3 = 3 - 3    =  0
    # A_3 = 6 - (1+2+3)/3 = 6 - 2    =  4      (sum: -8/3 - 4/3 + 0 + 4 = 0)
    a = acloo(torch.tensor([1.0, 2.0, 3.0, 6.0], dtype=torch.float64))
    torch.testing.assert_close(a, torch.tensor([-8 / 3, -4 / 3, 0.0, 4.0], dtype=torch.float64))
    assert float(a.sum()) == pytest.approx(0.0, abs=1e-12)


def test_acloo_k2_is_plus_minus_difference() -> None:
    # K = 2: A_1 = Q_1 - Q_2 = 0.7 - 0.2 = 0.5 and A_2 = Q_2 - Q_1 = -0.5
    torch.testing.assert_close(acloo(torch.tensor([0.7, 0.2])), torch.tensor([0.5, -0.5]))


def test_acloo_ties_give_zero() -> None:
    # every action equally good -> no action is better than the others
    torch.testing.assert_close(acloo(torch.full((3, 5), 0.3)), torch.zeros(3, 5))


def test_acloo_min_spread_zeroes_groups_the_critic_cannot_tell_apart() -> None:
    # group 0: spread 6 - 1 = 5 >= 0.5 -> the paper's advantages (as in test_acloo_hand_numbers)
    # group 1: Q = [0.40, 0.45, 0.42, 0.41], spread 0.05 < 0.5 -> all zero
    # group 2: spread exactly 0.5 is kept: A = [0.5 - 0, 0 - 0.5/3, 0 - 0.5/3, 0 - 0.5/3] = [0.5, -1/6, -1/6, -1/6]
    q = torch.tensor([[1.0, 2.0, 3.0, 6.0], [0.40, 0.45, 0.42, 0.41], [0.5, 0.0, 0.0, 0.0]], dtype=torch.float64)
    a = acloo(q, min_spread=0.5)
    torch.testing.assert_close(a[0], torch.tensor([-8 / 3, -4 / 3, 0.0, 4.0], dtype=torch.float64))
    torch.testing.assert_close(a[1], torch.zeros(4, dtype=torch.float64))
    torch.testing.assert_close(a[2], torch.tensor([0.5, -1 / 6, -1 / 6, -1 / 6], dtype=torch.float64))
    torch.testing.assert_close(acloo(q, min_spread=0.0), acloo(q))  # 0: the paper's estimator
    with pytest.raises(ValueError, match="min_spread must be a number >= 0"):
        acloo(q, min_spread=-0.1)


def test_acloo_leading_batch_dims_are_independent_groups() -> None:
    q = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    out = acloo(q)
    assert out.shape == q.shape
    for b in range(2):
        for s in range(3):
            group = q[b, s]
            expected = torch.stack(
                [group[i] - torch.cat([group[:i], group[i + 1 :]]).mean() for i in range(4)]
            )
            torch.testing.assert_close(out[b, s], expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=2, max_size=16))
def test_acloo_identity_k_over_k_minus_1_times_centred_q(values: list[float]) -> None:
    # A_i = Q_i - (sum - Q_i)/(K-1) = (K Q_i - sum)/(K-1) = K/(K-1) * (Q_i - mean(Q))
    q = torch.tensor(values, dtype=torch.float64)
    k = len(values)
    torch.testing.assert_close(acloo(q), k / (k - 1) * (q - q.mean()), atol=1e-9, rtol=1e-9)


def test_acloo_accepts_lists_and_keeps_grad() -> None:
    torch.testing.assert_close(acloo([1.0, 3.0]), torch.tensor([-2.0, 2.0]))
    q = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acloo(q)[0].backward()
    # dA_0/dQ = [1, -1/2, -1/2]
    torch.testing.assert_close(q.grad, torch.tensor([1.0, -0.5, -0.5]))


@pytest.mark.parametrize(
    ("q", "match"),
    [
        (torch.tensor([0.4]), "K=1 values per group.*K >= 2"),
        (torch.zeros(5, 1), "K=1"),
        (torch.tensor(0.4), "got a scalar"),
        (torch.tensor([0.4, float("nan")]), "q contains NaN"),
    ],
)
def test_acloo_rejects_bad_input(q: torch.Tensor, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        acloo(q)


# ---------------------------------------------------------------- rloo


def test_rloo_hand_numbers_and_same_formula_as_acloo() -> None:
    # rewards [1, 0, 0, 1]: A_0 = 1 - (0+0+1)/3 = 2/3; A_1 = 0 - (1+0+1)/3 = -2/3; A_2 = -2/3; A_3 = 2/3
    r = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    torch.testing.assert_close(rloo(r), torch.tensor([2 / 3, -2 / 3, -2 / 3, 2 / 3], dtype=torch.float64))
    torch.testing.assert_close(rloo(r), acloo(r))
    torch.testing.assert_close(rloo(torch.ones(4)), torch.zeros(4))  # ties
    with pytest.raises(ValueError, match="rewards has K=1"):
        rloo(torch.ones(1))


# ---------------------------------------------------------------- grpo_advantages


def test_grpo_hand_numbers() -> None:
    # rewards [1, 0, 0, 1]: mean 0.5; deviations +-0.5; unbiased variance = 4 * 0.25 / (4 - 1) = 1/3
    # std = sqrt(1/3) = 0.57735...; A = +-0.5 / (sqrt(1/3) + 1e-4) = +-0.86588...
    a = grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64))
    s = 0.5 / (math.sqrt(1 / 3) + 1e-4)
    torch.testing.assert_close(a, torch.tensor([s, -s, -s, s], dtype=torch.float64))
    # scale=False (Dr. GRPO): only the mean is removed -> [0.5, -0.5, -0.5, 0.5]
    torch.testing.assert_close(
        grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), scale=False), torch.tensor([0.5, -0.5, -0.5, 0.5])
    )


def test_grpo_ties_give_zero() -> None:
    # all equal: deviations 0, std 0 -> 0 / (0 + 1e-4) = 0
    torch.testing.assert_close(grpo_advantages(torch.full((2, 4), 0.7)), torch.zeros(2, 4))


def test_grpo_matches_trl_116_formula() -> None:
    # TRL 1.16's GRPOTrainer: (r - nanmean(group)) / (nanstd(group) + 1e-4), nanstd with Bessel's correction
    r = torch.tensor(np.random.default_rng(0).random((5, 8)))
    trl_std = nanstd(r, dim=1).unsqueeze(1)
    trl_adv = (r - r.mean(dim=1, keepdim=True)) / (trl_std + 1e-4)
    torch.testing.assert_close(grpo_advantages(r), trl_adv)


def test_grpo_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="K >= 2"):
        grpo_advantages(torch.ones(3, 1))
    with pytest.raises(ValueError, match="eps must be > 0"):
        grpo_advantages(torch.ones(4), eps=0.0)
    with pytest.raises(ValueError, match="rewards contains NaN"):
        grpo_advantages(torch.tensor([1.0, float("nan")]))



def test_batch_mean_advantages_by_hand() -> None:
    from coach_rl.advantages import batch_mean_advantages

    q = torch.tensor([0.2, 0.5, 0.8, 0.1])  # mean 0.4
    torch.testing.assert_close(batch_mean_advantages(q), torch.tensor([-0.2, 0.1, 0.4, -0.3]))
