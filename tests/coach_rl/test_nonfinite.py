"""Nothing non-finite kills a run (coach_rl.nonfinite): NaN/inf injected at each point, on tiny real models.

Sampling (a NaN weight in the policy), the critic's Q (a scorer returning NaN/inf, a NaN head weight), the PRM
(scores NaN), the advantages (an overflow), the losses (a NaN hidden state in training only) and the gradients (a
NaN gradient hook): each is caught where it is made, the sample or step skipped and counted in ``nonfinite/*``,
and ``nonfinite_patience`` events in a row stop with an error naming the phase, the iteration and the state.
"""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import pytest
import torch

import android_gym  # noqa: F401  (registers the env ids)
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.actor import ActorSample, ActorUpdater
from coach_rl.algorithms.coach import CoachTrainer
from coach_rl.config import CoachConfig
from coach_rl.critic import Critic, CriticTrainer
from coach_rl.nonfinite import NonFiniteError, NonFiniteLogits, NonFiniteMonitor, check_weights
from coach_rl.policy import NONFINITE_SAMPLE_ERROR, HFPolicy, PolicyRequest
from coach_rl.rewards import RewardPipeline
from coach_rl.rollout import RolloutCollector

from .test_rewards import ExpertPolicy

K = 4
NAN = float("nan")


def _poison(model: torch.nn.Module) -> None:
    """One NaN in the final norm: every logit of every position is NaN."""
    with torch.no_grad():
        model.model.norm.weight[3] = NAN


def _params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same(a: dict, b: dict) -> bool:
    return all(torch.equal(torch.nan_to_num(a[k], nan=7.0), torch.nan_to_num(b[k], nan=7.0)) for k in a)


# -- sampling ---------------------------------------------------------------------------------------------


def test_nan_logits_end_the_sample_marked_failed_instead_of_crashing_generate():
    model, tok = build_tiny_causal_lm(seed=0)
    policy = HFPolicy(model, tok, max_new_tokens=6, record_logprobs=True)
    requests = [PolicyRequest(instruction=f"Open app {i}", ui="<node text='ok'/>", screen_size=(1080, 2400))
                for i in range(3)]
    assert all(o.error != NONFINITE_SAMPLE_ERROR for o in policy.act(requests))
    assert policy.nonfinite_samples == 0
    _poison(model)
    batch = tok(["<|im_start|>user\nhi<|im_end|>\n"], return_tensors="pt")
    with pytest.raises(RuntimeError, match="probability tensor contains either"):  # what killed the H200 run
        model.generate(**batch, do_sample=True, max_new_tokens=3, pad_token_id=tok.pad_token_id)
    with pytest.warns(RuntimeWarning, match="non-finite values in generate at task 'Open app 0'"):
        outputs = policy.act(requests)
    assert [o.error for o in outputs] == [NONFINITE_SAMPLE_ERROR] * 3
    assert all(o.action is None and o.token_logprobs is None and o.num_tokens == 1 for o in outputs)
    assert policy.nonfinite_samples == 3 and policy.nonfinite.counts == {"generate": 3}
    policy.act(requests)
    with pytest.raises(NonFiniteError, match=r"phase 'generate' 3 time\(s\) in a row .*task 'Open app 0'"):
        policy.act(requests)  # the default patience: 3 generate calls in a row where every sample failed


def test_the_logits_guard_flags_only_bad_rows_and_leaves_the_others_alone():
    guard = NonFiniteLogits([5, 9])
    scores = torch.tensor([[0.5, 1.0, -2.0, 0.0, 3.0, 1.0],
                           [NAN, 1.0, 0.0, 0.0, 0.0, 0.0],
                           [-math.inf] * 6,
                           [math.inf, 0.0, 0.0, 0.0, 0.0, 0.0],
                           [-math.inf, 2.0, -math.inf, 0.0, 0.0, 0.0]])
    out = guard(torch.zeros((5, 1), dtype=torch.long), scores.clone())
    assert guard.rows() == [1, 2, 3]
    torch.testing.assert_close(out[[0, 4]], scores[[0, 4]])  # top-p's -inf cuts are legitimate
    assert bool(torch.isfinite(out[1:4]).all()) and out[1:4].argmax(-1).tolist() == [5, 5, 5]


