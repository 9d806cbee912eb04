"""Second held-out set of real AndroidWorld episodes (``data/real_episodes_heldout2``, see its PROVENANCE.md).

Episodes of agents without a language model (an RND exploration agent tapping a grid of points) keep AndroidWorld's
``State.ui_elements`` and the ``JSONAction`` performed per step instead of T3A's ``before_element_list`` and the
model's reply; the replay reads both.
"""

from __future__ import annotations

import gzip
import hashlib
import pickle
from pathlib import Path

from android_gym.replay import load_real_episodes

DATA = Path(__file__).parent / "data"
HELDOUT2 = DATA / "real_episodes_heldout2"
OTHER_PARTS = [DATA / "real_episodes", DATA / "real_episodes_heldout"]


def test_episodes_with_state_ui_elements_and_json_actions_are_read(tmp_path):
    element = {"text": "Clock", "content_description": "Clock", "class_name": "android.widget.TextView",
               "resource_name": None, "is_clickable": True, "bbox_pixels": None}
    data = [{"goal": "Run the stopwatch.", "task_template": "ClockStopWatchRunning", "is_successful": float("nan"),
             "seed": 7, "episode_data": {
                 "ui_elements": [[element], [element, element]],
                 "android_action": [{"action_type": "click", "index": None, "x": 900, "y": 400, "text": None},
                                    {"action_type": "navigate_home", "direction": None}]}}]
    path = tmp_path / "ClockStopWatchRunning_0.pkl.gz"
    path.write_bytes(gzip.compress(pickle.dumps(data), mtime=0))
    (episode,) = load_real_episodes(path)
    assert (episode.task, episode.seed, episode.success) == ("ClockStopWatchRunning", 7, None)
    assert [len(s.elements) for s in episode.steps] == [1, 2]
    assert episode.steps[0].elements[0]["text"] == "Clock"
    assert [s.action for s in episode.steps] == [{"action_type": "click", "x": 900, "y": 400},
                                                  {"action_type": "navigate_home"}]
    assert all(s.action_error is None for s in episode.steps)


def test_the_heldout2_episodes_read_with_their_steps_and_actions():
    files = sorted(HELDOUT2.glob("*.pkl.gz"))
    assert [f.name.split("_0_")[0] for f in files] == [
        "BrowserMaze", "CameraTakePhoto", "ClockStopWatchRunning", "ContactsAddContact"]
    for path in files:
        (episode,) = load_real_episodes(path)
        assert episode.format == "android_world_pickle" and episode.meta["agent_name"] == "rnd_agent"
        assert episode.steps and all(s.elements and s.action for s in episode.steps), path.name
        assert episode.no_steps_reason is None and episode.success == 0.0


def test_the_heldout2_part_shares_no_file_with_the_other_parts():
    def digest(path: Path) -> str:
        return hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()

    mine = {digest(p) for p in HELDOUT2.glob("*.gz")}
    others = {digest(p) for part in OTHER_PARTS for p in part.glob("*.gz")}
    assert mine and not mine & others
    assert sum(p.stat().st_size for p in HELDOUT2.iterdir()) < 1_500_000


# -- round 1's fixes, each from a run of the tuning part (left in the source; see PROVENANCE.md) ----------------


def _aw_env(task: str):
    import gymnasium as gym
    import pytest

    from android_gym.envs import register_envs
    from android_gym.suites.android_world import android_world_available

    if not android_world_available():
        pytest.skip("android_world is not installed")
    register_envs()
    env = gym.make("AndroidWorld-v0", task=task, screenshot=False, max_steps=20, disable_env_checker=True)
    env.reset(seed=0, options={"task": task})
    return env


def test_androidworld_tasks_start_with_no_contacts_as_the_emulator_has_none():
    """AndroidWorld's emulator image holds no contacts, so Phone opens on an empty Contacts tab (a tuning run of
    ExpenseDeleteSingle); the sim's sample contacts are its own."""
    from android_gym.sim.apps.contacts import CONTACTS_PKG

    env = _aw_env("ExpenseDeleteSingle")
    try:
        phone = env.unwrapped.device.phone
        assert phone.apps[CONTACTS_PKG].contacts == []
        phone.launch("com.google.android.dialer", fresh=True)
        assert "Your contacts are just a tap away here" in phone.dump()
    finally:
        env.close()


