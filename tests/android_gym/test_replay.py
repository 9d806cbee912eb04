"""``android-gym replay``: real AndroidWorld episodes read, set up again on the simulated phone and compared.

The real episodes are in ``data/real_episodes`` (sources and licenses in its PROVENANCE.md). Replaying needs
AndroidWorld's own task classes (``android_world``, installed by tools/setup_env.sh); those tests skip without it.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from android_gym.cli import main
from android_gym.replay import (
    RealStep,
    element_key,
    follow_real_clock,
    follow_real_device,
    load_real_episodes,
    real_folder_listing,
    recover_params,
    replay_episodes,
)
from android_gym.suites.android_world import android_world_available

from .browser import images_loaded, open_page

DATA = Path(__file__).parent / "data" / "real_episodes"
CONTACTS_LOG = DATA / "ContactsAddContact_base_o4-mini_trial1.json.gz"
MARKOR_SEARCHED_LOG = DATA / "MarkorMoveNote_reflective_gpt-4.1-mini_910322d9.json.gz"
BRIGHTNESS_LOG = DATA / "SystemBrightnessMin_base_o3-mini_trial1.json.gz"
FILES_LOG = DATA / "FilesDeleteFile_base_gpt-4o-mini_7d52a840.json.gz"
MARKOR_LOG = DATA / "MarkorMoveNote_base_gpt-4.1-mini_8b0f1fc8.json.gz"
MARKOR_PREDICTED_LOG = DATA / "MarkorMoveNote_few-shot_gpt-4.1-mini_bc33359c_trial3.json.gz"
MARKOR_NEW_NOTE_LOG = DATA / "MarkorCreateNoteAndSms_reflective_o4-mini_trial1.json.gz"
PHONE_CONTACTS_LOG = DATA / "ContactsAddContact_base_gpt-4o-mini_48e64bf7.json.gz"
SETTINGS_LOG = DATA / "SystemBrightnessMin_base_o4-mini_trial1.json.gz"
NO_HOME_VIEW_LOG = DATA / "SystemBrightnessMin_base_gpt-4.1-mini_trial1.json.gz"
SD_ON_TOP_LOG = DATA / "SystemBrightnessMin_few-shot_o3-mini_trial1.json.gz"
REPLAYABLE = sorted(DATA.glob("*.json.gz"))
WIFI_PICKLE = DATA / "SystemWifiTurnOff_0.pkl.gz"

needs_android_world = pytest.mark.skipif(not android_world_available(),
                                         reason="android_world not installed (tools/setup_env.sh installs it)")


def test_reads_agent_json_logs():
    (episode,) = load_real_episodes(CONTACTS_LOG)
    assert (episode.format, episode.task, episode.success) == ("agent_json_log", "ContactsAddContact", 1.0)
    assert episode.goal == "Create a new contact for Amir Muller. Their number is +19328020043."
    assert len(episode.steps) == 9 and episode.params is None
    first = episode.steps[0]
    assert first.action == {"action_type": "click", "index": 3}
    assert len(first.elements) == 20 and first.elements[3]["text"] == "Messages"
    assert first.elements[3]["bbox_pixels"] == (328, 1873, 501, 2068)
    assert episode.steps[-1].action == {"action_type": "status", "goal_status": "complete"}
    (failed,) = load_real_episodes(BRIGHTNESS_LOG)
    assert failed.success == 0.0 and failed.steps[-1].action["goal_status"] == "infeasible"


def test_reads_android_world_pickles_without_running_code(tmp_path):
    (episode,) = load_real_episodes(WIFI_PICKLE)
    assert (episode.format, episode.task, episode.goal, episode.success) == (
        "android_world_pickle", "SystemWifiTurnOff", "Turn wifi off.", 1.0)
    assert episode.seed == 2760691905 and episode.screen_size == (1080, 2400) and episode.steps == []
    assert "no per-step UI element lists" in episode.no_steps_reason

    evil = tmp_path / "evil.pkl.gz"
    evil.write_bytes(gzip.compress(pickle.dumps([os.system]), mtime=0))
    with pytest.raises(ValueError, match=r"evil\.pkl\.gz: not an AndroidWorld episode pickle: refusing to load"):
        load_real_episodes(evil)


def test_errors_name_the_file_and_the_field(tmp_path):
    def write(name: str, data: object) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return path

    with pytest.raises(ValueError, match=r"a\.json: field 'step_records' is missing"):
        load_real_episodes(write("a.json", {"task_name": "T", "goal": "g"}))
    with pytest.raises(ValueError, match=r"b\.json: field 'step_records\[0\]\.agent_data\.before_element_list'"):
        load_real_episodes(write("b.json", {"task_name": "T", "goal": "g", "step_records": [{"action": "x"}]}))
    with pytest.raises(ValueError, match=r"c\.json: the JSON is a list"):
        load_real_episodes(write("c.json", [1]))
    with pytest.raises(ValueError, match=r"d\.pkl\.gz: episode 0: field 'episode_data' is missing"):
        (tmp_path / "d.pkl.gz").write_bytes(gzip.compress(pickle.dumps([{"goal": "g", "task_template": "T"}])))
        load_real_episodes(tmp_path / "d.pkl.gz")
    (tmp_path / "e.txt").write_text("hello")
    with pytest.raises(ValueError, match=r"e\.txt: neither an AndroidWorld episode pickle nor a JSON episode log"):
        load_real_episodes(tmp_path / "e.txt")


@needs_android_world
def test_task_instances_come_back_from_the_seed_or_the_goal():
    from android_gym.suites.android_world import AndroidWorldSuite

    registry = AndroidWorldSuite().registry
    params, how = recover_params(registry["ContactsAddContact"],
                                 "Create a new contact for Amir Muller. Their number is +19328020043.")
    assert (params["name"], params["number"]) == ("Amir Muller", "+19328020043") and "template" in how
    (wifi,) = load_real_episodes(WIFI_PICKLE)
    params, how = recover_params(registry["SystemWifiTurnOff"], wifi.goal, wifi.seed)
    assert how == "the episode's seed 2760691905" and params["on_or_off"] == "off"
    params, how = recover_params(registry["ContactsAddContact"], "Phone my mother.")
    assert params is None and "does not follow ContactsAddContact's template" in how


def _sim_log(path: Path) -> Path:
    """An episode recorded on the sim itself in the agent-log layout: replaying it must agree with itself."""
    import gymnasium as gym

    from android_gym.actions import parse_action
    from android_gym.replay import sim_ui_elements

    def index_of(elements, wanted) -> int:
        return next(i for i, e in enumerate(elements) if wanted(e))

    plan = [
        lambda els: {"action_type": "open_app", "app_name": "Settings"},
        lambda els: {"action_type": "click", "index": index_of(els, lambda e: e.text == "Network & internet")},
        lambda els: {"action_type": "click", "index": index_of(els, lambda e: e.text == "Internet")},
        lambda els: {"action_type": "click", "index": index_of(els, lambda e: (e.class_name or "").endswith("Switch"))},
        lambda els: {"action_type": "status", "goal_status": "complete"},
    ]
    env = gym.make("AndroidWorld-v0", task="SystemWifiTurnOff", max_steps=10)
    _, info = env.reset(seed=3)
    records = []
    for i, make in enumerate(plan):
        elements = sim_ui_elements(info["xml"])
        action = make(elements)
        records.append({"step_num": i + 1, "action": "Reason: scripted\nAction: " + json.dumps(action),
                        "agent_data": {"before_element_list": [dataclasses.asdict(e) for e in elements]}})
        _, _, _, _, info = env.step(parse_action(action, elements=elements, screen_size=(1080, 2400)))
    env.close()
    assert info["success"] == 1.0
    path.write_text(json.dumps({"task_name": "SystemWifiTurnOff", "goal": info["goal"],
                                "task_actually_successful": True, "step_records": records}))
    return path


@needs_android_world
def test_an_episode_recorded_on_the_sim_replays_identically(tmp_path):
    log = _sim_log(tmp_path / "sim_wifi.json")
    summary = replay_episodes([log], tmp_path / "out")
    (result,) = summary["episodes"]
    assert result["goal_matches"] and result["steps_replayed"] == 5
    assert result["element_agreement"] == 1.0 and result["element_multiset_agreement"] == 1.0
    assert result["action_agreement"] == 1.0 and result["element_targeted_steps"] == 3
    assert (result["real_success"], result["sim_success"], result["outcome_agreement"]) == (1.0, 1.0, True)
    assert result["first_divergence"] is None

    # the same log with two elements of step 2 swapped: the same multiset, a different order, a different target
    data = json.loads(log.read_text())
    elements = data["step_records"][1]["agent_data"]["before_element_list"]
    index = data["step_records"][1]["action"].rsplit('"index": ', 1)[1].rstrip("}")
    elements[int(index)], elements[0] = elements[0], elements[int(index)]
    log.write_text(json.dumps(data))
    (swapped,) = replay_episodes([log], tmp_path / "out2")["episodes"]
    step = swapped["steps"][1]
    assert step["multiset_agreement"] == 1.0 and step["positional_agreement"] < 1.0 and step["first_mismatch"] == 0
    assert step["same_target"] is False and swapped["first_divergence"] == 1
    assert swapped["first_action_divergence"] == 1 and swapped["action_agreement"] < 1.0


@needs_android_world
def test_replay_command_on_the_real_episodes(tmp_path, capsys, browser):
    out = tmp_path / "replay"
    assert main(["replay", *map(str, sorted(DATA.glob("*.gz"))), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"overall: {len(REPLAYABLE)} of {len(REPLAYABLE) + 2} episode(s) replayed" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert len(REPLAYABLE) == 21 and summary["overall"]["episodes"] == 23 and summary["overall"]["replayed"] == 21
    assert sorted(summary["per_task"]) == [
        "ContactsAddContact", "FilesDeleteFile", "MarkorCreateFolder", "MarkorCreateNoteAndSms", "MarkorMoveNote",
        "SaveCopyOfReceiptTaskEval", "SimpleCalendarDeleteEventsOnRelativeDay", "SystemBrightnessMaxVerify",
        "SystemBrightnessMin", "SystemWifiTurnOff"]
    skipped = {Path(r["source"]).name: r["reason"] for r in summary["not_replayed"]}
    assert set(skipped) == {"ContactsAddContact_0.pkl.gz#0", "SystemWifiTurnOff_0.pkl.gz#0"}
    assert all("no per-step UI element lists" in reason for reason in skipped.values())
    by_source = {Path(r["source"]).name: r for r in summary["episodes"]}
    assert by_source["SystemWifiTurnOff_0.pkl.gz#0"]["params_from"] == "the episode's seed 2760691905"
    contacts = by_source[CONTACTS_LOG.name]
    assert contacts["goal_matches"] and contacts["steps_replayed"] == 9
    assert contacts["steps"][0]["real_target"] == "TextView 'Messages' clickable"
    # what the replay read back from the real screens, said so per episode: that emulator had Wi-Fi off and its
    # SD card's icon before the ungrouped "Serial console enabled" one; the sim follows (it diverges at step 5 now)
    device, predicted = contacts["recovered_from_screen"][:2]
    assert device["real_step"] == 0 and device["wifi_on"] is False
    assert device["notifications"] == ["Settings notification: Virtual SD card",
                                       "Android System notification: Serial console enabled"]
    assert predicted["label"] == "Settings" and contacts["first_divergence"] == 5
    assert all(any(r["what"] == "the launcher's predicted app" for r in result["recovered_from_screen"])
               for result in by_source.values() if result["replayed"])
    overall = summary["overall"]  # the numbers the README gives, as lower bounds
    assert overall["element_agreement"] >= 0.95 and overall["element_multiset_agreement"] >= 0.98
    assert overall["screen_agreement"] >= 0.95 and overall["action_agreement"] >= 0.98
    assert summary["per_task"]["SystemBrightnessMin"]["element_agreement"] >= 0.94
    assert overall["outcome_agreement"] == 1.0  # 21 of 21
    for result in by_source.values():
        if result["replayed"]:
            assert result["outcome_agreement"] == ((result["sim_success"] >= 1.0) == (result["real_success"] >= 1.0))
            assert 0.0 <= result["element_agreement"] <= 1.0 and 0.0 <= result["label_agreement"] <= 1.0
    real_first = load_real_episodes(CONTACTS_LOG)[0].steps[0].elements
    assert contacts["steps"][0]["real_elements"] == len(real_first)
    assert element_key(real_first[3]) == ("Messages", "Messages", "", "android.widget.TextView", True)

    page, errors = open_page(browser, (out / contacts["page"]).as_uri())
    assert page.inner_text("#goal") == contacts["goal"]
    assert page.locator("img.shot").count() == 2 and all(w > 0 for w in images_loaded(page))
    assert [h.inner_text() for h in page.locator(".pane h3").all()] == ["real (element list)", "sim"]
    assert page.locator("svg rect.target").count() >= 1  # the element the real step acted on, boxed
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#counter") == "step 2 / 9"
    assert errors == []
    page.close()


def _bad_files(tmp_path: Path) -> list[Path]:
    notes = tmp_path / "notes.txt"
    notes.write_text("not an episode")
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    return [notes, listing, tmp_path / "missing.json.gz"]


def test_files_that_are_not_episodes_are_reported_and_the_rest_still_read(tmp_path):
    """replay_episodes goes on past a file that is not an episode file, naming it and why (no android_world needed)."""
    notes, listing, missing = _bad_files(tmp_path)
    summary = replay_episodes([notes, WIFI_PICKLE, listing, missing], tmp_path / "out")
    bad = {Path(b["source"]).name: b["reason"] for b in summary["unreadable_files"]}
    assert set(bad) == {"notes.txt", "list.json", "missing.json.gz"}
    assert "neither an AndroidWorld episode pickle nor a JSON episode log" in bad["notes.txt"]
    assert "the JSON is a list" in bad["list.json"] and "cannot be read" in bad["missing.json.gz"]
    assert [Path(r["source"]).name for r in summary["episodes"]] == ["SystemWifiTurnOff_0.pkl.gz#0"]
    assert summary["overall"]["episodes"] == 1
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["unreadable_files"] == summary["unreadable_files"]


@needs_android_world
def test_replay_command_skips_bad_files_and_exits_nonzero_only_when_nothing_replayed(tmp_path, capsys):
    notes, listing, missing = _bad_files(tmp_path)
    log = _sim_log(tmp_path / "sim_wifi.json")
    assert main(["replay", str(notes), str(log), str(listing), str(missing), "-o", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    for path in (notes, listing, missing):
        assert f"skipped {path}: " in captured.err
    assert "overall: 1 of 1 episode(s) replayed" in captured.out and "3 file(s) skipped" in captured.out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["overall"]["replayed"] == 1 and len(summary["unreadable_files"]) == 3

    assert main(["replay", str(notes), str(WIFI_PICKLE), "-o", str(tmp_path / "none")]) == 1
    assert "no episode could be replayed" in capsys.readouterr().err


def test_replay_command_without_android_world_says_how_to_get_it(tmp_path):
    script = ("import sys\nsys.modules['android_world'] = None  # as if it were not installed\n"
              "from android_gym.cli import main\n"
              f"sys.exit(main(['replay', {str(WIFI_PICKLE)!r}, '-o', {str(tmp_path / 'out')!r}]))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "AndroidWorld's own task classes" in result.stderr
    assert "pip install git+https://github.com/google-research/android_world" in result.stderr


@needs_android_world
def test_view_shows_a_real_episode_beside_its_sim_twin(tmp_path, capsys):
    out = tmp_path / "brightness.html"
    assert main(["view", str(BRIGHTNESS_LOG), "-o", str(out)]) == 0
    page = out.read_text()
    data = json.loads(page.split('id="episode-data">', 1)[1].split("</script>", 1)[0])
    (episode,) = data["episodes"]
    assert episode["labels"] == ["real (element list)", "sim"] and len(episode["steps"]) == 3
    assert all(step["twin"] is not None and step["twin"]["image"] for step in episode["steps"])
    capsys.readouterr()
    assert main(["view", str(WIFI_PICKLE), "-o", str(tmp_path / "wifi.html")]) == 2
    assert "cannot be replayed on the sim: the file records no per-step UI element lists" in capsys.readouterr().err


def _replayed(path: Path) -> tuple[dict, dict[int, dict]]:
    from android_gym.replay import replay_episode

    result, _page = replay_episode(load_real_episodes(path)[0], image_width=None)
    return result, {row["step"]: row for row in result["steps"]}


@needs_android_world
def test_the_sim_shows_the_real_contacts_screens_and_reaches_the_same_verdict():
    """The home screen, Google Messages' prompt, Contacts' list, editor and details and Gboard, written from the
    real element lists: every index action hits the element the real one did and the verdict agrees. What still
    differs is the status bar (that emulator had Wi-Fi off and its notification icons were the SD card then the
    ungrouped "Serial console enabled", where most runs, and the sim, show the Android System group first) and, on
    steps 5 and 6, Gboard's header: that emulator's showed a clipboard suggestion (text copied on the host, a
    HorizontalScrollView of TextViews) where the other real runs, and the sim, show Gboard's shortcuts row."""
    result, steps = _replayed(CONTACTS_LOG)
    assert result["action_agreement"] == 1.0 and result["element_targeted_steps"] == 6
    assert (result["real_success"], result["sim_success"], result["outcome_agreement"]) == (1.0, 1.0, True)
    assert result["element_agreement"] >= 0.64 and result["element_multiset_agreement"] >= 0.90
    assert result["screen_agreement"] >= 0.83
    for step in (0, 1, 2, 3, 4, 7, 8):  # home, Messages, home, the list, the editor, the editor with Gboard, details
        assert steps[step]["screen_agreement"] == 1.0, step
    # the editor with Gboard up (67 elements), its phone field formatted as typed ("+1 932-802-0043"); its status
    # bar's two notification icons differ from the sim's, the common case (see above)
    assert steps[7]["positional_agreement"] >= 0.92


