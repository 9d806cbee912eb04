"""Return targets checked against hand-computed numbers (arithmetic in the comments) and a naive reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coach_rl.returns import coach_returns, discounted_returns, fill_missing_process_rewards, gae


def _naive_coach_returns(r_p: list[float], r_o: float, w_p: float, w_o: float, gamma: float) -> list[float]:
    """The paper's sum written literally as a double loop: R_t = w_p sum_{tau=t..T} gamma^(T-tau) r_p^tau + w_o r_o."""
    big_t = len(r_p) - 1
    return [
        w_p * sum(gamma ** (big_t - tau) * r_p[tau] for tau in range(t, big_t + 1)) + w_o * r_o
        for t in range(len(r_p))
    ]


# ---------------------------------------------------------------- coach_returns


def test_coach_returns_hand_numbers() -> None:
    # r_p = [1, 0, 1], r_o = 1, w_p = 0.2, w_o = 1, gamma = 0.5, T = 2
    # step weights gamma^(T - tau): tau=0 -> 0.25, tau=1 -> 0.5, tau=2 -> 1
    # weighted r_p: [0.25, 0, 1]; suffix sums: t=0 -> 1.25, t=1 -> 1.0, t=2 -> 1.0
    # R = 0.2 * [1.25, 1.0, 1.0] + 1 * 1 = [1.25, 1.2, 1.2]
    out = coach_returns([1, 0, 1], 1.0, w_p=0.2, w_o=1.0, gamma=0.5)
    assert out == pytest.approx([1.25, 1.2, 1.2])


def test_coach_returns_paper_defaults() -> None:
    # defaults w_p = 0.2, w_o = 1, gamma = 0.95 (Table 5); r_p = [1, 1, 1], r_o = 0
    # weights: 0.95^2 = 0.9025, 0.95, 1; suffix sums: 2.8525, 1.95, 1.0
    # R = 0.2 * [2.8525, 1.95, 1.0] = [0.5705, 0.39, 0.2]
    assert coach_returns([1, 1, 1], 0) == pytest.approx([0.5705, 0.39, 0.2])


def test_exponent_is_anchored_at_the_end_not_at_t() -> None:
    # Only the FIRST step is rewarded: r_p = [1, 0, 0], gamma = 0.5, w_p = 1, w_o = 0, T = 2.
    # Paper: R_0 = gamma^(T-0) * 1 = 0.25 (an early step weighs least), R_1 = R_2 = 0.
    # The usual gamma^(tau-t) would instead give R_0 = 1.
    assert coach_returns([1, 0, 0], 0, w_p=1.0, w_o=0.0, gamma=0.5) == pytest.approx([0.25, 0.0, 0.0])
    # Only the LAST step rewarded: weight 1 in every R_t -> [1, 1, 1] (usual discounting: [0.25, 0.5, 1]).
    assert coach_returns([0, 0, 1], 0, w_p=1.0, w_o=0.0, gamma=0.5) == pytest.approx([1.0, 1.0, 1.0])


@settings(max_examples=60, deadline=None)
@given(
    r_p=st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=30),
    r_o=st.floats(-1, 1),
    w_p=st.floats(0, 2),
    w_o=st.floats(0, 2),
    gamma=st.floats(0, 1),
)
def test_coach_returns_matches_literal_sum_and_recursion(
    r_p: list[float], r_o: float, w_p: float, w_o: float, gamma: float
) -> None:
    out = coach_returns(r_p, r_o, w_p=w_p, w_o=w_o, gamma=gamma)
    assert out == pytest.approx(_naive_coach_returns(r_p, r_o, w_p, w_o, gamma), abs=1e-9)
    big_t = len(r_p) - 1
    # R_T = w_p r_p^T + w_o r_o and R_t - R_{t+1} = w_p gamma^(T-t) r_p^t
    assert out[-1] == pytest.approx(w_p * r_p[-1] + w_o * r_o, abs=1e-9)
    for t in range(big_t):
        assert out[t] - out[t + 1] == pytest.approx(w_p * gamma ** (big_t - t) * r_p[t], abs=1e-9)