def test_the_resync_puts_the_app_on_the_tab_the_real_screen_shows():
    """A real screen's tab bar lists the selected tab alone without a click; the re-synchronisation taps the sim's
    same tab after starting the app (Clock opened on its Clock tab in a tuning run, where the sim then started on
    Alarm; since round 2 the sim's Clock of AndroidWorld's runs opens there too, so here the real one shows
    Stopwatch)."""
    from android_gym.replay import _resync, _select_real_tab

    env = _aw_env("ClockStopWatchRunning")
    try:
        phone = env.unwrapped.device.phone
        pkg = "com.google.android.deskclock"
        real = [{"package_name": pkg, "resource_name": f"{pkg}:id/tab_menu_{t}", "content_description": t.title(),
                 "class_name": "android.widget.FrameLayout", "is_clickable": t != "stopwatch"}
                for t in ("alarm", "clock", "timer", "stopwatch", "bedtime")]
        assert phone.apps[pkg].tab == "clock"
        assert _resync(phone, real, fresh=True) == "started Clock on its tab_menu_stopwatch tab"
        assert phone.apps[pkg].tab == "stopwatch"
        assert _select_real_tab(phone, real) is None  # already there: nothing to tap
        assert _select_real_tab(phone, real[:1]) is None  # no tab bar
    finally:
        env.close()


# -- round 2's fixes, each from a run of the tuning part ---------------------------------------------------------


def _status_bar(*, clock: tuple[str, str], icons: list[tuple[str, str]], index: int = 0):
    from android_gym.replay import RealStep

    ui = "com.android.systemui"
    elements = [{"text": "Phone", "content_description": "Phone", "package_name": "com.google.android.dialer"},
                {"text": clock[0], "content_description": clock[1], "resource_name": ui + ":id/clock",
                 "package_name": ui}]
    elements += [{"content_description": desc, "resource_name": rid and f"{ui}:id/{rid}", "package_name": ui}
                 for desc, rid in icons]
    return RealStep(index=index, elements=elements, reply="", action=None)


def test_the_replay_follows_do_not_disturb_the_internet_and_the_clock_zone_of_the_real_status_bar():
    """The tuning runs of 2025-12-13T21:50 (ClockStopWatchRunning, ClockStopWatchPausedVerify, ExpenseDeleteSingle)
    show "Do Not Disturb" in the status bar, Wi-Fi without "No internet" and the clock read out seven hours back
    ("08:34" beside "15:34"); the run of 17:25 (ContactsAddContact) none of these, as the sim's defaults but for the
    zone. The sim's status bar and shade then list what the real one does."""
    from android_gym.replay import _plain_sim, _resource_tail, follow_real_device, sim_ui_elements
    from android_gym.sim.phone import SYSTEM_NOTIFICATIONS, SimPhone

    device = type("Device", (), {})()
    device.phone = phone = SimPhone()
    phone.settings_put("system", "time_12_24", "24")
    real = _status_bar(clock=("15:34", "08:34"), icons=[("Do Not Disturb", ""), ("Wifi signal full.", "wifi_combo"),
                                                          ("Phone signal full.", "mobile_combo")])
    done = follow_real_device(real, device, wifi=True)
    assert done["do_not_disturb"] is True and done["wifi_internet"] is True
    assert done["clock_description_offset_minutes"] == -7 * 60
    bar = [(e["content_description"], _resource_tail(e), e["bbox_pixels"])
           for e in _plain_sim(sim_ui_elements(phone.dump())) if e["package_name"] == "com.android.systemui"]
    shown = phone.status_clock()
    assert [(d, r) for d, r, _ in bar] == [(shown[1], "clock"), ("Do Not Disturb", ""),
                                           ("Wifi signal full.", "wifi_combo"), ("Phone signal full.", "mobile_combo"),
                                           ("Battery 100 percent.", "battery")]
    assert shown == ("15:34", "08:34")
    assert bar[1][2] == (828, 35, 885, 93)  # as the real icon
    phone.standing_notifications = SYSTEM_NOTIFICATIONS  # (this real bar showed none)
    phone.swipe(540, 300, 540, 1500, 300)  # the shade: online, so no limited-connectivity notification
    dump = phone.dump()
    assert "limited connectivity" not in dump and "No internet" not in dump and "Serial console enabled" in dump
    phone.back()
    # the 17:25 run: no Do Not Disturb, "No internet", the clock read out as shown
    later = _status_bar(clock=("15:35", "15:35"), icons=[("Wifi signal full.,No internet", "wifi_combo")], index=3)
    done = follow_real_device(later, device)
    assert (done["do_not_disturb"], done["wifi_internet"], done["clock_description_offset_minutes"]) == (False, False, 0)
    assert "Do Not Disturb" not in phone.dump() and "Wifi signal full.,No internet" in phone.dump()
    # a 12-hour clock's zone is ambiguous: left as it is
    assert follow_real_device(_status_bar(clock=("3:35", "11:35"), icons=[], index=4), device) is None


