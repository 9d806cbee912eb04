"""CoachTrainer (a real TRL GRPOTrainer) on a tiny locally built Qwen2: ACLOO advantages, Eq. 4 loss, updates, resume."""

from __future__ import annotations

import copy

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.advantages import acloo
from coach_rl.algorithms.coach import CoachTrainer, CriticReward, completion_text
from coach_rl.critic import Critic
from coach_rl.losses import ppo_clip_loss
from coach_rl.replay import ReplayStep

from .trainer_parts import K, trainer_config, vowel_critic


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_causal_lm(seed=0)


def _rows(n: int) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"Open the app number {i}."}], "state": f"state {i}" + "!" * i}
            for i in range(n)]


class RecordingCoachTrainer(CoachTrainer):
    """Keeps each scored generation batch (and the policy's token log-probs at that moment) for inspection."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches: list[dict] = []

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
        mask = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
        with torch.no_grad():
            logps, _, _ = self._get_per_token_logps_and_entropies(self.model, ids, mask, out["completion_ids"].size(1))
        self.batches.append({**out, "q": self.critic_reward.last_scores.clone(), "logps_before": logps,
                             "states": list(self.critic_reward.last_states)})
        return out


def _sequence_logps(trainer: CoachTrainer, batch: dict) -> torch.Tensor:
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, batch["completion_ids"].size(1))
    return (logps * batch["completion_mask"]).sum(-1)


def test_advantages_are_exact_acloo_of_the_critic_scores_in_groups_of_k(tiny, tmp_path):
    model, tok = tiny
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path), tok)
    trainer.actor_update(_rows(4), num_steps=2)
    assert len(trainer.batches) == 2
    for batch in trainer.batches:
        q = batch["q"]
        assert q.numel() == 8
        # TRL's layout: K consecutive completions per state
        states = batch["states"]
        assert all(len(set(states[g * K:(g + 1) * K])) == 1 for g in range(2)) and states[0] != states[K]
        expected = acloo(q.view(-1, K)).reshape(-1)
        torch.testing.assert_close(batch["advantages"], expected)
        by_hand = torch.stack([q[i] - (q[(i // K) * K:(i // K + 1) * K].sum() - q[i]) / (K - 1) for i in range(8)])
        torch.testing.assert_close(batch["advantages"], by_hand)
    # the completions table TRL keeps holds the critic scores and our advantages, not GRPO's
    logged_q = torch.tensor(list(trainer._logs["rewards"]["critic"]))
    torch.testing.assert_close(logged_q, trainer.batches[-1]["q"])
    torch.testing.assert_close(torch.tensor(list(trainer._logs["advantages"])), acloo(logged_q.view(-1, K)).reshape(-1))


def test_a_real_critic_scores_state_plus_completion(tiny, tmp_path):
    model, tok = tiny
    critic = Critic.from_pretrained_lm(model, tok, seed=3)
    trainer = RecordingCoachTrainer(copy.deepcopy(model), critic, trainer_config(tmp_path), tok)
    rows = _rows(2)
    trainer.actor_update(rows, num_steps=1)
    batch = trainer.batches[0]
    completions = [completion_text(c) for c in list(trainer._logs["completion"])]
    expected_q = critic.score(batch["states"], completions)
    torch.testing.assert_close(batch["q"], expected_q)
    torch.testing.assert_close(batch["advantages"], acloo(expected_q.view(-1, K)).reshape(-1))


def test_trl_loss_with_beta_zero_is_the_ppo_clipped_surrogate(tiny, tmp_path):
    """TRL's _compute_loss (loss_type dapo, beta 0) equals coach_rl.losses.ppo_clip_loss on the same tokens."""
    model, tok = tiny
    config = trainer_config(tmp_path)
    assert config.beta == 0.0 and config.loss_type == "dapo" and config.epsilon == 0.2
    trainer = CoachTrainer(copy.deepcopy(model), vowel_critic, config, tok)
    trainer.model.train()
    batch = trainer._generation_batch(_rows(2))
    out = trainer._generate_and_score_completions(batch)
    ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
    mask = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
    logps, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, out["completion_ids"].size(1))
    gen = torch.Generator().manual_seed(0)
    old = logps.detach() + 0.4 * torch.randn(logps.shape, generator=gen)  # ratios on both sides of the clip
    trainer.current_gradient_accumulation_steps = 1
    trl_loss = trainer._compute_loss(trainer.model, {**out, "old_per_token_logps": old})
    ours = ppo_clip_loss(logps, old, out["advantages"], clip_eps=0.2, mask=out["completion_mask"])
    assert 0 < float(ours.clip_fraction) < 1
    torch.testing.assert_close(trl_loss, ours.loss, atol=1e-6, rtol=1e-5)


