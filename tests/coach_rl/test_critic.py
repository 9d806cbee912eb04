"""The critic Q(s, a) on a tiny locally built Qwen2: pooling, persistence, pre-training, clipped updates, resume."""

from __future__ import annotations

import copy
import random

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.critic import (
    CRITIC_CONFIG_NAME,
    CRITIC_WEIGHTS_NAME,
    Critic,
    CriticTrainer,
    balanced_batches,
    critic_pretrain,
    critic_update,
    last_token_index,
    paired_batches,
)

STATES = [
    "Instruction: Open the Clock app.\nScreen: [n1] TextView ; Clock ;;: bounds: [0,0][200,200]",
    "short",
    "Instruction: Add a contact named Ana.\nScreen: " + "[n2] Button ;click ; Add ;;: bounds: [1,2][3,4]\n" * 6,
]
ACTIONS = ["Thought: open it\nAction: open_app(app_name='Clock')", "press_home()", "Action: click(start_box='(2,3)')"]


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_causal_lm(seed=0)


@pytest.fixture()
def critic(tiny):
    model, tokenizer = tiny
    return Critic.from_pretrained_lm(model, tokenizer, seed=1)


def test_last_token_index_left_right_and_no_padding():
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 0, 0]])
    assert last_token_index(mask).tolist() == [3, 2, 3, 1]
    with pytest.raises(ValueError, match="attend to no token"):
        last_token_index(torch.tensor([[1, 1], [0, 0]]))


def _unpadded_values(critic: Critic) -> torch.Tensor:
    """Q of each pair alone: backbone on the bare token ids, head on the very last position."""
    out = []
    with torch.no_grad():
        for s, a in zip(STATES, ACTIONS):
            ids = torch.tensor([critic.tokenize_pair(s, a)])
            hidden = critic.backbone(input_ids=ids).last_hidden_state
            out.append(critic.value_head(hidden[0, -1]).squeeze(-1))
    return torch.stack(out)


@pytest.mark.parametrize("side", ["left", "right"])
def test_pooling_reads_the_last_real_token_under_padding(critic, side):
    expected = _unpadded_values(critic)
    batch = critic.encode(STATES, ACTIONS, padding_side=side)
    assert (batch["attention_mask"] == 0).any()  # the batch really is padded
    with torch.no_grad():
        got = critic(**batch)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    if side == "right":  # reading the last column would pool a padding token for the shorter rows
        with torch.no_grad():
            hidden = critic.backbone(**batch).last_hidden_state
            naive = critic.value_head(hidden[:, -1]).squeeze(-1)
        assert not torch.allclose(naive, expected, atol=1e-4)


def test_score_matches_forward_in_input_order_and_eos_is_appended(critic):
    scores = critic.score(STATES, ACTIONS, batch_size=2)
    torch.testing.assert_close(scores, _unpadded_values(critic), atol=1e-5, rtol=1e-5)
    assert critic.tokenize_pair("a", "b")[-1] == critic.tokenizer.eos_token_id
    assert critic.score([], []).shape == (0,)


def test_truncation_keeps_the_action_end(tiny):
    model, tokenizer = tiny
    critic = Critic.from_pretrained_lm(model, tokenizer, max_length=8)
    ids = critic.tokenize_pair("a long state " * 20, "press_home()")
    assert len(ids) == 8
    full = Critic.from_pretrained_lm(model, tokenizer).tokenize_pair("a long state " * 20, "press_home()")
    assert ids == full[-8:]


def test_bad_inputs_are_named(critic):
    with pytest.raises(ValueError, match="one entry per pair"):
        critic.score(["a", "b"], ["x"])
    with pytest.raises(TypeError, match="states"):
        critic.score("abc", "x")
    with pytest.raises(TypeError, match=r"actions\[1\]"):
        critic.score(["a", "b"], ["x", 3])