def test_androidworld_runs_get_google_clocks_layout_and_androidlabs_keep_theirs():
    """The tuning run ClockStopWatchRunning of 2025-12-13T21:50 opens Clock on its Clock tab: the title, "More
    options" (an ImageView), the "Add city" button (a Button), the five tabs described by their names with Bedtime,
    the time and the date read out, at the emulator's bounds; a world clock reads "+8h", "8 hours ahead"; the city
    search lists Back, its field, "Clear text" once typed in and "Search for a city" until the input after a
    keystroke. The sim's own and AndroidLab's Clock keep their layout."""
    from android_gym.replay import _plain_sim, _resource_tail, sim_ui_elements

    env = _aw_env("ClockStopWatchRunning")
    try:
        phone = env.unwrapped.device.phone
        pkg = "com.google.android.deskclock"
        assert phone.android_world_emulator
        phone.settings_put("system", "time_12_24", "24")
        phone.launch(pkg)

        def clock_screen() -> list[tuple[str, str, str, str, bool, tuple]]:
            return [(e["text"] or "", e["content_description"] or "", _resource_tail(e),
                     e["class_name"].rsplit(".", 1)[-1], bool(e["is_clickable"]), e["bbox_pixels"])
                    for e in _plain_sim(sim_ui_elements(phone.dump())) if e["package_name"] == pkg]

        shown = phone.status_clock()[0]
        first = clock_screen()
        assert [row[:5] for row in first] == [
            ("Clock", "", "action_bar_title", "TextView", False),
            ("", "More options", "overflow_action_button", "ImageView", True),
            ("", "Add city", "fab", "Button", True),
            ("", "Alarm", "tab_menu_alarm", "FrameLayout", True), ("", "Clock", "tab_menu_clock", "FrameLayout", False),
            ("", "Timer", "tab_menu_timer", "FrameLayout", True),
            ("", "Stopwatch", "tab_menu_stopwatch", "FrameLayout", True),
            ("", "Bedtime", "tab_menu_bedtime", "FrameLayout", True),
            (shown, shown, "digital_clock", "TextView", False),
            ("Sun, Oct 15", "Sunday, October 15", "date_and_next_alarm", "TextView", False),
            ("You can find the privacy policy here", "", "body", "TextView", False)]  # the first start only
        bounds = {row[2]: row[5] for row in first}
        assert bounds["fab"] == (414, 1833, 666, 2085) and bounds["tab_menu_clock"] == (216, 2127, 432, 2337)
        assert bounds["overflow_action_button"] == (975, 148, 1080, 274)
        phone.shell("content insert --uri content://com.google.android.deskclock/cities --bind name:s:Tokyo")
        assert clock_screen()[-3:-1] == [("Tokyo", "", "city_name", "TextView", False, clock_screen()[-3][5]),
                                         ("+9h", "9 hours ahead", "hours_ahead", "TextView", False,
                                          clock_screen()[-2][5])]
        phone.tap(540, 2000)  # the grid agent's tap: Add city
        assert [row[:3] for row in clock_screen()] == [("", "Back", ""), ("Search for a city", "",
                                                        "open_search_view_edit_text"),
                                                       ("Search for a city", "", "search_empty_view")]
        phone.tap(900, 2000)  # Gboard's "m"
        assert [row[:3] for row in clock_screen()] == [
            ("", "Back", ""), ("m", "", "open_search_view_edit_text"),
            ("", "Clear text", "open_search_view_clear_button"), ("Search for a city", "", "search_empty_view")]
        phone.tap(540, 400)  # the results came in meanwhile: the first city starting with "m"
        assert phone.apps[pkg].cities == ["Tokyo", "Mexico City"] and phone.apps[pkg].page == "main"
        assert "You can find the privacy policy here" not in phone.dump()  # the first start's only
    finally:
        env.close()
    from android_gym.sim.phone import SimPhone

    lab = SimPhone()  # the sim's own and AndroidLab's tasks: AndroidLab's Clock, on Alarm
    lab.launch("com.google.android.deskclock")
    tabs = [e for e in _plain_sim(sim_ui_elements(lab.dump())) if _resource_tail(e).startswith("tab_menu_")]
    assert [(e["text"], e["is_clickable"]) for e in tabs] == [("Alarm", False), ("Clock", True), ("Timer", True),
                                                              ("Stopwatch", True)]