# -- the Coach actor update (CoachTrainer, a real TRL GRPOTrainer) --------------------------------------------


def _trainer(critic, tmp_path, model=None, **overrides) -> CoachTrainer:
    if model is None:
        model, tok = build_tiny_causal_lm(seed=0)
    else:
        tok = build_tiny_causal_lm(seed=0)[1]
    kwargs = dict(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no",
                  per_device_train_batch_size=8, num_generations=K, max_completion_length=6, learning_rate=1e-3,
                  lr_scheduler_type="constant", seed=7, bf16=False, gradient_checkpointing=False)
    kwargs.update(overrides)
    return CoachTrainer(model, critic, CoachConfig(**kwargs), tok)


ROWS = [{"prompt": [{"role": "user", "content": f"Open the app number {i}."}], "state": f"state {i}"}
        for i in range(2)]


def test_a_critic_giving_nan_for_one_state_leaves_that_state_out_and_the_update_goes_on(tmp_path):
    seen = []

    def critic(states, actions):
        seen.append(list(states))
        return [NAN if s == "state 1" else a.count("e") / (1 + len(a)) for s, a in zip(states, actions)]

    trainer = _trainer(critic, tmp_path)
    before = _params(trainer.model)
    advantages = []
    original = trainer._generate_and_score_completions

    def keep(inputs):
        out = original(inputs)
        advantages.append(out["advantages"].clone())
        return out

    trainer._generate_and_score_completions = keep
    with pytest.warns(RuntimeWarning, match="non-finite values in critic_score at state 'state 1'"):
        metrics = trainer.actor_update(ROWS, num_steps=1, log=False)
    assert metrics["nonfinite/critic_score"] == K and metrics["actor/skipped_steps"] == 0
    assert math.isfinite(metrics["actor/loss"]) and metrics["actor/steps"] == 1
    states = seen[0]
    adv = advantages[0]
    bad = torch.tensor([s == "state 1" for s in states])
    assert bool((adv[bad] == 0).all()) and bool((adv[~bad] != 0).any())
    assert not _same(before, _params(trainer.model))  # the other state still trained the policy


def test_a_critic_with_a_nan_head_skips_the_update_then_stops_naming_the_state(tmp_path):
    model, tok = build_tiny_causal_lm(seed=0)
    critic = Critic.from_pretrained_lm(copy.deepcopy(model), tok, seed=1)
    with torch.no_grad():
        next(critic.value_head.parameters()).view(-1)[0] = NAN
    trainer = _trainer(critic, tmp_path, model=model, nonfinite_patience=2)
    before = _params(trainer.model)
    with pytest.warns(RuntimeWarning, match="critic_score"):
        metrics = trainer.actor_update(ROWS, num_steps=1, log=False)
    assert metrics["nonfinite/critic_score"] == 2 * K and metrics["nonfinite/actor_update"] == 1
    assert metrics["actor/skipped_steps"] == 1 and math.isnan(metrics["actor/grad_norm"])
    assert _same(before, _params(trainer.model)) and trainer.state.global_step == 0  # nothing applied
    trainer.nonfinite.iteration = 5
    with pytest.raises(NonFiniteError, match=r"phase 'critic_score' 2 time\(s\) in a row \(iteration 5; last at "
                                             r"state 'state \d'\)"):
        trainer.actor_update(ROWS, num_steps=1, log=False)
    assert _same(before, _params(trainer.model))


def test_an_advantage_overflow_is_caught_where_acloo_makes_it(tmp_path):
    def critic(states, actions):  # finite Q, but Q_i - mean of the others overflows float32 in group "state 0"
        return [3e38 if s == "state 0" and i % K < 2 else (-3e38 if s == "state 0" else 0.1 * i)
                for i, s in enumerate(states)]

    trainer = _trainer(critic, tmp_path)
    with pytest.warns(RuntimeWarning, match="non-finite values in advantage"):
        metrics = trainer.actor_update(ROWS, num_steps=1, log=False)
    assert metrics["nonfinite/advantage"] >= 1 and metrics["actor/skipped_steps"] == 0
    assert math.isfinite(metrics["actor/loss"])


