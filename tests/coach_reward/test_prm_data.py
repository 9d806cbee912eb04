"""PRM data: action-match labels, expert states from the sim and AndroidControl-style files, samplers, the dataset."""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from android_gym.actions import (
    Click,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressHome,
    Scroll,
    Swipe,
    Type,
    Wait,
    action_from_dict,
)
from coach_reward.backends import Completion
from coach_reward.prm_data import (
    BackendSampler,
    Candidate,
    ExpertStep,
    PerturbationSampler,
    accessibility_tree_xml,
    action_text,
    androidcontrol_action,
    build_prm_dataset,
    build_stats,
    load_prm_dataset,
    match_actions,
    normalize_text,
    read_androidcontrol,
    save_prm_dataset,
    sim_expert_steps,
    split_by_episode,
    split_by_task,
    split_thought_action,
    step_input_from_row,
    to_critic_pretrain_examples,
    trajectory_expert_steps,
)

W = 1080
TOL = 0.14 * W  # 151.2 px


# ---- labels -------------------------------------------------------------------------------------


def m(candidate, expert, **kw) -> bool:
    return match_actions(candidate, expert, screen_width=W, **kw).match


def test_click_within_fourteen_percent_of_the_width_matches():
    assert m(Click(500, 1000), Click(500, 1000))
    assert m(Click(500 + 151, 1000), Click(500, 1000))  # 151 <= 151.2
    assert not m(Click(500 + 152, 1000), Click(500, 1000))
    # Euclidean, not per axis: 110 px on both axes is 155.6 px away
    assert not m(Click(610, 1110), Click(500, 1000))
    assert m(Click(600, 1100), Click(500, 1000))  # 141.4 px
    # the tolerance scales with the screen width
    assert match_actions(Click(600, 1100), Click(500, 1000), screen_width=720).match is False


def test_type_text_is_compared_after_normalising_case_whitespace_and_trailing_punctuation():
    assert m(Type("  Buy  MILK. "), Type("buy milk"))
    assert m(Type("Hello world!?"), Type("hello world"))
    assert not m(Type("buy milk today"), Type("buy milk"))
    assert not m(Type("buy. milk"), Type("buy milk"))  # inner punctuation matters
    # points count when both actions give one; submit does not
    assert m(Type("x", 100, 100, submit=True), Type("x", 120, 130))
    assert not m(Type("x", 100, 100), Type("x", 900, 100))
    assert m(Type("x"), Type("x", 900, 100))
    assert normalize_text("  A\tB \n C…") == "a b c"


def test_scroll_direction_open_app_package_and_finished_answer():
    assert m(Scroll("down", 10, 10), Scroll("down", 900, 2000))  # the point does not matter
    assert not m(Scroll("up"), Scroll("down"))
    # a finger swipe upwards scrolls content down
    assert m(Swipe(540, 1800, 540, 600), Scroll("down"))
    assert not m(Swipe(540, 600, 540, 1800), Scroll("down"))
    assert m(OpenApp("settings"), OpenApp("Settings"))
    assert m(OpenApp("com.android.settings"), OpenApp("Settings"))
    assert m(OpenApp("Simple SMS Messenger"), OpenApp("Messages"))  # same package
    assert not m(OpenApp("Clock"), OpenApp("Contacts"))
    assert m(Finished(), Finished())
    assert m(Finished("anything"), Finished())  # no answer expected
    assert m(Finished("  42."), Finished("42"))
    assert not m(Finished("41"), Finished("42"))
    assert not m(Finished(), Finished("42"))


def test_types_must_agree_and_unparseable_never_matches():
    assert not m(LongPress(500, 1000), Click(500, 1000))
    assert not m(Click(500, 1000), Type("a", 500, 1000))
    assert m(PressBack(), PressBack()) and m(Wait(), Wait())
    assert not m(PressHome(), PressBack())
    result = match_actions(None, Click(1, 1), screen_width=W)
    assert not result.match and "parsed" in result.reason
    with pytest.raises(ValueError, match="screen_width"):
        match_actions(Click(1, 1), Click(1, 1), screen_width=0)
    with pytest.raises(ValueError, match="tolerance"):
        match_actions(Click(1, 1), Click(1, 1), screen_width=W, tolerance=float("nan"))


