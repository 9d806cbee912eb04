"""Per-screen fidelity with re-synchronisation, path divergence, and the held-out real episodes (issue 35).

``data/real_episodes`` is the tuning part: the sim's screens were written and fixed from those episodes.
``data/real_episodes_heldout`` holds real episodes of the same source that no fix looked at (sources, licenses and
the split in its PROVENANCE.md); its numbers are the ones docs/fidelity-replay.md reports as held-out. Replaying
needs AndroidWorld's own task classes (``android_world``); those tests skip without it.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from android_gym.cli import main
from android_gym.replay import (
    _counterpart,
    load_real_episodes,
    replay_episode_resync,
    screen_app,
    screen_type,
    summarise_resync,
)
from android_gym.suites.android_world import android_world_available

TUNING = Path(__file__).parent / "data" / "real_episodes"
HELDOUT = Path(__file__).parent / "data" / "real_episodes_heldout"
PHONE_CONTACTS_LOG = TUNING / "ContactsAddContact_base_gpt-4o-mini_48e64bf7.json.gz"

needs_android_world = pytest.mark.skipif(not android_world_available(),
                                         reason="android_world not installed (tools/setup_env.sh installs it)")

# The held-out part's numbers as docs/fidelity-replay.md gives them (per-screen with re-synchronisation, over the
# 198 steps of its 10 episodes), and how far a change may move them before the doc must be updated.
# round 2 (the Markor fixes from the tuning extension's MarkorMoveNote and ExpenseAddMultiple runs), measured once
HELDOUT_DOCUMENTED = {"in_order": 0.76, "multiset": 0.86, "counterpart": 0.84, "in_order_with_counterpart": 0.90,
                      "multiset_with_counterpart": 0.97}
HELDOUT_MEDIAN_FIRST_DIVERGENCE = 4  # over the episodes whose path parts from the real one
HELDOUT_MEDIAN_EXPERT_STEPS = 6
TOLERANCE = 0.03


def _el(text: str = "", desc: str = "", box: tuple[int, int, int, int] | None = None,
        package: str = "com.android.settings") -> dict:
    return {"text": text, "content_description": desc, "resource_name": "", "class_name": "android.widget.TextView",
            "is_clickable": True, "package_name": package, "bbox_pixels": box}


def test_the_held_out_part_is_disjoint_from_the_tuning_part():
    tuning = sorted(TUNING.glob("*.gz"))
    heldout = sorted(HELDOUT.glob("*.gz"))
    assert len(heldout) == 10 and len(tuning) == 23
    assert not {p.name for p in tuning} & {p.name for p in heldout}
    # not the same recording under another name either: no two files share their goal and first screen's actions
    def fingerprint(path: Path) -> str:
        data = json.loads(gzip.decompress(path.read_bytes()))
        return json.dumps([data["goal"], [r.get("action") for r in data["step_records"]]])

    assert not {fingerprint(p) for p in tuning if p.name.endswith(".json.gz")} & {fingerprint(p) for p in heldout}
    assert sum(p.stat().st_size for p in heldout) < 1_500_000
    provenance = (HELDOUT / "PROVENANCE.md").read_text()
    assert all(p.name in provenance for p in heldout)


def test_the_counterpart_of_a_real_element_is_found_by_identity_then_by_position():
    a, b, c = _el("a", box=(0, 0, 10, 10)), _el("b", box=(0, 10, 10, 20)), _el("c", box=(0, 20, 10, 30))
    assert _counterpart([a, b, c], 1, [c, a, b]) == (2, "same element")
    twice = [a, b, a]
    assert _counterpart(twice, 2, [c, a, b, a]) == (3, "same element")  # the second "a" is the sim's second "a"
    other = _el("x", box=(0, 12, 10, 18))
    assert _counterpart([a, b], 1, [a, other]) == (1, "element under the real element's centre")
    assert _counterpart([a, b], 1, [a]) == (-1, "none")


def test_screen_app_and_type_leave_the_status_bar_and_keyboard_out():
    bar = _el("15:34", package="com.android.systemui")
    keys = _el("q", package="com.google.android.inputmethod.latin")
    assert screen_app([bar, _el("Display"), keys, keys]) == "com.android.settings"
    assert screen_type([bar, _el("Display"), keys]) == "Settings + keyboard"
    assert screen_app([bar]) == "com.android.systemui" and screen_type([bar]) == "System UI (shade, dialogs)"


@needs_android_world
def test_a_tuning_episode_replays_in_sync_on_every_screen():
    (episode,) = load_real_episodes(PHONE_CONTACTS_LOG)
    result = replay_episode_resync(episode)
    assert result["replayed"] and result["path_divergences"] == [] and result["first_path_divergence"] is None
    assert [row["screen_type"] for row in result["steps"]] == [
        "launcher", "Phone", "Contacts", "Contacts + keyboard", "Contacts + keyboard", "Contacts + keyboard", "Phone"]
    assert result["per_screen"]["in_order"] == 1.0 and result["per_screen"]["counterpart"] == 1.0
    assert all(row.get("intent", "same element") == "same element" for row in result["steps"])


@needs_android_world
def test_a_divergence_is_put_down_with_its_reason_and_the_sim_brought_back():
    # Hand-made from the tuning episode: the real run's second screen replaced by its first (as if opening Phone had
    # left the home screen up). The sim opens Phone: the paths part at step 1 after the open_app on the home
    # screen; the sim goes home again and then shows that screen exactly. The real tap on "Phone" then opens Phone on
    # the sim while the real run shows Contacts' editor: a second divergence, after a tap on the same element.
    (episode,) = load_real_episodes(PHONE_CONTACTS_LOG)
    steps = list(episode.steps)
    steps[1] = dataclasses.replace(steps[1], elements=steps[0].elements, action={"action_type": "click", "index": 1})
    result = replay_episode_resync(dataclasses.replace(episode, steps=steps))
    first, second = result["path_divergences"][:2]
    assert first["step"] == 1 and first["reason"] == "navigation" and first["screen_type"] == "launcher"
    assert result["first_path_divergence"] == 1 and result["first_path_divergence_reason"] == "navigation"
    row = result["steps"][1]
    assert not row["in_sync"] and row["resync"] == "went home" and row["counterpart"]
    assert row["positional_agreement"] == 1.0 and row["intent"] == "same element"
    assert second["step"] == 2 and second["reason"] == "transition" and second["screen_type"] == "launcher"
    summary = summarise_resync([result])
    assert summary["path_divergence"]["median_steps_before_first_divergence"] == 1
    assert summary["path_divergence"]["reasons_by_screen_type"]["launcher"] == {"navigation": 1, "transition": 1}


@needs_android_world
def test_per_screen_fidelity_on_the_tuning_part():
    results = [replay_episode_resync(e) for p in sorted(TUNING.glob("*.json.gz")) for e in load_real_episodes(p)]
    summary = summarise_resync(results)
    overall = summary["per_screen"]["overall"]
    assert overall["steps"] == 207 and overall["counterpart"] == 1.0
    assert overall["in_order"] >= 0.93 and overall["multiset"] >= 0.98
    assert summary["path_divergence"]["divergences"] == 0
    assert summary["path_divergence"]["median_steps_before_first_divergence"] == 9


@needs_android_world
def test_goal_only_tasks_get_their_parameters_from_the_goal():
    from android_world.task_evals.single.expense import ExpenseAddMultiple

    from android_gym.replay import recover_params
    from android_gym.suites.android_world import AndroidWorldSuite

    (expense,) = load_real_episodes(HELDOUT / "ExpenseAddMultiple_base_o3-mini_trial1.json.gz")
    params, how = recover_params(ExpenseAddMultiple, expense.goal)
    assert params is not None and "csv table of 3 row(s)" in how, how
    rows = params["row_objects"]
    assert [(r.name, r.amount, r.category_name, r.note) for r in rows] == [
        ("Ride-Sharing", 48855, "Transportation", "Monthly recurring"), ("Environmental", 27634, "Donation", "A need"),
        ("Doctor Visits", 41969, "Health Care", "Urgent")]
    assert not {r.name for r in params["noise_row_objects"]} & {r.name for r in rows}
    # the other way AndroidWorld writes the table: text blocks ("Expense: NAME" and one " field: value" per line)
    blocks = ExpenseAddMultiple({**params, "text_representation_type": "text_block"}).goal
    assert "Expense: Ride-Sharing\n amount_dollars: $488.55\n" in blocks
    again, how = recover_params(ExpenseAddMultiple, blocks)
    assert again is not None and "text_block" in how and again["row_objects"] == rows
    registry = AndroidWorldSuite().registry  # information retrieval tasks: the template is their proto's prompt
    (sports,) = load_real_episodes(HELDOUT / "SportsTrackerActivityDuration_base_o3-mini_trial1.json.gz")
    params, how = recover_params(registry["SportsTrackerActivityDuration"], sports.goal)
    assert params is not None and (params["category"], params["date"]) == ("running", "October 11 2023"), how
    assert recover_params(ExpenseAddMultiple, "Add the following expenses into the pro expense:\nnothing")[0] is None


@needs_android_world
def test_the_held_out_part_is_measured_and_matches_the_documented_numbers(tmp_path, capsys):
    out = tmp_path / "heldout"
    assert main(["replay", *map(str, sorted(HELDOUT.glob("*.gz"))), "-o", str(out), "--image-width", "0"]) == 0
    printed = capsys.readouterr().out
    assert "per screen, re-synchronised" in printed and "path divergence: median" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["replayed"] == 10 and summary["not_replayed"] == []
    overall = summary["per_screen"]["overall"]
    assert overall["steps"] == 198
    for key, documented in HELDOUT_DOCUMENTED.items():
        assert abs(overall[key] - documented) <= TOLERANCE, (key, overall[key], documented)
    path = summary["path_divergence"]
    assert path["median_first_divergence"] == HELDOUT_MEDIAN_FIRST_DIVERGENCE
    assert path["median_expert_steps"] == HELDOUT_MEDIAN_EXPERT_STEPS
    assert set(path["reasons"]) <= set(path["reason_meanings"])
    per_app = summary["per_screen"]["per_app"]
    assert {"Settings", "Markor", "System UI (shade, dialogs)"} <= set(per_app)
    # what the tuning extension's fixes gave, held out: Settings' and the shade's screens all reached and drawn as
    # on the emulator (Accessibility, the shade staying over an app opened from the shell, the brightness dialog
    # closing under a scroll); three of the four SystemBrightnessMin runs never part from the real path
    assert per_app["Settings"]["counterpart"] == 1.0 and per_app["Settings"]["in_order"] >= 0.87
    assert per_app["System UI (shade, dialogs)"]["in_order"] >= 0.97
    brightness = [e for e in path["episodes"] if e["task"] == "SystemBrightnessMin"]
    assert sum(e["first_divergence"] is None for e in brightness) == 3
    # round 2's Markor (a note opened under Gboard, .txt notes' bar, the editor's submenus, Search's history): most
    # held-out Markor screens are reached now, and one of the two MarkorMoveNote runs never parts
    assert per_app["Markor"]["counterpart"] >= 0.8 and per_app["Markor"]["in_order"] >= 0.72
    markor = [e for e in path["episodes"] if e["task"] == "MarkorMoveNote"]
    assert sum(e["first_divergence"] is None for e in markor) == 1


# -- the sim fixes the tuning extension's divergences asked for (none came from a held-out episode) ----------------


def _texts(phone) -> list[str]:
    return [t for e in phone.frame.entries if (t := e.text or e.view.content_desc or "")]


def test_an_app_opened_from_the_shell_leaves_the_shade_over_it():
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.shade = 1
    phone.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert phone.foreground == "com.android.settings" and phone.shade == 1  # as AndroidWorld's open_app on the emulator
    phone.back()
    assert phone.shade == 0 and "Network & internet" in _texts(phone)


def test_a_scroll_from_the_middle_of_the_screen_closes_the_brightness_dialog():
    from android_gym.sim import SimPhone
    from android_gym.sim.phone import BRIGHTNESS_DIALOG

    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.show_brightness_dialog()
    assert phone.shade == BRIGHTNESS_DIALOG
    phone.swipe(540, 1200, 540, 300)  # not on the dialog: it closes, the page under it stays
    assert phone.shade == 0 and phone.foreground == "com.android.settings"
    phone.show_brightness_dialog()
    phone.swipe(540, 0, 540, 2400)  # down from the status bar: the shade comes down instead
    assert phone.shade == 1


def test_settings_accessibility_lists_as_on_the_emulator():
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.apps["com.android.settings"].push("accessibility", title="Accessibility")
    texts = _texts(phone)
    start = texts.index("Downloaded apps")
    assert texts[start:start + 6] == ["Downloaded apps",
                                      "com.google.androidenv.accessibilityforwarder.AccessibilityForwarder", "On",
                                      "Screen reader", "TalkBack", "Off / Speak items on screen"]


@needs_android_world
def test_markors_search_dialog_and_empty_folder_list_as_on_the_emulator():
    from android_gym.replay import sim_ui_elements
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.files.mkdir("/sdcard/Documents/Markor/Empty")
    phone.files.write("/sdcard/Documents/Markor/found_me.md", b"x", 0)
    phone.launch("net.gsantner.markor")
    markor = phone.apps["net.gsantner.markor"]
    markor.cwd = "Empty"
    phone.invalidate()
    listed = [e.text or e.content_description or "" for e in sim_ui_elements(phone.dump())]
    shrug = listed.index("\u00af\\_(\u30c4)_/\u00af")  # listed before the ".." row, as on the emulator
    assert listed[shrug + 1].startswith("Folder .. ")
    markor._open_search()
    assert phone.focus == "markor_search" and not phone.keyboard_shown  # focused, no keyboard: typing goes in
    phone.shell("input text nothing_here")
    phone.shell("input keyevent 66")
    texts = _texts(phone)
    select = texts.index("Select")
    assert texts[select:select + 3] == ["Select", "     \u00af\\_(\u30c4)_/\u00af     ", "CANCEL"]
    markor.close_dialog()
    markor.cwd = ""
    markor._open_search()
    markor.search_query = "found"
    markor._run_search()
    assert markor.search_results == ["found_me.md"]


def test_settings_opened_from_the_shell_comes_back_on_its_homepage():
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.launch("com.android.settings")
    settings = phone.apps["com.android.settings"]
    settings.push("display", title="Display")
    phone.home()
    phone.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert settings.page == "main"  # single-task homepage: the pages above it are gone
    settings.push("display", title="Display")
    phone.home()
    phone.launch("com.android.settings")  # from the phone's own UI: the task comes back as it was
    assert settings.page == "display"