def test_save_load_round_trip_gives_identical_scores(critic, tmp_path):
    before = critic.score(STATES, ACTIONS)
    critic.save(tmp_path / "critic")
    assert (tmp_path / "critic" / CRITIC_CONFIG_NAME).is_file()
    assert (tmp_path / "critic" / CRITIC_WEIGHTS_NAME).is_file()
    loaded = Critic.load(tmp_path / "critic")
    assert torch.equal(loaded.score(STATES, ACTIONS), before)
    with pytest.raises(FileNotFoundError, match=CRITIC_CONFIG_NAME):
        Critic.load(tmp_path)


def test_from_checkpoint_path_equals_from_model_and_copies_weights(tiny, tmp_path):
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "policy")
    tokenizer.save_pretrained(tmp_path / "policy")
    from_path = Critic.from_pretrained_lm(tmp_path / "policy", seed=5)
    from_model = Critic.from_pretrained_lm(model, tokenizer, seed=5)
    assert type(from_path.backbone).__name__ == "Qwen2Model"
    torch.testing.assert_close(from_path.score(STATES, ACTIONS), from_model.score(STATES, ACTIONS))
    # Training the critic never touches the policy: the backbone is a copy.
    policy_embed = model.get_input_embeddings().weight.detach().clone()
    trainer = CriticTrainer(from_model, total_steps=1, learning_rate=1e-2, warmup_ratio=0.0)
    trainer.regress(STATES, ACTIONS, [1.0, 0.0, 1.0])
    assert torch.equal(model.get_input_embeddings().weight, policy_embed)
    assert not torch.equal(from_model.backbone.get_input_embeddings().weight, policy_embed)
    with pytest.raises(ValueError, match="tokenizer"):
        Critic.from_pretrained_lm(model)


def _toy_examples(seed: int, n: int) -> list[tuple[str, str, int]]:
    """Positive: the agent opens the app the instruction names; negative: it goes home instead."""
    rng = random.Random(seed)
    apps = ["Clock", "Contacts", "Settings", "Markor", "Files", "Chrome", "Camera", "Tasks"]
    out = []
    for i in range(n):
        app = rng.choice(apps)
        state = f"Instruction: Open {app} and check it.\nScreen: launcher with {rng.randint(3, 30)} icons"
        if i % 2 == 0:
            out.append((state, f"Thought: I open {app}.\nAction: open_app(app_name='{app}')", 1))
        else:
            out.append((state, "Thought: I go back home.\nAction: press_home()", 0))
    return out


def test_pretraining_separates_positive_from_negative_examples(tiny):
    model, tokenizer = tiny
    train, held_out = _toy_examples(0, 32), _toy_examples(1, 16)
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=0)
    start = critic.score([s for s, _, _ in held_out], [a for _, a, _ in held_out])
    assert start.abs().max() < 0.5  # an untrained head says ~0 for everything: chance level
    result = critic_pretrain(critic, train, learning_rate=1e-3, epochs=4, batch_size=8, max_steps=16,
                             warmup_ratio=0.1, seed=0, eval_examples=held_out)
    assert result.steps == 16 and len(result.losses) == 16
    assert result.accuracy >= 0.9
    assert result.eval_accuracy is not None and result.eval_accuracy >= 0.9
    q = critic.score([s for s, _, _ in held_out], [a for _, a, _ in held_out])
    pos = q[[i for i, (_, _, y) in enumerate(held_out) if y == 1]]
    neg = q[[i for i, (_, _, y) in enumerate(held_out) if y == 0]]
    assert pos.mean() - neg.mean() > 0.5
    assert 0.5 < pos.mean() < 1.5 and -0.5 < neg.mean() < 0.5  # MSE to {0,1}: Q stays on the returns' scale


def test_pretraining_is_seeded(tiny):
    model, tokenizer = tiny
    train = _toy_examples(0, 16)
    runs = []
    for _ in range(2):
        critic = Critic.from_pretrained_lm(model, tokenizer, seed=0)
        runs.append(critic_pretrain(critic, train, learning_rate=1e-3, batch_size=4, max_steps=3, seed=4).losses)
    assert runs[0] == runs[1] and len(runs[0]) == 3