@needs_android_world
def test_the_sim_shows_the_real_files_screens():
    """DocumentsUI written from the real lists: Downloads, the roots drawer, the storage's folders and the selection
    mode agree. The files AndroidWorld adds beside the one to delete have random names the task's parameters do not
    keep; the replay reads them off the real screens that list the folder, so every index action hits the file the
    real one did and the verdicts agree (the real episode deleted the right one)."""
    result, steps = _replayed(FILES_LOG)
    # that emulator's status bar said "Wifi signal full." where 16 of the 21 real runs (and the sim) say
    # "Wifi signal full.,No internet"; its notification icons ("Serial console enabled" then the SD card, where 12 of
    # the 21 and the sim's default show the Android System group then the SD card) the replay follows
    assert result["recovered_from_screen"][0]["notifications"] == [
        "Android System notification: Serial console enabled", "Settings notification: Virtual SD card"]
    assert result["element_agreement"] >= 0.94 and result["element_multiset_agreement"] >= 0.94
    assert result["screen_agreement"] >= 0.99 and result["action_agreement"] == 1.0
    for step in (1, 2, 3, 4, 5):  # Downloads, the roots drawer, the storage root's folders, Alarms, selection
        assert steps[step]["screen_agreement"] == 1.0 and steps[step]["same_target"], step
    assert result["outcome_agreement"] is True and result["sim_success"] == 1.0
    noise = next(r for r in result["recovered_from_screen"] if r["what"] == "AndroidWorld's noise file names")
    assert noise["what"] == "AndroidWorld's noise file names" and noise["real_steps"] == [4, 7]
    assert noise["folder"] == "/sdcard/Alarms" and "backup_helpful_nest.mp3" in noise["now"]
    assert set(noise["now"]) == set(noise["names"]) | {"backup_helpful_nest.mp3"}