def test_reasons_say_why():
    far = match_actions(Click(0, 0), Click(500, 1000), screen_width=W)
    assert "beyond 151 px" in far.reason
    assert "differs" in match_actions(Wait(), Click(1, 1), screen_width=W).reason


# ---- expert states from the simulated phone ----------------------------------------------------------

SIM_TASKS = ["SystemWifiTurnOn", "ClockAddLabeledAlarm", "ContactsAddContact"]


@pytest.fixture(scope="module")
def sim_steps() -> list[ExpertStep]:
    return list(sim_expert_steps(SIM_TASKS, instances=1, seed=3))


def test_sim_expert_steps_record_successful_expert_episodes(sim_steps):
    assert {s.task for s in sim_steps} == set(SIM_TASKS)
    by_episode: dict[str, list[ExpertStep]] = {}
    for s in sim_steps:
        by_episode.setdefault(s.episode_id, []).append(s)
        assert s.source == "sim" and s.instruction and s.ui and s.screen_size == (1080, 2400)
        assert s.elements, "the perturbation sampler needs the on-screen elements"
        assert len(s.history) == s.step_index  # history = every earlier expert action
    for steps in by_episode.values():
        assert isinstance(steps[-1].expert, Finished)  # the episode ran to the expert's end
        assert steps[0].history == ()
        assert isinstance(steps[0].expert, OpenApp)
        for a, b in zip(steps, steps[1:]):
            assert b.history[: len(a.history) + 1] == a.history + (action_text(a.expert),)
    assert sim_steps[0].app == "settings"


def test_sim_expert_steps_counts_and_screenshots():
    stats: dict[str, int] = {}
    steps = list(sim_expert_steps(["SystemWifiTurnOn"], instances=2, seed=0, screenshots=True,
                                  screen_size=(540, 1200), stats=stats))
    assert stats["episodes"] == 2 and stats["kept_episodes"] == 2 and stats["steps"] == len(steps)
    assert {s.episode_id for s in steps} == {"SystemWifiTurnOn#0@0", "SystemWifiTurnOn#1@0"}
    assert steps[0].screenshot.shape == (1200, 540, 3)
    with pytest.raises(ValueError, match="instances"):
        list(sim_expert_steps(["SystemWifiTurnOn"], instances=0))


# ---- samplers ----------------------------------------------------------------------------------------


def test_perturbation_sampler_is_deterministic_and_mixes_right_and_wrong(sim_steps):
    sampler = PerturbationSampler(seed=1)
    a = sampler.sample(sim_steps, 8)
    b = PerturbationSampler(seed=1).sample(list(reversed(sim_steps)), 8)[::-1]
    assert a == b  # per-state randomness: the batch order does not matter
    assert a != PerturbationSampler(seed=2).sample(sim_steps, 8)
    assert all(len(group) == 8 and all(isinstance(c, Candidate) for c in group) for group in a)
    labels = Counter()
    for step, group in zip(sim_steps, a):
        for cand in group:
            from android_gym.actions import parse_action

            action = parse_action(cand.action_text, screen_size=step.screen_size, coordinates="absolute")
            labels[match_actions(action, step.expert, screen_width=step.screen_size[0]).match] += 1
    assert labels[True] > 20 and labels[False] > 20


def test_perturbation_thoughts_do_not_give_the_label_away(sim_steps):
    ds = build_prm_dataset(sim_steps, PerturbationSampler(seed=0), balance=False)
    words = {True: Counter(), False: Counter()}
    for thought, label in zip(ds["thought"], ds["label"]):
        words[label].update(w.strip('."') for w in thought.split()[:2])
    # the opening words come from the same templates for right and wrong steps
    assert set(words[True]) <= set(words[False]) | {"The", "Everything"}