def _nan_in_training(model: torch.nn.Module):
    """NaN hidden states in training mode only: sampling (eval mode) stays finite, the loss does not."""
    return model.model.norm.register_forward_hook(lambda m, i, out: out * NAN if m.training else out)


def test_a_nan_loss_skips_the_optimizer_step_and_counts_it(tmp_path):
    trainer = _trainer(lambda s, a: [len(x) / 10 for x in a], tmp_path, nonfinite_patience=3)
    hook = _nan_in_training(trainer.model)
    before = _params(trainer.model)
    with pytest.warns(RuntimeWarning, match="optimiser step skipped: non-finite loss"):
        metrics = trainer.actor_update(ROWS, num_steps=2, log=False)
    assert metrics["nonfinite/actor_update"] == 2 and metrics["actor/skipped_steps"] == 2
    assert "nonfinite/actor_sample" not in metrics and math.isnan(metrics["actor/loss"])
    assert _same(before, _params(trainer.model)) and not trainer.optimizer.state  # no AdamW moment holds NaN
    hook.remove()
    metrics = trainer.actor_update(ROWS, num_steps=1, log=False)  # healthy again: the streak starts over
    assert metrics["actor/skipped_steps"] == 0 and trainer.nonfinite.streaks["actor_update"] == 0
    assert not _same(before, _params(trainer.model))


def test_a_nan_gradient_with_a_finite_loss_is_skipped_too(tmp_path):
    trainer = _trainer(lambda s, a: [len(x) / 10 for x in a], tmp_path)
    weight = trainer.model.model.layers[0].mlp.up_proj.weight
    hook = weight.register_hook(lambda g: g * NAN)
    before = _params(trainer.model)
    with pytest.warns(RuntimeWarning, match="non-finite gradient norm"):
        metrics = trainer.actor_update(ROWS, num_steps=1, log=False)
    hook.remove()
    assert math.isfinite(metrics["actor/loss"]) and metrics["nonfinite/actor_update"] == 1
    assert _same(before, _params(trainer.model))


def test_a_policy_with_nan_weights_samples_flagged_replies_and_stops_after_patience(tmp_path):
    model, _ = build_tiny_causal_lm(seed=0)
    _poison(model)
    trainer = _trainer(lambda s, a: [0.5 + 0.1 * i for i in range(len(a))], tmp_path, model=model,
                       nonfinite_patience=2)
    with pytest.warns(RuntimeWarning, match="actor_sample"):
        metrics = trainer.actor_update(ROWS, num_steps=1, log=False)
    assert metrics["nonfinite/actor_sample"] == 2 * K and metrics["actor/skipped_steps"] == 1
    with pytest.raises(NonFiniteError, match="phase 'actor_sample'"):
        trainer.actor_update(ROWS, num_steps=1, log=False)


# -- the other updaters ------------------------------------------------------------------------------------


def test_the_critic_update_skips_a_step_with_a_nan_loss():
    model, tok = build_tiny_causal_lm(seed=0)
    critic = Critic.from_pretrained_lm(model, tok, seed=1)
    with torch.no_grad():
        next(critic.value_head.parameters()).view(-1)[0] = NAN
    trainer = CriticTrainer(critic, total_steps=4)
    before = _params(critic)
    with pytest.warns(RuntimeWarning, match="critic step skipped"):
        metrics = trainer.update(["s1", "s2"], ["a", "b"], [1.0, 0.0], q_old=[0.0, 0.0])
    assert metrics["skipped_steps"] == 1 and math.isnan(metrics["loss"]) and trainer.step == 0
    assert trainer.nonfinite.counts == {"critic_update": 1} and _same(before, _params(critic))


def test_the_ppo_actor_updater_skips_a_step_with_a_nan_loss():
    model, tok = build_tiny_causal_lm(seed=0)
    actor = ActorUpdater(model, tok)
    hook = _nan_in_training(model)
    before = _params(model)
    prompt = "<|im_start|>user\nOpen the Clock app.<|im_end|>\n<|im_start|>assistant\n"
    sample = ActorSample(prompt, "Action: open_app(app_name='Clock')", 1.0, old_logps=None)
    with pytest.warns(RuntimeWarning, match="optimiser step skipped"):
        metrics = actor.update([sample])
    hook.remove()
    assert metrics["skipped_steps"] == 1 and actor.step == 0 and _same(before, _params(model))
    metrics = actor.update([sample])
    assert metrics["skipped_steps"] == 0 and actor.step == 1