def test_the_sim_clock_follows_the_real_status_bar_clock():
    """The replay sets the sim's clock to the real status bar's minute before each step (the real run's minutes
    pass while its agent thinks); back too (one real run's first screen shows 11:39, the next 11:34); a clock
    hours away, or none, leaves it."""
    from android_gym.sim.phone import SimPhone

    device = type("Device", (), {})()
    device.phone = phone = SimPhone()
    phone.settings_put("system", "time_12_24", "24")

    def step(clock: str | None) -> RealStep:
        bar = [] if clock is None else [{"text": clock, "resource_name": "com.android.systemui:id/clock"}]
        return RealStep(index=0, elements=[{"text": "Home"}, *bar], reply="", action=None)

    start = phone.status_clock()[0]
    assert start == "15:34" and follow_real_clock(step("15:34"), device) == 0
    phone.tap(5, 1000)  # two seconds on
    assert follow_real_clock(step("15:39"), device) == 5 and phone.status_clock()[0] == "15:39"
    assert phone.now().second == 0  # the start of the real minute
    assert follow_real_clock(step("15:34"), device) == -5 and phone.status_clock()[0] == "15:34"
    assert follow_real_clock(step("21:00"), device) == 0 and follow_real_clock(step(None), device) == 0
    assert phone.status_clock()[0] == "15:34"