def test_perturbation_sampler_options_are_checked():
    with pytest.raises(ValueError, match="p_expert"):
        PerturbationSampler(p_expert=1.5)
    with pytest.raises(ValueError, match="mistakes"):
        PerturbationSampler(mistakes=["nonsense"])


class ScriptedBackend:
    """A Backend that answers every request with fixed texts (records what it was asked)."""

    def __init__(self, texts):
        self.texts = list(texts)
        self.calls = []

    def generate(self, requests, *, max_new_tokens=256, temperature=0.0, n=1, logprobs=False, top_logprobs=0):
        self.calls.append({"requests": list(requests), "n": n, "temperature": temperature})
        return [[Completion(self.texts[(i + j) % len(self.texts)]) for j in range(n)] for i in range(len(requests))]


def test_backend_sampler_splits_thought_and_action(sim_steps):
    backend = ScriptedBackend(["Thought: I open the settings.\nAction: open_app(app_name='Settings')",
                               "click(start_box='(10,20)')"])
    groups = BackendSampler(backend, temperature=0.7).sample(sim_steps[:2], 3)
    assert len(groups) == 2 and all(len(g) == 3 for g in groups)
    assert groups[0][0] == Candidate("I open the settings.", "open_app(app_name='Settings')")
    assert groups[0][1] == Candidate("", "click(start_box='(10,20)')")
    call = backend.calls[0]
    assert call["n"] == 3 and call["temperature"] == 0.7
    prompt = json.dumps(call["requests"][0], ensure_ascii=False)
    assert sim_steps[0].instruction in prompt
    assert action_text(sim_steps[0].expert) not in prompt or sim_steps[0].step_index > 0  # never shown the answer
    assert split_thought_action("Thought: a\nAction: b\nAction: c") == Candidate("a\nAction: b", "c")


def test_split_thought_action_edge_cases():
    # A reply that is all thought has no action (it used to become the action text, unparseable either way).
    assert split_thought_action("Thought: only thinking") == Candidate("only thinking", "")
    assert split_thought_action("press_home()") == Candidate("", "press_home()")
    assert split_thought_action("Thought: t Action: click(start_box='(1,2)')") == Candidate("t", "click(start_box='(1,2)')")
    assert split_thought_action("## Thought:\nt\n**Action**: wait()") == Candidate("t", "wait()")
    assert split_thought_action("Reflection: r\nThought: t\nAction: wait()") == Candidate("t", "wait()")
    assert split_thought_action("THOUGHT: t\naction： wait()").action_text == "wait()"
    assert split_thought_action("Thought: t\nAction: type(content='a\\nAction: b')") == Candidate(
        "t", "type(content='a\\nAction: b')")


# ---- the dataset -------------------------------------------------------------------------------------


def test_build_prm_dataset_labels_balances_and_records(sim_steps):
    ds = build_prm_dataset(sim_steps, PerturbationSampler(seed=0), k=8, seed=0)
    labels = Counter(ds["label"])
    assert labels[True] == labels[False] > 10
    assert len(set(ds["id"])) == len(ds)
    stats = build_stats(ds)["coach_reward_prm_build"]
    assert stats["states"] == len(sim_steps) and stats["rows"] == len(ds)
    assert stats["candidates"] == stats["positives_before_balance"] + stats["negatives_before_balance"]
    for row in ds:
        # every label is the action-match rule applied to the stored candidate and expert
        cand = action_from_dict(json.loads(row["action_json"]))
        expert = action_from_dict(json.loads(row["expert_action_json"]))
        assert match_actions(cand, expert, screen_width=row["screen_width"]).match == row["label"]
        assert row["action_type"] == cand.type
        assert row["rationale"] == "" and row["screenshot"] is None
    # deterministic for the seed; balance=False keeps every candidate
    assert build_prm_dataset(sim_steps, PerturbationSampler(seed=0), seed=0)["id"] == ds["id"]
    assert build_prm_dataset(sim_steps, PerturbationSampler(seed=0), seed=1)["id"] != ds["id"]
    full = build_prm_dataset(sim_steps, PerturbationSampler(seed=0), balance=False)
    assert len(full) == stats["candidates"]