def test_ppo_with_a_nan_value_network_skips_its_updates_then_stops():
    from coach_rl.algorithms.ppo import PPOBaseline
    from coach_rl.records import StepRecord

    model, tok = build_tiny_causal_lm(seed=0)
    value = Critic.from_pretrained_lm(copy.deepcopy(model), tok, seed=4)
    with torch.no_grad():
        next(value.value_head.parameters()).view(-1)[0] = NAN
    ppo = PPOBaseline(ActorUpdater(model, tok, lr=1e-3), CriticTrainer(value, total_steps=10))
    ppo.actor.nonfinite = NonFiniteMonitor(patience=2)
    prompt = "<|im_start|>user\nOpen the Clock app.<|im_end|>\n<|im_start|>assistant\n"
    batch = [StepRecord(episode_id="e", step_index=t, num_steps=2, task="Clock", group="Clock:1", prompt=[],
                        prompt_text=prompt + str(t), response="Action: press_home()", outcome_reward=1.0, return_t=1.0,
                        success=1.0) for t in range(2)]
    before = _params(model)
    with pytest.warns(RuntimeWarning, match="non-finite values in value"):
        metrics = ppo.update(batch)  # before: the value update refused the NaN V_old with a ValueError
    assert metrics == {"actor/skipped_steps": 1.0, "value/skipped_steps": 1.0, "ppo/nonfinite_steps": 2.0}
    assert _same(before, _params(model)) and ppo.actor.nonfinite.counts == {"value": 2}
    with pytest.raises(NonFiniteError, match=r"phase 'value' 2 time\(s\) in a row"):
        ppo.update(batch)


def test_distrl_with_a_nan_value_network_leaves_its_trajectories_out():
    import numpy as np

    from coach_rl.algorithms.base import UpdateContext

    from .test_distrl import _batches, _learner

    model, tok = build_tiny_causal_lm(seed=0)
    learner = _learner(model, tok, replay_trajectories=0)
    with torch.no_grad():
        next(learner.value_critic.value_head.parameters()).view(-1)[0] = NAN
    first, _ = _batches(learner)
    before = _params(learner.actor.model)
    with pytest.warns(RuntimeWarning, match="non-finite values in value"):
        metrics = learner.update(first, UpdateContext(rng=np.random.default_rng(0), iteration=1))
    assert metrics["actor/skipped_steps"] == 1.0 and metrics["distrl/nonfinite_steps"] == 5.0
    assert _same(before, _params(learner.actor.model)) and learner.actor.nonfinite.counts == {"value": 5}


def test_a_prm_giving_nan_scores_is_counted_and_its_steps_missing():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=3)

    def prm(trajectory):
        return [NAN if i == 0 else 0.8 for i in range(len(trajectory.steps))]

    rewards = RewardPipeline(prm)
    with pytest.warns(RuntimeWarning, match="non-finite values in prm"):
        batch = RolloutCollector([env], ExpertPolicy(env), rewards=rewards).collect(1, seeds=[0])
    records = batch.records
    assert records[0].process_reward_missing and not any(r.process_reward_missing for r in records[1:])
    assert all(math.isfinite(r.return_t) for r in records)
    assert rewards.stats.prm_nonfinite == 1 and rewards.nonfinite.counts == {"prm": 1}
    assert rewards.stats.as_dict()["rewards/prm_nonfinite"] == 1.0


# -- the monitor and checkpoints -----------------------------------------------------------------------------


def test_the_monitor_counts_streaks_per_phase_and_names_what_it_stops_on():
    monitor = NonFiniteMonitor(patience=2, iteration=lambda: 4)
    with pytest.warns(RuntimeWarning):
        monitor.bad("critic_update", "state 'A'", "loss nan")
    monitor.ok("critic_update")
    monitor.bad("critic_update", "state 'B'", "loss nan")
    monitor.bad("generate", "task 'x'", "1 of 4", count=1, streak=False)
    assert monitor.metrics() == {"nonfinite/critic_update": 2.0, "nonfinite/generate": 1.0}
    with pytest.raises(NonFiniteError) as err:
        monitor.bad("critic_update", "state 'C'", "loss inf")
    assert (err.value.phase, err.value.iteration, err.value.count) == ("critic_update", 4, 2)
    assert "state 'C'" in str(err.value) and "iteration 4" in str(err.value)
    never = NonFiniteMonitor(patience=0)
    for _ in range(10):
        never.bad("actor_update", "s", "nan")
    assert never.counts["actor_update"] == 10