WHAT = "the emulator's standing notifications, mobile signal, Wi-Fi, Do Not Disturb or clock zone"


def test_the_sim_follows_the_real_emulators_notifications_signal_and_wifi():
    """What no task sets and emulator runs differ in: the standing notifications' icons (and so the shade's rows and
    its Clear all buttons), the mobile signal, and (first step only) whether Wi-Fi was left on."""
    from android_gym.sim.phone import SYSTEM_NOTIFICATIONS, SimPhone

    device = type("Device", (), {})()
    device.phone = phone = SimPhone()
    ui = "com.android.systemui"

    def icon(desc: str, rid: str = "") -> dict:
        return {"content_description": desc, "resource_name": rid, "package_name": ui}

    def step(*icons: dict, index: int = 0) -> RealStep:
        clock = {"text": "15:34", "resource_name": ui + ":id/clock", "package_name": ui}
        return RealStep(index=index, elements=[{"text": "Home"}, clock, *icons], reply="", action=None)

    assert phone.standing_notifications == SYSTEM_NOTIFICATIONS and phone.settings_get("global", "wifi_on") == "1"
    assert follow_real_device(step(*(icon(d) for d in SYSTEM_NOTIFICATIONS), icon("Wifi signal full.,No internet",
                                    ui + ":id/wifi_combo"), icon("Phone signal full.", ui + ":id/mobile_combo")),
                              device, wifi=True) is None  # the sim's defaults: nothing to do
    done = follow_real_device(step(icon("Android System notification: "), icon("Phone two bars.", ui +
                                                                                ":id/mobile_combo")), device, wifi=True)
    assert done == {"what": WHAT, "real_step": 0,
                    "notifications": ["Android System notification: "], "mobile_signal": "Phone two bars.",
                    "wifi_on": False}
    dump = phone.dump()
    assert "Settings notification: Virtual SD card" not in dump and "Phone two bars." in dump
    phone.swipe(540, 300, 540, 1500, 300)  # the shade: no SD card row, no Clear all (nothing to dismiss)
    dump = phone.dump()
    assert phone.shade and "Virtual SD card" not in dump and "Clear all" not in dump
    assert "Serial console enabled" in dump and "limited connectivity" not in dump  # Wi-Fi is off
    phone.settings_put("global", "wifi_on", "1")
    assert "AndroidWifi has limited connectivity" in phone.dump()
    # later steps follow the icons and the signal, never Wi-Fi (the agent may have switched it)
    assert follow_real_device(step(icon("Phone signal full.", ui + ":id/mobile_combo"), index=3), device) == {
        "what": WHAT, "real_step": 3, "notifications": [],
        "mobile_signal": "Phone signal full."}
    assert follow_real_device(RealStep(index=4, elements=[{"text": "Home"}], reply="", action=None), device) is None