def test_unparseable_candidates_are_negatives_and_duplicates_are_dropped(sim_steps):
    def policy(step, k):
        return [("same", "press_back()"), ("same", "press_back()"), ("?", "flail wildly"),
                ("expert", action_text(step.expert))][:k]

    ds = build_prm_dataset(sim_steps[:3], policy, k=4, balance=False)
    assert len(ds) == 9  # 3 states x (4 - 1 duplicate)
    bad = ds.filter(lambda r: r["thought"] == "?")
    assert bad["label"] == [False] * 3 and all(bad["parse_error"]) and bad["action_type"] == ["invalid"] * 3
    assert all(ds.filter(lambda r: r["thought"] == "expert")["label"])
    kept = build_prm_dataset(sim_steps[:3], policy, k=4, balance=False, dedupe=False)
    assert len(kept) == 12


def test_build_errors_are_clear(sim_steps):
    with pytest.raises(ValueError, match="expected k=8"):
        build_prm_dataset(sim_steps[:1], lambda s, k: [("t", "wait()")], k=8)
    with pytest.raises(ValueError, match="one class is empty"):
        build_prm_dataset(sim_steps[:2], lambda s, k: [("t", "flail")] * k, k=2)
    with pytest.raises(ValueError, match="no PRM rows"):
        build_prm_dataset([], PerturbationSampler())
    with pytest.raises(TypeError, match="ExpertStep"):
        build_prm_dataset(["not a step"], PerturbationSampler())
    with pytest.raises(TypeError, match="Sampler"):
        build_prm_dataset(sim_steps, object())


def test_rationales_come_from_the_judge_told_the_label(sim_steps):
    judge = ScriptedBackend(["<think>hmm</think> The Wi-Fi switch is the target.\njudgment:True"])
    ds = build_prm_dataset(sim_steps[:4], PerturbationSampler(seed=0), rationale_backend=judge, batch_size=4)
    assert set(ds["rationale"]) == {"hmm The Wi-Fi switch is the target."}  # tags and verdict line removed
    asked = [r for call in judge.calls for r in call["requests"]]
    assert len(asked) == len(ds)
    first = json.dumps(asked[0], ensure_ascii=False)
    assert ("This step is CORRECT" if ds[0]["label"] else "This step is INCORRECT") in first
    assert ds[0]["expert_action"] in first


def test_save_and_load_round_trip_with_screenshots(tmp_path):
    steps = list(sim_expert_steps(["SystemWifiTurnOn"], screenshots=True, screen_size=(540, 1200)))
    ds = build_prm_dataset(steps, PerturbationSampler(seed=0), k=4)
    paths = save_prm_dataset(ds, tmp_path / "prm")
    assert paths["hf"].is_dir() and paths["parquet"].is_file()
    for source in (tmp_path / "prm", paths["hf"], paths["parquet"]):
        back = load_prm_dataset(source)
        assert back["id"] == ds["id"] and back["label"] == ds["label"]
        image = back[0]["screenshot"]
        assert isinstance(image, Image.Image) and image.size == (540, 1200)
    with pytest.raises(FileNotFoundError):
        load_prm_dataset(tmp_path / "missing")


def test_split_by_task_holds_out_whole_tasks(sim_steps):
    ds = build_prm_dataset(sim_steps, PerturbationSampler(seed=0))
    parts = split_by_task(ds, test_fraction=0.34, seed=0)
    train, test = set(parts["train"]["task"]), set(parts["test"]["task"])
    assert train and test and not train & test and train | test == set(SIM_TASKS)
    fixed = split_by_task(ds, test_tasks=["ClockAddLabeledAlarm"])
    assert set(fixed["test"]["task"]) == {"ClockAddLabeledAlarm"}
    with pytest.raises(ValueError, match="not in the dataset"):
        split_by_task(ds, test_tasks=["Nope"])
    for seed in range(5):  # tasks an RL run will ask the PRM about are never held out
        kept = split_by_task(ds, test_fraction=0.34, seed=seed, train_tasks=SIM_TASKS[:-1])
        assert set(kept["test"]["task"]) == {SIM_TASKS[-1]}
    with pytest.raises(ValueError, match="none is left to hold out"):
        split_by_task(ds, train_tasks=SIM_TASKS)