def test_coach_returns_keeps_the_input_kind() -> None:
    as_list = coach_returns([1, 0, 1], 1.0, gamma=0.5)
    assert isinstance(as_list, list) and all(type(v) is float for v in as_list)

    as_array = coach_returns(np.array([1, 0, 1]), 1.0, gamma=0.5)
    assert isinstance(as_array, np.ndarray) and as_array.dtype == np.float64
    np.testing.assert_allclose(as_array, as_list)

    t32 = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float32)
    as_tensor = coach_returns(t32, torch.tensor(1.0), gamma=0.5)
    assert isinstance(as_tensor, torch.Tensor) and as_tensor.dtype == torch.float32
    torch.testing.assert_close(as_tensor, torch.tensor(as_list, dtype=torch.float32))

    ints = coach_returns(torch.tensor([1, 0, 1]), 1, gamma=0.5)  # integer tensor -> default float dtype
    assert ints.dtype == torch.get_default_dtype()


def test_coach_returns_empty_trajectory() -> None:
    assert coach_returns([], 1.0) == []
    assert coach_returns(np.zeros(0), 1.0).shape == (0,)
    assert coach_returns(torch.zeros(0), 1.0).shape == (0,)


@pytest.mark.parametrize(
    ("rewards", "outcome", "kwargs", "error", "match"),
    [
        ([1.0, float("-inf")], 1.0, {}, ValueError, "process_rewards contains 1 non-finite"),
        ([1.0, float("inf")], 1.0, {}, ValueError, "non-finite"),
        ([1.0, None], 1.0, {}, TypeError, "process_rewards must hold only numbers"),
        ([[1.0], [0.0, 1.0]], 1.0, {}, TypeError, "rectangular"),
        ("101", 1.0, {}, TypeError, "process_rewards must be a list"),
        ([[1.0, 0.0], [0.0, 1.0]], 1.0, {}, ValueError, "must be 1-D"),
        (torch.zeros(2, 3), 1.0, {}, ValueError, r"got shape \(2, 3\)"),
        ([1.0], float("nan"), {}, ValueError, "outcome_reward must be finite"),
        ([1.0], torch.tensor([1.0, 0.0]), {}, ValueError, "outcome_reward must be a single number"),
        ([1.0], "yes", {}, TypeError, "outcome_reward must be a number"),
        ([1.0], 1.0, {"gamma": 1.5}, ValueError, r"gamma must be a number in \[0, 1\]"),
        ([1.0], 1.0, {"w_p": float("inf")}, ValueError, "w_p must be finite"),
    ],
)
def test_coach_returns_rejects_bad_input(rewards, outcome, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        coach_returns(rewards, outcome, **kwargs)


# ---------------------------------------------------------------- discounted_returns


def test_discounted_returns_hand_numbers() -> None:
    # r = [1, 2, 3], gamma = 0.5, bootstrap 4:
    # G_2 = 3 + 0.5 * 4 = 5; G_1 = 2 + 0.5 * 5 = 4.5; G_0 = 1 + 0.5 * 4.5 = 3.25
    assert discounted_returns([1, 2, 3], 0.5, bootstrap=4.0) == pytest.approx([3.25, 4.5, 5.0])
    # no bootstrap: G_2 = 3, G_1 = 2 + 1.5 = 3.5, G_0 = 1 + 1.75 = 2.75
    assert discounted_returns([1, 2, 3], 0.5) == pytest.approx([2.75, 3.5, 3.0])


def test_discounted_returns_batched_rows_are_independent() -> None:
    # row 0 as above with bootstrap 4 -> [3.25, 4.5, 5]
    # row 1: r = [0, 0, 1], bootstrap 0 -> G_2 = 1, G_1 = 0.5, G_0 = 0.25
    out = discounted_returns(
        torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]), 0.5, bootstrap=torch.tensor([4.0, 0.0])
    )
    torch.testing.assert_close(out, torch.tensor([[3.25, 4.5, 5.0], [0.25, 0.5, 1.0]]))
    with pytest.raises(ValueError, match="bootstrap must be a number or have the leading shape"):
        discounted_returns(torch.zeros(2, 3), 0.5, bootstrap=torch.zeros(3))


# ---------------------------------------------------------------- gae