def test_weights_with_nan_are_never_checkpointed():
    model, _ = build_tiny_causal_lm(seed=0)
    check_weights([model, None], 3)
    _poison(model)
    with pytest.raises(NonFiniteError, match=r"phase 'checkpoint'.*iteration 3.*model\.norm\.weight"):
        check_weights([model], 3)


def test_nonfinite_patience_is_a_config_field():
    assert CoachConfig(output_dir="/tmp/x", use_cpu=True, report_to="none").nonfinite_patience == 3
    with pytest.raises(ValueError, match="nonfinite_patience"):
        CoachConfig(output_dir="/tmp/x", use_cpu=True, report_to="none", nonfinite_patience=-1)


# -- the training loop ------------------------------------------------------------------------------------------


def _loop(out, *overrides):
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    config = load_config("smoke", [f"output_dir={out}", "eval_instances_per_task=0", "sft_max_steps=2",
                                   "nonfinite_patience=2", *overrides])
    loop = TrainingLoop(config, progress=False, echo=lambda _: None)
    loop.setup()
    return loop


def _finite_policy(checkpoint) -> bool:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(checkpoint / "policy")
    return all(bool(torch.isfinite(p).all()) for p in model.parameters())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_run_whose_policy_turns_nan_stops_naming_iteration_and_task_and_keeps_its_checkpoint(tmp_path):
    loop = _loop(tmp_path / "run", "total_iterations=3", "checkpoint_every=1")
    try:
        first = loop.run_iteration()
        assert not any(k.startswith("nonfinite/") for k in first)
        good = loop.run.latest_checkpoint()
        assert good.name.endswith("1") and _finite_policy(good)
        _poison(loop.model)  # as a bad update (or bf16 overflow) would leave it
        with pytest.raises(NonFiniteError, match=r"phase 'generate' 2 time\(s\) in a row \(iteration 2; last at "
                                                 r"task '.+'\)"):
            loop.run_iteration()
        with pytest.raises(NonFiniteError, match=r"phase 'checkpoint'.*iteration 1.*norm\.weight"):
            loop.save_checkpoint()  # the NaN model is never written over the last good one
        assert loop.run.latest_checkpoint() == good and _finite_policy(good)
    finally:
        loop.close()
    resumed = _loop(tmp_path / "run", "total_iterations=3", "checkpoint_every=1")
    try:
        assert resumed.resumed_from == 1
        assert all(bool(torch.isfinite(p).all()) for p in resumed.model.parameters())
    finally:
        resumed.close()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_run_whose_critic_turns_nan_skips_and_counts_its_updates_then_stops(tmp_path):
    loop = _loop(tmp_path / "run", "total_iterations=4", "checkpoint_every=0")
    try:
        loop.run_iteration()
        policy_before = _params(loop.model)
        with torch.no_grad():
            next(loop.critic.value_head.parameters()).view(-1)[0] = NAN
        assert loop.nonfinite.patience == 2
        loop.nonfinite.patience = 0  # this iteration: only skip and count (its critic update takes several steps)
        second = loop.run_iteration()  # survives: every update that would read the NaN critic is skipped
        loop.nonfinite.patience = 2
        assert second["nonfinite/critic_update"] >= 1 and second["critic/skipped_steps"] >= 1
        assert second["nonfinite/critic_score"] == 2 * second["actor/states"]  # K = 2 actions per state
        assert second["nonfinite/actor_update"] == second["actor/skipped_steps"] >= 1
        assert _same(policy_before, _params(loop.model))  # the policy learned nothing from NaN advantages
        with pytest.raises(NonFiniteError, match=r"phase 'critic_update' \d+ time\(s\) in a row \(iteration 3; "
                                                 r"last at state '"):
            loop.run_iteration()
    finally:
        loop.close()
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert any('"nonfinite/critic_update"' in line for line in lines)  # the counts reached metrics.jsonl
