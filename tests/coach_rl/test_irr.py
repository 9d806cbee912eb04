"""Iterative Reasoning Refinement on the sim with a tiny policy; the explanation rule; AndroidControl input; CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from android_gym.actions import parse_action
from coach_reward.prm_data import match_actions, read_androidcontrol
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.cli import main
from coach_rl.demos import collect_demos
from coach_rl.irr import (
    IRRCandidate,
    irr_steps_from_demos,
    irr_steps_from_expert_steps,
    iterative_reasoning_refinement,
    load_irr_dataset,
    pick_explanation,
    plot_match_rate,
    write_irr_dataset,
)
from coach_rl.policy import PolicyFormat
from coach_rl.sft import sft_warmup

FORMAT = PolicyFormat(action_format="index", max_history=0, action_space=())


def test_the_most_concise_then_most_likely_matching_explanation_is_kept():
    cands = [
        IRRCandidate("a", "The Settings app holds the Wi-Fi switch so I open it now", True, -0.1),
        IRRCandidate("b", "Open Settings first", True, -0.9),
        IRRCandidate("c", "Open Settings now", True, -0.4),   # same length as b, more likely: kept
        IRRCandidate("d", "Go", False, -0.01),                 # shortest and likeliest, but the wrong action
        IRRCandidate("e", "", True, -0.05),                    # no reasoning at all: last resort
    ]
    assert pick_explanation(cands) == 2
    assert pick_explanation(cands[3:]) == 1
    assert pick_explanation([cands[3]]) is None


@pytest.mark.slow
def test_irr_on_sim_demos_raises_the_match_rate_then_stops(tmp_path):
    demos = collect_demos(FORMAT, ["SystemWifiTurnOn"], seeds=range(4))
    model, tok = build_tiny_causal_lm(seed=0, corpus=demos.corpus())
    # MobileRL's first stage: a little action-only SFT, so some sampled candidates already match
    sft_warmup(model, tok, demos, max_steps=140, learning_rate=1e-2, per_device_train_batch_size=4)
    steps = irr_steps_from_demos(demos)
    lines: list[str] = []
    result = iterative_reasoning_refinement(model, tok, steps, fmt=FORMAT, k=4, rounds=4, max_new_tokens=24,
                                            sft_steps=30, sft_learning_rate=5e-3, sft_batch_size=4, log=lines.append)
    rates = result.match_rates
    assert len(lines) == len(rates) >= 2 and lines[0].startswith("IRR round 0: match rate")
    assert rates[1] > rates[0] > 0.0  # fine-tuning on the kept candidates raised the match rate
    # it went on while the rate rose and stopped when it did not (or at the round limit)
    assert all(b > a for a, b in zip(rates[:-2], rates[1:-1]))
    assert result.stopped.startswith("the match rate stopped rising") == (rates[-1] <= rates[-2])
    assert result.rounds[-1].sft_steps == 0 and all(r.sft_steps == 30 for r in result.rounds[:-1])
    # every row teaches the expert's own answer for its screen
    by_key = {s.key: s for s in steps}
    assert len(result.rows) == result.rounds[-1].dataset_rows > 0
    for row in result.rows:
        step = by_key[row["id"]]
        text = row["completion"][0]["content"]
        assert text.endswith(step.answer)
        action = parse_action(text, style="androidworld", elements=step.request.elements)
        assert match_actions(action, step.expert, screen_width=1080).match
    path = write_irr_dataset(result.rows, tmp_path / "irr.jsonl")
    rows = load_irr_dataset(path)
    assert len(rows) == len(result.rows) and set(rows[0]) == {"prompt", "completion"}
    assert sft_warmup(model, tok, rows, max_steps=1, learning_rate=1e-3).steps == 1  # the SFT warm-up reads it
    assert plot_match_rate(result, tmp_path / "rate.png").stat().st_size > 0


def test_androidcontrol_steps_in_the_uitars_format(tmp_path):
    episode = {
        "goal": "Open my notes", "actions": [{"action_type": "click", "x": 918, "y": 2100}, {"action_type": "navigate_back"}],
        "accessibility_trees": [[{"class_name": "android.widget.Button", "text": "New note", "is_clickable": True,
                                  "package_name": "com.example.notes",
                                  "bbox_pixels": {"x_min": 800, "x_max": 1040, "y_min": 2000, "y_max": 2200}}]] * 3,
        "screenshot_widths": [1080] * 3, "screenshot_heights": [2400] * 3,
    }
    path = tmp_path / "ac.jsonl"
    path.write_text(json.dumps(episode) + "\n")
    fmt = PolicyFormat(action_format="uitars", max_history=1, action_space=())
    steps, skipped = irr_steps_from_expert_steps(read_androidcontrol(path, screenshots=False), fmt)
    assert skipped == 0 and len(steps) == 2
    assert "click" in steps[0].answer and "press_back" in steps[1].answer
    assert len(steps[1].request.history) == 1
    model, tok = build_tiny_causal_lm(seed=0)
    result = iterative_reasoning_refinement(model, tok, steps, fmt=fmt, k=2, rounds=1, max_new_tokens=8, log=None)
    assert result.rounds[0].candidates == 4 and result.stopped
    with pytest.raises(ValueError, match="no demonstrated steps"):
        iterative_reasoning_refinement(model, tok, [], fmt=fmt)


def test_cli_irr_writes_dataset_rounds_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "irr"
    assert main(["irr", "--config", "smoke", "--tasks", "SystemWifiTurnOff", "--instances", "1", "--k", "2",
                 "--rounds", "2", "--sft-steps", "1", "--warmup-steps", "2", "--out", str(out),
                 "-o", str(tmp_path / "run")]) == 0
    printed = capsys.readouterr().out
    assert "IRR round 0: match rate" in printed
    summary = json.loads(printed[printed.index("{"):])
    assert (out / "irr_dataset.jsonl").is_file() and (out / "irr_match_rate.png").stat().st_size > 0
    assert (out / "policy" / "config.json").is_file()
    rounds = json.loads((out / "irr_rounds.json").read_text())
    assert len(rounds["rounds"]) == len(summary["match_rates"]) >= 1