def test_split_by_episode_holds_out_instances_of_every_task():
    steps = list(sim_expert_steps(SIM_TASKS[:2], instances=4, seed=1))
    ds = build_prm_dataset(steps, PerturbationSampler(seed=0))
    parts = split_by_episode(ds, test_fraction=0.25, seed=0)
    train_eps, test_eps = set(parts["train"]["episode_id"]), set(parts["test"]["episode_id"])
    assert not train_eps & test_eps and len(parts["train"]) + len(parts["test"]) == len(ds)
    assert set(parts["test"]["task"]) == set(parts["train"]["task"]) == set(SIM_TASKS[:2])  # every task on both sides
    with pytest.raises(ValueError, match="needs >= 2 per task"):
        split_by_episode(build_prm_dataset(steps[:1], PerturbationSampler(seed=0)))


def test_critic_examples_and_step_inputs(sim_steps):
    ds = build_prm_dataset(sim_steps, PerturbationSampler(seed=0))
    examples = to_critic_pretrain_examples(ds)
    assert len(examples) == len(ds)
    for (state, act, label), row in zip(examples, ds):
        assert label == int(row["label"]) and label in (0, 1)
        assert row["instruction"] in state and row["action_text"] in act and act.startswith("Thought: ")
    custom = to_critic_pretrain_examples(ds, state_fn=lambda r: "S:" + r["task"])
    assert custom[0][0] == "S:" + ds[0]["task"]
    step = step_input_from_row(ds[0])
    assert step.action == ds[0]["action_text"] and step.history == ds[0]["history"] and step.ui == ds[0]["ui"]


# ---- AndroidControl-style episodes -------------------------------------------------------------------


def _png(width: int, height: int, color=(200, 10, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, format="PNG")
    return buf.getvalue()


def _episode(tmp_path: Path) -> dict:
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "0.png").write_bytes(_png(1080, 2400))
    forest = {"windows": [{"tree": {"nodes": [
        {"uniqueId": 1, "className": "android.widget.FrameLayout", "packageName": "com.example.notes",
         "boundsInScreen": {"left": 0, "top": 0, "right": 1080, "bottom": 2400}, "childIds": [2, 3]},
        {"uniqueId": 2, "className": "android.widget.Button", "text": "New note", "isClickable": True,
         "packageName": "com.example.notes", "viewIdResourceName": "com.example.notes:id/new",
         "boundsInScreen": {"left": 800, "top": 2000, "right": 1040, "bottom": 2200}},
        {"uniqueId": 3, "className": "android.widget.TextView", "text": "My notes", "packageName": "com.example.notes",
         "boundsInScreen": {"left": 0, "top": 100, "right": 1080, "bottom": 250}},
    ]}}]}
    elements = [
        {"class_name": "android.widget.EditText", "text": "", "hint_text": "Title", "is_editable": True,
         "is_clickable": True, "package_name": "com.example.notes", "bbox_pixels":
             {"x_min": 40, "x_max": 1040, "y_min": 300, "y_max": 420}},
        {"class_name": "android.widget.Button", "content_description": "Save", "is_clickable": True,
         "package_name": "com.example.notes", "bbox_pixels": {"x_min": 900, "x_max": 1060, "y_min": 100, "y_max": 220}},
    ]
    return {
        "episode_id": 77,
        "goal": "Create a note titled Groceries in Notes",
        "screenshots": ["shots/0.png", base64.b64encode(_png(1080, 2400)).decode(), None],
        "screenshot_widths": [1080, 1080, 1080],
        "screenshot_heights": [2400, 2400, 2400],
        "accessibility_trees": [forest, elements, elements],
        "actions": [json.dumps({"action_type": "click", "x": 0.85, "y": 0.875}),
                    {"action_type": "type", "x": 540, "y": 360, "text": "Groceries"}],
        "step_instructions": ["Tap New note", "Type the title"],
    }