def test_gboard_shows_its_suggestion_slots_while_a_word_is_typed_on_its_keys():
    """After "m" typed on Gboard's keys the tuning run ClockStopWatchRunning lists "m", "my", "me" where the shortcuts
    were; the sim lists the typed word and two undescribed slots (Gboard's completions come from its dictionary).
    ``input text`` (AndroidWorld's typing) composes nothing, and a space ends the word."""
    from android_gym.replay import _plain_sim, sim_ui_elements
    from android_gym.sim.phone import SimPhone

    phone = SimPhone()
    phone.launch("com.google.android.deskclock")
    phone.apps["com.google.android.deskclock"].open_city_picker()
    phone.invalidate()

    def header() -> list[tuple[str, tuple]]:
        return [(e["content_description"] or "", e["bbox_pixels"]) for e in _plain_sim(sim_ui_elements(phone.dump()))
                if "inputmethod" in (e["package_name"] or "") and e["bbox_pixels"][1] < 1640
                and e["bbox_pixels"][1] > 1500]

    shortcuts = [d for d, _ in header()]
    assert shortcuts[1:6] == ["Sticker Keyboard", "GIF Keyboard", "Clipboard", "Settings", "Theme settings"]
    phone.tap(900, 2000)  # "m"
    assert [d for d, _ in header()] == ["More features", "m", "", "", "Voice input"]
    lefts = [box[0] for _, box in header()][1:4]
    assert all(abs(a - b) <= 6 for a, b in zip(lefts, (115, 387, 693)))  # about where the emulator has them
    phone.tap(486 + 50, 2000)  # "v": one word
    assert [d for d, _ in header()][1] == "mv"
    phone.tap(540, 2190)  # Space ends it
    assert [d for d, _ in header()] == shortcuts
    phone.shell("input text paris")
    assert [d for d, _ in header()] == shortcuts


def test_androidworld_runs_put_the_home_screen_and_phone_where_the_emulator_has_them():
    """A grid-tapping agent's taps land where the emulator's views are: every real home screen of both sources has
    the dock at y 1873-2068 (the tuning run ExpenseDeleteSingle's (180, 2000) opened Phone; the sim's dock sat lower
    and its page icons higher, so there the tap hit nothing and (540, 1200) opened Photos); that run's Phone has its
    "key pad" button at 870-1017 x 1912-2059. The sim's own tasks keep their layout (the main job's screens)."""
    from android_gym.replay import _plain_sim, sim_ui_elements
    from android_gym.sim.phone import SimPhone

    def boxes(phone) -> dict[str, tuple]:
        return {e["content_description"]: e["bbox_pixels"] for e in _plain_sim(sim_ui_elements(phone.dump()))
                if e["content_description"]}

    env = _aw_env("ExpenseDeleteSingle")
    try:
        phone = env.unwrapped.device.phone
        phone.home()
        home = boxes(phone)
        assert home["Phone"] == (76, 1873, 249, 2068) and home["Search"] == (75, 2125, 1004, 2290)
        assert home["Photos"] == (561, 1479, 771, 1751) and home["Google Lens"] == (867, 2125, 993, 2290)
        phone.tap(540, 1200)  # nothing there on the emulator
        assert phone.foreground == "com.google.android.apps.nexuslauncher"
        phone.tap(180, 2000)
        assert phone.foreground == "com.google.android.dialer"
        dialer = boxes(phone)
        assert dialer["key pad"] == (870, 1912, 1017, 2059) and dialer["Contacts"] == (540, 2127, 810, 2337)
        phone.tap(900, 2000)
        assert phone.apps["com.google.android.dialer"].page == "dialpad"
        phone.back()
        phone.tap(135, 2232)  # Favorites: its one empty message, placed under the header
        assert "No favorites yet" in phone.dump() and boxes(phone)["key pad"] == (870, 1912, 1017, 2059)
    finally:
        env.close()
    own = SimPhone()
    assert boxes(own)["Phone"] != (76, 1873, 249, 2068)  # the sim's own layout, unchanged