def test_noise_file_names_are_read_off_the_real_screens_that_list_the_folder():
    """DocumentsUI lists a folder's files by their titles, Markor by its rows' content descriptions; later screens of
    the same folder add what the first did not show (Markor's list was longer than the screen)."""
    steps, names = real_folder_listing(load_real_episodes(FILES_LOG)[0], "backup_helpful_nest.mp3")
    assert steps == [4, 7] and names[:2] == ["2023_01_20_wake_up.mp3", "2023_06_27_wake_up.mp3"]
    steps, names = real_folder_listing(load_real_episodes(MARKOR_LOG)[0], "2023_05_22_silly_zebra.txt")
    assert steps == [2, 8] and len(names) == 11
    assert names[1] == "2023_05_22_silly_zebra.txt" and names[-1] == "budget_home_renovation_Djzm.md"
    assert real_folder_listing(load_real_episodes(MARKOR_LOG)[0], "not_there.md") is None


@needs_android_world
def test_the_sim_shows_the_real_markor_screens_and_reaches_the_same_verdict():
    """Markor's Files tab, its selection mode, the More options menu and the Move picker, written from the real
    lists: with the noise notes read back, every index action hits what the real one did and the note moves."""
    result, steps = _replayed(MARKOR_LOG)
    assert result["action_agreement"] == 1.0 and result["element_targeted_steps"] == 7
    assert (result["real_success"], result["sim_success"], result["outcome_agreement"]) == (1.0, 1.0, True)
    for step in (1, 4, 5):  # the notebook's root, the selection's menu, the picker in the source folder
        assert steps[step]["screen_agreement"] == 1.0, step
    # the folder's rows: the real rows' descriptions carry the date only on the first notes (the emulator fills them
    # in late), as the sim's do, and ".." carries the Documents folder's path
    assert steps[2]["screen_agreement"] >= 0.95 and steps[2]["multiset_agreement"] >= 0.9


