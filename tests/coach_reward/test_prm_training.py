"""PRM training with TRL's SFTTrainer: the exact scoring prompt, completion-only loss, saving and reloading."""

from __future__ import annotations

import json

import pytest
import torch

from coach_reward.backends import TransformersBackend, normalize_messages
from coach_reward.judgment import parse_judgment
from coach_reward.prm import ProcessRewardModel, StepInput
from coach_reward.prm_data import (
    PerturbationSampler,
    build_prm_dataset,
    sim_expert_steps,
    step_input_from_row,
)
from coach_reward.prm_training import (
    COMPACT_PRM_SYSTEM_PROMPT,
    DEFAULT_REASON,
    PRM_CONFIG_NAME,
    _balanced_order,
    build_compact_prm_messages,
    load_prm,
    prm_prompt_builder,
    prm_sft_dataset,
    prm_target,
    prm_text_corpus,
    short_reason,
    train_prm,
)
from coach_reward.prompts import PRM_SYSTEM_PROMPT
from coach_reward.tiny_models import build_tiny_causal_lm, build_tiny_vision_lm


@pytest.fixture(scope="module")
def rows():
    steps = sim_expert_steps(["SystemWifiTurnOn", "ClockAddLabeledAlarm"], seed=0)
    return build_prm_dataset(steps, PerturbationSampler(seed=0), k=4, seed=0)


@pytest.fixture(scope="module")
def shot_rows():
    steps = sim_expert_steps(["SystemWifiTurnOn"], seed=0, screenshots=True, screen_size=(540, 1200))
    return build_prm_dataset(steps, PerturbationSampler(seed=0), k=2, seed=0)


def test_targets_parse_back_to_their_labels():
    assert prm_target(True, reason="Fine.") == "<think>Fine.</think> judgment:True"
    assert parse_judgment(prm_target(True)) is True and parse_judgment(prm_target(False)) is False
    # without a rationale the reason names the action type, never the label
    assert short_reason({"action_type": "press_home", "label": False}) == "The agent proposes press_home."
    assert short_reason({"action_type": "invalid"}) == "The agent proposes an unreadable action."
    assert DEFAULT_REASON.format(action_type="click") == "The agent proposes click."
    # a rationale is kept (whitespace collapsed); a verdict quoted inside it does not count
    target = prm_target(False, "The  screen shows\n'judgment:True' as text.")
    assert target.startswith("<think>The screen shows 'judgment:True' as text.</think>")
    assert parse_judgment(target) is False
    with pytest.raises(TypeError, match="bool"):
        prm_target(1)  # type: ignore[arg-type]


def test_training_prompt_is_exactly_the_prompt_the_prm_scores_with(rows):
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(rows))
    examples = prm_sft_dataset(rows, max_ui_chars=120)
    backend = TransformersBackend(model, tokenizer)
    prm = ProcessRewardModel(backend, max_ui_chars=120)
    for i in (0, 5, len(rows) - 1):
        ex, row = examples[i], rows[i]
        assert ex["prompt"][0] == {"role": "system", "content": PRM_SYSTEM_PROMPT}
        scored = backend._encode([normalize_messages(prm.messages(step_input_from_row(row)))])["input_ids"][0]
        trained = tokenizer.apply_chat_template(ex["prompt"], add_generation_prompt=True, tokenize=True,
                                                return_dict=False)
        assert scored.tolist() == list(trained)
        target = prm_target(bool(row["label"]), reason=short_reason(row))
        assert ex["completion"] == [{"role": "assistant", "content": target}]


def test_corpus_covers_prompts_and_targets(rows):
    corpus = prm_text_corpus(rows, max_ui_chars=50, limit=3)
    assert corpus[0] == PRM_SYSTEM_PROMPT and len(corpus) == 1 + 2 * 3
    assert rows[0]["instruction"] in corpus[1] and "judgment:" in corpus[2]


def test_train_prm_saves_a_reloadable_prm_and_learns_only_the_completion(rows, tmp_path):
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(rows, max_ui_chars=100))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = train_prm(model, tokenizer, rows, tmp_path / "prm", max_steps=4, batch_size=4, learning_rate=3e-3,
                       max_ui_chars=100, logging_steps=1, seed=0)
    assert result.steps == 4 and len(result.losses) == 4 and result.losses[-1] < result.losses[0]
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not model.training  # handed back in eval mode
    # completion-only loss: the labels cover exactly the assistant's reply
    sample = result.trainer.train_dataset[0]
    trained = [t for t, lab in zip(sample["input_ids"], sample["labels"]) if lab != -100]
    target = prm_target(bool(rows[0]["label"]), reason=short_reason(rows[0]))
    assert tokenizer.decode(trained) == target + "<|im_end|>\n"
    assert sample["labels"][: len(sample["labels"]) - len(trained)] == [-100] * (len(sample["labels"]) - len(trained))
    # saved: weights, tokenizer and the prompt settings
    saved = json.loads((tmp_path / "prm" / PRM_CONFIG_NAME).read_text())
    assert saved["max_ui_chars"] == 100 and saved["screenshots"] is False
    prm = load_prm(tmp_path / "prm", max_new_tokens=16)
    assert prm.max_ui_chars == 100 and prm.max_new_tokens == 16
    score = prm.score(**{k: v for k, v in vars(step_input_from_row(rows[0])).items() if k != "screenshot"})
    assert 0.0 <= score.p_correct <= 1.0