def test_pretrain_rejects_non_binary_labels(critic):
    with pytest.raises(ValueError, match="0 or 1"):
        critic_pretrain(critic, [("s", "a", 0.5)])
    with pytest.raises(ValueError, match="empty"):
        critic_pretrain(critic, [])


def test_clipped_update_moves_q_towards_the_return(critic):
    q_old = critic.score(STATES, ACTIONS)
    returns = q_old + 0.3  # inside the clip range
    trainer = CriticTrainer(critic, total_steps=10, learning_rate=1e-4, warmup_ratio=0.0)
    metrics = critic_update(trainer, list(zip(STATES, ACTIONS, returns.tolist())))
    q_new = critic.score(STATES, ACTIONS)
    assert ((q_new - returns).abs() < (q_old - returns).abs()).all()
    assert metrics["value_clip_fraction"] == 0.0 and metrics["steps"] == 1.0
    assert metrics["loss"] == pytest.approx(0.5 * 0.3**2, rel=1e-3)  # Q_old == Q at the first step


def test_fully_clipped_batch_leaves_the_critic_unchanged(critic):
    q = critic.score(STATES, ACTIONS)
    q_old = q - 1.0          # Q already moved 1.0 > clip 0.5 above Q_old ...
    returns = q + 1.0        # ... and the target lies further up: the clipped term is the max, gradient 0
    params = [p.detach().clone() for p in critic.parameters()]
    trainer = CriticTrainer(critic, total_steps=5, learning_rate=1e-2, warmup_ratio=0.0, clip_range=0.5)
    metrics = trainer.update(STATES, ACTIONS, returns, q_old)
    assert metrics["value_clip_fraction"] == 1.0
    assert metrics["grad_norm"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(params, critic.parameters()))


def test_clip_stops_the_gradient_once_q_leaves_the_trust_region(tiny):
    model, tokenizer = tiny

    def run(clip_range: float) -> tuple[torch.Tensor, list[dict[str, float]]]:
        critic = Critic.from_pretrained_lm(model, tokenizer, seed=3)
        q_old = critic.score(STATES, ACTIONS)
        trainer = CriticTrainer(critic, total_steps=30, learning_rate=1e-3, warmup_ratio=0.0,
                                clip_range=clip_range)
        # Several optimiser steps against the same Q_old (as PPO epochs over one batch do).
        history = [trainer.update(STATES, ACTIONS, q_old + 2.0, q_old) for _ in range(6)]
        return critic.score(STATES, ACTIONS) - q_old, history

    moved, history = run(0.5)
    free_moved, free_history = run(100.0)
    assert history[0]["value_clip_fraction"] == 0.0 and history[0]["grad_norm"] > 0
    clipped_steps = [h for h in history if h["value_clip_fraction"] == 1.0]
    assert clipped_steps, "Q never left Q_old +- 0.5 although the target is 2.0 away"
    assert all(h["grad_norm"] == 0.0 for h in clipped_steps)  # beyond the clip: no gradient at all
    assert all(h["value_clip_fraction"] == 0.0 for h in free_history)
    assert (moved > 0.5).all()  # past the clip boundary (Adam's momentum carries it a little further) ...
    assert (free_moved > moved + 0.05).all()  # ... but the unclipped critic keeps going