def test_read_androidcontrol_episode(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(_episode(tmp_path)) + "\n")
    steps = list(read_androidcontrol(path))
    assert len(steps) == 2
    first, second = steps
    assert first.instruction == "Create a note titled Groceries in Notes" and first.episode_id == "77"
    assert first.expert == Click(918, 2100)  # relative coordinates scaled to the screen
    assert second.expert == Type("Groceries", 540, 360, submit=True)
    assert first.step_instruction == "Tap New note" and second.history == (action_text(first.expert),)
    assert first.app == "com.example.notes" and first.source == "androidcontrol"
    assert "New note" in first.ui and "My notes" in first.ui and "Save" in second.ui
    assert first.screenshot.size == (1080, 2400) and second.screenshot.size == (1080, 2400)
    labels = {e.label for e in first.elements}
    assert "New note" in labels
    # the whole pipeline runs on it
    ds = build_prm_dataset(steps, PerturbationSampler(seed=0), k=8)
    assert set(ds["source"]) == {"androidcontrol"} and Counter(ds["label"])[True] == Counter(ds["label"])[False]


def test_androidcontrol_dataset_does_not_depend_on_the_folder(tmp_path):
    """Episodes without an id are named after their file and position, so the seeded sampler draws the same
    candidates wherever the files are read from (a full path made a test flaky: its draws followed pytest's
    tmp folder number)."""
    episode = _episode(tmp_path)
    del episode["episode_id"]
    datasets = []
    for folder in ("a", "b/deeper"):
        (tmp_path / folder).mkdir(parents=True)
        path = tmp_path / folder / "episodes.jsonl"
        path.write_text(json.dumps(episode) + "\n" + json.dumps(episode) + "\n")
        steps = list(read_androidcontrol(path, screenshots=False))
        assert [s.episode_id for s in steps] == ["episodes.jsonl:1"] * 2 + ["episodes.jsonl:2"] * 2
        datasets.append(build_prm_dataset(steps, PerturbationSampler(seed=3), k=4, balance=False).to_list())
    assert datasets[0] == datasets[1]


def test_androidcontrol_actions_and_coordinates():
    size = (1000, 2000)
    assert androidcontrol_action({"action_type": "click", "x": 500, "y": 1000}, screen_size=size) == Click(500, 1000)
    assert androidcontrol_action({"action_type": "click", "x": 0.5, "y": 0.25}, screen_size=size) == Click(500, 500)
    assert androidcontrol_action({"action_type": "long_press", "x": 500, "y": 500}, screen_size=size,
                                 coordinates="relative1000") == LongPress(500, 1000)
    assert androidcontrol_action('{"action_type": "scroll", "direction": "down"}', screen_size=size) == Scroll("down")
    assert androidcontrol_action({"action_type": "scroll", "direction": "down"}, screen_size=size,
                                 invert_scroll=True) == Scroll("up")
    assert androidcontrol_action({"action_type": "open_app", "app_name": "Clock"}, screen_size=size) == OpenApp("Clock")
    assert androidcontrol_action({"action_type": "input_text", "text": "hi"}, screen_size=size) == Type("hi")
    assert androidcontrol_action({"action_type": "navigate_back"}, screen_size=size) == PressBack()
    assert androidcontrol_action({"action_type": "navigate_home"}, screen_size=size) == PressHome()
    assert androidcontrol_action({"action_type": "wait"}, screen_size=size) == Wait()
    from android_gym.actions import ActionParseError

    with pytest.raises(ActionParseError, match="unknown AndroidControl action_type 'fly'"):
        androidcontrol_action({"action_type": "fly"}, screen_size=size)
    with pytest.raises(ActionParseError, match="numeric 'x'"):
        androidcontrol_action({"action_type": "click", "y": 3}, screen_size=size)


