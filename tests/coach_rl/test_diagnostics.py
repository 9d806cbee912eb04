"""coach_rl.diagnostics against hand-computed numbers, and the oracle's round trip through a real sim episode."""

from __future__ import annotations

import math

import pytest
import torch

from coach_rl.diagnostics import (
    PolicyDrift,
    StateOracle,
    advantage_agreement,
    binary_auc,
    ranking_metrics,
    step_advantage_metrics,
)


def test_binary_auc_counts_pairs_and_ties():
    # positives 0.9, 0.4; negatives 0.4, 0.1: pairs (0.9>0.4) (0.9>0.1) (0.4=0.4 -> 1/2) (0.4>0.1) = 3.5 / 4
    assert binary_auc([0.9, 0.4, 0.4, 0.1], [True, True, False, False]) == pytest.approx(0.875)
    assert binary_auc([0.1, 0.9], [True, False]) == 0.0
    assert math.isnan(binary_auc([0.3, 0.2], [True, True]))
    with pytest.raises(ValueError, match="2 scores for 3 labels"):
        binary_auc([0.1, 0.2], [True, False, True])


def test_ranking_metrics_by_hand():
    q = torch.tensor([[0.9, 0.1, 0.5, 0.2],    # expert = action 0 (top): mixed group, within-AUC 1
                      [0.3, 0.8, 0.1, 0.0],    # expert = action 0, top is action 1: within-AUC 2/3
                      [0.5, 0.5, 0.5, 0.5],    # no expert sampled: not mixed, no top-1
                      [0.2, 0.6, 0.4, 0.9]])   # all expert: not mixed, top-1 counts
    y = torch.tensor([[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    m = ranking_metrics(q, y)
    assert m["auc_within"] == pytest.approx((1 + 2 / 3) / 2)
    assert m["top1"] == pytest.approx(2 / 3)          # groups 0 and 3 of the three with an expert action
    assert m["expert_share"] == pytest.approx(6 / 16)
    assert m["mixed_groups"] == pytest.approx(0.5)
    assert m["q_spread"] == pytest.approx((0.8 + 0.8 + 0.0 + 0.7) / 4)
    assert m["q_spread_mixed"] == pytest.approx(0.8)  # groups 0 and 1
    assert m["q_spread_pure"] == pytest.approx(0.7)   # group 3 (all expert, Q differ); group 2's Q are all equal
    # pooled: positives 0.9, 0.3, 0.2, 0.6, 0.4, 0.9 vs the ten negatives
    pos = [0.9, 0.3, 0.2, 0.6, 0.4, 0.9]
    neg = [0.1, 0.5, 0.2, 0.8, 0.1, 0.0, 0.5, 0.5, 0.5, 0.5]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    assert m["auc"] == pytest.approx(wins / 60)
    with pytest.raises(ValueError, match=r"\(groups, K\)"):
        ranking_metrics(q.flatten(), y.flatten())


def test_advantage_agreement_by_hand():
    a = [0.5, -0.2, 0.1, 0.0, -0.3, 0.4]
    y = [1.0, 0.0, 0.0, 1.0, 1.0, math.nan]
    m = advantage_agreement(a, y)
    # judged (known label, A != 0): 0.5/1 ok, -0.2/0 ok, 0.1/0 wrong, -0.3/1 wrong -> 2 of 4
    assert m["sign_agreement"] == pytest.approx(0.5)
    assert m["weighted_agreement"] == pytest.approx((0.5 + 0.2) / (0.5 + 0.2 + 0.1 + 0.3))
    assert m["abs_mean"] == pytest.approx(1.5 / 6)
    assert m["expert_mean"] == pytest.approx((0.5 + 0.0 - 0.3) / 3)
    assert m["other_mean"] == pytest.approx((-0.2 + 0.1) / 2)
    assert m["zero_share"] == pytest.approx(1 / 6)


def test_step_advantage_metrics_reads_expert_match_and_is_empty_off_the_sim():
    class Step:
        def __init__(self, match: float) -> None:
            self.expert_match = match

    out = step_advantage_metrics([Step(1.0), Step(0.0)], [1.0, -1.0])
    assert out["diag/adv_sign_agreement"] == 1.0
    assert step_advantage_metrics([Step(math.nan)], [1.0]) == {}


def test_policy_drift_is_zero_for_the_same_model_and_exact_kl_after_a_change(tmp_path):
    from coach_reward.tiny_models import build_tiny_causal_lm

    model, tokenizer = build_tiny_causal_lm(vocab_size=300, hidden_size=32, num_layers=1, num_heads=2, seed=0,
                                            corpus=["click the wifi switch", "open the settings app"] * 20)
    prompts = ["click the", "open the settings"]
    drift = PolicyDrift.build(model, tokenizer, prompts, max_new_tokens=4)
    assert drift.kl(model) == pytest.approx(0.0, abs=1e-6)
    drift.save(tmp_path / "probe.pt")
    again = PolicyDrift.load(tmp_path / "probe.pt")
    with torch.no_grad():
        model.lm_head.weight.add_(0.5 * torch.randn_like(model.lm_head.weight))
    kl = again.kl(model)
    # top_k covers the whole vocabulary here, so it is the exact mean KL along the stored replies
    from coach_rl.diagnostics import _reply_logprobs

    exact = []
    for p_ids, reply, p_top, idx in zip(again.prompt_ids, again.reply_ids, again.top_values, again.top_indices):
        q = _reply_logprobs(model, p_ids, reply, "cpu").double()
        p = torch.full_like(q, -math.inf).scatter(-1, idx, p_top.double())
        exact.extend((p.exp() * (p - q)).nan_to_num(0.0).sum(-1).tolist())
    assert kl > 0
    assert kl == pytest.approx(sum(exact) / len(exact), rel=1e-4)


def test_state_oracle_round_trip_and_labels_on_a_sim_screen():
    import gymnasium as gym

    import android_gym  # noqa: F401
    from coach_rl.policy import PolicyFormat, PolicyRequest

    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    try:
        obs, _ = env.reset(seed=3)
        expert = env.unwrapped.expert_action()
        size = env.unwrapped.device.screen_size
        oracle = StateOracle(expert, tuple(obs["elements"]), tuple(size))
        back = StateOracle.from_json(oracle.to_json())
        assert back.expert == expert and back.elements == oracle.elements and back.screen_size == tuple(size)
        fmt = PolicyFormat(mode="xml", action_format="index")
        request = PolicyRequest.from_observation(obs, (), tuple(size))
        right = fmt.answer_for(expert, request)
        assert back.label_reply(right, fmt) is True
        assert back.label_reply('{"action_type": "navigate_back"}', fmt) is False
        assert back.label_reply("not an action at all", fmt) is False
    finally:
        env.close()
    with pytest.raises(ValueError, match="not a StateOracle JSON"):
        StateOracle.from_json('{"expert": {"type": "teleport"}}')


def test_prm_agreement_with_the_expert_on_the_rollouts_own_steps_by_hand():
    """How a PRM's r_p on the policy's own steps agrees with "this is the sim expert's action" (the learned PRM of the
    main job: 0.86 accuracy on held-out demonstrations, 0.65 on its rollouts, below the majority class)."""
    from coach_rl.records import StepRecord
    from coach_rl.rollout_metrics import rollout_oracle_metrics

    def step(r_p: float, match: float | None) -> StepRecord:
        return StepRecord(episode_id="e", step_index=0, num_steps=1, task="t", group="t:0", prompt=[], prompt_text="",
                          response="", process_reward=r_p, expert_match=match)

    records = [step(0.9, 1.0), step(0.2, 1.0), step(0.7, 0.0), step(0.1, 0.0), step(math.nan, 1.0), step(0.8, None)]
    out = rollout_oracle_metrics(records, prm=True)
    assert out["diag/rollout_expert_match"] == pytest.approx(3 / 5)  # the 5 steps whose expert is known
    # the 4 of those with a score: right on 0.9 (expert) and 0.1 (not), wrong on 0.2 and 0.7
    assert out["diag/prm_expert_agreement"] == 0.5 and out["diag/prm_expert_majority"] == 0.5
    assert out["diag/prm_expert_auc"] == 0.75  # 0.9 beats 0.7 and 0.1; 0.2 beats 0.1 only
    assert rollout_oracle_metrics(records) == {"diag/rollout_expert_match": pytest.approx(3 / 5)}  # no PRM
    assert rollout_oracle_metrics([step(0.5, None)], prm=True) == {}  # off the sim


def test_fixed_normal_is_the_same_for_the_same_pair_and_standard_over_many():
    from coach_rl.diagnostics import fixed_normal

    z = fixed_normal(["s1", "s1", "s2", "s1"], ["a", "b", "a", "a"])
    assert z[0] == z[3] and len({float(z[0]), float(z[1]), float(z[2])}) == 3
    many = fixed_normal([f"state {i}" for i in range(4000)], ["click(1)"] * 4000)
    assert abs(float(many.mean())) < 0.06 and abs(float(many.std()) - 1) < 0.06  # 4000 draws: se ~0.016, ~0.011
    with pytest.raises(ValueError, match="2 states for 1 replies"):
        fixed_normal(["a", "b"], ["x"])