@needs_android_world
def test_the_launchers_predicted_app_is_read_off_the_first_real_screen():
    """The dock's last app is the launcher's guess from the emulator's earlier use; the replay takes it from the
    first real screen, so the real tap on it (Markor here) opens the same app on the sim."""
    result, steps = _replayed(MARKOR_PREDICTED_LOG)
    predicted = next(r for r in result["recovered_from_screen"] if r["what"] == "the launcher's predicted app")
    assert (predicted["label"], predicted["package"], predicted["applied"]) == ("Markor", "net.gsantner.markor", True)
    assert steps[0]["real_target"] == steps[0]["sim_target"] == "TextView 'Markor' desc='Predicted app: Markor' clickable"
    assert steps[0]["screen_agreement"] == 1.0 and steps[1]["screen_agreement"] == 1.0
    assert result["action_agreement"] == 1.0 and result["outcome_agreement"] is True


@needs_android_world
def test_the_sim_shows_markors_new_file_dialog_and_editor_as_the_emulator_does():
    """The New file dialog (Name, Type and Template drop-downs, FOLDER / CANCEL / OK), the editor (Undo, Redo,
    View mode, Save, Search, the text actions bar), its view mode and Simple SMS Messenger's conversation list, new
    conversation and thread list as on the emulator, Gboard included: its shortcuts row (Sticker, GIF, Clipboard,
    ...), Done on the name and the address fields, the digits row on the extension field, Shift on in an empty
    note and message (and on a note's new line), no keyboard under the editor's menu; the address's Done keeps it."""
    result, steps = _replayed(MARKOR_NEW_NOTE_LOG)
    for step in (2, 3, 4, 5, 6, 7, 8, 15, 16, 17):  # the dialog, the editor, its menus, the address, the message
        assert steps[step]["screen_agreement"] == 1.0, step
    # after the wait the print spooler's preview comes up; Back returns to the note in view mode
    for step in (10, 11, 12):
        assert steps[step]["screen_agreement"] == 1.0, step
    assert steps[3]["same_target"]  # OK
    assert steps[4]["same_target"]  # the text field
    assert steps[6]["same_target"] and steps[7]["same_target"] and steps[8]["same_target"]  # More options, Share, PDF
    assert steps[9]["screen_agreement"] == 1.0  # Print / PDF renders the note in view mode first
    # Simple SMS Messenger: the list's description-less FAB, the new conversation's fast-scroller over the confirm
    # tick, the thread's send button; the conversation list and the thread list as on the emulator
    assert all(steps[step]["same_target"] for step in (13, 15, 16, 17))
    assert steps[13]["screen_agreement"] == 1.0 and steps[18]["screen_agreement"] == 1.0
    assert result["action_agreement"] == 1.0 and result["outcome_agreement"] is True
    assert result["element_agreement"] >= 0.71 and result["screen_agreement"] >= 0.94