def test_resume_from_state_dict_continues_identically(tiny):
    model, tokenizer = tiny
    states = STATES * 2
    actions = ACTIONS * 2
    returns = [1.0, 0.0, 1.2, 0.5, 0.2, 0.9]

    def trainer_for(critic: Critic) -> CriticTrainer:
        return CriticTrainer(critic, total_steps=12, learning_rate=2e-3, warmup_ratio=0.3, seed=7)

    a = trainer_for(Critic.from_pretrained_lm(model, tokenizer, seed=1))
    for _ in range(2):
        a.update(states, actions, returns, mini_batch_size=4, epochs=1)
    saved = copy.deepcopy(a.state_dict())
    for _ in range(2):
        a.update(states, actions, returns, mini_batch_size=4, epochs=1)

    b = trainer_for(Critic.from_pretrained_lm(model, tokenizer, seed=99))  # different head init, overwritten
    b.load_state_dict(saved)
    assert b.step == 4
    for _ in range(2):
        b.update(states, actions, returns, mini_batch_size=4, epochs=1)
    assert b.step == a.step == 8
    for pa_, pb in zip(a.critic.parameters(), b.critic.parameters()):
        assert torch.equal(pa_, pb)
    assert a.optimizer.param_groups[0]["lr"] == b.optimizer.param_groups[0]["lr"]
    other = CriticTrainer(Critic.from_pretrained_lm(model, tokenizer), total_steps=99)
    with pytest.raises(ValueError, match="total_steps"):
        other.load_state_dict(saved)


def test_warmup_schedule_and_config_mapping(critic):
    from coach_rl.config import CriticArguments

    args = CriticArguments()
    trainer = CriticTrainer.from_config(critic, args, total_steps=20)
    assert trainer.learning_rate == args.critic_learning_rate == 1e-5
    assert trainer.clip_range == 0.5 and trainer.warmup_steps == 2
    lrs = []
    for _ in range(4):
        lrs.append(trainer.optimizer.param_groups[0]["lr"])
        trainer.regress(STATES, ACTIONS, [0.0, 1.0, 0.0])
    assert lrs[0] == 0.0 and lrs[1] == pytest.approx(5e-6) and lrs[2] == lrs[3] == pytest.approx(1e-5)


def test_critic_update_validates_its_batch(critic):
    trainer = CriticTrainer(critic, total_steps=1)
    with pytest.raises(ValueError, match="triple"):
        critic_update(trainer, [("s", "a")])
    with pytest.raises(ValueError, match="non-finite"):
        critic_update(trainer, [("s", "a", float("nan"))])
    with pytest.raises(TypeError, match="CriticTrainer"):
        critic_update(critic, [("s", "a", 1.0)])  # type: ignore[arg-type]


def test_bf16_backbone_round_trip_and_float32_head(tiny, tmp_path):
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "policy")
    tokenizer.save_pretrained(tmp_path / "policy")
    critic = Critic.from_pretrained_lm(tmp_path / "policy", torch_dtype=torch.bfloat16)
    assert next(critic.backbone.parameters()).dtype == torch.bfloat16
    assert critic.value_head.weight.dtype == torch.float32
    scores = critic.score(STATES, ACTIONS)
    assert scores.dtype == torch.float32
    critic.save(tmp_path / "critic")
    loaded = Critic.load(tmp_path / "critic")
    assert next(loaded.backbone.parameters()).dtype == torch.bfloat16
    assert torch.equal(loaded.score(STATES, ACTIONS), scores)
    with pytest.raises(ValueError, match="torch_dtype"):
        Critic.from_pretrained_lm(model, tokenizer, torch_dtype=torch.bfloat16)


# -- beyond the paper: critic_pretrain_balanced and critic_action_targets ----------------------------------------

SCREEN_STATE = (
    "<|im_start|>user\n## Task\nTurn bluetooth on.\n\n## Previous actions\nNone yet.\n\n## Screen\n"
    "[0] TextView 'Settings'\n[3] LinearLayout click\n[4] TextView 'Network & internet'\n"
    "[5] TextView 'Mobile, Wi-Fi, hotspot'\n[6] LinearLayout click\n[7] TextView 'Connected devices'\n"
    "[9] Switch 'Bluetooth' checked click\n<|im_end|>\n<|im_start|>assistant\n"
)