def test_actor_update_moves_logprobs_towards_the_higher_q_completions(tiny, tmp_path):
    model, tok = tiny
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, learning_rate=3e-3), tok)
    trainer.actor_update(_rows(2), num_steps=1)
    batch = trainer.batches[0]
    before = (batch["logps_before"] * batch["completion_mask"]).sum(-1)
    after = _sequence_logps(trainer, batch)
    adv = batch["advantages"]
    # the surrogate sum_i A_i log pi(a_i|s) went up, and within each state the best action gained on the worst
    assert float((adv * (after - before)).sum()) > 0
    for g in range(2):
        group = slice(g * K, (g + 1) * K)
        best, worst = int(adv[group].argmax()) + g * K, int(adv[group].argmin()) + g * K
        assert (after[best] - before[best]) > (after[worst] - before[worst])


def test_optimizer_state_persists_and_resume_gives_the_identical_next_update(tiny, tmp_path):
    model, tok = tiny
    rows = _rows(3)
    a = CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path / "a"), tok)
    a.actor_update(rows, num_steps=1)
    optimizer = a.optimizer
    a.save_actor_state(tmp_path / "ckpt")
    metrics = a.actor_update(rows, num_steps=1)
    assert a.optimizer is optimizer and a.state.global_step == 2 and metrics["actor/global_step"] == 2.0
    assert len(a.optimizer.state) > 0

    torch.manual_seed(12345)  # a fresh process would have some other RNG state: the checkpoint restores it
    b = CoachTrainer(build_tiny_causal_lm(seed=5)[0], vowel_critic, trainer_config(tmp_path / "b"), tok)
    b.load_actor_state(tmp_path / "ckpt")
    b.actor_update(rows, num_steps=1)
    assert b.state.global_step == 2
    for (name, x), y in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.equal(x, y), name

    # the in-memory form round-trips too
    state = a.actor_state_dict()
    a.actor_update(rows, num_steps=1)
    b.load_actor_state_dict(state)
    b.actor_update(rows, num_steps=1)
    for x, y in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(x, y)


def test_default_steps_cover_the_rows_once_and_metrics_are_reported(tiny, tmp_path):
    model, tok = tiny
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path), tok)
    assert trainer.actor_steps_for(5) == 3  # 2 states per generation batch of 8 with K = 4
    metrics = trainer.actor_update(_rows(5))
    assert metrics["actor/steps"] == 3.0
    seen = {s for batch in trainer.batches for s in batch["states"]}
    assert seen == {row["state"] for row in _rows(5)}
    for key in ("actor/loss", "actor/grad_norm", "actor/acloo/q_mean", "actor/entropy", "actor/reward"):
        assert key in metrics


def test_plain_trl_train_on_a_dataset_of_states_uses_acloo_too(tiny, tmp_path):
    from datasets import Dataset

    model, tok = tiny
    config = trainer_config(tmp_path, max_steps=2, logging_steps=1, disable_tqdm=True)
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, config, tok, train_dataset=Dataset.from_list(_rows(4)))
    result = trainer.train()
    assert result.global_step == 2 and len(trainer.batches) == 2
    for batch in trainer.batches:
        torch.testing.assert_close(batch["advantages"], acloo(batch["q"].view(-1, K)).reshape(-1))