@needs_android_world
def test_gboard_stays_up_after_a_launcher_search_and_over_the_app_opened_from_it():
    """Enter in the launcher's search panel leaves Gboard up with no field (its row of digits, Enter), covering the
    panel's last suggestions, and over Markor opened from the results (which makes room for it) until its
    selection menu pops up. The panel's app tiles are described by their names."""
    result, steps = _replayed(MARKOR_SEARCHED_LOG)
    for step in (1, 2, 3, 4, 5, 6, 7, 8, 9):  # the panel, Markor under the keyboard (list, folder, selection), menus
        assert steps[step]["screen_agreement"] == 1.0, step
    assert steps[2]["real_target"] == steps[2]["sim_target"] == "TextView 'Markor' clickable"
    assert result["element_agreement"] >= 0.85 and result["screen_agreement"] >= 0.99
    assert result["action_agreement"] == 1.0 and result["outcome_agreement"] is True


@needs_android_world
def test_the_sim_phone_app_opens_on_the_contacts_tab_as_the_emulator_does():
    """The Phone app's Contacts tab (empty, then listing the new contact after Contacts' editor saved it) agrees
    with the real lists, and so does the verdict."""
    result, steps = _replayed(PHONE_CONTACTS_LOG)
    for step in (1, 2, 6):  # Phone's empty Contacts tab, Contacts' editor, Phone's tab with the new contact
        assert steps[step]["screen_agreement"] == 1.0, step
    assert result["action_agreement"] == 1.0 and result["outcome_agreement"] is True
    # every screen but the status bar, Gboard (Shift on the empty name fields, its shortcuts row) included
    assert result["screen_agreement"] == 1.0 and result["element_agreement"] >= 0.92


@needs_android_world
def test_the_sim_shows_the_real_settings_homepage():
    """Settings' homepage (account picture, title, search, rows without their icons) lists as on the emulator."""
    result, steps = _replayed(SETTINGS_LOG)
    assert steps[13]["screen_agreement"] == 1.0 and steps[13]["same_target"]
    assert result["outcome_agreement"] is True


@needs_android_world
def test_the_sim_shows_the_real_notification_shade():
    """A swipe down on the home screen opens the shade, listed as on the emulator; the verdict (not done) agrees."""
    result, steps = _replayed(BRIGHTNESS_LOG)
    assert steps[0]["positional_agreement"] == 1.0  # the home screen, its signal ("Phone one bar.") followed
    # the Android System group on top holds "AndroidWifi has limited connectivity" (Wi-Fi on) beside "Serial console
    # enabled", and its count 2; the SD card below it is collapsed (text and Expand, its title a level deeper)
    assert steps[1]["positional_agreement"] == 1.0
    assert steps[1]["same_target"] and result["outcome_agreement"] is True
    assert result["element_agreement"] == 1.0


@needs_android_world
def test_the_shades_top_notification_opens_expanded_and_a_lone_one_is_not_grouped():
    """Android 13's templates, from the real shades: the top notification, when it is a single one (the SD card
    here), is listed expanded (Collapse, title, big text, Explore, Eject; its app's name a level deeper); without
    Wi-Fi "Serial console enabled" is alone, so it is a single notification (text and Expand, then its title), and
    the header's mobile icon holds "No internet". The Internet tile is on over mobile data, auto-rotate is on as on
    the emulator, and the Bluetooth the run before left on is read off the first shade."""
    result, steps = _replayed(SETTINGS_LOG)
    bluetooth = next(r for r in result["recovered_from_screen"] if r["what"].startswith("Bluetooth"))
    assert bluetooth == {"what": "Bluetooth left on or off by the runs before", "bluetooth_on": True, "real_step": 1}
    for i in (1, 2, 3, 7, 9, 10, 11):  # the shade (2: the lone notification expanded by its tap; 3: Quick Settings)
        assert steps[i]["positional_agreement"] == 1.0, i
    assert steps[1]["real_target"] == steps[1]["sim_target"] == "Button desc='Expand' id=expand_button clickable"
    assert steps[10]["same_target"]  # index 20, the SD card's app name: on the sim's list too, at the same place
    _, sd_on_top = _replayed(SD_ON_TOP_LOG)  # Wi-Fi on: the SD card expanded above the Android System group
    assert sd_on_top[1]["positional_agreement"] == 1.0