def test_androidcontrol_errors_name_the_place(tmp_path):
    ep = _episode(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{**ep, "goal": ""}]))
    with pytest.raises(ValueError, match=r"bad.json\[0\]: the episode has no 'goal'"):
        list(read_androidcontrol(bad))
    bad.write_text(json.dumps({**ep, "actions": ep["actions"] * 3}))
    with pytest.raises(ValueError, match="6 actions but only 3 observations"):
        list(read_androidcontrol(bad))
    bad.write_text(json.dumps({**ep, "actions": [{"action_type": "teleport"}]}))
    with pytest.raises(ValueError, match="step 0: unknown AndroidControl action_type"):
        list(read_androidcontrol(bad))
    bad.write_text(json.dumps({**ep, "screenshots": ["shots/missing.png"] * 3}))
    with pytest.raises(FileNotFoundError, match="missing.png"):
        list(read_androidcontrol(bad))
    with pytest.raises(FileNotFoundError):
        list(read_androidcontrol(tmp_path / "nothing.json"))


def test_accessibility_tree_forms_all_become_uiautomator_xml():
    from android_gym.xml import compress_xml

    flat = [{"class_name": "android.widget.Button", "text": "OK", "is_clickable": True, "bounds": [10, 10, 200, 100]},
            {"className": "android.widget.TextView", "text": "Title", "boundsInScreen":
                {"left": 0, "top": 120, "right": 500, "bottom": 200}}]
    ui = compress_xml(accessibility_tree_xml(flat, (1080, 2400)), screen_size=(1080, 2400))
    assert {e.label for e in ui.elements} >= {"OK", "Title"}
    ok = next(e for e in ui.elements if e.label == "OK")
    assert ok.clickable and ok.bounds == (10, 10, 200, 100)
    xml = '<hierarchy><node text="A" clickable="true" bounds="[0,0][10,10]"/></hierarchy>'
    assert accessibility_tree_xml(xml, (10, 10)) == xml
    with pytest.raises(ValueError, match="neither XML nor JSON"):
        accessibility_tree_xml("not a tree", (10, 10))


@pytest.mark.realdata
def test_androidcontrol_reader_takes_a_real_uiautomator_dump(tmp_path, realdata):
    xml = (realdata / "android_xml" / "22_LlamaTouch__UICheckpoint__page.xml").read_text()
    episode = {"goal": "Open the first app on the home screen", "accessibility_trees": [xml, xml],
               "actions": [{"action_type": "click", "x": 100, "y": 300}]}
    path = tmp_path / "real.json"
    path.write_text(json.dumps(episode))
    (step,) = read_androidcontrol(path)
    assert step.screen_size == (720, 1280)  # from the dump's root bounds
    assert step.ui and step.elements and step.app == "com.huawei.android.launcher"
    ds = build_prm_dataset([step], PerturbationSampler(seed=0), k=8)
    assert len(ds) >= 2


def test_recorded_trajectories_are_a_source_too():
    from android_gym.sim import SimDevice, SimPhone
    from android_gym.tasks import get_task_class
    from android_gym.tasks.runner import run_expert
    from android_gym.trajectory import Trajectory

    task = get_task_class("SystemWifiTurnOn")(seed=0)
    episode = run_expert(task, SimDevice(SimPhone())).trajectory
    assert episode.success == 1.0
    failed = Trajectory.from_dict({**episode.to_dict(), "success": 0.0})
    steps = list(trajectory_expert_steps([episode, failed, episode.to_dict()]))
    assert len(steps) == 2 * len(episode.steps)  # the failed copy is skipped
    first = steps[: len(episode.steps)]
    assert [s.expert for s in first] == [s.action for s in episode.steps]
    assert first[-1].history == tuple(action_text(s.action) for s in episode.steps[:-1])
    assert all(s.source == "trajectory" and s.task == "SystemWifiTurnOn" for s in steps)
    ds = build_prm_dataset(steps, PerturbationSampler(seed=0))
    assert len(ds) > 0
    with pytest.raises(TypeError, match="Trajectory"):
        list(trajectory_expert_steps(["nope"]))