def test_rows_from_replay_steps_use_the_policy_template_as_state(tiny, tmp_path):
    model, tok = tiny
    trainer = CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path), tok)
    step = ReplayStep(trajectory_id="t", step_index=1, num_steps=3, task="OpenClock", instruction="Open the Clock app.",
                      ui="[1] TextView 'Clock'", action=None, response="Action: wait()", parse_error=None,
                      env_reward=0.0, process_reward=0.0, outcome_reward=1.0, return_t=1.0, success=1.0,
                      policy_version=0, timestamp=0.0, history=[("look", "wait()")])
    (row,) = trainer.rows_from_steps([step])
    assert row["prompt"] == step.policy_messages("xml")
    assert row["state"] == tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
    assert row["state"].endswith("<|im_start|>assistant\n")
    # what the collector recorded wins: the exact prompt and templated text the policy acted on
    recorded = [{"role": "user", "content": "[3] Switch 'Wi-Fi' checked click"}]
    step.prompt, step.prompt_text = recorded, "the policy's own template"
    (row,) = trainer.rows_from_steps([step])
    assert row == {"prompt": recorded, "state": "the policy's own template"}
    with pytest.raises(ValueError, match="actor_update"):
        trainer.train()


def test_vision_language_policy_rows_with_screenshots(tmp_path):
    """Rows may carry the screenshot (``images`` column) for a VLM policy; the critic still reads the state text."""
    from PIL import Image

    from coach_reward.tiny_models import build_tiny_vision_lm

    model, processor = build_tiny_vision_lm(seed=0)
    trainer = RecordingCoachTrainer(model, vowel_critic, trainer_config(tmp_path, max_completion_length=6), processor)
    screen = Image.new("RGB", (120, 90), (200, 30, 30))
    rows = [{"prompt": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": f"Tap OK {i}"}]}],
             "state": f"screen {i}", "images": [screen]} for i in range(2)]
    trainer.actor_update(rows, num_steps=1)
    batch = trainer.batches[0]
    assert "pixel_values" in batch and batch["num_images"] == [1] * 8
    torch.testing.assert_close(batch["advantages"], acloo(batch["q"].view(-1, K)).reshape(-1))


def test_configuration_and_rows_are_checked(tiny, tmp_path):
    model, tok = tiny
    with pytest.raises(ValueError, match="loss_type='cispo'"):
        CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, loss_type="cispo"), tok)
    with pytest.raises(ValueError, match="importance_sampling_level"):
        CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, importance_sampling_level="sequence",
                                                                 loss_type="grpo"), tok)
    with pytest.warns(RuntimeWarning, match="bf16 autocast is on"):
        CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, bf16=True), tok)
    trainer = CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, num_iterations=2), tok)
    with pytest.raises(ValueError, match="whole generated"):
        trainer.actor_update(_rows(2), num_steps=1)
    with pytest.raises(ValueError, match="no 'prompt'"):
        trainer.actor_update([{"state": "s"}], num_steps=2)
    with pytest.raises(ValueError, match="empty"):
        trainer.actor_update([], num_steps=2)
    with pytest.raises(TypeError, match="state text"):
        trainer.actor_update([{"prompt": [{"role": "user", "content": "x"}], "state": 3}], num_steps=2)
    reward = CriticReward(lambda s, a: [0.0])
    with pytest.raises(ValueError, match="1 scores for 2"):
        reward(["p", "p"], ["a", "b"], state=["s", "s"])
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]) == "hi"


def test_coachs_gradient_comes_from_losses_ppo_clip_loss(tiny, tmp_path, monkeypatch):
    """The readable formula is the one that runs: changing coach_rl.losses.ppo_clip_loss changes Coach's gradient."""
    import coach_rl.algorithms.coach as coach_module
    from coach_rl.losses import PPOLossOutput

    model, tok = tiny
    trainer = CoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path), tok)
    trainer.model.train()
    out = trainer._generate_and_score_completions(trainer._generation_batch(_rows(2)))
    trainer.current_gradient_accumulation_steps = 1

    def gradient() -> torch.Tensor:
        trainer.model.zero_grad(set_to_none=True)
        trainer._compute_loss(trainer.model, out).backward()
        return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])

    real = gradient()
    assert real.abs().sum() > 0
    calls = []

    def tripled(*args, **kwargs):
        calls.append(1)
        result = ppo_clip_loss(*args, **kwargs)
        return PPOLossOutput(3 * result.loss, result.clip_fraction, result.approx_kl)

    monkeypatch.setattr(coach_module, "ppo_clip_loss", tripled)
    torch.testing.assert_close(gradient(), 3 * real)
    assert calls