def test_balanced_batches_hold_half_of_each_label_and_are_seeded():
    labels = [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    batches = balanced_batches(labels, 5, 20, torch.Generator().manual_seed(3))
    assert len(batches) == 20
    for batch in batches:
        assert [labels[i] for i in batch] == [1, 1, 0, 0, 0]  # 2 of label 1 (5 // 2), then 3 of label 0
    assert batches == balanced_batches(labels, 5, 20, torch.Generator().manual_seed(3))
    with pytest.raises(ValueError, match="both labels: 0 positive and 3 negative"):
        balanced_batches([0, 0, 0], 4, 1, torch.Generator())


def test_paired_batches_pair_each_correct_action_with_a_wrong_one_of_its_state():
    states = ["a", "a", "a", "b", "b", "c", "c"]
    labels = [1, 0, 0, 1, 0, 0, 0]  # state c has no correct action: never drawn
    batches = paired_batches(states, labels, 5, 30, torch.Generator().manual_seed(1))
    assert len(batches) == 30 and all(len(b) == 5 for b in batches)
    for batch in batches:
        for pos, neg in zip(batch[0:4:2], batch[1:4:2]):
            assert labels[pos] == 1 and labels[neg] == 0 and states[pos] == states[neg]
        assert labels[batch[4]] == 0 and states[batch[4]] in ("a", "b")  # odd size: one more negative
    drawn = {i for b in batches for i in b}
    assert drawn == {0, 1, 2, 3, 4}  # every pairable example is reachable, state c's never
    assert batches == paired_batches(states, labels, 5, 30, torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="none of the 2 states has both"):
        paired_batches(["a", "b"], [1, 0], 4, 1, torch.Generator())
    with pytest.raises(ValueError, match="batch_size >= 2"):
        paired_batches(states, labels, 1, 1, torch.Generator())


def test_paired_pretraining_ranks_the_actions_of_a_state(tiny):
    """critic_pretrain(paired=True) trains on (correct, wrong) pairs of one state and learns to order them."""
    model, tokenizer = tiny

    def pairs(seed: int, n: int) -> list[tuple[str, str, int]]:
        out = []
        for state, action, label in _toy_examples(seed, 2 * n):
            if label == 1:
                out += [(state, action, 1), (state, "Thought: I go back home.\nAction: press_home()", 0)]
        return out

    train, held_out = pairs(0, 16), pairs(1, 8)
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=0)
    result = critic_pretrain(critic, train, learning_rate=1e-3, epochs=3, batch_size=8, max_steps=12, seed=0,
                             paired=True)
    assert result.steps == 12 and len(result.losses) == 12
    q = critic.score([s for s, _, _ in held_out], [a for _, a, _ in held_out])
    assert bool((q[0::2] > q[1::2]).all())  # on unseen states the correct action of each state scores higher


def test_balanced_pretraining_leaves_the_label_prior(tiny):
    """One positive in eight: plain batches mostly see negatives; balanced ones see both equally often."""
    model, tokenizer = tiny
    examples = [e for e in _toy_examples(0, 64) if e[2] == 0][:28] + [e for e in _toy_examples(0, 64) if e[2] == 1][:4]
    result = {}
    for balanced in (False, True):
        critic = Critic.from_pretrained_lm(model, tokenizer, seed=0)
        critic_pretrain(critic, examples, learning_rate=1e-3, batch_size=8, max_steps=12, seed=0, balanced=balanced)
        q = critic.score([s for s, _, _ in examples], [a for _, a, _ in examples])
        result[balanced] = (float(q[-4:].mean()), float(q[:-4].mean()))
    (pos_plain, neg_plain), (pos_balanced, neg_balanced) = result[False], result[True]
    assert pos_balanced > pos_plain + 0.3  # the rare correct actions are no longer pulled to the prior
    assert pos_balanced - neg_balanced > 2 * (pos_plain - neg_plain) + 0.1  # (seeded: 0.26 vs 0.06)


