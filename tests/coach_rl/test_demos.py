"""Expert demonstrations from the sim in the policy's format: answers that parse back to what ran, kept only on success."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.actions import Type, parse_action
from android_gym.trajectory import Step
from coach_rl.demos import collect_demos
from coach_rl.policy import PolicyFormat

SCREEN = (1080, 2400)
TASKS = ["SystemWifiTurnOn", "ContactsAddContact", "SimpleCalendarAddOneEvent", "MarkorCreateNote",
         "ExpenseDeleteSingle", "ClockStopWatchRunning"]


@pytest.fixture(scope="module")
def index_demos():
    return collect_demos(PolicyFormat(action_format="index", max_history=2), TASKS, seeds=[0, 1])


def test_index_answers_parse_back_to_the_actions_that_ran(index_demos):
    demos = index_demos
    assert demos.stats.episodes == 2 * len(TASKS)
    assert demos.stats.kept == demos.stats.episodes  # all these tasks survive the index format
    assert len(demos) == demos.stats.steps == sum(len(t) for t in demos.trajectories) > 40
    kinds = {r.action.type for r in demos.records}
    assert {"click", "type", "open_app", "finished"} <= kinds
    for record in demos.records:
        elements = record.request.elements
        assert elements is not None
        # the answer, read by android_gym's own parser against the screen's elements, is the action that ran
        assert parse_action(record.answer, style="androidworld", elements=elements,
                            screen_size=SCREEN) == record.action
        if isinstance(record.expert_action, Type):  # AndroidWorld's input_text also presses Enter
            assert record.action == Type(record.expert_action.text, record.expert_action.x, record.expert_action.y,
                                         submit=True)
        else:
            assert record.action == record.expert_action
        if record.action.type in ("click", "long_press"):
            assert '"index"' in record.answer or '"x"' in record.answer


def test_kept_episodes_succeeded_and_steps_carry_targets(index_demos):
    for trajectory in index_demos.trajectories:
        assert trajectory.success == 1.0 and not trajectory.truncated
        assert trajectory.steps[-1].action.type == "finished"
    clicks = [s for t in index_demos.trajectories for s in t.steps if '"index"' in s.response]
    assert clicks and all(s.info["target"] for s in clicks)


def test_sft_rows_are_the_policy_prompts_with_the_answers(index_demos):
    rows = index_demos.examples()
    assert len(rows) == len(index_demos)
    fmt = index_demos.format
    for record, row in zip(index_demos.records, rows):
        assert row["prompt"] == fmt.messages(record.request)
        assert row["completion"] == [{"role": "assistant", "content": record.answer}]
        assert "images" not in row
    later = next(r for r in index_demos.records if r.step_index == 2)
    history = later.request.history
    assert len(history) == 2 and all(isinstance(s, Step) for s in history)
    assert history[0].response in fmt.messages(later.request)[0]["content"]
    corpus = index_demos.corpus()
    assert len(corpus) == 2 * len(index_demos) and all(isinstance(t, str) and t for t in corpus)


def test_answer_noise_swaps_answers_for_clicks_on_other_elements(index_demos):
    """sft_answer_noise's rows: the same prompts; about that share of answers replaced, each by a click on another
    clickable element of the same screen; the same draw for the same seed; the rest untouched."""
    clean = index_demos.examples()
    noisy = index_demos.examples(answer_noise=0.5, seed=3)
    assert noisy == index_demos.examples(answer_noise=0.5, seed=3) != index_demos.examples(answer_noise=0.5, seed=4)
    changed = 0
    for record, a, b in zip(index_demos.records, clean, noisy):
        assert a["prompt"] == b["prompt"]
        answer = b["completion"][0]["content"]
        if answer == record.answer:
            continue
        changed += 1
        action = parse_action(answer, style="androidworld", elements=record.request.elements, screen_size=SCREEN)
        assert action.type == "click" and action != record.action
        index = json.loads(answer)["index"]
        element = record.request.elements[index]
        assert element.clickable or element.checkable
        assert json.loads(record.answer).get("index") != index
    assert 0.3 * len(clean) < changed < 0.7 * len(clean)
    assert index_demos.examples(answer_noise=0.0) == clean
    with pytest.raises(ValueError, match=r"answer_noise must be in \[0, 1\)"):
        index_demos.examples(answer_noise=1.0)
    uitars = collect_demos(PolicyFormat(action_format="uitars"), ["SystemWifiTurnOn"], seeds=[3])
    with pytest.raises(ValueError, match="answer_noise needs the index action format"):
        uitars.examples(answer_noise=0.2)


def test_uitars_demos_reproduce_the_expert_exactly():
    demos = collect_demos(PolicyFormat(action_format="uitars"), ["SystemWifiTurnOn", "ContactsAddContact"], seeds=[3])
    assert demos.stats.kept == 2
    for record in demos.records:
        assert record.action == record.expert_action
        assert record.answer.startswith("Action: ")
        assert parse_action(record.answer, style="uitars", screen_size=SCREEN) == record.expert_action


def test_episodes_the_format_cannot_reproduce_are_dropped_with_a_reason():
    # Setting an alarm label types into a dialog field; the index format's input_text presses Enter, which
    # closes the dialog early, so the expert gets stuck and the episode gives no demonstration.
    demos = collect_demos(PolicyFormat(action_format="index"), ["ClockAddLabeledAlarm", "SystemWifiTurnOff"],
                          seeds=[0])
    assert demos.stats.episodes == 2 and demos.stats.kept == 1
    assert demos.tasks() == ["SystemWifiTurnOff"]
    assert sum(demos.stats.dropped.values()) == 1
    assert "ClockAddLabeledAlarm" in demos.stats.dropped_tasks and demos.stats.errors


def test_screenshot_demos_carry_images_and_reuse_a_given_env():
    env = gym.make("AndroidSim-v0", screenshot=True)
    demos = collect_demos(PolicyFormat(mode="both", action_format="index"), ["SystemWifiTurnOn"], seeds=[0], env=env)
    rows = demos.examples()
    assert rows and all(len(r["images"]) == 1 for r in rows)
    assert {"type": "image"} in rows[0]["prompt"][0]["content"]
    assert rows[0]["images"][0].size == SCREEN
    with pytest.raises(ValueError, match="screenshot"):
        collect_demos(PolicyFormat(mode="both"), ["SystemWifiTurnOn"], env=gym.make("AndroidSim-v0"))
    env.close()


def test_demos_are_deterministic_for_their_seeds():
    fmt = PolicyFormat(action_format="index")
    a = collect_demos(fmt, ["ContactsAddContact"], seeds=[5])
    b = collect_demos(fmt, ["ContactsAddContact"], seeds=[5])
    c = collect_demos(fmt, ["ContactsAddContact"], seeds=[6])
    assert [r.answer for r in a.records] == [r.answer for r in b.records]
    assert [r.answer for r in a.records] != [r.answer for r in c.records]  # another instance: other contact