def test_the_plain_critic_value_ablation_uses_q_itself(tiny, tmp_path):
    """coach_advantage=q: A_i = Q_i (no leave-one-out baseline), the ablation ACLOO is compared with."""
    model, tok = tiny
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, coach_advantage="q"), tok)
    trainer.actor_update(_rows(2), num_steps=1)
    batch = trainer.batches[0]
    torch.testing.assert_close(batch["advantages"], batch["q"])
    with pytest.raises(ValueError, match="coach_advantage"):
        trainer_config(tmp_path, coach_advantage="gae")


def test_min_q_spread_zeroes_the_advantages_of_states_whose_k_scores_barely_differ(tiny, tmp_path):
    """coach_min_q_spread: a group whose critic scores span less than it gets A = 0; the others get ACLOO."""
    model, tok = tiny
    scores = iter([0.50, 0.51, 0.49, 0.50, 0.9, 0.1, 0.1, 0.1])  # state 0: spread 0.02; state 1: spread 0.8

    def close_then_far(states, actions):
        return [next(scores) for _ in actions]

    trainer = RecordingCoachTrainer(copy.deepcopy(model), close_then_far,
                                    trainer_config(tmp_path, coach_min_q_spread=0.1), tok)
    trainer.actor_update(_rows(2), num_steps=1)
    batch = trainer.batches[0]
    a = batch["advantages"].view(-1, K)
    torch.testing.assert_close(a[0], torch.zeros(K, dtype=a.dtype))
    torch.testing.assert_close(a[1], acloo(batch["q"].view(-1, K)[1]).to(a.dtype))
    assert float(a[1, 0]) == pytest.approx(0.8)  # 0.9 - mean(0.1, 0.1, 0.1)
    with pytest.raises(ValueError, match="coach_min_q_spread"):
        trainer_config(tmp_path, coach_min_q_spread=-1.0)


class _VowelFormat:
    """A stand-in PolicyFormat for the oracle: a reply holding an 'e' reads as press_home, any other as press_back."""

    def parse(self, text, request):
        from android_gym.actions.types import PressBack, PressHome

        return "", (PressHome() if "e" in text else PressBack())


def test_the_sim_oracle_q_source_takes_the_advantages_from_the_oracle_labels(tiny, tmp_path):
    """coach_q_source=sim-oracle (the perfect-critic diagnostic): Q_i = 1 for the expert's action, 0 otherwise, then
    ACLOO; the critic still scores the K actions (its ranking is what diag/critic_* reports)."""
    from android_gym.actions.types import PressHome
    from coach_rl.diagnostics import StateOracle

    model, tok = tiny
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, coach_q_source="sim-oracle",
                                                                                 temperature=2.0), tok)
    trainer.oracle_format = _VowelFormat()
    oracle = StateOracle(PressHome()).to_json()
    rows = [{**row, "oracle": oracle} for row in _rows(2)]
    metrics = trainer.actor_update(rows, num_steps=1)
    batch = trainer.batches[0]
    texts = tok.batch_decode(batch["completion_ids"], skip_special_tokens=True)
    labels = torch.tensor([1.0 if "e" in t else 0.0 for t in texts]).view(-1, K)
    # hand-computed ACLOO of 0/1 labels: A_i = y_i - mean_{j != i} y_j
    expected = torch.stack([torch.stack([labels[g, i] - (labels[g].sum() - labels[g, i]) / (K - 1) for i in range(K)])
                            for g in range(labels.shape[0])]).flatten()
    torch.testing.assert_close(batch["advantages"], expected.to(batch["advantages"].dtype))
    # the critic's own Q was still computed (vowel_critic), and differs from the labels
    assert not torch.equal(batch["q"], labels.flatten())
    if bool((expected != 0).any()):
        assert metrics["diag/adv_sign_agreement"] == 1.0
    # no oracle in the rows: the diagnostic cannot run and says so
    plain = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, trainer_config(tmp_path, coach_q_source="sim-oracle"), tok)
    plain.oracle_format = _VowelFormat()
    with pytest.raises(ValueError, match="sim-oracle"):
        plain.actor_update(_rows(2), num_steps=1)
    with pytest.raises(ValueError, match="coach_q_source"):
        trainer_config(tmp_path, coach_q_source="prm")