@needs_android_world
def test_the_home_screens_page_is_described_as_in_the_real_run():
    """Two real runs never list the launcher page's "Home" view; the replay reads that off their first home screen."""
    result, steps = _replayed(NO_HOME_VIEW_LOG)
    assert {"what": 'the home screen\'s page without its "Home" description', "real_step": 0} in \
        result["recovered_from_screen"]
    assert steps[0]["positional_agreement"] == steps[3]["positional_agreement"] == 1.0
    result, _ = _replayed(SETTINGS_LOG)  # a run that lists it: nothing to recover
    assert not any("Home" in r["what"] for r in result["recovered_from_screen"])


def test_sim_elements_are_listed_breadth_first_per_window_without_the_page_under_a_dialog():
    """As the emulator's accessibility forest lists them: each window breadth first; toasts are no window; a dialog
    hides its app's page."""
    from android_gym.replay import sim_ui_elements
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.app("com.google.android.contacts").clear_data()  # no contacts: "No contacts yet"
    phone.launch("com.google.android.contacts")
    descs = [e.content_description or e.text for e in sim_ui_elements(phone.dump())]
    assert descs[:4] == ["Create contact", "Contacts", "Highlights", "Fix & manage"]  # the button, then the bar
    assert descs.index("No contacts yet") < descs.index("Phone contacts")  # the chips sit a level deeper
    phone.toast("saved")
    assert "saved" not in [e.text for e in sim_ui_elements(phone.dump())]
    phone.apps["com.google.android.contacts"].show_dialog("discard")
    phone.invalidate()
    listed = sim_ui_elements(phone.dump())
    assert "Create contact" not in [e.content_description for e in listed]
    assert {e.package_name for e in listed} == {"com.google.android.contacts", "com.android.systemui"}


def _listed(phone) -> list[str]:
    from android_gym.replay import _describe, _plain_sim, sim_ui_elements

    return [_describe(e) for e in _plain_sim(sim_ui_elements(phone.dump()))
            if e["package_name"] != "com.android.systemui" or phone.shade]


def test_settings_search_quick_settings_and_display_list_as_on_the_emulator():
    """Written from the real SystemBrightness episodes: Settings' search is Settings Intelligence's window (Back, the
    field, Clear text, the results' scroll view, title and breadcrumb, "Search Support"); a second swipe down opens
    Quick Settings (slider, pager, header, footer icons, then the tiles and the carrier); Display says "After null of
    inactivity" for the emulator's screen timeout; a swipe in from the left edge is Back."""
    from android_gym.sim import SimPhone

    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("search")
    phone.type_text("brightness")
    phone.keyevent(66)
    assert phone.keyboard_shown
    assert _listed(phone)[:7] == [
        "ImageButton desc='Back' clickable", "EditText 'brightness' id=open_search_view_edit_text clickable",
        "ImageButton desc='Clear text' id=open_search_view_clear_button clickable", "ScrollView id=search_scrollview",
        "TextView 'Brightness level' id=title", "TextView 'Display' id=breadcrumb",
        "TextView 'Search Support for \"brightness\"' id=title"]
    assert {e.package for e in phone.frame.entries if e.window == "app"} == {
        "com.google.android.settings.intelligence"}
    phone.home()
    phone.swipe(540, 10, 540, 1500, 300)
    phone.swipe(540, 300, 540, 1800, 300)
    listed = _listed(phone)
    assert listed[:2] == ["SeekBar 'Display brightness' id=slider", "ViewPager id=qs_pager"]
    assert listed.index("ImageView desc='Power menu' id=icon") < listed.index(
        "Switch 'On' desc='Internet,AndroidWifi' clickable") < listed.index("TextView 'T-Mobile' id=qs_carrier_text")
    phone.swipe(0, 1200, 1080, 1200, 500)  # AndroidWorld's swipe "left": Back closes Quick Settings
    assert not phone.shade
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("display", title="Display")
    phone.invalidate()
    assert "TextView 'After null of inactivity' id=summary" in _listed(phone)