def test_action_targets_name_the_element_an_index_points_at(tiny):
    model, tokenizer = tiny
    plain = Critic.from_pretrained_lm(model, tokenizer, seed=0)
    targets = Critic.from_pretrained_lm(model, tokenizer, seed=0, action_targets=True)
    click = '{"action_type": "click", "index": 4}'
    assert plain.action_text(SCREEN_STATE, click) == click
    assert targets.action_text(SCREEN_STATE, click) == click + " on TextView 'Network & internet'"
    # a container without a label of its own is named by the labels of the lines after it (its children), up to
    # the next actionable line: an unlabelled one is the next row, a labelled one may be a switch inside the row
    assert targets.action_text(SCREEN_STATE, '{"action_type": "click", "index": 3}').endswith(
        "on LinearLayout click 'Network & internet' 'Mobile, Wi-Fi, hotspot'")
    assert targets.action_text(SCREEN_STATE, '{"action_type": "click", "index": 6}').endswith(
        "on LinearLayout click 'Connected devices' 'Bluetooth'")
    assert targets.action_text(SCREEN_STATE, '{"action_type": "click", "index": 9}').endswith(
        "on Switch 'Bluetooth' checked click")
    for other in ('{"action_type": "status", "goal_status": "complete"}', '{"action_type": "click", "index": 8}',
                  "not json"):
        assert targets.action_text(SCREEN_STATE, other) == other  # no index, or no such line: unchanged
    assert targets.tokenize_pair(SCREEN_STATE, click) != plain.tokenize_pair(SCREEN_STATE, click)
    assert not torch.equal(targets.score([SCREEN_STATE], [click]), plain.score([SCREEN_STATE], [click]))


def test_action_targets_survive_save_and_load(tiny, tmp_path):
    model, tokenizer = tiny
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=0, action_targets=True)
    loaded = Critic.load(critic.save(tmp_path / "critic"))
    assert loaded.action_targets is True
    click = '{"action_type": "click", "index": 7}'
    assert torch.equal(loaded.score([SCREEN_STATE], [click]), critic.score([SCREEN_STATE], [click]))
    with pytest.raises(TypeError, match="action_targets must be True or False"):
        Critic.from_pretrained_lm(model, tokenizer, action_targets="yes")


def test_other_goal_answers_reaim_indices_at_the_same_element_of_this_screen():
    """critic_pretrain_screen_negatives: what other goals answer on a shared screen, as given on THIS screen."""
    from coach_rl.critic_data import other_goal_answers

    def state(task: str, first: str | None) -> str:  # the same Settings page; a line at the top shifts the numbers
        lines = [first] if first else []
        lines += ["TextView 'Settings'", "LinearLayout click", "TextView 'Network & internet'", "LinearLayout click",
                  "TextView 'Display'"]
        screen = "".join(f"[{i}] {line}\n" for i, line in enumerate(lines))
        return f"<|im_start|>user\n## Task\n{task}\n\n## Screen\n{screen}<|im_end|>\n<|im_start|>assistant\n"

    wifi = state("Turn wifi off.", "TextView '3:34'")
    dark = state("Turn on the dark theme.", "ImageView 'Wifi signal full.'")
    home = ("<|im_start|>user\n## Task\nOpen the clock app.\n\n## Screen\n[0] TextView 'Clock' click\n"
            "[1] TextView 'Phone' click\n<|im_end|>\n<|im_start|>assistant\n")
    click = '{{"action_type": "click", "index": {}}}'
    states = [wifi, dark, state("Turn off the dark theme.", None), home]
    answers = [click.format(2), click.format(4), click.format(3),
               '{"action_type": "open_app", "app_name": "Clock"}']
    out = other_goal_answers(states, answers)
    # wifi's screen: dark's 'Display' row (4 there) is 4 here; the third state's 'Display' row (3 there, one line
    # fewer) is 4 here as well, so it is not repeated; the home screen's open_app comes from a screen unlike this one
    assert out[0] == [click.format(4)]
    assert out[1] == [click.format(2)]  # wifi's 'Network & internet' row; the third's 'Display' is dark's own answer
    assert out[2] == [click.format(1)]  # wifi's row, one line up here
    assert out[3] == []  # no element of the Settings page on the home screen, and no similar screen