def test_gae_hand_numbers() -> None:
    # r = [1, 0, 2], V = [0.5, 1.0, 1.5], gamma = 0.5, lam = 0.5, V_3 (last_value) = 2
    # delta_2 = 2 + 0.5*2   - 1.5 =  1.5
    # delta_1 = 0 + 0.5*1.5 - 1.0 = -0.25
    # delta_0 = 1 + 0.5*1.0 - 0.5 =  1.0
    # A_2 = 1.5; A_1 = -0.25 + 0.25*1.5 = 0.125; A_0 = 1.0 + 0.25*0.125 = 1.03125
    # returns = A + V = [1.53125, 1.125, 3.0]
    adv, ret = gae([1, 0, 2], [0.5, 1.0, 1.5], gamma=0.5, lam=0.5, last_value=2.0)
    assert adv == pytest.approx([1.03125, 0.125, 1.5])
    assert ret == pytest.approx([1.53125, 1.125, 3.0])


def test_gae_dones_cut_the_chain() -> None:
    # same numbers, but the episode ends after step 1 (dones = [0, 1, 0]):
    # delta_2 = 1.5 (unchanged); delta_1 = 0 + 0 - 1.0 = -1.0 and A_1 = -1.0 (no A_2 term)
    # A_0 = delta_0 + 0.25 * A_1 = 1.0 - 0.25 = 0.75
    adv, _ = gae(np.array([1, 0, 2]), np.array([0.5, 1.0, 1.5]), 0.5, 0.5, last_value=2.0, dones=[0, 1, 0])
    np.testing.assert_allclose(adv, [0.75, -1.0, 1.5])


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.tuples(st.floats(-2, 2), st.floats(-2, 2)), min_size=1, max_size=25),
    gamma=st.floats(0, 1),
    last=st.floats(-2, 2),
)
def test_gae_lambda_one_is_monte_carlo_minus_value(
    data: list[tuple[float, float]], gamma: float, last: float
) -> None:
    rewards = [r for r, _ in data]
    values = [v for _, v in data]
    adv, ret = gae(rewards, values, gamma=gamma, lam=1.0, last_value=last)
    mc = discounted_returns(rewards, gamma, bootstrap=last)
    assert adv == pytest.approx([g - v for g, v in zip(mc, values)], abs=1e-9)
    assert ret == pytest.approx(mc, abs=1e-9)
    # lam = 0: the one-step TD error r_t + gamma V_{t+1} - V_t
    adv0, _ = gae(rewards, values, gamma=gamma, lam=0.0, last_value=last)
    nxt = values[1:] + [last]
    assert adv0 == pytest.approx([r + gamma * n - v for r, n, v in zip(rewards, nxt, values)], abs=1e-9)


def test_gae_tensor_batch() -> None:
    r = torch.tensor([[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]])
    v = torch.tensor([[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]])
    adv, ret = gae(
        r, v, 0.5, 0.5, last_value=torch.tensor([2.0, 2.0]), dones=torch.tensor([[0, 0, 0], [0, 1, 0]])
    )
    torch.testing.assert_close(adv, torch.tensor([[1.03125, 0.125, 1.5], [0.75, -1.0, 1.5]]))
    torch.testing.assert_close(ret, adv + v)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"values": [0.0, 0.0]}, r"values must have the shape of rewards \(3,\)"),
        ({"dones": [0, 2, 0]}, "dones must hold only 0/1"),
        ({"dones": [0, 1]}, "dones must have the shape"),
        ({"lam": -0.1}, r"lam must be a number in \[0, 1\]"),
        ({"values": [0.0, math.nan, 0.0]}, "values contains 1 non-finite"),
    ],
)
def test_gae_rejects_bad_input(kwargs, match) -> None:
    args = {"rewards": [1.0, 0.0, 2.0], "values": [0.0, 0.0, 0.0], "gamma": 0.9, "lam": 0.95} | kwargs
    with pytest.raises(ValueError, match=match):
        gae(**args)


def test_missing_process_rewards_take_the_episode_mean_by_hand() -> None:
    nan = float("nan")
    assert fill_missing_process_rewards([1.0, nan, 0.0]) == [1.0, 0.5, 0.0]
    assert fill_missing_process_rewards([nan, nan]) == [0.0, 0.0]  # nothing scored: the outcome alone
    # R_t with r_p = [1, 0.5 (filled), 0], T = 2, gamma = 0.95: 0.2 * suffix(1*0.9025, 0.5*0.95, 0*1) + 1
    assert coach_returns([1.0, nan, 0.0], 1.0) == pytest.approx([1.0 + 0.2 * (0.9025 + 0.475), 1.0 + 0.2 * 0.475, 1.0])
    assert coach_returns([nan], 0.5) == [0.5]