def test_oracle_noise_adds_a_fixed_error_per_state_and_reply_to_the_oracle_scores(tiny, tmp_path):
    """coach_oracle_noise=sigma (diagnostic): Q_i = y_i + sigma * z(state, reply), then ACLOO."""
    from android_gym.actions.types import PressHome
    from coach_rl.diagnostics import StateOracle, fixed_normal

    model, tok = tiny
    config = trainer_config(tmp_path, coach_q_source="sim-oracle", coach_oracle_noise=0.5, temperature=2.0)
    trainer = RecordingCoachTrainer(copy.deepcopy(model), vowel_critic, config, tok)
    trainer.oracle_format = _VowelFormat()
    rows = [{**row, "oracle": StateOracle(PressHome()).to_json()} for row in _rows(2)]
    trainer.actor_update(rows, num_steps=1)
    batch = trainer.batches[0]
    texts = tok.batch_decode(batch["completion_ids"], skip_special_tokens=True)
    labels = torch.tensor([1.0 if "e" in t else 0.0 for t in texts], dtype=torch.float64)
    reward = trainer.critic_reward
    noisy = labels + 0.5 * fixed_normal(reward.last_states, reward.last_actions)
    torch.testing.assert_close(batch["advantages"], acloo(noisy.view(-1, K)).flatten().to(batch["advantages"].dtype))
    with pytest.raises(ValueError, match="coach_oracle_noise"):
        trainer_config(tmp_path, coach_oracle_noise=0.5)  # the learned critic: nothing to perturb


def _kl_on(trainer: CoachTrainer, batch: dict) -> float:
    """k3 KL of the trainer's policy to its reference on the completion tokens of ``batch``."""
    from coach_rl.losses import kl_to_reference

    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    n = batch["completion_ids"].size(1)
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, n)
        ref, _, _ = trainer._get_per_token_logps_and_entropies(trainer.ref_model, ids, mask, n)
    return float(kl_to_reference(logps, ref, batch["completion_mask"]))


def test_beta_adds_the_kl_to_the_starting_policy_and_pulls_the_policy_back(tiny, tmp_path):
    """beta > 0 (beyond the paper): loss = ppo_clip_loss + beta * kl_to_reference against a frozen copy of the policy
    the trainer was built with; with zero advantages the update only shrinks the KL."""
    from coach_rl.losses import kl_to_reference

    model, tok = tiny
    start = copy.deepcopy(model)
    trainer = RecordingCoachTrainer(copy.deepcopy(model), lambda s, a: [0.5] * len(s),
                                    trainer_config(tmp_path, beta=0.5, learning_rate=3e-3), tok)
    assert trainer.beta == 0.5 and trainer.ref_model is not None and trainer.args.beta == 0.5
    assert not any(p.requires_grad for p in trainer.ref_model.parameters())
    # the loss is the readable formula: Eq. 4 plus beta times the importance-weighted k3 against the reference
    trainer.model.train()
    out = trainer._generate_and_score_completions(trainer._generation_batch(_rows(2)))
    assert _kl_on(trainer, out) == pytest.approx(0.0, abs=1e-7)  # nothing has moved yet
    ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
    mask = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
    with torch.no_grad():
        for p in trainer.model.parameters():  # move the policy away from the reference
            p.add_(0.05 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    logps, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, out["completion_ids"].size(1))
    old = logps.detach() + 0.1
    trainer.current_gradient_accumulation_steps = 1
    loss = trainer._compute_loss(trainer.model, {**out, "old_per_token_logps": old})
    expected = (ppo_clip_loss(logps, old, out["advantages"], clip_eps=0.2, mask=out["completion_mask"]).loss
                + 0.5 * kl_to_reference(logps, out["ref_per_token_logps"], out["completion_mask"], logp_old=old))
    torch.testing.assert_close(loss, expected, atol=1e-6, rtol=1e-5)
    before = _kl_on(trainer, out)
    assert before > 1e-2
    # equal Q for every action: ACLOO is 0, so the only gradient is the KL's, and it pulls back towards the start
    for _ in range(3):
        trainer.model.zero_grad()
        trainer._compute_loss(trainer.model, out).backward()
        with torch.no_grad():
            for p in trainer.model.parameters():
                if p.grad is not None:
                    p.sub_(0.5 * p.grad)
    assert _kl_on(trainer, out) < 0.5 * before
    metrics = trainer.actor_update(_rows(2), num_steps=2)
    assert metrics["actor/kl"] > 0
    for (name, a), b in zip(trainer.ref_model.named_parameters(), start.parameters()):
        assert torch.equal(a, b), name  # the anchor never moves