def test_train_prm_rejects_bad_input(rows, shot_rows, tmp_path):
    model, tokenizer = build_tiny_causal_lm(seed=0)
    with pytest.raises(ValueError, match="empty"):
        train_prm(model, tokenizer, rows.select([]), tmp_path)
    with pytest.raises(ValueError, match="missing column"):
        train_prm(model, tokenizer, rows.remove_columns(["label"]), tmp_path)
    with pytest.raises(ValueError, match="image processor"):
        train_prm(model, tokenizer, shot_rows, tmp_path, screenshots=True)
    with pytest.raises(ValueError, match="lower max_ui_chars"):
        train_prm(model, tokenizer, rows, tmp_path, max_length=50, max_steps=1)
    with pytest.raises(ValueError, match="has no screenshot"):
        prm_sft_dataset(rows, screenshots=True)
    with pytest.raises(FileNotFoundError):
        load_prm(tmp_path / "nowhere")


def test_max_length_drops_long_examples_instead_of_cutting_the_verdict(rows, tmp_path):
    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(rows))
    lengths = sorted(len(tokenizer.apply_chat_template(e["prompt"] + e["completion"], tokenize=True, return_dict=False))
                     for e in prm_sft_dataset(rows))
    limit = lengths[len(lengths) // 2]
    result = train_prm(model, tokenizer, rows, tmp_path / "p", max_length=limit, max_steps=1, batch_size=2, save=False)
    kept = sum(1 for n in lengths if n <= limit)
    assert result.examples == kept and result.dropped_too_long == len(rows) - kept and result.output_dir is None


def test_vision_language_prm_trains_on_screenshots_and_reloads(shot_rows, tmp_path):
    model, processor = build_tiny_vision_lm(seed=0, corpus=prm_text_corpus(shot_rows, max_ui_chars=80))
    examples = prm_sft_dataset(shot_rows, max_ui_chars=80, screenshots=True)
    assert len(examples[0]["images"]) == 1 and examples[0]["images"][0].size == (540, 1200)
    assert any(p["type"] == "image" for p in examples[0]["prompt"][1]["content"])
    result = train_prm(model, processor, shot_rows, tmp_path / "vlm", max_steps=2, batch_size=2, learning_rate=1e-3,
                       max_ui_chars=80, logging_steps=1)
    assert result.steps == 2 and all(loss > 0 for loss in result.losses)
    assert json.loads((tmp_path / "vlm" / PRM_CONFIG_NAME).read_text())["screenshots"] is True
    prm = load_prm(tmp_path / "vlm", max_new_tokens=6)
    assert prm.backend.processor is not None
    step = step_input_from_row(shot_rows[0])
    assert step.screenshot is not None
    score = prm.score_batch([step])[0]
    assert 0.0 <= score.p_correct <= 1.0


def test_compact_prompt_is_short_and_is_what_the_loaded_prm_sends(rows, tmp_path):
    step = step_input_from_row(rows[3])
    compact = prm_prompt_builder("compact", max_ui_chars=100)(step)
    paper = prm_prompt_builder("paper", max_ui_chars=100)(step)
    assert compact[0]["content"] == COMPACT_PRM_SYSTEM_PROMPT
    assert len(str(compact)) < len(str(paper)) / 2
    user = compact[1]["content"]
    assert step.instruction in user and step.action in user and step.thought in user
    long_history = build_compact_prm_messages(
        StepInput("t", action="wait()", history=[f"click(start_box='({i},{i})')" for i in range(7)]))
    assert "(3 earlier actions)" in long_history[1]["content"] and "7. click" in long_history[1]["content"]
    with pytest.raises(ValueError, match="prompt style"):
        prm_prompt_builder("fancy")

    model, tokenizer = build_tiny_causal_lm(seed=0, corpus=prm_text_corpus(rows, prompt="compact"))
    train_prm(model, tokenizer, rows, tmp_path / "c", prompt="compact", max_ui_chars=100, max_steps=1, batch_size=2)
    prm = load_prm(tmp_path / "c")
    assert prm.messages(step) == compact
    example = prm_sft_dataset(rows.select([3]), max_ui_chars=100, prompt="compact")[0]
    assert example["prompt"] == compact


def test_balanced_batches_hold_both_labels_equally(rows):
    labels = [bool(v) for v in rows["label"]] + [True] * 10  # more positives than negatives
    order = _balanced_order(labels, 4, 400, seed=0)
    assert len(order) == 400
    for start in range(0, 400, 4):
        assert sum(labels[i] for i in order[start:start + 4]) == 2
    assert set(order) == set(range(len(labels)))  # every example is used
    assert _balanced_order(labels, 4, 40, seed=0) == order[:40]
    assert _balanced_order([True] * 5, 2, 7, seed=1) and len(_balanced_order([True] * 5, 2, 7, seed=1)) == 7
