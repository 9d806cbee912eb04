"""The simulated Zoom (signed out) and AndroidLab's Zoom tasks on it: the join form, the two settings, the checks."""

from __future__ import annotations

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.zoom import group_meeting_id
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert

from .sim_ui import tap_on, texts, type_in, ui_of

PKG = "us.zoom.videomeetings"
URI = "content://us.zoom.videomeetings/settings"


def prefs(phone: SimPhone) -> dict[str, str]:
    rows = parse_rows(phone.shell(f"content query --uri {URI} --projection name:value"), ["name", "value"])
    return {r["name"]: r["value"] for r in rows}


def element(phone: SimPhone, rid: str):
    return next(e for e in ui_of(phone).elements if e.resource_id == f"{PKG}:id/{rid}")


@pytest.mark.parametrize("digits,shown", [("1234567890", "123 456 7890"), ("0987654321", "098 765 4321"),
                                          ("123456789", "123 456 789"), ("12345678901", "123 4567 8901"),
                                          ("1234", "123 4"), ("12", "12")])
def test_meeting_ids_are_grouped(digits, shown):
    assert group_meeting_id(digits) == shown


def test_join_form_groups_the_id_and_join_options_read_on_or_off():
    phone = SimPhone()
    phone.launch(PKG)
    assert {"Join a meeting", "Sign up", "Sign in"} <= set(texts(phone))
    tap_on(phone, text="Join a meeting")
    assert not element(phone, "btnJoin").enabled
    type_in(phone, "edtConfNumber", "12345-67890")
    assert element(phone, "edtConfNumber").text == "123 456 7890" and element(phone, "btnJoin").enabled
    assert "Join with a personal link name" in texts(phone)
    assert element(phone, "chkNoAudio").text == "Off, switch" and not element(phone, "chkNoAudio").checked
    tap_on(phone, rid="chkNoAudio")
    assert element(phone, "chkNoAudio").text == "On, switch" and element(phone, "chkNoAudio").checked
    assert element(phone, "chkNoVideo").text == "Off, switch"
    tap_on(phone, text="Join with a personal link name")
    assert element(phone, "edtConfNumber").hint == "Personal link name" and "Join with meeting ID" in texts(phone)
    tap_on(phone, text="Join with meeting ID")
    assert element(phone, "edtConfNumber").text == "123 456 7890"  # the typed ID is kept
    tap_on(phone, text="Join")
    assert "Connecting..." in texts(phone)


def test_settings_pages_write_the_preferences_and_pm_clear_resets_them():
    phone = SimPhone()
    assert prefs(phone) == {"auto_connect_audio": "off", "reaction_skin_tone": "default"}
    phone.launch(PKG)
    for text in ("Settings", "Meetings", "Auto-connect to audio", "WiFi or cellular data"):
        tap_on(phone, text=text)
    row = texts(phone)
    assert row[row.index("Auto-connect to audio") + 1] == "WiFi or cellular data"
    phone.back()  # to Settings
    for text in ("General", "Reaction skin tone", "Medium-light"):
        tap_on(phone, text=text)
    selected = [e for e in ui_of(phone).elements if e.content_desc == "Selected"]
    medium_light = next(e for e in ui_of(phone).elements if e.text == "Medium-light")
    assert len(selected) == 1 and abs(selected[0].center[1] - medium_light.center[1]) < 40
    assert prefs(phone) == {"auto_connect_audio": "wifi_or_cellular", "reaction_skin_tone": "medium_light"}
    phone.shell(f"pm clear {PKG}")
    assert prefs(phone) == {"auto_connect_audio": "off", "reaction_skin_tone": "default"}
    assert "must" not in phone.shell(f"content update --uri {URI} --bind value:s:dark --where \"name='reaction_skin_tone'\"")
    assert prefs(phone)["reaction_skin_tone"] == "dark"
    assert "one of" in phone.shell(f"content update --uri {URI} --bind value:s:blue --where \"name='reaction_skin_tone'\"")


@pytest.mark.parametrize("name", ["zoom_1", "zoom_2", "zoom_3"])
def test_join_checks_fail_once_join_is_tapped_or_the_form_is_wrong(name):
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, text="Join a meeting")
    type_in(phone, "edtConfNumber", task.MEETING_ID)
    if task.NAME:
        type_in(phone, "edtScreenName", task.NAME)
    for wanted, rid in ((task.NO_AUDIO, "chkNoAudio"), (task.NO_VIDEO, "chkNoVideo")):
        if wanted:
            tap_on(phone, rid=rid)
    assert task.is_successful(device) == 1.0
    tap_on(phone, text="Join")  # what the task says to leave to the user
    assert task.is_successful(device) == 0.0
    phone.back()
    assert task.is_successful(device) == 1.0  # back on the form, still filled
    type_in(phone, "edtConfNumber", "1")  # one digit too many
    assert task.is_successful(device) == 0.0


def test_setting_checks_want_exactly_the_one_change():
    task = get_task_class("zoom_5")(seed=0)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device) == 0.0
    assert run_expert(task, device).success == 1.0
    device.shell(f"content update --uri {URI} --bind value:s:wifi_or_cellular --where \"name='auto_connect_audio'\"")
    assert task.is_successful(device) == 0.0
    task.initialize(device)  # pm clear: the defaults again
    assert task.is_successful(device) == 0.0 and prefs(device.phone)["reaction_skin_tone"] == "default"