def test_the_kl_reference_survives_a_checkpoint(tiny, tmp_path):
    """After a resume the policy passed in is the run's latest one: the anchor comes from the checkpoint."""
    from coach_rl.algorithms.coach import CoachAlgorithm
    from coach_rl.critic import CriticTrainer

    model, tok = tiny

    def algorithm(policy, **overrides):
        critic = Critic.from_pretrained_lm(policy, tok, seed=0)
        actor = CoachTrainer(policy, critic, trainer_config(tmp_path, **overrides), tok)
        return CoachAlgorithm(actor, critic, CriticTrainer(critic, total_steps=4))

    a = algorithm(copy.deepcopy(model), beta=0.1, learning_rate=3e-3)
    a.actor.actor_update(_rows(2), num_steps=2)
    a.save(tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / "kl_reference.pt").is_file()
    moved = copy.deepcopy(a.actor.model)  # what the loop would load from the checkpoint's policy/
    b = algorithm(moved, beta=0.1)
    assert not all(torch.equal(x, y) for x, y in zip(b.actor.ref_model.parameters(), model.parameters()))
    b.load(tmp_path / "ckpt")
    for x, y in zip(b.actor.ref_model.parameters(), model.parameters()):
        assert torch.equal(x, y)
    plain = algorithm(copy.deepcopy(model))
    plain.save(tmp_path / "plain")
    assert not (tmp_path / "plain" / "kl_reference.pt").exists() and plain.actor.reference_state_dict() is None
    with pytest.raises(FileNotFoundError, match="no KL reference"):
        algorithm(copy.deepcopy(model), beta=0.1).load(tmp_path / "plain")


def test_beta_is_checked_and_belongs_to_coach():
    from coach_rl.configs import load_config

    assert load_config("smoke", ["beta=0.04"]).coach.beta == 0.04
    with pytest.raises(ValueError, match="beta"):
        load_config("smoke", ["beta=-0.1"])
    with pytest.raises(ValueError, match="GRPOBaselineConfig does not read it"):
        load_config("smoke", ["algorithm=grpo", "beta=0.04"])
    with pytest.raises(ValueError, match="dgrpo_kl_beta"):
        load_config("smoke", ["algorithm=dgrpo", "beta=0.04"])


def test_the_critic_chooser_executes_the_highest_q_reply_ties_to_the_policys_own_nan_never(tiny):
    from types import SimpleNamespace

    from coach_rl.algorithms.coach import CriticChooser

    model, tokenizer = tiny
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=0)
    replies = [[SimpleNamespace(prompt_text=f"state {i}", text=t) for t in ("click 1", "click 2", "back")]
               for i in range(2)]
    q = critic.score([r.prompt_text for g in replies for r in g], [r.text for g in replies for r in g])
    want = [int(torch.argmax(q[0:3])), int(torch.argmax(q[3:6]))]
    assert CriticChooser(critic, 3)(None, replies) == want

    class Fixed:  # a scorer with hand-set scores: ties and NaN
        def __init__(self, values):
            self.values = values

        def score(self, states, actions, batch_size=8):
            assert len(states) == len(actions) == len(self.values)
            return torch.tensor(self.values)

    nan = float("nan")
    chooser = CriticChooser(Fixed([0.5, 0.5, 0.2, nan, 0.1, nan]), 3)
    assert chooser(None, replies) == [0, 1]  # the first of equal scores; a NaN never wins
    assert CriticChooser(Fixed([nan] * 6), 3)(None, replies) == [0, 0]  # all broken: the policy's own sample
    with pytest.raises(ValueError, match="samples"):
        CriticChooser(critic, 1)
