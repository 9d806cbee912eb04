"""AndroidLab re-creations on the simulated phone: names and texts match its task list, experts solve them,
doing nothing or acting at random does not, answers are checked against what the device reports."""

from __future__ import annotations

import json

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class, list_tasks
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim import (
    bluecoins_androidlab,
    calendar_androidlab,
    cantook_androidlab,
    mapsme_androidlab,
    settings_androidlab,
    zoom_androidlab,
)
from android_gym.tasks.suites import SUITES_LAB
from android_gym.xml import compress_xml

from .sim_ui import scroll_to_text, tap_on, ui_of
from .task_checks import androidlab_tasks, check_random_agent_rarely_succeeds

MODULES = (settings_androidlab.__name__, calendar_androidlab.__name__, zoom_androidlab.__name__,
           bluecoins_androidlab.__name__, mapsme_androidlab.__name__,
           cantook_androidlab.__name__)
NAMES = sorted(n for n in list_tasks("androidlab") if get_task_class(n).__module__ in MODULES)
SETTINGS_PKG = "com.android.settings"


def test_names_texts_and_budgets_match_androidlab(realdata):
    lab_dir = realdata / "tasks" / "androidlab"
    lab = androidlab_tasks(realdata, "setting", "calendar", "clock", "contacts", "zoom", "bluecoins", "pimusic", "map", "cantook")
    human_steps = json.loads((lab_dir / "ground_truth_length.json").read_text())
    names = list_tasks("androidlab")
    assert len(names) >= 30 and len(NAMES) >= 20
    for name in names:
        cls = get_task_class(name)
        assert cls.template == lab[name]["task"], name
        assert cls.suites == SUITES_LAB, name
        assert cls.answer_task == (lab[name]["metric_type"] == "query_detect"), name
        assert cls(seed=0).max_steps >= 2 * human_steps[name], name
    for name in NAMES:
        assert get_task_class(name)(seed=1).params == {}, name  # AndroidLab tasks have no parameters


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_it_and_the_start_state_does_not(name):
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, None) == 0.0
    assert device.observe().package == "com.google.android.apps.nexuslauncher"
    result = run_expert(task, device)
    assert result.success == 1.0, (name, [a.to_dict() for a in result.actions])
    assert result.steps <= task.max_steps


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=2, step_cap=10)


@pytest.mark.parametrize("name,right,wrong", [
    ("setting_14", ["UTC", "GMT+00:00 Greenwich Mean Time", "it is gmt", "UTC+0"], ["Pacific time", "", "GMT+1"]),
    ("setting_16", ["English", "English (United States)"], ["French", "Englishman"]),
    ("setting_17", ["13", "Android 13"], ["12", "Android 1.3"]),
    ("clock_10", ["7:30 AM", "7:30am", "07:30", "Your earliest open alarm rings at 7:30"], ["7:00 AM", "4 PM", "7"]),
    ("clock_13", ["2", "two alarms", "There are 2 alarms on"], ["3", "five", "none"]),
    ("clock_11", ["No", "no, it rings on weekdays", "It is not"], ["Yes", "yes and no", "4 PM"]),
    ("clock_12", ["Yes", "yes, it vibrates"], ["No", "it does not", "maybe"]),
    ("clock_14", ["No", "It has not been turned on"], ["Yes", "", "9 AM"]),
])
def test_answers_are_checked_against_the_device(name, right, wrong):
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    for answer in right:
        assert task.is_successful(device, answer) == 1.0, answer
    for answer in wrong + [None]:
        assert task.is_successful(device, answer) == 0.0, answer


def test_question_follows_the_device_state():
    task = get_task_class("clock_10")(seed=0)
    device = SimDevice()
    task.initialize(device)
    device.shell("content update --uri content://com.google.android.deskclock/alarms --bind enabled:i:0 "
                 "--where \"hour=7\"")
    assert task.is_successful(device, "7:30 AM") == 0.0
    assert task.is_successful(device, "4:00 PM") == 1.0


# --- the Settings features these tasks use ----------------------------------------------------------------


def test_private_dns_needs_a_hostname_and_saves_mode_and_host():
    phone = SimPhone()
    phone.launch(SETTINGS_PKG)
    for text in ("Network & internet", "Private DNS", "Private DNS provider hostname", "Save"):
        tap_on(phone, text)
    assert phone.settings_get("global", "private_dns_mode") is None  # empty hostname: not saved
    phone.type_text("one.one.one.one")
    tap_on(phone, "Save")
    assert (phone.settings_get("global", "private_dns_mode"), phone.settings_get("global", "private_dns_specifier")) \
        == ("hostname", "one.one.one.one")
    assert "one.one.one.one" in compress_xml(phone.dump()).text  # the row's summary
    tap_on(phone, "Private DNS")
    tap_on(phone, "Off")
    tap_on(phone, "Save")
    assert phone.settings_get("global", "private_dns_mode") == "off"


def test_volume_sliders_write_the_speaker_keys_within_each_stream_range():
    phone = SimPhone()
    phone.launch(SETTINGS_PKG)
    tap_on(phone, "Sound & vibration")
    ui = ui_of(phone)
    bars = {e.content_desc: e.bounds for e in ui.elements if e.class_name == "android.widget.SeekBar"}
    assert set(bars) >= {"Media volume", "Ring & notification volume", "Alarm volume"}
    for desc, right_end in (("Alarm volume", False), ("Ring & notification volume", False), ("Media volume", True)):
        x1, y1, x2, y2 = bars[desc]
        phone.tap(x2 - 1 if right_end else x1, (y1 + y2) // 2)
    assert phone.settings_get("system", "volume_alarm_speaker") == "1"  # the alarm stream never goes silent
    assert phone.settings_get("system", "volume_ring_speaker") == "0"
    assert phone.settings_get("system", "volume_music_speaker") == "25"


def test_languages_list_adds_a_locale_last_and_the_picker_hides_the_ones_listed():
    phone = SimPhone()
    phone.launch(SETTINGS_PKG)
    for text in ("System", "Languages & input", "Languages"):
        scroll_to_text(phone, text)
        tap_on(phone, text)
    assert [e.text for e in ui_of(phone).elements if e.resource_id.endswith(":id/miniLabel")] == ["1"]
    tap_on(phone, "Add a language")
    assert "All languages" in ui_of(phone).text
    scroll_to_text(phone, "Espa\u00f1ol")
    tap_on(phone, "Espa\u00f1ol")
    ui = ui_of(phone)
    assert "All regions" in ui.text and "Espa\u00f1ol" in ui.text  # the language's own name is the title
    scroll_to_text(phone, "M\u00e9xico")
    tap_on(phone, "M\u00e9xico")
    assert phone.settings_get("system", "system_locales") == "en-US,es-MX"
    texts = [e.text for e in ui_of(phone).elements]
    # each cell lists its name, then its place, as Android 13's LocaleDragCell does
    assert texts[texts.index("English (United States)"):][:4] == ["English (United States)", "1",
                                                                  "Espa\u00f1ol (M\u00e9xico)", "2"]
    tap_on(phone, "Add a language")
    tap_on(phone, "Espa\u00f1ol")
    assert "M\u00e9xico" not in [e.text for e in ui_of(phone).elements]  # already listed
    phone.back()
    phone.back()
    assert "Add a language" in [e.text for e in ui_of(phone).elements]
    tap_on(phone, "Add a language")
    scroll_to_text(phone, "Polski")
    tap_on(phone, "Polski")  # one region: added at once
    assert phone.settings_get("system", "system_locales") == "en-US,es-MX,pl-PL"
    assert "Polski (Polska)" in [e.text for e in ui_of(phone).elements]
